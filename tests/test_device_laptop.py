"""A laptop's tools: recording one's own table for replay, the plot of the totals by round, the
OLED's chart at the end of a game, the table view and the camera preview (no Tk needed)."""

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from device import run
from device.config import DeviceConfig
from test_device_loop import ScriptedDetector, _replay_args

REPO = Path(__file__).resolve().parent.parent
CARDS = {2: "3", 4: "5", 6: "7", 8: "freeze", 20: "9", 30: "2"}
PRESSES = "10 next\n11 ok\n12 ok\n24 back\n25 ok\n32 ok\n"


def test_a_recorded_table_replays_to_the_same_game(tmp_path):
    args = _replay_args(tmp_path, 40, PRESSES)
    args.out = tmp_path / "evening"
    played = run.build(args, DeviceConfig(), detector=ScriptedDetector(CARDS))
    played.run()
    frames = sorted((tmp_path / "evening").glob("*.jpg"))
    assert len(frames) == 40
    recorded = (tmp_path / "evening" / "buttons.txt").read_text()
    assert [line for line in recorded.splitlines() if not line.startswith("#")] == PRESSES.splitlines()
    game = (tmp_path / "state" / "game.txt").read_text()
    replay_args = SimpleNamespace(**{**vars(args), "out": None, "camera": f"replay:{tmp_path / 'evening'}",
                                     "buttons": f"script:{tmp_path / 'evening' / 'buttons.txt'}",
                                     "state": str(tmp_path / "replayed"), "display": "none"})
    replayed = run.build(replay_args, DeviceConfig(), detector=ScriptedDetector(CARDS))
    replayed.run()
    assert (tmp_path / "replayed" / "game.txt").read_text() == game
    assert "card 2" in game and "undo" in game


def test_a_recording_never_writes_over_one(tmp_path):
    from device.record_cmd import Recorder

    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "000000.jpg").write_bytes(b"a frame")
    with pytest.raises(ValueError, match="not an empty folder"):
        Recorder(tmp_path / "old", 15)
    (tmp_path / "old.mp4").write_bytes(b"a video")
    with pytest.raises(ValueError, match="exists"):
        Recorder(tmp_path / "old.mp4", 15)


def test_a_recording_to_a_video_has_its_presses_beside_it(tmp_path):
    args = _replay_args(tmp_path, 12, "3 ok\n")
    args.out = tmp_path / "evening.avi"
    run.build(args, DeviceConfig(), detector=ScriptedDetector({})).run()
    import cv2

    video = cv2.VideoCapture(str(tmp_path / "evening.avi"))
    assert int(video.get(cv2.CAP_PROP_FRAME_COUNT)) == 12
    assert (tmp_path / "evening.buttons.txt").read_text().splitlines()[-1] == "3 ok"


def test_record_resuming_a_kept_game_saves_it_beside_the_recording(tmp_path):
    args = _replay_args(tmp_path, 10, "")
    run.build(args, DeviceConfig(), detector=ScriptedDetector({2: "3"})).run()
    args.out = tmp_path / "evening"
    run.build(args, DeviceConfig(), detector=ScriptedDetector({})).run()
    assert (tmp_path / "evening" / "game-at-start.txt").read_text().splitlines()[-1] == "card 3"


def test_record_explains_itself():
    help_text = subprocess.run([sys.executable, "-m", "device.cli", "record", "--help"], cwd=REPO,
                               capture_output=True, text=True, check=True).stdout
    assert "--out DIR_OR_VIDEO" in help_text and "--camera" in help_text
