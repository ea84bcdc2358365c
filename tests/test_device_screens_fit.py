"""Every text on the OLED's screens lies inside the 128x64 pixels, descenders included (issue 53:
"ok: play on" lost its tails and read "ok: olav on"), and the words are English ("an 8", "1 card")."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import ImageDraw

from device import screens
from device.games import FLASHES, UNO_FLASHES, counted, with_article
from device.screens import (ChoiceScreen, FlashScreen, MenuScreen, MessageScreen, ScoresScreen, Shown,
                            TurnScreen, UnoScreen, render)
from rules.core import Notice

SCREENS = [
    ScoresScreen("ROUND 3", (("ann", "+36", 120), ("ben", "bust", 95), ("cat", "+7", 12)), 0, 2, "ok: play on"),
    ScoresScreen("WINNER ann", (("ann", "+36", 212), ("ben", "bust", 95)), 0, 1, "ok: new game"),
    ChoiceScreen("ann: FREEZE who?", "ben", "2/3", "banks 12"),
    ChoiceScreen("Players: new game", "10 players", "2-10", "ann ben cat dan eve fay gus hal ida jo"),
    MessageScreen("CARDS NOT SURE", ("ok: learn this deck", "next: play on")),
    MessageScreen("Undo?", ("card 5", "ok: undo  back: keep")),
    FlashScreen("2ND CHANCE", "ann", "used on an 8"),
    MenuScreen("MENU", ("New game", "Players: 3", "Re-shuffle", "Calibrate"), 2),
    TurnScreen("ann", 3, ("12", "11", "10", "9", "8", "x2", "+10", "second-chance"), 60, 150, 0.62, "flip 3"),
    TurnScreen("ann", 9, ("12", "11", "10"), 33, 195, 1.0, "", -12.5),
    TurnScreen("ben", 2, ("3",), 3, -15, None, "", 4.2),
    TurnScreen("dan", 1, ("zero", "unlucky-7", "lucky-13", "lucky-13", "-10", "/2"), 0, -40, 0.1),
    UnoScreen("ann", "dark", "counterclockwise", "wild-draw-color", "pink", "play or draw", 7, "UNO? ben"),
]


def _bboxes(monkeypatch, shown):
    drawn = []
    original = ImageDraw.ImageDraw.text

    def text(self, xy, text, fill=None, font=None, anchor=None, *args, **kwargs):
        drawn.append((text, self.textbbox(xy, text, font=font, anchor=anchor)))
        return original(self, xy, text, fill, font, anchor, *args, **kwargs)

    monkeypatch.setattr(ImageDraw.ImageDraw, "text", text)
    render(shown)
    return drawn


@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: type(s).__name__)
def test_every_text_lies_inside_the_screen(monkeypatch, screen):
    for banner in ("", "camera missing: check the cable"):
        for text, (left, top, right, bottom) in _bboxes(monkeypatch, Shown(screen, banner)):
            assert 0 <= left and right <= screens.WIDTH and 0 <= top and bottom <= screens.HEIGHT, \
                f"{text!r} drawn at {(left, top, right, bottom)}"


def test_the_footer_keeps_its_descenders():
    from PIL import Image

    footer = "ok: play on"
    alone = Image.new("1", (200, 60), 0)
    ImageDraw.Draw(alone).text((10, 10), footer, font=screens.font(9), fill=1)
    image = render(Shown(ScoresScreen("ROUND 3", (("ann", "+36", 120),), footer=footer)))
    band = image.crop((0, 30, screens.WIDTH, screens.HEIGHT))     # below the one row: the footer alone
    lit = np.count_nonzero
    assert lit(np.asarray(band)) == lit(np.asarray(alone))        # every pixel of it, tails of p and y too


def test_the_card_row_spells_the_action_cards():
    assert screens._row_text(("3", "second-chance", "freeze", "flip-three")) == "3 2nd-chance freeze flip-3"


def test_counts_and_articles_are_english():
    assert (counted(1, "card"), counted(3, "card")) == ("1 card", "3 cards")
    assert [with_article(x) for x in ("7", "8", "11", "12", "18")] == ["a 7", "an 8", "an 11", "a 12", "an 18"]
    assert FLASHES["second_chance_used"](Notice("second_chance_used", "ann", "8")).detail == "used on an 8"
    assert UNO_FLASHES["must_draw"](Notice("must_draw", "cat", 1)).detail == "1 card"
    assert FLASHES["stop"](Notice("stop", "ann", 1)).detail == "1 point"
