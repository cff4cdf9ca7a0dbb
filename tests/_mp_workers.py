"""Functions the child processes of tests/test_multiprocessing.py run (a module that imports no
torch, so spawned children start quickly; each function takes the library by name)."""

import importlib
import os
import signal
import sys


def add_one(t):
    t.add_(1)


def write(i, t):
    t[i] = 10.0 + i


def double_and_reply(name, q_in, q_out):
    lib = importlib.import_module(name)
    t = q_in.get(timeout=60)
    shared = t.is_shared()
    t.mul_(2)
    q_out.put((t + 1, lib.nn.Parameter(lib.ones(2)), shared))


def square(t):
    return t * t


def fail(i, how):
    if i != how[1]:
        return
    if how[0] == "raise":
        raise ValueError(f"boom in {i}")
    if how[0] == "exit":
        sys.exit(3)
    os.kill(os.getpid(), signal.SIGKILL)


def train(i, name, model, steps):
    lib = importlib.import_module(name)
    x = lib.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
    y = lib.tensor([[1.0], [0.0], [2.0]])
    opt = lib.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(steps):
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        opt.step()
