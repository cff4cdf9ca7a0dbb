"""The "modified by an inplace operation" error names the in-place op and the line that ran it
(beyond PyTorch, whose message only suggests anomaly mode); the start of the message is torch's."""

import inspect
import os
import re

import numpy as np
import pytest
import torch

import chainrule as cr
from chainrule import _tooling

HERE = os.path.relpath(__file__)


def line_after() -> int:
    """The number of the line after the caller's."""
    return inspect.currentframe().f_back.f_lineno + 1


def error(scenario, m=cr) -> str:
    with pytest.raises(RuntimeError) as info:
        scenario(m)
    return str(info.value)


def saved_input_modified(m):
    x = m.tensor(np.ones(3), requires_grad=True)
    a = x * 2
    b = a.sin()
    a.add_(1)
    b.sum().backward()


def saved_output_assigned(m):
    x = m.tensor(np.ones(3), requires_grad=True)
    y = x.exp()
    y[0] = 3.0
    y.sum().backward()


def constant_modified(m):
    x = m.tensor(np.ones(3), requires_grad=True)
    w = m.tensor(np.ones(3))
    y = x * w
    w.mul_(2)
    y.sum().backward()


def output_of_an_inplace_op_modified(m):
    # Found by tests/test_random_programs.py: exp_ saved a copy of its result, not the tensor.
    x = m.tensor(np.ones(3), requires_grad=True)
    y = x.clone()
    y.exp_()
    y.add_(1)
    y.sum().backward()


def output_of_an_inplace_op_on_a_view_modified(m):
    x = m.tensor(np.ones(3), requires_grad=True)
    y = x.clone()
    y[1:].exp_()
    y.mul_(2)
    y.sum().backward()


@pytest.mark.parametrize("scenario", [saved_input_modified, saved_output_assigned,
                                      constant_modified, output_of_an_inplace_op_modified,
                                      output_of_an_inplace_op_on_a_view_modified])
def test_starts_as_torch(scenario):
    ours, theirs = error(scenario), error(scenario, torch)
    head = theirs[:theirs.index("instead.") + len("instead.")]
    # PyTorch names the node its slicing made
    head = head.replace("output 0 of AsStridedBackward0", "output 0 of Exp")
    head = head.replace("output 0 of AsStrided,", "output 0 of Exp,")
    assert ours.startswith(head)


def test_names_the_op_and_the_line():
    x = cr.tensor(np.ones(3), requires_grad=True)
    a = x * 2
    b = a.sin()
    line = line_after()
    a.add_(1)
    message = error(lambda m: b.sum().backward())
    assert message.endswith(
        f"expected version 0 instead. It was saved for SinBackward0 and then modified by add_ at "
        f"{HERE}:{line} (a.add_(1)). Hint: clone() the tensor before modifying it in place, or "
        "use the out-of-place add.")


def test_assignment_and_saved_outputs():
    x = cr.tensor(np.ones(3), requires_grad=True)
    y = x.exp()
    line = line_after()
    y[0] = 3.0
    message = error(lambda m: y.sum().backward())
    assert f"It was saved for ExpBackward0 and then modified by copy_ at {HERE}:{line} " \
           "(y[0] = 3.0). Hint: clone() the tensor before modifying it in place." in message


def test_the_first_change_after_the_save_is_named():
    x = cr.tensor(np.ones(3), requires_grad=True)
    w = cr.ones(3)
    w.mul_(3)  # before the save: not the culprit
    y = x * w
    line = line_after()
    w.div_(2)
    w.sub_(1)
    message = error(lambda m: y.sum().backward())
    assert "is at version 3; expected version 1" in message
    assert f"modified by div_ at {HERE}:{line} (w.div_(2))" in message


def test_through_a_view_and_inside_a_module():
    x = cr.tensor(np.ones(3), requires_grad=True)
    h = x * 3
    s = h.sin()
    line = line_after()
    cr.nn.ReLU(inplace=True)(h[1:])
    message = error(lambda m: s.sum().backward())
    assert f"modified by relu_ at {HERE}:{line}" in message


def test_an_optimizer_step_between_forward_and_backward():
    model = cr.nn.Linear(3, 1)
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    loss = model(cr.ones(2, 3, requires_grad=True)).sum()
    loss.backward(retain_graph=True)
    line = line_after()
    opt.step()
    message = error(lambda m: loss.backward())
    assert re.search(rf"modified by \w+_ at {re.escape(HERE)}:{line} \(opt.step\(\)\)", message)


def test_custom_function_mark_dirty():
    class Double(cr.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            a.data.mul_(2)  # unseen by the version counter: mark_dirty counts the change
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = cr.tensor(np.ones(3), requires_grad=True)
    a = x * 1
    b = a.sin()
    line = line_after()
    Double.apply(a)
    assert f"modified by Double at {HERE}:{line}" in error(lambda m: b.sum().backward())


def test_nothing_noted_once_backward_released_the_saved_values(monkeypatch):
    calls = []
    monkeypatch.setattr(_tooling, "user_location", lambda: calls.append(1) or ("?", 0))
    model = cr.nn.Linear(3, 2)
    opt = cr.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x = cr.ones(4, 3, requires_grad=True)  # so that the weight is saved

    def step():
        opt.zero_grad()
        model(x).pow(2).sum().backward()
        opt.step()

    step()
    assert len(calls) <= 1  # at most a first change of a value saved while new is noted
    for _ in range(3):
        step()
    assert len(calls) <= 1
    # The saved values' shared list was dropped: the counter is [version] or has an empty slot.
    assert model.weight._vc[1:2] in ([], [None])


def test_without_notes_the_hint_stays():
    x = cr.tensor(np.ones(3), requires_grad=True)
    a = x * 2
    b = a.sin()
    a._vc[0] += 1  # a change no op made (no note)
    message = error(lambda m: b.sum().backward())
    assert message.endswith("Hint: the backtrace further above shows the operation that failed "
                            "to compute its gradient; clone() the tensor before modifying it in "
                            "place.")


def test_a_new_tensor_saved_twice():
    x = cr.tensor(np.ones(3), requires_grad=True)
    y = x.exp()  # ExpBackward0 saves y while it is new
    z = y.sin()  # SinBackward0 saves it again
    line = line_after()
    y.add_(1)
    for root, saver in ((z, "SinBackward0"), (y, "ExpBackward0")):
        message = error(lambda m, root=root: root.sum().backward())
        assert f"saved for {saver} and then modified by add_ at {HERE}:{line}" in message
