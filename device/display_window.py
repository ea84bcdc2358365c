"""A desktop window showing the OLED screen at 4x, through Tk (tkinter is optional: without it, or
without a graphical session, opening fails with a clear message)."""

from __future__ import annotations

from device.config import DisplayConfig
from device.display import HEIGHT, WIDTH, Display

SCALE = 4


class WindowDisplay(Display):
    name = "window"

    def __init__(self, config: DisplayConfig):
        try:
            import tkinter
            from PIL import ImageTk
        except ImportError as error:
            raise RuntimeError(f"the window display needs tkinter and Pillow's ImageTk: {error}") from None
        self._image_tk = ImageTk
        self._tcl_error = tkinter.TclError
        try:
            self._root = tkinter.Tk()
        except tkinter.TclError as error:
            raise RuntimeError(f"no window possible (no graphical session?): {error}") from None
        self._root.title("tablemate")
        self._label = tkinter.Label(self._root, bg="black")
        self._label.pack()
        self._photo = None

    def show(self, image, t: float) -> None:
        big = image.convert("L").resize((WIDTH * SCALE, HEIGHT * SCALE))
        try:
            self._photo = self._image_tk.PhotoImage(big)
            self._label.configure(image=self._photo)
            self._root.update()
        except self._tcl_error as error:  # the window was closed
            raise OSError(f"window: {error}") from None

    def close(self) -> None:
        try:
            self._root.destroy()
        except self._tcl_error:
            pass
