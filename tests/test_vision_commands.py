"""`tablemate classify` and `tablemate scan`: JSON shape, unreadable images, exit status."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from device.cli import main as tablemate


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    """A photo of one card on a table, a tight crop of one card, a photo of three cards apart,
    an empty table, and a file that is not an image."""
    from vision.geometry import warp_card
    from vision.synth.scenes import make_scene, make_surface

    folder = tmp_path_factory.mktemp("photos")
    rng = np.random.default_rng(12)
    one, cards = make_scene(rng, ["7"], split="heldout")
    cv2.imwrite(str(folder / "one.jpg"), one)
    cv2.imwrite(str(folder / "crop.png"), warp_card(one, cards[0].quad, size=(252, 352)))
    row, row_cards = make_scene(rng, ["3", "x2", "+4"], split="heldout")
    cv2.imwrite(str(folder / "row.png"), row)
    cv2.imwrite(str(folder / "table.png"), make_surface(rng, (640, 480), "heldout"))
    (folder / "notes.txt").write_text("not an image")
    return folder, [c.label for c in row_cards]


def run(capsys, *argv):
    status = tablemate(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_classify_prints_one_object_per_image_and_fails_only_for_unreadable_ones(capsys, photos):
    folder, _ = photos
    images = [folder / "one.jpg", folder / "notes.txt", folder / "missing.png", folder / "crop.png",
              folder / "table.png"]
    status, out, err = run(capsys, "classify", "--deck", "flip7", *map(str, images))
    lines = [json.loads(line) for line in out.splitlines()]
    assert [r["image"] for r in lines] == [str(p) for p in images]
    for r in lines:
        assert set(r) == {"image", "label", "confidence", "reason"}
        assert 0.0 <= r["confidence"] <= 1.0
        assert (r["label"] is None) != (r["reason"] is None)
    by_name = {r["image"].rsplit("/", 1)[-1]: r for r in lines}
    assert by_name["notes.txt"]["reason"].startswith("unreadable image")
    assert by_name["missing.png"]["reason"] == "unreadable image: no such file"
    assert "notes.txt" in err and "missing.png" in err
    assert by_name["table.png"]["label"] is None
    for name in ("one.jpg", "crop.png"):     # a card in a photo, and a tight crop: 7 or no guess
        assert by_name[name]["label"] in ("7", None)
        assert by_name[name]["reason"] in (None, "not sure")
    assert status == 1


def test_classify_exit_status_is_zero_when_every_image_was_read(capsys, photos):
    folder, _ = photos
    status, out, _ = run(capsys, "classify", "--deck", "flip7", str(folder / "table.png"))
    assert status == 0 and json.loads(out)["reason"] == "no card"


def test_classify_without_a_model_says_which_file_is_missing(capsys, photos, tmp_path):
    folder, _ = photos
    status, out, err = run(capsys, "classify", "--deck", "flip7", "--models-dir", str(tmp_path),
                           str(folder / "one.jpg"))
    assert status == 2 and out == "" and "flip7.onnx not found" in err


@pytest.mark.parametrize("command", ["classify", "scan", "calibrate"])
def test_an_unknown_deck_is_refused_naming_the_decks_and_a_game_name_is_its_deck(capsys, photos, command):
    """Not "chess.onnx not found (train one)": the decks there are. A Brutal table types its
    game's name, in any case: that is the Vengeance deck."""
    folder, _ = photos
    with pytest.raises(SystemExit) as refused:
        run(capsys, command, "--deck", "chess", str(folder / "one.jpg"))
    err = capsys.readouterr().err
    assert refused.value.code == 2 and "unknown deck 'chess' (known: flip7, flip7-vengeance, uno-flip)" in err
    if command == "classify":
        status, out, _ = run(capsys, "classify", "--deck", "Flip7-Vengeance-BRUTAL", str(folder / "table.png"))
        assert status == 0 and json.loads(out)["reason"] == "no card"


def test_scan_lists_cards_with_corners_and_scores_the_row(capsys, photos):
    from rules.flip7 import score_row

    folder, truth = photos
    status, out, _ = run(capsys, "scan", "--deck", "flip7", str(folder / "row.png"), "--score")
    result = json.loads(out)
    assert status == 0 and set(result) == {"cards", "score"}
    assert 1 <= len(result["cards"]) <= 3
    for card in result["cards"]:
        assert set(card) == {"label", "confidence", "reason", "corners"}
        assert len(card["corners"]) == 4 and all(len(xy) == 2 for xy in card["corners"])
        assert card["label"] in truth + [None]
    labels = [c["label"] for c in result["cards"]]
    if None in labels:
        assert result["score"] is None            # never a guessed score
    else:
        assert result["score"] == score_row(labels)


def test_scan_without_score_and_of_an_empty_table(capsys, photos):
    folder, _ = photos
    status, out, _ = run(capsys, "scan", "--deck", "flip7", str(folder / "table.png"))
    assert status == 0 and json.loads(out) == {"cards": [], "score": None}


def test_scan_of_an_unreadable_image_fails_with_a_message(capsys, photos):
    folder, _ = photos
    status, out, err = run(capsys, "scan", "--deck", "flip7", str(folder / "notes.txt"))
    assert status == 1 and out == "" and "unreadable image" in err


@pytest.mark.parametrize("deck, labels, score", [
    ("flip7", ["3", "5", "x2"], 16),                           # 3 + 5, doubled by x2
    ("flip7-vengeance", ["4", "5", "/2"], 4),                  # 4 + 5, halved, rounded down
    ("uno-flip", ["red-5", "blue-skip", "wild"], 5 + 20 + 40),  # the points of a hand left
])
def test_scan_score_of_a_known_row(capsys, tmp_path, deck, labels, score):
    """A row read in full gives the rules core's score of it, for each deck."""
    from vision.synth.scenes import make_scene

    for seed in range(6):      # the first scene whose three cards are all read
        frame, _ = make_scene(np.random.default_rng(seed), labels, deck, split="train")
        path = tmp_path / f"row{seed}.png"
        cv2.imwrite(str(path), frame)
        status, out, _ = run(capsys, "scan", "--deck", deck, str(path), "--score")
        result = json.loads(out)
        if sorted(c["label"] or "?" for c in result["cards"]) == sorted(labels):
            assert status == 0 and result["score"] == score
            return
    pytest.skip("no scene read in full by this model")


class _MaskSeesCard:
    """The card mask network (vision.card_mask.CardMask) with its outlines, but seeing a card over
    every outline it is asked about."""

    def outlines(self, photo_bgr, **options):
        from vision.card_mask import card_mask

        return card_mask().outlines(photo_bgr, **options)

    def card_share(self, photo_bgr, quads):
        return np.ones(len(quads), np.float32)


class _TornEachWayUp:
    """Stand-in for a model that, on any one crop, is torn between the card and another label
    (the other label is "none" one way up and "3" the other way up: the crop's top half darker or
    not), and names "7" only when both ways up are averaged, as the placement detector reads."""

    classes = ("7", "3", "none")

    def probabilities(self, crops):
        out = []
        for crop in crops:
            h = crop.shape[0]
            top_dark = crop[: h // 2].mean() < crop[h // 2:].mean()
            out.append([0.6, 0.0, 0.4] if top_dark else [0.6, 0.4, 0.0])
        return np.array(out, np.float32)

    def classify_batch(self, crops):         # (one crop each: what scan read before)
        return [self.decide(p) for p in self.probabilities(crops)]

    def decide(self, probs):
        from vision.classifier import NO_CARD, NOT_SURE, Prediction

        order = np.argsort(probs)[::-1]
        best, margin = int(order[0]), float(probs[order[0]] - probs[order[1]])
        if self.classes[best] == "none":
            return Prediction(None, float(probs[best]), NO_CARD)
        if margin < 0.3:
            return Prediction(None, float(probs[best]), NOT_SURE, self.classes[best])
        return Prediction(self.classes[best], float(probs[best]))


def test_scan_reads_each_card_both_ways_up_as_the_placement_detector_does(capsys, tmp_path, monkeypatch):
    """A card the model names only from both ways up averaged (as the deal's detector reads
    it) is named by scan too, not left "not sure" from a single crop."""
    import vision.adapt
    import vision.reading
    from tests.vision_fixtures import card_quad, place, surface

    face = np.full((352, 252, 4), 235, np.uint8)
    face[:120, :, :3] = 60                        # a dark band across one end
    face[:, :, 3] = 255
    photo = surface(np.random.default_rng(3), "cloth")
    place(photo, face, card_quad((320, 240), 20, 220))
    cv2.imwrite(str(tmp_path / "one.png"), photo)
    monkeypatch.setattr(vision.adapt, "load_classifier", lambda *a, **k: _TornEachWayUp())
    # The card mask network sees no card in this plain face (0.01 over it), so a 7 named at 0.6
    # would be "not sure" (vision.reading.MASK_SEES_NO_CARD); here it is told it sees a card, as
    # it does over a real one: what is tested is the reading both ways up.
    monkeypatch.setattr(vision.reading, "card_mask", lambda: _MaskSeesCard())
    status, out, _ = run(capsys, "scan", "--deck", "flip7", str(tmp_path / "one.png"), "--score")
    result = json.loads(out)
    assert status == 0 and [c["label"] for c in result["cards"]] == ["7"]
    assert result["score"] == 7


def test_a_jpeg_cut_short_is_unreadable_not_read_as_no_card(capsys, photos, tmp_path):
    """A photo copied only in part decodes with its lower part grey, and libjpeg's warning is
    all that says so: classify calls it unreadable, as it is. A whole JPEG with trailing bytes
    after its end (some cameras add them) still reads."""
    folder, _ = photos
    data = (folder / "one.jpg").read_bytes()
    cut, padded = tmp_path / "cut.jpg", tmp_path / "padded.jpg"
    cut.write_bytes(data[: len(data) // 2])
    padded.write_bytes(data + b"\x00" * 64)
    status, out, _ = run(capsys, "classify", "--deck", "flip7", str(cut), str(padded))
    cut_read, padded_read = (json.loads(line) for line in out.splitlines())
    assert cut_read["reason"].startswith("unreadable image: the JPEG file ends before its picture does")
    assert not (padded_read["reason"] or "").startswith("unreadable") and status == 1


def test_read_image_names_why_a_file_is_not_a_picture_and_turns_a_photo_upright(tmp_path):
    """Each file is read once; an empty file, a folder and a missing file each say what they are,
    and a phone photo stored sideways with an EXIF orientation comes out as it was taken."""
    from PIL import Image

    from vision.classify_cmd import read_image

    (tmp_path / "empty.jpg").write_bytes(b"")
    assert read_image(str(tmp_path / "empty.jpg")) == (None, "unreadable image: the file is empty")
    assert read_image(str(tmp_path)) == (None, "unreadable image: it is a folder")
    assert read_image(str(tmp_path / "gone.png")) == (None, "unreadable image: no such file")

    stored = np.zeros((40, 80, 3), np.uint8)
    stored[:, :20] = 255                      # stored 80 wide, a white band on the left
    picture = Image.fromarray(stored)
    exif = picture.getexif()
    exif[0x0112] = 6                          # "turn 90 degrees clockwise to show"
    picture.save(tmp_path / "sideways.jpg", exif=exif)
    image, problem = read_image(str(tmp_path / "sideways.jpg"))
    assert problem is None and image.shape == (80, 40, 3)
    assert image[:20].mean() > 200 and image[-20:].mean() < 50   # the band is now on top


def test_tiny_images_fifos_and_giant_headers_are_each_said_and_the_rest_read(capsys, photos, tmp_path):
    """Issue 52: a 1x1, 2x2 or 40000x1 picture ended classify with a cv2.error traceback before
    the other images, a FIFO named x.jpg hung it, a 60,000-square header gave OpenCV's assertion."""
    import os
    import struct
    import zlib

    folder, _ = photos
    for name, shape in (("one-pixel.png", (1, 1, 3)), ("two.png", (2, 2, 3)), ("line.png", (1, 40000, 3)),
                        ("four.png", (4, 4, 3)), ("strip.png", (8, 1000, 3)), ("thin.png", (4, 3000, 3))):
        cv2.imwrite(str(tmp_path / name), np.zeros(shape, np.uint8))
    os.mkfifo(tmp_path / "x.jpg")

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    (tmp_path / "giant.png").write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 60000, 60000,
                                         8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))
    names = ["one-pixel.png", "two.png", "line.png", "thin.png", "x.jpg", "giant.png", "four.png", "strip.png"]
    images = [str(tmp_path / name) for name in names] + [str(folder / "one.jpg")]
    status, out, err = run(capsys, "classify", "--deck", "flip7", *images)
    reasons = [json.loads(line)["reason"] for line in out.splitlines()]
    assert len(reasons) == len(images) and status == 1
    assert reasons[:4] == ["unreadable image: 1x1 pixels is too small to show a card",
                           "unreadable image: 2x2 pixels is too small to show a card",
                           "unreadable image: 40000x1 pixels is too small to show a card",
                           "unreadable image: 3000x4 pixels is too small to show a card"]
    assert reasons[4] == "unreadable image: not a file (a pipe, socket or device)"
    assert "larger than OpenCV decodes" in reasons[5] and "Traceback" not in err
    assert not any((r or "").startswith("unreadable") for r in reasons[6:])
    for name in ("two.png", "x.jpg", "giant.png", "strip.png"):
        status, out, err = run(capsys, "scan", "--deck", "flip7", str(tmp_path / name))
        assert status == (0 if name == "strip.png" else 1) and "Traceback" not in err, (name, err)
