"""The Flip 7: Vengeance engine (docs/vengeance.md) and its Brutal mode.

Built on the table machinery of rules/flip7.py (`FlipTableState`: deck, deal, turns, stops, dealing
frames, rounds, saving); this file holds what Vengeance changes: what a card does when a player
receives it, the choices of player, card and swap, its scoring and its bust odds.

Frames on the stack (see rules/flip7.py):
- ["flip", target, cards left, set-aside cards, action] deals cards to `target`: four for a Flip
  Four, one for Just One More. Actions and malus cards dealt in it are set aside.
- ["apply", chooser, cards, next] plays set-aside cards one by one, in the order drawn, by the
  player they were dealt to (for Just One More's single card this is the same as at once).

The pending choice is a list [purpose, by, options, card], JSON-stable:
- "target": options are seat indices — who gets a malus card, a Just One More or a Flip Four;
- "card": options are [seat, card id] — the face-up card a Steal takes or a Discard discards;
- "swap": options are the [seat, card id] face-up cards; any two of different players is a swap;
- "flip7" (Brutal): options are the seats that can be penalized; card is None.
`pending` shows them by name and label: "card" options as [name, label], "swap" options as
[[name, label], [name, label]] (first player in seat order first), "flip7" options as the table
script's own answers: "bonus" and "penalize NAME".

Rulings where the rulebook is silent (also stated where they apply, and tested in
tests/scenarios/vengeance and tests/scenarios/brutal):
- Cards a player gets from a Swap or a Steal are placed in their row: a malus received that way
  stays with them (it is not given on); numbers act as if dealt.
- An Unlucky 7 dealt during a Flip Four also discards the malus and action cards set aside from
  that Flip Four so far ("every card already received is discarded"); it counts as one of the four.
- Set-aside cards are played one at a time: each is given its target (or card) and takes effect
  before the next is looked at (the rulebook: "applied after the four cards ... in the order drawn").
- Set-aside cards whose player has busted by the time they come up (e.g. through a set-aside
  Flip Four played on themselves) are discarded, like after a bust within the four.
- Each `/2` halves (one deck holds one); a Zero holder without Flip 7 counts 0 for their numbers
  and, in Brutal, their malus still applies (as for a busted player).
- Bust odds are those of the next card by itself (a number the player cannot hold). A Steal or
  Swap with one possible answer that hands them a busting number is not counted: that bust is
  the action's effect, like any other card an action moves.
- A player put out of turns by Just One More shows as "stopped".
- Brutal: the −15 of a Flip 7 penalty is part of the penalized player's round score, so totals
  stay the sums of the round scores; any other player (busted ones too) can be penalized.
"""

from __future__ import annotations

from functools import lru_cache

from rules.cards import DECKS
from rules.core import Notice, Pending, Refused, notice
from rules.events import Bonus, Card, Penalize, Shuffle, Stop, SwapCards, Take, Target
from rules.flip7 import BUSTED, FLIP7_BONUS, FLIP7_COUNT, STOPPED, FlipTableState, _event_word, parse_decks

DECK = DECKS["flip7-vengeance"]
LABELS = DECK.labels
CARD_ID = {label: i for i, label in enumerate(LABELS)}
COPIES = tuple(DECK.copies[label] for label in LABELS)    # of each card id in one deck
N_CARDS = len(LABELS)
ZERO = CARD_ID["zero"]
UNLUCKY_7 = CARD_ID["unlucky-7"]
LUCKY_13 = CARD_ID["lucky-13"]
HALF = CARD_ID["/2"]
JUST_ONE_MORE = CARD_ID["just-one-more"]
SWAP = CARD_ID["swap"]
STEAL = CARD_ID["steal"]
DISCARD = CARD_ID["discard"]
FLIP_FOUR = CARD_ID["flip-four"]

# value of each number card (ordinary and special), -1 for the others
VALUE = tuple(int(label) if label.isdigit() else {"zero": 0, "unlucky-7": 7, "lucky-13": 13}.get(label, -1)
              for label in LABELS)
NUMBER_IDS = tuple(i for i in range(N_CARDS) if VALUE[i] >= 0)
IS_NUMBER = tuple(v >= 0 for v in VALUE)
IS_MALUS = tuple(DECK.kind(label) == "malus" for label in LABELS)
MINUS = tuple(int(label) if IS_MALUS[i] and label != "/2" else 0 for i, label in enumerate(LABELS))
FLIP_FOUR_CARDS = 4
THIRTEEN = 13
UNLUCKY_VALUE = 7

# what a pending choice is (its Pending.kind)
KIND_TARGET, KIND_CARD, KIND_SWAP, KIND_FLIP7 = "target", "card", "swap", "flip7"
UNDECIDED, BONUS = -2, -1                # flip7_choice; a seat index means "penalize that player"

OPTIONS = ("decks",)


def score_row(labels: list[str] | tuple[str, ...]) -> int:
    """The Vengeance score of one player's face-up cards, not busted (docs/vengeance.md, Scoring): numbers
    summed (0 for a Zero holder without Flip 7), halved per `/2` rounding down, minus every malus,
    not below 0, plus 15 for seven number cards. Labels of other cards are ignored."""
    ids = [CARD_ID[label] for label in labels if label in CARD_ID]
    numbers = [i for i in ids if IS_NUMBER[i]]
    flip7 = len(numbers) >= FLIP7_COUNT
    total = _points(sum(VALUE[i] for i in numbers), ZERO in ids, flip7, ids.count(HALF), sum(MINUS[i] for i in ids))
    return total + (FLIP7_BONUS if flip7 else 0)


def _points(number_sum: int, zero: bool, flip7: bool, halves: int, minus: int, brutal: bool = False) -> int:
    """A standing player's round score before the Flip 7 bonus (minus: the malus cards' sum, <= 0)."""
    total = 0 if zero and not flip7 else number_sum
    for _ in range(halves):
        total //= 2
    total += minus
    return total if brutal or total >= 0 else 0


class VengeanceState(FlipTableState):
    game = "flip7-vengeance"
    title = "Flip 7: Vengeance"
    flip_odds_key = "flip_four_bust_odds"
    brutal = False
    DECK = DECK
    LABELS = LABELS
    CARD_ID = CARD_ID
    COPIES = COPIES
    _OPTION_FIELDS = ("decks",)
    _PLAYER_FIELDS = ("numbers", "count", "number_sum", "thirteens", "lucky", "zero", "minus", "halves")
    _ROUND_FIELDS = ("flip7_choice",)
    __slots__ = _PLAYER_FIELDS + _ROUND_FIELDS

    def _configure(self, options: dict[str, str], n_players: int) -> None:
        self.decks = parse_decks(options, OPTIONS, self.game, n_players)

    def _new_round_fields(self, n: int) -> None:
        self.numbers = [0] * n          # bitmask of number values held (bit 0: The Zero)
        self.count = [0] * n            # number cards held (toward Flip 7; two 13s count twice)
        self.number_sum = [0] * n
        self.thirteens = [0] * n        # 13s held, the Lucky 13 included
        self.lucky = [0] * n            # Lucky 13s held
        self.zero = [0] * n             # The Zero held
        self.minus = [0] * n            # sum of the -N malus cards
        self.halves = [0] * n           # /2 cards held
        self.flip7_choice = UNDECIDED

    # ---- public view ----------------------------------------------------------------------
    @property
    def pending(self) -> Pending | None:
        if self.choice is None:
            return None
        purpose, by, options, cid = self.choice
        names = self.players
        if purpose == KIND_TARGET:
            shown = tuple(names[i] for i in options)
        elif purpose == KIND_CARD:
            shown = tuple([names[p], LABELS[c]] for p, c in options)
        elif purpose == KIND_SWAP:
            shown = tuple([[names[a], LABELS[ca]], [names[b], LABELS[cb]]] for (a, ca), (b, cb) in _pairs(options))
        else:
            shown = ("bonus",) + tuple(f"penalize {names[i]}" for i in options)
        return Pending(purpose, names[by], shown, LABELS[cid] if cid is not None else None)

    def _stop_forbidden(self, player: int) -> str | None:
        if self.zero[player]:
            return f"{self.players[player]} holds The Zero and may not stop"
        return None

    def bust_odds(self, player: str | None = None) -> float | None:
        """Chance that the next card busts the player on turn (or `player`, were it theirs) by
        itself, from the cards left: a number they hold, except an Unlucky 7 (never busts) and a
        second 13 beside a Lucky 13. (A bust a Steal or Swap hands them is the action's effect,
        not counted.)"""
        p = self.turn_index if player is None else self.players.index(player)
        if p < 0:
            return None
        counts, total = self.effective_deck()
        if not total:
            return 0.0
        held, thirteens, lucky = self.numbers[p], self.thirteens[p], self.lucky[p]
        bust = 0
        for cid in NUMBER_IDS:
            if counts[cid] and _busts(cid, held, thirteens, lucky):
                bust += counts[cid]
        return bust / total

    def flip_bust_odds(self) -> float | None:
        """During a Flip Four: the chance the target busts within the cards still to come in it,
        exact from the cards left in the deck. (A Flip Four set aside for later is counted when it
        begins; when the deck holds fewer cards than are still to come, the cards after a reshuffle
        are not counted.)"""
        if self.turn_index < 0 or not self.stack:
            return None
        frame = self.stack[-1]
        if frame[0] != "flip" or frame[4] != FLIP_FOUR:
            return None
        target, left = frame[1], frame[2]
        counts, total = self.effective_deck()
        numbers = tuple(counts[cid] for cid in NUMBER_IDS)
        return _bust_within(numbers, total - sum(numbers), self.numbers[target], self.thirteens[target],
                            self.lucky[target] > 0, self.count[target], left)

    def _score(self, p: int) -> int:
        if self.standing[p] == BUSTED:
            # Brutal: a busted player scores 0 with the malus cards given to them applied
            return self.minus[p] if self.brutal else 0
        total = _points(self.number_sum[p], bool(self.zero[p]), self.flip7 == p, self.halves[p], self.minus[p],
                        self.brutal)
        if self.flip7 == p and self.flip7_choice < 0:       # undecided yet, or the bonus
            total += FLIP7_BONUS
        return total

    def _round_scores(self) -> list[int]:
        scores = super()._round_scores()
        if self.flip7_choice >= 0:
            scores[self.flip7_choice] -= FLIP7_BONUS
        return scores

    # ---- events ------------------------------------------------------------------------------
    def apply(self, event) -> list[Notice]:
        kind = type(event)
        if kind is Card:
            return self._card(event)
        if kind is Stop:
            return self._stop(event)
        if kind is Target or kind is Take or kind is SwapCards:
            return self._answer(event)
        if kind is Bonus or kind is Penalize:
            return self._flip7_answer(event)
        if kind is Shuffle:
            return self._shuffle()
        raise Refused(f"{_event_word(event)} is not an event of {self.title}")

    def _waiting_reason(self) -> str:
        purpose, by, _, cid = self.choice
        name = self.players[by]
        if purpose == KIND_TARGET:
            return f"{name} must first choose who gets the {LABELS[cid]} (target NAME)"
        if purpose == KIND_CARD:
            verb = "steal" if cid == STEAL else "discard"
            return f"{name} must first choose a card to {verb} (take NAME LABEL)"
        if purpose == KIND_SWAP:
            return f"{name} must first choose two cards to swap (swap NAME LABEL NAME LABEL)"
        return f"{name} made a Flip 7 and must first choose: bonus, or penalize NAME"

    def _dealing_words(self, frame: list) -> str:
        return "a Flip Four" if frame[4] == FLIP_FOUR else "a card by Just One More"

    def _face_up(self, name: str, label: str) -> tuple[int, int]:
        """(seat, card id) of a face-up card named in an answer, or a refusal saying why not."""
        p = self._player(name)
        cid = self._card_id(label)
        if self.standing[p] == BUSTED:
            raise Refused(f"{self.players[p]} has busted: their cards are face down")
        if cid not in self.cards[p]:
            raise Refused(f"{self.players[p]} has no {LABELS[cid]} in front of them")
        return p, cid

    def _answer(self, event) -> list[Notice]:
        """A `target`, `take` or `swap` line answering the pending choice."""
        if self.over:
            raise Refused("the game is over: there is nothing to choose")
        if self.choice is None:
            raise Refused("there is no choice to make now")
        purpose, by, options, cid = self.choice
        expected = {KIND_TARGET: Target, KIND_CARD: Take, KIND_SWAP: SwapCards}.get(purpose)
        if type(event) is not expected:
            raise Refused(self._waiting_reason())
        notices: list[Notice] = []
        if purpose == KIND_TARGET:
            chosen = self._player(event.player)
            if chosen not in options:
                allowed = ", ".join(self.players[i] for i in options)
                why = "has busted" if self.standing[chosen] == BUSTED else "cannot be chosen"
                raise Refused(f"{self.players[chosen]} {why}: choose who gets the {LABELS[cid]} among {allowed}")
            self.choice = None
            self._give(by, cid, chosen, notices)
        elif purpose == KIND_CARD:
            p, card = self._face_up(event.player, event.label)
            if cid == STEAL and p == by:
                raise Refused(f"a Steal takes a card from another player, not from {self.players[by]}")
            self.choice = None
            self._take(by, cid, p, card, notices)
        else:
            a, card_a = self._face_up(event.a, event.a_label)
            b, card_b = self._face_up(event.b, event.b_label)
            if a == b:
                raise Refused("a Swap exchanges the cards of two different players")
            self.choice = None
            self._swap(by, a, card_a, b, card_b, notices)
        self._settle(notices)
        return notices

    def _flip7_answer(self, event) -> list[Notice]:
        if self.over:
            raise Refused("the game is over: there is nothing to choose")
        if self.choice is None or self.choice[0] != KIND_FLIP7:
            if self.choice is not None:
                raise Refused(self._waiting_reason())
            if not self.brutal:
                raise Refused("bonus and penalize are for Brutal mode: here a Flip 7 always scores +15")
            raise Refused("nobody has made a Flip 7 to choose for")
        by = self.choice[1]
        notices: list[Notice] = []
        if type(event) is Penalize:
            chosen = self._player(event.player)
            if chosen == by:
                raise Refused(f"{self.players[by]} cannot penalize themselves: take the bonus or name another player")
            self.flip7_choice = chosen
            notices.append(notice("penalized", self.players[chosen], -FLIP7_BONUS))
        else:
            self.flip7_choice = BONUS
            notices.append(notice("bonus", self.players[by], FLIP7_BONUS))
        self.choice = None
        self._settle(notices)
        return notices

    # ---- mechanics -------------------------------------------------------------------------
    def _receive(self, p: int, cid: int, in_flip: bool, notices: list[Notice]) -> None:
        """A card dealt to p (by the deal, a turn, a Flip Four or Just One More)."""
        if IS_NUMBER[cid]:
            self._receive_number(p, cid, in_flip, notices)
        elif in_flip:                       # applied after the dealing frame, if p survives it
            self.stack[-1][3].append(cid)
        else:
            self._drawn(p, cid, notices)

    def _receive_number(self, p: int, cid: int, in_flip: bool, notices: list[Notice]) -> None:
        name = self.players[p]
        if cid == UNLUCKY_7:
            for card in self.cards[p]:
                self._to_discard(card)
            if in_flip:                     # the cards set aside from this Flip Four go too
                for card in self.stack[-1][3]:
                    self._to_discard(card)
                self.stack[-1][3].clear()
            notices.append(notice("unlucky_7", name, len(self.cards[p])))
            self.cards[p] = [cid]
            self._recount(p)
            return
        value = VALUE[cid]
        if _busts(cid, self.numbers[p], self.thirteens[p], self.lucky[p]):
            self.cards[p].append(cid)
            self.standing[p] = BUSTED
            notices.append(notice("bust", name, LABELS[cid]))
            return
        self.cards[p].append(cid)
        self.numbers[p] |= 1 << value
        self.count[p] += 1
        self.number_sum[p] += value
        if value == THIRTEEN:
            self.thirteens[p] += 1
            if cid == LUCKY_13:
                self.lucky[p] += 1
        elif cid == ZERO:
            self.zero[p] += 1
        if self.count[p] >= FLIP7_COUNT and self.flip7 < 0:
            self.flip7 = p
            self.round_ended = True
            notices.append(notice("flip7", name))

    def _place_malus(self, p: int, cid: int) -> None:
        self.cards[p].append(cid)
        if cid == HALF:
            self.halves[p] += 1
        else:
            self.minus[p] += MINUS[cid]

    def _take_in(self, p: int, cid: int, notices: list[Notice]) -> None:
        """A card p gets from a Swap or a Steal: a number acts as if dealt; a malus stays with p."""
        if IS_NUMBER[cid]:
            self._receive_number(p, cid, False, notices)
        else:
            self._place_malus(p, cid)

    def _remove(self, p: int, cid: int) -> None:
        row = self.cards[p]
        del row[len(row) - 1 - row[::-1].index(cid)]
        self._recount(p)

    def _recount(self, p: int) -> None:
        numbers = count = total = thirteens = lucky = zero = minus = halves = 0
        for cid in self.cards[p]:
            value = VALUE[cid]
            if value >= 0:
                numbers |= 1 << value
                count += 1
                total += value
                thirteens += value == THIRTEEN
                lucky += cid == LUCKY_13
                zero += cid == ZERO
            elif cid == HALF:
                halves += 1
            else:
                minus += MINUS[cid]
        self.numbers[p], self.count[p], self.number_sum[p] = numbers, count, total
        self.thirteens[p], self.lucky[p], self.zero[p] = thirteens, lucky, zero
        self.minus[p], self.halves[p] = minus, halves

    def _not_busted(self) -> list[int]:
        return [i for i, s in enumerate(self.standing) if s != BUSTED]

    def _face_up_cards(self, players) -> list[list[int]]:
        """[seat, card id] of every face-up card of these players (each label once per player)."""
        out = []
        for p in players:
            if self.standing[p] != BUSTED:
                seen = []
                for cid in self.cards[p]:
                    if cid not in seen:
                        seen.append(cid)
                        out.append([p, cid])
        return out

    def _drawn(self, by: int, cid: int, notices: list[Notice]) -> None:
        """A malus or action card `by` drew (or played from a Flip Four): its choice, made at once
        when the rules leave only one answer; with none the card is discarded without effect."""
        n = len(self.players)
        if IS_MALUS[cid]:
            options = list(range(n)) if self.brutal else self._not_busted()
            purpose = KIND_TARGET
        elif cid == JUST_ONE_MORE or cid == FLIP_FOUR:
            options = self._not_busted()
            purpose = KIND_TARGET
        elif cid == SWAP:
            options = self._face_up_cards(range(n))
            purpose = KIND_SWAP
        else:
            options = self._face_up_cards(i for i in range(n) if i != by or cid == DISCARD)
            purpose = KIND_CARD
        answers = _pairs(options) if purpose == KIND_SWAP else options
        if len(answers) > 1:
            self.choice = [purpose, by, options, cid]
        elif not answers:
            self._to_discard(cid)
            notices.append(notice("discarded", self.players[by], LABELS[cid]))
        elif purpose == KIND_TARGET:
            self._give(by, cid, answers[0], notices)
        elif purpose == KIND_CARD:
            self._take(by, cid, answers[0][0], answers[0][1], notices)
        else:
            (a, card_a), (b, card_b) = answers[0]
            self._swap(by, a, card_a, b, card_b, notices)

    def _give(self, by: int, cid: int, target: int, notices: list[Notice]) -> None:
        """A malus card to its recipient, or a Just One More / Flip Four played on its target."""
        name = self.players[target]
        if IS_MALUS[cid]:
            self._place_malus(target, cid)
            notices.append(notice("malus", name, LABELS[cid]))
            return
        self._to_discard(cid)                       # actions are discarded after use
        if cid == JUST_ONE_MORE:
            # skipped by the dealer from now on, as if stopped — after the one card it deals
            self.standing[target] = STOPPED
            self.stack.append(["flip", target, 1, [], cid])
            notices.append(notice("just_one_more", name))
        else:
            self.stack.append(["flip", target, FLIP_FOUR_CARDS, [], cid])
            notices.append(notice("flip_four", name))

    def _take(self, by: int, cid: int, p: int, card: int, notices: list[Notice]) -> None:
        """Steal (p's card into by's row, as if dealt) or Discard (p's card to the discard pile)."""
        self._to_discard(cid)
        self._remove(p, card)
        if cid == STEAL:
            notices.append(notice("stolen", self.players[p], LABELS[card]))
            self._take_in(by, card, notices)
        else:
            self._to_discard(card)
            notices.append(notice("discarded", self.players[p], LABELS[card]))

    def _swap(self, by: int, a: int, card_a: int, b: int, card_b: int, notices: list[Notice]) -> None:
        self._to_discard(SWAP)
        self._remove(a, card_a)
        self._remove(b, card_b)
        notices.append(notice("swapped", None, ((self.players[a], LABELS[card_a]), (self.players[b], LABELS[card_b]))))
        # the order of the two receipts cannot matter: one swap cannot bring both to seven numbers
        self._take_in(a, card_b, notices)
        self._take_in(b, card_a, notices)

    def _after_flip(self, frame: list, notices: list[Notice]) -> None:
        _, target, _, set_aside, _ = frame
        if not set_aside:
            return
        if self.standing[target] == BUSTED:
            self._discard_all(target, set_aside, notices)
            return
        self.stack.append(["apply", target, set_aside, 0])

    def _step_frame(self, frame: list, notices: list[Notice]) -> None:
        """One step of an "apply" frame: the next set-aside card, in the order drawn."""
        _, chooser, items, i = frame
        if i < len(items) and self.standing[chooser] == BUSTED:
            self._discard_all(chooser, items[i:], notices)
            i = len(items)
        if i == len(items):
            self.stack.pop()
            return
        frame[3] = i + 1
        self._drawn(chooser, items[i], notices)

    def _discard_all(self, player: int, cards: list[int], notices: list[Notice]) -> None:
        for cid in cards:
            self._to_discard(cid)
            notices.append(notice("discarded", self.players[player], LABELS[cid]))

    def _frame_cards(self, frame: list) -> list[int]:
        return frame[3] if frame[0] == "flip" else frame[2][frame[3]:]

    def _choice_card(self) -> int | None:
        return self.choice[3] if self.choice is not None else None

    def _end_round(self, notices: list[Notice]) -> None:
        if self.flip7 >= 0 and self.flip7_choice == UNDECIDED:
            others = [i for i in range(len(self.players)) if i != self.flip7] if self.brutal else []
            if others:                  # Brutal: +15 for themselves, or -15 to someone else
                self.choice = [KIND_FLIP7, self.flip7, others, None]
                return
            self.flip7_choice = BONUS
        super()._end_round(notices)

    def _choice_events(self) -> list:
        purpose, _, options, _ = self.choice
        names = self.players
        if purpose == KIND_TARGET:
            return [Target(names[i]) for i in options]
        if purpose == KIND_CARD:
            return [Take(names[p], LABELS[c]) for p, c in options]
        if purpose == KIND_SWAP:
            return [SwapCards(names[a], LABELS[ca], names[b], LABELS[cb]) for (a, ca), (b, cb) in _pairs(options)]
        return [Bonus()] + [Penalize(names[i]) for i in options]


class BrutalVengeanceState(VengeanceState):
    """Brutal mode: round scores can go below 0, malus cards may go to busted players, and the
    Flip 7 player chooses +15 for themselves or -15 to another player."""
    game = "flip7-vengeance-brutal"
    brutal = True
    __slots__ = ()


def _pairs(cards: list[list[int]]) -> list[tuple[list[int], list[int]]]:
    """Every two of these face-up cards that belong to two different players."""
    return [(x, y) for i, x in enumerate(cards) for y in cards[i + 1:] if x[0] != y[0]]


def _busts(cid: int, held: int, thirteens: int, lucky: int) -> bool:
    """Does number card `cid` bust a player holding the values `held`? An Unlucky 7 never does;
    a 13 beside a single 13 does not when either of the two is a Lucky 13."""
    if cid == UNLUCKY_7:
        return False
    value = VALUE[cid]
    if not held >> value & 1:
        return False
    return not (value == THIRTEEN and thirteens == 1 and (lucky or cid == LUCKY_13))


def _bust_within(numbers: tuple[int, ...], neutral: int, held: int, thirteens: int, lucky: bool,
                 count: int, k: int) -> float:
    """Exact chance of busting within the next k cards of a Flip Four.

    `numbers` are the copies left of each number card (NUMBER_IDS order), `held` the values the
    target holds (bits), `count` their number cards; "neutral" cards (malus and actions) are set
    aside during the four and never bust. An Unlucky 7 leaves only itself; a Flip 7 ends the Flip
    Four safely. The plain values (all but 7 and 13) only matter by (held, copies left), so the
    state is reduced to their sorted multiset: draws that lead to the same situation are counted
    once, which keeps four cards from a full deck to a few hundred states."""
    copies = dict(zip(NUMBER_IDS, numbers))
    plain = tuple(sorted((bool(held >> VALUE[cid] & 1), n) for cid, n in copies.items()
                         if n and VALUE[cid] not in (UNLUCKY_VALUE, THIRTEEN)))
    return _odds(plain, copies[CARD_ID["7"]], bool(held >> UNLUCKY_VALUE & 1), copies[UNLUCKY_7],
                 copies[CARD_ID["13"]], copies[LUCKY_13], thirteens, bool(lucky), neutral, count, k)


@lru_cache(maxsize=16384)
def _odds(plain: tuple[tuple[bool, int], ...], sevens: int, held7: bool, unlucky: int, thirteens_left: int,
          lucky_left: int, thirteens: int, lucky: bool, neutral: int, count: int, k: int) -> float:
    """_bust_within on the reduced state: `plain` is the sorted (held, copies left) of each plain
    value with copies left; then the ordinary 7s left, whether a 7 is held, the Unlucky 7s left,
    the ordinary 13s and Lucky 13s left, the 13s held, whether a Lucky 13 is held."""
    total = sum(n for _, n in plain) + sevens + unlucky + thirteens_left + lucky_left + neutral
    if k == 0 or total == 0:
        return 0.0
    go_on = k > 1 and count + 1 < FLIP7_COUNT          # a new number leaves cards to come, no Flip 7
    p = 0.0
    i = 0
    while i < len(plain):
        j = i + 1
        while j < len(plain) and plain[j] == plain[i]:
            j += 1
        is_held, n = plain[i]
        w = (j - i) * n / total                        # any of these values: the same situation
        if is_held:
            p += w
        elif go_on:
            rest = plain[:i] + plain[i + 1:] + (((True, n - 1),) if n > 1 else ())
            p += w * _odds(tuple(sorted(rest)), sevens, held7, unlucky, thirteens_left, lucky_left,
                           thirteens, lucky, neutral, count + 1, k - 1)
        i = j
    if sevens:
        if held7:
            p += sevens / total
        elif go_on:
            p += sevens / total * _odds(plain, sevens - 1, True, unlucky, thirteens_left, lucky_left,
                                        thirteens, lucky, neutral, count + 1, k - 1)
    if unlucky and k > 1:                               # never busts; leaves only itself
        cleared = tuple(sorted((False, n) for _, n in plain))
        p += unlucky / total * _odds(cleared, sevens, True, unlucky - 1, thirteens_left, lucky_left,
                                     0, False, neutral, 1, k - 1)
    if thirteens_left:
        if thirteens >= 2 or (thirteens == 1 and not lucky):
            p += thirteens_left / total
        elif go_on:
            p += thirteens_left / total * _odds(plain, sevens, held7, unlucky, thirteens_left - 1, lucky_left,
                                                thirteens + 1, lucky, neutral, count + 1, k - 1)
    if lucky_left:
        if thirteens >= 2:
            p += lucky_left / total
        elif go_on:
            p += lucky_left / total * _odds(plain, sevens, held7, unlucky, thirteens_left, lucky_left - 1,
                                            thirteens + 1, True, neutral, count + 1, k - 1)
    if neutral and k > 1:
        p += neutral / total * _odds(plain, sevens, held7, unlucky, thirteens_left, lucky_left,
                                     thirteens, lucky, neutral - 1, count, k - 1)
    return p
