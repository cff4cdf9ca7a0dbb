"""torch.cuda against PyTorch's CPU build (the oracle installed): every public name exists, and
each call gives the CPU build's result or its error (type and message) and warnings."""

import inspect
import types
import warnings

import pytest
import torch

import chainrule as cr


def plain(value):
    if isinstance(value, (torch.Tensor, cr.Tensor)):
        return ("Tensor", str(value.dtype), value.tolist())
    if isinstance(value, (tuple, list)):
        return type(value)(plain(v) for v in value)
    if isinstance(value, (torch.dtype, cr.dtype)):
        return str(value)
    if isinstance(value, dict):
        return (type(value).__name__, dict(value))
    if isinstance(value, (str, int, float, bool, type(None))):
        return value
    return type(value).__name__  # a context manager, a partial, ...


def outcome(scenario, m):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = plain(scenario(m))
        except Exception as e:  # noqa: BLE001  (the exception is what is compared)
            result = (type(e).__name__, str(e))
    return result, [(w.category.__name__, str(w.message)) for w in caught]


def same(scenario):
    ours, theirs = outcome(scenario, cr), outcome(scenario, torch)
    assert ours == theirs


MODULES = ["", "amp", "random", "memory", "streams", "graphs", "nvtx", "nccl", "profiler",
           "sparse", "tunable", "gds", "green_contexts", "jiterator"]


def _module(m, path):
    module = m.cuda
    for part in filter(None, path.split(".")):
        module = getattr(module, part)
    return module


def _public(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in dir(module) if not n.startswith("_")
                 and not isinstance(getattr(module, n), types.ModuleType)]
    return set(names)


@pytest.mark.parametrize("path", MODULES)
def test_every_public_name(path):
    theirs, ours = _module(torch, path), _module(cr, path)
    names = _public(theirs)
    if not hasattr(cr, "bfloat16"):  # BFloat16Tensor and kin come with chainrule's bfloat16
        names -= {n for n in names if n.startswith("BFloat16")}
    missing = sorted(n for n in names if not hasattr(ours, n))
    assert not missing
    for name in sorted(names):
        kind = [inspect.isclass(getattr(mod, name)) for mod in (theirs, ours)]
        assert kind[0] == kind[1], name


def test_submodules_import_by_path():
    import importlib

    for path in ("amp", "amp.autocast_mode", "amp.grad_scaler", "amp.common", "random",
                 "memory", "streams", "graphs", "nvtx", "nccl", "profiler", "sparse", "tunable",
                 "gds", "green_contexts", "jiterator"):
        assert importlib.import_module(f"chainrule.cuda.{path}") is _module(cr, path)


# no-argument calls of every function of torch.cuda, compared one by one
NO_ARGUMENTS = sorted(n for n in torch.cuda.__all__ if inspect.isfunction(getattr(torch.cuda, n)))


@pytest.mark.parametrize("name", NO_ARGUMENTS)
def test_each_function_without_arguments(name):
    same(lambda m: getattr(m.cuda, name)())


CALLS = {
    "manual_seed": lambda m: m.cuda.manual_seed(1),
    "manual_seed_float": lambda m: m.cuda.manual_seed(1.5),
    "manual_seed_str": lambda m: m.cuda.manual_seed("a"),
    "manual_seed_all": lambda m: m.cuda.manual_seed_all(1),
    "set_rng_state": lambda m: m.cuda.set_rng_state(m.zeros(5, dtype=m.uint8)),
    "set_rng_state_all": lambda m: m.cuda.set_rng_state_all([m.zeros(5, dtype=m.uint8)]),
    "get_rng_state_device": lambda m: m.cuda.get_rng_state("cuda:0"),
    "set_device": lambda m: m.cuda.set_device(0),
    "set_device_cpu": lambda m: m.cuda.set_device("cpu"),
    "set_device_negative": lambda m: m.cuda.set_device(-1),
    "set_device_index": lambda m: m.cuda.set_device("cuda:1"),
    "set_device_none": lambda m: m.cuda.set_device(None),
    "set_device_no_index": lambda m: m.cuda.set_device(m.device("cuda")),
    "device_enter": lambda m: m.cuda.device(0).__enter__(),
    "device_negative": lambda m: (lambda d: (d.__enter__(), d.__exit__(None, None, None),
                                             d.idx))(m.cuda.device(-1)),
    "device_none": lambda m: m.cuda.device(None).__enter__(),
    "device_cpu": lambda m: m.cuda.device("cpu"),
    "device_index": lambda m: (m.cuda.device(0).idx, m.cuda.device("cuda:1").idx,
                               m.cuda.device(m.device("cuda")).idx),
    "device_of": lambda m: (lambda d: (d.idx, d.__enter__()))(m.cuda.device_of(m.zeros(1))),
    "device_of_none": lambda m: m.cuda.device_of(None),
    "stream_none": lambda m: m.cuda.stream(None).__enter__(),
    "stream_context": lambda m: m.cuda.StreamContext(None).__enter__(),
    "set_stream_none": lambda m: m.cuda.set_stream(None),
    "set_stream_int": lambda m: m.cuda.set_stream(1),
    "Stream": lambda m: m.cuda.Stream(),
    "Stream_priority": lambda m: m.cuda.Stream(priority=0),
    "ExternalStream": lambda m: m.cuda.ExternalStream(0),
    "ExternalStream_device": lambda m: m.cuda.ExternalStream(1, device=0),
    "Event": lambda m: m.cuda.Event(enable_timing=True),
    "CUDAGraph": lambda m: m.cuda.CUDAGraph(),
    "graph": lambda m: m.cuda.graph(None),
    "make_graphed_callables": lambda m: m.cuda.make_graphed_callables(lambda x: x,
                                                                      (m.zeros(1),)),
    "MemPool": lambda m: m.cuda.MemPool(),
    "use_mem_pool": lambda m: m.cuda.use_mem_pool(None).__enter__(),
    "caching_allocator_alloc": lambda m: m.cuda.caching_allocator_alloc(10),
    "caching_allocator_delete": lambda m: m.cuda.caching_allocator_delete(0),
    "caching_allocator_disabled": lambda m: m.cuda.caching_allocator_disabled().__enter__(),
    "caching_allocator_enable": lambda m: m.cuda.caching_allocator_enable(False),
    "can_device_access_peer": lambda m: m.cuda.can_device_access_peer(0, 1),
    "check_error": lambda m: m.cuda.check_error(0),
    "CudaError": lambda m: m.cuda.CudaError(1),
    "cudaStatus": lambda m: (m.cuda.cudaStatus.SUCCESS, m.cuda.cudaStatus.ERROR_NOT_READY),
    "set_sync_debug_mode": lambda m: m.cuda.set_sync_debug_mode(0),
    "set_per_process_memory_fraction": lambda m: m.cuda.set_per_process_memory_fraction(0.5),
    "get_stream_from_external": lambda m: m.cuda.get_stream_from_external(0),
    "change_current_allocator": lambda m: m.cuda.change_current_allocator(None),
    "CUDAPluggableAllocator": lambda m: m.cuda.CUDAPluggableAllocator("a", "b", "c"),
    "memory_with_device": lambda m: (m.cuda.memory_allocated(0), m.cuda.memory_stats(0),
                                     m.cuda.max_memory_reserved("cuda:1")),
    "reset_max_memory_allocated": lambda m: m.cuda.reset_max_memory_allocated(),
    "list_gpu_processes": lambda m: m.cuda.list_gpu_processes(),
    "is_bf16_supported": lambda m: m.cuda.is_bf16_supported(False),
    "values": lambda m: (m.cuda.has_half, m.cuda.has_magma, m.cuda.default_generators),
    "errors": lambda m: (issubclass(m.cuda.OutOfMemoryError, RuntimeError),
                         m.cuda.OutOfMemoryError is m.OutOfMemoryError,
                         m.cuda.AcceleratorError is m.AcceleratorError,
                         str(m.cuda.DeferredCudaCallError("x")), repr(m.OutOfMemoryError)),
    "typed_tensor": lambda m: m.cuda.FloatTensor(2),
    "typed_tensor_class": lambda m: (repr(m.cuda.LongTensor), m.cuda.LongTensor.is_cuda,
                                     m.cuda.LongTensor.dtype, m.FloatTensor.is_cuda,
                                     isinstance(m.zeros(1, dtype=m.int64), m.cuda.LongTensor)),
    "typed_storage": lambda m: m.cuda.FloatStorage(2),
    "typed_storage_isinstance": lambda m: isinstance(m.FloatStorage(1), m.cuda.FloatStorage),
    "sparse_types": lambda m: (repr(m.cuda.sparse.FloatTensor),
                               m.cuda.sparse.FloatTensor.is_sparse,
                               isinstance(m.zeros(1), m.cuda.sparse.FloatTensor)),
    "sparse_call": lambda m: m.cuda.sparse.LongTensor(2),
    "nvtx_push": lambda m: m.cuda.nvtx.range_push("a"),
    "nvtx_pop": lambda m: m.cuda.nvtx.range_pop(),
    "nvtx_start": lambda m: m.cuda.nvtx.range_start("a"),
    "nvtx_end": lambda m: m.cuda.nvtx.range_end(0),
    "nvtx_mark": lambda m: m.cuda.nvtx.mark("a"),
    "nvtx_range": lambda m: m.cuda.nvtx.range("a {}", 1).__enter__(),
    "nccl_all_reduce": lambda m: m.cuda.nccl.all_reduce([m.zeros(1)]),
    "nccl_not_a_collection": lambda m: m.cuda.nccl.all_reduce(m.zeros(1)),
    "nccl_is_available": lambda m: m.cuda.nccl.is_available([m.zeros(1)]),
    "nccl_version": lambda m: m.cuda.nccl.version(),
    "nccl_broadcast": lambda m: m.cuda.nccl.broadcast([m.zeros(1)]),
    "profiler_start": lambda m: m.cuda.profiler.start(),
    "profiler_stop": lambda m: m.cuda.profiler.stop(),
    "profiler_profile": lambda m: m.cuda.profiler.profile().__enter__(),
    "tunable": lambda m: m.cuda.tunable.is_enabled(),
    "tunable_enable": lambda m: m.cuda.tunable.enable(True),
    "tunable_record": lambda m: m.cuda.tunable.record_untuned_enable(),
    "tunable_filename": lambda m: m.cuda.tunable.set_filename("x"),
    "tunable_mgpu": lambda m: m.cuda.tunable.mgpu_tune_gemm_in_file("nothing*.csv", 2),
    "gds_register": lambda m: m.cuda.gds.gds_register_buffer(m.zeros(1).untyped_storage()),
    "gds_deregister": lambda m: m.cuda.gds.gds_deregister_buffer(m.zeros(1).untyped_storage()),
    "green_context": lambda m: m.cuda.green_contexts.GreenContext.create(num_sms=1),
    "green_context_limit": lambda m: m.cuda.GreenContext.max_workqueue_concurrency(),
    "amp_scaler": lambda m: m.cuda.amp.GradScaler().is_enabled(),
    "amp_scaler_disabled": lambda m: m.cuda.amp.GradScaler(enabled=False).is_enabled(),
    "amp_autocast": lambda m: (lambda a: (a.fast_dtype, a.device))(
        m.cuda.amp.autocast(dtype=m.float16, cache_enabled=False)),
    "amp_available": lambda m: (m.cuda.amp.amp_definitely_not_available(),
                                m.cuda.amp.common.amp_definitely_not_available()),
    "amp_custom_fwd": lambda m: m.cuda.amp.custom_fwd(lambda x: x)(3),
    "amp_custom_fwd_partial": lambda m: m.cuda.amp.custom_fwd(cast_inputs=m.float32),
    "amp_custom_bwd": lambda m: m.cuda.amp.custom_bwd(lambda x: x)(3),
    "amp_classes": lambda m: (issubclass(m.cuda.amp.autocast, m.amp.autocast),
                              issubclass(m.cuda.amp.GradScaler, m.amp.GradScaler),
                              m.cuda.amp.autocast_mode.autocast is m.cuda.amp.autocast,
                              m.cuda.amp.grad_scaler.GradScaler is m.cuda.amp.GradScaler),
}


@pytest.mark.parametrize("name", CALLS)
def test_calls(name):
    same(CALLS[name])


def test_the_usual_device_idiom_runs_on_the_cpu():
    def scenario(m):
        device = m.device("cuda" if m.cuda.is_available() else "cpu")
        model = m.nn.Linear(2, 1).to(device)
        with m.cuda.amp.autocast(enabled=m.cuda.is_available()):
            return str(device), model(m.ones(1, 2).to(device)).shape[1]

    same(scenario)


def test_nothing_is_seeded_on_cuda():
    cr.manual_seed(0)
    expected = cr.rand(3)
    cr.manual_seed(0)
    cr.cuda.manual_seed_all(5)
    cr.cuda.seed()
    assert cr.rand(3).tolist() == expected.tolist()
