"""Types shared by every game engine: refusals, pending choices, notices, round results, config."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any


class Refused(Exception):
    """An event that cannot happen now. `reason` is a sentence a player understands; the state
    that refused it is exactly as it was before."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Pending:
    """A choice the table must make before play goes on.

    kind: "target" (a player), "card", "swap", "flip7", "color", "draw" or "hand"; `by` chooses
    among `options`; `card` is the card the choice is for (e.g. "freeze")."""
    kind: str
    by: str
    options: tuple
    card: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "by": self.by, "options": list(self.options), "card": self.card}


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the table should notice (the device flashes these): bust, flip7, freeze,
    second_chance_used, round_over, game_over, shuffled, discarded, ..."""
    kind: str
    player: str | None = None
    detail: Any = None


# A Notice, or a Pending, of these values (all hashable), made once and shared: they are
# immutable, the same ones recur game after game (("stop", "ann", 12), a Freeze for ann to give),
# and building a frozen dataclass costs several times a cache look-up. The engines make theirs
# with these; one holding something unhashable (a round's result, lists of cards) is built as
# Notice(...) or Pending(...). Not typed (a typed look-up costs four times as much), so values
# equal across types would share an entry: no detail is ever a bool or a float (1 == True == 1.0;
# tests/test_rules_shortcuts.py checks every notice of random games).
notice = lru_cache(maxsize=4096)(Notice)
pending_choice = lru_cache(maxsize=1024)(Pending)


@dataclass(frozen=True, slots=True)
class RoundResult:
    round: int
    dealer: str
    scores: dict[str, int]
    flip7: str | None
    busted: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"round": self.round, "dealer": self.dealer, "scores": dict(self.scores),
                "flip7": self.flip7, "busted": list(self.busted)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "RoundResult":
        return cls(d["round"], d["dealer"], dict(d["scores"]), d["flip7"], tuple(d["busted"]))


def shorten(text: str, limit: int = 40) -> str:
    """`text` as a message quotes it: at most `limit` characters, the rest an ellipsis (a
    line of a million characters in a log must not become a message of a million)."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def whole_number(word: str, lowest: int, highest: int, what: str) -> int:
    """`word` as a whole number from `lowest` to `highest` in ASCII digits (a `²` or an Arabic-
    Indic digit passes str.isdigit, and a number of 5,000 digits would not even convert); else
    ValueError saying what `what` must be."""
    digits = word.lstrip("0") or "0"
    if not (word.isascii() and word.isdigit()) or len(digits) > len(str(highest)) \
            or not lowest <= int(digits) <= highest:
        raise ValueError(f"{what} must be a whole number from {lowest} to {highest}, not {shorten(word)!r}")
    return int(digits)


GAMES = ("flip7", "flip7-vengeance", "flip7-vengeance-brutal", "uno-flip")
NAME_RE = re.compile(r"^[\w-]+\Z")      # letters (any alphabet: Jörg, Zoë), digits, _ and -

# How many may play each game: (fewest, most or None). The one rule `replay`, `run` and the
# device's players menu use. Flip 7's rulebook says 3-18 and a second deck's cards beyond 18
# (rules/flip7.py parse_decks: two decks unless the option says otherwise); it plays as well with
# two, so two are allowed. UNO Flip's rule sheet: 2-10.
PLAYER_RANGES: dict[str, tuple[int, int | None]] = {
    "flip7": (2, None), "flip7-vengeance": (2, None), "flip7-vengeance-brutal": (2, None), "uno-flip": (2, 10),
}


def player_count_problem(game: str, count: int) -> str | None:
    """Why `count` players cannot play `game` (the same words wherever it is refused), or None."""
    low, high = PLAYER_RANGES[game]
    if low <= count and (high is None or count <= high):
        return None
    allowed = f"{low} to {high} players" if high is not None else f"{low} players or more"
    return f"{game} is played by {allowed}, not {count}"


@dataclass(frozen=True)
class GameConfig:
    """What a game is before any event: the header of a table script."""
    game: str
    players: tuple[str, ...]
    dealer: str | None = None
    options: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.game not in GAMES:
            raise ValueError(f"unknown game {self.game!r} (known: {', '.join(GAMES)})")
        problem = player_count_problem(self.game, len(self.players))
        if problem:
            raise ValueError(problem)
        seen = set()
        for name in self.players:
            if not NAME_RE.match(name):
                raise ValueError(f"player name {name!r} may only use letters, digits, - and _")
            if name.lower() in seen:
                raise ValueError(f"player {name!r} is named twice")
            seen.add(name.lower())
        if self.dealer is not None and self.dealer not in self.players:
            raise ValueError(f"dealer {self.dealer!r} is not one of the players")

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game, "players": list(self.players), "dealer": self.dealer,
                "options": dict(self.options)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "GameConfig":
        return cls(d["game"], tuple(d["players"]), d.get("dealer"), dict(d.get("options", {})))


def seat_map(players: tuple[str, ...]) -> dict[str, int]:
    """Name -> seat index, under the name as written and in lower case (names are case-insensitive)."""
    seats = {name.lower(): i for i, name in enumerate(players)}
    seats.update({name: i for i, name in enumerate(players)})
    return seats


def lookup(table: dict[str, Any], key: str, refusal: str) -> Any:
    """table[key], else table[key.lower()] (a table-script word in any case); Refused(refusal)
    when neither is there."""
    value = table.get(key)
    if value is None:
        value = table.get(key.lower())
        if value is None:
            raise Refused(refusal)
    return value


def seat_of(seats: dict[str, int], name: str) -> int:
    """The seat of `name` in a `seat_map`; Refused when nobody is called that."""
    return lookup(seats, name, f"there is no player called {name}")


def save_state(state, fields: tuple[str, ...], version: int) -> dict[str, Any]:
    """An engine's state as versioned JSON-able data: the named fields plus the round results."""
    d = {name: copy.deepcopy(getattr(state, name)) for name in fields}
    d["results"] = [r.to_json() for r in state.results]
    return {"version": version, "game": state.game, "players": list(state.players), "state": d}


def load_state(cls, data: dict[str, Any], fields: tuple[str, ...], version: int):
    """The inverse of save_state; ValueError (saying what is wrong) for another version or game
    or a field missing. The engine restores in-memory types its fields need afterwards."""
    if data.get("version") != version or data.get("game") != cls.game:
        raise ValueError(f"not a version-{version} {cls.game} state")
    d = data["state"]
    missing = [name for name in fields + ("results",) if name not in d]
    if missing:
        raise ValueError(f"state is missing {', '.join(missing)}")
    state = cls.__new__(cls)
    state.players = tuple(data["players"])
    state.seat = seat_map(state.players)
    for name in fields:
        setattr(state, name, copy.deepcopy(d[name]))
    state.results = [RoundResult.from_json(r) for r in d["results"]]
    return state
