"""Model ensembling, as in PyTorch's torch.func tutorial.

The parameters of several models of one architecture are stacked with ``stack_module_state``;
``vmap`` over ``functional_call`` then runs every model in one call, each on its own minibatch
(``in_dims=(0, 0, 0)``) or all on the same one (``in_dims=(0, 0, None)``), and equals looping
over the models. Run with ``python -m chainrule.examples.ensembling``; every function takes the
library as its ``torch`` argument, so the same program runs under PyTorch.
"""

from __future__ import annotations

import copy

import numpy as np

import chainrule

from ._weights import uniform_from


def make_models(torch, num_models: int = 4, seed: int = 0) -> list:
    """``num_models`` small MLPs in float64, weights from a seeded NumPy generator."""
    nn, F = torch.nn, torch.nn.functional

    class SimpleMLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(12, 16)
            self.fc2 = nn.Linear(16, 16)
            self.fc3 = nn.Linear(16, 5)

        def forward(self, x):
            x = F.relu(self.fc1(x.flatten(1)))
            x = F.relu(self.fc2(x))
            return self.fc3(x)

    rng = np.random.default_rng(seed)
    return [uniform_from(torch, SimpleMLP().double(), rng, 0.5) for _ in range(num_models)]


def make_minibatches(torch, num_models: int = 4, seed: int = 1):
    """One minibatch of 6 samples (3x4 "images") per model."""
    rng = np.random.default_rng(seed)
    return torch.tensor(rng.standard_normal((num_models, 6, 3, 4)))


def run(torch=chainrule) -> dict:
    """Predictions of the ensemble: by a loop, and by vmap on different and on one minibatch."""
    func = torch.func
    models = make_models(torch)
    minibatches = make_minibatches(torch, len(models))
    minibatch = minibatches[0]

    params, buffers = func.stack_module_state(models)
    base_model = copy.deepcopy(models[0])  # only its structure is used

    def fmodel(params, buffers, x):
        return func.functional_call(base_model, (params, buffers), (x,))

    return {
        "loop_different": torch.stack([m(x) for m, x in zip(models, minibatches)]),
        "vmap_different": func.vmap(fmodel, in_dims=(0, 0, 0))(params, buffers, minibatches),
        "loop_same": torch.stack([m(minibatch) for m in models]),
        "vmap_same": func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch),
        "stacked_weight_requires_grad": params["fc1.weight"].requires_grad,
        "stacked_keys": list(params),
    }


def main() -> None:
    result = run()
    print(f"an ensemble of {result['vmap_same'].shape[0]} MLPs with stacked parameters "
          f"{result['stacked_keys']}:")
    for case in ("different", "same"):
        ours = result[f"vmap_{case}"]
        diff = (ours - result[f"loop_{case}"]).abs().max().item()
        print(f"  {case:9s} minibatches: predictions {tuple(ours.shape)}, max |vmap - loop| "
              f"{diff:.1e}")


if __name__ == "__main__":
    main()
