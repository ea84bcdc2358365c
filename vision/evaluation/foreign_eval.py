"""How well a deck's classifier reads a deck it never saw, before and after calibration.

    python -m vision.evaluation.foreign_eval --deck flip7 --printings 24   # the figures of models/calibration.md
    python -m vision.evaluation.foreign_eval --tune flip7 flip7-vengeance uno-flip --printings 40 --test-per-label 6 --per-deck --bound 0.05
                                                          # choose vision.adapt.DECK_PARAMS
    python -m vision.evaluation.foreign_eval --deck flip7 --printings 12 --seed 536 --json > r536.json
    python -m vision.evaluation.foreign_eval --pool r524.json r536.json   # runs pooled: the reading over all their printings

What is measured and tuned is the look network's reading of a profile (vision.adapt's
CalibratedClassifier with picture_check=False: the scores CalibrationParams weigh), not the
templates a version 6 profile reads by first (vision.card_templates: chosen on real photos,
`python -m vision.evaluation.real_eval`).

Cards are drawn by vision.synth.render_foreign (printings unlike anything vision.synth.render draws: other
layouts, palettes, stroke fonts) and captured by the scene synthesiser (vision.synth.scenes.make_scene:
tables, light, blur, glare, noise, fingers) on held-out table surfaces, then cut as the runtime
cuts them (the true quad with a locator's error, warped by vision.geometry.warp_card).

For each foreign printing:
* calibration crops: one card per scene, as the device's calibration walk shows them, 3 scenes
  per label; "1 sample" uses the first of them, "3 samples" all three;
* test crops: other scenes (other seeds) of 1-3 cards, `--test-per-label` crops per label, and
  "none" crops cut from the same scenes (table, part of a card, a quad far too big or small);
* "unseen label": the 3-sample profile without one label's samples, read on that label's test
  crops: the share named as another label must stay near 0 (the trained model alone may name
  them right, as far as it reads the deck: vision.adapt).

Reported, per condition: accuracy among accepted cards, cards rejected, none crops accepted as a
card; each for one crop, for the crop read both ways up (the crop and the crop turned half round,
their probabilities averaged), and as the device reads a card (vision.reading.read_cards: both
ways up, and a card it is not sure of read again at nearby outlines of its frame: "second look");
for the device's reading also the 5-95 % range of its accuracy and refusals over a bootstrap of
whole printings (printing_spread).
Read both ways up, also where the failures gather (the labels of a printing most often not read
right: failing_labels) and the fewest cards any thresholds must refuse for 99 % and 99.5 % among
the rest (refusal_floor). --tune runs the same capture on other printings of each deck named (seed + 1000 on: foreign
ones and two of the training family in held-out fonts) and grid-searches CalibrationParams (the
colour's and the ink's weights only for a deck whose colours tell its cards apart: UNO Flip;
the grid's weight sets read in as many processes as there are cores), one set for every deck named
(with --per-deck, one set for each: vision.adapt.DECK_PARAMS); it prints the best and does not
write anything. A deck's failures come one label of one printing at a time, so the
tuner's accuracy is asked with a margin for printings it has not seen: --bound Q asks the targets
at quantile Q of a bootstrap over whole tuning printings (accuracy_bound), --tune-accuracy a fixed
higher accuracy. Of the sets that meet the targets it keeps the one refusing fewest cards, or with
--refusal-budget R the one reading most accurately (at the bound) among those refusing at most R.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import sys
import time
from dataclasses import dataclass
from typing import NamedTuple

log = logging.getLogger(__name__)

TARGETS = {1: (0.99, 0.03), 3: (0.995, None)}  # samples -> (accuracy among accepted, max rejected)
# --tune: calibration may read the training family no more than this below the trained model alone
# (the model alone reads the family's tuning printings 100 % right among accepted: asking as much
# of 264 cards per deck set the thresholds to refuse 72 % of UNO Flip's foreign cards, docs/history/calibration.md)
FAMILY_TOLERANCE = 0.005
# The model's vote weights the tuner tries. Not 16: times the agreement bound of a profile of one
# card the model happened to read (0.34), that switched a foreign deck's vote on and named its
# other cards wrongly (tests/test_calibrate.py, "one lucky card").
MODEL_WEIGHTS = (1.0, 2.0, 4.0, 8.0)
# --tune: one-card profiles of a label the model happened to read, per foreign tuning printing
# (one_card_cases); a set that lets one of them name more cards wrongly than the model alone loses.
ONE_CARD_CASES = 2
# The colour's weight (CalibrationParams.colour_weight) the tuner tries for a deck whose cards'
# colours are part of what they are (rules.cards.Deck.colours); 0 for the others.
# (0, 0.25, 0.5, 0.75, 1 until the inks came: it never chose more than 0.5.)
COLOUR_WEIGHTS = (0.0, 0.25, 0.5)
# The ink's weight (CalibrationParams.ink_weight) it tries for such a deck (0 for the others): a
# throwaway sweep on UNO Flip's cached tuning crops found 0.2-0.35 alike, 0.1 and 1 worse.
INK_WEIGHTS = (0.0, 0.25, 0.5)
# --tune: the temperatures tried
TEMPERATURES = (0.02, 0.03, 0.05, 0.065, 0.08, 0.1, 0.12, 0.15)
# --tune --bound Q: bootstrap resamples of the foreign tuning printings (accuracy_bound)
BOOTSTRAP_RESAMPLES = 1000


@dataclass
class Capture:
    crops: list            # BGR canonical crops
    y: object              # np.ndarray of int: label index, -1 for a "none" crop
    frames: list           # the scenes the crops were cut from (BGR)
    where: list            # per crop: (index into frames, the quad it was cut at)


def capture_printing(deck: str, printing_seed: int, calib_per_label: int, test_per_label: int,
                     style: str = "foreign"):
    """(calibration captures per label: dict label -> list of crops, test Capture) of one printing:
    a foreign one (vision.synth.render_foreign), or with style="heldout" one of the training renderer's
    family in its held-out fonts (the control: a print the trained classifier reads)."""
    import numpy as np

    from rules.cards import DECKS
    from vision.training.dataset import _none_quads, jitter_quad
    from vision.geometry import warp_card
    from vision.synth.render import CardStyle, render_card
    from vision.synth.render_foreign import ForeignStyle, foreign_faces
    from vision.synth.scenes import make_scene

    labels = DECKS[deck].labels
    if style == "foreign":
        printing = ForeignStyle.sample(np.random.default_rng(printing_seed))
        face_source = foreign_faces
    else:
        printing = CardStyle.sample(np.random.default_rng(printing_seed), "heldout")
        face_source = lambda deck, rng, style: (lambda label: render_card(deck, label, rng, style))  # noqa: E731
    calib_rng = np.random.default_rng([printing_seed, 1])
    faces = face_source(deck, calib_rng, printing)
    calibration = {label: [] for label in labels}
    for label in labels:
        for _ in range(calib_per_label):
            frame, cards = make_scene(calib_rng, [label], deck, size=(400, 300), split="heldout", faces=faces,
                                      card_size=(110, 200))
            calibration[label].append(warp_card(frame, jitter_quad(calib_rng, cards[0].quad)))
    test_rng = np.random.default_rng([printing_seed, 2])
    faces = face_source(deck, test_rng, printing)
    queue = [labels[i] for i in test_rng.permutation(np.repeat(np.arange(len(labels)), test_per_label))]
    crops, y, frames, where = [], [], [], []
    while queue:
        k = min(len(queue), int(test_rng.choice([1, 2, 3])))
        picked, queue = queue[:k], queue[k:]
        small = test_rng.random() < 0.5
        frame, cards = make_scene(test_rng, picked, deck, size=(400, 300) if small else (640, 480),
                                  split="heldout", faces=faces, card_size=(85, 180) if small else (120, 290))
        frames.append(frame)
        for card in cards:
            quad = jitter_quad(test_rng, card.quad)
            crops.append(warp_card(frame, quad))
            y.append(labels.index(card.label))
            where.append((len(frames) - 1, quad))
        if test_rng.random() < 0.5:
            for quad in _none_quads(test_rng, frame.shape, cards):
                crops.append(warp_card(frame, quad))
                y.append(-1)
                where.append((len(frames) - 1, quad))
    return calibration, Capture(crops, np.array(y), frames, where)


def reading_stats(pred, y) -> dict:
    """pred: label index or -1 (rejected / no card) per crop; y: truth (-1 = none crop)."""
    cards = y >= 0
    accepted = cards & (pred >= 0)
    n_acc = int(accepted.sum())
    return {"cards": int(cards.sum()), "accuracy_accepted": float((pred[accepted] == y[accepted]).mean()) if n_acc else 0.0,
            "rejected": 1 - n_acc / max(1, int(cards.sum())),
            "none_crops": int((~cards).sum()),
            "none_accepted": float((pred[~cards] >= 0).mean()) if (~cards).any() else 0.0}


def confusions(parts, labels, top: int = 8) -> list[str]:
    """The most frequent wrong readings among accepted cards, "TRUE -> READ (printing SEED): N",
    from (predictions, truth, printing seed) per printing: which cards of which printing a reading
    mixes up, the first thing to look at when the accuracy falls."""
    from collections import Counter

    counts = Counter()
    for pred, y, printing in parts:
        for p, t in zip(pred, y):
            if t >= 0 and p >= 0 and p != t:
                counts[(labels[t], labels[p], printing)] += 1
    return [f"{t} -> {p} (printing {s}): {n}" for (t, p, s), n in counts.most_common(top)]


def failing_labels(parts, labels, top: int = 8) -> list[str]:
    """The cards most often not read right (refused or read wrongly), each label of each printing
    apart, "LABEL (printing SEED): K of N", from (predictions, truth, printing seed) per printing:
    failures that gather on one label of one printing point to that label's calibration sample."""
    from collections import Counter

    failed, shown = Counter(), Counter()
    for pred, y, printing in parts:
        for p, t in zip(pred, y):
            if t >= 0:
                shown[(labels[t], printing)] += 1
                failed[(labels[t], printing)] += int(p != t)
    return [f"{label} (printing {s}): {n} of {shown[(label, s)]}" for (label, s), n in failed.most_common(top) if n]


def refusal_floor(confidence, margin, top1, y, accuracy: float) -> float:
    """The fewest card crops (a share) the reject rule must refuse for `accuracy` among the rest,
    whatever its two thresholds, chosen on these very crops: a floor no setting gets under on them.
    Per crop: `confidence` (the best probability), `margin` (best minus second), `top1` (the label
    it leans to, -1 for none) and `y` (the truth). A crop leaning to none is refused whatever the
    thresholds (the rule names no card there). The rule keeps a crop when its confidence and its
    margin both reach their thresholds; a confidence threshold worth trying lies just above a
    wrong crop's confidence (0 or any other only refuses more right ones), and for each the
    margin threshold is swept."""
    import numpy as np

    card = top1 >= 0
    confidence, margin, right = confidence[card], margin[card], (top1 == y)[card]
    best = len(right)
    for least in np.concatenate([[-np.inf], np.unique(confidence[~right])]):
        kept = confidence > least if np.isfinite(least) else np.ones(len(right), bool)
        ranked = right[kept][np.argsort(margin[kept], kind="stable")]
        kept_right = np.cumsum(ranked[::-1])[::-1]            # right among the crops from i on
        ok = np.flatnonzero(kept_right >= accuracy * np.arange(len(ranked), 0, -1))
        best = min(best, (~kept).sum() + (ok[0] if len(ok) else len(ranked)))
    return float(((~card).sum() + best) / len(top1)) if len(top1) else 0.0


def printing_resamples(printings: int, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0):
    """(resamples, printings) counts: how often each tuning printing is drawn in each bootstrap
    resample of the printings (drawn whole, with replacement; a fixed seed, so the tuner is
    repeatable)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return rng.multinomial(printings, np.full(printings, 1.0 / printings), size=resamples)


def resampled_share(hits, among, printing, resamples, empty: float):
    """Per bootstrap resample of whole printings (`resamples`: printing_resamples; `printing`: each
    crop's printing index), the share of `hits` among the crops marked `among`; `empty` where a
    resample draws none of them."""
    import numpy as np

    count = resamples.shape[1]
    hit = np.bincount(printing[among], weights=hits[among], minlength=count)
    drawn = resamples @ np.bincount(printing[among], minlength=count).astype(float)
    return np.where(drawn > 0, (resamples @ hit) / np.maximum(drawn, 1.0), empty)


def accuracy_bound(named, y, printing, resamples, quantile: float) -> float:
    """The `quantile` (e.g. 0.05) of the accuracy among accepted card crops over bootstrap
    resamples of whole printings (resampled_share). A deck's failures come in clusters, one label
    of one printing, so the cards of one printing are not independent draws and the printings are
    what is resampled. `named` is the label the reject rule names per crop (-1: none), `y` the
    truth (-1: a none crop); a resample with no card accepted reads 1."""
    import numpy as np

    accepted = (y >= 0) & (named >= 0)
    return float(np.quantile(resampled_share(named == y, accepted, printing, resamples, 1.0), quantile))


def printing_spread(named, y, printing, printings: int, quantiles=(0.05, 0.95)) -> dict:
    """How far a reading's figures move from one draw of printings to another: the `quantiles` of
    the accuracy among accepted and of the share of cards rejected over bootstrap resamples of
    whole printings (printing_resamples; `printing`: each crop's printing index)."""
    import numpy as np

    resamples = printing_resamples(printings)
    rejected = resampled_share(named < 0, y >= 0, printing, resamples, 0.0)
    return {"accuracy_accepted": [accuracy_bound(named, y, printing, resamples, q) for q in quantiles],
            "rejected": [float(np.quantile(rejected, q)) for q in quantiles]}


def _predictions(classifier, probs, label_of_class):
    import numpy as np

    return np.array([label_of_class.get(p.label, -1) for p in map(classifier.decide, probs)])


def _model_both_ways(base, logits, turned_logits):
    """The trained model's probabilities of crops read both ways up (vision.reading), from the
    logits of the crops and of the crops turned half round."""
    return (base.probabilities_from_logits(logits) + base.probabilities_from_logits(turned_logits)) / 2


def _device_predictions(classifier, both_ways_probs, test: Capture, label_of_class):
    """Label index or -1 per crop, as the device reads the card: its probabilities both ways up
    (`both_ways_probs`), and where they leave the classifier not sure, a second look at nearby
    outlines of the crop's frame (vision.reading.read_again)."""
    import numpy as np

    from vision.classifier import NOT_SURE
    from vision.reading import read_again

    out = []
    for probs, (frame_index, quad) in zip(both_ways_probs, test.where):
        prediction = classifier.decide(probs)
        if prediction.reason == NOT_SURE:
            prediction = read_again(classifier, test.frames[frame_index], quad, prediction)
        out.append(label_of_class.get(prediction.label, -1))
    return np.array(out)


def load_look(base, look_model=None):
    """The look model at look_model (a folder holding card-look.onnx and its sidecar, or that
    .onnx file), else the one beside the deck's classifier."""
    from pathlib import Path

    from vision.adapt import look_model_for
    from vision.look import LOOK_MODEL, LookModel

    if look_model is None:
        return look_model_for(base)
    path = Path(look_model)
    if path.suffix == ".onnx":
        if path.stem != LOOK_MODEL:
            raise ValueError(f"--look-model: the file must be named {LOOK_MODEL}.onnx (beside {LOOK_MODEL}.json)")
        path = path.parent
    return LookModel.load(path)


def _nearest(calibrated, embeddings, y):
    """Top-1 nearest-sample labels of the card crops (no reject rule, no model vote), and their truth."""
    return calibrated.similarities(embeddings[y >= 0]).nearest.argmax(1), y[y >= 0]


def evaluate_deck(deck: str, models_dir, seed: int, printings: int, test_per_label: int,
                  style: str = "foreign", look_model=None, params=None) -> dict:
    """The report of the module docstring; `params` (CalibrationParams) replaces the profiles'
    scoring parameters (to measure another choice without changing the code's defaults)."""
    import numpy as np

    from vision.adapt import CalibratedClassifier, calibrate, describe, ink_signatures, params_for
    from vision.classifier import CardClassifier
    from vision.geometry import turned_half_round

    base = CardClassifier.load(deck, models_dir)
    look = load_look(base, look_model)
    label_of_class = {lab: i for i, lab in enumerate(base.labels)}
    label_of_each_class = class_maps_for(base)[2]
    conditions = {"before": [], "1 sample": [], "3 samples": [], "unseen label": [],
                  # The same cards both ways up (vision.reading.read_probabilities): the crop and
                  # the crop turned half round, their probabilities averaged ...
                  "before, both ways": [], "1 sample, both ways": [], "3 samples, both ways": [],
                  # ... and a card it is not sure of read again at nearby outlines of its frame
                  # (vision.reading.read_again): the whole of the device's reading of one frame.
                  "before, second look": [], "1 sample, second look": [], "3 samples, second look": []}
    nearest = {1: [], 3: []}
    ranked = {1: [], 3: []}   # (confidence, margin, top-1 label or -1, truth) of the card crops read both ways up
    agreement = {1: [], 3: []}  # the profiles' model agreement (vision.adapt), per printing
    t_calib = []
    for p in range(printings):
        t0 = time.perf_counter()
        calibration, test = capture_printing(deck, seed + p, 3, test_per_label, style)
        log.info("%s printing %d/%d: %d test crops captured in %.0f s", deck, p + 1, printings, len(test.crops),
                 time.perf_counter() - t0)
        turned = [turned_half_round(c) for c in test.crops]
        logits, embeddings = describe(base, look, test.crops)
        turned_logits, turned_embeddings = describe(base, look, turned)
        inks, turned_inks = ink_signatures(test.crops), ink_signatures(turned)
        alone = base.probabilities_from_logits(logits)
        conditions["before"].append((_predictions(base, alone, label_of_class), test.y, seed + p))
        both = _model_both_ways(base, logits, turned_logits)
        conditions["before, both ways"].append((_predictions(base, both, label_of_class), test.y, seed + p))
        conditions["before, second look"].append((_device_predictions(base, both, test, label_of_class), test.y,
                                                   seed + p))
        for k, name in ((1, "1 sample"), (3, "3 samples")):
            t = time.perf_counter()
            profile = calibrate(base, deck, {lab: crops[:k] for lab, crops in calibration.items()}, params, look=look)
            t_calib.append((k, time.perf_counter() - t))
            agreement[k].append(profile.model_agreement)
            calibrated = CalibratedClassifier(base, profile, deck, look=look, picture_check=False)
            probs = calibrated.scores_to_probabilities(logits, embeddings, inks)
            conditions[name].append((_predictions(calibrated, probs, label_of_class), test.y, seed + p))
            both = (probs + calibrated.scores_to_probabilities(turned_logits, turned_embeddings, turned_inks)) / 2
            conditions[f"{name}, both ways"].append((_predictions(calibrated, both, label_of_class), test.y, seed + p))
            conditions[f"{name}, second look"].append(
                (_device_predictions(calibrated, both, test, label_of_class), test.y, seed + p))
            nearest[k].append(_nearest(calibrated, embeddings, test.y))
            top2 = np.sort(both[test.y >= 0], 1)[:, -2:]
            ranked[k].append((top2[:, 1], top2[:, 1] - top2[:, 0], label_of_each_class[both[test.y >= 0].argmax(1)],
                              test.y[test.y >= 0]))
        # A label the profile has no sample of: never named as another label (the model alone may name it).
        rng = np.random.default_rng(seed + p)
        unseen = base.labels[rng.integers(len(base.labels))]
        profile = calibrate(base, deck, {lab: crops for lab, crops in calibration.items() if lab != unseen},
                            params, look=look)
        calibrated = CalibratedClassifier(base, profile, deck, look=look, picture_check=False)
        rows = test.y == label_of_class[unseen]
        pred = _predictions(calibrated, calibrated.scores_to_probabilities(logits[rows], embeddings[rows], inks[rows]),
                            label_of_class)
        conditions["unseen label"].append((pred, test.y[rows], seed + p))
    report = {"deck": deck, "style": style, "model": base.name, "model_sha256": base.identity, "look_model": look.name,
              "params": (params or params_for(deck)).__dict__,
              "look_sha256": look.identity, "printings": printings, "seed": seed, "test_per_label": test_per_label}
    for name, parts in conditions.items():
        pred = np.concatenate([p for p, _, _ in parts])
        y = np.concatenate([t for _, t, _ in parts])
        stats = reading_stats(pred, y)
        if name == "unseen label":
            named = pred >= 0
            stats = {"cards": stats["cards"], "named_wrongly": float((named & (pred != y)).mean()) if len(y) else 0.0,
                     "named_right": float((named & (pred == y)).mean()) if len(y) else 0.0}
        stats["confused"] = confusions(parts, base.labels)
        report[name] = stats
    for name in ("1 sample, second look", "3 samples, second look"):
        parts = conditions[name]
        report[name]["over_printings"] = printing_spread(
            np.concatenate([p for p, _, _ in parts]), np.concatenate([t for _, t, _ in parts]),
            np.concatenate([np.full(len(t), i) for i, (_, t, _) in enumerate(parts)]), len(parts))
    for k, name in ((1, "1 sample, both ways"), (3, "3 samples, both ways")):
        report[name]["failing_labels"] = failing_labels(conditions[name], base.labels)
        confidence, margin, top1, y = (np.concatenate(column) for column in zip(*ranked[k]))
        report[name]["refusal_floor"] = {str(a): refusal_floor(confidence, margin, top1, y, a) for a in (0.99, 0.995)}
    for k, parts in nearest.items():
        pred = np.concatenate([p for p, _ in parts])
        y = np.concatenate([t for _, t in parts])
        report[f"nearest_{k}"] = float((pred == y).mean())
    for k in (1, 3):
        times = [t for kk, t in t_calib if kk == k]
        report[f"calibration_seconds_{k}"] = round(float(np.median(times)), 3)
        report[f"model_agreement_{k}"] = [round(a, 3) for a in agreement[k]]
    return report


def one_card_cases(base, look, deck, calibration, test, logits, embeddings, turned_logits, turned_embeddings,
                   inks, turned_inks, most: int = ONE_CARD_CASES) -> list:
    """The "one lucky card" cases of a foreign tuning printing: up to `most` labels whose first
    calibration crop the trained model names right both ways up (on a foreign print, luck), each
    a one-card profile read on the printing's other card crops, both ways up as the device reads
    them (`logits`, `embeddings`, `inks` of the crops; `turned_...` of the crops turned half round). The
    agreement bound of such a profile is low (2 of 2: 0.34), but times a large model weight it can
    still switch a vote on that names the deck's other cards wrongly (tests/test_calibrate.py). Per
    case: what the tuner needs to read it under any parameters ("ways", one WayReading per way up,
    for read_table), and how many of those crops the model alone, both ways up, names wrongly (the
    reading must name no more)."""
    import numpy as np

    from vision.adapt import CalibratedClassifier, calibrate, model_alone_classes
    from vision.geometry import turned_half_round

    _, _, label_of_class = class_maps_for(base)
    alone = _predictions(base, _model_both_ways(base, logits, turned_logits),
                         {lab: i for i, lab in enumerate(base.labels)})
    cases = []
    for label, crops in calibration.items():
        if len(cases) == most:
            break
        both_ways = [crops[0], turned_half_round(crops[0])]
        if not all(p.label == label for p in base.classify_batch(both_ways)):
            continue
        profile = calibrate(base, deck, {label: crops[:1]}, look=look)
        calibrated = CalibratedClassifier(base, profile, deck, look=look, picture_check=False)
        rows = (test.y >= 0) & (test.y != base.labels.index(label))
        has_samples = np.isin(np.arange(len(base.labels)), profile.sample_labels)
        ways = []
        for way_logits, way_embeddings, way_inks in ((logits[rows], embeddings[rows], inks[rows]),
                                                     (turned_logits[rows], turned_embeddings[rows], turned_inks[rows])):
            sims = calibrated.similarities(way_embeddings, way_inks)
            ways.append(WayReading(sims.nearest, sims.colour, sims.none, way_logits * profile.model_agreement,
                                   has_samples, *model_alone_classes(base, way_logits), ink=sims.ink))
        y = test.y[rows]
        cases.append({"label": label, "ways": ways, "y": y,
                      "alone_wrong": int(((alone[rows] >= 0) & (alone[rows] != y)).sum())})
    return cases


def class_maps_for(base) -> tuple:
    """(the class of each label, the none class, the label of each class or -1) of a deck's
    classifier: how the tuner's tables turn classes into labels."""
    import numpy as np

    cls_of_label = np.array([base.spec.classes.index(lab) for lab in base.labels])
    label_of_class = np.full(len(base.spec.classes), -1)
    label_of_class[cls_of_label] = np.arange(len(cls_of_label))
    return cls_of_label, base.spec.none_index, label_of_class


class WayReading(NamedTuple):
    """What read_table needs of N crops read one way up through a profile: CalibratedClassifier's
    Similarities (nearest (N, L), colour (N, L), none (N,); ink (N, L) or None), the model's
    logits times the profile's agreement (N, C), which labels have samples (L,), and for a profile
    with labels missing, what the model alone names and leans to per crop
    (vision.adapt.model_alone_classes; else None)."""
    nearest: object
    colour: object
    none: object
    vote: object
    has_samples: object
    named_alone: object = None
    leaning_alone: object = None
    ink: object = None


def read_table(ways, y, class_maps: tuple, temperature: float, none_similarity: float, model_weight: float,
               colour_weight: float, ink_weight: float = 0.0):
    """(class, confidence, margin, truth) per crop, its probabilities averaged over `ways` (a
    WayReading per way up: the crop and the crop turned half round, as the device reads a card),
    each read as CalibratedClassifier reads through a profile with these parameters; class_maps:
    (class of each label, the none class, label of each class)."""
    import numpy as np

    from vision.adapt import CalibrationParams, reading_probabilities

    cls_of_label, none_index, _ = class_maps
    params = CalibrationParams(temperature=temperature, none_similarity=none_similarity, colour_weight=colour_weight,
                               ink_weight=ink_weight)
    probs = sum(reading_probabilities(model_weight * way.vote, way.nearest, way.has_samples, way.none, cls_of_label,
                                      none_index, params, way.named_alone, way.leaning_alone, colour=way.colour,
                                      ink=way.ink)
                for way in ways) / len(ways)
    top2 = np.sort(probs, 1)[:, -2:]
    return probs.argmax(1), top2[:, 1], top2[:, 1] - top2[:, 0], y


def named_labels(table, class_maps: tuple, min_confidence: float, min_margin: float):
    """The label index the reject rule names for each crop of a (class, confidence, margin, truth)
    table, -1 where it names none."""
    import numpy as np

    arg, conf, margin, _ = table
    _, none_index, label_of_class = class_maps
    return np.where((arg != none_index) & (conf >= min_confidence) & (margin >= min_margin), label_of_class[arg], -1)


def named_wrongly(table, class_maps: tuple, min_confidence: float, min_margin: float) -> int:
    """How many crops of a (class, confidence, margin, truth) table the reject rule lets through
    under another label."""
    named, y = named_labels(table, class_maps, min_confidence, min_margin), table[3]
    return int(((named >= 0) & (named != y)).sum())


# forked_map's work in a forked worker: set there by its initializer, inherited (not pickled)
_FORKED: tuple = ()


def _take_work(fn, items) -> None:
    global _FORKED
    _FORKED = (fn, items)


def _forked_call(i: int):
    fn, items = _FORKED
    return fn(items[i])


def forked_map(fn, items: list, workers: int | None = None):
    """fn over items, yielded in order, in `workers` forked processes (default: the cores this
    process may use): fn and its data are inherited, not pickled, so a closure over large arrays
    costs nothing to hand over; only its results are pickled back. A worker that dies (the
    out-of-memory killer) ends the map with BrokenProcessPool rather than a wait without end. One
    worker, or a system other than Linux (fork is unsafe on macOS, absent on Windows), runs here
    in turn."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from vision.adapt import usable_cores

    workers = min(workers or usable_cores(), len(items))
    if workers <= 1 or not sys.platform.startswith("linux"):
        yield from map(fn, items)
        return
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                             initializer=_take_work, initargs=(fn, items)) as pool:
        yield from pool.map(_forked_call, range(len(items)), chunksize=1)


def where_colours_tell(decks, weights: tuple[float, ...]) -> tuple[float, ...]:
    """The colour's or the ink's weights (COLOUR_WEIGHTS, INK_WEIGHTS) the tuner tries for these
    decks: all of them if any deck has cards whose colour is part of what they are, else only 0
    (the weight would change nothing)."""
    from rules.cards import DECKS

    return weights if any(DECKS[deck].colours for deck in decks) else (0.0,)


def required_accuracy(kind: str, samples: int, accuracy: dict[int, float], family_floor: float) -> float:
    """Accuracy among accepted a tuning set must reach: `accuracy` (the targets, perhaps with a
    margin) for foreign printings, which differ from one another more than their cards do; for the
    training family (kind "heldout") the plain target and at most FAMILY_TOLERANCE below
    `family_floor`, what the trained model reaches alone. Its printings differ little, and a
    margin there would ask calibration to beat the model on the deck it was trained for."""
    if kind == "heldout":
        return max(TARGETS[samples][0], family_floor - FAMILY_TOLERANCE)
    return accuracy[samples]


def meets_targets(stats: dict, kind: str, samples: int, accuracy: dict[int, float], family_floor: float) -> bool:
    """Whether one tuning set's reading (reading_stats, with "accuracy_bound" where --bound is
    asked) meets the tuner's first requirement: the accuracy among accepted required_accuracy asks,
    the target at the bound's quantile too, and at most 0.5 % of none crops accepted."""
    return (stats["accuracy_accepted"] >= required_accuracy(kind, samples, accuracy, family_floor)
            and stats.get("accuracy_bound", 1.0) >= TARGETS[samples][0]
            and stats["none_accepted"] <= 0.005)


def within_budget(stats: dict, kind: str, budget: float | None) -> bool:
    """Whether one tuning set's reading refuses no more than `budget` (a share of its card crops;
    None: no budget) of a foreign printing's cards (the family's refusals are not budgeted: they
    are few, and the family's accuracy is bound to the model's alone)."""
    return budget is None or kind != "foreign" or stats["rejected"] <= budget


def headroom(stats: dict, accuracy: dict[int, float]) -> float:
    """How far the foreign tuning sets' accuracy among accepted (at the bound's quantile where the
    bound is asked: "accuracy_bound") lies above their targets (`accuracy`: {samples: target}), the
    least of them: what a set with a refusal budget is chosen for (tune).
    `stats`: {(deck, kind, samples): reading_stats}."""
    return min(s.get("accuracy_bound", s["accuracy_accepted"]) - accuracy[k]
               for (_, kind, k), s in stats.items() if kind == "foreign")


def set_rank(stats: dict, accuracy: dict[int, float], family_floor: dict[str, float],
             refusal_budget: float | None) -> tuple[bool, tuple[float, float]]:
    """The first and last of tune's requirements for one parameter set, from its tuning sets'
    `stats` ({(deck, kind, samples): reading_stats}): whether it meets the targets (meets_targets,
    and within_budget), and its rank among sets alike in that (higher is better): a set that does
    not meet them by its least accuracy among accepted; one that does by its fewest refusals (one
    sample counting double) or, with a `refusal_budget`, by its headroom and then its refusals."""
    good = all(meets_targets(s, kind, k, accuracy, family_floor[deck]) and within_budget(s, kind, refusal_budget)
               for (deck, kind, k), s in stats.items())
    cost = sum(s["rejected"] * (1.0 if k == 1 else 0.5) for (_, _, k), s in stats.items())
    if not good:
        return good, (min(s["accuracy_accepted"] for s in stats.values()), 0.0)
    if refusal_budget is None:
        return good, (-cost, 0.0)
    return good, (headroom(stats, accuracy), -cost)


# The tuner's cache of read printings: bump when what read_tuning_printing keeps, or how the
# capture or the reading makes it, changes (old files are then ignored, not misread). 2: WayReading
# pickled under vision.evaluation.foreign_eval (a run as `python -m` kept it as __main__.WayReading).
TUNING_CACHE_VERSION = 2


def read_tuning_printing(base, look, deck: str, kind: str, printing_seed: int, test_per_label: int) -> dict:
    """What the tuner keeps of one tuning printing: "alone" (the trained model's reading both ways
    up per test crop, and the truth), "one_card" (one_card_cases; foreign printings), and "sets":
    per number of samples (1, 3) the similarities and votes of the test crops and of the crops
    turned half round, through a profile of that many samples (tune's `table` reads them)."""
    import numpy as np

    from vision.adapt import CalibratedClassifier, calibrate, describe, ink_signatures
    from vision.geometry import turned_half_round

    calibration, test = capture_printing(deck, printing_seed, 3, test_per_label, kind)
    logits, embeddings = describe(base, look, test.crops)
    # Tuned for the device's reading both ways up: each crop and the crop turned half
    # round, their probabilities averaged (the report's "both ways" rows; its second look
    # at nearby outlines, the "second look" rows, is left out: it moves a few cards).
    turned = [turned_half_round(c) for c in test.crops]
    turned_logits, turned_embeddings = describe(base, look, turned)
    inks, turned_inks = ink_signatures(test.crops), ink_signatures(turned)
    alone = _predictions(base, _model_both_ways(base, logits, turned_logits),
                         {lab: i for i, lab in enumerate(base.labels)})
    read = {"alone": (alone, np.asarray(test.y)), "one_card": [], "sets": {}}
    if kind == "foreign":
        read["one_card"] = one_card_cases(base, look, deck, calibration, test, logits, embeddings, turned_logits,
                                          turned_embeddings, inks, turned_inks)
    for k in (1, 3):
        profile = calibrate(base, deck, {lab: crops[:k] for lab, crops in calibration.items()}, look=look)
        calibrated = CalibratedClassifier(base, profile, deck, look=look, picture_check=False)
        read["sets"][k] = (*calibrated.similarities(embeddings, inks), logits * profile.model_agreement, test.y,
                           alone, *calibrated.similarities(turned_embeddings, turned_inks),
                           turned_logits * profile.model_agreement)
    return read


def tuning_cache_file(cache, deck: str, kind: str, printing_seed: int, test_per_label: int, base, look):
    """Where the tuner keeps one printing's reading in the folder `cache` (None: no cache): named by
    everything it depends on that a run can change (the deck, kind and seed of the printing, crops
    per label, the two models' hashes, TUNING_CACHE_VERSION). A change to the capture or reading
    code itself is not in the name: bump TUNING_CACHE_VERSION, or empty the folder."""
    if cache is None:
        return None
    from pathlib import Path

    return Path(cache) / (f"v{TUNING_CACHE_VERSION}-{deck}-{kind}-{printing_seed}-t{test_per_label}-"
                          f"{base.identity[:12]}-{look.identity[:12]}.pkl")


def _read_cached(path) -> dict | None:
    """A printing's reading kept by _write_cached (the tuner's own file, written by this code on
    this machine: a pickle), or None with a warning when it cannot be read (it is made again)."""
    import pickle

    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except Exception as error:  # a cut write, another version's classes: read the printing again
        log.warning("%s: not a readable tuning cache file (%s: %s); reading the printing again",
                    path, type(error).__name__, error)
        return None


def _write_cached(path, read: dict) -> None:
    import pickle

    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    with open(part, "wb") as f:
        pickle.dump(read, f, protocol=pickle.HIGHEST_PROTOCOL)
    part.replace(path)


def tune(decks: list[str], models_dir, seed: int, printings: int, test_per_label: int, control_printings: int = 2,
         look_model=None, targets=None, per_deck: bool = False, bound: float | None = None, cache=None,
         refusal_budget: float | None = None) -> dict:
    """Grid search of CalibrationParams (one set for every deck, or with per_deck one for each) for
    the device's reading both ways up (each crop and the crop turned half round, averaged) on
    tuning printings of each deck:
    `printings` foreign ones and `control_printings` of the training family in held-out fonts (a
    user's deck may be either). Objective: accuracy among accepted meets TARGETS (99 % with 1
    sample, 99.5 % with 3) on every deck and kind, and on the training family at most
    FAMILY_TOLERANCE below the accuracy the trained model reaches alone (calibration must not make
    a well-read deck read worse), and at most 0.5 % of none crops are accepted; then, if any set
    of the grid manages it, no one-card profile of a foreign label the model happened to read
    naming more of the printing's other cards wrongly than the model alone (one_card_cases;
    "one_card_met"); then, likewise, a family label left out of the profile named as another for at most
    FAMILY_TOLERANCE of its crops the model alone names right (table's `unseen`;
    "unseen_label_met"); then fewest cards
    rejected (1 sample counts double). `targets` ({samples: accuracy}) asks more accuracy of the
    foreign tuning printings than TARGETS, as a margin (the family's get none: required_accuracy).
    `bound` (a quantile, e.g. 0.05) asks instead, or as well, that the accuracy among accepted of the
    foreign tuning printings reach TARGETS at that quantile of its bootstrap over the printings
    (accuracy_bound): a margin that grows with how much the printings disagree and shrinks as more
    printings are read. `cache` (a folder): each tuning printing's reading is kept there and read
    back by a later search of the same printings, models and crops per label (tuning_cache_file),
    so a change to the objective or the grid costs the search alone. `refusal_budget` (a share, e.g.
    0.025) changes what the last step weighs: a set must also refuse at most that share of the
    foreign tuning printings' cards (1 and 3 samples) to meet (1), and of those that do, the one
    whose accuracy lies furthest above the targets (at the bound's quantile with `bound`: headroom)
    wins, the fewest refused breaking a tie. Without a budget the tuner sits on the accuracy edge
    of the tuning printings and spends any gain of a change on refusals; with one it spends the
    refusals the budget allows on accuracy."""
    import numpy as np

    accuracy = {k: (targets or {}).get(k, target) for k, (target, _) in TARGETS.items()}

    from vision.adapt import CalibrationParams
    from vision.classifier import CardClassifier

    sets, class_maps, model_alone, one_card, printing_of = {}, {}, {}, {}, {}
    for deck in decks:
        base = CardClassifier.load(deck, models_dir)
        look = load_look(base, look_model)
        class_maps[deck] = class_maps_for(base)
        plan = [("foreign", p) for p in range(printings)] + [("heldout", p) for p in range(control_printings)]
        for n, (kind, p) in enumerate(plan, 1):
            path = tuning_cache_file(cache, deck, kind, seed + 1000 + p, test_per_label, base, look)
            read = _read_cached(path) if path is not None and path.is_file() else None
            source = "read back" if read is not None else "captured"
            if read is None:
                read = read_tuning_printing(base, look, deck, kind, seed + 1000 + p, test_per_label)
                if path is not None:
                    _write_cached(path, read)
            if kind == "heldout":
                model_alone.setdefault(deck, []).append(read["alone"])
            else:
                one_card.setdefault(deck, []).extend(read["one_card"])
            for k in (1, 3):
                printing_of.setdefault((deck, kind, k), []).append(np.full(len(read["alone"][1]), p))
                sets.setdefault((deck, kind, k), []).append(read["sets"][k])
            log.info("%s tuning printing %d/%d %s", deck, n, len(plan), source)
    sets = {key: tuple(np.concatenate(column) for column in zip(*parts)) for key, parts in sets.items()}
    printing_of = {key: np.concatenate(parts) for key, parts in printing_of.items()}
    resamples = printing_resamples(printings) if bound is not None else None
    floor = {deck: reading_stats(np.concatenate([p for p, _ in parts]), np.concatenate([y for _, y in parts]))
             ["accuracy_accepted"] for deck, parts in model_alone.items()}
    log.info("the trained model alone on the family's tuning printings, accuracy among accepted: %s",
             ", ".join(f"{deck} {100 * a:.2f} %" for deck, a in floor.items()))
    log.info("one-card profiles of a label the model happened to read (foreign tuning printings): %s",
             ", ".join(f"{deck} {len(one_card.get(deck, []))}" for deck in decks))

    def table(deck, sims, colour, none, ink, logits, y, alone, turned_sims, turned_colour, turned_none, turned_ink,
              turned_logits, temperature, none_similarity, model_weight, colour_weight, ink_weight, unseen=False):
        """(class, confidence, margin, truth) per crop, its probabilities averaged with the crop's
        turned half round; with `unseen`, the same for the card crops
        the model alone names right, read as if their label had no samples (the profile without
        it: its similarity left out, so the model's vote alone carries it; the centring, and its
        colour's mean card, which its samples still enter, are not redone): such a card must still
        be named right, not as its nearest shown neighbour."""
        rows = np.nonzero((y >= 0) & (alone == y))[0] if unseen else slice(None)
        y = y[rows]
        ways = []
        for way_sims, way_colour, way_none, way_ink, way_vote in (
                (sims, colour, none, ink, logits), (turned_sims, turned_colour, turned_none, turned_ink, turned_logits)):
            way_sims, way_colour, way_ink = way_sims[rows].copy(), way_colour[rows].copy(), way_ink[rows].copy()
            if unseen:
                for column in (way_sims, way_colour, way_ink):
                    column[np.arange(len(rows)), y] = 0.0
            ways.append(WayReading(way_sims, way_colour, way_none[rows], way_vote[rows],   # vote: logits x agreement
                                   np.ones(way_sims.shape[1], bool), ink=way_ink))
        return read_table(ways, y, class_maps[deck], temperature, none_similarity, model_weight, colour_weight,
                          ink_weight)

    def best_at(keys, weights):
        """(objective key, CalibrationParams, stats) of the best reject thresholds for the tuning
        sets `keys` read with these weights (module docstring's objective)."""
        temperature, none_similarity, model_weight, colour_weight, ink_weight = weights
        tabs = {key: table(key[0], *sets[key], *weights) for key in keys}
        unseen_tabs = {key: table(key[0], *sets[key], *weights, unseen=True)
                       for key in keys if key[1] == "heldout"}
        one_card_tabs = [(class_maps[deck], case["alone_wrong"],
                          read_table(case["ways"], case["y"], class_maps[deck], *weights))
                         for deck in sorted({deck for deck, _, _ in keys}) for case in one_card.get(deck, [])]
        best = None
        for mc in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9):
            for mm in (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
                stats = {}
                for key, tab in tabs.items():
                    named = named_labels(tab, class_maps[key[0]], mc, mm)
                    stats[key] = reading_stats(named, tab[3])
                    if resamples is not None and key[1] == "foreign":
                        stats[key]["accuracy_bound"] = accuracy_bound(named, tab[3], printing_of[key],
                                                                      resamples, bound)
                for key, tab in unseen_tabs.items():
                    stats[key]["unseen_named_wrongly"] = (named_wrongly(tab, class_maps[key[0]], mc, mm)
                                                          / max(1, len(tab[3])))
                good, rank = set_rank(stats, accuracy, floor, refusal_budget)
                # Then, where any set manages it: a label the user did not show, in a deck
                # printed like the family, named through the model's vote where the model
                # names it, not as its nearest shown neighbour.
                unseen_ok = all(s.get("unseen_named_wrongly", 0.0) <= FAMILY_TOLERANCE for s in stats.values())
                # And a one-card profile of a label the model happened to read names no more
                # of the deck's other cards wrongly than the model alone (one_card_cases).
                one_card_ok = all(named_wrongly(tab, maps, mc, mm) <= alone_wrong
                                  for maps, alone_wrong, tab in one_card_tabs)
                key = (good, one_card_ok, unseen_ok, *rank)
                if best is None or key > best[0]:
                    best = (key, CalibrationParams(temperature=temperature, none_similarity=none_similarity,
                                                   model_weight=model_weight, min_confidence=mc, min_margin=mm,
                                                   colour_weight=colour_weight, ink_weight=ink_weight),
                            stats)
        return best

    def search(keys):
        """The best parameter set for the tuning sets `keys`: the grid's weights read in parallel,
        the first best in grid order kept (as one process would)."""
        decks_searched = sorted({deck for deck, _, _ in keys})
        colours = where_colours_tell(decks_searched, COLOUR_WEIGHTS)
        inks = where_colours_tell(decks_searched, INK_WEIGHTS)
        # (A label's similarity with its colour's reaches 1 + colour_weight: "none" is tried that high.)
        nones = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8) + ((0.9, 1.0) if max(colours) else ())
        grid = list(itertools.product(TEMPERATURES, nones, MODEL_WEIGHTS, colours, inks))
        best, started = None, time.monotonic()
        for n, found in enumerate(forked_map(lambda weights: best_at(keys, weights), grid), 1):
            if best is None or found[0] > best[0]:
                best = found
            if n % max(1, len(grid) // 20) == 0 or n == len(grid):
                log.info("%s: searched %d/%d weight sets (%.0f s)", " ".join(decks_searched), n, len(grid),
                         time.monotonic() - started)
        (met, one_card_met, unseen_met, *_), params, stats = best
        cases = sum(len(one_card.get(deck, [])) for deck in {deck for deck, _, _ in keys})
        return {"params": params.__dict__, "target_met": met, "refusal_budget": refusal_budget,
                "one_card_cases": cases,
                "one_card_met": one_card_met if cases else None,
                "unseen_label_met": unseen_met,
                "tuning_stats": {f"{deck} {kind}, {k} sample(s)": s for (deck, kind, k), s in stats.items()}}

    if per_deck:
        return {"decks": decks, "per_deck": {deck: search([key for key in sets if key[0] == deck]) for deck in decks}}
    return {"decks": decks, **search(list(sets))}


POOLED_CONDITIONS = ("before, second look", "1 sample, second look", "3 samples, second look")
# what reports must share to be pooled: the same reading of the same deck (and the same deck model:
# "model_sha256" where every report has it, else the model file's name; older reports lack the hash)
POOL_KEYS = ("deck", "style", "look_sha256", "params", "test_per_label")


def pool_reports(reports: list[dict]) -> dict:
    """The device's reading (before, 1 and 3 samples) over every printing of several reports of
    evaluate_deck (--json) of one deck, style, models, parameters and crops per label, on printings
    none of them share: the counts summed (a printing's reading does not depend on the run it is
    in). So runs of twelve printings give the figure of all of them. Raises ValueError if the
    reports do not fit together."""
    if not reports:
        raise ValueError("no reports to pool")
    from pathlib import Path

    model_key = "model_sha256" if all("model_sha256" in r for r in reports) else "model"
    from vision.adapt import CalibrationParams

    def shared(report, key):
        """What the reports must share of `key`: the model file's name; the parameters read as a
        profile reads them (a weight added since an older report was written is at its default)."""
        if key == "model":
            return Path(report[key]).name
        if key == "params":
            return CalibrationParams(**report[key]).__dict__
        return report.get(key)

    for key in (*POOL_KEYS, model_key):
        values = {json.dumps(shared(r, key), sort_keys=True) for r in reports}
        if len(values) > 1:
            raise ValueError(f"the reports differ in {key}: {', '.join(sorted(values))}")
    seen: dict[int, int] = {}
    for r in reports:
        for printing in range(r["seed"], r["seed"] + r["printings"]):
            if printing in seen:
                raise ValueError(f"printing {printing} is in two reports (seeds {seen[printing]} and {r['seed']})")
            seen[printing] = r["seed"]
    pooled = {key: reports[0][key] for key in (*POOL_KEYS, model_key)}
    pooled["printings"] = sorted(seen)
    for name in POOLED_CONDITIONS:
        cards = accepted = right = nones = none_taken = 0
        for stats in (r[name] for r in reports):    # each report's shares back to its counts
            report_accepted = stats["cards"] * (1 - stats["rejected"])
            cards += stats["cards"]
            accepted += round(report_accepted)
            right += round(report_accepted * stats["accuracy_accepted"])
            nones += stats["none_crops"]
            none_taken += round(stats["none_crops"] * stats["none_accepted"])
        pooled[name] = {"cards": cards, "accepted": accepted, "wrong": accepted - right,
                        "accuracy_accepted": right / accepted if accepted else 0.0,
                        "rejected": 1 - accepted / max(1, cards), "none_crops": nones,
                        "none_accepted": none_taken / nones if nones else 0.0}
    return pooled


def _read_report(path: str) -> dict:
    """A report of --json, with the fields pool_reports reads; else ValueError saying what is wrong."""
    from vision.adapt import CalibrationParams

    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        for key in ("seed", "printings", *POOL_KEYS, *POOLED_CONDITIONS):
            report[key]
        if not isinstance(report["params"], dict) or set(report["params"]) - set(CalibrationParams().__dict__):
            raise TypeError(f"its parameters are not CalibrationParams: {report['params']}")
    except (OSError, json.JSONDecodeError, TypeError) as error:
        raise ValueError(f"{path}: not a report of --json ({error})") from None
    except KeyError as error:
        raise ValueError(f"{path}: a report of --json without {error}") from None
    return report


def _print_pooled(p: dict) -> None:
    printings = p["printings"]
    runs = ", ".join(f"{a}..{b}" for a, b in _ranges(printings))
    print(f"{p['deck']}: {len(printings)} {p['style']} printings ({runs}), as the device reads a card "
          f"(look model sha256 {p['look_sha256'][:12]}…)")
    for name in POOLED_CONDITIONS:
        s = p[name]
        print(f"  {name.split(',')[0]:<10} {100 * s['accuracy_accepted']:6.2f}% among accepted ({s['wrong']} wrong of "
              f"{s['accepted']}), {100 * s['rejected']:5.2f}% of {s['cards']} cards rejected, "
              f"{100 * s['none_accepted']:5.2f}% of {s['none_crops']} none crops accepted")


def _ranges(numbers: list[int]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for n in numbers:
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return [(a, b) for a, b in out]


def _print_report(r: dict) -> None:
    print(f"{r['deck']}: {r['printings']} {r['style']} printings, {r['before']['cards']} test cards, "
          f"{r['before']['none_crops']} none crops (model {r['model']}, look model {r['look_model']} "
          f"sha256 {r['look_sha256'][:12]}…)")
    print(f"  {'':<12} {'acc. among accepted':>20} {'rejected':>9} {'none accepted':>14}")
    print("  one crop:")
    for name in ("before", "1 sample", "3 samples"):
        s = r[name]
        print(f"  {name:<12} {100 * s['accuracy_accepted']:>19.2f}% {100 * s['rejected']:>8.2f}% "
              f"{100 * s['none_accepted']:>13.2f}%")
    for way, title in (("both ways", "both ways up (the crop and the crop turned half round, averaged):"),
                       ("second look", "as the device reads a card (both ways up; not sure: again at nearby outlines):")):
        print(f"  {title}")
        for name in ("before", "1 sample", "3 samples"):
            s = r[f"{name}, {way}"]
            print(f"  {name:<12} {100 * s['accuracy_accepted']:>19.2f}% {100 * s['rejected']:>8.2f}% "
                  f"{100 * s['none_accepted']:>13.2f}%")
    for name in ("1 sample", "3 samples"):
        spread = r[f"{name}, second look"]["over_printings"]
        print(f"  {name}, as the device reads, over the printings (bootstrap, 5-95 %): "
              f"{100 * spread['accuracy_accepted'][0]:.2f}-{100 * spread['accuracy_accepted'][1]:.2f}% among accepted, "
              f"{100 * spread['rejected'][0]:.2f}-{100 * spread['rejected'][1]:.2f}% rejected")
    for name in ("1 sample", "3 samples", "1 sample, both ways", "3 samples, both ways", "1 sample, second look",
                 "3 samples, second look"):
        if r[name]["confused"]:
            print(f"  read wrongly with {name}: {', '.join(r[name]['confused'])}")
    for name in ("1 sample, both ways", "3 samples, both ways"):
        s = r[name]
        print(f"  {name}: not read right most often: {', '.join(s['failing_labels']) or 'none'}")
        print(f"  {name}: refused at least, whatever the thresholds, for 99 % among accepted "
              f"{100 * s['refusal_floor']['0.99']:.2f}%, for 99.5 % {100 * s['refusal_floor']['0.995']:.2f}%")
    print(f"  nearest sample, top-1 of card crops (no reject rule, no model vote): 1 sample "
          f"{100 * r['nearest_1']:.2f}%, 3 samples {100 * r['nearest_3']:.2f}%")
    print(f"  unseen label: of {r['unseen label']['cards']} crops {100 * r['unseen label']['named_wrongly']:.2f}% named "
          f"as another label, {100 * r['unseen label']['named_right']:.2f}% right (by the model); "
          f"calibration compute {r['calibration_seconds_1']:.2f} s (1 sample), {r['calibration_seconds_3']:.2f} s (3)")
    print(f"  the model's agreement with the profiles (per printing): 1 sample {r['model_agreement_1']}, "
          f"3 samples {r['model_agreement_3']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.evaluation.foreign_eval", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deck", default="flip7")
    parser.add_argument("--models-dir", metavar="DIR", help="folder holding DECK.onnx and DECK.json")
    parser.add_argument("--seed", type=int, default=500)
    parser.add_argument("--printings", type=int, default=4, help="foreign printings (decks) to test (with --tune: foreign tuning printings per deck)")
    parser.add_argument("--test-per-label", type=int, default=8)
    parser.add_argument("--style", choices=("foreign", "heldout"), default="foreign",
                        help="foreign printings (default), or the training renderer's held-out fonts (control)")
    parser.add_argument("--look-model", metavar="PATH",
                        help="look model to use (a folder with card-look.onnx + .json, or that .onnx); default: "
                             "the one beside the deck's model")
    parser.add_argument("--tune", nargs="*", metavar="DECK",
                        help="grid-search the scoring parameters instead, on tuning printings of these decks "
                             "(default: --deck); one set of parameters serves every deck (with --per-deck: one set "
                             "for each). Prints JSON; --style, "
                             "--params and --json do not apply")
    parser.add_argument("--per-deck", action="store_true",
                        help="with --tune: one parameter set for each deck named (vision.adapt.DECK_PARAMS), "
                             "not one for them all")
    parser.add_argument("--tune-accuracy", nargs=2, type=float, metavar=("ONE", "THREE"),
                        help="with --tune: accuracy among accepted the foreign tuning printings must reach with 1 "
                             "and with 3 samples (default: the targets, 0.99 and 0.995; the family's printings "
                             "must reach the targets)")
    parser.add_argument("--bound", type=float, metavar="Q",
                        help="with --tune: the foreign tuning printings' accuracy among accepted must reach the "
                             "targets at this quantile (e.g. 0.05) of its bootstrap over whole printings, not "
                             "only on the whole (the failures come one label of one printing at a time)")
    parser.add_argument("--refusal-budget", type=float, metavar="R",
                        help="with --tune: the set must refuse at most this share (e.g. 0.025) of the foreign tuning "
                             "printings' cards, and of the sets that do, the one whose accuracy among accepted (at "
                             "--bound's quantile) lies furthest above the targets wins; without it, the fewest "
                             "refused at the targets wins")
    parser.add_argument("--cache", metavar="DIR",
                        help="with --tune: keep each tuning printing's reading in DIR and read it back in a later "
                             "search of the same printings and models (a change of objective or grid then costs the "
                             "search alone); empty DIR when the capture or reading code changes")
    parser.add_argument("--params", metavar="JSON",
                        help='scoring parameters to measure instead of the defaults, e.g. \'{"temperature": 0.08}\' '
                             "(fields of vision.adapt.CalibrationParams; the others keep their defaults)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--pool", nargs="+", metavar="REPORT",
                        help="instead of measuring, pool reports of earlier runs (their --json output) of one "
                             "deck on printings none of them share: the device's reading over all their printings")
    args = parser.parse_args(argv)
    if args.refusal_budget is not None and not 0 < args.refusal_budget <= 1:
        parser.error(f"--refusal-budget {args.refusal_budget}: a share of the cards, above 0 and at most 1 "
                     "(e.g. 0.025 for 2.5 %)")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.pool:
        try:
            pooled = pool_reports([_read_report(path) for path in args.pool])
        except ValueError as error:
            print(f"foreign_eval: --pool: {error}", file=sys.stderr)
            return 2
        print(json.dumps(pooled, indent=2)) if args.json else _print_pooled(pooled)
        return 0
    import cv2

    cv2.setNumThreads(1)
    from vision.adapt import CalibrationParams, ProfileError
    from vision.classifier import ModelError

    try:
        if args.tune is not None:
            targets = dict(zip((1, 3), args.tune_accuracy)) if args.tune_accuracy else None
            print(json.dumps(tune(args.tune or [args.deck], args.models_dir, args.seed, args.printings, args.test_per_label,
                                  look_model=args.look_model, targets=targets, per_deck=args.per_deck,
                                  bound=args.bound, cache=args.cache, refusal_budget=args.refusal_budget),
                             indent=2))
            return 0
        params = None
        if args.params:
            try:
                params = CalibrationParams(**{k: float(v) for k, v in json.loads(args.params).items()})
            except (json.JSONDecodeError, TypeError, AttributeError, ValueError) as error:
                raise ValueError(f"--params: not a JSON object of CalibrationParams fields ({error})") from None
        report = evaluate_deck(args.deck, args.models_dir, args.seed, args.printings, args.test_per_label,
                               args.style, args.look_model, params)
    except (ModelError, ProfileError, ValueError) as error:
        print(f"foreign_eval: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print_report(report)
    return 0


if __name__ == "__main__":
    # Through the module's own name, not __main__: the tuner's cache pickles WayReading, and a
    # class pickled as __main__.WayReading cannot be read back by any other entry (tests, -c).
    from vision.evaluation import foreign_eval

    sys.exit(foreign_eval.main())
