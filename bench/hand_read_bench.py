"""How well a hand laid apart under the camera is read (device/handscan.py: find, warp, classify),
on generated photos: the hand's cards read right, read wrong, "not sure", and not found, and the
cards read off the hand (the scene's neighbouring cards, or false ones).

    .venv/bin/python bench/hand_read_bench.py [--deck flip7] [--hands 8] [--split train]
    .venv/bin/python bench/hand_read_bench.py --deck uno-flip --cards red-3,blue-skip,wild,pink-7

UNO Flip's end-of-round scoring and `tablemate scan` rest on this; the device shows each hand read
for the table to confirm.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# Each deck's hand unless --cards names one (a number, a twin's look-alike, an action, a high card).
DEFAULT_HANDS = {"flip7": "3,9,freeze,12", "flip7-vengeance": "3,9,steal,13",
                 "uno-flip": "red-3,blue-skip,wild,pink-7"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deck", default="flip7")
    parser.add_argument("--hands", type=int, default=8, help="photos, seeds 0..N-1")
    parser.add_argument("--cards", help="the hand's labels, comma-separated (default: "
                        + "; ".join(f"{deck} {hand}" for deck, hand in DEFAULT_HANDS.items()) + ")")
    parser.add_argument("--split", default="train", choices=("train", "heldout"))
    args = parser.parse_args()

    import cv2
    import numpy as np

    from device.handscan import hand_places
    from vision.classifier import CardClassifier
    from vision.synth.scenes import make_scene

    classifier = CardClassifier.load(args.deck)
    labels = (args.cards or DEFAULT_HANDS.get(args.deck, ",".join(classifier.labels[:4]))).split(",")
    unknown = [label for label in labels if label not in classifier.labels]
    if unknown:
        parser.error(f"{', '.join(unknown)}: not {args.deck} labels (its labels: {', '.join(classifier.labels)})")
    tally = Counter()
    for seed in range(args.hands):
        frame, cards = make_scene(np.random.default_rng(seed), labels, deck=args.deck, split=args.split, apart=True)
        # The hand scan's places (device.handscan), each matched to the hand's card its centre
        # lies on: a reading on none of them is a card of the table's beside the hand (the
        # scene's neighbouring cards) or a false card.
        outlines = [card.quad.reshape(-1, 1, 2).astype(np.float32) for card in cards]
        at_card = {}
        for quad, prediction in hand_places(frame, classifier):
            centre = tuple(map(float, quad.mean(0)))
            on = [i for i, outline in enumerate(outlines) if cv2.pointPolygonTest(outline, centre, False) > 0]
            if on:
                at_card.setdefault(on[0], prediction)
            else:
                tally["elsewhere"] += 1
        for i, card in enumerate(cards):
            got = at_card.get(i)
            tally["not found" if got is None else "not sure" if got.label is None
                  else "right" if got.label == card.label else "wrong"] += 1
        print(f"hand {seed}: " + ", ".join(f"{card.label} -> {(at_card[i].label or at_card[i].reason) if i in at_card else 'not found'}"
                                          for i, card in enumerate(cards)), file=sys.stderr)
    total = args.hands * len(labels)
    print(f"{args.hands} hands of {len(labels)} ({args.deck}, {args.split}): {tally['right']}/{total} read right, "
          f"{tally['wrong']} read wrong, {tally['not sure']} not sure, {tally['not found']} not found; "
          f"{tally['elsewhere']} cards read off the hand (the table's cards beside it, or false)")


if __name__ == "__main__":
    main()
