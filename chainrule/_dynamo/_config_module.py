"""Flag modules (``torch._dynamo.config``, ``torch._inductor.config``, ``torch.compiler.config``):
PyTorch's flags with their defaults, read and set as attributes, patched for a block, saved and
loaded; a name that is not a flag raises AttributeError as PyTorch's config modules do."""

from __future__ import annotations

import contextlib
import copy
import importlib
import pickle
import sys
import types
import unittest
import warnings
from typing import Any

__all__ = ["ConfigModule", "install"]

_IMMUTABLE = (int, float, bool, str, bytes, type(None), frozenset, tuple)
_HIDDEN = object()


class ConfigModule(types.ModuleType):
    """A module whose attributes are flags: known names only, defaults until set."""

    _public: str
    _defaults: dict[str, Any]
    _values: dict[str, Any]
    _aliases: dict[str, str]
    _deprecated: dict[str, str]
    _warned: set

    # ---- attribute access -------------------------------------------------------------------

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in self._aliases:
            owner, flag = self._alias(name)
            return getattr(owner, flag)
        if name not in self._defaults:
            prefix = name + "."
            if any(k.startswith(prefix) for k in self._defaults):
                return _SubConfig(self, prefix)
            raise AttributeError(f"{self._public}.{name} does not exist")
        self._warn_deprecated(name)
        value = self._values.get(name, self._defaults[name])
        if value is _HIDDEN:
            raise AttributeError(f"{self._public}.{name} does not exist")
        if name not in self._values and not isinstance(value, _IMMUTABLE):
            # a mutable default is copied on first read, so changing it changes this config only
            value = self._values[name] = copy.deepcopy(value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("__") or name in self.__dict__:
            super().__setattr__(name, value)
        elif name in self._aliases:
            owner, flag = self._alias(name)
            setattr(owner, flag, value)
        elif name not in self._defaults:
            raise AttributeError(f"{self._public}.{name} does not exist")
        else:
            self._warn_deprecated(name)
            self._values[name] = value

    def __delattr__(self, name: str) -> None:
        if name not in self._defaults:
            raise AttributeError(f"{self._public}.{name} does not exist")
        # unittest.mock.patch deletes, sees the name gone, then sets the old value back
        self._values[name] = _HIDDEN

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._defaults) | set(self._aliases))

    def _alias(self, name: str) -> tuple[types.ModuleType, str]:
        module, _, flag = self._aliases[name].rpartition(".")
        if module.startswith("torch."):
            module = "chainrule." + module[len("torch."):]
        return importlib.import_module(module), flag

    def _warn_deprecated(self, name: str) -> None:
        if name in self._deprecated and name not in self._warned:
            self._warned.add(name)
            why = self._deprecated[name]
            warnings.warn(f"{self._public}.{name} is deprecated{f' and {why}' if why else ''}. "
                          "It will be removed in a future version of PyTorch.", FutureWarning,
                          stacklevel=3)

    # ---- the config as a whole ----------------------------------------------------------------

    def get_config_copy(self) -> dict[str, Any]:
        """The current value of every flag (a copy)."""
        return {k: copy.deepcopy(getattr(self, k)) for k in self._defaults
                if self._values.get(k) is not _HIDDEN}

    def to_dict(self) -> dict[str, Any]:
        """The current value of every flag (a copy)."""
        return self.get_config_copy()

    def shallow_copy_dict(self) -> dict[str, Any]:
        """Deprecated: use :meth:`get_config_copy`."""
        warnings.warn("`config.shallow_copy_dict()` has been deprecated. It no longer changes the "
                      "underlying config. use `config.get_config_copy()` instead if you just want "
                      "a copy of the config, or config.load_config if you need mutable access",
                      FutureWarning, stacklevel=2)
        return self.get_config_copy()

    def save_config(self) -> bytes:
        """The flags as a pickled blob (without those PyTorch leaves out of saved configs)."""
        ignored = self._defaults.get("_save_config_ignore", ())
        return pickle.dumps({k: v for k, v in self.get_config_copy().items() if k not in ignored},
                            protocol=2)

    def save_config_portable(self, *, ignore_private_configs: bool = True) -> dict[str, Any]:
        """The flags as a dict, private ones (``_name``) left out unless asked for."""
        return {k: v for k, v in self.get_config_copy().items()
                if not (ignore_private_configs and k.startswith("_"))}

    def load_config(self, maybe_pickled_config: bytes | dict[str, Any]) -> None:
        """Set the flags from :meth:`save_config`'s blob or a dict."""
        config = (maybe_pickled_config if isinstance(maybe_pickled_config, dict)
                  else pickle.loads(maybe_pickled_config))
        for k, v in config.items():
            if k in self._defaults:
                setattr(self, k, v)
            elif ("config", k) not in self._warned:
                self._warned.add(("config", k))
                warnings.warn(f"key {k} with value {v} is not understood by this config",
                              stacklevel=2)

    def get_type(self, config_name: str) -> type:
        """The type of a flag's default value."""
        return type(self._defaults[config_name])

    def patch(self, arg1: str | dict[str, Any] | None = None, arg2: Any = None,
              **kwargs: Any) -> _Patch:
        """Set flags for a block: ``with config.patch(name=value):``, ``patch("name", value)``
        or ``patch({"name": value})``; also a decorator of functions and TestCase classes."""
        if arg1 is not None:
            if arg2 is not None:
                if not isinstance(arg1, str):
                    raise AssertionError("first argument must be a string when passing 2 "
                                         "positional args to patch")
                changes = {arg1: arg2}
            else:
                if not isinstance(arg1, dict):
                    raise AssertionError("first argument must be a dict when passing a single "
                                         "positional arg to patch")
                changes = arg1
            if kwargs:
                raise AssertionError("cannot pass both positional and keyword arguments to patch")
        else:
            if arg2 is not None:
                raise AssertionError("second positional argument is only valid when first "
                                     "argument is a key string")
            changes = kwargs
        return _Patch(self, changes)


class _Patch(contextlib.ContextDecorator):
    """The flags changed inside a block (nestable, re-enterable)."""

    def __init__(self, config: ConfigModule, changes: dict[str, Any]) -> None:
        self.config, self.changes = config, changes
        self._saved: list[dict] = []

    def __enter__(self) -> None:
        prior = {k: getattr(self.config, k) for k in self.changes}
        self._saved.append(prior)
        try:
            for k, v in self.changes.items():
                setattr(self.config, k, v)
        except Exception:
            self.__exit__(None, None, None)
            raise

    def __exit__(self, *exc) -> None:
        for k, v in self._saved.pop().items():
            setattr(self.config, k, v)

    def __call__(self, func):
        if isinstance(func, type) and issubclass(func, unittest.TestCase):
            patch = self

            class Patched(func):
                @classmethod
                def setUpClass(cls) -> None:
                    patch.__enter__()
                    try:
                        super().setUpClass()
                    except Exception:
                        patch.__exit__(None, None, None)
                        raise

                @classmethod
                def tearDownClass(cls) -> None:
                    try:
                        super().tearDownClass()
                    finally:
                        patch.__exit__(None, None, None)

            Patched.__name__, Patched.__qualname__ = func.__name__, func.__qualname__
            Patched.__module__ = func.__module__
            return Patched
        return super().__call__(func)


class _SubConfig:
    """``config.triton``: the flags named ``triton.<name>``."""

    def __init__(self, config: ConfigModule, prefix: str) -> None:
        object.__setattr__(self, "_config", config)
        object.__setattr__(self, "_prefix", prefix)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._config, self._prefix + name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._config, self._prefix + name, value)

    def __delattr__(self, name: str) -> None:
        delattr(self._config, self._prefix + name)


def install(module_name: str, public: str, defaults: dict[str, Any], *,
            aliases: dict[str, str] | None = None,
            deprecated: dict[str, str] | None = None) -> None:
    """Turn the module ``module_name`` into a flag module holding ``defaults``."""
    module = sys.modules[module_name]
    module.__class__ = ConfigModule
    module.__dict__.update(_public=public, _defaults=defaults, _values={},
                           _aliases=aliases or {}, _deprecated=deprecated or {}, _warned=set())
