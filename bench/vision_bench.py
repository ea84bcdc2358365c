"""Vision benchmark on ONE core: classifier per card, idle frame, placement, peak memory, and the
same figures for a MobileNetV3-small-sized baseline exported the same way (random weights).

    .venv/bin/python bench/vision_bench.py [--models-dir DIR] [--deck flip7] [--repeats N] [--plays N]

Prints figures only (no pass/fail). The process is pinned to one CPU, onnxruntime runs with one
intra-op thread without spinning (as on the device) and OpenCV with one thread; calibration's
compute is printed on one core and then on every core the process started with (it learns the
labels in parallel, as on the device, whose Pi has four), and the deal video is also played through
a calibration profile of its own print (each card placed read by the look network too). The baseline is
built with the `onnx` helper API (MobileNetV3-small, Howard et al. 2019, "Searching for
MobileNetV3", table 2: the same layers, widths, kernels, squeeze-excite and activations; batch
norm folded into the convolutions as an exported inference model has it), at our model's input
size for a fair ratio and at the standard 224x224.

The photos and the deal video are drawn with `--deck`'s own renderer (a model timed on another
deck's cards is not sure of them, and its second looks would be timed instead).

A placement's work falls on two frames: the settled one (locate where it changed, warp, classify)
and the next (explain the change: vision.zone); the placement figure is the costlier of the two.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from vision.classifier import CardClassifier, ModelSpec, onnx_session  # noqa: E402
from vision.geometry import warp_card  # noqa: E402
from vision.locate import find_cards  # noqa: E402
from vision.placement import PlacementDetector  # noqa: E402
from vision.reading import NEARBY_OUTLINES, both_ways_probabilities, second_look  # noqa: E402
from vision.synth.scenes import changed_light, under_light  # noqa: E402

# (kernel, expanded, out, squeeze-excite, hard-swish, stride) for each bottleneck block
MOBILENET_V3_SMALL = [
    (3, 16, 16, True, False, 2), (3, 72, 24, False, False, 2), (3, 88, 24, False, False, 1),
    (5, 96, 40, True, True, 2), (5, 240, 40, True, True, 1), (5, 240, 40, True, True, 1),
    (5, 120, 48, True, True, 1), (5, 144, 48, True, True, 1), (5, 288, 96, True, True, 2),
    (5, 576, 96, True, True, 1), (5, 576, 96, True, True, 1),
]


def mobilenet_v3_small(path: Path, height: int, width: int, classes: int, seed: int = 0) -> int:
    """Write a MobileNetV3-small ONNX model (input `crop`, output `logits`); returns its parameter count."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    count = [0]

    def name(prefix):
        count[0] += 1
        return f"{prefix}{count[0]}"

    def conv(x, cin, cout, k, stride=1, groups=1):
        w = name("w")
        b = name("b")
        fan_in = cin // groups * k * k
        inits.append(numpy_helper.from_array(
            rng.normal(0, np.sqrt(2.0 / fan_in), (cout, cin // groups, k, k)).astype(np.float32), w))
        inits.append(numpy_helper.from_array(np.zeros(cout, np.float32), b))
        y = name("conv")
        nodes.append(helper.make_node("Conv", [x, w, b], [y], kernel_shape=[k, k], strides=[stride, stride],
                                      pads=[k // 2] * 4, group=groups))
        return y

    def act(x, hard_swish):
        y = name("act")
        nodes.append(helper.make_node("HardSwish" if hard_swish else "Relu", [x], [y]))
        return y

    def squeeze_excite(x, ch):
        squeeze = max(8, int(ch / 4 + 4) // 8 * 8)
        p = name("pool")
        nodes.append(helper.make_node("GlobalAveragePool", [x], [p]))
        s = act(conv(p, ch, squeeze, 1), False)
        g = name("gate")
        nodes.append(helper.make_node("HardSigmoid", [conv(s, squeeze, ch, 1)], [g], alpha=1.0 / 6, beta=0.5))
        y = name("se")
        nodes.append(helper.make_node("Mul", [x, g], [y]))
        return y

    x = act(conv("crop", 3, 16, 3, 2), True)
    cin = 16
    for k, exp, out, se, hs, stride in MOBILENET_V3_SMALL:
        y = x if exp == cin else act(conv(x, cin, exp, 1), hs)
        y = act(conv(y, exp, exp, k, stride, groups=exp), hs)
        if se:
            y = squeeze_excite(y, exp)
        y = conv(y, exp, out, 1)
        if stride == 1 and cin == out:
            r = name("res")
            nodes.append(helper.make_node("Add", [x, y], [r]))
            y = r
        x, cin = y, out
    x = act(conv(x, cin, 576, 1), True)
    p = name("pool")
    nodes.append(helper.make_node("GlobalAveragePool", [x], [p]))
    x = act(conv(p, 576, 1024, 1), True)
    x = conv(x, 1024, classes, 1)
    nodes.append(helper.make_node("Flatten", [x], ["logits"]))
    graph = helper.make_graph(
        nodes, "mobilenet_v3_small",
        [helper.make_tensor_value_info("crop", TensorProto.FLOAT, ["N", 3, height, width])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", classes])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return int(sum(np.prod(t.dims) for t in inits))


ALL_CORES = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []


def pin_one_core() -> str:
    cv2.setNumThreads(1)
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    return "not pinned (no sched_setaffinity here)"


class Times(list):
    """Wall-clock milliseconds per call, with the process CPU milliseconds alongside: on a
    shared machine the wall figure includes waiting for the core, the CPU figure does not."""

    def __init__(self):
        super().__init__()
        self.cpu: list[float] = []


def timed(fn, repeats: int, warmup: int = 5) -> Times:
    for _ in range(warmup):
        fn()
    out = Times()
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        fn()
        out.cpu.append((time.process_time() - c) * 1000.0)
        out.append((time.perf_counter() - t) * 1000.0)
    return out


def summary(ms: Times) -> str:
    wall = sorted(ms)
    p95 = wall[min(len(wall) - 1, int(0.95 * len(wall)))]
    return (f"median {statistics.median(wall):7.3f} ms  p95 {p95:7.3f} ms  max {wall[-1]:7.3f} ms  "
            f"(CPU median {statistics.median(ms.cpu):7.3f} ms, n={len(wall)})")


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


def scenes(n: int, deck: str, seed: int = 7):
    """Frames with one card lying in the deal zone (the placement case), 640x480."""
    from rules.cards import DECKS
    from vision.synth.scenes import make_scene

    rng = np.random.default_rng(seed)
    labels = DECKS[deck].labels
    return [make_scene(rng, [labels[int(rng.integers(len(labels)))]], deck, size=(640, 480), split="heldout")
            for _ in range(n)]


def idle_frames(frame: np.ndarray, n: int, seed: int = 3) -> list[np.ndarray]:
    """The same still table with fresh sensor noise in every frame (nothing changed)."""
    rng = np.random.default_rng(seed)
    return [np.clip(frame.astype(np.int16) + rng.normal(0, 2.5, frame.shape).astype(np.int16), 0, 255).astype(np.uint8)
            for _ in range(n)]


def deal_frames(deck: str, seed: int = 5, cards: int = 12):
    """A synthetic deal at 640x480 (hands, stacks, nudges, slides): rendered lazily, not timed."""
    from rules.cards import DECKS
    from vision.synth.scenes import make_deal_video

    rng = np.random.default_rng(seed)
    labels = DECKS[deck].labels
    return make_deal_video(rng, [labels[int(i)] for i in rng.integers(0, len(labels), cards)], deck,
                           size=(640, 480), split="heldout").frames


def deal_video(classifier, deck: str, plays: int) -> dict[str, "Times"]:
    """The detector over a whole deal: what each kind of frame costs in the real loop. The deal is
    played `plays` times, a fresh detector each time (the same steps on the same frames); a
    frame's time is its median over the plays, so one that met a busy core once counts little.
    Prints each step's figures; returns {step: Times of its frames}."""
    per_frame: dict[int, tuple[str, Times]] = {}
    events = 0
    for play in range(plays):
        detector = PlacementDetector(classifier)
        for index, frame in enumerate(deal_frames(deck)):
            t, c = time.perf_counter(), time.process_time()
            found = len(detector.feed(frame, index))
            cpu, wall = (time.process_time() - c) * 1000.0, (time.perf_counter() - t) * 1000.0
            step, times = per_frame.setdefault(index, (detector.step, Times()))
            assert step == detector.step, "the detector took another step on a replay of the same deal"
            times.append(wall)
            times.cpu.append(cpu)
            events += found if play == 0 else 0
    steps: dict[str, Times] = {}
    for step, times in per_frame.values():
        kind = steps.setdefault(step, Times())
        kind.append(statistics.median(times))
        kind.cpu.append(statistics.median(times.cpu))
    print(f"deal video through the detector ({len(per_frame)} frames x {plays} plays, each frame's median; "
          f"{events} events):")
    for step in ("idle", "watch", "early", "settled", "locate", "confirm", "judge"):
        if step in steps:
            print(f"  {step:7s} frames: {summary(steps[step])}")
    return steps


def placement_frames(steps: dict[str, "Times"]) -> tuple[str, "Times"]:
    """A placement's work is shared by two frames (locate, then read + judge): the placement frame
    is the costlier of the two by median. (its step, its frames' Times)."""
    which = max(("locate", "judge"), key=lambda step: statistics.median(steps.get(step) or [0.0]))
    return which, steps.get(which) or Times()


def searched_place(classifier, frames, repeats: int) -> "Times":
    """A still photo's place left unread, searched (vision.reading.search_place): from the first
    card's outline moved a seventh of the card off it, the one start the climb runs from (a place
    has up to SEARCH_STARTS). Its reads are bounded (SEARCH_ROUNDS rounds of up to 8 outlines),
    so the figure is near the search's most at one start."""
    from vision.reading import search_place

    frame, truth = frames[0]
    quad = truth[0].quad
    off = (quad + 0.15 * (quad[1] - quad[0]) - 0.1 * (quad[3] - quad[0])).astype(np.float32)
    return timed(lambda: search_place(classifier, frame, [off]), max(5, repeats // 30), warmup=1)


def walk_outline(classifier, frames, repeats: int) -> "Times":
    """Where a calibration walk cuts the card shown (device.calibration.CalibrationFlow): the still
    photo's outlines (vision.reading.photo_candidates), each read both ways up for the card asked
    for (vision.reading.outline_read_as)."""
    from vision.reading import outline_read_as, photo_candidates

    frame, truth = frames[0]
    return timed(lambda: outline_read_as(classifier, frame, truth[0].label, [c.quad for c in photo_candidates(frame)]),
                 max(5, repeats // 30), warmup=1)


def measure(name: str, classifier, deck: str, frames, crops, repeats: int, plays: int) -> dict:
    print(f"\n== {name}")
    rss0 = rss_mb()
    classify_ms = timed(lambda: classifier.classify(crops[0]), repeats)
    print(f"classifier per card (preprocess + run + reject rule):    {summary(classify_ms)}")
    both_ways_ms = timed(lambda: classifier.decide(both_ways_probabilities(classifier, crops[:1])[0]), repeats)
    print(f"  read both ways up, as the device reads (vision.reading): {summary(both_ways_ms)}")
    # The per-card figure in parts: the resize and normalisation are the same code for any
    # network, so they bound how far a faster network alone can move the per-card ratio.
    preprocess_ms = timed(lambda: classifier.preprocess([crops[0]]), repeats)
    print(f"  of which preprocessing (area resize + normalise):     {summary(preprocess_ms)}")
    batch = classifier.preprocess([crops[0]])
    network_ms = timed(lambda: classifier.logits_of_input(batch), repeats)
    print(f"  of which the network alone (onnxruntime run):         {summary(network_ms)}")
    frame0, cards0 = frames[0]
    second_ms = timed(lambda: second_look(classifier, frame0, cards0[0].quad), max(20, repeats // 10))
    print(f"second look at a card not sure of ({len(NEARBY_OUTLINES)} outlines x 2 ways up, warps included; "
          f"only then): {summary(second_ms)}")

    detector = PlacementDetector(classifier)
    still = idle_frames(frames[0][0], 50)
    detector.feed(still[0], 0)
    i = [0]

    def idle():
        i[0] += 1
        detector.feed(still[i[0] % len(still)], i[0])
    idle_ms = timed(idle, repeats * 2)
    assert detector.state == "idle", "the idle frames disturbed the detector"
    print(f"idle frame (nothing changed, 640x480):                   {summary(idle_ms)}")
    # The same still table after the light changed (a lamp, a shadow): each frame's light is
    # measured and taken out (vision.light) before it is compared.
    dim = changed_light("dim", still[0].shape)
    dimmed = [under_light(f, dim) for f in still]
    j = [0]

    def idle_in_changed_light():
        j[0] += 1
        detector.feed(dimmed[j[0] % len(dimmed)], i[0] + j[0])
    relit_ms = timed(idle_in_changed_light, repeats)
    assert detector.state == "idle", "the change of light disturbed the detector"
    print(f"idle frame after the light dimmed (x0.7, taken out):     {summary(relit_ms)}")

    steps = deal_video(classifier, deck, plays)

    k = [0]

    def whole_frame():
        frame, _ = frames[k[0] % len(frames)]
        k[0] += 1
        quads = find_cards(frame)
        classifier.classify_batch([warp_card(frame, q) for q in quads[:1]])
    whole_ms = timed(whole_frame, max(len(frames), repeats // 10), warmup=2)
    print(f"whole-frame locate + warp + classify (largest card, no change mask): {summary(whole_ms)}")
    # A still photo read per place (`tablemate scan`, the UNO Flip hand scan): every hypothesis of
    # the locator's, in the photo and at its other tones (vision.reading.photo_candidates), read;
    # beside it, the photo's own tone alone (what the other tones cost).
    from vision.locate import locate_candidates
    from vision.reading import read_photo

    def still_photo(one_tone: bool):
        frame, _ = frames[k[0] % len(frames)]
        k[0] += 1
        read_photo(classifier, frame, locate_candidates(frame, keep_nested=True) if one_tone else None)
    for one_tone in (False, True):
        photo_ms = timed(lambda: still_photo(one_tone), max(len(frames), repeats // 10), warmup=2)
        print(f"still photo read per place ({'its own tone alone' if one_tone else 'scan, hand scan: read_photo'}): "
              f"{summary(photo_ms)}")
    from vision.card_mask import card_mask

    def mask_outlines():
        frame, _ = frames[k[0] % len(frames)]
        k[0] += 1
        card_mask().outlines(frame, on_sides=True)
    print(f"  of which the card mask network's outlines (network, its regions' sides, edge snapping): "
          f"{summary(timed(mask_outlines, max(len(frames), repeats // 10), warmup=2))}")
    print(f"  a place left unread, searched from one outline (vision.reading.search_place): "
          f"{summary(searched_place(classifier, frames, repeats))}")
    print(f"resident memory added while measuring: {rss_mb() - rss0:.1f} MB")
    which, locate = placement_frames(steps)
    return {"placement_step": which, "judge": statistics.median(steps.get("judge") or [float("nan")]),
            "placement_both": sum(statistics.median(steps.get(step) or [0.0]) for step in ("locate", "judge")),
            "classify": statistics.median(classify_ms), "both_ways": statistics.median(both_ways_ms),
            "classify_cpu": statistics.median(classify_ms.cpu),
            "preprocess_cpu": statistics.median(preprocess_ms.cpu), "network_cpu": statistics.median(network_ms.cpu),
            "idle": statistics.median(idle_ms), "idle_cpu": statistics.median(idle_ms.cpu),
            "idle_relit": statistics.median(relit_ms),
            "placement": statistics.median(locate or [float("nan")]),
            "placement_cpu": statistics.median(locate.cpu or [float("nan")]),
            "placement_max": max(locate or [float("nan")]), "placement_n": len(locate),
            "second_look": statistics.median(second_ms)}


def calibrated_reading(classifier, deck: str, crop, frames, repeats: int, plays: int) -> dict:
    """Reading through a calibration profile (one photo per label of a foreign printing) also runs
    the look network: its cost per card, and the calibration's compute, on one core and on every
    core the process may use (calibration learns the labels in parallel: vision.adapt.calibrate).
    Returns the figures the targets are judged by: {"reading", "calibration_one_core", "placement"}."""
    from vision.adapt import SUREST_PHOTOS, CalibratedClassifier, calibrate, ink_signatures, look_model_for
    from vision.geometry import CANON_H, CANON_W
    from vision.synth.render_foreign import ForeignStyle, render_foreign

    # The photos as calibration gets them: cut from a frame or a folder's photo at the canonical
    # crop size (vision.geometry.warp_card, vision.calibrate_cmd.card_crop).
    style, rng = ForeignStyle.sample(np.random.default_rng(5)), np.random.default_rng(0)

    def photo(label):
        face = np.ascontiguousarray(render_foreign(deck, label, rng, style)[..., 2::-1])
        return cv2.resize(face, (CANON_W, CANON_H), interpolation=cv2.INTER_AREA)

    shown = {label: [photo(label)] for label in classifier.labels}
    t = time.perf_counter()
    look = look_model_for(classifier, "the bench")
    print(f"look model loaded (once per process): {time.perf_counter() - t:.2f} s")
    calibrate(classifier, deck, dict(list(shown.items())[:1]), look=look)  # first run's allocations
    profile = None
    figures = {}
    pinned = os.sched_getaffinity(0) if ALL_CORES else None
    try:
        for cores in ([ALL_CORES[0]], ALL_CORES) if len(ALL_CORES) > 1 else ([None],):
            if cores[0] is not None:
                os.sched_setaffinity(0, cores)
            seconds = []
            for _ in range(3):
                t = time.perf_counter()
                profile = calibrate(classifier, deck, shown, look=look)
                seconds.append(time.perf_counter() - t)
            figures.setdefault("calibration_one_core", statistics.median(seconds))
            figures["photos"] = len(shown)
            where = "as pinned" if cores[0] is None else f"{len(cores)} core{'s' * (len(cores) > 1)}"
            print(f"calibration compute, {len(shown)} photos, {where}: {statistics.median(seconds):.2f} s "
                  f"(median of 3: {', '.join(f'{s:.2f}' for s in seconds)})")
        # The device after three walks of the deck (device/calibration.py keeps SUREST_PHOTOS of
        # each card): every card learnt from three photos, on every core.
        shown_thrice = {label: photos + [photo(label) for _ in range(SUREST_PHOTOS - 1)]
                        for label, photos in shown.items()}
        t = time.perf_counter()
        calibrate(classifier, deck, shown_thrice, look=look)
        print(f"calibration compute, {len(shown)} cards x {SUREST_PHOTOS} photos, "
              f"{len(ALL_CORES) or 'as pinned'} core(s): {time.perf_counter() - t:.2f} s")
    finally:
        if pinned is not None:
            os.sched_setaffinity(0, pinned)  # the rest of the bench runs on the one core again
    calibrated = CalibratedClassifier(classifier, profile, deck, look=look)
    # The figure judged: a card read as the device reads it, both ways up (vision.reading), the
    # templates scored once; beside it one crop alone, and the reading with the half turn's
    # templates scored again (what it cost before bbca171).
    from vision.geometry import turned_half_round

    reading = timed(lambda: both_ways_probabilities(calibrated, [crop]), repeats)
    figures["reading"] = statistics.median(reading)
    print(f"calibrated card read both ways up (vision.reading, as the device reads; classifier + look network + "
          f"{len(profile.embeddings)} profile samples + templates): {summary(reading)}")
    print(f"  one crop alone (one way up): {summary(timed(lambda: calibrated.classify(crop), repeats))}")
    print(f"  of which the look network alone: {summary(timed(lambda: calibrated.look.embed([crop]), repeats))}")
    print(f"  the crop and its half turn each read in full (templates scored and crop embedded for each way, as "
          f"before bbca171 and 592e3da): {summary(timed(lambda: calibrated.probabilities([crop, turned_half_round(crop)]), repeats))}")
    if calibrated.params.ink_weight:  # a deck whose colours are part of what a card is (UNO Flip)
        print(f"  of which the card's ink (vision.adapt.ink_signature): "
              f"{summary(timed(lambda: ink_signatures([crop]), repeats))}")
    print(f"a still photo's place left unread, searched from one outline through the profile "
          f"(vision.reading.search_place): {summary(searched_place(calibrated, frames, repeats))}")
    print(f"calibration walk: the card cut where it is read as the card shown, once per card laid (device/calibration.py: "
          f"vision.reading.photo_candidates + outline_read_as, the deck's model reading): "
          f"{summary(walk_outline(classifier, frames, repeats))}")
    # The deal video through a profile of its own print (the training family's held-out fonts, one
    # photo per label): every card placed is read by the classifier and the look network.
    from vision.synth.render import CardStyle, render_card

    rng = np.random.default_rng(1)
    family = CardStyle.sample(rng, "heldout")
    own = {label: [cv2.resize(np.ascontiguousarray(render_card(deck, label, rng, family)[..., 2::-1]),
                              (CANON_W, CANON_H), interpolation=cv2.INTER_AREA)] for label in classifier.labels}
    steps = deal_video(CalibratedClassifier(classifier, calibrate(classifier, deck, own, look=look), deck, look=look),
                       deck, plays)
    which, frames = placement_frames(steps)
    figures["placement"] = statistics.median(frames or [float("nan")])
    both = sum(statistics.median(steps.get(step) or [0.0]) for step in ("locate", "judge"))
    print(f"placement frame through a calibration profile: {figures['placement']:.2f} ms "
          f"(its {which} frames: the costlier of a placement's two frames, as for the model alone below; "
          f"locate + judge {both:.2f} ms)")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deck", default="flip7")
    parser.add_argument("--models-dir", default=None, help="folder with DECK.onnx and DECK.json")
    parser.add_argument("--repeats", type=int, default=300)
    parser.add_argument("--plays", type=int, default=3,
                        help="times the deal video is played through the detector (each frame: its median)")
    args = parser.parse_args()

    print(f"vision bench: {pin_one_core()}, onnxruntime 1 intra-op thread, no spinning, OpenCV threads "
          f"{cv2.getNumThreads()}")
    ours = CardClassifier.load(args.deck, args.models_dir)
    spec = ours.spec
    model_path = Path(ours.name)
    print(f"our model: {model_path} ({model_path.stat().st_size / 1024:.0f} KiB), input "
          f"{spec.width}x{spec.height}, {len(spec.classes)} classes")
    frames = scenes(8, args.deck)
    crops = [warp_card(f, t[0].quad) for f, t in frames]
    rss_start = rss_mb()
    results = {"ours": measure("our model", ours, args.deck, frames, crops, args.repeats, args.plays)}
    walked = calibrated_reading(ours, args.deck, crops[0], frames, args.repeats, args.plays)
    # tracemalloc hooks every allocation (it made the placement frame ~1.6x slower here), so the
    # Python-side peak is taken in a pass of its own, after the timings.
    tracemalloc.start()
    detector = PlacementDetector(ours)
    for index, frame in enumerate(deal_frames(args.deck)):
        detector.feed(frame, index)
    for frame, _ in frames:
        ours.classify_batch([warp_card(frame, q) for q in find_cards(frame)])
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"\npeak Python-side memory (tracemalloc, a deal video and a scan of each scene, untimed): "
          f"{traced_peak / 1e6:.1f} MB; "
          f"process peak RSS (ru_maxrss) so far: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB "
          f"(RSS at start of measuring {rss_start:.0f} MB)")

    with tempfile.TemporaryDirectory() as tmp:
        for label, (h, w) in (("MobileNetV3-small at our input size", (spec.height, spec.width)),
                              ("MobileNetV3-small at 224x224", (224, 224))):
            path = Path(tmp) / f"mnv3_{h}x{w}.onnx"
            params = mobilenet_v3_small(path, h, w, len(spec.classes))
            rss0 = rss_mb()
            base_spec = ModelSpec(spec.classes, spec.none_index, w, h, spec.rgb, spec.mean, spec.std,
                                  spec.min_confidence, spec.min_margin)
            baseline = CardClassifier(onnx_session(path), base_spec, name=str(path))
            key = f"{h}x{w}"
            results[key] = measure(f"{label} ({params / 1e6:.2f} M parameters, "
                                   f"{path.stat().st_size / 1e6:.1f} MB)", baseline, args.deck, frames, crops, args.repeats, args.plays)
            print(f"session resident memory: {rss_mb() - rss0:.1f} MB")

    ours = results["ours"]
    print("\n== ratios (baseline / ours, higher = ours faster; wall and CPU)")
    for key in [k for k in results if k != "ours"]:
        base = results[key]
        print(f"MobileNetV3-small {key}: per card {base['classify'] / ours['classify']:.1f}x "
              f"(CPU {base['classify_cpu'] / ours['classify_cpu']:.1f}x), placement frame "
              f"{base['placement'] / ours['placement']:.2f}x; the network alone {base['network_cpu'] / ours['network_cpu']:.1f}x "
              f"(CPU; preprocessing, the same for both: {ours['preprocess_cpu']:.3f} ms)")
    print("\n== targets: classifier <= 2 ms per card, idle frame <= 2 ms, placement <= 15 ms, "
          ">= 5x faster per card than the baseline")
    same = results[f"{spec.height}x{spec.width}"]
    print(f"ours: classifier {ours['classify']:.3f} ms (CPU {ours['classify_cpu']:.3f}; both ways up, as the device "
          f"reads, {ours['both_ways']:.3f} ms), idle frame "
          f"{ours['idle']:.3f} ms (CPU {ours['idle_cpu']:.3f}), placement frame {ours['placement']:.2f} ms "
          f"(CPU {ours['placement_cpu']:.2f}, worst wall {ours['placement_max']:.2f}; median of the deal's "
          f"{ours['placement_n']} {ours['placement_step']} frames, the costlier of a placement's two frames "
          f"(locate + judge {ours['placement_both']:.2f} ms), each its median of {args.plays} plays); per card vs "
          f"MobileNetV3-small: {same['classify_cpu'] / ours['classify_cpu']:.1f}x at our input size, "
          f"{results['224x224']['classify_cpu'] / ours['classify_cpu']:.1f}x at 224x224 (CPU)")
    # After the user's walk every card is read through the profile: the same targets hold there.
    print(f"after a walk (through a calibration profile): reading {walked['reading']:.3f} ms per card both ways up "
          f"(<= 2 ms), calibrating {walked['photos']} photos on one core {walked['calibration_one_core']:.2f} s "
          f"(<= 2 s), placement frame {walked['placement']:.2f} ms (<= 15 ms)")
    print(f"idle frame after the light changed: {ours['idle_relit']:.3f} ms (its light measured and taken out)")
    print(f"a card the model is not sure of adds its second look to the judging frame: "
          f"{ours['judge'] + ours['second_look']:.2f} ms in all")
    print(f"load average while measuring: {os.getloadavg()[0]:.2f} (other processes share this machine)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
