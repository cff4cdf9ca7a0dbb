"""Microbenchmarks of chainrule.fft on fuzzed tensors (SpectralOpFuzzer):

$ python -m chainrule.utils.benchmark.examples.spectral_ops_fuzz_test --samples 10 -o out.csv

(The spectral fuzzer cannot be made on PyTorch 2.13, whose FuzzedParameter refuses its custom
distributions; chainrule's refuses them too.)
"""

from __future__ import annotations

from argparse import ArgumentParser
from collections import namedtuple
from collections.abc import Iterable

from .... import complex64, fft, float32
from .. import Compare, Timer
from ..op_fuzzers.spectral import SpectralOpFuzzer


def _dim_options(ndim: int) -> list:
    """The dims to transform over for a tensor of ``ndim`` dims (None: all)."""
    options = {1: [None], 2: [0, 1, None], 3: [0, 1, 2, (0, 1), (0, 2), None]}
    if ndim not in options:
        raise ValueError(f"Expected ndim in range 1-3, got {ndim}")
    return options[ndim]


def run_benchmark(name: str, function: object, dtype, seed: int, device: str, samples: int,
                  probability_regular: float) -> list:
    """Measurements of ``function(x, dim=dim)`` on ``samples`` fuzzed tensors, over every dim
    option and 1, 4 and 16 threads (1 on CUDA)."""
    cuda = device == "cuda"
    fuzzer = SpectralOpFuzzer(seed=seed, dtype=dtype, cuda=cuda,
                              probability_regular=probability_regular)
    results = []
    for tensors, tensor_params, params in fuzzer.take(samples):
        shape = [params["k0"], params["k1"], params["k2"]][:params["ndim"]]
        contiguous = "" if tensor_params["x"]["is_contiguous"] else "(discontiguous)"
        sub_label = f"{' x '.join(f'{s:<4}' for s in shape)} {contiguous}"
        for dim in _dim_options(params["ndim"]):
            for threads in (1,) if cuda else (1, 4, 16):
                measurement = Timer(stmt="func(x, dim=dim)",
                                    globals={"func": function, "x": tensors["x"], "dim": dim},
                                    label=f"{name}_{device}", sub_label=sub_label,
                                    description=f"dim={dim}",
                                    num_threads=threads).blocked_autorange(min_run_time=1)
                measurement.metadata = {"name": name, "device": device, "dim": dim,
                                        "shape": shape, **tensor_params["x"]}
                results.append(measurement)
    return results


Benchmark = namedtuple("Benchmark", ["name", "function", "dtype"])
BENCHMARKS = [
    Benchmark("fft_real", fft.fftn, float32),
    Benchmark("fft_complex", fft.fftn, complex64),
    Benchmark("ifft", fft.ifftn, complex64),
    Benchmark("rfft", fft.rfftn, float32),
    Benchmark("irfft", fft.irfftn, complex64),
]
BENCHMARK_MAP = {b.name: b for b in BENCHMARKS}
BENCHMARK_NAMES = [b.name for b in BENCHMARKS]
DEVICE_NAMES = ["cpu", "cuda"]


def _output_csv(file, results) -> None:
    file.write("benchmark,device,num_threads,numel,shape,contiguous,dim,mean (us),median (us),"
               "iqr (us)\n")
    for measurement in results:
        meta = measurement.metadata
        dim = meta["dim"]
        dim_str = "-".join(str(d) for d in dim) if isinstance(dim, Iterable) else str(dim)
        shape_str = "x".join(str(s) for s in meta["shape"])
        print(meta["name"], meta["device"], measurement.task_spec.num_threads, meta["numel"],
              shape_str, meta["is_contiguous"], dim_str, measurement.mean * 1e6,
              measurement.median * 1e6, measurement.iqr * 1e6, sep=",", file=file)


def main() -> None:
    parser = ArgumentParser(description=__doc__)
    parser.add_argument("--device", type=str, choices=DEVICE_NAMES, nargs="+",
                        default=DEVICE_NAMES)
    parser.add_argument("--bench", type=str, choices=BENCHMARK_NAMES, nargs="+",
                        default=BENCHMARK_NAMES)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--probability-regular", "--probability_regular", type=float,
                        default=1.0)
    parser.add_argument("-o", "--output", type=str)
    args = parser.parse_args()
    total = len(args.device) * len(args.bench)
    results = []
    done = 0
    for device in args.device:
        for bench in (BENCHMARK_MAP[b] for b in args.bench):
            results += run_benchmark(name=bench.name, function=bench.function,
                                     dtype=bench.dtype, seed=args.seed, device=device,
                                     samples=args.samples,
                                     probability_regular=args.probability_regular)
            done += 1
            print(f"Completed {bench.name} benchmark on {device} ({done} of {total})")
    if args.output is not None:
        with open(args.output, "w") as f:
            _output_csv(f, results)
    compare = Compare(results)
    compare.trim_significant_figures()
    compare.colorize()
    compare.print()


if __name__ == "__main__":
    main()
