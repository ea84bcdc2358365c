"""The appliance's behaviour at the table, without any hardware: cards seen and buttons pressed go
in, the game is kept (rules core + log), and `screen(t)` says what the display shows at time t.

Buttons (spec/device.md): `ok` = the player on turn stops, or confirms; `next` cycles a choice (or
shows the scores); `back` = undo the last event after a confirm; `back` held = the menu. Every
accepted event is in the log (fsync'ed) before any screen shows its effect. Times are the frame
loop's clock (a replay's recording time), so a replayed game shows the same screens at any speed.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from device.buttons import ButtonPress
from device.gamelog import GameLog, write_atomically
from device.screens import (ChoiceScreen, FlashScreen, MenuScreen, MessageScreen, ScoresScreen,
                            TurnScreen)
from rules.core import GameConfig, Notice, Refused
from rules.events import Card, Shuffle, Stop, Target
from rules.match import Match
from rules.script import format_event

log = logging.getLogger(__name__)

SCORE_ROWS_PER_PAGE = 3          # and the footer: all a 64-pixel screen holds readably
SCORES_PAGE_SECONDS = 3.0
CONFIRM_SECONDS = 8.0          # an undo or menu left alone this long goes back to the game
MESSAGE_SECONDS = 3.0
SEEN_SECONDS = 0.6             # a flash shown this long may give way to the next event
CARD_WORDS = {"freeze": "FREEZE", "flip-three": "FLIP 3", "second-chance": "2ND CHANCE"}
MENU_ITEMS = ("New game", "Players", "Re-shuffle", "Calibrate", "Calibrate card", "Brightness", "Shut down",
              "Back")


@dataclass
class Settings:
    """What the menu changes, kept in the state directory across restarts."""
    brightness: int
    players: int

    @classmethod
    def load(cls, path: Path, brightness: int, players: int) -> "Settings":
        try:
            data = json.loads(path.read_text())
            return cls(int(data.get("brightness", brightness)), int(data.get("players", players)))
        except (OSError, ValueError, AttributeError):
            return cls(brightness, players)

    def save(self, path: Path) -> None:
        write_atomically(path, json.dumps({"brightness": self.brightness, "players": self.players}) + "\n")


@dataclass
class Overlay:
    screen: object
    seconds: float
    started: float | None = None     # set when it first shows


@dataclass
class Table:
    match: Match
    game_log: GameLog
    names: tuple[str, ...]           # the 18 names the players menu takes from
    settings: Settings
    settings_path: Path
    flash_seconds: float = 1.6
    on_brightness: Callable[[int], None] = lambda level: None
    request: str | None = None       # for the frame loop: "shutdown", "calibrate", "calibrate card"
    mode: str = "play"               # play | undo | menu | players | brightness | confirm_new | confirm_shutdown
    choice_index: int = 0
    menu_cursor: int = 0
    menu_value: int = 0
    mode_since: float = 0.0
    scores_since: float | None = None   # a scoreboard shows (from then) until dismissed
    scores_title: str = ""
    overlays: list[Overlay] = field(default_factory=list)

    # ---- inputs -------------------------------------------------------------------------------
    def on_card(self, label: str, t: float) -> None:
        self._drop_message("Card not sure")
        self.scores_since = None
        if self.mode == "undo":
            self.mode = "play"
        self._apply(Card(label), t)

    def on_unsure(self, t: float) -> None:
        self._drop_message("Card not sure")
        self.overlays.append(Overlay(MessageScreen("Card not sure", ("show it again",), inverted=True),
                                     MESSAGE_SECONDS))

    def on_button(self, press: ButtonPress, t: float) -> None:
        log.info("button %s", press)
        if self.mode != "play" and t - self.mode_since > CONFIRM_SECONDS:
            self.mode = "play"
        handler = getattr(self, f"_button_{self.mode}")
        handler(press, t)

    def show_problem(self, title: str, text: str) -> None:
        self.show(MessageScreen(title, (text,), inverted=True), 2 * MESSAGE_SECONDS)

    def show(self, screen, seconds: float = MESSAGE_SECONDS) -> None:
        """Show `screen` for `seconds` once what is queued before it has been shown."""
        self.overlays.append(Overlay(screen, seconds))

    # ---- buttons per mode ---------------------------------------------------------------------
    def _button_play(self, press: ButtonPress, t: float) -> None:
        if press.button == "back":
            if press.hold:
                self._enter("menu", t)
                self.menu_cursor = 0
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
        pending = self.match.state.pending
        if pending is not None:
            if press.button == "next":
                self.choice_index = (self.choice_index + 1) % len(pending.options)
            elif press.button == "ok":
                self._apply(Target(pending.options[self.choice_index % len(pending.options)]), t)
            return
        if press.button == "ok":
            self._apply(Stop(), t)
        elif press.button == "next":
            self._show_scores("SCORES", t)   # a look at the totals; ok or the next card dismisses it

    def _button_undo(self, press: ButtonPress, t: float) -> None:
        self.mode = "play"
        if press.button == "ok":
            try:
                undone = self.match.undo()
            except Refused as refusal:
                self._message("Cannot undo", refusal.reason)
                return
            self.game_log.append_undo()
            self.choice_index = 0
            self.scores_since = None
            self._message("Undone", format_event(undone))

    def _button_menu(self, press: ButtonPress, t: float) -> None:
        self.mode_since = t
        if press.button == "back":
            self.mode = "play"
        elif press.button == "next":
            self.menu_cursor = (self.menu_cursor + 1) % len(MENU_ITEMS)
        elif press.button == "ok":
            item = MENU_ITEMS[self.menu_cursor]
            if item == "New game":
                self._enter("confirm_new", t)
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
            self.menu_value = self.menu_value % 18 + 1 if self.menu_value < 18 else 2
        elif press.button == "ok":
            self.settings.players = self.menu_value
            self.settings.save(self.settings_path)
            self._new_game(self.names[: self.menu_value], t)
            self.mode = "play"
        else:
            self.mode = "menu"

    def _button_brightness(self, press: ButtonPress, t: float) -> None:
        self.mode_since = t
        if press.button == "next":
            self.menu_value = self.menu_value % 4 + 1
            self.on_brightness(self.menu_value)
        elif press.button == "ok":
            self.settings.brightness = self.menu_value
            self.settings.save(self.settings_path)
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

    # ---- the game -----------------------------------------------------------------------------
    def _apply(self, event, t: float) -> None:
        try:
            notices = self.match.apply(event)
        except Refused as refusal:
            log.warning("refused %s: %s", format_event(event), refusal.reason)
            self._message("Refused", refusal.reason, inverted=True)
            return
        try:
            self.game_log.append_event(event)   # on disk before any screen shows it
        except OSError as error:
            self.match.undo()
            log.error("cannot write the game log: %s", error)
            self._message("Storage error", f"{format_event(event)} not kept: {error}", inverted=True)
            return
        log.info("%s", format_event(event))
        self.choice_index = 0
        self._shorten_shown_overlays(t)
        for notice in notices:
            self._notice(notice, t)

    def _notice(self, notice: Notice, t: float) -> None:
        flash = {
            "bust": lambda n: FlashScreen("BUST!", n.player, f"a second {n.detail}"),
            "flip7": lambda n: FlashScreen("FLIP 7!", n.player, "+15"),
            "freeze": lambda n: FlashScreen("FREEZE", n.player, f"banks {n.detail}"),
            "second_chance_used": lambda n: FlashScreen("2ND CHANCE", n.player, f"used on a {n.detail}"),
            "second_chance_given": lambda n: FlashScreen("2ND CHANCE", n.player, "given"),
            "flip_three": lambda n: FlashScreen("FLIP 3", n.player, "takes 3 cards"),
            "stop": lambda n: FlashScreen("STOPS", n.player, f"{n.detail} points"),
            "shuffled": lambda n: FlashScreen("SHUFFLED", "", f"{n.detail} cards in the deck"),
        }.get(notice.kind)
        if flash:
            self.overlays.append(Overlay(flash(notice), self.flash_seconds))
        elif notice.kind == "round_over":
            self._show_scores(f"ROUND {notice.detail.round}", t)

    def _new_game(self, players: tuple[str, ...], t: float) -> None:
        config = GameConfig(self.match.config.game, tuple(players), options=dict(self.match.config.options))
        self.game_log.close()
        self.game_log = GameLog.start(self.game_log.path, config)
        self.match = Match(config)
        self.scores_since = None
        self.overlays.clear()
        log.info("new game: %s, %s", config.game, " ".join(config.players))
        self._message("New game", " ".join(config.players))

    # ---- output -------------------------------------------------------------------------------
    def screen(self, t: float):
        """What the display shows at time t."""
        if self.mode != "play" and t - self.mode_since > CONFIRM_SECONDS:
            self.mode = "play"
            self.on_brightness(self.settings.brightness)
        if self.mode != "play":
            return self._mode_screen()
        while self.overlays:
            overlay = self.overlays[0]
            if overlay.started is None:
                overlay.started = t
            if t - overlay.started < overlay.seconds:
                return overlay.screen
            self.overlays.pop(0)
        if self.match.over:
            return self._scores(f"WINNER {self.match.winner}", t, "ok: new game")
        if self.scores_since is not None:
            return self._scores(self.scores_title, t, "ok: play on")
        state = self.match.state
        pending = state.pending
        if pending is not None:
            what = CARD_WORDS.get(pending.card, (pending.card or "").upper())
            verb = "to?" if pending.card == "second-chance" else "who?"
            option = pending.options[self.choice_index % len(pending.options)]
            return ChoiceScreen(f"{pending.by}: {what} {verb}", option,
                                f"{self.choice_index % len(pending.options) + 1}/{len(pending.options)}")
        summary = state.summary()
        turn = summary["turn"]
        if turn is None:
            return MessageScreen("Waiting", ("deal a card",))
        row = tuple(summary["rows"][turn])
        odds = summary.get("flip_three_bust_odds", {}).get(turn, summary["bust_odds"].get(turn))
        note = "flip 3" if "flip_three_bust_odds" in summary else ""
        return TurnScreen(turn, summary["round"], row, state.round_score(turn), self.match.totals[turn], odds, note)

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

    def _mode_screen(self):
        if self.mode == "undo":
            return MessageScreen("Undo?", (format_event(self.match.events[-1]), "ok: undo  back: keep"))
        if self.mode == "menu":
            items = tuple(self._menu_label(item) for item in MENU_ITEMS)
            return MenuScreen("MENU", items, self.menu_cursor)
        if self.mode == "players":
            return ChoiceScreen("Players: new game", f"{self.menu_value} players", "2-18",
                                " ".join(self.names[: self.menu_value]))
        if self.mode == "brightness":
            return ChoiceScreen("Brightness", f"{self.menu_value} of 4", "", "next: brighter")
        if self.mode == "confirm_new":
            return MessageScreen("New game?", ("ok: yes  back: no",))
        return MessageScreen("Shut down?", ("ok: yes  back: no",))

    def _menu_label(self, item: str) -> str:
        if item == "Players":
            return f"Players: {len(self.match.config.players)}"
        if item == "Brightness":
            return f"Brightness: {self.settings.brightness}"
        return item

    def _show_scores(self, title: str, t: float) -> None:
        self.scores_since = t
        self.scores_title = title

    def _enter(self, mode: str, t: float) -> None:
        self.mode = mode
        self.mode_since = t

    def _message(self, title: str, text: str, inverted: bool = False) -> None:
        self.overlays.append(Overlay(MessageScreen(title, (text,) if text else (), inverted), MESSAGE_SECONDS))

    def _shorten_shown_overlays(self, t: float) -> None:
        """Play went on: what has been on screen for a moment gives way to what comes next."""
        for overlay in self.overlays:
            if overlay.started is not None:
                overlay.seconds = min(overlay.seconds, max(SEEN_SECONDS, t - overlay.started))

    def _drop_message(self, title: str) -> None:
        self.overlays = [o for o in self.overlays
                         if not (isinstance(o.screen, MessageScreen) and o.screen.title == title)]
