"""A webcam (or a video file) through OpenCV's VideoCapture."""

from __future__ import annotations

from device.camera import Camera, CameraError
from device.config import CameraConfig


class OpenCVCamera(Camera):
    def __init__(self, source: int | str, config: CameraConfig):
        self.source = source
        self.config = config
        self.live = isinstance(source, int)
        self.fps = config.fps
        self.name = f"opencv {source}"
        self._capture = None

    def open(self) -> None:
        import cv2

        capture = cv2.VideoCapture(self.source)
        if not capture.isOpened():
            capture.release()
            raise CameraError(f"{self.name} cannot be opened (unplugged, or used by another program?)")
        if self.live:
            capture.set(cv2.CAP_PROP_FRAME_WIDTH, self.config.width)
            capture.set(cv2.CAP_PROP_FRAME_HEIGHT, self.config.height)
            capture.set(cv2.CAP_PROP_FPS, self.config.fps)
            capture.set(cv2.CAP_PROP_BUFFERSIZE, 1)  # the newest frame, not a queue of old ones
        else:
            self.fps = capture.get(cv2.CAP_PROP_FPS) or self.config.fps
        self._capture = capture

    def read(self):
        ok, frame = self._capture.read()
        if ok:
            return frame
        if self.live:
            raise CameraError(f"{self.name} stopped delivering frames")
        return None

    def close(self) -> None:
        if self._capture is not None:
            self._capture.release()
            self._capture = None
