"""Find and identify every card lying apart in one photo.

Prints one JSON object:

  {"cards": [{"label": LABEL or null, "confidence": 0.0-1.0, "reason": null or TEXT,
              "corners": [[x, y], [x, y], [x, y], [x, y]]}, ...], "score": N or null}

Corners are image pixels, clockwise from the card's top-left as it lies (long side vertical).
Each card is read as the placement detector reads one (vision.reading: both ways up, and a
second look at outlines a little off one the model is not sure of). A card the model will not
name has label null and reason "not sure"; shapes the model says are no card are left out.
With --score, "score" is what the cards seen are worth: for flip7 the
Flip 7 score of the row (numbers summed, x2 doubles them, +N added, +15 for seven different
numbers), for flip7-vengeance the Vengeance score of the row (docs/vengeance.md: halved per /2,
minus the malus, not below 0, +15 for seven numbers; a row as it stands, not busted), for uno-flip
the points of the cards as a hand left at the end of a round. It is null when a card could not be
read, because a guessed score is worse than none.

Exit status: 0 read; 1 the image could not be read; 2 the model or the --profile could not be loaded.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from vision.classify_cmd import add_deck_argument

log = logging.getLogger(__name__)


def configure(parser: argparse.ArgumentParser) -> None:
    add_deck_argument(parser)
    parser.add_argument("--models-dir", metavar="DIR",
                        help="folder holding DECK.onnx and DECK.json, and card-mask.onnx where it has one "
                             "(default: the bundled models)")
    parser.add_argument("--profile", metavar="PROFILE",
                        help="calibration profile of your own deck (tablemate calibrate)")
    parser.add_argument("--score", action="store_true",
                        help="add what the cards seen score: the row's score (flip7, flip7-vengeance), "
                        "the points of a hand left at the end of a round (uno-flip)")
    parser.add_argument("image", metavar="IMAGE", help="photo of cards lying apart on a table")


def scorer(deck: str):
    """What --score gives for the deck, from the rules core."""
    from rules.flip7 import score_row as flip7_row
    from rules.uno_flip import score_hand
    from rules.vengeance import score_row as vengeance_row

    return {"flip7": flip7_row, "flip7-vengeance": vengeance_row, "uno-flip": score_hand}[deck]


def main(args: argparse.Namespace) -> int:
    from vision.adapt import ProfileError, load_classifier
    from vision.card_mask import use_models_dir
    from vision.classifier import NO_CARD, ModelError
    from vision.classify_cmd import read_image
    from vision.reading import read_photo

    try:
        classifier = load_classifier(args.deck, args.models_dir, args.profile)
        use_models_dir(args.models_dir)     # its card mask network too, where it has one
    except (ModelError, ProfileError) as error:
        print(f"tablemate scan: {error}", file=sys.stderr)
        return 2
    image, problem = read_image(args.image)
    if image is None:
        print(f"tablemate scan: {args.image}: {problem}", file=sys.stderr)
        return 1
    cards = []
    for quad, prediction in sorted(read_photo(classifier, image), key=lambda qp: (qp[0][:, 0].mean(), qp[0][:, 1].mean())):
        if prediction.reason == NO_CARD:
            continue
        cards.append({"label": prediction.label, "confidence": round(prediction.confidence, 4),
                      "reason": prediction.reason,
                      "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in quad]})
    log.info("%s: %d cards found, %d read", args.image, len(cards), sum(c["label"] is not None for c in cards))
    score = None
    if args.score:
        if all(c["label"] is not None for c in cards):
            score = scorer(args.deck)([c["label"] for c in cards])
        else:
            print("tablemate scan: a card could not be read, so no score is given", file=sys.stderr)
    print(json.dumps({"cards": cards, "score": score}))
    return 0
