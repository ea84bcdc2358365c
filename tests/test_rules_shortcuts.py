"""The rules core's shortcuts (kept for speed: rules_bench.py) agree with the long way round, in
every state of seeded random games of each game the random table plays."""

from __future__ import annotations

import random

import pytest

from rules.core import GameConfig, Refused
from rules.events import Stop
from rules.match import Match
from rules.random_play import RandomTable

GAMES = ("flip7", "flip7-vengeance", "flip7-vengeance-brutal")


def random_states(game: str, seeds: range):
    """Every state of random games of `game` (2 to 6 players, a random dealer), in play order."""
    for seed in seeds:
        rng = random.Random(seed)
        players = tuple(f"p{i}" for i in range(rng.choice([2, 3, 4, 4, 6])))
        match = Match(GameConfig(game, players, dealer=rng.choice(players)))
        table = RandomTable(seed)
        while not match.over:
            assert len(match.events) < 10_000, "a random game that does not end"
            yield match.state
            match.apply(table.next_event(match.state))
        yield match.state


@pytest.mark.parametrize("game", GAMES)
def test_stop_score_is_what_a_stop_banks_and_none_where_a_stop_is_refused(game: str) -> None:
    stops = 0
    for state in random_states(game, range(40)):
        score = state.stop_score()
        assert (score is not None) == state.stop_allowed()
        twin = state.clone()
        if score is None:
            with pytest.raises(Refused):
                twin.apply(Stop())
            continue
        assert score == state.turn_score()
        notices = twin.apply(Stop())
        assert notices[0].kind == "stop" and notices[0].detail == score
        stops += 1
    assert stops > 500


def every_field(state) -> dict:
    return {name: getattr(state, name) for cls in type(state).__mro__ for name in getattr(cls, "__slots__", ())}


def shared_lists(a, b, path: str):
    """Paths of the lists that `a` and its copy `b` share, nested ones too."""
    if isinstance(a, list) and a is b:
        yield path
    if isinstance(a, (list, tuple)):
        for i, (x, y) in enumerate(zip(a, b)):
            yield from shared_lists(x, y, f"{path}[{i}]")


@pytest.mark.parametrize("game", GAMES)
def test_a_clone_has_every_field_and_shares_no_list_the_game_changes(game: str) -> None:
    for state in random_states(game, range(10)):
        twin = state.clone()
        fields, copied = every_field(state), every_field(twin)
        assert copied == fields
        for name, value in fields.items():
            if name != "choice":            # (a choice is replaced whole, never changed in place)
                assert not list(shared_lists(value, copied[name], name))


def test_a_match_version_moves_by_one_at_every_apply_and_every_undo() -> None:
    match, table, rng = Match(GameConfig("flip7", ("ann", "ben", "cat"))), RandomTable(5), random.Random(5)
    versions = [match.version]
    for _ in range(400):
        if match.events and (match.over or rng.random() < 0.3):
            match.undo()
            table.pile = []
        else:
            match.apply(table.next_event(match.state))
        versions.append(match.version)
    assert versions == list(range(versions[0], versions[0] + 401))


def test_shared_notices_are_the_notices_asked_for() -> None:
    from rules.core import Notice, notice

    assert notice("stop", "ann", 12) == Notice("stop", "ann", 12)
    assert notice("stop", "ann", 12) is notice("stop", "ann", 12)


def _no_bool_or_float(value) -> bool:
    if isinstance(value, (bool, float)):
        return False
    return all(map(_no_bool_or_float, value)) if isinstance(value, tuple) else True


@pytest.mark.parametrize("game", GAMES)
def test_no_notice_detail_is_a_bool_or_a_float(game: str) -> None:
    """rules.core.notice shares notices by value, not typed: a detail of True would be taken for 1."""
    for seed in range(30):
        match, table = Match(GameConfig(game, ("a", "b", "c", "d"))), RandomTable(seed)
        while not match.over:
            for shown in match.apply(table.next_event(match.state)):
                assert _no_bool_or_float(shown.detail), shown
