"""Table scripts (docs/table-script.md): parsing, formatting, and replaying them into a Match.

A table script is a header (game, players, dealer, options) and one event per line. It is what
`tablemate replay` scores, what tests feed the engines and what the device writes as its log, so
`parse_event(format_event(e)) == e`.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from rules.core import GAMES, NAME_RE, GameConfig, Refused, shorten, whole_number
from rules.events import (Bonus, Card, Caught, Challenge, Color, Draw, Hand, Pass, Penalize, Play,
                          Shuffle, Start, Stop, SwapCards, Take, Target, Top, Uno)
from rules.match import Match, new_state

UNDO = "undo"
# The longest line read (an UNO Flip `hand` line of every card in the deck is under 2,000
# characters): a longer one is refused before it is split into words.
MAX_LINE = 10_000
MAX_DRAW = 999      # the most cards one `draw N` line may name (a deck has 112)
MAX_WORD = 40       # the longest label or name (the longest label, `wild-draw-color`, has 15)


class ScriptError(ValueError):
    """A line that is not a well-formed table-script line."""


@dataclass
class LineError:
    line: int
    text: str           # the line, shortened to what a message shows of it
    error: str

    def __post_init__(self) -> None:
        self.text = shorten(self.text, 80)

    def to_json(self) -> dict:
        return {"line": self.line, "text": self.text, "error": self.error}


@dataclass
class Script:
    config: GameConfig | None
    events: list[tuple[int, str, object]] = field(default_factory=list)   # (line number, text, event or UNDO)
    errors: list[LineError] = field(default_factory=list)                 # lines that could not be read
    fatal: str | None = None                                              # why the script is unusable


def _too_long(line: str) -> str:
    return f"a line of {len(line):,} characters (at most {MAX_LINE:,} are read)"


def _name(word: str) -> str:
    name = word[1:] if word.startswith("@") else word
    if not NAME_RE.match(name) or len(name) > MAX_WORD:
        raise ScriptError(f"{shorten(word)!r} is not a player name")
    return name


def _at_name(words: list[str], at: int) -> str | None:
    if len(words) <= at:
        return None
    if len(words) > at + 1 or not words[at].startswith("@"):
        raise ScriptError(f"expected @NAME after {' '.join(words[:at])}")
    return _name(words[at])


def _expect(words: list[str], n: int, form: str) -> None:
    if len(words) != n:
        raise ScriptError(f"expected: {form}")


def parse_event(line: str):
    """One event line (comments and case already allowed for) -> an event, or UNDO; else
    ScriptError saying why."""
    if len(line) > MAX_LINE:
        raise ScriptError(_too_long(line))
    words = line.split("#", 1)[0].split()
    if not words:
        raise ScriptError("empty line")
    longest = max(words, key=len)
    if len(longest) > MAX_WORD:
        raise ScriptError(f"a word of {len(longest):,} characters, {shorten(longest)!r} (a label or name has at "
                          f"most {MAX_WORD})")
    keyword = words[0].lower()
    words = [words[0].lower()] + words[1:]
    low = [w.lower() for w in words]
    if keyword == "card":
        if len(words) < 2:
            raise ScriptError("expected: card LABEL [@NAME]")
        return Card(low[1], _at_name(words, 2))
    if keyword == "stop":
        return Stop(_at_name(words, 1))
    if keyword == "target":
        _expect(words, 2, "target NAME")
        return Target(_name(words[1]))
    if keyword == "take":
        _expect(words, 3, "take NAME LABEL")
        return Take(_name(words[1]), low[2])
    if keyword == "swap":
        _expect(words, 5, "swap NAME LABEL NAME LABEL")
        return SwapCards(_name(words[1]), low[2], _name(words[3]), low[4])
    if keyword == "bonus":
        _expect(words, 1, "bonus")
        return Bonus()
    if keyword == "penalize":
        _expect(words, 2, "penalize NAME")
        return Penalize(_name(words[1]))
    if keyword == "shuffle":
        _expect(words, 1, "shuffle")
        return Shuffle()
    if keyword == UNDO:
        _expect(words, 1, "undo")
        return UNDO
    if keyword == "start":
        _expect(words, 2, "start LABEL")
        return Start(low[1])
    if keyword == "play":
        if len(words) < 2:
            raise ScriptError("expected: play LABEL [@NAME]")
        return Play(low[1], _at_name(words, 2))
    if keyword == "color":
        _expect(words, 2, "color COLOR")
        return Color(low[1])
    if keyword == "draw":
        if len(words) == 1:
            return Draw()
        _expect(words, 2, "draw [N]")
        try:
            return Draw(whole_number(words[1], 1, MAX_DRAW, "the number of cards drawn"))
        except ValueError as error:
            raise ScriptError(str(error)) from None
    if keyword == "pass":
        _expect(words, 1, "pass")
        return Pass()
    if keyword == "top":
        _expect(words, 2, "top LABEL")
        return Top(low[1])
    if keyword == "uno":
        _expect(words, 2, "uno @NAME")
        return Uno(_name(words[1]))
    if keyword == "caught":
        _expect(words, 2, "caught NAME")
        return Caught(_name(words[1]))
    if keyword == "challenge":
        if len(words) != 2 or low[1] not in ("guilty", "innocent"):
            raise ScriptError("expected: challenge guilty | challenge innocent")
        return Challenge(low[1] == "guilty")
    if keyword == "hand":
        if len(words) < 2:
            raise ScriptError("expected: hand NAME LABEL …")
        return Hand(_name(words[1]), tuple(low[2:]))
    raise ScriptError(f"unknown line {shorten(words[0])!r}")


def format_event(event) -> str:
    """An event as one table-script line."""
    if event == UNDO:
        return UNDO
    kind = type(event)
    if kind is Card:
        return f"card {event.label}" + (f" @{event.to}" if event.to else "")
    if kind is Stop:
        return "stop" + (f" @{event.player}" if event.player else "")
    if kind is Target:
        return f"target {event.player}"
    if kind is Take:
        return f"take {event.player} {event.label}"
    if kind is SwapCards:
        return f"swap {event.a} {event.a_label} {event.b} {event.b_label}"
    if kind is Bonus:
        return "bonus"
    if kind is Penalize:
        return f"penalize {event.player}"
    if kind is Shuffle:
        return "shuffle"
    if kind is Start:
        return f"start {event.label}"
    if kind is Play:
        return f"play {event.label}" + (f" @{event.player}" if event.player else "")
    if kind is Color:
        return f"color {event.color}"
    if kind is Draw:
        return "draw" + (f" {event.n}" if event.n is not None else "")
    if kind is Pass:
        return "pass"
    if kind is Top:
        return f"top {event.label}"
    if kind is Uno:
        return f"uno @{event.player}"
    if kind is Caught:
        return f"caught {event.player}"
    if kind is Challenge:
        return "challenge " + ("guilty" if event.guilty else "innocent")
    if kind is Hand:
        return " ".join(["hand", event.player, *event.labels])
    raise TypeError(f"not an event: {event!r}")


def format_header(config: GameConfig) -> list[str]:
    lines = [f"game {config.game}", "players " + " ".join(config.players)]
    if config.dealer:
        lines.append(f"dealer {config.dealer}")
    lines += [f"option {key} {value}" for key, value in config.options.items()]
    return lines


def parse_script(text: str) -> Script:
    """Read a whole script. Header problems that leave no game are `fatal`; any other bad line
    is recorded in `errors` with its line number and skipped."""
    game = None
    players: tuple[str, ...] = ()
    dealer = None
    options: dict[str, str] = {}
    script = Script(config=None)
    in_header = True

    def header_error(lineno: int, text: str, error: str) -> None:
        script.errors.append(LineError(lineno, text, error))

    # (Composed: a name typed as "e" + a combining accent is the same name as "é".)
    text = unicodedata.normalize("NFC", text)
    # Lines end at "\n" only (a "\r" before it is stripped below): str.splitlines would also
    # break at a form feed or U+2028 inside a comment, numbering every later line wrongly.
    for lineno, raw in enumerate(text.split("\n"), start=1):
        # (A byte-order mark, as some editors write at the start of UTF-8 text, is no word.)
        text_line = raw.replace("\ufeff", "").split("#", 1)[0].strip()
        if not text_line:
            continue
        if len(text_line) > MAX_LINE:
            script.errors.append(LineError(lineno, text_line, _too_long(text_line)))
            continue
        words = text_line.split()
        keyword = words[0].lower()
        if keyword in ("game", "players", "dealer", "option"):
            if not in_header:
                header_error(lineno, text_line, f"'{keyword}' belongs in the header, before any event")
                continue
            # Each header line once, game and players first: a line out of place is refused (a
            # second game line does not switch the game the first one set).
            once = {"game": game, "players": players or None, "dealer": dealer}
            if once.get(keyword) is not None:
                header_error(lineno, text_line, f"a second '{keyword}' line (the header sets it once)")
                continue
            if keyword == "game":
                if len(words) != 2:
                    script.fatal = f"line {lineno}: expected: game {' | '.join(GAMES)}"
                    return script
                if words[1].lower() not in GAMES:
                    script.fatal = f"line {lineno}: unknown game {shorten(words[1])!r} (known: {', '.join(GAMES)})"
                    return script
                game = words[1].lower()
            elif game is None:
                script.fatal = f"line {lineno}: the script must start with a 'game' line"
                return script
            elif keyword == "players":
                try:
                    players = tuple(_name(w) for w in words[1:])
                    new_state(GameConfig(game, players))     # the game's own limits, e.g. UNO Flip's 2-10
                except (ScriptError, ValueError) as error:
                    script.fatal = f"line {lineno}: {error}"
                    return script
            elif not players:
                header_error(lineno, text_line, f"'{keyword}' comes after the 'players' line")
            elif keyword == "dealer":
                match = [p for p in players if len(words) == 2 and p.lower() == words[1].lower()]
                if not match:
                    header_error(lineno, text_line, f"the dealer must be one of the players ({' '.join(players)})")
                else:
                    dealer = match[0]
            else:
                if len(words) != 3:
                    header_error(lineno, text_line, "expected: option KEY VALUE")
                    continue
                trial = dict(options, **{words[1].lower(): words[2].lower()})
                try:
                    new_state(GameConfig(game, players, dealer, trial))
                except ValueError as error:
                    header_error(lineno, text_line, str(error))
                    continue
                options = trial
            continue
        if in_header:
            in_header = False
            if game is None:
                script.fatal = f"line {lineno}: the script must start with a 'game' line"
                return script
            if not players:
                script.fatal = f"line {lineno}: no 'players' line before the first event"
                return script
        try:
            script.events.append((lineno, text_line, parse_event(text_line)))
        except ScriptError as error:
            script.errors.append(LineError(lineno, text_line, str(error)))
    if game is None:
        script.fatal = "no 'game' line"
    elif not players:
        script.fatal = "no 'players' line"
    else:
        script.config = GameConfig(game, players, dealer, options)
    return script


@dataclass
class Replay:
    match: Match
    errors: list[LineError]
    stopped_early: bool = False


def replay_script(script: Script, strict: bool = False) -> Replay:
    """Apply a parsed script's events in order. A refused line is recorded and skipped (or, with
    strict, ends the replay); the lines after it still apply."""
    if script.config is None:
        raise ValueError(script.fatal or "unusable script")
    match = Match(script.config)
    items = [(e.line, e.text, e) for e in script.errors] + list(script.events)
    items.sort(key=lambda item: item[0])
    errors: list[LineError] = []
    for lineno, text, event in items:
        if isinstance(event, LineError):
            errors.append(event)
        else:
            try:
                if event == UNDO:
                    match.undo()
                else:
                    match.apply(event)
                continue
            except Refused as refusal:
                errors.append(LineError(lineno, text, refusal.reason))
        if strict:
            return Replay(match, errors, stopped_early=True)
    return Replay(match, errors)
