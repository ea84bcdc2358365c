"""Rules-core benchmark: complete random games per second and the cost of one bust-odds computation.

Targets (issue 2, this machine, one core): >= 2,000 complete 4-player Flip 7 games to 200 points per
second; bust odds < 50 us. Random 4-player Vengeance and UNO Flip games per second are printed beside. Run: `make bench` or `.venv/bin/python bench/rules_bench.py [--games N]`.
Prints best-of-N figures in CPU time of the one process (the machine may be shared), with the
load average so a reader can judge the wall-clock context.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rules.core import GameConfig  # noqa: E402
from rules.flip7 import Flip7State  # noqa: E402
from rules.match import Match  # noqa: E402
from rules.random_play import RandomTable, random_game  # noqa: E402

CONFIG = GameConfig("flip7", ("ann", "ben", "cat", "dan"))


def best_of(repeats: int, fn) -> float:
    """Best CPU time of this process over the runs: on a shared machine wall time also counts
    the other processes' turns on the core; both are printed by `report`."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def sample_states(n_games: int) -> tuple[list, list]:
    """States with a player on turn (normal turns) and states inside a Flip Three."""
    turns, flips = [], []
    for seed in range(n_games):
        table = RandomTable(seed)
        match = Match(CONFIG)
        while not match.over:
            state = match.state
            if state.turn is not None:
                (flips if state.flip_bust_odds() is not None else turns).append(state.clone())
            match.apply(table.next_event(state))
    return turns, flips


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=500, help="games per timed run (default 500)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs; the best is reported")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})     # one core

    print(f"load average {os.getloadavg()[0]:.1f}; figures are CPU time of this process, best of {args.repeats}")
    seeds = range(args.games)
    events = sum(len(random_game(CONFIG, s).events) for s in seeds)
    t = best_of(args.repeats, lambda: [random_game(CONFIG, s) for s in seeds])
    print(f"random 4-player games to 200, played by a random table: {args.games / t:8.0f} games/s "
          f"({events / args.games:.0f} events/game, {t / events * 1e6:.2f} us/event)  target >= 2000")

    for game in ("flip7-vengeance", "uno-flip"):     # beside it: the other engines, played the same way
        config = GameConfig(game, CONFIG.players)
        t = best_of(args.repeats, lambda: [random_game(config, s) for s in seeds])
        print(f"random 4-player {game} games, played by a random table: {args.games / t:8.0f} games/s")

    logs = [random_game(CONFIG, s).events for s in seeds]

    def fold_all() -> None:
        for log in logs:
            state = Flip7State(CONFIG)
            for event in log:
                state.apply(event)
    t = best_of(args.repeats, fold_all)
    print(f"the same games folded from their event logs (replay/undo/recovery): {args.games / t:8.0f} games/s")

    turns, flips = sample_states(60)
    t = best_of(args.repeats, lambda: [s.bust_odds() for s in turns])
    print(f"bust odds, next card ({len(turns)} states):                {t / len(turns) * 1e6:8.2f} us  target < 50")
    t = best_of(args.repeats, lambda: [s.flip_bust_odds() for s in flips])
    print(f"bust odds within a Flip Three ({len(flips)} states, exact):  {t / len(flips) * 1e6:8.0f} us")


if __name__ == "__main__":
    main()
