"""``torch.fx.passes.utils``: helpers of the graph passes (the subgraph matcher)."""
