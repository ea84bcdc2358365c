"""Identify the card in each image.

Each IMAGE shows one card anywhere in the picture, or is a tight crop of one card. One JSON
object per image is printed on its own line:

  {"image": PATH, "label": LABEL or null, "confidence": 0.0-1.0, "reason": null or TEXT}

label is null, with a reason, when the card is not read: "no card" (nothing that looks like a
card), "not sure" (the model will not guess), or why the image could not be read.

Exit status: 0 every image was read; 1 some image could not be read (the others are still
classified); 2 the model or the --profile could not be loaded.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

log = logging.getLogger(__name__)

MIN_SIDE_PX = 4     # a picture narrower than this shows no card (OpenCV's locating refuses it)


def add_deck_argument(parser: argparse.ArgumentParser, help: str = "card deck the model is for") -> None:
    """--deck: a deck id or a game's name, in any case (rules.cards.deck_for); an unknown one is
    refused naming the decks there are (not as a model file that is missing)."""
    from rules.cards import DECKS, deck_for

    def deck(text: str) -> str:
        try:
            return deck_for(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    parser.add_argument("--deck", default="flip7", type=deck, metavar="DECK",
                        help=f"{help}: {', '.join(sorted(DECKS))} (or a game's name; default: flip7)")


def configure(parser: argparse.ArgumentParser) -> None:
    add_deck_argument(parser)
    parser.add_argument("--models-dir", metavar="DIR",
                        help="folder holding DECK.onnx and DECK.json (default: the bundled models)")
    parser.add_argument("--profile", metavar="PROFILE",
                        help="calibration profile of your own deck (tablemate calibrate)")
    parser.add_argument("images", nargs="+", metavar="IMAGE", help="photo or crop of one card")


def main(args: argparse.Namespace) -> int:
    from vision.adapt import ProfileError, load_classifier
    from vision.classifier import ModelError

    try:
        classifier = load_classifier(args.deck, args.models_dir, args.profile)
    except (ModelError, ProfileError) as error:
        print(f"tablemate classify: {error}", file=sys.stderr)
        return 2
    status = 0
    for i, path in enumerate(args.images, 1):
        image, problem = read_image(path)
        if image is None:
            print(f"tablemate classify: {path}: {problem}", file=sys.stderr)
            result = {"image": path, "label": None, "confidence": 0.0, "reason": problem}
            status = 1
        else:
            prediction = read_single_card(classifier, image)
            result = {"image": path, "label": prediction.label,
                      "confidence": round(prediction.confidence, 4), "reason": prediction.reason}
        print(json.dumps(result), flush=True)
        if i % 100 == 0:
            log.info("%d of %d images classified", i, len(args.images))
    return status


def read_image(path: str):
    """(BGR image, None) or (None, why it cannot be read). The file is read once and decoded
    from memory (imdecode, like imread, turns a photo by its EXIF orientation)."""
    import os
    import stat

    import cv2
    import numpy as np

    from vision.locate import WORK_LONG_SIDE

    try:
        # (Opened without waiting: a FIFO named x.jpg would block open() until a writer came.)
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                return None, ("unreadable image: it is a folder" if stat.S_ISDIR(info.st_mode)
                              else "unreadable image: not a file (a pipe, socket or device)")
            if info.st_size == 0:
                return None, "unreadable image: the file is empty"
            if not cv2.haveImageReader(path):   # (its first bytes: a video is not read whole)
                return None, "unreadable image: not an image file OpenCV can decode"
            data = f.read()
    except FileNotFoundError:
        return None, "unreadable image: no such file"
    except IsADirectoryError:
        return None, "unreadable image: it is a folder"
    except OSError as error:
        return None, f"unreadable image: {error.strerror or error}"
    if _jpeg_cut_short(data):
        # (imread decodes what there is and greys the rest, with a warning only libjpeg prints;
        # imdecode may do that or give nothing: either way the file is what is wrong.)
        return None, "unreadable image: the JPEG file ends before its picture does (copied or saved only in part?)"
    try:
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    except cv2.error as error:      # (OpenCV's own text is an assertion: what it says is kept short)
        if "validateInputImageSize" in str(error):
            return None, "unreadable image: its header claims a picture larger than OpenCV decodes (2^30 pixels)"
        return None, f"unreadable image: OpenCV cannot decode it ({str(error).strip().splitlines()[-1][:80]})"
    if image is None or image.size == 0:
        return None, "unreadable image: not an image file OpenCV can decode"
    height, width = image.shape[:2]
    # (Its short side as the locator shrinks it, too: 4x3000 pixels become a picture 1 pixel high.)
    if min(height, width) * min(1.0, WORK_LONG_SIDE / max(height, width)) < MIN_SIDE_PX:
        return None, f"unreadable image: {width}x{height} pixels is too small to show a card"
    return image, None


def _jpeg_cut_short(data: bytes) -> bool:
    """A JPEG without an end-of-image marker after its last scan (an EXIF thumbnail ends
    early in the file: only the main picture's end counts)."""
    if not data.startswith(b"\xff\xd8"):
        return False
    return data.rfind(b"\xff\xd9") < data.rfind(b"\xff\xda")


def read_single_card(classifier, image):
    """The one card in the image: located anywhere in it, or the whole image as a tight crop.

    Every located card and the whole picture are classified in one batch; the most confident
    accepted reading wins. If none is accepted, "not sure" (something card-like that the model
    will not name) is reported before "no card"."""
    import cv2

    from vision.classifier import NOT_SURE
    from vision.geometry import CANON_H, CANON_W, warp_card
    from vision.locate import find_cards

    crops = [warp_card(image, quad) for quad in find_cards(image)[:4]]
    whole = image if image.shape[0] >= image.shape[1] else cv2.rotate(image, cv2.ROTATE_90_CLOCKWISE)
    crops.append(cv2.resize(whole, (CANON_W, CANON_H), interpolation=cv2.INTER_AREA))
    predictions = classifier.classify_batch(crops)
    accepted = [p for p in predictions if p.label is not None]
    if accepted:
        return max(accepted, key=lambda p: p.confidence)
    unsure = [p for p in predictions if p.reason == NOT_SURE]
    return max(unsure or predictions, key=lambda p: p.confidence)
