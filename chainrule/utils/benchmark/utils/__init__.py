"""torch.utils.benchmark.utils: the modules behind torch.utils.benchmark."""
