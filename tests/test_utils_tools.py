"""torch.utils.swap_tensors, debug_log, show_pickle and collect_env's system probes against
torch's."""

import io
import logging
import os
import pickle
import struct
import weakref
import zipfile

import pytest
import torch
import torch.utils.collect_env as torch_env
import torch.utils.debug_log
import torch.utils.show_pickle

import chainrule
import chainrule.utils.collect_env as our_env
import chainrule.utils.debug_log
import chainrule.utils.show_pickle


def outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001  (compared with torch's)
        return (type(e).__name__, str(e))


# ---- swap_tensors ------------------------------------------------------------------------------

def swap_cases(lib):
    swap = lib.utils.swap_tensors
    out = []
    a, b = lib.tensor([1.0, 2, 3]), lib.tensor([4.0, 5, 6])
    out += [outcome(lambda: swap(a, b)), a.tolist(), b.tolist()]
    # a leaf whose AccumulateGrad a graph holds: swapped, and the node poisoned
    a, b = lib.tensor([1.0, 2, 3], requires_grad=True), lib.tensor([4.0, 5, 6])
    y = a * 2
    out += [outcome(lambda: swap(a, b)), a.requires_grad, b.requires_grad,
            outcome(lambda: y.sum().backward())]
    # saved for backward, or with a live view: refused
    a, b = lib.tensor([1.0, 2, 3], requires_grad=True), lib.tensor([4.0, 5, 6])
    y = a.sin()
    out.append(outcome(lambda: swap(a, b)))
    a, b = lib.tensor([1.0, 2, 3]), lib.tensor([4.0, 5, 6])
    v = a[1:]
    out.append(outcome(lambda: swap(a, b)))
    a, b = lib.tensor([1.0, 2, 3], requires_grad=True), lib.tensor([4.0, 5, 6])
    v = a[1:]
    out.append(outcome(lambda: swap(a, b)))
    # a view swapped: the other tensor becomes the view
    a, b = lib.tensor([1.0, 2, 3]), lib.tensor([4.0, 5, 6])
    v = a[1:]
    out += [outcome(lambda: swap(v, b)), v.tolist(), b.tolist(), b._base is a, v._base]
    b.add_(1)
    out += [a.tolist(), a._version, b._version]
    # shape, dtype, class, attributes, versions, grads, grad_fn
    a, b = lib.tensor([1.0, 2, 3]), lib.ones(2, 2, dtype=lib.float64)
    a.foo = 1
    a.add_(1)
    out += [outcome(lambda: swap(a, b)), tuple(a.shape), str(a.dtype), tuple(b.shape),
            getattr(b, "foo", None), getattr(a, "foo", None), a._version, b._version]
    p, b = lib.nn.Parameter(lib.ones(3)), lib.zeros(3)
    out += [outcome(lambda: swap(p, b)), type(p).__name__, type(b).__name__, p.requires_grad,
            b.requires_grad]
    x, b = lib.ones(3, requires_grad=True), lib.zeros(3)
    x.grad = lib.ones(3)
    out += [outcome(lambda: swap(x, b)), x.grad, b.grad.tolist()]
    x, b = lib.ones(3, requires_grad=True), lib.zeros(3)
    y = x * 2
    out += [outcome(lambda: swap(y, b)), y.grad_fn, type(b.grad_fn).__name__, y.is_leaf]
    # a retained grad and a Python weakref: refused
    x, b = lib.ones(3, requires_grad=True), lib.zeros(3)
    y = x * 2
    y.retain_grad()
    z = y * 3
    out.append(outcome(lambda: swap(y, b)))
    z.sum().backward()
    out += [y.grad.tolist(), b.grad]
    a = lib.ones(3)
    ref = weakref.ref(a)
    out += [outcome(lambda: swap(a, lib.ones(2))), outcome(lambda: swap(lib.ones(2), a))]
    # detach() shares the memory and version counter with what is now the other tensor
    a, b = lib.ones(3), lib.zeros(3)
    d = a.detach()
    swap(a, b)
    b.add_(5)
    out += [d.tolist(), d._version, b._version, ref() is a]
    return [str(x) if isinstance(x, (torch.Tensor, chainrule.Tensor)) else x for x in out]


def test_swap_tensors():
    assert swap_cases(chainrule) == swap_cases(torch)


def test_swap_tensors_keeps_graphs_working():
    # swapped before any graph: both tensors then train as what they hold now
    for lib in (torch, chainrule):
        a, b = lib.nn.Parameter(lib.tensor([1.0, 2.0])), lib.tensor([3.0, 4.0, 5.0])
        lib.utils.swap_tensors(a, b)
        b.pow(2).sum().backward()
        assert b.grad.tolist() == [2.0, 4.0] and a.tolist() == [3.0, 4.0, 5.0]


# ---- debug_log ---------------------------------------------------------------------------------

class Collect(logging.Handler):
    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append((record.levelname, record.getMessage()))


def debug_log_lines(lib, module):
    logger, handler = module.log, Collect()
    logger.addHandler(handler)
    old = logger.level
    logger.setLevel(logging.INFO)
    try:
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = lib.tensor([3.0, 4.0], requires_grad=True)
        out = [module.debug_grad_log(x, lib.ones(4), y, "not a tensor")]
        ((x * 2).sum() + (y * 3).sum()).backward()
        ((x * 2).sum() + (y * 3).sum()).backward()  # the hook stays registered
        module.debug_grad_log(y)
        module.debug_grad_log(x)
        ((x * 2).sum() + (y * 3).sum()).backward()
        out.append(module.debug_grad_log(lib.ones(2)))
        return out, handler.lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old)


def test_debug_grad_log():
    ours = debug_log_lines(chainrule, chainrule.utils.debug_log)
    theirs = debug_log_lines(torch, torch.utils.debug_log)
    assert ours == theirs
    assert ours[1][0] == ("INFO", "[rank 0][bwd] t0_grad_norm=3.4641 t1_grad_norm=4.2426")


# ---- show_pickle -------------------------------------------------------------------------------

class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


class Persisting(pickle.Pickler):
    def persistent_id(self, obj):
        return ("storage", obj[1]) if isinstance(obj, tuple) and obj[:1] == ("ext",) else None


def sample_pickle() -> bytes:
    buffer = io.BytesIO()
    Persisting(buffer, protocol=2).dump({
        "point": Point(1, [2, 3]), "plain": [1, 2.5, "s", None, (True, b"b")],
        "stored": ("ext", 7), "nested": {"p": Point("a", Point(0, 0))}})
    return buffer.getvalue()


def invalid_utf8_pickle() -> bytes:
    raw = b"\xff\xfeab"
    return b"\x80\x02X" + struct.pack("<I", len(raw)) + raw + b"."


def dumped(module, data: bytes, **kwargs) -> tuple:
    """(repr of what the pickle loads as, what DumpUnpickler.dump prints)."""
    if kwargs:
        return repr(module.DumpUnpickler(io.BytesIO(data), **kwargs).load()), None
    out = io.StringIO()
    value = module.DumpUnpickler.dump(io.BytesIO(data), out)
    return repr(value), out.getvalue()


def test_show_pickle_prints_what_torchs_prints():
    theirs = dumped(torch.utils.show_pickle, sample_pickle())
    assert dumped(chainrule.utils.show_pickle, sample_pickle()) == theirs
    assert "test_utils_tools.Point()(state={'x': 1, 'y': [2, 3]})" in theirs[0]
    assert "pers.obj(('storage', 7),)" in theirs[0]
    bad = invalid_utf8_pickle()
    for module in (torch.utils.show_pickle, chainrule.utils.show_pickle):
        with pytest.raises(UnicodeDecodeError):
            module.DumpUnpickler(io.BytesIO(bad)).load()
    assert dumped(chainrule.utils.show_pickle, bad, catch_invalid_utf8=True) == \
        dumped(torch.utils.show_pickle, bad, catch_invalid_utf8=True)


def test_show_pickle_pretty_printer_layout():
    import pprint

    def layout(module):
        printer = pprint.PrettyPrinter(width=30)
        dispatch = pprint.PrettyPrinter._dispatch
        dispatch[module.FakeObject.__repr__] = module.FakeObject.pp_format
        try:
            value = module.DumpUnpickler(io.BytesIO(sample_pickle())).load()
            return printer.pformat(value)
        finally:
            del dispatch[module.FakeObject.__repr__]
    assert layout(chainrule.utils.show_pickle) == layout(torch.utils.show_pickle)


def test_show_pickle_main(tmp_path, capsys):
    plain = tmp_path / "data.pkl"
    plain.write_bytes(sample_pickle())
    archive = tmp_path / "model.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("model/data.pkl", sample_pickle())
        zf.writestr("model/other.txt", b"x")

    def run(module, argv):
        out = io.StringIO()
        result = outcome(lambda: module.main(argv, out))
        return result, out.getvalue()
    for argv in (["show_pickle", str(plain)], ["show_pickle", f"{archive}@model/data.pkl"],
                 ["show_pickle", f"{archive}@*/data.*"], ["show_pickle", f"{archive}@*/none*"],
                 ["show_pickle"]):
        assert run(chainrule.utils.show_pickle, argv) == run(torch.utils.show_pickle, argv)
    for module in (torch.utils.show_pickle, chainrule.utils.show_pickle):
        assert module.main(["show_pickle"]) == 2
    assert capsys.readouterr().err.count("usage: show_pickle PICKLE_FILE") == 2


# ---- collect_env's probes ----------------------------------------------------------------------

def fake_run(answers: dict):
    """A run_lambda answering each command whose text contains a key."""
    def run(command):
        text = command if isinstance(command, str) else " ".join(command)
        for key, answer in answers.items():
            if key in text:
                return answer
        return 127, "", "not found"
    return run


MACHINES = {
    "gpus": {"nvidia-smi -L": (0, "GPU 0: A100 (UUID: GPU-1234)\nGPU 1: A100 (UUID: GPU-5)", ""),
             "nvidia-smi": (0, "| NVIDIA-SMI 550.54   Driver Version: 550.54.15   CUDA 12.4 |",
                            ""),
             "nvcc --version": (0, "Cuda compilation tools, release 12.4, V12.4.131", ""),
             "release": (0, 'NAME="Ubuntu"\nPRETTY_NAME="Ubuntu 22.04.4 LTS"\n', ""),
             "lsb_release": (0, "Distributor ID:\tUbuntu\nDescription:\tUbuntu 22.04.4 LTS", ""),
             "sw_vers": (0, "14.4.1", ""),
             "dpkg -l": (0, "ii  libze1  1.17.6-1  amd64  oneAPI Level Zero", ""),
             "xpu-smi": (0, '{"device_list": [{"device_name": "Intel Max 1550"}]}', ""),
             "ldconfig": (0, "", "")},
    "nothing": {},
    "broken": {"xpu-smi": (0, "not json", ""), "nvidia-smi": (9, "", "failed"),
               "ldconfig": (2, "", "")},
}


@pytest.mark.parametrize("machine", list(MACHINES))
def test_collect_env_probes(machine):
    run = fake_run(MACHINES[machine])
    for name in ("check_release_file", "get_lsb_version", "get_mac_version",
                 "get_nvidia_driver_version", "get_gpu_info", "get_running_cuda_version",
                 "get_cudnn_version", "get_intel_gpu_detected", "get_intel_gpu_driver_version",
                 "get_intel_gpu_onboard"):
        ours = outcome(lambda name=name: getattr(our_env, name)(run))
        theirs = outcome(lambda name=name: getattr(torch_env, name)(run))
        if name == "get_intel_gpu_driver_version":  # PyTorch walks a set: its order varies
            ours, theirs = sorted(ours[1].split("\n")), sorted(theirs[1].split("\n"))
        assert ours == theirs, name
    for package in ("libze1", "absent"):
        assert our_env.get_linux_pkg_version(run, package) == \
            torch_env.get_linux_pkg_version(run, package)
    assert outcome(lambda: our_env.get_windows_version(run))[0] == \
        outcome(lambda: torch_env.get_windows_version(run))[0]


def test_collect_env_probes_of_this_machine(monkeypatch):
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    monkeypatch.setenv("PYTORCH_HIP_ALLOC_CONF", "")
    for name in ("get_cachingallocator_config", "get_cuda_module_loading_config",
                 "get_nvidia_smi", "is_xnnpack_available"):
        assert getattr(our_env, name)() == getattr(torch_env, name)(), name
    assert our_env.get_cachingallocator_config() == {
        "PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}
    for name in ("check_release_file", "get_gpu_info", "get_running_cuda_version",
                 "get_cudnn_version"):
        assert getattr(our_env, name)(our_env.run) == getattr(torch_env, name)(torch_env.run)
    library = os.path.abspath(__file__)
    monkeypatch.setenv("CUDNN_LIBRARY", library)
    assert our_env.get_cudnn_version(fake_run({})) == library == \
        torch_env.get_cudnn_version(fake_run({}))
