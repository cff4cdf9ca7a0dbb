"""__torch_function__ as PyTorch defines it: each scenario (the classic examples of PyTorch's
"Extending torch" notes) runs on torch and on chainrule, and what they log and return agree."""

from __future__ import annotations

import threading

import pytest
import torch

import chainrule as cr


def _names(log: list) -> list:
    return [getattr(f, "__name__", repr(f)) for f in log]


def _tensor_types(types) -> list:
    return [t.__name__ if t.__name__ != "Tensor" else "Tensor" for t in types]


def _logging_subclass(lib):
    class LoggingTensor(lib.Tensor):
        log: list = []

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.log.append((func.__name__, _tensor_types(types)))
            return super().__torch_function__(func, types, args, kwargs)

    LoggingTensor.log = []
    return LoggingTensor


def _run_logging(lib):
    LoggingTensor = _logging_subclass(lib)
    x = lib.tensor([1.0, -2.0, 3.0]).as_subclass(LoggingTensor)
    y = lib.tensor([0.5, 0.5, 0.5])
    results = [
        x * 2, 2 * x, x + y, x - 1, x / 2, -x, x == 1, x < 1,
        lib.add(x, y), lib.mul(x, 3), x.add(1), x.sum(), lib.sin(x),
        lib.nn.functional.relu(x), lib.cat([x, y]), lib.stack((y, x)), x[0:2],
        lib.einsum("i,i->", x, y), lib.max(x, dim=0),
    ]
    x2 = x.clone()
    x2 += 1
    x2 *= 2
    results.append(x2)
    return LoggingTensor.log, results, LoggingTensor


def test_a_logging_subclass_sees_each_public_call_and_keeps_its_type():
    theirs_log, theirs, TT = _run_logging(torch)
    ours_log, ours, CT = _run_logging(cr)
    assert ours_log == theirs_log
    for a, b in zip(theirs, ours):
        if isinstance(a, tuple):  # max's (values, indices)
            assert type(b).__name__ == type(a).__name__
            a, b = a[0], b[0]
        assert (type(a) is TT) == (type(b) is CT), (a, b)
        assert cr.allclose(cr.tensor(b.tolist()), cr.tensor(a.tolist()))


def _subclass_results_keep_the_graph(lib):
    LoggingTensor = _logging_subclass(lib)
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    x = w.as_subclass(LoggingTensor)
    y = (x * x).sum()
    assert type(y) is LoggingTensor
    y.backward()
    assert w.grad.tolist() == [2.0, 4.0]


def test_subclass_results_keep_the_graph():
    for lib in (torch, cr):
        _subclass_results_keep_the_graph(lib)


def _make_subclass_and_a_plain_subclass_preserve_their_type(lib):
    class Plain(lib.Tensor):
        pass

    p = lib.Tensor._make_subclass(Plain, lib.ones(2), True)
    assert type(p) is Plain and p.requires_grad
    q = p * 2 + 1
    assert type(q) is Plain and q.tolist() == [3.0, 3.0]
    assert type(lib.exp(p)) is Plain
    assert type(p.detach()) is Plain


def test_make_subclass_and_a_plain_subclass_preserve_their_type():
    for lib in (torch, cr):
        _make_subclass_and_a_plain_subclass_preserve_their_type(lib)

class _ScalarTensorBase:
    """PyTorch's ScalarTensor example: a diagonal matrix stored as (N, value)."""

    HANDLED: dict = {}

    def __init__(self, n, value):
        self._n = n
        self._value = value

    def __repr__(self):
        return f"ScalarTensor(N={self._n}, value={self._value})"


def _scalar_tensor(lib):
    handled = {}

    class ScalarTensor(_ScalarTensorBase):
        def tensor(self):
            return self._value * lib.eye(self._n)

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if kwargs is None:
                kwargs = {}
            if func not in handled or not all(
                    issubclass(t, (lib.Tensor, ScalarTensor)) for t in types):
                return NotImplemented
            return handled[func](*args, **kwargs)

    def mean(input):
        return float(input._value) / input._n

    def add(input, other):
        if isinstance(other, ScalarTensor):
            return ScalarTensor(input._n, input._value + other._value)
        return input.tensor() + other

    handled[lib.mean] = mean
    handled[lib.add] = add
    return ScalarTensor


def _a_non_tensor_with_torch_function_reaches_it_as_in_pytorch(lib):
    ScalarTensor = _scalar_tensor(lib)
    d = ScalarTensor(5, 2)
    r = [lib.mean(d), repr(lib.add(d, d)), lib.add(d, lib.ones(5, 5)).tolist()]
    with pytest.raises(TypeError) as err:
        lib.sin(d)
    r.append(str(err.value).replace("chainrule", "torch"))
    return r


def test_a_non_tensor_with_torch_function_reaches_it_as_in_pytorch():
    got = {lib.__name__: _a_non_tensor_with_torch_function_reaches_it_as_in_pytorch(lib)
           for lib in (torch, cr)}
    assert got["chainrule"] == got["torch"]


def _an_unhandled_type_error_names_the_function_and_types(lib):
    ScalarTensor = _scalar_tensor(lib)
    with pytest.raises(TypeError, match="Multiple dispatch failed for 'torch.sin'; all "
                                        "__torch_function__ handlers returned NotImplemented"):
        lib.sin(ScalarTensor(2, 1))
    with pytest.raises(TypeError, match="Multiple dispatch failed for 'torch.nn.gelu'"):
        lib.nn.functional.gelu(ScalarTensor(2, 1))
    with pytest.raises(TypeError, match="no implementation found for "
                                        "'torch.nn.functional.relu' on types that implement "
                                        "__torch_function__: .*ScalarTensor"):
        lib.nn.functional.relu(ScalarTensor(2, 1))


def test_an_unhandled_type_error_names_the_function_and_types():
    for lib in (torch, cr):
        _an_unhandled_type_error_names_the_function_and_types(lib)


def _counting_mode(lib, counts: list):
    class CountingMode(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            counts.append((func.__name__, _tensor_types(types)))
            return func(*args, **(kwargs or {}))

    return CountingMode


def _mode_program(lib):
    x = lib.ones(3)
    y = x + 1
    z = lib.nn.functional.relu(y * 2)
    w = z.sum()
    v = lib.matmul(lib.arange(4.0).reshape(2, 2), lib.eye(2))
    return [w.item(), v.tolist()]


def _a_torch_function_mode_counts_calls_as_pytorchs(lib):
    counts: list = []
    with _counting_mode(lib, counts)():
        values = _mode_program(lib)
    return (counts, values)


def test_a_torch_function_mode_counts_calls_as_pytorchs():
    got = {lib.__name__: _a_torch_function_mode_counts_calls_as_pytorchs(lib)
           for lib in (torch, cr)}
    assert got["chainrule"] == got["torch"]


def _a_mode_redirects_calls(lib):
    class AddIsSub(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            if func is lib.add:
                func = lib.sub
            return func(*args, **(kwargs or {}))

    with AddIsSub():
        r = lib.add(lib.tensor([5.0]), lib.tensor([2.0]))
    assert r.tolist() == [3.0]
    assert lib.add(lib.tensor([5.0]), lib.tensor([2.0])).tolist() == [7.0]


def test_a_mode_redirects_calls():
    for lib in (torch, cr):
        _a_mode_redirects_calls(lib)


def _nested_modes_run_innermost_first_and_pass_calls_outward(lib):
    log: list = []

    class Named(lib.overrides.TorchFunctionMode):
        def __init__(self, name):
            super().__init__()
            self.name = name

        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append((self.name, func.__name__))
            return func(*args, **(kwargs or {}))

    outer, inner = Named("outer"), Named("inner")
    with outer:
        with inner:
            stack = lib.overrides._get_current_function_mode_stack()
            assert stack == [outer, inner]
            lib.neg(lib.zeros(1))
        lib.abs(lib.zeros(1))
    assert lib.overrides._get_current_function_mode_stack() == []
    return log


def test_nested_modes_run_innermost_first_and_pass_calls_outward():
    got = {lib.__name__: _nested_modes_run_innermost_first_and_pass_calls_outward(lib)
           for lib in (torch, cr)}
    assert got["chainrule"] == got["torch"]


def _a_mode_and_a_subclass_together(lib):
    counts: list = []
    LoggingTensor = _logging_subclass(lib)
    x = lib.ones(2).as_subclass(LoggingTensor)
    with _counting_mode(lib, counts)():
        y = lib.mul(x, 2)
    return (counts, LoggingTensor.log, type(y) is LoggingTensor)


def test_a_mode_and_a_subclass_together():
    got = {lib.__name__: _a_mode_and_a_subclass_together(lib)
           for lib in (torch, cr)}
    assert got["chainrule"] == got["torch"]


def _disable_torch_function_subclass_and_disable_torch_function(lib):
    LoggingTensor = _logging_subclass(lib)
    x = lib.ones(2).as_subclass(LoggingTensor)
    with lib._C.DisableTorchFunctionSubclass() if lib is torch else \
            lib.DisableTorchFunctionSubclass():
        y = x + 1
    assert LoggingTensor.log == [] and type(y) is lib.Tensor
    counts: list = []
    with _counting_mode(lib, counts)():
        with lib._C.DisableTorchFunction() if lib is torch else lib.DisableTorchFunction():
            lib.neg(x)
        lib.neg(lib.ones(1))
    assert [c[0] for c in counts] == ["ones", "neg"]


def test_disable_torch_function_subclass_and_disable_torch_function():
    for lib in (torch, cr):
        _disable_torch_function_subclass_and_disable_torch_function(lib)


def _overrides_helpers_answer_as_pytorchs(lib):
    ov = lib.overrides
    LoggingTensor = _logging_subclass(lib)
    ScalarTensor = _scalar_tensor(lib)
    t, s, d = lib.ones(1), lib.ones(1).as_subclass(LoggingTensor), ScalarTensor(1, 1)
    assert not ov.has_torch_function((t, 1.0))
    assert ov.has_torch_function((t, s)) and ov.has_torch_function([d])
    assert not lib.nn.functional.has_torch_function_unary(t)
    assert lib.nn.functional.has_torch_function_variadic(t, d)
    assert not ov.has_torch_function((lib.nn.Parameter(lib.ones(1)),))
    assert ov.is_tensor_like(t) and ov.is_tensor_like(d) and not ov.is_tensor_like(1.0)
    with _counting_mode(lib, [])():
        assert ov.has_torch_function((t,))


def test_overrides_helpers_answer_as_pytorchs():
    for lib in (torch, cr):
        _overrides_helpers_answer_as_pytorchs(lib)


def _handle_torch_function_and_wrap_torch_function_for_user_functions(lib):
    ov = lib.overrides
    calls: list = []

    def scaled(a, b):
        if ov.has_torch_function((a, b)):
            return ov.handle_torch_function(scaled, (a, b), a, b)
        return a * b + 1

    @ov.wrap_torch_function(lambda a: (a,))
    def double(a):
        return a * 2

    class Seen(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append(func.__name__)
            return super().__torch_function__(func, types, args, kwargs)

    x = lib.tensor([3.0]).as_subclass(Seen)
    r = [scaled(x, lib.tensor([4.0])).tolist(), double(x).tolist(), type(double(x)) is Seen]
    return (r, calls)


def test_handle_torch_function_and_wrap_torch_function_for_user_functions():
    got = {lib.__name__: _handle_torch_function_and_wrap_torch_function_for_user_functions(lib)
           for lib in (torch, cr)}
    assert got["chainrule"] == got["torch"]


def _redispatch_function_skips_one_level(lib):
    ov = lib.overrides
    calls: list = []

    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args, kwargs=None):
            calls.append(func.__name__)
            return ov.redispatch_function(func, types, args, kwargs)

    def scaled_mul(a, b):
        if ov.has_torch_function((a, b)):
            return ov.handle_torch_function(scaled_mul, (a, b), a, b)
        return a * b + 1

    x = lib.tensor([3.0]).as_subclass(Logged)
    y = lib.tensor([4.0]).as_subclass(Logged)
    return (scaled_mul(x, y).tolist(), calls)


def test_redispatch_function_skips_one_level():
    got = {lib.__name__: _redispatch_function_skips_one_level(lib)
           for lib in (torch, cr)}
    assert got["chainrule"] == got["torch"]


def _modes_are_per_thread(lib):
    counts: list = []
    seen_elsewhere: list = []

    def other():
        seen_elsewhere.append(len(lib.overrides._get_current_function_mode_stack()))
        lib.neg(lib.ones(1))

    with _counting_mode(lib, counts)():
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert seen_elsewhere == [0] and counts == []


def test_modes_are_per_thread():
    for lib in (torch, cr):
        _modes_are_per_thread(lib)


def _a_proxy_like_object_reaches_torch_function_from_operators_of_tensors(lib):
    log: list = []

    class Proxy:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(func.__name__)
            return "proxy"

    p = Proxy()
    t = lib.ones(2)
    return ([t * p, t + p, lib.relu(p), lib.nn.functional.gelu(p),
                          lib.linalg.norm(p)], log)


def test_a_proxy_like_object_reaches_torch_function_from_operators_of_tensors():
    got = {lib.__name__: _a_proxy_like_object_reaches_torch_function_from_operators_of_tensors(lib)
           for lib in (torch, cr)}
    assert got["chainrule"] == got["torch"]
