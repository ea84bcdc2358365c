"""The device configuration: every default of the device (hardware.md) in one dataclass,
overridable by a TOML file (`/etc/tablemate/config.toml` under systemd).

A config file that cannot be read or has wrong values never stops the device: `load_config` returns
the defaults (plus whatever parts of the file were valid) and a list of problems, which the caller
logs and shows on the display.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from rules.core import GAMES, NAME_RE, shorten

log = logging.getLogger(__name__)

# Eighteen names so that the players menu can offer 2..18 players without asking for names.
DEFAULT_PLAYER_NAMES = (
    "ann", "ben", "cat", "dan", "eve", "fay", "gus", "hal", "ivy",
    "jon", "kim", "lea", "max", "ned", "oli", "pam", "quin", "rob",
)


@dataclass(frozen=True)
class ButtonsConfig:
    ok_pin: int = 17          # BCM numbering; buttons switch to ground, internal pull-ups
    next_pin: int = 27
    back_pin: int = 22
    hold_seconds: float = 1.0
    bounce_seconds: float = 0.03


@dataclass(frozen=True)
class DisplayConfig:
    driver: str = "ssd1306"   # ssd1306 | sh1106 (the common 1.3" modules are SH1106)
    i2c_bus: int = 1
    i2c_address: int = 0x3C
    rotate: int = 0           # 0..3, quarter turns, for a display mounted upside down
    brightness: int = 3       # 1..4, the menu changes it (kept in the state directory)
    flash_seconds: float = 1.6
    advice: bool = True       # the turn screen's "+3.2 draw" hint: one more card's worth (rules/advice.py)


@dataclass(frozen=True)
class CameraConfig:
    width: int = 640
    height: int = 480
    fps: float = 15.0
    exposure_us: int = 0      # 0 = automatic; a fixed exposure stops flicker under mains lighting
    analogue_gain: float = 0.0  # 0 = automatic
    lens_position: float = -1.0  # dioptres for Camera Module 3 manual focus (1/metres); -1 = autofocus
    stall_seconds: float = 3.0   # no frame for this long: the camera is reported and reopened
    retry_seconds: float = 2.0   # first wait before reopening a missing camera (doubles up to 30 s)


@dataclass(frozen=True)
class GameDefaults:
    game: str = "flip7"
    players: int = 3          # how many of the names below play a new game
    names: tuple[str, ...] = DEFAULT_PLAYER_NAMES


@dataclass(frozen=True)
class DeviceConfig:
    state_dir: str = "/var/lib/tablemate"
    models_dir: str = ""      # empty: the models shipped in the package
    shutdown_command: tuple[str, ...] = ("systemctl", "poweroff")
    game: GameDefaults = field(default_factory=GameDefaults)
    buttons: ButtonsConfig = field(default_factory=ButtonsConfig)
    display: DisplayConfig = field(default_factory=DisplayConfig)
    camera: CameraConfig = field(default_factory=CameraConfig)


DEFAULT_CONFIG_PATH = "/etc/tablemate/config.toml"


def default_config_path() -> Path:
    """Under systemd, ConfigurationDirectory= sets CONFIGURATION_DIRECTORY."""
    directory = os.environ.get("CONFIGURATION_DIRECTORY")
    return Path(directory) / "config.toml" if directory else Path(DEFAULT_CONFIG_PATH)


def load_config(path: Path | None) -> tuple[DeviceConfig, list[str]]:
    """The config from `path` over the defaults, and the problems found. A missing default file is
    no problem (the defaults are complete); a missing file named explicitly is. Each bad value
    (wrong type, out of range, not a finite number) is reported and its default used."""
    explicit = path is not None
    path = path or default_config_path()
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        return DeviceConfig(), ([f"config {path} not found: using defaults"] if explicit else [])
    except RecursionError:      # (tables nested thousands deep: tomllib's parser recurses)
        return DeviceConfig(), [f"config {path} unreadable (nested too deep): using defaults"]
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, ValueError) as error:
        return DeviceConfig(), [f"config {path} unreadable ({shorten(str(error), 120)}): using defaults"]
    problems: list[str] = []
    config = _checked(_merge(DeviceConfig(), data, "", problems), problems)
    return config, [f"config {path}: {p}" for p in problems]


def _merge(base, data: dict, prefix: str, problems: list[str]):
    """A copy of dataclass `base` with the values of `data`; unknown keys and values of the wrong
    type are reported and skipped (the default stays)."""
    changes = {}
    fields = {f.name: f for f in dataclasses.fields(base)}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if key not in fields:
            problems.append(f"unknown setting {shorten(name)!r} ignored")
            continue
        current = getattr(base, key)
        if dataclasses.is_dataclass(current):
            if isinstance(value, dict):
                changes[key] = _merge(current, value, f"{name}.", problems)
            else:
                problems.append(f"{name} must be a table, ignored")
        elif isinstance(current, tuple):
            if isinstance(value, list) and all(isinstance(v, str) and "\0" not in v for v in value):
                changes[key] = tuple(value)
            else:
                problems.append(f"{name} must be a list of strings, ignored")
        elif isinstance(value, str) and "\0" in value:
            problems.append(f"{name} must not hold a NUL character, ignored")
        elif _fits(current, value):
            changes[key] = type(current)(value)
        else:
            problems.append(f"{name} must be a {type(current).__name__}, ignored")
    return dataclasses.replace(base, **changes)


def _fits(current, value) -> bool:
    """TOML value `value` can stand for the default `current` (an int is fine for a float)."""
    if isinstance(current, bool) or isinstance(value, bool):
        return type(current) is type(value)
    if isinstance(current, float):
        return isinstance(value, (int, float))
    return type(current) is type(value)


# The range of each number (inclusive); a value outside it, or a float that is not finite, is
# reported and its default used. Pins are BCM GPIO numbers of the Pi's 40-pin header.
RANGES = {
    "buttons.ok_pin": (0, 27), "buttons.next_pin": (0, 27), "buttons.back_pin": (0, 27),
    "buttons.hold_seconds": (0.1, 10.0), "buttons.bounce_seconds": (0.0, 1.0),
    "display.i2c_bus": (0, 255), "display.i2c_address": (0x03, 0x77), "display.rotate": (0, 3),
    "display.brightness": (1, 4), "display.flash_seconds": (0.1, 30.0),
    "camera.width": (16, 8192), "camera.height": (16, 8192), "camera.fps": (0.5, 240.0),
    "camera.exposure_us": (0, 10_000_000), "camera.analogue_gain": (0.0, 64.0),
    "camera.lens_position": (-1.0, 32.0), "camera.stall_seconds": (0.5, 600.0),
    "camera.retry_seconds": (0.1, 600.0), "game.players": (2, 18),
}


def _checked(config: DeviceConfig, problems: list[str]) -> DeviceConfig:
    """`config` with every value that makes no sense (alone or with the others) reported in
    `problems` and replaced by its default."""
    default = DeviceConfig()
    sections = {}
    for section in ("buttons", "display", "camera", "game"):
        part, fallback, changes = getattr(config, section), getattr(default, section), {}
        for f in dataclasses.fields(part):
            value, limits = getattr(part, f.name), RANGES.get(f"{section}.{f.name}")
            if limits and not (math.isfinite(value) and limits[0] <= value <= limits[1]):
                problems.append(f"{section}.{f.name} {value!r} is not {limits[0]}..{limits[1]}: "
                                f"{getattr(fallback, f.name)!r} is used")
                changes[f.name] = getattr(fallback, f.name)
        sections[section] = dataclasses.replace(part, **changes)
    display, buttons, game = sections["display"], sections["buttons"], sections["game"]
    if display.driver not in ("ssd1306", "sh1106"):
        problems.append(f"display.driver {shorten(display.driver)!r} must be ssd1306 or sh1106: "
                        f"{default.display.driver} is used")
        display = dataclasses.replace(display, driver=default.display.driver)
    if len({buttons.ok_pin, buttons.next_pin, buttons.back_pin}) != 3:
        problems.append("buttons: ok_pin, next_pin and back_pin must differ: the default pins are used")
        buttons = dataclasses.replace(buttons, ok_pin=default.buttons.ok_pin, next_pin=default.buttons.next_pin,
                                      back_pin=default.buttons.back_pin)
    names = game.names
    if len(names) < 18 or len(set(n.lower() for n in names)) != len(names):
        problems.append("game.names needs 18 different names: the default names are used")
        game = dataclasses.replace(game, names=default.game.names)
    elif not all(NAME_RE.match(n) for n in names):
        problems.append("game.names: letters, digits, - and _ only: the default names are used")
        game = dataclasses.replace(game, names=default.game.names)
    if game.game not in GAMES:
        problems.append(f"game.game {shorten(game.game)!r} is not one of {', '.join(GAMES)}: "
                        f"{default.game.game} is used")
        game = dataclasses.replace(game, game=default.game.game)
    if not config.shutdown_command:
        problems.append("shutdown_command must name a command: the default is used")
        config = dataclasses.replace(config, shutdown_command=default.shutdown_command)
    return dataclasses.replace(config, display=display, buttons=buttons, camera=sections["camera"], game=game)


def example_toml() -> str:
    """The defaults as a commented TOML file (systemd/install.sh writes it to /etc/tablemate)."""
    lines = ["# tablemate device configuration; every value shown is the default.", ""]

    def emit(obj, section: str) -> None:
        nested = []
        if section:
            lines.append(f"[{section}]")
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if dataclasses.is_dataclass(value):
                nested.append((value, f"{section}.{f.name}" if section else f.name))
            elif isinstance(value, tuple):
                lines.append(f"{f.name} = [{', '.join(repr(v).replace(chr(39), chr(34)) for v in value)}]")
            elif isinstance(value, str):
                lines.append(f'{f.name} = "{value}"')
            elif isinstance(value, bool):
                lines.append(f"{f.name} = {str(value).lower()}")     # (TOML's true / false)
            elif f.name == "i2c_address":
                lines.append(f"{f.name} = 0x{value:02X}")
            else:
                lines.append(f"{f.name} = {value}")
        lines.append("")
        for child, name in nested:
            emit(child, name)

    emit(DeviceConfig(), "")
    return "\n".join(lines)
