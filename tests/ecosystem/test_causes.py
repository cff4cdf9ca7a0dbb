"""The general causes of failures that libraries' test suites, PyTorch's docstring examples and
PyTorch's example scripts found on chainrule, each checked against torch: the same function runs
on both libraries (``lib``) and the results are compared."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

import chainrule

LIBS = (chainrule, torch)


def both(fn):
    """fn(lib) on chainrule and on torch, as NumPy arrays (nested in tuples and lists), other
    values as they are."""
    def arrays(value):
        if isinstance(value, (chainrule.Tensor, torch.Tensor)):
            return value.detach().resolve_conj().numpy() if hasattr(value, "resolve_conj") \
                else value.detach().numpy()
        if isinstance(value, (tuple, list)):
            return [arrays(v) for v in value]
        return value

    return arrays(fn(chainrule)), arrays(fn(torch))


def assert_same(ours, theirs, rtol=0.0, atol=0.0):
    if isinstance(theirs, list):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b, rtol, atol)
    elif isinstance(theirs, np.ndarray):
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol)
    else:
        assert ours == theirs


# ---- factories: size=, and the layouts of *_like and empty ---------------------------------------


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_factories_take_size_as_a_keyword(name):
    # einops' tests call torch.randn(size=[...])
    def make(lib):
        lib.manual_seed(3)
        return [getattr(lib, name)(size=(2, 3)), getattr(lib, name)(size=[4]),
                getattr(lib, name)(size=lib.Size([1, 2]), dtype=lib.float64)]

    ours, theirs = both(make)
    if name == "empty":
        ours, theirs = [a.shape for a in ours], [a.shape for a in theirs]
    assert_same(ours, theirs)
    for lib in LIBS:
        with pytest.raises(TypeError, match="multiple values for argument 'size'|invalid comb"):
            getattr(lib, name)(2, size=(2,))
        with pytest.raises(TypeError, match="argument 'size' must be tuple of ints, not int"):
            getattr(lib, name)(size=2)


LAYOUTS = {
    "transposed": lambda lib: lib.ones(2, 3).t(),
    "sliced": lambda lib: lib.ones(2, 3).t()[::2],
    "permuted": lambda lib: lib.ones(4, 6, 5).permute(2, 0, 1)[:, ::2, 1:],
    "expanded_row": lambda lib: lib.ones(1, 4).expand(3, 4),
    "expanded_column": lambda lib: lib.ones(3, 1).expand(3, 4),
    "size_one": lambda lib: lib.ones(2, 1, 3).transpose(0, 2),
    "column_slice": lambda lib: lib.ones(5, 4)[:, 1:3],
    "contiguous": lambda lib: lib.ones(3, 4),
}
LIKES = {
    "zeros_like": lambda lib, x, **kw: lib.zeros_like(x, **kw),
    "ones_like": lambda lib, x, **kw: lib.ones_like(x, **kw),
    "empty_like": lambda lib, x, **kw: lib.empty_like(x, **kw),
    "full_like": lambda lib, x, **kw: lib.full_like(x, 2.5, **kw),
    "rand_like": lambda lib, x, **kw: lib.rand_like(x, **kw),
    "randn_like": lambda lib, x, **kw: lib.randn_like(x, **kw),
    "randint_like": lambda lib, x, **kw: lib.randint_like(x, 7, **kw),
}


@pytest.mark.parametrize("like", LIKES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_like_keeps_the_layout_of_its_input_as_torch(like, layout):
    # torch-optimizer's optimizers call zeros_like(p, memory_format=torch.preserve_format)
    def make(lib):
        lib.manual_seed(0)
        x = LAYOUTS[layout](lib)
        made = [LIKES[like](lib, x), LIKES[like](lib, x, memory_format=lib.preserve_format),
                LIKES[like](lib, x, memory_format=lib.contiguous_format),
                LIKES[like](lib, x, layout=lib.strided)]
        return [(m.stride(), m.is_contiguous()) for m in made], [] if like == "empty_like" else [
            m.contiguous() for m in made]

    ours, theirs = both(make)
    assert ours[0] == theirs[0]
    assert_same(ours[1], theirs[1])  # seeded draws: the same values, drawn in memory order


@pytest.mark.parametrize("like", LIKES)
def test_like_and_empty_lay_out_channels_last(like):
    def make(lib):
        lib.manual_seed(1)
        x = lib.ones(2, 3, 4, 5)
        made = LIKES[like](lib, x, memory_format=lib.channels_last)
        made3 = LIKES[like](lib, lib.ones(2, 3, 2, 4, 5), memory_format=lib.channels_last_3d)
        return [made.stride(), made3.stride()], [] if like == "empty_like" else [
            made.contiguous()]

    ours, theirs = both(make)
    assert ours[0] == theirs[0]
    assert_same(ours[1], theirs[1])
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
            LIKES[like](lib, lib.ones(2, 3), memory_format=lib.channels_last)


def test_empty_takes_a_memory_format():
    def make(lib):
        formats = [lib.contiguous_format, lib.channels_last]
        return [lib.empty(2, 3, 4, 5, memory_format=f).stride() for f in formats] + [
            lib.empty((2, 3, 4, 5, 6), memory_format=lib.channels_last_3d).stride(),
            lib.empty((2, 3, 5, 7), memory_format=lib.channels_last).dim_order()]

    ours, theirs = both(make)
    assert ours == theirs
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
            lib.empty(2, 3, 4, memory_format=lib.channels_last)
        with pytest.raises(RuntimeError, match="unsupported memory format Preserve"):
            lib.empty(2, 3, memory_format=lib.preserve_format)


# ---- convolution results are contiguous --------------------------------------------------------


CONVOLUTIONS = {
    "conv1d": lambda lib, F: F.conv1d(lib.randn(2, 3, 10), lib.randn(4, 3, 3)),
    "conv2d": lambda lib, F: F.conv2d(lib.randn(2, 3, 8, 8), lib.randn(4, 3, 3, 3), padding=1),
    "conv2d_groups": lambda lib, F: F.conv2d(lib.randn(2, 3, 8, 8), lib.randn(6, 1, 3, 3),
                                             groups=3),
    "conv3d": lambda lib, F: F.conv3d(lib.randn(2, 3, 4, 6, 6), lib.randn(4, 3, 3, 3, 3)),
    "conv_transpose2d": lambda lib, F: F.conv_transpose2d(lib.randn(2, 3, 5, 5),
                                                          lib.randn(3, 4, 3, 3), stride=2),
    "fold": lambda lib, F: F.fold(lib.randn(2, 27, 36), (8, 8), 3),
}


@pytest.mark.parametrize("name", CONVOLUTIONS)
def test_convolutions_give_contiguous_results(name):
    # x.view(n, -1) after a convolution, and dropout's mask drawn in the result's memory order
    def make(lib):
        lib.manual_seed(0)
        y = CONVOLUTIONS[name](lib, lib.nn.functional)
        dropped = lib.nn.functional.dropout(y, 0.5)
        return [y.stride(), y.is_contiguous()], [y.view(-1), dropped == 0]

    ours, theirs = both(make)
    assert ours[0] == theirs[0]
    assert_same(ours[1][0], theirs[1][0], rtol=1e-4, atol=1e-4)
    assert_same(ours[1][1], theirs[1][1])


# ---- pow: PyTorch's kernel for the exponents it special-cases ------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow_by_2_3_minus_1_minus_2_is_torchs_to_the_bit(dtype):
    # products and quotients, exact in IEEE arithmetic: the optimizers' x ** 2 and training
    # trajectories that follow them step for step
    def make(lib):
        lib.manual_seed(0)
        x = lib.rand(1000, dtype=getattr(lib, dtype)) * 4 - 2
        return [x ** e for e in (2, 3, -1, -2, 2.0, 3.0)] + [lib.pow(x, 3), x.pow(-2)]

    ours, theirs = both(make)
    assert_same(ours, theirs)


def test_pow_by_square_roots_is_close():
    def make(lib):
        lib.manual_seed(0)
        x = lib.rand(1000, dtype=lib.float32) + 0.5
        return [x ** 0.5, x ** -0.5, x ** 1.5]

    ours, theirs = both(make)
    assert_same(ours, theirs, rtol=3e-7)


# ---- random draws of nn.functional: rrelu, alpha dropout, gumbel softmax ----------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rrelu_draws_torchs_slopes(dtype):
    # a slope per element <= 0 only, from the bounds as the dtype holds them
    def make(lib):
        lib.manual_seed(0)
        x = lib.randn(5, 7, dtype=getattr(lib, dtype))
        x[0, :3] = 0
        x.requires_grad_()
        F = lib.nn.functional
        y = F.rrelu(x, training=True)
        (grad,) = lib.autograd.grad(y.sum(), x)
        z = F.rrelu(x.detach().t(), 0.1, 0.3, training=True)
        module = lib.nn.RReLU(0.2, 0.4)(lib.randn(4, 4, dtype=getattr(lib, dtype)))
        return [y, grad, z, module, lib.rand(3, dtype=getattr(lib, dtype))]

    ours, theirs = both(make)
    assert_same(ours, theirs, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_alpha_dropout_draws_torchs_masks(dtype):
    def make(lib):
        lib.manual_seed(0)
        F = lib.nn.functional
        x = lib.randn(5, 7, dtype=getattr(lib, dtype))
        return [F.alpha_dropout(x, 0.3, training=True),
                F.alpha_dropout(x.t(), 0.3, training=True),
                F.feature_alpha_dropout(lib.randn(3, 4, 2, 2, dtype=getattr(lib, dtype)), 0.4,
                                        training=True),
                lib.nn.AlphaDropout(0.2)(x), lib.rand(3, dtype=getattr(lib, dtype))]

    ours, theirs = both(make)
    assert_same(ours, theirs, rtol=1e-6)


def test_gumbel_softmax_draws_torchs_noise():
    def make(lib):
        lib.manual_seed(0)
        F = lib.nn.functional
        logits = lib.randn(20, 32, requires_grad=True)
        soft = F.gumbel_softmax(logits, tau=1.0)
        hard = F.gumbel_softmax(logits.t(), tau=0.5, hard=True, dim=0)
        (grad,) = lib.autograd.grad((soft * lib.arange(32.0)).sum() + hard[:, 0].sum(), logits)
        return [soft, hard, grad]

    ours, theirs = both(make)
    assert_same(ours, theirs, rtol=1e-4, atol=1e-6)


def test_threshold_keeps_an_integer_input_integer():
    def make(lib):
        x = lib.arange(-3, 3)
        F = lib.nn.functional
        return [lib.nn.Threshold(0, 0.5)(x), F.threshold(x, 0.5, 7.9), F.threshold(x * 1.0, 0, 2)]

    ours, theirs = both(make)
    assert_same(ours, theirs)


# ---- linear algebra of complex matrices, lstsq's drivers ----------------------------------------


def _hermitian_positive(lib, dtype):
    lib.manual_seed(0)
    A = lib.randn(3, 2, 2, dtype=dtype)
    return A @ A.mH + lib.eye(2) * 0.5


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_cholesky_inverse_and_solve(upper, dtype):
    def make(lib):
        A = _hermitian_positive(lib, getattr(lib, dtype))
        L = lib.linalg.cholesky(A, upper=upper).requires_grad_()
        B = lib.randn(3, 2, 1, dtype=getattr(lib, dtype))
        inverse, solution = lib.cholesky_inverse(L, upper=upper), lib.cholesky_solve(B, L, upper)
        (grad,) = lib.autograd.grad(inverse.abs().sum() + solution.abs().sum(), L)
        return [inverse, solution, grad]

    ours, theirs = both(make)
    assert_same(ours, theirs, rtol=1e-10)


@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_pinv_of_complex_matrices(hermitian, dtype):
    def make(lib):
        lib.manual_seed(0)
        A = lib.randn(2, 4, 4 if hermitian else 3, dtype=getattr(lib, dtype))
        A = (A + A.mH if hermitian else A).requires_grad_()
        P = lib.linalg.pinv(A, hermitian=hermitian)
        w = lib.randn(P.shape, dtype=getattr(lib, dtype))
        (grad,) = lib.autograd.grad((P * w).sum().real if A.is_complex() else (P * w).sum(), A)
        tangent = lib.func.jvp(lib.linalg.pinv, (A.detach(),), (w.mT.contiguous(),))[1]
        return [P, grad, tangent]

    ours, theirs = both(make)
    assert_same(ours, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_householder_product_and_ormqr_of_complex_reflectors(dtype):
    def make(lib):
        lib.manual_seed(0)
        dt = getattr(lib, dtype)
        h = lib.randn(3, 4, 2, dtype=dt, requires_grad=True)
        tau = lib.randn(3, 2, dtype=dt, requires_grad=True)
        Q = lib.linalg.householder_product(h, tau)
        grads = lib.autograd.grad(Q.abs().sum(), (h, tau))
        a, t = lib.geqrf(lib.randn(4, 3, dtype=dt))
        C = lib.randn(4, 2, dtype=dt)
        products = [lib.ormqr(a, t, C if left else C.mT, left=left, transpose=transpose)
                    for left in (True, False) for transpose in (True, False)]
        return [Q, *grads, *products]

    ours, theirs = both(make)
    assert_same(ours, theirs, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
def test_lstsq_fills_what_each_driver_fills(driver):
    def make(lib):
        lib.manual_seed(0)
        cases = [(lib.randn(5, 3), lib.randn(5, 2)), (lib.randn(2, 3, 4), lib.randn(2, 3, 1)),
                 (lib.randn(5, 3, dtype=lib.complex128), lib.randn(5, 2, dtype=lib.complex128)),
                 (lib.randn(5, 3), lib.randn(5))]
        out = []
        for A, B in cases:
            r = lib.linalg.lstsq(A, B, driver=driver)
            out += [r.solution, r.residuals, r.rank, r.singular_values]
        return out

    ours, theirs = both(make)
    assert_same(ours, theirs, rtol=1e-4, atol=1e-5)
    for lib in LIBS:
        with pytest.raises(RuntimeError, match="parameter `driver` should be one of"):
            lib.linalg.lstsq(lib.randn(3, 2), lib.randn(3, 1), driver="gelsx")


# ---- torch.onnx: importable, export not provided -------------------------------------------------


def test_torch_onnx_imports_and_says_export_is_not_provided():
    code = ("import torch.onnx\nprint(torch.onnx.is_in_onnx_export())\n"
            "try:\n    torch.onnx.export(torch.nn.Linear(2, 2), (torch.ones(1, 2),))\n"
            "except torch.onnx.OnnxExporterError as e:\n    print('refused', 'not provided' in "
            "str(e))\n")
    done = subprocess.run([sys.executable, "-c", "import chainrule.as_torch, sys; "
                           "chainrule.as_torch.install(); exec(sys.argv[1])", code],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["False", "refused True"]
    assert issubclass(chainrule.onnx.OnnxExporterError, RuntimeError)


# ---- reflect, replicate and circular padding (slices joined; crops as PyTorch's) ---------------


PADS = [((2, 3, 5), (2, 1)), ((2, 3, 5), (0, 4)), ((1, 2, 4, 5), (1, 2, 3, 0)),
        ((1, 2, 3, 4, 5), (1, 1, 2, 2, 0, 1)), ((2, 3, 5), (-1, 2)), ((2, 3, 5), (2, -1)),
        ((2, 3, 5), (1, -3)), ((2, 3, 5), (-3, 1)), ((1, 1, 3, 4), (-1, 2, 1, -1))]


# reflect refuses a pad as large as the dim (tests/test_bad_input.py)
@pytest.mark.parametrize("mode,shape,pad", [
    (mode, shape, pad) for mode in ("reflect", "replicate", "circular") for shape, pad in PADS
    if mode != "reflect" or max(pad) < min(shape[-len(pad) // 2:])])
def test_pad_modes_with_crops(mode, shape, pad):
    def make(lib):
        lib.manual_seed(0)
        x = lib.randn(*shape, dtype=lib.float64, requires_grad=True)
        y = lib.nn.functional.pad(x, pad, mode=mode)
        (grad,) = lib.autograd.grad((y * lib.randn(y.shape, dtype=lib.float64)).sum(), x)
        return [y, grad]

    ours, theirs = both(make)
    assert_same(ours, theirs, rtol=1e-12)


# ---- indexing by a range; the alias in spawned processes ----------------------------------------


def test_a_range_indexes_as_a_list():
    # mnist_forward_forward: x[range(n), y]
    def make(lib):
        x = lib.arange(12).view(3, 4)
        picked = [x[range(2)], x[range(3), [0, 1, 2]], x[:, range(1, 3)], x[range(0)]]
        x[range(2)] = 0
        y = lib.ones(3, 4, requires_grad=True)
        (grad,) = lib.autograd.grad(y[range(3), range(3)].sum(), y)
        return [*picked, x, grad]

    ours, theirs = both(make)
    assert_same(ours, theirs)


SPAWNING = """
import multiprocessing
import torch


def child(queue, t):
    queue.put((torch.__name__, type(t).__module__, (t * 2).tolist()))


if __name__ == "__main__":
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=child, args=(queue, torch.arange(3)))
    process.start()
    print(*queue.get())
    process.join()
    print(process.exitcode)
"""


def test_spawned_processes_import_torch_as_chainrule(tmp_path):
    # mnist_hogwild: set_start_method('spawn'); the children imported the real torch
    script = tmp_path / "spawning.py"
    script.write_text(SPAWNING)
    done = subprocess.run([sys.executable, "-m", "chainrule.as_torch", str(script)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["chainrule torch [0, 2, 4]", "0"]
