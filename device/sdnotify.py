"""systemd's notify protocol, spoken directly: one datagram to $NOTIFY_SOCKET per message (see
sd_notify(3)). Outside systemd (no NOTIFY_SOCKET) every call does nothing."""

from __future__ import annotations

import logging
import os
import socket
import time

log = logging.getLogger(__name__)


class Notifier:
    def __init__(self):
        address = os.environ.get("NOTIFY_SOCKET", "")
        if address.startswith("@"):  # abstract namespace socket
            address = "\0" + address[1:]
        self._address = address or None
        usec = os.environ.get("WATCHDOG_USEC", "")
        pid = os.environ.get("WATCHDOG_PID", "")
        watchdog = usec.isdigit() and (not pid or pid == str(os.getpid()))
        # Ping at a quarter of the timeout so one slow frame never trips it.
        self.watchdog_interval = int(usec) / 4e6 if watchdog else None
        self._last_ping = 0.0
        self._failing = False

    @property
    def active(self) -> bool:
        return self._address is not None

    def send(self, message: str) -> None:
        if not self._address:
            return
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                # Never block the frame loop, even if the manager is slow to read.
                sock.sendto(message.encode(), socket.MSG_DONTWAIT, self._address)
        except OSError as error:
            if not self._failing:
                log.warning("sd_notify %r failed: %s (further failures not logged)", message, error)
            self._failing = True
            return
        self._failing = False

    def ready(self) -> None:
        self.send("READY=1")

    def status(self, text: str) -> None:
        self.send(f"STATUS={text}")

    def stopping(self) -> None:
        self.send("STOPPING=1")

    def watchdog(self) -> None:
        """Ping the watchdog, at most every watchdog_interval seconds."""
        if self.watchdog_interval is None:
            return
        now = time.monotonic()
        if now - self._last_ping >= self.watchdog_interval:
            self._last_ping = now
            self.send("WATCHDOG=1")
