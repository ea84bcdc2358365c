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
