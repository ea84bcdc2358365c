"""The placement detector against its own past, in one process on one core: what each kind of frame
costs with vision/placement.py as it is and as it was at a git revision, over the same deal.

    .venv/bin/python bench/placement_ab.py [--against REV] [--deck flip7] [--plays 8]

The machine is shared, so two runs minutes apart differ by more than most changes do; here the
two detectors play the deal of bench/vision_bench.py in turns (each going first in half of the
plays), and each frame's CPU time is its median over its plays. Only vision/placement.py is taken
from REV: the rest of vision/ is the working tree's for both (say so when it matters). Prints
figures only.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cv2

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from vision_bench import Times, deal_frames, pin_one_core, summary  # noqa: E402

STEPS = ("idle", "watch", "early", "settled", "locate", "confirm", "judge")


def placement_at(rev: str, folder: Path):
    """vision/placement.py as it was at git revision `rev`, imported as a module of its own."""
    path = folder / "placement_then.py"
    path.write_text(subprocess.run(["git", "show", f"{rev}:vision/placement.py"], cwd=REPO, check=True,
                                   capture_output=True, text=True).stdout)
    spec = importlib.util.spec_from_file_location("placement_then", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["placement_then"] = module       # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--against", default="HEAD~1", help="git revision of vision/placement.py to compare with")
    parser.add_argument("--deck", default="flip7")
    parser.add_argument("--plays", type=int, default=8, help="plays of the deal by each detector (even: fair turns)")
    args = parser.parse_args()
    print(f"placement A/B: {pin_one_core()}, OpenCV threads {cv2.getNumThreads()}")
    from vision import placement as now
    from vision.classifier import CardClassifier

    classifier = CardClassifier.load(args.deck)
    # (Kept PNG-compressed, decoded outside the timing: hundreds of frames at full size are too many.)
    frames = [cv2.imencode(".png", frame)[1] for frame in deal_frames(args.deck)]
    with tempfile.TemporaryDirectory() as folder:
        then = placement_at(args.against, Path(folder))
        detectors = {f"at {args.against}": then, "now": now}
        print(f"{len(frames)} frames of bench/vision_bench.py's {args.deck} deal, {args.plays} plays each, in turns")
        per_frame: dict[str, dict[int, tuple[str, Times]]] = {name: {} for name in detectors}
        for play in range(args.plays):
            order = list(detectors.items())
            for name, module in order if play % 2 == 0 else order[::-1]:
                detector = module.PlacementDetector(classifier)
                for index, png in enumerate(frames):
                    frame = cv2.imdecode(png, cv2.IMREAD_COLOR)
                    t, c = time.perf_counter(), time.process_time()
                    detector.feed(frame, index)
                    cpu, wall = (time.process_time() - c) * 1000.0, (time.perf_counter() - t) * 1000.0
                    step, times = per_frame[name].setdefault(index, (detector.step, Times()))
                    times.append(wall)
                    times.cpu.append(cpu)
    for name, frames_times in per_frame.items():
        steps: dict[str, Times] = {}
        for step, times in frames_times.values():
            kind = steps.setdefault(step, Times())
            kind.append(statistics.median(times))
            kind.cpu.append(statistics.median(times.cpu))
        print(f"== {name}")
        for step in STEPS:
            if step in steps:
                print(f"  {step:7s} frames: {summary(steps[step])}")
        which = max(("locate", "judge"), key=lambda step: statistics.median(steps.get(step) or [0.0]))
        print(f"  placement frame (its {which} frames, the costlier of a placement's two): CPU median "
              f"{statistics.median(steps[which].cpu):.2f} ms; the whole deal: CPU "
              f"{sum(statistics.median(t.cpu) for _, t in frames_times.values()) / 1000:.2f} s")
    print(f"load average while measuring: {os.getloadavg()[0]:.2f} (other processes share this machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
