"""save/load: safetensors files (``.safetensors`` paths), nested state dicts, atomic writes,
errors, torch interop; PyTorch's zip format, the default, is tested in test_torch_checkpoint.py."""

from __future__ import annotations

import io
import math
import os
import sys
from collections import OrderedDict

import numpy as np
import pytest
import safetensors.torch
import torch

import chainrule
from chainrule import serialization
from chainrule.serialization import load, save


def canon(obj):
    """Plain comparable data that keeps container and scalar types; tensors as values."""
    if isinstance(obj, (chainrule.Tensor, torch.Tensor)):
        return ("tensor", repr(obj.dtype), tuple(obj.shape), obj.requires_grad,
                obj.detach().numpy().tolist())
    if isinstance(obj, dict):
        return (type(obj).__name__, [(canon(k), canon(v)) for k, v in obj.items()])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [canon(v) for v in obj])
    if isinstance(obj, float) and math.isnan(obj):
        return ("float", "nan")
    return (type(obj).__name__, repr(obj))


def state(lib):
    """An optimizer-like nested state dict built with chainrule or with torch."""
    return {
        "state": {0: {"step": lib.tensor(3.0), "exp_avg": lib.arange(6.0).reshape(2, 3)},
                  1: {"step": lib.tensor(3.0), "exp_avg": lib.zeros(4, dtype=lib.float64)}},
        "param_groups": [{"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "amsgrad": False,
                          "weight_decay": 0, "params": [0, 1], "name": None, "tag": "main",
                          "limits": (float("-inf"), float("inf"), float("nan")),
                          "big": 2**70}],
        "weights": OrderedDict([("fc.weight", lib.ones(2, 2, requires_grad=True)),
                                ("fc.bias", lib.tensor([1, 2], dtype=lib.int32))]),
    }


def test_nested_state_dict_round_trips_like_torch_save(tmp_path):
    save(state(chainrule), tmp_path / "state.safetensors")
    torch.save(state(torch), tmp_path / "state.pt")
    ours = load(tmp_path / "state.safetensors")
    theirs = torch.load(tmp_path / "state.pt")
    assert canon(ours) == canon(theirs)
    assert type(next(iter(ours["state"]))) is int
    assert ours["weights"]["fc.weight"].requires_grad and ours["weights"]["fc.weight"].is_leaf


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int16", "int32",
                                   "int64", "uint8", "bool", "complex64", "complex128"])
def test_tensor_round_trips_every_dtype(tmp_path, dtype):
    values = chainrule.tensor([[0.0, 1.5, -2.0], [3.0, 0.0, 7.0]]).to(getattr(chainrule, dtype))
    for t in (values, values.T, values[0, 1]):  # also non-contiguous and 0-dim
        save(t, tmp_path / "t.safetensors")
        back = load(tmp_path / "t.safetensors")
        assert isinstance(back, chainrule.Tensor)
        assert back.dtype == t.dtype and back.shape == t.shape
        np.testing.assert_array_equal(back.numpy(), t.numpy())


def test_loaded_tensors_are_writable_and_independent(tmp_path):
    t = chainrule.ones(3)
    save({"t": t}, tmp_path / "t.safetensors")
    back = load(tmp_path / "t.safetensors")["t"]
    back.numpy()[0] = 5.0
    assert t.tolist() == [1.0, 1.0, 1.0] and back.tolist() == [5.0, 1.0, 1.0]


def test_torch_safetensors_reads_chainrule_files(tmp_path):
    path = tmp_path / "state.safetensors"
    save(state(chainrule), path)
    read = safetensors.torch.load_file(path)
    expected = {"state.0.step": torch.tensor(3.0),
                "state.0.exp_avg": torch.arange(6.0).reshape(2, 3),
                "state.1.step": torch.tensor(3.0),
                "state.1.exp_avg": torch.zeros(4, dtype=torch.float64),
                "weights.fc.weight": torch.ones(2, 2),
                "weights.fc.bias": torch.tensor([1, 2], dtype=torch.int32)}
    assert sorted(read) == sorted(expected)
    for key, value in expected.items():
        assert read[key].dtype == value.dtype, key
        assert torch.equal(read[key], value), key


def test_flat_state_dict_keeps_its_keys_for_other_readers(tmp_path):
    flat = {"fc.weight": chainrule.randn(3, 2), "fc.bias": chainrule.zeros(3)}
    save(flat, tmp_path / "model.safetensors")
    read = safetensors.torch.load_file(tmp_path / "model.safetensors")
    assert set(read) == {"fc.weight", "fc.bias"}
    assert torch.equal(read["fc.weight"], torch.from_numpy(flat["fc.weight"].numpy()))
    assert list(load(tmp_path / "model.safetensors")) == ["fc.weight", "fc.bias"]


def test_chainrule_reads_torch_safetensors_files(tmp_path):
    tensors = {"w": torch.randn(3, 4), "b": torch.arange(3), "mask": torch.tensor([True, False]),
               "half": torch.ones(2, dtype=torch.float16), "c": torch.tensor([1 + 2j]),
               "scalar": torch.tensor(2.5, dtype=torch.float64)}
    safetensors.torch.save_file(tensors, tmp_path / "torch.safetensors")
    ours = load(tmp_path / "torch.safetensors")
    assert set(ours) == set(tensors)
    for key, value in tensors.items():
        assert repr(ours[key].dtype) == repr(value.dtype), key
        np.testing.assert_array_equal(ours[key].numpy(), value.numpy())


def test_unsupported_dtype_in_a_foreign_file_names_the_tensor(tmp_path):
    path = tmp_path / "u16.safetensors"
    safetensors.torch.save_file({"w": torch.ones(2, dtype=torch.uint16)}, path)
    with pytest.raises(TypeError, match="tensor 'w'.*U16"):
        load(path)


def test_file_objects(tmp_path):
    buffer = io.BytesIO()
    save({"a": chainrule.ones(2), "n": 3}, buffer)
    buffer.seek(0)
    back = load(buffer)
    assert back["n"] == 3 and back["a"].tolist() == [1.0, 1.0]


def test_crash_mid_save_keeps_the_old_file_and_no_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.safetensors"
    save({"w": chainrule.zeros(100)}, path)
    old = path.read_bytes()

    def crash(file, data):
        file.write(data[: len(data) // 2])
        raise OSError("disk full")

    monkeypatch.setattr(serialization, "_write", crash)
    with pytest.raises(OSError, match="disk full"):
        save({"w": chainrule.ones(100)}, path)
    assert path.read_bytes() == old
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]
    assert load(path)["w"].tolist() == [0.0] * 100


def test_overwrite_is_complete_and_respects_umask(tmp_path):
    path = tmp_path / "ckpt.safetensors"
    save({"w": chainrule.zeros(3)}, path)
    save({"w": chainrule.ones(3)}, str(path))
    assert load(str(path))["w"].tolist() == [1.0, 1.0, 1.0]
    assert os.listdir(tmp_path) == ["ckpt.safetensors"]
    umask = os.umask(0)
    os.umask(umask)
    assert os.stat(path).st_mode & 0o777 == 0o666 & ~umask


@pytest.mark.parametrize("damage", ["truncated", "short", "garbage", "huge_header", "bad_json"])
def test_corrupt_files_raise_runtime_error_naming_the_file(tmp_path, damage):
    path = tmp_path / "ckpt.safetensors"
    save({"w": chainrule.ones(10), "step": 4}, path)
    data = path.read_bytes()
    size = int.from_bytes(data[:8], "little")
    damaged = {
        "truncated": data[:-7],
        "short": data[:5],
        "garbage": b"not a safetensors file at all",
        "huge_header": (10**9).to_bytes(8, "little") + data[8:],
        "bad_json": data[:8] + b"{" * size + data[8 + size:],
    }[damage]
    path.write_bytes(damaged)
    with pytest.raises(RuntimeError, match=f"'{path}' is not a valid safetensors file"):
        load(path)


def test_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "absent.safetensors")


def test_torch_keyword_arguments_are_accepted(tmp_path):
    path = tmp_path / "t.safetensors"
    save(chainrule.ones(2), path, pickle_protocol=4)
    for kwargs in ({"map_location": "cpu"}, {"map_location": chainrule.device("cpu")},
                   {"map_location": lambda storage, loc: storage}, {"weights_only": True},
                   {"weights_only": False, "mmap": True}):
        assert load(path, **kwargs).tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="map_location 'cuda:0' is not available"):
        load(path, map_location="cuda:0")


def test_unsavable_objects_and_key_collisions(tmp_path):
    path = tmp_path / "x.safetensors"
    with pytest.raises(TypeError, match="cannot save a set at 'a'.*never pickles"):
        save({"a": {1, 2}}, path)
    with pytest.raises(TypeError, match="dict key"):
        save({(1, 2): 3}, path)
    with pytest.raises(ValueError, match="two tensors would be stored under the key 'a.b'"):
        save({"a.b": chainrule.ones(1), "a": {"b": chainrule.ones(1)}}, path)
    assert not path.exists()


def test_missing_safetensors_raises_import_error_with_the_install_hint(tmp_path, monkeypatch):
    save(chainrule.ones(1), tmp_path / "x.safetensors")
    monkeypatch.setitem(sys.modules, "safetensors", None)
    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    with pytest.raises(ImportError, match=r'pip install "chainrule\[safetensors\]"'):
        save(chainrule.ones(1), tmp_path / "y.safetensors")
    with pytest.raises(ImportError, match=r'pip install "chainrule\[safetensors\]"'):
        load(tmp_path / "x.safetensors")
    # PyTorch's format, the default, needs only the standard library
    save({"w": chainrule.ones(2), "step": 3}, tmp_path / "x.pt")
    back = load(tmp_path / "x.pt")
    assert back["step"] == 3 and back["w"].tolist() == [1.0, 1.0]


def test_tensor_attributes_round_trip_like_torch_save(tmp_path):
    def scenario(lib, path, saver, loader):
        x = lib.ones(2)
        x.tag = "w"
        x.extra = {"scale": 2.5, "ids": (1, 2), "mask": lib.tensor([True, False])}
        saver({"x": x, "plain": lib.zeros(1)}, path)
        got = loader(path)
        return (got["x"].tag, got["x"].extra["scale"], got["x"].extra["ids"],
                got["x"].extra["mask"].tolist(), vars(got["plain"]), got["x"].tolist())

    ours = scenario(chainrule, tmp_path / "a.safetensors", save, load)
    theirs = scenario(torch, tmp_path / "a.pt", torch.save, torch.load)
    assert ours == theirs
