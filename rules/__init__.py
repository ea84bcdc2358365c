"""tablemate's rules core: pure Python, no I/O, no hardware.

A game is a fold of events (rules/events.py) over a state. One engine class per game
(rules/flip7.py, ...), registered in rules/match.py ENGINES, provides:

- construction from a `GameConfig` (ValueError for options it does not accept);
- `apply(event) -> list[Notice]`, raising `Refused(reason)` with the state left exactly as it was
  (validate first, then mutate);
- the view, by player name: `players`, `turn` (who the next card goes to or who decides; None
  while a choice is pending or when the game is over), `pending` (a `Pending` or None), `over`,
  `round`, `dealer`, `rows`, `status`, `totals` (list, seat order), `winner_name`, `results`
  (list of RoundResult), `round_score(name)`, `turn_score()`, `bust_odds(player=None)` (the player
  on turn's, or that player's were it theirs; None where the game has none), `stop_allowed()`,
  `stop_score()` (what the player on turn banks by stopping now; None when they may not stop),
  `winning_total` (the total that ends the game);
  at every moment exactly one of `over`, `turn is not None`, `pending is not None` holds;
- `legal_events()`, `draw_pile() -> (labels, counts, total)` and `card_counts()` for random play;
- `clone()`, `to_dict()` / `from_dict()` (JSON-able, versioned), `summary()` (the `state` object of
  `tablemate replay --json`).

`Match` (rules/match.py) holds a config, the accepted events and the state: replay, undo and the
device's crash recovery are all a fold of the event list. `rules/script.py` reads and writes table
scripts, the text form of that list.
"""
