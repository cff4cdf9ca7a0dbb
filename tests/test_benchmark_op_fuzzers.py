"""torch.utils.benchmark.op_fuzzers against torch's. PyTorch 2.13's FuzzedParameter refuses
every normalized custom distribution (its check is inverted), so constructing any op fuzzer
raises there and in chainrule alike; with that check accepting normalized distributions in both
libraries, the fuzzers draw the same parameters and tensors."""

import numpy as np
import pytest
import torch.utils.benchmark.op_fuzzers.binary as torch_binary
import torch.utils.benchmark.op_fuzzers.spectral as torch_spectral
import torch.utils.benchmark.op_fuzzers.unary as torch_unary
import torch.utils.benchmark.utils.fuzzer as torch_fuzzer

import chainrule.utils.benchmark.op_fuzzers.binary as binary
import chainrule.utils.benchmark.op_fuzzers.spectral as spectral
import chainrule.utils.benchmark.op_fuzzers.unary as unary
import chainrule.utils.benchmark.utils.fuzzer as fuzzer

FUZZERS = {
    "unary": (torch_unary.UnaryOpFuzzer, unary.UnaryOpFuzzer, {}, [2, 4, 15]),
    "binary": (torch_binary.BinaryOpFuzzer, binary.BinaryOpFuzzer, {}, [4, 17]),
    "spectral": (torch_spectral.SpectralOpFuzzer, spectral.SpectralOpFuzzer,
                 {"probability_regular": 0.5}, [2, 13]),
}


@pytest.mark.parametrize("kind", list(FUZZERS))
def test_construction_fails_as_pytorchs(kind):
    theirs, ours, options, _ = FUZZERS[kind]
    for cls in (theirs, ours):
        with pytest.raises(AssertionError, match="Distribution is not normalized"):
            cls(seed=0, **options)


@pytest.fixture
def normalized_check(monkeypatch):
    """Both libraries' FuzzedParameter taking normalized custom distributions."""
    def check(self, distribution):
        if isinstance(distribution, dict):
            assert abs(sum(distribution.values()) - 1) <= 1e-5
        return distribution
    monkeypatch.setattr(torch_fuzzer.FuzzedParameter, "_check_distribution", check)
    monkeypatch.setattr(fuzzer.FuzzedParameter, "_check_distribution", check)


@pytest.mark.parametrize("kind", list(FUZZERS))
def test_the_same_draws(kind, normalized_check):
    theirs, ours, options, _ = FUZZERS[kind]
    for seed in range(30):
        assert ours(seed=seed, **options)._generate(np.random.RandomState(seed)) == \
            theirs(seed=seed, **options)._generate(np.random.RandomState(seed))


@pytest.mark.parametrize("kind", list(FUZZERS))
def test_the_same_tensors(kind, normalized_check):
    theirs, ours, options, seeds = FUZZERS[kind]
    for seed in seeds:  # seeds whose tensors are small
        t_tensors, t_properties, t_params = next(theirs(seed=seed, **options).take(1))
        c_tensors, c_properties, c_params = next(ours(seed=seed, **options).take(1))
        assert c_params == t_params

        def plain(properties):  # the dim orders are arrays
            return {name: {k: v.tolist() if isinstance(v, np.ndarray) else v
                           for k, v in entry.items()} for name, entry in properties.items()}
        assert plain(c_properties) == plain(t_properties)
        assert c_tensors.keys() == t_tensors.keys()
        for name, t in t_tensors.items():
            c = c_tensors[name]
            assert (tuple(c.shape), c.stride(), str(c.dtype)) == \
                (tuple(t.shape), t.stride(), str(t.dtype))
            np.testing.assert_array_equal(c.numpy(), t.numpy())


def test_regular_sizes():
    assert spectral.REGULAR_SIZES == torch_spectral.REGULAR_SIZES
    assert len(spectral.REGULAR_SIZES) == 189 and spectral.REGULAR_SIZES[:4] == [18, 20, 24, 25]
