"""Rulings that span rounds: the deck carried across rounds, reshuffles, 200 points and ties."""

from __future__ import annotations

from rules.core import GameConfig
from rules.events import Card, Stop
from rules.match import Match
from rules.random_play import RandomTable


def deal_to(match: Match, wanted: dict[str, list[str]]) -> None:
    """Give each player on turn the next card of their list; stop them when the list is empty."""
    queues = {name: list(cards) for name, cards in wanted.items()}
    round_now = match.state.round
    while not match.over and match.state.round == round_now:
        who = match.state.turn
        if queues[who]:
            match.apply(Card(queues[who].pop(0)))
        else:
            match.apply(Stop())


def test_tie_at_200_plays_another_round_with_everyone() -> None:
    match = Match(GameConfig("flip7", ("ann", "ben", "cat")))
    # each round ann and ben take the same numbers and stop; cat takes one small card and stops
    plan = [["12", "11", "10"], ["12", "11", "10"], ["12", "11", "10"], ["12", "11", "10"],
            ["12", "11", "9"], ["12", "9", "8"]]
    cat_cards = ["1", "0", "2", "2", "3", "3", "3", "4"]
    for numbers in plan:
        deal_to(match, {"ann": numbers, "ben": numbers, "cat": [cat_cards.pop(0)]})
    assert match.totals["ann"] == match.totals["ben"] == 33 * 4 + 32 + 29 == 193
    deal_to(match, {"ann": ["7"], "ben": ["7"], "cat": [cat_cards.pop(0)]})
    assert match.totals["ann"] == match.totals["ben"] == 200
    assert not match.over, "a tie for the highest total at 200 plays another round"
    assert match.state.round == 8
    assert set(match.state.status.values()) == {"active"}, "everyone plays the extra round"
    deal_to(match, {"ann": ["5"], "ben": ["4"], "cat": [cat_cards.pop(0)]})
    assert match.over and match.winner == "ann"
    summary = match.summary()
    assert summary["winner"] == "ann" and summary["state"]["turn"] is None and summary["state"]["pending"] is None


def test_the_deck_carries_across_rounds_and_bust_odds_use_what_is_left() -> None:
    match = Match(GameConfig("flip7", ("ann", "ben"), dealer="ben"))
    deal_to(match, {"ann": ["12", "12"], "ben": ["12", "11"]})     # ann busts on her second 12
    assert match.rounds[0].busted == ("ann",)
    assert match.state.deck_left == 90 and match.state.discard_left == 4
    # round 2: ann is dealt a 12; nine 12s are left in 90 cards (not twelve in 94)
    match.apply(Card("11"))      # ben (dealer was ben, now ann deals: ben first)
    match.apply(Card("12"))      # ann
    match.apply(Card("5"))       # ben's turn
    assert match.state.turn == "ann"
    assert match.state.bust_odds() == 8 / 87


def test_when_the_deck_runs_out_the_discard_pile_is_shuffled_and_table_cards_stay() -> None:
    seen = 0
    for seed in range(40):
        table = RandomTable(seed)
        match = Match(GameConfig("flip7", ("ann", "ben", "cat", "dan")))
        while not match.over:
            state = match.state
            if state.deck_left == 0 and state.turn is not None and any(state.rows.values()):
                rows, discard, who, round_now = state.rows, state.discard_left, state.turn, state.round
                notices = match.apply(table.next_card(state))
                assert notices[0].kind == "shuffled"
                assert match.state.deck_left == discard - 1
                if match.state.round == round_now:
                    for name, row in rows.items():
                        if name != who:
                            assert match.state.rows[name] == row, "cards in front of players stay put"
                seen += 1
                continue
            match.apply(table.next_event(state))
    assert seen >= 10


def test_two_to_eighteen_players_use_one_deck_and_more_use_two() -> None:
    for n in (2, 18):   # (one player is refused: rules.core PLAYER_RANGES)
        state = Match(GameConfig("flip7", tuple(f"p{i}" for i in range(n)))).state
        assert state.deck_left == 94
    state = Match(GameConfig("flip7", tuple(f"p{i}" for i in range(19)))).state
    assert state.deck_left == 188
    state = Match(GameConfig("flip7", ("a", "b"), options={"decks": "2"})).state
    assert state.deck_left == 188
