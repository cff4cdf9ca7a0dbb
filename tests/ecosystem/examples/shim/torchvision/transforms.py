"""Compose, ToTensor, Normalize and Lambda, as torchvision applies them to MNIST's images."""

from __future__ import annotations

import numpy as np
import torch


class Compose:
    def __init__(self, transforms) -> None:
        self.transforms = transforms

    def __call__(self, image):
        for t in self.transforms:
            image = t(image)
        return image


class ToTensor:
    """H x W uint8 -> 1 x H x W float32 in [0, 1]."""

    def __call__(self, image):
        return torch.from_numpy(np.asarray(image, np.float32)[None] / np.float32(255))


class Normalize:
    def __init__(self, mean, std) -> None:
        self.mean, self.std = mean, std

    def __call__(self, tensor):
        mean = torch.tensor(self.mean, dtype=tensor.dtype).view(-1, 1, 1)
        std = torch.tensor(self.std, dtype=tensor.dtype).view(-1, 1, 1)
        return (tensor - mean) / std


class Lambda:
    def __init__(self, fn) -> None:
        self.fn = fn

    def __call__(self, image):
        return self.fn(image)
