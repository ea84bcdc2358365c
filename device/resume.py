"""What a restart needs beside the game log to be the same game (the log itself is the game): the
detector's picture of the deal zone, so that no card lying there, seen or covered, is counted
again when uncovered, and the option a pending choice showed, so the choice goes on where it was.

Each is kept in the state directory with a mark of the log it belongs to (the log's size and a
digest). A restart uses the zone's picture only for that log, or that log followed by button lines
alone (a card or a play after it lies on the table unknown to the picture: the table is then taken
as the first frame shows it, as at a first start); the choice only for that very log. Nothing here
stops the device: a file that cannot be written or read is said and left.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
from pathlib import Path

import numpy as np

from vision.files import write_atomically

log = logging.getLogger(__name__)

ZONE_NAME = "zone.npz"
CHOICE_NAME = "choice.json"
CAMERA_WORDS = ("card", "play", "start", "top")     # the lines the camera writes (spec/table-script.md)


def log_mark(log_path: Path) -> dict | None:
    """The log's size and digest (None: it cannot be read)."""
    try:
        data = log_path.read_bytes()
    except OSError:
        return None
    return {"size": len(data), "digest": hashlib.sha256(data).hexdigest()}


def _belongs(mark, log_path: Path, buttons_after: bool) -> bool:
    """The log is the one `mark` was taken of (followed by button lines only, if `buttons_after`)."""
    try:
        data = log_path.read_bytes()
        size = int(mark["size"])
        if hashlib.sha256(data[:size]).hexdigest() != mark["digest"] or (len(data) > size and not buttons_after):
            return False
    except (OSError, KeyError, TypeError, ValueError):
        return False
    after = data[size:].decode("utf-8", errors="replace").split("\n")
    return not any(line.split()[0].lower() in CAMERA_WORDS for line in after if line.split())


class Resume:
    """Keeps and restores the zone's picture and the choice shown, in `state_dir`."""

    def __init__(self, state_dir: Path, log_path: Path):
        self.zone_path = state_dir / ZONE_NAME
        self.choice_path = state_dir / CHOICE_NAME
        self.log_path = log_path
        self.kept_picture = None         # the detector's picture_version last kept
        self.kept_choice = None          # (choice path, log size) last kept

    def keep_picture(self, detector) -> None:
        """The detector's picture, if it changed since it was last kept and is still."""
        version = getattr(detector, "picture_version", None)
        if version is None or version == self.kept_picture:
            return
        picture = detector.picture()
        mark = log_mark(self.log_path)
        if picture is None or mark is None:
            return
        data, arrays = picture
        buffer = io.BytesIO()
        meta = json.dumps({"log": mark, "zone": data}).encode("utf-8")
        np.savez(buffer, meta=np.frombuffer(meta, np.uint8), **arrays)
        try:
            write_atomically(self.zone_path, buffer.getbuffer())
        except OSError as error:
            log.warning("cannot keep the zone's picture in %s: %s", self.zone_path, error.strerror or error)
        self.kept_picture = version

    def restore_picture(self, detector) -> bool:
        """The picture kept for this log into the detector; False if there is none that fits."""
        if not hasattr(detector, "restore") or not self.zone_path.exists():
            return False
        try:
            with np.load(io.BytesIO(self.zone_path.read_bytes()), allow_pickle=False) as arrays:
                meta = json.loads(bytes(arrays["meta"]).decode("utf-8"))
                if not _belongs(meta["log"], self.log_path, buttons_after=True):
                    log.info("the zone's picture in %s is of another moment of the game: not used", self.zone_path)
                    return False
                detector.restore(meta["zone"], {name: arrays[name] for name in arrays.files if name != "meta"})
        except (OSError, ValueError, KeyError, TypeError, EOFError, RecursionError) as error:
            log.error("the zone's picture in %s cannot be read (%s): the table is taken as it is seen",
                      self.zone_path, error)
            return False
        self.kept_picture = detector.picture_version
        log.info("the zone's picture restored: %d cards known on the table", len(meta["zone"]["cards"]))
        return True

    def keep_choice(self, path: list[int], lines: int) -> None:
        """The option shown at each level of the choice open now (`lines`: the log's, to tell
        when it moved on without reading it every frame)."""
        if (list(path), lines) == self.kept_choice:
            return
        self.kept_choice = (list(path), lines)
        mark = log_mark(self.log_path)
        if mark is None:
            return
        try:
            write_atomically(self.choice_path, json.dumps({"log": mark, "path": list(path)}) + "\n")
        except OSError as error:
            log.warning("cannot keep the choice shown in %s: %s", self.choice_path, error.strerror or error)

    def restored_choice(self) -> list[int] | None:
        """The choice path kept for this very log, if any."""
        try:
            data = json.loads(self.choice_path.read_text(encoding="utf-8"))
            path = data["path"]
            if (_belongs(data["log"], self.log_path, buttons_after=False) and isinstance(path, list) and path
                    and all(type(i) is int and 0 <= i < 10_000 for i in path)):
                return path
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            pass
        return None
