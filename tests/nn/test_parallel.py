"""nn.parallel (DataParallel, data_parallel) and SyncBatchNorm as PyTorch's CPU build runs them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule
import chainrule.nn as nn

from ._helpers import Case, copy_weights, run_twins, twin


def _dp_pair(**kwargs):
    ours, theirs = twin("Linear", 3, 2)
    return nn.DataParallel(ours, **kwargs), torch.nn.DataParallel(theirs, **kwargs)


@pytest.mark.parametrize("kwargs", [{}, {"device_ids": [0], "output_device": 0, "dim": 1},
                                    {"device_ids": []}])
def test_data_parallel_wraps_the_module_like_torch(kwargs) -> None:
    ours, theirs = _dp_pair(**kwargs)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["module.weight",
                                                                    "module.bias"]
    assert ours.device_ids == theirs.device_ids == []
    assert isinstance(ours.module, nn.Linear)
    assert hasattr(ours, "dim") == hasattr(theirs, "dim")
    assert hasattr(ours, "output_device") == hasattr(theirs, "output_device")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_data_parallel_runs_the_module_like_torch(dtype: str) -> None:
    run_twins(Case("DataParallel", inputs=[(4, 3)]), dtype, pair=_dp_pair())


def test_data_parallel_passes_keyword_arguments_and_shares_the_module() -> None:
    inner = nn.Linear(3, 2)
    wrapped = nn.DataParallel(inner)
    assert wrapped.module is inner
    x = chainrule.randn(4, 3)
    np.testing.assert_array_equal(wrapped(input=x).detach().numpy(),
                                  inner(x).detach().numpy())
    wrapped.eval()
    assert not inner.training
    # a checkpoint of the wrapper loads into a wrapper of a fresh module
    other = nn.DataParallel(nn.Linear(3, 2))
    other.load_state_dict(wrapped.state_dict())
    np.testing.assert_array_equal(other.module.weight.detach().numpy(),
                                  inner.weight.detach().numpy())


def test_data_parallel_function_like_torch() -> None:
    with pytest.raises(RuntimeError) as theirs:
        torch.nn.parallel.data_parallel(torch.nn.Linear(3, 2), torch.randn(4, 3))
    with pytest.raises(RuntimeError) as ours:
        nn.parallel.data_parallel(nn.Linear(3, 2), chainrule.randn(4, 3))
    assert str(ours.value) == str(theirs.value)
    assert nn.parallel.DataParallel is nn.DataParallel


SYNC = [
    Case("SyncBatchNorm", (3,), inputs=[(4, 3)]),
    Case("SyncBatchNorm", (3,), inputs=[(4, 3, 5)]),
    Case("SyncBatchNorm", (3,), {"momentum": None, "eps": 1e-3}, inputs=[(2, 3, 4, 4)]),
    Case("SyncBatchNorm", (3,), {"affine": False}, inputs=[(2, 3, 2, 3, 2)]),
    Case("SyncBatchNorm", (3,), {"bias": False}, inputs=[(2, 3, 2, 3, 2, 2)]),
    Case("SyncBatchNorm", (3,), {"track_running_stats": False}, inputs=[(4, 3, 5)]),
    Case("SyncBatchNorm", (3,), inputs=[(4, 3, 5)], train=False, id="SyncBatchNorm-eval"),
    Case("SyncBatchNorm", (3,), {"track_running_stats": False}, inputs=[(4, 3, 5)], train=False,
         id="SyncBatchNorm-eval-untracked"),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", SYNC, ids=lambda c: c.id)
def test_sync_batch_norm_like_torch(case: Case, dtype: str) -> None:
    ours, theirs = twin(case.name, *case.args, **case.kwargs)
    assert repr(ours) == repr(theirs)
    run_twins(case, dtype, pair=(ours, theirs))
    for (name, mine), (_, their) in zip(ours.state_dict().items(),
                                        theirs.state_dict().items()):
        np.testing.assert_allclose(mine.numpy(), their.numpy(), rtol=1e-6, err_msg=name)
    assert ours.process_group is None


@pytest.mark.parametrize("shape", [(3,), (4, 0, 5)])
def test_sync_batch_norm_input_errors_like_torch(shape) -> None:
    ours, theirs = twin("SyncBatchNorm", 3)
    with pytest.raises(ValueError) as their_error:
        theirs(torch.randn(*shape))
    with pytest.raises(ValueError) as our_error:
        ours(chainrule.randn(*shape))
    assert str(our_error.value) == str(their_error.value)


def _norms(lib):
    model = lib.nn.Sequential(
        lib.nn.Conv2d(2, 3, 1), lib.nn.BatchNorm2d(3),
        lib.nn.Sequential(lib.nn.BatchNorm1d(3, affine=False, momentum=None)),
        lib.nn.InstanceNorm2d(3, affine=True), lib.nn.BatchNorm3d(3, bias=False))
    model[1].eval()
    return model


def test_convert_sync_batchnorm_like_torch() -> None:
    theirs = _norms(torch)
    ours = _norms(chainrule)
    copy_weights(theirs, ours)
    kept = ours[1]
    ours_sync = nn.SyncBatchNorm.convert_sync_batchnorm(ours, process_group="group")
    theirs_sync = torch.nn.SyncBatchNorm.convert_sync_batchnorm(theirs, process_group="group")
    assert repr(ours_sync) == repr(theirs_sync)
    assert ours_sync is ours  # the container is kept, its batch norms replaced
    assert list(ours_sync.state_dict()) == list(theirs_sync.state_dict())
    converted = ours_sync[1]
    assert type(converted) is nn.SyncBatchNorm and converted.process_group == "group"
    assert converted.weight is kept.weight and converted.running_mean is kept.running_mean
    assert converted.num_batches_tracked is kept.num_batches_tracked
    assert [m.training for m in ours_sync.modules()] == [
        m.training for m in theirs_sync.modules()]
    single = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm1d(3))
    assert type(single) is nn.SyncBatchNorm
