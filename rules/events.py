"""Events: everything that can happen at a table, as the camera and the buttons report it.

A game's state is a fold of these over the initial state. They are plain immutable values; the
table-script line for each is in rules/script.py. `undo` is not an event: it takes an event back
out of the log (rules/match.py).
"""

from __future__ import annotations

from dataclasses import dataclass


# Flip 7 and Vengeance
@dataclass(frozen=True, slots=True)
class Card:
    """The next card turned from the deck; `to` names the player the table dealt it to."""
    label: str
    to: str | None = None


@dataclass(frozen=True, slots=True)
class Stop:
    player: str | None = None


@dataclass(frozen=True, slots=True)
class Target:
    """Answers a pending choice of player."""
    player: str


@dataclass(frozen=True, slots=True)
class Take:
    """Answers a pending choice of card: `player`'s card `label`."""
    player: str
    label: str


@dataclass(frozen=True, slots=True)
class SwapCards:
    a: str
    a_label: str
    b: str
    b_label: str


@dataclass(frozen=True, slots=True)
class Bonus:
    """Brutal mode: the Flip 7 player takes +15."""


@dataclass(frozen=True, slots=True)
class Penalize:
    """Brutal mode: the Flip 7 player takes 15 from `player`."""
    player: str


@dataclass(frozen=True, slots=True)
class Shuffle:
    """The discard pile was shuffled into a new deck."""


# UNO Flip
@dataclass(frozen=True, slots=True)
class Start:
    label: str


@dataclass(frozen=True, slots=True)
class Play:
    label: str
    player: str | None = None


@dataclass(frozen=True, slots=True)
class Color:
    color: str


@dataclass(frozen=True, slots=True)
class Draw:
    n: int | None = None


@dataclass(frozen=True, slots=True)
class Pass:
    pass


@dataclass(frozen=True, slots=True)
class Top:
    label: str


@dataclass(frozen=True, slots=True)
class Uno:
    player: str


@dataclass(frozen=True, slots=True)
class Caught:
    player: str


@dataclass(frozen=True, slots=True)
class Challenge:
    guilty: bool


@dataclass(frozen=True, slots=True)
class Hand:
    player: str
    labels: tuple[str, ...]


Event = (Card | Stop | Target | Take | SwapCards | Bonus | Penalize | Shuffle
         | Start | Play | Color | Draw | Pass | Top | Uno | Caught | Challenge | Hand)
