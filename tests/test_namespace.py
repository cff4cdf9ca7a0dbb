"""Every public module of PyTorch's CPU wheel, and every public name in each, accounted for.

The modules: those pkgutil finds from ``torch.__path__`` whose dotted names have no part
starting with "_", plus the underscore modules real code imports (``EXTRA``, not walked
further), each imported on torch; a module that fails to import on torch's CPU wheel is out. A
module's public names are its ``__all__`` if it defines one, else the names in ``dir()`` not
starting with "_" whose values torch defines (their ``__module__`` starts with "torch"), so
re-exported typing names, standard-library modules and imported helpers do not count; names
whose values are modules are left to the module walk.

``torch.X`` is provided when ``chainrule.X`` imports (what ``chainrule.as_torch`` maps it to), a
name when that module has the attribute. Everything else is listed, with a reason, under a
heading starting "Not provided" in docs/differences.md: ``torch.distributed.rpc`` for a module
and the modules under it (not walked), ``torch.cuda.nvtx.range`` (or ``cuda.nvtx.range``, or bare
``range`` for a top-level name, as the other surface tests write names) for one name. The lists
can only shrink: a listed module or name that chainrule provides fails, and so does a qualified
entry that names nothing of torch's.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import warnings
from types import ModuleType

import torch
from _surface import listing, not_provided

import chainrule

EXTRA = ("torch._dynamo", "torch._inductor.config", "torch._logging", "torch.utils._pytree",
         "torch.utils._python_dispatch", "torch.nn.modules.utils")
LISTED = not_provided()


def _skipped(name: str) -> bool:
    """A module listed whole, or under one listed whole: it is not walked."""
    parts = name.split(".")
    return any(".".join(parts[:end]) in LISTED for end in range(2, len(parts) + 1))


def _import(name: str) -> ModuleType | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return importlib.import_module(name)
    except Exception:  # noqa: BLE001  (optional dependencies, other builds)
        return None


def _walk() -> dict[str, ModuleType]:
    """torch's public modules that import on this wheel, by dotted name."""
    found: dict[str, ModuleType] = {}
    stack = ["torch"]
    while stack:
        name = stack.pop()
        module = None if _skipped(name) else _import(name)
        if module is None:
            continue
        found[name] = module
        stack += [f"{name}.{info.name}" for info in pkgutil.iter_modules(
            getattr(module, "__path__", [])) if not info.name.startswith("_")]
    for name in EXTRA:
        if name not in found and (module := _import(name)) is not None:
            found[name] = module
    return found


def _public(module: ModuleType) -> list[str]:
    """The module's public names (see the docstring above)."""
    declared = getattr(module, "__all__", None)
    names = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated names warn when read
        for name in declared if declared is not None else dir(module):
            if declared is None and name.startswith("_"):
                continue
            try:
                value = getattr(module, name)
            except Exception:  # noqa: BLE001  (a stale __all__ entry, a name that raises)
                continue
            if inspect.ismodule(value):
                continue
            owner = getattr(value, "__module__", None)
            if declared is not None or (isinstance(owner, str)
                                        and owner.split(".")[0] == "torch"):
                names.append(name)
    return names


def _ours(torch_name: str) -> ModuleType | None:
    return _import("chainrule" + torch_name[len("torch"):])


def _has(module: ModuleType, name: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return hasattr(module, name)


def _path(torch_name: str) -> str:
    """``torch.utils.data`` -> ``utils.data`` (the paths the lists write), ``torch`` -> ''."""
    return torch_name[len("torch."):]


MODULES = _walk()
NAMES = {name: _public(module) for name, module in MODULES.items()}
OURS = {name: _ours(name) for name in MODULES}


def _qualified(module: str, name: str) -> str:
    return f"{_path(module)}.{name}" if module != "torch" else name


def test_the_walk_covers_pytorchs_modules():
    assert len(MODULES) > 200 and sum(map(len, NAMES.values())) > 2500
    assert {"torch", "torch.nn.functional", "torch.utils.data", "torch.distributed",
            "torch._dynamo", "torch.utils._pytree", "torch.nn.modules.utils"} <= MODULES.keys()
    assert len(NAMES["torch"]) > 800 and "Tensor" in NAMES["torch"]


def test_public_names_are_torchs_own():
    # torch.nn.modules.utils has no __all__: its typing imports and helpers are not its API
    names = NAMES["torch.nn.modules.utils"]
    assert "consume_prefix_in_state_dict_if_present" in names
    assert not {"Any", "repeat", "collections", "torch"} & set(names)


def test_every_module_is_provided_or_listed():
    missing = sorted(name for name, ours in OURS.items()
                     if ours is None and listing(_path(name), LISTED, module=True) is None)
    assert missing == []


def test_every_name_is_provided_or_listed():
    missing = sorted(
        f"torch.{_qualified(module, name)}" for module, names in NAMES.items()
        if OURS[module] is not None for name in names
        if not _has(OURS[module], name) and listing(_qualified(module, name), LISTED) is None)
    assert missing == []


def test_listed_modules_and_names_are_real_gaps():
    """A qualified entry (``torch.a.b``, or ``a.b`` for ``torch.a.b``; ``Tensor.`` entries are
    test_parity's, ``functorch.`` ones name functorch) names a module chainrule lacks or a name
    its module lacks."""
    provided, unknown = [], []
    qualified = {e if e.startswith("torch.") else "torch." + e for e in LISTED
                 if "." in e and not e.startswith(("Tensor.", "functorch."))}
    for entry in sorted(qualified):
        try:
            is_module = importlib.util.find_spec(entry) is not None
        except (ImportError, ValueError):
            is_module = False
        if is_module:
            if _ours(entry) is not None:
                provided.append(entry)
            continue
        owner, _, name = entry.rpartition(".")
        theirs = _import(owner)
        if theirs is None or not _has(theirs, name):
            unknown.append(entry)
        elif (ours := _ours(owner)) is not None and _has(ours, name):
            provided.append(entry)
    assert provided == [], "provided now: remove them from 'Not provided' in differences.md"
    assert unknown == [], "not torch's: fix the entries in differences.md"


def test_bare_top_level_entries_are_real_gaps():
    """A bare entry that is a top-level name of torch's is missing from chainrule or from
    chainrule's Tensor (the other surface tests read bare entries for both)."""
    provided = sorted(name for name in LISTED if "." not in name and name in NAMES["torch"]
                      and _has(chainrule, name)
                      and (not _has(torch.Tensor, name) or _has(chainrule.Tensor, name)))
    assert provided == []
