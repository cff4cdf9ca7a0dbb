"""The five techniques of the autograd tutorial chainrule started from, run and explained.

Run with ``python -m chainrule.examples.tutorial``; it prints what PyTorch prints for the same code.
"""

from __future__ import annotations

import chainrule as torch


class MyReLU(torch.autograd.Function):
    """ReLU with a hand-written backward."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return input.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_output):
        (input,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad_input[input < 0] = 0
        return grad_input


def main() -> None:
    print("1. gradients: y = x ** 2 at x = 2, dy/dx =")
    x = torch.tensor(2.0, requires_grad=True)
    (x**2).backward()
    print("  ", x.grad)

    print("2. no_grad: inside it, results do not require grad:")
    with torch.no_grad():
        y = x**2
    print("  ", y.requires_grad)

    print("3. detach: the detached tensor is cut from the graph:")
    print("  ", (x**2).detach().requires_grad)

    print("4. higher order: d/dx sin(x^2) and d2/dx2 sin(x^2) at x = 2:")
    (g,) = torch.autograd.grad(torch.sin(x**2), x, create_graph=True)
    (h,) = torch.autograd.grad(g, x)
    print("  ", g)
    print("  ", h)

    print("5. a custom Function (ReLU), gradient at [-1, 2, -3]:")
    v = torch.tensor([-1.0, 2.0, -3.0], requires_grad=True)
    MyReLU.apply(v).backward(torch.ones_like(v))
    print("  ", v.grad)


if __name__ == "__main__":
    main()
