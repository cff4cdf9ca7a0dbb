"""``torch.fx.passes.shape_prop``: run a GraphModule and record each node's tensor metadata."""

from __future__ import annotations

import sys
from typing import Any, NamedTuple

from ...nn import Module
from ...tensor import Tensor
from ..interpreter import Interpreter
from ..node import Node, map_aggregate

__all__ = ["TensorMetadata", "ShapeProp"]


class TensorMetadata(NamedTuple):
    """What ShapeProp records of a tensor: shape, dtype, strides and layout facts."""

    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple[int, ...]
    memory_format: Any
    is_quantized: bool
    qparams: dict[str, Any]


def _memory_formats() -> tuple[Any, ...]:
    root = sys.modules[__name__.partition(".")[0]]
    return (root.contiguous_format, root.channels_last, root.channels_last_3d)


def _extract_tensor_metadata(result: Tensor, include_contiguity: bool = True) -> TensorMetadata:
    """The TensorMetadata of one tensor."""
    memory_format = None
    if include_contiguity:
        for query in _memory_formats():
            if result.is_contiguous(memory_format=query):
                memory_format = query
                break
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(),
                          memory_format, result.is_quantized, {})


class ShapeProp(Interpreter):
    """Runs a GraphModule on example inputs (real or on the meta device) and stores each
    node's result's TensorMetadata in ``node.meta['tensor_meta']`` and its type in
    ``node.meta['type']``."""

    def __init__(self, gm: Module, fake_mode: Any = None) -> None:
        super().__init__(gm)
        self.fake_mode = fake_mode
        self.real_module = self.module

    def run_node(self, n: Node) -> Any:
        """Run one node and record its result's metadata."""
        try:
            result = super().run_node(n)
        except Exception as e:
            raise RuntimeError(f"ShapeProp error for: node={n.format_node()} with "
                               f"meta={n.meta}") from e
        found_tensor = False

        def extract(obj: Any) -> Any:
            nonlocal found_tensor
            if isinstance(obj, Tensor):
                found_tensor = True
                return _extract_tensor_metadata(obj)
            return obj

        meta = map_aggregate(result, extract)
        if found_tensor:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args: Any) -> Any:
        """Run ``module`` via interpretation with the given arguments and record the shape and
        type of each node."""
        if self.fake_mode is not None:
            args = tuple(self.fake_mode.from_tensor(t) if isinstance(t, Tensor) else t
                         for t in args)
        return super().run(*args)
