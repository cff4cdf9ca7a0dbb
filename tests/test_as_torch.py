"""torch standing for chainrule (chainrule.as_torch): the command, the call and the pytest plugin.

Each case runs in a fresh interpreter: this test process has the real torch imported (the oracle
of the other tests), which as_torch rightly refuses to mix with.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _python(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def test_install_makes_every_torch_module_chainrules():
    code = textwrap.dedent("""
        import chainrule.as_torch
        chainrule.as_torch.install()
        import torch, torch.nn as nn, torch.nn.functional as F, functorch
        import torch.nn.modules.conv, torch.utils.data, torch.testing, torch.linalg
        from torch.nn.modules.loss import _Loss
        from torch.optim.optimizer import required
        import chainrule
        assert torch is chainrule and nn is chainrule.nn and F is chainrule.nn.functional
        assert torch.nn.modules.conv.Conv2d is chainrule.nn.Conv2d
        assert functorch.vmap is not None and _Loss is chainrule.nn.modules.loss._Loss
        assert type(torch.ones(1)).__module__ == "torch"
        print(torch.__version__, torch.tensor([1.0, 2.0]).sum())
    """)
    result = _python("-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("2.13.0+chainrule")
    assert result.stdout.rstrip().endswith("tensor(3.)")


def test_a_missing_module_is_pythons_error():
    code = textwrap.dedent("""
        import chainrule.as_torch
        chainrule.as_torch.install()
        try:
            import torch.no_such_module
        except ModuleNotFoundError as e:
            print(e.name)
    """)
    result = _python("-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "torch.no_such_module"


def test_installing_after_the_real_torch_refuses():
    code = textwrap.dedent("""
        import torch
        import chainrule.as_torch
        try:
            chainrule.as_torch.install()
        except RuntimeError as e:
            print("refused:", "already imported" in str(e))
        print(chainrule.as_torch.is_installed())
    """)
    result = _python("-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["refused:", "True", "False"]


def test_uninstall_forgets_the_aliases():
    code = textwrap.dedent("""
        import sys, chainrule.as_torch
        chainrule.as_torch.install()
        import torch.nn
        chainrule.as_torch.uninstall()
        print(chainrule.as_torch.is_installed(), "torch" in sys.modules, "torch.nn" in sys.modules)
    """)
    result = _python("-c", code)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False", "False"]


def test_the_command_runs_a_script_with_its_arguments(tmp_path):
    (tmp_path / "helper.py").write_text("SCALE = 3\n")
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import sys
        import torch
        from helper import SCALE   # the script's own directory is importable, as python's
        w = torch.ones(2, requires_grad=True)
        (w * SCALE).sum().backward()
        print(sys.argv[1:], w.grad, __name__)
    """))
    result = _python("-m", "chainrule.as_torch", str(script), "--epochs", "2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "['--epochs', '2'] tensor([3., 3.]) __main__"


def test_the_command_runs_a_module(tmp_path):
    (tmp_path / "job.py").write_text(
        "import sys, torch\nprint(torch.zeros(2).shape, sys.argv[0].endswith('job.py'), "
        "sys.argv[1:], __name__)\n")
    result = subprocess.run([sys.executable, "-m", "chainrule.as_torch", "-m", "job", "x"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300,
                            env={"PYTHONPATH": str(tmp_path), "PATH": ""})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "torch.Size([2]) True ['x'] __main__"


def test_the_command_without_a_program_prints_its_usage():
    result = _python("-m", "chainrule.as_torch")
    assert result.returncode == 2 and "usage: python -m chainrule.as_torch" in result.stdout


def test_the_pytest_plugin_runs_a_suite_on_chainrule(tmp_path):
    (tmp_path / "conftest.py").write_text("import torch\nSEEN = torch.__name__\n")
    (tmp_path / "test_lib.py").write_text(textwrap.dedent("""
        import torch
        import conftest

        def test_runs_on_chainrule():
            assert conftest.SEEN == "chainrule" and torch.__name__ == "chainrule"
            x = torch.tensor([1.0, 2.0], requires_grad=True)
            (x ** 2).sum().backward()
            torch.testing.assert_close(x.grad, torch.tensor([2.0, 4.0]))
    """))
    result = _python("-m", "pytest", "-q", "-p", "chainrule.as_torch", "-p", "no:cacheprovider",
                     str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
