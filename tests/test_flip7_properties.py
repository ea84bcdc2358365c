"""Properties of the Flip 7 engine over thousands of seeded random games with random legal choices
(in the spirit of OpenSpiel's random-playthrough tests)."""

from __future__ import annotations

import random

import pytest

from rules.core import GameConfig
from rules.events import Card, Stop, Target
from rules.flip7 import LABELS, Flip7State
from game_properties import (assert_refusals_change_nothing, assert_replay_equals_incremental,
                             assert_saving_round_trips, assert_undo_restores)
from rules.match import Match
from rules.random_play import RandomTable

GAMES = 2000


def configs(seed: int) -> GameConfig:
    rng = random.Random(seed)
    n = rng.choice([2, 2, 3, 4, 4, 5, 6, 8, 18])   # (one player: refused, rules.core PLAYER_RANGES)
    players = tuple(f"p{i}" for i in range(n))
    options = {"set_aside_after_bust": rng.choice(["play", "discard"])}
    return GameConfig("flip7", players, dealer=rng.choice(players), options=options)




def new_match(seed: int) -> Match:
    return Match(configs(seed))
def check_invariants(state: Flip7State) -> None:
    # card conservation: deck + discard + table (+ set aside, + a drawn card awaiting its target)
    assert state.cards_everywhere() == state.full_deck()
    # exactly one of: game over, a player on turn, a pending choice
    assert [state.over, state.turn is not None, state.pending is not None].count(True) == 1
    if state.pending is not None:
        assert len(state.pending.options) >= 2, "a choice with one legal answer is made automatically"


def illegal_events(state: Flip7State, rng: random.Random) -> list:
    """Events the rules must refuse in this state."""
    events = []
    gone = [label for label in LABELS if label not in state.card_counts()]
    if gone:
        events.append(Card(rng.choice(gone)))
    events.append(Card("13"))
    if state.pending is None:
        events.append(Target(state.players[0]))
    else:
        events.append(Stop())
        events.append(Card(rng.choice(list(state.card_counts()))))
        outside = [p for p in state.players if p not in state.pending.options]
        if outside:
            events.append(Target(outside[0]))
    if not state.over and state.pending is None and not state.stop_allowed():
        events.append(Stop())
    out = [p for p, s in state.status.items() if s != "active"]
    if out and not state.over and state.pending is None:
        events.append(Card(rng.choice(list(state.card_counts())), to=out[0]))
        events.append(Stop(out[0]))
    return events


@pytest.mark.parametrize("chunk", range(4))
def test_random_games_conserve_cards_and_keep_one_phase(chunk: int) -> None:
    for seed in range(chunk * GAMES // 4, (chunk + 1) * GAMES // 4):
        table = RandomTable(seed)
        match = Match(configs(seed))
        check_invariants(match.state)
        while not match.over:
            match.apply(table.next_event(match.state))
            check_invariants(match.state)
        assert match.winner is not None
        assert max(match.totals.values()) >= 200
        assert list(match.totals.values()).count(max(match.totals.values())) == 1
        # the totals are the sums of the round scores
        for name, total in match.totals.items():
            assert total == sum(r.scores[name] for r in match.rounds)


def test_replay_of_the_event_list_equals_the_incremental_state() -> None:
    assert_replay_equals_incremental(new_match, RandomTable, range(300))

def test_refused_events_change_nothing() -> None:
    assert_refusals_change_nothing(new_match, RandomTable, illegal_events, range(80))

def test_undo_restores_the_previous_state() -> None:
    assert_undo_restores(new_match, RandomTable, range(100))

def test_serialise_round_trips_and_clone_is_independent() -> None:
    assert_saving_round_trips(new_match, RandomTable, range(100))

def test_from_dict_refuses_a_damaged_state() -> None:
    state = Flip7State(GameConfig("flip7", ("a", "b")))
    data = state.to_dict()
    del data["state"]["deck"]
    with pytest.raises(ValueError, match="missing deck"):
        Flip7State.from_dict(data)
    with pytest.raises(ValueError):
        Flip7State.from_dict({"version": 99, "game": "flip7"})


# ---- bust odds against brute force through the engine itself ---------------------------------

def brute_force_next_card(state: Flip7State) -> float:
    """Try every card the deck could turn next on a copy of the state; weight the busts."""
    counts = state.card_counts()
    total = sum(counts.values())
    who = state.turn
    busts = 0
    for label, copies in counts.items():
        twin = state.clone()
        notices = twin.apply(Card(label))
        if any(n.kind == "bust" and n.player == who for n in notices):
            busts += copies
    return busts / total


def brute_force_flip_three(state: Flip7State, target: str, left: int | None = None) -> float:
    """Enumerate every sequence of the cards still to come in this Flip Three through the engine.
    (A further Flip Three already queued for the same target is a Flip Three of its own.)"""
    frame = state.stack[-1] if state.stack else None
    if state.turn != target or frame is None or frame[0] != "flip":
        return 0.0
    if left is not None and frame[2] != left:
        return 0.0                                      # this Flip Three ended; another one began
    left = frame[2]
    counts = state.card_counts()
    total = sum(counts.values())
    p = 0.0
    for label, copies in counts.items():
        twin = state.clone()
        notices = twin.apply(Card(label))
        while twin.pending is not None:                 # an extra Second Chance given away
            notices += twin.apply(Target(twin.pending.options[0]))
        if any(n.kind == "bust" and n.player == target for n in notices):
            p += copies / total
        elif not any(n.kind == "flip7" for n in notices):
            p += copies / total * brute_force_flip_three(twin, target, left - 1)
    return p


def test_bust_odds_equal_a_brute_force_count() -> None:
    checked = 0
    for seed in range(120):
        table = RandomTable(seed)
        match = Match(configs(seed))
        while not match.over:
            state = match.state
            if state.turn is not None and state.stack == []:
                assert state.bust_odds() == pytest.approx(brute_force_next_card(state), abs=1e-12)
                checked += 1
            match.apply(table.next_event(state))
    assert checked > 5_000


def test_flip_three_bust_odds_equal_a_brute_force_enumeration() -> None:
    checked = 0
    for seed in range(400):
        table = RandomTable(seed)
        match = Match(configs(seed))
        while not match.over and checked < 25:
            state = match.state
            frame = state.stack[-1] if state.stack else None
            if state.turn is not None and frame is not None and frame[0] == "flip" and state.deck_left > 3:
                expected = brute_force_flip_three(state, state.turn)
                assert state.flip_bust_odds() == pytest.approx(expected, abs=1e-12)
                checked += 1
            match.apply(table.next_event(state))
    assert checked >= 25


class _GeneralPathOnly(Flip7State):
    """Flip 7 with every card taking the general path (no inlined common case)."""
    __slots__ = ()

    def _card(self, event):
        from rules.flip7 import FlipTableState

        return FlipTableState._card(self, event)


def test_the_inlined_number_card_is_the_general_path():
    """Flip7State._card's fast path (issue 52's speed) ends every event as the general path does:
    the same state and notices, event by event, over random games (refused cards too)."""
    for seed in range(150):
        config = configs(seed)
        fast, general, table = Flip7State(config), _GeneralPathOnly(config), RandomTable(seed)
        rng = random.Random(seed)
        while not fast.over:
            event = table.next_event(fast) if rng.random() > 0.05 else Card(rng.choice(LABELS))
            outcomes = []
            for state in (fast, general):
                try:
                    outcomes.append(state.apply(event))
                except Exception as error:      # (Refused: compared by its reason)
                    outcomes.append(str(error))
            assert outcomes[0] == outcomes[1], (seed, event)
            assert _every_field(fast) == _every_field(general), (seed, event)


def _every_field(state) -> dict:
    names = [name for cls in type(state).__mro__ for name in getattr(cls, "__slots__", ())]
    return {name: getattr(state, name) for name in names if hasattr(state, name)}


def test_undos_in_a_row_fold_few_events_and_old_checkpoints_are_thinned():
    """Issue 52: a script of a million lines took 55 s, every undo folding up to 256 events
    again; and a copy of the state was kept every 256 events for ever. Undos in a row now fold a
    few events each, and a long game keeps a handful of copies; the state is the fold all the same."""
    config = GameConfig("flip7", ("ann", "ben", "cat", "dan"))
    match, table, rng = Match(config), RandomTable(3), random.Random(3)
    folds = []
    real_apply = Flip7State.apply

    def counting_apply(state, event):
        folds[-1] += 1
        return real_apply(state, event)
    for step in range(6_000):
        if match.over or (match.events and rng.random() < 0.3):
            folds.append(0)
            Flip7State.apply = counting_apply
            try:
                match.undo()
            finally:
                Flip7State.apply = real_apply
            table.pile = []
        else:
            match.apply(table.next_event(match.state))
        if step % 2000 == 0:
            assert _every_field(match.state) == _every_field(Match.replay(config, match.events).state)
    assert sorted(folds)[len(folds) // 2] <= 16       # most undos fold few events (256 at most before)

    from rules.match import CHECKPOINT_EVERY
    long = Match(config)                              # (a million events: the thinning alone)
    for n in range(CHECKPOINT_EVERY, 4000 * CHECKPOINT_EVERY + 1, CHECKPOINT_EVERY):
        long._checkpoints[n] = None
        long._thin(n)
    assert 0 in long._checkpoints and 4000 * CHECKPOINT_EVERY in long._checkpoints
    assert len(long._checkpoints) <= 60
