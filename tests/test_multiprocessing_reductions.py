"""torch.multiprocessing.reductions' picklers of storages, meta tensors and events against
torch's, with real child processes (fork and spawn, joined with a timeout): storages in shared
memory reach a child as its memory, tensors of one storage arrive viewing one storage,
StorageWeakRef and the shared cache, and the CUDA and event picklers failing as on PyTorch's
CPU build."""

import gc
import os
import warnings
from multiprocessing.reduction import ForkingPickler

import _mp_reduction_workers as workers
import pytest
import torch
import torch.multiprocessing as tmp
import torch.multiprocessing.reductions as tr

import chainrule as cr
import chainrule.multiprocessing as crmp
import chainrule.multiprocessing.reductions as crr

TIMEOUT = 120
LIBS = {"torch": (torch, tmp, tr), "chainrule": (cr, crmp, crr)}


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage's deprecation
        yield


def exchange(name, method, worker, *messages):
    """Start ``worker`` in a child, put ``messages`` on its queue, return its answer."""
    lib, mp, _ = LIBS[name]
    ctx = mp.get_context(method)
    q_in, q_out = ctx.Queue(), ctx.Queue()
    child = ctx.Process(target=worker, args=(name, q_in, q_out))
    child.start()
    for message in messages:
        q_in.put(message)
    answer = q_out.get(timeout=TIMEOUT)
    child.join(TIMEOUT)
    if child.is_alive():
        child.kill()
        pytest.fail("a child process did not finish in time")
    assert child.exitcode == 0
    return answer


def storages_round_trip(name, method, strategy):
    lib, mp, _ = LIBS[name]
    before = mp.get_sharing_strategy()
    mp.set_sharing_strategy(strategy)
    try:
        floats = lib.arange(4.0).share_memory_()
        ints = lib.arange(3).share_memory_()
        answer = exchange(name, method, workers.write_storages,
                          (floats.storage(), ints.untyped_storage()))
        return answer, floats.tolist(), ints.tolist()
    finally:
        mp.set_sharing_strategy(before)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_storages_reach_a_child_as_its_memory(method):
    theirs = storages_round_trip("torch", method, "file_descriptor")
    assert storages_round_trip("chainrule", method, "file_descriptor") == theirs
    assert theirs[1:] == ([42.0, 1.0, 2.0, 3.0], [0, 7, 2])


def test_storages_by_file_name():
    theirs = storages_round_trip("torch", "fork", "file_system")
    assert storages_round_trip("chainrule", "fork", "file_system") == theirs


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_tensors_of_one_storage_arrive_viewing_one_storage(method):
    def scenario(name):
        lib = LIBS[name][0]
        base = lib.arange(6.0).share_memory_()
        answer = exchange(name, method, workers.compare_views, (base, base[2:]), base)
        return answer, base.tolist()
    assert scenario("chainrule") == scenario("torch") == (
        (2, True, True, [0.0, 1.0, -1.0, 3.0, 4.0, 5.0], [0.0, 1.0, -1.0, 3.0, 4.0, 5.0], 24),
        [0.0, 1.0, -1.0, 3.0, 4.0, 5.0])


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_meta_tensors(method):
    def scenario(name):
        lib, _, r = LIBS[name]
        t = lib.empty(4, 3, device="meta", requires_grad=True)[1:]
        p = lib.nn.Parameter(lib.empty(2, device="meta"))
        with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf"):
            r.reduce_tensor(t)
        reduced = r.reduce_tensor(t.detach())
        return reduced[0].__name__, exchange(name, method, workers.meta_tensor, (t.detach(), p))
    assert scenario("chainrule") == scenario("torch")


def test_in_process_round_trips():
    def scenario(name):
        lib, _, r = LIBS[name]
        t = lib.arange(6.0).share_memory_()
        untyped = ForkingPickler.loads(ForkingPickler.dumps(t.untyped_storage()))
        typed = ForkingPickler.loads(ForkingPickler.dumps(t.storage()))
        legacy = r.reduce_typed_storage_child(lib.FloatStorage(2))
        child = r.rebuild_typed_storage_child(lib.UntypedStorage(8), lib.FloatStorage)
        empty = ForkingPickler.loads(ForkingPickler.dumps(lib.zeros(0).untyped_storage()))
        meta = ForkingPickler.loads(ForkingPickler.dumps(
            lib.empty(2, 3, device="meta")[:, 1:]))
        return [type(untyped).__name__, untyped.nbytes(),
                untyped.data_ptr() == t.untyped_storage().data_ptr(), type(typed).__name__,
                str(typed.dtype), typed.tolist(), typed.data_ptr() == t.data_ptr(),
                legacy[0].__name__, type(child).__name__, str(child.dtype), child.size(),
                type(empty).__name__, empty.nbytes(), tuple(meta.shape), meta.stride(),
                meta.storage_offset(), str(meta.device)]
    assert scenario("chainrule") == scenario("torch")


def test_reducers_and_rebuilders_directly():
    def scenario(name):
        lib, _, r = LIBS[name]
        out = []
        for make in (lambda: r.reduce_storage(lib.empty(2, device="meta").untyped_storage()),
                     lambda: r.reduce_event(lib.cuda.Event()),
                     lambda: r.rebuild_cuda_tensor(lib.Tensor, (2,), (1,), 0,
                                                   lib.storage.TypedStorage, lib.float32, 0,
                                                   None, 0, 0, False, None, 0, None, False),
                     lambda: r.rebuild_cuda_tensor(lib.Tensor, (2,), (1,), 0,
                                                   lib.storage.UntypedStorage, lib.float32, 0,
                                                   b"h", 8, 0, False, b"x", 0, None, False),
                     lambda: r.rebuild_event(0, b"x" * 64)):
            try:
                make()
                out.append("ok")
            except Exception as e:  # noqa: BLE001  (compared with torch's)
                out.append((type(e).__name__,
                            str(e) if not isinstance(e, AttributeError) else None))
        reduced = r.reduce_storage(lib.zeros(0).untyped_storage())
        out += [reduced[0].__name__, r.rebuild_storage_empty(lib.UntypedStorage).nbytes(),
                r.reduce_typed_storage(lib.zeros(2).storage())[0].__name__,
                str(r.rebuild_typed_storage(lib.UntypedStorage(8), lib.float64).dtype),
                r.storage_from_cache(lib.UntypedStorage, ("no such handle",))]
        meta = r.rebuild_meta_tensor(lib.Tensor, (2, 3), (3, 1), 1, lib.float32, 40, True)
        out += [tuple(meta.shape), meta.stride(), meta.storage_offset(), meta.requires_grad]
        read, write = os.pipe()
        try:
            duplicate = os.dup(read)
            out.append(r.fd_id(read) == r.fd_id(duplicate) != r.fd_id(write))
            os.close(duplicate)
        finally:
            os.close(read)
            os.close(write)
        return out
    assert scenario("chainrule") == scenario("torch")


def test_storage_weak_refs_and_the_shared_cache():
    def scenario(name):
        lib, _, r = LIBS[name]
        x = lib.arange(4.0)
        a, b = r.StorageWeakRef(x.untyped_storage()), r.StorageWeakRef(x[1:].untyped_storage())
        other = r.StorageWeakRef(lib.arange(3.0).untyped_storage())
        facts = [a == b, hash(a) == hash(b), a == other, a.expired(), other.expired()]
        c = r.StorageWeakRef.from_weakref(r.StorageWeakRef(x.untyped_storage()).cdata) \
            if name == "chainrule" else None
        del x
        gc.collect()
        facts += [a.expired(), b.expired()]
        cache = r.SharedCache()
        facts.append(cache.limit)
        keep = [lib.ones(1) for _ in range(100)]
        for i, t in enumerate(keep):
            cache[("live", i)] = r.StorageWeakRef(t.untyped_storage())
        for i in range(40):
            cache[("dead", i)] = r.StorageWeakRef(lib.ones(1).untyped_storage())
        facts += [len(cache), cache.limit, cache.get(("live", 3)) is not None,
                  cache.get(("dead", 0))]
        del c
        return facts
    assert scenario("chainrule") == scenario("torch")


def test_an_unshared_storage_is_refused():
    with pytest.raises(RuntimeError, match="call share_memory_\\(\\) on the tensor"):
        ForkingPickler.dumps(cr.arange(3.0).untyped_storage())
