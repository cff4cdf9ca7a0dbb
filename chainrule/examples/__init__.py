"""Runnable examples: ``python -m chainrule.examples.tutorial``."""
