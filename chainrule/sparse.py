"""torch.sparse, for the tensors chainrule has: dense ones.

chainrule's tensors are single NumPy arrays, so there is no sparse layout (docs/differences.md).
What PyTorch's torch.sparse does with dense (strided) tensors is done here: mm and addmm compute
the dense products; sum, softmax, log_softmax, sampled_addmm and mm with ``reduce`` refuse a
dense input with PyTorch's exception; the invariants switch and gradcheck's decorator work as
PyTorch's with dense tensors.
"""

from __future__ import annotations

import functools

from .ops.linalg import addmm as _addmm
from .ops.linalg import mm as _mm
from .tensor import Tensor

__all__ = ["addmm", "check_sparse_tensor_invariants", "mm", "sum", "softmax", "log_softmax",
           "sampled_addmm", "as_sparse_gradcheck"]


def _no_dense_kernel(op: str) -> NotImplementedError:
    return NotImplementedError(f"Could not run 'aten::{op}' with arguments from the 'CPU' "
                               f"backend: chainrule's tensors are dense, and PyTorch runs "
                               f"{op} on sparse tensors only.")


def mm(mat1: Tensor, mat2: Tensor, reduce: str | None = None) -> Tensor:
    """The matrix product of mat1 and mat2 (torch.mm for dense matrices)."""
    if reduce is not None:
        raise _no_dense_kernel("_sparse_mm_reduce_impl")
    return _mm(mat1, mat2)


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1.0,
          alpha: float = 1.0) -> Tensor:
    """beta * mat + alpha * (mat1 @ mat2) (torch.addmm for dense matrices)."""
    return _addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input: Tensor, dim=None, dtype=None) -> Tensor:
    """The sum of a sparse tensor's values; a dense input is refused, as by PyTorch."""
    if dim is None:
        raise RuntimeError("coalesce expected sparse coordinate tensor layout but got Strided")
    raise _no_dense_kernel("_indices")


def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Softmax over a sparse tensor's specified values; a dense input is refused, as by
    PyTorch (torch.softmax is the dense one)."""
    raise _no_dense_kernel("_sparse_softmax")


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Log-softmax over a sparse tensor's specified values; a dense input is refused, as by
    PyTorch (torch.log_softmax is the dense one)."""
    raise _no_dense_kernel("_sparse_log_softmax")


def sampled_addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: float = 1.0,
                  alpha: float = 1.0, out=None) -> Tensor:
    """addmm at the specified elements of a sparse CSR input; a dense input is refused, as by
    PyTorch."""
    raise _no_dense_kernel("sparse_sampled_addmm")


class check_sparse_tensor_invariants:  # noqa: N801  (PyTorch's name)
    """The switch for checking sparse tensors' invariants in their constructors; a context
    manager and decorator that set it. (chainrule constructs no sparse tensors.)"""

    _enabled = False

    @staticmethod
    def is_enabled() -> bool:
        return check_sparse_tensor_invariants._enabled

    @staticmethod
    def enable() -> None:
        check_sparse_tensor_invariants._enabled = True

    @staticmethod
    def disable() -> None:
        check_sparse_tensor_invariants._enabled = False

    def __init__(self, enable: bool = True) -> None:
        self.state = enable
        self.saved_state: bool | None = None

    def __enter__(self) -> None:
        if self.saved_state is not None:
            raise RuntimeError("This context manager instance is already activated. Use a "
                               "different context manager instance for context nesting.")
        self.saved_state = self.is_enabled()
        check_sparse_tensor_invariants._enabled = self.state

    def __exit__(self, type, value, traceback) -> None:  # noqa: A002  (PyTorch's names)
        if self.saved_state is None:
            raise AssertionError("saved_state should not be None on exit")
        check_sparse_tensor_invariants._enabled = self.saved_state
        self.saved_state = None

    def __call__(self, mth):
        @functools.wraps(mth)
        def test_mth(*args, **kwargs):
            with type(self)(self.state):
                return mth(*args, **kwargs)
        return test_mth


def as_sparse_gradcheck(gradcheck):
    """gradcheck extended to sparse inputs and outputs: with chainrule's dense tensors, gradcheck
    itself (the ``masked`` keyword is accepted)."""
    def gradcheck_with_sparse_support(func, inputs, **kwargs):
        kwargs.pop("masked", False)
        return gradcheck(func, inputs, **kwargs)
    return gradcheck_with_sparse_support
