"""Record your own table: `tablemate run` as usual (the game is played and kept), and every camera
frame and button press written beside it, so that the evening can be replayed at a desk:

  tablemate record --camera pi --out ~/evening --game flip7 --players ann ben cat
  tablemate run --camera replay:~/evening --buttons script:~/evening/buttons.txt \\
      --game flip7 --players ann ben cat --state /tmp/replayed --display window

OUT is a folder (frames as OUT/NNNNNN.jpg, presses in OUT/buttons.txt) or a video file ending in
.mp4 or .avi (presses in NAME.buttons.txt beside it). The presses are a button script (`FRAME
BUTTON [hold]`: the frame shown when it was pressed), the one `--buttons script:` replays. A game
resumed from the state directory is saved beside the recording as game-at-start.txt: a faithful
replay starts from it (copied as STATE/game.txt). Progress (frames, fps) is logged to stderr; stop
with Ctrl-C (or the menu's Shut down, or the end of a replayed recording).
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

from device.buttons import Buttons
from device.camera import Camera

log = logging.getLogger(__name__)

VIDEO_CODECS = {".mp4": "mp4v", ".avi": "MJPG"}
PROGRESS_SECONDS = 10.0


def configure(parser: argparse.ArgumentParser) -> None:
    from device.run import configure as configure_run

    parser.add_argument("--out", required=True, type=Path, metavar="DIR_OR_VIDEO",
                        help="a new (or empty) folder for the frames, or a video file (.mp4, .avi)")
    configure_run(parser)


def main(args: argparse.Namespace) -> int:
    from device.run import main as run_main

    return run_main(args)


class Recorder:
    """Writes frames and presses as they come; refuses to write over a recording."""

    def __init__(self, out: Path, fps: float):
        self.out = out
        self.fps = fps
        self.video = out.suffix.lower() in VIDEO_CODECS
        if self.video:
            if out.exists():
                raise ValueError(f"{out} exists: record to a new file (nothing is written over)")
            self.buttons_path = out.with_suffix(".buttons.txt")
        else:
            if out.exists() and (not out.is_dir() or any(out.iterdir())):
                raise ValueError(f"{out} is not an empty folder: record to a new one (nothing is written over), "
                                 f"or name a video file ending in {' or '.join(VIDEO_CODECS)}")
            self.buttons_path = out / "buttons.txt"
        self._made_dir = not self.video and not out.exists()
        try:
            (out.parent if self.video else out).mkdir(parents=True, exist_ok=True)
            self._presses = open(self.buttons_path, "x", encoding="utf-8")
        except OSError as error:
            raise OSError(f"cannot record to {out}: {error.strerror or error}") from None
        self._presses.write(f"# frame button: the presses of a table recorded by tablemate record into {out}\n")
        self._presses.flush()
        self._writer = None
        self.frames = 0
        self.presses = 0
        self._started = self._reported = None

    def beside(self, name: str) -> Path:
        """A file kept with the recording."""
        return self.out.with_suffix(f".{name}") if self.video else self.out / name

    def frame(self, image) -> None:
        import cv2

        now = time.monotonic()
        if self._started is None:
            self._started = self._reported = now
        if self.video:
            if self._writer is None:
                h, w = image.shape[:2]
                self._writer = cv2.VideoWriter(str(self.out), cv2.VideoWriter_fourcc(*VIDEO_CODECS[self.out.suffix.lower()]),
                                               self.fps, (w, h))
                if not self._writer.isOpened():
                    raise OSError(f"cannot write the video {self.out} (no {self.out.suffix} encoder here?)")
            self._writer.write(image)
        elif not cv2.imwrite(str(self.out / f"{self.frames:06d}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 90]):
            raise OSError(f"cannot write a frame into {self.out}")
        self.frames += 1
        if now - self._reported >= PROGRESS_SECONDS:
            self._reported = now
            log.info("recording: %d frames, %.1f fps, %d presses", self.frames, self._fps(now), self.presses)

    def press(self, frame_index: int, press) -> None:
        self._presses.write(f"{max(0, frame_index)} {press.button}{' hold' if press.hold else ''}\n")
        self._presses.flush()            # (a crash keeps every press so far)
        self.presses += 1

    def _fps(self, now: float) -> float:
        seconds = now - self._started if self._started is not None else 0.0
        return (self.frames - 1) / seconds if seconds > 0 else 0.0

    def close(self) -> None:
        if self._presses.closed:
            return
        self._presses.close()
        if self._writer is not None:
            self._writer.release()
        if not self.frames and not self.presses:   # (a run refused at its start: a retry finds the place free)
            self.buttons_path.unlink(missing_ok=True)
            if self._made_dir:
                self.out.rmdir()
            log.info("nothing recorded to %s", self.out)
            return
        log.info("recorded %d frames (%.1f fps) to %s and %d presses to %s", self.frames,
                 self._fps(time.monotonic()), self.out, self.presses, self.buttons_path)
        log.info("replay it: tablemate run --camera replay:%s --buttons script:%s --state NEW_DIR (the same "
                 "--game and --players)", self.out, self.buttons_path)


class RecordingCamera(Camera):
    """A camera whose every frame read is recorded (as FrameSource numbers them)."""

    def __init__(self, camera: Camera, recorder: Recorder):
        self.camera = camera
        self.recorder = recorder
        self.live, self.fps, self.name = camera.live, camera.fps, camera.name

    def open(self) -> None:
        self.camera.open()
        self.fps = self.camera.fps

    def read(self):
        image = self.camera.read()
        if image is not None:
            self.recorder.frame(image)
        return image

    def close(self) -> None:
        self.camera.close()


class RecordingButtons(Buttons):
    """Buttons whose every press is recorded with the frame shown then."""

    def __init__(self, buttons: Buttons, recorder: Recorder):
        self.buttons = buttons
        self.recorder = recorder
        self.name = buttons.name

    def start(self, post) -> None:
        def recorded(press) -> None:
            self.recorder.press(self.recorder.frames - 1, press)
            post(press)

        self.buttons.start(recorded)

    def due(self, frame_index: int):
        presses = self.buttons.due(frame_index)
        for press in presses:
            self.recorder.press(frame_index, press)
        return presses

    def close(self) -> None:
        self.buttons.close()
