"""torch.backends.cuda against PyTorch's CPU build: the library preferences, the cuFFT plan cache,
the workspace sizes and the scaled-dot-product-attention switches (shared with nn.attention)."""

from __future__ import annotations

import warnings

import pytest
import torch

import chainrule


def _outcome(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = "ok", str(call())
        except Exception as e:  # noqa: BLE001
            result = type(e).__name__, str(e)
    return result, [(w.category.__name__, str(w.message)) for w in caught]


def _state(lib):
    cuda = lib.backends.cuda
    return (str(cuda.preferred_linalg_library()), str(cuda.preferred_blas_library()),
            str(cuda.preferred_rocm_fa_library()), cuda.flash_sdp_enabled(),
            cuda.mem_efficient_sdp_enabled(), cuda.math_sdp_enabled(), cuda.cudnn_sdp_enabled(),
            cuda.fp16_bf16_reduction_math_sdp_allowed())


def _reset(lib) -> None:
    cuda = lib.backends.cuda
    cuda.preferred_linalg_library("default")
    cuda.preferred_blas_library("default")
    cuda.preferred_rocm_fa_library("default")
    for name in ("flash", "mem_efficient", "math", "cudnn"):
        getattr(cuda, f"enable_{name}_sdp")(True)
    cuda.allow_fp16_bf16_reduction_math_sdp(False)


def _params(lib):
    q = lib.ones(1, 2, 3, 4)
    return lib.backends.cuda.SDPAParams(q, q, q, None, 0.0, False, False)


CASES = {
    "linalg default": lambda c: c.preferred_linalg_library(),
    "linalg cusolver": lambda c: c.preferred_linalg_library("cusolver"),
    "linalg magma": lambda c: c.preferred_linalg_library("magma"),
    "linalg default again": lambda c: c.preferred_linalg_library("default"),
    "linalg unknown": lambda c: c.preferred_linalg_library("foo"),
    "linalg int": lambda c: c.preferred_linalg_library(3),
    "blas default": lambda c: c.preferred_blas_library(),
    "blas cublas": lambda c: c.preferred_blas_library("cublas"),
    "blas hipblas": lambda c: c.preferred_blas_library("hipblas"),
    "blas cublaslt": lambda c: c.preferred_blas_library("cublaslt"),
    "blas ck": lambda c: c.preferred_blas_library("ck"),
    "blas default again": lambda c: c.preferred_blas_library("default"),
    "blas unknown": lambda c: c.preferred_blas_library("foo"),
    "blas int": lambda c: c.preferred_blas_library(3),
    "rocm aotriton": lambda c: c.preferred_rocm_fa_library("aotriton"),
    "rocm unknown": lambda c: c.preferred_rocm_fa_library("foo"),
    "rocm int": lambda c: c.preferred_rocm_fa_library(3),
    "ck sdpa": lambda c: c.is_ck_sdpa_available(),
    "cublas workspace": lambda c: c.cublas_workspace_size(),
    "cublaslt workspace": lambda c: c.cublaslt_workspace_size(),
    "blas workspace": lambda c: c.blas_workspace_size(),
    "cufft cache of a device": lambda c: c.cufft_plan_cache[0],
    "cufft cache size": lambda c: c.cufft_plan_cache.size,
    "cufft cache max_size": lambda c: c.cufft_plan_cache.max_size,
    "cufft cache set max_size": lambda c: setattr(c.cufft_plan_cache, "max_size", 3),
    "cufft cache clear": lambda c: c.cufft_plan_cache.clear(),
    "matmul's class": lambda c: type(c.matmul).__name__,
    "flash off": lambda c: c.enable_flash_sdp(False),
    "mem_efficient off": lambda c: c.enable_mem_efficient_sdp(False),
    "math off": lambda c: c.enable_math_sdp(False),
    "cudnn off": lambda c: c.enable_cudnn_sdp(False),
    "flash not a bool": lambda c: c.enable_flash_sdp(1),
    "mem_efficient not a bool": lambda c: c.enable_mem_efficient_sdp(1),
    "math not a bool": lambda c: c.enable_math_sdp(1),
    "cudnn not a bool": lambda c: c.enable_cudnn_sdp(1),
    "reduction allowed": lambda c: c.allow_fp16_bf16_reduction_math_sdp(True),
    "reduction not a bool": lambda c: c.allow_fp16_bf16_reduction_math_sdp(1),
    "flash available": lambda c: c.is_flash_attention_available(),
}


@pytest.mark.parametrize("case", CASES)
def test_backends_cuda_as_a_cpu_build(case):
    found = []
    for lib in (torch, chainrule):
        _reset(lib)
        try:
            found.append((_outcome(lambda lib=lib: CASES[case](lib.backends.cuda)), _state(lib)))
        finally:
            _reset(lib)
    assert found[1] == found[0]


@pytest.mark.parametrize("name", ["can_use_flash_attention", "can_use_efficient_attention",
                                  "can_use_cudnn_attention"])
def test_no_cuda_attention_kernel_can_run(name):
    for lib in (torch, chainrule):
        params = _params(lib)
        assert params.dropout == 0.0 and params.is_causal is False and params.attn_mask is None
        assert getattr(lib.backends.cuda, name)(params) is False
        assert getattr(lib.backends.cuda, name)(params, True) is False
        with pytest.raises(TypeError, match="incompatible function arguments"):
            getattr(lib.backends.cuda, name)(1)


def test_sdp_kernel_is_deprecated_and_sets_the_switches_in_its_block():
    found = []
    for lib in (torch, chainrule):
        with pytest.warns(FutureWarning) as caught:
            manager = lib.backends.cuda.sdp_kernel(enable_flash=False, enable_cudnn=False)
        with manager:
            inside = _state(lib)
        found.append((str(caught[0].message), inside, _state(lib)))
    assert found[1] == found[0]


def test_the_switches_are_nn_attentions():
    cuda = chainrule.backends.cuda
    try:
        cuda.enable_math_sdp(False)
        cuda.enable_flash_sdp(False)
        q = chainrule.ones(1, 2, 3, 4)
        with pytest.raises(RuntimeError, match="No viable backend"):
            chainrule.nn.functional.scaled_dot_product_attention(q, q, q)
        with chainrule.nn.attention.sdpa_kernel(chainrule.nn.attention.SDPBackend.MATH):
            assert cuda.math_sdp_enabled() and not cuda.mem_efficient_sdp_enabled()
    finally:
        _reset(chainrule)
