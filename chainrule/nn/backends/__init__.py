"""torch.nn.backends: only ``thnn``, which old pickles name."""
