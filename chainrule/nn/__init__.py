"""chainrule.nn: modules, parameters, layers, losses, ``init``, ``utils`` and ``functional``."""

from . import (
    _reduction,
    attention,
    common_types,
    functional,
    grad,
    init,
    modules,
    parallel,
    parameter,
    utils,
)
from .modules import *  # noqa: F403  (torch.nn.modules.__all__, as torch.nn exports them)
from .parallel import DataParallel  # noqa: F401
from .parameter import (  # noqa: F401
    Buffer,
    Parameter,
    UninitializedBuffer,
    UninitializedParameter,
)


def factory_kwargs(kwargs: dict | None) -> dict:
    """The ``device``/``dtype``/``memory_format`` keyword arguments for a factory function, from
    ``kwargs`` and its optional ``factory_kwargs`` dict; other keys are a TypeError."""
    if kwargs is None:
        return {}
    simple = {"device", "dtype", "memory_format"}
    unexpected = kwargs.keys() - simple - {"factory_kwargs"}
    if unexpected:
        raise TypeError(f"unexpected kwargs {unexpected}")
    out = dict(kwargs.get("factory_kwargs", {}))
    for key in simple & kwargs.keys():
        if key in out:
            raise TypeError(f"{key} specified twice, in **kwargs and in factory_kwargs")
        out[key] = kwargs[key]
    return out

