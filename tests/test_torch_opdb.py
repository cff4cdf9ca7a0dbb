"""PyTorch's operator database (``op_db``) run on chainrule, one test per OpInfo.

Each OpInfo whose operator chainrule has (found by name: ``torch.X`` -> ``chainrule.X``,
``nn.functional``, ``linalg``, ``special``, ``fft``, ``masked``, ``signal.windows``; Tensor
methods; PyTorch's lambdas rerun with their torch modules replaced by chainrule's) runs on its
first CPU samples (4 for float64 and complex128, 2 for float32 and for the first integer dtype
it lists, 1 for complex64: the cap bounds the file's runtime): the
outputs, the vector-Jacobian product with a random cotangent, and the Jacobian-vector product
where the OpInfo says forward mode is supported, all against torch. Outputs that change with the
seed on torch (random ops) are compared by dtype and shape only. float32 (and linalg/fft, which
are ill-conditioned on some samples) compare with tolerances that allow for other BLAS kernels.

An OpInfo without a counterpart is listed with its reason under a "Not provided" heading of
docs/differences.md (the list the namespace test reads, for torch's public names) or under the
heading "PyTorch's operator database" (internal kernels); one whose samples chainrule cannot
match yet is listed there as "present but differs" with its reason. A listed OpInfo that
chainrule provides and matches fails here, so the lists can only shrink.
"""

from __future__ import annotations

import pytest
from _opdb_run import counterpart, key, listed, load_op_db, run_op
from _surface import excluded, not_provided

OPS = load_op_db()
LISTED = listed()
NOT_PROVIDED = not_provided()  # the namespace test's list: a missing name is listed once
DIFFERS = "present but differs"


def test_the_database_is_pytorchs():
    assert len(OPS) > 600
    assert len({key(op) for op in OPS}) == len(OPS)


def test_listed_entries_name_opinfos():
    assert sorted(set(LISTED) - {key(op) for op in OPS}) == []


@pytest.mark.parametrize("op", OPS, ids=key)
def test_opinfo(op):
    fn = counterpart(op)
    entry = LISTED.get(key(op))
    if fn is None:
        assert (entry is not None and not entry.startswith(DIFFERS)) \
            or excluded(op.name, NOT_PROVIDED), \
            f"{key(op)}: no counterpart in chainrule and not listed in docs/differences.md"
        return
    failures = run_op(op, fn)
    if entry is not None and entry.startswith(DIFFERS):
        assert failures, f"{key(op)} matches PyTorch now: remove it from docs/differences.md"
        return
    assert entry is None, f"{key(op)} is provided: remove it from docs/differences.md"
    assert failures == [], "\n".join(failures)
