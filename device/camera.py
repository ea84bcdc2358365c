"""Cameras behind one small interface, and the thread that keeps frames coming.

A `Camera` opens, reads BGR frames and closes; it raises `CameraError` for anything a user should
be told about (no camera, camera busy, unplugged). `parse_camera(spec, config)` turns the `--camera`
argument into one: `pi` (device/camera_pi.py, picamera2), `opencv:INDEX` or `opencv:FILE`
(device/camera_opencv.py) and `replay:PATH[@FPS]` (a video file or a folder of images, here).
Hardware libraries are imported only in the module that drives them.

`FrameSource` reads a camera on its own thread so that a camera that blocks or vanishes never
stalls the frame loop (which still handles buttons, the display and the watchdog): it reopens a
failed camera with a growing delay, and reports what is wrong in `status`.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from device.config import CameraConfig

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff"}
DEFAULT_REPLAY_FPS = 15.0


class CameraError(Exception):
    """The camera cannot deliver frames now; the message is for the user."""


class Camera:
    """Interface. `live` cameras drop frames the loop has no time for; replays deliver every
    frame and end (read returns None)."""

    live = True
    fps = DEFAULT_REPLAY_FPS
    name = "camera"

    def open(self) -> None:
        raise NotImplementedError

    def read(self) -> Any | None:
        """The next BGR uint8 frame (H, W, 3); None when a replay has ended."""
        raise NotImplementedError

    def close(self) -> None:
        pass


class ReplayCamera(Camera):
    """A video file or a folder of images in name order. Without @FPS it plays as fast as the
    loop takes the frames (timestamps still follow the recording's rate); with @FPS it is paced
    in real time like a live camera, though without dropping frames. An image of the folder that
    cannot be read is skipped, said in the journal (a frame lost, as a live camera drops one),
    and a replay opened again goes on where it was: a frame is never played twice, so no card
    is dealt twice."""

    live = False

    def __init__(self, path: Path, paced_fps: float | None = None):
        self.path = path
        self.paced_fps = paced_fps
        self.name = f"replay {path}"
        self.fps = paced_fps or DEFAULT_REPLAY_FPS
        self._files: list[Path] | None = None
        self._capture = None
        self._next = 0
        self._next_due = 0.0

    def open(self) -> None:
        import cv2

        if self.path.is_dir():
            self._files = sorted(p for p in self.path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
            if not self._files:
                raise CameraError(f"no images in {self.path}")
        elif self.path.is_file():
            self._capture = cv2.VideoCapture(str(self.path))
            if not self._capture.isOpened():
                raise CameraError(f"cannot open video {self.path}")
            if not self.paced_fps:
                self.fps = self._capture.get(cv2.CAP_PROP_FPS) or DEFAULT_REPLAY_FPS
            if self._next:
                self._capture.set(cv2.CAP_PROP_POS_FRAMES, self._next)
        else:
            raise CameraError(f"{self.path} does not exist")
        self._next_due = time.monotonic()

    def read(self):
        import cv2

        if self.paced_fps:
            delay = self._next_due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            self._next_due = max(self._next_due + 1 / self.paced_fps, time.monotonic() - 1)
        if self._files is not None:
            while True:
                if self._next >= len(self._files):
                    return None
                frame = cv2.imread(str(self._files[self._next]), cv2.IMREAD_COLOR)
                if frame is not None:
                    break
                log.warning("replay: cannot read %s as an image; skipped", self._files[self._next])
                self._next += 1
        else:
            ok, frame = self._capture.read()
            if not ok:
                return None
        self._next += 1
        return frame

    def close(self) -> None:
        if self._capture is not None:
            self._capture.release()
            self._capture = None


def parse_camera(spec: str, config: CameraConfig) -> Camera:
    """`pi`, `opencv:INDEX`, `opencv:FILE` or `replay:PATH[@FPS]` (raises ValueError)."""
    kind, _, rest = spec.partition(":")
    if kind == "pi" and not rest:
        from device.camera_pi import PiCamera

        return PiCamera(config)
    if kind == "opencv" and rest:
        from device.camera_opencv import OpenCVCamera

        return OpenCVCamera(int(rest) if rest.isdigit() else rest, config)
    if kind == "replay" and rest:
        path, at, fps = rest.rpartition("@") if "@" in rest else (rest, "", "")
        if at:
            try:
                paced = float(fps)
            except ValueError:
                raise ValueError(f"bad frame rate in {spec!r}") from None
            if paced <= 0:
                raise ValueError(f"bad frame rate in {spec!r}")
            return ReplayCamera(Path(path), paced)
        return ReplayCamera(Path(rest))
    raise ValueError(f"unknown camera {spec!r}: use pi, opencv:INDEX or replay:PATH[@FPS]")


@dataclass(frozen=True)
class Frame:
    image: Any          # BGR uint8
    index: int          # 0-based position in the stream (a replay's frame number)
    t: float            # seconds: recording time for replays, monotonic time for live cameras
    received: float     # time.monotonic() when the camera delivered it (for latency figures)


class FrameSource:
    """Runs the camera on a thread. `get(timeout)` returns the next Frame or None; `ended` is set
    when a replay is over; `status` is None while frames flow, else a short text for the user."""

    def __init__(self, camera: Camera, config: CameraConfig):
        self.camera = camera
        self.config = config
        self._frames: queue.Queue[Frame] = queue.Queue(maxsize=1 if camera.live else 4)
        self._stop = threading.Event()
        self.ended = threading.Event()
        self.first_frame = threading.Event()
        self.problem: str | None = "starting camera"
        self.last_frame_at = time.monotonic()
        self._read_started: float | None = None
        self._thread = threading.Thread(target=self._run, name="camera", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def get(self, timeout: float) -> Frame | None:
        try:
            return self._frames.get(timeout=timeout)
        except queue.Empty:
            return None

    def drained(self) -> bool:
        """A replay has ended and every frame has been taken."""
        return self.ended.is_set() and self._frames.empty()

    def stalled_for(self) -> float:
        """Seconds without a frame while the camera should be delivering."""
        return time.monotonic() - self.last_frame_at

    def read_blocked_for(self) -> float:
        """Seconds the camera thread has been inside one read (0 when not reading)."""
        started = self._read_started
        return time.monotonic() - started if started is not None else 0.0

    def status(self) -> str | None:
        if self.problem:
            return self.problem
        if self.camera.live and self.stalled_for() > self.config.stall_seconds:
            return "camera not responding"
        return None

    def _run(self) -> None:
        index = 0
        delay = self.config.retry_seconds
        while not self._stop.is_set():
            try:
                self.camera.open()
            except CameraError as error:
                self._report(f"no camera: {error}", delay)
                if self._stop.wait(delay):
                    break
                delay = min(delay * 2, 30.0)
                continue
            except Exception as error:  # a driver bug must not end the thread: report and retry
                log.exception("camera %s failed to open", self.camera.name)
                self._report(f"camera error: {error}", delay)
                if self._stop.wait(delay):
                    break
                delay = min(delay * 2, 30.0)
                continue
            log.info("camera %s open", self.camera.name)
            delay = self.config.retry_seconds
            try:
                index = self._read_frames(index)
            except CameraError as error:
                self._report(f"camera lost: {error}", delay)
            except Exception as error:
                log.exception("camera %s failed", self.camera.name)
                self._report(f"camera error: {error}", delay)
            finally:
                self.camera.close()
            if self.ended.is_set():
                break
            self._stop.wait(delay)

    def _read_frames(self, index: int) -> int:
        while not self._stop.is_set():
            self._read_started = time.monotonic()
            try:
                image = self.camera.read()
            finally:
                self._read_started = None
            if image is None:
                self.ended.set()
                return index
            now = time.monotonic()
            t = now if self.camera.live else index / self.camera.fps
            frame = Frame(image, index, t, now)
            self.last_frame_at = now
            if self.problem:
                log.info("camera %s delivering frames", self.camera.name)
                self.problem = None
            self.first_frame.set()
            index += 1
            if self.camera.live:
                try:  # latest frame wins: drop the one the loop has not taken yet
                    self._frames.get_nowait()
                except queue.Empty:
                    pass
                self._frames.put_nowait(frame)
            else:
                while not self._stop.is_set():
                    try:
                        self._frames.put(frame, timeout=0.2)
                        break
                    except queue.Full:
                        continue
        return index

    def _report(self, problem: str, retry_in: float) -> None:
        if problem != self.problem:
            log.error("%s (retrying every %.0f s or more)", problem, retry_in)
        self.problem = problem
