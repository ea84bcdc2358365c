"""The committed flip7 model: it loads, matches the deck, is small, and reads held-out crops."""

import json
from pathlib import Path

import numpy as np
import pytest

from rules.cards import DECKS

MODELS = Path(__file__).resolve().parent.parent / "models"


@pytest.fixture(scope="module")
def sidecar():
    return json.loads((MODELS / "flip7.json").read_text())


def test_sidecar_matches_the_deck_and_the_runtime_contract(sidecar):
    assert sidecar["deck"] == "flip7"
    assert sidecar["classes"] == list(DECKS["flip7"].labels) + ["none"]
    assert sidecar["none_class"] == "none"
    assert sidecar["input"]["channel_order"] == "rgb"
    assert len(sidecar["normalize"]["mean"]) == len(sidecar["normalize"]["std"]) == 3
    assert 0 < sidecar["reject"]["min_confidence"] <= 1 and 0 <= sidecar["reject"]["min_margin"] < 1


def test_onnx_model_is_small_with_named_dynamic_batch_io(sidecar):
    import onnxruntime as ort

    path = MODELS / "flip7.onnx"
    assert path.stat().st_size < 1_000_000
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (inp,) = sess.get_inputs()
    assert inp.name == "crop" and sess.get_outputs()[0].name == "logits"  # (+ "embedding", vision.embedding)
    assert inp.shape[1:] == [3, sidecar["input"]["height"], sidecar["input"]["width"]]
    x = np.zeros((3, 3, sidecar["input"]["height"], sidecar["input"]["width"]), np.float32)
    assert sess.run(["logits"], {"crop": x})[0].shape == (3, len(sidecar["classes"]))


def test_model_reads_held_out_crops():
    """Crops generated with the held-out fonts and table textures (never seen in training) and a
    seed of their own, through the runtime classifier and its reject option."""
    from vision.classifier import CardClassifier
    from vision.dataset import class_names, make_samples

    names = class_names("flip7")
    samples = make_samples("flip7", 360, seed=424242, split="heldout", faces_per_label=2, progress_every=10**9)
    preds = CardClassifier.load("flip7").classify_batch(list(samples.x))
    is_card = samples.y != names.index("none")
    accepted = np.array([p.label is not None for p in preds])
    labels = np.array([p.label or "" for p in preds])
    truth = np.array([names[i] for i in samples.y])
    acc_cards = accepted & is_card
    accuracy = (labels[acc_cards] == truth[acc_cards]).mean()
    reject_rate = 1 - acc_cards.sum() / is_card.sum()
    assert accuracy >= 0.98, f"accuracy among accepted held-out cards {accuracy:.3f}"
    assert reject_rate <= 0.15, f"held-out cards rejected {reject_rate:.3f}"
    # Not-a-card crops are turned away, not guessed.
    assert (~accepted[~is_card]).mean() >= 0.9


def test_event_matching_counts_missed_doubled_and_wrong():
    from vision.evaluate import match_events
    from vision.placement import Placement
    from vision.synth import TrueEvent

    truth = [TrueEvent(10, "3"), TrueEvent(50, "7"), TrueEvent(90, "3"), TrueEvent(130, "x2")]
    quad = np.zeros((4, 2), np.float32)
    detected = [Placement("3", 0.99, quad, 14),                     # ok
                Placement("7", 0.99, quad, 55), Placement("7", 0.9, quad, 60),   # doubled
                Placement("5", 0.99, quad, 95)]                     # wrong; x2 missed
    r = match_events(truth, detected, fps=15)
    assert (r["missed"], r["doubled"], r["wrong"]) == (1, 1, 1)
