"""The op registry and the public functions of each op family; attaches Tensor methods."""

from __future__ import annotations

from .. import _batching
from .._dispatch import apply, apply_inplace
from .._modes import ForeignArgument
from .._torch_function import dispatch_foreign
from ..tensor import Tensor
from . import complex, decomposition, elementwise, indexing, linalg, reduction, shape, special

# isort: split
# The nn families after the core ones (their records come later in docs/ops.md).
from . import (
    activation,
    convolution,
    distance,
    dropout,
    embedding,
    fft,
    linear,
    loss,
    normalization,
    padding,
    pooling,
)

# isort: split
from . import extra  # compositions over all the families above
from ._registry import REGISTRY, Op, defop
from .elementwise import (
    ADD,
    BITWISE_AND,
    BITWISE_NOT,
    BITWISE_OR,
    BITWISE_XOR,
    DIV,
    EQ,
    GE,
    GT,
    LE,
    LT,
    MUL,
    NE,
    NEG,
    RSUB,
    SUB,
)

__all__ = ["REGISTRY", "Op", "defop", "FUNCTIONS"]

NN_FAMILIES = (activation, linear, convolution, pooling, normalization, dropout, embedding,
               padding, distance, loss, fft)
FAMILIES = (elementwise, reduction, linalg, shape, indexing, special, complex,
            decomposition) + NN_FAMILIES + (extra,)
Tensor._to_dtype = shape.to_dtype
Tensor._to_device = shape.to_device
Tensor._alias = shape.alias
_batching.ops.update(stack=REGISTRY["stack"], copy=REGISTRY["copy"],
                     view_scatter=REGISTRY["view_scatter"], cat_fn=shape.cat,
                     stack_fn=shape.stack)
FUNCTIONS: dict = {}
for _family in FAMILIES:
    FUNCTIONS.update(_family.FUNCTIONS)
    for _name, _fn in _family.METHODS.items():
        setattr(Tensor, _name, _fn)


def _inplace_method(op):
    if len(op.inputs) == 1:
        def method(self):
            return apply_inplace(op, self)
    else:
        def method(self, other):
            return apply_inplace(op, self, other)

    return method


for _name, _op in elementwise.INPLACE.items():
    setattr(Tensor, _name, _inplace_method(_op))
for _name, _fn in elementwise.INPLACE_METHODS.items():
    setattr(Tensor, _name, _fn)


def _binary(op, name: str):
    def method(self, other):
        try:
            return apply(op, self, other)
        except ForeignArgument:  # a tensor-like with __torch_function__ (fx's Proxy)
            return dispatch_foreign(name, (self, other))

    method.__name__ = name
    return method


def _reflected(op, name: str):
    def method(self, other):
        try:
            return apply(op, other, self)
        except ForeignArgument:
            return dispatch_foreign(name, (self, other))

    method.__name__ = name
    return method


Tensor.__add__ = _binary(ADD, "__add__")
Tensor.__radd__ = _binary(ADD, "__radd__")
Tensor.__sub__ = _binary(SUB, "__sub__")
Tensor.__rsub__ = _binary(RSUB, "__rsub__")
Tensor.__mul__ = _binary(MUL, "__mul__")
Tensor.__rmul__ = _binary(MUL, "__rmul__")
Tensor.__truediv__ = _binary(DIV, "__truediv__")
Tensor.__rtruediv__ = _reflected(DIV, "__rtruediv__")
Tensor.__neg__ = lambda self: apply(NEG, self)
Tensor.__pos__ = lambda self: self
Tensor.__abs__ = elementwise.abs
Tensor.__pow__ = elementwise.pow
Tensor.__rpow__ = lambda self, other: elementwise.pow(other, self)
Tensor.__matmul__ = linalg.matmul
Tensor.__rmatmul__ = lambda self, other: linalg.matmul(other, self)
Tensor.__eq__ = _binary(EQ, "__eq__")
Tensor.__ne__ = _binary(NE, "__ne__")
Tensor.__lt__ = _binary(LT, "__lt__")
Tensor.__le__ = _binary(LE, "__le__")
Tensor.__gt__ = _binary(GT, "__gt__")
Tensor.__ge__ = _binary(GE, "__ge__")
Tensor.__and__ = _binary(BITWISE_AND, "__and__")
Tensor.__rand__ = _binary(BITWISE_AND, "__rand__")
Tensor.__or__ = _binary(BITWISE_OR, "__or__")
Tensor.__ror__ = _binary(BITWISE_OR, "__ror__")
Tensor.__xor__ = _binary(BITWISE_XOR, "__xor__")
Tensor.__rxor__ = _binary(BITWISE_XOR, "__rxor__")
Tensor.__invert__ = lambda self: apply(BITWISE_NOT, self)
Tensor.__iadd__ = Tensor.add_
Tensor.__isub__ = Tensor.sub_
Tensor.__imul__ = Tensor.mul_
Tensor.__itruediv__ = Tensor.div_
Tensor.__ipow__ = Tensor.pow_

# Operators the elementwise family defines itself (//, %, shifts, bool-checked -, 2 / x).
for _name, _fn in elementwise.DUNDERS.items():
    setattr(Tensor, _name, _fn)


def __getattr__(name: str):
    """``torch.ops.<namespace>`` (``torch.ops.aten``, a custom op's ``torch.ops.mylib``): the
    operator namespaces chainrule.library keeps."""
    from ._registry import NAMESPACES

    found = NAMESPACES.get(name)
    if found is None:
        raise AttributeError(f"module 'torch.ops' has no attribute '{name}'")
    return found
