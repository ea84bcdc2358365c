"""What differs per game on the device: which event a card seen stands for, the choices a pending
decision offers on three buttons, what `ok` and `next` do on a turn, the turn screen and the
flashes. device/table.py keeps everything the games share (log, undo, menu, overlays, scores).

A choice is a small tree walked with the buttons: `next` cycles the options of one level, `ok`
takes the option shown — either an event (applied) or the next level (a player, then one of their
cards) — and `back` steps back one level. An option may instead name a table action ("scores",
"scan NAME" = read the cards laid under the camera as (more of) NAME's hand, "rescan NAME" = read
it afresh).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from device.screens import FlashScreen, MessageScreen, TurnScreen, UnoScreen
from rules.advice import one_more_card
from rules.core import Notice, Refused
from rules.events import (Bonus, Card, Caught, Challenge, Color, Draw, Hand, Pass, Penalize, Play, Start,
                          Stop, SwapCards, Take, Target, Top, Uno)

GAME_NAMES = {"flip7": "Flip 7", "flip7-vengeance": "Vengeance", "flip7-vengeance-brutal": "Vengeance Brutal",
              "uno-flip": "UNO Flip"}
CARD_WORDS = {"freeze": "FREEZE", "flip-three": "FLIP 3", "second-chance": "2ND CHANCE",
              "just-one-more": "1 MORE", "flip-four": "FLIP 4", "steal": "STEAL", "discard": "DISCARD"}
FLIP_NOTES = {"flip_three_bust_odds": "flip 3", "flip_four_bust_odds": "flip 4"}


@dataclass(frozen=True)
class Option:
    text: str                 # shown big
    then: object              # an event, the next level (a Choice), or a table action (str)
    detail: str = ""          # a small line under it


@dataclass(frozen=True)
class Choice:
    question: str
    options: tuple[Option, ...]


def buttons_for(choice: Choice, event) -> list[str] | None:
    """The presses that answer `choice` with `event` (`next` to the option, `ok`, per level), or
    None if it does not offer it: how a button script is written for a table script."""
    for i, option in enumerate(choice.options):
        if option.then == event:
            return ["next"] * i + ["ok"]
        if isinstance(option.then, Choice):
            deeper = buttons_for(option.then, event)
            if deeper is not None:
                return ["next"] * i + ["ok"] + deeper
    return None


def _by_player(pairs, make) -> tuple[Option, ...]:
    """[name, label] pairs as two levels: the player (their cards as detail), then the card."""
    players: dict[str, list[str]] = {}
    for name, label in pairs:
        players.setdefault(name, []).append(label)
    return tuple(Option(name, make(name, labels), " ".join(labels)) for name, labels in players.items())


class FlipFlow:
    """Flip 7 and Vengeance (+ Brutal): a card turned is dealt; `ok` stops; choices of player,
    card, swap and the Brutal Flip 7 bonus."""
    menu_items = ("New game", "Players", "Re-shuffle", "Calibrate", "Calibrate card", "Brightness", "Game",
                  "Shut down", "Back")

    def event_for_card(self, state, label: str):
        return Card(label)

    def choice(self, state) -> Choice | None:
        pending = state.pending
        if pending is None:
            return None
        by, what = pending.by, CARD_WORDS.get(pending.card, (pending.card or "").upper())
        if pending.kind == "target":
            verb = "to?" if pending.card == "second-chance" or pending.card not in CARD_WORDS else "who?"
            return Choice(f"{by}: {what} {verb}", tuple(Option(name, Target(name)) for name in pending.options))
        if pending.kind == "card":
            def cards(name, labels):
                return Choice(f"{what} {name}'s", tuple(Option(label, Take(name, label)) for label in labels))
            return Choice(f"{by}: {what} from?", _by_player(pending.options, cards))
        if pending.kind == "swap":
            return self._swap_choice(by, pending.options)
        if pending.kind == "flip7":
            penalties = tuple(Option(option.split(" ", 1)[1], Penalize(option.split(" ", 1)[1]))
                              for option in pending.options if option.startswith("penalize "))
            options = (Option("+15 for me", Bonus()),)
            if penalties:
                options += (Option("-15 to…", Choice(f"{by}: -15 to?", penalties)),)
            return Choice(f"{by}: FLIP 7!", options)
        raise ValueError(f"no device choice for a pending {pending.kind}")

    @staticmethod
    def _swap_choice(by: str, pairs) -> Choice:
        """First card (player, then card), then the second card among those it can swap with."""
        partners: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for (a, la), (b, lb) in pairs:
            partners.setdefault((a, la), []).append((b, lb))
            partners.setdefault((b, lb), []).append((a, la))

        def second(a, la):
            def cards(name, labels):
                return Choice(f"{a} {la} with {name}'s",
                              tuple(Option(label, SwapCards(a, la, name, label)) for label in labels))
            return Choice(f"swap {a} {la} with?", _by_player(partners[(a, la)], cards))

        def first(name, labels):
            return Choice(f"SWAP {name}'s", tuple(Option(label, second(name, label)) for label in labels))
        return Choice(f"{by}: SWAP first card", _by_player(partners, first))

    def on_turn(self, state, button: str):
        """What a short `ok` / `next` does on a turn: an event, a table action, a screen to show."""
        return Stop() if button == "ok" else "scores"

    def refusal_screen(self, state, event, refusal: Refused):
        return MessageScreen("Can't stop" if isinstance(event, Stop) else "Refused", (refusal.reason,), True)

    def turn_screen(self, state, totals: dict[str, int]):
        turn = state.summary()["turn"]
        if turn is None:
            return MessageScreen("Waiting", ("deal a card",))
        return replace(self._row_screen(state, totals, turn), advice=one_more_card(state))

    def _row_screen(self, state, totals: dict[str, int], player: str, note: str | None = None) -> TurnScreen:
        summary = state.summary()
        row = tuple(summary["rows"][player])
        key = state.flip_odds_key
        odds = summary.get(key, {}).get(player, summary["bust_odds"].get(player))
        if note is None:
            note = FLIP_NOTES[key] if key in summary else ("may not stop" if "zero" in row else "")
        return TurnScreen(player, summary["round"], row, state.round_score(player), totals[player], odds, note)

    def card_screen(self, rows_before: dict[str, list[str]], state, totals: dict[str, int]):
        """The row a card just read joined, to be seen before the screen moves on (a misread is
        caught now, not a turn later); None when no row grew (an action awaiting its target)."""
        rows = state.summary()["rows"]
        grew = [name for name, row in rows.items() if len(row) > len(rows_before.get(name, ()))]
        if len(grew) != 1:
            return None
        return self._row_screen(state, totals, grew[0], "just read")

    @staticmethod
    def rows(state) -> dict[str, list[str]]:
        return {name: list(row) for name, row in state.summary()["rows"].items()}

    def flash(self, n: Notice):
        maker = FLASHES.get(n.kind)
        return maker(n) if maker else None


def _swapped(n: Notice) -> FlashScreen:
    (a, la), (b, lb) = n.detail
    return FlashScreen("SWAP", f"{a} ⇄ {b}", f"{a} gets {lb}, {b} gets {la}")


def counted(count: int, noun: str) -> str:
    """`1 card`, `3 cards`."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def with_article(label: str) -> str:
    """`a 7`, `an 8`, `an 11`, `an unlucky-7`: the article as the card is spoken (eight, eleven)."""
    spoken_vowel = label.startswith(("8", "11", "18", "a", "e", "i", "o", "u"))
    return f"{'an' if spoken_vowel else 'a'} {label}"


FLASHES = {
    "bust": lambda n: FlashScreen("BUST!", n.player, f"a second {n.detail}"),
    "flip7": lambda n: FlashScreen("FLIP 7!", n.player, "+15"),
    "freeze": lambda n: FlashScreen("FREEZE", n.player, f"banks {n.detail}"),
    "second_chance_used": lambda n: FlashScreen("2ND CHANCE", n.player, f"used on {with_article(str(n.detail))}"),
    "second_chance_given": lambda n: FlashScreen("2ND CHANCE", n.player, "given"),
    "flip_three": lambda n: FlashScreen("FLIP 3", n.player, "takes 3 cards"),
    "stop": lambda n: FlashScreen("STOPS", n.player, counted(n.detail, "point")),
    "shuffled": lambda n: FlashScreen("SHUFFLED", "", f"{counted(n.detail, 'card')} in the deck"),
    # Vengeance
    "malus": lambda n: FlashScreen(f"MALUS {n.detail}", n.player, "gets it"),
    "unlucky_7": lambda n: FlashScreen("UNLUCKY 7", n.player, "discards the row"),
    "just_one_more": lambda n: FlashScreen("1 MORE", n.player, "one card, then out"),
    "flip_four": lambda n: FlashScreen("FLIP 4", n.player, "takes 4 cards"),
    "stolen": lambda n: FlashScreen("STEAL", n.player, f"loses the {n.detail}"),
    "discarded": lambda n: FlashScreen("DISCARD", n.player, f"loses the {n.detail}"),
    "swapped": _swapped,
    "bonus": lambda n: FlashScreen("+15", n.player, "Flip 7 bonus"),
    "penalized": lambda n: FlashScreen("-15", n.player, "Flip 7 penalty"),
}


UNO_FLASHES = {
    "one_card": lambda n: FlashScreen("UNO?", n.player, "1 card, not called: catch?"),
    "uno": lambda n: FlashScreen("UNO!", n.player, "called"),
    "caught": lambda n: FlashScreen("CAUGHT", n.player, f"draws {n.detail}"),
    "must_draw": lambda n: FlashScreen("DRAW", n.player, counted(n.detail, "card") if isinstance(n.detail, int)
                                       else f"until {n.detail}"),
    "skipped": lambda n: FlashScreen("SKIP", n.player or "everyone", "is skipped" if n.player else "plays again"),
    "reverse": lambda n: FlashScreen("REVERSE", "", n.detail),
    "flip": lambda n: FlashScreen("FLIP!", f"{n.detail} side", "show the new top card"),
    "unexpected_top": lambda n: FlashScreen("TOP CARD?", n.detail["read"], f"expected {n.detail['expected']}"),
    "color": lambda n: FlashScreen(n.detail.upper(), n.player, "named"),
    "challenge": lambda n: FlashScreen("GUILTY" if n.detail["guilty"] else "INNOCENT", n.detail["against"],
                                       f"challenged by {n.player}"),
    "shuffled": lambda n: FlashScreen("SHUFFLED", "", f"{counted(n.detail, 'card')} to draw"),
    "set_aside": lambda n: FlashScreen("SET ASIDE", n.detail, "turn another card"),
    "hand_count": lambda n: FlashScreen("CHECK HAND", n.player,
                                        f"laid {n.detail['laid']}, expected {n.detail['tracked']}"),
    "out": lambda n: FlashScreen("OUT!", n.player, "wins the round"),
}

# what `must()` asks, said in a few words for the turn screen
UNO_MUST = {"start": "turn a start card", "top": "show the top card", "play": "play or ok: draw",
            "play_or_pass": "play it, or pass", "color": "name a colour", "draw_count": "how many drawn?"}


def _uno_words(label: str) -> str:
    return label.replace("-", " ")


# what to do instead, when `ok` (draw) does nothing
OK_HINTS = {"start": "turn the first card onto the pile", "top": "let the camera see the pile",
            "play_or_pass": "play the card drawn, or next: pass"}


class UnoFlow:
    """UNO Flip: the camera watches the discard pile — a card landing is a play (the start card, or
    after a Flip the card now showing); `ok` draws; `next` offers pass, challenges, UNO calls and
    catches; after a wild the colour is chosen; at the end of a round each hand is read."""
    menu_items = ("New game", "Players", "Calibrate", "Calibrate card", "Brightness", "Game", "Shut down",
                  "Back")

    @staticmethod
    def rows(state) -> dict[str, list[str]]:
        return {}

    def card_screen(self, rows_before, state, totals):
        return None      # the card played is the top card on the screen that follows

    def event_for_card(self, state, label: str):
        must = state.must()
        action = must["action"] if must else None
        if action == "start":
            return Start(label)
        if action == "top":
            return Top(label)
        if action in ("hand", None):
            # the hands laid out to be read (even after a last Flip, whose top card scores
            # nothing), or the game is over
            return None
        return Play(label)

    def choice(self, state) -> Choice | None:
        pending = state.pending
        if pending is None:
            return None
        # UNO calls and catches stay within reach while a colour or a count is asked for
        if pending.kind == "color":
            colours = tuple(Option(c, Color(c)) for c in pending.options)
            return Choice(f"{pending.by}: colour?", colours + self._calls(state, state.summary()))
        if pending.kind == "draw":
            counts = tuple(Option(f"drew {k}", Draw(k)) for k in pending.options)
            # a challenge comes before any card is drawn, so it is offered first
            return Choice(f"{pending.by}: how many?",
                          self._challenges(state) + counts + self._calls(state, state.summary()))
        if pending.kind == "hand":
            return Choice("Round over: hands", tuple(
                Option(f"{name}'s hand", f"scan {name}", "lay it apart, ok: read") for name in pending.options))
        raise ValueError(f"no device choice for a pending {pending.kind}")

    @staticmethod
    def hand_choice(name: str, labels: tuple[str, ...]) -> Choice:
        """A hand read: count it, add the cards that did not fit under the camera, or read it again."""
        from rules.uno_flip import score_hand

        cards = counted(len(labels), "card")
        return Choice(f"{name}: {cards}, {score_hand(labels)} pts", (
            Option("done", Hand(name, labels), "ok: count it"),
            Option("more cards", f"scan {name}", "lay the rest, ok: read"),
            Option("read again", f"rescan {name}", "lay it apart, ok: read")))

    @staticmethod
    def _challenges(state) -> tuple[Option, ...]:
        if not state.challengeable:
            return ()
        return (Option("challenge: guilty", Challenge(True)), Option("challenge: innocent", Challenge(False)))

    def actions(self, state) -> Choice:
        """What `next` offers on a turn: pass (after a draw), a challenge, a catch, UNO calls, scores."""
        summary = state.summary()
        passes = tuple(Option("pass", Pass()) for event in state.legal_events() if isinstance(event, Pass))
        options = passes + self._challenges(state) + self._calls(state, summary) + (Option("scores", "scores"),)
        return Choice(f"{summary['must']['player']}:", options)

    @staticmethod
    def _calls(state, summary) -> tuple[Option, ...]:
        """A catch of a player who did not call UNO, and the UNO calls that may be made now."""
        calls = ()
        if summary["catchable"]:
            calls += (Option(f"caught {summary['catchable']}", Caught(summary["catchable"]), "draws 2"),)
        return calls + tuple(Option(f"{event.player}: UNO!", event, "called it")
                             for event in state.legal_events() if isinstance(event, Uno))

    def on_turn(self, state, button: str):
        if button == "next":
            return "actions"
        must = state.must()
        if must["action"] == "play":
            return Draw()
        if must["action"] == "draw":
            return Draw(must["count"])        # the whole penalty at once
        return MessageScreen(UNO_MUST[must["action"]], (OK_HINTS[must["action"]],))

    def refusal_screen(self, state, event, refusal: Refused):
        """An illegal play flashes like a bust: who, and the card on what, to be taken back."""
        from rules.uno_flip import IllegalPlay

        if not isinstance(refusal, IllegalPlay):
            return MessageScreen("Refused", (refusal.reason,), True)
        top = state.summary()["top"] or ""
        return FlashScreen("ILLEGAL!", event.player or state.turn or "",
                           f"{_uno_words(event.label)} on {_uno_words(top)}: take back")

    def turn_screen(self, state, totals: dict[str, int]):
        s = state.summary()
        must = s["must"]
        if must is None:
            return MessageScreen("Game over")
        player = must["player"]
        action = must["action"]
        doing = UNO_MUST.get(action, "")
        if action == "draw":
            doing = f"draw {must['count']}" + (" or challenge" if state.challengeable else "")
        # who holds one card: not called first (a catch is possible), then called
        uno = sorted(s["uno"].items(), key=lambda item: item[1] == "called")
        warning = " ".join(f"{name}: UNO{'' if called == 'called' else '?'}" for name, called in uno)
        return UnoScreen(player, s["side"], s["direction"], s["top"] or "", s["color"] or "", doing,
                         s["hands"][player], warning, s["round"])

    def flash(self, n: Notice):
        maker = UNO_FLASHES.get(n.kind)
        return maker(n) if maker else None


FLOWS = {"flip7": FlipFlow(), "flip7-vengeance": FlipFlow(), "flip7-vengeance-brutal": FlipFlow(),
         "uno-flip": UnoFlow()}


def flow_for(game: str):
    return FLOWS[game]
