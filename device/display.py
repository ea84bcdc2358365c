"""Displays behind one small interface, and the thread that drives them.

A `Display` shows a 128x64 1-bit Pillow image and may raise OSError (an I2C error). Kinds, from
the `--display` argument (`parse_display`): `oled` (device/display_oled.py, luma.oled SSD1306 or
SH1106 over I2C), `window` (device/display_window.py, the laptop window: Tk, optional), `gif:PATH` and
`png:DIR` (files, here) and `none`.

`DisplayWorker` owns the display on its own thread with a latest-wins slot: the frame loop posts
screens and never waits for I2C; a screen not yet drawn when a newer one arrives is skipped. A
display that fails is reopened with a growing delay while the game goes on. Recordings (GIF, PNG)
are `lossless`: every screen is kept, so a replay played faster than real time records them all.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from pathlib import Path
from typing import Callable

from device.config import DisplayConfig

log = logging.getLogger(__name__)

WIDTH, HEIGHT = 128, 64


class Display:
    name = "display"

    def show(self, image, t: float) -> None:
        """Show `image` (mode "1", 128x64); `t` is the screen's time in seconds (recordings use it
        to time their frames)."""
        raise NotImplementedError

    def set_brightness(self, level: int) -> None:
        """level 1..4"""

    def close(self) -> None:
        pass


class NoDisplay(Display):
    name = "none"

    def show(self, image, t: float) -> None:
        pass


class GifDisplay(Display):
    """Records every screen shown, with its duration, as an animated GIF written on close."""

    def __init__(self, path: Path, scale: int = 2):
        self.path = path
        self.scale = scale
        self.name = f"gif {path}"
        self._frames: list = []
        self._times: list[float] = []

    def show(self, image, t: float) -> None:
        if self._frames and image.tobytes() == self._frames[-1].tobytes():
            return
        self._frames.append(image.copy())
        self._times.append(t)

    def close(self) -> None:
        if not self._frames:
            return
        from PIL import Image

        # Durations from the screens' own times; the last screen stays 3 s.
        durations = [max(20, int(round((b - a) * 1000))) for a, b in zip(self._times, self._times[1:])] + [3000]
        frames = [f.convert("L").resize((WIDTH * self.scale, HEIGHT * self.scale), Image.NEAREST).convert("P")
                  for f in self._frames]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        frames[0].save(self.path, save_all=True, append_images=frames[1:], duration=durations, loop=0,
                       optimize=False, disposal=1)
        log.info("wrote %d screens to %s", len(frames), self.path)


class PngDisplay(Display):
    """Writes each new screen as DIR/NNNNNN.png (a 1-bit PNG at the display's size)."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.name = f"png {directory}"
        self._count = 0
        self._last: bytes | None = None

    def show(self, image, t: float) -> None:
        data = image.tobytes()
        if data == self._last:
            return
        self._last = data
        self.directory.mkdir(parents=True, exist_ok=True)
        image.save(self.directory / f"{self._count:06d}.png")
        self._count += 1


def parse_display(spec: str, config: DisplayConfig, window=None) -> Callable[[], Display]:
    """A factory for the display named by `spec` (raises ValueError). A factory, not a display:
    the worker calls it again to reopen a display that failed. `window`: the laptop window
    (device/display_window.py LaptopWindow, opened), which `window` shows the screens in."""
    kind, _, rest = spec.partition(":")
    if kind == "oled" and not rest:
        from device.display_oled import OledDisplay

        return lambda: OledDisplay(config)
    if kind == "window" and not rest:
        from device.display_window import WindowDisplay

        if window is None:
            raise ValueError("the window display needs the laptop window made first")
        return lambda: WindowDisplay(window)
    if kind == "gif" and rest:
        display = GifDisplay(Path(rest))
        return lambda: display  # a file never fails in a way reopening would fix
    if kind == "png" and rest:
        display = PngDisplay(Path(rest))
        return lambda: display
    if kind == "none" and not rest:
        return NoDisplay
    raise ValueError(f"unknown display {spec!r}: use oled, window, gif:PATH, png:DIR or none")


class DisplayWorker:
    """Draws the newest posted screen on its own thread. `render(screen) -> image` runs on that
    thread too, so drawing text never delays the frame loop."""

    def __init__(self, open_display: Callable[[], Display], render: Callable, brightness: int,
                 on_shown: Callable[[object, float], None] | None = None, lossless: bool = False):
        self._open_display = open_display
        self._render = render
        self._on_shown = on_shown
        self._brightness = brightness
        self._applied_brightness: int | None = None
        self._display: Display | None = None
        self._pending: collections.deque[tuple] = collections.deque(maxlen=None if lossless else 1)
        self._last_posted = None
        self._wake = threading.Condition()
        self._closing = False
        self._retry_at = 0.0
        self._retry_delay = 1.0
        self.problem: str | None = None
        self._thread = threading.Thread(target=self._run, name="display", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def post(self, screen, t: float) -> None:
        """Queue `screen` for drawing unless it is the one already posted; never blocks."""
        with self._wake:
            if screen == self._last_posted:
                return
            self._last_posted = screen
            self._pending.append((screen, t))
            self._wake.notify()

    def set_brightness(self, level: int) -> None:
        with self._wake:
            self._brightness = level
            self._wake.notify()

    def close(self) -> None:
        """Draw what is pending, then close the display (files are written here), on the display's
        own thread: a display is opened, drawn and closed by one thread (a Tk window belongs to
        the thread that made it; an I2C transfer must not race its cleanup)."""
        with self._wake:
            self._closing = True
            self._wake.notify()
        if self._thread.ident is None:      # never started: nothing was opened
            return
        self._thread.join(timeout=10)
        if self._thread.is_alive():
            log.error("the display did not finish drawing within 10 s: left open")

    def _close_display(self) -> None:
        if self._display is not None:
            try:
                self._display.close()
            except OSError as error:
                log.error("closing the display failed: %s", error)
            self._display = None

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._pending and not self._closing:
                    self._wake.wait(timeout=1.0)
                    if self._display is None and self._last_posted is not None and time.monotonic() >= self._retry_at:
                        break  # a failed display: time to retry with the newest screen
                if not self._pending and self._closing:
                    break
                if self._pending:
                    job = self._pending.popleft()
                elif self._last_posted is not None:
                    job = (self._last_posted, time.monotonic())
                else:
                    continue
            self._draw(*job)
        self._close_display()

    def _draw(self, screen, t: float) -> None:
        image = self._render(screen)
        if self._display is None:
            if time.monotonic() < self._retry_at:
                return
            try:
                self._display = self._open_display()
                self._applied_brightness = None
            except (OSError, RuntimeError, ImportError) as error:
                self._fail(f"display unavailable: {error}")
                return
        try:
            if self._applied_brightness != self._brightness:
                self._display.set_brightness(self._brightness)
                self._applied_brightness = self._brightness
            self._display.show(image, t)
        except OSError as error:
            self._fail(f"display error: {error}")
            try:
                self._display.close()
            except OSError:
                pass
            self._display = None
            return
        if self.problem:
            log.info("display working again")
            self.problem = None
            self._retry_delay = 1.0
        if self._on_shown:
            self._on_shown(screen, time.monotonic())

    def _fail(self, problem: str) -> None:
        if problem != self.problem:
            log.error("%s (retrying)", problem)
        self.problem = problem
        self._retry_at = time.monotonic() + self._retry_delay
        self._retry_delay = min(self._retry_delay * 2, 30.0)
