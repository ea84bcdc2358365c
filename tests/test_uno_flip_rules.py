"""UNO Flip rules that scenario scripts cannot reach easily: the deck, the scoring table, the set-up
for each table size, running out of cards, refusal types, saving and the engine's public view."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rules.cards import DECKS
from rules.core import GameConfig, Refused
from rules.events import Caught, Challenge, Color, Draw, Hand, Pass, Play, Start, Top, Uno
from rules.match import Match
from rules.uno_flip import (CARDS_IN_DECK, COPIES, LABELS, SIDE, IllegalPlay, UnoFlipState, score_hand)


def match_of(players: int, *events, dealer: str | None = None) -> Match:
    names = tuple(f"p{i}" for i in range(players))
    match = Match(GameConfig("uno-flip", names, dealer=dealer))
    for event in events:
        match.apply(event)
    return match


def test_each_side_holds_the_112_cards_of_the_deck() -> None:
    deck = DECKS["uno-flip"]
    assert len(deck.labels) == 108
    for side in (0, 1):
        assert sum(c for f, c in enumerate(COPIES) if SIDE[f] == side) == CARDS_IN_DECK
    assert SIDE[LABELS.index("wild-draw-two")] == 0 and SIDE[LABELS.index("wild-draw-color")] == 1


@pytest.mark.parametrize("labels, points", [
    (["red-1", "blue-9"], 10),
    (["red-draw-one"], 10), (["pink-draw-five"], 20), (["green-reverse", "teal-reverse"], 40),
    (["yellow-skip"], 20), (["blue-flip", "purple-flip"], 40), (["orange-skip-everyone"], 30),
    (["wild"], 40), (["dark-wild"], 40), (["wild-draw-two"], 50), (["wild-draw-color"], 60), ([], 0),
])
def test_the_published_scoring(labels, points) -> None:
    assert score_hand(labels) == points


@pytest.mark.parametrize("players", [2, 5, 10])
def test_seven_cards_each_and_the_rest_in_the_draw_pile(players: int) -> None:
    state = match_of(players).state
    assert state.hands == [7] * players
    assert state.draw_left == CARDS_IN_DECK - 7 * players
    assert state.cards_everywhere() == CARDS_IN_DECK
    assert state.turn == "p0" and state.must()["action"] == "start"     # the dealer turns the start card


@pytest.mark.parametrize("players", [1, 11])
def test_two_to_ten_players(players: int) -> None:
    with pytest.raises(ValueError, match="2 to 10 players"):
        UnoFlipState(GameConfig("uno-flip", tuple(f"p{i}" for i in range(players))))


def test_no_options() -> None:
    with pytest.raises(ValueError, match="no options"):
        UnoFlipState(GameConfig("uno-flip", ("a", "b"), options={"points": "300"}))


def test_the_player_left_of_the_dealer_starts() -> None:
    assert match_of(4, Start("red-1"), dealer="p3").state.turn == "p0"
    assert match_of(4, Start("red-1"), dealer="p1").state.turn == "p2"


def test_a_mismatch_is_an_illegal_play_and_other_refusals_are_not() -> None:
    match = match_of(3, Start("blue-3"))
    with pytest.raises(IllegalPlay, match="red-7 does not match blue-3: play blue, a 3 or a wild"):
        match.apply(Play("red-7"))
    with pytest.raises(IllegalPlay, match="red-flip may only be played on blue or on a flip"):
        match.apply(Play("red-flip"))
    for event in (Play("pink-3"), Play("blue-0"), Play("blue-4", "p2")):
        with pytest.raises(Refused) as refusal:
            match.apply(event)
        assert not isinstance(refusal.value, IllegalPlay)
    assert match.state.play_refusal("blue-draw-one") is None
    assert match.state.play_refusal("yellow-3") is None
    assert match.state.play_refusal("yellow-4").startswith("yellow-4 does not match")


def test_a_flip_goes_on_the_colour_a_wild_named() -> None:
    match = match_of(2, Start("blue-3"), Play("wild"), Color("red"))
    assert match.state.play_refusal("blue-flip").startswith("blue-flip may only be played on red")
    match.apply(Play("red-flip"))
    assert match.state.side_name == "dark"


def test_every_copy_of_a_face_on_the_pile_makes_another_impossible() -> None:
    match = match_of(2, Start("blue-3"), Play("blue-3"))
    with pytest.raises(Refused, match="all 2 blue-3 cards are already on the table"):
        match.apply(Play("blue-3"))
    # set-aside start cards count too, for the whole round
    match = match_of(2, Start("wild"), Start("wild"), Start("wild"), Start("red-5"), Play("wild"))
    assert match.state.set_aside == 3
    match.apply(Color("red"))
    with pytest.raises(Refused, match="all 4 wild cards"):
        match.apply(Play("wild"))


def run_out_of_cards(players: int = 10) -> Match:
    """Everyone draws and passes until the draw pile is empty (the start card alone on the pile)."""
    match = match_of(players, Start("red-5"))
    while match.state.draw_left:
        match.apply(Draw())
        match.apply(Pass())
    return match


def test_the_discard_pile_becomes_the_draw_pile_when_it_runs_out() -> None:
    match = run_out_of_cards()
    state = match.state
    assert state.drawable() == 0 and state.pile == 1
    # nothing to draw: the player on turn may pass without drawing, and cannot draw
    with pytest.raises(Refused, match="no card left to draw"):
        match.apply(Draw())
    match.apply(Pass())
    match.apply(Play("red-6"))
    match.apply(Play("red-draw-one"))
    # two cards under the top one now: the draw turns them into a new draw pile
    notices = match.apply(Draw(1))
    assert [n.kind for n in notices] == ["shuffled", "drew", "skipped"]
    state = match.state
    assert (state.draw_left, state.pile) == (1, 1)
    assert state.pile_faces[LABELS.index("red-draw-one")] == 1
    assert state.pile_faces[LABELS.index("red-6")] == 0          # shuffled away: it may come back
    assert state.cards_everywhere() == CARDS_IN_DECK


def test_draws_are_capped_by_the_cards_left_and_one_possible_count_is_taken_at_once() -> None:
    match = run_out_of_cards(10)
    victim = (match.state.turn_index + 1) % 10
    match.apply(Play("wild-draw-two"))
    match.apply(Color("blue"))
    assert match.state.owe == 1                                  # one card is left to draw
    match.apply(Challenge(True))                                 # the offender takes it
    assert match.state.drawable() == 0 and match.state.turn_index == victim
    match.apply(Play("blue-flip"))
    match.apply(Top("teal-1"))
    match.apply(Play("wild-draw-color"))
    match.apply(Color("orange"))
    assert match.state.pending.kind == "draw" and match.state.pending.options == (1, 2)
    challenger = match.state.turn_index
    held = match.state.hands[challenger]
    match.apply(Challenge(False))
    # innocent: the challenger takes until orange plus 2, but two cards are left: taken at once
    assert match.state.pending is None and match.state.drawable() == 0
    assert match.state.hands[challenger] == held + 2
    assert match.state.turn_index == (challenger + 1) % 10


def test_uno_called_early_lapses_when_the_player_draws() -> None:
    match = match_of(2, Start("red-1"), dealer="p1")
    state = match.state
    state.hands[0] = 2                                           # (a table that has played on)
    state.draw_left += 5
    match.apply(Uno("p0"))
    assert state.called[0]
    match.apply(Draw())
    assert not state.called[0] and state.hands[0] == 3
    with pytest.raises(Refused, match="p0 holds 3 cards"):
        match.apply(Uno("p0"))


def test_a_caught_player_draws_two() -> None:
    match = match_of(2, Start("red-1"), dealer="p1")
    match.state.hands[0] = 2
    match.state.draw_left += 5
    match.apply(Play("red-2"))
    assert match.state.summary()["catchable"] == "p0"
    notices = match.apply(Caught("p0"))
    assert match.state.hands[0] == 3 and [n.kind for n in notices][:1] == ["caught"]


def test_hands_are_scored_once_all_are_laid() -> None:
    match = match_of(3, Start("red-1"), dealer="p2")
    state = match.state
    state.hands[0] = 1
    state.draw_left += 6
    match.apply(Play("red-2"))
    assert state.pending.kind == "hand" and state.pending.options == ("p1", "p2")
    notices = match.apply(Hand("p2", ("red-9",)))
    assert [n.kind for n in notices] == ["hand_count"]           # 7 tracked, 1 laid
    assert state.round_score("p0") == 9 and state.round == 1
    match.apply(Hand("p1", ()))
    assert match.rounds[0].scores == {"p0": 9, "p1": 0, "p2": 0}
    assert match.state.round == 2 and match.state.dealer == "p0"


def test_summary_has_the_contract_fields() -> None:
    summary = match_of(2, Start("red-1")).summary()
    state = summary["state"]
    for key in ("turn", "pending", "side", "top", "color", "direction", "hands"):
        assert key in state
    assert (state["side"], state["top"], state["color"], state["direction"]) == ("light", "red-1", "red", "clockwise")
    assert state["hands"] == {"p0": 7, "p1": 7}
    assert summary["rounds"] == [] and summary["winner"] is None


def test_from_dict_refuses_a_damaged_state() -> None:
    data = match_of(2, Start("red-1")).state.to_dict()
    del data["state"]["hands"]
    with pytest.raises(ValueError, match="missing hands"):
        UnoFlipState.from_dict(data)
    with pytest.raises(ValueError):
        UnoFlipState.from_dict({"version": 99, "game": "uno-flip"})


def test_a_forced_draw_may_be_recorded_card_by_card_and_ends_the_challenge() -> None:
    match = match_of(3, Start("red-1"), Play("wild-draw-two"), Color("blue"), dealer="p2")
    match.apply(Draw())
    assert match.state.turn == "p1" and match.state.must()["count"] == 1
    with pytest.raises(Refused, match="no wild draw card to challenge"):
        match.apply(Challenge(False))
    match.apply(Draw())
    assert match.state.turn == "p2" and match.state.hands == [6, 9, 7]


def test_tablemate_replay_referees_and_scores_an_uno_flip_script(tmp_path) -> None:
    """Through the command line, as a table writes it: exit 1 for the illegal play, the game scored."""
    script = Path(__file__).parent / "scenarios" / "uno-flip" / "14-500-points.txt"
    result = subprocess.run([sys.executable, "-m", "device.cli", "replay", "--json", str(script)],
                            capture_output=True, text=True, cwd=Path(__file__).resolve().parent.parent, timeout=60)
    assert result.returncode == 1, result.stderr               # the last line is refused
    out = json.loads(result.stdout)
    assert out["winner"] == "ann" and out["totals"] == {"ann": 845, "ben": 0}
    assert [e["line"] for e in out["errors"]] == [26]
    state = out["state"]
    assert {"side", "top", "color", "direction", "hands"} <= set(state)


def test_a_top_other_than_the_known_bottom_card_is_flashed_not_refused() -> None:
    match = match_of(2, Start("red-1"), Play("red-flip"), Top("pink-1"), Play("pink-flip"), dealer="p1")
    assert match.state.summary()["expected_top"] == "red-flip"
    notices = match.apply(Top("red-2"))
    assert notices[-1].kind == "unexpected_top" and notices[-1].detail == {"expected": "red-flip", "read": "red-2"}
    assert match.state.summary()["top"] == "red-2"


def test_faces_played_stay_known_on_the_pile_across_flips() -> None:
    match = match_of(2, Start("red-1"), Play("red-1"), Play("red-flip"), Top("pink-1"), Play("pink-flip"),
                     Top("red-flip"), dealer="p1")
    assert match.state.side_name == "light"
    # both red-1 went on the pile before the flips; the pile was turned twice, not shuffled
    with pytest.raises(Refused, match="all 2 red-1 cards are already on the table"):
        match.apply(Play("red-1"))
    # the red-flip showing is the one played before, not a second copy
    assert match.state.pile_faces[LABELS.index("red-flip")] == 1
