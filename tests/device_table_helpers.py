"""Drive a device Table the way a person does: cards seen, buttons pressed, the screen read
(past the flashes that cover it for a moment). Shared by the per-game device tests."""

from __future__ import annotations

from pathlib import Path

from device.buttons import ButtonPress
from device.gamelog import GameLog
from device.screens import ChoiceScreen, FlashScreen, MessageScreen
from device.table import Settings, Table
from rules.core import GameConfig
from rules.match import Match

NAMES = ("ann", "ben", "cat", "dan", "eve", "fay", "gus", "hal", "ida", "jo", "kim", "lu", "max", "ned", "oz",
         "pat", "quin", "roy")


class Player:
    """A table and a clock; every action moves the clock on."""

    def __init__(self, tmp_path: Path, game: str, players: tuple[str, ...], dealer: str | None = None):
        config = GameConfig(game, players, dealer=dealer) if dealer else GameConfig(game, players)
        self.log_path = tmp_path / "game.txt"
        self.table = Table(Match(config), GameLog.start(self.log_path, config), NAMES,
                           Settings(3, len(players)), tmp_path / "settings.json")
        self.t = 0.0

    def card(self, label: str) -> None:
        self.t += 1.0
        self.table.on_card(label, self.t)

    def press(self, *buttons: str) -> None:
        for button in buttons:
            self.t += 0.5
            name, _, hold = button.partition(" ")
            self.table.on_button(ButtonPress(name, hold == "hold"), self.t)

    def shown(self):
        """What the display shows once the flashes and messages queued so far have gone."""
        for _ in range(50):
            screen = self.table.screen(self.t)
            if not self.table.overlays:
                return screen
            self.t += 5.0
        raise AssertionError("the overlays never end")

    def flashes(self) -> list:
        """The overlays queued now (flashes and messages), oldest first."""
        return [o.screen for o in self.table.overlays]

    def choose(self, text: str, open_with_next: bool = False) -> None:
        """Cycle with `next` until the choice shows `text`, then `ok` (as a player reading it)."""
        if open_with_next:
            self.press("next")
        for _ in range(80):
            screen = self.shown()
            assert isinstance(screen, ChoiceScreen), screen
            if screen.option.lower() == text.lower():
                self.press("ok")
                return
            self.press("next")
        raise AssertionError(f"{text!r} is never offered")

    def log_lines(self) -> list[str]:
        return self.log_path.read_text().splitlines()


def overlay_titles(screens) -> list[str]:
    return [s.title for s in screens if isinstance(s, (FlashScreen, MessageScreen))]
