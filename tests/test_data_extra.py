"""WeightedRandomSampler, ChainDataset, StackDataset and the rest of torch.utils.data's public
names, against torch.utils.data."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.utils.data as tud
from test_data import canon

import chainrule
import chainrule.utils.data as cud

LIBS = {"chainrule": (chainrule, cud), "torch": (torch, tud)}

# Deprecated data pipes.
NOT_PROVIDED = {"DFIterDataPipe", "DataChunk", "IterDataPipe", "MapDataPipe",
                "argument_validation", "functional_datapipe", "guaranteed_datapipes_determinism",
                "non_deterministic", "runtime_validation", "runtime_validation_disabled"}


def test_public_names_are_torchs_but_the_datapipes():
    assert sorted(cud.__all__) == sorted(set(tud.__all__) - NOT_PROVIDED)
    assert all(hasattr(cud, name) for name in cud.__all__)
    assert (cud._DatasetKind.Map, cud._DatasetKind.Iterable) == (
        tud._DatasetKind.Map, tud._DatasetKind.Iterable)
    assert cud.get_worker_info() is None
    from chainrule.utils.data import dataloader, dataset, sampler  # torch's module layout

    assert dataset.Subset is cud.Subset and sampler.BatchSampler is cud.BatchSampler
    assert dataloader.DataLoader is cud.DataLoader


# ---- WeightedRandomSampler -----------------------------------------------------------------

WEIGHTS = [0.1, 0.0, 2.0, 1.0, 0.9]


@pytest.mark.parametrize("replacement", [True, False])
def test_weighted_random_sampler_frequencies(replacement):
    n = len(WEIGHTS) - 1 if not replacement else 50
    sampler = cud.WeightedRandomSampler(WEIGHTS, n, replacement,
                                        generator=chainrule.Generator().manual_seed(0))
    assert len(sampler) == n
    assert sampler.weights.dtype == chainrule.float64
    assert sampler.weights.tolist() == tud.WeightedRandomSampler(WEIGHTS, n).weights.tolist()
    draws = [list(sampler) for _ in range(4000)]
    assert all(len(d) == n and all(isinstance(i, int) for i in d) for d in draws)
    first = np.array([d[0] for d in draws])
    total = sum(WEIGHTS)
    for k, w in enumerate(WEIGHTS):
        p = w / total
        assert abs((first == k).mean() - p) <= 5 * math.sqrt(p * (1 - p) / len(first)) + 1e-12
    if not replacement:
        assert all(sorted(d) == [0, 2, 3, 4] for d in draws)  # each nonzero weight once


def test_weighted_random_sampler_follows_the_seed_and_its_generator():
    chainrule.manual_seed(4)
    first = list(cud.WeightedRandomSampler(WEIGHTS, 20))
    chainrule.manual_seed(4)
    assert list(cud.WeightedRandomSampler(WEIGHTS, 20)) == first
    one = list(cud.WeightedRandomSampler(WEIGHTS, 20,
                                         generator=chainrule.Generator().manual_seed(1)))
    two = list(cud.WeightedRandomSampler(WEIGHTS, 20,
                                         generator=chainrule.Generator().manual_seed(1)))
    assert one == two


def test_weighted_random_sampler_drives_a_data_loader():
    data = cud.TensorDataset(chainrule.arange(5))
    loader = cud.DataLoader(data, batch_size=4,
                            sampler=cud.WeightedRandomSampler([0, 0, 1, 0, 0], 10))
    assert [b[0].tolist() for b in loader] == [[2] * 4, [2] * 4, [2] * 2]


WEIGHTED_INVALID = [
    ([1.0, 2.0], 0, True), ([1.0, 2.0], -1, True), ([1.0, 2.0], 2.0, True),
    ([1.0, 2.0], True, True), ([1.0, 2.0], 2, 1), ([[1.0, 2.0]], 2, True),
    (3.0, 2, True),
]


@pytest.mark.parametrize("args", WEIGHTED_INVALID, ids=[str(a) for a in WEIGHTED_INVALID])
def test_weighted_random_sampler_errors_match_torch(args):
    errors = []
    for _, data in LIBS.values():
        with pytest.raises(ValueError) as info:
            data.WeightedRandomSampler(*args)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


def test_weighted_random_sampler_multinomial_errors_match_torch():
    errors = []
    for _, data in LIBS.values():
        for args in (([1.0, -1.0], 2), ([0.0, 0.0], 1), ([1.0, 2.0], 3, False)):
            with pytest.raises(RuntimeError) as info:
                list(data.WeightedRandomSampler(*args))
            errors.append(str(info.value))
    assert errors[:3] == errors[3:]


# ---- ChainDataset --------------------------------------------------------------------------


def streams(data):
    class Stream(data.IterableDataset):
        def __init__(self, start, stop):
            self.start, self.stop = start, stop

        def __iter__(self):
            return iter(range(self.start, self.stop))

        def __len__(self):
            return self.stop - self.start

    return Stream


def test_chain_dataset_matches_torch():
    results = []
    for _lib, data in LIBS.values():
        Stream = streams(data)
        chained = data.ChainDataset([Stream(0, 3), Stream(10, 12)])
        added = Stream(0, 2) + Stream(5, 6)
        loader = data.DataLoader(chained, batch_size=2)
        results.append((list(chained), len(chained), type(added).__name__, list(added),
                        canon(list(loader))))
    assert results[0] == results[1]


def test_chain_dataset_only_takes_iterable_datasets_like_torch():
    errors = []
    for lib, data in LIBS.values():
        chained = data.ChainDataset([streams(data)(0, 2), data.TensorDataset(lib.zeros(2))])
        for action in (list, len):
            with pytest.raises(AssertionError) as info:
                action(chained)
            errors.append(str(info.value))
    assert errors[:2] == errors[2:]


# ---- StackDataset --------------------------------------------------------------------------


class Batched:
    """A dataset with __getitems__ (batched reads), as a database or a Subset would have."""

    def __init__(self, lib, n, short=False):
        self.lib, self.n, self.short, self.reads = lib, n, short, []

    def __getitem__(self, i):
        return self.lib.tensor(float(i))

    def __getitems__(self, indices):
        self.reads.append(list(indices))
        items = [self.lib.tensor(float(i) * 10) for i in indices]
        return items[:-1] if self.short else items

    def __len__(self):
        return self.n


@pytest.mark.parametrize("named", [False, True])
def test_stack_dataset_matches_torch(named):
    results = []
    for lib, data in LIBS.values():
        images = data.TensorDataset(lib.arange(12.0).reshape(6, 2))
        labels = lib.arange(6) % 2
        batched = Batched(lib, 6)
        parts = {"image": images, "label": labels, "extra": batched}
        stacked = data.StackDataset(**parts) if named else data.StackDataset(*parts.values())
        loader = data.DataLoader(stacked, batch_size=4)
        results.append((len(stacked), canon(stacked[1]), canon(stacked.__getitems__([0, 5])),
                        canon(list(loader)), batched.reads))
    assert results[0] == results[1]


STACK_INVALID = {
    "nothing": lambda lib, data: data.StackDataset(),
    "both": lambda lib, data: data.StackDataset(lib.zeros(2), b=lib.zeros(2)),
    "sizes": lambda lib, data: data.StackDataset(lib.zeros(2), lib.zeros(3)),
    "named sizes": lambda lib, data: data.StackDataset(a=lib.zeros(2), b=lib.zeros(3)),
    "short batch": lambda lib, data: data.StackDataset(Batched(lib, 3, short=True)
                                                       ).__getitems__([0, 1]),
}


@pytest.mark.parametrize("make", STACK_INVALID.values(), ids=STACK_INVALID)
def test_stack_dataset_errors_match_torch(make):
    errors = []
    for lib, data in LIBS.values():
        with pytest.raises(ValueError) as info:
            make(lib, data)
        errors.append(str(info.value))
    assert errors[0] == errors[1]


# ---- what the issue asked to check ---------------------------------------------------------


def test_the_rest_works_like_torch():
    results = []
    for lib, data in LIBS.values():
        base = data.TensorDataset(lib.arange(10.0))
        gen = lib.Generator().manual_seed(0)
        parts = data.random_split(base, [0.5, 0.3, 0.2], generator=gen)
        subset = data.Subset(base, [1, 3, 5])
        concat = data.ConcatDataset([subset, base])
        sampler = data.SubsetRandomSampler([4, 5, 6], generator=gen)
        batches = data.BatchSampler(data.SequentialSampler(concat), 5, drop_last=True)
        results.append(([len(p) for p in parts], canon(concat[2]), canon(concat[-1]),
                        len(concat), sorted(sampler), list(batches),
                        canon(data.default_collate([{"a": 1.0}, {"a": 2.0}])),
                        canon(data.default_convert((np.ones(2), 3))),
                        data.get_worker_info()))
    assert results[0] == results[1]
