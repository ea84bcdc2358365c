"""`make demo`: a complete bundled Flip 7 game played through the real pipeline, with no hardware.

The game is the table script examples/demo-flip7.txt. Its cards become a synthetic deal video
(vision.synth, fixed seed, cached under out/demo/); its stops and choices become a button script
whose presses fall in pauses after the card they follow, the way a table waits for a player to
decide. Then `tablemate run` plays the video with those buttons, draws the OLED into
out/demo/oled.gif, and the final scores are checked against `tablemate replay` of the script.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("device.demo")

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SCRIPT = REPO / "examples" / "demo-flip7.txt"
SETTLE_FRAMES = 8        # still frames after a card before its buttons (the detector confirms it)
PRESS_GAP = 3            # frames between two presses
FPS = 15


@dataclass
class GameVideo:
    frames_dir: Path
    buttons_path: Path
    frames: int
    cards: int
    presses: int


def presses_for_script(text: str) -> list[tuple[int, list[str]]]:
    """For each card of the script (in order), the button presses that follow it before the next
    card: `ok` for a stop; `next`... `ok` for each level of a choice (as many `next` as the chosen
    option is away from the first one offered). Flip 7 and Vengeance games; undo lines are not
    supported here."""
    from device.games import buttons_for, flow_for
    from rules.events import Card, Stop
    from rules.match import Match
    from rules.script import UNDO, parse_script

    script = parse_script(text)
    if script.config is None or script.errors:
        raise ValueError(f"unusable demo script: {script.fatal or script.errors[0]}")
    match = Match(script.config)
    cards: list[tuple[str, list[str]]] = []
    for lineno, line, event in script.events:
        if event == UNDO:
            raise ValueError(f"line {lineno}: the demo cannot film an undo")
        if isinstance(event, Card):
            if event.to is not None:
                raise ValueError(f"line {lineno}: the demo deals cards the rules' way only")
            cards.append((event.label, []))
        elif isinstance(event, Stop) and event.player is None:
            cards[-1][1].append("ok")
        else:
            choice = flow_for(script.config.game).choice(match.state)
            presses = buttons_for(choice, event) if choice is not None and cards else None
            if presses is None:
                raise ValueError(f"line {lineno}: {line!r} has no button in the demo")
            cards[-1][1].extend(presses)
        match.apply(event)
    return cards


def _deck(text: str) -> str:
    from rules.cards import GAME_DECKS
    from rules.script import parse_script

    return GAME_DECKS[parse_script(text).config.game]


def make_game_video(text: str, out: Path, seed: int = 2, split: str = "train", **hard_cases) -> GameVideo:
    """The deal video (a folder of JPEG frames) and the button script for table script `text`,
    cached in `out` by a hash of everything that shapes them. `hard_cases` go to
    vision.synth.make_deal_video (p_on_top, p_pass, p_nudge, p_slide; its defaults otherwise)."""
    import cv2
    import numpy as np

    from vision.synth import make_deal_video

    cards = presses_for_script(text)
    key = hashlib.sha256(json.dumps([text, seed, split, sorted(hard_cases.items()), SETTLE_FRAMES, PRESS_GAP, FPS]).encode()).hexdigest()[:12]
    frames_dir = out / f"video-{key}"
    buttons_path = out / f"buttons-{key}.txt"
    done = frames_dir / "done.json"
    if done.exists() and buttons_path.exists():
        info = json.loads(done.read_text())
        log.info("using the cached deal video %s (%d frames)", frames_dir, info["frames"])
        return GameVideo(frames_dir, buttons_path, info["frames"], len(cards), info["presses"])
    video = make_deal_video(np.random.default_rng(seed), [label for label, _ in cards], deck=_deck(text),
                            fps=FPS, split=split, **hard_cases, p_repeat=0.0)
    if len(video.events) != len(cards):
        raise RuntimeError("the deal video does not hold one placement per card")
    # After each card with buttons, pause on the last still frame before the table moves again.
    activity = sorted(note["start"] for note in video.notes)
    pause_after: dict[int, list[str]] = {}
    for event, (_, presses) in zip(video.events, cards):
        if presses:
            later = [s for s in activity if s > event.frame_index]
            pause_after[(later[0] if later else len(video.frames)) - 1] = presses
    frames_dir.mkdir(parents=True, exist_ok=True)
    lines = []
    written = 0
    started = time.monotonic()

    def write(image) -> None:
        nonlocal written
        cv2.imwrite(str(frames_dir / f"{written:06d}.jpg"), image, [cv2.IMWRITE_JPEG_QUALITY, 90])
        written += 1
        if written % 500 == 0:
            log.info("deal video: %d frames written (%.0f s)", written, time.monotonic() - started)

    for index, image in enumerate(video.frames):
        write(image)
        presses = pause_after.get(index)
        if presses:
            for k in range(SETTLE_FRAMES + PRESS_GAP * len(presses)):
                if k >= SETTLE_FRAMES and (k - SETTLE_FRAMES) % PRESS_GAP == 0:
                    lines.append(f"{written} {presses[(k - SETTLE_FRAMES) // PRESS_GAP]}")
                write(image)
    buttons_path.write_text("# frame button: presses for the demo game, made by device/demo.py\n"
                            + "\n".join(lines) + "\n")
    done.write_text(json.dumps({"frames": written, "presses": len(lines)}))
    log.info("deal video: %d frames, %d cards, %d presses in %.0f s", written, len(cards), len(lines),
             time.monotonic() - started)
    return GameVideo(frames_dir, buttons_path, written, len(cards), len(lines))


def run_game(text: str, video: GameVideo, out: Path, display: str, state: Path) -> dict:
    """`tablemate run` on the video with the buttons; returns its --json summary."""
    from rules.script import parse_script

    config = parse_script(text).config
    command = [sys.executable, "-m", "device.cli", "run", "--game", config.game, "--players", *config.players,
               "--camera", f"replay:{video.frames_dir}", "--display", display,
               "--buttons", f"script:{video.buttons_path}", "--state", str(state), "--json"]
    log.info("running: %s", " ".join(command))
    result = subprocess.run(command, stdout=subprocess.PIPE, text=True, cwd=REPO)
    if result.returncode != 0:
        raise RuntimeError(f"tablemate run failed with status {result.returncode}")
    return json.loads(result.stdout)


def card_differences(script_text: str, log_text: str) -> list[str]:
    """Where the cards the device accepted differ from the script's (a missed or misread card
    makes the buttons that follow it land in another situation, so the first difference matters)."""
    import difflib

    def cards(text: str) -> list[str]:
        return [line.split()[1] for line in text.splitlines() if line.startswith("card ")]

    want, got = cards(script_text), cards(log_text)
    lines = []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(a=want, b=got, autojunk=False).get_opcodes():
        if op != "equal":
            lines.append(f"card {a0 + 1} of the script: {' '.join(want[a0:a1]) or '-'} -> device: "
                         f"{' '.join(got[b0:b1]) or 'nothing'}")
    return lines


def expected_summary(text: str) -> dict:
    from rules.script import parse_script, replay_script

    return replay_script(parse_script(text)).match.summary()


def main(argv: list[str] | None = None) -> int:
    from device.logs import setup_logging

    parser = argparse.ArgumentParser(prog="python -m device.demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--script", type=Path, default=DEFAULT_SCRIPT, help="the game (a table script)")
    parser.add_argument("--out", type=Path, default=REPO / "out" / "demo", help="output folder")
    # Seed 2 / train look: a video the committed model reads through end to end (some seeds are not:
    # the detector misses 1-3 placements in 200, see models/flip7.md; `make evaluate` measures that).
    parser.add_argument("--seed", type=int, default=2, help="deal video seed (default 2: reads through)")
    parser.add_argument("--split", default="train", choices=("train", "heldout"),
                        help="card and table looks for the video (heldout: a print never seen in training)")
    parser.add_argument("--hard", action="store_true",
                        help="deal with the hard cases too (cards on top of others, hands passing over, "
                             "nudges): the detector still misses about 1.5%% of those placements "
                             "(models/flip7.md), so a long game then rarely reads through")
    args = parser.parse_args(argv)
    setup_logging()
    started = time.monotonic()
    text = args.script.read_text(encoding="utf-8")
    # The demo shows the whole pipeline on an unseen print; `make evaluate` measures the hard cases.
    plain = {} if args.hard else {"p_on_top": 0.0, "p_pass": 0.0, "p_nudge": 0.0}
    video = make_game_video(text, args.out, args.seed, args.split, **plain)
    state = args.out / "state"
    shutil.rmtree(state, ignore_errors=True)   # a fresh game each time
    gif = args.out / "oled.gif"
    got = run_game(text, video, args.out, f"gif:{gif}", state)
    want = expected_summary(text)
    print(f"Final scores ({len(got['rounds'])} rounds, winner {got['winner']}):")
    for name in got["players"]:
        print(f"  {name:8} {got['totals'][name]:4}   (script: {want['totals'][name]})")
    print(f"OLED animation: {gif}   ({time.monotonic() - started:.0f} s)")
    if (got["totals"], got["winner"], got["rounds"]) != (want["totals"], want["winner"], want["rounds"]):
        print("MISMATCH: the device's game differs from the table script", file=sys.stderr)
        for line in card_differences(text, (state / "game.txt").read_text(encoding="utf-8")):
            print(f"  {line}", file=sys.stderr)
        return 1
    print("The device's game matches tablemate replay of the script.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
