"""``torch.utils.file_baton``: a lock between processes made of a file created exclusively."""

from __future__ import annotations

import os
import time
import warnings


class FileBaton:
    """A primitive, file-based synchronization utility."""

    def __init__(self, lock_file_path, wait_seconds=0.1, warn_after_seconds=None) -> None:
        self.lock_file_path = lock_file_path
        self.wait_seconds = wait_seconds
        self.fd = None
        self.warn_after_seconds = warn_after_seconds

    def try_acquire(self) -> bool | None:
        """Create the lock file if nobody holds it: True if this call created it."""
        try:
            self.fd = os.open(self.lock_file_path, os.O_CREAT | os.O_EXCL)
        except FileExistsError:
            return False
        return True

    def wait(self) -> None:
        """Sleep ``wait_seconds`` at a time until the lock file is gone (warning once after
        ``warn_after_seconds``)."""
        warned = False
        start = time.time()
        while os.path.exists(self.lock_file_path):
            time.sleep(self.wait_seconds)
            if (self.warn_after_seconds is not None and not warned
                    and time.time() - start > self.warn_after_seconds):
                warnings.warn(f'Waited on lock file "{self.lock_file_path}" for '
                              f"{self.warn_after_seconds} seconds.", stacklevel=2)
                warned = True

    def release(self) -> None:
        """Release the baton and remove its file."""
        if self.fd is not None:
            os.close(self.fd)
        os.remove(self.lock_file_path)
