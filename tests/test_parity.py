"""The whole public torch surface, accounted for.

The list comes from PyTorch itself (``torch.overrides.get_testing_overrides()``: every public
callable of torch, Tensor, nn.functional, linalg, special and fft with a reference signature).
Each name must be implemented by chainrule — accepting every parameter name PyTorch's reference
signature has — or listed with a reason under "Not provided" in docs/differences.md, or (while
work is in progress) in tests/parity_todo.txt. The to-do list can only shrink: a listed name that
now works fails the test until it is removed from the list.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
import torch
from _surface import excluded, not_provided, status

import chainrule

ROOT = Path(__file__).resolve().parent.parent
TODO_FILE = Path(__file__).with_name("parity_todo.txt")

NAMESPACES = {
    "torch": (torch, chainrule),
    "Tensor": (torch.Tensor, chainrule.Tensor),
    "nn.functional": (torch.nn.functional, chainrule.nn.functional),
    "linalg": (torch.linalg, chainrule.linalg),
    "special": (torch.special, chainrule.special),
    "fft": (torch.fft, chainrule.fft),
}
# Python protocol methods every object has, or that NumPy-backed tensors need no override for.
_OBJECT_DUNDERS = {"__init__", "__new__", "__getattribute__", "__setattr__", "__delattr__",
                   "__hash__", "__format__", "__reduce_ex__", "__sizeof__", "__dir__",
                   "__init_subclass__", "__subclasshook__", "__class__", "__reduce__",
                   "__torch_function__", "__torch_dispatch__", "__deepcopy__", "__setstate__"}

# Names PyTorch's docstrings give that its argument parser rejects as keywords (stale docs);
# test_not_keywords_are_rejected_by_torch keeps this table honest.
_NOT_KEYWORDS: dict[str, set[str]] = {
    "special.airy_ai": {"input"},
    "special.scaled_modified_bessel_k0": {"input"},
    "special.scaled_modified_bessel_k1": {"input"},
    "special.spherical_bessel_j0": {"input"},
    "Tensor.arctanh_": {"other"},
    "Tensor.atanh_": {"other"},
    "Tensor.bmm": {"batch2"},
    "Tensor.broadcast_to": {"shape"},
    "Tensor.dot": {"other"},
    "torch.broadcast_to": {"shape"},
    "Tensor.index_copy": {"tensor2"},
    "Tensor.index_copy_": {"tensor"},
    "Tensor.masked_scatter": {"tensor"},
    "Tensor.matmul": {"tensor2"},
    "Tensor.mul": {"value"},
    "Tensor.mul_": {"value"},
    "Tensor.div": {"value"},
    "Tensor.div_": {"value"},
    "Tensor.narrow_copy": {"dimension"},
    "Tensor.resize_as_": {"tensor"},
    "Tensor.take": {"indices"},
    "Tensor.type_as": {"tensor"},
    "torch.unsafe_split": {"tensor", "split_size_or_sections"},
    "torch.result_type": {"tensor1", "tensor2"},
    "torch.set_num_interop_threads": {"int"},
    "torch.set_num_threads": {"int"},
    "torch.from_numpy": {"ndarray"},
}


def _split_top(text: str) -> list[str]:
    """Split a parameter list at the commas outside brackets."""
    items, depth, current = [], 0, ""
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        items.append(current.strip())
    return items


def _documented_parameters(fn, name: str) -> set[str] | None:
    """The parameter names of every signature ``name(...)`` in PyTorch's docstring of ``fn``."""
    doc = getattr(fn, "__doc__", None) or ""
    found: set[str] | None = None
    for line in doc.splitlines():
        line = re.sub(r"^\.\. (function|method)::\s*", "", line.strip())
        m = re.match(rf"^(?:[\w.]*\.)?{re.escape(name)}\(", line)
        if not m or "return_types" in line:
            continue
        depth, body = 1, ""
        for ch in line[m.end():]:
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                break
            body += ch
        if depth != 0:
            continue
        params = []
        for item in _split_top(body):
            if item == "*" or item.startswith("*"):
                continue
            param = item.split("=")[0].split(":")[0].strip()
            if not re.fullmatch(r"[A-Za-z_]\w*", param):
                params = None
                break
            params.append(param)
        if params is not None:
            found = (found or set()) | set(params)
    return found


class _Probe:
    """An argument no PyTorch overload takes: its TypeError lists the overloads."""


def _overload_parameters(fn) -> set[str] | None:
    """The parameter names of the overloads PyTorch's argument parser lists for ``fn`` (it
    lists them when no overload takes the arguments: a probe after zero to two tensors)."""
    overloads: list[str] = []
    for leading in range(3):
        try:
            fn(*[torch.ones(2, 2)] * leading, _Probe())
        except TypeError as err:
            message = str(err)
        except Exception:  # noqa: BLE001
            continue
        else:
            continue
        overloads += re.findall(r"^ \* \((.*)\)$", message, re.M)
        overloads += re.findall(r"but expected \((.*)\)$", message, re.M)
    found: set[str] | None = None
    for body in overloads:
        if "Dimname" in body:
            continue  # named tensors
        names = set()
        for item in _split_top(body):
            if item == "*":
                continue
            names.add(item.split("=")[0].split()[-1])
        found = (found or set()) | names
    return None if found is None else found - {"self"}


def _python_parameters(fn) -> set[str] | None:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    return {p.name for p in params
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and p.name not in ("self", "cls")}


def _reference() -> dict[str, dict[str, set[str] | None]]:
    """namespace -> public name -> the parameter names PyTorch documents for it (None: unknown).

    The names come from PyTorch's own list of public callables (``get_testing_overrides``); the
    parameters from the signatures in their docstrings, or from the Python function itself.
    """
    overrides = torch.overrides.get_testing_overrides()
    known = {id(k) for k in overrides}
    table: dict[str, dict[str, set[str] | None]] = {}
    for ns, (module, _) in NAMESPACES.items():
        names = table.setdefault(ns, {})
        for name in dir(module):
            if name.startswith("_") and not (ns == "Tensor" and name.startswith("__")):
                continue
            if name in _OBJECT_DUNDERS:
                continue
            raw = module.__dict__.get(name) if ns == "Tensor" else None
            try:
                value = getattr(module, name)
            except Exception:  # noqa: BLE001  (deprecated attributes raise on access)
                continue
            if id(value) not in known and not (
                    raw is not None and id(getattr(raw, "__get__", None)) in known):
                continue
            if name.startswith("__"):
                names[name] = None  # protocols: Python fixes their parameters
                continue
            target = getattr(torch.ones(2, 2), name) if ns == "Tensor" else value
            params = _overload_parameters(target) if not inspect.isfunction(value) else None
            if params is None:
                params = _documented_parameters(value, name)
            if params is None:
                params = _python_parameters(value)
            if params is not None:
                params -= _NOT_KEYWORDS.get(f"{ns}.{name}", set())
            names[name] = params
    return table


REFERENCE = _reference()


def _todo() -> set[str]:
    """The names still to do, one per line ('#' starts a comment)."""
    if not TODO_FILE.exists():
        return set()
    return {line.split("#")[0].strip() for line in TODO_FILE.read_text().splitlines()
            if line.split("#")[0].strip()}


def _status() -> dict[str, str]:
    """Qualified name -> what is wrong with it ('' when implemented with PyTorch's parameters)."""
    return status(
        (f"{ns}.{name}", getattr(NAMESPACES[ns][1], name, None), params)
        for ns, names in REFERENCE.items() for name, params in names.items())


STATUS = _status()


def test_the_reference_list_is_pytorchs_whole_surface():
    counts = {ns: len(names) for ns, names in REFERENCE.items()}
    assert sum(counts.values()) > 1000, counts
    assert all(counts[ns] > 10 for ns in NAMESPACES), counts


def test_every_name_is_implemented_excluded_with_a_reason_or_on_the_todo_list():
    listed, todo = not_provided(), _todo()
    unaccounted = sorted(f"{q}: {why}" for q, why in STATUS.items()
                         if why and not excluded(q, listed) and q not in todo)
    assert unaccounted == []


def test_the_todo_list_only_names_real_gaps():
    done = sorted(q for q in _todo() if STATUS.get(q, "unknown") == "")
    unknown = sorted(q for q in _todo() if q not in STATUS)
    assert done == [], "implemented now: remove them from tests/parity_todo.txt"
    assert unknown == []


def test_exclusions_are_real_gaps():
    listed = not_provided()
    implemented = sorted(q for q, why in STATUS.items() if why == "" and q in listed)
    assert implemented == [], "implemented: remove them from 'Not provided' in differences.md"


def test_not_keywords_are_rejected_by_torch():
    for qual, names in _NOT_KEYWORDS.items():
        ns, _, name = qual.partition(".")
        owner = torch.ones(2, 2) if ns == "Tensor" else NAMESPACES[ns][0]
        for keyword in names:
            with pytest.raises(TypeError):
                getattr(owner, name)(**{keyword: torch.ones(2, 2)})


if __name__ == "__main__":  # python tests/test_parity.py: drop the names that are done now
    kept = [line for line in TODO_FILE.read_text().splitlines()
            if not line.split("#")[0].strip() or STATUS.get(line.split("#")[0].strip(), "")]
    TODO_FILE.write_text("\n".join(kept) + "\n")


def _ignored_top_level() -> dict[str, object]:
    """torch's public top-level names that PyTorch keeps out of ``__torch_function__``
    (``get_ignored_functions``: factories, dtype utilities, switches), absent from the
    reference list above."""
    ignored = {id(f) for f in torch.overrides.get_ignored_functions()}
    found = {}
    for name in dir(torch):
        try:
            value = getattr(torch, name)
        except Exception:  # noqa: BLE001  (deprecated attributes raise on access)
            continue
        if not name.startswith("_") and id(value) in ignored:
            found[name] = value
    return found


IGNORED = _ignored_top_level()


def test_every_ignored_top_level_name_is_implemented_or_excluded_with_a_reason():
    assert len(IGNORED) > 100
    listed = not_provided()
    unaccounted = sorted(name for name in IGNORED
                         if not hasattr(chainrule, name) and not excluded(f"torch.{name}", listed))
    assert unaccounted == []


# Factories that predate this check and still lack some of PyTorch's keywords; the table can only
# shrink (test_ignored_signature_gaps_are_real).
_IGNORED_SIGNATURE_GAPS: set[str] = set()


def _ignored_signature_status() -> dict[str, str]:
    """Name -> what is wrong with chainrule's parameters ('' when it takes PyTorch's), for the
    ignored top-level callables chainrule has and PyTorch gives a signature for."""
    result = {}
    for name, value in IGNORED.items():
        ours = getattr(chainrule, name, None)
        if ours is None or not callable(value):
            continue
        reference = _python_parameters(value.__init__ if inspect.isclass(value) else value)
        if reference is None:
            reference = _documented_parameters(value, name)
        if reference is not None:
            reference -= _NOT_KEYWORDS.get(f"torch.{name}", set())
            result[name] = status([(name, ours, reference)])[name]
    return result


def test_ignored_top_level_callables_take_pytorchs_parameters():
    found = _ignored_signature_status()
    wrong = {name: why for name, why in found.items()
             if why and name not in _IGNORED_SIGNATURE_GAPS}
    assert len(found) > 50 and wrong == {}


def test_ignored_signature_gaps_are_real():
    found = _ignored_signature_status()
    assert sorted(name for name in _IGNORED_SIGNATURE_GAPS if not found.get(name)) == []


def test_ignored_top_level_exclusions_are_real_gaps():
    listed = not_provided()
    assert sorted(name for name in IGNORED if hasattr(chainrule, name)
                  and (name in listed or f"torch.{name}" in listed)) == []
