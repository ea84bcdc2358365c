"""Card labels and deck compositions, as data (docs/cards.md).

One label vocabulary is used everywhere: classifier outputs, the rules core, table scripts, JSON
and calibration folders. A deck is a list of labels plus how many copies of each one deck holds;
the engines look cards up here and never spell out compositions themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping


@dataclass(frozen=True)
class Deck:
    id: str
    labels: tuple[str, ...]          # classifier output order
    copies: Mapping[str, int]        # copies of each label in one deck
    kinds: Mapping[str, str]         # label -> "number" | "modifier" | "action" | ...
    # label -> its printed colour, where the colour is part of what the card is (UNO Flip's red 5
    # and yellow 5): every card of one colour is printed in the same ink. Empty for decks whose
    # colours only decorate (Flip 7's numbers).
    colours: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def size(self) -> int:
        return sum(self.copies.values())

    def kind(self, label: str) -> str:
        return self.kinds[label]

    def symbol(self, label: str) -> str:
        """What a card shows besides its colour (UNO Flip's red 5: "5"); a card without a colour
        is its own symbol."""
        colour = self.colours.get(label)
        return label[len(colour) + 1:] if colour else label


def _deck(id: str, entries: list[tuple[str, str, int]], colours: Mapping[str, str] | None = None) -> Deck:
    labels = tuple(label for label, _, _ in entries)
    if len(set(labels)) != len(labels):
        raise ValueError(f"deck {id}: duplicate labels")
    return Deck(
        id=id,
        labels=labels,
        copies=MappingProxyType({label: n for label, _, n in entries}),
        kinds=MappingProxyType({label: kind for label, kind, _ in entries}),
        colours=MappingProxyType(dict(colours or {})),
    )


def _flip7() -> Deck:
    entries = [("0", "number", 1)]
    entries += [(str(n), "number", n) for n in range(1, 13)]
    entries += [(m, "modifier", 1) for m in ("+2", "+4", "+6", "+8", "+10", "x2")]
    entries += [(a, "action", 3) for a in ("freeze", "flip-three", "second-chance")]
    return _deck("flip7", entries)


def _vengeance() -> Deck:
    entries = []
    for n in range(1, 14):
        # one 7 is the Unlucky 7 and one 13 is the Lucky 13
        entries.append((str(n), "number", n - 1 if n in (7, 13) else n))
    entries += [("zero", "number", 1), ("unlucky-7", "number", 1), ("lucky-13", "number", 1)]
    entries += [(m, "malus", 1) for m in ("/2", "-2", "-4", "-6", "-8", "-10")]
    entries += [(a, "action", 2) for a in ("just-one-more", "swap", "steal", "discard", "flip-four")]
    return _deck("flip7-vengeance", entries)


UNO_LIGHT_COLORS = ("red", "yellow", "green", "blue")
UNO_DARK_COLORS = ("pink", "teal", "orange", "purple")
UNO_LIGHT_SYMBOLS = ("draw-one", "reverse", "skip", "flip")
UNO_DARK_SYMBOLS = ("draw-five", "reverse", "skip-everyone", "flip")


def _uno_flip() -> Deck:
    """Faces, not physical cards: each of the 112 double-sided cards shows one light and one dark
    face; the 108 labels are the faces, with the copies of each face in the deck."""
    entries, colours = [], {}
    for colors, symbols, wilds in (
        (UNO_LIGHT_COLORS, UNO_LIGHT_SYMBOLS, ("wild", "wild-draw-two")),
        (UNO_DARK_COLORS, UNO_DARK_SYMBOLS, ("dark-wild", "wild-draw-color")),
    ):
        for color in colors:
            faces = [(f"{color}-{n}", "number", 2) for n in range(1, 10)]
            faces += [(f"{color}-{s}", "action", 2) for s in symbols]
            entries += faces
            colours.update((label, color) for label, _, _ in faces)
        entries += [(w, "wild", 4) for w in wilds]
    return _deck("uno-flip", entries, colours)


DECKS: Mapping[str, Deck] = MappingProxyType({d.id: d for d in (_flip7(), _vengeance(), _uno_flip())})

# Which deck each game is played with.
GAME_DECKS: Mapping[str, str] = MappingProxyType({
    "flip7": "flip7",
    "flip7-vengeance": "flip7-vengeance",
    "flip7-vengeance-brutal": "flip7-vengeance",
    "uno-flip": "uno-flip",
})


def deck_for(name: str) -> str:
    """The deck id a user means by `name`: a deck id or a game's name (flip7-vengeance-brutal is
    played with the flip7-vengeance deck), in any case. Raises ValueError saying which exist."""
    key = name.strip().lower()
    if key in GAME_DECKS:
        return GAME_DECKS[key]
    raise ValueError(f"unknown deck {name!r} (known: {', '.join(sorted(DECKS))})")


def label_to_dirname(label: str) -> str:
    """Calibration folders are named by label; `/2` cannot be a file name, so it is `div2`."""
    return label.replace("/", "div")


def dirname_to_label(name: str) -> str:
    return name.replace("div", "/") if name.startswith("div") else name
