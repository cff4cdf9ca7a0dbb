"""Upstream test files vendored under */upstream run only through the ecosystem tests (a pytest
subprocess with chainrule standing for torch), never as the project's own tests."""

collect_ignore_glob = ["*/upstream", "examples/shim"]
