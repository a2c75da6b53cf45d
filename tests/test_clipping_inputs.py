"""Bad arguments, low precision, non-finite gradients and the two routes of clipkit.clipping."""

from __future__ import annotations

import math

import pytest
import torch

import clipkit
from clipkit import _norms

NAN, INF = math.nan, math.inf


def _params(seed: int = 0, dtype=torch.float32, scale: float = 10.0) -> list:
    gen = torch.Generator().manual_seed(seed)
    params = [torch.nn.Parameter(torch.zeros(s, dtype=dtype)) for s in [(3, 4), (5,), (2, 2)]]
    for p in params:
        p.grad = torch.randn(p.shape, generator=gen, dtype=dtype) * scale
    return params


def _snapshot(params) -> list:
    return [(p.grad.clone(), p.grad._version) for p in params]


def _untouched(params, snapshot) -> bool:
    # _version counts in-place writes, so even writing back the same numbers would show.
    return all(
        _same(p.grad, g) and p.grad._version == v
        for p, (g, v) in zip(params, snapshot, strict=True)
    )


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return bool(((a == b) | (a.isnan() & b.isnan())).all())


# (argument, value, error type): every one must raise, name the argument and change nothing.
BAD_THRESHOLDS = [
    (-1.0, ValueError),
    (0.0, ValueError),
    (0, ValueError),
    (NAN, ValueError),
    (-INF, ValueError),
    (True, TypeError),
    ("1.0", TypeError),
    (None, TypeError),
    ([1.0], TypeError),
]
BAD_NORM_TYPES = [
    (0.0, ValueError),
    (-2.0, ValueError),
    (NAN, ValueError),
    (-INF, ValueError),
    (False, TypeError),
    ("two", ValueError),
    (None, TypeError),
]

IN_PLACE = {
    "clip_grad_norm_": lambda ps, v: clipkit.clip_grad_norm_(ps, v),
    "clip_grads_with_norm_": lambda ps, v: clipkit.clip_grads_with_norm_(ps, v, torch.tensor(50.0)),
    "clip_grad_norm_per_group_": lambda ps, v: clipkit.clip_grad_norm_per_group_(
        [ps[:1], ps[1:]], v
    ),
}


@pytest.mark.parametrize(("value", "error"), BAD_THRESHOLDS)
@pytest.mark.parametrize("name", [*IN_PLACE, "clip_grad_value_"])
def test_a_bad_threshold_raises_and_touches_nothing(name, value, error):
    params = _params()
    before = _snapshot(params)
    argument = "clip_value" if name == "clip_grad_value_" else "max_norm"
    call = IN_PLACE.get(name, lambda ps, v: clipkit.clip_grad_value_(ps, v))
    if name == "clip_grad_norm_per_group_" and isinstance(value, list):
        value = [1.0, value[0]]  # a list is one threshold per group there; spoil the second
        value[1] = "1.0"
    with pytest.raises(error, match=argument) as info:
        call(params, value)
    message = str(info.value)
    assert repr(value) in message or type(value).__name__ in message or "'1.0'" in message
    assert _untouched(params, before)


@pytest.mark.parametrize(("value", "error"), BAD_THRESHOLDS)
def test_the_functional_forms_refuse_a_bad_threshold(value, error):
    g = [torch.tensor([3.0, 4.0])]
    with pytest.raises(error, match="max_norm"):
        clipkit.clip_by_norm(g, value)
    with pytest.raises(error, match="clip_value"):
        clipkit.clip_by_value(g, value)
    assert g[0].tolist() == [3.0, 4.0]


@pytest.mark.parametrize(("value", "error"), BAD_NORM_TYPES)
def test_a_bad_norm_type_raises_and_touches_nothing(value, error):
    params = _params()
    before = _snapshot(params)
    for call in (
        lambda: clipkit.clip_grad_norm_(params, 1.0, value),
        lambda: clipkit.clip_grad_norm_per_group_({"a": params}, 1.0, value),
        lambda: clipkit.get_total_norm([p.grad for p in params], value),
        lambda: clipkit.global_norm([p.grad for p in params], value),
        lambda: clipkit.clip_by_norm(params[0].grad, 1.0, value),
    ):
        with pytest.raises(error, match="norm_type") as info:
            call()
        assert repr(value) in str(info.value) or type(value).__name__ in str(info.value)
    assert _untouched(params, before)


@pytest.mark.parametrize("bad", [3.0, "weights", [torch.zeros(1), 3.0], [None, "x"]])
def test_parameters_that_are_not_tensors_raise_before_any_is_clipped(bad):
    params = _params()
    before = _snapshot(params)
    mixed = [*params, *bad] if isinstance(bad, list) else bad
    for fn in (clipkit.clip_grad_norm_, clipkit.clip_grad_value_):
        with pytest.raises(TypeError, match="parameters"):
            fn(mixed, 1.0)
    assert _untouched(params, before)  # the good ones before the bad one were left alone


def test_the_infinite_threshold_means_never_clip():
    params = _params()
    before = _snapshot(params)
    clipkit.clip_grad_norm_(params, INF)
    clipkit.clip_grad_value_(params, INF)
    assert _untouched(params, before)


def test_a_negative_total_norm_is_refused():
    params = _params()
    with pytest.raises(ValueError, match="total_norm"):
        clipkit.clip_grads_with_norm_(params, 1.0, torch.tensor(-3.0))


# Low precision


def test_float16_gradients_that_overflow_torch_are_clipped_correctly():
    big = torch.full((100_000,), 300.0, dtype=torch.float16)
    true_norm = 300 * math.sqrt(100_000)  # 94868.3, beyond float16's largest 65504
    ours, theirs = torch.nn.Parameter(big.clone()), torch.nn.Parameter(big.clone())
    ours.grad, theirs.grad = big.clone(), big.clone()

    torch_norm = torch.nn.utils.clip_grad_norm_([theirs], 1.0)
    assert torch_norm.isinf() and bool((theirs.grad == 0).all())  # torch's failure, for the record

    norm = clipkit.clip_grad_norm_([ours], 1.0)
    assert norm.dtype == torch.float32
    assert norm.item() == pytest.approx(true_norm, rel=1e-6)
    assert ours.grad.dtype == torch.float16
    worst = (ours.grad.float() / (300.0 / true_norm) - 1).abs().max().item()
    assert worst < 1e-3  # float16 keeps about 3 digits
    assert clipkit.global_norm(ours.grad).item() == pytest.approx(1.0, rel=1e-3)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_low_precision_norms_are_float32_and_accurate(dtype):
    gen = torch.Generator().manual_seed(3)
    grads = [torch.randn(n, generator=gen).mul(50).to(dtype) for n in (10_000, 70_000, 7)]
    exact = math.sqrt(sum(float(g.double().square().sum()) for g in grads))
    for route in (False, True):
        _norms.FORCE_DEVICE_ROUTE = route
        try:
            got = clipkit.get_total_norm(grads)
            fn = clipkit.global_norm(grads)
        finally:
            _norms.FORCE_DEVICE_ROUTE = False
        assert got.dtype == fn.dtype == torch.float32
        assert got.item() == pytest.approx(exact, rel=1e-5)
        assert fn.item() == pytest.approx(exact, rel=1e-5)


def test_the_float32_norm_is_accurate_to_5e_6():
    gen = torch.Generator().manual_seed(7)
    grads = [torch.randn(n, generator=gen) * 10 ** (i % 3) for i, n in enumerate([400_000] * 5)]
    exact = math.sqrt(math.fsum(float(torch.dot(g.double(), g.double())) for g in grads))
    assert abs(clipkit.get_total_norm(grads).item() - exact) / exact < 5e-6


def test_float32_squares_that_overflow_fall_back_to_float64():
    g = torch.full((10,), 1e20)  # each square (1e40) overflows float32, the norm does not
    assert clipkit.get_total_norm(g).item() == pytest.approx(1e20 * math.sqrt(10), rel=1e-6)


# Non-finite gradients


def _poisoned(value: float, seed: int = 0) -> list:
    params = _params(seed)
    params[1].grad[2] = value
    return params


@pytest.mark.parametrize("bad", [INF, NAN])
def test_propagate_does_what_torch_does(bad):
    ours, theirs = _poisoned(bad), _poisoned(bad)
    got = clipkit.clip_grad_norm_(ours, 1.0, nonfinite="propagate")
    want = torch.nn.utils.clip_grad_norm_(theirs, 1.0)
    torch.testing.assert_close(got, want, equal_nan=True)
    for a, b in zip(ours, theirs, strict=True):
        torch.testing.assert_close(a.grad, b.grad, equal_nan=True)


@pytest.mark.parametrize("bad", [INF, -INF, NAN])
def test_error_raises_before_any_gradient_is_touched(bad):
    for kwargs in ({"nonfinite": "error"}, {"error_if_nonfinite": True}):
        params = _poisoned(bad)
        before = _snapshot(params)
        with pytest.raises(RuntimeError, match="nothing was changed"):
            clipkit.clip_grad_norm_(params, 1.0, **kwargs)
        assert _untouched(params, before)
    with pytest.raises(RuntimeError, match="cannot be clipped"):
        clipkit.get_total_norm([p.grad for p in _poisoned(bad)], error_if_nonfinite=True)


@pytest.mark.parametrize("bad", [INF, NAN])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, INF])
def test_random_takes_a_seeded_step_of_length_max_norm(bad, norm_type):
    def run(seed):
        params = _poisoned(bad)
        gen = torch.Generator().manual_seed(seed)
        norm = clipkit.clip_grad_norm_(params, 0.25, norm_type, nonfinite="random", generator=gen)
        return norm, [p.grad for p in params]

    norm, grads = run(1)
    assert not math.isfinite(norm.item())  # the pre-clip norm is reported, as torch would
    assert all(bool(g.isfinite().all()) for g in grads)
    assert clipkit.global_norm(grads, norm_type).item() == pytest.approx(0.25, rel=1e-6)
    again = run(1)[1]
    assert all(torch.equal(a, b) for a, b in zip(grads, again, strict=True))
    other = run(2)[1]
    assert not all(torch.equal(a, b) for a, b in zip(grads, other, strict=True))


def test_random_leaves_finite_gradients_to_the_ordinary_rule():
    ours, theirs = _params(), _params()
    clipkit.clip_grad_norm_(ours, 1.0, nonfinite="random", generator=torch.Generator())
    torch.nn.utils.clip_grad_norm_(theirs, 1.0)
    for a, b in zip(ours, theirs, strict=True):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-6, atol=0)


def test_policy_arguments_are_checked():
    params = _params()
    with pytest.raises(ValueError, match="nonfinite"):
        clipkit.clip_grad_norm_(params, 1.0, nonfinite="ignore")
    with pytest.raises(ValueError, match="error_if_nonfinite"):
        clipkit.clip_grad_norm_(params, 1.0, error_if_nonfinite=True, nonfinite="random")
    with pytest.raises(TypeError, match="generator"):
        clipkit.clip_grad_norm_(params, 1.0, nonfinite="random", generator=42)
    with pytest.raises(TypeError, match="foreach"):
        clipkit.clip_grad_norm_(params, 1.0, foreach="yes")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_low_precision_gradients_are_scaled_in_their_own_dtype(dtype):
    gen = torch.Generator().manual_seed(4)
    params = [torch.nn.Parameter(torch.zeros(n, dtype=dtype)) for n in (3000, 17)]
    for p in params:
        p.grad = (torch.randn(p.shape, generator=gen) * 100).to(dtype)
    norm = clipkit.clip_grad_norm_(params, 2.0)
    assert norm.dtype == torch.float32 and norm.item() > 2.0
    assert all(p.grad.dtype == dtype for p in params)
    assert clipkit.global_norm([p.grad for p in params]).item() == pytest.approx(2.0, rel=1e-2)


def test_the_functional_forms_keep_each_tensors_dtype():
    g = [torch.tensor([3.0, 4.0], dtype=torch.float16), torch.tensor([12.0], dtype=torch.float64)]
    assert clipkit.global_norm(g).dtype == torch.float64
    assert [t.dtype for t in clipkit.clip_by_norm(g, 1.0)] == [torch.float16, torch.float64]
    assert [t.dtype for t in clipkit.clip_by_value(g, 1.0)] == [torch.float16, torch.float64]
    assert clipkit.global_norm(g[0]).dtype == torch.float32  # float16 is summed in float32
    assert isinstance(clipkit.clip_by_norm(tuple(g), 1.0), tuple)
