"""Random playthroughs: a seeded table that deals from a shuffled physical deck and makes random
legal choices. The property tests and the benchmark drive every engine through this."""

from __future__ import annotations

import random

from rules.core import GameConfig
from rules.events import Card, Stop, Target
from rules.match import Match


STOP = Stop()
CARDS: dict[str, Card] = {}             # events are immutable values: one per label serves every draw


class RandomTable:
    """The people at a table: they shuffle the cards the tracker says are in the deck, turn them
    over one by one, and decide at random (stopping once a round score reaches `greed`)."""

    def __init__(self, seed: int, greed: int | None = None):
        self.rng = random.Random(seed)
        self.greed = greed if greed is not None else self.rng.randrange(10, 45)
        self.pile: list[Card] = []

    def next_card(self, state) -> Card:
        if not self.pile:               # the first deck, or the discard pile shuffled into a new one
            labels, counts, _ = state.draw_pile()
            self.pile = [CARDS.setdefault(labels[i], Card(labels[i])) for i, c in enumerate(counts) for _ in range(c)]
            self.rng.shuffle(self.pile)
        return self.pile.pop()

    def next_event(self, state):
        pending = state.pending
        if pending is not None:
            return Target(self.rng.choice(pending.options))
        if state.stop_allowed() and (state.turn_score() >= self.greed or self.rng.random() < 0.05):
            return STOP
        return self.next_card(state)


def random_game(config: GameConfig, seed: int, max_events: int = 100_000) -> Match:
    table = RandomTable(seed)
    match = Match(config)
    state, apply, next_event = match.state, match.apply, table.next_event   # no undo here: state stays
    for _ in range(max_events):
        if state.over:
            break
        apply(next_event(state))
    return match
