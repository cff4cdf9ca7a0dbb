"""MNIST served from scikit-learn's digits (no download)."""

from __future__ import annotations

import numpy as np

_TRAIN = 1500  # the first 1500 digits train, the other 297 test


def _images() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    digits = load_digits()
    pixels = np.round(digits.images * (255 / 16)).astype(np.uint8)  # 0..16 -> 0..255
    big = np.kron(pixels, np.ones((3, 3), np.uint8))  # 24 x 24
    return np.pad(big, ((0, 0), (2, 2), (2, 2))), digits.target.astype(np.int64)


class MNIST:
    """(image, label) pairs: 28 x 28 uint8 arrays (MNIST's PIL images) and ints."""

    def __init__(self, root, train: bool = True, transform=None, target_transform=None,
                 download: bool = False) -> None:
        images, labels = _images()
        part = slice(None, _TRAIN) if train else slice(_TRAIN, None)
        self.data, self.targets = images[part], labels[part]
        self.transform, self.target_transform = transform, target_transform

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int):
        image, label = self.data[index], int(self.targets[index])
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return image, label
