"""einops 0.8.2's own tests (shipped in its wheel: ``einops.tests``) with the torch backend, on
chainrule: every test that passes on torch 2.13 passes."""

from __future__ import annotations

from pathlib import Path

from ._suites import run_suite

# On torch 2.13, each test seeded as here: 61 passed and 5 skipped (backends not installed, tests
# einops skips itself).
TORCH_PASSED = 61
DIFFERENT: dict = {}  # node id -> why it fails on chainrule (none)


def test_einops_suite_passes_as_on_torch(tmp_path):
    import einops

    package = Path(einops.__file__).parent
    outcome = run_suite(["--pyargs", "einops.tests"], cwd=package.parent, tmp_path=tmp_path,
                        env={"EINOPS_TEST_BACKENDS": "torch"}, seeded=True)
    assert einops.__version__ == "0.8.2"
    assert outcome.ids("FAILED") | outcome.ids("ERROR") == set(DIFFERENT), outcome.output
    assert outcome.counts.get("passed") == TORCH_PASSED - len(DIFFERENT), outcome.output
    assert outcome.counts.get("skipped") == 5
