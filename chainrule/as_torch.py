"""``torch`` standing for chainrule: unmodified code that imports torch runs on chainrule.

Three ways in, one mechanism (an import hook that resolves ``torch`` and every ``torch.X`` to
chainrule's module of the same path, and ``functorch`` to chainrule's functorch):

- ``python -m chainrule.as_torch script.py args...`` (or ``-m module args...``) runs a program;
- ``chainrule.as_torch.install()`` first thing in a program;
- ``pytest -p chainrule.as_torch`` runs a library's own test suite on chainrule.

The module objects are chainrule's own, so ``torch.nn is chainrule.nn``. If the real torch is
already imported in the process, ``install`` refuses rather than mixing the two. Processes that
multiprocessing spawns (``set_start_method('spawn')``, ``torch.multiprocessing.spawn``) install
the alias first thing too, before they unpickle anything or import the main script again.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import multiprocessing.spawn
import os
import runpy
import sys
from types import ModuleType

__all__ = ["install", "uninstall", "is_installed"]

# Top-level names of the torch wheel and the chainrule package that stands for each.
_ROOTS = {"torch": "chainrule", "functorch": "chainrule._functorch"}


def _target(fullname: str) -> str | None:
    root, dot, rest = fullname.partition(".")
    base = _ROOTS.get(root)
    return None if base is None else base + dot + rest


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``torch.X`` and loads it as the already-imported ``chainrule.X``."""

    def find_spec(self, fullname, path=None, target=None):
        name = _target(fullname)
        if name is None:
            return None
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name is not None and (name == e.name or name.startswith(e.name + ".")):
                return None  # torch.X that chainrule does not have: Python's own error
            raise
        spec = importlib.machinery.ModuleSpec(fullname, self, is_package=hasattr(module,
                                                                                 "__path__"))
        spec._chainrule_module = module
        return spec

    def create_module(self, spec) -> ModuleType:
        return spec._chainrule_module

    def exec_module(self, module: ModuleType) -> None:
        # importlib stamped the alias spec on the module: give it back its own
        module.__spec__ = importlib.util.find_spec(module.__name__)


_finder = _Alias()
_PROLOGUE = "import chainrule.as_torch; chainrule.as_torch.install(); "
_spawn_command_line = multiprocessing.spawn.get_command_line


def _aliased_command_line(**kwds) -> list:
    """multiprocessing's command line for a spawned child, whose program installs the alias
    before it runs ``spawn_main``."""
    command = _spawn_command_line(**kwds)
    if "-c" in command:
        at = command.index("-c") + 1
        command[at] = _PROLOGUE + command[at]
    return command


def _real_torch_loaded() -> bool:
    mod = sys.modules.get("torch")
    return mod is not None and not getattr(mod, "__name__", "").startswith("chainrule")


def is_installed() -> bool:
    """True if ``import torch`` gives chainrule in this process."""
    return _finder in sys.meta_path


def install() -> None:
    """Make ``import torch`` (and ``torch.X``, ``functorch``) give chainrule from now on."""
    if is_installed():
        return
    if _real_torch_loaded():
        raise RuntimeError(
            "chainrule.as_torch.install(): the real torch is already imported in this process "
            f"(from {getattr(sys.modules['torch'], '__file__', '?')}); mixing the two is not "
            "supported. Install the alias before anything imports torch: call it first thing, "
            "or run the program with `python -m chainrule.as_torch`.")
    sys.meta_path.insert(0, _finder)
    multiprocessing.spawn.get_command_line = _aliased_command_line


def uninstall() -> None:
    """Undo ``install``: forget the aliases (modules already imported keep their reference)."""
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    multiprocessing.spawn.get_command_line = _spawn_command_line
    for name in [n for n in sys.modules if _target(n) is not None]:
        if getattr(sys.modules[name], "__name__", "").startswith("chainrule"):
            del sys.modules[name]


def pytest_load_initial_conftests(early_config, parser, args) -> None:
    """``pytest -p chainrule.as_torch``: the alias is in place before any conftest imports."""
    install()


def _main(argv: list[str]) -> None:
    usage = "usage: python -m chainrule.as_torch (script.py | -m module) [args ...]"
    if not argv or argv[0] in ("-h", "--help"):
        print(usage)
        raise SystemExit(0 if argv else 2)
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            raise SystemExit(usage)
        sys.argv = argv[1:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))  # as python script.py
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    _main(sys.argv[1:])
