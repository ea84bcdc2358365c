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
        priority = _SYSLOG_PRIORITY.get(record.levelno, 6)
        return f"<{priority}>{record.name}: {super().format(record)}"


def setup_logging(verbose: bool = False) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if os.environ.get("JOURNAL_STREAM"):
        handler.setFormatter(_JournalFormatter("%(message)s"))
    else:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
