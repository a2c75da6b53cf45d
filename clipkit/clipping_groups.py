"""Per-group clipping: each group of parameters against its own norm and threshold.

Seed 003 asks whether the norm of Eq. 10.48 must cover every parameter at once. It need not.
With one global norm, a single tensor whose gradient spikes (an embedding table hit by a rare
token, say) dominates the sum of squares, and the one shared factor of Eq. 10.49 then shrinks
every other tensor's step too, quietly lowering the whole network's learning rate for that
update. Clipping each group by its own norm confines the damage to the group that spiked.

The price: the update's direction is kept only within each group. Across groups the relative
scale changes, so the step is no longer a positive multiple of the gradient, and it is not the
steepest-descent direction of the loss any more. Use it when groups differ in scale by design
(embeddings and dense layers, encoder and decoder), not as a default.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import torch

from clipkit import _clip_args as check
from clipkit import _norms


def _group_params(groups) -> tuple[list, list]:
    """(keys, parameter lists); an optimizer's param_groups are dicts with a "params" entry."""
    if isinstance(groups, Mapping):
        keys = list(groups)
        values = [groups[k] for k in keys]
    elif isinstance(groups, Sequence) and not isinstance(groups, (str, bytes)):
        keys = list(range(len(groups)))
        values = list(groups)
    else:
        raise TypeError(
            "groups must be a mapping of name to parameters, a sequence of parameter lists, "
            f"or optimizer.param_groups; got {type(groups).__name__}"
        )
    lists = []
    for key, value in zip(keys, values, strict=True):
        if isinstance(value, Mapping):
            if "params" not in value:
                raise TypeError(f"groups[{key!r}] is a mapping without a 'params' entry")
            value = value["params"]
        lists.append(check.tensors(f"groups[{key!r}]", value))
    seen: dict[int, object] = {}
    for key, params in zip(keys, lists, strict=True):
        for t in params:
            if t is not None and seen.setdefault(id(t), key) != key:
                raise ValueError(
                    f"a parameter is in both groups[{seen[id(t)]!r}] and groups[{key!r}]; "
                    "it would be clipped twice"
                )
    return keys, lists


def _thresholds(max_norm, keys: list, mapping: bool) -> list[float]:
    if isinstance(max_norm, Mapping):
        missing = [k for k in keys if k not in max_norm]
        if not mapping or missing:
            raise ValueError(f"max_norm has no threshold for groups {missing or keys!r}")
        return [check.threshold(f"max_norm[{k!r}]", max_norm[k]) for k in keys]
    if isinstance(max_norm, Sequence) and not isinstance(max_norm, str):
        if mapping or len(max_norm) != len(keys):
            raise ValueError(
                f"max_norm gives {len(max_norm)} thresholds for {len(keys)} groups; "
                "pass one per group, in order (or a mapping for named groups)"
            )
        return [check.threshold(f"max_norm[{i}]", v) for i, v in enumerate(max_norm)]
    return [check.threshold("max_norm", max_norm)] * len(keys)


@torch.no_grad()
def clip_grad_norm_per_group_(
    groups,
    max_norm,
    norm_type=2.0,
    error_if_nonfinite=False,
    foreach=None,
    *,
    nonfinite="propagate",
    generator=None,
):
    """Clip each group's gradients by that group's own norm, in place (torch's rule per group).

    For every group k: g_k <- g_k * min(v_k / (||g_k|| + 1e-6), 1), Eq. 10.48 and 10.49 with
    the norm taken over group k alone.

    ``groups``: a mapping of name to parameters, a sequence of parameter lists, or an
    optimizer's ``param_groups``. ``max_norm``: one threshold for all, a mapping by name (for
    named groups) or a sequence in group order. Returns each group's norm before clipping
    (0-d tensors), as a dict for named groups and a list otherwise. ``nonfinite`` works as in
    :func:`clipkit.clip_grad_norm_`, group by group; under "error" every group is checked
    before any is touched. Everything is validated before anything is changed.

    >>> emb = torch.zeros(2, requires_grad=True)
    >>> dense = torch.zeros(2, requires_grad=True)
    >>> emb.grad, dense.grad = torch.tensor([300.0, 400.0]), torch.tensor([0.3, 0.4])
    >>> clip_grad_norm_per_group_({"emb": [emb], "dense": [dense]}, max_norm=1.0)
    {'emb': tensor(500.), 'dense': tensor(0.5000)}
    >>> dense.grad  # one global norm (about 500) would have cut this to about 0.0006
    tensor([0.3000, 0.4000])
    """
    mapping = isinstance(groups, Mapping)
    keys, lists = _group_params(groups)
    limits = _thresholds(max_norm, keys, mapping)
    p = check.norm_type(norm_type)
    policy = check.policy(nonfinite, error_if_nonfinite)
    check.foreach(foreach)
    check.generator(generator)
    grads = [check.grads_of(params) for params in lists]
    norms = [_norms.total_norm(g, p, foreach) for g in grads]
    finite = [
        _norms.nonfinite_check(n, policy, p, f"group {k!r}") if g else True
        for k, g, n in zip(keys, grads, norms, strict=True)
    ]  # all checks (and under "error" any raise) happen before the first write below
    for g, v, n, ok in zip(grads, limits, norms, finite, strict=True):
        _norms.clip_(g, v, n, p, ok, generator, foreach)
    return dict(zip(keys, norms, strict=True)) if mapping else norms
