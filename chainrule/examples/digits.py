"""Train a small CNN on scikit-learn's 8x8 digits with chainrule, written as PyTorch code.

Run with ``python -m chainrule.examples.digits`` (or ``chainrule-digits``); ``--help`` lists the
options. Needs the demo extras: ``pip install "chainrule[demo]"``. ``--nproc-per-node N`` trains
on N processes with DistributedDataParallel (needs ``chainrule[distributed]``): every rank takes
its share of each global batch, so the losses are the single process's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import chainrule as torch
from chainrule import nn
from chainrule.nn import functional as F
from chainrule.utils.data import DataLoader, TensorDataset

OPTIMIZERS = ("adam", "sgd")


class DigitsNet(nn.Module):
    """Two conv blocks and a two-layer classifier for 1x8x8 images."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 32 x 4 x 4
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),  # 64 x 2 x 2
        )
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(64 * 2 * 2, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="chainrule-digits",
        description="Train a small convolutional network on scikit-learn's 8x8 digits (1,797 "
                    "images, bundled, no download) with chainrule; print per-epoch loss and "
                    "accuracy, then save the model, the training curves and one step's autograd "
                    "graph.")
    parser.add_argument("--epochs", type=int, default=12, help="passes over the training set "
                        "(default: 12)")
    parser.add_argument("--batch-size", type=int, default=32, help="images per step (default: 32)")
    parser.add_argument("--lr", type=float, default=None,
                        help="initial learning rate, decayed to 0 along a cosine (default: 0.002 "
                             "for adam, 0.05 for sgd)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed for the split, the initial weights and the shuffling; the same "
                             "seed gives the same run (default: 0)")
    parser.add_argument("--optimizer", choices=OPTIMIZERS, default="adam",
                        help="adam, or sgd with momentum 0.9 (default: adam)")
    parser.add_argument("--out", type=Path, default=Path("digits-run"),
                        help="folder for model.safetensors, curves.png, graph.svg and "
                             "history.json (default: ./digits-run)")
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction, default=True,
                        help="run the model through chainrule.compile: its forward and backward "
                             "kernels captured on the first steps, replayed after (default: on; "
                             "--no-compile runs eagerly, with the same numbers)")
    parser.add_argument("--nproc-per-node", type=int, default=1,
                        help="train on this many processes with DistributedDataParallel, each "
                             "taking its share of every batch (default: 1)")
    args = parser.parse_args(argv)
    if args.epochs < 1 or args.batch_size < 1:
        parser.error("--epochs and --batch-size must be at least 1")
    if args.nproc_per_node < 1 or args.nproc_per_node > args.batch_size:
        parser.error("--nproc-per-node must be between 1 and --batch-size")
    if args.lr is None:
        args.lr = 0.002 if args.optimizer == "adam" else 0.05
    return args


def load_data(seed: int) -> tuple[TensorDataset, TensorDataset]:
    """The digits as (N, 1, 8, 8) float32 images in [0, 1], split 80/20 with a seeded shuffle."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        sys.exit('chainrule-digits needs scikit-learn: pip install "chainrule[demo]"')
    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32).reshape(-1, 1, 8, 8) / 16.0
    labels = torch.tensor(digits.target, dtype=torch.int64)
    order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(seed))
    n_test = len(labels) // 5
    test, train = order[:n_test], order[n_test:]
    return (TensorDataset(images[train], labels[train]),
            TensorDataset(images[test], labels[test]))


def evaluate(model: nn.Module, data: TensorDataset) -> tuple[float, float]:
    """Mean loss and accuracy on a whole data set."""
    model.eval()
    with torch.no_grad():
        images, labels = data.tensors
        logits = model(images)
        loss = F.cross_entropy(logits, labels).item()
        accuracy = (logits.argmax(dim=1) == labels).float().mean().item()
    model.train()
    return loss, accuracy


def compile_summary(net: nn.Module, images: torch.Tensor, labels: torch.Tensor,
                    steps: int = 20) -> str:
    """How the compiled model ran, and a training step's forward and backward on one batch
    timed eagerly and replayed (median of ``steps``; the weights do not change)."""
    compiled = net._compiled_call_impl
    stats = compiled.stats
    times = {}
    for name, forward in (("eager", net._call_impl), ("compiled", net)):
        samples = []
        for _ in range(steps):
            begin = time.perf_counter()
            F.cross_entropy(forward(images), labels).backward()
            samples.append(time.perf_counter() - begin)
        times[name] = sorted(samples)[steps // 2]
    net.zero_grad()
    return (f"compile: {stats['programs']} programs, {stats['replays']} calls replayed, "
            f"{stats['captures']} captured; a training step's forward and backward takes "
            f"{times['eager'] * 1e3:.2f} ms eagerly, {times['compiled'] * 1e3:.2f} ms replayed "
            f"({times['eager'] / times['compiled']:.1f}x)")


def save_outputs(out: Path, model: nn.Module, history: list[dict], graph_of) -> list[str]:
    """Write the model, the curves, the graph and the history; return what was written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    torch.save(model.state_dict(), out / "model.safetensors")
    written.append("model.safetensors")
    (out / "history.json").write_text(json.dumps(history, indent=2) + "\n")
    written.append("history.json")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print('curves.png skipped: matplotlib is missing (pip install "chainrule[demo]")')
    else:
        epochs = [h["epoch"] for h in history]
        fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(9, 3.5))
        ax_loss.plot(epochs, [h["train_loss"] for h in history], label="train")
        ax_loss.plot(epochs, [h["test_loss"] for h in history], label="test")
        ax_loss.set(xlabel="epoch", ylabel="cross-entropy", title="loss")
        ax_acc.plot(epochs, [h["train_accuracy"] for h in history], label="train")
        ax_acc.plot(epochs, [h["test_accuracy"] for h in history], label="test")
        ax_acc.set(xlabel="epoch", ylabel="accuracy", title="accuracy")
        for ax in (ax_loss, ax_acc):
            ax.legend()
            ax.grid(alpha=0.3)
        fig.tight_layout()
        fig.savefig(out / "curves.png", dpi=100)
        plt.close(fig)
        written.append("curves.png")
    from chainrule import viz

    (out / "graph.svg").write_text(viz.to_svg(graph_of, dict(model.named_parameters())))
    written.append("graph.svg")
    return written


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.nproc_per_node > 1 and "WORLD_SIZE" not in os.environ:
        # Start the ranks, each running this module with the same arguments.
        from chainrule.distributed.run import main as run

        return run(["--nproc-per-node", str(args.nproc_per_node), "-m",
                    "chainrule.examples.digits", *(sys.argv[1:] if argv is None else argv)])
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = 0
    if world > 1:
        import chainrule.distributed as dist

        dist.init_process_group("gloo")
        rank = dist.get_rank()
    show = rank == 0  # progress and files come from rank 0 only
    start = time.perf_counter()
    torch.manual_seed(args.seed)
    train_set, test_set = load_data(args.seed)
    net = DigitsNet()
    if args.compile:
        net.compile()  # in place: the same parameters and state_dict keys
    model = net if world == 1 else nn.parallel.DistributedDataParallel(net)
    if args.optimizer == "adam":
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    # Every rank draws the same batches; each trains on its share of every batch.
    loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed))
    # The learning rate decays to zero along a cosine over the whole run: steady final epochs.
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, args.epochs * len(loader))
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    if show:
        print(f"training {type(net).__name__} on {len(train_set)} digits, testing on "
              f"{len(test_set)}; {args.optimizer}, lr {args.lr}, batch {args.batch_size}"
              + (f" on {world} processes" if world > 1 else ""))
    history = []
    graph_of = None
    for epoch in range(1, args.epochs + 1):
        batches = loader if tqdm is None or not show else tqdm(
            loader, desc=f"epoch {epoch}/{args.epochs}", leave=False, unit="batch")
        total, seen = torch.zeros(2, dtype=torch.float64), 0
        for images, labels in batches:
            n = len(labels)
            share = slice(n * rank // world, n * (rank + 1) // world)
            loss = F.cross_entropy(model(images[share]), labels[share])
            # DDP averages over ranks: weighting by the share's size gives the batch's mean
            # gradient when the shares differ by one (a last, short batch).
            scaled = loss if world == 1 else loss * (len(labels[share]) * world / n)
            if graph_of is None:
                graph_of = loss  # one training step's graph, drawn at the end
                scaled.backward(retain_graph=True)
            else:
                scaled.backward()
            optimizer.step()
            optimizer.zero_grad()
            schedule.step()
            total[0] += loss.item() * len(labels[share])
            seen += n
        total[1] = seen
        if world > 1:
            dist.reduce(total[:1], dst=0)  # the loss summed over every rank's share
        train_loss, train_acc = evaluate(net, train_set)
        test_loss, test_acc = evaluate(net, test_set)
        history.append({"epoch": epoch, "train_loss": train_loss, "train_accuracy": train_acc,
                        "test_loss": test_loss, "test_accuracy": test_acc,
                        "seconds": round(time.perf_counter() - start, 2)})
        if show:
            print(f"epoch {epoch:2d}/{args.epochs}  loss {total[0].item() / seen:.4f}  "
                  f"train accuracy {train_acc:.4f}  test loss {test_loss:.4f}  "
                  f"test accuracy {test_acc:.4f}")
    if show:
        written = save_outputs(args.out, net, history, graph_of)
        if args.compile:
            print(compile_summary(net, images[share], labels[share]))
        print(f"wrote {', '.join(written)} to {args.out}/ in {time.perf_counter() - start:.1f} s")
        print(f"test accuracy: {history[-1]['test_accuracy']:.4f}")
    if world > 1:
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
