"""What libraries and tools read to know what they run on: torch.__version__ (a TorchVersion
that compares as PyTorch's), torch.version, the classes' __module__, and the names of the
autograd namespaces (graph, function, gradcheck, profiler, profiler_util, variable)."""

import importlib
import importlib.metadata
import warnings

import numpy as np
import pytest
import torch
from packaging.version import Version

import chainrule as cr
from chainrule.torch_version import TorchVersion


def test_version_is_the_pytorch_release_followed_with_chainrules_own():
    v = cr.__version__
    assert isinstance(v, TorchVersion) and isinstance(v, str)
    assert v.split("+")[0] == torch.__version__.split("+")[0]
    assert v == f"{v.split('+')[0]}+chainrule.{cr.version.chainrule}"
    assert cr.version.chainrule == importlib.metadata.version("chainrule")
    parsed = Version(v)
    release = Version(torch.__version__).release
    assert parsed >= Version(f"{release[0]}.{release[1]}")
    assert parsed < Version(f"{release[0]}.{release[1] + 1}")
    assert v >= f"{release[0]}.{release[1]}" and v < (release[0], release[1] + 1)
    assert cr.torch_version.__version__ == v


COMPARED = ["2.13", "2.13.0", "2.14", (2, 13), (2, 13, 0), (2, 14), [2, 12, 9], "2.13.0+cpu",
            "abc", "2.13.0rc1", "2.13.0.post1", "2.13.0.dev20240101", "1!1.0", "v2.13", "2.13.0+a",
            "2.13.0+cpu.1", "2.12.99", "10.0", "2.13.0a1.post2.dev3"]


@pytest.mark.parametrize("text", ["2.13.0+cpu", "2.13.0", "2.14.0rc2", "1.10.0a"])
def test_torch_version_compares_as_pytorchs(text):
    ours, theirs = TorchVersion(text), torch.torch_version.TorchVersion(text)
    for other in COMPARED:
        for op in ("__gt__", "__lt__", "__eq__", "__ge__", "__le__", "__ne__"):
            assert getattr(ours, op)(other) == getattr(theirs, op)(other), (text, op, other)
    assert hash(ours) == hash(text) and str(ours) == text
    for version in (ours, theirs):
        with pytest.raises(TypeError):
            version > 3  # noqa: B015  (the comparison raises)


def test_packaging_versions_compare():
    v = TorchVersion("2.13.0+chainrule.0.1.0")
    assert v > Version("2.12") and v < Version("2.14") and not v == Version("2.13")


def test_version_module_as_pytorchs():
    assert set(torch.version.__all__) <= set(cr.version.__all__)
    assert cr.version.cuda is None and cr.version.hip is None and cr.version.rocm is None
    assert cr.version.xpu is None and cr.version.debug is False
    assert isinstance(cr.version.git_version, str)
    assert cr.version.__version__ == cr.__version__


CLASSES = ["Tensor", "Size", "dtype", "finfo", "iinfo", "layout", "memory_format", "device"]


@pytest.mark.parametrize("name", CLASSES)
def test_top_level_classes_name_pytorchs_module(name):
    assert getattr(cr, name).__module__ == getattr(torch, name).__module__
    assert getattr(cr, name).__qualname__ == getattr(torch, name).__qualname__


def test_instances_print_their_class_as_pytorchs():
    for m_ours, m_theirs in ((cr.ones(2), torch.ones(2)),
                             (cr.nn.Parameter(cr.ones(1)), torch.nn.Parameter(torch.ones(1)))):
        assert str(type(m_ours)) == str(type(m_theirs))
    assert cr.nn.Parameter.__module__ == torch.nn.Parameter.__module__
    assert type(cr.ones(1)).__module__ == "torch"
    assert cr.typename(cr.Size([1])) == torch.typename(torch.Size([1]))


# ---- the autograd namespaces -----------------------------------------------------------------

# Names PyTorch's modules list that chainrule does not provide (docs/differences.md says why).
NOT_PROVIDED = {"torch.autograd.profiler": {"load_nvprof", "parse_nvprof_trace"}}


@pytest.mark.parametrize("module", [
    "autograd", "autograd.graph", "autograd.function", "autograd.gradcheck",
    "autograd.profiler", "autograd.profiler_util", "autograd.profiler_legacy",
    "autograd.variable", "autograd.grad_mode", "autograd.anomaly_mode", "autograd.forward_ad",
    "autograd.functional"])
def test_autograd_modules_have_pytorchs_public_names(module):
    theirs = importlib.import_module(f"torch.{module}")
    ours = importlib.import_module(f"chainrule.{module}")
    missing = {n for n in theirs.__all__ if not hasattr(ours, n)}
    assert missing == NOT_PROVIDED.get(f"torch.{module}", set())
    for name in set(theirs.__all__) - missing:
        assert callable(getattr(ours, name)) == callable(getattr(theirs, name)), name


def test_autograd_top_level_extras():
    assert cr.autograd.SavedTensor is cr.autograd.graph.SavedTensor
    assert cr.autograd.is_multithreading_enabled() == torch.autograd.is_multithreading_enabled()
    with cr.autograd.set_multithreading_enabled(False):
        assert cr.autograd.is_multithreading_enabled() is False
    assert cr.autograd.ProfilerActivity is cr.profiler.ProfilerActivity
    for enum in ("DeviceType", "ProfilerState"):
        ours, theirs = getattr(cr.autograd, enum), getattr(torch.autograd, enum)
        assert {k: v.value for k, v in ours.__members__.items()} == {
            k: int(v) for k, v in theirs.__members__.items()}


def test_function_classes():
    def scenario(m):
        F = m.autograd.function
        out = [type(m.autograd.Function) is F.FunctionMeta, issubclass(F.InplaceFunction,
                                                                        m.autograd.Function)]

        class Triple(F.InplaceFunction):
            @staticmethod
            def forward(ctx, a):
                return a * 3

            @staticmethod
            def backward(ctx, g):
                return g * 3

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn = Triple(inplace=True)
            nested = F.NestedIOFunction()
        out.append([(w.category.__name__, str(w.message).split(" should")[1]) for w in caught])
        out.append(fn.inplace)
        x = m.tensor([1.0, 2.0], requires_grad=True)
        out.append(Triple.apply(x).tolist())
        with pytest.raises(RuntimeError) as info:
            fn(x)
        out.append(str(info.value))
        nested.save_for_backward([x, (x, None)], x)
        nested.mark_dirty(x, k=[x])
        out.append((len(nested.to_save), len(nested.dirty_tensors)))
        with pytest.raises(ValueError) as info:
            nested.mark_non_differentiable(3)
        out.append(str(info.value))
        with pytest.raises(NotImplementedError):
            nested.forward_extended(x)
        with pytest.raises(AttributeError):
            nested(x)
        variable = importlib.import_module(f"{m.__name__}.autograd.variable")
        out.append(isinstance(x, variable.Variable))
        out.append(type(m.autograd.Variable) is variable.VariableMeta)
        with pytest.raises(RuntimeError) as info:
            m.autograd.variable(x)  # the name is a function that says what replaced it
        out.append(str(info.value))
        return out

    assert scenario(cr) == scenario(torch)


# ---- gradcheck's deprecated Jacobian functions ---------------------------------------------------


def _jacobians(m):
    gc = importlib.import_module(f"{m.__name__}.autograd.gradcheck")  # the name is the function
    rng = np.random.default_rng(0)
    x = m.tensor(rng.standard_normal(3), requires_grad=True)
    y = m.tensor(rng.standard_normal(2), requires_grad=True)

    def fn(inputs):
        return (inputs[0][:2] * inputs[1]).exp()

    out = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out.append(gc.get_numerical_jacobian(fn, (x, y), eps=1e-6))
        out.append(gc.get_numerical_jacobian(fn, (x, y), target=(y,), eps=1e-6))
        out.append(gc.get_analytical_jacobian((x, y, m.ones(1)), fn((x, y))))
        with pytest.raises(ValueError) as info:
            gc.get_numerical_jacobian(fn, (x, y), grad_out=2.0)
        out.append(str(info.value))
    two = (lambda a, b: (a[:2] * b, a.sum(), a.argmax()))
    out.append(gc.get_numerical_jacobian_wrt_specific_input(two, 0, (x, y), two(x, y), 1e-6))
    out.append(sorted({(w.category.__name__, str(w.message)[:40]) for w in caught}))
    return out


def _plain(value):
    """Tensors as float64 arrays, containers as lists, for comparing the two libraries."""
    if hasattr(value, "detach"):
        return value.detach().numpy().astype(np.float64)
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


def test_deprecated_jacobians_as_pytorchs():
    ours, theirs = _plain(_jacobians(cr)), _plain(_jacobians(torch))

    def same(a, b):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)
        elif isinstance(a, list):
            assert len(a) == len(b)
            for i, j in zip(a, b):
                same(i, j)
        else:
            assert a == b

    same(ours, theirs)
    gradcheck = importlib.import_module("chainrule.autograd.gradcheck")
    (jacobian,) = gradcheck.get_numerical_jacobian_wrt_specific_input(
        lambda a: a * 2, 0, (cr.ones(2, requires_grad=True),), (cr.ones(2),), 1e-3)
    assert str(jacobian.dtype) == str(torch.float32)


# ---- the profiler's helpers ------------------------------------------------------------------


def test_profiler_helpers():
    def scenario(m):
        P = m.autograd.profiler
        out = []
        unique = P.EnforceUnique()
        unique.see("a", 1)
        with pytest.raises(RuntimeError) as info:
            unique.see("a", 1)
        out.append(str(info.value))
        tracker = P.KinetoStepTracker
        tracker.init_step_count("h5-a")
        start = tracker.current_step()
        out.append(tracker.increment_step("h5-a") - start)
        tracker.init_step_count("h5-b")
        out.append(tracker.increment_step("h5-b") - start)  # the same step, counted once
        out.append((tracker.erase_step_count("h5-a"), tracker.erase_step_count("h5-a")))
        tracker.erase_step_count("h5-b")
        with pytest.raises(AssertionError) as info:
            with P.emit_nvtx():
                pass
        out.append(str(info.value))
        with P.emit_nvtx(enabled=False), P.emit_itt():
            out.append(float(m.ones(2).sum()))
        U = m.autograd.profiler_util
        out.append(U.Interval(2, 7).elapsed_us())
        out.append(tuple(U.Kernel("k", "cpu", 3)))
        table = U.StringTable()
        out.append((table["name"], table["t"]))
        out.append(len(U.EventMetadata._fields))
        with m.autograd.profiler_legacy.profile(record_shapes=True) as prof:
            m.ones(2, 2).mm(m.ones(2, 2))
        out.append(any(e.name == "aten::mm" for e in prof.function_events))
        return out

    assert scenario(cr) == scenario(torch)


class _Start:
    def __init__(self, ns):
        self.ns = ns

    def start_ns(self):
        return self.ns


def test_mem_records_in_an_interval():
    records = [(_Start(30), "c"), (_Start(10), "a"), (_Start(20), "b"), (_Start(40), "d")]
    ours = cr.autograd.profiler_util.MemRecordsAcc(records)
    theirs = torch.autograd.profiler_util.MemRecordsAcc(records)
    for lo, hi in ((0, 100), (15, 30), (31, 39), (40, 40)):
        assert [r[1] for r in ours.in_interval(lo, hi)] == [
            r[1] for r in theirs.in_interval(lo, hi)]
