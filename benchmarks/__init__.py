"""Side-by-side speed and memory of chainrule, PyTorch and a hand-written NumPy floor.

Run ``python -m benchmarks --help`` from the project root; the workloads are W1-W7 of
BENCHMARKS.md.
"""
