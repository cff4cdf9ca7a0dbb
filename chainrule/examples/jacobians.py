"""Jacobians, Hessians and Hessian-vector products, as in PyTorch's torch.func tutorial.

A one-layer network's Jacobian by ``jacrev`` and ``jacfwd`` against a loop of ``autograd.grad``
over unit vectors; Jacobians with respect to several arguments; a batch of Jacobians by
``vmap(jacrev)``; the Hessian of a scalar loss by ``hessian`` against ``jacrev(jacrev)``; and an
hvp by forward-over-reverse ``jvp(grad)``. Run with ``python -m chainrule.examples.jacobians``;
every function takes the library as its ``torch`` argument, so the same program runs under
PyTorch.
"""

from __future__ import annotations

import numpy as np

import chainrule

D = 8


def make_inputs(torch, seed: int = 0):
    rng = np.random.default_rng(seed)
    weight = torch.tensor(rng.standard_normal((D, D)) / np.sqrt(D))
    bias = torch.tensor(rng.standard_normal(D))
    x = torch.tensor(rng.standard_normal(D))
    x_batch = torch.tensor(rng.standard_normal((5, D)))
    v = torch.tensor(rng.standard_normal(D))
    return weight, bias, x, x_batch, v


def run(torch=chainrule) -> dict:
    func, F = torch.func, torch.nn.functional
    weight, bias, x, x_batch, v = make_inputs(torch)

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    def jacobian_by_rows(x):
        x = x.clone().requires_grad_()
        y = predict(weight, bias, x)
        rows = [torch.autograd.grad(y, x, unit, retain_graph=True)[0]
                for unit in torch.eye(D, dtype=x.dtype).unbind()]
        return torch.stack(rows)

    def loss(weight, bias, x):
        return predict(weight, bias, x).pow(2).sum()

    def hvp(f, primals, tangents):
        return func.jvp(func.grad(f), primals, tangents)[1]

    return {
        "jacrev": func.jacrev(predict, argnums=2)(weight, bias, x),
        "jacfwd": func.jacfwd(predict, argnums=2)(weight, bias, x),
        "loop": jacobian_by_rows(x),
        "jacrev_weight_and_x": func.jacrev(predict, argnums=(0, 2))(weight, bias, x),
        "batch_jacobian": func.vmap(func.jacrev(predict, argnums=2),
                                    in_dims=(None, None, 0))(weight, bias, x_batch),
        "hessian": func.hessian(loss, argnums=2)(weight, bias, x),
        "jacrev_jacrev": func.jacrev(func.jacrev(loss, argnums=2), argnums=2)(weight, bias, x),
        "hvp": hvp(lambda x: loss(weight, bias, x), (x,), (v,)),
        "v": v,
    }


def main() -> None:
    r = run()

    def diff(a, b) -> str:
        return f"{(a - b).abs().max().item():.1e}"

    print(f"Jacobians of tanh(W x + b), D = {D}:")
    print(f"  jacrev vs autograd loop   {diff(r['jacrev'], r['loop'])}")
    print(f"  jacfwd vs jacrev          {diff(r['jacfwd'], r['jacrev'])}")
    print(f"  d/dW, d/dx shapes         {[tuple(j.shape) for j in r['jacrev_weight_and_x']]}")
    print(f"  batch of Jacobians        {tuple(r['batch_jacobian'].shape)}")
    print(f"  hessian vs jacrev(jacrev) {diff(r['hessian'], r['jacrev_jacrev'])}")
    print(f"  hvp vs hessian @ v        {diff(r['hvp'], r['hessian'] @ r['v'])}")


if __name__ == "__main__":
    main()
