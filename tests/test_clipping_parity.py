"""clipkit's torch-compatible API against torch.nn.utils itself, to 1e-6 relative.

Each case builds two identical sets of parameters, clips one with clipkit and the other with
torch, and compares the returned norm and every gradient afterwards. Both of clipkit's routes
run: the host route (CPU) and the sync-free device route forced onto the CPU.
"""

from __future__ import annotations

import inspect
import math
import warnings

import pytest
import torch

import clipkit
from clipkit import _host_pool, _norms

NORM_TYPES = [0.5, 1.0, 1.5, 2.0, 4.0, math.inf]
DTYPES = [torch.float32, torch.float64]
FOREACH = [None, True, False]
INPUTS = ["single", "list", "generator", "none_grads", "empty"]
RTOL = 1e-6


@pytest.fixture(params=["host", "host-threads", "device"])
def route(request, monkeypatch):
    """host: CPU kernels inline; host-threads: cut up and dealt to worker threads; device:
    the sync-free route."""
    monkeypatch.setattr(_norms, "FORCE_DEVICE_ROUTE", request.param == "device")
    if request.param == "host-threads":
        monkeypatch.setattr(_host_pool, "busy", lambda: True)  # as on a crowded machine
        monkeypatch.setattr(_host_pool, "INLINE_BELOW", 0)  # small tests take the pool too
        monkeypatch.setattr(_host_pool, "SPLIT_FROM", 5)  # and their tensors are sliced
        monkeypatch.setattr(torch, "get_num_threads", lambda: 2)  # even on a one-core runner
    return request.param


def _params(dtype: torch.dtype, kind: str, seed: int = 0, scale: float = 3.0) -> list:
    """Parameters with gradients; some gradients non-contiguous, some missing."""
    gen = torch.Generator().manual_seed(seed)

    def rand(*shape):
        return torch.randn(*shape, generator=gen, dtype=dtype) * scale

    if kind == "empty":
        return []
    if kind == "single":
        p = torch.nn.Parameter(rand(4, 5))
        p.grad = rand(4, 5)
        return [p]
    shapes = [(3, 4), (7,), (2, 3, 2), (4, 3), (4, 3), (1,)]
    params = [torch.nn.Parameter(rand(*s)) for s in shapes]
    for p in params:
        p.grad = rand(*p.shape)
    params[3].grad = rand(3, 4).t()  # a transposed gradient: dense but not contiguous
    params[4].grad = rand(4, 6)[:, ::2]  # a strided slice: gaps between the entries
    if kind == "none_grads":
        params[1].grad = None
        params[5].grad = None
    return params


def _twins(dtype, kind, **kw):
    ours = _params(dtype, kind, **kw)
    theirs = [torch.nn.Parameter(p.detach().clone()) for p in ours]
    for a, b in zip(ours, theirs, strict=True):
        b.grad = None if a.grad is None else a.grad.clone()
    return ours, theirs


def _feed(params: list, kind: str):
    if kind == "single":
        return params[0]
    if kind == "generator":
        return (p for p in params)
    return params


def _close(a: torch.Tensor, b: torch.Tensor, what: str) -> None:
    assert a.dtype == b.dtype and a.shape == b.shape, what
    torch.testing.assert_close(a, b, rtol=RTOL, atol=1e-30, msg=lambda m: f"{what}: {m}")


def _same_grads(ours: list, theirs: list, what: str) -> None:
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        if b.grad is None:
            assert a.grad is None, what
        else:
            _close(a.grad, b.grad, f"{what}, grad {i}")


@pytest.mark.parametrize("norm_type", NORM_TYPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_clip_grad_norm_matches_torch(norm_type, dtype, route):
    for foreach in FOREACH:
        for kind in INPUTS:
            for factor in (0.05, 0.9, 1e4):  # clips hard, clips a little, does not clip
                what = f"p={norm_type} {dtype} foreach={foreach} {kind} max_norm={factor} norm"
                ours, theirs = _twins(dtype, kind)
                grads = [p.grad for p in theirs if p.grad is not None]
                max_norm = factor * max(float(torch.nn.utils.get_total_norm(grads, norm_type)), 1)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # both warn on an empty generator
                    got = clipkit.clip_grad_norm_(
                        _feed(ours, kind), max_norm, norm_type, foreach=foreach
                    )
                    want = torch.nn.utils.clip_grad_norm_(
                        _feed(theirs, kind), max_norm, norm_type, foreach=foreach
                    )
                _close(got, want, what)
                _same_grads(ours, theirs, what)


@pytest.mark.parametrize("norm_type", NORM_TYPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_get_total_norm_matches_torch(norm_type, dtype, route):
    for foreach in FOREACH:
        for kind in ["single", "list", "generator", "empty"]:
            grads = [p.grad for p in _params(dtype, kind)]
            feed = (
                grads[0]
                if kind == "single"
                else (g for g in grads)
                if kind == "generator"
                else grads
            )
            again = grads[0] if kind == "single" else list(grads)
            got = clipkit.get_total_norm(feed, norm_type, foreach=foreach)
            want = torch.nn.utils.get_total_norm(again, norm_type, foreach=foreach)
            _close(got, want, f"p={norm_type} {dtype} foreach={foreach} {kind}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_clip_grads_with_norm_matches_torch(dtype, route):
    for foreach in FOREACH:
        for kind in INPUTS:
            for total in (torch.tensor(50.0, dtype=dtype), torch.tensor(0.5, dtype=dtype)):
                what = f"{dtype} foreach={foreach} {kind} total={float(total)}"
                ours, theirs = _twins(dtype, kind)
                assert clipkit.clip_grads_with_norm_(_feed(ours, kind), 2.0, total, foreach) is None
                torch.nn.utils.clip_grads_with_norm_(_feed(theirs, kind), 2.0, total, foreach)
                _same_grads(ours, theirs, what)


@pytest.mark.parametrize("dtype", DTYPES)
def test_clip_grad_value_matches_torch(dtype, route):
    for foreach in FOREACH:
        for kind in INPUTS:
            what = f"{dtype} foreach={foreach} {kind}"
            ours, theirs = _twins(dtype, kind)
            assert clipkit.clip_grad_value_(_feed(ours, kind), 1.5, foreach=foreach) is None
            if kind == "empty":
                continue  # torch 2.13 raises on an empty list here; clipkit does nothing
            torch.nn.utils.clip_grad_value_(_feed(theirs, kind), 1.5, foreach=foreach)
            # The test must be able to fail: some entries were outside [-1.5, 1.5].
            assert any((p.grad.abs() == 1.5).any() for p in ours if p.grad is not None)
            _same_grads(ours, theirs, what)


def test_empty_input_gives_a_zero_norm_like_torch():
    for fn in (clipkit.clip_grad_norm_, torch.nn.utils.clip_grad_norm_):
        got = fn([], 1.0)
        assert got.shape == () and got.item() == 0.0 and got.dtype == torch.float32
    no_grads = [torch.nn.Parameter(torch.ones(3))]
    assert clipkit.clip_grad_norm_(no_grads, 1.0).item() == 0.0
    assert no_grads[0].grad is None


def test_an_empty_generator_warns_as_torch_does():
    with pytest.warns(UserWarning, match="empty generator"):
        clipkit.clip_grad_norm_((p for p in []), 1.0)


def test_a_generator_is_read_once_and_every_gradient_is_clipped():
    ours, theirs = _twins(torch.float64, "list")
    clipkit.clip_grad_norm_((p for p in ours), 1.0)
    torch.nn.utils.clip_grad_norm_(theirs, 1.0)
    _same_grads(ours, theirs, "generator")
    assert clipkit.global_norm([p.grad for p in ours]).item() == pytest.approx(1.0, rel=1e-5)


def test_the_multiply_is_skipped_when_nothing_needs_clipping():
    p = torch.nn.Parameter(torch.zeros(3))
    p.grad = torch.tensor([0.1, -0.2, 0.3])
    before = p.grad.clone()
    version = p.grad._version  # bumps on every in-place write
    clipkit.clip_grad_norm_([p], 10.0)
    assert p.grad._version == version and torch.equal(p.grad, before)
    torch.nn.utils.clip_grad_norm_([p], 10.0)
    assert p.grad._version > version  # torch multiplies by 1 all the same


def test_the_worker_threads_leave_the_callers_thread_count_alone(monkeypatch):
    monkeypatch.setattr(_host_pool, "busy", lambda: True)
    monkeypatch.setattr(_host_pool, "INLINE_BELOW", 0)
    threads = torch.get_num_threads()
    ours, theirs = _twins(torch.float32, "list")
    clipkit.clip_grad_norm_(ours, 1.0)
    torch.nn.utils.clip_grad_norm_(theirs, 1.0)
    _same_grads(ours, theirs, "threads")
    assert torch.get_num_threads() == threads


@pytest.mark.parametrize(
    "name", ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_"]
)
def test_the_signatures_are_torchs(name):
    ours = inspect.signature(getattr(clipkit, name)).parameters
    theirs = inspect.signature(getattr(torch.nn.utils, name)).parameters
    assert list(ours)[: len(theirs)] == list(theirs)
    for arg, spec in theirs.items():
        assert ours[arg].default == spec.default and ours[arg].kind == spec.kind, arg
    extra = list(ours)[len(theirs) :]
    assert all(ours[arg].kind is inspect.Parameter.KEYWORD_ONLY for arg in extra)


def test_the_worker_threads_are_for_a_crowded_machine_only(monkeypatch):
    monkeypatch.setattr(_host_pool.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(_host_pool.os, "getloadavg", lambda: (3.5, 0.0, 0.0))
    assert _host_pool.busy()
    monkeypatch.setattr(_host_pool.os, "getloadavg", lambda: (2.9, 9.0, 9.0))
    assert not _host_pool.busy()

    def no_load_average():
        raise OSError("no load average here")

    monkeypatch.setattr(_host_pool.os, "getloadavg", no_load_average)
    assert not _host_pool.busy()
