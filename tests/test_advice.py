"""rules.advice: what one more card is worth against stopping, against a brute-force count of
every card that could come (each physical card once, scored from the rulebook's formula)."""

from __future__ import annotations

import random

import pytest

from rules.advice import one_more_card
from rules.core import GameConfig
from rules.events import Card, Stop
from rules.flip7 import CARD_ID, score_row
from rules.match import Match

NUMBERS = [str(v) for v in range(13)]


def _brute_force(row: list[str], second_chance: bool, pile: list[str]) -> float:
    """Mean over every card of the pile of (score after it) - (score now), from score_row."""
    now = score_row(row)
    gains = []
    for label in pile:
        if label in NUMBERS and label in row:
            after = now if second_chance else 0          # a duplicate: bust, or the Second Chance spent
        elif label in ("freeze", "flip-three", "second-chance"):
            after = now                                   # a choice: the row as it stands
        else:
            after = score_row(row + [label])              # a new number, +N, x2; 15 more for a Flip 7
        gains.append(after - now)
    return sum(gains) / len(gains)


def _deal_to_ann(match, row: list[str]) -> None:
    """The deal (ann, then ben a 12), ann's first turn, ben stops; the rest of `row` is ann's."""
    match.apply(Card(row[0]))
    match.apply(Card("12"))
    for i, label in enumerate(row[1:]):
        match.apply(Card(label))
        if i == 0:
            match.apply(Stop())


def _small_deck_turn(rng: random.Random):
    """ann on turn with a random row, the deck cut down to a few random cards (its counts set)."""
    match = Match(GameConfig("flip7", ("ann", "ben"), dealer="ben"))
    state = match.state
    row = rng.sample(NUMBERS[1:], rng.randint(1, 6)) + rng.sample(["+2", "+4", "x2", "+10"], rng.randint(0, 2))
    _deal_to_ann(match, row)
    state = match.state
    assert state.turn == "ann", state.summary()
    left = [label for label, copies in state.card_counts().items() for _ in range(copies)]
    pile = rng.sample(left, rng.randint(1, 8))
    state.deck = [0] * len(state.deck)
    for label in pile:
        state.deck[CARD_ID[label]] += 1
    state.deck_left = len(pile)
    return state, pile


@pytest.mark.parametrize("seed", range(40))
def test_one_more_card_equals_a_brute_force_count_on_small_decks(seed):
    rng = random.Random(seed)
    state, pile = _small_deck_turn(rng)
    row = state.rows["ann"]
    worth = one_more_card(state)
    assert worth == pytest.approx(_brute_force(row, state.has_second_chance[0], pile))


def test_the_flip7_bonus_and_a_bust_are_counted():
    match = Match(GameConfig("flip7", ("ann", "ben"), dealer="ben"))
    _deal_to_ann(match, ["1", "2", "3", "4", "5", "6"])
    state = match.state
    assert state.turn == "ann" and state.rows["ann"] == ["1", "2", "3", "4", "5", "6"]
    state.deck = [0] * len(state.deck)
    state.deck[CARD_ID["7"]], state.deck[CARD_ID["3"]] = 1, 1     # a 7: Flip 7 (21 + 7 + 15); a 3: bust
    state.deck_left = 2
    assert one_more_card(state) == pytest.approx(((21 + 7 + 15) + 0) / 2 - 21)


def test_no_advice_where_the_player_cannot_stop():
    match = Match(GameConfig("flip7", ("ann", "ben")))
    assert one_more_card(match.state) is None          # the deal


def test_vengeance_scores_the_zero_and_the_malus_as_its_rules_do():
    match = Match(GameConfig("flip7-vengeance", ("ann", "ben"), dealer="ben"))
    for label in ("5", "6", "7"):                      # the deal (ann 5, ben 6), then ann's turn: 7
        match.apply(Card(label))
    state = match.state
    name = state.turn
    now = state.round_score(name)
    state.deck = [0] * len(state.deck)
    state.deck[state.CARD_ID["zero"]] = 1              # The Zero: the round scores 0 without a Flip 7
    state.deck[state.CARD_ID["-4"]] = 1                # a malus: given away by the drawer (a choice)
    state.deck_left = 2
    assert one_more_card(state) == pytest.approx((0 + now) / 2 - now)


def test_the_turn_screen_shows_the_hint_unless_the_config_turns_it_off(tmp_path):
    from device.screens import TurnScreen
    from tests.device_table_helpers import Player

    p = Player(tmp_path, "flip7", ("ann", "ben"))
    p.card("5")
    p.card("3")
    shown = p.shown()
    assert isinstance(shown, TurnScreen) and shown.advice == pytest.approx(one_more_card(p.table.match.state))
    p.table.advice = False
    p.card("7")
    assert p.shown().advice is None


def test_the_config_switches_the_hint(tmp_path):
    from device.config import load_config

    path = tmp_path / "config.toml"
    path.write_text("[display]\nadvice = false\n")
    config, problems = load_config(path)
    assert config.display.advice is False and not problems
