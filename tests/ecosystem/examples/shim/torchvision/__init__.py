"""A stand-in for the few torchvision names PyTorch's MNIST examples use, offline.

``datasets.MNIST`` serves scikit-learn's handwritten digits (8 x 8, 1797 images) scaled to
MNIST's 28 x 28 uint8 images; the transforms and ``utils.save_image`` are the ones the examples
call. Written on ``torch``, so the same data reaches torch and chainrule (``as_torch``).
"""

from . import datasets, transforms, utils

__all__ = ["datasets", "transforms", "utils"]
