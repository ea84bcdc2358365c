"""vision.evaluation.real_eval's photo part on a folder laid out as the team's real decks: a photo
that is the very file calibrated from is not read again, the sessions of one physical deck give a
figure of their own, and a set with more photos of each card than the looks is read on its others."""

from __future__ import annotations

import json
import shutil

import cv2
import numpy as np

from vision.geometry import CANON_H, CANON_W

LABELS = ("red-3", "blue-8")


def faces(seed: int) -> dict:
    from vision.synth.render import render_card

    rng = np.random.default_rng(seed)
    return {label: cv2.resize(np.ascontiguousarray(render_card("uno-flip", label, rng)[..., 2::-1]),
                              (CANON_W, CANON_H), interpolation=cv2.INTER_AREA) for label in LABELS}


def photo_set(root, name: str, photos: dict) -> None:
    """REAL/uno-photos/NAME/ with a manifest: photos {file name: (label, image or a file to copy)}."""
    folder = root / "uno-photos" / name
    folder.mkdir(parents=True)
    for file, (label, image) in photos.items():
        if isinstance(image, np.ndarray):
            cv2.imwrite(str(folder / file), image)
        else:
            shutil.copyfile(image, folder / file)
    (folder / "manifest.json").write_text(json.dumps({file: label for file, (label, _) in photos.items()}))


def test_photos_of_one_file_are_read_once_and_one_decks_sessions_have_their_own_figure(tmp_path):
    from vision.classifier import CardClassifier
    from vision.evaluation.real_eval import read_photos

    first, second = faces(1), faces(2)
    photo_set(tmp_path, "nuno-set1", {"r3.png": ("red-3", first["red-3"]), "b8.png": ("blue-8", first["blue-8"])})
    copied = tmp_path / "uno-photos" / "nuno-set1" / "b8.png"
    photo_set(tmp_path, "nuno-set2", {"r3.png": ("red-3", second["red-3"]), "b8.png": ("blue-8", copied)})
    photo_set(tmp_path, "other", {f"{label}-{k}.png": (label, images[label])
                                  for k, images in enumerate((faces(3), faces(4))) for label in LABELS})
    rows = []
    results = read_photos(tmp_path, CardClassifier.load("uno-flip"), None, looks_list=(1,), rows_out=rows)
    by_condition = {r["condition"]: r for r in results}
    from_set1 = by_condition["photos, calibrated from nuno-set1 (1 look(s)), reading the other sets"]
    assert from_set1["skipped_same_file"] == 1 and from_set1["read"] == 1 + 4     # nuno-set2's red 3, and `other`
    one_deck = [r for c, r in by_condition.items() if c.startswith("photos of one deck") and "without" not in c]
    assert len(one_deck) == 1 and one_deck[0]["read"] == 2                 # each session's red 3 by the other's
    own = by_condition["photos of other, calibrated from its first 1 photo(s) of each card, its others read"]
    assert own["read"] == 2
    # Every reading is given to rows_out: the device's and the look network's alone.
    read_of = [r for r in rows if r["condition"] == "nuno-set1 (1 look(s))"]
    assert sorted((r["set"], r["truth"]) for r in read_of) == [("nuno-set2", "red-3")] + [("other", lab) for lab in
                                                                                          sorted(LABELS * 2)]
    assert all(set(r) == {"condition", "set", "photo", "truth", "read", "reason"} for r in rows)
