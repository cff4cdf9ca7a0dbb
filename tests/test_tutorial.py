"""The seed tutorial's five techniques, with the exact output PyTorch prints for the same code.

The snippets are the tutorial's (repaired) examples; each test runs one and compares stdout.
"""

import chainrule as torch


def test_1_gradients(capsys):
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 2
    y.backward()
    print(x.grad)
    assert capsys.readouterr().out == "tensor(4.)\n"


def test_2_no_grad(capsys):
    x = torch.tensor(2.0, requires_grad=True)
    with torch.no_grad():
        y = x ** 2
    print(y.requires_grad)
    assert capsys.readouterr().out == "False\n"


def test_3_detach(capsys):
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 2
    z = y.detach()
    print(z.requires_grad)
    assert capsys.readouterr().out == "False\n"


def test_4_higher_order(capsys):
    x = torch.tensor(2.0, requires_grad=True)
    y = x ** 2
    z = torch.sin(y)
    y.backward(retain_graph=True)
    x.grad.zero_()
    z.backward()
    print(x.grad)

    # true higher-order gradients
    x = torch.tensor(2.0, requires_grad=True)
    (g,) = torch.autograd.grad(torch.sin(x ** 2), x, create_graph=True)
    (h,) = torch.autograd.grad(g, x)
    print(g)
    print(h)
    assert capsys.readouterr().out == (
        "tensor(-2.6146)\n"
        "tensor(-2.6146, grad_fn=<MulBackward0>)\n"
        "tensor(10.8016)\n"
    )


def test_5_custom_function(capsys):
    class MyReLU(torch.autograd.Function):
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

    x = torch.tensor([-1.0, 2.0, -3.0], requires_grad=True)
    relu = MyReLU.apply
    y = relu(x)
    y.backward(torch.ones_like(x))
    print(x.grad)
    assert capsys.readouterr().out == "tensor([0., 1., 0.])\n"
