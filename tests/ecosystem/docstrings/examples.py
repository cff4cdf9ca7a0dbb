"""PyTorch's docstring examples, run on torch and on chainrule (through ``chainrule.as_torch``).

``python examples.py collect OUT.json`` (under the real torch) gathers every docstring with
``>>>`` examples from torch's public namespaces, as written in the installed wheel: nothing is
copied into this repository. ``python [-m chainrule.as_torch] examples.py run IN.json OUT.pkl``
runs each docstring's examples in a fresh namespace after ``torch.manual_seed(0)`` (chainrule's
generator is PyTorch's, so the draws agree) and records what each example displays or raises and
the tensors it leaves behind. ``compare`` tells which docstrings agree.
"""

from __future__ import annotations

import contextlib
import doctest
import inspect
import io
import json
import math
import pickle
import re
import sys
import warnings

# The namespaces whose docstrings are collected, with the objects' public attributes.
NAMESPACES = ("torch.Tensor", "torch", "torch.nn", "torch.nn.functional", "torch.nn.init",
              "torch.nn.utils", "torch.nn.utils.rnn", "torch.nn.utils.parametrize",
              "torch.nn.utils.parametrizations", "torch.linalg", "torch.fft", "torch.special",
              "torch.autograd", "torch.autograd.functional", "torch.autograd.graph",
              "torch.autograd.forward_ad", "torch.func", "torch.distributions", "torch.optim",
              "torch.optim.lr_scheduler", "torch.utils.data", "torch.masked",
              "torch.signal.windows", "torch.random", "torch.testing")

# xdoctest directives under which PyTorch's own doctest run does not run an example.
_NOT_RUN = re.compile(r"(?:x?doctest):\s*\+(?:SKIP|REQUIRES)|\+SKIP")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
_EMPTY = re.compile(r"\bempty(?:_like|_strided|_permuted)?\(|\bnew_empty|\bskip_init\(")
_NUMBER = re.compile(r"-?(?:\d+\.\d*|\.\d+|\d+)(?:e[-+]?\d+)?|nan|inf")


def _resolve(path: str):
    import importlib

    module, _, attr = path.rpartition(".")
    try:
        return importlib.import_module(path)
    except ImportError:
        return getattr(importlib.import_module(module), attr)


def _docstrings():
    """(qualified name, docstring) of every public object, class member included, once each."""
    seen = set()
    for path in NAMESPACES:
        space = _resolve(path)
        for name in sorted(dir(space)):
            if name.startswith("_"):
                continue
            try:
                obj = getattr(space, name)
            except Exception:
                continue
            if inspect.ismodule(obj):
                continue
            members = [(f"{path}.{name}", obj)]
            if inspect.isclass(obj):
                members += [(f"{path}.{name}.{m}", v) for m, v in sorted(vars(obj).items())
                            if not m.startswith("_") and not inspect.isclass(v)]
            for qualname, member in members:
                doc = getattr(member, "__doc__", None)
                if isinstance(doc, str) and ">>>" in doc and doc not in seen:
                    seen.add(doc)
                    yield qualname, doc


def collect(out: str) -> None:
    """Every docstring's examples (sources and expected displays) as JSON."""
    parser = doctest.DocTestParser()
    table = []
    for qualname, doc in _docstrings():
        try:
            examples = parser.get_examples(inspect.cleandoc(doc))
        except ValueError:  # not doctest's syntax (a '>>>' in prose)
            continue
        if examples:
            table.append({"name": qualname,
                          "skipped": bool(_NOT_RUN.search(doc)),
                          "sources": [e.source for e in examples]})
    with open(out, "w") as f:
        json.dump(table, f, indent=0)


def _namespace() -> dict:
    import numpy as np
    import torch

    return {"torch": torch, "nn": torch.nn, "F": torch.nn.functional, "np": np, "math": math}


def _snapshot(namespace: dict, values: bool) -> dict:
    """The tensors an example left behind: dtype, shape and values (as NumPy arrays; of a
    large tensor, every k-th of its elements for at most 4096, and the sum of their
    magnitudes; not when ``values`` is False)."""
    import numpy as np
    import torch

    found = {}
    for name, value in namespace.items():
        if isinstance(value, torch.Tensor) and not name.startswith("_"):
            if not values:
                found[name] = (str(value.dtype), tuple(value.shape), "not compared")
                continue
            try:
                array = value.detach().cpu().resolve_conj().resolve_neg().numpy().ravel()
                if array.size > 4096:
                    total = np.abs(array).sum(dtype=np.float64)
                    array = np.append(array[:: -(-array.size // 4096)], total)
                found[name] = (str(value.dtype), tuple(value.shape), array.copy())
            except Exception as e:  # sparse, meta, bfloat16 ...: their type and shape only
                found[name] = (str(value.dtype), tuple(value.shape), type(e).__name__)
    return found


def _run_one(sources: list[str]) -> dict:
    import numpy as np
    import torch

    # What an earlier docstring may have changed (set_default_dtype's example, ...)
    torch.set_default_dtype(torch.float32)
    torch.set_grad_enabled(True)
    torch.set_printoptions(profile="default", sci_mode=None)
    torch.manual_seed(0)
    np.random.seed(0)
    namespace = _namespace()
    shown = []
    for source in sources:
        buffer = io.StringIO()
        try:
            with contextlib.redirect_stdout(buffer), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(compile(source, "<example>", "single"), namespace)
            shown.append(_ADDRESS.sub("", buffer.getvalue()))
        except BaseException as e:  # noqa: BLE001 - an example's outcome, reported as such
            shown.append(f"{buffer.getvalue()}raised {type(e).__name__}")
    # uninitialised memory (empty and its kin) has no values to compare
    uninitialised = any(_EMPTY.search(source) for source in sources)
    return {"shown": shown, "tensors": _snapshot(namespace, not uninitialised)}


def run(table_path: str, out: str, names: list[str] | None = None) -> None:
    """Run the collected examples (all, or the docstrings named) and pickle the outcomes."""
    with open(table_path) as f:
        table = [row for row in json.load(f) if not row["skipped"]]
    if names:
        table = [row for row in table if row["name"] in names]
    results = {}
    for row in table:
        results[row["name"]] = _run_one(row["sources"])
        sys.stdout.flush()
    with open(out, "wb") as f:
        pickle.dump(results, f)


def _same_text(ours: str, theirs: str) -> bool:
    """Displays equal, numbers within the rounding of their last printed digit."""
    if ours == theirs:
        return True
    if _NUMBER.sub("#", ours) != _NUMBER.sub("#", theirs):
        return False
    numbers = list(zip(_NUMBER.findall(ours), _NUMBER.findall(theirs)))
    # a float32 sum's rounding is relative to its largest terms: the display's largest number
    largest = max((abs(float(b)) for _, b in numbers if b not in ("nan", "inf")), default=0.0)
    for a, b in numbers:
        if a == b:
            continue
        x, y = float(a), float(b)
        digits = len(b.split(".")[1].split("e")[0]) if "." in b else 0
        scale = 10.0 ** -digits * (10.0 ** int(b.split("e")[1]) if "e" in b else 1.0)
        # the last printed digit, and rounding noise (a residual of 1e-7 or 1e-15) as zero
        if not math.isclose(x, y, rel_tol=1e-4,
                            abs_tol=max(1.01 * scale, 1e-5 * largest, 1e-6)):
            return False
    return True


def _same_tensors(ours: dict, theirs: dict) -> str | None:
    import numpy as np

    if ours.keys() != theirs.keys():
        return f"tensors {sorted(ours)} != {sorted(theirs)}"
    for name, (dtype, shape, values) in theirs.items():
        o_dtype, o_shape, o_values = ours[name]
        if (o_dtype, o_shape) != (dtype, shape):
            return f"{name}: {o_dtype}{list(o_shape)} != {dtype}{list(shape)}"
        if isinstance(values, str) or isinstance(o_values, str):
            if type(values) is not type(o_values):
                return f"{name}: values {o_values!r:.40} != {values!r:.40}"
            continue
        if values.dtype.kind in "fc":
            if not np.allclose(o_values, values, rtol=1e-3, atol=1e-4, equal_nan=True):
                return f"{name}: values differ"
        elif not np.array_equal(o_values, values):
            return f"{name}: values differ"
    return None


def oracle(first: dict, second: dict) -> dict:
    """The docstrings whose examples run on torch without raising and give the same outcome in
    two runs (not: ``torch.empty``'s memory, a fresh seed), with the first run's outcomes."""
    def clean(outcome: dict) -> bool:
        return not any(s.startswith("raised ") or "\nraised " in s for s in outcome["shown"])

    same = compare(second, first)
    return {name: outcome for name, outcome in first.items()
            if clean(outcome) and same[name] is None}


def compare(ours: dict, theirs: dict) -> dict:
    """For each docstring, None when chainrule's outcome is torch's, else the first difference."""
    verdict = {}
    for name, want in theirs.items():
        got = ours.get(name)
        if got is None:
            verdict[name] = "not run"
            continue
        why = None
        for i, (a, b) in enumerate(zip(got["shown"], want["shown"])):
            if not _same_text(a, b):
                why = f"example {i + 1}: {a[:300]!r} != {b[:300]!r}"
                break
        verdict[name] = why or _same_tensors(got["tensors"], want["tensors"])
    return verdict


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "collect":
        collect(*args)
    elif command == "run":
        run(args[0], args[1], args[2:] or None)
    else:
        raise SystemExit("usage: examples.py collect OUT.json | run IN.json OUT.pkl [names]")
