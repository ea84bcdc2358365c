"""What one more card is worth (rules/advice.py): the cost of one computation on a turn of a
Flip 7 and a Vengeance game, mid-round with a full-ish deck (every distinct card left is applied
to a copy of the state once). The turn screen computes it once per game change, not per frame.
Run: `make bench` or `.venv/bin/python bench/advice_bench.py [--repeats N]`. Prints the best CPU
time per computation over the runs, and the load average (the machine may be shared).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rules.advice import one_more_card  # noqa: E402
from rules.core import GameConfig  # noqa: E402
from rules.events import Card, Stop  # noqa: E402
from rules.match import Match  # noqa: E402


def a_turn(game: str):
    """Four players dealt, ann on turn with 3 cards, the others stopped: a turn one can stop on."""
    match = Match(GameConfig(game, ("ann", "ben", "cat", "dan"), dealer="dan"))
    for label in ("5", "6", "7", "8", "9"):            # the deal, then ann's first turn
        match.apply(Card(label))
    for _ in range(3):                                 # ben, cat, dan stop
        match.apply(Stop())
    match.apply(Card("11"))
    assert match.state.turn == "ann" and one_more_card(match.state) is not None
    return match.state


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    for game in ("flip7", "flip7-vengeance"):
        state = a_turn(game)
        best = float("inf")
        for _ in range(args.repeats):
            started = time.process_time()
            one_more_card(state)
            best = min(best, time.process_time() - started)
        print(f"one more card's worth, {game}: {best * 1e3:.2f} ms CPU (best of {args.repeats}; "
              f"{len(state.card_counts())} distinct cards left; load {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
