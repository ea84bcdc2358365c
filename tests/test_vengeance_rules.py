"""Rules of Flip 7: Vengeance that are clearer as code than as scenario scripts: the deck, options,
exact Flip Four odds on small decks worked by hand, two decks, Brutal corner cases, and the
legal-event list the random tables rely on."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from rules.cards import DECKS
from rules.core import GameConfig, Refused
from rules.events import Bonus, Card, Stop, SwapCards, Take, Target
from rules.match import Match
from rules.random_play import RandomTable, random_game
from rules.script import format_event, format_header
from rules.vengeance import NUMBER_IDS, VengeanceState, _bust_within


def play(game: str, players: tuple[str, ...], lines: list, dealer: str | None = None, **options) -> Match:
    match = Match(GameConfig(game, players, dealer=dealer, options=options))
    for event in lines:
        match.apply(event)
    return match


def test_the_deck_holds_108_cards() -> None:
    deck = DECKS["flip7-vengeance"]
    assert deck.size == 108
    assert deck.copies["7"] == 6 and deck.copies["13"] == 12 and deck.copies["12"] == 12
    assert sum(n for label, n in deck.copies.items() if deck.kind(label) == "number") == 92
    assert sum(n for label, n in deck.copies.items() if deck.kind(label) == "malus") == 6
    assert sum(n for label, n in deck.copies.items() if deck.kind(label) == "action") == 10
    state = VengeanceState(GameConfig("flip7-vengeance", ("a", "b")))
    assert state.deck_left == 108 and state.bust_odds() == 0.0


def test_options() -> None:
    with pytest.raises(ValueError, match="unknown option"):
        VengeanceState(GameConfig("flip7-vengeance", ("a", "b"), options={"set_aside_after_bust": "play"}))
    many = tuple(f"p{i}" for i in range(19))
    assert VengeanceState(GameConfig("flip7-vengeance", many)).deck_left == 216


def test_flip7_refuses_vengeance_answers() -> None:
    match = Match(GameConfig("flip7", ("a", "b")))
    for event in (Take("a", "5"), SwapCards("a", "5", "b", "6"), Bonus()):
        with pytest.raises(Refused, match="is not an event of Flip 7"):
            match.apply(event)


def numbers(**copies: int) -> tuple[int, ...]:
    """Copies left of each number card, by label (`u7` for the Unlucky 7, `l13` for the Lucky 13)."""
    labels = DECKS["flip7-vengeance"].labels
    names = {"u7": "unlucky-7", "l13": "lucky-13"}
    wanted = {names.get(k, k.lstrip("n")): v for k, v in copies.items()}
    return tuple(wanted.get(labels[cid], 0) for cid in NUMBER_IDS)


def test_flip_four_odds_on_small_decks_worked_by_hand() -> None:
    bit = lambda *values: sum(1 << v for v in values)   # noqa: E731
    # holding a 5, the deck a 5 and a 6: within two cards the 5 comes for sure
    assert _bust_within(numbers(n5=1, n6=1), 0, bit(5), 0, False, 1, 2) == 1.0
    # an Unlucky 7 first (1/2) clears the 5 away: the 5 after it is safe
    assert _bust_within(numbers(n5=1, u7=1), 0, bit(5), 0, False, 1, 2) == 0.5
    # holding a 7, an Unlucky 7 never busts; a 7 after it does
    assert _bust_within(numbers(u7=1), 0, bit(7), 0, False, 1, 1) == 0.0
    assert _bust_within(numbers(u7=1, n7=1), 0, bit(7), 0, False, 1, 2) == 1.0
    # a Lucky 13 holder with one 13 is safe from one more 13, not from two
    assert _bust_within(numbers(n13=1), 0, bit(13), 1, True, 1, 1) == 0.0
    assert _bust_within(numbers(n13=2), 0, bit(13), 1, True, 1, 2) == 1.0
    # a 13 holder without the Lucky 13 is safe from the Lucky 13 only
    assert _bust_within(numbers(n13=1, l13=1), 0, bit(13), 1, False, 1, 1) == 0.5
    # a 5, a 6 and a malus or action (neutral) card: the 5 first busts; after the 6 or the
    # neutral card, the 5 is one of the two left
    assert _bust_within(numbers(n5=1, n6=1), 1, bit(5), 0, False, 1, 2) == pytest.approx(1 / 3 + 2 * (1 / 3 * 1 / 2))
    # six numbers held: the seventh different one is a Flip 7 and ends the Flip Four safely
    assert _bust_within(numbers(n8=1, n1=1), 0, bit(1, 2, 3, 4, 5, 6), 0, False, 6, 2) == 0.5


def test_two_decks_second_zero_busts_and_third_13_busts() -> None:
    match = play("flip7-vengeance", ("ann", "ben"), [Card("zero"), Card("1"), Card("zero")], dealer="ben", decks="2")
    assert match.state.status["ann"] == "busted"
    match = play("flip7-vengeance", ("ann", "ben"),
                 [Card("lucky-13"), Card("1"), Card("lucky-13"), Card("2")], dealer="ben", decks="2")
    assert match.state.rows["ann"] == ["lucky-13", "lucky-13"] and match.state.status["ann"] == "active"
    assert match.state.bust_odds() == pytest.approx(24 / 212)
    match.apply(Card("13"))
    assert match.state.status["ann"] == "busted"


def test_a_lone_player_is_refused() -> None:
    # (A one-player game was played before; the rules' player range refuses it: rules.core PLAYER_RANGES.)
    with pytest.raises(ValueError, match="flip7-vengeance-brutal is played by 2 players or more, not 1"):
        play("flip7-vengeance-brutal", ("solo",), [])


def test_just_one_more_on_a_stopped_player_and_alone() -> None:
    # ben has stopped; ann gives him one more card: he takes it and stays stopped
    match = play("flip7-vengeance", ("ann", "ben"),
                 [Card("3"), Card("4"), Card("5"), Stop(), Card("just-one-more"), Target("ben"), Card("9")],
                 dealer="ben")
    state = match.state
    assert state.rows["ben"] == ["4", "9"] and state.status["ben"] == "stopped" and state.turn == "ann"
    # the only player not busted plays it on herself at once, and is then out of turns
    match = play("flip7-vengeance", ("ann", "ben"),
                 [Card("3"), Card("4"), Card("3"), Card("just-one-more")], dealer="ben")
    assert match.state.pending is None and match.state.turn == "ben"
    match.apply(Card("8"))
    assert len(match.rounds) == 1, "ben is out of turns too: nobody is left to play"
    assert match.rounds[0].scores == {"ann": 0, "ben": 12}


def test_flip_four_odds_are_in_the_summary() -> None:
    match = play("flip7-vengeance", ("ann", "ben"), [Card("5"), Card("6"), Card("flip-four"), Target("ben")],
                 dealer="ben")
    state = match.state
    summary = state.summary()
    assert summary["turn"] == "ben"
    assert summary["flip_four_bust_odds"] == {"ben": round(state.flip_bust_odds(), 4)}
    assert 0 < state.bust_odds() < state.flip_bust_odds() < 1


def test_every_legal_event_is_accepted_and_stop_matches_stop_allowed() -> None:
    checked = 0
    for seed in range(25):
        table = RandomTable(seed)
        rng = random.Random(seed)
        game = "flip7-vengeance-brutal" if seed % 2 else "flip7-vengeance"
        match = Match(GameConfig(game, ("a", "b", "c")))
        while not match.over:
            state = match.state
            events = state.legal_events()
            assert (Stop() in events) == state.stop_allowed()
            for event in rng.sample(events, min(4, len(events))):
                state.clone().apply(event)
                checked += 1
            if state.pending is not None:
                assert len(events) == len(state.pending.options)
            match.apply(table.next_event(state))
    assert checked > 2000


@pytest.mark.parametrize("game, seed, answers", [("flip7-vengeance", 7, {"take", "swap", "target"}),
                                                  ("flip7-vengeance-brutal", 9, {"take", "swap", "target", "penalize"})])
def test_tablemate_replay_scores_a_whole_random_game(game: str, seed: int, answers: set, tmp_path) -> None:
    """A whole game with every kind of choice, written as a table script and scored by the CLI."""
    match = random_game(GameConfig(game, ("Ann", "ben", "Cat")), seed=seed)
    assert match.over
    lines = format_header(match.config) + [format_event(e) for e in match.events]
    script = tmp_path / "game.txt"
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "device.cli", "replay", "--json", str(script)],
                            capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent, timeout=60)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    expected = match.summary()
    assert out["totals"] == expected["totals"] and out["winner"] == expected["winner"] is not None
    assert out["rounds"] == expected["rounds"] and out["errors"] == []
    assert out["state"]["turn"] is None and out["state"]["pending"] is None
    assert answers <= {line.split()[0] for line in lines}


@pytest.mark.parametrize("row, score", [
    ("4 5 7 10 11", 37), ("4 5 7 10 11 /2", 18), ("4 5 7 10 11 -4", 33),      # the rulebook's worked examples
    ("3 4 5 7 9 10 11", 64),
    ("zero 5 9", 0), ("zero 1 2 3 4 5 6", 21 + 15),                            # a Zero counts only with Flip 7
    ("2 3 -10", 0), ("13 lucky-13 1 2 3 4 5", 41 + 15),                        # not below 0; two 13s count
    ("unlucky-7 2 just-one-more", 9),
])
def test_score_of_a_row_as_scan_gives_it(row, score):
    """rules.vengeance.score_row (tablemate scan --score): docs/vengeance.md's scoring of a row."""
    from rules.vengeance import score_row

    assert score_row(row.split()) == score
