"""torch.serialization's registries, settings and helpers (and torch.utils.serialization's
config) against torch: values, errors and what each setting reads back."""

from __future__ import annotations

import mmap
import os
import warnings

import numpy as np
import pytest
import torch
import torch.serialization as tser

import chainrule
import chainrule.serialization as cser


def _outcome(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = "ok", str(call())
        except Exception as e:  # noqa: BLE001
            result = type(e).__name__, str(e)
    return result, [(w.category.__name__, str(w.message)) for w in caught]


class _Version:
    def __init__(self, version: str) -> None:
        self.__name__, self.__version__ = "m", version


CASES = {
    "validate cuda": lambda s, t: s.validate_cuda_device("cuda:0"),
    "validate hpu": lambda s, t: s.validate_hpu_device("hpu:0"),
    "tag cpu": lambda s, t: s.location_tag(t.ones(2).untyped_storage()),
    "tag meta": lambda s, t: s.location_tag(t.ones(2, device="meta").untyped_storage()),
    "tag a non-storage": lambda s, t: s.location_tag(3),
    "restore on cpu": lambda s, t: type(s.default_restore_location(
        t.ones(2).untyped_storage(), "cpu")).__name__,
    "restore on meta": lambda s, t: s.default_restore_location(
        t.ones(2).untyped_storage(), "meta").device,
    "restore on cuda": lambda s, t: s.default_restore_location(
        t.ones(2).untyped_storage(), "cuda:0"),
    "restore elsewhere": lambda s, t: s.default_restore_location(
        t.ones(2).untyped_storage(), "foo"),
    "version met": lambda s, t: s.check_module_version_greater_or_equal(np, (1, 0)),
    "version not met": lambda s, t: s.check_module_version_greater_or_equal(
        _Version("0.9.3"), (1, 0)),
    "version malformed": lambda s, t: s.check_module_version_greater_or_equal(
        _Version("1.x.3"), (1, 0)),
    "version malformed, warned": lambda s, t: s.check_module_version_greater_or_equal(
        _Version("1.x.3"), (1, 0), False),
    "storage type": lambda s, t: s.StorageType("DoubleStorage"),
    "storage type dtype": lambda s, t: s.StorageType("LongStorage").dtype,
    "unknown storage type": lambda s, t: s.StorageType("Foo"),
    "normalize storage type": lambda s, t: s.normalize_storage_type(t.FloatStorage).__name__,
    "tensor type of a typed storage": lambda s, t: s.storage_to_tensor_type(
        t.FloatStorage(2)),
    "endianness members": lambda s, t: [(m.name, m.value) for m in s.LoadEndianness],
    "endianness default": lambda s, t: s.get_default_load_endianness(),
    "endianness set": lambda s, t: (s.set_default_load_endianness(s.LoadEndianness.BIG),
                                    s.get_default_load_endianness()),
    "endianness of a string": lambda s, t: s.set_default_load_endianness("big"),
    "crc32 default": lambda s, t: s.get_crc32_options(),
    "crc32 set": lambda s, t: (s.set_crc32_options(False), s.get_crc32_options()),
    "mmap default": lambda s, t: s.get_default_mmap_options(),
    "mmap set": lambda s, t: (type(s.set_default_mmap_options(mmap.MAP_SHARED)).__name__,
                              s.get_default_mmap_options()),
    "mmap bad flags": lambda s, t: s.set_default_mmap_options(7),
    "safe globals": lambda s, t: (s.add_safe_globals([len, (max, "my.max")]),
                                  s.get_safe_globals()),
    "source change warning": lambda s, t: s.SourceChangeWarning.__mro__[1].__name__,
}


def _reset(s) -> None:
    # TypedStorage's deprecation warning is once per process: an earlier test may have used it
    (torch.storage if s is tser else chainrule.storage)._reset_warn_typed_storage_removal()
    s.set_default_load_endianness(None)
    s.set_crc32_options(True)
    s.set_default_mmap_options(mmap.MAP_PRIVATE)
    s.clear_safe_globals()


@pytest.mark.parametrize("case", CASES)
def test_as_torch(case):
    found = []
    for s, t in ((tser, torch), (cser, chainrule)):
        _reset(s)
        try:
            found.append(_outcome(lambda s=s, t=t: CASES[case](s, t)))
        finally:
            _reset(s)
    assert found[1] == found[0]


def test_blocks_restore_the_settings():
    for s, config in ((tser, torch.utils.serialization.config),
                      (cser, chainrule.utils.serialization.config)):
        _reset(s)
        with s.set_default_mmap_options(mmap.MAP_SHARED):
            assert s.get_default_mmap_options() == config.load.mmap_flags == mmap.MAP_SHARED
        assert s.get_default_mmap_options() == mmap.MAP_PRIVATE
        with s.safe_globals([len]):
            assert s.get_safe_globals() == [len]
        assert s.get_safe_globals() == []
        s.set_crc32_options(False)
        assert config.save.compute_crc32 is False
        _reset(s)


def test_register_package_is_asked_in_priority_order():
    from chainrule.serialization import _packages

    saved = list(_packages)
    try:
        seen = []
        cser.register_package(5, lambda s: seen.append("tag") or "custom",
                              lambda s, loc: s if loc == "custom" else None)
        storage = chainrule.ones(2).untyped_storage()
        assert cser.location_tag(storage) == "custom" and seen == ["tag"]
        assert cser.default_restore_location(storage, "custom") is storage
        assert cser.default_restore_location(storage, "cpu") is storage
    finally:
        _packages[:] = saved


def test_mkdtemp_gives_a_directory_for_the_block():
    for s in (tser, cser):
        with s.mkdtemp() as path:
            assert os.path.isdir(path)
        assert not os.path.exists(path)


def test_config_holds_pytorchs_settings():
    ours = chainrule.utils.serialization.config.get_config_copy()
    theirs = torch.utils.serialization.config.get_config_copy()
    assert ours == {k: v for k, v in theirs.items() if not k.startswith("_")}
