"""Losses with a record: nll_loss, the fused cross-entropy, binary cross-entropy and mse_loss.

Each earns its record by numerical stability (log-softmax fused into cross-entropy, the clamped
logs of binary cross-entropy) or by speed on the hot path of training (cross-entropy and mse_loss
as one node each, with fused gradients whose own rules are ops). The other losses of
``nn.functional`` are compositions.
"""

from __future__ import annotations

import math

from .._backend import xp
from .._batching import elementwise, fallback, materialize, physical
from .._dispatch import apply
from .._validation import unit_interval
from ..tensor import Tensor
from ._nnutil import check_float, const, on_values, sum_terms, type_name
from ._registry import defop
from .activation import log_softmax, log_softmax_raw
from .elementwise import exp, log, where
from .padding import pad
from .shape import stack

# ---- losses ------------------------------------------------------------------------------------


def _reduce(losses, reduction):
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.mean()


def _unreduce(g, reduction, shape):
    """The gradient of a reduced loss spread over the elementwise losses."""
    if reduction == "none":
        return g
    g = g.expand(shape)
    return g if reduction == "sum" else g / max(math.prod(shape), 1)


def _target_weights(target, weight, ignore_index, n_classes, dtype):
    """The target with ignored entries made 0, and each entry's class weight (0 if ignored)."""
    valid = target != ignore_index
    every = bool(valid.all())
    safe = target if every else xp.where(valid, target, 0)
    if safe.size and (safe.min() < 0 or safe.max() >= n_classes):
        bad = (safe < 0) | (safe >= n_classes)
        raise IndexError(f"Target {int(target[bad].reshape(-1)[0])} is out of bounds.")
    w = xp.ones(target.shape, dtype=dtype) if weight is None else weight[safe].astype(dtype)
    if not every:
        w[~valid] = 0
    return safe, w


def _pick(a, safe, cdim):
    """a's entries at the class indices ``safe`` along the class dim."""
    if a.ndim == 2:
        return a[xp.arange(a.shape[0]), safe]
    return xp.squeeze(xp.take_along_axis(a, xp.expand_dims(safe, cdim), axis=cdim), cdim)


def _nll_loss(input, target, weight, ignore_index, reduction):
    cdim = 1 if input.ndim > 1 else 0
    safe, w = _target_weights(target, weight, ignore_index, input.shape[cdim], input.dtype)
    losses = -(_pick(input, safe, cdim) * w)
    if reduction == "none":
        return losses
    total = losses.sum()
    return total if reduction == "sum" else total / w.sum()


def _loss_weights(target, weight, ignore_index, reduction, shape, dtype, lead: int = 0):
    """The class dim, the targets (ignored ones made 0) and each target's share of the loss:
    its class weight, over the total weight for 'mean'. The ``lead`` leading dims of target and
    shape are vmap's examples, each with its own total."""
    cdim = lead + (1 if len(shape) - lead > 1 else 0)
    safe, w = _target_weights(target, weight, ignore_index, shape[cdim], dtype)
    if reduction == "mean":
        total = w.sum(axis=tuple(range(lead, w.ndim)), keepdims=True) if lead else w.sum()
        w /= xp.where(total == 0, 1, total)  # every target ignored: PyTorch's zero gradient
    return cdim, safe, w


_BATCHED_WEIGHT = ("vmap: a batched class weight of nll_loss or cross_entropy is supported in the "
                   "loss and cross_entropy's gradient only (not nll_loss's gradient, label "
                   "smoothing or second derivatives)")


def _class_weight(weight):
    """The class weight's array (None without one)."""
    if weight is None:
        return None
    weight._needs_values(NotImplementedError, _BATCHED_WEIGHT)
    return physical(weight)  # (on meta: a stand-in)


def _nll_matrix(target, weight, ignore_index, reduction, shape, dtype):
    """d loss / d input as constants (batched like the target under vmap): -w_t at each target
    (over the total weight for 'mean'), and w_t alone, with a size-1 class dim."""
    classes = _class_weight(weight)

    def matrices(t, lead):
        full = t.shape[:lead] + tuple(shape)
        cdim, safe, w = _loss_weights(t, classes, ignore_index, reduction, full, dtype, lead)
        w = xp.expand_dims(w, cdim)
        m = xp.zeros(full, dtype=dtype, like=t)
        xp.put_along_axis(m, xp.expand_dims(safe, cdim), 0 - w, axis=cdim)  # ignored: +0
        return m, w

    m, w = on_values(matrices, target)
    return (1 if len(shape) > 1 else 0), m, w


def _nll_grad(g, input_shape, target, weight, ignore_index, reduction):
    cdim, m, _ = _nll_matrix(target, weight, ignore_index, reduction, input_shape, g._data.dtype)
    return (g.unsqueeze(cdim) if reduction == "none" else g) * m


def _example_totals(target, weight, ignore_index, classes: int, dtype):
    """Under vmap (target (B, ...)), each example's total class weight of its targets (ignored
    ones count 0): the denominator of its 'mean'; a Python int when that is every example's
    number of targets."""
    if weight is None and not (physical(target) == ignore_index).any():
        return math.prod(target.shape[1:])
    ndim = target.ndim - 1  # the target dims of one example
    class_weight = _class_weight(weight)
    return on_values(lambda t, lead: _target_weights(
        t, class_weight, ignore_index, classes, dtype)[1].sum(
            axis=tuple(range(t.ndim - ndim, t.ndim))), target)


def _divide(t, total):
    return t if type(total) is int and total == 1 else t / total


def _class_loss_batch(op, args, flags, size, params):
    # The examples' samples are one batch of the unreduced op; each example's losses are then
    # reduced on their own. (B, C) inputs are already a batch of B samples.
    if flags[2]:  # a class weight per example
        return fallback(op, args, flags, size, params)
    input, target = (a if f else materialize(a, size) for a, f in zip(args[:2], flags[:2]))
    weight = args[2]
    shape, per_example = tuple(input.shape), tuple(target.shape[1:])
    examples = target
    reduction = params["reduction"]
    if per_example:
        input = input.reshape((size * shape[1],) + shape[2:])
        target = target.reshape((size * shape[1],) + per_example[1:])
    out = apply(op, input, target, weight, **dict(params, reduction="none"))
    losses, logp = out if op.n_outputs == 2 else (out, None)
    if per_example:
        logp = None if logp is None else logp.reshape(shape)
        # One sample per example (a batch of one), reduced: the losses are the reductions.
        if reduction == "none" or math.prod(per_example) != 1:
            losses = losses.reshape((size,) + per_example)
        if reduction != "none" and math.prod(per_example) != 1:
            losses = losses.sum(tuple(range(1, losses.ndim)))
    target = examples
    if reduction != "none":
        if reduction == "mean":
            losses = _divide(losses, _example_totals(
                target, weight, params["ignore_index"], shape[1 if len(shape) == 2 else 2],
                losses._data.dtype))
    return losses if logp is None else (losses, logp)


def _nll_record(name: str, backward_name: str):
    return defop(
        name,
        _nll_loss,
        ("input", "target", "weight"),
        (_nll_grad, None, None),
        backward_name=backward_name,
        jvp="linear",
        batch=_class_loss_batch,
    )


NLL_LOSS = _nll_record("nll_loss", "NllLossBackward0")
NLL_LOSS2D = _nll_record("nll_loss2d", "NllLoss2DBackward0")


def _cross_entropy(input, target, weight, ignore_index, reduction):
    logp = log_softmax_raw(input, 1 if input.ndim > 1 else 0)
    return _nll_loss(logp, target, weight, ignore_index, reduction), logp


def _cross_entropy_backward(grad, logp, target, weight, ignore_index, reduction):
    # w (softmax - onehot) * g in place on one array: exp, scale, subtract at the targets.
    cdim, safe, w = _loss_weights(target, weight, ignore_index, reduction, logp.shape,
                                  logp.dtype)
    w *= grad
    coef = xp.expand_dims(w, cdim)
    out = xp.exp(logp)
    out *= coef
    if out.ndim == 2:
        out[xp.arange(out.shape[0]), safe] -= w
    else:
        index = xp.expand_dims(safe, cdim)
        xp.put_along_axis(out, index, xp.take_along_axis(out, index, cdim) - coef, cdim)
    return out


def _ce_backward_grad_grad(g, logp, target, weight, ignore_index, reduction):
    cdim, m, w = _nll_matrix(target, weight, ignore_index, reduction, logp.shape,
                             logp._data.dtype)
    t = g * (exp(logp) * w + m)
    return t.sum(cdim) if reduction == "none" else t.sum()


def _ce_backward_logp_grad(g, grad, logp, target, weight, ignore_index, reduction):
    cdim, _, w = _nll_matrix(target, weight, ignore_index, reduction, logp.shape,
                             logp._data.dtype)
    return g * exp(logp) * (w * (grad.unsqueeze(cdim) if reduction == "none" else grad))


def _ce_backward_batch(op, args, flags, size, params):
    # Unreduced on the examples' samples as one batch, each target's gradient scaled by its
    # example's g (over the example's total weight for 'mean').
    if flags[3]:  # a class weight per example
        return fallback(op, args, flags, size, params)
    grad, logp, target = (a if f else materialize(a, size) for a, f in zip(args[:3], flags[:3]))
    weight = args[3]
    shape, per_example = tuple(logp.shape), tuple(target.shape[1:])
    reduction = params["reduction"]
    if reduction == "mean":
        grad = _divide(grad, _example_totals(
            target, weight, params["ignore_index"], shape[1 if len(shape) == 2 else 2],
            logp._data.dtype))
    if reduction != "none" and per_example and math.prod(per_example) != 1:
        grad = grad.reshape((size,) + (1,) * len(per_example)).expand(tuple(target.shape))
    if per_example:
        logp = logp.reshape((size * shape[1],) + shape[2:])
        target = target.reshape((size * shape[1],) + per_example[1:])
        if tuple(grad.shape) != tuple(target.shape):  # (one sample per example: (B,) already)
            grad = grad.reshape(tuple(target.shape))
    out = apply(op, grad, logp, target, weight, **dict(params, reduction="none"))
    return out.reshape(shape) if per_example else out


# The fused gradient of cross-entropy (first order: one NumPy pass, one node); its own rules,
# for higher orders, are differentiable ops.
CROSS_ENTROPY_BACKWARD = defop(
    "cross_entropy_backward",
    _cross_entropy_backward,
    ("grad", "logp", "target", "weight"),
    (_ce_backward_grad_grad, _ce_backward_logp_grad, None, None),
    jvp=lambda t_grad, t_logp, grad, logp, target, weight, ignore_index, reduction: sum_terms(
        None if t_grad is None else apply(
            CROSS_ENTROPY_BACKWARD, t_grad, logp, target, weight, ignore_index=ignore_index,
            reduction=reduction),
        None if t_logp is None else _ce_backward_logp_grad(
            t_logp, grad, logp, target, weight, ignore_index, reduction),
    ),
    batch=_ce_backward_batch,
)


def _cross_entropy_grad(grads, out, target, weight, ignore_index, reduction):
    g_loss, g_logp = grads
    logp = out[1]
    cdim = 1 if logp.ndim > 1 else 0
    result = None
    if g_loss is not None:
        result = apply(CROSS_ENTROPY_BACKWARD, g_loss, logp, target, weight,
                       ignore_index=ignore_index, reduction=reduction)
    if g_logp is not None:
        result = sum_terms(result, g_logp - exp(logp) * g_logp.sum(cdim, keepdim=True))
    return result


def _cross_entropy_jvp(t_input, out, target, weight, ignore_index, reduction):
    logp = out[1]
    cdim = 1 if logp.ndim > 1 else 0
    t_logp = t_input - (exp(logp) * t_input).sum(cdim, keepdim=True)
    record = NLL_LOSS2D if logp.ndim > 2 else NLL_LOSS
    t_loss = apply(record, t_logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    return t_loss, t_logp


def _cross_entropy_record(name: str, backward_name: str):
    # log_softmax and nll_loss fused (a hot op): one node, and its rule is one expression in the
    # saved log-probabilities, which it also returns (the second output, never shown to users).
    return defop(
        name,
        _cross_entropy,
        ("input", "target", "weight"),
        (_cross_entropy_grad, None, None),
        n_outputs=2,
        backward_name=backward_name,
        jvp=_cross_entropy_jvp,
        batch=_class_loss_batch,
    )


CROSS_ENTROPY = _cross_entropy_record("cross_entropy", "NllLossBackward0")
CROSS_ENTROPY2D = _cross_entropy_record("cross_entropy2d", "NllLoss2DBackward0")


def _reduced_batch(op, args, flags, size, params):
    # The unreduced losses batch as elementwise ops do; each example's are then reduced.
    losses = elementwise(op, args, flags, size, dict(params, reduction="none"))
    dims = tuple(range(1, losses.ndim))
    if params["reduction"] == "none" or not dims:
        return losses
    return losses.sum(dims) if params["reduction"] == "sum" else losses.mean(dims)



def _bce(input, target, weight, reduction):
    # PyTorch clamps the logs at -100, so a saturated probability gives a finite loss.
    losses = (target - 1) * xp.maximum(xp.log1p(-input), -100)
    losses -= target * xp.maximum(xp.log(input), -100)
    if weight is not None:
        losses *= weight
    return _reduce(losses, reduction)


def _bce_input_grad(g, input, target, weight, reduction):
    # (x - y) / max(x (1 - x), 1e-12), PyTorch's form: finite at x = 0 and x = 1.
    d = (input - target) / ((1 - input) * input).clamp(min=1e-12)
    return _scaled_loss(_unreduce(g, reduction, input.shape) * d, weight)


def _bce_target_grad(g, input, weight, reduction):
    d = log(1 - input).clamp(min=-100) - log(input).clamp(min=-100)
    return _scaled_loss(_unreduce(g, reduction, input.shape) * d, weight)


def _scaled_loss(t, weight):
    return t if weight is None else t * weight


def _bce_jvp(t_input, t_target, input, target, weight, reduction):
    terms = sum_terms(
        None if t_input is None else
        t_input * ((input - target) / ((1 - input) * input).clamp(min=1e-12)),
        None if t_target is None else
        t_target * (log(1 - input).clamp(min=-100) - log(input).clamp(min=-100)),
    )
    if terms is None:
        return None
    return _reduce(_scaled_loss(terms, weight), reduction)


BINARY_CROSS_ENTROPY = defop(
    "binary_cross_entropy",
    _bce,
    ("input", "target", "weight"),
    (_bce_input_grad, _bce_target_grad, None),
    jvp=_bce_jvp,
    batch=_reduced_batch,
)


def _mse_loss(input, target, reduction):
    d = input - target
    d *= d
    return _reduce(d, reduction)


def _mse_backward(grad, input, target, reduction):
    # 2 (input - target) * g, spread over the elements for 'mean'.
    d = input - target
    d *= 2.0 / d.size if reduction == "mean" and d.size else 2.0
    if xp.broadcast_shapes(d.shape, xp.shape(grad)) != d.shape:
        return d * grad  # a batch of g under vmap (jacrev): wider than the loss's input
    d *= grad
    return d


def _mse_backward_grad_grad(g, input, target, reduction):
    t = g * (input - target) * 2.0
    if reduction == "none":
        return t
    return t.sum() / max(t.numel(), 1) if reduction == "mean" else t.sum()


def _mse_backward_input_grad(g, grad, input, target, reduction):
    shape = xp.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    return g * _unreduce(grad, reduction, shape) * 2.0


def _mse_backward_jvp(t_grad, t_input, t_target, grad, input, target, reduction):
    shape = xp.broadcast_shapes(tuple(input.shape), tuple(target.shape))
    t_diff = sum_terms(t_input, None if t_target is None else -t_target)
    return sum_terms(
        None if t_grad is None else apply(MSE_LOSS_BACKWARD, t_grad, input, target,
                                          reduction=reduction),
        None if t_diff is None else t_diff * _unreduce(grad, reduction, shape) * 2.0,
    )


def _mse_backward_batch(op, args, flags, size, params):
    # Unreduced, each example's g spread over its elements (1 / n of it for 'mean').
    if params["reduction"] == "mean":
        shapes = [tuple(a.shape[1:] if f else a.shape) for a, f in zip(args[1:], flags[1:])]
        n = math.prod(xp.broadcast_shapes(*shapes))
        if n:
            args = [args[0] * (1.0 / n)] + list(args[1:])
    return elementwise(op, args, flags, size, dict(params, reduction="none"))


# mse_loss as one node (a hot op); its gradient is a fused kernel whose own rules are ops.
MSE_LOSS_BACKWARD = defop(
    "mse_loss_backward",
    _mse_backward,
    ("grad", "input", "target"),
    (
        _mse_backward_grad_grad,
        _mse_backward_input_grad,
        lambda g, grad, input, target, reduction: -_mse_backward_input_grad(
            g, grad, input, target, reduction),
    ),
    backward_name="MseLossBackwardBackward0",
    jvp=_mse_backward_jvp,
    batch=_mse_backward_batch,
)


def _mse_jvp(t_input, t_target, input, target, reduction):
    t_diff = sum_terms(t_input, None if t_target is None else -t_target)
    if t_diff is None:
        return None
    return _reduce(t_diff * (input - target) * 2.0, reduction)


MSE_LOSS = defop(
    "mse_loss",
    _mse_loss,
    ("input", "target"),
    (
        lambda g, input, target, reduction: apply(MSE_LOSS_BACKWARD, g, input, target,
                                                  reduction=reduction),
        lambda g, input, target, reduction: apply(MSE_LOSS_BACKWARD, g, target, input,
                                                  reduction=reduction),
    ),
    promote=True,
    jvp=_mse_jvp,
    batch=_reduced_batch,
)


def mse_loss(input, target, reduction: str = "mean") -> Tensor:
    """(input - target)^2, reduced (input and target broadcast)."""
    check_reduction(reduction)
    return apply(MSE_LOSS, input, target, reduction=reduction)


# ---- public functions ---------------------------------------------------------------------------


def check_reduction(reduction: str) -> None:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_class_target(input, target, weight) -> Tensor:
    """The class-index ``target`` checked against ``input`` as PyTorch checks it; a (1,)
    target of a (C,) input is taken as its one element, as in PyTorch."""
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if input.ndim > 1 and input.shape[0] != (target.shape[0] if target.ndim else 0):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0] if target.ndim else 0}).")
    if input.ndim > 1 and target.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if input.ndim == 1 and target.ndim == 1:
        if target.shape[0] != 1:
            raise ValueError("For 1D input, 1D target must have size 1, but got target size: "
                             f"{target.shape[0]}")
        target = target.reshape(())
    if input.ndim == 1:
        if target.ndim != 0:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif input.ndim == 2:
        if target.ndim != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif tuple(target.shape) != (input.shape[0],) + tuple(input.shape[2:]):
        raise RuntimeError(f"Expected target size {[input.shape[0]] + list(input.shape[2:])}, "
                           f"got {list(target.shape)}")
    if target._data.dtype not in (xp.int64, xp.uint8):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{type_name(target)}")
    classes = input.shape[1 if input.ndim > 1 else 0]
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != classes):
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes "
                           f"or no classes but got weight tensor of shape: {list(weight.shape)}")
    return target


def _long(target: Tensor) -> Tensor:
    if target._data.dtype == xp.int64:
        return target
    return on_values(lambda t, lead: t.astype(xp.int64), target)


def nll_loss(input, target, weight=None, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """-input[i, target[i]] * weight[target[i]], reduced; class dim 1 (or 0 unbatched)."""
    check_reduction(reduction)
    target = _check_class_target(input, target, weight)
    record = NLL_LOSS2D if input.ndim > 2 else NLL_LOSS
    return apply(record, input, _long(target), weight, ignore_index=int(ignore_index),
                 reduction=reduction)


def cross_entropy(input, target, weight=None, ignore_index: int = -100, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """nll_loss(log_softmax(input, 1), target) for class indices, or the cross-entropy against
    class probabilities; with optional label smoothing."""
    check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if tuple(target.shape) == tuple(input.shape):
        if target._data.dtype.kind not in "fV":
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {type_name(target)}")
        if input.ndim == 0:
            raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    cdim = 1 if input.ndim > 1 else 0
    classes = input.shape[cdim]
    if tuple(target.shape) == tuple(input.shape):
        return _cross_entropy_probabilities(input, target, weight, reduction, label_smoothing,
                                            cdim)
    squeezed = target.ndim == 1 and input.ndim == 1
    target = _check_class_target(input, target, weight)
    check_float(input, "log_softmax_lastdim_kernel_impl")
    target = _long(target)
    if label_smoothing > 0 and squeezed:  # PyTorch's smoothing term keeps the (1,) shape
        raise RuntimeError("output with shape [] doesn't match the broadcast shape [1]")
    if label_smoothing > 0:
        return _cross_entropy_smoothed(input, target, weight, int(ignore_index), reduction,
                                       label_smoothing, cdim, classes)
    record = CROSS_ENTROPY2D if input.ndim > 2 else CROSS_ENTROPY
    return apply(record, input, target, weight, ignore_index=int(ignore_index),
                 reduction=reduction)[0]


def _class_view(weight: Tensor, ndim: int, cdim: int) -> Tensor:
    """A (C,) class weight shaped to broadcast along the class dim."""
    return weight.reshape((-1,) + (1,) * (ndim - 1 - cdim))


def _cross_entropy_probabilities(input, target, weight, reduction, smoothing, cdim):
    classes = input.shape[cdim]
    logp = log_softmax(input, cdim)
    if smoothing > 0:
        target = target * (1 - smoothing) + smoothing / classes
    if weight is not None:
        logp = logp * _class_view(weight, input.ndim, cdim)
    losses = -(logp * target).sum(cdim)
    if reduction == "none":
        return losses
    total = losses.sum()
    return total if reduction == "sum" else total / (input.numel() / classes)


def _cross_entropy_smoothed(input, target, weight, ignore_index, reduction, smoothing, cdim,
                            classes):
    # (1 - e) * nll + e * (the loss against the uniform distribution, weighted and normalised
    # as nll is), as PyTorch defines label smoothing for class indices.
    logp = log_softmax(input, cdim)
    nll = nll_loss(logp, target, weight, ignore_index, reduction)
    dtype = input._data.dtype
    class_weight = _class_weight(weight)
    # Each target's class weight, 0 where ignored (batched like the target under vmap).
    target_weight = on_values(lambda t, lead: _target_weights(
        t, class_weight, ignore_index, classes, dtype)[1], target)
    kept = target_weight if weight is None else (target != ignore_index).to(input.dtype)
    weighted = logp if weight is None else logp * _class_view(weight, input.ndim, cdim)
    smooth = -weighted.sum(cdim) * kept
    if reduction == "mean":
        smooth = smooth.sum() / target_weight.sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return nll * (1 - smoothing) + smooth * (smoothing / classes)


def binary_cross_entropy(input, target, weight=None, reduction: str = "mean") -> Tensor:
    """-(y log x + (1 - y) log(1 - x)), the logs clamped at -100, reduced."""
    check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape!r}) that is different to the "
                         f"input size ({input.shape!r}) is deprecated. Please ensure they have "
                         "the same size.")
    unit_interval("input", physical(input))  # NaN is outside too, as in PyTorch
    unit_interval("target", physical(target))
    return apply(BINARY_CROSS_ENTROPY, input, target, weight, reduction=reduction)



# ---- CTC ---------------------------------------------------------------------------------------


def _lengths(value):
    """Lengths given as a tensor, a sequence or a number, as an int64 array."""
    data = physical(value) if isinstance(value, Tensor) else value
    return xp.asarray(data, dtype=xp.int64).reshape(-1)


def _ctc_labels(targets, lead: int, target_lengths, input_lengths, blank: int, classes: int):
    """The extended label sequences blank, l1, blank, l2, ..., blank (N, 2S + 1) for each
    example, where a path may skip the blank before each label (a label differing from the one
    two back), and which examples no path fits (fewer frames than labels and repeats)."""
    flat = targets.reshape((-1,) + targets.shape[lead:])
    n = target_lengths.shape[0]
    longest = int(target_lengths.max()) if n else 0
    labels = xp.full((flat.shape[0], n, longest), blank, dtype=xp.int64)
    for b, example in enumerate(flat):
        if example.ndim == 2:  # (N, S), padded
            rows = [example[i, : target_lengths[i]] for i in range(n)]
        else:  # the targets of all examples concatenated
            ends = xp.cumsum(target_lengths)
            rows = [example[e - k: e] for e, k in zip(ends, target_lengths)]
        for i, row in enumerate(rows):
            labels[b, i, : len(row)] = row
    ext = xp.full(labels.shape[:2] + (2 * longest + 1,), blank, dtype=xp.int64)
    ext[..., 1::2] = labels
    skip = xp.zeros(ext.shape, dtype=bool)
    skip[..., 3::2] = labels[..., 1:] != labels[..., :-1]
    skip[..., 1] = True
    repeats = ((labels[..., 1:] == labels[..., :-1])
               & (xp.arange(1, max(longest, 1)) < target_lengths[:, None])).sum(-1)
    impossible = target_lengths + repeats > input_lengths
    ext = xp.clip(ext, 0, classes - 1)
    shape = targets.shape[:lead]
    return (ext.reshape(shape + ext.shape[1:]), skip.reshape(shape + skip.shape[1:]),
            impossible.reshape(shape + impossible.shape[1:]))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """-log of the total probability of the paths that collapse to each target (the forward
    recursion of Graves et al. 2006, in log space), reduced."""
    check_reduction(reduction)
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    steps, n, classes = lp.shape
    il, tl = _lengths(input_lengths), _lengths(target_lengths)
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    if il.shape[0] != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.shape[0] != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    context = "(while checking arguments for ctc_loss_allocate_outputs)"
    if (il > steps).any():
        raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got value "
                           f"{int(il.max())} {context}")
    if (tl < 0).any() or (il < 0).any():
        which, lengths = ("target", tl) if (tl < 0).any() else ("input", il)
        raise RuntimeError(f"Expected {which}_lengths to have value at least 0, but got value "
                           f"{int(lengths.min())} {context}")
    padded = targets.ndim == (1 if unbatched else 2)
    available = targets.shape[-1] if padded else math.prod(targets.shape)
    needed = int(tl.max()) if padded and n else int(tl.sum())
    if needed > available:
        dim = 0 if unbatched or not padded else 1
        raise RuntimeError(f"Expected tensor to have size at least {needed} at dimension {dim}, "
                           f"but got size {available} for argument #2 'targets' {context}")
    dtype = lp._data.dtype
    tgt = targets.unsqueeze(0) if unbatched else targets
    ext, skip, impossible = on_values(
        lambda t, lead: _ctc_labels(t, lead, tl, il, blank, classes), tgt)
    # Unreachable states hold a large finite negative number, not -inf: log-sum-exp of -inf
    # alone has a NaN gradient, which would reach the reachable states through a zero.
    neg = float(xp.finfo(dtype).min) / 4
    length = ext.shape[-1]
    safe_lp = lp.clamp(min=neg)
    frames = const(il)
    valid = (const(xp.arange(steps))[:, None] < frames).unsqueeze(-1)
    if not zero_infinity:  # PyTorch's NaN gradient in the frames of examples no path fits
        safe_lp = safe_lp * where(valid & impossible.unsqueeze(-1), float("nan"), 1.0)
    emit = safe_lp.gather(2, ext.unsqueeze(0).expand(steps, n, length))
    states = const(xp.arange(length))
    alpha = where(states < 2, emit[0], neg)
    for t in range(1, steps):
        stay = alpha
        step = pad(alpha, (1, 0), value=neg)[..., :length]
        jump = where(skip, pad(alpha, (2, 0), value=neg)[..., :length], neg)
        new = stack((stay, step, jump)).logsumexp(0) + emit[t]
        alpha = where((frames > t).unsqueeze(-1), new, alpha)
    last = const(2 * tl).unsqueeze(-1)
    end = alpha.gather(-1, last).squeeze(-1)
    before = where(const(tl) > 0, alpha.gather(-1, (last - 1).clamp(min=0)).squeeze(-1), neg)
    nll = -stack((end, before)).logsumexp(0)
    # PyTorch's gradient assumes log_probs are log-softmax outputs and adds exp(log_probs) at
    # every frame of the input; log_softmax's backward cancels it. A term of value zero with
    # that gradient reproduces it.
    grown = exp(safe_lp)
    nll = nll + ((grown - grown.detach()) * valid).sum((0, 2))
    # Also no path: log_probs of -inf (clamped above) on every one.
    impossible = impossible | (nll.detach() > -neg / 2)
    losses = where(impossible, 0.0 if zero_infinity else float("inf"), nll)
    if unbatched:
        losses = losses.squeeze(0)
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return (losses / const(xp.maximum(tl, 1).astype(dtype)).reshape(losses.shape)).mean()


METHODS: dict = {}
FUNCTIONS: dict = {}
