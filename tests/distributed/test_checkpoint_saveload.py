"""torch.distributed.checkpoint.save/load in one process (two ranks: tests/distributed/
test_fsdp.py): a nested state dict filled in place, PyTorch's errors, a fresh optimizer's state
made as PyTorch's get_optimizer_state_dict makes it."""

from __future__ import annotations

import json
import warnings

import pytest
import torch as ref
import torch.distributed.checkpoint as ref_dcp
from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict as ref_get_optim

import chainrule as torch
import chainrule.distributed.checkpoint as dcp
from chainrule.distributed.checkpoint.state_dict import get_optimizer_state_dict


def _state(lib):
    return {"a": lib.arange(4.0), "n": {"step": 3, "x": [lib.ones(2, 2), 2.5], "b": (0.9, 0.99)}}


def test_round_trip_fills_the_given_state_dict_in_place(tmp_path):
    with pytest.warns(UserWarning, match="assuming the intent is to save in a single process"):
        metadata = dcp.save(_state(torch), checkpoint_id=tmp_path)
    assert metadata.state_dict_metadata["a"] == [4]
    target = {"a": torch.zeros(4), "n": {"step": 0, "x": [torch.zeros(2, 2), 0.0], "b": (0, 0)}}
    a = target["a"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dcp.load(target, checkpoint_id=tmp_path)
    assert target["a"] is a and a.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert target["n"]["step"] == 3 and target["n"]["x"][1] == 2.5
    assert target["n"]["x"][0].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert tuple(target["n"]["b"]) == (0.9, 0.99)


@pytest.mark.parametrize("bad", [{"a": (3,)}, {"c": (4,)}])
def test_errors_are_pytorchs(tmp_path, bad):
    messages = []
    for lib, api, where in ((ref, ref_dcp, tmp_path / "ref"), (torch, dcp, tmp_path / "ours")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            api.save(_state(lib), checkpoint_id=where)
            try:
                api.load({k: lib.zeros(v) for k, v in bad.items()}, checkpoint_id=where)
            except BaseException as error:  # noqa: BLE001  (PyTorch's CheckpointException)
                messages.append(str(error))
    assert len(messages) == 2
    assert messages[1].splitlines()[-1] in messages[0]


def test_a_checkpoint_id_is_required():
    for api in (ref_dcp, dcp):
        with pytest.raises(RuntimeError, match="`checkpoint_id` must be specified"):
            api.save({"a": 1})


def test_loading_on_another_number_of_ranks_is_refused(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dcp.save({"a": torch.ones(2)}, checkpoint_id=tmp_path)
        record = json.loads((tmp_path / ".metadata").read_text())
        (tmp_path / ".metadata").write_text(json.dumps({**record, "world_size": 2}))
        with pytest.raises(RuntimeError, match="saved by 2 ranks and is loaded by 1"):
            dcp.load({"a": torch.zeros(2)}, checkpoint_id=tmp_path)


def test_a_fresh_optimizers_state_dict_has_its_state_as_pytorchs():
    states = []
    for lib, get in ((ref, ref_get_optim), (torch, get_optimizer_state_dict)):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)
        opt = lib.optim.Adam(model.parameters(), lr=0.1, weight_decay=0.1)
        weight = model.weight.detach().clone()
        state = get(model, opt)
        assert lib.equal(model.weight, weight) and model.weight.grad is None
        assert opt.param_groups[0]["lr"] == 0.1
        states.append({name: {k: lib.as_tensor(v).tolist() for k, v in entry.items()}
                       for name, entry in state["state"].items()})
    assert states[0] == states[1]
