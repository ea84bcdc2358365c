"""Buttons behind one small interface: `ok`, `next` and `back`, each pressed briefly or held.

Kinds, from the `--buttons` argument (`parse_buttons`): `gpio` (device/buttons_gpio.py, gpiozero),
`keyboard` (stdin, here; typed in the laptop window when there is one: `WindowKeys`), `script:PATH` (a button script, here) and `none`. Live buttons call
`post(ButtonPress)` from their own threads; the frame loop drains that queue. A button script is
tied to frames instead (`due(frame_index)`), so a recorded game replays identically at any speed.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from device.config import ButtonsConfig
from rules.core import shorten, whole_number

log = logging.getLogger(__name__)

BUTTON_NAMES = ("ok", "next", "back")
MAX_FRAME = 10**9          # (a day of frames at 10,000 a second)


@dataclass(frozen=True)
class ButtonPress:
    button: str        # ok | next | back
    hold: bool = False

    def __str__(self) -> str:
        return f"{self.button}{' held' if self.hold else ''}"


class Buttons:
    name = "none"

    def start(self, post: Callable[[ButtonPress], None]) -> None:
        """Begin calling `post` for every press (from any thread)."""

    def due(self, frame_index: int) -> list[ButtonPress]:
        """Presses that happen when frame `frame_index` is shown (button scripts only)."""
        return []

    def close(self) -> None:
        pass


class ScriptButtons(Buttons):
    """Lines `FRAME BUTTON [hold]`; `#` comments and blank lines are ignored. Presses for one frame
    happen in the order written."""

    def __init__(self, path: Path):
        self.name = f"script {path}"
        self._presses: dict[int, list[ButtonPress]] = {}
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as error:
            raise OSError(f"button script {path}: {error.strerror or error}") from None
        except UnicodeDecodeError:
            raise ValueError(f"button script {path}: not a text file (lines 'FRAME ok|next|back [hold]')") from None
        for _, press_frame, press in parse_button_script(text, str(path)):
            self._presses.setdefault(press_frame, []).append(press)

    def due(self, frame_index: int) -> list[ButtonPress]:
        return self._presses.pop(frame_index, [])

    def last_frame(self) -> int:
        return max(self._presses, default=-1)


def parse_button_script(text: str, source: str = "button script") -> list[tuple[int, int, ButtonPress]]:
    """(line number, frame, press) for each line; raises ValueError naming the bad line."""
    presses = []
    for number, line in enumerate(text.split("\n"), 1):      # (lines as rules.script numbers them)
        words = line.split("#", 1)[0].lower().split()
        if not words:
            continue
        if (len(words) not in (2, 3) or words[1] not in BUTTON_NAMES
                or (len(words) == 3 and words[2] != "hold")):
            raise ValueError(f"{source} line {number}: expected 'FRAME ok|next|back [hold]', "
                             f"got {shorten(line.strip())!r}")
        frame = whole_number(words[0], 0, MAX_FRAME, f"{source} line {number}: the frame")
        presses.append((number, frame, ButtonPress(words[1], len(words) == 3)))
    return presses


class KeyboardButtons(Buttons):
    """Keys on the terminal: o or Enter = ok, n or Space = next, b or Backspace = back; the capital
    letter (O, N, B) = held. Without a terminal, one key name per line ("ok", "next hold", ...)."""

    name = "keyboard"
    KEYS = {"o": ButtonPress("ok"), "\r": ButtonPress("ok"), "\n": ButtonPress("ok"),
            "n": ButtonPress("next"), " ": ButtonPress("next"),
            "b": ButtonPress("back"), "\x7f": ButtonPress("back"), "\x08": ButtonPress("back"),
            "O": ButtonPress("ok", True), "N": ButtonPress("next", True), "B": ButtonPress("back", True)}

    def __init__(self):
        self._saved_tty = None

    def start(self, post: Callable[[ButtonPress], None]) -> None:
        if sys.stdin.isatty():
            import termios
            import tty

            self._saved_tty = termios.tcgetattr(sys.stdin)
            tty.setcbreak(sys.stdin)
            target = self._read_keys
        else:
            target = self._read_lines
        log.info("keyboard buttons: o/Enter = ok, n/Space = next, b/Backspace = back, O N B = held")
        threading.Thread(target=target, args=(post,), name="keyboard", daemon=True).start()

    def _read_keys(self, post) -> None:
        while True:
            key = os.read(sys.stdin.fileno(), 1).decode("ascii", "replace")
            if not key:
                return
            if key in self.KEYS:
                post(self.KEYS[key])

    def _read_lines(self, post) -> None:
        for line in sys.stdin:
            words = line.lower().split()
            if words and words[0] in BUTTON_NAMES:
                post(ButtonPress(words[0], words[1:2] == ["hold"]))

    def close(self) -> None:
        if self._saved_tty is not None:
            import termios

            termios.tcsetattr(sys.stdin, termios.TCSADRAIN, self._saved_tty)


class WindowKeys(Buttons):
    """The keyboard's keys typed in the laptop window (device/display_window.py), as on the
    terminal: with a window, `keyboard` is read there, where the user looks and types."""

    name = "keyboard (window)"

    def __init__(self, window):
        self._window = window

    def start(self, post: Callable[[ButtonPress], None]) -> None:
        keys = KeyboardButtons.KEYS
        self._window.on_key = lambda char: post(keys[char]) if char in keys else None
        log.info("keyboard buttons in the window: o/Enter = ok, n/Space = next, b/Backspace = back, O N B = held")

    def close(self) -> None:
        self._window.on_key = None


def parse_buttons(spec: str, config: ButtonsConfig) -> Buttons:
    """`gpio`, `keyboard`, `script:PATH` or `none` (raises ValueError, OSError for a bad script)."""
    kind, _, rest = spec.partition(":")
    if kind == "gpio" and not rest:
        from device.buttons_gpio import GpioButtons

        return GpioButtons(config)
    if kind == "keyboard" and not rest:
        return KeyboardButtons()
    if kind == "script" and rest:
        return ScriptButtons(Path(rest))
    if kind == "none" and not rest:
        return Buttons()
    raise ValueError(f"unknown buttons {spec!r}: use gpio, keyboard, script:PATH or none")
