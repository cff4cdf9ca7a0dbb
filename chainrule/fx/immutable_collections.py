"""``torch.fx.immutable_collections``: the list and dict a Node's arguments are stored in."""

from __future__ import annotations

from typing import Any, NoReturn

__all__ = ["immutable_list", "immutable_dict"]


def _no_mutation(self, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(f"'{type(self).__name__}' object does not support mutation. "
                    "If you are attempting to modify the kwargs or args of a torch.fx.Node "
                    "object,\ninstead create a new copy of it and assign the copy to the node:\n\n"
                    "    new_args = ...  # copy and mutate args\n    node.args = new_args")


class immutable_list(list):  # noqa: N801  (PyTorch's name)
    """A list that refuses mutation (a Node's list argument)."""

    __delitem__ = __iadd__ = __imul__ = __setitem__ = _no_mutation
    append = clear = extend = insert = pop = remove = reverse = sort = _no_mutation

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self))

    def __reduce__(self):
        return (immutable_list, (tuple(self),))


class immutable_dict(dict):  # noqa: N801  (PyTorch's name)
    """A dict that refuses mutation (a Node's kwargs)."""

    __delitem__ = __ior__ = __setitem__ = _no_mutation
    clear = pop = popitem = setdefault = update = _no_mutation

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))

    def __reduce__(self):
        return (immutable_dict, (tuple(self.items()),))
