"""torch.nn.attention.flex_attention against torch's eager flex_attention: block masks (every
tensor, the printed forms, slicing, cropping), create_mask, outputs and logsumexps for several
score_mods and masks (causal, sliding window, document masking, combinations, GQA, batch
broadcast, dtypes), gradients (torch's CPU build refuses them: the oracle is torch's autograd
through the same formula, whose forward equals torch's flex_attention), the errors and the
warnings."""

import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.attention.flex_attention as TF

import chainrule as cr
import chainrule.nn.attention.flex_attention as CF

RNG = np.random.default_rng(20)


@pytest.fixture(autouse=True)
def _quiet(monkeypatch):
    # torch's eager path without its torch.compile wrapper: the same kernel, without Dynamo's
    # tracing of every new score_mod
    monkeypatch.setattr(TF, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def pair(*shape, dtype=np.float32):
    values = RNG.standard_normal(shape).astype(dtype)
    return torch.tensor(values), cr.tensor(values)


def both(make):
    """make(lib) for torch and for chainrule."""
    return make(torch), make(cr)


def close(ours, theirs, atol=2e-5, rtol=2e-5):
    assert str(ours.dtype) == str(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().float().numpy(), theirs.detach().float().numpy(),
                               atol=atol, rtol=rtol)


def causal(b, h, q, kv):
    return q >= kv


def sliding(b, h, q, kv):
    return (q - kv).abs() <= 3


DOCS = [0, 0, 0, 1, 1, 1, 1, 2, 2, 3, 3, 3]


def documents(lib):
    ids = lib.tensor(DOCS)

    def same_document(b, h, q, kv):
        return ids[q] == ids[kv]
    return same_document


def document_causal(lib):
    return CF.and_masks(causal, documents(lib)) if lib is cr else \
        TF.and_masks(causal, documents(lib))


def late_start(b, h, q, kv):  # rows 0 and 1 attend to nothing
    return (q >= 2) & (kv <= q)


MASKS = {"causal": lambda lib: causal, "sliding": lambda lib: sliding,
         "documents": documents, "document_causal": document_causal,
         "late_start": lambda lib: late_start}


def relative(score, b, h, q, kv):
    return score + (q - kv) * 0.125


def alibi(score, b, h, q, kv):
    return score - (h + 1) * 0.25 * (q - kv).abs()


def softcap(score, b, h, q, kv):
    return 2.0 * (score / 2.0).tanh()


def causal_score(score, b, h, q, kv):
    return score.masked_fill(q < kv, -math.inf)


SCORE_MODS = {"none": None, "relative": relative, "alibi": alibi, "softcap": softcap,
              "causal_score": causal_score}


def lib_of(lib):
    """The flex_attention module of torch or chainrule."""
    return CF if lib is cr else TF


def block_masks(mask, B, H, Q, KV, **kwargs):
    """torch's and chainrule's create_block_mask of MASKS[mask]."""
    theirs = TF.create_block_mask(MASKS[mask](torch), B, H, Q, KV, device="cpu", **kwargs)
    ours = CF.create_block_mask(MASKS[mask](cr), B, H, Q, KV, device="cpu", **kwargs)
    return ours, theirs


def same_block_mask(ours, theirs):
    for attr in TF.BlockMask._TENSOR_ATTRS:
        o, t = getattr(ours, attr), getattr(theirs, attr)
        assert (o is None) == (t is None), attr
        if t is not None:
            assert str(o.dtype) == str(t.dtype), attr
            assert o.tolist() == t.tolist(), attr
    assert ours.seq_lengths == theirs.seq_lengths and ours.BLOCK_SIZE == theirs.BLOCK_SIZE
    assert ours.dq_kv_order_spt == theirs.dq_kv_order_spt
    assert ours.shape == theirs.shape and ours.numel() == theirs.numel()
    assert ours.sparsity() == pytest.approx(theirs.sparsity())


# ---- block masks -------------------------------------------------------------------------------

@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("options", [
    {"BLOCK_SIZE": 4}, {"BLOCK_SIZE": (2, 4)}, {"BLOCK_SIZE": 5},
    {"BLOCK_SIZE": 4, "separate_full_blocks": False},
    {"BLOCK_SIZE": 4, "compute_dq_write_order": True},
    {"BLOCK_SIZE": (4, 2), "compute_dq_write_order": True, "dq_kv_order": False}])
def test_create_block_mask(mask, options):
    ours, theirs = block_masks(mask, None, None, 12, 12, **options)
    same_block_mask(ours, theirs)
    assert str(ours) == str(theirs)
    assert repr(ours) == repr(theirs)
    assert ours.to_string(grid_size=-1) == theirs.to_string(grid_size=-1)
    assert ours.to_dense().tolist() == theirs.to_dense().tolist()
    assert len(ours.as_tuple()) == len(theirs.as_tuple())
    assert len(ours.as_tuple(flatten=False)) == len(theirs.as_tuple(flatten=False))


def heads_mask(b, h, q, kv):
    return (kv <= q + h) & (b + kv < 11)


def test_block_mask_per_batch_and_head_and_its_slices():
    theirs = TF.create_block_mask(heads_mask, 2, 3, 12, 10, device="cpu", BLOCK_SIZE=(4, 2))
    ours = CF.create_block_mask(heads_mask, 2, 3, 12, 10, device="cpu", BLOCK_SIZE=(4, 2))
    same_block_mask(ours, theirs)
    assert str(ours) == str(theirs) and repr(ours) == repr(theirs)
    assert ours.to_string(limit=2) == theirs.to_string(limit=2)
    assert ours.to_string(grid_size=2) == theirs.to_string(grid_size=2)
    for index in [0, -1, (1, 2), (slice(0, 2), slice(1, 2)), (1, slice(None), [0, 2])]:
        t_index = tuple(torch.tensor(i) if isinstance(i, list) else i for i in index) \
            if isinstance(index, tuple) else index
        c_index = tuple(cr.tensor(i) if isinstance(i, list) else i for i in index) \
            if isinstance(index, tuple) else index
        same_block_mask(ours[c_index], theirs[t_index])
        assert repr(ours[c_index]) == repr(theirs[t_index])
    for lengths in [(8, 6), (5, 10), (12, 10), (7, 3)]:
        same_block_mask(ours._adjust(*lengths), theirs._adjust(*lengths))
    for mask in (ours, theirs):  # kept indices past the new last block: both refuse
        with pytest.raises(IndexError, match="index 4 is out of bounds"):
            mask._adjust(12, 3)


def test_a_sliced_block_masks_mask_mod_raises():
    (q_t, q_c), (k_t, k_c) = pair(1, 1, 12, 4), pair(1, 1, 12, 4)
    ours, theirs = block_masks("causal", 1, 1, 12, 12, BLOCK_SIZE=4)
    sliced_ours, sliced_theirs = ours[0], theirs[0]
    for lib, sliced, q, k in [(TF, sliced_theirs, q_t, k_t), (CF, sliced_ours, q_c, k_c)]:
        with pytest.raises(RuntimeError, match="Cannot use mask_mod from a sliced BlockMask"):
            lib.flex_attention(q, k, k, block_mask=sliced)
    with pytest.raises(RuntimeError) as theirs_error:
        sliced_theirs.mask_mod(*[torch.tensor(0)] * 4)
    with pytest.raises(RuntimeError) as ours_error:
        sliced_ours.mask_mod(*[cr.tensor(0)] * 4)
    assert str(ours_error.value) == str(theirs_error.value)


def test_from_kv_blocks_and_to():
    blocks = [[[2, 1, 0]]], [[[[1, 2, 0], [0, 1, 2], [2, 0, 1]]]]
    full = [[[0, 1, 1]]], [[[[0, 1, 2], [2, 0, 1], [1, 2, 0]]]]
    args_t = [torch.tensor(x, dtype=torch.int32) for x in (*blocks, *full)]
    args_c = [cr.tensor(x, dtype=cr.int32) for x in (*blocks, *full)]
    theirs = TF.BlockMask.from_kv_blocks(*args_t, BLOCK_SIZE=(2, 3))
    ours = CF.BlockMask.from_kv_blocks(*args_c, BLOCK_SIZE=(2, 3))
    same_block_mask(ours, theirs)
    assert str(ours) == str(theirs) and repr(ours) == repr(theirs)
    same_block_mask(ours.to("cpu"), theirs.to("cpu"))
    theirs = TF.BlockMask.from_kv_blocks(*args_t[:2], seq_lengths=(5, 7),
                                         compute_q_blocks=False, dq_kv_order=True)
    ours = CF.BlockMask.from_kv_blocks(*args_c[:2], seq_lengths=(5, 7), compute_q_blocks=False,
                                       dq_kv_order=True)
    same_block_mask(ours, theirs)
    assert ours.mask_mod is CF.noop_mask
    for lib, t in [(TF, torch.zeros(3, dtype=torch.int32)), (CF, cr.zeros(3, dtype=cr.int32))]:
        with pytest.raises(RuntimeError, match="BlockMask must have at least 2 dimensions"):
            lib.BlockMask.from_kv_blocks(t, t)


@pytest.mark.parametrize("mod", ["causal", "documents", "relative", "causal_score"])
def test_create_mask(mod):
    def make(lib):
        fn = MASKS[mod](lib) if mod in MASKS else SCORE_MODS[mod]
        return lib_of(lib).create_mask(fn, 2, 3, 12, 12, device="cpu")
    theirs, ours = both(make)
    assert str(ours.dtype) == str(theirs.dtype) and ours.tolist() == theirs.tolist()


def test_or_and_noop_masks():
    def make(lib):
        m = lib_of(lib)
        union = m.or_masks(causal, sliding)
        both_ = m.and_masks(causal, sliding, m.noop_mask)
        return [m.create_mask(f, 1, 1, 9, 9).tolist() for f in (union, both_, m.noop_mask)]
    theirs, ours = both(make)
    assert ours == theirs
    for lib in (TF, CF):
        with pytest.raises(RuntimeError, match="All inputs should be callable mask_mods"):
            lib.or_masks(causal, 3)
        with pytest.raises(RuntimeError, match="All inputs should be callable mask_mods"):
            lib.and_masks(None)


# ---- flex_attention: values --------------------------------------------------------------------

@pytest.mark.parametrize("mask", [None, *MASKS])
@pytest.mark.parametrize("score_mod", list(SCORE_MODS))
def test_values_and_logsumexp(mask, score_mod):
    (q_t, q_c), (k_t, k_c), (v_t, v_c) = pair(2, 2, 12, 8), pair(2, 2, 12, 8), pair(2, 2, 12, 5)
    ours_mask, theirs_mask = block_masks(mask, 2, None, 12, 12, BLOCK_SIZE=4) if mask else \
        (None, None)
    mod = SCORE_MODS[score_mod]
    out_t, lse_t = TF.flex_attention(q_t, k_t, v_t, mod, theirs_mask, return_lse=True)
    out_c, lse_c = CF.flex_attention(q_c, k_c, v_c, mod, ours_mask, return_lse=True)
    close(out_c, out_t)
    close(lse_c, lse_t)
    assert np.array_equal(np.isneginf(lse_c.numpy()), np.isneginf(lse_t.numpy()))


def test_gqa_scale_aux_and_batch_broadcast():
    (q_t, q_c), (k_t, k_c), (v_t, v_c) = pair(3, 6, 8, 4), pair(1, 2, 8, 4), pair(1, 2, 8, 6)
    ours_mask, theirs_mask = block_masks("sliding", 3, 1, 8, 8, BLOCK_SIZE=4)
    theirs = TF.flex_attention(q_t, k_t, v_t, alibi, theirs_mask, scale=0.3, enable_gqa=True,
                               return_aux=TF.AuxRequest(lse=True))
    ours = CF.flex_attention(q_c, k_c, v_c, alibi, ours_mask, scale=0.3, enable_gqa=True,
                             return_aux=CF.AuxRequest(lse=True))
    assert type(ours).__name__ == "tuple" and type(ours[1]).__name__ == "AuxOutput"
    close(ours[0], theirs[0])
    close(ours[1].lse, theirs[1].lse)
    assert ours[1].max_scores is None and theirs[1].max_scores is None
    out_t, aux_t = TF.flex_attention(q_t, k_t, v_t, block_mask=theirs_mask, enable_gqa=True,
                                     return_aux=TF.AuxRequest())
    out_c, aux_c = CF.flex_attention(q_c, k_c, v_c, block_mask=ours_mask, enable_gqa=True,
                                     return_aux=CF.AuxRequest())
    close(out_c, out_t)
    assert aux_c == CF.AuxOutput() and tuple(aux_t) == (None, None)


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_dtypes(dtype):
    (q_t, q_c), (k_t, k_c), (v_t, v_c) = (pair(1, 2, 6, 4, dtype=dtype) for _ in range(3))
    out_t, lse_t = TF.flex_attention(q_t, k_t, v_t, relative, return_lse=True)
    out_c, lse_c = CF.flex_attention(q_c, k_c, v_c, relative, return_lse=True)
    tol = 1e-12 if dtype == np.float64 else 2e-3
    close(out_c, out_t, atol=tol, rtol=tol)
    close(lse_c, lse_t, atol=tol, rtol=tol)


def test_captured_tensors_in_score_mod():
    (bias_t, bias_c) = pair(2, 12, 12)

    def make(lib, bias):
        def biased(score, b, h, q, kv):
            return score + bias[h, q, kv]
        return biased
    (q_t, q_c), (k_t, k_c), (v_t, v_c) = pair(1, 2, 12, 4), pair(1, 2, 12, 4), pair(1, 2, 12, 4)
    close(CF.flex_attention(q_c, k_c, v_c, make(cr, bias_c)),
          TF.flex_attention(q_t, k_t, v_t, make(torch, bias_t)))


# ---- gradients ---------------------------------------------------------------------------------

def reference(lib, q, k, v, score_mod, mask_mod, scale=None, groups=1):
    """The eager formula in torch's (or chainrule's) ops, with the same index broadcasting."""
    if groups > 1:
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    B, H, L, S = scores.shape
    b, h, m, n = (lib.arange(B).view(B, 1, 1, 1), lib.arange(H).view(1, H, 1, 1),
                  lib.arange(L).view(1, 1, L, 1), lib.arange(S).view(1, 1, 1, S))
    post = lib.where(mask_mod(b, h, m, n), score_mod(scores, b, h, m, n), -math.inf)
    return lib._safe_softmax(post, -1) @ v, post.logsumexp(-1)


@pytest.mark.parametrize("mask,score_mod", [("causal", "relative"), ("sliding", "softcap"),
                                            ("document_causal", "alibi"),
                                            ("late_start", "none")])
def test_gradients(mask, score_mod):
    (q_t, q_c), (k_t, k_c), (v_t, v_c) = pair(2, 4, 12, 8), pair(2, 2, 12, 8), pair(2, 2, 12, 8)
    (g_t, g_c), (gl_t, gl_c) = pair(2, 4, 12, 8), pair(2, 4, 12)
    mod = SCORE_MODS[score_mod] or CF._identity
    for t in (q_t, k_t, v_t, q_c, k_c, v_c):
        t.requires_grad_()
    # the oracle's forward is torch's flex_attention (which refuses tensors requiring grad)
    out, lse = TF.flex_attention(q_t.detach(), k_t.detach(), v_t.detach(), mod,
                                 block_masks(mask, 2, 4, 12, 12)[1], enable_gqa=True,
                                 return_lse=True)
    ref_out, ref_lse = reference(torch, q_t, k_t, v_t, mod, MASKS[mask](torch), groups=2)
    close(ref_out, out)
    close(ref_lse, lse)
    ((ref_out * g_t).sum() + (ref_lse.where(ref_lse.isfinite(), 0) * gl_t).sum()).backward()
    ours_mask = block_masks(mask, 2, 4, 12, 12)[0]
    out_c, lse_c = CF.flex_attention(q_c, k_c, v_c, mod, ours_mask, enable_gqa=True,
                                     return_lse=True)
    close(out_c, out)
    ((out_c * g_c).sum() + (lse_c.where(lse_c.isfinite(), 0) * gl_c).sum()).backward()
    for ours, theirs in [(q_c, q_t), (k_c, k_t), (v_c, v_t)]:
        assert np.isfinite(ours.grad.numpy()).all()
        close(ours.grad, theirs.grad, atol=5e-5, rtol=5e-5)


def test_gradient_of_a_captured_bias():
    (bias_t, bias_c) = pair(2, 8, 8)
    (q_t, q_c), (k_t, k_c), (v_t, v_c) = pair(1, 2, 8, 4), pair(1, 2, 8, 4), pair(1, 2, 8, 4)
    bias_t.requires_grad_()
    bias_c.requires_grad_()

    def make(bias):
        def biased(score, b, h, q, kv):
            return score + bias[h, q, kv]
        return biased
    reference(torch, q_t, k_t, v_t, make(bias_t), causal)[0].square().sum().backward()
    ours_mask = CF.create_block_mask(causal, None, None, 8, 8, BLOCK_SIZE=4)
    CF.flex_attention(q_c, k_c, v_c, make(bias_c), ours_mask).square().sum().backward()
    close(bias_c.grad, bias_t.grad, atol=5e-5, rtol=5e-5)


# ---- errors and warnings -----------------------------------------------------------------------

def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (compared with torch's)
        return type(e), str(e)
    return None


@pytest.mark.parametrize("case", [
    "heads", "gqa_multiple", "embedding", "three_d", "bigger_than_mask", "smaller_than_mask",
    "lse_and_aux", "max_scores", "backend", "backend_and_force", "batch_without_mask",
    "batch_with_mask", "score_mod_arity"])
def test_errors(case):
    def run(lib):
        f = lib_of(lib)
        q, k = lib.ones(1, 4, 8, 4), lib.ones(1, 2, 8, 4)
        call = {
            "heads": lambda: f.flex_attention(q, k, k),
            "gqa_multiple": lambda: f.flex_attention(lib.ones(1, 3, 8, 4), k, k,
                                                      enable_gqa=True),
            "embedding": lambda: f.flex_attention(q, lib.ones(1, 4, 8, 3), q),
            "three_d": lambda: f.flex_attention(q[0], q[0], q[0]),
            "bigger_than_mask": lambda: f.flex_attention(
                q, q, q, block_mask=f.create_block_mask(causal, 1, 1, 4, 4, BLOCK_SIZE=2)),
            "smaller_than_mask": lambda: f.flex_attention(
                q, q, q, block_mask=f.create_block_mask(causal, 1, 1, 16, 8, BLOCK_SIZE=2)),
            "lse_and_aux": lambda: f.flex_attention(q, q, q, return_lse=True,
                                                    return_aux=f.AuxRequest(lse=True)),
            "max_scores": lambda: f.flex_attention(q, q, q,
                                                   return_aux=f.AuxRequest(max_scores=True)),
            "backend": lambda: f.flex_attention(q, q, q, kernel_options={"BACKEND": "CUTE"}),
            "backend_and_force": lambda: f.flex_attention(
                q, q, q, kernel_options={"BACKEND": "AUTO", "FORCE_USE_FLEX_ATTENTION": True}),
            "batch_without_mask": lambda: f.flex_attention(lib.ones(2, 4, 8, 4), q, q),
            "batch_with_mask": lambda: f.flex_attention(
                lib.ones(2, 4, 8, 4), q, q,
                block_mask=f.create_block_mask(causal, 3, 1, 8, 8, BLOCK_SIZE=4)),
            "score_mod_arity": lambda: f.create_block_mask(relative, 1, 1, 8, 8),
        }[case]
        return error_of(call)
    theirs, ours = both(run)
    assert theirs is not None and ours == theirs


def test_index_arity_error():
    for lib in (TF, CF):
        with pytest.raises(AssertionError, match="Expected 4 or 5 positional args, got 3"):
            lib.create_mask(lambda b, h, q: q, 1, 1, 4, 4)


def test_warnings_once_each(monkeypatch):
    monkeypatch.setattr(TF, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", False)

    def run(lib, flex):
        flex._WARNINGS_SHOWN.clear()
        q = lib.ones(1, 1, 4, 4)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            flex.flex_attention(q, q, q, return_lse=True)
            flex.flex_attention(q, q, q, return_lse=True)
        return [(w.category, str(w.message)) for w in caught]
    theirs, ours = run(torch, TF), run(cr, CF)
    assert len(theirs) == 2 and ours == theirs
    CF._WARNINGS_SHOWN.clear()
    CF._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = True
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            CF.flex_attention(*[cr.ones(1, 1, 4, 4)] * 3)
        assert caught == []
    finally:
        CF._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = False
