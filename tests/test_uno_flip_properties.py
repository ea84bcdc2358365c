"""Properties of the UNO Flip engine over seeded random games played with a real deck of 112
double-sided cards (rules/random_play.py UnoRandomTable): the tracker's counts always agree with the
physical table, every event it lists as legal is accepted, refusals change nothing, and replay,
undo and saving give back the same state."""

from __future__ import annotations

import random

import pytest

from rules.core import GameConfig, Refused
from rules.events import Caught, Challenge, Color, Draw, Hand, Pass, Play, Start, Top, Uno
from game_properties import (assert_refusals_change_nothing, assert_replay_equals_incremental,
                             assert_saving_round_trips, assert_undo_restores)
from rules.match import Match
from rules.random_play import UnoRandomTable
from rules.uno_flip import (CARDS_IN_DECK, COPIES, COUNT, DRAWN, FACE_ID, HANDS, LABELS, N_FACES, OWE, PLAY, SIDE,
                            SIDE_COLORS, START, TOP, UnoFlipState)

GAMES = 240


def config(seed: int) -> GameConfig:
    rng = random.Random(seed)
    n = rng.choice([2, 2, 3, 4, 4, 5, 6, 8, 10])
    players = tuple(f"p{i}" for i in range(n))
    return GameConfig("uno-flip", players, dealer=rng.choice(players))




def new_match(seed: int) -> Match:
    return Match(config(seed))
def check_invariants(state: UnoFlipState, table: UnoRandomTable) -> None:
    # every card is in exactly one place, and the places agree with the physical table
    assert state.cards_everywhere() == CARDS_IN_DECK
    table.sync(state)
    assert state.hands == [len(h) for h in table.hands]
    assert (state.draw_left, state.pile, state.set_aside) == (len(table.draw), len(table.discard), len(table.aside))
    assert state.side == table.side
    if state.top >= 0:
        assert LABELS[state.top] == table.face(table.discard[-1])
    if state.expected_top >= 0:                     # the bottom card's hidden face, known after a Flip
        assert state.top < 0 and LABELS[state.expected_top] == table.face(table.discard[-1])
    # what the tracker knows to be on the pile or set aside is there (on either side of the cards)
    on_pile = [0] * N_FACES
    for card in table.discard:
        for face in table.cards[card]:
            on_pile[FACE_ID[face]] += 1
    aside = [0] * N_FACES
    for card in table.aside:
        aside[FACE_ID[table.cards[card][0]]] += 1
    for f in range(N_FACES):
        assert state.pile_faces[f] <= on_pile[f] and state.aside_faces[f] <= aside[f]
        assert state.pile_faces[f] + state.aside_faces[f] <= COPIES[f]
    # exactly one of: game over, a player on turn, a pending choice
    assert [state.over, state.turn is not None, state.pending is not None].count(True) == 1
    pending = state.pending
    if pending is not None and pending.kind == "draw":
        assert len(pending.options) >= 2 or state.challengeable, "one possible count is taken at once"


@pytest.mark.parametrize("chunk", range(3))
def test_random_games_agree_with_the_table_and_keep_one_phase(chunk: int) -> None:
    for seed in range(chunk * GAMES // 3, (chunk + 1) * GAMES // 3):
        table = UnoRandomTable(seed)
        match = Match(config(seed))
        while not match.over:
            match.apply(table.next_event(match.state))
            check_invariants(match.state, table)
        totals = match.totals
        assert max(totals.values()) >= 500 and match.winner == max(totals, key=totals.get)
        for result in match.rounds:                  # one player scores each round
            assert sum(1 for points in result.scores.values() if points) <= 1
        for name, total in totals.items():
            assert total == sum(r.scores[name] for r in match.rounds)
        # the deal passes left
        n = len(match.config.players)
        dealers = [match.config.players.index(r.dealer) for r in match.rounds]
        assert all((b - a) % n == 1 for a, b in zip(dealers, dealers[1:]))


def test_every_listed_legal_event_is_accepted() -> None:
    checked = 0
    rng = random.Random(0)
    for seed in range(30):
        table = UnoRandomTable(seed)
        match = Match(config(seed))
        while not match.over:
            state = match.state
            for event in state.legal_events() if rng.random() < 0.3 else ():
                state.clone().apply(event)          # raises if refused
                checked += 1
            match.apply(table.next_event(state))
    assert checked > 20_000


def illegal_events(state: UnoFlipState, rng: random.Random) -> list:
    """Events the rules must refuse in this state."""
    events = [Play("red-0"), Top("blue-10"), Caught("nobody"), Color("black")]
    other_side = [LABELS[f] for f in range(N_FACES) if SIDE[f] != state.side]
    events.append(Play(rng.choice(other_side)))
    phase = state.phase
    if phase in (PLAY, DRAWN) and state.color >= 0:
        mismatches = [LABELS[f] for f in range(N_FACES)
                      if SIDE[f] == state.side and state.play_refusal(LABELS[f]) is not None]
        if mismatches:
            events.append(Play(rng.choice(mismatches)))
        others = [p for p in state.players if p != state.turn]
        events.append(Play(LABELS[state.top], rng.choice(others)))
    if phase == PLAY:
        events.append(Draw(2))
        if state.drawable():
            events.append(Pass())
    if phase == DRAWN:
        events.append(Draw())
    if phase == OWE:
        events += [Draw(state.owe + 1), Pass(), Play(LABELS[state.top])]
    if phase != TOP and not (phase == HANDS and state.top < 0):      # (the top after a final flip)
        events.append(Top(SIDE_COLORS[state.side][0] + "-5"))
    if phase != START:
        events.append(Start("red-5"))
    if phase != HANDS:
        events.append(Hand(state.players[0], ()))
    if not state.challengeable:
        events.append(Challenge(rng.random() < 0.5))
    if phase == COUNT:
        events.append(Draw(state.pending.options[-1] + 1))
    for i, held in enumerate(state.hands):
        if held >= 3:
            events += [Uno(state.players[i]), Caught(state.players[i])]
            break
    return events


def test_refused_events_change_nothing() -> None:
    assert_refusals_change_nothing(new_match, UnoRandomTable, illegal_events, range(40), sample=0.15)


def test_nothing_is_played_once_the_game_is_over() -> None:
    table, match = UnoRandomTable(0), new_match(0)
    while not match.over:
        match.apply(table.next_event(match.state))
    with pytest.raises(Refused, match="game is over"):
        match.apply(Play("red-1"))


def test_replay_of_the_event_list_equals_the_incremental_state() -> None:
    assert_replay_equals_incremental(new_match, UnoRandomTable, range(60))

def test_undo_restores_the_previous_state() -> None:
    assert_undo_restores(new_match, UnoRandomTable, range(40))

def test_serialise_round_trips_and_clone_is_independent() -> None:
    assert_saving_round_trips(new_match, UnoRandomTable, range(40))

