"""Datasets, samplers and the DataLoader, shaped like ``torch.utils.data``.

Loading runs in the calling process: ``num_workers > 0`` is accepted and loads the same batches
serially (no worker processes are started, ``worker_init_fn`` is not called and
``get_worker_info()`` returns None), so PyTorch scripts run unchanged and give the same batches.
"""

from ._collate import default_collate, default_convert
from .dataloader import DataLoader, _DatasetKind, get_worker_info
from .dataset import (
    ChainDataset,
    ConcatDataset,
    Dataset,
    IterableDataset,
    StackDataset,
    Subset,
    TensorDataset,
    random_split,
)
from .distributed import DistributedSampler
from .sampler import (
    BatchSampler,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "DistributedSampler",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
           "Subset", "SubsetRandomSampler", "TensorDataset", "WeightedRandomSampler",
           "_DatasetKind", "default_collate", "default_convert", "get_worker_info",
           "random_split"]
