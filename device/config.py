"""The device configuration: every default of the device (hardware.md) in one dataclass,
overridable by a TOML file (`/etc/tablemate/config.toml` under systemd).

A config file that cannot be read or has wrong values never stops the device: `load_config` returns
the defaults (plus whatever parts of the file were valid) and a list of problems, which the caller
logs and shows on the display.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from rules.core import NAME_RE

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
    no problem (the defaults are complete); a missing file named explicitly is."""
    explicit = path is not None
    path = path or default_config_path()
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        return DeviceConfig(), ([f"config {path} not found: using defaults"] if explicit else [])
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        return DeviceConfig(), [f"config {path} unreadable ({error}): using defaults"]
    problems: list[str] = []
    config = _merge(DeviceConfig(), data, "", problems)
    invalid = _check(config)
    if invalid:
        # Values of the right type that make no sense together: run on the defaults instead.
        config = DeviceConfig()
        problems += invalid + ["using defaults"]
    return config, [f"config {path}: {p}" for p in problems]


def _merge(base, data: dict, prefix: str, problems: list[str]):
    """A copy of dataclass `base` with the values of `data`; unknown keys and values of the wrong
    type are reported and skipped (the default stays)."""
    changes = {}
    fields = {f.name: f for f in dataclasses.fields(base)}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if key not in fields:
            problems.append(f"unknown setting {name!r} ignored")
            continue
        current = getattr(base, key)
        if dataclasses.is_dataclass(current):
            if isinstance(value, dict):
                changes[key] = _merge(current, value, f"{name}.", problems)
            else:
                problems.append(f"{name} must be a table, ignored")
        elif isinstance(current, tuple):
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                changes[key] = tuple(value)
            else:
                problems.append(f"{name} must be a list of strings, ignored")
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


def _check(config: DeviceConfig) -> list[str]:
    problems = []
    if config.display.driver not in ("ssd1306", "sh1106"):
        problems.append(f"display.driver {config.display.driver!r} must be ssd1306 or sh1106")
    if not 1 <= config.display.brightness <= 4:
        problems.append("display.brightness must be 1..4")
    if not 0 <= config.display.rotate <= 3:
        problems.append("display.rotate must be 0..3")
    if len(config.game.names) < 18 or len(set(n.lower() for n in config.game.names)) != len(config.game.names):
        problems.append("game.names needs 18 different names")
    elif not all(NAME_RE.match(n) for n in config.game.names):
        problems.append("game.names: letters, digits, - and _ only")
    if not 2 <= config.game.players <= 18:
        problems.append("game.players must be 2..18")
    pins = (config.buttons.ok_pin, config.buttons.next_pin, config.buttons.back_pin)
    if len(set(pins)) != 3:
        problems.append("buttons: ok_pin, next_pin and back_pin must differ")
    if config.camera.width <= 0 or config.camera.height <= 0 or config.camera.fps <= 0:
        problems.append("camera width, height and fps must be positive")
    return problems


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
            elif f.name == "i2c_address":
                lines.append(f"{f.name} = 0x{value:02X}")
            else:
                lines.append(f"{f.name} = {value}")
        lines.append("")
        for child, name in nested:
            emit(child, name)

    emit(DeviceConfig(), "")
    return "\n".join(lines)
