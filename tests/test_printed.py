"""Printed faces of a real deck in training: the face source, and the figure of record on real
material (vision.evaluation.real_eval), which needs the team's real decks beside the repo."""

from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.training.dataset import FacePool
from vision.synth.printed import load_printed_faces, printed_face
from vision.synth.render import CARD_H, CARD_W

REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "real"
needs_real = pytest.mark.skipif(not (REAL / "flip7-art").is_dir(),
                                reason=f"the real decks are not beside the repo ({REAL}): a user's clone has none")


def _scan(folder: Path, label: str, colour, size=(99, 160), alpha: bool = False) -> None:
    image = np.full((size[1], size[0], 4 if alpha else 3), 255, np.uint8)
    image[20:-20, 15:-15, :3] = colour
    cv2.putText(image, label, (20, size[1] // 2), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 0, 255), 2)
    cv2.imwrite(str(folder / f"{label}.png"), image)


def test_printed_faces_are_scaled_to_the_canvas_and_drawn_as_another_print_run(tmp_path):
    _scan(tmp_path, "7", (40, 160, 220))
    _scan(tmp_path, "+4", (30, 120, 240), alpha=True)
    faces = load_printed_faces("flip7", tmp_path)
    assert set(faces) == {"7", "+4"}
    assert faces["7"].shape == (CARD_H, CARD_W, 3) and faces["7"].dtype == np.float32
    rng = np.random.default_rng(1)
    a, b = printed_face(faces, "7", rng), printed_face(faces, "7", rng)
    assert a.shape == (CARD_H, CARD_W, 4) and a.dtype == np.uint8
    assert a[0, 0, 3] == 0 and a[CARD_H // 2, CARD_W // 2, 3] == 255   # the renderer's rounded corners
    assert not np.array_equal(a, b)                                      # each copy its own print run
    # ... but still that face: nearer its own scan than the other label's
    own = np.abs(a[..., :3].astype(np.float32) - faces["7"]).mean()
    other = np.abs(a[..., :3].astype(np.float32) - faces["+4"]).mean()
    assert own < other


def test_printed_faces_refuse_a_folder_that_is_missing_empty_or_holds_a_broken_image(tmp_path):
    with pytest.raises(ValueError, match="is not a folder"):
        load_printed_faces("flip7", tmp_path / "nothing")
    with pytest.raises(ValueError, match="holds no flip7 label's image"):
        load_printed_faces("flip7", tmp_path)
    (tmp_path / "7.png").write_bytes(b"not a png")
    with pytest.raises(ValueError, match="7.png is not a colour image"):
        load_printed_faces("flip7", tmp_path)


def test_face_pool_deals_printed_faces_at_their_share_and_is_unchanged_without_them(tmp_path):
    _scan(tmp_path, "7", (40, 160, 220))
    faces = load_printed_faces("flip7", tmp_path)
    printed = FacePool("flip7", "train", np.random.default_rng(3), printed=faces, printed_share=1.0)
    face = printed("7")
    assert np.abs(face[..., :3].astype(np.float32) - faces["7"]).mean() < 40
    # Without printed faces the pool draws exactly what it drew before they existed (old caches stay valid).
    plain = FacePool("flip7", "train", np.random.default_rng(3))
    unused = FacePool("flip7", "train", np.random.default_rng(3), printed=faces, printed_share=0.0)
    for label in ("1", "7", "freeze"):
        assert np.array_equal(plain(label), unused(label))


@needs_real
def test_real_eval_reads_held_out_captures_of_the_printed_faces(capsys):
    from vision.evaluation.real_eval import main

    assert main(["--deck", "flip7", "--real", str(REAL), "--captures", "1", "--no-photos", "--json"]) == 0
    import json

    report = json.loads(capsys.readouterr().out)
    conditions = [r["condition"] for r in report["results"]]
    assert conditions == [f"flip7 printed faces, held-out tables, {c}"
                          for c in ("out of the box", "after 1 look(s)", "after 1 look(s), without the picture check",
                                    "after 3 look(s)", "after 3 look(s), without the picture check",
                                    "out of the box at the true outline")]
    for result in report["results"]:
        assert result["read"] == 22 and result["accepted"] + result["no_card"] + result["not_sure"] == 22
