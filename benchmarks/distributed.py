"""W11: a DistributedDataParallel training step of the W2 MLP (784-512-256-10), per-rank batch
128, on 2 ranks of 1 thread each, chainrule's DDP on MPI beside torch's DDP on gloo.

Every configuration runs in its own processes, started by chainrule's launcher (torch's ranks
read the same RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT variables torchrun sets): 2 ranks with
DDP, 2 ranks each training alone (the same work without the all-reduce), and 1 process alone.
The cell is the 2-rank DDP step; the note gives the scaling (2-rank throughput over 1-rank
throughput, ideally 2) and the all-reduce's share of the step. The NumPy floor is W2's
hand-written step with one MPI all-reduce of all its gradients (mpi4py), waited as chainrule
waits (testing, and yielding the core between tests).

Overlap: a deeper MLP (24 layers of 1024 x 1024, 100 MB of float32 gradients: 5 buckets of
PyTorch's default 25 MB, the first 1 MB) runs DDP steps on 2 ranks, and each step's timestamps
give how much of the all-reduce backward hides: ``t0`` when the first bucket's all-reduce
starts, ``tb`` when backward's last node has run (a callback queued on the running backward:
torch's comm hook queues it when the first bucket starts, before DDP's own finalizing callback;
chainrule's DDP notes it when its callback starts), ``tc`` when the last bucket is reduced
(torch: the last all-reduce future's callback, on gloo's thread; chainrule: MPI's wait
returning). ``overlap = tb - t0`` is all-reduce time in flight during backward, ``exposed = tc -
tb`` what the step still waits after backward; beside them the same buckets all-reduced
blocking, one after another, with nothing else running (``alone``): ``hidden = 1 - exposed /
alone`` is the share of the all-reduce's own time that backward covered.

``python -m benchmarks --only W11`` (opt-in: it starts processes), or ``python -m
benchmarks.distributed [--reps N] [--tiny]`` for this workload alone.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from benchmarks.harness import Cell, Config, Impl
from benchmarks.mlp import SIZES, TINY_SIZES, make_data

ROOT = Path(__file__).resolve().parent.parent
BATCH = 128
STEPS_PER_REP = 10


def _numpy_step(mode: str, sizes: tuple, data) -> Callable[[], None]:
    """The floor: W2's hand-written gradients, one MPI all-reduce of them, SGD."""
    from benchmarks.mlp import numpy_mlp_grads

    params = [p.copy() for p in make_data(sizes, BATCH).params]
    flat = np.empty(sum(p.size for p in params), np.float32)
    comm = None
    if mode == "ddp":
        from mpi4py import MPI

        comm = MPI.COMM_WORLD

    def step() -> None:
        _, grads = numpy_mlp_grads(params, data.x, data.onehot)
        if comm is not None:
            np.concatenate([g.ravel() for g in grads], out=flat)
            request = comm.Iallreduce(MPI.IN_PLACE, flat)
            while not request.Test():  # MPI's own blocking wait spins without yielding
                os.sched_yield()
            np.divide(flat, comm.Get_size(), out=flat)
            grads = np.split(flat, np.cumsum([g.size for g in grads])[:-1])
        for p, g in zip(params, grads):
            p -= 0.01 * g.reshape(p.shape)

    if comm is not None:
        step.barrier = comm.Barrier
    return step


OVERLAP_SIZES = (1024,) * 25  # 24 layers: 100 MB of gradients
TINY_OVERLAP_SIZES = (64,) * 5
OVERLAP_BATCH = 16
FIRST_BUCKET_BYTES = 1024 * 1024  # PyTorch's _DEFAULT_FIRST_BUCKET_BYTES
BUCKET_BYTES = 25 * 1024 * 1024  # bucket_cap_mb's default


def _bucket_sizes(params: list, first: int, cap: int) -> list:
    """Element counts of DDP's buckets: parameters in reverse order, filled up to the cap."""
    sizes, current, limit = [], 0, first
    for p in reversed(params):
        if current and current * 4 >= limit:
            sizes.append(current)
            current, limit = 0, cap
        current += p.numel()
    return sizes + [current]


def _overlap_rank(impl: str, reps: int, tiny: bool, out: str) -> None:
    """One rank of the overlap run: DDP steps of the deep MLP, each step's timestamps."""
    if impl == "torch":
        import torch

        torch.set_num_threads(1)
        from torch.autograd import Variable
    else:
        import chainrule as torch
        from chainrule.autograd import Variable
    dist = torch.distributed
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    sizes = TINY_OVERLAP_SIZES if tiny else OVERLAP_SIZES
    first, cap = (256, 4096) if tiny else (FIRST_BUCKET_BYTES, BUCKET_BYTES)
    rng = np.random.default_rng(0)
    layers = []
    for i in range(len(sizes) - 1):
        linear = torch.nn.Linear(sizes[i], sizes[i + 1])
        with torch.no_grad():
            linear.weight.copy_(torch.tensor(rng.standard_normal(
                (sizes[i + 1], sizes[i]), np.float32) / np.sqrt(sizes[i])))
        layers += [linear, torch.nn.Tanh()]
    model = torch.nn.Sequential(*layers[:-1])
    net = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=cap / 2 ** 20)
    stamps: dict = {}
    if impl == "torch":
        def hook(state, bucket):
            if "t0" not in stamps:
                stamps["t0"] = time.perf_counter()
                Variable._execution_engine.queue_callback(
                    lambda: stamps.__setitem__("tb", time.perf_counter()))
            future = dist.all_reduce(bucket.buffer(), async_op=True).get_future()

            def done(f):
                stamps["tc"] = time.perf_counter()
                return f.value()[0].div_(world)

            return future.then(done)

        net.register_comm_hook(None, hook)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    x = torch.tensor(np.random.default_rng(1 + rank).standard_normal(
        (OVERLAP_BATCH, sizes[0]), np.float32))

    def step() -> None:
        stamps.clear()
        optimizer.zero_grad()
        net(x).square().mean().backward()
        if impl != "torch":
            stamps["t0"], stamps["tb"], stamps["tc"] = net._comm_times
        optimizer.step()

    for _ in range(3):
        step()
    rows = []
    for _ in range(reps):
        dist.barrier()
        start = time.perf_counter()
        step()
        rows.append((time.perf_counter() - start, stamps["tb"] - stamps["t0"],
                     stamps["tc"] - stamps["tb"]))
    buffers = [torch.zeros(n) for n in _bucket_sizes(list(model.parameters()), first, cap)]
    alone = []
    for _ in range(reps):
        dist.barrier()
        start = time.perf_counter()
        for b in buffers:
            dist.all_reduce(b)
        alone.append(time.perf_counter() - start)
    if rank == 0:
        med = [statistics.median(r[i] for r in rows) * 1e3 for i in range(3)]
        Path(out).write_text(json.dumps({
            "step_ms": med[0], "overlap_ms": med[1], "exposed_ms": med[2],
            "alone_ms": statistics.median(alone) * 1e3, "buckets": len(buffers),
            "grad_mb": sum(p.numel() for p in model.parameters()) * 4 / 2 ** 20}))
    dist.barrier()
    if impl == "torch":
        sys.stdout.flush()
        mpi = sys.modules.get("mpi4py.MPI")
        if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
            mpi.Finalize()
        os._exit(0)
    dist.destroy_process_group()


def _rank(impl: str, mode: str, reps: int, tiny: bool, out: str) -> None:
    """One rank: build the MLP from W2's weights, then time ``reps`` x 10 SGD steps."""
    if mode == "overlap":
        _overlap_rank(impl, reps, tiny, out)
        return
    rank = int(os.environ.get("RANK", "0"))
    sizes = TINY_SIZES if tiny else SIZES
    data = make_data(sizes, BATCH, seed=3 + rank)  # each rank its own batch
    ddp = mode == "ddp"
    if impl == "numpy":
        step = _numpy_step(mode, sizes, data)
        barrier = getattr(step, "barrier", None)
    else:
        step, barrier, dist = _module_step(impl, ddp, sizes, data)
    for _ in range(3):
        step()
    samples = []
    for _ in range(reps):
        if barrier is not None:
            barrier()
        start = time.perf_counter()
        for _ in range(STEPS_PER_REP):
            step()
        samples.append((time.perf_counter() - start) / STEPS_PER_REP)
    if rank == 0:
        Path(out).write_text(json.dumps({"seconds": statistics.median(samples)}))
    if ddp and impl != "numpy":
        dist.barrier()
        if impl == "torch":  # gloo's threads sometimes abort the interpreter's exit: skip it
            sys.stdout.flush()
            mpi = sys.modules.get("mpi4py.MPI")  # the launcher's worker started MPI: end it
            if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
                mpi.Finalize()
            os._exit(0)
        dist.destroy_process_group()


def _module_step(impl: str, ddp: bool, sizes: tuple, data) -> tuple:
    """The step of torch or chainrule: nn.Sequential of W2's weights, DDP when ``ddp``."""
    if impl == "torch":
        import torch

        torch.set_num_threads(1)
    else:
        import chainrule as torch
    dist = torch.distributed
    if ddp:
        dist.init_process_group("gloo")
    weights = make_data(sizes, BATCH).params
    layers = []
    for i in range(len(sizes) - 1):
        linear = torch.nn.Linear(sizes[i], sizes[i + 1])
        with torch.no_grad():
            linear.weight.copy_(torch.tensor(weights[2 * i].T.copy()))
            linear.bias.copy_(torch.tensor(weights[2 * i + 1]))
        layers += [linear, torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    net = torch.nn.parallel.DistributedDataParallel(model) if ddp else model
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.tensor(data.x)
    y = torch.tensor(data.onehot.argmax(1))

    def step() -> None:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        optimizer.step()

    return step, dist.barrier if ddp else None, dist


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(impl: str, mode: str, nproc: int, reps: int, tiny: bool) -> dict:
    """Rank 0's figures (``seconds`` per step) of ``nproc`` processes running ``mode`` (ddp,
    alone or overlap)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        worker = [str(Path(__file__).resolve()), "--rank-of", impl, mode, str(reps),
                  str(int(tiny)), out]
        env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
        if mode != "alone" or nproc > 1:
            cmd = [sys.executable, "-m", "chainrule.distributed.run", "--nproc-per-node",
                   str(nproc), "--master-port", str(_free_port()), *worker]
        else:
            cmd = [sys.executable, *worker]
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"{impl} {mode} x{nproc} failed:\n{proc.stderr[-2000:]}")
        return json.loads(Path(out).read_text())


def figures(impls: Sequence[str], reps: int, tiny: bool, rounds: int = 3) -> dict[str, dict]:
    """Step times (ms) of the three configurations per implementation, and what follows.

    Each configuration's time is the best of ``rounds`` runs, the implementations taking turns:
    the ranks share the machine's cores with whatever else runs, which only ever slows a run.
    """
    configs = {"ddp2_ms": ("ddp", 2), "alone2_ms": ("alone", 2), "alone1_ms": ("alone", 1)}
    best: dict[str, dict[str, float]] = {impl: {} for impl in impls}
    for _ in range(rounds):
        for impl in impls:
            for key, (mode, nproc) in configs.items():
                ms = _run(impl, mode, nproc, reps, tiny)["seconds"] * 1e3
                best[impl][key] = min(ms, best[impl].get(key, ms))
    for f in best.values():
        f.update(speedup=2 * f["alone1_ms"] / f["ddp2_ms"],
                 efficiency=f["alone1_ms"] / f["ddp2_ms"],
                 comm_ms=f["ddp2_ms"] - f["alone2_ms"])
    return best


def overlap_figures(impls: Sequence[str], reps: int, tiny: bool) -> dict[str, dict]:
    """Per implementation: the overlap run's median step, overlap, exposed wait, the buckets'
    blocking all-reduce (ms) and the hidden share."""
    results = {}
    for impl in impls:
        f = _run(impl, "overlap", 2, reps, tiny)
        f["hidden"] = max(0.0, 1 - f["exposed_ms"] / f["alone_ms"])
        results[impl] = f
    return results


def overlap_note(f: dict) -> str:
    """One line of the overlap figures."""
    return (f"overlap ({f['grad_mb']:.0f} MB of gradients, {f['buckets']} buckets): step "
            f"{f['step_ms']:.1f} ms, all-reduce in flight during backward {f['overlap_ms']:.1f} "
            f"ms, waited after backward {f['exposed_ms']:.1f} ms, the buckets all-reduced "
            f"alone {f['alone_ms']:.1f} ms: {f['hidden']:.0%} hidden")


class _W11:
    """The workload, in the shape run.py expects (id, title, unit, measure)."""

    id = "W11"
    title = "DDP step of the W2 MLP, 2 ranks x 1 thread, batch 128 per rank"
    unit = "ms/step"
    compiles = False

    def measure(self, impls: Sequence[Impl], config: Config,
                log: Callable[[str], None]) -> dict[str, Cell]:
        """A Cell per implementation: the 2-rank DDP step; scaling in the note."""
        cells: dict[str, Cell] = {}
        runs = []
        for impl in impls:
            if impl.compiled:
                cells[impl.name] = Cell(text="n/a (not compiled)")
            elif impl.error is not None:
                cells[impl.name] = Cell(text=f"n/a (import failed: {impl.error.split(':')[0]})")
            else:
                runs.append(impl.name)
        try:
            results = figures(runs, max(3, config.reps // 2), config.tiny,
                              rounds=1 if config.tiny else 3)
        except Exception as exc:  # noqa: BLE001 - reported in the cells
            for name in runs:
                cells[name] = Cell(text=f"error ({type(exc).__name__})", note=str(exc),
                                   failed=True)
            return cells
        try:
            overlap = overlap_figures(runs, 3 if config.tiny else 5, config.tiny)
        except Exception as exc:  # noqa: BLE001 - reported in the note
            overlap = {name: exc for name in runs}
        for name, f in results.items():
            o = overlap.get(name)
            tail = f"; {overlap_note(o)}" if isinstance(o, dict) else \
                f"; overlap run failed: {type(o).__name__}: {o}"
            note = (f"2 ranks {f['ddp2_ms']:.2f} ms/step with DDP, "
                    f"{f['alone2_ms']:.2f} without the all-reduce, 1 process "
                    f"{f['alone1_ms']:.2f}; 2-rank/1-rank throughput {f['speedup']:.2f} "
                    f"(efficiency {f['efficiency']:.0%})" + tail)
            log(f"W11 {name}: {note}")
            cells[name] = Cell(value=f["ddp2_ms"], note=note)
        return cells


W11 = _W11()


def main(argv: Sequence[str] | None = None) -> int:
    """Print W11's figures for chainrule and torch."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.distributed",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--tiny", action="store_true")
    parser.add_argument("--rounds", type=int, default=3, help="best of this many runs")
    parser.add_argument("--overlap", action="store_true",
                        help="only the overlap of the all-reduce with backward")
    args = parser.parse_args(argv)
    if args.overlap:
        print("| implementation | step (ms) | all-reduce in flight during backward (ms) | "
              "waited after backward (ms) | buckets all-reduced alone (ms) | hidden |")
        print("|---|---|---|---|---|---|")
        for impl, f in overlap_figures(("chainrule", "torch"), args.reps, args.tiny).items():
            print(f"| {impl} | {f['step_ms']:.1f} | {f['overlap_ms']:.1f} | "
                  f"{f['exposed_ms']:.1f} | {f['alone_ms']:.1f} | {f['hidden']:.0%} |")
        return 0
    results = figures(("chainrule", "torch", "numpy"), args.reps, args.tiny, args.rounds)
    print("| implementation | 2 ranks DDP (ms/step) | 2 ranks, no all-reduce | 1 process | "
          "2-rank / 1-rank throughput | efficiency |")
    print("|---|---|---|---|---|---|")
    for impl, f in results.items():
        print(f"| {impl} | {f['ddp2_ms']:.2f} | {f['alone2_ms']:.2f} | {f['alone1_ms']:.2f} | "
              f"{f['speedup']:.2f} | {f['efficiency']:.0%} |")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--rank-of"]:
        sys.path[0] = str(ROOT)
        impl, mode, reps, tiny, out = sys.argv[2:7]
        _rank(impl, mode, int(reps), bool(int(tiny)), out)
    else:
        sys.path[0] = str(ROOT)
        raise SystemExit(main())
