"""torch.library.custom_op: the same user functions defined on torch and on chainrule agree in
values, gradients (first and second order), transforms, the meta device, compile and errors."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import torch as ref

import chainrule as torch

_count = itertools.count()


def _define(lib, name: str, numpy_body: bool = True, autograd: bool = True,
            fake: bool = False):
    """The op ``name`` on ``lib`` (torch or chainrule): sin(k x) with its derivative."""

    if numpy_body:
        def kernel(x: lib.Tensor, k: float = 1.0) -> lib.Tensor:
            return lib.from_numpy(np.sin(k * x.numpy(force=True)))
    else:
        def kernel(x: lib.Tensor, k: float = 1.0) -> lib.Tensor:
            return (x * k).sin()
    kernel.__annotations__ = {"x": lib.Tensor, "k": float, "return": lib.Tensor}
    op = lib.library.custom_op(name, mutates_args=())(kernel)

    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.save_for_backward(x)
        ctx.k = k

    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ctx.k * (ctx.k * x).cos(), None

    if autograd:
        op.register_autograd(backward, setup_context=setup_context)
    if fake:
        op.register_fake(lambda x, k=1.0: lib.empty_like(x))
    return op, name


def _pair(**kwargs):
    name = f"crtest::sin_{next(_count)}"
    return _define(ref, name, **kwargs), _define(torch, name, **kwargs)


def _x(shape=(5,)):
    return np.random.default_rng(0).standard_normal(shape)


def _close(a, b) -> None:
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("numpy_body", [True, False])
def test_values_gradients_and_second_order(numpy_body):
    (op_t, _), (op_c, _) = _pair(numpy_body=numpy_body)
    xt = ref.tensor(_x(), requires_grad=True)
    xc = torch.tensor(_x(), requires_grad=True)
    yt, yc = op_t(xt, 2.0), op_c(xc, 2.0)
    _close(yt, yc)
    assert type(yc.grad_fn).__name__ == type(yt.grad_fn).__name__
    gt, = ref.autograd.grad(yt.sum(), xt, create_graph=True)
    gc, = torch.autograd.grad(yc.sum(), xc, create_graph=True)
    _close(gt, gc)
    ggt, = ref.autograd.grad(gt.sum(), xt)
    ggc, = torch.autograd.grad(gc.sum(), xc)
    _close(ggt, ggc)


def test_torch_ops_namespace_and_schema():
    (op_t, name), (op_c, name_c) = _pair()
    ns, short = name_c.split("::")
    packet = getattr(torch.ops.crtest, short)
    assert packet is getattr(torch.ops.crtest, short)
    assert packet.default._schema == f"{name_c}(Tensor x, float k=1.0) -> Tensor"
    assert str(packet.default) == f"{ns}.{short}.default" and packet.default.name() == name_c
    assert repr(op_c) == f"<CustomOpDef({name_c})>"
    x = _x()
    _close(getattr(ref.ops.crtest, name.split("::")[1]).default(ref.tensor(x)),
           packet.default(torch.tensor(x)))
    with pytest.raises(AttributeError, match="object has no attribute 'nothere'"):
        _ = torch.ops.crtest.nothere


def test_infer_schema_matches_torch():
    def f(x, y, z, n, s="a", b=True, *, w=2.0):
        pass

    for lib in (ref, torch):
        f.__annotations__ = {"x": lib.Tensor, "y": lib.Tensor | None, "z": list[lib.Tensor],
                             "n": int, "s": str, "b": bool, "w": float,
                             "return": tuple[lib.Tensor, lib.Tensor]}
        text = lib.library.infer_schema(f, mutates_args=())
        if lib is ref:
            expected = text
    assert text == expected
    for lib in (ref, torch):
        def g(x, y):
            pass
        g.__annotations__ = {"x": lib.Tensor, "y": lib.Tensor, "return": None}
        assert lib.library.infer_schema(g, mutates_args=("x",)) == "(Tensor(a0!) x, Tensor y) -> ()"


@pytest.mark.parametrize("case", ["no_annotation", "bad_name", "unknown_mutated"])
def test_definition_errors_match_torch(case):
    messages = []
    for lib in (ref, torch):
        def h(x):
            return x
        if case == "unknown_mutated":
            h.__annotations__ = {"x": lib.Tensor, "return": lib.Tensor}
        name = "nonamespace" if case == "bad_name" else "crtest::bad"
        with pytest.raises(ValueError) as info:
            lib.library.custom_op(name, mutates_args=("q",) if case == "unknown_mutated"
                                  else ())(h)
        messages.append(str(info.value))
    if case != "bad_name":  # PyTorch's is an unpacking error; chainrule says what it expects
        assert messages[0] == messages[1].replace("chainrule", "torch")


def test_backward_without_autograd_raises_torchs_error():
    (op_t, _), (op_c, _) = _pair(autograd=False)
    errors = []
    for lib, op in ((ref, op_t), (torch, op_c)):
        x = lib.tensor(_x(), requires_grad=True)
        y = op(x)
        assert y.requires_grad
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        errors.append(str(info.value).replace("crtest.sin_", "OP"))
    assert errors[0].split("OP")[0] == errors[1].split("OP")[0]
    assert errors[0].split("default")[1] == errors[1].split("default")[1]


def test_forward_mode_gives_no_tangent_as_torch():
    (op_t, _), (op_c, _) = _pair()
    x = _x()
    pt, tt = ref.func.jvp(op_t, (ref.tensor(x),), (ref.ones(5, dtype=ref.float64),))
    pc, tc = torch.func.jvp(op_c, (torch.tensor(x),), (torch.ones(5, dtype=torch.float64),))
    _close(pt, pc)
    _close(tt, tc)  # zeros: PyTorch's custom ops have no forward-mode formula
    with torch.autograd.forward_ad.dual_level():
        dual = torch.autograd.forward_ad.make_dual(torch.tensor(x), torch.ones(5,
                                                                              dtype=torch.float64))
        assert torch.autograd.forward_ad.unpack_dual(op_c(dual)).tangent is None


def test_vmap_runs_per_example():
    (op_t, _), (op_c, _) = _pair()
    x = _x((3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's fallback warning (C++'s on torch)
        _close(ref.func.vmap(op_t)(ref.tensor(x)), torch.func.vmap(op_c)(torch.tensor(x)))


def test_func_grad_works_where_torch_refuses():
    """PyTorch 2.13 refuses torch.func.grad over a custom op (its generated Function has no
    setup_context for functorch); chainrule differentiates it (docs/differences.md)."""
    (op_t, _), (op_c, _) = _pair()
    x = _x()
    with pytest.raises(RuntimeError, match="must override the setup_context"):
        ref.func.grad(lambda x: op_t(x).sum())(ref.tensor(x))
    xt = ref.tensor(x, requires_grad=True)
    expected, = ref.autograd.grad(op_t(xt).sum(), xt)
    _close(expected, torch.func.grad(lambda x: op_c(x).sum())(torch.tensor(x)))


def test_meta_device_uses_register_fake():
    (op_t, _), (op_c, _) = _pair()
    messages = []
    for lib, op in ((ref, op_t), (torch, op_c)):
        with pytest.raises(RuntimeError) as info:
            op(lib.empty(3, device="meta"))
        messages.append(str(info.value).split("(")[0])
        op.register_fake(lambda x, k=1.0, lib=lib: lib.empty_like(x))
        out = op(lib.empty(2, 3, device="meta"))
        assert out.device.type == "meta" and tuple(out.shape) == (2, 3)
    assert messages[0] == messages[1]


def test_register_fake_function_and_opcheck():
    _, (op_c, name) = _pair()
    torch.library.register_fake(name)(lambda x, k=1.0: torch.empty_like(x))
    assert op_c(torch.empty(4, device="meta")).shape == (4,)
    result = torch.library.opcheck(op_c, (torch.tensor(_x(), requires_grad=True),))
    assert set(result.values()) == {"SUCCESS"}
    torch.library.register_fake(name)(lambda x, k=1.0: torch.empty(1))
    with pytest.raises(RuntimeError, match="fake implementation"):
        torch.library.opcheck(op_c, (torch.tensor(_x()),))


def test_compile_captures_the_op_as_one_kernel_and_replays():
    _, (op_c, _) = _pair()

    def f(x):
        return op_c(x * 2.0, 0.5) + 1.0

    compiled = torch.compile(f)
    for _ in range(3):
        x = torch.tensor(_x())
        assert torch.equal(compiled(x), f(x))
    assert len(compiled._programs) == 1 and compiled._eager_reason is None


def test_a_custom_op_in_another_thread_leaves_a_capture_alone():
    """A custom op hides compile's capture from its own kernel's ops, and only its own thread's
    capture: one running in another thread while a capture records must not end it."""
    import threading

    from chainrule._modes import stack

    name = f"crtest::waits_{next(_count)}"
    b_inside, a_inside, b_done = threading.Event(), threading.Event(), threading.Event()

    def waits(x: torch.Tensor) -> torch.Tensor:
        b_inside.set()
        assert a_inside.wait(60)
        return x * 2.0
    waits.__annotations__ = {"x": torch.Tensor, "return": torch.Tensor}
    op = torch.library.custom_op(name, mutates_args=())(waits)
    seen = []

    def f(x):
        y = x + 1.0
        a_inside.set()  # (Python in the compiled function: runs at each capture)
        assert b_done.wait(60)
        seen.append(stack.capture is not None)
        return y * 3.0

    compiled = torch.compile(f)
    other = threading.Thread(target=lambda: (op(torch.ones(2)), b_done.set()))
    other.start()
    assert b_inside.wait(60)
    out = compiled(torch.ones(2))
    other.join(60)
    assert out.tolist() == [6.0, 6.0]
    assert seen == [True]  # the capture still recording after the other thread's op ended


def test_mutating_op_writes_its_argument():
    name = f"crtest::add_{next(_count)}"
    for lib in (ref, torch):
        def add_(x, y):
            x.add_(y)
        add_.__annotations__ = {"x": lib.Tensor, "y": lib.Tensor, "return": None}
        op = lib.library.custom_op(name, mutates_args=("x",))(add_)
        t = lib.zeros(3)
        assert op(t, lib.ones(3)) is None
        assert t.tolist() == [1.0, 1.0, 1.0]


def test_two_outputs_and_keyword_defaults():
    outs, name = [], f"crtest::two_{next(_count)}"
    for lib in (ref, torch):
        def two(x, y, alpha=2.0):
            return x * y, x + alpha * y
        two.__annotations__ = {"x": lib.Tensor, "y": lib.Tensor, "alpha": float,
                               "return": tuple[lib.Tensor, lib.Tensor]}
        op = lib.library.custom_op(name, mutates_args=())(two)
        outs.append([t.tolist() for t in op(lib.ones(2), lib.ones(2) * 3, alpha=4.0)])
    assert outs[0] == outs[1]


def test_profiler_records_the_op_under_its_name():
    names, name = [], "crtest::prof_double"
    for lib in (ref, torch):

        def double(x):
            return x * 2
        double.__annotations__ = {"x": lib.Tensor, "return": lib.Tensor}
        op = lib.library.custom_op(name, mutates_args=())(double)
        with lib.profiler.profile() as prof:
            op(lib.ones(3))
        names.append({e.key for e in prof.key_averages()})
    assert "crtest::prof_double" in names[0] & names[1]
