"""torch._dynamo.exc: the compiler's exception types."""

from __future__ import annotations

__all__ = ["TorchDynamoException", "InvalidBackend", "Unsupported", "RecompileError",
           "BackendCompilerFailed", "SkipFrame", "FailOnRecompileLimitHit"]


class TorchDynamoException(RuntimeError):
    """Base class of the compiler's errors."""


class InvalidBackend(TorchDynamoException):
    """A backend name that is not registered."""

    def __init__(self, name: str) -> None:
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for "
                         "available backends.")


class Unsupported(TorchDynamoException):
    """Code the compiler cannot capture."""


class RecompileError(TorchDynamoException):
    """A recompilation where the stance forbids one."""


class FailOnRecompileLimitHit(TorchDynamoException):
    """The recompile limit was reached with ``fail_on_recompile_limit_hit`` set."""


class BackendCompilerFailed(TorchDynamoException):
    """A backend raised while compiling."""


class SkipFrame(TorchDynamoException):
    """A frame the compiler leaves to run eagerly."""
