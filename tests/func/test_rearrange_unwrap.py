"""torch.func.rearrange and torch.func.debug_unwrap against torch's: every pattern form (groups,
ellipsis, anonymous axes of size one on either side, stacking a list), the values, shapes and
whether the result is a view, gradients, and the parse and binding errors; the tensors vmap
hands a function, unwrapped."""

import warnings

import numpy as np
import pytest
import torch
from torch.func import debug_unwrap as torch_unwrap
from torch.func import rearrange as torch_rearrange

import chainrule
from chainrule._functorch.einops import rearrange as functorch_rearrange
from chainrule.func import debug_unwrap, rearrange

X = np.arange(24.0).reshape(2, 3, 4)

PATTERNS = [
    ("a b c -> a b c", {}), ("a b c -> c b a", {}), ("a b c -> c (a b)", {}),
    ("a b c -> (a b c)", {}), ("a b c -> a (c b)", {}), ("(a b) c d -> a b c d", {"a": 1}),
    ("a (b1 b2) c -> b1 a b2 c", {"b1": 3}), ("a (b1 b2) c -> b1 a b2 c", {"b1": 3, "b2": 1}),
    ("a (b c) d -> a b c d", {"b": 1}), ("a b c -> a b 1 c 1", {}), ("a b c -> (a 1 b) c", {}),
    ("a b c -> a () b c", {}), ("a (1 b) c -> a b c", {}), ("a b c -> a (b c 1)", {}),
    ("a 1 c -> a c", {}), ("a () c -> a c", {}), ("1 b c -> b c", {}), ("a b (c) -> a b c", {}),
    ("... c -> (...) c", {}), ("a ... -> ... a", {}), ("a b c ... -> c b a ...", {}),
    ("a ... c -> c ... a", {}), ("... -> ...", {}), ("a b c d ... -> a b c d ...", {}),
]

ERRORS = [
    ("(a1 a2) b c -> a1 a2 b c", {}), ("a (b1 b2) c -> b1 a b2 c", {"b1": 5}),
    ("a (b1 b2) c -> b1 a b2 c", {"b1": 2, "b2": 2}), ("a b c -> a b c", {"a": 5}),
    ("a (b1 b2 b3) c -> b1 a b2 c b3", {"b1": 3}),
    ("a (b1 b2) (c1 c2) -> b1 a b2 c1 c2", {"b1": 3, "c2": 5}),
    ("a (b1 b2) c -> b1 a b2 c", {"b1": 0}), ("a (b1 b2) c -> b1 a b2 c", {"b1": -1}),
    ("a b c -> a b", {}), ("a b c -> a b c d", {}), ("a b c -> a b c", {"d": 3}),
    ("a b c -> a (b c)", {"b": 3.0}), ("a b 2 -> a b", {}), ("a b c -> a b c 3", {}),
    ("a b ((c)) -> a b c", {}), ("a b c) -> a b c", {}), ("a b (c -> a b c", {}),
    ("a b c. -> a b c", {}), ("a b c -> a b c -> a", {}), ("a b c", {}), ("a b b -> a b", {}),
    ("a b _c -> a b _c", {}), ("a b 1c -> a b 1c", {}), ("a b c! -> a b c!", {}),
    ("a b c -> ... a b c", {}), ("a (... b) -> a b", {}), ("a b 0 -> a b", {}),
    ("a b c -> a b c", {"\u2026": 2}), ("a ...... -> a", {}), ("... a b c d -> a ...", {}),
    ("a b -> b a", {}), ("a b c d -> a b c d", {}),
]


def run(lib, fn, pattern, lengths, values=X):
    try:
        out = fn(lib.tensor(values), pattern, **lengths)
    except Exception as e:  # noqa: BLE001  (compared with torch's)
        message = str(e)
        if "one side" in message or "not found" in message:  # a set: its order varies
            head, _, names = message.partition(": ")
            message = (head, sorted(eval(names)))
        return type(e).__name__, message
    return tuple(out.shape), out.flatten().tolist(), out.is_contiguous()


@pytest.mark.parametrize("pattern,lengths", PATTERNS + ERRORS)
def test_rearrange_like_torch(pattern, lengths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert run(chainrule, rearrange, pattern, lengths) == \
            run(torch, torch_rearrange, pattern, lengths)


def test_rearrange_of_zero_dims_and_empty_tensors_and_lists():
    for pattern in (" -> ", " -> 1 1"):
        assert run(chainrule, rearrange, pattern, {}, np.array(5.0)) == \
            run(torch, torch_rearrange, pattern, {}, np.array(5.0))
    empty = np.zeros((2, 0, 3))
    assert run(chainrule, rearrange, "a b c -> c (a b)", {}, empty) == \
        run(torch, torch_rearrange, "a b c -> c (a b)", {}, empty)
    pieces = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    theirs = torch_rearrange([torch.tensor(p) for p in pieces], "n a -> a n")
    ours = rearrange(tuple(chainrule.tensor(p) for p in pieces), "n a -> a n")
    assert ours.tolist() == theirs.tolist()
    assert functorch_rearrange(chainrule.tensor(X), "a b c -> c b a").tolist() == \
        theirs.new_tensor(X).permute(2, 1, 0).tolist()


def test_rearrange_gradients():
    weights = np.random.default_rng(0).standard_normal((4, 6))
    grads = []
    for lib, fn in ((torch, torch_rearrange), (chainrule, rearrange)):
        x = lib.tensor(X, requires_grad=True)
        y = fn(x, "a (b1 b2) c -> c (b2 a) b1", b1=3)
        (fn(y, "c n b -> c (n b)") * lib.tensor(weights)).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1]


def test_rearrange_warns_of_keyword_and_axis_names():
    def caught(fn, pattern):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            fn(torch.tensor(X) if fn is torch_rearrange else chainrule.tensor(X), pattern)
        return [(w.category, str(w.message)) for w in seen]
    for pattern in ("a b for -> a b for", "a b axis -> axis a b"):
        assert caught(rearrange, pattern) == caught(torch_rearrange, pattern)


def test_debug_unwrap():
    def observe(lib, unwrap):
        seen = []

        def look(t, recurse=True):
            u = unwrap(t, recurse=recurse)
            # one level unwrapped from two is still batched: its values stay inside
            seen.append((tuple(u.shape), u.tolist() if recurse else None, u is t))
            return t * 2

        x = lib.arange(6.0).reshape(2, 3)
        lib.func.vmap(look)(x)
        lib.func.vmap(lib.func.vmap(look))(x)
        lib.func.vmap(lib.func.vmap(lambda t: look(t, recurse=False)))(x)
        lib.func.vmap(lambda t: look(t * 3))(x)
        seen.append(unwrap(x) is x)
        return seen
    assert observe(chainrule, debug_unwrap) == observe(torch, torch_unwrap)


def test_debug_unwrap_inside_grad_has_the_values():
    def values(lib, unwrap):
        seen = []

        def f(t):
            seen.append(unwrap(t * 2).tolist())
            return (t * t).sum()
        lib.func.grad(f)(lib.tensor([1.0, 2.0, 3.0]))
        return seen
    assert values(chainrule, debug_unwrap) == values(torch, torch_unwrap)
