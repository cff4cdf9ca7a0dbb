"""``torch.utils.module_tracker``: which modules the program is inside, in forward and in
backward, from global module forward hooks and multi-grad hooks on their inputs and outputs."""

from __future__ import annotations

import logging
import weakref

from ..autograd.graph import graph_tasks, register_multi_grad_hook
from ..nn.modules.module import register_module_forward_hook, register_module_forward_pre_hook
from ..tensor import Tensor
from ._pytree import tree_flatten

logger = logging.getLogger(__name__)

__all__ = ["ModuleTracker"]


class ModuleTracker:
    """A context manager keeping ``parents``, the fully qualified names (``Model.layer1``) of the
    modules being run, "Global" included: entered on a module's forward (and, in backward,
    when the gradients of its outputs are computed), left at the end of its forward (and when
    the gradients of its inputs are). ``is_bw`` tells whether a backward is running."""

    def __init__(self) -> None:
        self._parents: set[str] = {"Global"}
        self._known_modules: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._seen_modules: weakref.WeakSet = weakref.WeakSet()
        self._bw_task: int | None = None  # the backward whose end resets ``parents``
        self._hooks: list = []

    @property
    def parents(self) -> set[str]:
        # PyTorch queues a reset on the autograd engine; here the backward that entered modules
        # is looked for among the running ones, and once it has finished the set is reset.
        if self._bw_task is not None and all(t.id != self._bw_task for t in graph_tasks.stack):
            self._parents = {"Global"}
            self._bw_task = None
        return self._parents

    @parents.setter
    def parents(self, value: set[str]) -> None:
        self._parents = value

    @property
    def is_bw(self) -> bool:
        """Whether a backward is running."""
        return bool(graph_tasks.stack)

    def _get_mod_name(self, mod) -> str:
        if mod not in self._known_modules:
            self._known_modules[mod] = type(mod).__name__
        name = self._known_modules[mod]
        if mod not in self._seen_modules:
            for child_name, child in mod.named_children():
                self._known_modules[child] = f"{name}.{child_name}"
                self._get_mod_name(child)
            self._seen_modules.add(mod)
        return name

    def _get_append_fn(self, name: str, is_bw: bool):
        def fn(*args) -> None:
            parents = self.parents
            if is_bw and self._bw_task is None and graph_tasks.stack:
                self._bw_task = graph_tasks.stack[-1].id
            if name in parents:
                logger.info("The module hierarchy tracking seems to be broken as this Module was "
                            "already entered. %s during %s", name,
                            "backward" if is_bw else "forward")
            parents.add(name)
        return fn

    def _get_pop_fn(self, name: str, is_bw: bool):
        def fn(*args) -> None:
            parents = self.parents
            if name in parents:
                parents.remove(name)
            else:
                logger.info("The Module hierarchy tracking is confused as we're exiting a Module "
                            "that was never entered. %s during %s", name,
                            "backward" if is_bw else "forward")
        return fn

    def _fw_pre_hook(self, mod, input) -> None:
        name = self._get_mod_name(mod)
        self._get_append_fn(name, False)()
        tensors = [a for a in tree_flatten(input)[0]
                   if isinstance(a, Tensor) and a.requires_grad]
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors, self._get_pop_fn(name, True)))

    def _fw_post_hook(self, mod, input, output) -> None:
        name = self._get_mod_name(mod)
        self._get_pop_fn(name, False)()
        tensors = [a for a in tree_flatten(output)[0]
                   if isinstance(a, Tensor) and a.requires_grad]
        if tensors:
            self._hooks.append(register_multi_grad_hook(tensors,
                                                        self._get_append_fn(name, True)))

    def __enter__(self) -> ModuleTracker:
        self._fw_pre_handle = register_module_forward_pre_hook(self._fw_pre_hook)
        self._fw_post_handle = register_module_forward_hook(self._fw_post_hook)
        return self

    def __exit__(self, *args) -> None:
        self._fw_pre_handle.remove()
        self._fw_post_handle.remove()
        for hook in self._hooks:
            hook.remove()
        self._hooks.clear()
