"""Runnable examples: ``python -m chainrule.examples.tutorial``; the torch.func tutorials as
``per_sample_grads``, ``ensembling``, ``jacobians`` and ``ntk``."""
