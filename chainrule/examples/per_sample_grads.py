"""Per-sample gradients of a small CNN, as in PyTorch's torch.func tutorial.

The loss of one sample, written with ``functional_call`` as a function of the parameters, is
differentiated with ``grad`` and vectorized over the batch with ``vmap``; the result equals a
loop that runs ordinary autograd once per sample. Run with
``python -m chainrule.examples.per_sample_grads``. Every function takes the library as its
``torch`` argument, so the same program runs under PyTorch (the tests compare the two).
"""

from __future__ import annotations

import numpy as np

import chainrule

from ._weights import uniform_from


def make_model(torch, seed: int = 0):
    """A small CNN (conv, conv, max-pool, two linear layers) in float64, its weights drawn from
    a seeded NumPy generator (the same numbers under any library)."""
    nn, F = torch.nn, torch.nn.functional

    class SimpleCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)
            self.fc1 = nn.Linear(32, 16)
            self.fc2 = nn.Linear(16, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            return F.log_softmax(self.fc2(x), dim=1)

    return uniform_from(torch, SimpleCNN().double(), np.random.default_rng(seed), 0.4)


def make_data(torch, n: int = 8, seed: int = 1):
    rng = np.random.default_rng(seed)
    data = torch.tensor(rng.standard_normal((n, 1, 8, 8)))
    targets = torch.tensor(rng.integers(0, 10, n))
    return data, targets


def per_sample_grads_loop(torch, model, data, targets) -> dict:
    """One backward per sample, stacked: the slow reference."""
    F = torch.nn.functional
    grads = {name: [] for name, _ in model.named_parameters()}
    for sample, target in zip(data, targets):
        model.zero_grad()
        loss = F.nll_loss(model(sample.unsqueeze(0)), target.unsqueeze(0))
        loss.backward()
        for name, p in model.named_parameters():
            grads[name].append(p.grad.clone())
    return {name: torch.stack(g) for name, g in grads.items()}


def per_sample_grads_vmap(torch, model, data, targets) -> dict:
    """``vmap(grad(loss of one sample))``: every sample's gradient in one call."""
    func = torch.func
    F = torch.nn.functional
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        predictions = func.functional_call(model, (params, buffers), (batch,))
        return F.nll_loss(predictions, target.unsqueeze(0))

    compute_sample_grad = func.vmap(func.grad(compute_loss), in_dims=(None, None, 0, 0))
    return compute_sample_grad(params, buffers, data, targets)


def run(torch=chainrule) -> dict:
    """Both ways of computing per-sample gradients on the same model and data."""
    model = make_model(torch)
    data, targets = make_data(torch)
    return {"vmap": per_sample_grads_vmap(torch, model, data, targets),
            "loop": per_sample_grads_loop(torch, model, data, targets)}


def main() -> None:
    result = run()
    print("per-sample gradients (vmap of grad) against a loop of backward calls:")
    for name, g in result["vmap"].items():
        diff = (g - result["loop"][name]).abs().max().item()
        print(f"  {name:12s} {str(tuple(g.shape)):18s} max |difference| {diff:.1e}")


if __name__ == "__main__":
    main()
