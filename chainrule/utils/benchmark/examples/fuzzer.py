"""Timer and Fuzzer: ``x + y`` timed on 250 fuzzed pairs of tensors, the cheapest and dearest
per element printed:

$ python -m chainrule.utils.benchmark.examples.fuzzer

(PyTorch 2.13's FuzzedParameter refuses the dims' custom distribution, and chainrule's, which
draws as PyTorch's, refuses it as well.)
"""

from __future__ import annotations

import sys

from .. import FuzzedParameter, FuzzedTensor, Fuzzer, Timer


def main() -> None:
    add_fuzzer = Fuzzer(
        parameters=[
            [FuzzedParameter(name=f"k{i}", minval=16, maxval=16 * 1024,
                             distribution="loguniform") for i in range(3)],
            FuzzedParameter(name="d", distribution={2: 0.6, 3: 0.4}),
        ],
        tensors=[[FuzzedTensor(name=name, size=("k0", "k1", "k2"), dim_parameter="d",
                               probability_contiguous=0.75, min_elements=64 * 1024,
                               max_elements=128 * 1024) for name in ("x", "y")]],
        seed=0)
    n = 250
    measurements = []
    for i, (tensors, properties, _) in enumerate(add_fuzzer.take(n=n)):
        x, y = tensors["x"], tensors["y"]
        shape = ", ".join(f"{s:>4}" for s in x.shape)
        layouts = [f"{'contiguous' if t.is_contiguous() else str(properties[name]['order']):<12}"
                   for name, t in (("x", x), ("y", y))]
        description = f"{x.numel():>7} | {shape:<16} | {layouts[0]} | {layouts[1]} | "
        measurement = Timer(stmt="x + y", globals=tensors,
                            description=description).blocked_autorange(min_run_time=0.1)
        measurement.metadata = {"numel": x.numel()}
        measurements.append(measurement)
        print(f"\r{i + 1} / {n}", end="")
        sys.stdout.flush()
    print()
    print(f"Average attempts per valid config: {1. / (1. - add_fuzzer.rejection_rate):.1f}")

    def per_element(m):
        return m.median / m.metadata["numel"]

    measurements.sort(key=per_element)
    header = f"{{:>6}}{' ' * 19}Size    Shape{' ' * 13}X order        Y order\n{'-' * 80}"
    for title, chosen in (("Best:", measurements[:15]), ("Worst:", measurements[-15:])):
        print(("\n" if title == "Worst:" else "") + header.format(title))
        for m in chosen:
            print(f"{per_element(m) * 1e9:>4.1f} ns / element     {m.description}")


if __name__ == "__main__":
    main()
