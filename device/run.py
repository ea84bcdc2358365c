"""Run the device: the camera watches the deal zone, each card turned over there is read and
applied to the game, the display shows whose turn it is, their row, score and bust odds, and the
buttons stop, choose and undo (docs/device.md).

Without arguments it is the appliance (Pi camera, OLED, GPIO buttons; what systemd runs). The same
program runs on a laptop with a webcam or a recorded video, a window or a GIF, and the keyboard or
a button script:

  tablemate run --game flip7 --players ann ben cat --camera replay:deal.mp4 \\
      --display gif:out/oled.gif --buttons script:buttons.txt --state /tmp/tm --json

On a laptop, `--display window` shows the OLED beside the table (every player's row, total and bust
odds, the rounds so far) and takes the keys typed in it (--buttons keyboard); `--preview` shows
what the camera sees and what was found there, for setting the camera up, and `--preview-dir DIR`
saves it (hardware.md). `tablemate record` is this run with the frames and presses recorded.

A button script has lines `FRAME BUTTON [hold]`: press ok, next or back when frame FRAME (0-based)
is shown. With a replay camera the run ends when the frames end; --json then prints the game in
the `tablemate replay --json` schema. The game is kept in STATE/game.txt (a table script) and
resumes after a restart; --game/--players different from the kept game start a new one.

At the first start with a deck that has no calibration (none kept in STATE, no --profile), the
display offers the calibration walk before the first card ("NEW DECK?": ok learns it, next or a
card plays on); the answer is kept in STATE/settings.json, so it is asked once per deck.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import subprocess
from pathlib import Path

log = logging.getLogger(__name__)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--game", help="game to play (default: the config's; see tablemate replay)")
    parser.add_argument("--players", nargs="+", metavar="NAME", help="players in seating order "
                        "(default: the kept game's, else the config's names)")
    parser.add_argument("--camera", default="pi", metavar="SPEC",
                        help="pi | opencv:INDEX | replay:PATH[@FPS] (video file or image folder; @FPS "
                        "paces it in real time) (default: pi)")
    parser.add_argument("--display", metavar="SPEC",
                        help="oled | window (on a laptop: the OLED beside the table) | gif:PATH | png:DIR | "
                        "none (default: oled; on a machine with no I2C bus, a window if there is a desktop, "
                        "else none)")
    parser.add_argument("--buttons", metavar="SPEC",
                        help="gpio | keyboard (typed in the window, else on the terminal) | script:PATH | "
                        "none (default: gpio; on a machine with no GPIO, the keyboard)")
    parser.add_argument("--state", metavar="DIR", help="where the game log and settings are kept "
                        "(default: $STATE_DIRECTORY under systemd, else the config's state_dir)")
    parser.add_argument("--config", metavar="PATH", type=Path,
                        help="TOML config (default: /etc/tablemate/config.toml if present)")
    parser.add_argument("--json", action="store_true",
                        help="at the end, print the game as JSON (the replay --json schema)")
    parser.add_argument("--preview", action="store_true",
                        help="show what the camera sees in the laptop window, with the cards found, each "
                        "reading and its confidence, and figures for setting the camera up (height, focus, "
                        "light, the deal zone); opens the window even with another display")
    parser.add_argument("--preview-dir", metavar="DIR", type=Path,
                        help="save that preview as DIR/FRAME.jpg: the first frame, each frame with a reading "
                        "and one a second (for a bug report)")
    parser.add_argument("--profile", metavar="PROFILE",
                        help="calibration profile of your own deck (tablemate calibrate; default: the one "
                        "the menu's calibration kept in the state directory, if any)")


def main(args: argparse.Namespace) -> int:
    from device.config import load_config

    config, config_problems = load_config(args.config)
    for problem in config_problems:
        log.error("%s", problem)
    from device.logs import say_fatal
    from vision.classifier import ModelError

    try:
        appliance = build(args, config)
    except (ValueError, OSError, ModelError) as error:
        say_fatal(f"tablemate run: {error}")
        return 2
    for problem in config_problems:   # the journal has the file name; the screen the problem
        appliance.table.show_problem("Config error", problem.split(": ", 1)[-1])
    # systemctl stop (SIGTERM): leave the loop cleanly (display, camera and buttons closed).
    signal.signal(signal.SIGTERM, lambda signum, frame: setattr(appliance, "stopping", True))
    window = appliance.view.window if appliance.view is not None else None
    if window is not None:
        window.on_close = lambda: setattr(appliance, "stopping", True)
        window.serve(appliance.run)        # (Tk stays on this thread; the loop runs on its own)
    else:
        appliance.run()
    table = appliance.table
    table.game_log.close()
    stats = appliance.stats
    log.info("%d frames, %d cards read, %d not sure, %d button presses", stats.frames, stats.placements,
             stats.unsure, stats.presses)
    if table.request == "shutdown":
        shut_down(config.shutdown_command)
    if args.json:
        print(json.dumps({**table.match.summary(), "errors": [e.to_json() for e in table.refusals]}))
    return 0


def build(args: argparse.Namespace, config, detector=None):
    """Everything `run` needs, wired; `detector` replaces the vision pipeline (tests). A run
    refused on the way lets go of the state directory it locked."""
    held: list = []
    try:
        return _build(args, config, detector, held)
    except BaseException:
        for resource in held:
            resource.close()
        raise


def _build(args: argparse.Namespace, config, detector, held: list):
    from device.appliance import Appliance
    from device.buttons import KeyboardButtons, WindowKeys, parse_buttons
    from device.laptop_view import LaptopView
    from device.preview import PreviewSaver
    from device.camera import CameraError, FrameSource, ReplayCamera, parse_camera
    from device.display import DisplayWorker, parse_display
    from device.gamelog import LOG_NAME
    from device.resume import Resume
    from device.screens import render
    from device.table import Settings, Table
    from vision.files import write_atomically

    camera = parse_camera(args.camera, config.camera)
    if isinstance(camera, ReplayCamera):
        # A recording that cannot be opened will not become one: said now, not retried for ever
        # as a camera unplugged may be.
        try:
            camera.open()
        except CameraError as error:
            raise ValueError(f"camera {args.camera}: {error}") from None
        finally:
            camera.close()
    display_asked = args.display
    args.display, args.buttons = what_this_machine_has(args.display, args.buttons, config)
    recorder = None
    if getattr(args, "out", None) is not None:      # tablemate record
        from device.record_cmd import Recorder, RecordingButtons, RecordingCamera

        recorder = Recorder(args.out, camera.fps)
        held.append(recorder)
    try:
        window = laptop_window(args, held)
    except ValueError as error:
        if display_asked is not None or getattr(args, "preview", False):
            raise
        log.warning("%s: using --display none", error)      # a window was only this machine's best guess
        args.display, window = "none", None
    open_display = (parse_display(args.display, config.display, window=window) if window is not None
                    else parse_display(args.display, config.display))
    buttons = parse_buttons(args.buttons, config.buttons)
    if window is not None and isinstance(buttons, KeyboardButtons):
        buttons = WindowKeys(window)          # typed where the user looks
    if recorder is not None:
        camera, buttons = RecordingCamera(camera, recorder), RecordingButtons(buttons, recorder)
    state_dir = Path(args.state or os.environ.get("STATE_DIRECTORY", "").split(":")[0] or config.state_dir)
    try:
        if not state_dir.is_dir():
            state_dir.mkdir(parents=True)
        held.append(lock_state_dir(state_dir))
    except StateDirInUse:
        raise
    except OSError as error:
        raise OSError(f"cannot use the state directory {state_dir}: {error.strerror or error} (use --state DIR)") \
            from None
    # A state directory it can read but not write (the card remounted read-only after errors, a
    # log it cannot read) does not stop the table's game: it is played on, unkept, and the display
    # says so. A blank screen restarting every few seconds would tell no one.
    unwritable = unwritable_state_dir(state_dir)
    settings_path = state_dir / "settings.json"
    settings = Settings.load(settings_path, config.display.brightness, config.game.players)
    match, kept, loaded = choose_game(state_dir, args.game, args.players, config, settings,
                                      repair=unwritable is None)
    problems = loaded.problems
    if loaded.unreadable:
        unwritable = unwritable or f"the game log cannot be read, so it is left as it is: {loaded.unreadable}"
    if unwritable:
        log.error("%s: the game is played but not kept", unwritable)
    # The vision is made before the game log is touched: a run refused for its model or profile
    # must leave the kept game where it was, not archived for an empty one.
    calibration_problem = start_calibration = None
    own_vision = detector is None
    if own_vision:
        detector, calibration_problem = make_detector(match.config.game, config, getattr(args, "profile", None),
                                                      state_dir)
        start_calibration = calibration_starter(detector, match.config.game, state_dir)
    try:
        game_log = game_log_for(state_dir, match, loaded, kept, unwritable)
    except OSError as error:    # (a full card: the probe's empty file could be made, the log not written)
        unwritable = state_dir_problem(state_dir, error)
        log.error("%s: the game is played but not kept", unwritable)
        game_log = game_log_for(state_dir, match, loaded, kept, unwritable)
    if recorder is not None and kept and match.events:
        write_atomically(recorder.beside("game-at-start.txt"), "\n".join(loaded.script) + "\n")
        log.info("recording a game resumed from %s: a replay starts from %s (as STATE/game.txt)",
                 state_dir, recorder.beside("game-at-start.txt"))
    table = Table(match, game_log, config.game.names, settings, settings_path,
                  flash_seconds=config.display.flash_seconds, advice=config.display.advice)
    resume = Resume(state_dir, state_dir / LOG_NAME)
    if kept and loaded.clean:       # (a log repaired or archived is another moment of the game)
        resume.restore_picture(detector)
        choice = resume.restored_choice()
        if choice is not None and match.state.pending is not None:
            table.choice_path = choice
    if own_vision:
        table.games = games_with_a_model(config)
    if unwritable:
        table.show_problem("Not saving", f"this game is not kept: {unwritable}")
    for problem in problems:
        table.show_problem("Game log repaired" if unwritable is None else "Game log", problem)
    if calibration_problem:
        table.show_problem("Calibration", calibration_problem)
    recording = args.display.startswith(("gif:", "png:"))
    display = DisplayWorker(open_display, render, settings.brightness, lossless=recording)
    table.on_brightness = display.set_brightness
    appliance = Appliance(FrameSource(camera, config.camera), detector, table, display, buttons, held=held,
                          start_calibration=start_calibration,
                          vision_for=vision_for(config, state_dir) if start_calibration else None,
                          first_start=lambda game: first_start(table.match, None, settings, state_dir),
                          resume=resume)
    preview_dir = getattr(args, "preview_dir", None)
    if window is not None or preview_dir:
        appliance.view = LaptopView(window, getattr(args, "preview", False),
                                    PreviewSaver(preview_dir) if preview_dir else None)
    if start_calibration and first_start(match, getattr(args, "profile", None), settings, state_dir):
        table.offer_calibration("new deck")     # (shown after the problems queued above)
    return appliance


def laptop_window(args, held: list):
    """The laptop window, made now (on this thread: Tk's), when `--display window` or
    `--preview` asks for it; else None. No window possible: ValueError, said plainly."""
    if args.display != "window" and not getattr(args, "preview", False):
        return None
    from device.display_window import LaptopWindow

    window = LaptopWindow()
    try:
        window.open()
    except RuntimeError as error:
        raise ValueError(f"{error} (without a desktop: --display gif:PATH or none, --preview-dir DIR)") from None
    held.append(window)
    return window


def what_this_machine_has(display: str | None, buttons: str | None, config) -> tuple[str, str]:
    """The --display and --buttons asked for; those not asked for are the OLED and the GPIO
    buttons where the machine has them, else (a laptop) a window or none and the keyboard, said
    in one line."""
    missing = []
    if display is None:
        from device.display_oled import oled_missing

        why = oled_missing(config.display)
        display = "oled" if why is None else ("window" if os.environ.get("DISPLAY") or
                                              os.environ.get("WAYLAND_DISPLAY") else "none")
        missing += [why] if why else []
    if buttons is None:
        from device.buttons_gpio import gpio_missing

        why = gpio_missing()
        buttons = "gpio" if why is None else "keyboard"
        missing += [why] if why else []
    if missing:
        log.warning("%s: using --display %s and --buttons %s", "; ".join(missing), display, buttons)
    return display, buttons


def first_start(match, profile: str | None, settings, state_dir: Path) -> bool:
    """A deck that has never been calibrated here, at the start of a game, not offered the walk
    before: the moment to offer it (a game under way is not interrupted; a `--profile` is one)."""
    from device.calibration import never_calibrated
    from rules.cards import GAME_DECKS

    deck = GAME_DECKS[match.config.game]
    return (not profile and not match.events and deck not in settings.offered
            and never_calibrated(deck, state_dir))


def games_with_a_model(config) -> tuple[str, ...]:
    """The games whose deck has a card classifier: a game chosen in the menu must be readable."""
    from device.games import GAME_NAMES
    from rules.cards import GAME_DECKS
    from vision.classifier import MODELS_DIR

    folder = Path(config.models_dir) if config.models_dir else MODELS_DIR
    return tuple(game for game in GAME_NAMES if (folder / f"{GAME_DECKS[game]}.onnx").exists())


def vision_for(config, state_dir: Path):
    """game -> (detector, calibration starter, problem or None), for a game chosen in the menu."""
    def load(game: str):
        detector, problem = make_detector(game, config, None, state_dir, rebuild=False)
        return detector, calibration_starter(detector, game, state_dir), problem

    return load


def calibration_starter(detector, game: str, state_dir: Path):
    """pick -> a calibration walk over the model itself (not a profile on top of a profile), kept
    as the deck's stored profile."""
    from device.calibration import CalibrationFlow, profile_path
    from rules.cards import GAME_DECKS

    deck = GAME_DECKS[game]

    def start(pick: bool):
        base = getattr(detector.classifier, "base", detector.classifier)
        return CalibrationFlow(base, deck, profile_path(state_dir, deck), pick=pick, background=True,
                               reader=detector.classifier)   # (read back as the game reads now)

    return start


class StateDirInUse(OSError):
    """Another `tablemate run` holds the state directory."""


def lock_state_dir(state_dir: Path):
    """One device per state directory: a second `tablemate run` (say, by hand while the service
    runs) would interleave lines in the game log. The directory itself is locked, so the lock
    holds on a card gone read-only too and needs no file of its own; it ends with the process."""
    import fcntl

    fd = os.open(state_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StateDirInUse(f"another tablemate run is using {state_dir} (sudo systemctl stop tablemate?)") from None
    return _HeldDirectory(fd)


class _HeldDirectory:
    def __init__(self, fd: int):
        self.fd = fd

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def unwritable_state_dir(state_dir: Path) -> str | None:
    """Why the game cannot be kept in `state_dir` (a file cannot be made there, or the game log
    cannot be appended to), or None."""
    from device import gamelog
    from vision.files import check_writable

    try:
        check_writable(state_dir)
        if (state_dir / gamelog.LOG_NAME).exists():
            os.close(os.open(state_dir / gamelog.LOG_NAME, os.O_WRONLY | os.O_APPEND))
    except OSError as error:
        return state_dir_problem(state_dir, error)
    return None


def state_dir_problem(state_dir: Path, error: OSError) -> str:
    """Why `state_dir` cannot be written, in words for the display and the journal."""
    import errno

    why = {errno.EROFS: " (a card remounted read-only after errors? check it with fsck)",
           errno.EACCES: " (its owner or permissions: the service runs as user tablemate)",
           errno.ENOSPC: " (the card is full)"}.get(error.errno, "")
    return f"cannot write the state directory {state_dir}: {error.strerror or error}{why}"


def choose_game(state_dir: Path, game: str | None, players: list[str] | None, config, settings,
                repair: bool = True):
    """The kept game if there is one and it is the one asked for, else a new game (nothing
    written yet: game_log_for). Returns (match, whether it is the kept one, the log as
    gamelog.load read it: repaired unless `repair` is False)."""
    from device import gamelog
    from rules.core import GameConfig
    from rules.match import Match

    loaded = gamelog.load(state_dir / gamelog.LOG_NAME, repair=repair)
    for problem in loaded.problems:
        log.error("%s", problem)
    kept = loaded.match
    wanted_game = game or (kept.config.game if kept else config.game.game)
    wanted_players = tuple(players) if players else (
        kept.config.players if kept else tuple(config.game.names[: settings.players]))
    if kept and kept.config.game == wanted_game and kept.config.players == wanted_players:
        return kept, True, loaded
    # (Match raises ValueError for a game the rules core does not support.)
    return Match(GameConfig(wanted_game, wanted_players)), False, loaded


def game_log_for(state_dir: Path, match, loaded, kept: bool, unwritable: str | None = None):
    """The log of the game choose_game chose (`loaded`: the log as gamelog.load read it): the
    kept one appended to, or a new one (the kept one archived); with the state directory
    `unwritable`, one that holds the game in memory until the directory can be written again."""
    from device import gamelog

    path = state_dir / gamelog.LOG_NAME
    if unwritable and kept:
        return gamelog.UnkeptLog(path, loaded.script, unwritable, continues="yes" if loaded.clean else "repaired")
    if unwritable:
        return gamelog.UnkeptLog.start(path, match.config, unwritable, "unread" if loaded.unreadable else "no")
    if kept:
        from device.games import counted

        log.info("resuming the game kept in %s: %s, %s, round %d, %s (--state DIR keeps another)",
                 path, match.config.game, " ".join(match.config.players), len(match.rounds) + 1,
                 counted(len(match.events), "event"))
        return gamelog.GameLog(path)
    if path.exists() and path.stat().st_size:
        log.info("starting a new game (%s %s); the kept one is archived", match.config.game,
                 " ".join(match.config.players))
    return gamelog.GameLog.start(path, match.config)


def make_detector(game: str, config, profile: str | None = None, state_dir: Path | None = None,
                  rebuild: bool = True):
    """(detector, problem or None). An explicit --profile that is refused stops the run
    (ProfileError, a ValueError); a refused stored profile is made again from the calibration
    walk's photos kept beside it (not with `rebuild` False: the game menu's switch, in the frame
    loop), and without them shown, the model running alone (load_stored)."""
    from device.calibration import load_stored
    from rules.cards import GAME_DECKS
    from vision.adapt import CalibratedClassifier, Profile
    from vision.card_mask import use_models_dir
    from vision.classifier import CardClassifier
    from vision.placement import PlacementDetector

    deck = GAME_DECKS[game]
    classifier = CardClassifier.load(deck, models_dir=config.models_dir or None)
    use_models_dir(config.models_dir or None)   # the hand scan's card mask network, where it has one
    problem = None
    if profile:
        classifier = CalibratedClassifier(classifier, Profile.load(profile), deck, source=f"profile {profile}")
    elif state_dir is not None:
        classifier, problem = load_stored(classifier, deck, state_dir, rebuild)
    return PlacementDetector(classifier), problem


def shut_down(command: tuple[str, ...]) -> None:
    """Power off when running as the service (systemd/install.sh allows it through polkit); run by
    hand, only this program stops: a menu must not power off a developer's laptop."""
    if not os.environ.get("INVOCATION_ID"):
        log.info("shut down chosen: not running under systemd, so only tablemate stops")
        return
    log.info("shutting down: %s", " ".join(command))
    try:
        subprocess.run(list(command), check=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as error:
        log.error("shut down failed: %s", error)
