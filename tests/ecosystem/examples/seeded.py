"""``python seeded.py script.py args...``: run an example script as ``__main__`` after seeding
torch, random and NumPy, so that unseeded scripts draw the same numbers on torch and chainrule."""

import os
import random
import runpy
import sys

import numpy as np
import torch

torch.manual_seed(0)
random.seed(0)
np.random.seed(0)
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
runpy.run_path(script, run_name="__main__")
