"""save_image: a grid of images written as a PNG (matplotlib)."""

from __future__ import annotations

import numpy as np


def save_image(tensor, fp, nrow: int = 8, padding: int = 2, **kwargs) -> None:
    images = tensor.detach().cpu().numpy()
    if images.ndim == 3:
        images = images[:, None]
    n, c, h, w = images.shape
    cols = min(nrow, n)
    rows = -(-n // cols)
    grid = np.zeros((c, rows * (h + padding) + padding, cols * (w + padding) + padding))
    for i, image in enumerate(images):
        y, x = padding + (i // cols) * (h + padding), padding + (i % cols) * (w + padding)
        grid[:, y:y + h, x:x + w] = image
    import matplotlib.pyplot as plt

    plt.imsave(fp, np.clip(grid.transpose(1, 2, 0).squeeze(-1) if c == 1 else
                           grid.transpose(1, 2, 0), 0, 1), cmap="gray")
