"""What the 128x64 OLED shows: screens as plain values, and `render` to a 1-bit Pillow image.

The one thing that matters now is big (whose turn, the choice asked for, BUST!); warnings are
inverted; nothing needs scrolling to see whose turn it is. Screens are frozen dataclasses so the
display worker can skip drawing a screen equal to the last one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

WIDTH, HEIGHT = 128, 64
BUST_WARNING = 0.25        # bust odds at or above this are shown inverted

FONT_FILES = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSansCondensed-Bold.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
)


@dataclass(frozen=True)
class TurnScreen:
    player: str
    round: int
    row: tuple[str, ...]        # the player's cards, as labels
    score: int                  # score so far this round
    total: int                  # game total before this round
    bust_odds: float | None
    note: str = ""              # e.g. "FLIP 3: 2 left", "deal"
    advice: float | None = None  # one more card's worth against stopping (rules.advice); None: not shown


@dataclass(frozen=True)
class UnoScreen:
    player: str                 # on turn, or who must act
    side: str                   # light | dark
    direction: str              # clockwise | counterclockwise
    top: str                    # the label on the discard pile ("" before the start card)
    color: str                  # the colour to follow ("" when open)
    doing: str                  # what the player must do, in a few words
    held: int                   # cards the player holds
    warning: str = ""           # UNO warnings, inverted along the bottom
    round: int = 1


@dataclass(frozen=True)
class FlashScreen:
    title: str                  # BUST! / FLIP 7! / FREEZE / 2ND CHANCE
    player: str
    detail: str = ""


@dataclass(frozen=True)
class ChoiceScreen:
    question: str               # e.g. "ann: FREEZE who?"
    option: str                 # the option `ok` would choose, big
    position: str = ""          # e.g. "2/3"
    detail: str = ""            # a small line under the option


@dataclass(frozen=True)
class MessageScreen:
    title: str
    lines: tuple[str, ...] = ()
    inverted: bool = False


@dataclass(frozen=True)
class ScoresScreen:
    title: str                  # "ROUND 3" / "WINNER ann"
    rows: tuple[tuple[str, str, int], ...]   # (name, this round e.g. "+36" / "bust", total)
    page: int = 0
    pages: int = 1
    footer: str = ""


@dataclass(frozen=True)
class MenuScreen:
    title: str
    items: tuple[str, ...]
    cursor: int


@dataclass(frozen=True)
class Shown:
    """A screen plus an optional problem banner along the bottom (camera missing, ...)."""
    screen: object
    banner: str = ""


@lru_cache(maxsize=None)
def font(size: int):
    from PIL import ImageFont

    for path in FONT_FILES:
        if Path(path).exists():
            return ImageFont.truetype(path, size)
    try:
        return ImageFont.load_default(size)  # Pillow >= 10.1 ships a scalable default font
    except TypeError:  # an older Pillow (Bookworm's apt 9.4): its one small bitmap font
        return ImageFont.load_default()


def render(shown: Shown):
    """A mode "1" 128x64 image of `shown`."""
    from PIL import Image, ImageDraw

    image = Image.new("1", (WIDTH, HEIGHT), 0)
    draw = ImageDraw.Draw(image)
    draw.fontmode = "1"  # no anti-aliasing: crisp 1-bit glyphs
    screen = shown.screen
    _RENDERERS[type(screen)](draw, screen)
    if shown.banner:
        # Over the card row on the turn screen (whose turn and the odds stay visible), else at the foot.
        top = 22 if isinstance(screen, (TurnScreen, UnoScreen)) else HEIGHT - 12
        draw.rectangle((0, top, WIDTH - 1, top + 11), fill=1)
        _text_fit(draw, (WIDTH // 2, top + 6), shown.banner, 11, WIDTH - 4, fill=0, anchor="mm")
    return image


# ---- helpers ------------------------------------------------------------------------------------

def _text_fit(draw, xy, text: str, size: int, max_width: int, fill=1, anchor="la", min_size: int = 8) -> int:
    """Draw `text` at the largest size <= `size` that fits `max_width` (cut with … at min_size).
    Returns the size used."""
    while size > min_size and draw.textlength(text, font=font(size)) > max_width:
        size -= 1
    if draw.textlength(text, font=font(size)) > max_width:
        while text and draw.textlength(text + "…", font=font(size)) > max_width:
            text = text[:-1]
        text += "…"
    draw.text(xy, text, font=font(size), fill=fill, anchor=anchor)
    return size


def _wrap(draw, text: str, size: int, max_width: int) -> list[str]:
    lines: list[str] = []
    for word in text.split():
        if lines and draw.textlength(lines[-1] + " " + word, font=font(size)) <= max_width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


# Action and special cards in a row: short, but words a player reads without a key.
CARD_SHORT = {"second-chance": "2nd-chance", "freeze": "freeze", "flip-three": "flip-3", "zero": "zero",
              "unlucky-7": "unlucky-7", "lucky-13": "lucky-13"}


def _row_text(row: tuple[str, ...]) -> str:
    return " ".join(CARD_SHORT.get(label, label) for label in row)


# ---- screens ------------------------------------------------------------------------------------

def _turn(draw, s: TurnScreen) -> None:
    # Top: whose turn, as big as it fits; the round small on the right, under it a note or the
    # one-more-card hint ("+3.2 draw" / "-4.1 stop": rules/advice.py; notes come where one cannot stop).
    right = f"R{s.round}"
    under = s.note or (f"{s.advice:+.1f} {'draw' if s.advice > 0 else 'stop'}" if s.advice is not None else "")
    side = max(draw.textlength(right, font=font(10)), draw.textlength(under, font=font(9)))
    _text_fit(draw, (0, 0), s.player.upper(), 20, WIDTH - int(side) - 4, anchor="lt")
    draw.text((WIDTH - 1, 0), right, font=font(10), fill=1, anchor="rt")
    if under:
        draw.text((WIDTH - 1, 11), under, font=font(9), fill=1, anchor="rt")
    # Middle: the row of cards.
    row = _row_text(s.row) or "no cards"
    _text_fit(draw, (0, 23), row, 13, WIDTH, anchor="lt")
    draw.line((0, 39, WIDTH - 1, 39), fill=1)
    # Bottom: score so far (big) and the game total (small) on the left, bust odds on the right.
    draw.text((0, 42), "pts", font=font(9), fill=1, anchor="lt")
    draw.text((0, HEIGHT - 1), str(s.score), font=font(18), fill=1, anchor="ls")
    draw.text((40, 42), "total", font=font(9), fill=1, anchor="lt")
    draw.text((40, HEIGHT - 1), str(s.total), font=font(12), fill=1, anchor="ls")
    if s.bust_odds is not None:
        odds = f"{round(s.bust_odds * 100)}%"
        high = s.bust_odds >= BUST_WARNING
        w = max(int(draw.textlength(odds, font=font(18))) + 6, 40)
        if high:
            draw.rectangle((WIDTH - w - 2, 40, WIDTH - 1, HEIGHT - 1), fill=1)
        draw.text((WIDTH - w, 41), "bust", font=font(9), fill=0 if high else 1, anchor="lt")
        draw.text((WIDTH - 3, HEIGHT - 1), odds, font=font(18), fill=0 if high else 1, anchor="rs")


def _uno_card(top: str, color: str) -> str:
    """`red-7` -> `RED 7`; a wild with its colour named -> `WILD → BLUE`."""
    text = top.replace("-", " ").upper()
    if color and not top.startswith(color):
        text = f"{text} → {color.upper()}"
    return text


def _direction_arrow(draw, cx: int, cy: int, r: int, clockwise: bool) -> None:
    """A circle arrow big enough to tell the two directions apart across a table (the ↻ ↺ glyphs
    differ only by a few pixels)."""
    sign = 1 if clockwise else -1
    end = math.radians(210 if clockwise else -30)            # where the arrowhead sits
    draw.arc((cx - r, cy - r, cx + r, cy + r), -60 if clockwise else -30, 210 if clockwise else 240,
             fill=1, width=2)
    ex, ey = cx + r * math.cos(end), cy + r * math.sin(end)
    dx, dy = -math.sin(end) * sign, math.cos(end) * sign      # the direction of travel there
    draw.polygon([(ex + 4 * dx, ey + 4 * dy), (ex - 2 * dx - 4 * dy, ey - 2 * dy + 4 * dx),
                  (ex - 2 * dx + 4 * dy, ey - 2 * dy - 4 * dx)], fill=1)


def _uno(draw, s: UnoScreen) -> None:
    # Top: whose turn, big; the direction of play and the side in play on the right.
    side = s.side.upper()
    side_w = int(draw.textlength(side, font=font(9))) + 4
    _text_fit(draw, (0, 0), s.player.upper(), 20, WIDTH - max(side_w, 22) - 4, anchor="lt")
    _direction_arrow(draw, WIDTH - 10, 7, 6, s.direction == "clockwise")
    if s.side == "dark":        # the dark side shows inverted, like the cards' black border
        draw.rectangle((WIDTH - side_w - 1, 13, WIDTH - 1, 22), fill=1)
    draw.text((WIDTH - 3, 14), side, font=font(9), fill=0 if s.side == "dark" else 1, anchor="rt")
    # Middle: the card to follow.
    _text_fit(draw, (0, 24), _uno_card(s.top, s.color) if s.top else "no card yet", 13, WIDTH, anchor="lt")
    draw.line((0, 39, WIDTH - 1, 39), fill=1)
    # Bottom: cards held (big) on the left, what to do on the right.
    draw.text((0, 42), "holds", font=font(9), fill=1, anchor="lt")
    draw.text((0, HEIGHT - 1), str(s.held), font=font(18), fill=1, anchor="ls")
    lines = [s.doing] if s.warning else _wrap(draw, s.doing, 10, WIDTH - 34)   # one line over a warning
    for i, line in enumerate(lines[:2]):
        _text_fit(draw, (WIDTH - 1, 42 + 11 * i), line, 10, WIDTH - 34, anchor="rt")
    if s.warning:
        draw.rectangle((32, 53, WIDTH - 1, HEIGHT - 1), fill=1)
        _text_fit(draw, (WIDTH - 2, 58), s.warning, 10, WIDTH - 36, fill=0, anchor="rm")


def _flash(draw, s: FlashScreen) -> None:
    draw.rectangle((0, 0, WIDTH - 1, HEIGHT - 1), fill=1)
    _text_fit(draw, (WIDTH // 2, 16), s.title, 26, WIDTH - 6, fill=0, anchor="mm")
    _text_fit(draw, (WIDTH // 2, 40), s.player.upper(), 16, WIDTH - 6, fill=0, anchor="mm")
    if s.detail:
        _text_fit(draw, (WIDTH // 2, 56), s.detail, 11, WIDTH - 6, fill=0, anchor="mm")


def _choice(draw, s: ChoiceScreen) -> None:
    draw.rectangle((0, 0, WIDTH - 1, 13), fill=1)
    _text_fit(draw, (WIDTH // 2, 7), s.question, 11, WIDTH - 4, fill=0, anchor="mm")
    _text_fit(draw, (WIDTH // 2, 29 if s.detail else 32), s.option.upper(), 22, WIDTH - 8, anchor="mm")
    if s.detail:
        _text_fit(draw, (WIDTH // 2, 46), s.detail, 10, WIDTH - 4, anchor="mm")
    draw.text((0, HEIGHT - 1), f"next ▸ {s.position}".rstrip(), font=font(10), fill=1, anchor="ld")   # ("/" descends)
    draw.text((WIDTH - 1, HEIGHT - 1), "ok ✓", font=font(10), fill=1, anchor="rd")


def _message(draw, s: MessageScreen) -> None:
    fill = 1
    if s.inverted:
        draw.rectangle((0, 0, WIDTH - 1, HEIGHT - 1), fill=1)
        fill = 0
    size = _text_fit(draw, (WIDTH // 2, 2), s.title, 18, WIDTH - 4, fill=fill, anchor="mt")
    y = 4 + size + 2
    # Smaller type only when the lines would not fit (a long card name and its reading back, in
    # the calibration walk); the last size's overflow is cut.
    for text_size in (11, 9):
        lines = [line for text in s.lines for line in _wrap(draw, text, text_size, WIDTH - 4)]
        if len(lines) * (text_size + 1) <= HEIGHT - y:
            break
    for line in lines[: max(1, (HEIGHT - y) // (text_size + 1))]:
        _text_fit(draw, (WIDTH // 2, y), line, text_size, WIDTH - 4, fill=fill, anchor="mt")
        y += text_size + 1


def _scores(draw, s: ScoresScreen) -> None:
    draw.rectangle((0, 0, WIDTH - 1, 12), fill=1)
    title = s.title + (f"  {s.page + 1}/{s.pages}" if s.pages > 1 else "")
    _text_fit(draw, (WIDTH // 2, 6), title, 11, WIDTH - 4, fill=0, anchor="mm")
    y = 14
    for name, this_round, total in s.rows:
        _text_fit(draw, (0, y), name, 11, 58, anchor="lt")
        draw.text((86, y), this_round, font=font(11), fill=1, anchor="rt")
        draw.text((WIDTH - 1, y), str(total), font=font(11), fill=1, anchor="rt")
        y += 12
    if s.footer:   # (anchored at its descender line: "play", "game" keep their tails on screen)
        draw.text((WIDTH // 2, HEIGHT - 1), s.footer, font=font(9), fill=1, anchor="md")


def _menu(draw, s: MenuScreen) -> None:
    draw.rectangle((0, 0, WIDTH - 1, 12), fill=1)
    _text_fit(draw, (WIDTH // 2, 6), s.title, 11, WIDTH - 4, fill=0, anchor="mm")
    visible = 4
    first = min(max(0, s.cursor - visible + 1), max(0, len(s.items) - visible))
    y = 15
    for i in range(first, min(len(s.items), first + visible)):
        if i == s.cursor:
            draw.rectangle((0, y - 1, WIDTH - 1, y + 11), fill=1)
        _text_fit(draw, (3, y), s.items[i], 11, WIDTH - 6, fill=0 if i == s.cursor else 1, anchor="lt")
        y += 12


# ---- the totals by round (the end of a game; `tablemate replay --plot` draws the same) -----------

@dataclass(frozen=True)
class ChartScreen:
    title: str                                   # "WINNER ann"
    series: tuple[tuple[str, tuple[int, ...]], ...]   # (name, total after each round, from 0), leader first
    target: int                                  # the total that wins (200, 500)
    footer: str = ""


CHART_LINES = 4              # more lines than this are not told apart on 128x64: the leaders'


def totals_by_round(players, round_scores) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """(name, totals after each round starting at 0) for each player, the highest total first;
    `round_scores`: each round's {name: score}."""
    series = []
    for name in players:
        totals = [0]
        for scores in round_scores:
            totals.append(totals[-1] + scores.get(name, 0))
        series.append((name, tuple(totals)))
    return tuple(sorted(series, key=lambda item: -item[1][-1]))


def plot_lines(draw, box, series, target: int, fills, widths, target_fill=1) -> tuple[list[tuple[float, float]], float]:
    """Each series as a line in `box` (x0, y0, x1, y1), rounds across and 0..max(target, totals)
    up, the target dotted; returns where each line ends and the target's height."""
    x0, y0, x1, y1 = box
    rounds = max(1, max(len(totals) for _, totals in series) - 1)
    top = max([target] + [max(totals) for _, totals in series])
    low = min([0] + [min(totals) for _, totals in series])      # (UNO Flip's totals never fall; Brutal's may)

    def at(i, value):
        return x0 + (x1 - x0) * i / rounds, y1 - (y1 - y0) * (value - low) / max(1, top - low)

    ty = at(0, target)[1]
    for x in range(int(x0), int(x1), 4):
        draw.point((x, ty), fill=target_fill)
    ends = []
    for (_, totals), fill, width in zip(series, fills, widths):
        points = [at(i, v) for i, v in enumerate(totals)]
        draw.line(points if len(points) > 1 else points * 2, fill=fill, width=width)
        ends.append(points[-1])
    return ends, ty


def _chart(draw, s: ChartScreen) -> None:
    draw.rectangle((0, 0, WIDTH - 1, 11), fill=1)
    _text_fit(draw, (WIDTH // 2, 6), s.title, 10, WIDTH - 4, fill=0, anchor="mm")
    shown = s.series[:CHART_LINES]
    bottom = HEIGHT - (13 if s.footer else 1)
    ends, target_y = plot_lines(draw, (1, 15, WIDTH - 24, bottom), shown, s.target, [1] * len(shown),
                                [2] + [1] * (len(shown) - 1))
    draw.text((1, target_y + 2), str(s.target), font=font(8), fill=1, anchor="lt")
    last = None
    for (name, _), (_, y) in sorted(zip(shown, ends), key=lambda item: item[1][1]):   # top down, kept apart
        y = max(y, 16) if last is None else max(y, last + 8)
        last = min(y, bottom)
        draw.text((WIDTH - 22, last), name[:4], font=font(8), fill=1, anchor="lm")
    if s.footer:
        draw.text((WIDTH // 2, HEIGHT - 1), s.footer, font=font(9), fill=1, anchor="md")   # (descenders kept)


_RENDERERS = {
    ChartScreen: _chart,
    TurnScreen: _turn,
    UnoScreen: _uno,
    FlashScreen: _flash,
    ChoiceScreen: _choice,
    MessageScreen: _message,
    ScoresScreen: _scores,
    MenuScreen: _menu,
}


def save_preview(shown: Shown, path: Path, scale: int = 4) -> None:
    """The screen as a scaled-up PNG, to look at on a desktop."""
    from PIL import Image

    image = render(shown).convert("L")
    image.resize((WIDTH * scale, HEIGHT * scale), Image.NEAREST).save(path)
