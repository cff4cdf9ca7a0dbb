"""torch.utils.benchmark.examples: scripts showing the benchmark tools (``python -m
chainrule.utils.benchmark.examples.<name>``), on chainrule."""
