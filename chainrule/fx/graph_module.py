"""``torch.fx.graph_module``: a Module whose forward is generated from a Graph."""

from __future__ import annotations

import copy
import itertools
import linecache
import sys
import traceback
from typing import Any

from ..nn import Module, Parameter
from ..tensor import Tensor
from .graph import Graph, PythonCode

__all__ = ["GraphModule"]

_next_key = itertools.count()


def _forward_from_src(src: str, globals_: dict[str, Any], co_fields: dict | None = None) -> Any:
    """Compile generated source; its lines are registered so tracebacks can show them."""
    key = f"<eval_with_key>.{next(_next_key)}"
    if co_fields:  # where the traced function was written
        key += (f" from {co_fields['co_filename']}:{co_fields['co_firstlineno']} in "
                f"{co_fields['co_name']}")
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    scope = dict(globals_)
    exec(compile(src, key, "exec"), scope)
    return scope["forward"]


def _error_context(frame: traceback.FrameSummary) -> str:
    """The traceback, then the generated lines around the one that raised."""
    lineno = frame.lineno or 0
    lines = linecache.getlines(frame.filename)
    return "\n".join([
        traceback.format_exc(),
        f"Call using an FX-traced Module, line {lineno} of the traced Module's generated "
        "forward function:",
        "".join(lines[lineno - 2:lineno]),
        "~" * len(frame.line or "") + "~~~ <--- HERE",
        "\n".join(lines[lineno:lineno + 2])])


def _copy_attr(from_module: Module, to_module: Module, target: str) -> None:
    """Copy the attribute at ``target`` (a dotted path), making plain Modules for the path."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return  # the whole submodule is already installed
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    original = getattr(from_module, field)
    if isinstance(original, Tensor) and not isinstance(original, Parameter):
        to_module.register_buffer(field, original)
    else:
        setattr(to_module, field, original)


def _assign_attr(from_obj: Any, to_module: Module, target: str) -> None:
    """Install ``from_obj`` at ``target`` (a dotted path), making plain Modules for the
    path."""
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, Tensor) and not isinstance(from_obj, Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line if line.strip() else ""
                                        for line in lines[1:])


class GraphModule(Module):
    """A Module generated from a Graph: its parameters, buffers and submodules are those the
    graph's nodes name, and its forward is the graph's generated code."""

    def __new__(cls, *args: Any, **kwargs: Any) -> GraphModule:
        # each instance gets its own class, so its generated forward is its own
        for base in cls.__mro__:
            if base.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = base
                break

        class GraphModuleImpl(cls):  # type: ignore[valid-type, misc]
            pass

        return super().__new__(GraphModuleImpl)

    def __init__(self, root: Module | dict[str, Any], graph: Graph,
                 class_name: str = "GraphModule") -> None:
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            targets = []
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           "that target was not provided in ``root``!")
                    targets.append(node.target)
            for target in sorted(targets, key=lambda t: t.count(".")):
                _assign_attr(root[target], self, target)
        else:
            raise RuntimeError(f"Unsupported type {root} passed for root!")
        self.graph = graph
        self._tracer_cls = None
        tracer_cls = graph._tracer_cls
        if tracer_cls is not None and "<locals>" not in tracer_cls.__qualname__:
            self._tracer_cls = tracer_cls
        self.meta: dict[str, Any] = {}

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except Exception as e:
            top = traceback.extract_tb(e.__traceback__)[-1]
            if "eval_with_key" not in top.filename:
                raise
            # the error is in a generated line: show it in the generated code, as PyTorch does
            print(_error_context(top), file=sys.stderr)
            raise e.with_traceback(None)  # noqa: B904

    @property
    def graph(self) -> Graph:
        """The Graph this GraphModule's code is generated from."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python code generated from the Graph underlying this GraphModule."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self) -> PythonCode:
        """Regenerate ``code`` and ``forward`` from ``graph`` (after the graph was edited)."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        type(self).forward = _forward_from_src(self._code, python_code.globals,
                                               getattr(self._graph, "_co_fields", None))
        return python_code

    def print_readable(self, print_output: bool = True, include_stride: bool = False,
                       include_device: bool = False, colored: bool = False, *,
                       fast_sympy_print: bool = False, expanded_def: bool = False,
                       additional_meta: list[str] | None = None) -> str:
        """Return the Python code generated for this GraphModule and its GraphModule
        children, as a class."""
        return _print_readable(self, type(self).__name__, print_output, include_stride,
                               include_device)

    def add_submodule(self, target: str, m: Module) -> bool:
        """Adds the given submodule to ``self``, installing empty Modules along the path."""
        *prefix, field = target.split(".")
        mod: Module = self
        for item in prefix:
            submod = getattr(mod, item, None)
            if submod is None:
                submod = Module()
                setattr(mod, item, submod)
            if not isinstance(submod, Module):
                return False
            mod = submod
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Deletes the given submodule from ``self`` (not its own submodules' references)."""
        *path, target_submod = target.split(".")
        mod: Module = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, target_submod):
            return False
        if not isinstance(getattr(mod, target_submod), Module):
            return False
        delattr(mod, target_submod)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Deletes all unused submodules from ``self`` (those no node references)."""
        used: list[str] = []
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                fullpath = node.target.split(".")
                used.extend(".".join(fullpath[:i]) for i in range(1, len(fullpath) + 1))
                if node.op == "call_module":
                    submod = self.get_submodule(node.target)
                    used.extend(f"{node.target}.{name}" for name, _ in submod.named_modules()
                                if name != "")
        used_set = set(used)
        for name, _ in list(self.named_modules()):
            if name not in used_set and name != "":
                self.delete_submodule(name)

    def __str__(self) -> str:
        return "\n".join([super().__str__(), self._code,
                          "# To see more debug info, please use "
                          "`graph_module.print_readable()`"])

    def __copy__(self) -> GraphModule:
        res = GraphModule(self, self.graph, type(self).__name__)
        res.meta = getattr(self, "meta", {})
        return res

    def __deepcopy__(self, memo: dict) -> GraphModule:
        res = type(self).__new__(type(self))
        memo[id(self)] = res
        fake = Module()
        object.__setattr__(fake, "__dict__", copy.deepcopy(self.__dict__, memo))
        GraphModule.__init__(res, fake, fake.__dict__["_graph"])
        res.meta = copy.deepcopy(getattr(self, "meta", {}), memo)
        return res

    def __reduce__(self) -> tuple:
        state = {k: v for k, v in self.__dict__.items() if k != "_code"}
        return (_rebuild, (state,))


def _rebuild(state: dict[str, Any]) -> GraphModule:
    """Unpickle a GraphModule (named GraphModule, as PyTorch's): its state (modules,
    parameters, the graph's nodes)."""
    fake = Module()
    object.__setattr__(fake, "__dict__", state)
    gm = GraphModule(fake, state["_graph"])
    gm.meta = state.get("meta", {})
    return gm


def _print_readable(module: GraphModule, module_name: str, print_output: bool,
                    include_stride: bool, include_device: bool) -> str:
    code = module.graph.python_code(root_module="self", verbose=True,
                                    include_stride=include_stride,
                                    include_device=include_device).src
    module_code = f"class {module_name}(torch.nn.Module):\n" + code.lstrip("\n")
    module_code = _addindent(module_code, 4)
    children = [""]
    for name, child in module.named_children():
        if isinstance(child, GraphModule):
            children.append(_print_readable(child, name, False, include_stride,
                                            include_device))
    output = module_code + _addindent("\n".join(children), 4)
    if print_output:
        print(output)
    return output
