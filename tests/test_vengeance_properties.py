"""Properties of the Flip 7: Vengeance and Brutal engines over seeded random games with random legal
choices (targets, cards to steal or discard, swaps, the Brutal Flip 7 choice), and their bust odds
against a brute-force count through the engine itself."""

from __future__ import annotations

import json
import random

import pytest

from rules.core import GameConfig
from rules.events import Bonus, Card, Penalize, Stop, SwapCards, Take, Target
from game_properties import (assert_refusals_change_nothing, assert_replay_equals_incremental,
                             assert_saving_round_trips, assert_undo_restores)
from rules.match import Match
from rules.random_play import RandomTable
from rules.vengeance import FLIP_FOUR, LABELS, BrutalVengeanceState, VengeanceState

GAMES = 900


def configs(seed: int) -> GameConfig:
    rng = random.Random(seed)
    n = rng.choice([2, 2, 3, 4, 4, 5, 6, 8])   # (one player: refused, rules.core PLAYER_RANGES)
    players = tuple(f"p{i}" for i in range(n))
    game = "flip7-vengeance-brutal" if seed % 2 else "flip7-vengeance"
    options = {"decks": "2"} if rng.random() < 0.1 else {}
    return GameConfig(game, players, dealer=rng.choice(players), options=options)




def new_match(seed: int) -> Match:
    return Match(configs(seed))
def check_invariants(state: VengeanceState) -> None:
    # card conservation through steals, swaps and discards: deck + discard + rows + set aside +
    # a drawn card awaiting its choice = the deck(s)
    assert state.cards_everywhere() == state.full_deck()
    # exactly one of: game over, a player on turn, a pending choice
    assert [state.over, state.turn is not None, state.pending is not None].count(True) == 1
    pending = state.pending
    if pending is not None:
        assert len(pending.options) >= 2, "a choice with one legal answer is made automatically"
        json.dumps(pending.to_json())


@pytest.mark.parametrize("chunk", range(3))
def test_random_games_conserve_cards_and_keep_one_phase(chunk: int) -> None:
    for seed in range(chunk * GAMES // 3, (chunk + 1) * GAMES // 3):
        table = RandomTable(seed)
        match = Match(configs(seed))
        check_invariants(match.state)
        while not match.over:
            match.apply(table.next_event(match.state))
            check_invariants(match.state)
        assert match.winner is not None
        assert max(match.totals.values()) >= 200
        assert list(match.totals.values()).count(max(match.totals.values())) == 1
        for name, total in match.totals.items():
            assert total == sum(r.scores[name] for r in match.rounds)


def test_stopped_players_stay_out_of_turns_and_zero_holders_never_stop() -> None:
    for seed in range(300):
        table = RandomTable(seed)
        match = Match(configs(seed))
        while not match.over:
            state = match.state
            before = dict(state.status)
            round_before = state.round
            event = table.next_event(state)
            if type(event) is Stop:
                assert "zero" not in state.rows[state.turn]
            match.apply(event)
            if match.state.round == round_before and not match.over:
                for name, status in before.items():
                    if status != "active":
                        assert match.state.status[name] != "active", "a stopped or busted player came back"
                        assert match.state.turn != name or match.state.stack, "the dealer skips them"


def round_score_facts(game: str, seeds: range) -> dict[str, int]:
    """Counts of what happened at round ends over random games: scores below 0, busted players'
    scores, Brutal Flip 7 choices."""
    facts = {"negative": 0, "busted_negative": 0, "busted_nonzero": 0, "flip7_choice": 0, "penalized": 0}
    for seed in seeds:
        table = RandomTable(seed)
        config = GameConfig(game, ("a", "b", "c", "d"))
        match = Match(config)
        while not match.over:
            if match.state.pending is not None and match.state.pending.kind == "flip7":
                facts["flip7_choice"] += 1
            for notice in match.apply(table.next_event(match.state)):
                facts["penalized"] += notice.kind == "penalized"
        for result in match.rounds:
            facts["negative"] += sum(s < 0 for s in result.scores.values())
            facts["busted_nonzero"] += sum(result.scores[b] != 0 for b in result.busted)
            facts["busted_negative"] += sum(result.scores[b] < 0 for b in result.busted)
    return facts


def test_brutal_differences() -> None:
    normal = round_score_facts("flip7-vengeance", range(150))
    assert normal == {"negative": 0, "busted_negative": 0, "busted_nonzero": 0, "flip7_choice": 0, "penalized": 0}
    brutal = round_score_facts("flip7-vengeance-brutal", range(150))
    assert brutal["negative"] > 0, "round scores can go below 0"
    assert brutal["busted_negative"] > 0, "malus cards reach busted players"
    assert brutal["flip7_choice"] > 0 and brutal["penalized"] > 0


def test_replay_of_the_event_list_equals_the_incremental_state() -> None:
    assert_replay_equals_incremental(new_match, RandomTable, range(200))

def illegal_events(state: VengeanceState, rng: random.Random) -> list:
    """Events the rules must refuse in this state."""
    events = []
    players = state.players
    gone = [label for label in LABELS if label not in state.card_counts()]
    if gone:
        events.append(Card(rng.choice(gone)))
    events.append(Card("x2"))
    rows, status = state.rows, state.status
    busted_card = [(p, rows[p][0]) for p in players if status[p] == "busted" and rows[p]]
    pending = state.pending
    if pending is None:
        events += [Target(players[0]), Take(players[0], "5"), SwapCards(players[0], "5", players[-1], "6"),
                   Bonus(), Penalize(players[0])]
    else:
        events.append(Stop())
        events.append(Card(rng.choice(list(state.card_counts()))))
        if busted_card:
            events.append(Take(*busted_card[0]))
        if pending.kind == "target":
            events.append(Take(players[0], "5"))
            outside = [p for p in players if p not in pending.options]
            if outside:
                events.append(Target(outside[0]))
        elif pending.kind == "card":
            events.append(Target(players[0]))
            events.append(Bonus())
            if pending.card == "steal" and rows[pending.by]:
                events.append(Take(pending.by, rows[pending.by][0]))
            missing = [label for label in LABELS if label not in rows[players[0]]]
            events.append(Take(players[0], rng.choice(missing)))
        elif pending.kind == "swap":
            events.append(Target(players[0]))
            (a, a_label), _ = pending.options[0]
            events.append(SwapCards(a, a_label, a, a_label))
        else:
            events.append(Penalize(pending.by))
            events.append(Target(players[0]))
    if not state.over and pending is None and not state.stop_allowed():
        events.append(Stop())
    out = [p for p, s in status.items() if s != "active" and p != state.turn]   # a stopped turn: Just One More
    if out and not state.over and pending is None:
        events.append(Card(rng.choice(list(state.card_counts())), to=out[0]))
        events.append(Stop(out[0]))
    return events


def test_refused_events_change_nothing() -> None:
    assert_refusals_change_nothing(new_match, RandomTable, illegal_events, range(30))

def test_undo_restores_the_previous_state() -> None:
    assert_undo_restores(new_match, RandomTable, range(80))

def test_serialise_round_trips_and_clone_is_independent() -> None:
    assert_saving_round_trips(new_match, RandomTable, range(80), every=5)

def test_from_dict_refuses_the_other_mode() -> None:
    state = VengeanceState(GameConfig("flip7-vengeance", ("a", "b")))
    with pytest.raises(ValueError):
        BrutalVengeanceState.from_dict(state.to_dict())


# ---- bust odds against brute force through the engine itself ---------------------------------

def busted_by_the_card(notices: list, who: str, label: str) -> bool:
    """Did the card turned bust `who` by itself (not a card a Steal or Swap handed them after)?"""
    for n in notices:
        if n.kind in ("stolen", "swapped"):
            return False
        if n.kind == "bust" and n.player == who:
            return n.detail == label
    return False


def brute_force_next_card(state: VengeanceState) -> float:
    """Try every card the deck could turn next on a copy of the state; weight the busts."""
    counts = state.card_counts()
    total = sum(counts.values())
    who = state.turn
    busts = 0
    for label, copies in counts.items():
        twin = state.clone()
        if busted_by_the_card(twin.apply(Card(label)), who, label):
            busts += copies
    return busts / total


def brute_force_flip_four(state: VengeanceState, target: str, left: int | None = None) -> float:
    """Enumerate every sequence of the cards still to come in this Flip Four through the engine.
    (A Flip Four set aside for the same target is a Flip Four of its own.)"""
    frame = state.stack[-1] if state.stack else None
    if state.turn != target or frame is None or frame[0] != "flip" or frame[4] != FLIP_FOUR:
        return 0.0
    if left is not None and frame[2] != left:
        return 0.0
    left = frame[2]
    counts = state.card_counts()
    total = sum(counts.values())
    p = 0.0
    for label, copies in counts.items():
        twin = state.clone()
        notices = twin.apply(Card(label))
        if busted_by_the_card(notices, target, label):
            p += copies / total
        elif not any(n.kind == "flip7" for n in notices):
            p += copies / total * brute_force_flip_four(twin, target, left - 1)
    return p


def test_bust_odds_equal_a_brute_force_count() -> None:
    checked = lucky = unlucky = 0
    for seed in range(60):
        table = RandomTable(seed)
        match = Match(configs(seed))
        while not match.over:
            state = match.state
            if state.turn is not None:
                assert state.bust_odds() == pytest.approx(brute_force_next_card(state), abs=1e-12)
                checked += 1
                row = state.rows[state.turn]
                lucky += "lucky-13" in row
                unlucky += "unlucky-7" in row
            match.apply(table.next_event(state))
    assert checked > 3_000 and lucky > 50 and unlucky > 50


def test_flip_four_bust_odds_equal_a_brute_force_enumeration() -> None:
    """Up to three cards to come from a full deck, and all four from a short one."""
    checked = {1: 0, 2: 0, 3: 0, 4: 0}
    wanted = {1: 10, 2: 10, 3: 4, 4: 2}
    for seed in range(3000):
        table = RandomTable(seed)
        match = Match(configs(seed))
        while not match.over and checked != wanted:
            state = match.state
            frame = state.stack[-1] if state.stack and state.turn is not None else None
            if frame is not None and frame[0] == "flip" and frame[4] == FLIP_FOUR and state.deck_left >= frame[2]:
                left = frame[2]
                if checked[left] < wanted[left] and (left < 4 or state.deck_left <= 12):
                    expected = brute_force_flip_four(state, state.turn)
                    assert state.flip_bust_odds() == pytest.approx(expected, abs=1e-12)
                    checked[left] += 1
            match.apply(table.next_event(state))
        if checked == wanted:
            break
    assert checked == wanted
