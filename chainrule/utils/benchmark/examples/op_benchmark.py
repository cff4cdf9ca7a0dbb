"""Timer and the op fuzzers: ops timed on float32 and int32 versions of the same fuzzed
tensors, the largest and smallest differences printed:

$ python -m chainrule.utils.benchmark.examples.op_benchmark

(The op fuzzers cannot be made on PyTorch 2.13, whose FuzzedParameter refuses their custom
distributions; chainrule's refuses them too.)
"""

from __future__ import annotations

import operator

import numpy as np

from .... import float32, int32
from .. import Timer
from ..op_fuzzers.binary import BinaryOpFuzzer
from ..op_fuzzers.unary import UnaryOpFuzzer

_MEASURE_TIME = 1.0


def assert_dicts_equal(dict_0, dict_1) -> None:
    """Compare two dicts whose values may be NumPy arrays (which ``==`` cannot compare as a
    whole), as PyTorch's example does: it refuses only when every value other than ``dtype``
    differs everywhere."""
    if set(dict_0.keys()) != set(dict_0.keys()):
        raise AssertionError("dicts must have the same keys")
    if all(np.all(v != dict_1[k]) for k, v in dict_0.items() if k != "dtype"):
        raise AssertionError("dict values differ for keys other than 'dtype'")


def _shape(shape) -> str:
    return "(" + ", ".join(f"2 ** {int(np.log2(s))}" if s > 1 and 2 ** int(np.log2(s)) == s
                           else str(s) for s in shape) + ")"


def run(n, stmt, fuzzer_cls) -> None:
    """Time ``stmt`` on ``n`` float32 draws of ``fuzzer_cls`` and their int32 twins."""
    float_draws = fuzzer_cls(seed=0, dtype=float32).take(n)
    int_draws = fuzzer_cls(seed=0, dtype=int32).take(n)
    raw = []
    for i, (floats, ints) in enumerate(zip(float_draws, int_draws, strict=True)):
        float_tensors, float_properties, float_params = floats
        int_tensors, int_properties, int_params = ints
        # one seed: the same sizes and strides in both draws
        assert_dicts_equal(float_params, int_params)
        assert_dicts_equal(float_properties["x"], int_properties["x"])
        timed = [Timer(stmt, globals=tensors).blocked_autorange(min_run_time=_MEASURE_TIME)
                 for tensors in (float_tensors, int_tensors)]
        descriptions = []
        for name, t in float_tensors.items():
            order = float_properties[name]["order"]
            steps = float_properties[name]["steps"]
            descriptions.append((name, _shape(t.shape),
                                 "" if all(order == np.arange(len(order))) else str(tuple(order)),
                                 str(steps) if sum(steps) > len(steps) else ""))
        raw.append((*timed, descriptions))
        print(f"\r{i + 1} / {n}", end="")
    print()

    results = []
    for float_m, int_m, descriptions in raw:
        t_float, t_int = float_m.median * 1e6, int_m.median * 1e6
        results.append((t_float, t_int, abs(t_float - t_int) / (t_float + t_int) * 2,
                        descriptions))
    widths = [max((len(d[j]) for r in results for d in r[3]), default=0) for j in range(4)]
    results.sort(key=operator.itemgetter(2))
    print(f"stmt: {stmt}")
    print(f" diff    faster{'':>17}{' ' * widths[0]} ", end="")
    print(f"{'shape'.ljust(widths[1])}{'':>16}{'order'.ljust(widths[2])}", end="")
    print(f"          steps\n{'-' * 100}")
    for chosen, spacer in ((results[:10], "..."), (results[-10:], "")):
        for t_float, t_int, rel_diff, descriptions in chosen:
            first = f"{rel_diff * 100:>4.1f}%    {'int' if t_int < t_float else 'float':<20}"
            for j, (name, shape, order, steps) in enumerate(descriptions):
                lead = first if j == 0 else "".ljust(len(first))
                print(f"{lead} {f'{name}:'.ljust(widths[0] + 1)}  "
                      f"{shape.ljust(widths[1] + 10)}|     {order.ljust(widths[2])}      |   "
                      f"{steps}")
        print(spacer)


def main() -> None:
    run(n=100, stmt="torch.median(x, dim=0)", fuzzer_cls=UnaryOpFuzzer)
    run(n=100, stmt="torch.square(x)", fuzzer_cls=UnaryOpFuzzer)
    run(n=100, stmt="x + y", fuzzer_cls=BinaryOpFuzzer)


if __name__ == "__main__":
    main()
