"""torch.onnx on chainrule: ONNX export is not provided.

Exporting needs PyTorch's graph capture (``torch.export``) and the onnx package, neither of
which chainrule has, so ``export`` raises ``OnnxExporterError`` saying so. ``is_in_onnx_export()``
is False, as in PyTorch whenever no export is running, so model code that asks takes its usual
path, and programs that only import ``torch.onnx`` run.
"""

from __future__ import annotations

__all__ = ["OnnxExporterError", "export", "is_in_onnx_export"]


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter."""


def is_in_onnx_export() -> bool:
    """Whether an ONNX export is running: never, in chainrule."""
    return False


def export(model, args=(), f=None, **kwargs):
    """Not provided: ONNX export needs PyTorch's graph capture and the onnx package."""
    raise OnnxExporterError(
        "torch.onnx.export is not provided by chainrule: exporting to ONNX needs PyTorch's graph "
        "capture (torch.export) and the onnx package; save the state dict instead")
