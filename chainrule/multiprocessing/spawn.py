"""Start N processes running ``fn(i, *args)`` and wait for them: the first to fail stops the
others, and its exception (with the child's traceback) or its exit is raised in the parent."""

from __future__ import annotations

import logging
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from typing import NoReturn

__all__ = ["ProcessContext", "ProcessException", "ProcessExitedException",
           "ProcessRaisedException", "spawn", "SpawnContext", "start_processes"]

ENV_VAR_PARALLEL_START = "TORCH_MP_PARALLEL_START"
_log = logging.getLogger(__name__)


class ProcessException(Exception):
    """A process started by ``start_processes`` failed."""

    __slots__ = ["error_index", "error_pid"]

    def __init__(self, msg: str, error_index: int, error_pid: int) -> None:
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A process failed by raising an exception (its traceback is in the message)."""


class ProcessExitedException(ProcessException):
    """A process exited with a non-zero code or was killed by a signal."""

    __slots__ = ["exit_code"]

    def __init__(self, msg: str, error_index: int, error_pid: int, exit_code: int,
                 signal_name: str | None = None) -> None:
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid, self.exit_code,
                            self.signal_name)


def _run(fn: Callable, i: int, args: tuple, error_file: str) -> None:
    """A child's entry point: ``fn(i, *args)``, its traceback written for the parent."""
    _die_with_parent()
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent stopped this process
    except Exception:
        with open(error_file, "wb") as f:
            pickle.dump(traceback.format_exc(), f)
        sys.exit(1)


def _die_with_parent() -> None:
    """On Linux, have this process interrupted when its parent dies (prctl PDEATHSIG)."""
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None).prctl(1, signal.SIGINT)  # 1: PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass


class ProcessContext:
    """The processes ``start_processes`` started, to join."""

    def __init__(self, processes: list, error_files: list) -> None:
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self) -> list[int]:
        return [int(process.pid) for process in self.processes]

    def _join_procs_with_timeout(self, timeout: float) -> None:
        """Join every process within one shared timeout."""
        end = time.monotonic() + timeout
        for process in self.processes:
            process.join(max(0, end - time.monotonic()))

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Wait for processes to end (at most ``timeout`` seconds): True once all ended well.
        If one failed, stop the others (SIGTERM, after ``grace_period``; then SIGKILL) and raise
        ProcessRaisedException or ProcessExitedException for it."""
        if not self.sentinels:
            return True
        failed = None
        for sentinel in multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout):
            index = self.sentinels.pop(sentinel)
            self.processes[index].join()
            if self.processes[index].exitcode != 0:
                failed = index
                break
        if failed is None:
            return not self.sentinels
        self._stop_the_others(grace_period)
        self._raise(failed)

    def _stop_the_others(self, grace_period: float | None) -> None:
        if grace_period is not None:
            self._join_procs_with_timeout(grace_period)
        for process in self.processes:
            if process.is_alive():
                _log.warning("Terminating process %s via signal SIGTERM", process.pid)
                process.terminate()
        self._join_procs_with_timeout(30 if grace_period is None else grace_period)
        for process in self.processes:
            if process.is_alive():
                _log.warning("Unable to shutdown process %s via SIGTERM , forcefully exiting "
                             "via SIGKILL", process.pid)
                process.kill()
            process.join()

    def _raise(self, index: int) -> NoReturn:
        process = self.processes[index]
        if not os.access(self.error_files[index], os.R_OK):
            code = process.exitcode
            if code < 0:
                try:
                    name = signal.Signals(-code).name
                except ValueError:
                    name = f"<Unknown signal {-code}>"
                raise ProcessExitedException(f"process {index:d} terminated with signal {name}",
                                             error_index=index, error_pid=process.pid,
                                             exit_code=code, signal_name=name)
            raise ProcessExitedException(f"process {index:d} terminated with exit code {code:d}",
                                         error_index=index, error_pid=process.pid,
                                         exit_code=code)
        with open(self.error_files[index], "rb") as f:
            trace = pickle.load(f)
        raise ProcessRaisedException(
            f"\n\n-- Process {index:d} terminated with the following error:\n{trace}", index,
            process.pid)


class SpawnContext(ProcessContext):
    """The old name of ProcessContext."""

    def __init__(self, processes: list, error_files: list) -> None:
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.",
                      stacklevel=2)
        super().__init__(processes, error_files)


def start_processes(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True,
                    daemon: bool = False, start_method: str = "spawn"):
    """Start ``nprocs`` processes running ``fn(i, *args)`` by ``start_method``; wait for them
    (None) or, with ``join=False``, return their ProcessContext."""
    context = multiprocessing.get_context(start_method)
    processes, error_files = [], []
    for i in range(nprocs):
        # A name for the child's traceback, created only if it fails.
        with tempfile.NamedTemporaryFile(prefix="pytorch-errorfile-", suffix=".pickle",
                                         delete=False) as f:
            error_file = f.name
        os.unlink(error_file)
        process = context.Process(target=_run, args=(fn, i, args, error_file), daemon=daemon)
        process.start()
        processes.append(process)
        error_files.append(error_file)
    started = ProcessContext(processes, error_files)
    if not join:
        return started
    while not started.join():
        pass
    return None


def spawn(fn: Callable, args: tuple = (), nprocs: int = 1, join: bool = True,
          daemon: bool = False, start_method: str = "spawn"):
    """``start_processes`` by the spawn method (the only one this function uses)."""
    if start_method != "spawn":
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      "To use a different start_method use:\n\t\t "
                      "torch.multiprocessing.start_processes(...)", FutureWarning, stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
