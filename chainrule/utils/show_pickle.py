"""``torch.utils.show_pickle``: print what a pickle holds without importing anything it names.

Every global the pickle names becomes a ``FakeClass`` and every object built from one a
``FakeObject`` printing as ``module.name(args)(state=...)``; persistent ids print as
``pers.obj(pid,)``. ``python -m chainrule.utils.show_pickle FILE`` prints a pickle file, a
member of a zip file (``file.zip@member.pkl``) or the first member matching a glob
(``file.zip@*/data.pkl``).
"""

from __future__ import annotations

import fnmatch
import pickle
import pprint
import struct
import sys
import zipfile
from typing import IO, Any

__all__ = ["FakeObject", "FakeClass", "DumpUnpickler", "main"]


class FakeObject:
    """An object the pickle builds: the class's module and name, the arguments, the state."""

    def __init__(self, module, name, args) -> None:
        self.module = module
        self.name = name
        self.args = args
        self.state = None  # never set and set to None look the same

    def __repr__(self) -> str:
        state = "" if self.state is None else f"(state={self.state!r})"
        return f"{self.module}.{self.name}{self.args!r}{state}"

    def __setstate__(self, state) -> None:
        self.state = state

    @staticmethod
    def pp_format(printer, obj, stream, indent, allowance, context, level) -> None:
        """pprint's layout of a FakeObject: its arguments, or its state, laid out by pprint."""
        if not obj.args and obj.state is None:
            stream.write(repr(obj))
        elif obj.state is None:
            stream.write(f"{obj.module}.{obj.name}")
            printer._format(obj.args, stream, indent + 1, allowance + 1, context, level)
        elif not obj.args:
            stream.write(f"{obj.module}.{obj.name}()(state=\n")
            indent += printer._indent_per_level
            stream.write(" " * indent)
            printer._format(obj.state, stream, indent, allowance + 1, context, level + 1)
            stream.write(")")
        else:
            raise Exception("Need to implement")  # noqa: TRY002  (PyTorch's)


class FakeClass:
    """A global the pickle names: calling it (or its ``__new__``) makes a FakeObject."""

    def __init__(self, module, name) -> None:
        self.module = module
        self.name = name
        self.__new__ = self.fake_new  # pickle's NEWOBJ calls cls.__new__(cls, *args)

    def __repr__(self) -> str:
        return f"{self.module}.{self.name}"

    def __call__(self, *args) -> FakeObject:
        return FakeObject(self.module, self.name, args)

    def fake_new(self, *args) -> FakeObject:
        return FakeObject(self.module, self.name, args[1:])


class DumpUnpickler(pickle._Unpickler):
    """An unpickler that imports nothing: globals become FakeClasses. With
    ``catch_invalid_utf8``, a string that is not UTF-8 (TorchScript objects can pickle such)
    loads as ``builtin.UnicodeDecodeError(message,)``."""

    def __init__(self, file, *, catch_invalid_utf8: bool = False, **kwargs) -> None:
        super().__init__(file, **kwargs)
        self.catch_invalid_utf8 = catch_invalid_utf8

    def find_class(self, module, name) -> FakeClass:
        return FakeClass(module, name)

    def persistent_load(self, pid) -> FakeObject:
        return FakeObject("pers", "obj", (pid,))

    dispatch = dict(pickle._Unpickler.dispatch)

    def load_binunicode(self) -> None:
        (length,) = struct.unpack("<I", self.read(4))
        if length > sys.maxsize:
            raise Exception("String too long.")  # noqa: TRY002  (PyTorch's)
        raw = self.read(length)
        value: Any
        try:
            value = str(raw, "utf-8", "surrogatepass")
        except UnicodeDecodeError as error:
            if not self.catch_invalid_utf8:
                raise
            value = FakeObject("builtin", "UnicodeDecodeError", (str(error),))
        self.append(value)

    dispatch[pickle.BINUNICODE[0]] = load_binunicode

    @classmethod
    def dump(cls, in_stream, out_stream):
        """Load the pickle in ``in_stream`` and pretty-print it to ``out_stream``."""
        value = cls(in_stream).load()
        pprint.pprint(value, stream=out_stream)
        return value


def main(argv, output_stream=None) -> int | None:
    """``show_pickle PICKLE_FILE``: ``argv`` is the program name and the file."""
    if len(argv) != 2:
        if output_stream is not None:  # called from code: no usage text on its stderr
            raise Exception("Pass argv of length 2.")  # noqa: TRY002  (PyTorch's)
        sys.stderr.write("usage: show_pickle PICKLE_FILE\n"
                         "  PICKLE_FILE can be any of:\n"
                         "    path to a pickle file\n"
                         "    file.zip@member.pkl\n"
                         "    file.zip@*/pattern.*\n"
                         "      (shell glob pattern for members)\n"
                         "      (only first match will be shown)\n")
        return 2
    name = argv[1]
    handle: IO[bytes]
    if "@" not in name:
        with open(name, "rb") as handle:
            DumpUnpickler.dump(handle, output_stream)
        return None
    archive, member = name.split("@", 1)
    with zipfile.ZipFile(archive) as zf:
        if "*" not in member:
            with zf.open(member) as handle:
                DumpUnpickler.dump(handle, output_stream)
            return None
        for info in zf.infolist():
            if fnmatch.fnmatch(info.filename, member):
                with zf.open(info) as handle:
                    DumpUnpickler.dump(handle, output_stream)
                return None
    raise Exception(f"Could not find member matching {member} in {archive}")  # noqa: TRY002


if __name__ == "__main__":
    pprint.PrettyPrinter._dispatch[FakeObject.__repr__] = FakeObject.pp_format
    sys.exit(main(sys.argv))
