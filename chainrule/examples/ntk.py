"""The empirical neural tangent kernel of a small CNN, as in PyTorch's torch.func tutorial.

NTK(x1, x2) = J(x1) J(x2)^T, the Jacobians taken with respect to the parameters. Two ways:
contract the Jacobians (``vmap(jacrev(f))`` per sample, then ``einsum``), or never build them
and push a basis of output cotangents through ``vjp`` then ``jvp`` (NTK-vector products). Both
give the full kernel, its trace over outputs and its diagonal. Run with
``python -m chainrule.examples.ntk``; every function takes the library as its ``torch``
argument, so the same program runs under PyTorch.
"""

from __future__ import annotations

import numpy as np

import chainrule

from ._weights import uniform_from


def make_net(torch, seed: int = 0):
    nn = torch.nn

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(2, 4, (3, 3))
            self.conv2 = nn.Conv2d(4, 4, (3, 3))
            self.fc = nn.Linear(16, 3)

        def forward(self, x):
            x = self.conv1(x).relu()
            x = self.conv2(x).tanh()
            return self.fc(x.flatten(1))

    return uniform_from(torch, CNN().double(), np.random.default_rng(seed), 0.5)


def make_inputs(torch, seed: int = 1):
    rng = np.random.default_rng(seed)
    return (torch.tensor(rng.standard_normal((4, 2, 6, 6))),
            torch.tensor(rng.standard_normal((3, 2, 6, 6))))


def ntk_jacobian_contraction(torch, fnet_single, params, x1, x2, compute: str = "full"):
    func = torch.func
    jac1 = func.vmap(func.jacrev(fnet_single), (None, 0))(params, x1)
    jac1 = [j.flatten(2) for j in jac1.values()]
    jac2 = func.vmap(func.jacrev(fnet_single), (None, 0))(params, x2)
    jac2 = [j.flatten(2) for j in jac2.values()]
    expr = {"full": "Naf,Mbf->NMab", "trace": "Naf,Maf->NM", "diagonal": "Naf,Maf->NMa"}[compute]
    return torch.stack([torch.einsum(expr, j1, j2) for j1, j2 in zip(jac1, jac2)]).sum(0)


def ntk_ntk_vps(torch, fnet_single, params, x1, x2, compute: str = "full"):
    func = torch.func

    def get_ntk(x1, x2):
        def func_x1(params):
            return fnet_single(params, x1)

        def func_x2(params):
            return fnet_single(params, x2)

        output, vjp_fn = func.vjp(func_x1, params)

        def get_ntk_slice(vec):
            # J(x1)^T vec, then J(x2) (J(x1)^T vec): one column of the kernel block
            vjps = vjp_fn(vec)
            _, jvps = func.jvp(func_x2, (params,), vjps)
            return jvps

        basis = torch.eye(output.numel(), dtype=output.dtype).view(output.numel(), -1)
        return func.vmap(get_ntk_slice)(basis)

    result = func.vmap(func.vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
    if compute == "trace":
        return torch.einsum("NMKK->NM", result)
    if compute == "diagonal":
        return torch.einsum("NMKK->NMK", result)
    return result


def run(torch=chainrule) -> dict:
    func = torch.func
    net = make_net(torch)
    x_train, x_test = make_inputs(torch)
    params = {k: v.detach() for k, v in net.named_parameters()}

    def fnet_single(params, x):
        return func.functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

    out = {}
    for compute in ("full", "trace", "diagonal"):
        out[f"contraction_{compute}"] = ntk_jacobian_contraction(
            torch, fnet_single, params, x_train, x_test, compute)
        out[f"ntk_vps_{compute}"] = ntk_ntk_vps(torch, fnet_single, params, x_train, x_test,
                                                compute)
    return out


def main() -> None:
    result = run()
    print("empirical NTK of a small CNN, 4 train x 3 test inputs, 3 outputs:")
    for compute in ("full", "trace", "diagonal"):
        a, b = result[f"contraction_{compute}"], result[f"ntk_vps_{compute}"]
        print(f"  {compute:8s} {str(tuple(a.shape)):14s} max |contraction - NTK-vps| "
              f"{(a - b).abs().max().item():.1e}")


if __name__ == "__main__":
    main()
