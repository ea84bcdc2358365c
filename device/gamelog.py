"""The game's event log: a table script (docs/table-script.md) under the state directory.

Every accepted event is appended as one line and the file is fsync'ed before the screen shows the
event's effect, so pulling the plug never loses anything a player saw. On start the log is folded
through the rules again (`load`), which resumes the game exactly where it was.

A torn last line (power lost mid-write: never shown, so never seen) is cut off. A log with lines
that cannot be read or are refused is reported, moved aside (never deleted) as
`game.txt.corrupt-TIMESTAMP`, and replaced by its valid part, with the same rule as
`tablemate replay`: a bad line is skipped and the lines after it still apply.
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from rules.core import GameConfig, Refused, shorten
from rules.match import Match
from rules.script import UNDO, format_event, format_header, parse_script
from vision.files import check_writable, sync_folder, write_atomically

log = logging.getLogger(__name__)

LOG_NAME = "game.txt"
ARCHIVE_DIR = "games"


@dataclass
class Loaded:
    match: Match | None                     # None: no usable log (none yet, unusable, or unreadable)
    problems: list[str] = field(default_factory=list)
    unreadable: str | None = None           # why the file there cannot be read (not to be touched)
    script: list[str] = field(default_factory=list)   # the game's valid lines, header first
    clean: bool = True                      # the file is those lines (a torn last line apart)


def _stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S")


def load(path: Path, repair: bool = True) -> Loaded:
    """The game in the log at `path`, repairing the log as described above (not with `repair`
    False: a state directory that cannot be written, where the log is read and left as it is)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Loaded(None)
    except OSError as error:
        return Loaded(None, unreadable=f"{path}: {error.strerror or error}")
    problems = []
    torn = bool(data) and not data.endswith(b"\n")
    if torn:
        cut = data.rfind(b"\n") + 1
        problems.append(f"game log: torn last line {data[cut:][:40]!r} dropped (power lost while writing)")
        data = data[:cut]
    # (A log moved aside below is moved whole, its torn line too: the copy is the original.)
    text = data.decode("utf-8", errors="replace")
    script = parse_script(text)
    if script.config is None:
        where = f"moved to {_move_aside(path).name}" if repair else "left as it is"
        problems.append(f"game log unusable ({script.fatal}); {where}, starting a new game")
        return Loaded(None, problems=problems)
    match = Match(script.config)
    lines: list[str] = []
    bad: list[str] = [f"line {e.line} {e.text!r}: {e.error}" for e in script.errors]
    for lineno, line, event in script.events:
        try:
            if event == UNDO:
                match.undo()
            else:
                match.apply(event)
        except Refused as refusal:
            bad.append(f"line {lineno} {shorten(line)!r}: {refusal.reason}")
            continue
        lines.append(line)
    if (bad or "\ufffd" in text) and not repair:
        problems.append(f"game log had {len(bad)} bad line(s) ({'; '.join(bad[:3])}); the rest read, "
                        f"the file left as it is")
    elif bad or "\ufffd" in text:
        aside = _move_aside(path)
        write_atomically(path, "\n".join(format_header(script.config) + lines) + "\n")
        problems.append(f"game log had {len(bad)} bad line(s) ({'; '.join(bad[:3])}); original moved to "
                        f"{aside.name}, the rest kept")
    elif torn and repair:
        _truncate(path, len(data))  # nothing else changes, so no copy is needed
    clean = repair or not (bad or "\ufffd" in text)
    return Loaded(match, problems, script=format_header(script.config) + lines, clean=clean)


def _truncate(path: Path, size: int) -> None:
    with open(path, "r+b") as f:
        f.truncate(size)
        f.flush()
        os.fsync(f.fileno())


def _archive(path: Path) -> None:
    """The game in `path`, if any, into the archive folder beside it."""
    if path.exists() and path.stat().st_size:
        archive = path.parent / ARCHIVE_DIR
        archive.mkdir(exist_ok=True)
        os.replace(path, archive / f"{_stamp()}-{os.getpid()}.txt")


def _move_aside(path: Path) -> Path:
    aside = path.with_name(f"{path.name}.corrupt-{_stamp()}")
    n = 1
    while aside.exists():
        aside = path.with_name(f"{path.name}.corrupt-{_stamp()}-{n}")
        n += 1
    os.replace(path, aside)
    sync_folder(path.parent)
    return aside


class GameLog:
    """Appends to the log of the current game; `start` begins a new one (archiving the old)."""

    keeps = True        # (UnkeptLog: a game played on with nothing written)

    def __init__(self, path: Path):
        self.path = path
        with open(path, "rb") as f:
            self.lines = sum(1 for _ in f)      # lines so far: where the next event goes
        # Unbuffered: a line that could not be kept must not linger in a buffer and reach the
        # disk with the next one (the table was told it was not kept, and the rules undid it).
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND)

    @classmethod
    def start(cls, path: Path, config: GameConfig) -> "GameLog":
        """A new game's log; the old one is archived only once the new one is on disk (a
        failure, OSError, leaves the old game where it was)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(path, "\n".join(format_header(config)) + "\n", before_replace=lambda: _archive(path))
        return cls(path)

    def next_game(self, config: GameConfig) -> "GameLog":
        return GameLog.start(self.path, config)

    def append_event(self, event) -> None:
        self._append(format_event(event))

    def append_undo(self) -> None:
        self._append(UNDO)

    def _append(self, line: str) -> None:
        """Append and fsync one line, or raise OSError with the file as it was (a disk full, or an
        fsync failing after the write: the part written is cut off again)."""
        data = (line + "\n").encode("utf-8")
        size = os.fstat(self._fd).st_size
        try:
            done = 0
            while done < len(data):
                done += os.write(self._fd, data[done:])
            os.fsync(self._fd)
        except OSError:
            try:
                os.ftruncate(self._fd, size)
            except OSError as error:   # (left as a torn or extra last line: load's repair reports it)
                log.error("cannot take back the part of a line written to %s: %s", self.path, error)
            raise
        self.lines += 1

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class UnkeptLog:
    """The log of a game that cannot be kept for now: the state directory cannot be written (a
    card remounted read-only after errors, a log owned by another user) or its log cannot be read.
    The table plays on, told so; the game's lines are held in memory and nothing is written,
    the file there, if any, left as it was, until `recovered` finds the directory writable again
    and writes the whole game out."""

    keeps = False

    def __init__(self, path: Path, script: list[str], why: str, continues: str = "no"):
        self.path = path
        self.script = list(script)      # the game's lines so far, header first
        self.why = why
        # What the file at `path` is to this game: "yes" its start, as written (replaced by the
        # whole game once it can be), "repaired" its start once repaired (the file is moved
        # aside, as load's repair does), "no" another game (archived, as a new game's log does),
        # "unread" a file that could not be read (archived too, once it can be read: its game is
        # not moved out of sight while a failing card may still give it back at a restart).
        self.continues = continues

    @classmethod
    def start(cls, path: Path, config: GameConfig, why: str, continues: str = "no") -> "UnkeptLog":
        return cls(path, format_header(config), why, continues)

    @property
    def lines(self) -> int:             # as the file would have them (line numbers of refusals)
        return len(self.script)

    def next_game(self, config: GameConfig) -> "UnkeptLog":
        return UnkeptLog.start(self.path, config, self.why, "unread" if self.continues == "unread" else "no")

    def append_event(self, event) -> None:
        self.script.append(format_event(event))

    def append_undo(self) -> None:
        self.script.append(UNDO)

    def recovered(self) -> "GameLog | None":
        """The game written out whole and kept from now on, if the directory can be written
        again; else None, nothing changed."""
        try:
            check_writable(self.path.parent)
            if self.continues == "unread" and self.path.exists():
                self.path.read_bytes()
            if self.continues == "repaired" and self.path.exists():
                _move_aside(self.path)
            before = (lambda: None) if self.continues == "yes" else (lambda: _archive(self.path))
            write_atomically(self.path, "\n".join(self.script) + "\n", before_replace=before)
            self.continues = "yes"      # (the file is this game now, should the open below fail)
            return GameLog(self.path)
        except OSError:
            return None

    def close(self) -> None:
        pass
