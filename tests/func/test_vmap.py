"""vmap against torch.func.vmap: in_dims, out_dims, pytrees, kwargs, nesting, chunks, randomness,
in-place ops and outputs that do not depend on the batch."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import chainrule

from .conftest import randn

Pair = namedtuple("Pair", ["a", "b"])


def mlp(x, w, b):
    return (x @ w + b).tanh()


@pytest.mark.parametrize("in_dims", [0, 1, -1, -2])
def test_in_dims_int(same, in_dims):
    same(lambda lib, x: lib.func.vmap(lambda a: a.sin() * a.sum(), in_dims=in_dims)(x),
         *randn(0, (3, 4)))


@pytest.mark.parametrize("in_dims", [(0, None, None), (1, None, None), (0, 1, 0), (-2, -1, None)])
def test_in_dims_per_argument(same, in_dims):
    shapes = {(0, None, None): ((5, 3), (3, 2), (2,)), (1, None, None): ((3, 5), (3, 2), (2,)),
              (0, 1, 0): ((5, 3), (3, 5, 2), (5, 2)), (-2, -1, None): ((5, 3), (3, 2, 5), (2,))}
    same(lambda lib, x, w, b: lib.func.vmap(mlp, in_dims=in_dims)(x, w, b),
         *randn(1, *shapes[in_dims]))


def test_in_dims_nested_pytree(same):
    def f(tree, pair, scale):
        return tree["x"] @ tree["ws"][0] + tree["ws"][1] * pair.a + pair.b.sum() * scale

    def program(lib, x, w0, w1, a, b, s):
        tree = {"x": x, "ws": [w0, w1]}
        in_dims = ({"x": 0, "ws": [None, 1]}, Pair(0, None), None)
        return lib.func.vmap(f, in_dims=in_dims)(tree, Pair(a, b), s)

    same(program, *randn(2, (4, 3), (3, 2), (2, 4), (4, 2), (5,), ()))


def test_in_dims_broadcast_over_a_subtree(same):
    def program(lib, x, y, z):
        return lib.func.vmap(lambda a, pair: a * pair[0] - pair[1], in_dims=(None, 1))(x, (y, z))

    same(program, *randn(3, (2,), (2, 4), (2, 4)))


def test_kwargs_are_not_batched(same):
    def program(lib, x, s):
        return lib.func.vmap(lambda a, *, scale: a * scale)(x, scale=s)

    same(program, *randn(4, (3, 2), (2,)))


@pytest.mark.parametrize("out_dims", [0, 1, -1, (1,)])
def test_out_dims_int(same, out_dims):
    same(lambda lib, x: lib.func.vmap(lambda a: a.exp(), out_dims=out_dims)(x), *randn(5, (4, 3)))


def test_out_dims_pytree(same):
    def program(lib, x):
        f = lambda a: {"sum": a.sum(), "both": (a * 2, a.t())}  # noqa: E731
        return lib.func.vmap(f, out_dims={"sum": 0, "both": (1, 2)})(x)

    same(program, *randn(6, (4, 2, 3)))


def test_out_dims_none_for_outputs_that_are_not_batched(same):
    def program(lib, x, c):
        return lib.func.vmap(lambda a: (a * 2, c, "tag", 7), out_dims=(0, None, None, None))(x)

    same(program, *randn(7, (3, 2), (5,)))


def test_outputs_that_do_not_depend_on_the_batch_are_expanded(same):
    def program(lib, x, c):
        # (torch 2.13 fails to expand an unbatched output to an out_dim other than 0)
        return lib.func.vmap(lambda a: (c, lib.ones(2, dtype=lib.float64), a.sum()))(x)

    same(program, *randn(8, (3, 2), (2, 2)))


def test_an_unbatched_argument_returned_is_expanded(same):
    same(lambda lib, x, y: lib.func.vmap(lambda a, b: b, in_dims=(0, None))(x, y),
         *randn(9, (4,), (2, 3)))


def test_namedtuple_and_list_outputs_keep_their_type(same):
    ours, _ = same(lambda lib, x: lib.func.vmap(lambda a: Pair(a.sin(), [a.cos()]))(x),
                   *randn(10, (3, 2)))
    assert type(ours) is Pair and type(ours.b) is list


def test_shape_and_dim_inside_are_per_example(same):
    def program(lib, x):
        def f(a):
            assert a.shape == (4,) and a.dim() == 1 and a.size(0) == 4 and a.numel() == 4
            return a.reshape(2, 2).t().flatten() / a.shape[0]

        return lib.func.vmap(f)(x)

    same(program, *randn(11, (3, 4)))


def test_scalar_examples(same):
    same(lambda lib, x: lib.func.vmap(lambda a: a * a.exp())(x), *randn(12, (5,)))


def test_reductions_indexing_and_matmul_inside(same):
    def f(a, m):
        return (a[1:] * m[0, 1:]).sum() + (m @ a).max() - a.logsumexp(0) + m.mean(1)[2]

    same(lambda lib, x, m: lib.func.vmap(f)(x, m), *randn(13, (3, 4), (3, 4, 4)))


def test_nested_vmap_outer_product(same):
    def program(lib, x, y):
        inner = lib.func.vmap(lambda a, b: a * b, in_dims=(None, 0))
        return lib.func.vmap(inner, in_dims=(0, None))(x, y)

    same(program, *randn(14, (3,), (4,)))


def test_nested_vmap_with_in_dims_at_both_levels(same):
    def program(lib, x, w):
        inner = lib.func.vmap(lambda row, w: row @ w, in_dims=(1, None))
        return lib.func.vmap(inner, in_dims=(2, 0), out_dims=1)(x, w)

    same(program, *randn(15, (3, 4, 5), (5, 3, 2)))


def test_triple_nested_vmap(same):
    f = lambda a, b, c: (a * b - c).sin()  # noqa: E731

    def program(lib, x, y, z):
        v = lib.func.vmap
        return v(v(v(f, (0, None, None)), (None, 0, None)), (None, None, 0))(x, y, z)

    same(program, *randn(16, (2,), (3,), (4,)))


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 5, 100, None])
def test_chunk_size_gives_the_same_result(same, chunk_size):
    def program(lib, x, w, b):
        return lib.func.vmap(lambda a: (mlp(a, w, b), a.sum()), chunk_size=chunk_size,
                             out_dims=(1, 0))(x)

    same(program, *randn(17, (5, 3), (3, 2), (2,)))


def test_vmap_keeps_the_function_name(same):
    def my_function(a):
        return a

    same(lambda lib, x: lib.func.vmap(my_function).__name__, *randn(18, (2,)))


def test_vmap_is_exported_at_the_top_level():
    assert chainrule.vmap is chainrule.func.vmap


def test_inplace_on_a_batched_input_writes_through(same):
    def program(lib, x):
        y = x.clone()

        def f(a):
            a.mul_(2).add_(1)
            return a

        out = lib.func.vmap(f)(y)
        return out, y

    same(program, *randn(19, (3, 2)))


def test_inplace_unbatched_into_batched(same):
    def program(lib, x, c):
        def f(a):
            b = a.clone()
            b.add_(c)
            b[0] = c[1]
            return b

        return lib.func.vmap(f)(x, )

    same(program, *randn(20, (3, 2), (2,)))


def test_backward_through_vmap(same):
    def program(lib, x, w):
        x.requires_grad_()
        w.requires_grad_()
        y = lib.func.vmap(lambda a: (a @ w).tanh().sum(), in_dims=0)(x)
        (y * y).sum().backward()
        return y.detach(), x.grad, w.grad

    same(program, *randn(21, (4, 3), (3, 2)))


def test_nn_functional_inside(same):
    def program(lib, x, w, b):
        F = lib.nn.functional

        def f(a):
            h = F.relu(F.linear(a, w, b))
            return F.log_softmax(h, dim=-1), F.softmax(h, dim=0)

        return lib.func.vmap(f)(x)

    same(program, *randn(22, (4, 3), (5, 3), (5,)))


# ---- randomness -------------------------------------------------------------------------------

def _random_rows(lib, randomness, chunk_size=None):
    lib.manual_seed(0)

    def f(a):
        return a + lib.rand(3, dtype=lib.float64) + lib.randn_like(a)

    return lib.func.vmap(f, randomness=randomness, chunk_size=chunk_size)(
        lib.zeros(4, 3, dtype=lib.float64))


@pytest.mark.parametrize("lib", [chainrule, __import__("torch")], ids=["chainrule", "torch"])
@pytest.mark.parametrize("chunk_size", [None, 3])
def test_randomness_same_gives_every_example_the_same_draws(lib, chunk_size):
    rows = _random_rows(lib, "same", chunk_size).numpy()
    assert rows.shape == (4, 3)
    np.testing.assert_array_equal(rows, np.broadcast_to(rows[0], rows.shape))


@pytest.mark.parametrize("lib", [chainrule, __import__("torch")], ids=["chainrule", "torch"])
@pytest.mark.parametrize("chunk_size", [None, 3])
def test_randomness_different_gives_examples_their_own_draws(lib, chunk_size):
    rows = _random_rows(lib, "different", chunk_size).numpy()
    assert rows.shape == (4, 3)
    assert len({tuple(r) for r in rows}) == 4


@pytest.mark.parametrize("lib", [chainrule, __import__("torch")], ids=["chainrule", "torch"])
def test_randomness_different_dropout_masks_differ_per_example(lib):
    lib.manual_seed(0)
    x = lib.ones(8, 200, dtype=lib.float64)
    out = lib.func.vmap(lambda a: lib.nn.functional.dropout(a, 0.5), randomness="different")(x)
    kept = (out.numpy() != 0).mean(1)
    assert ((kept > 0.3) & (kept < 0.7)).all()  # about half kept, in every example
    assert len({tuple(r) for r in out.numpy()}) == 8
    np.testing.assert_array_equal(out.numpy()[out.numpy() != 0], 2.0)


@pytest.mark.parametrize("lib", [chainrule, __import__("torch")], ids=["chainrule", "torch"])
def test_randomness_same_dropout_mask_is_shared(lib):
    lib.manual_seed(0)
    x = lib.ones(4, 50, dtype=lib.float64)
    out = lib.func.vmap(lambda a: lib.nn.functional.dropout(a, 0.5), randomness="same")(x)
    rows = out.numpy()
    np.testing.assert_array_equal(rows, np.broadcast_to(rows[0], rows.shape))


@pytest.mark.parametrize("lib", [chainrule, __import__("torch")], ids=["chainrule", "torch"])
def test_randomness_modes_of_nested_vmaps(lib):
    lib.manual_seed(0)
    x = lib.zeros(3, 4, dtype=lib.float64)
    inner = lib.func.vmap(lambda a: a + lib.rand(()), randomness="same")
    out = lib.func.vmap(inner, randomness="different")(x).numpy()
    np.testing.assert_array_equal(out, np.broadcast_to(out[:, :1], out.shape))  # same inside
    assert len(set(out[:, 0])) == 3  # different across the outer batch


def test_random_values_outside_vmap_are_not_affected():
    chainrule.manual_seed(0)
    chainrule.rand(2)
    expected = chainrule.rand(2)
    chainrule.manual_seed(0)
    chainrule.func.vmap(lambda a: a * 2)(chainrule.zeros(3))
    chainrule.rand(2)
    np.testing.assert_array_equal(chainrule.rand(2).numpy(), expected.numpy())


# ---- in-place writes and views ------------------------------------------------------------

def test_tensors_made_like_a_batched_one_are_batched(same):
    def program(lib, x):
        def f(a):
            out = lib.zeros_like(a)
            out[0] = a[1]
            ones = a.new_ones(2)
            ones.mul_(a[:2])
            full = lib.full_like(a, 3.0)
            full.add_(a)
            return out, ones, full, lib.ones_like(a).sum()

        return lib.func.vmap(f)(x)

    same(program, *randn(30, (4, 3)))


def test_new_methods_take_tensor_arguments_and_make_batched_tensors(same):
    def program(lib, x):
        def f(a):
            zeros = a.new_zeros(2, device="cpu")
            zeros.add_(a[:2])
            ones = a.new_ones(size=(2, 3), dtype=lib.float64, layout=lib.strided)
            ones.mul_(a)
            full = a.new_full([3], 7.0, device="cpu", pin_memory=False)
            full.sub_(a)
            empty = a.new_empty((3,), dtype=lib.float32)
            empty.copy_(a)
            strided = a.new_empty_strided((3,), (1,))
            strided.copy_(a)
            grad = a.new_ones(3, requires_grad=True)
            flags.append((grad.requires_grad, grad.is_leaf))
            return zeros, ones, full, empty, strided, a.new_tensor([1.0, 2.0]), grad

        flags = []
        return (*lib.func.vmap(f)(x), flags)

    ours, _ = same(program, *randn(31, (4, 3)))
    assert ours[3].dtype == chainrule.float32 and ours[5].shape == (4, 2)
    assert ours[7] == [(True, True)] and not ours[6].requires_grad


@pytest.mark.parametrize("make", [lambda lib, a: a.new_zeros(-1),
                                  lambda lib, a: a.new_full(2, 1.0),
                                  lambda lib, a: a.new_ones(2, dtype=lib.int64,
                                                            requires_grad=True)])
def test_new_methods_refuse_as_torch_inside_vmap(same_error, make):
    def program(lib, x):
        return lib.func.vmap(lambda a: make(lib, a))(x)

    same_error(program, *randn(32, (4, 3)))


def test_writes_through_views_of_a_batched_tensor(same):
    def program(lib, x):
        def f(a):
            b = a.clone()
            b[1:][0] = 5.0  # a view of a view
            b.reshape(2, 2).t()[0].mul_(-1)
            b[-1] += a[0]
            c = b.reshape(2, 2).clone()
            c.diagonal().mul_(2)  # a view with a batching rule of its own
            c.diagonal()[0] = -1.0
            return b, c

        return lib.func.vmap(f)(x)

    same(program, *randn(31, (3, 4)))


def test_writes_into_a_batched_input_reach_the_caller(same):
    def program(lib, x):
        y = x.clone()

        def f(a):
            a[0] = a[1] * 2
            a[1:].add_(1)
            return a.sum()

        out = lib.func.vmap(f, in_dims=1)(y)
        return out, y

    same(program, *randn(32, (3, 5)))


def test_inplace_under_vmap_with_autograd(same):
    def program(lib, x, w):
        x.requires_grad_()

        def f(a):
            b = a * 1.0
            b[0] = (b[1] * w).sin()
            b.mul_(a)
            return b.sum()

        y = lib.func.vmap(f)(x)
        y.sum().backward()
        return y.detach(), x.grad

    same(program, *randn(33, (4, 3), ()))


def test_vmap_of_modules(same):
    def program(lib, x, w, b):
        linear = lib.nn.Linear(3, 2).double()
        with lib.no_grad():
            linear.weight.copy_(w)
            linear.bias.copy_(b)
        norm = lib.nn.LayerNorm(3).double()
        bn = lib.nn.BatchNorm1d(3).double().eval()
        v = lib.func.vmap
        return v(linear)(x), v(norm)(x), v(bn)(x.unsqueeze(1))

    same(program, *randn(34, (4, 3), (2, 3), (2,)))


def test_ops_inside(same):
    def f(lib, c):
        def g(r):
            return (lib.softmax(r, 0), lib.where(r > 0, r, lib.zeros(())),
                    lib.einsum("i,ij->j", r, c), lib.cat([lib.stack([r, c[0]]), c], 0),
                    r.unsqueeze(0).expand(2, 3) * c[:2], r.sum(0, keepdim=True))

        return g

    same(lambda lib, x, c: lib.func.vmap(f(lib, c))(x), *randn(35, (4, 3), (3, 3)))


@pytest.mark.parametrize("outer_index", [True, False])
def test_nested_vmap_with_an_index_batched_at_one_level(same, outer_index):
    # The index is a parameter of the indexing op: the level that batches it (outer or
    # inner, the tensor indexed at the other) runs it per example.
    def program(lib, x, idx):
        idx = idx.abs().floor().long() % 4
        inner = lib.func.vmap(lambda a, i: a[i] * 2, in_dims=(0, None) if outer_index
                              else (None, 0))
        outer = lib.func.vmap(inner, in_dims=(None, 0) if outer_index else (0, None))
        return outer(x, idx)

    same(program, *randn(43, (3, 4), (5, 2)))
