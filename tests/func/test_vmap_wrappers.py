"""vmap through the op wrappers that work outside apply (a dtype view, in-place shape changes,
multi-output views, index keys, values read on the host) against torch.func.vmap. What such a
wrapper does with a batched tensor is BatchedTensor's own method (vmap's part, in _batching):
each test fails if that method is dropped."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule

from .conftest import randn


@pytest.mark.parametrize(("to", "in_dims"), [("int32", 0), ("int32", 1), ("int32", -1),
                                             ("int16", 0), ("float64", 0)])
def test_view_dtype(same, in_dims, to):
    # The bytes of every example, the batch in front (a NaN placeholder's bytes otherwise).
    def program(lib, x):
        return lib.func.vmap(lambda a: a.float().view(getattr(lib, to)), in_dims=in_dims)(x)

    same(program, *randn(0, (3, 4)))


def test_view_dtype_nested_shares_the_version_counter(same):
    def program(lib, x):
        def f(a):
            v = a.view(lib.int32)
            a.add_(1)  # one version counter: the view sees the write
            return v, lib.tensor(v._version == a._version)

        return lib.func.vmap(lib.func.vmap(f), in_dims=1)(x.float())

    same(program, *randn(1, (2, 3, 4)))


@pytest.mark.parametrize("in_dims", [0, 1])
@pytest.mark.parametrize("split", ["unbind", "split", "chunk"])
def test_write_through_a_piece_reaches_the_base(same, in_dims, split):
    # The pieces of a batched tensor are views of its values (linked without NumPy's answer).
    def program(lib, x):
        def f(a):
            if split == "unbind":
                piece = a.unbind(0)[1]
            else:
                piece = getattr(a, split)(2, 0)[1]
            piece.mul_(10)
            return a

        return lib.func.vmap(f, in_dims=in_dims)(x.clone())

    same(program, *randn(2, (4, 4)))


@pytest.mark.parametrize("split", ["unbind", "split"])
def test_piece_is_a_multi_output_view(same_error, split):
    # Linked as a view of the batched tensor: modifying it in place under grad is refused.
    def program(lib, x):
        def f(a):
            b = a * 1
            piece = b.unbind(0)[1] if split == "unbind" else b.split(2, 0)[1]
            piece.mul_(10)
            return (b * a).sum()

        return lib.func.vmap(lib.func.grad(f))(x)

    same_error(program, *randn(2, (3, 4, 4)))


@pytest.mark.parametrize("in_dims", [0, 1])
@pytest.mark.parametrize("change", ["unsqueeze_", "squeeze_", "t_", "transpose_"])
def test_inplace_shape_change(same, in_dims, change):
    def program(lib, x):
        def f(a):
            b = a.unsqueeze(0).clone()
            if change == "unsqueeze_":
                b.unsqueeze_(1)
            elif change == "squeeze_":
                b.squeeze_(0)
            elif change == "t_":
                b.squeeze_(0).t_()
            else:
                b.transpose_(0, 2)
            return b * 2

        return lib.func.vmap(f, in_dims=in_dims)(x)

    same(program, *randn(3, (3, 3, 2)))


@pytest.mark.parametrize("in_dims", [(0, 0), (None, 0), (1, 0), (0, None)])
def test_index_key_per_example(same, in_dims):
    index = np.array([[0, 2], [1, 1], [2, 0]])

    def program(lib, x, i):
        def f(a, j):
            return a[j] * 2, a[1:, j] if a.ndim > 1 else a[j]

        return lib.func.vmap(f, in_dims=in_dims)(x, i)

    x = randn(4, (3, 3, 3))[0] if in_dims[0] is not None else randn(4, (3, 3))[0]
    if in_dims == (0, None):
        index = index[0]
    same(program, x, index)


@pytest.mark.parametrize("key", ["mask", "float"])
def test_index_key_per_example_refused(same_error, key):
    def program(lib, x):
        keys = {"mask": x > 0, "float": x}
        return lib.func.vmap(lambda a, k: a[k])(x, keys[key])

    same_error(program, *randn(5, (3, 4)))


def test_nonzero_as_tuple_refused(same_error):
    same_error(lambda lib, x: lib.func.vmap(lambda a: lib.nonzero(a, as_tuple=True))(x),
               *randn(6, (3, 4)))


def test_nonzero_dynamic_shape_refused(same_error):
    same_error(lambda lib, x: lib.func.vmap(lambda a: lib.nonzero(a))(x.abs() + 1),
         *randn(6, (3, 4)))


def test_one_hot_needs_num_classes(same_error):
    same_error(lambda lib, t: lib.func.vmap(lib.nn.functional.one_hot)(t),
               np.array([[0, 1], [1, 2]]))


@pytest.mark.parametrize("in_dims", [0, 1])
def test_one_hot_with_num_classes(same, in_dims):
    same(lambda lib, t: lib.func.vmap(lambda a: lib.nn.functional.one_hot(a, 4),
                                      in_dims=in_dims)(t),
         np.array([[0, 1, 3], [1, 2, 0]]))


def test_batch_norm_running_statistics_must_be_batched(same_error):
    def program(lib, x, mean, var):
        return lib.func.vmap(lambda a: lib.nn.functional.batch_norm(
            a, mean, var.abs(), training=True))(x)

    same_error(program, *randn(7, (3, 2, 4), (4,), (4,)))


@pytest.mark.parametrize("in_dims", [(0, 0, 0), (1, 0, 0), (-2, 0, 0)])
def test_batch_norm_running_statistics_per_example(same, in_dims):
    def program(lib, x, mean, var):
        var = var.abs()

        def f(a, m, v):
            out = lib.nn.functional.batch_norm(a, m, v, training=True)
            return out, m, v

        return lib.func.vmap(f, in_dims=in_dims)(x, mean, var)

    shapes = {(0, 0, 0): ((3, 2, 4), (3, 4), (3, 4)), (1, 0, 0): ((2, 3, 4), (3, 4), (3, 4)),
              (-2, 0, 0): ((2, 3, 4), (3, 4), (3, 4))}
    same(program, *randn(8, *shapes[in_dims]))


def test_batch_norm_running_statistics_batched_in_dim_1_updated_as_a_loop():
    # PyTorch 2.13's vmap leaves such statistics unchanged (docs/differences.md); the reference
    # is torch's own loop over the examples.
    x, mean, var = randn(20, (2, 3, 4), (4, 3), (4, 3))
    var = np.abs(var) + 0.5
    m, v = chainrule.tensor(mean), chainrule.tensor(var)
    chainrule.func.vmap(lambda a, mm, vv: chainrule.nn.functional.batch_norm(
        a, mm, vv, training=True), in_dims=(1, 1, 1))(chainrule.tensor(x), m, v)
    want_m, want_v = torch.tensor(mean), torch.tensor(var)
    for i in range(3):
        mi, vi = want_m[:, i].clone(), want_v[:, i].clone()
        torch.nn.functional.batch_norm(torch.tensor(x[:, i]), mi, vi, training=True)
        want_m[:, i], want_v[:, i] = mi, vi
    np.testing.assert_allclose(m.numpy(), want_m.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(v.numpy(), want_v.numpy(), rtol=1e-12, atol=1e-14)
    assert not np.allclose(want_m.numpy(), mean)  # the loop did move them


def test_batch_norm_running_statistics_of_another_level_refused(same_error):
    def program(lib, x, mean, var):
        # running statistics batched at the outer level, the input at the inner one
        def outer(m, v):
            return lib.func.vmap(lambda a: lib.nn.functional.batch_norm(
                a, m, v, training=True))(x)

        return lib.func.vmap(outer)(mean, var.abs())

    same_error(program, *randn(9, (3, 2, 4), (2, 4), (2, 4)))


# Refusals that are chainrule's own (torch runs these per example or reads another error):
# the message the vmap level raises for a value read on the host.


def _raises(program, error, match):
    with pytest.raises(error, match=match):
        program()


def test_histogramdd_refused():
    x = chainrule.tensor(randn(10, (3, 4, 2))[0])
    _raises(lambda: chainrule.func.vmap(lambda a: chainrule.histogramdd(a, bins=3))(x),
            RuntimeError, r"^Batching rule not implemented for aten::histogramdd\. We could not "
            r"generate a fallback\.$")


def test_quantile_batched_q_refused_batched_input_runs(like_torch):
    import torch

    x, q = randn(11, (3, 5), (2,))
    q = np.abs(q) / 4
    _raises(lambda: chainrule.func.vmap(
        lambda p: chainrule.quantile(chainrule.tensor(x[0]), p))(chainrule.tensor(q)),
        RuntimeError, r"^quantile\(\): vmap over q is not supported")
    ours = chainrule.func.vmap(lambda a: chainrule.quantile(a, chainrule.tensor(q)))(
        chainrule.tensor(x))
    theirs = torch.func.vmap(lambda a: torch.quantile(a, torch.tensor(q)))(torch.tensor(x))
    like_torch(ours, theirs, 1e-10, 1e-12)


@pytest.mark.parametrize("batched", ["input", "weight"])
def test_embedding_max_norm_refused(batched):
    index = chainrule.tensor([[0, 1], [1, 2]])
    weight = chainrule.tensor(randn(12, (2, 5, 3))[0])
    if batched == "input":
        program = lambda: chainrule.func.vmap(  # noqa: E731
            lambda i: chainrule.nn.functional.embedding(i, weight[0], max_norm=1.0))(index)
    else:
        program = lambda: chainrule.func.vmap(  # noqa: E731
            lambda w: chainrule.nn.functional.embedding(index[0], w, max_norm=1.0))(weight)
    _raises(program, RuntimeError, r"^vmap: aten::embedding_renorm_\(self, \*extra_args\) is not "
            "possible: the rows of weight are renormalised in place")


@pytest.mark.parametrize("batched", ["input", "offsets"])
def test_embedding_bag_batched_indices_refused(batched):
    index = chainrule.tensor([[0, 1, 2], [1, 2, 3]])
    offsets = chainrule.tensor([[0, 1], [0, 2]])
    weight = chainrule.tensor(randn(13, (5, 3))[0])
    bag = chainrule.nn.functional.embedding_bag
    if batched == "input":
        program = lambda: chainrule.func.vmap(  # noqa: E731
            lambda i: bag(i, weight, offsets[0]))(index)
    else:
        program = lambda: chainrule.func.vmap(  # noqa: E731
            lambda o: bag(index[0], weight, o))(offsets)
    _raises(program, RuntimeError, r"^vmap: embedding_bag with batched indices or offsets is "
            "not supported")


def test_embedding_bag_batched_weight_runs(same):
    def program(lib, w):
        index, offsets = lib.tensor([0, 1, 2, 4]), lib.tensor([0, 1])
        return lib.func.vmap(lambda v: lib.nn.functional.embedding_bag(index, v, offsets))(w)

    same(program, *randn(14, (2, 5, 3)))


def test_nll_loss_batched_class_weight_gradient_refused():
    x, w = randn(15, (3, 2, 4), (3, 4))
    x, w = chainrule.tensor(x), chainrule.tensor(np.abs(w))
    target = chainrule.tensor([0, 3])
    loss = lambda a, v: chainrule.nn.functional.nll_loss(a, target, weight=v)  # noqa: E731
    _raises(lambda: chainrule.func.vmap(chainrule.func.grad(loss))(x, w), NotImplementedError,
            r"^vmap: a batched class weight of nll_loss or cross_entropy is supported in the "
            r"loss and cross_entropy's gradient only")


@pytest.mark.parametrize("in_dims", [(0, 0, 0), (1, 0, 0), (0, None, None), (None, 0, 0),
                                     (0, 1, 1)])
def test_batch_norm_eval_statistics(same, in_dims):
    # The running statistics' arrays are read per example (a NaN placeholder otherwise).
    def program(lib, x, mean, var):
        return lib.func.vmap(lambda a, m, v: lib.nn.functional.batch_norm(
            a, m, v, training=False, eps=1e-3), in_dims=in_dims)(x, mean, var.abs() + 0.1)

    batch = {0: (3, 2, 4, 5), 1: (2, 3, 4, 5), None: (2, 4, 5)}[in_dims[0]]
    stats = {0: (3, 4), 1: (4, 3), None: (4,)}[in_dims[1]]
    same(program, *randn(16, batch, stats, stats))


@pytest.mark.parametrize("in_dims", [(0, 0, 0), (0, None, 0), (None, 0, None), (1, 0, 1)])
def test_masked_scatter_mask_per_example(same, in_dims):
    def program(lib, x, m, s):
        return lib.func.vmap(lambda a, k, v: a.masked_scatter(k > 0, v), in_dims=in_dims)(x, m, s)

    shapes = {0: (3, 4), 1: (4, 3), None: (4,)}
    same(program, *randn(17, *(shapes[d] for d in in_dims)))


def test_masked_scatter_mask_of_an_outer_level(same):
    # Inside the inner level the mask is batched at the outer one only: one count per example.
    def program(lib, x, m, s):
        inner = lambda k: lib.func.vmap(lambda a, v: a.masked_scatter(k > 0, v))  # noqa: E731
        return lib.func.vmap(lambda k: inner(k)(x, s))(m)

    same(program, *randn(18, (3, 4), (2, 4), (3, 4)))


@pytest.mark.parametrize("in_dims", [0, 1])
def test_rrelu_training_draws_a_slope_per_element(in_dims):
    # torch draws other numbers under vmap; what holds for every draw is compared.
    lower, upper = 0.1, 0.3
    x = chainrule.tensor(randn(19, (4, 6))[0])
    f = lambda a: chainrule.nn.functional.rrelu(a, lower, upper, training=True)  # noqa: E731
    out = chainrule.func.vmap(f, in_dims=in_dims, randomness="different")(x)
    values = np.asarray((x if in_dims == 0 else x.t()).tolist())
    slope = np.asarray(out.tolist()) / values
    negative = values < 0
    assert np.array_equal(slope[~negative], np.ones((~negative).sum()))
    assert ((slope[negative] >= lower) & (slope[negative] <= upper)).all()
    assert np.unique(slope[negative]).size == negative.sum()  # each its own draw
