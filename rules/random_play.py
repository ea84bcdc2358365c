"""Random playthroughs: a seeded table that deals from a shuffled physical deck and makes random
legal choices. The property tests and the benchmark drive every engine through this."""

from __future__ import annotations

import random
from itertools import repeat, starmap

from rules.core import GameConfig
from rules import uno_flip as uno
from rules.events import (Bonus, Caught, Card, Challenge, Color, Draw, Hand, Pass, Penalize, Play, Start, Stop,
                          SwapCards, Take, Target, Top, Uno)
from rules.match import Match


STOP = Stop()
PASS = Pass()
DRAW_ONE = Draw()
CARDS: dict[str, Card] = {}             # events are immutable values: one per label serves every draw
TARGETS: dict[str, Target] = {}         # and one per name every choice of that player


class RandomTable:
    """The people at a table: they shuffle the cards the tracker says are in the deck, turn them
    over one by one, and decide at random (stopping once a round score reaches `greed`)."""

    def __init__(self, seed: int, greed: int | None = None):
        self.rng = random.Random(seed)
        self.greed = greed if greed is not None else self.rng.randrange(10, 45)
        self.pile: list[Card] = []

    def next_card(self, state) -> Card:
        if not self.pile:               # the first deck, or the discard pile shuffled into a new one
            labels, counts, _ = state.draw_pile()
            pile = []
            for label, count in zip(labels, counts):
                if count:
                    card = CARDS.get(label) or CARDS.setdefault(label, Card(label))
                    pile += [card] * count
            # Sorting by random keys: a uniform shuffle, cheaper than shuffle(). Keys drawn, positions
            # sorted and cards picked all by builtins (starmap, map): no Python step per card.
            keys = list(starmap(self.rng.random, repeat((), len(pile))))
            self.pile = list(map(pile.__getitem__, sorted(range(len(pile)), key=keys.__getitem__)))
        return self.pile.pop()

    def next_event(self, state):
        score = state.stop_score()      # None while a choice waits, and whenever stopping is refused
        if score is not None:
            if score >= self.greed or self.rng.random() < 0.05:
                return STOP
        elif state.turn_index < 0:      # nobody on turn: a choice waits (or the game is over)
            pending = state.pending
            if pending is not None:
                return answer(pending.kind, self.rng.choice(pending.options))
        pile = self.pile
        return pile.pop() if pile else self.next_card(state)     # (the common case without a call)


def answer(kind: str, option):
    """The event that gives `option` of a pending choice of `kind`, as `Pending.options` shows it:
    a name (target), [name, label] (card), [[name, label], [name, label]] (swap), "bonus" or
    "penalize NAME" (flip7)."""
    if kind == "target":
        return TARGETS.get(option) or TARGETS.setdefault(option, Target(option))
    if kind == "card":
        return Take(option[0], option[1])
    if kind == "swap":
        (a, a_label), (b, b_label) = option
        return SwapCards(a, a_label, b, b_label)
    if kind == "flip7":
        return Bonus() if option == "bonus" else Penalize(option.split()[1])
    raise ValueError(f"no random answer for a {kind} choice")


def random_game(config: GameConfig, seed: int, max_events: int = 100_000) -> Match:
    table = UnoRandomTable(seed) if config.game == "uno-flip" else RandomTable(seed)
    match = Match(config)
    state, apply, next_event = match.state, match.apply, table.next_event   # no undo here: state stays
    for _ in range(max_events):
        if state.over:
            break
        apply(next_event(state))
    return match



class UnoRandomTable:
    """People playing UNO Flip with a real deck: 112 double-sided cards (a random pairing of the
    light and dark faces, fixed for the game), real hands, a draw pile and a discard pile that turn
    over at a Flip. They play a random matching card (now and then a wild draw card they should not
    have, or a draw instead of a play), name colours, challenge, forget to call UNO and get caught.
    Cards the tracker hands out on its own (a challenge's outcome, a catch, a count with one possible
    answer) are taken from the draw pile when the next event is asked for."""

    def __init__(self, seed: int, cheat: float = 0.2, challenge: float = 0.4, forget_uno: float = 0.25,
                 catch: float = 0.6, draw_anyway: float = 0.05):
        self.rng = random.Random(seed)
        self.cheat, self.challenge, self.forget_uno, self.catch, self.draw_anyway = (
            cheat, challenge, forget_uno, catch, draw_anyway)
        faces = [[uno.LABELS[f] for f in range(uno.N_FACES) if uno.SIDE[f] == side for _ in range(uno.COPIES[f])]
                 for side in (uno.LIGHT, uno.DARK)]
        for side_faces in faces:
            self.rng.shuffle(side_faces)
        self.cards: list[tuple[str, str]] = list(zip(*faces))      # card id -> (light face, dark face)
        self.round = 0
        self.side = uno.LIGHT
        self.draw: list[int] = []            # card ids, the top of each pile last
        self.discard: list[int] = []
        self.aside: list[int] = []
        self.hands: list[list[int]] = []
        self.cheated = False                 # the last wild draw card was played holding the colour
        self.queue: list = []                # UNO calls and catches right after a play

    def face(self, card: int) -> str:
        return self.cards[card][self.side]

    def colour_of(self, card: int) -> int:
        return uno.COLOR[uno.FACE_ID[self.face(card)]]

    def _deal(self, state) -> None:
        self.round = state.round
        self.side = uno.LIGHT
        order = list(range(len(self.cards)))
        self.rng.shuffle(order)
        n = len(state.players)
        self.hands = [order[uno.HAND_SIZE * i:uno.HAND_SIZE * (i + 1)] for i in range(n)]
        self.draw = order[uno.HAND_SIZE * n:]
        self.discard, self.aside, self.queue = [], [], []

    def _take(self, player: int) -> int:
        if not self.draw:                    # the pile but its top card, turned and shuffled
            self.draw, self.discard = self.discard[:-1], self.discard[-1:]
            self.rng.shuffle(self.draw)
        card = self.draw.pop()
        self.hands[player].append(card)
        return card

    def sync(self, state) -> None:
        """Catch up with the tracker: a new round is dealt; cards it says a player drew are taken."""
        if state.round != self.round:
            self._deal(state)
        for i, held in enumerate(state.hands):
            while len(self.hands[i]) < held:
                self._take(i)

    def next_event(self, state):
        self.sync(state)
        if self.queue:
            return self.queue.pop(0)
        rng = self.rng
        phase = state.phase
        if phase == uno.START:
            card = self.draw.pop()
            label = self.face(card)
            (self.discard if uno.EFFECT[uno.FACE_ID[label]] == uno.NUMBER else self.aside).append(card)
            return Start(label)
        if phase == uno.TOP:
            return Top(self.face(self.discard[-1]))
        if phase == uno.COLOR_CHOICE:
            held = [c for c in map(self.colour_of, self.hands[state.offender]) if c >= 0]
            colours = state.pending.options
            return Color(colours[rng.choice(held)] if held and rng.random() < 0.8 else rng.choice(colours))
        if phase == uno.HANDS:
            name = state.pending.options[0]
            return Hand(name, tuple(self.face(c) for c in self.hands[state.players.index(name)]))
        if state.challengeable and rng.random() < self.challenge:
            return Challenge(self.cheated)
        p = state.turn_index
        if phase == uno.OWE:                            # all at once, or now and then card by card
            return Draw(state.owe if rng.random() < 0.8 else 1)
        if phase == uno.COUNT:                          # draw until the named colour (plus 2)
            count, limit = 0, state.pending.options[-1]
            while count < limit:
                count += 1
                if self.colour_of(self._take(p)) == state.color:
                    break
            if state.count_for == uno.CHALLENGER:
                for _ in range(min(2, limit - count)):
                    self._take(p)
                    count += 1
            return Draw(count)
        hand = self.hands[p]
        if phase == uno.DRAWN:
            drawn = hand[-1]
            if state.play_refusal(self.face(drawn)) is None and rng.random() < 0.8:
                return self._play(state, p, drawn)
            return PASS
        if len(hand) == 2 and not state.called[p] and rng.random() < 0.1:
            return Uno(state.players[p])                 # called as the second-to-last card goes down
        playable = [c for c in hand if state.play_refusal(self.face(c)) is None]
        if rng.random() >= self.cheat:
            playable = [c for c in playable if not self._would_cheat(state, p, c)]
        if playable and rng.random() >= self.draw_anyway:
            return self._play(state, p, rng.choice(playable))
        return DRAW_ONE if state.drawable() else PASS

    def _would_cheat(self, state, p: int, card: int) -> bool:
        """A wild draw card played while holding a card of the colour asked for."""
        if uno.EFFECT[uno.FACE_ID[self.face(card)]] not in (uno.WILD_DRAW_TWO, uno.WILD_DRAW_COLOR):
            return False
        return state.color >= 0 and any(self.colour_of(c) == state.color for c in self.hands[p] if c != card)

    def _play(self, state, p: int, card: int) -> Play:
        label = self.face(card)
        self.cheated = self._would_cheat(state, p, card)
        self.hands[p].remove(card)
        self.discard.append(card)
        if uno.EFFECT[uno.FACE_ID[label]] == uno.FLIP:   # hands, draw pile and discard pile turn over
            self.side = 1 - self.side
            self.discard.reverse()
            self.draw.reverse()
        if len(self.hands[p]) == 1 and not state.called[p]:
            if self.rng.random() >= self.forget_uno:
                self.queue.append(Uno(state.players[p]))
            elif self.rng.random() < self.catch:
                self.queue.append(Caught(state.players[p]))
        return Play(label)
