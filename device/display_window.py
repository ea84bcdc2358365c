"""The laptop window, through Tk (tkinter is optional: without it, or without a graphical session,
opening fails with a clear message): the OLED at 4x, crisp (nearest neighbour, as the pixels
are), beside the table (device/laptop_view.py: every player's row, total and bust odds, the rounds
so far) and, with --preview, the camera's view with what was found (device/preview.py). Keys
typed in the window are the buttons (--buttons keyboard).

Tk's objects and events belong to the thread that made them (on macOS that must be the main
thread): the window is made on the main thread and kept there by `serve`, which runs the frame
loop on a thread of its own meanwhile. Other threads only hand the window pictures and text
through latest-wins slots (`show_oled`, `show_table`, `show_camera`), which the window's thread
takes every POLL_MS.
"""

from __future__ import annotations

import io
import logging
import threading
from typing import Callable

from device.display import HEIGHT, WIDTH, Display

log = logging.getLogger(__name__)

SCALE = 4
CAMERA_PANE_WIDTH = WIDTH * SCALE
POLL_MS = 30
KEY_HELP = "keys: o / Enter = ok   n / Space = next   b / Backspace = back   O N B = held"


class LaptopWindow:
    def __init__(self, title: str = "tablemate"):
        self.title = title
        self.on_key: Callable[[str], None] | None = None     # a key typed (its character)
        self.on_close: Callable[[], None] | None = None      # the window closed, or Ctrl-C
        self._slots: dict[str, object] = {}
        self._lock = threading.Lock()
        self._root = None
        self._owner: int | None = None
        self._photos: dict = {}

    def open(self) -> None:
        """Make the window on this thread, the one that then calls `serve` (RuntimeError if no
        window can be made)."""
        try:
            import tkinter
        except ImportError as error:
            raise RuntimeError(f"the window display needs tkinter (apt install python3-tk): {error}") from None
        try:
            root = tkinter.Tk()
        except tkinter.TclError as error:
            raise RuntimeError(f"no window possible (no graphical session?): {error}") from None
        self._tk, self._root, self._owner = tkinter, root, threading.get_ident()
        root.title(self.title)
        root.configure(bg="black")
        self._oled = tkinter.Label(root, bg="black", bd=0)
        self._oled.grid(row=0, column=0, sticky="nw", padx=8, pady=8)
        tkinter.Label(root, text=KEY_HELP, bg="black", fg="grey70", font="TkSmallCaptionFont").grid(
            row=1, column=0, sticky="w", padx=8)
        self._camera = tkinter.Label(root, bg="black", bd=0)
        self._camera.grid(row=2, column=0, sticky="nw", padx=8, pady=8)
        self._table = tkinter.Label(root, text="", bg="black", fg="white", font="TkFixedFont", justify="left",
                                    anchor="nw")
        self._table.grid(row=0, column=1, rowspan=3, sticky="nw", padx=8, pady=8)
        root.bind("<Key>", lambda event: self.on_key and event.char and self.on_key(event.char))
        root.protocol("WM_DELETE_WINDOW", self._closed)

    # ---- from any thread ----------------------------------------------------------------------
    def show_oled(self, image) -> None:
        """The OLED's 1-bit 128x64 Pillow image."""
        from PIL import Image

        big = image.convert("L").resize((WIDTH * SCALE, HEIGHT * SCALE), Image.NEAREST)
        data = io.BytesIO()
        big.save(data, "PPM")
        self._put("oled", data.getvalue())

    def show_camera(self, image) -> None:
        """A BGR picture (the preview), shown CAMERA_PANE_WIDTH wide."""
        import cv2

        h, w = image.shape[:2]
        small = cv2.resize(image, (CAMERA_PANE_WIDTH, round(h * CAMERA_PANE_WIDTH / w)), interpolation=cv2.INTER_AREA)
        self._put("camera", cv2.imencode(".ppm", small)[1].tobytes())

    def show_table(self, text: str) -> None:
        self._put("table", text)

    def _put(self, pane: str, value) -> None:
        with self._lock:
            self._slots[pane] = value

    # ---- on the window's thread ---------------------------------------------------------------
    def serve(self, work: Callable[[], None]) -> None:
        """Run `work` (the frame loop) on a thread of its own while this thread keeps the window;
        return once `work` has ended (an exception of it is raised here). Ctrl-C asks `on_close`."""
        failed: list[BaseException] = []

        def run() -> None:
            try:
                work()
            except BaseException as error:  # handed to this thread, raised below
                failed.append(error)

        worker = threading.Thread(target=run, name="frame loop", daemon=True)
        worker.start()

        def poll() -> None:
            self._update()
            if worker.is_alive():
                self._root.after(POLL_MS, poll)
            else:
                self._root.quit()

        self._root.after(0, poll)
        while worker.is_alive():
            try:
                self._root.mainloop()
            except KeyboardInterrupt:
                self._closed("interrupted")
                self._root.after(POLL_MS, poll)
        worker.join()
        self._update()
        self.close()
        if failed:
            raise failed[0]

    def _update(self) -> None:
        with self._lock:
            slots, self._slots = self._slots, {}
        try:
            for pane, value in slots.items():
                if pane == "table":
                    self._table.configure(text=value)
                    continue
                photo = self._tk.PhotoImage(data=value, format="PPM")
                self._photos[pane] = photo            # (Tk shows it only while a reference is held)
                (self._oled if pane == "oled" else self._camera).configure(image=photo)
        except self._tk.TclError as error:
            log.error("window: %s", error)

    def _closed(self, how: str = "window closed") -> None:
        log.info("%s: stopping", how)
        try:
            self._root.withdraw()
        except self._tk.TclError:
            pass
        if self.on_close:
            self.on_close()

    def close(self) -> None:
        """Destroy the window; from another thread (the frame loop's end) nothing: `serve` does."""
        if self._root is None or threading.get_ident() != self._owner:
            return
        root, self._root = self._root, None
        try:
            root.destroy()
        except self._tk.TclError:
            pass


class WindowDisplay(Display):
    """The OLED's pane of the laptop window."""

    name = "window"

    def __init__(self, window: LaptopWindow):
        self._window = window

    def show(self, image, t: float) -> None:
        self._window.show_oled(image)
