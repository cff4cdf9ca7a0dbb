"""Hostile files: load refuses truncated, corrupt and lying safetensors files with an error that
says what is wrong and names the file, without allocating what the file claims; save replaces a
file atomically."""

from __future__ import annotations

import io
import json
import os
import tracemalloc

import numpy as np
import pytest

import chainrule
from chainrule import serialization
from chainrule.serialization import load, save

CORRUPT = "is not a valid safetensors file"
METADATA = "has unreadable chainrule metadata"
MB = 2**20


def st_file(header, data: bytes = b"", *, raw: bytes | None = None, size: int | None = None):
    """Bytes of a safetensors file: the 8-byte little-endian header size (``size`` may lie),
    the header (``header`` as JSON, or ``raw``), then ``data``."""
    text = raw if raw is not None else json.dumps(header).encode()
    return (len(text) if size is None else size).to_bytes(8, "little") + text + data


def entry(dtype="F32", shape=(1,), offsets=(0, 4)):
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offsets)}


def with_meta(tree, tensors=None, data=b"", version=1):
    header = {"__metadata__": {"chainrule": json.dumps({"version": version, "tree": tree})}}
    header.update(tensors or {})
    return st_file(header, data)


def valid_file() -> bytes:
    buffer = io.BytesIO()
    save({"w": chainrule.arange(10.0), "step": 3}, buffer, format="safetensors")
    return buffer.getvalue()


F32 = b"\0" * 4

# name: (the file's bytes, the exception, a fragment of the message, the bytes it claims or 0)
HOSTILE = {
    "empty": (b"", RuntimeError, "it has 0 bytes, fewer than the 8-byte header size", 0),
    "shorter_than_the_size": (b"\x05\0\0", RuntimeError, "it has 3 bytes", 0),
    "random_bytes": (np.random.default_rng(0).bytes(256), RuntimeError, "the header claims", 0),
    "truncated_header": (valid_file()[:40], RuntimeError, "the header claims", 0),
    "truncated_data": (valid_file()[:-5], RuntimeError, CORRUPT, 0),
    "header_size_2_60": (st_file({}, size=2**60), RuntimeError,
                         f"the header claims {2**60} bytes but the file has 10", 2**60),
    "header_size_max": (st_file({}, size=2**64 - 1), RuntimeError,
                        f"the header claims {2**64 - 1} bytes", 2**64 - 1),
    "header_not_json": (st_file(None, raw=b"{'w': nope}"), RuntimeError, "the header is not JSON",
                        0),
    "header_not_utf8": (st_file(None, raw=b"\xff\xfe\xfa"), RuntimeError,
                        "the header is not JSON", 0),
    "header_too_deep": (st_file(None, raw=b"[" * 100_000 + b"]" * 100_000), RuntimeError,
                        "the header is not JSON", 0),
    "header_a_list": (st_file([1, 2]), RuntimeError, "the header is a JSON list, not an object", 0),
    "header_a_string": (st_file("w"), RuntimeError, "the header is a JSON str, not an object", 0),
    "header_null": (st_file(None), RuntimeError, "the header is a JSON NoneType", 0),
    "entry_a_number": (st_file({"w": 5}), RuntimeError, "tensor 'w' is described by 5", 0),
    "entry_without_offsets": (st_file({"w": {"dtype": "F32", "shape": [1]}}, F32), RuntimeError,
                              "tensor 'w' is described by", 0),
    "dtype_a_number": (st_file({"w": entry(dtype=7)}, F32), RuntimeError, "tensor 'w' has dtype 7",
                       0),
    "unknown_dtype": (st_file({"w": entry(dtype="Q7")}, F32), TypeError,
                      "tensor 'w' in '{path}' has dtype Q7, which chainrule does not support", 0),
    "unsupported_dtype": (st_file({"w": entry(dtype="U16", offsets=(0, 2))}, b"\0\0"), TypeError,
                          "has dtype U16, which chainrule does not support", 0),
    "offsets_beyond_the_file": (st_file({"w": entry(shape=(2**28,), offsets=(0, 2**30))}, F32),
                                RuntimeError, CORRUPT, 2**30),
    "offsets_beyond_by_one": (st_file({"w": entry(offsets=(0, 4))}, b"\0" * 3), RuntimeError,
                              CORRUPT, 0),
    "offsets_overlapping": (st_file({"a": entry(shape=(2,), offsets=(0, 8)),
                                     "b": entry(shape=(2,), offsets=(4, 12))}, b"\0" * 12),
                            RuntimeError, CORRUPT, 0),
    "offsets_negative": (st_file({"w": entry(offsets=(-4, 0))}, F32), RuntimeError, CORRUPT, 0),
    "offsets_reversed": (st_file({"w": entry(offsets=(4, 0))}, F32 * 2), RuntimeError, CORRUPT, 0),
    "offsets_leave_a_gap": (st_file({"w": entry(offsets=(4, 8))}, F32 * 2), RuntimeError, CORRUPT,
                            0),
    "bytes_after_the_last_tensor": (st_file({"w": entry()}, F32 * 2), RuntimeError, CORRUPT, 0),
    "shape_does_not_match_bytes": (st_file({"w": entry(shape=(3,))}, F32), RuntimeError, CORRUPT,
                                   0),
    "shape_of_2_62_elements": (st_file({"w": entry("F64", (2**31, 2**31), (0, 8))}, F32 * 2),
                               RuntimeError, CORRUPT, 2**65),
    "shape_overflows": (st_file({"w": entry("F64", (2**40,) * 3, (0, 8))}, F32 * 2),
                        RuntimeError, CORRUPT, 2**123),
    "shape_negative": (st_file({"w": entry(shape=(-1,))}, F32), RuntimeError, CORRUPT, 0),
    "shape_not_integers": (st_file({"w": entry(shape=(1.5,))}, F32), RuntimeError, CORRUPT, 0),
    "duplicate_keys": (st_file(None, F32, raw=b'{"w": %s, "w": %s}' % (
        json.dumps(entry()).encode(), json.dumps(entry()).encode())), RuntimeError,
        "in the header, the key 'w' appears more than once", 0),
    "metadata_not_a_map": (st_file({"__metadata__": [1], "w": entry()}, F32), RuntimeError,
                           CORRUPT, 0),
    "metadata_not_json": (st_file({"__metadata__": {"chainrule": "{"}}), RuntimeError, METADATA,
                          0),
    "metadata_newer_version": (with_meta(1, version=2), RuntimeError, "format version 2", 0),
    "metadata_without_tree": (st_file({"__metadata__": {"chainrule": "[1]"}}), RuntimeError,
                              METADATA, 0),
    "metadata_too_deep": (st_file({"__metadata__": {"chainrule": '{"version": 1, "tree": '
                                                    + "[" * 100_000 + "]" * 100_000 + "}"}}),
                          RuntimeError, METADATA, 0),
    "metadata_duplicate_keys": (st_file({"__metadata__": {"chainrule": '{"version": 1, "tree": 1, '
                                                          '"tree": 2}'}}),
                                RuntimeError, "the key 'tree' appears more than once", 0),
    "metadata_missing_tensor": (with_meta({"tensor": "w"}), RuntimeError,
                                "names a tensor 'w' that it does not hold", 0),
    "metadata_unknown_kind": (with_meta({"set": [1, 2]}), RuntimeError, METADATA, 0),
    "metadata_bad_dtype": (with_meta({"dtype": "float1024"}), RuntimeError, METADATA, 0),
    "metadata_repeated_dict_key": (with_meta({"dict": [["a", 1], ["a", 2]]}), RuntimeError,
                                   METADATA, 0),
    "metadata_tensor_as_dict_key": (with_meta({"dict": [[{"tensor": "w"}, 1]]}, {"w": entry()},
                                              F32), RuntimeError, METADATA, 0),
    "metadata_bad_complex": (with_meta({"tensor": "w", "complex": True},
                                       {"w": entry("F64", (3,), (0, 24))}, b"\0" * 24),
                             RuntimeError, METADATA, 0),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_file_raises_naming_the_file_without_allocating_its_claims(tmp_path, name):
    data, error, fragment, claimed = HOSTILE[name]
    path = tmp_path / f"{name}.safetensors"
    path.write_bytes(data)
    tracemalloc.start()
    try:
        with pytest.raises(error) as info:
            load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    message = str(info.value)
    assert f"'{path}'" in message
    assert fragment.format(path=path) in message
    assert peak < 4 * MB + 4 * len(data)
    if claimed:
        assert peak < claimed // 100


@pytest.mark.parametrize("name", ["empty", "header_size_2_60", "duplicate_keys",
                                  "offsets_overlapping", "metadata_missing_tensor"])
def test_file_objects_are_named_too(name):
    data, error, fragment, _ = HOSTILE[name]
    with pytest.raises(error, match="'<file object>'"):
        load(io.BytesIO(data))


class Endless(io.RawIOBase):
    """A stream that never ends (a pipe or a device such as /dev/zero): it has no size."""

    def __init__(self, byte: bytes) -> None:
        self.byte = byte
        self.given = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        buffer[:] = self.byte * len(buffer)
        self.given += len(buffer)
        return len(buffer)


@pytest.mark.parametrize("byte, fragment", [(b"\0", "the header is not JSON"),
                                            (b"\xff", "more than safetensors' limit")])
def test_an_endless_stream_is_refused_after_reading_its_header_only(byte, fragment):
    stream = Endless(byte)
    tracemalloc.start()
    try:
        with pytest.raises(RuntimeError, match=fragment):
            load(stream)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert stream.given <= 8 + serialization._CHUNK
    assert peak < 4 * MB


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_is_refused_naming_it():
    with pytest.raises(RuntimeError, match="'/dev/zero' is not a valid safetensors file.*JSON"):
        load("/dev/zero")


class Counting(io.BytesIO):
    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.taken = 0

    def read(self, n=-1):
        out = super().read(n)
        self.taken += len(out)
        return out


@pytest.mark.parametrize("name", ["header_size_2_60", "random_bytes", "offsets_beyond_the_file",
                                  "bytes_after_the_last_tensor"])
def test_what_the_header_claims_is_checked_before_the_data_is_read(name):
    data = HOSTILE[name][0]
    stream = Counting(data + b"\0" * 4096)  # data that a reader trusting the header would take
    with pytest.raises(RuntimeError, match=CORRUPT):
        load(stream)
    size = int.from_bytes(data[:8], "little")
    assert stream.taken <= 8 + (size if 8 + size <= len(data) else 0)


def test_a_file_object_is_read_from_its_position(tmp_path):
    stream = io.BytesIO(b"preamble" + valid_file())
    stream.seek(8)
    assert load(stream)["step"] == 3


def test_the_checks_leave_valid_files_alone(tmp_path):
    path = tmp_path / "ok.safetensors"
    path.write_bytes(valid_file())
    back = load(path)
    assert back["step"] == 3
    np.testing.assert_array_equal(back["w"].numpy(), np.arange(10.0, dtype=np.float32))
    plain = tmp_path / "plain.safetensors"  # a foreign file: extra entry fields are allowed
    plain.write_bytes(st_file({"w": {**entry(), "note": "x"}, "__metadata__": {"a": "b"}}, F32))
    assert load(plain)["w"].tolist() == [0.0]


# ---- atomic save ---------------------------------------------------------------------------------


@pytest.fixture
def old_file(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    save({"w": chainrule.zeros(100)}, path)
    return path, path.read_bytes()


def assert_untouched(path, old: bytes) -> None:
    assert path.read_bytes() == old
    assert os.listdir(path.parent) == [path.name]  # no temporary file left
    assert load(path)["w"].tolist() == [0.0] * 100


@pytest.mark.parametrize("failure", [OSError("disk full"), KeyboardInterrupt()])
def test_a_failure_mid_write_leaves_the_old_file(old_file, monkeypatch, failure):
    path, old = old_file

    def crash(file, data):
        file.write(data[: len(data) // 3])
        raise failure

    monkeypatch.setattr(serialization, "_write", crash)
    with pytest.raises(type(failure)):
        save({"w": chainrule.ones(100)}, path)
    assert_untouched(path, old)


def test_a_failure_at_the_rename_leaves_the_old_file(old_file, monkeypatch):
    path, old = old_file

    def refuse(src, dst):
        raise PermissionError("rename refused")

    monkeypatch.setattr(serialization.os, "replace", refuse)
    with pytest.raises(PermissionError, match="rename refused"):
        save({"w": chainrule.ones(100)}, path)
    monkeypatch.undo()
    assert_untouched(path, old)


def test_an_unsavable_object_leaves_the_old_file(old_file):
    path, old = old_file
    with pytest.raises(TypeError, match="cannot save a set"):
        save({"w": chainrule.ones(100), "bad": {1, 2}}, path)
    assert_untouched(path, old)


def test_save_writes_through_a_symlink_and_keeps_permissions(tmp_path):
    target = tmp_path / "real.safetensors"
    save({"w": chainrule.zeros(2)}, target)
    os.chmod(target, 0o600)
    link = tmp_path / "link.safetensors"
    link.symlink_to(target)
    save({"w": chainrule.ones(2)}, link)
    assert link.is_symlink()
    assert load(target)["w"].tolist() == [1.0, 1.0]
    assert os.stat(target).st_mode & 0o777 == 0o600
    assert sorted(os.listdir(tmp_path)) == ["link.safetensors", "real.safetensors"]


def test_save_where_it_cannot_raises_as_torch(tmp_path):
    import torch

    missing = tmp_path / "absent" / "ckpt.pt"
    for lib in (torch, chainrule):
        with pytest.raises(RuntimeError, match=f"^Parent directory {tmp_path / 'absent'} does "
                                               "not exist.$"):
            lib.save({"w": lib.ones(2)}, missing)
        with pytest.raises(RuntimeError):
            lib.save({"w": lib.ones(2)}, tmp_path)
    assert os.listdir(tmp_path) == []
    # Nothing written beside the directory either (a temporary file for it would go there).
    assert not [n for n in os.listdir(tmp_path.parent) if n.startswith(f".{tmp_path.name}.")]


def test_a_valid_file_is_read_once(tmp_path):
    """The checks cost no copies: loading holds the file's bytes and the tensors, no more."""
    path = tmp_path / "big.safetensors"
    save({"w": chainrule.arange(2_000_000, dtype=chainrule.float64)}, path)
    size = os.path.getsize(path)
    tracemalloc.start()
    try:
        back = load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert back["w"][-1].item() == 1_999_999.0
    assert peak < 2.5 * size
