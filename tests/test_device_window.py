"""The laptop window and the display thread: a display is opened, drawn and closed on one thread
(a Tk window belongs to the thread that made it), the window under a virtual X server where one
is installed, and the views beside the OLED (the table, the camera preview) without Tk."""

import threading

from device.display import Display, DisplayWorker
from device.screens import MessageScreen, Shown, render


class ThreadRecordingDisplay(Display):
    """Notes which thread opens, draws on and closes it."""

    def __init__(self, threads: dict):
        self.threads = threads
        threads.setdefault("open", []).append(threading.get_ident())

    def show(self, image, t):
        self.threads.setdefault("show", []).append(threading.get_ident())

    def close(self):
        self.threads.setdefault("close", []).append(threading.get_ident())


def test_the_display_worker_opens_draws_and_closes_the_display_on_its_own_thread():
    threads: dict = {}
    worker = DisplayWorker(lambda: ThreadRecordingDisplay(threads), render, 3)
    worker.start()
    worker.post(Shown(MessageScreen("hello")), 0.0)
    worker.post(Shown(MessageScreen("again")), 0.1)
    worker.close()
    assert threads["close"], "the display was never closed"
    used = {ident for idents in threads.values() for ident in idents}
    assert used == {worker._thread.ident} and threading.get_ident() not in used


def test_a_display_worker_never_started_closes_without_opening():
    opened = []
    worker = DisplayWorker(lambda: opened.append(1), render, 3)
    worker.close()
    assert opened == []


# ---- the window under a virtual X server ----------------------------------------------------------

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent


def _frames(folder: Path, count: int) -> Path:
    import cv2

    folder.mkdir()
    for i in range(count):
        cv2.imwrite(str(folder / f"{i:05d}.png"), np.full((120, 160, 3), 90, np.uint8))
    return folder


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="no virtual X server here (xvfb-run: apt install xvfb)")
def test_a_run_in_the_window_ends_cleanly_with_its_json_under_a_virtual_x_server(tmp_path):
    frames = _frames(tmp_path / "frames", 30)
    (tmp_path / "buttons.txt").write_text("3 next\n")
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    result = subprocess.run(
        ["xvfb-run", "-a", sys.executable, "-m", "device.cli", "run", "--game", "flip7", "--players", "ann", "ben",
         "--camera", f"replay:{frames}@30", "--display", "window", "--preview", "--buttons",
         f"script:{tmp_path / 'buttons.txt'}", "--state", str(tmp_path / "state"), "--json"],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert "main thread is not in main loop" not in result.stderr
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout)["players"] == ["ann", "ben"]


@pytest.mark.skipif(shutil.which("Xvfb") is None, reason="no virtual X server here (Xvfb: apt install xvfb)")
def test_ctrl_c_in_the_window_ends_the_run_cleanly_with_its_json(tmp_path):
    import signal
    import time as clock

    frames = _frames(tmp_path / "frames", 200)          # 20 s at 10 fps: stopped long before
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    command = [sys.executable, "-m", "device.cli", "run", "--game", "flip7", "--players", "ann", "ben", "--camera",
               f"replay:{frames}@10", "--display", "window", "--buttons", "none", "--state", str(tmp_path / "state"),
               "--json"]
    # (xvfb-run would take the signal itself: the program runs under an X server of its own here)
    read_end, write_end = os.pipe()          # Xvfb picks a free display and writes its number there
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-nolisten", "tcp"], pass_fds=(write_end,),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_end)
    try:
        with os.fdopen(read_end) as numbers:
            display = ":" + numbers.readline().strip()
        process = subprocess.Popen(command, cwd=REPO, env={**env, "DISPLAY": display}, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
        clock.sleep(4.0)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        server.terminate()
        server.wait()
    assert process.returncode == 0, err[-2000:]
    assert "interrupted: stopping" in err and json.loads(out)["players"] == ["ann", "ben"]


@pytest.mark.skipif(shutil.which("xvfb-run") is None, reason="no virtual X server here (xvfb-run: apt install xvfb)")
def test_keys_typed_in_the_window_are_the_buttons_under_a_virtual_x_server():
    code = """
from device.buttons import WindowKeys
from device.display_window import LaptopWindow
import time
window = LaptopWindow()
window.open()
got = []
WindowKeys(window).start(got.append)
root = window._root
root.after(100, lambda: [root.focus_force()] + [root.event_generate("<KeyPress>", keysym=k, when="tail")
                                                for k in ("n", "Return", "B", "x")])
window.serve(lambda: time.sleep(0.5))
print(" ".join(str(press) for press in got))
"""
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    result = subprocess.run(["xvfb-run", "-a", sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["next", "ok", "back", "held"]


# ---- the window's threads, with a stand-in for Tk (runs everywhere) -------------------------------

import time
import types


class FakeTkinter(types.ModuleType):
    """Records the thread of every call into 'Tk', as Tk would mind it."""

    class TclError(Exception):
        pass

    def __init__(self):
        super().__init__("tkinter")
        self.threads: set[int] = set()
        self.keys = None
        self.shown: dict = {}
        module = self

        class Widget:
            def __init__(self, *args, **kwargs):
                module.threads.add(threading.get_ident())

            def __getattr__(self, name):
                def call(*args, **kwargs):
                    module.threads.add(threading.get_ident())
                    if name == "configure":
                        module.shown.update(kwargs)
                return call

        class Tk(Widget):
            def __init__(self):
                super().__init__()
                self._after, self._quit = [], False

            def bind(self, sequence, handler):
                module.threads.add(threading.get_ident())
                module.keys = handler

            def after(self, ms, handler):
                module.threads.add(threading.get_ident())
                self._after.append(handler)

            def quit(self):
                self._quit = True

            def mainloop(self):
                module.threads.add(threading.get_ident())
                self._quit = False
                while not self._quit and self._after:
                    self._after.pop(0)()
                    time.sleep(0.005)

        self.Tk, self.Label, self.PhotoImage = Tk, Widget, Widget


def test_the_window_keeps_tk_on_its_own_thread_while_the_loop_runs_on_another(monkeypatch):
    from PIL import Image

    from device.buttons import ButtonPress, WindowKeys
    from device.display_window import LaptopWindow

    tk = FakeTkinter()
    monkeypatch.setitem(sys.modules, "tkinter", tk)
    window = LaptopWindow()
    window.open()
    presses = []
    keys = WindowKeys(window)
    keys.start(presses.append)
    loop_thread = []

    def frame_loop():
        loop_thread.append(threading.get_ident())
        window.show_oled(Image.new("1", (128, 64)))
        window.show_camera(np.zeros((48, 64, 3), np.uint8))
        window.show_table("ann  total 0")
        time.sleep(0.1)
        window.close()                      # (the loop's end closes its resources: not Tk's thread)
        tk.keys(types.SimpleNamespace(char="N"))   # a key typed while the loop runs

    window.serve(frame_loop)
    assert tk.threads == {threading.get_ident()} and loop_thread[0] != threading.get_ident()
    assert tk.shown.get("text") == "ann  total 0" and "image" in tk.shown
    assert presses == [ButtonPress("next", hold=True)]


def test_a_frame_loop_that_fails_in_the_window_fails_the_run(monkeypatch):
    from device.display_window import LaptopWindow

    monkeypatch.setitem(sys.modules, "tkinter", FakeTkinter())
    window = LaptopWindow()
    window.open()

    def frame_loop():
        raise OSError("camera gone")

    with pytest.raises(OSError, match="camera gone"):
        window.serve(frame_loop)


def test_the_window_shows_the_oled_crisp_pixel_for_pixel():
    import io

    from PIL import Image

    from device.display_window import SCALE, LaptopWindow
    from device.screens import TurnScreen

    screen = render(Shown(TurnScreen("ann", 2, ("7", "freeze"), 7, 45, 0.31)))
    window = LaptopWindow()                 # (no Tk needed: the picture handed to the window)
    window.show_oled(screen)
    shown = Image.open(io.BytesIO(window._slots["oled"]))
    assert shown.size == (128 * SCALE, 64 * SCALE)
    assert set(np.asarray(shown).ravel().tolist()) == {0, 255}   # no grey: not a smooth (blurred) resize
    assert shown.resize((128, 64), Image.NEAREST).tobytes() == screen.convert("L").tobytes()
