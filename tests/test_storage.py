"""torch.storage against PyTorch: a tensor's untyped_storage() and (deprecated) storage(), the
storage classes and their constructors, sharing of memory between views and storages."""

import copy
import pickle
import warnings

import numpy as np
import pytest
import torch

import chainrule as cr


def plain(value):
    """A value both libraries can be compared on (storages by their type name and contents)."""
    if isinstance(value, (torch.Tensor, cr.Tensor)):
        return ("Tensor", str(value.dtype), tuple(value.shape), value.tolist())
    if isinstance(value, (torch.UntypedStorage, cr.UntypedStorage)):
        return ("UntypedStorage", str(value.device), value.tolist())
    if isinstance(value, (torch.TypedStorage, cr.TypedStorage)):
        return ("TypedStorage", str(value.dtype), str(value.device), value.tolist())
    if isinstance(value, (tuple, list)):
        return type(value)(plain(v) for v in value)
    if isinstance(value, (torch.dtype, cr.dtype, torch.device, cr.device, type)):
        return str(value)
    return value


def outcome(scenario, m):
    """The scenario's value on library ``m`` or its exception, and the warnings it gave; the
    once-per-process TypedStorage warning is reset first in both libraries."""
    m.storage._reset_warn_typed_storage_removal()
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


def _matrix(m):
    return m.arange(6.0).reshape(2, 3)


STORAGE = {
    "typed": lambda m: _matrix(m).storage(),
    "untyped": lambda m: _matrix(m).untyped_storage(),
    "types": lambda m: (type(_matrix(m).storage()).__name__,
                        type(_matrix(m).untyped_storage()).__name__),
    "sizes": lambda m: (lambda s, u: (s.size(), len(s), s.nbytes(), s.element_size(), u.size(),
                                      len(u), u.nbytes(), u.element_size()))(
        _matrix(m).storage(), _matrix(m).untyped_storage()),
    "of_a_view": lambda m: (lambda t: (t[1].storage_offset(), t[1].storage().tolist(),
                                       t[:, 1].untyped_storage().nbytes()))(_matrix(m)),
    "one_data_ptr": lambda m: (lambda t: (
        t[1].storage().data_ptr() == t.storage().data_ptr(),
        t[1].untyped_storage().data_ptr() == t.data_ptr(),
        t.T.untyped_storage().data_ptr() == t.untyped_storage().data_ptr(),
        t.storage().untyped().data_ptr() == t.data_ptr(),
        t[1].data_ptr() - t.data_ptr()))(_matrix(m)),
    "one_object": lambda m: (lambda t: (t.untyped_storage() is t.untyped_storage(),
                                        t[1].untyped_storage() is t.untyped_storage(),
                                        t.clone().untyped_storage() is t.untyped_storage()))(
        _matrix(m)),
    "attributes": lambda m: (lambda s, u: (s.dtype, s.device, u.device, s.is_cuda, u.is_cuda,
                                           s.is_sparse, u.is_sparse, s.get_device(),
                                           u.get_device(), s.filename, u.filename,
                                           s.is_shared(), u.is_shared(), s.is_pinned(),
                                           u.is_pinned()))(
        _matrix(m).storage(), _matrix(m).untyped_storage()),
    "types_names": lambda m: (_matrix(m).storage().type(), _matrix(m).untyped_storage().type(),
                              _matrix(m).storage().pickle_storage_type(),
                              m.zeros(1, dtype=m.bool).storage().type()),
    "items": lambda m: (lambda s, u: (s[1], s[-1], u[4], u[-1]))(
        _matrix(m).storage(), _matrix(m).untyped_storage()),
    "typed_slice": lambda m: _matrix(m).storage()[1:3],
    "untyped_slice": lambda m: (lambda u: (u[0:4], u[4:8].data_ptr() - u.data_ptr()))(
        _matrix(m).untyped_storage()),
    "typed_index_out_of_range": lambda m: _matrix(m).storage()[6],
    "untyped_index_out_of_range": lambda m: _matrix(m).untyped_storage()[24],
    "writes_reach_the_tensor": lambda m: (lambda t: (t.storage().fill_(1), t))(_matrix(m)),
    "setitem": lambda m: (lambda t: (t.storage().__setitem__(0, 7.0),
                                     t.untyped_storage().__setitem__(4, 0), t))(_matrix(m)),
    "copy_": lambda m: (lambda t: (t.storage().copy_(m.ones(6).storage()), t))(_matrix(m)),
    "copy_untyped": lambda m: (lambda t: (t.untyped_storage().copy_(
        m.full((6,), 2.0).untyped_storage()), t))(_matrix(m)),
    "copy_sizes_differ": lambda m: _matrix(m).storage().copy_(m.zeros(5).storage()),
    "clone_is_new_memory": lambda m: (lambda t: (t.storage().clone().data_ptr() != t.data_ptr(),
                                                 t.untyped_storage().clone().tolist()[:8]))(
        _matrix(m)),
    "cpu": lambda m: (lambda t: (t.storage().cpu().tolist(),
                                 t.untyped_storage().cpu() is t.untyped_storage()))(_matrix(m)),
    "conversions": lambda m: (lambda s: (s.double(), s.long(), s.int(), s.bool(), s.half(),
                                         s.byte(), s.char(), s.short(), s.float()))(
        _matrix(m).storage()),
    "untyped_conversions": lambda m: (lambda u: (u.float(), u.long().dtype))(
        m.tensor([1, 2], dtype=m.int8).untyped_storage()),
    "iteration": lambda m: (list(_matrix(m).storage()), list(_matrix(m).untyped_storage())[:8]),
    "tolist": lambda m: (_matrix(m).storage().tolist(),
                         _matrix(m).untyped_storage().tolist()),
    "empty_tensor": lambda m: (m.zeros(0).untyped_storage().nbytes(),
                               m.zeros(0).untyped_storage().data_ptr()),
    "meta": lambda m: (lambda u: (u.nbytes(), u.data_ptr(), str(u.device), repr(u)))(
        m.zeros(2, device="meta").untyped_storage()),
    "repr": lambda m: (repr(_matrix(m).storage()), repr(_matrix(m).untyped_storage()),
                       repr(m.zeros(0).untyped_storage())),
    "storage_type": lambda m: (_matrix(m).storage_type(), m.zeros(1, dtype=m.int64).storage_type()),
    "is_storage": lambda m: (m.is_storage(_matrix(m).storage()),
                             m.is_storage(_matrix(m).untyped_storage()), m.is_storage(_matrix(m))),
    "untyped_from_size": lambda m: (m.UntypedStorage(4).nbytes(), m.UntypedStorage().nbytes()),
    "untyped_from_data": lambda m: m.UntypedStorage([1, 2, 255]),
    "untyped_from_floats": lambda m: m.UntypedStorage([1.5]),
    "untyped_from_str": lambda m: m.UntypedStorage("a"),
    "untyped_two_arguments": lambda m: m.UntypedStorage(2, 3),
    "untyped_from_bytes": lambda m: m.UntypedStorage(b"ab"),
    "untyped_from_float": lambda m: m.UntypedStorage(1.5),
    "untyped_wraps_around": lambda m: m.UntypedStorage([256, 257]),
    "typed_two_arguments": lambda m: m.TypedStorage(2, 3),
    "legacy_from_float": lambda m: m.FloatStorage(1.5),
    "legacy_from_str": lambda m: m.FloatStorage("a"),
    "legacy_from_mixed": lambda m: m.FloatStorage([1.5, "a"]),
    "legacy_truncates": lambda m: m.LongStorage([1.5]),
    "untyped_meta": lambda m: repr(m.UntypedStorage(2, device="meta")),
    "untyped_cuda": lambda m: m.UntypedStorage(2, device="cuda"),
    "typed_from_size": lambda m: (m.TypedStorage(3).size(), m.TypedStorage(3).dtype,
                                  m.TypedStorage(3, dtype=m.float64).dtype),
    "typed_from_data": lambda m: (m.TypedStorage([1, 2], dtype=m.int64), m.FloatStorage([1, 2])),
    "typed_wrapping": lambda m: m.TypedStorage(wrap_storage=m.ones(2).untyped_storage(),
                                               dtype=m.float32),
    "legacy_classes": lambda m: (m.FloatStorage, m.DoubleStorage.dtype, m.LongStorage().size(),
                                 m.FloatStorage(3).size(), m.Storage, type(m.FloatStorage)),
    "legacy_isinstance": lambda m: (lambda s: (isinstance(s, m.FloatStorage),
                                               isinstance(s, m.DoubleStorage),
                                               isinstance(s, m.TypedStorage),
                                               isinstance(s, m.cuda.FloatStorage),
                                               isinstance(m.FloatStorage(2), m.TypedStorage)))(
        _matrix(m).storage()),
    "legacy_two_arguments": lambda m: m.FloatStorage(2, 3),
    "cuda_legacy": lambda m: m.cuda.FloatStorage(2),
    "from_buffer": lambda m: (m.UntypedStorage.from_buffer(b"abcd", dtype=m.uint8),
                              m.FloatStorage.from_buffer(b"\x00\x00\x80\x3f", "little"),
                              m.FloatStorage.from_buffer(b"\x3f\x80\x00\x00", "big")),
    "tensor_from_storage": lambda m: (lambda t: (m.Tensor(t.untyped_storage()),
                                                 m.Tensor(t.storage()),
                                                 m.Tensor(storage=t.storage()),
                                                 m.ByteTensor(t.untyped_storage())))(
        m.ones(2)),
    "tensor_from_storage_shares": lambda m: (lambda t: (
        m.Tensor(t.untyped_storage()).data_ptr() == t.data_ptr(),
        m.Tensor(t.storage(), device="cpu").data_ptr() == t.data_ptr()))(m.ones(2)),
    "tensor_from_other_dtype_storage": lambda m: m.DoubleTensor(m.ones(2).storage()),
    "tensor_from_default_dtype_mismatch": lambda m: m.Tensor(m.ones(2, dtype=m.float64).storage()),
    "new_from_storage": lambda m: m.zeros(1, dtype=m.float64).new(
        m.ones(2, dtype=m.float64).storage()),
}


@pytest.mark.parametrize("name", STORAGE)
def test_storage(name):
    same(STORAGE[name])


def test_the_typed_storage_warning_is_given_once():
    def scenario(m):
        t = m.ones(2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t.storage()
            t.storage()
            m.FloatStorage(2)
        return len(caught)

    same(scenario)


def test_storages_share_memory_with_numpy_views():
    array = np.arange(12.0).reshape(3, 4)
    t = cr.from_numpy(array)
    view = cr.from_numpy(array[1:, ::2])
    assert view.untyped_storage() is t.untyped_storage()
    assert view.storage_offset() == 4
    t.untyped_storage()[0:8] = 0  # the first float64, as bytes
    assert array[0, 0] == 0.0
    # a deep copy of a storage is new memory
    copied = copy.deepcopy(t.untyped_storage())
    assert copied.data_ptr() != t.untyped_storage().data_ptr()
    assert copied.tolist() == t.untyped_storage().tolist()


def test_storages_pickle():
    t = cr.arange(4.0)
    for storage in (t.untyped_storage(), t.storage(), cr.LongStorage([1, 2])):
        copied = pickle.loads(pickle.dumps(storage))
        assert type(copied) is type(storage)
        assert copied.tolist() == storage.tolist()
        assert copied.data_ptr() != storage.data_ptr()


def test_storage_of_memory_mapped_file(tmp_path):
    path = tmp_path / "data.bin"
    np.arange(4, dtype=np.float32).tofile(path)
    for m in (torch, cr):
        storage = m.UntypedStorage.from_file(str(path), shared=False, nbytes=16)
        assert m.Tensor(storage).tolist() == [0.0, 1.0, 2.0, 3.0]
        typed = m.FloatStorage.from_file(str(path), shared=False, size=4)
        assert typed.tolist() == [0.0, 1.0, 2.0, 3.0]
