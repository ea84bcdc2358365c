"""Logging to stderr in a form the systemd journal shows well.

Under systemd (JOURNAL_STREAM is set) each line starts with a syslog priority prefix `<N>` so the
journal records the level and shows warnings and errors highlighted; at a terminal the level is
spelt out. No timestamps under systemd: the journal adds its own.
"""

from __future__ import annotations

import logging
import os
import sys

_SYSLOG_PRIORITY = {logging.DEBUG: 7, logging.INFO: 6, logging.WARNING: 4, logging.ERROR: 3, logging.CRITICAL: 2}


class _JournalFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        # Every line its prefix: the journal takes each line as an entry of its own, and a
        # traceback's lines without one would be recorded as information, not as the error.
        priority = _SYSLOG_PRIORITY.get(record.levelno, 6)
        first, *rest = super().format(record).split("\n")
        return "\n".join([f"<{priority}>{record.name}: {first}"] + [f"<{priority}>{line}" for line in rest])


def setup_logging(verbose: bool = False) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if os.environ.get("JOURNAL_STREAM"):
        handler.setFormatter(_JournalFormatter("%(message)s"))
        # A crash's traceback through the log, as an error the journal highlights.
        sys.excepthook = lambda kind, value, tb: logging.getLogger("tablemate").critical(
            "crashed", exc_info=(kind, value, tb))
    else:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)


def say_fatal(text: str) -> None:
    """The line a command ends with when it cannot go on (stderr; an error in the journal)."""
    print(("<3>" if os.environ.get("JOURNAL_STREAM") else "") + text, file=sys.stderr)
