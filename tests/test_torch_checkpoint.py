"""PyTorch's checkpoint format both ways: files torch.save writes load in chainrule, files
chainrule.save writes load in torch (weights_only=True), and hostile files are refused without
running anything."""

from __future__ import annotations

import io
import math
import os
import pickle
import struct
import tracemalloc
import warnings
import zipfile
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
import pytest
import torch

import chainrule
from chainrule import serialization

DTYPES = ["float16", "float32", "float64", "bfloat16", "complex64", "complex128", "bool", "int8",
          "int16", "int32", "int64", "uint8", "float8_e4m3fn", "float8_e5m2",
          "float8_e4m3fnuz", "float8_e5m2fnuz"]


def values(t) -> np.ndarray:
    """A tensor of either library as float64 (complex128) NumPy values."""
    t = t.detach()
    if t.dtype in (torch.complex64, torch.complex128, chainrule.complex64, chainrule.complex128):
        return np.asarray(t.tolist(), dtype=np.complex128)
    lib = torch if isinstance(t, torch.Tensor) else chainrule
    return np.asarray(t.to(lib.float64).tolist(), dtype=np.float64)


def sample(lib, name: str):
    """The same values in either library: 2x3 from a seedless pattern."""
    base = lib.tensor([[0.5, -1.25, 3.0], [7.0, 0.0, -2.5]], dtype=lib.float64)
    if name == "bool":
        return base > 0
    if name.startswith("complex"):
        return lib.complex(base, -base).to(getattr(lib, name))
    if name.startswith(("int", "uint")):
        return (base * 2).abs().to(getattr(lib, name)) if name == "uint8" else \
            (base * 2).to(getattr(lib, name))
    if name == "float8_e8m0fnu":
        return base.abs().clamp(min=0.5).to(getattr(lib, name))
    return base.to(getattr(lib, name))


def same(ours, theirs) -> bool:
    return (tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype)
            and np.array_equal(values(ours), values(theirs), equal_nan=True))


# ---- torch.save -> chainrule.load ----------------------------------------------------------


@pytest.mark.parametrize("name", DTYPES)
def test_every_dtype_loads_from_torch_and_back(tmp_path, name):
    path = tmp_path / "t.pt"
    theirs = sample(torch, name)
    torch.save(theirs, path)
    ours = chainrule.load(path)
    assert same(ours, theirs)
    chainrule.save(ours, tmp_path / "back.pt")
    again = torch.load(tmp_path / "back.pt", weights_only=True)
    assert same(ours, again) and again.dtype is theirs.dtype


def layouts(lib):
    """Views PyTorch keeps as views when it saves: offsets, strides, 0-d, empty, expanded."""
    base = lib.arange(24.0).reshape(4, 6)
    return OrderedDict([
        ("base", base), ("row", base[1]), ("transposed", base.t()), ("step", base[:, ::2]),
        ("offset_block", base[1:3, 2:5]), ("element", base[2, 3]), ("scalar", lib.tensor(2.5)),
        ("empty", lib.zeros(0, 3)), ("empty_view", base[4:]), ("expanded",
                                                             lib.ones(3, 1).expand(3, 4)),
    ])


def test_views_keep_shape_strides_offset_and_sharing(tmp_path):
    path = tmp_path / "views.pt"
    theirs = layouts(torch)
    torch.save(theirs, path)
    ours = chainrule.load(path)
    for key, t in theirs.items():
        assert same(ours[key], t), key
        if t.numel():
            assert ours[key].stride() == t.stride(), key
            assert ours[key].storage_offset() == t.storage_offset(), key
    shared = ["base", "row", "transposed", "step", "offset_block", "element"]
    pointers = {ours[k].untyped_storage().data_ptr() for k in shared}
    assert len(pointers) == 1  # one storage, as in the file
    ours["base"][1, 0] = 100.0  # and one memory: writing through one writes the others
    assert ours["row"][0].item() == 100.0 and ours["transposed"][0, 1].item() == 100.0


def test_views_saved_by_chainrule_share_in_torch(tmp_path):
    path = tmp_path / "views.pt"
    ours = layouts(chainrule)
    chainrule.save(ours, path)
    theirs = torch.load(path, weights_only=True)
    for key, t in ours.items():
        assert same(t, theirs[key]), key
        if t.numel():
            assert theirs[key].stride() == t.stride(), key
            assert theirs[key].storage_offset() == t.storage_offset(), key
    assert theirs["row"].untyped_storage().data_ptr() == \
        theirs["base"].untyped_storage().data_ptr()
    theirs["base"][1, 0] = 100.0
    assert theirs["row"][0].item() == 100.0


def plain(lib):
    """Nested containers of plain values, as state dicts and training scripts hold them."""
    return {
        "epoch": 7, "big": 2**70, "neg": -(2**40), "lr": 1e-3, "inf": float("inf"),
        "nan": float("nan"), "name": "run-α", "none": None, "flag": True,
        "bytes": b"\x00\xffab", "tuple": (1, (2.5, "x"), []), "list": [1, [2, [3]]],
        "set": {1, 2, 3}, "complex": 1.5 - 2j, "dtype": lib.bfloat16,
        "device": lib.device("cpu"), "size": lib.Size([2, 3]),
        "odict": OrderedDict([(1, "a"), ("b", 2.0)]), "int_keys": {0: "zero", -1: "minus"},
    }


def canon(obj):
    if isinstance(obj, (torch.Tensor, chainrule.Tensor)):
        return ("tensor", str(obj.dtype), tuple(obj.shape), values(obj).tolist())
    if isinstance(obj, dict):
        return (type(obj).__name__, [(canon(k), canon(v)) for k, v in obj.items()])
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [canon(v) for v in obj])
    if isinstance(obj, set):
        return ("set", sorted(obj))
    if isinstance(obj, float) and math.isnan(obj):
        return ("float", "nan")
    return (type(obj).__name__, repr(obj))


def test_plain_values_both_ways(tmp_path):
    torch.save(plain(torch), tmp_path / "theirs.pt")
    assert canon(chainrule.load(tmp_path / "theirs.pt")) == canon(plain(torch))
    chainrule.save(plain(chainrule), tmp_path / "ours.pt")
    assert canon(torch.load(tmp_path / "ours.pt", weights_only=True)) == canon(plain(torch))


def tensors_with_state(lib):
    w = lib.nn.Parameter(lib.ones(2, 2))
    tagged = lib.arange(3.0)
    tagged.tag = {"scale": 2.5, "ids": (1, 2)}
    return {"w": w, "frozen": lib.nn.Parameter(lib.zeros(2), requires_grad=False),
            "x": lib.ones(3, requires_grad=True), "tagged": tagged, "again": w}


def describe(got) -> tuple:
    return (type(got["w"]).__name__, got["w"].requires_grad, type(got["frozen"]).__name__,
            got["frozen"].requires_grad, got["x"].requires_grad, got["x"].is_leaf,
            got["tagged"].tag, got["again"] is got["w"], values(got["w"]).tolist())


@pytest.mark.parametrize("saver, loader", [("torch", "chainrule"), ("chainrule", "torch"),
                                           ("chainrule", "chainrule")])
def test_parameters_requires_grad_and_attributes(tmp_path, saver, loader):
    path = tmp_path / "t.pt"
    torch.save(tensors_with_state(torch), path)
    expected = describe(torch.load(path, weights_only=True))
    lib = torch if saver == "torch" else chainrule
    lib.save(tensors_with_state(lib), path)
    got = (chainrule.load(path) if loader == "chainrule"
           else torch.load(path, weights_only=True))
    assert describe(got) == expected


def test_conj_and_neg_bits_are_applied(tmp_path):
    torch.save({"c": torch.tensor([1 + 2j, 3 - 1j]).conj(),
                "n": torch._neg_view(torch.tensor([1.0, -2.0]))}, tmp_path / "bits.pt")
    got = chainrule.load(tmp_path / "bits.pt")
    assert got["c"].tolist() == [1 - 2j, 3 + 1j] and got["n"].tolist() == [-1.0, 2.0]


def test_meta_tensors_both_ways(tmp_path):
    torch.save({"m": torch.empty(2, 3, device="meta").t()}, tmp_path / "meta.pt")
    got = chainrule.load(tmp_path / "meta.pt")["m"]
    assert got.is_meta and tuple(got.shape) == (3, 2) and got.stride() == (1, 3)
    chainrule.save({"m": got}, tmp_path / "back.pt")
    back = torch.load(tmp_path / "back.pt", weights_only=True)["m"]
    assert back.is_meta and back.shape == (3, 2) and back.stride() == (1, 3)


def test_storages_themselves(tmp_path):
    t = torch.arange(4, dtype=torch.int32)
    torch.save({"untyped": t.untyped_storage(), "t": t.clone()}, tmp_path / "s.pt")
    got = chainrule.load(tmp_path / "s.pt")  # as PyTorch: a typed storage of bytes
    assert isinstance(got["untyped"], chainrule.TypedStorage)
    assert got["untyped"].dtype is chainrule.uint8 and got["t"].tolist() == [0, 1, 2, 3]
    assert bytes(got["untyped"].untyped().tolist()) == bytes(t.untyped_storage().tolist())
    chainrule.save({"untyped": got["untyped"].untyped(), "typed": got["untyped"]},
                   tmp_path / "back.pt")
    back = torch.load(tmp_path / "back.pt", weights_only=True)
    with warnings.catch_warnings():  # PyTorch's once-per-process TypedStorage warning
        warnings.simplefilter("ignore")
        found = [(back[key].dtype, bytes(back[key].untyped().tolist()))
                 for key in ("untyped", "typed")]
    torch.storage._reset_warn_typed_storage_removal()  # (other tests expect it once)
    assert found == [(torch.uint8, bytes(t.untyped_storage().tolist()))] * 2


def test_legacy_format_loads(tmp_path):
    path = tmp_path / "legacy.pt"
    theirs = layouts(torch)
    theirs["ints"] = torch.tensor([1, -2], dtype=torch.int16)
    theirs["plain"] = {"epoch": 3, "name": "x"}
    torch.save(theirs, path, _use_new_zipfile_serialization=False)
    ours = chainrule.load(path)
    for key, t in theirs.items():
        if isinstance(t, torch.Tensor):
            assert same(ours[key], t), key
    assert ours["plain"] == {"epoch": 3, "name": "x"}
    assert ours["row"].untyped_storage().data_ptr() == ours["base"].untyped_storage().data_ptr()
    with pytest.raises(RuntimeError, match="mmap can only be used with files saved with"):
        chainrule.load(path, mmap=True)
    with pytest.raises(RuntimeError, match="zip format only"):
        chainrule.save(ours, tmp_path / "x.pt", _use_new_zipfile_serialization=False)


# ---- what the archive holds ----------------------------------------------------------------


def data_offsets(path) -> dict:
    """Each record's name and the offset of its data, read from its local header."""
    raw = open(path, "rb").read()
    with zipfile.ZipFile(path) as archive:
        out = {}
        for info in archive.infolist():
            n, m = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
            out[info.filename] = info.header_offset + 30 + n + m
        return out


def test_the_archive_is_laid_out_as_torch_writes_it(tmp_path):
    obj = {"w": chainrule.arange(10.0), "b": chainrule.ones(3, dtype=chainrule.int64)}
    chainrule.save(obj, tmp_path / "my.model.pt")
    torch.save({"w": torch.arange(10.0), "b": torch.ones(3, dtype=torch.int64)},
               tmp_path / "my.model.torch")
    ours, theirs = zipfile.ZipFile(tmp_path / "my.model.pt"), \
        zipfile.ZipFile(tmp_path / "my.model.torch")
    assert ours.namelist() == theirs.namelist()  # "my.model/data.pkl", ..., in torch's order
    assert all(i.compress_type == zipfile.ZIP_STORED for i in ours.infolist())
    for record in ("byteorder", "version", ".format_version", ".storage_alignment"):
        assert ours.read(f"my.model/{record}") == theirs.read(f"my.model/{record}")
    assert len(ours.read("my.model/.data/serialization_id")) == 40
    assert all(offset % 64 == 0 for offset in data_offsets(tmp_path / "my.model.pt").values())
    buffer = io.BytesIO()
    chainrule.save(obj, buffer)
    assert zipfile.ZipFile(buffer).namelist()[0] == "archive/data.pkl"


def test_mmap_and_file_objects(tmp_path):
    path = tmp_path / "w.pt"
    chainrule.save({"w": chainrule.arange(1000.0), "v": chainrule.arange(1000.0)[10:20]}, path)
    mapped = chainrule.load(path, mmap=True)
    memory = mapped["w"].numpy()
    while not isinstance(memory, np.memmap):
        memory = memory.base
    assert memory.filename == str(path)  # the tensor's memory maps the file
    assert mapped["v"].tolist() == list(range(10, 20))
    mapped["w"][0] = 5.0  # MAP_PRIVATE: the file is not changed
    assert chainrule.load(path)["w"][0].item() == 0.0
    assert torch.load(path, mmap=True, weights_only=True)["v"].tolist() == list(range(10, 20))
    with open(path, "rb") as f:
        assert chainrule.load(f)["v"].tolist() == list(range(10, 20))
        with pytest.raises(ValueError, match="f must be a file path"):
            chainrule.load(f, mmap=True)
    assert chainrule.load(str(path))["v"][0].item() == 10.0


def test_map_location_as_torch(tmp_path):
    path = tmp_path / "w.pt"
    torch.save({"w": torch.ones(2)}, path)
    for where in ("cpu", torch.device("cpu").type, chainrule.device("cpu"), {"cpu": "cpu"},
                  lambda storage, location: storage, lambda storage, location: None):
        assert chainrule.load(path, map_location=where)["w"].tolist() == [1.0, 1.0]
    seen = []
    chainrule.load(path, map_location=lambda storage, location: seen.append(location))
    assert seen == ["cpu"]
    meta = chainrule.load(path, map_location="meta")["w"]
    assert meta.is_meta and tuple(meta.shape) == (2,)
    with pytest.raises(RuntimeError):
        chainrule.load(path, map_location="cuda:0")
    # a file saved on a GPU: PyTorch's error on a CPU machine, and map_location to the CPU
    cuda = tmp_path / "cuda.pt"
    rewrite_pickle(path, cuda, lambda p: p.replace(b"X\x03\x00\x00\x00cpu",
                                                   b"X\x06\x00\x00\x00cuda:0"))
    for lib in (torch, chainrule):
        with pytest.raises(RuntimeError, match="torch.cuda.is_available\\(\\) is False"):
            lib.load(cuda)
        assert lib.load(cuda, map_location="cpu")["w"].tolist() == [1.0, 1.0]
        assert lib.load(cuda, map_location={"cuda:0": "cpu"})["w"].tolist() == [1.0, 1.0]


def test_big_endian_files_are_read_in_the_machines_order(tmp_path):
    path = tmp_path / "le.pt"
    torch.save({"w": torch.tensor([1.5, -2.0]), "i": torch.tensor([258], dtype=torch.int32)},
               path)
    big = tmp_path / "be.pt"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(big, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("/byteorder"):
                data = b"big"
            elif "/data/" in info.filename:
                data = np.frombuffer(data, np.uint8).reshape(-1, 4)[:, ::-1].tobytes()
            dst.writestr(info.filename, data)
    for lib in (torch, chainrule):
        got = lib.load(big)
        assert got["w"].tolist() == [1.5, -2.0] and got["i"].tolist() == [258]


# ---- the user's classes: safe globals ------------------------------------------------------


@dataclass
class Config:
    depth: int
    name: str


def test_safe_globals_admit_the_users_classes(tmp_path):
    path = tmp_path / "cfg.pt"
    torch.save({"cfg": Config(3, "net"), "w": torch.ones(1)}, path)
    for lib in (torch, chainrule):
        with pytest.raises(pickle.UnpicklingError, match=r"Unsupported global: GLOBAL "
                           r"\S*Config was not an allowed global by default.*add_safe_globals"):
            lib.load(path, weights_only=True)
        with lib.serialization.safe_globals([Config]):
            assert lib.load(path, weights_only=True)["cfg"] == Config(3, "net")
        assert Config not in lib.serialization.get_safe_globals()
        lib.serialization.add_safe_globals([Config])
        try:
            assert Config in lib.serialization.get_safe_globals()
            assert lib.load(path, weights_only=True)["cfg"].depth == 3
        finally:
            lib.serialization.clear_safe_globals()
        assert lib.serialization.get_safe_globals() == []


def test_weights_only_false_still_runs_no_code(tmp_path):
    path = tmp_path / "cfg.pt"
    torch.save({"cfg": Config(3, "net")}, path)
    with pytest.raises(pickle.UnpicklingError, match="Config was not an allowed global"):
        chainrule.load(path, weights_only=False)
    assert torch.load(path, weights_only=False)["cfg"] == Config(3, "net")


def test_a_whole_module_is_refused_naming_state_dict(tmp_path):
    path = tmp_path / "model.pt"
    torch.save(torch.nn.Linear(2, 2), path)
    with pytest.raises(pickle.UnpicklingError, match="Linear.*state_dict"):
        chainrule.load(path)
    with pytest.raises(TypeError, match=r"whole module \(Linear\).*state_dict\(\)"):
        chainrule.save(chainrule.nn.Linear(2, 2), tmp_path / "ours.pt")
    assert not (tmp_path / "ours.pt").exists()


def test_dtypes_chainrule_lacks_are_named(tmp_path):
    torch.save({"w": torch.ones(2, dtype=torch.uint16)}, tmp_path / "u16.pt")
    with pytest.raises(TypeError, match="torch.uint16, which chainrule does not support"):
        chainrule.load(tmp_path / "u16.pt")


# ---- a model and its optimizer, both ways --------------------------------------------------


def net(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(4, 8, 3), nn.ReLU(), nn.Flatten(),
                         nn.Linear(8 * 2 * 2, 16), nn.Tanh(), nn.Linear(16, 3))


def train(lib, model, steps: int = 3):
    """A few Adam steps on fixed data; returns the optimizer."""
    opt = lib.optim.Adam(model.parameters(), lr=1e-2)
    x = lib.tensor(np.linspace(-1, 1, 4 * 64, dtype=np.float32).reshape(4, 1, 8, 8))
    y = lib.tensor([0, 1, 2, 1])
    for _ in range(steps):
        opt.zero_grad()
        lib.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    return opt


def probe(lib):
    return lib.tensor(np.cos(np.arange(2 * 64, dtype=np.float32)).reshape(2, 1, 8, 8))


MODEL_DIFFERENCES: dict = {}


def test_a_torch_trained_model_runs_the_same_on_chainrule(tmp_path):
    torch.manual_seed(0)
    theirs = net(torch)
    train(torch, theirs)
    theirs.eval()
    torch.save(theirs.state_dict(), tmp_path / "model.pt")
    ours = net(chainrule)
    ours.load_state_dict(chainrule.load(tmp_path / "model.pt"))
    ours.eval()
    with torch.no_grad():
        expected = theirs(probe(torch)).numpy()
    got = ours(probe(chainrule)).detach().numpy()
    MODEL_DIFFERENCES["torch->chainrule"] = float(np.abs(got - expected).max())
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def test_a_chainrule_trained_model_runs_the_same_on_torch(tmp_path):
    chainrule.manual_seed(0)
    ours = net(chainrule)
    train(chainrule, ours)
    ours.eval()
    chainrule.save(ours.state_dict(), tmp_path / "model.pt")
    theirs = net(torch)
    theirs.load_state_dict(torch.load(tmp_path / "model.pt", weights_only=True))
    theirs.eval()
    with torch.no_grad():
        expected = theirs(probe(torch)).numpy()
    got = ours(probe(chainrule)).detach().numpy()
    MODEL_DIFFERENCES["chainrule->torch"] = float(np.abs(got - expected).max())
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("direction", ["torch->chainrule", "chainrule->torch"])
def test_optimizer_state_both_ways(tmp_path, direction):
    """Adam's state (step counts, moments, param groups) saved by one library resumes in the
    other: the next step gives the same parameters."""
    src, dst = (torch, chainrule) if direction == "torch->chainrule" else (chainrule, torch)
    src.manual_seed(0)
    model_src = net(src)
    opt_src = train(src, model_src)
    state = {"model": model_src.state_dict(), "optim": opt_src.state_dict()}
    (torch.save if src is torch else chainrule.save)(state, tmp_path / "ckpt.pt")
    loaded = (chainrule.load(tmp_path / "ckpt.pt") if dst is chainrule
              else torch.load(tmp_path / "ckpt.pt", weights_only=True))
    model_dst = net(dst)
    model_dst.load_state_dict(loaded["model"])
    opt_dst = dst.optim.Adam(model_dst.parameters(), lr=1e-2)
    opt_dst.load_state_dict(loaded["optim"])
    assert opt_dst.state_dict()["param_groups"][0]["lr"] == 1e-2
    for lib, model, opt in ((src, model_src, opt_src), (dst, model_dst, opt_dst)):
        model.train()
        x = lib.tensor(np.linspace(-1, 1, 4 * 64, dtype=np.float32).reshape(4, 1, 8, 8))
        opt.zero_grad()
        lib.nn.functional.cross_entropy(model(x), lib.tensor([0, 1, 2, 1])).backward()
        opt.step()
    for (name, a), b in zip(model_src.state_dict().items(), model_dst.state_dict().values()):
        np.testing.assert_allclose(values(b), values(a), rtol=1e-5, atol=1e-6, err_msg=name)


# ---- hostile files -------------------------------------------------------------------------


def archive(pickled: bytes, storages: dict | None = None, name: str = "archive") -> bytes:
    """A zip checkpoint holding ``pickled`` as data.pkl and ``storages`` as data/<key>."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(f"{name}/data.pkl", pickled)
        z.writestr(f"{name}/byteorder", "little")
        for key, data in (storages or {}).items():
            z.writestr(f"{name}/data/{key}", data)
        z.writestr(f"{name}/version", "3\n")
    return out.getvalue()


def rewrite_pickle(src, dst, change) -> None:
    """Copy the checkpoint ``src`` to ``dst`` with its data.pkl changed by ``change``."""
    with zipfile.ZipFile(src) as z:
        records = {i.filename: z.read(i) for i in z.infolist()}
    with zipfile.ZipFile(dst, "w") as z:
        for name, data in records.items():
            z.writestr(name, change(data) if name.endswith("/data.pkl") else data)


def tensor_pickle(numel=4, offset=0, size=(4,), stride=(1,), storage="FloatStorage") -> bytes:
    """data.pkl of one tensor, its claims as given."""
    def ints(values):
        return b"(" + b"".join(b"\x8a\x08" + struct.pack("<q", v) for v in values) + b"t"

    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\n"
            + storage.encode() + b"\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpu\x8a\x08"
            + struct.pack("<q", numel) + b"tQ\x8a\x08" + struct.pack("<q", offset)
            + ints(size) + ints(stride) + b"\x89ccollections\nOrderedDict\n)RtR.")


def test_the_hand_made_tensor_pickle_is_valid(tmp_path):
    """The crafted files below differ from this one in one claim only."""
    path = tmp_path / "ok.pt"
    path.write_bytes(archive(tensor_pickle(), {"0": np.arange(4, dtype=np.float32).tobytes()}))
    assert chainrule.load(path).tolist() == [0.0, 1.0, 2.0, 3.0]
    assert torch.load(path, weights_only=True).tolist() == [0.0, 1.0, 2.0, 3.0]


CODE = {  # pickles that would run code, each naming the global PyTorch's loader names
    "os.system": b"\x80\x02cos\nsystem\nX\x04\x00\x00\x00trueR.",
    "posix.system": b"\x80\x02cposix\nsystem\nX\x04\x00\x00\x00true\x85R.",
    "builtins.eval": b"\x80\x02cbuiltins\neval\nX\x01\x00\x00\x001\x85R.",
    "subprocess.run": b"\x80\x02csubprocess\nrun\n]X\x04\x00\x00\x00trueaR.",
    "print": b"\x80\x02c__builtin__\nprint\nX\x01\x00\x00\x00x\x85R.",
    "collections.namedtuple": b"\x80\x02ccollections\nnamedtuple\n)R.",
    "numpy.core.multiarray._reconstruct": b"\x80\x02cnumpy.core.multiarray\n_reconstruct\n)R.",
}


@pytest.mark.parametrize("name", list(CODE))
def test_a_pickle_that_would_run_code_is_refused(tmp_path, name, monkeypatch):
    calls = []
    monkeypatch.setattr(os, "system", lambda *a: calls.append(a))
    path = tmp_path / "evil.pt"
    path.write_bytes(archive(CODE[name]))
    with pytest.raises(pickle.UnpicklingError, match=name.replace(".", r"\.")):
        chainrule.load(path)
    with pytest.raises(pickle.UnpicklingError, match=name.replace(".", r"\.")):
        chainrule.load(path, weights_only=False)
    with pytest.raises(pickle.UnpicklingError):  # PyTorch's weights-only loader too
        torch.load(path, weights_only=True)
    assert calls == []


def test_blocked_modules_stay_blocked_when_marked_safe(tmp_path):
    path = tmp_path / "evil.pt"
    path.write_bytes(archive(CODE["os.system"]))
    with chainrule.serialization.safe_globals([os.system]):
        with pytest.raises(pickle.UnpicklingError, match="whose module os is blocked"):
            chainrule.load(path)


OPCODE_ABUSE = {
    # REDUCE of an allowed value that is no function: a dtype, a storage class
    "reduce_dtype": (b"\x80\x02ctorch\nfloat32\n)R.", "unrecognized function"),
    "reduce_storage_class": (b"\x80\x02ctorch\nFloatStorage\nK\x10\x85R.",
                             "unrecognized function"),
    # torch.Tensor(10**12) would allocate: the class is allowed as a name, not as a call
    "reduce_tensor_class": (b"\x80\x02ctorch\nTensor\n\x8a\x05\x00\x10\xa5\xd4\xe8\x85R.",
                            "unrecognized function"),
    "newobj_tensor": (b"\x80\x02ctorch\nTensor\n)\x81.", "Can only create new object"),
    "build_list": (b"\x80\x02]}b.", "Can only build"),
    "setitem_list": (b"\x80\x02]K\x01K\x02s.", "Can only SETITEM"),
    "append_dict": (b"\x80\x02}K\x01a.", "Can only append"),
    "persistent_module": (b"\x80\x02(X\x06\x00\x00\x00moduleX\x01\x00\x00\x00xtQ.",
                          "Only persistent_load of storage"),
    "inst_opcode": (b"\x80\x02ios\nsystem\n(X\x04\x00\x00\x00truei.", "Unsupported operand"),
    "truncated": (b"\x80\x02X\xff\x00\x00\x00ab", "truncated"),
    "stack_underflow": (b"\x80\x02t.", "could not find MARK"),
    "memo_missing": (b"\x80\x02h\x05.", "Memo value not found"),
}


@pytest.mark.parametrize("name", list(OPCODE_ABUSE))
def test_opcode_abuse_raises_unpickling_error(tmp_path, name):
    pickled, message = OPCODE_ABUSE[name]
    path = tmp_path / f"{name}.pt"
    path.write_bytes(archive(pickled))
    with pytest.raises(pickle.UnpicklingError, match=message):
        chainrule.load(path)


def nested_tuple_key(depth: int) -> bytes:
    """A dict whose one key is a tuple of depth ``depth``, each level the previous one twice
    (memo references): hashing it would take 2**depth steps."""
    out = b"\x80\x02}K\x00"
    out += b"q\x00"
    for i in range(depth):
        out += b"h" + bytes((i % 256,)) + b"h" + bytes((i % 256,)) + b"\x86q" + bytes(((i + 1)
                                                                                   % 256,))
    return out + b"K\x01s."


def test_a_key_that_would_hash_forever_is_refused(tmp_path):
    path = tmp_path / "hash.pt"
    path.write_bytes(archive(nested_tuple_key(200)))
    with pytest.raises(pickle.UnpicklingError, match="dict key or set element"):
        chainrule.load(path)


def test_repeated_copies_of_one_value_are_bounded(tmp_path):
    """bytes built 100,000 times from one memoized 100 kB string: 10 GB from a 600 kB file."""
    text = b"X" + struct.pack("<I", 100_000) + b"a" * 100_000 + b"q\x00"
    calls = b"".join(b"c_codecs\nencode\n(h\x00X\x06\x00\x00\x00latin1tR0"
                     for _ in range(100_000))
    path = tmp_path / "amplify.pt"
    path.write_bytes(archive(b"\x80\x02" + text + b"0" + calls + b"N."))
    tracemalloc.start()
    try:
        with pytest.raises(pickle.UnpicklingError, match="builds more than its own size"):
            chainrule.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20


STORAGE_OK = {"0": np.arange(4, dtype=np.float32).tobytes()}
SIZE_CLAIMS = {  # name: (pickle, fragment of the RuntimeError)
    "storage_of_1e15_elements": (tensor_pickle(numel=10**15), "holds 16 bytes, but the pickle "
                                                              "declares 4000000000000000"),
    "numel_overflow": (tensor_pickle(size=(2**40, 2**40), stride=(0, 0)), "overflows"),
    "empty_but_overflowing": (tensor_pickle(size=(0, 2**62), stride=(1, 1)), "overflows"),  # *
    "stride_past_the_storage": (tensor_pickle(stride=(1000,)), "out of bounds for storage"),
    "offset_past_the_storage": (tensor_pickle(offset=3), "out of bounds for storage"),
    "negative_size": (tensor_pickle(size=(-1,)), "not an int from 0"),
    "negative_stride": (tensor_pickle(stride=(-1,)), "not an int from 0"),
    "missing_record": (tensor_pickle().replace(b"X\x01\x00\x00\x000", b"X\x01\x00\x00\x009"),
                       "failed locating file data/9"),
}


@pytest.mark.parametrize("name", list(SIZE_CLAIMS))
def test_absurd_sizes_raise_before_memory_is_taken(tmp_path, name):
    pickled, fragment = SIZE_CLAIMS[name]
    path = tmp_path / f"{name}.pt"
    path.write_bytes(archive(pickled, STORAGE_OK))
    tracemalloc.start()
    try:
        with pytest.raises(RuntimeError, match=fragment):
            chainrule.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20
    if name != "empty_but_overflowing":  # (* PyTorch accepts an empty one; NumPy cannot)
        with pytest.raises(RuntimeError):  # PyTorch refuses each too
            torch.load(path, weights_only=True)


def damaged(kind: str, good: bytes) -> bytes:
    if kind == "truncated_half":
        return good[: len(good) // 2]
    if kind == "truncated_tail":
        return good[:-10]
    if kind == "not_a_zip":
        return b"PK\x03\x04" + b"\0" * 100
    raw = bytearray(good)
    with zipfile.ZipFile(io.BytesIO(good)) as z:
        info = next(i for i in z.infolist() if "/data/" in i.filename)
    # the record's entry in the central directory (after the data): its claims lie
    entry = bytes(raw).rfind(info.filename.encode()) - 46
    assert raw[entry:entry + 4] == b"PK\x01\x02"
    if kind == "record_size_lies":
        raw[entry + 20:entry + 28] = struct.pack("<II", 2**31, 2**31)
    elif kind == "record_offset_lies":
        raw[entry + 42:entry + 46] = struct.pack("<I", len(raw) + 1000)
    elif kind == "record_compressed":
        raw[entry + 10:entry + 12] = struct.pack("<H", zipfile.ZIP_DEFLATED)
    return bytes(raw)


@pytest.mark.parametrize("kind", ["truncated_half", "truncated_tail", "not_a_zip",
                                  "record_size_lies", "record_offset_lies", "record_compressed"])
def test_a_damaged_or_lying_archive_raises_runtime_error(tmp_path, kind):
    good = io.BytesIO()
    chainrule.save({"w": chainrule.arange(100.0)}, good)
    path = tmp_path / f"{kind}.pt"
    path.write_bytes(damaged(kind, good.getvalue()))
    with pytest.raises(RuntimeError):
        chainrule.load(path)


def test_a_lying_legacy_file_raises_before_allocating(tmp_path):
    path = tmp_path / "legacy.pt"
    torch.save({"w": torch.ones(4)}, path, _use_new_zipfile_serialization=False)
    raw = path.read_bytes()
    lie = raw.replace(b"K\x04Nt", b"\x8a\x07" + (10**15).to_bytes(7, "little") + b"Nt")
    assert lie != raw
    path.write_bytes(lie)
    tracemalloc.start()
    try:
        with pytest.raises(RuntimeError, match="declares storages of"):
            chainrule.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20
    path.write_bytes(raw[:-3])
    with pytest.raises(RuntimeError, match="truncated"):
        chainrule.load(path)


def test_serialization_module_names():
    assert serialization.load is chainrule.load and serialization.save is chainrule.save


def test_unsafe_globals_in_a_checkpoint_as_torch(tmp_path):
    path = tmp_path / "cfg.pt"
    torch.save({"cfg": Config(1, "x"), "w": torch.ones(1)}, path)
    for lib in (torch, chainrule):
        assert lib.serialization.get_unsafe_globals_in_checkpoint(path) == [
            f"{Config.__module__}.Config"]
        with lib.serialization.safe_globals([Config]):
            assert lib.serialization.get_unsafe_globals_in_checkpoint(path) == []
    (tmp_path / "plain.txt").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="Expected input to be a checkpoint"):
        chainrule.serialization.get_unsafe_globals_in_checkpoint(tmp_path / "plain.txt")


def test_streams_that_cannot_seek_are_refused_as_torch():
    class Stream(io.RawIOBase):
        def __init__(self, data: bytes) -> None:
            self.data = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def readinto(self, buffer) -> int:
            chunk = self.data.read(len(buffer))
            buffer[:len(chunk)] = chunk
            return len(chunk)

    good = io.BytesIO()
    chainrule.save({"w": chainrule.ones(2)}, good)
    with pytest.raises(io.UnsupportedOperation, match="You can only torch.load from a file "
                                                      "that is seekable"):
        chainrule.load(Stream(good.getvalue()))


def test_bool_keys_and_numpy_scalars(tmp_path):
    path = tmp_path / "k.pt"
    chainrule.save({True: "yes", (1, False): 2, "lr": np.float32(0.5), "n": np.int64(3)}, path)
    for got in (chainrule.load(path), torch.load(path, weights_only=True)):
        assert got == {True: "yes", (1, False): 2, "lr": 0.5, "n": 3}
        assert type(got["n"]) is int and type(got["lr"]) is float


def test_the_format_follows_the_path_or_the_choice(tmp_path):
    chainrule.save({"w": chainrule.ones(2)}, os.fsencode(tmp_path / "b.safetensors"))
    chainrule.save({"w": chainrule.ones(2)}, tmp_path / "s.pt", format="safetensors")
    chainrule.save({"w": chainrule.ones(2)}, os.fsencode(tmp_path / "z.bin"))
    assert (tmp_path / "b.safetensors").read_bytes()[8:9] == b"{"
    assert (tmp_path / "s.pt").read_bytes()[8:9] == b"{"
    assert zipfile.ZipFile(tmp_path / "z.bin").namelist()[0] == "z/data.pkl"
    for name in ("b.safetensors", "s.pt", "z.bin"):
        assert chainrule.load(tmp_path / name)["w"].tolist() == [1.0, 1.0]
    with pytest.raises(ValueError, match="format must be 'pytorch' or 'safetensors'"):
        chainrule.save({}, tmp_path / "x.pt", format="pickle")
