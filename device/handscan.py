"""Reading a hand laid out under the camera (UNO Flip's end-of-round scoring): every card lying
apart in one frame, found and read as `tablemate scan` does. A card that cannot be read is
counted, never guessed."""

from __future__ import annotations


def read_hand(image, classifier) -> tuple[list[str], int]:
    """(labels read, left to right, top to bottom; how many cards could not be read)."""
    from vision.classifier import NO_CARD
    from vision.geometry import warp_card
    from vision.locate import find_cards

    quads = sorted(find_cards(image), key=lambda q: (float(q[:, 0].mean()), float(q[:, 1].mean())))
    predictions = classifier.classify_batch([warp_card(image, q) for q in quads]) if quads else []
    labels = [p.label for p in predictions if p.label is not None]
    unsure = sum(1 for p in predictions if p.label is None and p.reason != NO_CARD)
    return labels, unsure
