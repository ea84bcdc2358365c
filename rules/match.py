"""A match: a game's configuration, the events accepted so far, and the state they fold to.

Replay, undo and crash recovery are one mechanism: the state is always the fold of the accepted
events over the initial state. Undo drops the last event and folds again from a checkpoint (a copy
of the state kept every CHECKPOINT_EVERY events, and every UNDO_STEP events of what an undo folds
again, so undos in a row fold a few events each); old checkpoints are thinned to a few per power of
two of events back, so a long game keeps a handful of copies, not thousands. The device's log is
the same event list written as a table script.
"""

from __future__ import annotations

from typing import Any, Iterable

import importlib

from rules.core import GameConfig, Notice, Refused, RoundResult

# game id -> "module:EngineClass"; see rules/__init__.py for what an engine provides
ENGINES: dict[str, str] = {
    "flip7": "rules.flip7:Flip7State",
    "flip7-vengeance": "rules.vengeance:VengeanceState",
    "flip7-vengeance-brutal": "rules.vengeance:BrutalVengeanceState",
    "uno-flip": "rules.uno_flip:UnoFlipState",
}

CHECKPOINT_EVERY = 256     # an undo refolds at most this many events (well under a millisecond)
UNDO_STEP = 16             # what an undo folds again is checkpointed this often: the next undo folds fewer
RECENT = 4                 # checkpoints of CHECKPOINT_EVERY kept whatever their age


_ENGINE_CLASSES: dict[str, type] = {}    # game id -> its engine class, once imported


def engine_class(game: str):
    cls = _ENGINE_CLASSES.get(game)
    if cls is None:
        module_name, _, class_name = ENGINES[game].partition(":")
        try:
            cls = getattr(importlib.import_module(module_name), class_name)
        except (ImportError, AttributeError):
            raise ValueError(f"the game {game} is not supported yet") from None
        _ENGINE_CLASSES[game] = cls
    return cls


def new_state(config: GameConfig):
    """The state before any event. Raises ValueError for options the game does not accept."""
    return engine_class(config.game)(config)


class Match:
    __slots__ = ("config", "state", "events", "_undos", "_checkpoints")

    def __init__(self, config: GameConfig):
        self.config = config
        self.state = new_state(config)
        self.events: list = []
        self._undos = 0
        # event count -> the state before those events; the one before any event is None: it is
        # new_state(config), made again if an undo goes back that far rather than copied at the
        # start of every match
        self._checkpoints: dict[int, Any] = {0: None}

    @classmethod
    def replay(cls, config: GameConfig, events: Iterable) -> "Match":
        """Fold events that were all accepted before (a log); raises Refused if one is not."""
        match = cls(config)
        for event in events:
            match.apply(event)
        return match

    def apply(self, event) -> list[Notice]:
        """Apply one event; on Refused the match is exactly as it was."""
        notices = self.state.apply(event)
        events = self.events
        events.append(event)
        if not len(events) % CHECKPOINT_EVERY:
            self._checkpoints[len(events)] = self.state.clone()
            self._thin(len(events))
        return notices

    def _thin(self, n: int) -> None:
        """Keep, of the checkpoints before `n`, the RECENT last of CHECKPOINT_EVERY and older ones
        spaced by a power of two no more than a quarter of their age (0 always): a handful."""
        for count in list(self._checkpoints):
            age, k = (n - count) // CHECKPOINT_EVERY, count // CHECKPOINT_EVERY
            if count % CHECKPOINT_EVERY or (age >= RECENT and k % (1 << max(0, (age // 4).bit_length() - 1))):
                del self._checkpoints[count]

    def undo(self):
        """Take back the last accepted event and return it."""
        if not self.events:
            raise Refused("there is nothing to undo")
        undone = self.events.pop()
        n = len(self.events)
        for count in [c for c in self._checkpoints if c > n]:
            del self._checkpoints[count]
        start = max(self._checkpoints)
        checkpoint = self._checkpoints[start]
        state = checkpoint.clone() if checkpoint is not None else new_state(self.config)
        for count in range(start + 1, n + 1):
            state.apply(self.events[count - 1])
            if not (count - start) % UNDO_STEP and count < n:
                self._checkpoints[count] = state.clone()
        self.state = state
        self._undos += 1
        return undone

    @property
    def version(self) -> int:
        """Counts changes (applies and undos): a view of the state is stale when it moves. Each
        apply adds an event, each undo takes one away and counts itself twice; so no counting
        when an event is applied."""
        return len(self.events) + 2 * self._undos

    # ---- what the table sees -------------------------------------------------------------
    @property
    def over(self) -> bool:
        return self.state.over

    @property
    def rounds(self) -> list[RoundResult]:
        return self.state.results

    @property
    def totals(self) -> dict[str, int]:
        return dict(zip(self.state.players, self.state.totals))

    @property
    def winner(self) -> str | None:
        return self.state.winner_name

    def summary(self) -> dict[str, Any]:
        """The `tablemate replay --json` object (without `errors`)."""
        return {
            "game": self.config.game,
            "players": list(self.config.players),
            "rounds": [r.to_json() for r in self.rounds],
            "totals": self.totals,
            "winner": self.winner,
            "state": self.state.summary(),
        }
