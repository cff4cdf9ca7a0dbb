"""DataLoader: batches from a dataset, read through a sampler and merged by a collate_fn."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from ..._backend import int64
from ..._creation import empty
from ._collate import default_collate, default_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _chunks

__all__ = ["DataLoader", "get_worker_info"]


class _DatasetKind:
    """How a DataLoader reads its dataset: by index (Map) or by iterating it (Iterable)."""

    Map = 0
    Iterable = 1


def get_worker_info():
    """None: chainrule loads data in the calling process (see the module docstring)."""
    return None


def _seed_draw(generator) -> int:
    """A seed drawn as PyTorch draws one: ``random_()`` of an int64 (the default generator's
    unless one is given)."""
    return empty((), dtype=int64).random_(generator=generator).item()


# ---- the loader -----------------------------------------------------------------------------


class DataLoader:
    """Iterate over a dataset in batches.

    Map-style datasets are read through ``sampler`` (sequential, or random with
    ``shuffle=True``, reproducible with a seeded ``generator``) grouped by ``batch_sampler``;
    iterable datasets are read in their own order. Samples are merged with ``collate_fn``
    (``default_collate``). ``num_workers``, ``pin_memory``, ``timeout``, ``prefetch_factor`` and
    ``persistent_workers`` are validated as in PyTorch and otherwise have no effect: batches are
    always loaded serially in the calling process.
    """

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0,
                 worker_init_fn: Callable | None = None, multiprocessing_context=None,
                 generator=None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "  # sic
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)):
                if value not in (None, False):
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                     f"{name} option, but got {name}={value}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")

        if sampler is None and not self._iterable:
            sampler = (RandomSampler(dataset, generator=generator) if shuffle
                       else SequentialSampler(dataset))
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.pin_memory = pin_memory
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.generator = generator
        self.prefetch_factor = prefetch_factor
        self.persistent_workers = persistent_workers
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None or (self._iterable and self.batch_size is not None)

    def __iter__(self) -> Iterator:
        # PyTorch seeds its workers from a draw made as each iteration starts, so the stream
        # moves here whatever the number of workers.
        _seed_draw(self.generator)
        if self._iterable:
            samples = iter(self.dataset)
            if self.batch_size is None:
                return map(self.collate_fn, samples)
            chunks = _chunks(samples, self.batch_size, self.drop_last)
            return map(self.collate_fn, chunks)
        if self.batch_sampler is None:
            return (self.collate_fn(self.dataset[i]) for i in self.sampler)
        return (self.collate_fn(self._fetch(indices)) for indices in self.batch_sampler)

    def _fetch(self, indices: list) -> list:
        getitems = getattr(self.dataset, "__getitems__", None)
        if callable(getitems):
            return getitems(indices)
        return [self.dataset[i] for i in indices]

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        if self.batch_sampler is not None:
            return len(self.batch_sampler)
        return len(self.sampler)
