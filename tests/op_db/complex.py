"""Complex-number rows. Inputs are real pairs: each row builds complex values with
``complex``/``view_as_complex`` and returns real ones (``view_as_real``, ``abs``, ...), so the
finite-difference checks see the real function whose derivatives PyTorch's complex convention
encodes (dL/dRe + i dL/dIm)."""

from __future__ import annotations

from ._spec import POSITIVE, REAL, Const, OpRow, S, T

FLAGS = Const([[0.5, -1.0], [2.0, 0.0]])  # fixed values: Python results do not batch


def _flag(name: str, call) -> OpRow:
    """A predicate's row: its bool result wrapped as a tensor."""
    return OpRow(name, call, (S(FLAGS),), orders=(), grad_fn=False, records=())

PAIR = (S((3, 4), (3, 4)), S((5,), (5,)), S((2, 3), (3,)))
AWAY = (S(T((3, 4), POSITIVE), (3, 4)), S(T((5,), POSITIVE), (5,)))  # |z| > 0: smooth


def _z(m, x, y):
    return m.complex(x, y)


ROWS = [
    OpRow("complex", lambda m, x, y: m.view_as_real(_z(m, x, y) ** 2), PAIR,
          records=("complex", "view_as_real")),
    OpRow("polar", lambda m, r, th: m.view_as_real(m.polar(r, th)),
          (S(T((3, 4), POSITIVE), (3, 4)),), records=("complex", "view_as_real")),
    OpRow("view_as_complex", lambda m, x: m.view_as_real(m.view_as_complex(x).exp()),
          (S((3, 2)), S((2, 4, 2))), records=("view_as_complex", "view_as_real")),
    OpRow("view_as_real", lambda m, x, y: m.view_as_real(_z(m, x, y)).sin(), PAIR,
          records=("complex", "view_as_real")),
    OpRow("real", lambda m, x, y: m.real(_z(m, x, y).exp()), PAIR, records=("complex", "real")),
    OpRow("imag", lambda m, x, y: m.imag(_z(m, x, y).exp()), PAIR, records=("complex", "imag")),
    OpRow("conj", lambda m, x, y: m.view_as_real(m.conj(_z(m, x, y)) * _z(m, y, x)), PAIR,
          records=("complex", "conj")),
    OpRow("angle", lambda m, x, y: m.angle(_z(m, x, y)), AWAY, records=("complex", "angle")),
    OpRow("angle", lambda m, x: m.angle(x), (S(T((3, 4), grad=False)),), variant="real",
          orders=(), records=("angle",)),
    OpRow("sgn", lambda m, x, y: m.view_as_real(m.sgn(_z(m, x, y))), AWAY,
          records=("complex", "sgn")),
    OpRow("sgn", lambda m, x: m.sgn(x), (S((3, 4)),), variant="real", domain=REAL,
          records=("sgn",), inplace={"sgn_": lambda x: x.sgn_()}),
    OpRow("abs", lambda m, x, y: m.abs(_z(m, x, y)), AWAY, variant="complex",
          records=("complex", "abs")),
    OpRow("isreal", lambda m, x: m.isreal(x), (S(Const([1.0, 2.0])),), orders=(),
          records=("isreal",)),
    OpRow("conj_physical", lambda m, x, y: m.view_as_real(m.conj_physical(_z(m, x, y))), PAIR,
          records=("complex", "conj", "view_as_real")),
    # on a real tensor conj_physical_ records nothing here (PyTorch: ConjPhysicalBackward1)
    OpRow("conj_physical", lambda m, x: m.conj_physical(x) * 2, (S((3, 4)),), variant="real",
          records=(), grad_fn=False, inplace={"conj_physical_": lambda x: x.conj_physical_()}),
    OpRow("Tensor.conj_physical", lambda m, x, y: m.view_as_real(_z(m, x, y).conj_physical()),
          PAIR, records=("complex", "conj", "view_as_real")),
    OpRow("resolve_conj", lambda m, x, y: m.view_as_real(m.resolve_conj(_z(m, x, y))), PAIR,
          records=("complex", "view_as_real")),
    OpRow("Tensor.resolve_conj", lambda m, x, y: m.view_as_real(_z(m, x, y).resolve_conj()),
          PAIR, records=("complex", "view_as_real")),
    OpRow("resolve_neg", lambda m, x: m.resolve_neg(x) * 2, (S((3, 4)),), records=()),
    OpRow("Tensor.resolve_neg", lambda m, x: x.resolve_neg() * 2, (S((3, 4)),), records=()),
    OpRow("Tensor.sgn", lambda m, x, y: m.view_as_real(_z(m, x, y).sgn()), AWAY,
          records=("complex", "sgn")),
    _flag("is_complex", lambda m, x: m.tensor([m.is_complex(x), m.is_complex(x * 1j)])),
    _flag("Tensor.is_complex", lambda m, x: m.tensor([x.is_complex(), (x * 1j).is_complex()])),
    _flag("is_conj", lambda m, x: m.tensor(m.is_conj(x * 1j))),
    _flag("Tensor.is_conj", lambda m, x: m.tensor((x * 1j).is_conj())),
    _flag("is_neg", lambda m, x: m.tensor(m.is_neg(x))),
    _flag("Tensor.is_neg", lambda m, x: m.tensor(x.is_neg())),
]
