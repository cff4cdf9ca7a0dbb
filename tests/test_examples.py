"""The examples run as a user runs them: the digits demo (short), the VAE (short) and the
tutorial."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import chainrule

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


@pytest.fixture(scope="module")
def digits_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path_factory.mktemp("digits")
    return run("-m", "chainrule.examples.digits", "--epochs", "1", "--out", str(out)), out


def test_digits_prints_epochs_and_the_accuracy_line_last(digits_run):
    result, _ = digits_run
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert any(line.startswith("epoch  1/1  loss ") for line in lines)
    last = lines[-1]
    assert last.startswith("test accuracy: ")
    accuracy = float(last.split(": ")[1])
    assert 0.3 < accuracy <= 1.0  # one annealed epoch is far above chance (0.1)


def test_digits_default_run_reaches_the_promised_accuracy(tmp_path):
    result = run("-m", "chainrule.examples.digits", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert float(last.split(": ")[1]) >= 0.97


def test_digits_writes_files_that_parse(digits_run):
    result, out = digits_run
    assert result.returncode == 0, result.stderr
    state = chainrule.load(out / "model.safetensors")
    assert set(state) == {"features.0.weight", "features.0.bias", "features.3.weight",
                          "features.3.bias", "classifier.1.weight", "classifier.1.bias",
                          "classifier.3.weight", "classifier.3.bias"}
    assert state["features.0.weight"].shape == (32, 1, 3, 3)
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = ET.parse(out / "graph.svg").getroot()
    assert svg.tag.endswith("svg")
    text = (out / "graph.svg").read_text()
    assert "features.0.weight" in text and "Backward" in text
    history = json.loads((out / "history.json").read_text())
    assert [h["epoch"] for h in history] == [1]


def test_digits_seeded_runs_are_reproducible(digits_run, tmp_path):
    first, out = digits_run
    again = run("-m", "chainrule.examples.digits", "--epochs", "1", "--out", str(tmp_path))
    assert again.returncode == 0, again.stderr
    keep = ("train_loss", "train_accuracy", "test_loss", "test_accuracy")
    h1 = json.loads((out / "history.json").read_text())
    h2 = json.loads((tmp_path / "history.json").read_text())
    assert [{k: h[k] for k in keep} for h in h1] == [{k: h[k] for k in keep} for h in h2]


def test_digits_compiled_run_is_the_eager_run(digits_run, tmp_path):
    """--compile (the default) replays the model's kernels: the same numbers as --no-compile,
    and the output says how many calls were replayed and how fast a step is either way."""
    compiled, out = digits_run
    assert compiled.returncode == 0, compiled.stderr
    summary = [line for line in compiled.stdout.splitlines() if line.startswith("compile: ")]
    assert len(summary) == 1 and " replayed, " in summary[0] and "ms replayed (" in summary[0]
    assert int(summary[0].split(", ")[1].split()[0]) > 0  # calls replayed
    eager = run("-m", "chainrule.examples.digits", "--epochs", "1", "--no-compile",
                "--out", str(tmp_path))
    assert eager.returncode == 0, eager.stderr
    assert not any(line.startswith("compile: ") for line in eager.stdout.splitlines())
    keep = ("train_loss", "train_accuracy", "test_loss", "test_accuracy")
    h1 = json.loads((out / "history.json").read_text())
    h2 = json.loads((tmp_path / "history.json").read_text())
    assert [{k: h[k] for k in keep} for h in h1] == [{k: h[k] for k in keep} for h in h2]


def test_digits_help_explains_the_options():
    result = run("-m", "chainrule.examples.digits", "--help")
    assert result.returncode == 0
    for option in ("--epochs", "--batch-size", "--lr", "--seed", "--optimizer", "--out",
                   "--compile", "--no-compile"):
        assert option in result.stdout


@pytest.fixture(scope="module")
def vae_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    out = tmp_path_factory.mktemp("vae")
    return run("-m", "chainrule.examples.vae", "--epochs", "2", "--out", str(out)), out


def test_vae_prints_epochs_and_its_loss_falls(vae_run):
    result, out = vae_run
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert any(line.startswith("epoch  1/2  train -ELBO ") for line in lines)
    assert any(line.startswith("epoch  2/2  train -ELBO ") for line in lines)
    assert lines[-1].startswith("test ELBO: ")
    history = json.loads((out / "history.json").read_text())
    assert [h["epoch"] for h in history] == [1, 2]
    first, second = history
    assert second["train_neg_elbo"] < first["train_neg_elbo"]
    assert second["test_neg_elbo"] < first["test_neg_elbo"]
    # Below the untrained decoder's 64 * log 2 = 44.4 nats per image (every pixel at 1/2).
    assert second["test_neg_elbo"] < 40
    for h in history:
        assert h["test_kl"] >= 0
        assert abs(h["test_reconstruction"] + h["test_kl"] - h["test_neg_elbo"]) < 1e-3
    assert float(lines[-1].split()[2]) == pytest.approx(-second["test_neg_elbo"], abs=1e-3)


def test_vae_writes_files_that_parse(vae_run):
    result, out = vae_run
    assert result.returncode == 0, result.stderr
    state = chainrule.load(out / "model.safetensors")
    assert {k: tuple(v.shape) for k, v in state.items()} == {
        "encoder.0.weight": (128, 64), "encoder.0.bias": (128,),
        "encoder.2.weight": (8, 128), "encoder.2.bias": (8,),
        "decoder.0.weight": (128, 4), "decoder.0.bias": (128,),
        "decoder.2.weight": (64, 128), "decoder.2.bias": (64,)}
    image = pytest.importorskip("matplotlib.image")
    for name in ("curves.png", "samples.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        pixels = image.imread(out / name)
        assert pixels.ndim == 3 and pixels.shape[0] > 100 and pixels.shape[1] > 300
    assert not [p.name for p in out.iterdir() if p.name.startswith(".")]  # no temporaries left


def test_vae_seeded_runs_are_reproducible(vae_run, tmp_path):
    first, out = vae_run
    again = run("-m", "chainrule.examples.vae", "--epochs", "2", "--out", str(tmp_path))
    assert again.returncode == 0, again.stderr
    h1 = json.loads((out / "history.json").read_text())
    h2 = json.loads((tmp_path / "history.json").read_text())
    for h in h1 + h2:
        del h["seconds"]
    assert h1 == h2
    assert (out / "model.safetensors").read_bytes() == (tmp_path / "model.safetensors").read_bytes()


def test_vae_default_run_and_help(tmp_path):
    result = run("-m", "chainrule.examples.vae", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert float(result.stdout.strip().splitlines()[-1].split()[2]) > -25.5
    result = run("-m", "chainrule.examples.vae", "--help")
    assert result.returncode == 0
    for option in ("--epochs", "--latent", "--seed", "--out"):
        assert option in result.stdout


def test_tutorial_example_prints_pytorchs_values():
    result = run("-m", "chainrule.examples.tutorial")
    assert result.returncode == 0, result.stderr
    for expected in ("tensor(4.)", "tensor(-2.6146, grad_fn=<MulBackward0>)", "tensor(10.8016)",
                     "tensor([0., 1., 0.])"):
        assert expected in result.stdout


def test_readme_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quickstart", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    commands = block.strip().splitlines()
    assert len(commands) == 2
    assert commands[1] in (ROOT / ".ci" / "run").read_text().splitlines()
