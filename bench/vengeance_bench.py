"""Rules-engine figures for Flip 7 and Flip 7: Vengeance: random games per second (seeded random
tables making random legal choices) and what the per-event summary the screen shows costs (bust
odds, and the exact Flip Four odds while one is dealt). Prints figures; asserts nothing.

  .venv/bin/python bench/vengeance_bench.py [--games 300] [--players 4]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rules.core import GameConfig  # noqa: E402
from rules.match import Match  # noqa: E402
from rules.random_play import RandomTable, random_game  # noqa: E402


def games_per_second(game: str, players: int, games: int, repeat: int = 3) -> float:
    config = GameConfig(game, tuple(f"p{i}" for i in range(players)))
    best = 0.0
    for _ in range(repeat):
        start = time.perf_counter()
        for seed in range(games):
            random_game(config, seed)
        best = max(best, games / (time.perf_counter() - start))
    return best


def summary_cost(game: str, players: int, games: int) -> tuple[float, float, int]:
    """Mean and worst milliseconds of state.summary() over every state of `games` random games,
    and how many of those states were in a Flip Four."""
    config = GameConfig(game, tuple(f"p{i}" for i in range(players)))
    times = []
    in_flip = 0
    for seed in range(games):
        table = RandomTable(seed)
        match = Match(config)
        while not match.over:
            start = time.perf_counter()
            summary = match.state.summary()
            times.append(time.perf_counter() - start)
            in_flip += "flip_four_bust_odds" in summary
            match.apply(table.next_event(match.state))
    return 1000 * sum(times) / len(times), 1000 * max(times), in_flip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=300, help="random games per figure (default 300)")
    parser.add_argument("--players", type=int, default=4, help="players at the table (default 4)")
    args = parser.parse_args()
    for game in ("flip7", "flip7-vengeance", "flip7-vengeance-brutal"):
        rate = games_per_second(game, args.players, args.games)
        print(f"{game:24s} {rate:7.0f} random {args.players}-player games/s (best of 3, {args.games} seeds)")
    for game in ("flip7-vengeance",):
        mean, worst, in_flip = summary_cost(game, args.players, max(1, args.games // 10))
        print(f"{game:24s} summary(): mean {mean:.3f} ms, worst {worst:.3f} ms ({in_flip} states in a Flip Four)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
