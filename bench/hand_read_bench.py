"""How well a hand laid apart under the camera is read (device/handscan.py: find, warp, classify),
on generated photos: cards read right, read wrong, "not sure", and not found.

    .venv/bin/python bench/hand_read_bench.py [--deck flip7] [--hands 8] [--split train]

UNO Flip's end-of-round scoring and `tablemate scan` rest on this; the device shows each hand read
for the table to confirm.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deck", default="flip7")
    parser.add_argument("--hands", type=int, default=8, help="photos, seeds 0..N-1")
    parser.add_argument("--cards", default="3,9,freeze,12", help="the hand's labels, comma-separated")
    parser.add_argument("--split", default="train", choices=("train", "heldout"))
    args = parser.parse_args()

    import numpy as np

    from device.handscan import read_hand
    from vision.classifier import CardClassifier
    from vision.synth.scenes import make_scene

    labels = args.cards.split(",")
    classifier = CardClassifier.load(args.deck)
    right = wrong = unsure = 0
    for seed in range(args.hands):
        frame, _ = make_scene(np.random.default_rng(seed), labels, deck=args.deck, split=args.split, apart=True)
        read, not_sure = read_hand(frame, classifier)
        matched = sum((Counter(read) & Counter(labels)).values())
        right, wrong, unsure = right + matched, wrong + len(read) - matched, unsure + not_sure
        print(f"hand {seed}: read {sorted(read)}, not sure {not_sure}", file=sys.stderr)
    total = args.hands * len(labels)
    print(f"{args.hands} hands of {len(labels)} ({args.deck}, {args.split}): {right}/{total} read right, "
          f"{wrong} read wrong, {unsure} not sure, {total - right - wrong - unsure} not found")


if __name__ == "__main__":
    main()
