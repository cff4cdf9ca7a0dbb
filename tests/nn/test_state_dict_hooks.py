"""State dicts against torch: _metadata and versions, the per-module _save_to_state_dict and
_load_from_state_dict (overrides honoured), extra state, the state-dict and load hooks,
load_state_dict's errors, strict=False and assign=True.

Each scenario is one function of the library (``torch`` or ``chainrule``) returning what it saw;
the two runs must agree."""

from __future__ import annotations

import warnings

import pytest
import torch

import chainrule


def _both(scenario):
    return scenario(torch), scenario(chainrule)


def _net(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3),
                         nn.Sequential(nn.ReLU(), nn.Linear(3, 1)))


def test_state_dict_keys_and_metadata() -> None:
    def scenario(lib):
        sd = _net(lib).state_dict(prefix="model.")
        return (type(sd).__name__, list(sd), [(k, dict(v)) for k, v in sd._metadata.items()],
                list(_net(lib).state_dict(keep_vars=True)))

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_keep_vars_and_detach() -> None:
    net = chainrule.nn.Linear(2, 2)
    assert net.state_dict(keep_vars=True)["weight"] is net.weight
    detached = net.state_dict()["weight"]
    assert detached is not net.weight and not detached.requires_grad
    assert detached.data_ptr() == net.weight.data_ptr()


def test_load_state_dict_errors_and_incompatible_keys() -> None:
    def scenario(lib):
        out = []
        net = _net(lib)
        sd = net.state_dict()
        bad = dict(sd)
        bad.pop("0.weight")
        bad["extra"] = sd["0.bias"]
        bad["1.running_mean"] = lib.zeros(4)
        bad["2.1.bias"] = 5
        with pytest.raises(RuntimeError) as e:
            net.load_state_dict(bad)
        out.append(str(e.value))
        keys = net.load_state_dict({"0.weight": sd["0.weight"], "zzz": sd["0.bias"],
                                    "2.zzz.w": sd["0.bias"]}, strict=False)
        out += [repr(keys), str(keys), keys.missing_keys, keys.unexpected_keys, type(keys).__name__]
        matched = net.load_state_dict(sd)
        out += [repr(matched), matched == ([], [])]
        with pytest.raises(TypeError) as e:
            net.load_state_dict([("0.weight", sd["0.weight"])])
        out.append(str(e.value))
        return out

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_batch_norm_checkpoints_without_num_batches_tracked() -> None:
    def scenario(lib):
        out = []
        net = _net(lib)
        plain = dict(net.state_dict())  # no _metadata: version None, the counter starts at 0
        plain.pop("1.num_batches_tracked")
        out.append(repr(net.load_state_dict(plain)))
        versioned = net.state_dict()  # version 2 says it should be there
        versioned.pop("1.num_batches_tracked")
        with pytest.raises(RuntimeError) as e:
            net.load_state_dict(versioned)
        out.append(str(e.value))
        with pytest.raises(RuntimeError) as e:  # stale running stats of an old instance norm
            lib.nn.InstanceNorm1d(2).load_state_dict({"running_mean": lib.zeros(2),
                                                      "running_var": lib.ones(2)})
        out.append(str(e.value))
        return out

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_overrides_of_save_and_load_and_extra_state_are_honoured() -> None:
    def scenario(lib):
        log = []

        class Custom(lib.nn.Module):
            _version = 3

            def __init__(self) -> None:
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(2))
                self.state = {"k": 1}

            def _save_to_state_dict(self, destination, prefix, keep_vars):
                super()._save_to_state_dict(destination, prefix, keep_vars)
                destination[prefix + "twice"] = self.w.detach() * 2

            def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs):
                log.append(("load", dict(local_metadata), prefix, strict))
                state_dict.pop(prefix + "twice", None)
                super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                              missing_keys, unexpected_keys, error_msgs)

            def get_extra_state(self):
                return self.state

            def set_extra_state(self, state):
                self.state = dict(state, loaded=True)

        outer = lib.nn.Sequential(Custom())
        sd = outer.state_dict()
        log.append((list(sd), sd["0._extra_state"], dict(sd._metadata["0"])))
        outer.load_state_dict(sd)
        log.append(outer[0].state)
        del sd["0._extra_state"]
        with pytest.raises(RuntimeError) as e:
            outer.load_state_dict(sd)
        log.append(str(e.value))
        with pytest.raises(RuntimeError) as e:  # extra state a module does not take
            lib.nn.Linear(1, 1).load_state_dict({**lib.nn.Linear(1, 1).state_dict(),
                                                 "_extra_state": 1})
        log.append(str(e.value))
        return log

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_state_dict_hooks() -> None:
    def scenario(lib):
        calls = []
        lin = lib.nn.Linear(1, 1)
        lin.register_state_dict_pre_hook(lambda m, prefix, keep_vars:
                                         calls.append(("pre", prefix, keep_vars)))
        lin.register_state_dict_post_hook(lambda m, sd, prefix, meta:
                                          calls.append(("post", list(sd), prefix, dict(meta))))
        calls.append(list(lib.nn.Sequential(lin).state_dict(prefix="p.", keep_vars=True)))
        handle = lin._register_state_dict_hook(lambda m, sd, prefix, meta: {"replaced": 1})
        calls.append(lin.state_dict())
        handle.remove()
        lin.register_state_dict_post_hook(lambda *a: 1)
        with pytest.raises(RuntimeError) as e:
            lin.state_dict()
        calls.append(str(e.value))

        def public(m, sd, prefix, meta):
            return None

        lin.register_state_dict_post_hook(public)
        with pytest.raises(RuntimeError) as e:
            lin._register_state_dict_hook(public)
        calls.append(str(e.value))
        with warnings.catch_warnings(record=True) as caught:  # positional args are deprecated
            warnings.simplefilter("always")
            calls.append(list(lib.nn.Linear(1, 1).state_dict(None, "x.")))
        calls.append([w.category.__name__ for w in caught])
        return calls

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_load_state_dict_hooks() -> None:
    def scenario(lib):
        calls = []
        lin = lib.nn.Linear(1, 1)
        lin.register_load_state_dict_pre_hook(
            lambda m, sd, prefix, meta, strict, missing, unexpected, errors:
            calls.append(("pre", type(m).__name__, sorted(sd), prefix, strict)))
        lin._register_load_state_dict_pre_hook(
            lambda sd, prefix, meta, strict, missing, unexpected, errors:
            calls.append(("pre, no module", prefix)))

        def post(m, keys):
            calls.append(("post", repr(keys)))
            keys.missing_keys.clear()

        lin.register_load_state_dict_post_hook(post)
        calls.append(repr(lib.nn.Sequential(lin).load_state_dict({"0.weight": lib.ones(1, 1)},
                                                                  strict=False)))
        lin.register_load_state_dict_post_hook(lambda m, keys: keys)
        with pytest.raises(AssertionError) as e:
            lin.load_state_dict(lin.state_dict())
        calls.append(str(e.value))
        return calls

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_assign_makes_the_given_tensors_the_parameters() -> None:
    def scenario(lib):
        lin = lib.nn.Linear(2, 1)
        lin.weight.requires_grad_(False)
        weight, bias = lib.full((1, 2), 3.0), lib.nn.Parameter(lib.zeros(1))
        bn = lib.nn.BatchNorm1d(1)
        mean = lib.full((1,), 2.0)
        lin.load_state_dict({"weight": weight, "bias": bias}, assign=True)
        bn.load_state_dict({**bn.state_dict(), "running_mean": mean}, assign=True)
        return (type(lin.weight).__name__, lin.weight.requires_grad, lin.bias is bias,
                lin.bias.requires_grad, lin.weight.detach().numpy().tolist(),
                bn.running_mean is mean, type(bn.running_mean).__name__)

    ours, theirs = _both(scenario)
    assert ours == theirs


def test_assign_shares_the_checkpoint_storage() -> None:
    lin = chainrule.nn.Linear(2, 1)
    weight = chainrule.zeros(1, 2)
    lin.load_state_dict({"weight": weight, "bias": chainrule.zeros(1)}, assign=True)
    with chainrule.no_grad():
        weight.fill_(7.0)
    assert lin.weight.tolist() == [[7.0, 7.0]]
    copied = chainrule.nn.Linear(2, 1)
    copied.load_state_dict({"weight": weight, "bias": chainrule.zeros(1)})
    with chainrule.no_grad():
        weight.fill_(1.0)
    assert copied.weight.tolist() == [[7.0, 7.0]]


def test_torch_tensors_load_into_chainrule_modules() -> None:
    source = torch.nn.Linear(3, 2)
    ours = chainrule.nn.Linear(3, 2)
    ours.load_state_dict(source.state_dict())
    assert ours.weight.tolist() == source.weight.tolist()


def test_spectral_norm_state_dict_hooks_like_torch() -> None:
    torch.manual_seed(0)
    # a weight with more rows than columns: WᵀW is invertible, v well defined
    source = torch.nn.utils.spectral_norm(torch.nn.Linear(2, 3))
    source(torch.ones(1, 2))
    saved = source.state_dict()
    # a state dict of PyTorch < 1.1: the computed weight instead of weight_v, no version
    old = {k: v for k, v in saved.items() if k != "weight_v"}
    old["weight"] = source.weight.detach()

    def run(lib, convert):
        lin = lib.nn.utils.spectral_norm(lib.nn.Linear(2, 3))
        sd = lin.state_dict()
        out = [sorted(sd), dict(sd._metadata[""])]
        out.append(repr(lin.load_state_dict({k: convert(v) for k, v in old.items()})))
        out.append(lin.weight_v.tolist())
        lib.nn.utils.remove_spectral_norm(lin)
        out.append(dict(lin.state_dict()._metadata[""]))
        return out

    ours = run(chainrule, lambda t: chainrule.tensor(t.numpy()))
    theirs = run(torch, lambda t: t)
    assert ours[:3] == theirs[:3] and ours[4] == theirs[4]
    assert abs(torch.tensor(ours[3]) - torch.tensor(theirs[3])).max() < 1e-4
