"""Evaluate a deck's classifier on held-out synthetic data, tune its reject thresholds, and
measure placement events on a held-out deal video (`make evaluate`).

    python -m vision.evaluation.evaluate --deck flip7

Held-out means: other seeds AND renderer/surface settings never used in training (the
"heldout" split: other fonts, other table textures). Steps:
1. tuning split (seed --seed): pick the reject thresholds (min_confidence, min_margin) that,
   rejecting at most --reject-budget of the cards, let the fewest misread cards and "none"
   crops through;
2. test split (seed --seed + 1): report accuracy among accepted cards, reject rate, "none"
   crops rejected, the most confused pairs, through vision.classifier.CardClassifier with the
   tuned thresholds (the runtime's own reject rule); then the same for the placement
   detector's reading at the same quads (vision.reading: both ways up, and a second look at
   nearby outlines for the cards it is not sure of); `--reading-only` runs just that;
3. still photos (seed --seed + 3, --scenes photos of 1-4 cards): locate and read (both ways up,
   second look) end to end, as `tablemate scan` does (`--scenes-only` runs just that);
4. deal video (seed --seed + 2, --placements placements): feed every frame to
   vision.placement.PlacementDetector and count missed / doubled / wrong placements
   (`--video-only` runs just that; `--light KIND` with the light over the table changing now
   and then, vision.synth.scenes.ChangingLight).
The thresholds and figures are written into models/<deck>.json unless --dry-run.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

MODELS_DIR = Path(__file__).resolve().parents[2] / "models"


def reject_grid(probs: np.ndarray, y: np.ndarray, none_index: int, reject_budget: float):
    """Search (min_confidence, min_margin) on a tuning set, rule as CardClassifier.decide: of the
    pairs that reject at most `reject_budget` of the cards, the one letting the fewest wrong
    things through (cards misread + "none" crops taken for a card); ties go to the stricter pair.
    Spending the reject budget on safety matters because what the tuning set does not hold (a
    table, an object, a print never seen) shows up as a low-confidence win."""
    top2 = np.sort(probs, axis=1)[:, -2:]
    conf, margin = top2[:, 1], top2[:, 1] - top2[:, 0]
    pred = probs.argmax(1)
    is_card = y != none_index
    n_cards = max(1, int(is_card.sum()))
    best = None
    for mc in np.round(np.arange(0.30, 0.995, 0.01), 3):
        for mm in np.round(np.arange(0.0, 0.96, 0.02), 3):
            accepted = (pred != none_index) & (conf >= mc) & (margin >= mm)
            acc_cards = accepted & is_card
            reject_rate = 1 - int(acc_cards.sum()) / n_cards
            if reject_rate > reject_budget:
                continue
            wrong = int((pred[acc_cards] != y[acc_cards]).sum()) + int(accepted[~is_card].sum())
            key = (wrong, -(mc + mm))
            if best is None or key < best[0]:
                n_acc = max(1, int(acc_cards.sum()))
                best = (key, float(mc), float(mm), {
                    "accuracy_accepted": 1 - int((pred[acc_cards] != y[acc_cards]).sum()) / n_acc,
                    "reject_rate": reject_rate,
                    "none_accepted": float(accepted[~is_card].mean()) if (~is_card).any() else 0.0})
    _, mc, mm, figures = best
    return {"min_confidence": mc, "min_margin": mm}, figures


def accepted_figures(preds, y: np.ndarray, names: list[str]) -> dict:
    """Accuracy among the accepted cards, cards rejected, "none" crops turned away and the most
    confused accepted pairs, for predictions `preds` of crops of true class `y`."""
    none_index = len(names) - 1
    is_card = y != none_index
    accepted = np.array([p.label is not None for p in preds])
    label_of = np.array([names.index(p.label) if p.label is not None else -1 for p in preds])
    acc_cards = accepted & is_card
    correct = label_of[acc_cards] == y[acc_cards]
    confusions = Counter((names[t], names[p]) for t, p in zip(y[acc_cards][~correct], label_of[acc_cards][~correct]))
    return {
        "accepted_cards": int(acc_cards.sum()),
        "accuracy_accepted": round(float(correct.mean()) if len(correct) else 0.0, 5),
        "reject_rate": round(1 - float(acc_cards.sum()) / max(1, int(is_card.sum())), 5),
        "none_rejected": round(float((~accepted[~is_card]).mean()) if (~is_card).any() else 1.0, 5),
        "confused_accepted": [f"{a} -> {b}: {n}" for (a, b), n in confusions.most_common(8)],
    }


def crop_report(classifier, samples, names: list[str]) -> dict:
    """Figures on a sample set through the runtime's classify_batch (its reject rule)."""
    none_index = len(names) - 1
    preds = []
    for i in range(0, len(samples.x), 256):
        preds += classifier.classify_batch(list(samples.x[i:i + 256]))
    y = samples.y
    is_card = y != none_index
    accepted = accepted_figures(preds, y, names)
    # Also what the model would say if forced to answer: where its weak spots are.
    probs = np.concatenate([classifier.probabilities(list(samples.x[i:i + 256])) for i in range(0, len(y), 256)])
    argmax = probs.argmax(1)
    raw = Counter((names[t], names[p]) for t, p in zip(y, argmax) if t != p)
    reasons = Counter(p.reason for p, c in zip(preds, is_card) if c and p.label is None)
    return {
        "cards": int(is_card.sum()),
        "accepted_cards": accepted["accepted_cards"],
        "accuracy_accepted": accepted["accuracy_accepted"],
        "reject_rate": accepted["reject_rate"],
        "reject_reasons": dict(reasons),
        "none_crops": int((~is_card).sum()),
        "none_rejected": accepted["none_rejected"],
        "top1_accuracy_forced": round(float((argmax == y).mean()), 5),
        "confused_accepted": accepted["confused_accepted"],
        "confused_forced": [f"{a} -> {b}: {n}" for (a, b), n in raw.most_common(8)],
    }


class DetectorReading:
    """The placement detector's own reading (vision.reading) of each sample make_samples cuts
    (its `each`), at the sample's frame and quad: the crop both ways up, and for a card it is
    not sure of, the second look at nearby outlines (taken only when it names the card, as the
    detector does). report(): figures as crop_report's, for both."""

    def __init__(self, classifier):
        self.classifier = classifier
        self.first, self.final, self.y = [], [], []

    def __call__(self, frame, quad, y) -> None:
        from vision.reading import read_again, read_probabilities

        prediction = self.classifier.decide(read_probabilities(self.classifier, frame, [quad])[0])
        self.first.append(prediction)
        self.final.append(read_again(self.classifier, frame, quad, prediction))
        self.y.append(y)

    def report(self, names: list[str]) -> dict:
        from vision.classifier import NOT_SURE

        y = np.array(self.y)
        return {"crops": len(y), "cards": int((y != len(names) - 1).sum()),
                "both_ways_up": accepted_figures(self.first, y, names),
                "with_second_look": accepted_figures(self.final, y, names),
                "second_looks": sum(p.reason == NOT_SURE for p in self.first),
                "named_by_second_look": sum(a.label is None and b.label is not None
                                            for a, b in zip(self.first, self.final))}


def scene_report(classifier, deck: str, seed: int, scenes: int, split: str) -> dict:
    """End to end on still photos (as `tablemate scan` sees them): locate the cards and read
    them, one reading per place (vision.reading.read_photo); each true card counts as read
    right, read wrong, rejected or not found; a located quad matching no true card and accepted
    as a card is a false card."""
    from rules.cards import DECKS
    from vision.geometry import quad_iou
    from vision.reading import read_photo
    from vision.synth.scenes import make_scene

    labels = DECKS[deck].labels
    rng = np.random.default_rng(seed)
    counts = Counter()
    for i in range(scenes):
        picked = [labels[k] for k in rng.integers(len(labels), size=int(rng.integers(1, 5)))]
        # No nuisance cards: every card in the photo is a true one, so a located quad that
        # matches none and is read as a card is a real false reading.
        frame, cards = make_scene(rng, picked, deck, split=split, extra_cards=False)
        places = read_photo(classifier, frame)
        quads, preds = [q for q, _ in places], [p for _, p in places]
        used = set()
        for card in cards:
            ious = [quad_iou(card.quad, q) for q in quads]
            k = int(np.argmax(ious)) if ious else -1
            if k < 0 or ious[k] < 0.7:
                counts["not_found"] += 1
                continue
            used.add(k)
            p = preds[k]
            counts["rejected" if p.label is None else ("right" if p.label == card.label else "wrong")] += 1
        counts["false_cards"] += sum(1 for k, p in enumerate(preds) if k not in used and p.label is not None)
        counts["cards"] += len(cards)
        if (i + 1) % 100 == 0:
            log.info("scenes: %d / %d", i + 1, scenes)
    found = counts["right"] + counts["wrong"] + counts["rejected"]
    accepted = counts["right"] + counts["wrong"]
    return {"scenes": scenes, **{k: counts[k] for k in ("cards", "right", "wrong", "rejected", "not_found",
                                                          "false_cards")},
            "accuracy_accepted": round(counts["right"] / max(1, accepted), 5),
            "reject_rate_of_found": round(counts["rejected"] / max(1, found), 5),
            "found_rate": round(found / max(1, counts["cards"]), 5)}


def match_events(truth: list, detected: list, fps: int) -> dict:
    """Pair each detected Placement with the true placement it reports: the latest true event at
    or before it (a detector reports a card once it lies still and the hand has gone, so a little
    later, never earlier than ~3 frames), at most 4 s back. Unpaired true events are missed;
    further detections of an already paired event, or of none, are doubled; a pair with another
    label is wrong."""
    late = 4 * fps
    frames = [e.frame_index for e in truth]
    paired: dict[int, list] = {}
    stray = []
    for d in detected:
        k = int(np.searchsorted(frames, d.frame_index + 3, side="right")) - 1
        if k >= 0 and d.frame_index - frames[k] <= late:
            paired.setdefault(k, []).append(d)
        else:
            stray.append(d)
    missed = [truth[k] for k in range(len(truth)) if k not in paired]
    wrong = [(truth[k], ds[0]) for k, ds in paired.items() if ds[0].label != truth[k].label]
    extra = sorted([d for ds in paired.values() for d in ds[1:]] + stray, key=lambda d: d.frame_index)
    doubled = len(extra)
    delays = [ds[0].frame_index - truth[k].frame_index for k, ds in paired.items()]
    return {"placements": len(truth), "detected": len(detected), "missed": len(missed), "doubled": doubled,
            "wrong": len(wrong), "median_delay_frames": float(np.median(delays)) if delays else None,
            "missed_examples": [f"frame {e.frame_index}: {e.label}" for e in missed[:10]],
            "wrong_examples": [f"frame {t.frame_index}: {t.label} read as {d.label}" for t, d in wrong[:10]],
            "doubled_examples": [f"frame {d.frame_index}: {d.label}" for d in extra[:10]]}


def deal_video(deck: str, seed: int, placements: int = 200, split: str = "heldout"):
    """The deal video of `--video-seeds SEED`: `placements` cards of the deck at random, every
    17th the same label as the one before."""
    from rules.cards import DECKS
    from vision.synth.scenes import make_deal_video

    labels = DECKS[deck].labels
    rng = np.random.default_rng(seed)
    picked = [labels[i] for i in rng.integers(len(labels), size=placements)]
    # p_repeat=0: the count of placements stays exactly as asked; same-label-twice still
    # happens by chance and is forced here by repeating some labels.
    for i in range(1, len(picked), 17):
        picked[i] = picked[i - 1]
    return make_deal_video(rng, picked, deck, split=split, p_repeat=0.0)


def video_report(deck: str, models_dir: Path, seed: int, placements: int, split: str,
                 trace: tuple[int, int] | None = None, light: str | None = None) -> dict:
    from vision.classifier import CardClassifier
    from vision.placement import Placement, PlacementDetector
    from vision.synth.scenes import ChangingLight

    video = deal_video(deck, seed, placements, split)
    detector = PlacementDetector(CardClassifier.load(deck, models_dir))
    detected, unsure = [], []
    t0 = time.perf_counter()
    n = len(video.frames)
    tracer = _Tracer(video, *trace) if trace else None
    frames = ChangingLight(video.frames, light) if light else video.frames
    for i, frame in enumerate(frames):
        if tracer:
            tracer.before(i)
        events = detector.feed(frame, i)
        if tracer:
            tracer.after(i, events)
        for event in events:
            (detected if isinstance(event, Placement) else unsure).append(event)
        if (i + 1) % 1000 == 0:
            log.info("deal video: frame %d / %d, %d placements so far (%.0f frames/s)", i + 1, n, len(detected),
                     (i + 1) / (time.perf_counter() - t0))
    if tracer:
        tracer.done()
    for event in detector.finish():
        (detected if isinstance(event, Placement) else unsure).append(event)
    report = match_events(video.events, detected, video.fps)
    report["unsure"] = len(unsure)
    report["frames"] = n
    if light:
        report["light"] = light
    report["hard_cases"] = dict(Counter(note["kind"] for note in video.notes))
    report["hard_cases"]["on_top"] = sum(1 for note in video.notes if note.get("on_top"))
    report["hard_cases"]["same_label_twice"] = sum(
        1 for a, b in zip(video.events, video.events[1:]) if a.label == b.label)
    return report


class _Tracer:
    """--trace FIRST LAST: the detector's decisions (vision.placement's DEBUG lines) over those
    frames, beside the truth — the cards lying still whenever they change, each true placement,
    and each event with the true cards its outline overlaps, most first, and by how much (IoU) — so a
    single card's figures in a model card come from this command rather than a throwaway script."""

    def __init__(self, video, first: int, last: int):
        self.video, self.first, self.last = video, first, last
        self.truth = {e.frame_index: e.label for e in video.events}
        self.shown: list | None = None
        self.logger = logging.getLogger("vision.placement")
        self.level = self.logger.level

    def before(self, i: int) -> None:
        if i == self.first:
            self.logger.setLevel(logging.DEBUG)
        if not self.first <= i <= self.last:
            return
        lying = self.video.frames.lying(i)
        now = [(c.label, c.quad.mean(axis=0).round().tolist()) for c in lying]
        if now != self.shown:
            log.info("trace frame %d: lying, bottom to top: %s", i, now)
            self.shown = now
        if i in self.truth:
            log.info("trace frame %d: a %s lies still (true placement)", i, self.truth[i])

    def after(self, i: int, events) -> None:
        if self.first <= i <= self.last:
            from vision.geometry import order_corners, quad_iou

            lying = self.video.frames.lying(i)
            for event in events:
                ious = sorted(((quad_iou(order_corners(event.quad), order_corners(c.quad)), c.label) for c in lying),
                              reverse=True)
                log.info("trace frame %d: event %s at %s; true cards it overlaps (IoU): %s", i,
                         getattr(event, "label", None) or getattr(event, "reason", "?"),
                         event.quad.mean(axis=0).round().tolist(),
                         ", ".join(f"{label} {iou:.2f}" for iou, label in ious if iou >= 0.05) or "none")
        if i == self.last:
            self.done()

    def done(self) -> None:
        """DEBUG lines only over the frames asked for (also when the video ends before LAST)."""
        self.logger.setLevel(self.level)


def _one_video(job) -> dict:
    deck, models_dir, seed, placements, split, light = job
    log.info("deal video: %d placements (%s split, seed %d%s)", placements, split, seed,
             f", the light changing: {light}" if light else "")
    report = video_report(deck, models_dir, seed, placements, split, light=light)
    log.info("deal video seed %d: %s", seed, json.dumps(report))
    return report


def videos_report(deck: str, models_dir: Path, seeds: list[int], placements: int, split: str,
                  jobs: int = 1, light: str | None = None) -> dict:
    """video_report for each seed (`jobs` videos at a time, each in its own process); with
    several, the counts summed and each video's report kept."""
    work = [(deck, models_dir, seed, placements, split, light) for seed in seeds]
    if jobs > 1 and len(seeds) > 1:
        import multiprocessing

        with multiprocessing.get_context("spawn").Pool(min(jobs, len(seeds)), initializer=_worker_setup) as pool:
            reports = pool.map(_one_video, work, chunksize=1)
    else:
        reports = [_one_video(job) for job in work]
    if len(reports) == 1:
        return reports[0]
    total = {key: sum(r[key] for r in reports)
             for key in ("placements", "detected", "missed", "doubled", "wrong", "unsure", "frames")}
    total["median_delay_frames"] = float(np.median([r["median_delay_frames"] for r in reports
                                                    if r["median_delay_frames"] is not None]))
    total["per_video"] = {str(seed): r for seed, r in zip(seeds, reports)}
    return total


def _worker_setup() -> None:
    """A video worker process: logs as the parent does, one OpenCV thread (one core a video)."""
    import cv2

    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr)
    cv2.setNumThreads(1)


LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def main(argv: list[str] | None = None) -> int:
    from vision.synth.scenes import LIGHT_CHANGES

    parser = argparse.ArgumentParser(prog="python -m vision.evaluation.evaluate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deck", default="flip7")
    parser.add_argument("--models-dir", default=str(MODELS_DIR),
                        help="folder of DECK.onnx and DECK.json, and the still photos' card-mask.onnx where it has "
                             "one (default: models/)")
    parser.add_argument("--seed", type=int, default=9001, help="tuning split seed (test: +1, video: +2)")
    parser.add_argument("--tune-samples", type=int, default=4000)
    parser.add_argument("--test-samples", type=int, default=6000)
    parser.add_argument("--scenes", type=int, default=300,
                        help="still photos read end to end: locate + warp + classify (0: skip)")
    parser.add_argument("--placements", type=int, default=200, help="placements in the deal video (0: skip)")
    parser.add_argument("--reject-budget", type=float, default=0.015,
                        help="share of cards the thresholds may reject on the tuning split; within it they "
                             "let the fewest misreadings and non-cards through (default 0.015, half the "
                             "3%% target)")
    parser.add_argument("--split", choices=("heldout", "train"), default="heldout",
                        help="renderer/surface settings (default: the held-out ones)")
    parser.add_argument("--dry-run", action="store_true", help="print only; leave models/<deck>.json alone")
    parser.add_argument("--video-seeds", type=int, nargs="+", default=None, metavar="SEED",
                        help="deal videos to read (default: one, seed SEED+2); several give the event "
                             "figures over more placements, each video's own figures kept beside the sum")
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="deal videos read at a time, each in its own process on its own core (default 1)")
    parser.add_argument("--video-only", action="store_true",
                        help="only the deal video(s), with the thresholds the sidecar holds; writes nothing")
    parser.add_argument("--scenes-only", action="store_true",
                        help="only the still photos read end to end (locate + warp + classify), with the "
                             "thresholds the sidecar holds; writes nothing")
    parser.add_argument("--light", choices=LIGHT_CHANGES, default=None,
                        help="with --video-only: the deal videos under a light that changes every 700 frames "
                             "(over 8 frames, for 250; vision.synth.scenes.ChangingLight): dim, bright (burning out the "
                             "light parts), shadow (half the table in shade) or warm (a lamp's colour)")
    parser.add_argument("--trace", type=int, nargs=2, metavar=("FIRST", "LAST"),
                        help="with --video-only and one video seed: log the placement detector's decisions "
                             "over frames FIRST..LAST beside the truth (cards lying, true placements, each "
                             "event's IoU with the true cards it overlaps)")
    parser.add_argument("--reading-only", action="store_true",
                        help="only the placement detector's reading of the test crops (both ways up, and "
                             "with its second look), with the thresholds the sidecar holds; writes nothing")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr)
    import cv2

    cv2.setNumThreads(1)
    from vision.card_mask import use_models_dir
    from vision.classifier import CardClassifier
    from vision.training.dataset import class_names, make_samples

    models_dir = Path(args.models_dir)
    sidecar_path = models_dir / f"{args.deck}.json"
    sidecar = json.loads(sidecar_path.read_text())
    names = class_names(args.deck)
    if sidecar["classes"] != names:
        log.error("%s classes do not match the deck's labels + none", sidecar_path)
        return 1
    classifier = CardClassifier.load(args.deck, models_dir)
    use_models_dir(models_dir)      # the still photos' card mask network too, where it has one
    t0 = time.perf_counter()
    video_seeds = args.video_seeds or [args.seed + 2]
    if args.trace and not (args.video_only and len(video_seeds) == 1):
        parser.error("--trace needs --video-only and exactly one video seed")
    if args.trace and not 0 <= args.trace[0] <= args.trace[1]:
        parser.error("--trace FIRST LAST needs 0 <= FIRST <= LAST (frame numbers of the video)")
    if args.trace:
        video = video_report(args.deck, models_dir, video_seeds[0], args.placements, args.split,
                             trace=tuple(args.trace), light=args.light)
        print(json.dumps({"video": video, "minutes": round((time.perf_counter() - t0) / 60, 1)}, indent=2))
        return 0
    if args.light and not args.video_only:
        parser.error("--light needs --video-only")
    if args.video_only:
        video = videos_report(args.deck, models_dir, video_seeds, args.placements, args.split, args.jobs,
                              args.light)
        print(json.dumps({"video": video, "minutes": round((time.perf_counter() - t0) / 60, 1)}, indent=2))
        ok = video["missed"] == 0 and video["doubled"] == 0 and video["wrong"] == 0
        print("deal-video targets met" if ok else "deal-video targets NOT met", file=sys.stderr)
        return 0
    if args.scenes_only:
        scenes = scene_report(classifier, args.deck, args.seed + 3, args.scenes, args.split)
        print(json.dumps({"scenes": scenes, "minutes": round((time.perf_counter() - t0) / 60, 1)}, indent=2))
        return 0
    if args.reading_only:
        log.info("the detector's reading of %d test crops (%s split, seed %d)", args.test_samples, args.split,
                 args.seed + 1)
        reading = DetectorReading(classifier)
        make_samples(args.deck, args.test_samples, args.seed + 1, args.split, each=reading)
        print(json.dumps({"reading": reading.report(names), "minutes": round((time.perf_counter() - t0) / 60, 1)},
                         indent=2))
        return 0
    log.info("generating %d tuning crops (%s split, seed %d)", args.tune_samples, args.split, args.seed)
    tune = make_samples(args.deck, args.tune_samples, args.seed, args.split)
    probs = np.concatenate([classifier.probabilities(list(tune.x[i:i + 256])) for i in range(0, len(tune.y), 256)])
    thresholds, tuned = reject_grid(probs, tune.y, len(names) - 1, args.reject_budget)
    log.info("tuned thresholds %s on the tuning split: %s", thresholds, tuned)
    sidecar["reject"] = thresholds
    # Evaluate through the runtime classifier with the tuned thresholds.
    tmp_models = models_dir if not args.dry_run else None
    if tmp_models is not None:
        sidecar_path.write_text(json.dumps(sidecar, indent=2) + "\n")
        classifier = CardClassifier.load(args.deck, models_dir)
    else:
        from dataclasses import replace
        classifier.spec = replace(classifier.spec, **thresholds)
    log.info("generating %d test crops (%s split, seed %d)", args.test_samples, args.split, args.seed + 1)
    detector_reading = DetectorReading(classifier)
    test = make_samples(args.deck, args.test_samples, args.seed + 1, args.split, each=detector_reading)
    crops = crop_report(classifier, test, names)
    log.info("test split: %s", json.dumps(crops))
    reading = detector_reading.report(names)
    log.info("the detector's reading of the test crops: %s", json.dumps(reading))
    metrics = {"split": args.split, "tuning": {k: (round(v, 5) if isinstance(v, float) else v)
                                               for k, v in tuned.items()},
               "test": crops, "reading": reading, "seeds": {"tune": args.seed, "test": args.seed + 1}}
    if args.scenes:
        log.info("end-to-end scenes: %d (%s split, seed %d)", args.scenes, args.split, args.seed + 3)
        metrics["scenes"] = scene_report(classifier, args.deck, args.seed + 3, args.scenes, args.split)
        metrics["seeds"]["scenes"] = args.seed + 3
        log.info("scenes: %s", json.dumps(metrics["scenes"]))
    if args.placements:
        metrics["video"] = videos_report(args.deck, models_dir, video_seeds, args.placements, args.split,
                                         args.jobs)
        metrics["seeds"]["video"] = video_seeds[0] if len(video_seeds) == 1 else video_seeds
    metrics["command"] = "python -m vision.evaluation.evaluate " + " ".join(argv if argv is not None else sys.argv[1:])
    metrics["minutes"] = round((time.perf_counter() - t0) / 60, 1)
    if not args.dry_run:
        sidecar["metrics"] = metrics
        sidecar_path.write_text(json.dumps(sidecar, indent=2) + "\n")
        log.info("wrote thresholds and metrics into %s", sidecar_path)
    print(json.dumps({"reject": thresholds, **metrics}, indent=2))
    ok = crops["accuracy_accepted"] >= 0.995 and crops["reject_rate"] <= 0.03
    if "video" in metrics:
        v = metrics["video"]
        ok = ok and v["missed"] == 0 and v["doubled"] == 0 and v["wrong"] == 0
    print("targets met" if ok else "targets NOT met", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
