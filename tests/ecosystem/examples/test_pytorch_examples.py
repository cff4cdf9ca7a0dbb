"""PyTorch's own example programs (pytorch/examples at 77f55b9, vendored under upstream/ with
their BSD licence) run unchanged on torch and on chainrule (``python -m chainrule.as_torch``),
with the flags of upstream's CI (run_python_examples.sh), seeded by seeded.py, offline: the
MNIST examples read scikit-learn's digits through shim/torchvision, the word language model a
small generated corpus. What each prints agrees, numbers within rounding.

Not here: examples that need downloads or packages chainrule cannot stand in for (torchvision's
models and image I/O, gym, spacy, torchtext, torch.fx, torch.distributed's RPC), and
time_sequence_prediction, which fails on torch 2.13 itself (torch.load of a NumPy array with
weights_only)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..docstrings.examples import _same_text

HERE = Path(__file__).resolve().parent
UPSTREAM = HERE / "upstream"

EXAMPLES = {
    "mnist": ["main.py", "--epochs", "1", "--dry-run"],
    "mnist_rnn": ["main.py", "--epochs", "1", "--dry-run"],
    "mnist_hogwild": ["main.py", "--epochs", "1", "--dry-run"],
    "mnist_forward_forward": ["main.py", "--epochs", "1", "--no_accel"],
    "vae": ["main.py", "--epochs", "1"],
    "regression": ["main.py"],
    "word_language_model": ["main.py", "--epochs", "1", "--dry-run", "--data", "corpus"],
}
# Examples whose run differs on chainrule, and why (docs/differences.md).
DIFFERENT = {
    "word_language_model": "torch.save(model) pickles a whole module: chainrule.save stores "
                           "tensors and plain data only (PyTorch's format), never pickles code",
}
_PID = re.compile(r"^\d+\t", re.M)  # mnist_hogwild's lines start with the process id


def _start(name: str, tmp_path: Path, on_chainrule: bool) -> tuple[subprocess.Popen, Path]:
    cwd = tmp_path / ("chainrule" if on_chainrule else "torch")
    shutil.copytree(UPSTREAM / name, cwd)
    (cwd / "results").mkdir()  # vae's images
    subprocess.run([sys.executable, str(HERE / "make_corpus.py"), str(cwd / "corpus")],
                   check=True)
    alias = ["-m", "chainrule.as_torch"] if on_chainrule else []
    env = {**os.environ, "PYTHONPATH": str(HERE / "shim"), "PYTHONDONTWRITEBYTECODE": "1"}
    process = subprocess.Popen([sys.executable, *alias, str(HERE / "seeded.py"),
                                *EXAMPLES[name]], cwd=cwd, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    return process, cwd


def _finish(process: subprocess.Popen) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=900)
    return process.returncode, _PID.sub("", out), err


def _regression_agrees(ours: str, theirs: str) -> bool:
    """The regression example trains until its loss is below 1e-3, a number of steps that
    rounding decides; the target polynomial (seeded draws) is the same, and so, to 0.3, is the
    polynomial learned."""
    ours_lines, theirs_lines = ours.splitlines(), theirs.splitlines()
    if ours_lines[2] != theirs_lines[2] or not ours_lines[0].startswith("Loss: "):
        return False
    learned = [[float(n) for n in re.findall(r"[-+]\d+\.\d+", lines[1])]
               for lines in (ours_lines, theirs_lines)]
    return len(learned[0]) == 5 and all(abs(a - b) <= 0.3 for a, b in zip(*learned))


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_prints_what_it_prints_on_torch(name, tmp_path):
    runs = [_start(name, tmp_path, on_chainrule) for on_chainrule in (False, True)]
    (their_code, theirs, their_err), (our_code, ours, our_err) = (_finish(p) for p, _ in runs)
    assert their_code == 0, their_err[-3000:]
    if name in DIFFERENT:
        assert our_code != 0 and "never pickles" in our_err, our_err[-3000:]
        return
    assert our_code == 0, our_err[-3000:]
    if name == "regression":
        assert _regression_agrees(ours, theirs), (ours, theirs)
    else:
        assert _same_text(ours, theirs), (ours, theirs)
