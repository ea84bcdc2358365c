"""Properties every engine must have, checked over seeded random games with random legal choices.

The per-game property tests (tests/test_*_properties.py) call these with their own configs,
random tables and illegal events. `new_match(seed)` and `new_table(seed)` build a game and the
random table that plays it.
"""

from __future__ import annotations

import json
import random
from typing import Callable

import pytest

from rules.core import Refused
from rules.match import Match


def assert_replay_equals_incremental(new_match: Callable, new_table: Callable, seeds: range) -> None:
    """Folding a finished game's event list again gives the state the game reached step by step."""
    for seed in seeds:
        table, match = new_table(seed), new_match(seed)
        while not match.over:
            match.apply(table.next_event(match.state))
        assert Match.replay(match.config, match.events).state.to_dict() == match.state.to_dict()


def assert_refusals_change_nothing(new_match: Callable, new_table: Callable, illegal_events: Callable,
                                   seeds: range, sample: float = 1.0) -> None:
    """Every event `illegal_events(state, rng)` lists is refused, with a reason, and leaves the
    state exactly as it was (checked in a `sample` share of the states, to keep the test quick)."""
    for seed in seeds:
        rng = random.Random(seed)
        table, match = new_table(seed), new_match(seed)
        while True:
            if match.over or rng.random() < sample:
                before = match.state.to_dict()
                for event in illegal_events(match.state, rng):
                    with pytest.raises(Refused) as refusal:
                        match.apply(event)
                    assert refusal.value.reason
                    assert match.state.to_dict() == before, f"refused {event} changed the state"
            if match.over:
                break
            match.apply(table.next_event(match.state))


def assert_undo_restores(new_match: Callable, new_table: Callable, seeds: range, chance: float = 0.15) -> None:
    """Undo after an event gives back exactly the state before it (and returns that event)."""
    for seed in seeds:
        rng = random.Random(seed)
        table, match = new_table(seed), new_match(seed)
        while not match.over:
            before = match.state.to_dict()
            event = table.next_event(match.state)
            match.apply(event)
            if rng.random() < chance:
                assert match.undo() == event
                assert match.state.to_dict() == before
                match.apply(event)


def assert_saving_round_trips(new_match: Callable, new_table: Callable, seeds: range, every: int = 7) -> None:
    """Every `every` events: the state survives JSON; the restored state and a clone play on
    alike; the summary is JSON; the original is untouched by what its clone does."""
    for seed in seeds:
        table, match = new_table(seed), new_match(seed)
        step = 0
        while not match.over:
            match.apply(table.next_event(match.state))
            step += 1
            if step % every or match.over:
                continue
            state = match.state
            restored = type(state).from_dict(json.loads(json.dumps(state.to_dict())))
            assert restored.to_dict() == state.to_dict()
            assert json.loads(json.dumps(state.summary())) == restored.summary()
            twin, before = state.clone(), state.to_dict()
            legal = twin.legal_events()
            if not legal:
                continue
            event = random.Random(seed * 1000 + step).choice(legal)
            for s in (restored, twin):
                s.apply(event)
            assert restored.to_dict() == twin.to_dict()
            assert state.to_dict() == before
