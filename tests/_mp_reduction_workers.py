"""Functions the children of tests/test_multiprocessing_reductions.py run (a module importing no
torch: each function imports the library it is given by name)."""

import importlib
import warnings


def write_storages(name, q_in, q_out):
    """Write into the typed and untyped storages received; report what arrived."""
    importlib.import_module(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage's deprecation
        typed, untyped = q_in.get(timeout=60)
        typed[0] = 42.0
        untyped[8] = 7  # the low byte of the second int64
        q_out.put((type(typed).__name__, str(typed.dtype), typed.size(), typed.tolist(),
                   type(untyped).__name__, untyped.nbytes(), typed.is_shared(),
                   untyped.is_shared()))


def compare_views(name, q_in, q_out):
    """Tensors of one shared storage, received together and apart: do they share memory here?"""
    importlib.import_module(name)
    base, view = q_in.get(timeout=60)
    again = q_in.get(timeout=60)
    storage = again.untyped_storage()
    view[0] = -1.0
    q_out.put((view.storage_offset(), base.untyped_storage().data_ptr()
               == view.untyped_storage().data_ptr(), storage.data_ptr()
               == base.untyped_storage().data_ptr(), base.tolist(), again.tolist(),
               base.untyped_storage().nbytes()))


def meta_tensor(name, q_in, q_out):
    lib = importlib.import_module(name)
    t, p = q_in.get(timeout=60)
    q_out.put((str(t.device), tuple(t.shape), t.stride(), t.storage_offset(), t.requires_grad,
               type(p) is lib.nn.Parameter, str(p.device), p.requires_grad))
