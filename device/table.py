"""The appliance's behaviour at the table, without any hardware: cards seen and buttons pressed go
in, the game is kept (rules core + log), and `screen(t)` says what the display shows at time t.

Buttons (docs/device.md): `ok` = the player on turn stops (UNO Flip: draws), or confirms; `next`
cycles a choice (or shows the scores; UNO Flip: offers pass, challenge, UNO calls); `back` steps
back one level of a choice, else undoes the last event after a confirm; `back` held = the menu.
What differs per game (cards to events, choices, turn screen, flashes) is in device/games.py. Every
accepted event is in the log (fsync'ed) before any screen shows its effect. Times are the frame
loop's clock (a replay's recording time), so a replayed game shows the same screens at any speed.

The calibration walk is offered where the device can start one (`can_calibrate`): at the first
start with a deck never calibrated (device/run.py; once per deck, kept in the settings), and after
UNSURE_RUN readings in a row were "not sure". A deck the model reads badly is mended by one look at
each card, and a user who has never heard of the menu's Calibrate would not find it. The offer
shows once the messages queued before it have; `ok` takes it (the walk starts), `next` or `back`
declines it, and so does a card read: the table went on playing, and the card is applied.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from device.buttons import ButtonPress
from device.games import GAME_NAMES, Choice, counted, flow_for
from device.gamelog import GameLog, UnkeptLog
from device.screens import (ChartScreen, ChoiceScreen, MenuScreen, MessageScreen, ScoresScreen, TurnScreen,
                            totals_by_round)
from rules.cards import DECKS, GAME_DECKS
from rules.core import PLAYER_RANGES, GameConfig, Notice, Refused, shorten
from rules.events import Shuffle
from rules.match import Match
from rules.script import UNDO, LineError, format_event
from vision.files import write_atomically

log = logging.getLogger(__name__)

SCORE_ROWS_PER_PAGE = 3          # and the footer: all a 64-pixel screen holds readably
SCORES_PAGE_SECONDS = 3.0
CONFIRM_SECONDS = 8.0          # an undo or menu left alone this long goes back to the game
MESSAGE_SECONDS = 3.0
PROBLEM_CHARS = 240         # the most of a problem's text shown (the screen holds about half of it)
SEEN_SECONDS = 0.6             # a flash shown this long may give way to the next event
CARD_SHOWN_SECONDS = 1.2       # the row a card just read joined, before the screen moves on
CHOICE_JUMP = 5                # `next` held skips this many options (a count of cards drawn)
# "Not sure" readings in a row before the walk is offered: one or two are a hand passing over or a
# card half covered, and "show it again" mends them; three with no card read between is a deck
# the model does not know.
UNSURE_RUN = 3
UNSURE_OFFER_SECONDS = CONFIRM_SECONDS   # the offer made mid-game gives the turn back after this


@dataclass
class Settings:
    """What the menu changes, kept in the state directory across restarts; and the decks whose
    calibration walk was offered at a first start (taken or not: a reboot does not ask again)."""
    brightness: int
    players: int
    offered: tuple[str, ...] = ()

    @classmethod
    def load(cls, path: Path, brightness: int, players: int) -> "Settings":
        """The kept settings; a value missing, unreadable or out of the menu's range (brightness
        1..4, players 2..18) is the config's (`brightness`, `players`), the others kept."""
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            return cls(brightness, players)
        except (OSError, ValueError, RecursionError) as error:   # (RecursionError: `[` nested 100,000 deep)
            log.error("settings %s unreadable (%s): the config's are used", path,
                      "nested too deep" if isinstance(error, RecursionError) else shorten(str(error), 120))
            return cls(brightness, players)
        data = data if isinstance(data, dict) else {}
        kept = {}
        for name, default, low, high in (("brightness", brightness, 1, 4), ("players", players, 2, 18)):
            value = data.get(name, default)
            if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
                kept[name] = value
            else:
                log.error("settings %s: %s %s is not %d..%d: %d is used", path, name, shorten(repr(value)), low,
                          high, default)
                kept[name] = default
        offered = data.get("offered", [])
        if isinstance(offered, list) and all(isinstance(deck, str) for deck in offered):
            kept["offered"] = tuple(offered)
        else:      # (asked again at the next first start of a deck: no harm)
            log.error("settings %s: offered %s is not a list of decks: none is taken as offered", path,
                      shorten(repr(offered)))
        return cls(**kept)

    def save(self, path: Path) -> None:
        write_atomically(path, json.dumps({"brightness": self.brightness, "players": self.players,
                                           "offered": sorted(self.offered)}) + "\n")


@dataclass
class Overlay:
    screen: object
    seconds: float
    started: float | None = None     # set when it first shows
    card_read: bool = False          # the row a card just read joined: the next reading replaces it


@dataclass
class Offer:
    """The calibration walk offered: "new deck" (a first start) or "not sure" (a run of them)."""
    why: str
    screen: MessageScreen
    seconds: float | None = None     # declined if left this long on screen; None: until answered
    started: float | None = None     # set when it first shows


@dataclass
class Table:
    match: Match
    game_log: GameLog | UnkeptLog
    names: tuple[str, ...]           # the 18 names the players menu takes from
    settings: Settings
    settings_path: Path
    flash_seconds: float = 1.6
    advice: bool = True              # the turn screen shows one more card's worth (config display.advice)
    on_brightness: Callable[[int], None] = lambda level: None
    games: tuple[str, ...] = tuple(GAME_NAMES)   # what the "Game" menu item offers (those with a model)
    # for the frame loop: "shutdown", "calibrate", "calibrate card", "game" (the deck changed: new
    # vision), "scan hand" (read the hand laid under the camera, then call on_hand_read)
    request: str | None = None
    mode: str = "play"          # play | undo | menu | players | brightness | game | confirm_new | confirm_shutdown
    choice_path: list[int] = field(default_factory=lambda: [0])   # the option shown at each level
    actions_open: bool = False       # UNO Flip: the list `next` opens on a turn
    scan_for: str | None = None      # whose hand the next frame is read as
    hand_read: tuple[str, tuple[str, ...]] | None = None   # a hand read so far (a big one is laid in parts)
    menu_cursor: int = 0
    menu_value: int = 0
    mode_since: float = 0.0
    scores_since: float | None = None   # a scoreboard shows (from then) until dismissed
    scores_title: str = ""
    overlays: list[Overlay] = field(default_factory=list)
    # events of this game the rules refused (a card the deck has none of left, ...): the line of
    # the game log each would have been, as `replay --json` reports a script's refused lines
    refusals: list[LineError] = field(default_factory=list)
    # the turn screen, rebuilt only when the game changes (a summary with exact odds is not per-frame work)
    _turn_screen: tuple = (None, -1, None)   # (match, match.version, screen)
    # The frame loop can start a calibration walk (the appliance sets it): only then is one offered.
    can_calibrate: bool = False
    offer: Offer | None = None
    _offer_showing: bool = False     # the last screen was the offer: the buttons answer it
    unsure_run: int = 0              # "not sure" readings in a row in play
    unsure_offer_armed: bool = True  # a card read since the last offer after a run of them
    # Cards read while a prompt or the menu is open: applied once it closes (applied at once they
    # would change what the prompt asks, "Undo? card 5", or go by unseen), in the order read.
    waiting: list[str] = field(default_factory=list)

    # ---- inputs -------------------------------------------------------------------------------
    @property
    def flow(self):
        return flow_for(self.match.config.game)

    def on_card(self, label: str, t: float) -> None:
        self._drop_message("Card not sure")
        self._drop_card_read()
        self.unsure_run, self.unsure_offer_armed = 0, True
        if self.mode != "play":
            log.info("card %s seen with the %s open: it waits until that closes", label, self.mode)
            self.waiting.append(label)
            return
        if self.offer is not None:         # the table plays on: that is the answer
            self._answer_offer(False, "a card was played")
        event = self.flow.event_for_card(self.match.state, label)
        if event is None:
            log.info("card %s seen: nothing to do with it now", label)
            return
        self.scores_since = None
        rows_before = self.flow.rows(self.match.state)
        queued = len(self.overlays)
        if self._apply(event, t) and len(self.overlays) == queued:     # (a flash says it already)
            joined = self.flow.card_screen(rows_before, self.match.state, self.match.totals)
            if joined is not None:
                self.overlays.append(Overlay(joined, CARD_SHOWN_SECONDS, card_read=True))

    def _play_waiting(self, t: float) -> None:
        """The prompt or menu closed: the cards read meanwhile are played, in order."""
        labels, self.waiting = self.waiting, []
        for label in labels:
            self.on_card(label, t)

    def on_hand_read(self, labels: list[str], unsure: int, t: float) -> None:
        """The cards read in the frame after `ok` on "lay NAME's hand" (`unsure` could not be read)."""
        name, self.scan_for = self.scan_for, None
        pending = self.match.state.pending
        if name is None or pending is None or pending.kind != "hand" or name not in pending.options:
            return
        if unsure:
            self._message("Card not sure", f"{unsure} of {name}'s cards: lay them apart, then ok", inverted=True)
        elif not labels:      # only the round's winner holds no card: the hand is not laid out yet
            self._message("No cards seen", f"lay {name}'s hand apart, then ok", inverted=True)
        else:
            before = self.hand_read[1] if self.hand_read and self.hand_read[0] == name else ()
            self.hand_read = (name, before + tuple(labels))
            self.choice_path = [0]

    def on_unsure(self, t: float) -> None:
        self._drop_message("Card not sure")
        self._drop_card_read()
        self.overlays.append(Overlay(MessageScreen("Card not sure", ("show it again",), inverted=True),
                                     MESSAGE_SECONDS))
        if self.mode != "play":
            return
        self.unsure_run += 1
        if self.unsure_run >= UNSURE_RUN and self.unsure_offer_armed and self.offer is None:
            if self.offer_calibration("not sure"):
                self.unsure_offer_armed = False     # declined: not again before a card is read

    def offer_calibration(self, why: str) -> bool:
        """Offer the calibration walk ("new deck": a first start; "not sure": a run of them) once
        the messages queued now have shown; False where no walk can be started."""
        if not self.can_calibrate:
            return False
        if why == "new deck":
            cards = len(DECKS[self.deck].labels)
            screen = MessageScreen("NEW DECK?", (f"ok: learn it ({cards} cards)", "next: play now"))
            self.offer = Offer(why, screen)
        else:
            screen = MessageScreen("CARDS NOT SURE", ("ok: learn this deck", "next: play on"))
            self.offer = Offer(why, screen, UNSURE_OFFER_SECONDS)
        log.info("calibration walk offered (%s)", why)
        return True

    @property
    def deck(self) -> str:
        return GAME_DECKS[self.match.config.game]

    def on_button(self, press: ButtonPress, t: float) -> None:
        log.info("button %s", press)
        if self.mode != "play" and t - self.mode_since > CONFIRM_SECONDS:
            self.mode = "play"
        # Only an offer on screen takes the buttons (ok is also "stop": one not seen yet must not
        # start a walk); `back` held still opens the menu, the offer left for after it.
        if self.mode == "play" and self._offer_open(t) and not (press.button == "back" and press.hold):
            self._answer_offer(press.button == "ok", f"{press.button} pressed")
            return
        handler = getattr(self, f"_button_{self.mode}")
        handler(press, t)
        if self.mode == "play" and self.waiting:
            self._play_waiting(t)

    def show_problem(self, title: str, text: str) -> None:
        # (Shortened: a screen shows some hundred characters, and a problem may quote a file.)
        self.show(MessageScreen(title, (shorten(text, PROBLEM_CHARS),), inverted=True), 2 * MESSAGE_SECONDS)

    def show(self, screen, seconds: float = MESSAGE_SECONDS) -> None:
        """Show `screen` for `seconds` once what is queued before it has been shown."""
        self.overlays.append(Overlay(screen, seconds))

    # ---- buttons per mode ---------------------------------------------------------------------
    def _button_play(self, press: ButtonPress, t: float) -> None:
        if press.button == "back":
            if press.hold:
                self._enter("menu", t)
                self.menu_cursor = 0
            elif len(self.choice_path) > 1:
                self.choice_path.pop()              # one level back: the player, not their card
            elif self.actions_open:
                self.actions_open = False
            elif self.match.events:
                self._enter("undo", t)
            else:
                self._message("Nothing to undo", "")
            return
        if self.match.over:
            if press.button == "ok":
                self._new_game(self.match.config.players, t)
            return
        if self.scores_since is not None:
            if press.button == "ok":
                self.scores_since = None
            else:
                self.scores_since -= SCORES_PAGE_SECONDS    # next page
            return
        choice = self._choice()
        if choice is not None:
            _, _, option = self._choice_level(choice)
            if press.button == "next":
                self.choice_path[-1] += CHOICE_JUMP if press.hold else 1
            elif press.button == "ok":
                self._do(option.then, t)
            return
        self._do(self.flow.on_turn(self.match.state, press.button), t)

    def _do(self, action, t: float) -> None:
        """An option taken or a turn button: an event, the next level of a choice, a table action,
        or a hint to show."""
        if isinstance(action, Choice):
            self.choice_path.append(0)
        elif isinstance(action, MessageScreen):   # a hint: what to do instead
            self._drop_message(action.title)
            self.show(action)
        elif action == "scores":
            self.actions_open = False
            self._show_scores("SCORES", t)   # a look at the totals; ok or the next card dismisses it
        elif action == "actions":
            only = self.flow.actions(self.match.state).options
            if len(only) == 1:
                self._do(only[0].then, t)
            else:
                self.actions_open = True
                self.choice_path = [0]
        elif isinstance(action, str) and action.startswith(("scan ", "rescan ")):
            verb, _, self.scan_for = action.partition(" ")
            if verb == "rescan":
                self.hand_read = None
            self.request = "scan hand"
        else:
            self._apply(action, t)

    def _button_undo(self, press: ButtonPress, t: float) -> None:
        self.mode = "play"
        if press.button == "ok":
            try:
                undone = self.match.undo()
            except Refused as refusal:
                self._refused(UNDO, refusal.reason)
                self._message("Cannot undo", refusal.reason)
                return
            try:
                self.game_log.append_undo()
            except OSError as error:          # not kept: the game stays as the log has it
                self.match.apply(undone)
                log.error("cannot write the game log: %s", error)
                self._message("Storage error", f"undo not kept: {error}", inverted=True)
                return
            self._close_choice()
            self.scores_since = None
            self._message("Undone", format_event(undone))
            self._keep_again()

    def _button_menu(self, press: ButtonPress, t: float) -> None:
        self.mode_since = t
        if press.button == "back":
            self.mode = "play"
        elif press.button == "next":
            self.menu_cursor = (self.menu_cursor + 1) % len(self.flow.menu_items)
        elif press.button == "ok":
            item = self.flow.menu_items[self.menu_cursor % len(self.flow.menu_items)]
            if item == "New game":
                self._enter("confirm_new", t)
            elif item == "Game":
                self._enter("game", t)
                game = self.match.config.game
                self.menu_value = self.games.index(game) if game in self.games else 0
            elif item == "Players":
                self._enter("players", t)
                self.menu_value = len(self.match.config.players)
            elif item == "Re-shuffle":
                self.mode = "play"
                self._apply(Shuffle(), t)
            elif item in ("Calibrate", "Calibrate card"):
                self.mode = "play"
                self.request = item.lower()
            elif item == "Brightness":
                self._enter("brightness", t)
                self.menu_value = self.settings.brightness
            elif item == "Shut down":
                self._enter("confirm_shutdown", t)
            else:
                self.mode = "play"

    def _button_players(self, press: ButtonPress, t: float) -> None:
        self.mode_since = t
        if press.button == "next":
            low, high = self._players_range()
            self.menu_value = self.menu_value + 1 if self.menu_value < high else low
        elif press.button == "ok":
            self.settings.players = self.menu_value
            self._save_settings("players")
            self._new_game(self.names[: self.menu_value], t)
            self.mode = "play"
        else:
            self.mode = "menu"

    def _button_game(self, press: ButtonPress, t: float) -> None:
        self.mode_since = t
        if press.button == "next":
            self.menu_value = (self.menu_value + 1) % len(self.games)
        elif press.button == "ok":
            self.mode = "play"
            self._new_game(self.match.config.players, t, self.games[self.menu_value])
        else:
            self.mode = "menu"

    def _button_brightness(self, press: ButtonPress, t: float) -> None:
        self.mode_since = t
        if press.button == "next":
            self.menu_value = self.menu_value % 4 + 1
            self.on_brightness(self.menu_value)
        elif press.button == "ok":
            self.settings.brightness = self.menu_value
            self._save_settings("brightness")
            self.mode = "play"
        else:
            self.on_brightness(self.settings.brightness)
            self.mode = "menu"

    def _button_confirm_new(self, press: ButtonPress, t: float) -> None:
        self.mode = "play"
        if press.button == "ok":
            self._new_game(self.match.config.players, t)

    def _button_confirm_shutdown(self, press: ButtonPress, t: float) -> None:
        self.mode = "play"
        if press.button == "ok":
            self.request = "shutdown"
            self.overlays = [Overlay(MessageScreen("Shutting down", ("unplug when the", "green light is off")), 60)]

    def _offer_open(self, t: float) -> bool:
        """The offer is on screen (and not left there too long: then it is declined)."""
        offer = self.offer
        if offer is None or not self._offer_showing:
            return False
        if offer.seconds is not None and offer.started is not None and t - offer.started >= offer.seconds:
            self._answer_offer(False, "left unanswered")
            return False
        return True

    def _answer_offer(self, take: bool, how: str) -> None:
        offer, self.offer, self._offer_showing = self.offer, None, False
        log.info("calibration walk %s (offered: %s; %s)", "taken" if take else "declined", offer.why, how)
        if take:
            self.request = "calibrate"
        if offer.why == "new deck" and self.deck not in self.settings.offered:
            self.settings.offered = tuple(self.settings.offered) + (self.deck,)
            self._save_settings("the calibration offer")

    # ---- the game -----------------------------------------------------------------------------
    def _refused(self, line: str, reason: str) -> None:
        """Keep a refused event as `replay --json` reports a refused line: numbered as if the
        game log held the refused lines too (each after the lines kept and refused before it)."""
        self.refusals.append(LineError(self.game_log.lines + len(self.refusals) + 1, line, reason))

    def _apply(self, event, t: float) -> bool:
        """Apply, log and show an event; False if it was refused (or could not be kept)."""
        try:
            notices = self.match.apply(event)
        except Refused as refusal:
            log.warning("refused %s: %s", format_event(event), refusal.reason)
            self._refused(format_event(event), refusal.reason)
            self.overlays.append(Overlay(self.flow.refusal_screen(self.match.state, event, refusal),
                                         MESSAGE_SECONDS))
            return False
        try:
            self.game_log.append_event(event)   # on disk before any screen shows it
        except OSError as error:
            self.match.undo()
            log.error("cannot write the game log: %s", error)
            self._message("Storage error", f"{format_event(event)} not kept: {error}", inverted=True)
            return False
        log.info("%s", format_event(event))
        self._keep_again()
        self._close_choice()
        self._shorten_shown_overlays(t)
        for notice in notices:
            self._notice(notice, t)
        return True

    def _notice(self, notice: Notice, t: float) -> None:
        flash = self.flow.flash(notice)
        if flash:
            self.overlays.append(Overlay(flash, self.flash_seconds))
        elif notice.kind == "round_over":
            self._show_scores(f"ROUND {notice.detail.round}", t)

    def _new_game(self, players: tuple[str, ...], t: float, game: str | None = None) -> None:
        old = self.match.config
        game = game or old.game
        players = tuple(players)[: self._players_range(game)[1]]
        config = GameConfig(game, players, options=dict(old.options) if game == old.game else {})
        try:
            new_log = self.game_log.next_game(config)
        except OSError as error:             # (the game played so far stays, and its log)
            log.error("cannot start a new game's log: %s", error)
            self._message("Storage error", f"no new game: {error}", inverted=True)
            return
        if GAME_DECKS[game] != GAME_DECKS[old.game]:
            self.request = "game"             # the frame loop loads the other deck's classifier
        self.game_log.close()
        self.game_log = new_log
        self.match = Match(config)
        self.refusals.clear()
        if self.waiting:       # (read while the menu was open: the game they were for is over)
            log.info("cards seen while the menu was open are not played in the new game: %s", " ".join(self.waiting))
            self.waiting = []
        self.scores_since = None
        self.overlays.clear()
        self.offer, self.unsure_run, self.unsure_offer_armed = None, 0, True   # (an offer made for the game before)
        self._close_choice()
        log.info("new game: %s, %s", config.game, " ".join(config.players))
        self._keep_again(quiet=True)
        if not self.game_log.keeps:
            self.show_problem("Not saving", f"this game is not kept: {self.game_log.why}")
        self._message("New game", " ".join(config.players))

    def _keep_again(self, quiet: bool = False) -> None:
        """Playing unkept: once the state directory can be written again (the fault gone), the
        game so far is written out whole and kept from then on, the settings too."""
        if self.game_log.keeps:
            return
        kept = self.game_log.recovered()
        if kept is None:
            return
        self.game_log = kept
        log.warning("the state directory can be written again: the game is kept in %s", kept.path)
        try:
            self.settings.save(self.settings_path)
        except OSError as error:
            log.error("cannot keep the settings in %s: %s", self.settings_path, error)
        if not quiet:
            self._message("Saving again", "the game is kept from now on")

    # ---- output -------------------------------------------------------------------------------
    def screen(self, t: float):
        """What the display shows at time t."""
        if self.mode != "play" and t - self.mode_since > CONFIRM_SECONDS:
            self.mode = "play"
            self.on_brightness(self.settings.brightness)
            self._play_waiting(t)
        self._offer_showing = False
        if self.mode != "play":
            return self._mode_screen()
        while self.overlays:
            overlay = self.overlays[0]
            if overlay.started is None:
                overlay.started = t
            if t - overlay.started < overlay.seconds:
                return overlay.screen
            self.overlays.pop(0)
        if self.offer is not None:
            if self.offer.started is None:
                self.offer.started = t
            self._offer_showing = True
            if self._offer_open(t):
                return self.offer.screen
        if self.match.over:
            return self._game_over(t)
        if self.scores_since is not None:
            return self._scores(self.scores_title, t, "ok: play on")
        if self.scan_for is not None:
            return MessageScreen("Reading", (f"{self.scan_for}'s hand",))
        choice = self._choice()
        if choice is not None:
            level, index, option = self._choice_level(choice)
            return ChoiceScreen(level.question, option.text, f"{index + 1}/{len(level.options)}", option.detail)
        match, version, screen = self._turn_screen
        if match is not self.match or version != self.match.version:
            screen = self.flow.turn_screen(self.match.state, self.match.totals)
            if not self.advice and isinstance(screen, TurnScreen):
                screen = dataclasses.replace(screen, advice=None)
            self._turn_screen = (self.match, self.match.version, screen)
        return screen

    def _choice(self) -> Choice | None:
        """The choice the buttons walk now: the game's pending decision, or UNO Flip's turn actions."""
        state = self.match.state
        pending = state.pending
        if pending is not None and pending.kind == "hand" and self.hand_read and self.hand_read[0] in pending.options:
            return self.flow.hand_choice(*self.hand_read)
        if pending is not None:
            return self.flow.choice(state)
        if self.actions_open and state.turn is not None:
            return self.flow.actions(state)
        return None

    def _choice_level(self, root: Choice):
        """(the level shown, the index of the option shown, that option), along choice_path."""
        level = root
        for depth, i in enumerate(self.choice_path):
            option = level.options[i % len(level.options)]
            if depth == len(self.choice_path) - 1:
                return level, i % len(level.options), option
            if not isinstance(option.then, Choice):   # the choice changed under the path: start over
                self.choice_path = [0]
                return self._choice_level(root)
            level = option.then
        raise AssertionError("choice_path is never empty")

    def _close_choice(self) -> None:
        self.choice_path = [0]
        self.actions_open = False
        self.hand_read = None

    def _scores(self, title: str, t: float, footer: str) -> ScoresScreen:
        totals = self.match.totals
        last = self.match.rounds[-1].scores if self.match.rounds else {}
        busted = self.match.rounds[-1].busted if self.match.rounds else ()
        players = sorted(totals, key=lambda name: -totals[name])
        rows = tuple((name, "bust" if name in busted else (f"+{last[name]}" if name in last else ""),
                      totals[name]) for name in players)
        pages = max(1, -(-len(rows) // SCORE_ROWS_PER_PAGE))
        since = self.scores_since if self.scores_since is not None else 0.0
        page = int(max(0.0, t - since) // SCORES_PAGE_SECONDS) % pages
        return ScoresScreen(title, rows[page * SCORE_ROWS_PER_PAGE:(page + 1) * SCORE_ROWS_PER_PAGE],
                            page, pages, footer)

    def _game_over(self, t: float):
        """The winner's scores, then a chart of the totals by round, in turn."""
        since = self.scores_since if self.scores_since is not None else 0.0
        pages = self._scores("", since, "").pages
        shown = max(0.0, t - since) % ((pages + 1) * SCORES_PAGE_SECONDS)
        title, footer = f"WINNER {self.match.winner}", "ok: new game"
        if shown < pages * SCORES_PAGE_SECONDS:
            return self._scores(title, since + shown, footer)
        series = totals_by_round(self.match.config.players, [r.scores for r in self.match.rounds])
        return ChartScreen(title, series, self.match.state.winning_total, footer)

    def _mode_screen(self):
        screen = self._mode_screen_itself()
        if not self.waiting:
            return screen
        waiting = f"{counted(len(self.waiting), 'card')} waiting"
        if isinstance(screen, MenuScreen):
            return dataclasses.replace(screen, title=f"MENU · {waiting}")
        if isinstance(screen, ChoiceScreen):
            return dataclasses.replace(screen, detail=waiting)
        return dataclasses.replace(screen, lines=screen.lines + (waiting,))

    def _mode_screen_itself(self):
        if self.mode == "undo":
            return MessageScreen("Undo?", (format_event(self.match.events[-1]), "ok: undo  back: keep"))
        if self.mode == "menu":
            items = tuple(self._menu_label(item) for item in self.flow.menu_items)
            return MenuScreen("MENU", items, self.menu_cursor % len(items))
        if self.mode == "game":
            return ChoiceScreen("Game: new game", GAME_NAMES[self.games[self.menu_value]],
                                f"{self.menu_value + 1}/{len(self.games)}")
        if self.mode == "players":
            low, high = self._players_range()
            return ChoiceScreen("Players: new game", f"{self.menu_value} players", f"{low}-{high}",
                                " ".join(self.names[: self.menu_value]))
        if self.mode == "brightness":
            return ChoiceScreen("Brightness", f"{self.menu_value} of 4", "", "next: brighter")
        if self.mode == "confirm_new":
            return MessageScreen("New game?", ("ok: yes  back: no",))
        return MessageScreen("Shut down?", ("ok: yes  back: no",))

    def _players_range(self, game: str | None = None) -> tuple[int, int]:
        """The players the menu offers: the game's rule (rules.core PLAYER_RANGES), as many as
        there are names."""
        low, high = PLAYER_RANGES[game or self.match.config.game]
        return low, min(high or len(self.names), len(self.names))

    def _menu_label(self, item: str) -> str:
        if item == "Players":
            return f"Players: {len(self.match.config.players)}"
        if item == "Brightness":
            return f"Brightness: {self.settings.brightness}"
        if item == "Game":
            return f"Game: {GAME_NAMES[self.match.config.game]}"
        return item

    def _show_scores(self, title: str, t: float) -> None:
        self.scores_since = t
        self.scores_title = title

    def _enter(self, mode: str, t: float) -> None:
        self.mode = mode
        self.mode_since = t

    def _save_settings(self, what: str) -> None:
        """Keep the menu's settings; if they cannot be (a full or failing card), they hold until
        the service restarts, and the table is told (once already: playing unkept)."""
        if not self.game_log.keeps:
            log.info("settings not kept (the state directory cannot be written): %s", what)
            return
        try:
            self.settings.save(self.settings_path)
        except OSError as error:
            log.error("cannot keep the settings in %s: %s", self.settings_path, error)
            self._message("Storage error", f"{what} not kept: {error}", inverted=True)

    def _message(self, title: str, text: str, inverted: bool = False) -> None:
        self.overlays.append(Overlay(MessageScreen(title, (text,) if text else (), inverted), MESSAGE_SECONDS))

    def _shorten_shown_overlays(self, t: float) -> None:
        """Play went on: what has been on screen for a moment gives way to what comes next."""
        for overlay in self.overlays:
            if overlay.started is not None:
                overlay.seconds = min(overlay.seconds, max(SEEN_SECONDS, t - overlay.started))

    def _drop_card_read(self) -> None:
        self.overlays = [o for o in self.overlays if not o.card_read]

    def _drop_message(self, title: str) -> None:
        self.overlays = [o for o in self.overlays
                         if not (isinstance(o.screen, MessageScreen) and o.screen.title == title)]
