"""What scripts call first — torch.cuda, torch.backends, the default device, determinism and
threads, autograd.Variable, is_tensor — compared with PyTorch's CPU build (the oracle installed)."""

import warnings

import pytest
import torch

import chainrule as cr

BOTH = pytest.mark.parametrize("m", [torch, cr], ids=["torch", "chainrule"])


@pytest.fixture(autouse=True)
def restore_switches():
    """Put back every switch these tests turn, in both libraries."""
    saved = [(m, m.get_num_threads(), m.get_float32_matmul_precision(),
              m.backends.cudnn.deterministic, m.backends.cudnn.benchmark) for m in (torch, cr)]
    yield
    for m, threads, precision, deterministic, benchmark in saved:
        m.set_num_threads(threads)
        m.set_float32_matmul_precision(precision)
        m.use_deterministic_algorithms(False)
        m.backends.cudnn.deterministic, m.backends.cudnn.benchmark = deterministic, benchmark
        m.set_default_device(None)


def outcome(fn):
    """fn's value, or its exception type, with the warnings it raised (their categories)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn()
        except Exception as e:  # noqa: BLE001  (the type is what is compared)
            result = type(e)
    return result, [w.category for w in caught]


def same(scenario):
    ours, theirs = outcome(lambda: scenario(cr)), outcome(lambda: scenario(torch))
    assert ours == theirs, f"chainrule {ours} != torch {theirs}"


# ---- torch.cuda ----------------------------------------------------------------------------------

CUDA = {
    "is_available": lambda m: m.cuda.is_available(),
    "device_count": lambda m: m.cuda.device_count(),
    "is_initialized": lambda m: m.cuda.is_initialized(),
    "is_bf16_supported": lambda m: m.cuda.is_bf16_supported(),
    "manual_seed": lambda m: m.cuda.manual_seed(0),
    "manual_seed_float": lambda m: m.cuda.manual_seed(1.5),
    "manual_seed_bad": lambda m: m.cuda.manual_seed("x"),
    "manual_seed_all": lambda m: m.cuda.manual_seed_all(123),
    "seed": lambda m: m.cuda.seed(),
    "seed_all": lambda m: m.cuda.seed_all(),
    "empty_cache": lambda m: m.cuda.empty_cache(),
    "memory_allocated": lambda m: m.cuda.memory_allocated(),
    "max_memory_allocated": lambda m: m.cuda.max_memory_allocated(0),
    "memory_reserved": lambda m: m.cuda.memory_reserved(),
    "max_memory_reserved": lambda m: m.cuda.max_memory_reserved(),
    "init": lambda m: m.cuda.init(),
    "synchronize": lambda m: m.cuda.synchronize(),
    "current_device": lambda m: m.cuda.current_device(),
    "get_device_name": lambda m: m.cuda.get_device_name(0),
    "get_device_capability": lambda m: m.cuda.get_device_capability(),
    "get_device_properties": lambda m: m.cuda.get_device_properties(0),
    "the_usual_line": lambda m: str(m.device("cuda" if m.cuda.is_available() else "cpu")),
}


@pytest.mark.parametrize("name", CUDA)
def test_cuda_as_a_cpu_build_answers(name):
    same(CUDA[name])


def test_cuda_errors_say_why():
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
        cr.cuda.current_device()


def test_cuda_manual_seed_leaves_the_cpu_generator_alone():
    cr.manual_seed(0)
    a = cr.rand(3)
    cr.manual_seed(0)
    cr.cuda.manual_seed_all(5)
    assert cr.rand(3).tolist() == a.tolist()


# ---- torch.backends ------------------------------------------------------------------------------

BACKENDS = {
    "mps.is_available": lambda m: m.backends.mps.is_available(),
    "mps.is_built": lambda m: m.backends.mps.is_built(),
    "cuda.is_built": lambda m: m.backends.cuda.is_built(),
    "cudnn.is_available": lambda m: m.backends.cudnn.is_available(),
    "cudnn.version": lambda m: m.backends.cudnn.version(),
    "cudnn.flags": lambda m: (m.backends.cudnn.enabled, m.backends.cudnn.benchmark,
                              m.backends.cudnn.deterministic, m.backends.cudnn.allow_tf32,
                              m.backends.cudnn.benchmark_limit),
    "cuda.matmul.flags": lambda m: (m.backends.cuda.matmul.allow_tf32,
                                    m.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
                                    m.backends.cuda.matmul.allow_bf16_reduced_precision_reduction),
    "cuda.matmul.unknown": lambda m: m.backends.cuda.matmul.foo,
    "cuda.matmul.set_unknown": lambda m: setattr(m.backends.cuda.matmul, "foo", 1),
    "cpu.capability_type": lambda m: type(m.backends.cpu.get_cpu_capability()),
}


@pytest.mark.parametrize("name", BACKENDS)
def test_backends_as_a_cpu_build_answers(name):
    same(BACKENDS[name])


@BOTH
def test_cudnn_flags_are_settable(m):
    m.backends.cudnn.deterministic = True
    m.backends.cudnn.benchmark = True
    assert m.backends.cudnn.deterministic is True and m.backends.cudnn.benchmark is True


def test_allow_tf32_is_the_matmul_precision():
    def scenario(m):
        m.backends.cuda.matmul.allow_tf32 = True
        high = m.get_float32_matmul_precision(), m.backends.cuda.matmul.allow_tf32
        m.set_float32_matmul_precision("highest")
        return high, m.backends.cuda.matmul.allow_tf32
    same(scenario)


@pytest.mark.parametrize("precision", ["highest", "high", "medium", "x"])
def test_float32_matmul_precision(precision):
    same(lambda m: (m.set_float32_matmul_precision(precision), m.get_float32_matmul_precision()))


def test_cpu_capability_is_one_of_torchs_names():
    assert cr.backends.cpu.get_cpu_capability() in (
        "DEFAULT", "AVX2", "AVX512", "VSX", "ZVECTOR")


def test_backends_submodules_import():
    import chainrule.backends.cudnn as cudnn

    assert cudnn is cr.backends.cudnn


# ---- the default device --------------------------------------------------------------------------

@pytest.mark.parametrize("dev", ["cpu", "cpu:0", None], ids=str)
def test_set_default_device_cpu(dev):
    same(lambda m: (m.set_default_device(dev), str(m.get_default_device().type),
                    str(m.zeros(1).device)))


def test_set_default_device_to_a_torch_device():
    cr.set_default_device(device=torch.device("cpu"))
    assert cr.get_default_device() == cr.device("cpu")


@pytest.mark.parametrize("dev", ["cuda", "cuda:1", "xpu"])
def test_default_device_without_memory_fails_on_allocation_as_torch(dev):
    """A CPU build of PyTorch accepts the device and fails when memory is asked for there."""
    try:
        cr.set_default_device(dev)
        torch.set_default_device(dev)
        assert str(cr.get_default_device()) == dev
        with pytest.raises(AssertionError) as theirs:
            torch.zeros(1)
        with pytest.raises(AssertionError) as ours:
            cr.zeros(1)
        assert str(ours.value) == str(theirs.value)
    finally:
        cr.set_default_device(None)
        torch.set_default_device(None)
    assert str(cr.get_default_device()) == "cpu"


def test_default_device_meta_makes_meta_tensors():
    try:
        cr.set_default_device("meta")
        torch.set_default_device("meta")
        assert str(cr.zeros(2, 3).device) == str(torch.zeros(2, 3).device) == "meta"
    finally:
        cr.set_default_device(None)
        torch.set_default_device(None)
    assert str(cr.zeros(1).device) == "cpu"


def test_device_ordinal_without_accelerator_raises_as_torch():
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is "
                                           "available"):
        torch.device(0)
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is "
                                           "available"):
        cr.device(0)


def test_get_default_device_type():
    assert isinstance(cr.get_default_device(), cr.device)
    assert repr(cr.get_default_device()) == repr(torch.get_default_device())


@pytest.mark.parametrize("device", ["cpu", "cuda", "cuda:1", None, "device cpu", "meta",
                                   "lazy", "foo", 3])
def test_get_device_module_as_torch(device):
    def outcome(m):
        given = m.device("cpu") if device == "device cpu" else device
        try:
            return m.get_device_module(given).__name__.replace("chainrule", "torch")
        except RuntimeError as err:
            return str(err)

    assert outcome(cr) == outcome(torch)


# ---- determinism and threads ---------------------------------------------------------------------

DETERMINISM = {
    "default": lambda m: (m.are_deterministic_algorithms_enabled(),
                          m.is_deterministic_algorithms_warn_only_enabled()),
    "on": lambda m: (m.use_deterministic_algorithms(True),
                     m.are_deterministic_algorithms_enabled(),
                     m.is_deterministic_algorithms_warn_only_enabled()),
    "warn_only": lambda m: (m.use_deterministic_algorithms(True, warn_only=True),
                            m.is_deterministic_algorithms_warn_only_enabled()),
    "off_clears_warn_only": lambda m: (m.use_deterministic_algorithms(True, warn_only=True),
                                       m.use_deterministic_algorithms(False),
                                       m.are_deterministic_algorithms_enabled(),
                                       m.is_deterministic_algorithms_warn_only_enabled()),
    "int_mode": lambda m: m.use_deterministic_algorithms(1),
    "int_warn_only": lambda m: m.use_deterministic_algorithms(True, warn_only=1),
}


@pytest.mark.parametrize("name", DETERMINISM)
def test_deterministic_algorithms(name):
    same(DETERMINISM[name])


@pytest.mark.parametrize("n", [2, 1, 0, -1, 2.0, "2", True], ids=repr)
def test_set_num_threads(n):
    same(lambda m: (m.set_num_threads(n), m.get_num_threads()))


def test_get_num_threads_is_positive():
    assert isinstance(cr.get_num_threads(), int) and cr.get_num_threads() >= 1


# ---- autograd.Variable, is_tensor, is_floating_point ---------------------------------------------

def variable_scenarios():
    def leaf(m):
        return m.ones(2)

    def nonleaf(m):
        return m.ones(2, requires_grad=True) * 2

    return {
        "plain": lambda m: m.autograd.Variable(leaf(m)),
        "requires_grad": lambda m: m.autograd.Variable(leaf(m), requires_grad=True),
        "positional": lambda m: m.autograd.Variable(leaf(m), True),
        "data_keyword": lambda m: m.autograd.Variable(data=leaf(m), requires_grad=True),
        "nonleaf_detached": lambda m: m.autograd.Variable(nonleaf(m)),
        "nonleaf_new_leaf": lambda m: m.autograd.Variable(nonleaf(m), requires_grad=True),
        "parameter": lambda m: m.autograd.Variable(m.nn.Parameter(leaf(m))),
        "empty": lambda m: m.autograd.Variable(),
        "volatile": lambda m: m.autograd.Variable(leaf(m), volatile=True),
        "volatile_false": lambda m: m.autograd.Variable(leaf(m), volatile=False),
        "int_requires_grad": lambda m: m.autograd.Variable(m.arange(3), requires_grad=True),
        "not_a_tensor": lambda m: m.autograd.Variable(3),
        "list": lambda m: m.autograd.Variable([1.0, 2.0]),
        "unknown_keyword": lambda m: m.autograd.Variable(leaf(m), foo=1),
    }


@pytest.mark.parametrize("name", variable_scenarios())
def test_variable(name, like_torch):
    scenario = variable_scenarios()[name]
    (ours, our_warnings), (theirs, their_warnings) = (outcome(lambda: scenario(cr)),
                                                      outcome(lambda: scenario(torch)))
    assert our_warnings == their_warnings
    if isinstance(theirs, type):
        assert ours is theirs
        return
    assert type(ours) is cr.Tensor and type(theirs) is torch.Tensor
    like_torch(ours, theirs)
    assert (ours.is_leaf, ours.grad_fn) == (theirs.is_leaf, None)


@BOTH
def test_variable_shares_storage_and_trains(m):
    t = m.ones(2)
    v = m.autograd.Variable(t, requires_grad=True)
    v.sum().backward()
    assert v.grad.tolist() == [1.0, 1.0] and t.grad is None
    with m.no_grad():
        v.add_(1)
    assert t.tolist() == [2.0, 2.0] and t._version == v._version == 1


@pytest.mark.parametrize("obj", ["tensor", "parameter", "nonleaf", "int", "list", "array"])
def test_isinstance_variable_and_is_tensor(obj):
    def scenario(m):
        x = {"tensor": lambda: m.zeros(1), "parameter": lambda: m.nn.Parameter(m.zeros(1)),
             "nonleaf": lambda: m.zeros(1, requires_grad=True).sum(), "int": lambda: 3,
             "list": lambda: [1.0], "array": lambda: m.zeros(1).numpy()}[obj]()
        return isinstance(x, m.autograd.Variable), m.is_tensor(x)
    same(scenario)


@BOTH
def test_variable_is_not_a_tensor_class(m):
    assert not issubclass(m.Tensor, m.autograd.Variable)


@pytest.mark.parametrize("obj", ["float", "int", "bool", "number", "none"])
def test_is_floating_point(obj):
    def scenario(m):
        x = {"float": lambda: m.ones(1), "int": lambda: m.arange(2), "bool": lambda: m.ones(1) > 0,
             "number": lambda: 3.0, "none": lambda: None}[obj]()
        return m.is_floating_point(x)
    same(scenario)


@pytest.mark.parametrize("text", ["float32", " cpu", "cpu:x", "cuda:", "Cpu", "foo:0", "cuda:01",
                                  "cpu:0", "meta:1", "cuda:3"])
def test_device_strings_parse_as_torch(text):
    same(lambda m: str(m.device(text)))


@pytest.mark.parametrize("dev", ["cuda", "cuda:1", "xpu", "mtia", "mps", "xla", "ipu", "maia",
                                 "vulkan", "hip", "ve", "fpga", "lazy", "hpu", "privateuseone"])
@pytest.mark.parametrize("how", ["to", "zeros", "empty"])
def test_memory_on_a_device_chainrule_lacks_fails_as_a_cpu_build(dev, how):
    calls = {"to": lambda m: m.zeros(1).to(dev), "zeros": lambda m: m.zeros(1, device=dev),
             "empty": lambda m: m.empty(2, device=dev)}
    with pytest.raises(BaseException) as theirs:
        calls[how](torch)
    with pytest.raises(type(theirs.value)) as ours:
        calls[how](cr)
    # the same words up to PyTorch's list of its backends (chainrule names its two instead)
    assert str(ours.value)[:60] == str(theirs.value)[:60]
