"""The committed models of every deck: they load through the runtime classifier, match their
decks, are small, and read held-out crops they were never trained on."""

import json
from pathlib import Path

import numpy as np
import pytest

from rules.cards import DECKS

MODELS = Path(__file__).resolve().parent.parent / "models"
DECK_IDS = ("flip7", "flip7-vengeance", "uno-flip")
# held-out crops per deck: (how many, their seed)
HELD_OUT = {"flip7": (360, 424242), "flip7-vengeance": (400, 515151), "uno-flip": (400, 515151)}


@pytest.mark.parametrize("deck", DECK_IDS)
def test_sidecar_matches_the_deck_and_carries_held_out_figures(deck):
    sidecar = json.loads((MODELS / f"{deck}.json").read_text())
    assert sidecar["deck"] == deck
    assert sidecar["classes"] == list(DECKS[deck].labels) + ["none"]
    assert sidecar["none_class"] == "none"
    assert sidecar["input"]["channel_order"] == "rgb"
    assert len(sidecar["normalize"]["mean"]) == len(sidecar["normalize"]["std"]) == 3
    assert 0 < sidecar["reject"]["min_confidence"] <= 1 and 0 <= sidecar["reject"]["min_margin"] < 1
    assert sidecar["metrics"]["split"] == "heldout"    # thresholds were tuned by vision.evaluation.evaluate


@pytest.mark.parametrize("deck", DECK_IDS)
def test_models_read_at_half_the_canonical_warp_with_one_scale_for_every_channel(deck):
    """The reading's cheap path (models/flip7.md, "Size and speed"): the area resize of a warped card to
    exactly half its size averages 2 x 2 blocks, and one std for every channel lets the
    normalisation be one OpenCV call. A model at another size would read right, only slower."""
    from vision.training.dataset import INPUT_H, INPUT_W
    from vision.geometry import CANON_H, CANON_W

    sidecar = json.loads((MODELS / f"{deck}.json").read_text())
    assert (sidecar["input"]["width"], sidecar["input"]["height"]) == (CANON_W // 2, CANON_H // 2) == (INPUT_W, INPUT_H)
    assert len(set(sidecar["normalize"]["std"])) == 1


@pytest.mark.parametrize("deck", DECK_IDS)
def test_onnx_model_is_small_with_named_dynamic_batch_io(deck):
    import onnxruntime as ort

    sidecar = json.loads((MODELS / f"{deck}.json").read_text())
    path = MODELS / f"{deck}.onnx"
    assert path.stat().st_size < 1_000_000
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (inp,) = sess.get_inputs()
    # "logits" (older models also have an unused "embedding" output, the feature map calibration once read)
    assert inp.name == "crop" and [o.name for o in sess.get_outputs()][:1] == ["logits"]
    h, w = sidecar["input"]["height"], sidecar["input"]["width"]
    assert inp.shape[1:] == [3, h, w]
    assert sess.run(["logits"], {"crop": np.zeros((2, 3, h, w), np.float32)})[0].shape == (2, len(sidecar["classes"]))


@pytest.mark.parametrize("deck", DECK_IDS)
def test_model_reads_held_out_crops(deck):
    """Crops with the held-out fonts and table textures and a seed of their own, through the
    runtime classifier and its reject option."""
    from vision.classifier import CardClassifier
    from vision.training.dataset import class_names, make_samples

    names = class_names(deck)
    count, seed = HELD_OUT[deck]
    samples = make_samples(deck, count, seed=seed, split="heldout", faces_per_label=2, progress_every=10**9)
    preds = CardClassifier.load(deck).classify_batch(list(samples.x))
    is_card = samples.y != names.index("none")
    accepted = np.array([p.label is not None for p in preds])
    labels = np.array([p.label or "" for p in preds])
    truth = np.array([names[i] for i in samples.y])
    acc_cards = accepted & is_card
    accuracy = (labels[acc_cards] == truth[acc_cards]).mean()
    reject_rate = 1 - acc_cards.sum() / is_card.sum()
    assert accuracy >= 0.98, f"accuracy among accepted held-out cards {accuracy:.3f}"
    assert reject_rate <= 0.15, f"held-out cards rejected {reject_rate:.3f}"
    assert (~accepted[~is_card]).mean() >= 0.9      # not-a-card crops are turned away, not guessed


@pytest.mark.parametrize("deck,label", [("flip7-vengeance", "unlucky-7"), ("uno-flip", "pink-9")])
def test_classify_command_loads_the_deck_model(deck, label, tmp_path, capsys):
    """`tablemate classify --deck DECK IMAGE` on a photo of one card lying on a plain table."""
    import cv2

    from device.cli import main
    from vision.synth.render import CardStyle, render_card

    rng = np.random.default_rng(77)
    face = render_card(deck, label, rng, CardStyle.sample(rng, "heldout")).astype(np.float32)
    photo = np.full((480, 400, 3), 96.0, np.float32)
    alpha = face[..., 3:] / 255
    h, w = face.shape[:2]
    photo[60:60 + h, 70:70 + w] = face[..., :3] * alpha + photo[60:60 + h, 70:70 + w] * (1 - alpha)
    path = tmp_path / "card.png"
    cv2.imwrite(str(path), cv2.cvtColor(photo.astype(np.uint8), cv2.COLOR_RGB2BGR))
    assert main(["classify", "--deck", deck, str(path)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["label"] == label, result
