"""torch.utils.benchmark.op_fuzzers: Fuzzers of the inputs of unary, binary and spectral ops
(PyTorch's sparse ones need sparse tensors, which chainrule lacks)."""
