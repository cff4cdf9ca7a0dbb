"""no_grad, enable_grad, set_grad_enabled and inference_mode, run against chainrule and torch."""

import threading

import pytest
import torch

import chainrule as cr

BOTH = pytest.mark.parametrize("m", [torch, cr], ids=["torch", "chainrule"])


def leaf(m):
    return m.ones(3, requires_grad=True)


def assert_not_recorded(y):
    assert y.grad_fn is None
    assert not y.requires_grad
    assert y.is_leaf


def assert_recorded(y):
    assert y.grad_fn is not None
    assert y.requires_grad
    assert not y.is_leaf


# Each mode as a context manager: (build the mode, grad enabled inside, inference mode inside).
MODES = {
    "no_grad": (lambda m: m.no_grad(), False, False),
    "enable_grad": (lambda m: m.enable_grad(), True, False),
    "set_grad_enabled_false": (lambda m: m.set_grad_enabled(False), False, False),
    "set_grad_enabled_true": (lambda m: m.set_grad_enabled(True), True, False),
    "inference_mode": (lambda m: m.inference_mode(), False, True),
    "inference_mode_false": (lambda m: m.inference_mode(False), True, False),
    "autograd_no_grad": (lambda m: m.autograd.no_grad(), False, False),
}


@BOTH
@pytest.mark.parametrize("name", MODES)
@pytest.mark.parametrize("outside", [True, False], ids=["from_enabled", "from_disabled"])
def test_mode_as_context_manager(m, name, outside):
    make, enabled, inference = MODES[name]
    x = leaf(m)
    m.set_grad_enabled(outside)
    with make(m):
        assert m.is_grad_enabled() is enabled
        assert m.is_inference_mode_enabled() is inference
        y = x * 2
    assert m.is_grad_enabled() is outside
    assert not m.is_inference_mode_enabled()
    if enabled:
        assert_recorded(y)
    else:
        assert_not_recorded(y)


@BOTH
@pytest.mark.parametrize("name", MODES)
def test_mode_as_decorator(m, name):
    make, enabled, inference = MODES[name]
    x = leaf(m)

    @make(m)
    def double(t):
        return t * 2, m.is_grad_enabled(), m.is_inference_mode_enabled()

    assert m.is_grad_enabled()  # building the decorator changes nothing
    with m.no_grad():
        y, inside, inside_inference = double(x)
        assert not m.is_grad_enabled()
    assert (inside, inside_inference) == (enabled, inference)
    assert (y.requires_grad, y.grad_fn is not None) == (enabled, enabled)
    assert double.__name__ == "double"
    assert m.is_grad_enabled()


@BOTH
@pytest.mark.parametrize("name", ["no_grad", "enable_grad", "inference_mode"])
def test_mode_as_decorator_without_parentheses(m, name):
    mode = getattr(m, name)
    x = leaf(m)

    @mode
    def double(t):
        return t * 2

    with m.set_grad_enabled(name != "enable_grad"):
        y = double(x)
    assert y.requires_grad is (name == "enable_grad")
    assert double.__name__ == "double"


@BOTH
def test_decorated_generator_keeps_the_mode_while_it_runs(m):
    @m.no_grad()
    def steps():
        yield m.is_grad_enabled()
        yield m.is_grad_enabled()

    gen = steps()
    assert next(gen) is False
    assert m.is_grad_enabled()  # between steps the caller's mode is back
    assert next(gen) is False


@BOTH
def test_nesting(m):
    x = leaf(m)
    with m.no_grad():
        a = x * 2
        with m.enable_grad():
            b = x * 2
            with m.set_grad_enabled(False):
                c = x * 2
                with m.inference_mode(False):
                    d = x * 2
                e = x * 2
            f = x * 2
        g = x * 2
    h = x * 2
    for t in (a, c, e, g):
        assert_not_recorded(t)
    for t in (b, d, f, h):
        assert_recorded(t)


@BOTH
def test_set_grad_enabled_as_a_plain_call(m):
    x = leaf(m)
    m.set_grad_enabled(False)
    assert not m.is_grad_enabled()
    assert_not_recorded(x * 2)
    m.set_grad_enabled(True)
    assert m.is_grad_enabled()
    assert_recorded(x * 2)


@BOTH
def test_mode_is_restored_when_the_block_raises(m):
    with pytest.raises(ValueError):
        with m.no_grad():
            raise ValueError("boom")
    assert m.is_grad_enabled()
    with pytest.raises(ValueError):
        with m.inference_mode():
            raise ValueError("boom")
    assert m.is_grad_enabled() and not m.is_inference_mode_enabled()


@BOTH
def test_no_graph_under_no_grad(m):
    x = leaf(m)
    w = m.ones(3, 2, requires_grad=True)
    with m.no_grad():
        outs = [x * 2, x + x, x.exp(), (x @ w).sum(), x[[0, 1]], x.sum(0), -x, x.clone(),
                m.where(x > 0, x, x * 3)]
    for y in outs:
        assert_not_recorded(y)
    assert x.requires_grad and x.grad is None  # the inputs are untouched


@BOTH
def test_views_made_under_no_grad_still_require_grad(m):
    x = leaf(m)
    with m.no_grad():
        views = [x[1:], x[0], x.view(3, 1), x.unsqueeze(0), x.expand(2, 3)]
    for v in views:
        assert v.requires_grad and v.grad_fn is None and v.is_leaf
    y = (views[0] * 2).sum()  # recorded again once grad mode is back
    assert y.grad_fn is not None


@BOTH
def test_backward_and_grad_work_inside_no_grad(m):
    x = leaf(m)
    y = (x * x).sum()
    with m.no_grad():
        y.backward(retain_graph=True)
        (g,) = m.autograd.grad(y, x)
    assert x.grad.tolist() == [2.0, 2.0, 2.0]
    assert g.tolist() == [2.0, 2.0, 2.0]
    assert not g.requires_grad


@BOTH
def test_modes_are_thread_local(m):
    x = leaf(m)
    entered, checked = threading.Event(), threading.Event()
    seen = {}

    def worker():
        with m.no_grad():
            entered.set()
            checked.wait(timeout=10)
            seen["worker"] = (m.is_grad_enabled(), (x * 2).requires_grad)

    thread = threading.Thread(target=worker)
    thread.start()
    assert entered.wait(timeout=10)
    seen["main"] = (m.is_grad_enabled(), (x * 2).requires_grad)  # while the worker is in no_grad
    checked.set()
    thread.join()
    assert seen == {"main": (True, True), "worker": (False, False)}


@BOTH
def test_new_threads_start_with_grad_enabled(m):
    x = leaf(m)
    seen = []

    def worker():
        seen.append((m.is_grad_enabled(), (x * 2).requires_grad))

    with m.no_grad():
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        assert not m.is_grad_enabled()
    assert seen == [(True, True)]
