"""Calibrate the classifier to your own deck: learn each card's look from a few photos.

FOLDER holds one sub-folder per label, named by the label (`/2` is written `div2`), with one or
more photos of that card: whole frames (the card is found in the picture, the largest one if
several) or tight crops. Where the deck's model sees a card in most of the photos, a photo it sees
no card in (held so close that only the card's middle is found, or a thing beside it) is left out,
and said so: photograph the whole card. Each photo is also learnt turned half round, since cards
lie either way up. Two or three photos per card, under the table's own light, read best.

  tablemate calibrate --deck flip7 --from my-deck/ --out flip7-profile.npz
  tablemate calibrate --deck flip7 --from retake/ --out flip7-profile.npz --update   # only retake/'s labels

Then: tablemate classify --deck flip7 --profile flip7-profile.npz IMAGE...  (also scan and run).
Prints per label what was learnt: photos used, and the other label that looks most alike with
its similarity (cosine; the closer to 1, the more often those two will be read "not sure"; a
label most alike to itself in another folder means a photo in the wrong folder). A label without
photos is read by the trained model alone, as far as the model reads the photos given (its
agreement, printed): in a deck printed unlike the model's training cards it is never named.

Exit status: 0 profile written; 1 written, but some photos were unusable or labels missing;
2 nothing written (no model, a folder not named by a label, no usable photo, a refused profile).
"""

from __future__ import annotations

import argparse
import logging
import sys

from vision.classify_cmd import add_deck_argument

log = logging.getLogger(__name__)

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp", ".tif", ".tiff")


def configure(parser: argparse.ArgumentParser) -> None:
    add_deck_argument(parser, "card deck")
    parser.add_argument("--from", dest="source", required=True, metavar="FOLDER",
                        help="one sub-folder of photos per label")
    parser.add_argument("--out", required=True, metavar="PROFILE", help="profile file to write (.npz)")
    parser.add_argument("--update", action="store_true",
                        help="update the profile at --out: the labels in FOLDER are learnt again, the others kept")
    parser.add_argument("--models-dir", metavar="DIR",
                        help="folder holding DECK.onnx and DECK.json (default: the bundled models)")


def largest_card(image):
    """The largest card quad located in `image` (where card_crop cuts the card), or None."""
    import cv2

    from vision.locate import find_cards

    quads = find_cards(image)
    return max(quads, key=lambda q: cv2.contourArea(q)) if quads else None


def card_crop(image, classifier=None):
    """(crop, seen): the card in a photo, and whether the deck's model (`classifier`) sees a card
    in it (vision.reading.sees_a_card; True without a classifier). The crop: the largest card found
    in it, else the whole image when it is card shaped (a tight crop, turned to portrait), else
    None (and seen False)."""
    import cv2

    from vision.geometry import CANON_H, CANON_W, warp_card
    from vision.reading import sees_a_card

    quad = largest_card(image)
    h, w = image.shape[:2]
    if quad is not None:
        crop = warp_card(image, quad)
    elif 0.6 <= min(h, w) / max(h, w) <= 0.85:  # a 63 x 88 mm card is 0.72
        whole = image if h >= w else cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE)
        crop = cv2.resize(whole, (CANON_W, CANON_H), interpolation=cv2.INTER_AREA)
    else:
        return None, False
    return crop, classifier is None or bool(sees_a_card(classifier, [crop])[0])


# A folder's photo in which the deck's model sees no card is left out where it sees a card in at
# least this share of the folder's photos: it sees the deck's cards, so that photo is cut at
# something else. (A printing the model does not see as cards at all, another edition's, say, is
# learnt from every photo, as before.)
MODEL_SEES_THE_DECK = 0.5


def model_sees_the_deck(seen) -> bool:
    """Whether the deck's model sees a card in enough of a folder's photos (`seen`: one bool per
    photo, card_crop's) that one it sees none in is cut at something else (MODEL_SEES_THE_DECK)."""
    seen = list(seen)
    return bool(seen) and sum(seen) >= MODEL_SEES_THE_DECK * len(seen)


def read_folder(source, deck: str, classifier=None):
    """({label: [crops]}, problems: list of str): each photo cut by card_crop; a photo `classifier`
    (the deck's model) sees no card in is left out where it sees a card in most of the folder's
    (MODEL_SEES_THE_DECK). Raises ValueError for a sub-folder that is not a label of the deck."""
    from pathlib import Path

    from rules.cards import DECKS, dirname_to_label, label_to_dirname
    from vision.classify_cmd import read_image

    root = Path(source)
    if not root.is_dir():
        raise ValueError(f"{root} is not a folder")
    labels = DECKS[deck].labels
    folders = sorted(p for p in root.iterdir() if p.is_dir())
    unknown = [p.name for p in folders if dirname_to_label(p.name.lower()) not in labels]
    if unknown:
        raise ValueError(f"{root}: sub-folders not named by a {deck} label: {', '.join(unknown)} "
                         f"(labels: {', '.join(label_to_dirname(lab) for lab in labels)})")
    cut, problems, counts = [], [], {}
    for i, folder in enumerate(folders, 1):
        label = dirname_to_label(folder.name.lower())
        photos = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        for photo in photos:
            image, problem = read_image(str(photo))
            crop, seen = card_crop(image, classifier) if image is not None else (None, False)
            if crop is None:
                problems.append(f"{photo}: {problem or 'no card found, and not a tight crop of one card'}")
                continue
            cut.append((label, photo, crop, seen))
        if not photos:
            problems.append(f"{folder}: no photos")
        counts[label] = len(photos)
        log.info("[%d/%d] %s: %d photo(s) read", i, len(folders), label, len(photos))
    sees_the_deck = model_sees_the_deck(seen for *_, seen in cut)
    crops = {}
    for label, photo, crop, seen in cut:
        if sees_the_deck and not seen:
            problems.append(f"{photo}: the model sees no card in it, though it does in the others (what was found "
                            f"may be a part of the card or a thing beside it): left out; photograph the whole card")
            continue
        crops.setdefault(label, []).append(crop)
    for label, photos in counts.items():
        log.info("%s: %d of %d photos used", label, len(crops.get(label, [])), photos)
    return crops, problems


def main(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    from vision.adapt import SUREST_PHOTOS, CalibratedClassifier, Profile, ProfileError, calibrate
    from vision.classifier import CardClassifier, ModelError

    try:
        if Path(args.out).is_dir():    # said before the learning, not after it
            raise ValueError(f"--out {args.out} is a folder: give the profile's file name, e.g. "
                             f"{Path(args.out) / (args.deck + '-profile.npz')}")
        classifier = CardClassifier.load(args.deck, args.models_dir)
        crops, problems = read_folder(args.source, args.deck, classifier)
        previous = Profile.load(args.out) if args.update else None
    except (ModelError, ProfileError, ValueError, OSError) as error:
        print(f"tablemate calibrate: {error}", file=sys.stderr)
        return 2
    for problem in problems:
        print(f"tablemate calibrate: {problem}", file=sys.stderr)
    if not crops:
        print(f"tablemate calibrate: no usable photo in {args.source}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    try:
        profile = calibrate(classifier, args.deck, crops, update=previous)
    except (ProfileError, ValueError, ModelError) as error:
        print(f"tablemate calibrate: {error}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - t0
    try:
        profile.save(Path(args.out))
    except OSError as error:
        print(f"tablemate calibrate: cannot write the profile {args.out}: {error}", file=sys.stderr)
        return 2
    print(f"{args.out}: {args.deck} profile, {sum(profile.counts.values())} photos of "
          f"{len(profile.counts)} labels learnt in {seconds:.2f} s" + (" (updated)" if args.update else ""))
    for line in summary(CalibratedClassifier(classifier, profile, args.deck), set(crops)):
        print(line)
    few = [label for label, n in profile.counts.items() if n < SUREST_PHOTOS]
    if few:
        print(f"{len(few)} of {len(profile.counts)} labels have fewer than {SUREST_PHOTOS} photos: one photo of each "
              f"card reads about 99 % of the cards accepted right, three about 99.8 % (models/calibration.md); "
              f"add photos and run this again")
    missing = profile.missing()
    if missing:
        print(f"not calibrated (read by the model alone, weighed by how well it reads the profile's "
              f"photos: agreement {profile.model_agreement:.2f}): {', '.join(missing)}")
    return 1 if problems or missing else 0


def summary(calibrated, learnt_now: set[str]) -> list[str]:
    """Per calibrated label: photos, and the most alike other label (cosine of the mean samples)."""
    import numpy as np

    profile = calibrated.profile
    present = [i for i, lab in enumerate(profile.labels) if profile.counts.get(lab, 0)]
    means = np.stack([calibrated.samples[calibrated.sample_labels == i].mean(0) for i in present])
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    sim = means @ means.T
    np.fill_diagonal(sim, -np.inf)
    lines = []
    for row, i in enumerate(present):
        label = profile.labels[i]
        near = int(np.argmax(sim[row])) if len(present) > 1 else None
        alike = f"most alike: {profile.labels[present[near]]} ({sim[row, near]:.2f})" if near is not None else ""
        mark = "*" if label in learnt_now else " "
        lines.append(f" {mark}{label:<16} {profile.counts[label]} photo(s)  {alike}")
    return lines
