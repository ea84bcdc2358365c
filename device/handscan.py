"""Reading a hand laid out under the camera (UNO Flip's end-of-round scoring): every card lying
apart in one frame, found and read as `tablemate scan` does. A card that cannot be read is
counted, never guessed."""

from __future__ import annotations


def read_hand(image, classifier) -> tuple[list[str], int]:
    """(labels read, left to right, top to bottom; how many cards could not be read)."""
    from vision.classifier import NO_CARD
    from vision.reading import read_photo

    places = sorted(read_photo(classifier, image), key=lambda qp: (float(qp[0][:, 0].mean()), float(qp[0][:, 1].mean())))
    predictions = [prediction for _, prediction in places]
    labels = [p.label for p in predictions if p.label is not None]
    unsure = sum(1 for p in predictions if p.label is None and p.reason != NO_CARD)
    return labels, unsure
