"""Device figures: how long from a card lying still to the screen showing it, and what the frame
loop and the screens cost. Prints figures; asserts nothing.

  .venv/bin/python bench/device_bench.py [--cards 10] [--fps 15] [--seed 3]

The latency run plays a synthetic deal video through the real pipeline (replay camera paced at
--fps like a live camera, the real PlacementDetector and classifier, the table, the display
thread). For each card: from the moment the camera delivered the frame in which the card first
lies still (the video's ground truth) to the moment the display thread finished drawing the first
screen that includes it. That includes the detector waiting for the card to settle.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

LABELS = ["3", "8", "11", "5", "12", "9", "10", "7", "6", "4"]   # numbers only: never a pending choice


def bench_render(repeat: int = 200) -> None:
    from device.screens import (ChoiceScreen, FlashScreen, MenuScreen, MessageScreen, ScoresScreen, Shown,
                                TurnScreen, render)

    screens = {
        "turn": TurnScreen("ann", 2, ("3", "7", "11", "+4", "second-chance"), 25, 134, 0.31),
        "flash": FlashScreen("BUST!", "cat", "a second 7"),
        "choice": ChoiceScreen("ann: FREEZE who?", "ben", "2/3"),
        "message": MessageScreen("Card not sure", ("show it again",), inverted=True),
        "scores": ScoresScreen("ROUND 3", (("ann", "+36", 120), ("ben", "bust", 80), ("cat", "+66", 201))),
        "menu": MenuScreen("MENU", ("New game", "Players: 3", "Re-shuffle", "Brightness: 3", "Shut down"), 2),
    }
    for name, screen in screens.items():
        render(Shown(screen))  # fonts loaded
        started = time.perf_counter()
        for _ in range(repeat):
            render(Shown(screen))
        print(f"render {name:8} {(time.perf_counter() - started) / repeat * 1000:6.2f} ms")


def bench_latency(cards: int, fps: float, seed: int, workdir: Path) -> None:
    import cv2
    import numpy as np

    from device import run
    from device.config import DeviceConfig
    from vision.synth.scenes import make_deal_video

    labels = LABELS[:cards]
    video = make_deal_video(np.random.default_rng(seed), labels, fps=int(fps), split="heldout", p_repeat=0.0)
    frames_dir = workdir / "frames"
    frames_dir.mkdir()
    for i, frame in enumerate(video.frames):
        cv2.imwrite(str(frames_dir / f"{i:06d}.png"), frame)
    truth = [e.frame_index for e in video.events]
    print(f"deal video: {len(video.frames)} frames, {len(truth)} cards, played at {fps:g} fps")

    args = SimpleNamespace(camera=f"replay:{frames_dir}@{fps}", display="none", buttons="none",
                           state=str(workdir / "state"), game="flip7", players=["ann", "ben", "cat"],
                           json=False, config=None)
    appliance = run.build(args, DeviceConfig())
    received: dict[int, float] = {}
    fired: list[int] = []
    posts: list[tuple[int, int]] = []          # (id of the posted screen, accepted events then)
    posted: list = []
    shown: dict[int, float] = {}

    source_get = appliance.source.get

    def get(timeout):
        frame = source_get(timeout)
        if frame is not None:
            received[frame.index] = frame.received
        return frame

    detector_feed = appliance.detector.feed

    def feed(image, index):
        events = detector_feed(image, index)
        fired.extend(index for e in events if getattr(e, "label", None))
        return events

    display_post = appliance.display.post

    def post(screen, t):
        posted.append(screen)     # held, so no later screen can get the same id()
        posts.append((id(screen), len(appliance.table.match.events)))
        display_post(screen, t)

    appliance.source.get = get
    appliance.detector.feed = feed
    appliance.display.post = post
    appliance.display._on_shown = lambda screen, at: shown.setdefault(id(screen), at)
    appliance.run()

    stats = appliance.stats
    latencies, pipeline = [], []
    for k, frame_index in enumerate(truth):
        at = next((shown[pid] for pid, count in posts if count >= k + 1 and pid in shown), None)
        if at is None or frame_index not in received:
            print(f"card {k + 1} ({labels[k]}): not shown")
            continue
        latencies.append((at - received[frame_index]) * 1000)
        pipeline.append((at - received[fired[k]]) * 1000)
        print(f"card {k + 1} ({labels[k]:>2}): lies still at frame {frame_index}, placement reported on frame "
              f"{fired[k]} (+{fired[k] - frame_index}); on screen {latencies[-1]:.0f} ms after the still frame "
              f"arrived, {pipeline[-1]:.1f} ms after the reporting frame arrived")
    detect = sorted(stats.detect_seconds)
    print(f"cards read {stats.placements}/{len(truth)}, not sure {stats.unsure}")
    if latencies:
        print(f"card still -> screen updated: median {statistics.median(latencies):.0f} ms, "
              f"max {max(latencies):.0f} ms (includes the detector waiting for the hand to leave)")
        print(f"reporting frame -> screen updated: median {statistics.median(pipeline):.1f} ms, "
              f"max {max(pipeline):.1f} ms (target < 200 ms)")
    print(f"detector per frame: median {statistics.median(detect) * 1000:.2f} ms, "
          f"p95 {detect[int(len(detect) * 0.95)] * 1000:.2f} ms, max {detect[-1] * 1000:.1f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cards", type=int, default=10, help="cards in the deal video (max 10)")
    parser.add_argument("--fps", type=float, default=15.0, help="camera frame rate to play it at")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    from device.logs import setup_logging

    setup_logging()
    bench_render()
    with tempfile.TemporaryDirectory() as workdir:
        bench_latency(min(args.cards, len(LABELS)), args.fps, args.seed, Path(workdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
