"""A real game end to end on the real printed deck: deal videos of the team's scans of the printed
Flip 7 faces (vision.synth.printed: each video one print run, on held-out tables, with stacks, hands
passing over, twins and stops), generated at test time and never kept, played by `tablemate run`
to the totals `tablemate replay` gives the same table script, out of the box and after a walk;
and the bundled UNO Flip round with the printed UNO Flip faces.

The scans are not in the repo: a clone without the real decks beside it skips these tests."""

from pathlib import Path
from types import SimpleNamespace

import pytest

from device.demo import expected_summary, make_game_video

REPO = Path(__file__).resolve().parent.parent
REAL = REPO.parent / "shared" / "real"

pytestmark = [
    pytest.mark.skipif(not (REAL / "flip7-art").is_dir(),
                       reason=f"the real decks are not beside the repo ({REAL}): a user's clone has none"),
    pytest.mark.skipif(not (REPO / "models" / "flip7.onnx").exists(),
                       reason="models/flip7.onnx (the card classifier) is not built"),
]

# A round with a twin (two 12s), a bust, two stops, and the first card of the next round.
SCRIPT = """game flip7
players ann ben cat
card 12
card 12
card 5
card 8
card +4
stop
card 8
card 3
stop
card 10
"""
# Stacks (a card landing on the one before) and hands passing over with no card, as at a table.
HARD = {"p_on_top": 0.3, "p_pass": 0.15, "p_nudge": 0.0}


@pytest.fixture(scope="module")
def printed_faces():
    from vision.synth.printed import load_printed_faces

    return load_printed_faces("flip7", REAL / "flip7-art")


def play(video, state: Path, profile: Path | None = None):
    from device import run
    from device.config import DeviceConfig

    args = SimpleNamespace(camera=f"replay:{video.frames_dir}", display="none", buttons=f"script:{video.buttons_path}",
                           state=str(state), game="flip7", players=["ann", "ben", "cat"], json=True, config=None,
                           profile=str(profile) if profile else None)
    appliance = run.build(args, DeviceConfig())
    appliance.run()
    return appliance


@pytest.mark.parametrize("seed", [2, 3])
def test_a_printed_flip7_game_reads_through_out_of_the_box(printed_faces, tmp_path, seed):
    video = make_game_video(SCRIPT, tmp_path / "video", seed=seed, split="heldout", printed=printed_faces, **HARD)
    appliance = play(video, tmp_path / "state")
    assert appliance.table.match.summary() == expected_summary(SCRIPT)
    assert appliance.stats.placements == video.cards      # every card read once: none missed, none doubled
    assert appliance.stats.unsure == 0


def test_a_printed_flip7_game_reads_through_after_a_walk(printed_faces, tmp_path):
    """The profile a walk on the user's own table gives (one capture of each card, on training
    tables), then the game on another table."""
    from vision.adapt import calibrate
    from vision.classifier import CardClassifier
    from vision.evaluation.real_eval import calibration_crops

    base = CardClassifier.load("flip7")
    profile = tmp_path / "flip7-profile.npz"
    calibrate(base, "flip7", calibration_crops("flip7", printed_faces, 1, base)).save(profile)
    video = make_game_video(SCRIPT, tmp_path / "video", seed=4, split="heldout", printed=printed_faces, **HARD)
    appliance = play(video, tmp_path / "state", profile)
    assert appliance.table.match.summary() == expected_summary(SCRIPT)
    assert appliance.stats.placements == video.cards


@pytest.mark.skipif(not (REAL / "uno-flip-art").is_dir(), reason=f"the real decks are not beside the repo ({REAL})")
def test_a_printed_uno_flip_round_reads_through_out_of_the_box(tmp_path):
    """The bundled UNO Flip round (examples/uno-flip-round.txt: the discard pile, hands laid out
    and read at the round's end) with the printed UNO Flip faces, on held-out tables."""
    from device import run
    from device.config import DeviceConfig
    from rules.script import parse_script
    from vision.synth.printed import load_printed_faces

    text = (REPO / "examples" / "uno-flip-round.txt").read_text(encoding="utf-8")
    config = parse_script(text).config
    video = make_game_video(text, tmp_path / "video", seed=2, split="heldout",
                            printed=load_printed_faces("uno-flip", REAL / "uno-flip-art"), p_pass=0.0, p_nudge=0.0)
    args = SimpleNamespace(camera=f"replay:{video.frames_dir}", display="none", buttons=f"script:{video.buttons_path}",
                           state=str(tmp_path / "state"), game=config.game, players=list(config.players), json=True,
                           config=None)
    appliance = run.build(args, DeviceConfig())
    appliance.run()
    assert appliance.table.match.summary() == expected_summary(text)
    assert appliance.stats.placements == video.cards
    assert appliance.stats.unsure == 0
