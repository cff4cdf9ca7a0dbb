"""PyTorch's own docstring examples (``>>>`` in torch's installed docstrings, its public
namespaces) run on torch and on chainrule through ``chainrule.as_torch``: every docstring whose
examples run on torch without raising, with the same outcome twice, gives the same displays and
leaves the same tensors on chainrule, except those listed here with their reasons (of 624 such
docstrings in PyTorch 2.13, 577 agree)."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

from . import examples

HERE = Path(__file__).resolve().parent

# Docstrings whose outcome on chainrule differs from torch's, and why.
DIFFERENT = {
    # Not provided by chainrule (docs/differences.md)
    **dict.fromkeys([
        "torch.Tensor.col_indices", "torch.Tensor.crow_indices", "torch.Tensor.sparse_mask",
        "torch.Tensor.to_dense", "torch.Tensor.to_sparse_bsc", "torch.Tensor.to_sparse_bsr",
        "torch.Tensor.to_sparse_coo", "torch.Tensor.to_sparse_csc", "torch.Tensor.to_sparse_csr",
        "torch.sparse_bsc_tensor", "torch.sparse_bsr_tensor", "torch.sparse_compressed_tensor",
        "torch.sparse_csc_tensor", "torch.sparse_csr_tensor", "torch.narrow_copy"],
        "sparse layouts are not provided"),
    **dict.fromkeys([
        "torch.fake_quantize_per_channel_affine", "torch.fake_quantize_per_tensor_affine",
        "torch.quantize_per_channel", "torch.quantize_per_tensor_dynamic",
        "torch.quantized_batch_norm", "torch.quantized_max_pool1d",
        "torch.quantized_max_pool2d"], "quantized tensors are not provided"),
    **dict.fromkeys(["torch.conj", "torch.resolve_conj", "torch.resolve_neg"],
                    "conj() and neg views copy: is_conj()/is_neg() are False"),
    "torch.from_dlpack": "a bare DLPack capsule: NumPy cannot import legacy capsules",
    "torch.set_flush_denormal": "NumPy cannot set the CPU's flush-to-zero mode: returns False",
    "torch.hash_tensor": "not provided (new in PyTorch 2.13)",
    "torch.Tensor.grad_dtype": "not provided (new in PyTorch 2.13)",
    "torch.Tensor.dim_order": "dim_order(ambiguity_check=...) is not checked",
    # chainrule's classes print their own module in object reprs
    **dict.fromkeys(["torch.Generator.manual_seed", "torch.Generator.set_state",
                     "torch.nn.LinearCrossEntropyLoss"],
                    "the repr '<chainrule._creation.Generator object>'"),
    "torch.autograd.graph.register_multi_grad_hook":
        "the repr '<chainrule.autograd.graph._MultiHandle object>'",
    "torch.sort": "sort(stable=False) orders equal elements as NumPy's sort does",
    "torch.nn.utils.rnn.unpad_sequence":
        "unpad_sequence leaves its argument as it was (PyTorch transposes it in place)",
}
# Numerics: rounding beyond the display's precision, which other BLAS and LAPACK builds may or
# may not show
MAY_DIFFER = {
    **dict.fromkeys(["torch.fft.hfft", "torch.fft.ihfft", "torch.linalg.eigh"],
                    "the sign of a zero imaginary part (+0.0000j for -0.0000j)"),
    **dict.fromkeys(["torch.fft.hfft2", "torch.fft.hfftn", "torch.linalg.solve"],
                    "allclose of a round trip in float32: True where torch's rounding says False"),
    **dict.fromkeys(["torch.cholesky_inverse", "torch.cholesky_solve", "torch.linalg.lstsq",
                     "torch.linalg.svd", "torch.svd"],
                    "the printed residual of an ill-conditioned float32 problem (LAPACK and "
                    "BLAS differ from MKL's)"),
}


SCRIPT = str(HERE / "examples.py")


def _run(*command: str, out: Path) -> subprocess.Popen:
    """A run in a directory of its own (examples write files: torch.save's)."""
    cwd = out.with_suffix("")
    cwd.mkdir()
    return subprocess.Popen([sys.executable, *command], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=open(out.with_suffix(".err"), "w"))


def test_docstring_examples_agree_with_torch(tmp_path):
    table = tmp_path / "examples.json"
    subprocess.run([sys.executable, SCRIPT, "collect", str(table)], cwd=tmp_path, check=True,
                   timeout=300)
    outs = [tmp_path / f"{name}.pkl" for name in ("torch", "torch_again", "chainrule")]
    runs = [_run(SCRIPT, "run", str(table), str(outs[0]), out=outs[0]),
            _run(SCRIPT, "run", str(table), str(outs[1]), out=outs[1]),
            _run("-m", "chainrule.as_torch", SCRIPT, "run", str(table), str(outs[2]),
                 out=outs[2])]
    for run, out in zip(runs, outs):
        assert run.wait(timeout=900) == 0, out.with_suffix(".err").read_text()[-3000:]
    first, second, ours = (pickle.loads(out.read_bytes()) for out in outs)
    oracle = examples.oracle(first, second)
    verdict = examples.compare(ours, oracle)
    differing = {name: why for name, why in verdict.items() if why is not None}
    assert len(oracle) > 600  # the docstrings torch runs cleanly and reproducibly
    unexplained = differing.keys() - DIFFERENT.keys() - MAY_DIFFER.keys()
    assert {name: differing[name] for name in unexplained} == {}
    assert sorted(DIFFERENT.keys() - differing.keys()) == []  # a listed difference is gone
