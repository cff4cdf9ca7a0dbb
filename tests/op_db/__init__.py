"""The op table: one row per public op, collected from the family files.

Adding an op adds a row to its family's ROWS (see ``_spec.OpRow``), not a test function.
"""

from __future__ import annotations

from . import complex, elementwise, extra, fft, indexing, linalg, nn, reduction, shape, special
from ._spec import REAL, Const, Domain, OpRow, S, T

__all__ = ["ROWS", "INTERNAL", "OpRow", "S", "T", "Const", "Domain", "REAL"]

ROWS: list[OpRow] = (
    elementwise.ROWS + reduction.ROWS + linalg.ROWS + shape.ROWS + indexing.ROWS + nn.ROWS
    + special.ROWS + complex.ROWS + fft.ROWS + extra.ROWS
)

# Registry records no user calls by name, each with why it exists and the rows (by name) whose
# derivatives run it.
INTERNAL: dict[str, tuple[str, tuple[str, ...]]] = {
    "tanh_backward": (
        "tanh's fused gradient g * (1 - out**2): runs in the first backward of tanh, its own "
        "rules in the second",
        ("tanh",),
    ),
    "sigmoid_backward": (
        "sigmoid's fused gradient g * out * (1 - out): runs in the first backward of sigmoid, "
        "its own rules in the second",
        ("sigmoid",),
    ),
    "threshold_backward": (
        "relu's gradient g * (out > 0) as one kernel (PyTorch's threshold_backward): runs in the "
        "first backward of relu, its own rules in the second",
        ("relu",),
    ),
    "convolution_bias_grad": (
        "a convolution's bias gradient, the sum over the batch and the positions as one op: "
        "runs in the first backward of a convolution with a bias, its own rule in the second",
        ("conv2d", "conv1d", "conv3d", "conv_transpose2d", "conv_transpose1d"),
    ),
    "index_backward": (
        "the gradient of indexing: scatters g into zeros. Its forward runs in the first backward "
        "of every indexing row, its own rule (g[index]) in the second",
        ("Tensor.__getitem__",),
    ),
    "max_pool_double_backward": (
        "the gather at the indices of the window maxima (PyTorch's max_pool_double_backward): "
        "runs in the second backward of max pooling and in adaptive max pooling, its own rule "
        "(the scatter-add) in the latter's backward",
        ("nn.functional.max_pool2d", "nn.functional.adaptive_max_pool2d"),
    ),
    "view_scatter": (
        "in-place writes through a view (CopySlices): replays the view steps on the base. "
        "Exercised by assignment, fill_ and copy_ through views and by the in-place variants "
        "applied through a view (tests/ops/test_ops.py::test_inplace)",
        ("Tensor.__setitem__", "Tensor.fill_", "Tensor.copy_"),
    ),
    "to_device": (
        "a move between devices (Tensor.to('meta'), ToCopyBackward0): rows run on one device, so "
        "tests/test_registry.py moves a tensor to the meta device and back through it "
        "(DEVICE_MOVES)",
        (),
    ),
}
