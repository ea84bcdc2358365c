"""A Raspberry Pi camera through picamera2 (installed from apt: python3-picamera2).

Frames are requested one at a time (`capture_array` waits for the next completed request) in the
"RGB888" format, which picamera2 lays out as B, G, R bytes: OpenCV's BGR without conversion.
Exposure, gain and focus can be fixed from the config: automatic exposure hunting under mains
lighting and autofocus breathing both make a card that lies still look like it moves.
"""

from __future__ import annotations

import logging

from device.camera import Camera, CameraError
from device.config import CameraConfig

log = logging.getLogger(__name__)


class PiCamera(Camera):
    name = "pi camera"

    def __init__(self, config: CameraConfig):
        self.config = config
        self.fps = config.fps
        self._camera = None

    def open(self) -> None:
        try:
            from picamera2 import Picamera2
        except ImportError as error:
            raise CameraError(f"picamera2 is not installed (apt install python3-picamera2): {error}") from None
        try:
            if not Picamera2.global_camera_info():
                raise CameraError("no camera detected (ribbon cable? camera_auto_detect=1 in config.txt?)")
            camera = Picamera2()
        except (RuntimeError, IndexError) as error:
            raise CameraError(f"camera busy or unavailable: {error}") from None
        try:
            controls = {"FrameDurationLimits": (int(1e6 / self.config.fps),) * 2}
            if self.config.exposure_us > 0:
                controls["AeEnable"] = False
                controls["ExposureTime"] = self.config.exposure_us
            if self.config.analogue_gain > 0:
                controls["AnalogueGain"] = self.config.analogue_gain
            if self.config.lens_position >= 0 and "LensPosition" in camera.camera_controls:
                controls["AfMode"] = 0  # manual
                controls["LensPosition"] = self.config.lens_position
            settings = camera.create_video_configuration(
                main={"size": (self.config.width, self.config.height), "format": "RGB888"},
                buffer_count=2, controls=controls)
            camera.configure(settings)
            camera.start()
        except Exception as error:
            camera.close()
            raise CameraError(f"camera could not be started: {error}") from None
        self._camera = camera

    def read(self):
        try:
            return self._camera.capture_array("main")
        except Exception as error:
            raise CameraError(f"capture failed: {error}") from None

    def close(self) -> None:
        if self._camera is not None:
            try:
                self._camera.close()
            except Exception:
                log.exception("closing the camera failed")
            self._camera = None
