"""torch.return_types: the named results of ops such as max, sort, svd and slogdet.

PyTorch's are struct sequences (CPython's C-level named tuples, as ``os.stat_result``): a tuple
whose fields are also read-only attributes, built from one sequence (``max((values,
indices))``), with no ``_fields`` or ``_asdict`` — code that tells namedtuples apart by
``_fields`` treats them as plain tuples. Each class here is a direct subclass of tuple that
behaves so; ``<name>_out`` is the class an op returns when it was given ``out=``.
"""

from __future__ import annotations

__all__ = ["pytree_register_structseq", "all_return_types"]

_FIELDS = {
    "aminmax": "min max",
    "cummax": "values indices",
    "cummin": "values indices",
    "frexp": "mantissa exponent",
    "geqrf": "a tau",
    "histogram": "hist bin_edges",
    "histogramdd": "hist bin_edges",
    "kthvalue": "values indices",
    "linalg_cholesky_ex": "L info",
    "linalg_eig": "eigenvalues eigenvectors",
    "linalg_eigh": "eigenvalues eigenvectors",
    "linalg_inv_ex": "inverse info",
    "linalg_ldl_factor": "LD pivots",
    "linalg_ldl_factor_ex": "LD pivots info",
    "linalg_lstsq": "solution residuals rank singular_values",
    "linalg_lu": "P L U",
    "linalg_lu_factor": "LU pivots",
    "linalg_lu_factor_ex": "LU pivots info",
    "linalg_qr": "Q R",
    "linalg_slogdet": "sign logabsdet",
    "linalg_solve_ex": "result info",
    "linalg_svd": "U S Vh",
    "lu_unpack": "P L U",
    "max": "values indices",
    "median": "values indices",
    "min": "values indices",
    "mode": "values indices",
    "nanmedian": "values indices",
    "qr": "Q R",
    "slogdet": "sign logabsdet",
    "sort": "values indices",
    "svd": "U S V",
    "topk": "values indices",
    "triangular_solve": "solution cloned_coefficient",
}
_NO_OUT = frozenset({"histogramdd"})  # PyTorch has no out= form of these
_PRIVATE = {"_lu_with_info": "LU pivots info", "_unpack_dual": "primal tangent"}


class _Field:
    """A read-only attribute reading one position of the tuple."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __get__(self, obj, owner=None):
        return self if obj is None else tuple.__getitem__(obj, self.index)

    def __set__(self, obj, value) -> None:
        raise AttributeError("readonly attribute")

    def __delete__(self, obj) -> None:
        raise AttributeError("readonly attribute")


_MISSING = object()


def _structseq(name: str, fields: tuple[str, ...]) -> type:
    n = len(fields)

    def __new__(cls, sequence=_MISSING, dict=None, **unknown):  # noqa: A002  (CPython's name)
        if sequence is _MISSING:
            raise TypeError("structseq() missing required argument 'sequence' (pos 1)")
        if unknown:
            raise TypeError(f"'{next(iter(unknown))}' is an invalid keyword argument for "
                            "structseq()")
        try:
            values = tuple(sequence)
        except TypeError:
            raise TypeError("constructor requires a sequence") from None
        if len(values) != n:
            raise TypeError(f"torch.return_types.{name}() takes a {n}-sequence "
                            f"({len(values)}-sequence given)")
        return tuple.__new__(cls, values)

    def __repr__(self) -> str:
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    def __reduce__(self):
        return type(self), (tuple(self), {})

    def __init_subclass__(cls, **kwargs):
        raise TypeError(f"type 'torch.return_types.{name}' is not an acceptable base type")

    namespace = {"__new__": __new__, "__repr__": __repr__, "__reduce__": __reduce__,
                 "__init_subclass__": classmethod(__init_subclass__), "__slots__": (),
                 "__module__": __name__, "__doc__": None, "__match_args__": fields,
                 "n_fields": n, "n_sequence_fields": n, "n_unnamed_fields": 0}
    namespace.update({f: _Field(i) for i, f in enumerate(fields)})
    return type(name, (tuple,), namespace)


_NODES: set[type] = set()  # the struct sequences pytrees treat as nodes


def is_pytree_node(cls: type) -> bool:
    """True if pytrees flatten instances of ``cls`` as struct sequences."""
    return cls in _NODES


def pytree_register_structseq(cls: type) -> None:
    """Make pytrees flatten the struct sequence class ``cls`` into its fields."""
    if cls in _NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    _NODES.add(cls)


_public = []
for _name, _fields in _FIELDS.items():
    for _cls_name in (_name,) if _name in _NO_OUT else (_name, _name + "_out"):
        globals()[_cls_name] = _structseq(_cls_name, tuple(_fields.split()))
        _public.append(_cls_name)
for _name, _fields in _PRIVATE.items():
    globals()[_name] = _structseq(_name, tuple(_fields.split()))
all_return_types: list[type] = [globals()[_name] for _name in sorted(_public)]
__all__ += sorted(_public)
_NODES.update(globals()[_name] for _name in (*_public, *_PRIVATE))
del _name, _fields, _cls_name, _public


def out_type(cls: type) -> type:
    """The class an op returns as ``cls`` when it was given ``out=``."""
    return globals().get(cls.__name__ + "_out", cls)
