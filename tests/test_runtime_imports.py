"""The device and the reading path never import vision.synth, vision.training or vision.evaluation:
a Pi runs without them. A child process that cannot import those three imports every runtime
module and plays a recorded game through `tablemate run`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from device.demo import expected_summary, make_game_video

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not (REPO / "models" / "flip7.onnx").exists(),
                                reason="models/flip7.onnx (the card classifier) is not built")

NOT_AT_RUN_TIME = ("vision.synth", "vision.training", "vision.evaluation")

RUNTIME_MODULES = (
    "vision.adapt", "vision.calibrate_cmd", "vision.card_templates", "vision.carried", "vision.classifier",
    "vision.classify_cmd", "vision.files", "vision.geometry", "vision.light", "vision.locate", "vision.look",
    "vision.placement", "vision.reading", "vision.scan_cmd", "vision.zone",
    "device.appliance", "device.buttons", "device.calibration", "device.camera", "device.cli", "device.config",
    "device.display", "device.gamelog", "device.games", "device.handscan", "device.logs", "device.replay_cmd",
    "device.run", "device.screens", "device.sdnotify", "device.table",
)

# Run in the child: a meta-path finder refuses the three packages and records every attempt, so an
# import that some code catches still fails the test.
CHILD = """
import importlib, json, sys

BLOCKED = {blocked!r}
attempts = []

class Refuse:
    def find_spec(self, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in BLOCKED):
            attempts.append(name)
            raise ModuleNotFoundError(f"{{name}} is not available at run time", name=name)
        return None

sys.meta_path.insert(0, Refuse())
try:
    import vision.synth.scenes
except ModuleNotFoundError:
    pass
else:
    raise SystemExit("the blocker let vision.synth.scenes through")
attempts.clear()

for name in {modules!r}:
    importlib.import_module(name)

from device.cli import main
code = main({argv!r})
print(json.dumps({{"attempts": attempts, "code": code}}), file=sys.stderr)
sys.exit(code)
"""

SCRIPT = """game flip7
players ann ben
card 5
card 9
card 12
stop
card 3
"""


def test_the_device_runs_a_recorded_game_without_synth_training_or_evaluation(tmp_path):
    video = make_game_video(SCRIPT, tmp_path / "video", seed=2, split="train",
                            p_on_top=0.0, p_pass=0.0, p_nudge=0.0)
    argv = ["run", "--game", "flip7", "--players", "ann", "ben", "--camera", f"replay:{video.frames_dir}",
            "--display", "none", "--buttons", f"script:{video.buttons_path}", "--state", str(tmp_path / "state"),
            "--json"]
    child = CHILD.format(blocked=NOT_AT_RUN_TIME, modules=RUNTIME_MODULES, argv=argv)
    done = subprocess.run([sys.executable, "-c", child], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report == {"attempts": [], "code": 0}
    summary = json.loads(done.stdout)
    summary.pop("errors")
    assert summary == expected_summary(SCRIPT)
