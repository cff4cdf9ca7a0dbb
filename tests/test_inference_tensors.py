"""Inference tensors as PyTorch's: what inference_mode makes is one (ops, factories, views of
one), views and detach() of normal tensors are not; outside inference mode an inference tensor
refuses requires_grad, in-place updates (after writing, as PyTorch) and being saved for
backward, and has no version."""

import copy
import pickle
import threading

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule.autograd import grad_mode


def outcome(fn):
    try:
        result = fn()
    except Exception as err:  # noqa: BLE001  (the error is the outcome compared)
        return type(err).__name__, str(err)
    if isinstance(result, (torch.Tensor, cr.Tensor)):
        return "tensor", result.detach().tolist(), result.requires_grad
    return result


MADE = {  # made inside inference mode, from n (a normal tensor made outside)
    "op": lambda m, n: n + 1,
    "factory": lambda m, n: m.ones(2),
    "tensor()": lambda m, n: m.tensor([1.0, 2.0]),
    "from_numpy": lambda m, n: m.from_numpy(np.ones(2)),
    "zeros_like": lambda m, n: m.zeros_like(n),
    "new_zeros": lambda m, n: n.new_zeros(2),
    "arange": lambda m, n: m.arange(3),
    "view of a normal tensor": lambda m, n: n.view(2),
    "slice of a normal tensor": lambda m, n: n[1:],
    "detach of a normal tensor": lambda m, n: n.detach(),
    "data of a normal tensor": lambda m, n: n.data,
    "op on a leaf that requires grad": lambda m, n: n.requires_grad_() * 2,
    "factory that requires grad": lambda m, n: m.ones(2, requires_grad=True),
    "parameter": lambda m, n: m.nn.Parameter(m.ones(2)),
    "view of an inference tensor": lambda m, n: (n + 1).view(2),
    "clone": lambda m, n: n.clone(),
    "max": lambda m, n: m.max(n + 1, 0).indices,
}


@pytest.mark.parametrize("made", list(MADE))
def test_what_inference_mode_makes(made):
    def facts(m):
        n = m.ones(2)
        with m.inference_mode():
            t = MADE[made](m, n)
            inside = t.is_inference(), m.is_inference(t), t.requires_grad, t.grad_fn is None
        return inside, t.is_inference(), n.is_inference()

    assert facts(cr) == facts(torch)


OUTSIDE = {  # x: an inference tensor, used outside inference mode
    "requires_grad_": lambda m, x: x.requires_grad_(),
    "requires_grad = True": lambda m, x: setattr(x, "requires_grad", True),
    "requires_grad_(False)": lambda m, x: x.requires_grad_(False),
    "parameter": lambda m, x: m.nn.Parameter(x),
    "frozen parameter": lambda m, x: m.nn.Parameter(x, requires_grad=False).is_inference(),
    "add_": lambda m, x: x.add_(1),
    "zero_": lambda m, x: x.zero_(),
    "copy_": lambda m, x: x.copy_(m.zeros(2)),
    "setitem": lambda m, x: x.__setitem__(0, 5.0),
    "setitem of a view": lambda m, x: x.view(2).__setitem__(0, 5.0),
    "out=": lambda m, x: m.add(m.ones(2), 1, out=x),
    "nn.init": lambda m, x: m.nn.init.ones_(x),
    "resize_": lambda m, x: x.resize_(3),
    "resize_ to its shape": lambda m, x: x.resize_(2),
    "version": lambda m, x: x._version,
    "out of place": lambda m, x: x * 2 + 1,
    "saved by mul": lambda m, x: m.ones(2, requires_grad=True) * x,
    "saved by a view's mul": lambda m, x: m.ones(2, requires_grad=True) * x[0],
    "not saved by add": lambda m, x: m.ones(2, requires_grad=True) + x,
    "saved by a custom Function": lambda m, x: _Save[m].apply(m.ones(2, requires_grad=True), x),
    "under no_grad": lambda m, x: _no_grad_mul(m, x),
    "clone is normal": lambda m, x: (x.clone().is_inference(), x.clone().add_(1).tolist()),
    "deepcopy is normal": lambda m, x: copy.deepcopy(x).is_inference(),
    "pickle is normal": lambda m, x: pickle.loads(pickle.dumps(x)).is_inference(),
    "view stays inference": lambda m, x: x[1:].is_inference(),
    "numpy": lambda m, x: x.numpy().tolist(),
    "detach is an inference tensor that counts": lambda m, x: (
        lambda d: (d.is_inference(), d._version, d.add_(1).tolist(), d._version,
                   outcome(lambda: d.requires_grad_()),
                   outcome(lambda: m.ones(2, requires_grad=True) * d)))(x.detach()),
    "data is one too": lambda m, x: (lambda d: (d.is_inference(), d.zero_().tolist(),
                                                d.view(2).is_inference()))(x.data),
    "legacy constructor": lambda m, x: _legacy(m),
}


def _legacy(m):
    with m.inference_mode():
        return m.Tensor([1.0]).is_inference(), m.nn.Parameter(m.ones(1)).is_inference()



def _no_grad_mul(m, x):
    with m.no_grad():
        return m.ones(2, requires_grad=True) * x


def _save(m):
    class Save(m.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(b)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g, None

    return Save


_Save = {torch: _save(torch), cr: _save(cr)}


@pytest.mark.parametrize("use", list(OUTSIDE))
def test_an_inference_tensor_outside_inference_mode(use):
    def facts(m):
        with m.inference_mode():
            x = m.ones(2)
        result = outcome(lambda: OUTSIDE[use](m, x))
        return result, list(x.shape), x[:2].tolist(), x.requires_grad  # resize_'s new: garbage

    assert facts(cr) == facts(torch)


def test_inside_inference_mode_an_inference_tensor_takes_anything():
    def facts(m):
        n = m.ones(2)
        with m.inference_mode():
            x = m.ones(2)
            x.add_(1)
            x[0] = 5.0
            x.requires_grad_()
            versions = outcome(lambda: x._version)
        with m.inference_mode():
            n.add_(1)  # a normal tensor changed inside still counts
            view = n.view(2)
        return x.tolist(), x.requires_grad, versions, n._version, view.is_inference()

    assert facts(cr) == facts(torch)


def test_inference_mode_false_inside_makes_normal_tensors():
    def facts(m):
        with m.inference_mode():
            with m.inference_mode(False):
                t = m.ones(2)
            u = m.ones(2)
        return t.is_inference(), u.is_inference(), m.ones(1).is_inference()

    assert facts(cr) == facts(torch)


def test_a_decorated_function_and_another_thread():
    def facts(m):
        @m.inference_mode()
        def make():
            return m.ones(2) * 2

        seen = []
        with m.inference_mode():
            worker = threading.Thread(target=lambda: seen.append(m.ones(1).is_inference()))
            worker.start()
            worker.join()
            here = m.ones(1).is_inference()
        return make().is_inference(), seen, here

    assert facts(cr) == facts(torch)


def test_marking_is_off_once_no_block_is_open():
    from chainrule import _dispatch

    assert cr.Tensor._wrap is _dispatch._plain_wrap and grad_mode._inference_blocks == [0]
    with cr.inference_mode():
        with cr.inference_mode():
            assert cr.Tensor._wrap is not _dispatch._plain_wrap
        assert grad_mode._inference_blocks == [1]
    assert cr.Tensor._wrap is _dispatch._plain_wrap and _dispatch._wrap is _dispatch._plain_wrap
    with pytest.raises(ValueError), cr.inference_mode():
        raise ValueError
    assert grad_mode._inference_blocks == [0] and cr.Tensor._wrap is _dispatch._plain_wrap
