"""Writing a file so that a crash or a pulled plug leaves either the old file or the new one.

The one way the repo replaces a file it must not lose: the game log, the table settings, a
calibration profile and the photos it is made from, a training checkpoint. The new bytes are
synced before the rename, and the rename itself after it (a Pi unplugged right after a write must
not come back to an empty file).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)


def write_atomically(path: str | Path, data: bytes | str | memoryview, before_replace=None) -> None:
    """Replace `path` by `data` (text is written as UTF-8). Any failure (a full disk, `path` a
    folder) raises OSError with `path` as it was and no temporary file left. `before_replace`
    runs once the new data are safely on disk, just before the rename."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    tmp = path.with_name(path.name + ".tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    try:
        sync_folder(path.parent)
    except OSError as error:    # the new file is in place: said, not raised as a write that failed
        log.error("%s replaced, but the folder could not be synced: %s", path, error)


def sync_folder(folder: str | Path) -> None:
    """Make a rename or removal in `folder` durable (POSIX: the folder's entry is data too)."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def check_writable(folder: str | Path) -> None:
    """Raise OSError unless a file can be made in `folder` now (a card remounted read-only, a
    folder of another owner), leaving nothing behind."""
    probe = Path(folder) / ".write-test"
    os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
    probe.unlink()

