"""``torch.utils.weak``: weak references and weak-keyed dictionaries that compare keys by
identity, so tensors (whose ``==`` is elementwise) can be keys."""

from __future__ import annotations

import copy
import weakref
from collections.abc import Mapping, MutableMapping
from weakref import ref

from ..tensor import Tensor

WeakRef = ref

__all__ = ["TensorWeakRef", "WeakIdRef", "WeakIdKeyDictionary", "WeakTensorKeyDictionary"]


class WeakIdRef(weakref.ref):
    """A weak reference that hashes and compares by the identity of its referent."""

    __slots__ = ["_id"]

    def __init__(self, key, callback=None) -> None:
        self._id = id(key)
        super().__init__(key, callback)

    def __hash__(self) -> int:
        return self._id

    def __eq__(self, other) -> bool:
        a, b = self(), other()
        if a is not None and b is not None:
            return a is b
        return self is other  # a dead reference equals only itself


class _WeakHashRef(weakref.ref):
    """A weak reference that hashes and compares by its referent's hash."""

    __slots__ = ["_id"]

    def __init__(self, key, callback=None) -> None:
        self._id = hash(key)
        super().__init__(key, callback)

    def __hash__(self) -> int:
        return self._id

    def __eq__(self, other) -> bool:
        a, b = self(), other()
        if a is not None and b is not None:
            return hash(a) == hash(b)
        return self is other


class WeakIdKeyDictionary(MutableMapping):
    """A dict whose keys are held weakly and compared by identity (``ref_type`` chooses the
    reference); an entry goes when its key dies."""

    def __init__(self, dict=None, ref_type=WeakIdRef) -> None:  # noqa: A002  (PyTorch's name)
        self.data: dict = {}
        self.ref_type = ref_type
        selfref = ref(self)  # the callback must not keep the dictionary alive

        def remove(k) -> None:
            owner = selfref()
            if owner is not None:
                owner.data.pop(k, None)

        self._remove = remove
        if dict is not None:
            self.update(dict)

    def __getitem__(self, key):
        return self.data[self.ref_type(key)]

    def __setitem__(self, key, value) -> None:
        self.data[self.ref_type(key, self._remove)] = value

    def __delitem__(self, key) -> None:
        del self.data[self.ref_type(key)]

    def __len__(self) -> int:
        return sum(1 for wr in list(self.data) if wr() is not None)

    def __contains__(self, key) -> bool:
        try:
            wr = self.ref_type(key)
        except TypeError:  # not weakly referenceable: never a key
            return False
        return wr in self.data

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__} at {id(self):#x}>"

    # Iteration walks a snapshot, so keys dying meanwhile do not change the dict under it.
    def items(self):
        for wr, value in list(self.data.items()):
            key = wr()
            if key is not None:
                yield key, value

    def keys(self):
        for wr in list(self.data):
            key = wr()
            if key is not None:
                yield key

    __iter__ = keys

    def values(self):
        for wr, value in list(self.data.items()):
            if wr() is not None:
                yield value

    def keyrefs(self) -> list:
        """The weak references to the keys (their referents may have died since)."""
        return list(self.data)

    def get(self, key, default=None):
        return self.data.get(self.ref_type(key), default)

    def pop(self, key, *args):
        return self.data.pop(self.ref_type(key), *args)

    def popitem(self):
        while True:
            wr, value = self.data.popitem()
            key = wr()
            if key is not None:
                return key, value

    def setdefault(self, key, default=None):
        return self.data.setdefault(self.ref_type(key, self._remove), default)

    def update(self, dict=None, **kwargs) -> None:  # noqa: A002
        if dict is not None:
            pairs = dict.items() if hasattr(dict, "items") else type({})(dict).items()
            for key, value in pairs:
                self.data[self.ref_type(key, self._remove)] = value
        if kwargs:
            self.update(kwargs)

    def copy(self) -> WeakIdKeyDictionary:
        new = WeakIdKeyDictionary()
        for key, value in self.items():
            new[key] = value
        return new

    __copy__ = copy

    def __deepcopy__(self, memo) -> WeakIdKeyDictionary:
        new = self.__class__()
        for key, value in self.items():
            new[key] = copy.deepcopy(value, memo)
        return new

    def __ior__(self, other):
        self.update(other)
        return self

    def __or__(self, other):
        if isinstance(other, Mapping):
            c = self.copy()
            c.update(other)
            return c
        return NotImplemented

    def __ror__(self, other):
        if isinstance(other, Mapping):
            c = self.__class__()
            c.update(other)
            c.update(self)
            return c
        return NotImplemented

    def __eq__(self, other) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return {id(k): v for k, v in self.items()} == {id(k): v for k, v in other.items()}


WeakTensorKeyDictionary = WeakIdKeyDictionary


class TensorWeakRef:
    """A weak reference to a tensor: calling it gives the tensor, or None once it died."""

    ref: WeakRef

    def __init__(self, tensor: Tensor) -> None:
        if not isinstance(tensor, Tensor):
            raise AssertionError(f"expected torch.Tensor, got {type(tensor)}.")
        self.ref = weakref.ref(tensor)

    def __call__(self):
        return self.ref()
