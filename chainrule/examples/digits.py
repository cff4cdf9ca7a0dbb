"""Train a small CNN on scikit-learn's 8x8 digits with chainrule, written as PyTorch code.

Run with ``python -m chainrule.examples.digits`` (or ``chainrule-digits``); ``--help`` lists the
options. Needs the demo extras: ``pip install "chainrule[demo]"``.
"""

from __future__ import annotations

import argparse
import json
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
    args = parser.parse_args(argv)
    if args.epochs < 1 or args.batch_size < 1:
        parser.error("--epochs and --batch-size must be at least 1")
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
    start = time.perf_counter()
    torch.manual_seed(args.seed)
    train_set, test_set = load_data(args.seed)
    model = DigitsNet()
    if args.optimizer == "adam":
        optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed))
    # The learning rate decays to zero along a cosine over the whole run: steady final epochs.
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, args.epochs * len(loader))
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    print(f"training {type(model).__name__} on {len(train_set)} digits, testing on "
          f"{len(test_set)}; {args.optimizer}, lr {args.lr}, batch {args.batch_size}")
    history = []
    graph_of = None
    for epoch in range(1, args.epochs + 1):
        batches = loader if tqdm is None else tqdm(
            loader, desc=f"epoch {epoch}/{args.epochs}", leave=False, unit="batch")
        total, seen = 0.0, 0
        for images, labels in batches:
            loss = F.cross_entropy(model(images), labels)
            if graph_of is None:
                graph_of = loss  # one training step's graph, drawn at the end
                loss.backward(retain_graph=True)
            else:
                loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            schedule.step()
            total += loss.item() * len(labels)
            seen += len(labels)
        train_loss, train_acc = evaluate(model, train_set)
        test_loss, test_acc = evaluate(model, test_set)
        history.append({"epoch": epoch, "train_loss": train_loss, "train_accuracy": train_acc,
                        "test_loss": test_loss, "test_accuracy": test_acc,
                        "seconds": round(time.perf_counter() - start, 2)})
        print(f"epoch {epoch:2d}/{args.epochs}  loss {total / seen:.4f}  "
              f"train accuracy {train_acc:.4f}  test loss {test_loss:.4f}  "
              f"test accuracy {test_acc:.4f}")
    written = save_outputs(args.out, model, history, graph_of)
    print(f"wrote {', '.join(written)} to {args.out}/ in {time.perf_counter() - start:.1f} s")
    print(f"test accuracy: {history[-1]['test_accuracy']:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
