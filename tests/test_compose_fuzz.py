"""Random programs through random stacks of function transforms agree with torch.func.

Each case (tests/_compose_fuzz.py) is a random program from tests/_random_programs.py run through
one to three of ``func.grad``, ``vjp``, ``jvp``, ``jacrev``, ``jacfwd`` and ``vmap`` (random
``in_dims``, None and negative dims included), sometimes under identity saved-tensor hooks and
sometimes compiled; values must match torch.func's to rtol 1e-9 / atol 1e-10 (float64), and a
compiled stack must give eager chainrule's values bit for bit. The case of a seed is fixed, so a
failure names its seed: ``_compose_fuzz.case(seed).describe()`` prints it. Environment:
``CHAINRULE_FUZZ_N`` sets the number of cases (default 600), run in chunks of 25.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from _compose_fuzz import check

N = int(os.environ.get("CHAINRULE_FUZZ_N", "600"))
CHUNK = 25


@pytest.mark.parametrize("start", range(0, N, CHUNK))
def test_transform_stacks_agree_with_torch_func(start: int) -> None:
    for seed in range(start, min(start + CHUNK, N)):
        check(seed)


# ---- the bugs the fuzzer found, as small programs against torch.func ---------------------------


def _both(fn):
    import torch

    import chainrule

    got, want = fn(chainrule), fn(torch)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-12, atol=0)


def test_amax_of_a_scalar_example_splits_ties_per_example() -> None:
    # seed 91: the tie count of amax over a 0-d example summed over the batch (1/6 for 1/3).
    def run(lib):
        x = lib.tensor([-1.0, 0.5], dtype=lib.float64)
        f = lib.func.vmap(lambda x: (x / 3).amax())
        return lib.stack([lib.func.jacfwd(f)(x), lib.func.jacrev(f)(x)])

    _both(run)


def test_jvp_under_vmap_takes_the_written_values_tangent() -> None:
    # seeds 492, 703, 309: an in-place write under vmap(jvp(...)) kept the target's old tangent
    # (copy_, and v[:] = w through a view), and a view taken before the write kept its old one.
    def run(lib):
        def f(a, b):
            v = a.clone()
            w = v[...]
            v[:] = b
            u = a.clone()
            u.copy_(b)
            return lib.cat([v, w, u])

        def g(a, b):
            return lib.func.jvp(f, (a, b), (lib.ones_like(a), 2 * lib.ones_like(b)))[1]

        a = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64)
        b = lib.tensor([5.0, 6.0], dtype=lib.float64)
        return lib.stack([lib.func.vmap(g, in_dims=(0, None))(a, b),
                          lib.func.vmap(g, in_dims=(-1, 0))(a, a)])

    _both(run)


def test_mse_loss_jacobian_through_a_batched_gradient() -> None:
    # seed 635: mse_loss_backward's kernel wrote a batch of g into the input's shape.
    def run(lib):
        x = lib.tensor([1.05, 1.14], dtype=lib.float64)
        return lib.func.jacrev(lambda x: lib.nn.functional.mse_loss(x, x.tanh()))(x)

    _both(run)


@pytest.mark.parametrize("seed", [91, 309, 492, 527, 635, 703, 933, 2135, 2929, 2991, 3267, 4445])
def test_seeds_that_found_bugs(seed: int) -> None:
    assert check(seed) == "ok"


def test_norm_of_a_scalar_example_under_jacfwd() -> None:
    # seeds 2135, 2929, 4445: the tangent of a norm (and logsumexp) over a 0-d example summed the
    # batch (dim () means all dims to sum()).
    def run(lib):
        x = lib.tensor([0.3, -0.5, 0.8], dtype=lib.float64)
        f = lib.func.vmap(lambda x: lib.stack([x.norm(), lib.logsumexp(x, ()), x.norm(p=3)]))
        return lib.func.jacfwd(f)(x)

    _both(run)


def test_no_grad_inplace_keeps_the_history_under_forward_mode() -> None:
    # seed 2991: with a tangent, an in-place op under no_grad took the write's empty history
    # (autograd.grad raised "does not require grad"; jvp(grad(f)) gave a 0 tangent).
    def run(lib):
        def f(x):
            v = (x * x).sum()
            with lib.no_grad():
                v.mul_(2)
            return v

        x = lib.tensor([0.3, -0.5], dtype=lib.float64)
        t = lib.tensor([1.0, 2.0], dtype=lib.float64)
        return lib.func.jvp(lib.func.grad(f), (x,), (t,))[1]

    _both(run)
