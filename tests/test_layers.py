"""The package's layers (docs/design.md): every import points down, checked by import-linter; the
root package only re-exports, so the package works with the root's namespace left empty."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "chainrule"


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_imports_point_down_the_layers():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    proc = subprocess.run([exe, "--config", str(ROOT / "pyproject.toml")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout
    assert "The root on top" in proc.stdout  # the contract below is one of those checked


def test_the_contract_puts_the_root_on_top():
    config = (ROOT / "pyproject.toml").read_text()
    contract = config[config.index('name = "The root on top'):]
    contract = contract[:contract.index("[[tool.importlinter.contracts]]")]
    for line in ('type = "forbidden"', 'source_modules = ["chainrule.**"]',
                 'forbidden_modules = ["chainrule"]', "as_packages = false"):
        assert line in contract.splitlines()
    # the only imports of the root it lets pass: the programs' and torch.overrides' tables
    ignored = re.findall(r'^    "([\w.*]+) -> chainrule",$', contract, re.M)
    assert sorted(ignored) == ["chainrule.examples.**", "chainrule.overrides",
                               "chainrule.utils.benchmark.examples.**"]


def test_no_module_imports_the_root_tensor_function():
    # `from .. import tensor` names the root's tensor() (import-linter reads it as the module)
    found = []
    for path in PACKAGE.rglob("*.py"):
        source = path.read_text()
        if "tensor" not in source:
            continue
        package = path.relative_to(ROOT).with_suffix("").parts[:-1]
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and node.level and not node.module:
                if len(package) - (node.level - 1) == 1 and any(
                        a.name == "tensor" for a in node.names):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == []


def _root_import_order() -> list[str]:
    """The submodules chainrule/__init__.py imports, in its order."""
    order = []
    for node in ast.parse((PACKAGE / "__init__.py").read_text()).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module] if node.module else [a.name for a in node.names]
            order += [n.split(".")[0] for n in names if n.split(".")[0] not in order]
    return order


def test_the_package_works_with_an_empty_root():
    # chainrule/__init__.py is replaced by an empty package: every submodule imports and the
    # main paths run, so nothing below reads the root.
    children = sorted(p.stem if p.suffix == ".py" else p.name for p in PACKAGE.iterdir()
                      if (p.suffix == ".py" or (p / "__init__.py").exists())
                      and p.name != "__init__.py" and p.name != "examples")
    proc = _run(f"""
        import importlib, sys, types
        root = types.ModuleType("chainrule")
        root.__path__ = [{str(PACKAGE)!r}]
        sys.modules["chainrule"] = root
        for name in {_root_import_order()!r} + {children!r}:
            importlib.import_module("chainrule." + name)

        from chainrule import distributions, nn, optim
        from chainrule.utils.data import DataLoader, TensorDataset
        from chainrule._creation import manual_seed
        manual_seed(0)
        x = distributions.Normal(0.0, 1.0).sample((8, 3))
        model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
        opt = optim.SGD(model.parameters(), lr=0.1)
        for (xb,) in DataLoader(TensorDataset(x), batch_size=4, shuffle=True):
            opt.zero_grad()
            model(xb).pow(2).mean().backward()
            opt.step()
        assert not [k for k in vars(root) if k in ("zeros", "Tensor", "cat", "float32")]
        print("ok")
    """)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


def test_each_subpackage_imports_first_in_a_fresh_process():
    # Python runs chainrule/__init__.py before any submodule, so importing a subpackage first
    # runs the root's own order; each one then works. (The empty-root test above is the
    # stricter check: nothing below the root reads it.)
    proc = _run("""
        import importlib, sys
        checks = {
            "chainrule.nn": "m.Linear(2, 3)(torch.ones(4, 2)).sum().backward()",
            "chainrule.optim": "m.SGD([torch.zeros(2, requires_grad=True)], lr=1.0).step()",
            "chainrule.distributions": "m.Normal(0.0, 1.0).log_prob(torch.zeros(2))",
            "chainrule.utils.data": "list(m.DataLoader(list(range(5)), batch_size=2))",
        }
        for name, check in checks.items():
            for loaded in [k for k in sys.modules if k.partition(".")[0] == "chainrule"]:
                del sys.modules[loaded]
            m = importlib.import_module(name)
            torch = sys.modules["chainrule"]
            eval(check)
        print("ok")
    """)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]
