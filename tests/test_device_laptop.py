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


def test_a_recording_refused_at_its_start_leaves_its_place_free_for_the_next(tmp_path):
    args = _replay_args(tmp_path, 5, "")
    args.out, args.display = tmp_path / "evening", "nonsense"
    with pytest.raises(ValueError, match="unknown display"):
        run.build(args, DeviceConfig(), detector=ScriptedDetector({}))
    assert not (tmp_path / "evening").exists()


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


# ---- the totals by round: the plot and the OLED's chart ------------------------------------------

def _finished_game():
    from rules.script import parse_script, replay_script

    return replay_script(parse_script((REPO / "examples" / "flip7-game.txt").read_text())).match


def test_replay_plots_the_totals_by_round(tmp_path):
    from PIL import Image

    result = subprocess.run([sys.executable, "-m", "device.cli", "replay", "examples/flip7-game.txt", "--plot",
                             str(tmp_path / "totals.png")], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    image = Image.open(tmp_path / "totals.png").convert("RGB")
    assert image.size == (900, 520)
    # each player's line is drawn in its colour (the leader's, Ann's, first)
    colours = {colour for _, colour in image.getcolors(maxcolors=1 << 20)}
    assert {(0x1F, 0x77, 0xB4), (0xD6, 0x27, 0x28), (0x2C, 0xA0, 0x2C), (0xFF, 0x7F, 0x0E)} <= colours


def test_a_plot_that_cannot_be_written_says_so(tmp_path):
    result = subprocess.run([sys.executable, "-m", "device.cli", "replay", "examples/flip7-game.txt", "--plot",
                             str(tmp_path / "no" / "such" / "totals.png")], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 2 and "cannot write the plot" in result.stderr


def test_totals_by_round_start_at_zero_leader_first():
    from device.screens import totals_by_round

    series = totals_by_round(("ann", "ben"), [{"ann": 5, "ben": 20}, {"ann": 40, "ben": 0}])
    assert series == (("ann", (0, 5, 45)), ("ben", (0, 20, 20)))


def test_the_end_of_a_game_shows_the_winners_scores_then_the_chart_in_turn(tmp_path):
    from device.screens import ChartScreen, ScoresScreen, Shown, render
    from device.table import SCORES_PAGE_SECONDS, Settings, Table

    match = _finished_game()
    table = Table(match, SimpleNamespace(keeps=True), ("ann",), Settings(3, 4), tmp_path / "settings.json")
    table.scores_since = 100.0
    pages = table.screen(100.0).pages
    shown = [table.screen(100.0 + SCORES_PAGE_SECONDS * (i + 0.5)) for i in range(2 * (pages + 1))]
    kinds = [type(s) for s in shown]
    assert kinds == ([ScoresScreen] * pages + [ChartScreen]) * 2
    assert [s.page for s in shown if isinstance(s, ScoresScreen)] == list(range(pages)) * 2
    chart = shown[pages]
    assert chart.title == f"WINNER {match.winner}" and chart.target == 200
    assert chart.series[0] == (match.winner, chart.series[0][1]) and chart.series[0][1][-1] == match.totals[match.winner]
    image = render(Shown(chart))
    assert image.size == (128, 64) and image.getbbox() is not None


# ---- the table view and the preview, without Tk ----------------------------------------------------

def test_the_table_view_shows_every_player_with_rows_totals_odds_and_the_rounds():
    from device.laptop_view import table_text
    from rules.script import parse_script, replay_script

    text = "game flip7\nplayers ann ben cat\ncard 5\ncard 9\ncard 12\ncard 3\nstop\n"
    match = replay_script(parse_script(text)).match
    view = table_text(match)
    lines = view.splitlines()
    ann, ben, cat = (next(line for line in lines if line[2:].startswith(name)) for name in ("ann", "ben", "cat"))
    assert ann.startswith(">") and ann.endswith(" 12") and ben.endswith(" 5 3")    # ann on turn; the rows
    assert "stopped" in cat and cat.endswith(" 9") and "total    0" in ben
    odds = match.state.bust_odds("ann")
    assert f"bust {odds:>4.0%}" in ann
    assert "round  dealer" in view                                        # the rounds so far


def test_bust_odds_of_any_player_are_those_they_would_have_on_turn():
    from rules.script import parse_script, replay_script

    match = replay_script(parse_script("game flip7\nplayers ann ben\ncard 5\ncard 9\n")).match
    state = match.state
    assert state.turn == "ben" and state.bust_odds("ben") == state.bust_odds()
    assert state.bust_odds("ann") == pytest.approx(8 / state.summary()["deck_left"])   # 8 of the nine 9s left


def test_the_preview_draws_the_zone_the_cards_and_each_reading_with_its_confidence():
    from device.preview import Preview, draw_preview

    frame = np.full((480, 640, 3), 60, np.uint8)
    quad = np.array([[200, 150], [300, 150], [300, 290], [200, 290]], np.float32)   # 140 px long
    card = SimpleNamespace(quad=quad, label="7")
    plain = draw_preview(frame)
    assert plain.shape == frame.shape and (plain != frame).any()       # the figures' strip
    preview = Preview()
    preview.note([SimpleNamespace(label="7", confidence=0.97, quad=quad)], t=1.0)
    with_card = preview.draw(SimpleNamespace(image=frame, t=1.5, index=9), SimpleNamespace(cards_in_zone=[card], step="idle"))
    green = (with_card[..., 1] > 180) & (with_card[..., 2] < 120)
    assert green[150, 200:300].any() and green[290, 200:300].any()      # the outline
    yellow = (with_card[..., 2] > 200) & (with_card[..., 1] > 180) & (with_card[..., 0] < 60)
    assert yellow.any()                                                  # the A5 zone at the cards' scale
    preview.note([SimpleNamespace(reason="not sure", quad=quad + 200)], t=9.0)
    later = preview.draw(SimpleNamespace(image=frame, t=9.0, index=99), SimpleNamespace(cards_in_zone=[], step="idle"))
    red = (later[..., 2] > 200) & (later[..., 1] < 100)
    assert red.any() and len(preview.readings) == 1                      # the old reading has gone


def test_setup_figures_say_what_to_change():
    from device.preview import setup_figures

    frame = np.full((480, 640, 3), 120, np.uint8)
    assert "lower it" in setup_figures(frame, 100)[0]
    assert "raise it" in setup_figures(frame, 300)[0]
    assert ": ok" in setup_figures(frame, 180)[0]
    frame[:100] = 255
    assert "glare" in setup_figures(frame, 180)[2]
    assert "too dark" in setup_figures(np.zeros_like(frame), 180)[2]


def test_preview_pictures_are_saved_for_a_bug_report(tmp_path):
    args = _replay_args(tmp_path, 40, "")
    args.preview_dir = tmp_path / "preview"
    run.build(args, DeviceConfig(), detector=ScriptedDetector({5: "3"})).run()
    saved = sorted(p.name for p in (tmp_path / "preview").glob("*.jpg"))
    # the first frame, the frame of the reading (5), and one a second of the replay (15 fps)
    assert saved[:2] == ["000000.jpg", "000005.jpg"] and "000020.jpg" in saved
