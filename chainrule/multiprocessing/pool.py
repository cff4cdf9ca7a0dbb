"""A Pool whose task queues are ``queue.SimpleQueue`` (tensors go through ``reductions``) and
whose workers collect garbage after each run."""

from __future__ import annotations

import gc
import multiprocessing.pool
import multiprocessing.util

from .queue import SimpleQueue

__all__ = ["Pool", "clean_worker"]


def clean_worker(*args, **kwargs) -> None:
    """multiprocessing's pool worker, then a garbage collection (frees shared memory early)."""
    multiprocessing.pool.worker(*args, **kwargs)
    gc.collect()


class Pool(multiprocessing.pool.Pool):
    """multiprocessing's Pool on ``SimpleQueue`` with ``clean_worker`` workers."""

    def _setup_queues(self) -> None:
        # With the pool's context (PyTorch's own Pool omits it and fails on Python 3.10+).
        self._inqueue = SimpleQueue(ctx=self._ctx)
        self._outqueue = SimpleQueue(ctx=self._ctx)
        self._quick_put = self._inqueue._writer.send
        self._quick_get = self._outqueue._reader.recv

    def _repopulate_pool(self) -> None:
        for _ in range(self._processes - len(self._pool)):
            args = (self._inqueue, self._outqueue, self._initializer, self._initargs,
                    self._maxtasksperchild)
            if hasattr(self, "_wrap_exception"):
                args += (self._wrap_exception,)
            worker = self.Process(self._ctx, target=clean_worker, args=args)
            self._pool.append(worker)
            worker.name = worker.name.replace("Process", "PoolWorker")
            worker.daemon = True
            worker.start()
            multiprocessing.util.debug("added worker")
