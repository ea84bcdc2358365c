"""vision.training.train's per-deck recipes and its crops at a locator's larger quad errors (no torch needed)."""

import numpy as np
import pytest

from rules.cards import DECKS
from vision.training import dataset, train
from vision.geometry import quad_area, quad_iou
from vision.synth.scenes import card_quad


def _resolved(monkeypatch, argv):
    seen = {}
    monkeypatch.setattr(train, "train", lambda args: seen.setdefault("args", args) and 0)
    train.main(argv)
    return seen["args"]


@pytest.mark.parametrize("deck", ["flip7", "flip7-vengeance", "uno-flip"])
def test_the_default_recipe_is_the_one_the_committed_model_was_trained_with(monkeypatch, deck):
    """`python -m vision.training.train --deck DECK` makes the committed model again (its sidecar says how
    it was trained)."""
    import json

    trained = json.loads((train.MODELS_DIR / f"{deck}.json").read_text())["training"]
    args = _resolved(monkeypatch, ["--deck", deck])
    assert (args.samples, args.epochs, args.located_samples, args.seed, args.lr, args.batch) == (
        trained["samples"], trained["epochs"], trained.get("located_samples", 0), trained["seed"], trained["lr"],
        trained["batch"])
    assert trained["recipe_version"] == train.RECIPE_VERSION
    # The command as run names the same recipe (--out says only where the files were written).
    run = trained["command"].split()[3:]
    if "--out" in run:
        del run[run.index("--out"):run.index("--out") + 2]
    as_run = _resolved(monkeypatch, run)
    assert (as_run.samples, as_run.epochs, as_run.located_samples, as_run.seed) == (
        args.samples, args.epochs, args.located_samples, args.seed)


def test_a_deck_without_a_recipe_of_its_own_trains_on_the_base_recipe(monkeypatch):
    monkeypatch.delitem(train.DECK_RECIPES, "uno-flip")
    args = _resolved(monkeypatch, ["--deck", "uno-flip"])
    assert (args.samples, args.epochs, args.located_samples, args.val_samples) == (40000, 18, 0, 3000)
    assert args.printed_share == 0.5
    quick = _resolved(monkeypatch, ["--deck", "uno-flip", "--quick"])
    assert (quick.samples, quick.epochs, quick.located_samples, quick.val_samples) == (10000, 6, 0, 1000)


@pytest.mark.parametrize("deck", ["flip7", "uno-flip"])
def test_the_printed_decks_recipes_deal_a_third_printed_faces_with_located_crops(monkeypatch, deck):
    args = _resolved(monkeypatch, ["--deck", deck])
    assert (args.samples, args.epochs, args.located_samples, args.printed_share) == (40000, 18, 12000, 0.3)
    quick = _resolved(monkeypatch, ["--deck", deck, "--quick"])
    assert (quick.samples, quick.epochs, quick.located_samples, quick.printed_share) == (10000, 6, 3000, 0.3)
    assert _resolved(monkeypatch, ["--deck", deck, "--printed-share", "0.5"]).printed_share == 0.5


def test_vengeance_recipe_adds_located_crops_and_flags_override_it(monkeypatch):
    args = _resolved(monkeypatch, ["--deck", "flip7-vengeance"])
    assert (args.samples, args.epochs, args.located_samples) == (40000, 18, 16000)
    assert args.command == "python -m vision.training.train --deck flip7-vengeance"
    args = _resolved(monkeypatch, ["--deck", "flip7-vengeance", "--located-samples", "0", "--epochs", "12"])
    assert (args.samples, args.epochs, args.located_samples) == (40000, 12, 0)


def test_located_quads_stay_short_of_a_part_of_a_card():
    """Larger errors than dataset.jitter_quad, but the card stays nearly all in the crop (the
    "none" crops start at a shift of a third of a side)."""
    rng = np.random.default_rng(3)
    ious, shifts = [], []
    for _ in range(2000):
        true = card_quad(rng.uniform(200, 400, 2), rng.uniform(120, 290), rng.uniform(0, 360), 0.03, rng)
        q = dataset.located_quad(rng, true)
        ious.append(quad_iou(q, true))
        shifts.append(np.linalg.norm(q.mean(0) - true.mean(0)) / np.sqrt(quad_area(true)))
    assert min(ious) > 0.6 and np.median(ious) < 0.9      # wider than the usual jitter, never a part
    assert max(shifts) < 0.2


def test_located_samples_are_cards_and_some_none():
    samples = dataset.make_located_samples("flip7-vengeance", 60, seed=5, progress_every=10**9)
    assert samples.x.shape == (60, dataset.INPUT_H, dataset.INPUT_W, 3) and samples.x.dtype == np.uint8
    none = len(DECKS["flip7-vengeance"].labels)
    assert 0 < (samples.y == none).sum() < 30 and samples.y.max() == none
