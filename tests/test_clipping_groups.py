"""Per-group clipping, and the sync-free device route (forced on the CPU, and on meta tensors)."""

from __future__ import annotations

import math

import pytest
import torch

import clipkit
from clipkit import _norms


def _param(*values, dtype=torch.float64):
    p = torch.nn.Parameter(torch.zeros(len(values), dtype=dtype))
    p.grad = torch.tensor(values, dtype=dtype)
    return p


def _model():
    """An embedding whose gradient spiked (norm 500) beside two quiet dense layers."""
    return {"emb": [_param(300.0, 400.0)], "dense": [_param(0.3, 0.4), _param(0.0, 1.2)]}


# Per-group clipping


def test_one_spiking_group_no_longer_shrinks_the_others():
    one, each = _model(), _model()
    clipkit.clip_grad_norm_([p for ps in one.values() for p in ps], 1.0)
    norms = clipkit.clip_grad_norm_per_group_(each, 1.0)
    assert list(norms) == ["emb", "dense"]
    assert norms["emb"].item() == pytest.approx(500.0)
    assert norms["dense"].item() == pytest.approx(1.3)
    # One global norm (about 500) cut the dense step by a factor of about 500 ...
    dense_global = clipkit.global_norm([p.grad for p in one["dense"]]).item()
    assert dense_global == pytest.approx(1.3 / math.hypot(500.0, 1.3), rel=1e-6)
    # ... per group, the dense layers keep a norm of 1 and the embedding alone is cut.
    for name in each:
        assert clipkit.global_norm([p.grad for p in each[name]]).item() == pytest.approx(
            1.0, rel=1e-5
        )


def test_each_group_is_what_torch_does_to_that_group_alone():
    ours, theirs = _model(), _model()
    limits = {"emb": 2.0, "dense": 0.5}
    got = clipkit.clip_grad_norm_per_group_(ours, limits, norm_type=1.5)
    for name, params in theirs.items():
        want = torch.nn.utils.clip_grad_norm_(params, limits[name], norm_type=1.5)
        torch.testing.assert_close(got[name], want, rtol=1e-6, atol=0)
        for a, b in zip(ours[name], params, strict=True):
            torch.testing.assert_close(a.grad, b.grad, rtol=1e-6, atol=0)


def test_the_direction_is_kept_within_groups_and_lost_across_them():
    model = _model()
    whole = torch.cat([p.grad.clone() for ps in model.values() for p in ps])
    clipkit.clip_grad_norm_per_group_(model, 1.0)
    after = torch.cat([p.grad for ps in model.values() for p in ps])
    assert clipkit.angle_between(whole[:2], after[:2]).item() == pytest.approx(0.0, abs=1e-5)
    assert clipkit.angle_between(whole[2:], after[2:]).item() == pytest.approx(0.0, abs=1e-5)
    assert clipkit.angle_between(whole, after).item() > 10.0  # the cost of per-group clipping


def test_optimizer_param_groups_and_plain_lists_are_accepted():
    model = _model()
    params = [p for ps in model.values() for p in ps]
    opt = torch.optim.SGD([{"params": model["emb"]}, {"params": model["dense"]}], lr=0.1)
    norms = clipkit.clip_grad_norm_per_group_(opt.param_groups, [1.0, 10.0])
    assert isinstance(norms, list) and len(norms) == 2
    assert [round(n.item(), 6) for n in norms] == [500.0, 1.3]
    assert clipkit.global_norm(params[0].grad).item() == pytest.approx(1.0, rel=1e-5)
    assert params[1].grad.tolist() == [0.3, 0.4]  # 1.3 < 10: untouched
    again = clipkit.clip_grad_norm_per_group_([model["emb"], model["dense"]], 1.0)
    assert again[0].item() == pytest.approx(1.0, rel=1e-5)


@pytest.mark.parametrize(
    ("groups", "max_norm", "error", "match"),
    [
        ("shared", 1.0, ValueError, "both groups"),
        ("named", {"emb": 1.0}, ValueError, "dense"),
        ("named", [1.0, 1.0], ValueError, "mapping"),
        ("named", {"emb": 1.0, "dense": -1.0}, ValueError, "max_norm\\['dense'\\]"),
        ("listed", [1.0], ValueError, "1 thresholds for 2 groups"),
        ("listed", [1.0, math.nan], ValueError, "max_norm\\[1\\]"),
        ("bad_dict", 1.0, TypeError, "params"),
        ("not_groups", 1.0, TypeError, "groups"),
    ],
)
def test_bad_groups_or_thresholds_raise_before_any_group_is_clipped(groups, max_norm, error, match):
    model = _model()
    snapshot = {k: [p.grad.clone() for p in ps] for k, ps in model.items()}
    arg = {
        "shared": {"a": model["emb"], "b": [*model["dense"], model["emb"][0]]},
        "named": model,
        "listed": [model["emb"], model["dense"]],
        "bad_dict": [{"parameters": model["emb"]}],
        "not_groups": 3,
    }[groups]
    with pytest.raises(error, match=match):
        clipkit.clip_grad_norm_per_group_(arg, max_norm)
    for k, ps in model.items():
        assert all(torch.equal(p.grad, g) for p, g in zip(ps, snapshot[k], strict=True))


def test_under_error_a_bad_group_stops_every_group():
    model = _model()
    model["dense"][1].grad[0] = math.inf
    emb_before = model["emb"][0].grad.clone()
    with pytest.raises(RuntimeError, match="group 'dense'"):
        clipkit.clip_grad_norm_per_group_(model, 1.0, nonfinite="error")
    assert torch.equal(model["emb"][0].grad, emb_before)  # checked first, clipped never


def test_random_replaces_only_the_bad_group():
    model = _model()
    model["dense"][0].grad[1] = math.nan
    gen = torch.Generator().manual_seed(0)
    clipkit.clip_grad_norm_per_group_(model, 0.5, nonfinite="random", generator=gen)
    dense = [p.grad for p in model["dense"]]
    assert clipkit.global_norm(dense).item() == pytest.approx(0.5, rel=1e-6)
    assert clipkit.global_norm(model["emb"][0].grad).item() == pytest.approx(0.5, rel=1e-5)


# The sync-free device route


@pytest.mark.parametrize("norm_type", [1.0, 2.0, math.inf])
def test_the_device_route_gives_the_host_route_numbers(norm_type, monkeypatch):
    def run(force):
        monkeypatch.setattr(_norms, "FORCE_DEVICE_ROUTE", force)
        gen = torch.Generator().manual_seed(5)
        dtypes = (torch.float32, torch.float16, torch.float32)  # two dtypes: two groups
        params = [
            torch.nn.Parameter(torch.zeros(n, dtype=d))
            for n, d in zip((1000, 37, 4096), dtypes, strict=True)
        ]
        for p in params:
            p.grad = torch.randn(p.shape, generator=gen).to(p.dtype)
        norm = clipkit.clip_grad_norm_(params, 2.0, norm_type)
        return norm, [p.grad for p in params]

    (host_norm, host), (dev_norm, dev) = run(False), run(True)
    assert host_norm.dtype == dev_norm.dtype == torch.float32
    torch.testing.assert_close(dev_norm, host_norm, rtol=1e-6, atol=0)
    for a, b in zip(dev, host, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-3 if a.dtype == torch.float16 else 1e-6, atol=0)


def test_the_device_route_never_reads_a_value_back():
    # A meta tensor has a shape and no data: any .item(), bool() or float() on one raises.
    # So a clip that completes on meta tensors cannot have waited for the device.
    params = [torch.nn.Parameter(torch.empty(n, device="meta")) for n in (10, 3)]
    for p in params:
        p.grad = torch.empty(p.shape, device="meta")
    norm = clipkit.clip_grad_norm_(params, 1.0)
    assert norm.device.type == "meta" and norm.shape == ()
    clipkit.clip_grads_with_norm_(params, 1.0, norm)
    clipkit.clip_grad_norm_per_group_([params[:1], params[1:]], 1.0)
    clipkit.clip_grad_value_(params, 1.0)
    clipkit.clip_by_norm([p.grad for p in params], 1.0)
    # Asking for the error policy is asking for one read, and meta has nothing to read.
    with pytest.raises((RuntimeError, NotImplementedError)):
        clipkit.clip_grad_norm_(params, 1.0, nonfinite="error")


def test_foreach_true_is_refused_where_torch_has_no_foreach_kernels():
    p = torch.nn.Parameter(torch.empty(3, device="meta"))
    p.grad = torch.empty(3, device="meta")
    with pytest.raises(RuntimeError, match="foreach=True"):
        clipkit.clip_grad_norm_([p], 1.0, foreach=True)
