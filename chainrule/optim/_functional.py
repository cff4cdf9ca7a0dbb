"""The optimizers' update rules as functions of parameter and state lists (PyTorch's
``torch.optim._functional``); each optimizer's ``step`` calls its function."""

from .adadelta import adadelta
from .adagrad import adagrad
from .adam import adam
from .adamax import adamax
from .adamw import adamw
from .asgd import asgd
from .nadam import nadam
from .radam import radam
from .rmsprop import rmsprop
from .rprop import rprop
from .sgd import sgd

__all__ = ["adadelta", "adagrad", "adam", "adamax", "adamw", "asgd", "nadam", "radam", "rmsprop",
           "rprop", "sgd"]
