"""Anomaly mode, checked against PyTorch running the same code (``m`` is chainrule or torch)."""

import re
import threading
import warnings

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import _modes

BOTH = pytest.mark.parametrize("m", [torch, cr], ids=["torch", "chainrule"])
ANOMALY_ON = "Anomaly Detection has been enabled. This mode will increase the runtime and " \
             "should only be enabled for debugging."


@pytest.fixture(autouse=True)
def _anomaly_off():
    yield
    for m in (torch, cr):
        m.autograd.set_detect_anomaly(False)
    assert _modes.stack.node is None and _modes.stack.traced is None


def _messages(record) -> list[tuple[type, str]]:
    # PyTorch's C++ warnings end with where they were triggered in its sources.
    return [(w.category, re.sub(r" \(Triggered internally at [^)]*\.\)$", "", str(w.message)))
            for w in record]


def _run(m, scenario):
    """The scenario's error message (or None) and its warnings, under detect_anomaly."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        error = None
        try:
            with m.autograd.detect_anomaly():
                scenario(m)
        except RuntimeError as e:
            error = str(e)
    return error, [w for w in _messages(record) if w[0] is UserWarning]


def _sqrt_of_negative(m):
    x = m.tensor(np.array([-1.0, 1.0, 4.0]), requires_grad=True)
    y = x.sqrt()  # the forward line both tracebacks name
    y.sum().backward()


def _make_nan_function(m):
    class F(m.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g * float("nan")

    return F


def _nan_in_second_output(m):
    a = m.ones(3, requires_grad=True)
    b = m.ones(3, requires_grad=True)
    _make_nan_function(m).apply(a, b).sum().backward()


def _raising_backward(m):
    class Boom(m.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.clone()

        @staticmethod
        def backward(ctx, g):
            raise RuntimeError("Some error in backward")

    x = m.ones(2, requires_grad=True)
    Boom.apply(x).sum().backward()


@BOTH
def test_flags_and_set_detect_anomaly(m):
    assert (m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()) == (False, True)
    m.autograd.set_detect_anomaly(True, check_nan=False)
    assert (m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()) == (True, False)
    with m.autograd.set_detect_anomaly(False):
        assert not m.is_anomaly_enabled()
    assert (m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()) == (True, False)
    m.autograd.set_detect_anomaly(False)
    assert (m.is_anomaly_enabled(), m.is_anomaly_check_nan_enabled()) == (False, True)


@BOTH
def test_mode_is_seen_by_other_threads(m):
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with m.autograd.detect_anomaly():
            t = threading.Thread(target=lambda: seen.append(m.is_anomaly_enabled()))
            t.start()
            t.join()
    assert seen == [True]


def test_entering_warns_as_torch():
    for m in (torch, cr):
        with pytest.warns(UserWarning) as record:
            with m.autograd.detect_anomaly(check_nan=False):
                assert m.is_anomaly_enabled() and not m.is_anomaly_check_nan_enabled()
        assert [str(w.message) for w in record] == [ANOMALY_ON]
        assert record[0].filename == __file__
        assert not m.is_anomaly_enabled()


@pytest.mark.parametrize("scenario", [_sqrt_of_negative, _nan_in_second_output,
                                      _raising_backward])
def test_errors_and_forward_tracebacks_as_torch(scenario):
    ours, theirs = _run(cr, scenario), _run(torch, scenario)
    assert ours[0] == theirs[0]
    # PyTorch's traceback of a custom Function also shows its own Function.apply frame;
    # chainrule's stops at the user's call.
    own_frame = r'  File "[^"]*torch/autograd/function.py".*\n.*\n'
    assert ours[1] == [(c, re.sub(own_frame, "", msg)) for c, msg in theirs[1]]


def test_nan_messages():
    error, record = _run(cr, _sqrt_of_negative)
    assert error == "Function 'SqrtBackward0' returned nan values in its 0th output."
    assert record[0][1] == ANOMALY_ON
    assert record[1][1].startswith("Error detected in SqrtBackward0. Traceback of forward call "
                                   "that caused the error:\n")
    assert "    y = x.sqrt()  # the forward line both tracebacks name\n" in record[1][1]
    error, _ = _run(cr, _nan_in_second_output)
    assert error == "Function 'FBackward' returned nan values in its 1th output."


@BOTH
def test_check_nan_false_lets_nan_through(m):
    x = m.tensor(np.array([-1.0, 4.0]), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with m.autograd.detect_anomaly(check_nan=False):
            x.sqrt().sum().backward()
    assert np.isnan(x.grad.numpy()[0])


@BOTH
def test_nan_is_not_checked_when_off(m):
    x = m.tensor(np.array([-1.0, 4.0]), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x.sqrt().sum().backward()
    assert np.isnan(x.grad.numpy()[0])


@BOTH
def test_metadata_holds_the_traceback_and_the_parent(m):
    x = m.tensor(np.array([0.0, 1.0]), requires_grad=True)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        with m.autograd.detect_anomaly():
            y = x.pow(3).sum()
            (g,) = m.autograd.grad(y, x, create_graph=True)
            with pytest.raises(RuntimeError, match="PowBackward0' returned nan"):
                m.autograd.grad(g.sqrt().sum(), x)
    trace = x.pow(3).grad_fn.metadata.get("traceback_")
    assert trace is None  # made outside anomaly mode: nothing recorded
    assert set(g.grad_fn.metadata) == {"traceback_", "parent_"}
    assert g.grad_fn.metadata["parent_"].name() == "PowBackward0"
    assert isinstance(g.grad_fn.metadata["traceback_"], list)
    messages = [m for _, m in _messages(record)]
    assert messages[-1].startswith("\n\nPrevious calculation was induced by PowBackward0. "
                                   "Traceback of forward call that induced the previous "
                                   "calculation:\n")
    assert "y = x.pow(3).sum()" in messages[-1]


def test_decorator():
    x = cr.tensor(np.array([-1.0]), requires_grad=True)

    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        @cr.autograd.detect_anomaly()
        def backward():
            assert cr.is_anomaly_enabled()
            x.sqrt().sum().backward()

    assert not cr.is_anomaly_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
            backward()
    assert not cr.is_anomaly_enabled()


def test_nan_inside_vmap_is_checked_on_the_batch():
    x = cr.tensor(np.array([[-1.0, 1.0], [1.0, 4.0]]))

    def f(row):
        return cr.func.grad(lambda r: r.sqrt().sum())(row)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(cr.func.vmap(f)(x).numpy()[0, 0])
        with cr.autograd.detect_anomaly(), pytest.raises(RuntimeError, match="returned nan"):
            cr.func.vmap(f)(x)
