"""The deprecated overloads PyTorch still takes (a scalar before the tensors) against PyTorch:
the same result, the same UserWarning, and PyTorch's errors for forms it does not take."""

import warnings

import numpy as np
import pytest
import torch

import chainrule as cr


@pytest.fixture(autouse=True)
def warn_always():
    """PyTorch warns once per process about deprecated overloads; tests see every warning."""
    for m in (torch, cr):
        m.set_warn_always(True)
    yield
    for m in (torch, cr):
        m.set_warn_always(False)


def outcome(scenario, m):
    """Values (as lists) or the exception, and the warnings (PyTorch's C++ source location
    removed)."""
    p = m.tensor([[1.0, 2.0], [3.0, 4.0]])
    mat = m.tensor([[0.5, -1.0], [2.0, 1.5]])
    v = m.tensor([1.0, -2.0])
    b = m.arange(12.0).reshape(3, 2, 2) / 10
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            value = scenario(m, p, mat, v, b)
            result = value.tolist() if isinstance(value, (torch.Tensor, cr.Tensor)) else value
        except Exception as e:  # noqa: BLE001  (the exception is what is compared)
            result = (type(e).__name__, str(e))
    return result, [(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
                    for w in caught]


def same(scenario):
    (ours, our_warnings), (theirs, their_warnings) = (outcome(scenario, cr),
                                                      outcome(scenario, torch))
    assert our_warnings == their_warnings
    if isinstance(theirs, list):
        np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-6, atol=1e-6)
    else:
        assert ours == theirs


DEPRECATED = {
    "torch.add": lambda m, p, mat, v, b: m.add(p, 2, mat),
    "torch.add_number_other": lambda m, p, mat, v, b: m.add(p, 2, 3),
    "torch.add_tensor_alpha": lambda m, p, mat, v, b: m.add(p, m.tensor(2.0), mat),
    "torch.add_out": lambda m, p, mat, v, b: (lambda o: (m.add(p, 2, mat, out=o), o)[1])(
        m.empty(2, 2)),
    "torch.sub": lambda m, p, mat, v, b: m.sub(p, 2, mat),
    "torch.sub_out": lambda m, p, mat, v, b: (lambda o: (m.sub(p, 2, mat, out=o), o)[1])(
        m.empty(2, 2)),
    "add": lambda m, p, mat, v, b: p.add(2, mat),
    "add_": lambda m, p, mat, v, b: p.add_(2, mat),
    "sub": lambda m, p, mat, v, b: p.sub(2, mat),
    "sub_": lambda m, p, mat, v, b: p.sub_(0.5, mat),
    "torch.addcmul": lambda m, p, mat, v, b: m.addcmul(p, 2, mat, mat),
    "torch.addcdiv": lambda m, p, mat, v, b: m.addcdiv(p, 0.5, mat, mat),
    "addcmul": lambda m, p, mat, v, b: p.addcmul(2, mat, mat),
    "addcmul_": lambda m, p, mat, v, b: p.addcmul_(2, mat, mat),
    "addcmul_tensor_value": lambda m, p, mat, v, b: p.addcmul(m.tensor(2.0), mat, mat),
    "addcdiv": lambda m, p, mat, v, b: p.addcdiv(3, mat, mat),
    "addcdiv_": lambda m, p, mat, v, b: p.addcdiv_(3, mat, mat),
    "torch.addmm_beta_alpha": lambda m, p, mat, v, b: m.addmm(2, p, 3, mat, mat),
    "torch.addmm_beta": lambda m, p, mat, v, b: m.addmm(2, p, mat, mat),
    "torch.addmm_tensor_beta": lambda m, p, mat, v, b: m.addmm(m.tensor(2.0), p, mat, mat),
    "torch.addmm_out": lambda m, p, mat, v, b: (lambda o: (m.addmm(2, p, 3, mat, mat, out=o),
                                                          o)[1])(m.empty(2, 2)),
    "torch.addmv": lambda m, p, mat, v, b: m.addmv(2, v, 3, mat, v),
    "torch.addmv_beta": lambda m, p, mat, v, b: m.addmv(2, v, mat, v),
    "torch.addmv_": lambda m, p, mat, v, b: m.addmv_(2, v.clone(), 3, mat, v),
    "torch.addmv__beta": lambda m, p, mat, v, b: m.addmv_(2, v.clone(), mat, v),
    "torch.addr": lambda m, p, mat, v, b: m.addr(2, p, 3, v, v),
    "torch.addr_beta": lambda m, p, mat, v, b: m.addr(2, p, v, v),
    "torch.addbmm": lambda m, p, mat, v, b: m.addbmm(2, p, 3, b, b),
    "torch.addbmm_beta": lambda m, p, mat, v, b: m.addbmm(2, p, b, b),
    "torch.baddbmm": lambda m, p, mat, v, b: m.baddbmm(2, b, 3, b, b),
    "torch.baddbmm_beta": lambda m, p, mat, v, b: m.baddbmm(2, b, b, b),
    "addmm": lambda m, p, mat, v, b: p.addmm(2, 3, mat, mat),
    "addmm_beta": lambda m, p, mat, v, b: p.addmm(2, mat, mat),
    "addmm_": lambda m, p, mat, v, b: p.addmm_(2, 3, mat, mat),
    "addmm__beta": lambda m, p, mat, v, b: p.addmm_(2, mat, mat),
    "addmv": lambda m, p, mat, v, b: v.addmv(2, 3, mat, v),
    "addmv_": lambda m, p, mat, v, b: v.addmv_(2, mat, v.flip(0)),
    "addr": lambda m, p, mat, v, b: p.addr(2, 3, v, v),
    "addr_": lambda m, p, mat, v, b: p.addr_(2, v, v),
    "addbmm": lambda m, p, mat, v, b: p.addbmm(2, 3, b, b),
    "addbmm_": lambda m, p, mat, v, b: p.addbmm_(2, b, b),
    "baddbmm": lambda m, p, mat, v, b: b.baddbmm(2, 3, b, b),
    "baddbmm_": lambda m, p, mat, v, b: b.clone().baddbmm_(2, b, b),
}


@pytest.mark.parametrize("name", DEPRECATED)
def test_deprecated_overload(name):
    same(DEPRECATED[name])


NOT_TAKEN = {
    "add_number_last": lambda m, p, mat, v, b: m.add(p, mat, 2),
    "add_keyword_alpha_too": lambda m, p, mat, v, b: m.add(p, 2, mat, alpha=3),
    "add_four": lambda m, p, mat, v, b: m.add(p, 2, mat, 3),
    "addcmul_number_last": lambda m, p, mat, v, b: m.addcmul(p, mat, mat, 2),
    "addmm_keyword_beta_too": lambda m, p, mat, v, b: m.addmm(2, p, mat, mat, beta=3),
    "addmm_missing_operand": lambda m, p, mat, v, b: m.addmm(2, p, 3, mat),
    "addmm_str_alpha": lambda m, p, mat, v, b: m.addmm(2, p, "a", mat, mat),
    "subtract": lambda m, p, mat, v, b: m.subtract(p, 2, mat),
}


@pytest.mark.parametrize("name", NOT_TAKEN)
def test_forms_pytorch_does_not_take(name):
    for m in (torch, cr):
        with pytest.raises(TypeError), warnings.catch_warnings():
            warnings.simplefilter("error")  # and no deprecation warning on the way
            NOT_TAKEN[name](m, m.ones(2, 2), m.ones(2, 2), m.ones(2), m.ones(3, 2, 2))


def test_the_warning_is_given_once_per_process_unless_warn_always():
    import chainrule._arguments as arguments

    cr.set_warn_always(False)
    arguments._warned[0] = False
    p = cr.ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        p.add(2, p)
        cr.add(p, 2, p)
        p.addcmul(2, p, p)
    assert [w.category for w in caught] == [UserWarning]
    assert caught[0].filename == __file__  # it points at the caller's line


def test_the_normal_forms_are_unchanged():
    def scenario(m, p, mat, v, b):
        q = p.clone()
        q.add_(mat, alpha=2)
        q.sub_(mat)
        q.addcmul_(mat, mat, value=0.5)
        q.addcdiv_(mat, p, value=2)
        return (q, m.add(p, mat, alpha=-1), p.add(1), m.addmm(p, mat, mat, beta=2, alpha=0.5),
                p.addmm(mat, mat), m.baddbmm(b, b, b, alpha=2), v.addmv(mat, v, beta=0),
                m.addcmul(p, mat, mat, value=3), m.sub(p, 1, alpha=2))

    for m in (torch, cr):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            outcome(scenario, m)
    ours, theirs = outcome(scenario, cr)[0], outcome(scenario, torch)[0]
    for o, t in zip(ours, theirs):
        np.testing.assert_allclose(o.tolist(), t.tolist(), rtol=1e-6, atol=1e-6)


def test_deprecated_forms_keep_the_graph():
    def grads(m):
        p = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        mat = m.tensor([[0.5, -1.0], [2.0, 1.5]], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = m.addmm(2, p, 3, mat, mat) + p.addcmul(0.5, mat, mat) + m.add(p, 2, mat)
        out.sum().backward()
        return p.grad.tolist(), mat.grad.tolist()

    np.testing.assert_allclose(grads(cr), grads(torch), rtol=1e-6)
