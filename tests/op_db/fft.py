"""torch.fft rows: real inputs, complex values built with ``complex`` and returned through
``view_as_real`` so every check sees a real function (see tests/op_db/complex.py)."""

from __future__ import annotations

from ._spec import OpRow, S


def _z(m, x, y):
    return m.complex(x, y)


ROWS = [
    OpRow("fft.fft", lambda m, x, y: m.view_as_real(m.fft.fft(_z(m, x, y))),
          (S((5,), (5,)), S((3, 4), (3, 4))), records=("complex", "fft_c2c", "view_as_real")),
    OpRow("fft.ifft", lambda m, x, y: m.view_as_real(m.fft.ifft(_z(m, x, y), n=6, norm="ortho")),
          (S((5,), (5,)), S((3, 4), (3, 4))), records=("complex", "fft_c2c", "view_as_real")),
    OpRow("fft.fftn", lambda m, x, y: m.view_as_real(m.fft.fftn(_z(m, x, y), s=(2, 5))),
          (S((3, 4), (3, 4)),), records=("complex", "fft_c2c", "view_as_real")),
    OpRow("fft.rfft", lambda m, x: m.view_as_real(m.fft.rfft(x)), (S((6,)), S((3, 5))),
          records=("fft_r2c", "view_as_real")),
    OpRow("fft.rfftn", lambda m, x: m.view_as_real(m.fft.rfftn(x, norm="forward")),
          (S((3, 4)), S((2, 3, 4))), records=("fft_r2c", "view_as_real")),
    OpRow("fft.irfft", lambda m, x, y: m.fft.irfft(_z(m, x, y)), (S((4,), (4,)), S((3, 5), (3, 5))),
          records=("complex", "fft_c2r")),
    OpRow("fft.irfft", lambda m, x, y: m.fft.irfft(_z(m, x, y), n=7, norm="ortho"),
          (S((4,), (4,)),), variant="n=7", records=("complex", "fft_c2r")),
    OpRow("fft.irfftn", lambda m, x, y: m.fft.irfftn(_z(m, x, y), s=(3, 6)),
          (S((3, 4), (3, 4)),), records=("complex", "fft_c2r")),
    OpRow("fft.hfft", lambda m, x, y: m.fft.hfft(_z(m, x, y)), (S((4,), (4,)),),
          records=("complex", "fft_c2r", "conj")),
    OpRow("fft.ihfft", lambda m, x: m.view_as_real(m.fft.ihfft(x).resolve_conj()), (S((6,)),),
          records=("fft_r2c", "conj", "view_as_real")),
]
