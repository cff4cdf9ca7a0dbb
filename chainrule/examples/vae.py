"""A variational autoencoder on scikit-learn's 8x8 digits with chainrule, written as PyTorch code.

The encoder maps an image to a diagonal Normal over a small latent space, ``rsample`` draws from
it with the reparameterization trick (so the loss is differentiable in the encoder's outputs), the
decoder gives a Bernoulli per pixel, and the loss is the negative evidence lower bound:
``-ELBO = -log p(x | z) + KL(q(z | x) || p(z))``, the KL in closed form by ``kl_divergence``.

Run with ``python -m chainrule.examples.vae``; ``--help`` lists the options. Needs the demo
extras: ``pip install "chainrule[demo]"``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from pathlib import Path

import chainrule as torch
from chainrule import nn
from chainrule.distributions import Bernoulli, Independent, Normal, kl_divergence
from chainrule.examples.digits import load_data as load_images
from chainrule.utils.data import DataLoader, TensorDataset


class VAE(nn.Module):
    """MLP encoder 64 -> hidden -> (mu, log sigma) of the latent; MLP decoder back to 64 logits."""

    def __init__(self, latent: int = 4, hidden: int = 128) -> None:
        super().__init__()
        self.latent = latent
        self.encoder = nn.Sequential(
            nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, 2 * latent))  # mu, log sigma
        self.decoder = nn.Sequential(
            nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, 64))  # a logit per pixel

    def posterior(self, x: torch.Tensor) -> Normal:
        """q(z | x): a diagonal Normal, batch shape (N, latent)."""
        mu, log_sigma = self.encoder(x).chunk(2, dim=-1)
        return Normal(mu, log_sigma.exp())

    def likelihood(self, z: torch.Tensor) -> Independent:
        """p(x | z): one Bernoulli per pixel, the 64 pixels one event.

        The pixels are grey levels in [0, 1], not 0/1, so the Bernoulli's support check is off:
        its log-probability is then minus the binary cross-entropy, as in PyTorch's VAE example.
        """
        return Independent(Bernoulli(logits=self.decoder(z), validate_args=False), 1)

    def prior(self) -> Normal:
        """p(z): the standard Normal."""
        return Normal(torch.zeros(self.latent), torch.ones(self.latent))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per image: the reconstruction term -log p(x | z) at one z ~ q(z | x), and KL(q || p)."""
        q = self.posterior(x)
        z = q.rsample()  # z = mu + sigma * eps: gradients flow into mu and sigma
        reconstruction = -self.likelihood(z).log_prob(x)
        kl = kl_divergence(q, self.prior()).sum(-1)
        return reconstruction, kl


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m chainrule.examples.vae",
        description="Train a small variational autoencoder on scikit-learn's 8x8 digits (bundled, "
                    "no download) with chainrule; print each epoch's train and test -ELBO, then "
                    "save the model, the loss curve and a grid of reconstructions and samples.")
    parser.add_argument("--epochs", type=int, default=30,
                        help="passes over the training set (default: 30)")
    parser.add_argument("--latent", type=int, default=4,
                        help="dimensions of the latent space (default: 4)")
    parser.add_argument("--hidden", type=int, default=128,
                        help="width of the encoder's and decoder's hidden layer (default: 128)")
    parser.add_argument("--batch-size", type=int, default=64, help="images per step (default: 64)")
    parser.add_argument("--lr", type=float, default=3e-3, help="Adam's learning rate "
                        "(default: 0.003)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed for the split, the initial weights, the shuffling and the "
                             "latent draws; the same seed gives the same run (default: 0)")
    parser.add_argument("--out", type=Path, default=Path("vae-run"),
                        help="folder for model.safetensors, curves.png, samples.png and "
                             "history.json (default: ./vae-run)")
    args = parser.parse_args(argv)
    if min(args.epochs, args.latent, args.hidden, args.batch_size) < 1:
        parser.error("--epochs, --latent, --hidden and --batch-size must be at least 1")
    return args


def load_data(seed: int) -> tuple[TensorDataset, TensorDataset]:
    """The digits as (N, 64) float32 pixels in [0, 1]: the digits example's seeded 80/20 split,
    each image flattened."""
    return tuple(TensorDataset(data.tensors[0].reshape(-1, 64), data.tensors[1])
                 for data in load_images(seed))


def evaluate(model: VAE, data: TensorDataset) -> dict[str, float]:
    """Mean -ELBO per image on a whole data set (one latent draw per image), and its two terms."""
    with torch.no_grad():
        pixels, _ = data.tensors
        reconstruction, kl = model(pixels)
        return {"neg_elbo": (reconstruction + kl).mean().item(),
                "reconstruction": reconstruction.mean().item(), "kl": kl.mean().item()}


def write_atomically(path: Path, data: bytes) -> None:
    """Write to a temporary file beside ``path`` and rename it over: never a half-written file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def image_strip(images: torch.Tensor) -> torch.Tensor:
    """(n, 64) pixels -> one (8, n * 9 - 1) image, the digits side by side, a blank column apart."""
    n = images.shape[0]
    tiles = torch.cat([images.reshape(n, 8, 8), torch.zeros(n, 8, 1)], dim=2)  # a blank gap
    return tiles.permute(1, 0, 2).reshape(8, n * 9)[:, :-1]


def save_outputs(out: Path, model: VAE, history: list[dict], test_set: TensorDataset) -> list[str]:
    """Write the model, the history, the loss curve and the image grid; return what was written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    torch.save(model.state_dict(), out / "model.safetensors")  # atomic, like every torch.save
    written.append("model.safetensors")
    write_atomically(out / "history.json", (json.dumps(history, indent=2) + "\n").encode())
    written.append("history.json")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print('curves.png and samples.png skipped: matplotlib is missing '
              '(pip install "chainrule[demo]")')
        return written

    def save_figure(fig, name: str) -> None:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=100)
        plt.close(fig)
        write_atomically(out / name, buffer.getvalue())
        written.append(name)

    epochs = [h["epoch"] for h in history]
    fig, (ax_elbo, ax_terms) = plt.subplots(1, 2, figsize=(9, 3.5))
    ax_elbo.plot(epochs, [h["train_neg_elbo"] for h in history], label="train")
    ax_elbo.plot(epochs, [h["test_neg_elbo"] for h in history], label="test")
    ax_elbo.set(xlabel="epoch", ylabel="nats per image", title="loss: -ELBO")
    ax_terms.plot(epochs, [h["test_reconstruction"] for h in history], label="-log p(x|z)")
    ax_terms.plot(epochs, [h["test_kl"] for h in history], label="KL(q(z|x) || p(z))")
    ax_terms.set(xlabel="epoch", ylabel="nats per image", title="test -ELBO's two terms")
    for ax in (ax_elbo, ax_terms):
        ax.legend()
        ax.grid(alpha=0.3)
    fig.tight_layout()
    save_figure(fig, "curves.png")

    n = 12
    with torch.no_grad():
        originals = test_set.tensors[0][:n]
        # The reconstruction of an image: the decoder's pixel means at the posterior's mean.
        reconstructions = model.likelihood(model.posterior(originals).mean).mean
        samples = model.likelihood(model.prior().sample((2 * n,))).mean  # new digits from p(z)
    rows = [("test images", originals), ("reconstructions", reconstructions),
            ("samples from the prior", samples[:n]), ("", samples[n:])]
    fig, axes = plt.subplots(len(rows), 1, figsize=(n * 0.6, len(rows) * 0.85))
    for ax, (title, images) in zip(axes, rows):
        ax.imshow(image_strip(images).numpy(), cmap="gray_r", vmin=0.0, vmax=1.0)
        ax.set_title(title, fontsize=9, loc="left")
        ax.axis("off")
    fig.tight_layout()
    save_figure(fig, "samples.png")
    return written


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    start = time.perf_counter()
    torch.manual_seed(args.seed)
    train_set, test_set = load_data(args.seed)
    model = VAE(args.latent, args.hidden)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True,
                        generator=torch.Generator().manual_seed(args.seed))
    try:
        from tqdm import tqdm
    except ImportError:
        tqdm = None
    print(f"training a VAE (latent {args.latent}, hidden {args.hidden}) on {len(train_set)} "
          f"digits, testing on {len(test_set)}; adam, lr {args.lr}, batch {args.batch_size}")
    history = []
    for epoch in range(1, args.epochs + 1):
        batches = loader if tqdm is None else tqdm(
            loader, desc=f"epoch {epoch}/{args.epochs}", leave=False, unit="batch")
        total, seen = 0.0, 0
        for pixels, _ in batches:
            reconstruction, kl = model(pixels)
            loss = (reconstruction + kl).mean()  # -ELBO, nats per image
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(pixels)
            seen += len(pixels)
        test = evaluate(model, test_set)
        history.append({"epoch": epoch, "train_neg_elbo": total / seen,
                        "test_neg_elbo": test["neg_elbo"],
                        "test_reconstruction": test["reconstruction"], "test_kl": test["kl"],
                        "seconds": round(time.perf_counter() - start, 2)})
        print(f"epoch {epoch:2d}/{args.epochs}  train -ELBO {total / seen:7.3f}  "
              f"test -ELBO {test['neg_elbo']:7.3f}  (reconstruction {test['reconstruction']:7.3f}"
              f" + KL {test['kl']:6.3f})")
    written = save_outputs(args.out, model, history, test_set)
    print(f"wrote {', '.join(written)} to {args.out}/ in {time.perf_counter() - start:.1f} s")
    print(f"test ELBO: {-history[-1]['test_neg_elbo']:.3f} nats per image")
    return 0


if __name__ == "__main__":
    sys.exit(main())
