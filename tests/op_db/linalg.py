"""Linear algebra rows: matmul in every 1-D, 2-D and batched broadcast form; mm."""

from __future__ import annotations

from ._spec import S, method, op

# torch's grad_fn for the other forms names the last step of its decomposition
# (SqueezeBackward4, UnsafeViewBackward0, CloneBackward0), not the product: not comparable.
MATMUL = (
    S((3,), (3,)),  # dot
    S((2, 3), (3,)),  # matrix @ vector
    S((3,), (3, 2), grad_fn=False),  # vector @ matrix
    S((2, 3), (3, 4)),  # mm
    S((2, 2, 3), (2, 3, 2), grad_fn=False),  # bmm
    S((2, 2, 3), (3, 2), grad_fn=False),  # batch @ matrix
    S((2, 3), (2, 3, 2), grad_fn=False),  # matrix @ batch
    S((2, 2, 3), (3,), grad_fn=False),  # batch @ vector
    S((3,), (2, 3, 2), grad_fn=False),  # vector @ batch
    S((1, 2, 3), (2, 3, 2), grad_fn=False),  # batch dims broadcast 1 -> 2
    S((2, 1, 2, 2), (3, 2, 2), grad_fn=False),  # 4-D @ 3-D, batch dims broadcast
    S((1, 3), (3, 1)),  # 1x1 result
)
MATMUL_RECORDS = ("dot", "mv", "vm", "mm", "matmul")

ROWS = [
    op("matmul", MATMUL, records=MATMUL_RECORDS),
    method(
        "Tensor.__matmul__", lambda x, y: x @ y, MATMUL[:4] + MATMUL[5:6], records=MATMUL_RECORDS
    ),
    # Reached when the left operand is not a tensor; called directly here.
    method(
        "Tensor.__rmatmul__", lambda x, y: y.__rmatmul__(x), MATMUL[:4], records=MATMUL_RECORDS[:4]
    ),
    op("mm", (S((2, 3), (3, 4)), S((1, 3), (3, 1)), S((4, 1), (1, 2)))),
]
