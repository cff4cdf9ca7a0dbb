"""``torch.cuda.graphs``: CUDA graph capture and replay, which a CPU build cannot create."""

from __future__ import annotations

from .streams import Stream

__all__ = ["is_current_stream_capturing", "graph_pool_handle", "CUDAGraph", "graph",
           "make_graphed_callables"]


def _dummy(name: str) -> RuntimeError:
    return RuntimeError(f"Tried to instantiate dummy base class {name}")


def is_current_stream_capturing() -> bool:
    """Whether CUDA graph capture is under way on the current stream: there are no streams."""
    raise _dummy("_cuda_isCurrentStreamCapturing")


def graph_pool_handle():
    """A handle to a memory pool that graphs can share: a CPU build has no CUDA memory."""
    raise _dummy("_graph_pool_handle")


class CUDAGraph:
    """A captured CUDA graph, for replay."""

    def __new__(cls, keep_graph: bool = False):
        raise _dummy("CUDAGraph")


class graph:
    """A region whose CUDA work is captured into a CUDAGraph."""

    default_capture_stream = None

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode: str = "global",
                 enable_annotations: bool = False, check_input_liveness: bool = False) -> None:
        if stream is None:
            Stream()  # the capture stream: a CPU build cannot make one


def make_graphed_callables(callables, sample_args, num_warmup_iters: int = 3,
                           allow_unused_input: bool = False, pool=None):
    """Callables (functions or modules) run through CUDA graphs: a CPU build cannot capture."""
    raise _dummy("CUDAGraph")
