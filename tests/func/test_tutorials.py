"""The torch.func tutorial programs in chainrule/examples, run with chainrule and with torch:
the same results (values, shapes, dtypes, requires_grad), and each example's main() prints."""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

import chainrule

EXAMPLES = ["per_sample_grads", "ensembling", "jacobians", "ntk"]


def _run(module, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ops still without a batching rule warn; fine here
        return module.run(lib)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_gives_torch_results(like_torch, name):
    module = importlib.import_module(f"chainrule.examples.{name}")
    like_torch(_run(module, chainrule), _run(module, torch), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_main_prints_agreement(capsys, name):
    module = importlib.import_module(f"chainrule.examples.{name}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module.main()
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) >= 3
    differences = [float(word) for word in (line.split()[-1] for line in lines)
                   if _is_number(word)]
    assert differences and max(differences) < 1e-12


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


def test_per_sample_gradients_equal_the_loop():
    result = _run(importlib.import_module("chainrule.examples.per_sample_grads"), chainrule)
    for name, g in result["vmap"].items():
        assert (g - result["loop"][name]).abs().max().item() < 1e-12, name


def test_ensemble_vmap_equals_the_loop():
    result = _run(importlib.import_module("chainrule.examples.ensembling"), chainrule)
    for case in ("different", "same"):
        assert (result[f"vmap_{case}"] - result[f"loop_{case}"]).abs().max().item() < 1e-12


def test_ntk_two_ways_agree():
    result = _run(importlib.import_module("chainrule.examples.ntk"), chainrule)
    for compute in ("full", "trace", "diagonal"):
        diff = result[f"contraction_{compute}"] - result[f"ntk_vps_{compute}"]
        assert diff.abs().max().item() < 1e-12


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_runs_as_a_script(name):
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-W", "ignore", "-m", f"chainrule.examples.{name}"],
                            capture_output=True, text=True, cwd=root, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip()
