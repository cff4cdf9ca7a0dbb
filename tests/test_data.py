"""chainrule.utils.data against torch.utils.data: same batches, structures, dtypes and errors."""

from __future__ import annotations

import collections

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import chainrule
import chainrule.utils.data as cud

Point = collections.namedtuple("Point", ["x", "y"])


def canon(batch):
    """A batch as plain comparable data: tensors become (dtype, shape, values)."""
    if isinstance(batch, (chainrule.Tensor, torch.Tensor)):
        return ("tensor", repr(batch.dtype), tuple(batch.shape), batch.detach().numpy().tolist())
    if isinstance(batch, dict):
        return (type(batch).__name__, {k: canon(v) for k, v in batch.items()})
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return (type(batch).__name__, [canon(v) for v in batch])
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [canon(v) for v in batch])
    return batch


def both(make_loader):
    """The batches of the same loader built with chainrule and with torch, canonicalised."""
    ours = [canon(b) for b in make_loader(chainrule, cud)]
    theirs = [canon(b) for b in make_loader(torch, tud)]
    return ours, theirs


class Samples:
    """A map-style dataset over a list of samples (works with either library)."""

    def __init__(self, samples):
        self.samples = samples

    def __getitem__(self, i):
        return self.samples[i]

    def __len__(self):
        return len(self.samples)


def tensor_dataset(lib, data):
    x = lib.arange(20, dtype=lib.float32).reshape(10, 2)
    y = lib.arange(10)
    return data.TensorDataset(x, y)


@pytest.mark.parametrize("batch_size", [1, 3, 4, 10, 12])
@pytest.mark.parametrize("drop_last", [False, True])
def test_tensor_dataset_batches_and_len_match_torch(batch_size, drop_last):
    def make(lib, data):
        return data.DataLoader(tensor_dataset(lib, data), batch_size=batch_size,
                               drop_last=drop_last)

    ours, theirs = both(make)
    assert ours == theirs
    assert len(make(chainrule, cud)) == len(make(torch, tud)) == len(ours)


SAMPLES = [
    {"a": np.full((2,), i, dtype=np.float32), "b": i, "c": i / 2, "d": f"s{i}",
     "e": (i, float(i)), "f": [np.float64(i), i % 2 == 0], "g": Point(i, np.int32(i)),
     "h": np.array(i, dtype=np.int16), "i": b"raw"}
    for i in range(5)
]


def test_default_collate_structures_and_dtypes_match_torch():
    def make(lib, data):
        return data.DataLoader(Samples(SAMPLES), batch_size=2)

    ours, theirs = both(make)
    assert ours == theirs
    first = next(iter(make(chainrule, cud)))
    assert first["b"].dtype == chainrule.int64
    assert first["c"].dtype == chainrule.float64
    assert first["f"][1].dtype == chainrule.bool
    assert isinstance(first["e"], list) and isinstance(first["g"], Point)
    assert first["d"] == ["s0", "s1"]


@pytest.mark.parametrize("sample", [
    3, 2.5, True, np.float32(1.5), np.int64(7), np.bool_(False), "text",
    chainrule.ones(2, 3), np.zeros((2, 2), dtype=np.uint8), [1, 2.0], (1, "a"), {"k": 1.0},
])
def test_default_collate_single_types_match_torch(sample):
    torch_sample = torch.ones(2, 3) if isinstance(sample, chainrule.Tensor) else sample
    ours = canon(cud.default_collate([sample, sample]))
    theirs = canon(tud.default_collate([torch_sample, torch_sample]))
    assert ours == theirs


def test_default_convert_without_batching_matches_torch():
    samples = [(np.arange(3.0), 1, "a"), (np.arange(3.0) + 1, 2, "b")]

    def make(lib, data):
        return data.DataLoader(Samples(samples), batch_size=None)

    ours, theirs = both(make)
    assert ours == theirs
    assert ours[0][0] == "list"  # tuples become lists, numpy arrays tensors


def test_sampler_batch_sampler_and_collate_fn_match_torch():
    def with_sampler(lib, data):
        return data.DataLoader(tensor_dataset(lib, data), batch_size=2, sampler=[7, 1, 3, 3, 0])

    def with_batch_sampler(lib, data):
        return data.DataLoader(tensor_dataset(lib, data), batch_sampler=[[0, 9], [4], [2, 3, 5]])

    def with_collate_fn(lib, data):
        return data.DataLoader(Samples(list(range(7))), batch_size=3, collate_fn=lambda b: b)

    def with_sequential_batches(lib, data):
        sampler = data.BatchSampler(data.SequentialSampler(range(10)), 4, drop_last=False)
        return data.DataLoader(tensor_dataset(lib, data), batch_sampler=sampler)

    for make in (with_sampler, with_batch_sampler, with_collate_fn, with_sequential_batches):
        ours, theirs = both(make)
        assert ours == theirs, make.__name__
        assert len(make(chainrule, cud)) == len(make(torch, tud)), make.__name__


def test_iterable_dataset_batches_and_len_match_torch():
    def make_dataset(data):
        class Stream(data.IterableDataset):
            def __iter__(self):
                return iter(range(7))

            def __len__(self):
                return 7

        return Stream()

    for kwargs in ({"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None}):
        def make(lib, data, kwargs=kwargs):
            return data.DataLoader(make_dataset(data), **kwargs)

        ours, theirs = both(make)
        assert ours == theirs, kwargs
        assert len(make(chainrule, cud)) == len(make(torch, tud)), kwargs


def test_subset_and_concat_dataset_match_torch():
    def make(lib, data):
        ds = tensor_dataset(lib, data)
        joined = data.Subset(ds, [9, 0, 4]) + data.Subset(ds, [1, 2])
        return data.DataLoader(joined, batch_size=2)

    ours, theirs = both(make)
    assert ours == theirs
    ours_concat = cud.ConcatDataset([range(3), range(10, 12)])
    assert [ours_concat[i] for i in range(-5, 5)] == list(tud.ConcatDataset(
        [range(3), range(10, 12)])[i] for i in range(-5, 5))


def test_tensor_dataset_indexing_and_size_check():
    ds = tensor_dataset(chainrule, cud)
    x, y = ds[3]
    assert x.tolist() == [6.0, 7.0] and y.item() == 3 and len(ds) == 10
    with pytest.raises(AssertionError, match="Size mismatch"):
        cud.TensorDataset(chainrule.ones(3), chainrule.ones(4))


@pytest.mark.parametrize("kwargs", [
    {"shuffle": True, "sampler": [0, 1]},
    {"batch_sampler": [[0]], "batch_size": 2},
    {"batch_sampler": [[0]], "drop_last": True},
    {"batch_sampler": [[0]], "shuffle": True},
    {"batch_size": None, "drop_last": True},
    {"num_workers": -1},
    {"persistent_workers": True},
    {"prefetch_factor": 2},
    {"timeout": -1},
])
def test_loader_argument_errors_match_torch(kwargs):
    with pytest.raises(ValueError) as ours:
        cud.DataLoader(tensor_dataset(chainrule, cud), **kwargs)
    with pytest.raises(ValueError) as theirs:
        tud.DataLoader(tensor_dataset(torch, tud), **kwargs)
    assert str(ours.value) == str(theirs.value)


def test_iterable_dataset_rejects_shuffle_like_torch():
    def stream(data):
        return type("Stream", (data.IterableDataset,), {"__iter__": lambda self: iter(())})()

    with pytest.raises(ValueError) as ours:
        cud.DataLoader(stream(cud), shuffle=True)
    with pytest.raises(ValueError) as theirs:
        tud.DataLoader(stream(tud), shuffle=True)
    assert str(ours.value) == str(theirs.value)


def test_collate_errors_match_torch():
    cases = [
        ([chainrule.ones(2), chainrule.ones(3)], [torch.ones(2), torch.ones(3)], RuntimeError),
        ([[1, 2], [1]], [[1, 2], [1]], RuntimeError),
        ([np.array(["a"]), np.array(["b"])], [np.array(["a"]), np.array(["b"])], TypeError),
        ([object(), object()], None, TypeError),
    ]
    for ours_batch, torch_batch, error in cases:
        with pytest.raises(error) as ours:
            cud.default_collate(ours_batch)
        with pytest.raises(error) as theirs:
            tud.default_collate(torch_batch if torch_batch is not None else ours_batch)
        assert str(ours.value) == str(theirs.value)


def shuffled(seed, epochs=1, **kwargs):
    loader = cud.DataLoader(tensor_dataset(chainrule, cud), batch_size=4, shuffle=True,
                            generator=chainrule.Generator().manual_seed(seed), **kwargs)
    return [[b[1].tolist() for b in loader] for _ in range(epochs)]


def test_shuffle_with_seeded_generator_is_reproducible():
    first, second = shuffled(0, epochs=2)
    assert shuffled(0, epochs=2) == [first, second]
    assert sorted(sum(first, [])) == list(range(10)) and [len(b) for b in first] == [4, 4, 2]
    assert first != second  # the generator moves on between epochs
    assert shuffled(1)[0] != first
    assert [len(b) for b in shuffled(0, drop_last=True)[0]] == [4, 4]


def test_shuffle_without_generator_follows_manual_seed():
    def epoch():
        loader = cud.DataLoader(range(50), batch_size=50, shuffle=True)
        return next(iter(loader)).tolist()

    chainrule.manual_seed(3)
    first = epoch()
    chainrule.manual_seed(3)
    assert epoch() == first and sorted(first) == list(range(50)) and first != list(range(50))


def test_random_sampler_options():
    g = chainrule.Generator().manual_seed(0)
    with_replacement = list(cud.RandomSampler(range(5), replacement=True, num_samples=40,
                                              generator=g))
    assert len(with_replacement) == 40 and set(with_replacement) <= set(range(5))
    more = list(cud.RandomSampler(range(4), num_samples=10, generator=g))
    assert sorted(more[:4]) == sorted(more[4:8]) == [0, 1, 2, 3] and len(more) == 10
    subset = list(cud.SubsetRandomSampler([10, 20, 30], generator=g))
    assert sorted(subset) == [10, 20, 30]
    with pytest.raises(ValueError, match="num_samples should be a positive integer"):
        cud.RandomSampler(range(3), num_samples=0)
    with pytest.raises(TypeError, match="replacement should be a boolean"):
        cud.RandomSampler(range(3), replacement=1)


@pytest.mark.parametrize("kwargs", [{"batch_size": 0, "drop_last": False},
                                    {"batch_size": True, "drop_last": False},
                                    {"batch_size": 2, "drop_last": 1}])
def test_batch_sampler_errors_match_torch(kwargs):
    with pytest.raises(ValueError) as ours:
        cud.BatchSampler(range(3), **kwargs)
    with pytest.raises(ValueError) as theirs:
        tud.BatchSampler(range(3), **kwargs)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.5, 0.25, 0.25], [1 / 3] * 3])
def test_random_split_sizes_match_torch_and_are_reproducible(lengths):
    data = range(10)
    ours = cud.random_split(data, lengths, generator=chainrule.Generator().manual_seed(0))
    theirs = tud.random_split(data, lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    again = cud.random_split(data, lengths, generator=chainrule.Generator().manual_seed(0))
    assert [s.indices for s in ours] == [s.indices for s in again]
    assert sorted(i for s in ours for i in s) == list(range(10))
    assert all(isinstance(s, cud.Subset) and s.dataset is data for s in ours)


def test_random_split_errors():
    with pytest.raises(ValueError, match="Sum of input lengths"):
        cud.random_split(range(10), [3, 3])
    with pytest.raises(ValueError, match="Fraction at index 1 is not between 0 and 1"):
        cud.random_split(range(10), [0.5, 1.2, -0.7])
    with pytest.warns(UserWarning, match="Length of split at index 1 is 0"):
        cud.random_split(range(2), [0.9, 0.1])


def test_num_workers_loads_serially_with_the_same_batches():
    def batches(workers):
        loader = cud.DataLoader(tensor_dataset(chainrule, cud), batch_size=3,
                                num_workers=workers)
        return [canon(b) for b in loader]

    assert batches(2) == batches(0)
    assert cud.get_worker_info() is None


def test_base_classes_and_loader_attributes():
    with pytest.raises(NotImplementedError):
        cud.Dataset()[0]
    ds = tensor_dataset(chainrule, cud)
    loader = cud.DataLoader(ds, batch_size=3, drop_last=True)
    assert loader.dataset is ds and loader.batch_size == 3 and loader.drop_last
    assert isinstance(loader.sampler, cud.SequentialSampler)
    assert isinstance(loader.batch_sampler, cud.BatchSampler)
    assert loader.collate_fn is cud.default_collate
    shuffled_loader = cud.DataLoader(ds, shuffle=True)
    assert isinstance(shuffled_loader.sampler, cud.RandomSampler)
    assert cud.DataLoader(ds, batch_size=None).collate_fn is cud.default_convert


def test_batches_are_chainrule_tensors_usable_in_autograd():
    w = chainrule.ones(2, requires_grad=True)
    for x, _ in cud.DataLoader(tensor_dataset(chainrule, cud), batch_size=5):
        (x * w).sum().backward()
    assert w.grad.tolist() == [90.0, 100.0]
