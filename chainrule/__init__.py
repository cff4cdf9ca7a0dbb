"""chainrule: automatic differentiation on NumPy, with PyTorch's API."""

from __future__ import annotations

from . import _autocast, autograd, profiler, utils, viz
from ._backend import (
    ALL_DTYPES,
    bfloat16,
    complex64,
    complex128,
    dtype,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    set_default_dtype,
    uint8,
)
from ._backend import bool_ as bool  # noqa: A001  (PyTorch's names)
from ._backend import complex64 as cfloat
from ._backend import complex128 as cdouble
from ._backend import float16 as half
from ._backend import float32 as float  # noqa: A001
from ._backend import float64 as double
from ._backend import int16 as short
from ._backend import int32 as int  # noqa: A001
from ._backend import int64 as long
from ._creation import (
    Generator,
    arange,
    as_tensor,
    bernoulli,
    binomial,
    default_generator,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    get_rng_state,
    initial_seed,
    linspace,
    manual_seed,
    multinomial,
    normal,
    ones,
    ones_like,
    poisson,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    seed,
    set_rng_state,
    tensor,
    zeros,
    zeros_like,
)
from ._device import device, get_default_device, set_default_device
from ._legacy import CPU_TYPES as _TYPED_TENSORS
from ._printing import get_printoptions, set_printoptions
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .autograd.anomaly_mode import (
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
)
from .autograd.grad_mode import is_inference_mode_enabled
from .ops import FUNCTIONS as _FUNCTIONS
from .ops import _out
from .serialization import load, save
from .storage import LEGACY_STORAGES as _TYPED_STORAGES
from .storage import TypedStorage, UntypedStorage
from .tensor import Size, Tensor
from .torch_version import __version__  # the PyTorch release followed, with chainrule's own

# torch.<name>(..., out=t) for the names PyTorch gives out= (methods stay as they are)
globals().update({_name: _out.with_out(_name, _fn) if _name in _out.TORCH else _fn
                  for _name, _fn in _FUNCTIONS.items()})
globals().update(_TYPED_TENSORS)  # torch.FloatTensor, ...
globals().update(_TYPED_STORAGES)  # torch.FloatStorage, ...
Storage = _TYPED_STORAGES["FloatStorage"]


from . import (  # noqa: E402, I001  (after the op functions: a later import wins a name)
    _deprecated,
    backends,
    compiler,
    cuda,
    distributed,
    distributions,
    fft,
    func,
    functional,
    linalg,
    masked,
    monitor,
    multiprocessing,
    nn,
    optim,
    quasirandom,
    random,
    return_types,
    signal,
    sparse,
    special,
)
from ._dtypes import *  # noqa: E402, F403  (finfo, iinfo, promote_types, layout, ...)
from ._factories import *  # noqa: E402, F403  (asarray, logspace, vander, fill, ...)
from ._interop import from_dlpack  # noqa: E402
from ._lobpcg import lobpcg  # noqa: E402
from ._settings import *  # noqa: E402, F403  (interop threads, warn_always, autocast, ...)
from ._settings import (  # noqa: E402
    are_deterministic_algorithms_enabled,
    get_float32_matmul_precision,
    get_num_threads,
    is_deterministic_algorithms_warn_only_enabled,
    set_float32_matmul_precision,
    set_num_threads,
    use_deterministic_algorithms,
)
from ._stream import Event, Stream  # noqa: E402
from ._toplevel import *  # noqa: E402, F403  (torch.abs_, torch.dropout_, torch.pi, ...)
from ._torch_nn import *  # noqa: E402, F403  (torch.<name> for nn kernels, e.g. torch.pdist)
from ._windows import *  # noqa: E402, F403  (hann_window, kaiser_window, ...)
from .amp import GradScaler  # noqa: E402
from .compiler import compile  # noqa: E402, A004
from .cuda import AcceleratorError, OutOfMemoryError  # noqa: E402
from .func import vmap  # noqa: E402
from .functional import *  # noqa: E402, F403  (torch.einsum is torch.functional.einsum, ...)
from .futures import Future  # noqa: E402
# The facades (torch.testing, torch.jit, ...); no module of the package reads this namespace.
from . import _dynamo, _inductor, _logging, jit, testing  # noqa: E402, I001  (torch.jit, ...)
from . import accelerator, amp, cpu, futures, hub, onnx, overrides, types  # noqa: E402  (torch.amp)
from . import library  # noqa: E402  (torch.library, and torch.ops.aten)
from . import fx  # noqa: E402,F401  (torch.fx)

globals().update(_deprecated.wrap_functions(globals()))  # torch.add(input, alpha, other), ...
# CPU autocast: the functions and methods it lists, wrapped once (chainrule/_autocast.py)
_autocast.install({"torch": globals(), "linalg": vars(linalg), "fft": vars(fft),
                   "nn.functional": vars(nn.functional), "functional": vars(functional),
                   "Tensor": Tensor})
# __torch_function__: the public functions dispatch (chainrule/overrides.py), wrapped last
overrides.install()
