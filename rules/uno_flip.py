"""The UNO Flip engine (docs/uno-flip.md): a referee that watches the discard pile.

The camera sees only the pile, so the tracker keeps counts, not cards: how many cards each player
holds, how many are in the draw pile, in the discard pile and set aside, plus the faces it has seen
land on the pile. It cannot know which dark face is printed on the back of which light face, so
after a Flip the new top card is read from the camera (`top LABEL`).

What the table must do next is a phase (see PHASES, and `must()` for the display); exactly one
of: the game is over, a player is on turn (`turn`), or a choice is pending (`pending`: `color`,
`draw` = how many were drawn after a wild-draw-color, `hand` = the hands left at the end of a
round). A play the rules forbid raises `IllegalPlay` (a `Refused`), with the reason.

Rulings where the rule sheet is silent (each one has a scenario in tests/scenarios/uno-flip/):
- A special start card is accepted and set aside for the rest of the round (out of the draw pile,
  the discard pile and every hand); the dealer turns another with a further `start` line. Every
  round starts on the light side, clockwise, with the player left of the dealer.
- A card that makes the next player draw a fixed number (draw-one, draw-five, an unchallenged
  wild-draw-two) waits for that player's `draw N` line (or several lines adding up to N, e.g. one
  per card; a wild-draw-two can be challenged only before the first); until then they are on turn
  and must draw, after which they are skipped. Draws are capped by the cards left to draw.
- A challenge line records its own outcome: a guilty wild-draw-two player takes 2 and the
  challenger plays on normally (not skipped); an innocent one makes the challenger take 4 and be
  skipped. After a wild-draw-color the number drawn is asked for
  (pending `draw`); the challenger's count after an innocent verdict includes the 2 extra cards.
- A turn is: play a matching card, or draw one card and then play a matching card (the drawn one;
  the tracker cannot tell) or `pass`. Passing without drawing is refused unless nothing can be drawn.
- The top card a Flip turns up has no effect (it was not played); if it is a wild face the colour
  is open: any card may be played on it, and a wild draw card's condition is met (no challenge).
  From the second Flip of a round on (with no reshuffle since the previous one) the face it must
  turn up is known: the previous Flip card lies at the bottom (`expected_top`); a different `top`
  is accepted (the camera shows what is there) and flashed (notice `unexpected_top`).
- When the draw pile runs out, the discard pile but its top card is turned and shuffled into a new
  draw pile automatically; set-aside start cards stay aside until the round ends.
- A card that is not possible is refused: a face every copy of which is known to be on the discard
  pile (every face played stays there, on whichever side shows, until a reshuffle), set aside, or,
  at the end of a round, laid in another hand.
- UNO may be called with two cards while on turn (as the second-to-last card is played) or any
  time with one card. `caught NAME` needs NAME to hold one card without having called, before the
  next player begins their turn: any later play, draw, pass or challenge closes that chance.
- The round ends as soon as a player plays their last card. A Flip as the last card still turns the
  game over, and the hands are counted on the new side; a last draw card's penalty is not tracked
  (the table may hand the cards over before laying the hands; they are then counted). After a final
  Flip a `top` line may still record the turned pile's top. Each `hand` line is taken as the truth
  for scoring; a count that differs from the tracked one is flashed (notice `hand_count`), not
  refused.
"""

from __future__ import annotations

import copy
from typing import Any

from rules.cards import DECKS, UNO_DARK_COLORS, UNO_LIGHT_COLORS
from rules.core import (GameConfig, Notice, Pending, Refused, RoundResult, load_state, lookup, save_state,
                        seat_map, seat_of, shorten)
from rules.events import Caught, Challenge, Color, Draw, Hand, Pass, Play, Start, Top, Uno

DECK = DECKS["uno-flip"]
LABELS = DECK.labels
FACE_ID = {label: i for i, label in enumerate(LABELS)}
N_FACES = len(LABELS)
COPIES = tuple(DECK.copies[label] for label in LABELS)
CARDS_IN_DECK = 112                      # double-sided: each side's faces number 112
HAND_SIZE = 7
WINNING_TOTAL = 500
STATE_VERSION = 1

LIGHT, DARK = 0, 1
SIDE_NAMES = ("light", "dark")
SIDE_COLORS = (UNO_LIGHT_COLORS, UNO_DARK_COLORS)
CLOCKWISE, COUNTERCLOCKWISE = 1, -1

# what a face does when played
NUMBER, DRAW_CARD, REVERSE, SKIP, SKIP_EVERYONE, FLIP, WILD, WILD_DRAW_TWO, WILD_DRAW_COLOR = range(9)
WILDS = (WILD, WILD_DRAW_TWO, WILD_DRAW_COLOR)
DRAW_AMOUNT = {"draw-one": 1, "draw-five": 5}
POINTS = {"draw-one": 10, "draw-five": 20, "reverse": 20, "skip": 20, "flip": 20, "skip-everyone": 30,
          "wild": 40, "dark-wild": 40, "wild-draw-two": 50, "wild-draw-color": 60}
EFFECTS = {"reverse": REVERSE, "skip": SKIP, "skip-everyone": SKIP_EVERYONE, "flip": FLIP, "wild": WILD,
           "dark-wild": WILD, "wild-draw-two": WILD_DRAW_TWO, "wild-draw-color": WILD_DRAW_COLOR}


def _face_tables():
    side, color, symbol, effect, points = [], [], [], [], []
    for label in LABELS:
        s = LIGHT if label in ("wild", "wild-draw-two") or label.split("-")[0] in UNO_LIGHT_COLORS else DARK
        head, _, rest = label.partition("-")
        if head in SIDE_COLORS[s]:
            c, sym = SIDE_COLORS[s].index(head), rest
        else:
            c, sym = -1, label
        side.append(s)
        color.append(c)
        symbol.append(sym)
        if sym.isdigit():
            effect.append(NUMBER)
            points.append(int(sym))
        else:
            effect.append(DRAW_CARD if sym in DRAW_AMOUNT else EFFECTS[sym])
            points.append(POINTS[sym])
    return tuple(side), tuple(color), tuple(symbol), tuple(effect), tuple(points)


SIDE, COLOR, SYMBOL, EFFECT, POINTS_OF = _face_tables()

# phases: what the table must do next
START, TOP, PLAY, DRAWN, OWE, COLOR_CHOICE, COUNT, HANDS, OVER = range(9)
PHASES = ("start", "top", "play", "play_or_pass", "draw", "color", "draw_count", "hand", "over")
# who draws the counted cards after a wild-draw-color
VICTIM, OFFENDER, CHALLENGER = 0, 1, 2


class IllegalPlay(Refused):
    """A play the rules forbid (the card does not match the top card, a Flip not on its colour):
    the referee's verdict, which the device flashes as ILLEGAL, as Flip 7 flashes a bust."""


def score_hand(labels: list[str] | tuple[str, ...]) -> int:
    """The points of the cards left in one hand (the published UNO Flip scoring)."""
    return sum(POINTS_OF[FACE_ID[label]] for label in labels)


def _symbol_words(face: int) -> str:
    sym = SYMBOL[face]
    return f"a {sym}" if sym.isdigit() or sym[0] not in "aeiou" else f"an {sym}"


class UnoFlipState:
    game = "uno-flip"
    winning_total = WINNING_TOTAL
    __slots__ = ("players", "seat", "totals", "results", "round", "dealer_index", "over", "winner",
                 "side", "direction", "hands", "draw_left", "pile", "set_aside", "pile_faces",
                 "aside_faces", "top", "color", "phase", "turn_index", "owe", "challengeable",
                 "offender", "wild_effect", "count_for", "called", "uno_window", "laid", "round_winner", "under",
                 "expected_top", "condition_color")

    def __init__(self, config: GameConfig):
        if config.options:
            raise ValueError(f"uno-flip takes no options (got {shorten(', '.join(config.options))})")
        n = len(config.players)       # (the count is checked by GameConfig: rules.core PLAYER_RANGES)
        self.players = tuple(config.players)
        self.seat = seat_map(self.players)
        self.totals = [0] * n
        self.results: list[RoundResult] = []
        self.round = 0
        self.over = False
        self.winner = -1
        self._start_round(self.players.index(config.dealer) if config.dealer else 0)

    def _start_round(self, dealer: int) -> None:
        n = len(self.players)
        self.round += 1
        self.dealer_index = dealer
        self.side = LIGHT
        self.direction = CLOCKWISE
        self.hands = [HAND_SIZE] * n
        self.draw_left = CARDS_IN_DECK - HAND_SIZE * n
        self.pile = 0                           # cards in the discard pile, the top one included
        self.set_aside = 0                      # special start cards, out of play this round
        self.pile_faces = [0] * N_FACES         # faces known to be in the discard pile, on either side
        self.aside_faces = [0] * N_FACES        # set-aside start cards, by light face
        self.top = -1                           # the face on top of the pile; -1 unknown
        self.under = -1                         # the hidden face of the pile's bottom card, if known
        self.expected_top = -1                  # TOP: the face the turned pile must show, if known
        self.color = -1                         # the colour to follow (index in the side's colours); -1 open
        self.phase = START
        self.turn_index = dealer                # the dealer turns the start card
        self.owe = 0                            # OWE: cards the player on turn must draw
        self.challengeable = False              # OWE/COUNT: a wild draw card the victim may challenge
        self.offender = -1                      # who played that wild draw card (COLOR: who names)
        self.condition_color = -1               # the colour its player must not have held; -1 none
        self.wild_effect = -1                   # COLOR: which wild was played
        self.count_for = VICTIM                 # COUNT: why the cards are drawn
        self.called = [False] * n               # called UNO (with one card, or with two as they play)
        self.uno_window = -1                    # who may still be caught not calling UNO
        self.laid: list[list[int] | None] = [None] * n   # HANDS: faces laid down per player
        self.round_winner = -1

    # ---- public view ---------------------------------------------------------------------------
    @property
    def turn(self) -> str | None:
        if self.phase in (COLOR_CHOICE, COUNT, HANDS, OVER):
            return None
        return self.players[self.turn_index]

    @property
    def pending(self) -> Pending | None:
        """`color`: options are the colours of the side in play; `draw`: the numbers of cards that
        may have been drawn (a `challenge` line also answers it while the card can be challenged);
        `hand`: the players whose hands are still to be laid, `by` the round's winner."""
        phase = self.phase
        if phase == COLOR_CHOICE:
            return Pending("color", self.players[self.offender], SIDE_COLORS[self.side], LABELS[self.top])
        if phase == COUNT:
            low, high = self._count_range()
            return Pending("draw", self.players[self.turn_index], tuple(range(low, high + 1)), LABELS[self.top])
        if phase == HANDS:
            return Pending("hand", self.players[self.round_winner],
                           tuple(self.players[i] for i in range(len(self.players))
                                 if i != self.round_winner and self.laid[i] is None), None)
        return None

    @property
    def dealer(self) -> str:
        return self.players[self.dealer_index]

    @property
    def winner_name(self) -> str | None:
        return self.players[self.winner] if self.over else None

    @property
    def rows(self) -> dict[str, list[str]]:
        """Cards lying face up in front of each player: none in UNO Flip (hands are held)."""
        return {name: [] for name in self.players}

    @property
    def status(self) -> dict[str, str]:
        """`uno` for a player holding one card, else `active`."""
        return {name: "uno" if self.hands[i] == 1 else "active" for i, name in enumerate(self.players)}

    @property
    def side_name(self) -> str:
        return SIDE_NAMES[self.side]

    @property
    def direction_name(self) -> str:
        return "clockwise" if self.direction == CLOCKWISE else "counterclockwise"

    @property
    def color_name(self) -> str | None:
        return SIDE_COLORS[self.side][self.color] if self.color >= 0 else None

    def round_score(self, name: str) -> int:
        """The points of the hands laid so far, for the round's winner; 0 for everyone else."""
        i = self._player(name)
        if i != self.round_winner or self.phase != HANDS:
            return 0
        return sum(POINTS_OF[f] for faces in self.laid if faces for f in faces)

    def turn_score(self) -> int:
        return 0

    def bust_odds(self, player: str | None = None) -> None:
        return None

    def stop_allowed(self) -> bool:
        return False

    def stop_score(self) -> None:
        return None

    def card_counts(self) -> dict[str, int]:
        """Faces of the side in play not known to be on the pile or set aside: what the draw pile
        and the hands may hold."""
        return {LABELS[f]: c for f, c in enumerate(self._unseen()) if c}

    def draw_pile(self) -> tuple[tuple[str, ...], list[int], int]:
        """(labels, copies of each face of the side in play not known to be elsewhere, cards in
        the draw pile)."""
        return LABELS, self._unseen(), self.draw_left

    def _unseen(self) -> list[int]:
        side = self.side
        return [COPIES[f] - self.pile_faces[f] - self.aside_faces[f] if SIDE[f] == side else 0
                for f in range(N_FACES)]

    def must(self) -> dict[str, Any] | None:
        """What the table must do next, for the display: {"player", "action" (a PHASES name),
        "count" (cards to draw, or null), "text" (a sentence)}; None once the game is over."""
        phase = self.phase
        if phase == OVER:
            return None
        if phase == HANDS:
            who = self.players[self.round_winner]
            return {"player": who, "action": "hand", "count": None,
                    "text": f"{who} won the round: lay the other hands under the camera"}
        if phase == COLOR_CHOICE:
            who = self.players[self.offender]
            return {"player": who, "action": "color", "count": None,
                    "text": f"{who} names a colour: {', '.join(SIDE_COLORS[self.side])}"}
        who = self.players[self.turn_index]
        count = None
        if phase == START:
            text = f"{who} deals: turn the top card of the draw pile to start the discard pile"
        elif phase == TOP:
            text = f"the game turned to the {self.side_name} side: show the new top card, then {who} plays"
        elif phase == PLAY:
            text = f"{who} plays {self._asked_for()}, or draws a card"
        elif phase == DRAWN:
            text = f"{who} drew a card: play it if it fits, or pass"
        elif phase == OWE:
            count = self.owe
            text = f"{who} must draw {self.owe} and is skipped"
            if self.challengeable:
                text += f" (or challenges: {self._condition()})"
        else:                                                   # COUNT
            colour = self.color_name
            if self.count_for == CHALLENGER:
                text = f"{who} draws until {colour}, plus 2: how many cards in all?"
            else:
                text = f"{who} draws until {colour}: how many cards?"
                if self.challengeable:
                    text += f" (or challenges: {self._condition()})"
        return {"player": who, "action": PHASES[phase], "count": count, "text": text}

    def _condition(self) -> str:
        colour = SIDE_COLORS[self.side][self.condition_color]
        return f"{self.players[self.offender]} may play the {LABELS[self.top]} only holding no {colour} card"

    def _asked_for(self) -> str:
        if self.top < 0 or self.color < 0:
            return "any card"
        if EFFECT[self.top] in WILDS:
            return f"{self.color_name} or a wild"
        return f"{self.color_name}, {_symbol_words(self.top)} or a wild"

    def play_refusal(self, label: str, player: str | None = None) -> str | None:
        """Why `play label` would be refused now, or None if it would be accepted."""
        try:
            self._check_play(Play(label, player))
        except Refused as refusal:
            return refusal.reason
        return None

    # ---- events --------------------------------------------------------------------------------
    def apply(self, event) -> list[Notice]:
        kind = type(event)
        if kind is Play:
            return self._play(event)
        if kind is Draw:
            return self._draw(event)
        if kind is Color:
            return self._color(event)
        if kind is Pass:
            return self._pass()
        if kind is Top:
            return self._top(event)
        if kind is Uno:
            return self._uno(event)
        if kind is Caught:
            return self._caught(event)
        if kind is Challenge:
            return self._challenge(event)
        if kind is Hand:
            return self._hand(event)
        if kind is Start:
            return self._start(event)
        raise Refused(f"{type(event).__name__.lower()} is not an event of UNO Flip")

    def _player(self, name: str) -> int:
        return seat_of(self.seat, name)

    def _face(self, label: str) -> int:
        return lookup(FACE_ID, label, f"{label} is not an UNO Flip card")

    def _check_face_in_play(self, f: int, laid: int = 0) -> None:
        """The face belongs to the side in play and a copy of it can still be somewhere unseen."""
        if SIDE[f] != self.side:
            raise Refused(f"{LABELS[f]} is a {SIDE_NAMES[SIDE[f]]} card: the {self.side_name} side is in play")
        if self.pile_faces[f] + self.aside_faces[f] + laid >= COPIES[f]:
            raise Refused(f"all {COPIES[f]} {LABELS[f]} cards are already on the table")

    def _waiting_reason(self, what: str) -> str:
        """Why the table cannot do `what` in this phase (PLAY, DRAWN and OWE are handled by each event)."""
        phase = self.phase
        if phase == OVER:
            return f"the game is over: no {what} now"
        if phase == HANDS:
            return f"the round is over: lay the hands first (hand NAME LABEL ...), no {what} now"
        if phase == START:
            return f"the round has not started: turn the start card first (start LABEL), no {what} yet"
        if phase == TOP:
            return f"the pile was turned over: show its new top card first (top LABEL), no {what} yet"
        if phase == COLOR_CHOICE:
            return f"{self.players[self.offender]} must first name a colour for the {LABELS[self.top]}"
        if phase == COUNT:
            return f"first say how many cards {self.players[self.turn_index]} drew (draw N)"
        return f"{what} is not possible now"

    def _check_play(self, event: Play) -> int:
        phase = self.phase
        if phase not in (PLAY, DRAWN, OWE):
            raise Refused(self._waiting_reason("play"))
        p = self.turn_index
        if event.player is not None:
            named = self._player(event.player)
            if named != p:
                raise Refused(f"it is {self.players[p]}'s turn, not {self.players[named]}'s")
        if phase == OWE:
            raise Refused(f"{self.players[p]} must draw {self.owe} and is skipped: no play")
        f = self._face(event.label)
        self._check_face_in_play(f)
        reason = self._mismatch(f)
        if reason:
            raise IllegalPlay(reason)
        return f

    def _mismatch(self, f: int) -> str | None:
        """Why face f may not go on the pile (the referee's verdict), or None."""
        effect = EFFECT[f]
        if effect in WILDS or self.color < 0:
            return None
        top, color = self.top, self.color
        colour = SIDE_COLORS[self.side][color]
        if effect == FLIP:
            if COLOR[f] == color or EFFECT[top] == FLIP:
                return None
            return f"{LABELS[f]} may only be played on {colour} or on a flip ({LABELS[top]} is on top)"
        if COLOR[f] == color or (EFFECT[top] not in WILDS and SYMBOL[f] == SYMBOL[top]):
            return None
        if EFFECT[top] in WILDS:
            return f"{LABELS[f]} does not match the {LABELS[top]} ({colour} named): play {colour} or a wild"
        return f"{LABELS[f]} does not match {LABELS[top]}: play {colour}, {_symbol_words(top)} or a wild"

    def _play(self, event: Play) -> list[Notice]:
        f = self._check_play(event)
        p = self.turn_index
        colour_before = self.color
        notices = [Notice("played", self.players[p], LABELS[f])]
        self.hands[p] -= 1
        self.pile += 1
        self.pile_faces[f] += 1
        self.top = f
        self.color = COLOR[f]
        left = self.hands[p]
        if left >= 2:
            self.called[p] = False
        self.uno_window = p if left == 1 and not self.called[p] else -1
        if left == 1:
            notices.append(Notice("uno" if self.called[p] else "one_card", self.players[p]))
        effect = EFFECT[f]
        if left == 0:
            if effect == FLIP:
                self._turn_over(f, notices)
            self._end_round(p, notices)
            return notices
        n = len(self.players)
        d = self.direction
        self.phase = PLAY
        if effect == NUMBER:
            self.turn_index = (p + d) % n
        elif effect == DRAW_CARD:
            self._owe((p + d) % n, DRAW_AMOUNT[SYMBOL[f]], False, notices)
        elif effect == REVERSE:
            self.direction = -d
            notices.append(Notice("reverse", self.players[p], self.direction_name))
            # with two players a Reverse acts as a Skip: the same player plays again
            self.turn_index = p if n == 2 else (p - d) % n
        elif effect == SKIP:
            notices.append(Notice("skipped", self.players[(p + d) % n]))
            self.turn_index = (p + 2 * d) % n
        elif effect == SKIP_EVERYONE:
            notices.append(Notice("skipped", None, "everyone"))
            self.turn_index = p
        elif effect == FLIP:
            self._turn_over(f, notices)
            self.turn_index = (p + d) % n
            self.phase = TOP
        else:                                            # a wild: the player names a colour
            self.offender = p
            self.wild_effect = effect
            self.condition_color = colour_before
            self.phase = COLOR_CHOICE
        return notices

    def _turn_over(self, flip: int, notices: list[Notice]) -> None:
        """A Flip: hands, draw pile and discard pile are turned over; the new top is read next.
        It is the hidden face of the card that was at the bottom: known when that card is the
        previous Flip (no reshuffle since), whose face played then shows again. The Flip just
        played goes to the bottom, its played face hidden."""
        self.expected_top = self.under
        self.under = flip
        self.side = 1 - self.side
        self.top = -1
        self.color = -1
        notices.append(Notice("flip", None, self.side_name))

    def _owe(self, victim: int, count: int, challengeable: bool, notices: list[Notice]) -> None:
        count = min(count, self.drawable())
        if count == 0:                                   # nothing left to draw: just skipped
            notices.append(Notice("skipped", self.players[victim]))
            self.turn_index = (victim + self.direction) % len(self.players)
            self.phase = PLAY
            return
        self.turn_index = victim
        self.owe = count
        self.challengeable = challengeable
        self.phase = OWE
        notices.append(Notice("must_draw", self.players[victim], count))

    def drawable(self) -> int:
        """Cards that can still be drawn: the draw pile, and the discard pile but its top card."""
        return self.draw_left + max(self.pile - 1, 0)

    def _take(self, p: int, count: int, notices: list[Notice]) -> None:
        """Player p takes `count` cards from the draw pile (count <= drawable())."""
        if count > self.draw_left:
            self.draw_left += self.pile - 1
            self.pile = 1
            top = self.top
            self.pile_faces = [0] * N_FACES
            if top >= 0:
                self.pile_faces[top] = 1
            self.under = -1                              # the one card left: its hidden face is unknown
            notices.append(Notice("shuffled", None, self.draw_left))
        self.draw_left -= count
        self.hands[p] += count
        self.called[p] = False
        notices.append(Notice("drew", self.players[p], count))

    def _draw(self, event: Draw) -> list[Notice]:
        phase = self.phase
        p = self.turn_index
        who = self.players[p]
        asked = 1 if event.n is None else event.n
        notices: list[Notice] = []
        if phase == PLAY:
            if asked != 1:
                raise Refused(f"on a turn a player draws one card, not {asked}")
            if not self.drawable():
                raise Refused(f"there is no card left to draw: {who} passes")
            self.uno_window = -1
            self._take(p, 1, notices)
            self.phase = DRAWN
        elif phase == DRAWN:
            raise Refused(f"{who} has drawn a card already: play it if it fits, or pass")
        elif phase == OWE:
            # the cards may be recorded one line at a time (a button press per card)
            if asked > self.owe:
                raise Refused(f"{who} must draw {self.owe}, not {asked}")
            self.uno_window = -1
            self.challengeable = False
            self._take(p, asked, notices)
            self.owe -= asked
            if not self.owe:
                self._skip_victim(p, notices)
        elif phase == COUNT:
            low, high = self._count_range()
            if not low <= asked <= high:
                raise Refused(f"{who} can have drawn {low} to {high} cards, not {asked}")
            self.uno_window = -1
            self._take(p, asked, notices)
            self._after_count(notices)
        else:
            raise Refused(self._waiting_reason("draw"))
        return notices

    def _skip_victim(self, victim: int, notices: list[Notice]) -> None:
        notices.append(Notice("skipped", self.players[victim]))
        self.turn_index = (victim + self.direction) % len(self.players)
        self.phase = PLAY
        self.owe = 0
        self.challengeable = False

    def _count_range(self) -> tuple[int, int]:
        high = self.drawable()
        return min(3 if self.count_for == CHALLENGER else 1, high), high

    def _after_count(self, notices: list[Notice]) -> None:
        victim = (self.offender + self.direction) % len(self.players)
        if self.count_for == OFFENDER:                   # guilty: the challenger plays on normally
            self.turn_index = victim
            self.phase = PLAY
            self.challengeable = False
        else:
            self._skip_victim(victim, notices)

    def _count(self, drawer: int, count_for: int, challengeable: bool, notices: list[Notice]) -> None:
        """Ask how many cards `drawer` drew until the named colour (a choice with one possible
        answer is taken at once)."""
        self.turn_index = drawer
        self.count_for = count_for
        self.challengeable = challengeable
        self.phase = COUNT
        low, high = self._count_range()
        if high == 0 or (low == high and not challengeable):
            if high:
                self._take(drawer, high, notices)
            self._after_count(notices)

    def _color(self, event: Color) -> list[Notice]:
        if self.phase != COLOR_CHOICE:
            if self.phase in (OVER, HANDS, START, TOP, COUNT):
                raise Refused(self._waiting_reason("colour"))
            raise Refused("no colour is asked for now: a colour is named after a wild")
        colours = SIDE_COLORS[self.side]
        name = event.color.lower()
        if name not in colours:
            raise Refused(f"{event.color} is not a colour of the {self.side_name} side: name {', '.join(colours)}")
        p = self.offender
        self.color = colours.index(name)
        notices = [Notice("color", self.players[p], name)]
        victim = (p + self.direction) % len(self.players)
        if self.wild_effect == WILD:
            self.turn_index = victim
            self.phase = PLAY
        else:
            # a wild draw card played with no colour to follow (a wild turned up by a flip) always
            # met its condition: there is nothing to challenge
            challengeable = self.condition_color >= 0
            if self.wild_effect == WILD_DRAW_TWO:
                self._owe(victim, 2, challengeable, notices)
            else:
                notices.append(Notice("must_draw", self.players[victim], name))
                self._count(victim, VICTIM, challengeable, notices)
        return notices

    def _pass(self) -> list[Notice]:
        phase = self.phase
        who = self.players[self.turn_index]
        if phase == PLAY:
            if self.drawable():
                raise Refused(f"{who} must play a card or draw one before passing")
        elif phase == OWE:
            raise Refused(f"{who} must draw {self.owe} and is skipped: write draw {self.owe}")
        elif phase != DRAWN:
            raise Refused(self._waiting_reason("pass"))
        self.uno_window = -1
        self.turn_index = (self.turn_index + self.direction) % len(self.players)
        self.phase = PLAY
        return [Notice("passed", who)]

    def _top(self, event: Top) -> list[Notice]:
        # a Flip as the last card of a round turns the pile over too: its new top may still be read
        final_flip = self.phase == HANDS and self.top < 0
        if self.phase != TOP and not final_flip:
            if self.phase in (OVER, HANDS, START, COLOR_CHOICE, COUNT):
                raise Refused(self._waiting_reason("top card"))
            raise Refused("the top card is read only after a flip")
        f = self._face(event.label)
        expected = self.expected_top
        if f != expected:
            self._check_face_in_play(f)
        notices = [Notice("top", None, LABELS[f])]
        if expected < 0:
            self.pile_faces[f] += 1                      # a face of the pile not seen before
        elif f != expected:
            # the camera is the truth of what shows; the table is told what was expected (the face
            # is not counted: the pile is not what the tracker thought)
            notices.append(Notice("unexpected_top", None, {"expected": LABELS[expected], "read": LABELS[f]}))
        self.expected_top = -1
        self.top = f
        self.color = COLOR[f]                            # -1 for a wild face: the colour is open
        if not final_flip:
            self.phase = PLAY
        return notices

    def _uno(self, event: Uno) -> list[Notice]:
        if self.phase in (OVER, HANDS, START):
            raise Refused(self._waiting_reason("UNO call"))
        p = self._player(event.player)
        who = self.players[p]
        held = self.hands[p]
        on_turn = p == self.turn_index and self.phase in (PLAY, DRAWN)
        if held > 2 or (held == 2 and not on_turn):
            raise Refused(f"{who} holds {held} cards: UNO is called with one card left")
        if self.called[p]:
            raise Refused(f"{who} has already called UNO")
        self.called[p] = True
        if self.uno_window == p:
            self.uno_window = -1
        return [Notice("uno", who)]

    def _caught(self, event: Caught) -> list[Notice]:
        if self.phase in (OVER, HANDS, START):
            raise Refused(self._waiting_reason("catch"))
        p = self._player(event.player)
        who = self.players[p]
        if self.hands[p] != 1:
            raise Refused(f"{who} holds {self.hands[p]} cards, not one: there is no UNO to catch")
        if self.called[p]:
            raise Refused(f"{who} called UNO")
        if self.uno_window != p:
            raise Refused(f"too late to catch {who}: the next player has begun their turn")
        count = min(2, self.drawable())
        notices = [Notice("caught", who, count)]
        self.uno_window = -1
        if count:
            self._take(p, count, notices)
        return notices

    def _challenge(self, event: Challenge) -> list[Notice]:
        if not (self.phase in (OWE, COUNT) and self.challengeable):
            if self.phase in (OVER, HANDS, START, TOP, COLOR_CHOICE):
                raise Refused(self._waiting_reason("challenge"))
            if self.phase in (OWE, COUNT) and self.condition_color < 0 and EFFECT[self.top] in WILDS:
                raise Refused(f"there is nothing to challenge: no colour was to be followed when "
                              f"{self.players[self.offender]} played the {LABELS[self.top]}")
            raise Refused("there is no wild draw card to challenge now")
        victim = self.turn_index
        offender = self.offender
        card = LABELS[self.top]
        notices = [Notice("challenge", self.players[victim],
                          {"card": card, "against": self.players[offender], "guilty": event.guilty})]
        self.uno_window = -1
        self.challengeable = False
        if self.phase == OWE:                            # wild-draw-two
            if event.guilty:
                if self.drawable():
                    self._take(offender, min(2, self.drawable()), notices)
                self.turn_index = victim
                self.phase = PLAY
                self.owe = 0
            else:
                if self.drawable():
                    self._take(victim, min(4, self.drawable()), notices)
                self._skip_victim(victim, notices)
        elif event.guilty:                               # wild-draw-color
            self._count(offender, OFFENDER, False, notices)
        else:
            self._count(victim, CHALLENGER, False, notices)
        return notices

    def _hand(self, event: Hand) -> list[Notice]:
        if self.phase != HANDS:
            if self.phase == OVER:
                raise Refused("the game is over: no hands to lay")
            raise Refused("hands are laid at the end of a round, when a player has played their last card")
        p = self._player(event.player)
        who = self.players[p]
        if p == self.round_winner:
            raise Refused(f"{who} won the round and holds no card")
        if self.laid[p] is not None:
            raise Refused(f"{who}'s hand is already counted")
        faces = [self._face(label) for label in event.labels]
        counts = [0] * N_FACES
        for faces_laid in self.laid:
            for f in faces_laid or ():
                counts[f] += 1
        for f in faces:
            self._check_face_in_play(f, counts[f])
            counts[f] += 1
        self.laid[p] = faces
        notices = []
        if len(faces) != self.hands[p]:
            notices.append(Notice("hand_count", who, {"tracked": self.hands[p], "laid": len(faces)}))
        if all(faces_laid is not None for i, faces_laid in enumerate(self.laid) if i != self.round_winner):
            self._score_round(notices)
        return notices

    def _start(self, event: Start) -> list[Notice]:
        if self.phase != START:
            if self.phase == OVER:
                raise Refused("the game is over: no start card now")
            raise Refused("the discard pile has been started already")
        f = self._face(event.label)
        self._check_face_in_play(f)
        self.draw_left -= 1
        if EFFECT[f] != NUMBER:
            # a special card does not start the pile: set aside, the dealer turns another
            self.set_aside += 1
            self.aside_faces[f] += 1
            return [Notice("set_aside", self.dealer, LABELS[f])]
        self.pile = 1
        self.pile_faces[f] = 1
        self.top = f
        self.color = COLOR[f]
        self.turn_index = (self.dealer_index + 1) % len(self.players)
        self.phase = PLAY
        return [Notice("start", self.dealer, LABELS[f])]

    # ---- the end of a round ------------------------------------------------------------------
    def _end_round(self, p: int, notices: list[Notice]) -> None:
        self.round_winner = p
        self.uno_window = -1
        self.phase = HANDS
        notices.append(Notice("out", self.players[p]))

    def _score_round(self, notices: list[Notice]) -> None:
        n = len(self.players)
        w = self.round_winner
        points = sum(POINTS_OF[f] for faces in self.laid if faces for f in faces)
        self.totals[w] += points
        result = RoundResult(self.round, self.dealer, {self.players[i]: points if i == w else 0 for i in range(n)},
                             None, ())
        self.results.append(result)
        notices.append(Notice("round_over", self.players[w], result))
        if self.totals[w] >= WINNING_TOTAL:
            self.over = True
            self.winner = w
            self.phase = OVER
            notices.append(Notice("game_over", self.players[w]))
            return
        self._start_round((self.dealer_index + 1) % n)   # the deal passes left

    # ---- copying and saving ------------------------------------------------------------------
    def clone(self) -> "UnoFlipState":
        twin = copy.copy(self)
        for name in ("totals", "hands", "pile_faces", "aside_faces", "called"):
            setattr(twin, name, list(getattr(self, name)))
        twin.results = list(self.results)
        twin.laid = [None if faces is None else list(faces) for faces in self.laid]
        return twin

    _FIELDS = ("totals", "round", "dealer_index", "over", "winner", "side", "direction", "hands",
               "draw_left", "pile", "set_aside", "pile_faces", "aside_faces", "top", "color", "phase",
               "turn_index", "owe", "challengeable", "offender", "wild_effect", "count_for", "called",
               "uno_window", "laid", "round_winner", "under", "expected_top", "condition_color")

    def to_dict(self) -> dict[str, Any]:
        return save_state(self, self._FIELDS, STATE_VERSION)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "UnoFlipState":
        return load_state(cls, data, cls._FIELDS, STATE_VERSION)

    # ---- for the JSON summary and random play ------------------------------------------------
    def summary(self) -> dict[str, Any]:
        pending = self.pending
        uno = {self.players[i]: ("called" if self.called[i] else "not called")
               for i in range(len(self.players)) if self.hands[i] == 1}
        return {
            "round": self.round,
            "dealer": self.dealer,
            "turn": self.turn,
            "pending": pending.to_json() if pending else None,
            "side": self.side_name,
            "top": LABELS[self.top] if self.top >= 0 else None,
            "expected_top": LABELS[self.expected_top] if self.expected_top >= 0 else None,
            "color": self.color_name,
            "direction": self.direction_name,
            "hands": dict(zip(self.players, self.hands)),
            "must": self.must(),
            "uno": uno,
            "catchable": self.players[self.uno_window] if self.uno_window >= 0 else None,
            "draw_pile": self.draw_left,
            "discard_pile": self.pile,
            "set_aside": self.set_aside,
        }

    def legal_events(self) -> list:
        """Every event the tracker would accept now, except `hand` lines (any cards of the side in
        play may be laid): plays by face, draws, colours, challenges, UNO calls and catches."""
        phase = self.phase
        if phase == OVER:
            return []
        unseen = self._unseen()
        if phase == START:
            return [Start(LABELS[f]) for f in range(N_FACES) if unseen[f] and SIDE[f] == LIGHT]
        if phase == HANDS:
            return self._tops(unseen) if self.top < 0 else []
        events: list = []
        if phase == TOP:
            events = self._tops(unseen)
        elif phase == COLOR_CHOICE:
            events = [Color(c) for c in SIDE_COLORS[self.side]]
        elif phase == COUNT:
            low, high = self._count_range()
            events = [Draw(k) for k in range(low, high + 1)]
        elif phase == OWE:
            events = [Draw(k) for k in range(1, self.owe + 1)]
        else:
            events = [Play(LABELS[f]) for f in range(N_FACES) if unseen[f] and self._mismatch(f) is None]
            if phase == DRAWN or not self.drawable():
                events.append(Pass())
            else:
                events.append(Draw())
        if self.challengeable:
            events += [Challenge(True), Challenge(False)]
        on_turn = self.turn_index if phase in (PLAY, DRAWN) else -1
        for i, held in enumerate(self.hands):
            if not self.called[i] and (held == 1 or (held == 2 and i == on_turn)):
                events.append(Uno(self.players[i]))
        if self.uno_window >= 0:
            events.append(Caught(self.players[self.uno_window]))
        return events

    def _tops(self, unseen: list[int]) -> list:
        return [Top(LABELS[f]) for f in range(N_FACES) if unseen[f] or f == self.expected_top]

    def cards_everywhere(self) -> int:
        """Cards in the draw pile, the discard pile, set aside and in hands (HANDS: as tracked):
        always the 112 cards of the deck (the conservation law the tests check)."""
        return self.draw_left + self.pile + self.set_aside + sum(self.hands)
