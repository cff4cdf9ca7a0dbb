"""``torch.distributed`` on MPI: process groups, collectives, and the launcher
(``python -m chainrule.distributed.run``). mpi4py is imported only when a group is initialised,
so ``import chainrule`` never needs it: ``pip install 'chainrule[distributed]'`` brings it."""

from . import distributed_c10d
from .distributed_c10d import *  # noqa: F403  (the public names are distributed_c10d's)

__all__ = list(distributed_c10d.__all__)
