"""torch.nn.modules' paths: each family module with PyTorch's __all__, each class defined where
PyTorch defines it (with PyTorch's bases in its MRO), the private bases and helpers libraries
import, nn.modules.utils, nn.common_types, nn._reduction and nn.attention."""

from __future__ import annotations

import importlib
import inspect
import typing
import warnings

import pytest
import torch

import chainrule
from chainrule import nn

FAMILIES = ["activation", "adaptive", "batchnorm", "channelshuffle", "container", "conv",
            "distance", "dropout", "flatten", "fold", "instancenorm", "lazy", "linear",
            "linear_cross_entropy_options", "loss", "module", "normalization", "padding",
            "pixelshuffle", "pooling", "rnn", "sparse", "transformer", "upsampling", "utils"]

# Classes PyTorch defines in these files that chainrule does not: typing helpers and
# internals of its fast paths.
NOT_PROVIDED = {"_AutoDefault"}


def _pair(family: str):
    return (importlib.import_module(f"chainrule.nn.modules.{family}"),
            importlib.import_module(f"torch.nn.modules.{family}"))


def test_nn_modules_exports_torchs_names() -> None:
    assert sorted(nn.modules.__all__) == sorted(torch.nn.modules.__all__)
    for name in torch.nn.modules.__all__:
        assert getattr(nn.modules, name) is getattr(nn, name)


@pytest.mark.parametrize("family", FAMILIES)
def test_family_all_like_torch(family: str) -> None:
    ours, theirs = _pair(family)
    assert sorted(ours.__all__) == sorted(theirs.__all__)


@pytest.mark.parametrize("family", FAMILIES)
def test_classes_live_at_torchs_paths(family: str) -> None:
    ours, theirs = _pair(family)
    classes = {name: cls for name, cls in vars(theirs).items()
               if isinstance(cls, type) and cls.__module__ == theirs.__name__
               and name not in NOT_PROVIDED}
    for name, cls in classes.items():
        mine = getattr(ours, name)
        assert mine.__module__ == f"chainrule.nn.modules.{family}", name
        assert mine.__qualname__ == cls.__qualname__
        # PyTorch's bases appear in chainrule's MRO, in the same order
        our_mro = iter(c.__name__ for c in mine.__mro__)
        assert all(base.__name__ in our_mro for base in cls.__mro__
                   if base.__name__ not in ("Generic", "Protocol")), name


def test_private_bases_libraries_subclass() -> None:
    m = nn.modules
    pairs = [(m.loss._WeightedLoss, m.loss._Loss), (m.conv._ConvTransposeNd, m.conv._ConvNd),
             (m.batchnorm._BatchNorm, m.batchnorm._NormBase),
             (m.instancenorm._InstanceNorm, m.batchnorm._NormBase),
             (m.batchnorm._LazyNormBase, m.lazy.LazyModuleMixin)]
    for sub, base in pairs:
        assert issubclass(sub, base)
    assert isinstance(nn.Conv2d(1, 1, 1), m.conv._ConvNd)
    assert isinstance(nn.ConvTranspose1d(1, 1, 1), m.conv._ConvTransposeNd)
    assert isinstance(nn.BatchNorm2d(1), m.batchnorm._BatchNorm)
    # as in PyTorch, an instance norm is not a batch norm
    assert not isinstance(nn.InstanceNorm2d(1), m.batchnorm._BatchNorm)
    assert isinstance(nn.InstanceNorm2d(1), m.batchnorm._NormBase)
    assert isinstance(nn.AvgPool1d(2), m.pooling._AvgPoolNd)
    assert isinstance(nn.AdaptiveAvgPool2d(2), m.pooling._AdaptiveAvgPoolNd)
    assert isinstance(nn.AdaptiveMaxPool3d(2), m.pooling._AdaptiveMaxPoolNd)
    assert isinstance(nn.MaxPool2d(2), m.pooling._MaxPoolNd)
    assert isinstance(nn.Dropout2d(), m.dropout._DropoutNd)
    assert isinstance(nn.LSTM(1, 1), m.rnn.RNNBase)
    assert isinstance(nn.GRUCell(1, 1), m.rnn.RNNCellBase)
    assert isinstance(nn.LazyConv2d(1, 1), m.conv._LazyConvXdMixin)
    assert isinstance(nn.ZeroPad2d(1), nn.ConstantPad2d)


def test_conv_subclass_calls_conv_forward() -> None:
    """A weight-standardised convolution, written as libraries write it."""

    def make(lib):
        class WSConv2d(lib.nn.Conv2d):
            def forward(self, x):
                w = self.weight
                w = (w - w.mean(dim=(1, 2, 3), keepdim=True)) / (
                    w.std(dim=(1, 2, 3), keepdim=True) + 1e-5)
                return self._conv_forward(x, w, self.bias)

        lib.manual_seed(0)
        conv = WSConv2d(2, 3, 3, padding=1, padding_mode="reflect")
        return conv

    ours, theirs = make(chainrule), make(torch)
    ours.load_state_dict(theirs.state_dict())
    x = torch.randn(1, 2, 5, 5)
    got = ours(chainrule.tensor(x.numpy())).detach().numpy()
    want = theirs(x).detach().numpy()
    assert got.shape == want.shape
    assert abs(got - want).max() < 1e-4


def test_conv_transpose_output_padding_like_torch() -> None:
    ours, theirs = nn.ConvTranspose2d(2, 2, 3, stride=2), torch.nn.ConvTranspose2d(2, 2, 3,
                                                                                    stride=2)
    x = torch.randn(1, 2, 4, 4)
    args = (x, [9, 10], [2, 2], [0, 0], [3, 3], 2, [1, 1])
    assert ours._output_padding(chainrule.tensor(x.numpy()), *args[1:]) == \
        theirs._output_padding(*args)
    with pytest.raises(ValueError) as their_error:
        theirs._output_padding(x, [20, 20], [2, 2], [0, 0], [3, 3], 2, [1, 1])
    with pytest.raises(ValueError) as our_error:
        ours._output_padding(chainrule.tensor(x.numpy()), [20, 20], [2, 2], [0, 0], [3, 3], 2,
                             [1, 1])
    assert str(our_error.value) == str(their_error.value)


def test_modules_utils_like_torch() -> None:
    ours, theirs = nn.modules.utils, torch.nn.modules.utils
    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for value in (3, (1, 2), [4, 5, 6]):
            assert getattr(ours, name)(value) == getattr(theirs, name)(value)
        assert getattr(ours, name).__name__ == getattr(theirs, name).__name__
    assert ours._ntuple(5)(2) == theirs._ntuple(5)(2)
    assert ours._reverse_repeat_tuple((1, 2, 3), 2) == theirs._reverse_repeat_tuple((1, 2, 3), 2)
    assert ours._list_with_default([None, 3], [1, 2, 7, 8]) == \
        theirs._list_with_default([None, 3], [1, 2, 7, 8])
    assert ours._list_with_default(4, [1, 2]) == theirs._list_with_default(4, [1, 2])
    with pytest.raises(ValueError) as e:
        ours._list_with_default([1, 2], [1])
    assert str(e.value) == "Input dimension should be at least 3"


def test_consume_prefix_like_torch() -> None:
    def run(lib):
        sd = lib.nn.Sequential(lib.nn.Linear(1, 1)).state_dict(prefix="module.")
        sd._metadata["module"] = {"version": 1}
        lib.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")
        return list(sd), list(sd._metadata)

    assert run(chainrule) == run(torch)


def test_addindent_like_torch() -> None:
    for text in ("one", "a\nb\nc", "x\n", "a\n\n  b"):
        assert nn.modules.module._addindent(text, 2) == torch.nn.modules.module._addindent(text,
                                                                                          2)


def test_common_types_like_torch() -> None:
    ours, theirs = nn.common_types, torch.nn.common_types
    names = [n for n in dir(theirs) if n.startswith("_") and n.endswith("_t")]
    assert names and sorted(names) == sorted(n for n in dir(ours) if n.startswith("_")
                                             and n.endswith("_t"))
    def spelled(alias) -> list:
        return [a.__name__ if isinstance(a, type) else str(a).replace("chainrule.tensor.",
                                                                       "torch.")
                for a in typing.get_args(alias)]

    for name in names:
        assert spelled(getattr(ours, name)) == spelled(getattr(theirs, name)), name


def test_reduction_enums_like_torch() -> None:
    ours, theirs = nn._reduction, torch.nn._reduction
    for reduction in ("none", "mean", "sum"):
        assert ours.get_enum(reduction) == theirs.get_enum(reduction)
    for flags in [(None, None), (True, False), (False, True), (False, None)]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert ours.legacy_get_string(*flags) == theirs.legacy_get_string(*flags)
            assert ours.legacy_get_enum(*flags, emit_warning=False) == \
                theirs.legacy_get_enum(*flags, emit_warning=False)
        assert len({str(w.message) for w in caught}) == 1
    with pytest.raises(ValueError) as e:
        ours.get_enum("max")
    assert str(e.value) == "max is not a valid value for reduction"


def test_transformer_helpers_like_torch() -> None:
    ours, theirs = nn.modules.transformer, torch.nn.modules.transformer
    assert ours._generate_square_subsequent_mask(3).tolist() == \
        theirs._generate_square_subsequent_mask(3).tolist()
    mask = ours._generate_square_subsequent_mask(4)
    assert ours._detect_is_causal_mask(mask) is True
    assert ours._detect_is_causal_mask(chainrule.zeros(4, 4)) is False
    assert ours._detect_is_causal_mask(None, True) is True
    assert ours._get_seq_len(chainrule.zeros(5, 2, 3), batch_first=True) == 2
    assert ours._get_seq_len(chainrule.zeros(5, 3), batch_first=True) == 5
    assert ours._get_activation_fn("gelu") is nn.functional.gelu
    with pytest.raises(RuntimeError) as their_error:
        theirs._get_activation_fn("tanh")
    with pytest.raises(RuntimeError) as our_error:
        ours._get_activation_fn("tanh")
    assert str(our_error.value) == str(their_error.value)
    clones = ours._get_clones(nn.Linear(1, 1), 3)
    assert isinstance(clones, nn.ModuleList) and len({id(c.weight) for c in clones}) == 3


def test_apply_permutation_like_torch() -> None:
    x, perm = torch.arange(6.0).reshape(2, 3), torch.tensor([2, 0, 1])
    with pytest.warns(FutureWarning) as caught:
        got = nn.modules.rnn.apply_permutation(chainrule.tensor(x.numpy()),
                                               chainrule.tensor(perm.numpy()))
    with pytest.warns(FutureWarning) as expected:
        want = torch.nn.modules.rnn.apply_permutation(x, perm)
    assert got.tolist() == want.tolist()
    assert str(caught[0].message) == str(expected[0].message)


def test_sdpa_kernel_like_torch() -> None:
    def run(lib):
        from importlib import import_module

        attention = import_module(f"{lib.__name__}.nn.attention")
        F = lib.nn.functional
        q = lib.ones(1, 2, 3, 4)
        out = [repr(attention.SDPBackend.MATH), str(attention.SDPBackend.FLASH_ATTENTION),
               int(attention.SDPBackend.CUDNN_ATTENTION), attention.WARN_FOR_UNFUSED_KERNELS]
        for backends in (attention.SDPBackend.MATH, attention.SDPBackend.FLASH_ATTENTION,
                         attention.SDPBackend.EFFICIENT_ATTENTION,
                         [attention.SDPBackend.CUDNN_ATTENTION, attention.SDPBackend.MATH],
                         []):
            with attention.sdpa_kernel(backends) as value:
                out.append(value)
                try:
                    out.append(tuple(F.scaled_dot_product_attention(q, q, q).shape))
                except RuntimeError as e:
                    out.append(str(e))
        out.append(tuple(F.scaled_dot_product_attention(q, q, q).shape))  # restored
        with pytest.raises(AssertionError) as e:
            with attention.sdpa_kernel("math"):
                pass
        out.append(str(e.value))
        return out

    assert run(chainrule) == run(torch)


def test_causal_bias_like_torch() -> None:
    from torch.nn.attention import bias as theirs

    from chainrule.nn.attention import bias as ours

    q, k = torch.randn(1, 2, 3, 4), torch.randn(1, 2, 5, 4)
    for make in ("causal_upper_left", "causal_lower_right"):
        got_bias, want_bias = getattr(ours, make)(3, 5), getattr(theirs, make)(3, 5)
        assert repr(got_bias) == repr(want_bias)
        assert got_bias._materialize().tolist() == want_bias._materialize().tolist()
        got = chainrule.nn.functional.scaled_dot_product_attention(
            chainrule.tensor(q.numpy()), chainrule.tensor(k.numpy()),
            chainrule.tensor(k.numpy()), attn_mask=got_bias)
        want = torch.nn.functional.scaled_dot_product_attention(q, k, k, attn_mask=want_bias)
        assert abs(got.numpy() - want.numpy()).max() < 1e-5
    assert [v.name for v in ours.CausalVariant] == [v.name for v in theirs.CausalVariant]
    with pytest.warns(UserWarning, match="Lower right causal bias will produce NaNs"):
        ours.causal_lower_right(5, 3)
    with pytest.raises(AssertionError, match="only supports 2D tensors"):
        ours.causal_upper_left(1, 2, 3)


def test_flash_attention_registry_like_torch() -> None:
    from chainrule.nn import attention

    calls = []

    class Handle:
        def remove(self) -> None:
            calls.append("removed")

    attention.register_flash_attention_impl("Mine", register_fn=lambda: Handle())
    try:
        assert "Mine" in attention.list_flash_attention_impls()
        assert attention.current_flash_attention_impl() is None
        attention.activate_flash_attention_impl("Mine")
        assert attention.current_flash_attention_impl() == "Mine"
        attention.restore_flash_attention_impl()
        assert calls == ["removed"] and attention.current_flash_attention_impl() is None
        with pytest.raises(ValueError, match="Unknown flash attention impl 'x'"):
            attention.activate_flash_attention_impl("x")
    finally:
        attention._impls.pop("Mine")


def test_parallel_paths_answer_as_a_cpu_build() -> None:
    def run(lib):
        import importlib

        parallel = lib.nn.parallel
        comm = importlib.import_module(f"{lib.__name__}.nn.parallel.comm")
        scatter_gather = importlib.import_module(f"{lib.__name__}.nn.parallel.scatter_gather")
        apply = importlib.import_module(f"{lib.__name__}.nn.parallel.parallel_apply")
        x, lin = lib.ones(4, 2), lib.nn.Linear(2, 2)
        calls = [
            lambda: parallel.replicate(lin, [0]), lambda: parallel.replicate(lin, ["cpu"]),
            lambda: parallel.replicate(lin, []),
            lambda: [type(r).__name__ for r in parallel.replicate(
                lib.nn.Sequential(lib.nn.ReLU()), [0, 1])],
            lambda: parallel.scatter(x, [0]), lambda: parallel.scatter([1, 2], [0, 1]),
            lambda: parallel.scatter({"a": 1}, [0, 1]),
            lambda: scatter_gather.scatter_kwargs((1,), {"a": 2}, [0, 1]),
            lambda: scatter_gather.scatter_kwargs((1,), None, []),
            lambda: parallel.gather([x, x], 0), lambda: parallel.gather([None, None], 0),
            lambda: parallel.parallel_apply([lin, lin], [(x,), (x,)]),
            lambda: parallel.parallel_apply([lin], [(x,), (x,)]),
            lambda: parallel.parallel_apply([lin], [(x,)], devices=["cpu"]),
            lambda: comm.broadcast(x, [0]), lambda: comm.broadcast(x),
            lambda: comm.reduce_add([x, x]), lambda: comm.scatter(x, [0]),
            lambda: comm.gather([x, x], destination=0),
            lambda: comm.broadcast_coalesced([x], [0]),
            lambda: apply.get_a_var([1, {"k": x}]) is not None,
        ]
        out = []
        for call in calls:
            try:
                out.append(("ok", call()))
            except Exception as e:
                out.append((type(e).__name__, str(e)))
        return out

    assert run(chainrule) == run(torch)
    assert set(nn.parallel.__all__) == set(torch.nn.parallel.__all__)
    with pytest.warns(FutureWarning, match="DistributedDataParallelCPU` is deprecated"):
        with pytest.raises(Exception):  # noqa: B017  (no process group, as in PyTorch)
            nn.parallel.DistributedDataParallelCPU(nn.Linear(1, 1))


def _signature(fn) -> list:
    return [(p.name, p.kind, p.default if isinstance(p.default, (int, float, str, bool, tuple,
                                                                  type(None))) else "<object>")
            for p in inspect.signature(fn).parameters.values()]


# PyTorch declares the recurrent layers' __init__ as (*args, **kwargs); chainrule spells out the
# parameters (the same names, order and defaults as PyTorch's documentation).
SPELLED_OUT = {("RNN", "__init__"), ("LSTM", "__init__"), ("GRU", "__init__")}


@pytest.mark.parametrize("name", sorted(torch.nn.modules.__all__))
def test_module_signatures_like_torch(name: str) -> None:
    theirs, ours = getattr(torch.nn, name), getattr(nn, name)
    for method in ("__init__", "forward", "extra_repr", "reset_parameters"):
        if not hasattr(theirs, method) or (name, method) in SPELLED_OUT:
            continue
        assert _signature(getattr(ours, method)) == _signature(getattr(theirs, method)), method


def test_module_methods_like_torch() -> None:
    for name in dir(torch.nn.Module):
        if name.startswith("__") or not callable(getattr(torch.nn.Module, name)):
            continue
        ours = getattr(nn.Module, name)
        if inspect.isfunction(ours):
            assert _signature(ours) == _signature(getattr(torch.nn.Module, name)), name


def test_nn_backends_thnn() -> None:
    from torch.nn.backends import thnn as theirs

    from chainrule.nn.backends import thnn as ours

    assert ours._get_thnn_function_backend() is theirs._get_thnn_function_backend()
