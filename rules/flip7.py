"""The Flip 7 engine (docs/flip7.md), and the table machinery its variants share.

`FlipTableState` is what Flip 7 and Flip 7: Vengeance (rules/vengeance.py) have in common: the deck
and discard pile carried across rounds, the initial deal and the turns, stops, nested dealing, round
ends, totals and the winner, copying and saving. Each game's class adds what a card does when a
player receives it, its choices, its scoring and its bust odds.

The state is a handful of flat lists indexed by player and by card id, so that applying an event,
cloning and bust odds stay cheap on a Pi. Control flow that the rules nest — a Flip Three inside
the deal, set-aside actions chosen and then played one by one, a Flip Three set off by a set-aside
Flip Three — is an explicit stack of frames; `_settle` runs the stack after every event until the
game waits for the table again: a card for a player, a stop, or a choice. A frame
["flip", target, cards left, set-aside cards, ...] deals cards to one player; the other frame
kinds belong to each game.

Every public mutator validates first and mutates after, so a refused event leaves the state exactly
as it was.
"""

from __future__ import annotations

import copy
from typing import Any

from rules.cards import DECKS
from rules.core import (GameConfig, Notice, Pending, Refused, RoundResult, load_state, lookup, notice,
                        pending_choice, save_state, seat_map, seat_of, shorten, whole_number)
from rules.events import Card, Shuffle, Stop, Target

DECK = DECKS["flip7"]
LABELS = DECK.labels
CARD_ID = {label: i for i, label in enumerate(LABELS)}
COPIES = tuple(DECK.copies[label] for label in LABELS)    # of each card id in one deck
HIGHEST_NUMBER = 12                      # ids 0..12 are the numbers, id == value
X2 = CARD_ID["x2"]
FREEZE = CARD_ID["freeze"]
FLIP_THREE = CARD_ID["flip-three"]
SECOND_CHANCE = CARD_ID["second-chance"]
PLUS_VALUE = {CARD_ID[m]: int(m[1:]) for m in ("+2", "+4", "+6", "+8", "+10")}
FLIP7_COUNT = 7
FLIP7_BONUS = 15
WINNING_TOTAL = 200
FLIP_THREE_CARDS = 3

ACTIVE, STOPPED, FROZEN, BUSTED = 0, 1, 2, 3
STATUS_NAMES = ("active", "stopped", "frozen", "busted")

# what a pending player choice is for
ACTION, GIFT, SET_ASIDE = "action", "gift", "set_aside"

OPTIONS = {"set_aside_after_bust": ("play", "discard"), "decks": None}
STATE_VERSION = 1


def score_row(labels: list[str] | tuple[str, ...]) -> int:
    """The Flip 7 score of one player's cards: numbers summed, doubled by `x2`, plus every `+N`,
    plus 15 for seven different numbers. Labels that are not numbers or modifiers are ignored."""
    ids = [CARD_ID[label] for label in labels if label in CARD_ID]
    numbers = {i for i in ids if i <= HIGHEST_NUMBER}
    total = sum(numbers) * (2 if X2 in ids else 1)
    total += sum(PLUS_VALUE.get(i, 0) for i in ids)
    return total + (FLIP7_BONUS if len(numbers) >= FLIP7_COUNT else 0)


def parse_decks(options: dict[str, str], known: tuple[str, ...], game: str, n_players: int) -> int:
    """Refuse unknown options; the number of decks (two beyond 18 players unless set)."""
    for key in options:
        if key not in known:
            raise ValueError(f"unknown option {shorten(key)!r} for {game} (known: {', '.join(known)})")
    decks_text = options.get("decks", "1" if n_players <= 18 else "2")
    return whole_number(decks_text, 1, 4, "option decks")


class FlipTableState:
    """The table machinery of Flip 7 and its variants (see the module docstring).

    A game class sets the class attributes below and provides the hooks: `_configure` (options),
    `_new_round_fields` (its per-player lists), `apply`, `_receive` (a card dealt to a player),
    `_after_flip` / `_step_frame` (what a finished dealing frame sets off; the game's own frames),
    `_frame_cards` (cards a frame holds), `_choice_card` (a drawn card awaiting a choice),
    `_choice_events`, `_waiting_reason`, `_dealing_words`, `_score`, `pending`, `bust_odds`,
    `flip_bust_odds`; and where the game needs them `_stop_forbidden`, `_round_scores`, `_restore`
    (after loading)."""
    game: str
    title: str                           # the game's name in refusals
    flip_odds_key: str                   # summary key of the odds while a dealing frame runs
    winning_total = WINNING_TOTAL        # the game ends at a round that takes someone to it
    DECK = DECK
    LABELS = LABELS
    CARD_ID = CARD_ID
    COPIES = COPIES
    _OPTION_FIELDS: tuple[str, ...]      # set from the options, saved
    _PLAYER_FIELDS: tuple[str, ...]      # flat per-player lists reset every round
    _ROUND_FIELDS: tuple[str, ...] = ()  # other per-round values of the game
    _COMMON_FIELDS = ("deck", "deck_left", "discard", "discard_left", "totals", "round", "dealer_index",
                      "over", "winner", "cards", "standing", "dealing", "deal_pos", "turn_owner", "advance",
                      "stack", "choice", "flip7", "round_ended", "turn_index")

    __slots__ = ("players", "seat", "decks", "deck", "deck_left", "discard", "discard_left", "totals",
                 "results", "round", "dealer_index", "over", "winner", "cards", "standing", "dealing",
                 "deal_pos", "turn_owner", "advance", "stack", "choice", "flip7", "round_ended", "turn_index")

    def __init__(self, config: GameConfig):
        self.players = tuple(config.players)
        self.seat = seat_map(self.players)
        n = len(self.players)
        self._configure(config.options, n)
        self.deck = self.full_deck()
        self.deck_left = sum(self.deck)
        self.discard = [0] * len(self.LABELS)
        self.discard_left = 0
        self.totals = [0] * n
        self.results: list[RoundResult] = []
        self.round = 0
        self.dealer_index = self.players.index(config.dealer) if config.dealer else 0
        self.over = False
        self.winner = -1
        self._start_round(self.dealer_index)
        self._settle([])

    def full_deck(self) -> list[int]:
        return [copies * self.decks for copies in self.COPIES]

    # ---- round set-up -------------------------------------------------------------------
    def _start_round(self, dealer: int) -> None:
        n = len(self.players)
        self.round += 1
        self.dealer_index = dealer
        self.cards: list[list[int]] = [[] for _ in range(n)]   # cards in front, in order received
        self._new_round_fields(n)
        self.standing = [ACTIVE] * n
        self.dealing = True
        self.deal_pos = 0                                     # index into the deal order
        self.turn_owner = (dealer + 1) % n
        self.advance = False                                  # move the deal/turn on once settled
        self.stack: list[list] = []
        self.choice = None                                    # what the table must choose; per game
        self.flip7 = -1
        self.round_ended = False
        self.turn_index = -1

    # ---- public view ----------------------------------------------------------------------
    # Public view, by player name. Internally players are indices: see the fields set above.
    @property
    def turn(self) -> str | None:
        """Who the next card goes to or who decides next; None when a choice is pending or the game is over."""
        return self.players[self.turn_index] if self.turn_index >= 0 else None

    @property
    def dealer(self) -> str:
        return self.players[self.dealer_index]

    @property
    def rows(self) -> dict[str, list[str]]:
        labels = self.LABELS
        return {name: [labels[c] for c in self.cards[i]] for i, name in enumerate(self.players)}

    @property
    def status(self) -> dict[str, str]:
        return {name: STATUS_NAMES[self.standing[i]] for i, name in enumerate(self.players)}

    @property
    def winner_name(self) -> str | None:
        return self.players[self.winner] if self.over else None

    def index_of(self, name: str) -> int:
        return self._player(name)

    def effective_deck(self) -> tuple[list[int], int]:
        """The cards the next draw comes from: the deck, or the discard pile about to be shuffled
        into a new deck when the deck has run out."""
        if self.deck_left:
            return self.deck, self.deck_left
        return self.discard, self.discard_left

    def round_score(self, name: str) -> int:
        """`name`'s score for this round so far."""
        return self._score(self._player(name))

    def turn_score(self) -> int:
        """The score so far this round of the player on turn (0 when nobody is)."""
        return self._score(self.turn_index) if self.turn_index >= 0 else 0

    def stop_allowed(self) -> bool:
        return self.stop_score() is not None

    def stop_score(self) -> int | None:
        """What the player on turn banks by stopping now (their round score), or None when they
        may not stop: stop_allowed() and turn_score() in one call, for a table deciding whether
        to stop. (The same conditions as _stop_refusal(None), without building its sentences.)"""
        if self.choice is not None or self.over or self.stack:
            return None
        p = self.turn_index
        if self.dealing and not self.cards[p] or self._stop_forbidden(p) is not None:
            return None
        return self._score(p)

    def card_counts(self) -> dict[str, int]:
        counts, _ = self.effective_deck()
        labels = self.LABELS
        return {labels[i]: c for i, c in enumerate(counts) if c}

    def draw_pile(self) -> tuple[tuple[str, ...], list[int], int]:
        """(labels, copies of each the next card may be, how many cards that is)."""
        counts, total = self.effective_deck()
        return self.LABELS, counts, total

    # ---- events ------------------------------------------------------------------------------
    def _player(self, name: str) -> int:
        seat = self.seat.get(name)          # (the name as written: the common case, without calls)
        return seat if seat is not None else seat_of(self.seat, name)

    def _refuse_if_waiting(self, what: str) -> None:
        if self.over:
            raise Refused(f"the game is over: no {what} now")
        if self.choice is not None:
            raise Refused(self._waiting_reason())

    def _card(self, event: Card) -> list[Notice]:
        if self.over or self.choice is not None:
            self._refuse_if_waiting("card")
        cid = self.CARD_ID.get(event.label)
        if cid is None:
            cid = self._card_id(event.label)
        if self.deck_left:
            counts, total = self.deck, self.deck_left
        else:
            counts, total = self.discard, self.discard_left
        if not total:
            raise Refused("the deck and the discard pile are both empty: there is no card to turn")
        if counts[cid] == 0:
            raise Refused(f"no {self.LABELS[cid]} is left in the deck")
        to = self.turn_index
        if event.to is not None:
            named = self._player(event.to)
            if named != to:
                self._check_redirect(named)
                to = named
        notices: list[Notice] = []
        if not self.deck_left:
            self._reshuffle(notices)
        self.deck[cid] -= 1
        self.deck_left -= 1
        if self.stack:                         # a card of a Flip Three (or of the variant's dealing frames)
            self.stack[-1][2] -= 1
            self._receive(to, cid, True, notices)
        else:
            if to != self.turn_index:                # the table dealt to someone else: play goes on from them
                self.turn_owner = to
            self.advance = True
            self._receive(to, cid, False, notices)
        self._settle(notices)
        return notices

    def _card_id(self, label: str) -> int:
        return lookup(self.CARD_ID, label, f"{label} is not a card of the {self.title} deck")

    def _check_redirect(self, named: int) -> None:
        name = self.players[named]
        if self.standing[named] != ACTIVE:
            raise Refused(f"{name} is out of this round ({STATUS_NAMES[self.standing[named]]})")
        expected = self.players[self.turn_index]
        if self.stack:
            raise Refused(f"this card goes to {expected}, who is being dealt {self._dealing_words(self.stack[-1])}")
        if self.dealing:
            raise Refused(f"the initial deal goes round in order: this card goes to {expected}")

    def _stop_refusal(self, name: str | None) -> str | None:
        if self.over:
            return "the game is over"
        if self.choice is not None:
            return self._waiting_reason()
        turn = self.players[self.turn_index]
        if name is not None and self._player(name) != self.turn_index:
            named = self.players[self._player(name)]
            if self.standing[self._player(name)] != ACTIVE:
                return f"{named} is already out of this round"
            return f"it is {turn}'s turn, not {named}'s"
        if self.stack:
            return f"{turn} is being dealt {self._dealing_words(self.stack[-1])} and cannot stop now"
        if self.dealing and not self.cards[self.turn_index]:
            return f"{turn} gets a first card in the initial deal and cannot stop yet"
        return self._stop_forbidden(self.turn_index)

    def _stop_forbidden(self, player: int) -> str | None:
        """Why the rules of the game forbid `player` to stop on their turn, if they do."""
        return None

    def _stop(self, event: Stop) -> list[Notice]:
        score = self.stop_score() if event.player is None else None
        if score is None:                   # refused, or the player named: the long way, with its reasons
            refusal = self._stop_refusal(event.player)
            if refusal:
                raise Refused(refusal)
            score = self._score(self.turn_index)
        p = self.turn_index
        self.standing[p] = STOPPED
        notices = [notice("stop", self.players[p], score)]
        self.advance = True
        self._settle(notices)
        return notices

    def _shuffle(self) -> list[Notice]:
        if self.over:
            raise Refused("the game is over")
        if not self.discard_left:
            raise Refused("the discard pile is empty: there is nothing to shuffle in")
        notices: list[Notice] = []
        self._reshuffle(notices)
        return notices

    # ---- mechanics -------------------------------------------------------------------------
    def _reshuffle(self, notices: list[Notice]) -> None:
        deck, discard = self.deck, self.discard
        for i in range(len(deck)):
            deck[i] += discard[i]
            discard[i] = 0
        self.deck_left += self.discard_left
        self.discard_left = 0
        notices.append(notice("shuffled", None, self.deck_left))

    def _to_discard(self, cid: int) -> None:
        self.discard[cid] += 1
        self.discard_left += 1

    def _settle(self, notices: list[Notice]) -> None:
        """Run the rules forward until the table must act: a card, a stop or a choice."""
        if self.advance and not (self.dealing or self.stack or self.round_ended or self.choice):
            # the common case: a turn ended with nothing left to resolve
            self.advance = False
            if ACTIVE in self.standing and (self.deck_left or self.discard_left):
                self.turn_index = self.turn_owner = self._next_active(self.turn_owner + 1)
                return
            self.round_ended = True
        self.turn_index = -1
        while not self.over:
            if self.choice is not None:
                return
            if not (self.deck_left or self.discard_left or self.round_ended):
                # Ruling (the rulebook is silent): every card is on the table, none can be turned, so
                # the round ends as if everyone still in had stopped.
                self.round_ended = True
            if self.round_ended:
                self._end_round(notices)
                continue
            if self.stack:
                frame = self.stack[-1]
                if frame[0] == "flip":
                    if frame[2] > 0 and self.standing[frame[1]] != BUSTED:
                        self.turn_index = frame[1]
                        return
                    self.stack.pop()
                    self._after_flip(frame, notices)
                else:
                    self._step_frame(frame, notices)
                continue
            if self.advance:
                self.advance = False
                if self.dealing:
                    self.deal_pos += 1
                else:
                    self.turn_owner = self._next_active(self.turn_owner + 1)
            if ACTIVE not in self.standing:
                self.round_ended = True
                continue
            n = len(self.players)
            if self.dealing:
                while self.deal_pos < n and self.standing[(self.dealer_index + 1 + self.deal_pos) % n] != ACTIVE:
                    self.deal_pos += 1
                if self.deal_pos < n:
                    self.turn_index = (self.dealer_index + 1 + self.deal_pos) % n
                    return
                self.dealing = False
                self.turn_owner = self._next_active(self.dealer_index + 1)
            elif self.standing[self.turn_owner] != ACTIVE:
                self.turn_owner = self._next_active(self.turn_owner)
            self.turn_index = self.turn_owner
            return

    def _next_active(self, start: int) -> int:
        n = len(self.players)
        for k in range(n):
            i = (start + k) % n
            if self.standing[i] == ACTIVE:
                return i
        return start % n

    def _round_scores(self) -> list[int]:
        return [self._score(i) for i in range(len(self.players))]

    def _end_round(self, notices: list[Notice]) -> None:
        self.round_ended = False
        players, totals = self.players, self.totals
        scores = self._round_scores()
        for i, score in enumerate(scores):
            totals[i] += score
        result = RoundResult(
            self.round, players[self.dealer_index], dict(zip(players, scores)),
            players[self.flip7] if self.flip7 >= 0 else None,
            tuple([name for name, standing in zip(players, self.standing) if standing == BUSTED]))
        self.results.append(result)
        notices.append(Notice("round_over", None, result))
        if self.stack:
            # set-aside cards still waiting (a Flip 7 ended the round) go to the discard pile
            for frame in self.stack:
                for cid in self._frame_cards(frame):
                    self._to_discard(cid)
            self.stack = []
        self.choice = None
        best = max(totals)
        if best >= WINNING_TOTAL and totals.count(best) == 1:
            self.over = True
            self.winner = totals.index(best)
            self.turn_index = -1
            notices.append(notice("game_over", players[self.winner]))
            return
        discard = self.discard
        for row in self.cards:
            for cid in row:
                discard[cid] += 1
            self.discard_left += len(row)
        self._start_round((self.dealer_index + 1) % len(players))

    def cards_everywhere(self) -> list[int]:
        """How many of each card are in the deck, the discard pile, in front of players, set aside
        and awaiting a choice: the deck composition, always (the conservation law the tests check)."""
        total = [self.deck[i] + self.discard[i] for i in range(len(self.deck))]
        for row in self.cards:
            for cid in row:
                total[cid] += 1
        for frame in self.stack:
            for cid in self._frame_cards(frame):
                total[cid] += 1
        cid = self._choice_card()
        if cid is not None:
            total[cid] += 1
        return total

    # ---- copying and saving ---------------------------------------------------------------
    def clone(self):
        """A copy that shares nothing the game changes in place: every field, the lists copied
        (names, round results and a pending choice are replaced, never changed, so they are
        shared). Field by field: copy.copy is several times slower, and a match copies its
        state for undo, the advice one copy per card label."""
        twin = type(self).__new__(type(self))
        twin.players, twin.seat, twin.results = self.players, self.seat, self.results[:]
        twin.deck, twin.deck_left = self.deck[:], self.deck_left
        twin.discard, twin.discard_left = self.discard[:], self.discard_left
        twin.totals, twin.round, twin.dealer_index = self.totals[:], self.round, self.dealer_index
        twin.over, twin.winner = self.over, self.winner
        twin.cards, twin.standing = [row[:] for row in self.cards], self.standing[:]
        twin.dealing, twin.deal_pos = self.dealing, self.deal_pos
        twin.turn_owner, twin.advance, twin.turn_index = self.turn_owner, self.advance, self.turn_index
        twin.stack = copy.deepcopy(self.stack) if self.stack else []
        twin.choice, twin.flip7, twin.round_ended = self.choice, self.flip7, self.round_ended
        for name in self._OPTION_FIELDS + self._ROUND_FIELDS:      # the game's own values (decks too)
            setattr(twin, name, getattr(self, name))
        for name in self._PLAYER_FIELDS:
            setattr(twin, name, getattr(self, name)[:])
        return twin

    @classmethod
    def _fields(cls) -> tuple[str, ...]:
        return cls._OPTION_FIELDS + cls._COMMON_FIELDS + cls._PLAYER_FIELDS + cls._ROUND_FIELDS

    def to_dict(self) -> dict[str, Any]:
        return save_state(self, self._fields(), STATE_VERSION)

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        state = load_state(cls, data, cls._fields(), STATE_VERSION)
        state._restore()
        return state

    def _restore(self) -> None:
        """Bring JSON-loaded fields (lists) back to the types the game keeps in memory."""

    # ---- for the JSON summary ---------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        turn = self.turn
        pending = self.pending
        odds = self.bust_odds()
        state = {
            "round": self.round,
            "dealer": self.dealer,
            "turn": turn,
            "pending": pending.to_json() if pending else None,
            "rows": self.rows,
            "status": self.status,
            "bust_odds": {turn: round(odds, 4)} if turn is not None and odds is not None else {},
            "deck_left": self.deck_left,
            "discard": self.discard_left,
        }
        flip_odds = self.flip_bust_odds()
        if flip_odds is not None:
            state[self.flip_odds_key] = {turn: round(flip_odds, 4)}
        return state

    def legal_events(self) -> list:
        """Every event the table could make now (cards by label, once per label left)."""
        if self.over:
            return []
        if self.choice is not None:
            return self._choice_events()
        events: list = [Card(label) for label in self.card_counts()]
        if self.stop_allowed():
            events.append(Stop())
        return events


class Flip7State(FlipTableState):
    """Flip 7. The pending choice is a tuple (purpose, by, options, card, drawer): purpose ACTION,
    GIFT or SET_ASIDE, options the seats `by` may choose."""
    game = "flip7"
    title = "Flip 7"
    flip_odds_key = "flip_three_bust_odds"
    _OPTION_FIELDS = ("set_aside_after_bust", "decks")
    _PLAYER_FIELDS = ("numbers", "distinct", "number_sum", "plus", "doubled", "has_second_chance")
    __slots__ = ("set_aside_after_bust",) + _PLAYER_FIELDS

    def _configure(self, options: dict[str, str], n_players: int) -> None:
        self.decks = parse_decks(options, tuple(OPTIONS), "flip7", n_players)
        self.set_aside_after_bust = options.get("set_aside_after_bust", "play")
        if self.set_aside_after_bust not in OPTIONS["set_aside_after_bust"]:
            raise ValueError("option set_aside_after_bust must be play or discard")

    def _new_round_fields(self, n: int) -> None:
        self.numbers = [0] * n                                # bitmask of number values held
        self.distinct = [0] * n                               # how many different numbers
        self.number_sum = [0] * n
        self.plus = [0] * n                                   # sum of +N modifiers
        self.doubled = [False] * n                            # holds x2
        self.has_second_chance = [False] * n

    # ---- public view ----------------------------------------------------------------------
    @property
    def pending(self) -> Pending | None:
        if self.choice is None:
            return None
        purpose, by, options, card, _ = self.choice
        names = self.players
        return pending_choice("target", names[by], tuple([names[i] for i in options]), LABELS[card])

    def bust_odds(self, player: str | None = None) -> float | None:
        """Chance that the next card busts the player on turn (or `player`, were it theirs); 0
        while they hold a Second Chance."""
        p = self.turn_index if player is None else self.players.index(player)
        if p < 0:
            return None
        if self.has_second_chance[p]:
            return 0.0
        counts, total = self.effective_deck()
        if not total:
            return 0.0
        mask = self.numbers[p]
        bust = 0
        v = 0
        while mask:
            if mask & 1:
                bust += counts[v]
            mask >>= 1
            v += 1
        return bust / total

    def flip_bust_odds(self) -> float | None:
        """During a Flip Three: the chance the target busts within the cards still to come in it.
        (A further Flip Three already queued for them is counted when it begins.)"""
        if self.turn_index < 0 or not self.stack or self.stack[-1][0] != "flip":
            return None
        _, target, left, _ = self.stack[-1]
        counts, total = self.effective_deck()
        numbers = counts[:HIGHEST_NUMBER + 1]
        neutral = total - sum(numbers) - counts[SECOND_CHANCE]
        return _bust_within(tuple(numbers), counts[SECOND_CHANCE], neutral, self.numbers[target],
                            self.has_second_chance[target], self.distinct[target], left)

    def _score(self, player: int) -> int:
        if self.standing[player] == BUSTED:
            return 0
        total = self.number_sum[player] * (2 if self.doubled[player] else 1) + self.plus[player]
        return total + (FLIP7_BONUS if self.flip7 == player else 0)

    def stop_score(self) -> int | None:
        # FlipTableState.stop_score without its two calls (a random table asks before every card):
        # Flip 7 forbids no stop, and the player on turn is neither busted nor has made a Flip 7
        # (the round would be over), so their score is _score's sum.
        if self.choice is None and not (self.over or self.stack):
            p = self.turn_index
            if not self.dealing or self.cards[p]:
                return self.number_sum[p] * (2 if self.doubled[p] else 1) + self.plus[p]
        return None

    # ---- events ------------------------------------------------------------------------------
    def apply(self, event) -> list[Notice]:
        kind = type(event)
        if kind is Card:
            return self._card(event)
        if kind is Stop:
            return self._stop(event)
        if kind is Target:
            return self._target(event)
        if kind is Shuffle:
            return self._shuffle()
        raise Refused(f"{_event_word(event)} is not an event of Flip 7")

    def _card(self, event: Card) -> list[Notice]:
        # The common cards inlined: a number, +N or x2 turned from the deck for the player on turn
        # (or being dealt to), with no choice or Flip Three open; checked whole before anything
        # changes. Each ends as the general path (_receive, then _settle) ends it: a number they
        # hold busts them (without a Second Chance); a new number (not their seventh) or a
        # modifier joins their row and the turn or the deal moves on to the next player still in;
        # a Freeze or Flip Three with two players or more still in waits for its target (the turn
        # moves on once it is played). Anything else takes the general path.
        try:
            cid = CARD_ID[event.label]
        except KeyError:                    # not a card of this deck: refused by the general path
            return FlipTableState._card(self, event)
        if not (event.to is None and self.choice is None and self.deck_left
                and not (self.over or self.stack or self.round_ended) and self.deck[cid]):
            return FlipTableState._card(self, event)
        p = self.turn_index
        if cid <= HIGHEST_NUMBER:
            bit = 1 << cid
            numbers = self.numbers
            if numbers[p] & bit:
                if self.has_second_chance[p]:
                    return FlipTableState._card(self, event)
                self.deck[cid] -= 1
                self.deck_left -= 1
                self.cards[p].append(cid)
                self.standing[p] = BUSTED
                notices = [notice("bust", self.players[p], LABELS[cid])]
                self.advance = True
                self._settle(notices)
                return notices
            if self.distinct[p] == FLIP7_COUNT - 1:
                return FlipTableState._card(self, event)
            numbers[p] |= bit
            self.number_sum[p] += cid
            self.distinct[p] += 1
        elif cid == X2:
            self.doubled[p] = True
        elif cid in PLUS_VALUE:
            self.plus[p] += PLUS_VALUE[cid]
        elif cid == FREEZE or cid == FLIP_THREE:
            options = self._active()
            if len(options) < 2:
                return FlipTableState._card(self, event)
            self.deck[cid] -= 1
            self.deck_left -= 1
            self.choice = (ACTION, p, tuple(options), cid, p)
            self.advance = True
            self.turn_index = -1
            return []
        else:
            return FlipTableState._card(self, event)
        # p, still in, keeps the card; the turn or the deal moves on
        self.deck[cid] -= 1
        self.deck_left -= 1
        self.cards[p].append(cid)
        if self.deck_left or self.discard_left:     # (p is still in: someone is)
            standing = self.standing
            n = len(standing)
            if self.dealing:
                first = self.dealer_index + 1
                pos = self.deal_pos + 1
                while pos < n and standing[(first + pos) % n] != ACTIVE:
                    pos += 1
                self.deal_pos = pos
                if pos < n:
                    self.turn_index = (first + pos) % n
                    return []
                self.dealing = False
                i = first % n
            else:
                i = (self.turn_owner + 1) % n
            while standing[i] != ACTIVE:
                i = (i + 1) % n
            self.turn_index = self.turn_owner = i
            return []
        notices = []
        self.advance = True
        self._settle(notices)
        return notices

    def _waiting_reason(self) -> str:
        purpose, by, _, card, _ = self.choice
        return f"{self.players[by]} must first choose {_choice_words(purpose, card)}"

    def _dealing_words(self, frame: list) -> str:
        return "a Flip Three"

    def _target(self, event: Target) -> list[Notice]:
        if self.over:
            raise Refused("the game is over: there is nothing to choose")
        if self.choice is None:
            raise Refused("there is no choice to make now")
        purpose, by, options, card, drawer = self.choice
        chosen = self._player(event.player)
        if chosen not in options:
            allowed = ", ".join(self.players[i] for i in options)
            raise Refused(f"{self.players[chosen]} cannot be chosen for the {LABELS[card]}: choose {allowed}")
        notices: list[Notice] = []
        self.choice = None
        if purpose == ACTION:
            self._play_action(card, chosen, notices)
        elif purpose == GIFT:
            self._give_second_chance(chosen, notices)
        else:                                   # SET_ASIDE: the frame on top records the choice
            frame = self.stack[-1]
            frame[2][frame[3]][1] = chosen
            frame[3] += 1
        self._settle(notices)
        return notices

    # ---- mechanics -------------------------------------------------------------------------
    def _active(self, exclude: int = -1) -> list[int]:
        return [i for i, s in enumerate(self.standing) if s == ACTIVE and i != exclude]

    def _receive(self, p: int, cid: int, in_flip: bool, notices: list[Notice]) -> None:
        if cid <= HIGHEST_NUMBER:
            bit = 1 << cid
            numbers = self.numbers
            if numbers[p] & bit:
                if self.has_second_chance[p]:
                    self.has_second_chance[p] = False
                    self.cards[p].remove(SECOND_CHANCE)
                    self._to_discard(SECOND_CHANCE)
                    self._to_discard(cid)
                    notices.append(notice("second_chance_used", self.players[p], LABELS[cid]))
                else:
                    self.cards[p].append(cid)
                    self.standing[p] = BUSTED
                    notices.append(notice("bust", self.players[p], LABELS[cid]))
                return
            numbers[p] |= bit
            self.number_sum[p] += cid
            self.cards[p].append(cid)
            self.distinct[p] += 1
            if self.distinct[p] == FLIP7_COUNT:
                self.flip7 = p
                self.round_ended = True
                notices.append(notice("flip7", self.players[p]))
        elif cid == SECOND_CHANCE:
            if not self.has_second_chance[p]:
                self.has_second_chance[p] = True
                self.cards[p].append(cid)
            else:
                others = [i for i in self._active(p) if not self.has_second_chance[i]]
                self._choose(GIFT, p, others, cid, notices)
        elif cid == FREEZE or cid == FLIP_THREE:
            if in_flip:
                self.stack[-1][3].append(cid)
            else:
                self._choose(ACTION, p, self._active(), cid, notices)
        else:                                   # a modifier
            self.cards[p].append(cid)
            if cid == X2:
                self.doubled[p] = True
            else:
                self.plus[p] += PLUS_VALUE[cid]

    def _choose(self, purpose: str, by: int, options: list[int], cid: int, notices: list[Notice]) -> None:
        """Ask `by` to choose among options, or do it at once when the rules leave no choice."""
        if len(options) > 1:
            self.choice = (purpose, by, tuple(options), cid, by)
        elif not options:
            self._to_discard(cid)
            notices.append(notice("discarded", self.players[by], LABELS[cid]))
        elif purpose == ACTION:
            self._play_action(cid, options[0], notices)
        else:
            self._give_second_chance(options[0], notices)

    def _give_second_chance(self, p: int, notices: list[Notice]) -> None:
        self.has_second_chance[p] = True
        self.cards[p].append(SECOND_CHANCE)
        notices.append(notice("second_chance_given", self.players[p]))

    def _play_action(self, cid: int, target: int, notices: list[Notice]) -> None:
        self.cards[target].append(cid)
        if cid == FREEZE:
            self.standing[target] = FROZEN
            notices.append(notice("freeze", self.players[target], self._score(target)))
        else:
            self.stack.append(["flip", target, FLIP_THREE_CARDS, []])
            notices.append(notice("flip_three", self.players[target]))

    def _after_flip(self, frame: list, notices: list[Notice]) -> None:
        _, target, _, set_aside = frame
        if not set_aside:
            return
        if self.standing[target] == BUSTED:
            options = self._active(target) if self.set_aside_after_bust == "play" else []
        else:
            options = self._active()
        if not options:
            for cid in set_aside:
                self._to_discard(cid)
                notices.append(notice("discarded", self.players[target], LABELS[cid]))
            return
        # [kind, chooser, [[card, target]...], next to choose, next to play, options]
        self.stack.append(["set_aside", target, [[cid, -1] for cid in set_aside], 0, 0, options])

    def _step_frame(self, frame: list, notices: list[Notice]) -> None:
        """One step of a "set_aside" frame: choose the next target, or play the next card."""
        _, chooser, items, to_choose, to_play, options = frame
        if to_choose < len(items):
            # targets are chosen for all set-aside cards before any takes effect
            if len(options) == 1:
                items[to_choose][1] = options[0]
                frame[3] += 1
            else:
                self.choice = (SET_ASIDE, chooser, tuple(options), items[to_choose][0], chooser)
            return
        if to_play == len(items):
            self.stack.pop()
            return
        frame[4] += 1
        cid, target = items[to_play]
        if self.standing[target] == ACTIVE:
            self._play_action(cid, target, notices)
        else:
            self._to_discard(cid)
            notices.append(notice("discarded", self.players[target], LABELS[cid]))

    def _frame_cards(self, frame: list) -> list[int]:
        return frame[3] if frame[0] == "flip" else [c for c, _ in frame[2][frame[4]:]]

    def _choice_card(self) -> int | None:
        # a drawn action or Second Chance awaiting its target (a set-aside one is in its frame)
        if self.choice is not None and self.choice[0] != SET_ASIDE:
            return self.choice[3]
        return None

    # ---- copying and saving ---------------------------------------------------------------
    def _restore(self) -> None:
        if self.choice is not None:
            purpose, by, options, card, drawer = self.choice
            self.choice = (purpose, by, tuple(options), card, drawer)
        for frame in self.stack:
            if frame[0] == "set_aside":
                frame[5] = list(frame[5])

    def _choice_events(self) -> list:
        return [Target(self.players[i]) for i in self.choice[2]]




def _choice_words(purpose: str, card: int) -> str:
    if purpose == GIFT:
        return "who gets the extra Second Chance"
    if purpose == SET_ASIDE:
        return f"a target for the set-aside {LABELS[card]}"
    return f"who gets the {LABELS[card]}"


def _event_word(event) -> str:
    return type(event).__name__.lower()


def _bust_within(numbers: tuple[int, ...], second_chances: int, neutral: int, held: int,
                 has_sc: bool, distinct: int, k: int) -> float:
    """Exact chance of busting within the next k cards of a Flip Three.

    The deck is summarised as copies of each number, Second Chances, and every other card
    ("neutral": modifiers and set-aside actions, which never bust and do not change what busts).
    A Flip 7 ends the Flip Three safely; a held Second Chance absorbs one duplicate."""
    total = sum(numbers) + second_chances + neutral
    if k == 0 or total == 0:
        return 0.0
    p = 0.0
    for value, copies in enumerate(numbers):
        if not copies:
            continue
        w = copies / total
        rest = numbers[:value] + (copies - 1,) + numbers[value + 1:]
        if held >> value & 1:
            if has_sc:
                p += w * _bust_within(rest, second_chances, neutral, held, False, distinct, k - 1)
            else:
                p += w
        elif distinct + 1 < FLIP7_COUNT:
            p += w * _bust_within(rest, second_chances, neutral, held | 1 << value, has_sc, distinct + 1, k - 1)
    if second_chances:
        p += second_chances / total * _bust_within(numbers, second_chances - 1, neutral, held, True, distinct, k - 1)
    if neutral:
        p += neutral / total * _bust_within(numbers, second_chances, neutral - 1, held, has_sc, distinct, k - 1)
    return p
