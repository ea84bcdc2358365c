"""What one more card is worth, on average, to the player on turn against stopping now (Flip 7
and Flip 7: Vengeance; the device shows it beside the bust odds as "+3.2 draw" / "-4.1 stop").

Definition: the expected round score of the player on turn right after the next card, less their
round score now (what stopping banks). The next card is drawn from the cards the bust odds count
(the deck, or the discard pile when the deck is empty: `effective_deck`), each physical card
equally likely, and each is applied by the game's own engine to a copy of the state, so the
figure follows that game's scoring exactly:
- a bust scores 0 (Vengeance Brutal: the malus cards given to the player still count); a
  Second Chance held turns a duplicate into no change;
- a new number, `+N` and `x2` (Vengeance: `/2`, The Zero, Unlucky 7, Lucky 13) score as the
  rules say, with the 15-point Flip 7 bonus for a seventh different number (the round ends there:
  the score is the round's result);
- a card that waits for a choice (Freeze, Flip Three, Second Chance to give, Vengeance's actions
  and malus cards to give) is counted at the player's score as it stands when the choice is asked:
  the drawer chooses where it goes, and the cards a Flip Three would deal are not looked ahead to.
So the figure is the worth of exactly one more card, not of the best play after it.
`None` where the player on turn cannot stop (the deal, a Flip Three, a choice waiting, The Zero)
or no card is left.
"""

from __future__ import annotations

from rules.events import Card


def one_more_card(state) -> float | None:
    """Expected round score after one more card less the round score now, for the player on turn."""
    p = state.turn_index
    if p < 0 or state.pending is not None or state.over or not state.stop_allowed():
        return None
    counts, total = state.effective_deck()
    if not total:
        return None
    name = state.players[p]
    now = state.round_score(name)
    rounds = len(state.results)
    expected = 0.0
    for cid, copies in enumerate(counts):
        if not copies:
            continue
        twin = state.clone()
        twin.apply(Card(state.LABELS[cid]))
        after = twin.results[-1].scores[name] if len(twin.results) > rounds else twin.round_score(name)
        expected += copies * after
    return expected / total - now
