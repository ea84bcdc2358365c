"""Reading a hand laid out under the camera (UNO Flip's end-of-round scoring): every card lying
apart in one frame, found and read as `tablemate scan` does. A card that cannot be read is
counted, never guessed."""

from __future__ import annotations


def hand_places(image, classifier) -> list:
    """(quad, reading) of each card of the hand, left to right, top to bottom: every place of the
    photo (vision.reading.read_photo) but those read as no card."""
    from vision.classifier import NO_CARD
    from vision.reading import read_photo

    places = [(q, p) for q, p in read_photo(classifier, image) if p.label is not None or p.reason != NO_CARD]
    return sorted(places, key=lambda qp: (float(qp[0][:, 0].mean()), float(qp[0][:, 1].mean())))


def read_hand(image, classifier) -> tuple[list[str], int]:
    """(labels read, left to right, top to bottom; how many cards could not be read)."""
    predictions = [prediction for _, prediction in hand_places(image, classifier)]
    return [p.label for p in predictions if p.label is not None], sum(p.label is None for p in predictions)
