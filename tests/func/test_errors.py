"""Misuse of the transforms raises torch.func's error types with torch.func's words.

Each row is a program run with both libraries; the error type and message must be the same.
"""

from __future__ import annotations

import functools

import pytest

from .conftest import randn


def g(a, b=None):
    return a


def _inplace(lib, method: str):
    def f(a):
        y = lib.zeros(a.shape, dtype=a.dtype)
        getattr(y, method)(a)
        return y

    return f


def _setitem(lib):
    def f(a):
        y = lib.zeros(a.shape, dtype=a.dtype)
        y[0] = a[0]
        return y

    return f


def _backward_inside(a):
    a.sum().backward()
    return a.sum()


def _f_int_output(lib):
    return lambda a: (a > 0).long()


VMAP_ROWS = {
    # ---- vmap: data-dependent Python --------------------------------------------------------
    "item": lambda lib, x: lib.func.vmap(lambda a: a.sum().item())(x),
    "tolist": lambda lib, x: lib.func.vmap(lambda a: a.tolist())(x),
    "numpy": lambda lib, x: lib.func.vmap(lambda a: a.numpy())(x),
    "bool": lambda lib, x: lib.func.vmap(lambda a: a if a.sum() > 0 else -a)(x),
    "float": lambda lib, x: lib.func.vmap(lambda a: float(a.sum()))(x),
    "int": lambda lib, x: lib.func.vmap(lambda a: int(a.sum()))(x),
    "while": lambda lib, x: lib.func.vmap(lambda a: [a for _ in range(1) if (a > 0).all()])(x),
    # ---- vmap: inputs ------------------------------------------------------------------------
    "sizes differ": lambda lib, x: lib.func.vmap(g)(x, lib.ones(4)),
    "in_dim too big": lambda lib, x: lib.func.vmap(g, in_dims=2)(x),
    "in_dim too negative": lambda lib, x: lib.func.vmap(g, in_dims=-3)(x),
    "in_dim for a float": lambda lib, x: lib.func.vmap(g)(x, 3.0),
    "in_dim for None": lambda lib, x: lib.func.vmap(g)(x, None),
    "in_dims longer than args": lambda lib, x: lib.func.vmap(g, in_dims=(0, 0))(x),
    "in_dims kwargs not counted": lambda lib, x: lib.func.vmap(g, in_dims=(0, 0))(x, b=x),
    "in_dims nested mismatch": lambda lib, x: lib.func.vmap(g, in_dims=(0, [0, 1]))(x, (x, x)),
    "in_dims nested too deep": lambda lib, x: lib.func.vmap(g, in_dims=((0, 0),))(x),
    "in_dims a list": lambda lib, x: lib.func.vmap(g, in_dims=[0])(x),
    "in_dims None": lambda lib, x: lib.func.vmap(g, in_dims=None)(x),
    "in_dim a float": lambda lib, x: lib.func.vmap(g, in_dims=(0.5,))(x),
    "in_dims all None": lambda lib, x: lib.func.vmap(g, in_dims=(None,))(x),
    "no inputs": lambda lib, x: lib.func.vmap(lambda: x)(),
    "name of a partial": lambda lib, x: lib.func.vmap(functools.partial(g), in_dims=2)(x),
    # ---- vmap: arguments ---------------------------------------------------------------------
    "bad randomness": lambda lib, x: lib.func.vmap(g, randomness="foo"),
    "chunk_size 0": lambda lib, x: lib.func.vmap(g, chunk_size=0),
    "chunk_size negative": lambda lib, x: lib.func.vmap(g, chunk_size=-1),
    "out_dims a string": lambda lib, x: lib.func.vmap(g, out_dims="a")(x),
    "out_dims a float in a tuple": lambda lib, x: lib.func.vmap(g, out_dims=(0.5,))(x),
    # ---- vmap: outputs -----------------------------------------------------------------------
    "out_dim too big": lambda lib, x: lib.func.vmap(g, out_dims=2)(x),
    "out_dim too negative": lambda lib, x: lib.func.vmap(g, out_dims=-3)(x),
    "out_dims longer": lambda lib, x: lib.func.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(x),
    "out_dims tuple for a tensor": lambda lib, x: lib.func.vmap(g, out_dims=(0, 0))(x),
    "out_dims list for a tuple": lambda lib, x: lib.func.vmap(lambda a: (a, a),
                                                              out_dims=[0, 1])(x),
    "returns an int": lambda lib, x: lib.func.vmap(lambda a: 3)(x),
    "returns None": lambda lib, x: lib.func.vmap(lambda a: (a, None))(x),
    "batched with out_dim None": lambda lib, x: lib.func.vmap(g, out_dims=None)(x),
    "grad of a vector under vmap": lambda lib, x: lib.func.vmap(lib.func.grad(lambda a: a))(x),
    "backward under vmap": lambda lib, x: lib.func.vmap(_backward_inside)(x.requires_grad_()),
    # ---- vmap: randomness --------------------------------------------------------------------
    "rand in error mode": lambda lib, x: lib.func.vmap(lambda a: a + lib.rand(2))(x),
    "randn_like in error mode": lambda lib, x: lib.func.vmap(lambda a: lib.randn_like(a))(x),
    "dropout in error mode": lambda lib, x: lib.func.vmap(lib.nn.functional.dropout)(x),
    "randint in error mode": lambda lib, x: lib.func.vmap(lambda a: lib.randint(3, (2,)))(x),
    "randperm in error mode": lambda lib, x: lib.func.vmap(lambda a: lib.randperm(3))(x),
    # ---- vmap: in-place writes of batched values into unbatched tensors -----------------------
    "add_ into unbatched": lambda lib, x: lib.func.vmap(_inplace(lib, "add_"))(x),
    "mul_ into unbatched": lambda lib, x: lib.func.vmap(_inplace(lib, "mul_"))(x),
    "copy_ into unbatched": lambda lib, x: lib.func.vmap(_inplace(lib, "copy_"))(x),
    "sub_ into unbatched": lambda lib, x: lib.func.vmap(_inplace(lib, "sub_"))(x),
    "div_ into unbatched": lambda lib, x: lib.func.vmap(_inplace(lib, "div_"))(x),
    "pow_ into unbatched": lambda lib, x: lib.func.vmap(_inplace(lib, "pow_"))(x),
    "atan2_ into unbatched": lambda lib, x: lib.func.vmap(_inplace(lib, "atan2_"))(x),
    "setitem into unbatched": lambda lib, x: lib.func.vmap(_setitem(lib))(x),
}

ROWS = {
    # ---- grad / grad_and_value ---------------------------------------------------------------
    "grad of a vector": lambda lib, x: lib.func.grad(lambda a: a)(x),
    "grad of a float": lambda lib, x: lib.func.grad(lambda a: 3.0)(x),
    "grad has_aux without a tuple": lambda lib, x: lib.func.grad(lambda a: a.sum(),
                                                                 has_aux=True)(x),
    "grad has_aux a 3-tuple": lambda lib, x: lib.func.grad(lambda a: (a.sum(), a, a),
                                                           has_aux=True)(x),
    "grad aux a string": lambda lib, x: lib.func.grad(lambda a: (a.sum(), "s"), has_aux=True)(x),
    "grad aux None": lambda lib, x: lib.func.grad(lambda a: (a.sum(), None), has_aux=True)(x),
    "grad_and_value of a vector": lambda lib, x: lib.func.grad_and_value(lambda a: a)(x),
    "grad argnum out of range": lambda lib, x: lib.func.grad(lambda a: a.sum(), argnums=2)(x),
    "grad argnum negative": lambda lib, x: lib.func.grad(lambda a: a.sum(), argnums=-2)(x),
    "grad argnums a list": lambda lib, x: lib.func.grad(lambda a: a.sum(), argnums=[0])(x),
    "grad argnums repeated": lambda lib, x: lib.func.grad(lambda a, b: a.sum(),
                                                          argnums=(0, 0))(x, x),
    "grad argnums empty": lambda lib, x: lib.func.grad(lambda a, b: a.sum(), argnums=())(x, x),
    "grad argnums a float": lambda lib, x: lib.func.grad(lambda a, b: a.sum(),
                                                         argnums=(0, 1.0))(x, x),
    "grad of no arguments": lambda lib, x: lib.func.grad(lambda: x.sum())(),
    "grad of a float input": lambda lib, x: lib.func.grad(lambda a: a)(3.0),
    "grad of an int tensor": lambda lib, x: lib.func.grad(lambda a: a.sum())(lib.arange(3)),
    "backward under grad": lambda lib, x: lib.func.grad(_backward_inside)(x),
    "backward under vjp": lambda lib, x: lib.func.vjp(_backward_inside, x),
    "backward under jvp": lambda lib, x: lib.func.jvp(_backward_inside, (x,), (x,)),
    # ---- vjp ---------------------------------------------------------------------------------
    "vjp cotangent tuple for a tensor": lambda lib, x: lib.func.vjp(lambda a: a.sin(), x)[1]((x,)),
    "vjp cotangent list for a tuple": lambda lib, x: lib.func.vjp(lambda a: (a, a), x)[1]([x, x]),
    "vjp cotangent dict keys": lambda lib, x: lib.func.vjp(lambda a: {"u": a}, x)[1]({"v": x}),
    "vjp cotangent shape": lambda lib, x: lib.func.vjp(lambda a: a.sin(), x)[1](lib.ones(2)),
    "vjp int output": lambda lib, x: lib.func.vjp(_f_int_output(lib), x),
    "vjp empty output": lambda lib, x: lib.func.vjp(lambda a: (), x),
    "vjp None output": lambda lib, x: lib.func.vjp(lambda a: None, x),
    "vjp non-tensor output": lambda lib, x: lib.func.vjp(lambda a: (a, 3), x),
    "vjp float primal": lambda lib, x: lib.func.vjp(lambda a: a, 3.0),
    "vjp has_aux without a tuple": lambda lib, x: lib.func.vjp(lambda a: a, x, has_aux=True),
    "vjp aux a string": lambda lib, x: lib.func.vjp(lambda a: (a, "s"), x, has_aux=True),
    # ---- jvp ---------------------------------------------------------------------------------
    "jvp primals a list": lambda lib, x: lib.func.jvp(lambda a: a, [x], [x]),
    "jvp primals a tensor": lambda lib, x: lib.func.jvp(lambda a: a, x, x),
    "jvp tangents a list": lambda lib, x: lib.func.jvp(lambda a: a, (x,), [x]),
    "jvp structure": lambda lib, x: lib.func.jvp(lambda a, b: a, (x, x), (x,)),
    "jvp tangent shape": lambda lib, x: lib.func.jvp(lambda a: a, (x,), (lib.ones(2),)),
    "jvp float primal": lambda lib, x: lib.func.jvp(lambda a: a, (3.0,), (1.0,)),
    "jvp no primals": lambda lib, x: lib.func.jvp(lambda: x, (), ()),
    "jvp strict": lambda lib, x: lib.func.jvp(lambda a: x, (x,), (x,), strict=True),
    "jvp int primal": lambda lib, x: lib.func.jvp(lambda a: a, (lib.arange(3),),
                                                  (lib.arange(3),)),
    "jvp None output": lambda lib, x: lib.func.jvp(lambda a: None, (x,), (x,)),
    "jvp non-tensor output": lambda lib, x: lib.func.jvp(lambda a: (a, 3), (x,), (x,)),
    "jvp has_aux without a tuple": lambda lib, x: lib.func.jvp(lambda a: a, (x,), (x,),
                                                               has_aux=True),
    "jvp aux an int": lambda lib, x: lib.func.jvp(lambda a: (a, 1), (x,), (x,), has_aux=True),
    # ---- linearize ---------------------------------------------------------------------------
    "linearize tangent shape": lambda lib, x: lib.func.linearize(lib.sin, x)[1](lib.ones(2)),
    "linearize tangent structure": lambda lib, x: lib.func.linearize(lib.sin, x)[1](x, x),
    "linearize tangent dtype": lambda lib, x: lib.func.linearize(lib.sin, x)[1](x.float()),
    # ---- jacrev / jacfwd / hessian -----------------------------------------------------------
    "jacrev chunk_size 0": lambda lib, x: lib.func.jacrev(g, chunk_size=0),
    "jacrev int output": lambda lib, x: lib.func.jacrev(_f_int_output(lib))(x),
    "jacrev complex input": lambda lib, x: lib.func.jacrev(g)(x.to(lib.complex128)),
    "jacfwd complex input": lambda lib, x: lib.func.jacfwd(g)(x.to(lib.complex128)),
    "jacrev int input": lambda lib, x: lib.func.jacrev(lambda a: a * 2.0)(lib.arange(3)),
    "jacfwd int input": lambda lib, x: lib.func.jacfwd(lambda a: a * 2.0)(lib.arange(3)),
    "jacfwd rand in error mode": lambda lib, x: lib.func.jacfwd(lambda a: a * lib.rand(3))(x),
    "jacrev argnums out of range": lambda lib, x: lib.func.jacrev(g, argnums=1)(x),
    "jacfwd argnums repeated": lambda lib, x: lib.func.jacfwd(g, argnums=(0, 0))(x, x),
    "jacrev has_aux without a tuple": lambda lib, x: lib.func.jacrev(g, has_aux=True)(x),
    "jacfwd has_aux without a tuple": lambda lib, x: lib.func.jacfwd(g, has_aux=True)(x),
    "jacfwd bad randomness": lambda lib, x: lib.func.jacfwd(g, randomness="x")(x),
    "hessian argnums a list": lambda lib, x: lib.func.hessian(lambda a: a.sum(), argnums=[0])(x),
    # ---- functional_call / stack_module_state ------------------------------------------------
    "functional_call not dicts": lambda lib, x: lib.func.functional_call(lib.nn.Linear(3, 2),
                                                                         [{}, 1], (x,)),
    "functional_call a tensor": lambda lib, x: lib.func.functional_call(lib.nn.Linear(3, 2),
                                                                        x, (x,)),
    "functional_call repeated key": lambda lib, x: lib.func.functional_call(
        lib.nn.Linear(3, 2), ({"bias": lib.ones(2)}, {"bias": lib.ones(2)}), (x,)),
    "functional_call strict": lambda lib, x: lib.func.functional_call(
        lib.nn.Linear(3, 2), {"bias": lib.ones(2), "extra": x, "more": x}, (x,), strict=True),
    "functional_call unknown submodule": lambda lib, x: lib.func.functional_call(
        lib.nn.Linear(3, 2), {"foo.weight": x}, (x,)),
    "stack_module_state of none": lambda lib, x: lib.func.stack_module_state([]),
    "stack_module_state modes": lambda lib, x: lib.func.stack_module_state(
        [lib.nn.Linear(2, 2), lib.nn.Linear(2, 2).eval()]),
    "stack_module_state classes": lambda lib, x: lib.func.stack_module_state(
        [lib.nn.Linear(2, 2), lib.nn.Bilinear(2, 2, 2)]),
    "stack_module_state requires_grad": lambda lib, x: lib.func.stack_module_state(
        [lib.nn.Linear(2, 2), lib.nn.Linear(2, 2).requires_grad_(False)]),
}


@pytest.mark.parametrize("name", list(VMAP_ROWS))
def test_vmap_error_like_torch(same_error, name):
    same_error(VMAP_ROWS[name], *randn(0, (3, 2)))


@pytest.mark.parametrize("name", list(ROWS))
def test_error_like_torch(same_error, name):
    same_error(ROWS[name], *randn(1, (3,)))
