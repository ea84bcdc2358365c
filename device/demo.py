"""`make demo`: a complete bundled Flip 7 game played through the real pipeline, with no hardware.

The game is the table script examples/demo-flip7.txt. Its cards become a synthetic deal video
(vision.synth.scenes, fixed seed, cached under out/demo/); its stops and choices become a button script
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
HAND_BATCH = 3           # cards of an UNO Flip hand laid out at once: they lie apart at any card size


@dataclass
class GameVideo:
    frames_dir: Path
    buttons_path: Path
    frames: int
    cards: int
    presses: int


@dataclass
class Shot:
    """A card landing in the video, and the button presses that follow it before the next one."""
    label: str
    presses: list[str]
    landing: str | None = None    # where it lands (vision.synth.scenes landings: UNO Flip); None: the Flip 7 deal


def shots_for_script(text: str) -> list[Shot]:
    """The cards the camera sees for the script, in order, each with the presses that follow it:
    `ok` for a stop (Flip 7) or a draw (UNO Flip); `next` to open UNO Flip's turn actions (pass,
    challenge, UNO calls, catches); `next`... `ok` for each level of a choice (as many `next` as the
    chosen option is away from the first one offered). UNO Flip's cards land on the discard pile;
    after a Flip the turned pile shows a new card; at the end of a round each hand is laid out
    HAND_BATCH cards at a time and read (ok on the hand; `more cards` for the next batch; done).
    Undo lines and cards or plays for a named player are not supported."""
    from device.games import flow_for
    from rules.events import Card, Hand, Play, Start, Top
    from rules.match import Match
    from rules.script import UNDO, format_event, parse_script

    script = parse_script(text)
    if script.config is None or script.errors:
        raise ValueError(f"unusable demo script: {script.fatal or script.errors[0]}")
    flow = flow_for(script.config.game)
    match = Match(script.config)
    shots: list[Shot] = []
    for lineno, line, event in script.events:
        state = match.state
        if event == UNDO:
            raise ValueError(f"line {lineno}: the demo cannot film an undo")
        if isinstance(event, (Card, Start, Play, Top)):
            seen = flow.event_for_card(state, event.label)
            if seen != event:      # a card for a named player, or one the table ignores now
                raise ValueError(f"line {lineno}: {line!r}: the camera makes "
                                 f"{format_event(seen) if seen else 'nothing'} of that card here")
            shots.append(Shot(event.label, [], None if isinstance(event, Card) else
                              "new-pile" if isinstance(event, Top) else "pile"))
        elif isinstance(event, Hand):
            shots.extend(_hand_shots(flow, state, event))
        else:
            presses = _presses(flow, state, event) if shots else None
            if presses is None:
                raise ValueError(f"line {lineno}: {line!r} has no button in the demo")
            shots[-1].presses.extend(presses)
        match.apply(event)
    return shots


def _presses(flow, state, event) -> list[str] | None:
    """The presses that make `event` now: the pending choice answered, the turn's `ok`, or an
    action among those `next` opens on a turn (UNO Flip); None if no button makes it."""
    from device.games import buttons_for

    choice = flow.choice(state)
    if choice is not None:
        return buttons_for(choice, event)
    if flow.on_turn(state, "ok") == event:
        return ["ok"]
    if flow.on_turn(state, "next") == "actions":
        # (a lone action is taken without `ok`, but "scores" is always offered too: never an event alone)
        presses = buttons_for(flow.actions(state), event)
        return ["next", *presses] if presses is not None else None
    return None


def _hand_shots(flow, state, event) -> list[Shot]:
    """An UNO Flip hand laid out under the camera in batches (the zone cleared before each): ok on
    "NAME's hand" reads the first, "more cards" each next one, "done" counts the hand."""
    from device.games import buttons_for

    if not event.labels:
        raise ValueError(f"an empty hand ({event.player}) cannot be shown to the camera")
    shots: list[Shot] = []
    for first in range(0, len(event.labels), HAND_BATCH):
        batch = event.labels[first:first + HAND_BATCH]
        shots += [Shot(label, [], "apart") for label in batch]
        shots[-len(batch)].landing = "new-apart"
        asking = flow.choice(state) if first == 0 else flow.hand_choice(event.player, event.labels[:first])
        shots[-1].presses = buttons_for(asking, f"scan {event.player}")
    shots[-1].presses += buttons_for(flow.hand_choice(event.player, event.labels), event)
    return shots


def presses_for_script(text: str) -> list[tuple[str, list[str]]]:
    """(label, presses) of each shot of shots_for_script (a Flip 7 deal needs no more)."""
    return [(shot.label, shot.presses) for shot in shots_for_script(text)]


def _deck(text: str) -> str:
    from rules.cards import GAME_DECKS
    from rules.script import parse_script

    return GAME_DECKS[parse_script(text).config.game]


def make_game_video(text: str, out: Path, seed: int = 2, split: str = "train", printed=None,
                    **hard_cases) -> GameVideo:
    """The deal video (a folder of JPEG frames) and the button script for table script `text`,
    cached in `out` by a hash of everything that shapes them. `hard_cases` go to
    vision.synth.scenes.make_deal_video (p_on_top, p_pass, p_nudge, p_slide; its defaults otherwise).
    An UNO Flip video films the discard pile and the hands laid out (shots_for_script).
    `printed` (vision.synth.printed.load_printed_faces) deals a real printed deck's faces, each as one
    print run would look (vision.synth.printed.printed_face), instead of the renderer's."""
    import cv2
    import numpy as np

    from vision.synth.scenes import make_deal_video

    shots = shots_for_script(text)
    face_source = printed_tag = None
    if printed:
        from vision.synth.printed import printed_digest, printed_face
        from vision.synth.render import CardStyle

        face_rng = np.random.default_rng([seed, 7])
        style = CardStyle.sample(face_rng, split)
        printed_tag = printed_digest(printed)

        def face_source(label):
            return printed_face(printed, label, face_rng, style)
    key = hashlib.sha256(json.dumps([text, seed, split, sorted(hard_cases.items()), SETTLE_FRAMES, PRESS_GAP, FPS]
                                    + ([printed_tag] if printed_tag else [])).encode()).hexdigest()[:12]
    frames_dir = out / f"video-{key}"
    buttons_path = out / f"buttons-{key}.txt"
    done = frames_dir / "done.json"
    if done.exists() and buttons_path.exists():
        info = json.loads(done.read_text())
        log.info("using the cached deal video %s (%d frames)", frames_dir, info["frames"])
        return GameVideo(frames_dir, buttons_path, info["frames"], len(shots), info["presses"])
    landings = [shot.landing for shot in shots] if any(shot.landing for shot in shots) else None
    video = make_deal_video(np.random.default_rng(seed), [shot.label for shot in shots], deck=_deck(text),
                            fps=FPS, split=split, **hard_cases, p_repeat=0.0, landings=landings,
                            face_source=face_source)
    if len(video.events) != len(shots):
        raise RuntimeError("the deal video does not hold one placement per card")
    # After each card with buttons, pause on the last still frame before the table moves again.
    activity = sorted(note["start"] for note in video.notes)
    pause_after: dict[int, list[str]] = {}
    for event, shot in zip(video.events, shots):
        if shot.presses:
            later = [s for s in activity if s > event.frame_index]
            pause_after[(later[0] if later else len(video.frames)) - 1] = shot.presses
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
    log.info("deal video: %d frames, %d cards, %d presses in %.0f s", written, len(shots), len(lines),
             time.monotonic() - started)
    return GameVideo(frames_dir, buttons_path, written, len(shots), len(lines))


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
        return [line.split()[1] for line in text.splitlines() if line.startswith(("card ", "start ", "play ", "top "))]

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


def _megabytes(folder: Path) -> float:
    return sum(path.stat().st_size for path in folder.iterdir()) / 1e6


def main(argv: list[str] | None = None) -> int:
    from device.logs import setup_logging

    parser = argparse.ArgumentParser(prog="python -m device.demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--script", type=Path, default=DEFAULT_SCRIPT, help="the game (a table script)")
    parser.add_argument("--out", type=Path, default=REPO / "out" / "demo", help="output folder")
    # Seed 2 / train look: a video the committed model reads through end to end (some seeds are not:
    # the detector misses 1-3 placements in 200, see docs/history/flip7.md; `make evaluate` measures that).
    parser.add_argument("--seed", type=int, default=2, help="deal video seed (default 2: reads through)")
    parser.add_argument("--split", default="train", choices=("train", "heldout"),
                        help="card and table looks for the video (heldout: a print never seen in training)")
    parser.add_argument("--hard", action="store_true",
                        help="deal with the hard cases too (cards on top of others, hands passing over, "
                             "nudges): the detector still misses about 1.5%% of those placements "
                             "(docs/history/flip7.md), so a long game then rarely reads through")
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
    print(f"The deal video's frames ({_megabytes(video.frames_dir):.0f} MB) are kept in {video.frames_dir} "
          f"for the next run (rm -r {video.frames_dir} frees them).")
    if (got["totals"], got["winner"], got["rounds"]) != (want["totals"], want["winner"], want["rounds"]):
        print("MISMATCH: the device's game differs from the table script", file=sys.stderr)
        for line in card_differences(text, (state / "game.txt").read_text(encoding="utf-8")):
            print(f"  {line}", file=sys.stderr)
        return 1
    print("The device's game matches tablemate replay of the script.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
