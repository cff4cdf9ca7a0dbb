"""torch.backends' CPU-library submodules (mkl, mkldnn, openmp, nnpack, xnnpack, kleidiai,
opt_einsum, quantized, mha, miopen, cusparselt): names, flags and context managers as torch's;
"available" answers what chainrule uses (none of these libraries)."""

from __future__ import annotations

import importlib
import inspect

import pytest
import torch

import chainrule as cr

SUBMODULES = ["mkl", "mkldnn", "openmp", "nnpack", "xnnpack", "kleidiai", "opt_einsum",
              "quantized", "mha", "miopen", "cusparselt"]


def _public_functions(module) -> dict:
    out = {}
    source = getattr(module, "m", module)  # PyTorch replaces some modules by a wrapper
    for name in dir(source):
        if name.startswith("_"):
            continue
        value = getattr(source, name)
        if inspect.isfunction(value) and getattr(value, "__module__", "").startswith(
                ("torch.backends", "chainrule.backends")):
            out[name] = [p for p in inspect.signature(value).parameters]
    return out


@pytest.mark.parametrize("name", SUBMODULES)
def test_functions_and_parameters_like_torch(name):
    theirs = importlib.import_module("torch.backends." + name)
    ours = importlib.import_module("chainrule.backends." + name)
    assert _public_functions(ours) == _public_functions(theirs)
    assert getattr(ours, "__all__", None) == getattr(theirs, "__all__", None)


def test_imported_by_backends():
    for name in SUBMODULES:
        if name != "xnnpack":  # PyTorch does not import it with torch.backends either
            assert hasattr(cr.backends, name), name


def test_availability_is_chainrules_own():
    import chainrule.backends as b

    assert b.mkl.is_available() is cr.has_mkl is False  # as chainrule's own build flags say
    assert b.openmp.is_available() is cr.has_openmp is False
    assert b.mkldnn.is_available() is False
    assert b.nnpack.is_available() is False and b.kleidiai.is_available() is False
    assert b.mkldnn.is_acl_available() is False
    assert b.cusparselt.is_available() == torch.backends.cusparselt.is_available()
    assert b.cusparselt.version() == torch.backends.cusparselt.version()
    assert b.cusparselt.get_max_alg_id() == torch.backends.cusparselt.get_max_alg_id()


def test_verbose_scopes():
    import chainrule.backends as b

    for mod in (b.mkl, b.mkldnn):
        assert mod.VERBOSE_OFF == 0 and mod.VERBOSE_ON == 1
        with mod.verbose(mod.VERBOSE_OFF):
            pass
        with pytest.raises(AssertionError, match="verbose mode"), mod.verbose(mod.VERBOSE_ON):
            pass
    assert b.mkldnn.VERBOSE_ON_CREATION == torch.backends.mkldnn.VERBOSE_ON_CREATION


def _flag_story(backends):
    out = []
    mk = backends.mkldnn
    out.append((mk.enabled, mk.deterministic, mk.allow_tf32 is None or mk.allow_tf32,
                mk.fp32_precision, mk.conv.fp32_precision))
    with mk.flags(enabled=False, deterministic=True):
        out.append((mk.enabled, mk.deterministic))
    out.append((mk.enabled, mk.deterministic))
    mk.matmul.fp32_precision = "tf32"
    out.append(mk.matmul.fp32_precision)
    mk.matmul.fp32_precision = "none"
    with pytest.raises(AttributeError) as e:
        mk.conv.unknown = 1
    out.append(str(e.value))
    mha = backends.mha
    out.append(mha.get_fastpath_enabled())
    mha.set_fastpath_enabled(False)
    out.append(mha.get_fastpath_enabled())
    mha.set_fastpath_enabled(True)
    mi = backends.miopen
    out.append(mi.immediate)
    with mi.flags(immediate=True):
        out.append(mi.immediate)
    out.append(mi.immediate)
    nn = backends.nnpack
    with nn.flags(enabled=False):
        out.append("inside nnpack flags")
    out.append(nn.set_flags(True) is not None)
    return out


def test_flags_like_torch():
    import chainrule.backends as b

    with pytest.warns(UserWarning) as theirs:
        torch_story = _flag_story(torch.backends)
    with pytest.warns(UserWarning) as ours:
        our_story = _flag_story(b)
    assert our_story == torch_story
    assert [str(w.message) for w in ours] == \
        [str(w.message).split(" (Triggered internally")[0] for w in theirs]


def test_opt_einsum_without_the_package():
    import chainrule.backends.opt_einsum as ours

    theirs = torch.backends.opt_einsum
    assert ours.is_available() == theirs.is_available()
    assert ours.get_opt_einsum() is None and not ours.is_available()  # not installed here
    assert (ours.enabled, ours.strategy) == (theirs.enabled, theirs.strategy)
    messages = []
    for lib in (ours, theirs):
        for args in ((True, None), (None, "greedy")):
            with pytest.raises(ValueError) as e:
                lib.set_flags(*args)
            messages.append(str(e.value))
        with pytest.raises(ValueError) as e, lib.flags(enabled=True):
            pass
        messages.append(str(e.value))
    assert messages[:3] == messages[3:]
    with ours.flags():
        assert ours.enabled is False


def test_quantized_engine():
    import chainrule.backends.quantized as ours

    assert ours.engine == "none" and ours.supported_engines == ["none"]
    with pytest.raises(RuntimeError) as t_err:
        torch.backends.quantized.engine = "bogus"
    with pytest.raises(RuntimeError) as o_err:
        ours.engine = "bogus"
    assert str(o_err.value) == str(t_err.value)
    with pytest.raises(RuntimeError, match="quantized engine FBGEMM is not supported"):
        ours.engine = "fbgemm"
    ours.engine = "none"
    for lib in (ours, torch.backends.quantized):
        with pytest.raises(RuntimeError, match="Assignment not supported"):
            lib.supported_engines = ["x86"]


def test_xnnpack_enabled_is_read_only():
    import torch.backends.xnnpack as theirs

    import chainrule.backends.xnnpack as ours

    assert ours.enabled is False
    for lib in (ours, theirs):
        with pytest.raises(RuntimeError, match="Assignment not supported"):
            lib.enabled = True
