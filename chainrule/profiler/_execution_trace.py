"""ExecutionTraceObserver: every op chainrule runs while it observes, in PyTorch's execution
trace layout (the Chakra JSON that replay and analysis tools read).

Each op call is a node named ``aten::<op>`` (``_`` appended for the in-place form) with its
tensor and other arguments, in the order the op record takes them (inputs, then parameters),
and its outputs; a tensor is ``[tensor id, storage id, offset, numel, itemsize, device]``. What
an op computes on its way is part of it (chainrule runs no separate aten ops inside one). A
backward node is an ``autograd::engine::evaluate_function: <Node>`` node around a ``<Node>``
node, whose ``seq_id`` is the one of the forward op that recorded it, with the ops its rule runs
as children (``ctrl_deps``); a ``record_function`` range is a user-scope node around its ops.
Nodes are written when they end, children first, as PyTorch writes them. ``op_schema`` is
empty: chainrule's ops have no aten schemas.
"""

from __future__ import annotations

import datetime
import functools
import gzip
import json
import os
import shutil
import tempfile
import threading
import time
import weakref
from warnings import warn

from .. import _tooling
from ..tensor import Tensor

__all__ = ["ExecutionTraceObserver"]

SCHEMA = "1.1.1-chakra.0.0.4"
_FUNCTION, _BACKWARD_FUNCTION, _USER_SCOPE = 0, 1, 7  # PyTorch's RecordScope values
# PyTorch's names of the element types, and the ScalarType numbers of dtype arguments.
_ELEMENT = {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}
_SCALAR_TYPE = {"uint8": 0, "int8": 1, "int16": 2, "int32": 3, "int64": 4, "float16": 5,
                "float32": 6, "float64": 7, "complex64": 9, "complex128": 10, "bool": 11,
                "bfloat16": 15}

_running: list[ExecutionTraceObserver] = []  # the observers recording now


def _params(call) -> dict:
    """The op's parameters, from the innermost of the calls the op wrappers are handed."""
    while isinstance(call, functools.partial) and call.func is not _tooling._call:
        call = call.args[-1]
    return call.args[3] if isinstance(call, functools.partial) else {}


class _Ids:
    """Ids of objects (tensors, memory) while they live, never reused for another object."""

    def __init__(self, fresh) -> None:
        self._fresh = fresh
        self._ids: dict[int, tuple] = {}

    def __call__(self, obj) -> int:
        entry = self._ids.get(id(obj))
        if entry is not None and entry[0]() is obj:
            return entry[1]
        try:
            ref = weakref.ref(obj)
        except TypeError:  # kept alive: it names its memory for the rest of the trace
            ref = (lambda kept: lambda: kept)(obj)
        number = self._fresh()
        self._ids[id(obj)] = (ref, number)
        return number


class ExecutionTraceObserver:
    """Execution Trace Observer: records the ops run between ``start()`` and ``stop()`` to the
    file given to ``register_callback``, written when it is unregistered (``.gz``:
    compressed)."""

    def __init__(self) -> None:
        """Initializes the default states."""
        self._registered = False
        self._execution_trace_running = False
        self.extra_resources_collection = False
        self.resources_dir: str = ""
        self.output_file_path: str = ""
        self.output_file_path_observer: str = ""
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._nodes: list[dict] = []
        self._counter = 0
        self._rf_ids = 0
        self._threads: dict[int, int] = {}  # thread ident -> tid
        self._local = threading.local()  # .stack: the open nodes of this thread
        self._tensor_id = _Ids(self._fresh)
        self._storage_id = _Ids(self._fresh)
        self._process_id = self._fresh()
        self._start_ts = self._finish_ts = None

    def __del__(self) -> None:
        """Calls unregister_callback() to make sure to finalize outputs."""
        if getattr(self, "_registered", False):
            self.unregister_callback()

    @staticmethod
    def build_execution_trace_obs_from_env() -> ExecutionTraceObserver | None:
        """An observer writing to a temporary ``.et.json`` file when the environment says
        ``ENABLE_PYTORCH_EXECUTION_TRACE=1`` (collecting extra resources with
        ``ENABLE_PYTORCH_EXECUTION_TRACE_EXTRAS=1``), else None."""
        if os.environ.get("ENABLE_PYTORCH_EXECUTION_TRACE", "0") != "1":
            return None
        try:
            with tempfile.NamedTemporaryFile("w+t", suffix=".et.json", delete=False) as fp:
                filename = fp.name
        except Exception as e:  # noqa: BLE001  (PyTorch warns and goes on)
            warn(f"Execution trace will not be recorded. Exception on creating default "
                 f"temporary file: {e}", stacklevel=2)
            return None
        observer = ExecutionTraceObserver()
        observer.register_callback(filename)
        observer.set_extra_resource_collection(
            os.environ.get("ENABLE_PYTORCH_EXECUTION_TRACE_EXTRAS", "0") == "1")
        return observer

    def set_extra_resource_collection(self, val) -> None:
        """Collect the extra resources a replay needs in a directory beside the trace
        (chainrule generates no kernels: the directory stays empty)."""
        self.extra_resources_collection = val
        if val:
            self.get_resources_dir(can_create=True)

    def register_callback(self, output_file_path: str) -> ExecutionTraceObserver:
        """Have the trace written to ``output_file_path``; returns self."""
        if not self._registered:
            self.output_file_path = output_file_path
            if output_file_path.endswith(".gz"):
                with tempfile.NamedTemporaryFile("w+b", suffix=".json", delete=False) as fp:
                    output_file_path = fp.name
            self.output_file_path_observer = output_file_path
            self._reset()
            self._registered = True
        return self

    def get_resources_dir(self, can_create=False) -> str | None:
        """The resources directory beside the trace (None without extra resource
        collection)."""
        if not self.extra_resources_collection:
            return None
        if not self.resources_dir:
            self.resources_dir = ExecutionTraceObserver.get_resources_dir_for_et_path(
                self.output_file_path, create_dir=can_create) or ""
        return self.resources_dir or None

    @staticmethod
    def get_resources_dir_for_et_path(trace_path, create_dir: bool = False) -> str | None:
        """``<trace name>_resources`` beside the trace, if it exists (or could be made)."""
        work_dir, file_name = os.path.split(trace_path)
        resource_dir = os.path.join(work_dir, os.path.splitext(file_name)[0] + "_resources")
        if not os.path.exists(resource_dir):
            if not create_dir:
                return None
            try:
                os.mkdir(resource_dir)
            except Exception:  # noqa: BLE001  (PyTorch warns and goes on)
                warn(f"Execution trace exception when creating {resource_dir}", stacklevel=2)
                return None
        return resource_dir

    def unregister_callback(self) -> None:
        """Stop observing and write the trace file."""
        if not self._registered:
            return
        self.stop()
        self._registered = False
        self._write()
        if self.output_file_path.endswith("gz"):
            print(f"Execution Trace: compressing {self.output_file_path_observer} to "
                  f"{self.output_file_path}")
            with open(self.output_file_path_observer, "rb") as fin, \
                    gzip.open(self.output_file_path, "wb") as fout:
                shutil.copyfileobj(fin, fout)
            os.remove(self.output_file_path_observer)

    @property
    def is_registered(self) -> bool:
        """Returns True if the execution trace observer is registered, otherwise False."""
        return self._registered

    def is_running(self) -> bool:
        """Returns True if the observer is running, otherwise False."""
        return self._execution_trace_running

    def start(self) -> None:
        """Starts to capture."""
        if not self._registered or self._execution_trace_running:
            return
        self._execution_trace_running = True
        if self._start_ts is None:
            self._start_ts = time.monotonic_ns() // 1_000_000
        self._thread_node()
        _running.append(self)
        _tooling.add_op_wrapper(self._op_hook)
        _tooling.add_node_wrapper(self._node_hook)

    def stop(self) -> None:
        """Stops to capture."""
        if not self._execution_trace_running:
            return
        self._execution_trace_running = False
        _tooling.remove_op_wrapper(self._op_hook)
        _tooling.remove_node_wrapper(self._node_hook)
        _running.remove(self)
        self._finish_ts = time.monotonic_ns() // 1_000_000

    def cleanup(self) -> None:
        """Calls unregister_callback() to make sure to finalize outputs."""
        self.unregister_callback()

    def get_output_file_path(self) -> str | None:
        """Returns the output file name or None."""
        return self.output_file_path or None

    # ---- recording ---------------------------------------------------------------------------

    def _fresh(self) -> int:
        self._counter += 1
        return self._counter

    def _thread_node(self) -> int:
        """This thread's tid; its thread node is written the first time it is seen."""
        ident = threading.get_ident()
        tid = self._threads.get(ident)
        if tid is None:
            with self._lock:
                tid = self._threads[ident] = len(self._threads) + 1
                self._local.thread_node = self._fresh()
                self._nodes.append(self._node(
                    self._local.thread_node, "[pytorch|profiler|execution_trace|thread]",
                    self._process_id, [], [], 0, 0, -1, _USER_SCOPE, tid, 0))
        return tid

    def _open(self) -> tuple[int, int, int]:
        """A new node of this thread: (its id, its parent's, its rf_id)."""
        self._thread_node()
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        parent = stack[-1] if stack else self._local.thread_node
        with self._lock:
            node_id = self._fresh()
            self._rf_ids += 1
            rf_id = self._rf_ids
        stack.append(node_id)
        return node_id, parent, rf_id

    def _close(self, node: dict) -> None:
        self._local.stack.pop()
        with self._lock:
            self._nodes.append(node)

    def _node(self, node_id: int, name: str, parent: int, inputs: list, outputs: list,
              rf_id: int, fw_parent: int, seq_id: int, scope: int, tid: int,
              fw_tid: int) -> dict:
        def layout(values: list) -> dict:
            encoded = [self._value(v) for v in values]
            return {"values": [e[0] for e in encoded], "shapes": [e[1] for e in encoded],
                    "types": [e[2] for e in encoded], "strides": [e[3] for e in encoded]}

        attrs = [("rf_id", "uint64", rf_id), ("fw_parent", "uint64", fw_parent),
                 ("seq_id", "int64", seq_id), ("scope", "uint64", scope), ("tid", "uint64", tid),
                 ("fw_tid", "uint64", fw_tid), ("op_schema", "string", ""),
                 ("kernel_backend", "string", ""), ("kernel_file", "string", ""),
                 ("tensor_range", "string", "")]
        return {"id": node_id, "name": name, "ctrl_deps": parent, "inputs": layout(inputs),
                "outputs": layout(outputs),
                "attrs": [{"name": n, "type": t, "value": v} for n, t, v in attrs]}

    def _value(self, value) -> tuple:
        """(value, shape, type, strides) of an argument, as PyTorch's trace writes them."""
        if isinstance(value, Tensor):
            data = value._data
            owner = data
            while getattr(owner, "base", None) is not None:
                owner = owner.base
            encoded = [self._tensor_id(value), self._storage_id(owner), value.storage_offset(),
                       value.numel(), value.element_size(), str(value.device)]
            element = _ELEMENT.get(value.dtype.name, value.dtype.name)
            return encoded, list(value.shape), f"Tensor({element})", list(value.stride())
        if value is None:
            return "<None>", [], "None", []
        if isinstance(value, bool):
            return value, [], "Bool", []
        if isinstance(value, int):
            return value, [], "Int", []
        if isinstance(value, float):
            return value, [], "Double", []
        if isinstance(value, str):
            return value, [], "String", []
        if isinstance(value, (list, tuple)):
            parts = [self._value(v) for v in value]
            return ([p[0] for p in parts], [p[1] for p in parts],
                    f"GenericList[{','.join(p[2] for p in parts)}]", [p[3] for p in parts])
        name = type(value).__name__
        if name == "dtype" and getattr(value, "name", None) in _SCALAR_TYPE:
            return _SCALAR_TYPE[value.name], [], "Int", []
        if name == "device":
            return str(value), [], "Device", []
        return str(value), [], name, []

    def _op_hook(self, op, suffix: str, inputs: tuple, call):
        node_id, parent, rf_id = self._open()
        depth = getattr(self._local, "ops", 0)  # ops open in this thread (not other ranges)
        self._local.ops = depth + 1
        try:
            result = call()
        except BaseException:
            self._local.stack.pop()
            raise
        finally:
            self._local.ops = depth
        arguments = list(inputs) + list(_params(call).values())
        outputs = list(result) if isinstance(result, tuple) else [result]
        seq_id = -1
        if not depth and isinstance(result, Tensor) and result.grad_fn is not None and all(
                not isinstance(t, Tensor) or t.grad_fn is not result.grad_fn for t in inputs):
            seq_id = getattr(result.grad_fn, "seq", -1)  # the node this op recorded
        name = op.name if "::" in op.name else "aten::" + op.name  # custom ops: mylib::op
        self._close(self._node(node_id, name + suffix, parent, arguments, outputs,
                               rf_id, 0, seq_id, _FUNCTION, self._threads[threading.get_ident()],
                               0))
        return result

    def _node_hook(self, node, call, *args):
        name = node.name()
        outer, parent, outer_rf = self._open()
        inner, _, inner_rf = self._open()
        tid = self._threads[threading.get_ident()]
        try:
            return call(*args)
        finally:
            grads = args[0] if args and isinstance(args[0], (list, tuple)) else args[:1]
            seq = getattr(node, "seq", -1) if name != "torch::autograd::AccumulateGrad" else -1
            self._close(self._node(inner, name, outer, [g for g in grads if g is not None], [],
                                   inner_rf, outer, seq, _BACKWARD_FUNCTION, tid, tid))
            self._close(self._node(outer, f"autograd::engine::evaluate_function: {name}",
                                   parent, [], [], outer_rf, 0, -1, _FUNCTION, tid, 0))

    def _user_scope(self, name: str):
        """Open a record_function range: what closes it."""
        node_id, parent, rf_id = self._open()
        tid = self._threads[threading.get_ident()]

        def close() -> None:
            self._close(self._node(node_id, name, parent, [], [], rf_id, 0, -1, _USER_SCOPE,
                                   tid, 0))
        return close

    def _write(self) -> None:
        nodes = self._nodes + [self._node(self._process_id,
                                          "[pytorch|profiler|execution_trace|process]",
                                          self._process_id, [], [], 0, 0, -1, _USER_SCOPE, 0, 0)]
        now = time.monotonic_ns() // 1_000_000
        trace = {"schema": SCHEMA, "pid": os.getpid(),
                 "time": datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S"),
                 "start_ts": self._start_ts if self._start_ts is not None else now,
                 "nodes": nodes,
                 "finish_ts": self._finish_ts if self._finish_ts is not None else now}
        with open(self.output_file_path_observer, "w") as f:
            json.dump(trace, f)


def user_scope_begin(name: str) -> list:
    """What a record_function range entered in this thread opens in the running observers."""
    return [observer._user_scope(name) for observer in tuple(_running)]


def user_scope_end(closers: list) -> None:
    for close in reversed(closers):
        close()
