"""``torch.backends.cuda``: not built; ``matmul``'s flags are settable and change nothing."""

from __future__ import annotations

from .. import _settings


def is_built() -> bool:
    """False: chainrule runs on the CPU only."""
    return False


class _Matmul:
    """``backends.cuda.matmul``: PyTorch's flags, settable; unknown names raise as in PyTorch."""

    _flags = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction")

    def __init__(self) -> None:
        object.__setattr__(self, "_values", dict.fromkeys(self._flags, True))

    @property
    def allow_tf32(self) -> bool:
        return _settings.get_float32_matmul_precision() != "highest"

    def __getattr__(self, name: str):
        if name in self._flags:
            return self._values[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value) -> None:
        if name == "allow_tf32":
            _settings.set_float32_matmul_precision("high" if value else "highest")
        elif name in self._flags:
            self._values[name] = value
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = _Matmul()
