"""Activation checkpointing, as ``torch.utils.checkpoint``: run part of a model without keeping
its activations for backward, and recompute them when backward needs them.

Non-reentrant (``use_reentrant=False``, the recommended variant) is built on saved-tensor hooks:
inside the region every tensor an op saves is packed as an empty holder, so no activation
outlives the forward. The first unpack in a backward re-runs the function (with the RNG state it
had) under hooks that fill the holders, and stops as soon as all of them are filled.
Reentrant (``use_reentrant=True``, PyTorch's default when the argument is not given) is a custom
Function: its forward runs the region under no_grad, its backward re-runs it with grad and calls
backward on the result.
"""

from __future__ import annotations

import contextlib
import enum
import itertools
import os
import threading
import traceback
import warnings
import weakref
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from .. import autograd
from .._creation import default_generator
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..autograd.graph import (
    SavedTensor,
    _current_graph_task_id,
    _is_checkpoint_valid,
    _make_saved_tensor,
    saved_tensors_hooks,
)
from ..tensor import Tensor

# chainrule's own files (by the package's path: a user's checkout may be named chainrule too)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "get_device_states",
           "set_device_states", "noop_context_fn", "set_checkpoint_early_stop",
           "DefaultDeviceType", "set_checkpoint_debug_enabled", "CheckpointPolicy",
           "SelectiveCheckpointContext", "GraphExecGroup"]

_DEFAULT_DETERMINISM_MODE = "default"
_checkpoint_debug_enabled: bool | None = None
_enable_checkpoint_early_stop: bool | None = None


class CheckpointError(RuntimeError):
    """The recomputation did not save what the original forward saved."""


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None):
    """Override ``debug`` of every checkpoint in the block (None: each call's own setting)."""
    global _checkpoint_debug_enabled
    prev, _checkpoint_debug_enabled = _checkpoint_debug_enabled, enabled
    try:
        yield
    finally:
        _checkpoint_debug_enabled = prev


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Whether non-reentrant checkpoints made in the block stop recomputing once every saved
    tensor is back (default True)."""
    global _enable_checkpoint_early_stop
    prev, _enable_checkpoint_early_stop = _enable_checkpoint_early_stop, enable
    try:
        yield
    finally:
        _enable_checkpoint_early_stop = prev


def noop_context_fn():
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


class DefaultDeviceType:
    """The device type whose RNG state checkpoint saves when no argument is on an accelerator:
    set with ``set_device_type``; by default the current accelerator's, here 'cpu'."""

    _default_device_type: str | None = None

    @staticmethod
    def set_device_type(device: str = "cuda") -> None:
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type() -> str:
        if not DefaultDeviceType._default_device_type:
            DefaultDeviceType._default_device_type = "cpu"  # no accelerator
        return DefaultDeviceType._default_device_type


def get_device_states(*args) -> tuple[list[int], list]:
    """The accelerator devices of the tensors in ``args`` and their RNG states: none, as every
    chainrule tensor is on the CPU (or meta), whose RNG state is the default generator's."""
    return [], []


def set_device_states(devices, states, *, device_type=None) -> None:
    """Restore the RNG states of accelerator ``devices``: there are none to restore here."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta":
        return
    from .._toplevel import _device_module

    module = _device_module(device_type)
    if module is None:
        raise AttributeError(f"module 'chainrule' has no attribute '{device_type}'")
    for device, state in zip(devices, states):
        with module.device(device):
            module.set_rng_state(state)


class SelectiveCheckpointContext:
    """What a selective-checkpoint policy function is told: whether the op runs in the
    recomputation (and, in PyTorch, the op's output)."""

    def __init__(self, *, is_recompute, op_output=None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with an op's output: save it or recompute it (MUST
    overrides torch.compile's partitioner, PREFER lets it decide), or offload it to the CPU."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


class _Group(threading.local):
    current = None


_group = _Group()


class GraphExecGroup:
    """Inside it, each checkpointed region is recomputed at most once across every backward
    called (non-reentrant checkpoint only); the backwards must use disjoint saved tensors."""

    def __enter__(self) -> GraphExecGroup:
        if _group.current is not None:
            raise RuntimeError(f"GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{_group.current}")
        _group.current = self
        return self

    def __exit__(self, *args) -> None:
        _group.current = None

    @classmethod
    def _get_current_group(cls) -> GraphExecGroup | None:
        return _group.current


def detach_variable(inputs: tuple) -> tuple:
    """The tensors of ``inputs`` detached, keeping their requires_grad."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


def check_backward_validity(inputs) -> None:
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


@contextlib.contextmanager
def _rng_state(state):
    """Run the block from RNG ``state`` (if given); restore the state around it afterwards."""
    if state is None:
        yield
        return
    generator = default_generator
    outer = generator.get_state()
    generator.set_state(state)
    try:
        yield
    finally:
        generator.set_state(outer)


# ---- reentrant: a custom Function ------------------------------------------------------------


class CheckpointFunction(autograd.Function):
    """The reentrant checkpoint: forward under no_grad, backward recomputes and backpropagates."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.rng_state = default_generator.get_state() if preserve_rng_state else None
        # Non-tensor inputs stay in ctx; tensors are saved, to be filled in during backward.
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_indices])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *args):
        if not _is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        inputs = list(ctx.inputs)
        for i, tensor in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = tensor
        with _rng_state(ctx.rng_state):
            detached_inputs = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached_inputs)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outputs_with_grad, args_with_grad = [], []
        for out, grad in zip(outputs, args):
            if isinstance(out, Tensor) and out.requires_grad:
                outputs_with_grad.append(out)
                args_with_grad.append(grad)
        if not outputs_with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        autograd.backward(outputs_with_grad, args_with_grad)
        grads = tuple(inp.grad if isinstance(inp, Tensor) else None
                      for inp in detached_inputs)
        return (None, None) + grads


# ---- non-reentrant: saved-tensor hooks -------------------------------------------------------


class _Handle:
    """The key of one recomputed tensor (it lives as long as the holder points to it)."""


class _Holder:
    """What a tensor saved inside a checkpoint is packed as: per backward, its handle."""

    def __init__(self) -> None:
        self.handles: dict[int, _Handle | None] = {}


class _StopRecomputationError(Exception):
    pass


_debug_tip_msg = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint-debug mode globally.
"""


def _default_meta_extractor(x) -> dict:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_allowed_determinism_checks_to_fns: dict[str, Callable] = {
    _DEFAULT_DETERMINISM_MODE: _default_meta_extractor,
    "none": lambda _: None,
}


class _CheckpointFrame:
    """One checkpointed call: its inputs, a weak reference per packed holder, the recomputed
    tensors per backward (by graph task id) and the metadata to check them against."""

    def __init__(self, recompute_fn: Callable, early_stop: bool, metadata_fn: Callable,
                 debug: bool) -> None:
        self.recompute_fn = recompute_fn
        self.saved_args: list = []
        self.weak_holders: list = []
        self.recomputed: defaultdict = defaultdict(weakref.WeakKeyDictionary)
        self.recomp_counter: defaultdict = defaultdict(int)
        self.is_recomputed: defaultdict = defaultdict(bool)
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.x_metadatas: list = []
        self.forward_completed = False
        self.ignore_saved_mismatch = False
        # debug=True: where each tensor was saved, in the forward and in the recomputation.
        self.debug_logs: tuple[list, list] | None = ([], []) if debug else None

    def save_inputs(self, *args) -> None:
        # Saved as an op saves them: through an enclosing checkpoint's hooks when nested.
        self.saved_args = [_make_saved_tensor(a) if isinstance(a, Tensor) else a
                           for a in args]

    def get_inputs(self) -> list:
        return [a.unpack() if isinstance(a, SavedTensor) else a for a in self.saved_args]

    def log(self, phase: int, x) -> None:
        if self.debug_logs is not None:
            frames = [f for f in traceback.extract_stack()[:-3]
                      if not f.filename.startswith(_PACKAGE)]
            where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"
            self.debug_logs[phase].append(
                f"{x.grad_fn.name() if x.grad_fn is not None else 'leaf'} "
                f"{list(x.shape)} {x.dtype} at {where}")

    def check_recomputed_tensors_match(self, gid: int) -> None:
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise self.error(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                f"Number of tensors saved during recomputation: {self.recomp_counter[gid]}.\n"
                f"{_debug_tip_msg}")
        mismatched = ""
        for idx, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            recomputed = self.recomputed[gid][holder.handles[gid]]
            x_meta, new_meta = self.x_metadatas[idx], self.metadata_fn(recomputed)
            if x_meta != new_meta:
                mismatched += (f"tensor at position {idx}:\nsaved metadata: {x_meta}\n"
                               f"recomputed metadata: {new_meta}\n")
        if mismatched:
            raise self.error(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{mismatched}.\n"
                f"{_debug_tip_msg}")

    def error(self, message: str) -> CheckpointError:
        if self.debug_logs is None:
            return CheckpointError(message)
        forward, recompute = ("\n".join(f"  {i + 1}. {line}" for i, line in enumerate(log))
                              for log in self.debug_logs)
        return CheckpointError(
            f"{message}\nTensors saved during the original forward (the op that made each, its "
            f"shape and dtype, and the line of the op that saved it):\n{forward}\n"
            f"Tensors saved during recomputation:\n{recompute}")


class _recomputation_hook(saved_tensors_hooks):
    """The hooks of a recomputation: each saved tensor fills the next holder of the frame."""

    def __init__(self, target_frame_ref: weakref.ref, gid: int) -> None:
        def pack_hook(x):
            frame = target_frame_ref()
            frame.log(1, x)
            x = x.detach() if x.requires_grad else x
            recomp_idx = frame.recomp_counter[gid]
            frame.recomp_counter[gid] += 1
            if recomp_idx >= len(frame.weak_holders):
                if not frame.forward_completed:
                    frame.ignore_saved_mismatch = True  # a backward inside the checkpoint
                    return x
                raise frame.error("torch.utils.checkpoint: trying to save more tensors during "
                                  f"recomputation than during the original forward pass.\n"
                                  f"{_debug_tip_msg}")
            holder = frame.weak_holders[recomp_idx]()
            if holder is not None:  # else a backward has already freed it
                holder.handles[gid] = handle = _Handle()
                frame.recomputed[gid][handle] = x
            if frame.early_stop and frame.recomp_counter[gid] == len(frame.weak_holders):
                raise _StopRecomputationError
            return x

        super().__init__(pack_hook, lambda x: x)


class _checkpoint_hook(saved_tensors_hooks):
    """The hooks of a checkpointed forward: tensors are packed as empty holders."""

    def __init__(self, frame: _CheckpointFrame) -> None:
        def pack_hook(x):
            holder = _Holder()
            frame.weak_holders.append(weakref.ref(holder))
            frame.x_metadatas.append(frame.metadata_fn(x))
            frame.log(0, x)
            return holder

        def unpack_hook(holder):
            group = GraphExecGroup._get_current_group()  # one recomputation per group
            gid = group if group is not None else _current_graph_task_id()
            if gid == -1:  # unpacked outside backward (grad_fn._saved_*): a fresh recompute
                gid = -next(_outside_ids)
            if not frame.is_recomputed[gid]:
                args = frame.get_inputs()
                try:
                    with _recomputation_hook(weakref.ref(frame), gid), enable_grad():
                        frame.recompute_fn(*args)
                except _StopRecomputationError:
                    pass
                frame.is_recomputed[gid] = True
                frame.check_recomputed_tensors_match(gid)
            if holder.handles.get(gid) is None:
                raise CheckpointError(
                    "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                    "already unpacked once. If you are calling ctx.saved_tensors in backward, "
                    "make sure to do so only once. Otherwise please open an issue with details "
                    "on your use case.")
            ret = frame.recomputed[gid][holder.handles[gid]]
            holder.handles[gid] = None  # the recomputed tensor dies with this use
            return ret

        super().__init__(pack_hook, unpack_hook)


_outside_ids = itertools.count(1)


def _checkpoint_without_reentrant(function, preserve_rng_state: bool, context_fn: Callable,
                                  determinism_check: str, debug: bool, early_stop: bool,
                                  args: tuple, kwargs: dict):
    if _checkpoint_debug_enabled if _checkpoint_debug_enabled is not None else debug:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        debug = True
    if determinism_check not in _allowed_determinism_checks_to_fns:
        raise ValueError("determinism_check should be one of "
                         f"{list(_allowed_determinism_checks_to_fns.keys())}, but got "
                         f"{determinism_check}")
    forward_context, recompute_context = context_fn()
    if not is_grad_enabled():  # nothing is saved: no need to checkpoint
        return function(*args, **kwargs)
    rng_state = default_generator.get_state() if preserve_rng_state else None

    def recompute_fn(*inputs) -> None:
        with _rng_state(rng_state), recompute_context:
            function(*inputs, **kwargs)

    frame = _CheckpointFrame(
        recompute_fn,
        _enable_checkpoint_early_stop if _enable_checkpoint_early_stop is not None else early_stop,
        _allowed_determinism_checks_to_fns[determinism_check], debug)
    frame.save_inputs(*args)
    suppressed = True
    with _checkpoint_hook(frame), forward_context:
        ret = function(*args, **kwargs)
        suppressed = False
    if suppressed:
        raise RuntimeError("torch.utils.checkpoint: the forward context provided by context_fn "
                           "suppressed an exception raised during the checkpointed forward. This "
                           "is not supported because checkpoint cannot return a value for a "
                           "failed forward.")
    frame.forward_completed = True
    return ret


def checkpoint(function, *args, use_reentrant: bool | None = None,
               context_fn: Callable = noop_context_fn,
               determinism_check: str = _DEFAULT_DETERMINISM_MODE, debug: bool = False,
               early_stop: bool = True, **kwargs) -> Any:
    """``function(*args, **kwargs)`` without keeping its activations for backward; backward
    recomputes them. Pass ``use_reentrant=False`` (recommended; PyTorch warns when it is not
    given and uses the reentrant variant)."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         debug, early_stop, args, kwargs)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run ``functions`` (a Sequential or a list) in ``segments`` chunks, all but the last
    checkpointed: only each chunk's input is kept for backward."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
            "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is "
            "not passed. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start: int, end: int, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input

        return forward

    from ..nn.modules.container import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1  # the last chunk runs as it is: its activations are needed right away
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
