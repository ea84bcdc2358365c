"""Train the look network: an embedding in which two captures of the same card face lie close.

    python -m vision.training.train_look                    # a new network -> models/card-look.onnx + card-look.json
    python -m vision.training.train_look --printings 6000 --generic-share 0.6667 --uno-numerals-share 0.15
                                                   # the committed one's base (d93e2aa's), then:
    python -m vision.training.train_look --init BASE.onnx --printings 4000 --generic-share 0.625 \
        --uno-numerals-share 0.15 --epochs 3 --lr 5e-4 --poor-share 0.3   # `make look-model`
    python -m vision.training.train_look --printings 300 --epochs 2 --out /tmp/look   # a quick try

Calibration to the user's own deck (vision.adapt) compares each crop with the crops the user
showed. The deck classifiers' features were trained to name the training renderer's cards and
read a foreign print poorly; this network is trained for the comparison itself. The data
(vision.training.look_data) are printings of all three decks' training renderers and, two thirds of them
(--generic-share), of the invented game of vision.synth.render_generic (random layouts, palettes and
symbols, some printed in suits of close colours: cards in general, not the training family),
each recoloured as a whole, with two captures of each of 8 of its cards from independent
scenes. The loss asks each capture to pick its partner out of the batch (a softmax over cosine
similarities: NT-Xent), so the hard negatives are the other cards of the same printing: what is
learnt is how cards of one printing differ, not what the training print looks like. A card's two captures are turned half
round together or not at all, so "6" and a turned "9" stay different cards.

`--init ONNX` fine-tunes an exported network instead of training a new one: the export folds
each batch norm into its convolution, and the network is fine-tuned so (load_exported_weights
gives it the exported weights exactly). `--poor-share` makes one of the two captures of that
share of the cards a poor one (poor_capture: a glare washing out part of the card, or a blur),
as one calibration sample may be.

The network is the plain backbone (vision.training.train.build_plain_model) without its pooling and
classification layer: the last feature map (192 x 8 x 6 at width 1.5 and 84 x 120), flattened, projected to 128 values
and scaled to unit length (the ONNX output `embedding`). `--width` scales the backbone's
channels (default 1.5: the committed network, 24-48-48-96-96-192; 1 was the one before, see
docs/history/calibration.md). `--input-size W H` sets the crop it reads (default 84 x 120, the committed
network's; 56 x 80 was the one before; the sidecar tells the run time; the data are cached per
size). The run writes the float network as OUT/card-look-float.onnx, its weights stored in half
precision (store_weights_half), and the int8 network the device reads as OUT/card-look.onnx
(quantise_look; `--quantise-only` makes it again from the float file). One
network serves every deck. Needs the `train` extra (PyTorch); the device reads the ONNX file
with onnxruntime. Data generation is cached under data/ (each kind apart; a larger set of the
same seed is made by extending a smaller cache, its first printings being the same) and takes
~2.5 min per 1000 printings with two processes at 56 x 80 (24 min for the default 6000 at 84 x
120); training on the default 6000 printings (2000 family + 4000 generic) for 15 epochs ~93 min
on two threads at 84 x 120 (width 1.5; ~31 min at 56 x 80; ~11 min for width 1 at 56 x 80).

A run longer than a sitting can be stopped and continued: after each epoch the run's state (the
network, the optimiser and its schedule, both random generators) is kept in
OUT/card-look.checkpoint.pt, and the same command with `--resume` goes on from the last epoch
kept, ending with the network an unbroken run makes. The checkpoint is deleted once the network
is written.
"""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
import time
from pathlib import Path

import numpy as np

from vision.training.dataset import LOOK_INPUT_SIZE
from vision.training.train import DATA_DIR, MODELS_DIR, cached

log = logging.getLogger(__name__)

LOOK_NAME = "card-look"
CHECKPOINT_NAME = f"{LOOK_NAME}.checkpoint.pt"
# What shapes a run's network: a checkpoint is only continued by a command that agrees on all of it.
RUN_SETTINGS = ("seed", "printings", "generic_share", "uno_numerals_share", "val_printings", "epochs",
                "batch_printings", "lr", "width", "input_size", "poor_share", "init_sha256")


class CheckpointError(Exception):
    """A checkpoint that cannot be continued: missing, unreadable, or of another run."""


def run_settings(args) -> dict:
    settings = {name: getattr(args, name) for name in RUN_SETTINGS}
    settings["input_size"] = list(settings["input_size"])
    return {**settings, "data_version": LOOK_DATA_VERSION, "generic_data_version": GENERIC_DATA_VERSION}


def save_checkpoint(path: Path, args, epoch: int, model, opt, sched, rng, minutes: float) -> None:
    """The run's state after `epoch` epochs, written whole or not at all (a stop mid-write keeps the
    previous epoch's)."""
    import io

    import torch

    from vision.files import write_atomically

    buffer = io.BytesIO()
    torch.save({"settings": run_settings(args), "epochs_done": epoch, "minutes": minutes,
                "model": model.state_dict(), "optimiser": opt.state_dict(), "schedule": sched.state_dict(),
                "numpy_rng": rng.bit_generator.state, "torch_rng": torch.get_rng_state(),
                "threads": args.threads}, buffer)
    write_atomically(path, buffer.getbuffer())      # (a view: not a second copy in memory)


def read_checkpoint(path: Path, args) -> dict:
    """The state kept in `path` for the run `args` describes; CheckpointError saying why not."""
    import torch

    if not path.is_file():
        raise CheckpointError(f"{path}: no checkpoint to resume (a run keeps one in its --out folder)")
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
        saved, done = state["settings"], int(state["epochs_done"])
    except Exception as error:  # torch raises many kinds for a damaged file
        raise CheckpointError(f"{path}: not a readable checkpoint ({type(error).__name__}: {error})") from None
    differ = {k: (saved.get(k), v) for k, v in run_settings(args).items() if saved.get(k) != v}
    if differ:
        raise CheckpointError(f"{path}: a checkpoint of another run; it differs in "
                              + ", ".join(f"{k} (it has {was!r}, this command {now!r})" for k, (was, now) in differ.items()))
    if not 0 < done <= args.epochs:
        raise CheckpointError(f"{path}: {done} epochs done, of {args.epochs}")
    return state


LOOK_DATA_VERSION = 3      # bump when vision.training.look_data's family printings change, so stale caches are not reused
GENERIC_DATA_VERSION = 4   # the same for its generic printings (vision.synth.render_generic), cached apart
EMBEDDING_DIM = 128
TEMPERATURE = 0.1


def build_look_model(dim: int = EMBEDDING_DIM, width: float = 1.0, input_size: tuple[int, int] = LOOK_INPUT_SIZE,
                     folded: bool = False):
    """The backbone of vision.training.train.build_plain_model (`width` times its channels) and a projection of
    its last feature map (channels x 5 x 4 for a 56 x 80 input, x 8 x 6 for 84 x 120) to `dim`
    values of unit length. input_size is (W, H). `folded`: each batch norm folded into its
    convolution (a bias), as the ONNX export stores it: the network an exported model is
    fine-tuned as (load_exported_weights)."""
    import torch
    import torch.nn as nn

    from vision.training.train import build_plain_model

    backbone = build_plain_model(1, width)[:-4]  # drop pooling, flatten, dropout, linear
    if folded:
        layers = []
        for layer in backbone:
            if isinstance(layer, nn.Conv2d):
                layers.append(nn.Conv2d(layer.in_channels, layer.out_channels, layer.kernel_size, layer.stride,
                                        layer.padding, bias=True))
            elif not isinstance(layer, nn.BatchNorm2d):
                layers.append(layer)
        backbone = nn.Sequential(*layers)
    with torch.no_grad():
        features = backbone.eval()(torch.zeros(1, 3, input_size[1], input_size[0])).numel()

    class LookNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.backbone = backbone
            self.project = nn.Sequential(nn.Flatten(), nn.Dropout(0.1), nn.Linear(features, dim))

        def forward(self, x):
            return nn.functional.normalize(self.project(self.backbone(x)), dim=1)

    torch.manual_seed(0)  # the projection's initial weights (as the committed model was trained)
    return LookNet()


def load_exported_weights(model, path: Path) -> None:
    """Set a folded look network's weights (build_look_model(folded=True)) from an exported ONNX
    look model: its convolutions in graph order, then the projection."""
    import onnx
    import torch
    from onnx import numpy_helper

    graph = onnx.load(str(path)).graph
    arrays = {t.name: numpy_helper.to_array(t).astype(np.float32) for t in graph.initializer}
    arrays.update({node.output[0]: arrays[node.input[0]] for node in graph.node   # store_weights_half's casts
                   if node.op_type == "Cast" and node.input[0] in arrays})
    convs = [m for m in model.backbone if isinstance(m, torch.nn.Conv2d)]
    found = [node.input[1:] for node in graph.node if node.op_type == "Conv"]
    if len(found) != len(convs):
        raise ValueError(f"{path}: {len(found)} convolutions, the network has {len(convs)}")
    with torch.no_grad():
        for conv, (weight, bias) in zip(convs, found):
            conv.weight.copy_(torch.from_numpy(arrays[weight]))
            conv.bias.copy_(torch.from_numpy(arrays[bias]))
        linear = model.project[2]
        linear.weight.copy_(torch.from_numpy(arrays["project.2.weight"]))
        linear.bias.copy_(torch.from_numpy(arrays["project.2.bias"]))


def look_cache_path(printings: int, seed: int, kind: str = "family", size: tuple[int, int] = LOOK_INPUT_SIZE) -> Path:
    at = "" if tuple(size) == (56, 80) else f"-{size[0]}x{size[1]}"  # (56 x 80 caches were named before sizes)
    if kind == "family":
        return DATA_DIR / f"look-p{printings}-s{seed}-v{LOOK_DATA_VERSION}{at}.npz"
    return DATA_DIR / f"look-{kind}-p{printings}-s{seed}-v{GENERIC_DATA_VERSION}{at}.npz"


def cached_look_samples(printings: int, seed: int, workers: int = 1, kind: str = "family",
                        size: tuple[int, int] = LOOK_INPUT_SIZE):
    """`printings` printings of `kind`, crops of `size` (W, H), cached. Each printing is seeded by
    (seed, index), so the first n printings of a larger cache of the same seed, version and size
    are these very samples."""
    import re
    from dataclasses import fields

    from vision.training.look_data import LookSamples, make_look_samples

    path = look_cache_path(printings, seed, kind, size)
    if not path.exists():
        pattern = re.escape(look_cache_path(999999, seed, kind, size).name).replace("999999", "([0-9]+)")
        sizes = sorted((int(m.group(1)), f) for f in DATA_DIR.glob(f"look-*-s{seed}-*.npz")
                       if (m := re.fullmatch(pattern, f.name)))       # the caches of this seed, kind and version
        larger = [(n, f) for n, f in sizes if n > printings]
        smaller = [(n, f) for n, f in sizes if n < printings]
        if larger:
            log.info("using the first %d printings of cached samples %s", printings, larger[0][1])
            with np.load(larger[0][1]) as z:
                return LookSamples(**{f.name: z[f.name][:printings] for f in fields(LookSamples)})
        if smaller:  # the same first printings: make only the rest
            n, small_path = smaller[-1]
            log.info("extending cached samples %s (%d printings) to %d", small_path, n, printings)

            def extend():
                with np.load(small_path) as z:
                    head = LookSamples(**{f.name: z[f.name] for f in fields(LookSamples)})
                tail = make_look_samples(printings, seed, workers, kind, start=n, size=size)
                return LookSamples(*(np.concatenate([getattr(head, f.name), getattr(tail, f.name)])
                                     for f in fields(LookSamples)))
            return cached(path, extend, LookSamples)
    return cached(path, lambda: make_look_samples(printings, seed, workers, kind, size=size), LookSamples)


def printings_of_each_kind(printings: int, generic_share: float, uno_numerals_share: float = 0.0) -> dict[str, int]:
    """{"family": n, "generic": m, "uno-numerals": k}: round(printings x generic_share) generic,
    round(printings x uno_numerals_share) UNO Flip printings dealing one colour's numerals
    together, the rest family."""
    generic = int(round(printings * generic_share))
    numerals = int(round(printings * uno_numerals_share))
    return {"family": printings - generic - numerals, "generic": generic, "uno-numerals": numerals}


def training_samples(printings: int, generic_share: float, seed: int, workers: int = 1,
                     size: tuple[int, int] = LOOK_INPUT_SIZE, uno_numerals_share: float = 0.0):
    """The training printings of each kind (printings_of_each_kind, each kind cached apart),
    concatenated."""
    from vision.training.look_data import LookSamples

    parts = [cached_look_samples(n, seed, workers, kind, size)
             for kind, n in printings_of_each_kind(printings, generic_share, uno_numerals_share).items() if n]
    return LookSamples(*(np.concatenate([getattr(p, name) for p in parts])
                         for name in ("x", "labels", "decks")))


def _batch(x, printings_idx, rng, poor_share: float = 0.0):
    """(inputs (P*L*V, 3, H, W), partner index of each row). A card's views are turned half round
    together; each view gets its own light jitter; a `poor_share` of the cards have one view made
    a poor capture (poor_capture)."""
    import torch

    from vision.training.dataset import normalize

    sub = x[printings_idx]                           # (P, L, V, H, W, 3)
    p, l, v = sub.shape[:3]
    turn = rng.random((p, l)) < 0.5
    sub = sub.copy()
    sub[turn] = sub[turn][:, :, ::-1, ::-1]
    if poor_share > 0:  # (drawn only then: without it the random stream is the one before --poor-share)
        for i, j in zip(*np.nonzero(rng.random((p, l)) < poor_share)):
            k = int(rng.integers(v))
            sub[i, j, k] = poor_capture(sub[i, j, k], rng)
    flat = sub.reshape(p * l * v, *sub.shape[3:])
    xb = torch.from_numpy(normalize(flat))
    n = len(xb)
    gain = torch.from_numpy(rng.uniform(0.75, 1.25, (n, 1, 1, 1)).astype(np.float32))
    bias = torch.from_numpy(rng.normal(0, 0.25, (n, 1, 1, 1)).astype(np.float32))
    chan = torch.from_numpy(rng.normal(0, 0.12, (n, 3, 1, 1)).astype(np.float32))
    rows = np.arange(n).reshape(p * l, v)
    partner = np.empty(n, np.int64)
    partner[rows[:, 0]] = rows[:, 1]
    partner[rows[:, 1]] = rows[:, 0]
    return xb * gain + bias + chan, torch.from_numpy(partner)


def poor_capture(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The crop as a poor calibration capture shows it: a glare washing out part of the card (an
    ellipse of light up to half its width, added) or a defocus blur. One view of a pair, not both:
    calibration's one sample of a card may be such a capture and every later one of it compared with it
    (docs/history/calibration.md, "Where the one-sample failures come from")."""
    import cv2

    h, w = crop.shape[:2]
    if rng.random() < 0.5:
        return cv2.GaussianBlur(crop, (0, 0), rng.uniform(1.0, 2.5))
    mask = np.zeros((h, w), np.float32)
    centre = (int(rng.uniform(0.15, 0.85) * w), int(rng.uniform(0.15, 0.85) * h))
    axes = (int(rng.uniform(0.1, 0.5) * w), int(rng.uniform(0.05, 0.3) * w))
    cv2.ellipse(mask, centre, axes, float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
    mask = cv2.GaussianBlur(mask, (0, 0), rng.uniform(2, 6))
    return np.clip(crop + mask[..., None] * rng.uniform(80, 220), 0, 255).astype(np.uint8)


def one_shot_accuracy(model, x) -> float:
    """Within each printing, view 1 of each card named by its nearest view 0 (of 8 cards)."""
    import torch

    from vision.training.dataset import normalize

    model.eval()
    p, l = x.shape[:2]
    with torch.no_grad():
        z = torch.cat([model(torch.from_numpy(normalize(x[i:i + 64].reshape(-1, *x.shape[3:]))))
                       for i in range(0, p, 64)]).numpy().reshape(p, l, 2, -1)
    sims = np.einsum("pld,pmd->plm", z[:, :, 1], z[:, :, 0])
    return float((sims.argmax(2) == np.arange(l)).mean())


def train(args) -> int:
    import torch
    import torch.nn.functional as F

    from vision.training.train import backbone_channels

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    import cv2
    cv2.setNumThreads(1)
    rng = np.random.default_rng(args.seed)
    t_start = time.perf_counter()
    size = tuple(args.input_size)
    train_set = training_samples(args.printings, args.generic_share, args.seed, args.threads, size,
                                 args.uno_numerals_share)
    # Validation: printings of each kind apart (the family's figure stays comparable with older runs).
    val_sets = {kind: cached_look_samples(args.val_printings, args.seed + 1, args.threads, kind, size).x
                for kind in ("family", "generic")}
    if args.data_only:
        return 0
    x = train_set.x
    model = build_look_model(width=args.width, input_size=size, folded=args.init is not None)
    if args.init is not None:
        load_exported_weights(model, Path(args.init))
        log.info("fine-tuning %s (batch norms folded into the convolutions)", args.init)
    log.info("look network: width %g (channels %s), input %d x %d, %d parameters", args.width,
             "-".join(map(str, backbone_channels(args.width))), *size, sum(p.numel() for p in model.parameters()))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=5e-4)
    steps = len(x) // args.batch_printings
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.epochs * steps, pct_start=0.15)
    out_dir = Path(args.out)
    checkpoint = out_dir / CHECKPOINT_NAME
    first_epoch, minutes_before = 0, 0.0
    if args.resume_state is not None:
        state = args.resume_state
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimiser"])
        sched.load_state_dict(state["schedule"])
        rng.bit_generator.state = state["numpy_rng"]
        torch.set_rng_state(state["torch_rng"])
        first_epoch, minutes_before = state["epochs_done"], state["minutes"]
        log.info("resuming %s after epoch %d of %d (%.1f min spent before)", checkpoint, first_epoch, args.epochs,
                 minutes_before)
        if state["threads"] != args.threads:
            log.warning("the run began on %d threads and goes on on %d: its last bits may differ from an "
                        "unbroken run's", state["threads"], args.threads)
    out_dir.mkdir(parents=True, exist_ok=True)
    for epoch in range(first_epoch, args.epochs):
        model.train()
        order = rng.permutation(len(x))
        t0, loss_sum = time.perf_counter(), 0.0
        for i in range(steps):
            xb, partner = _batch(x, order[i * args.batch_printings:(i + 1) * args.batch_printings], rng,
                                 args.poor_share)
            z = model(xb)
            sims = z @ z.T / TEMPERATURE
            sims.fill_diagonal_(float("-inf"))
            loss = F.cross_entropy(sims, partner)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            loss_sum += loss.item()
        log.info("epoch %d/%d: loss %.4f, validation one-shot accuracy (8 cards) %s (%.0f s)", epoch + 1,
                 args.epochs, loss_sum / steps, ", ".join(f"{kind} {one_shot_accuracy(model, xv):.4f}"
                                                          for kind, xv in val_sets.items()), time.perf_counter() - t0)
        save_checkpoint(checkpoint, args, epoch + 1, model, opt, sched, rng,
                        minutes_before + (time.perf_counter() - t_start) / 60)
    val_acc = {kind: round(one_shot_accuracy(model, xv), 4) for kind, xv in val_sets.items()}
    x_val = val_sets["family"]
    onnx_path = out_dir / f"{LOOK_NAME}.onnx"
    float_path = out_dir / f"{LOOK_NAME}{FLOAT_SUFFIX}.onnx"
    export_look(model, float_path, x_val[:8].reshape(-1, *x_val.shape[3:]))
    quantised = quantise_look(float_path, onnx_path, val_sets)
    from vision.training.dataset import MEAN, STD
    sidecar = {
        "kind": "look-embedding",
        "input": {"width": size[0], "height": size[1], "channel_order": "rgb", "resize": "area"},
        "normalize": {"mean": list(MEAN), "std": list(STD)},
        "embedding_dim": EMBEDDING_DIM,
        "weights": QUANTISED_WEIGHTS,
        "quantisation": quantised,
        "backbone": {"width_multiplier": args.width, "channels": backbone_channels(args.width)},
        "training": {"seed": args.seed, "printings": args.printings, "epochs": args.epochs,
                     "batch_printings": args.batch_printings, "lr": args.lr, "temperature": TEMPERATURE,
                     "generic_share": args.generic_share, "uno_numerals_share": args.uno_numerals_share,
                     "poor_share": args.poor_share,
                     "init": args.init_sha256,
                     **{f"{kind}_printings": n for kind, n in
                        printings_of_each_kind(args.printings, args.generic_share,
                                               args.uno_numerals_share).items()},
                     "data_version": LOOK_DATA_VERSION,
                     "generic_data_version": GENERIC_DATA_VERSION, "val_one_shot_accuracy": val_acc,
                     "minutes": round(minutes_before + (time.perf_counter() - t_start) / 60, 1),
                     "command": args.command,
                     "data": "vision.training.look_data: recoloured printings, 8 cards x 2 captures each: of the training "
                             "family (flip7, flip7-vengeance and uno-flip renderers; train fonts and surfaces) and, "
                             "a generic_share of them, of vision.synth.render_generic's invented game"},
    }
    onnx_path.with_suffix(".json").write_text(json.dumps(sidecar, indent=2) + "\n")
    checkpoint.unlink(missing_ok=True)
    log.info("wrote %s (%.0f kB; its float network %s) in %.1f min; now run: python -m vision.evaluation.foreign_eval "
             "--deck flip7", onnx_path, onnx_path.stat().st_size / 1024, float_path.name, (time.perf_counter() - t_start) / 60)
    return 0


# The device reads an int8 network: onnxruntime's static quantisation (QOperator: QLinearConv and
# QGemm; activations uint8, weights int8 per output channel, min-max ranges) of the trained float
# network, which stays beside it (OUT/card-look-float.onnx: what --init fine-tunes and
# --quantise-only quantises again). reduce_range keeps the weights to 7 bits: x86's AVX2 u8 x s8
# products saturate otherwise (the 1st percentile of the cosine with the float embedding was 0.88
# without it, 0.996 with it, on 1,536 rendered crops of validation printings; on the Pi's ARM
# cores it changes nothing but a bit of precision). One core (bench/vision_bench.py): 1.29 ->
# 0.73 ms a crop, the same one-shot accuracy within 0.2 points (a throwaway run, 2026-12-04).
FLOAT_SUFFIX = "-float"
QUANTISED_WEIGHTS = ("int8 (onnxruntime static quantisation of the float network beside it, "
                     "card-look-float.onnx: train_look.quantise_look)")
QUANTISE_PRINTINGS = 64        # validation printings of each kind whose crops set the int8 ranges; the rest check them
QUANTISED_MIN_COSINE = 0.98    # the check: 1st percentile of the cosine between the int8 and float embeddings
QUANTISED_MAX_LOSS = 0.01      # and one-shot accuracy lost, of each kind


def float32_model(path: Path):
    """The ONNX model at `path` with store_weights_half undone: float32 initializers, no casts
    (what onnxruntime's quantiser reads)."""
    import onnx
    from onnx import TensorProto, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    halves = {t.name: t for t in graph.initializer if t.data_type == TensorProto.FLOAT16}
    casts = [n for n in graph.node if n.op_type == "Cast" and n.input[0] in halves]
    keep = [t for t in graph.initializer if t.name not in halves]
    keep += [numpy_helper.from_array(numpy_helper.to_array(halves[n.input[0]]).astype(np.float32), n.output[0])
             for n in casts]
    nodes = [n for n in graph.node if n not in casts]
    del graph.initializer[:]
    graph.initializer.extend(keep)
    del graph.node[:]
    graph.node.extend(nodes)
    return model


def quantise_look(float_path: Path, out_path: Path, val_sets: dict[str, np.ndarray]) -> dict:
    """Write the int8 network of the float one at `float_path` to `out_path` (see FLOAT_SUFFIX),
    its ranges set by the crops of the first QUANTISE_PRINTINGS printings of each validation set
    (`val_sets`: kind -> (P, L, V, H, W, 3) crops) and checked on the rest: the cosine between the
    two networks' embeddings, and each kind's one-shot accuracy with either. Raises RuntimeError
    when the int8 network is not close enough (QUANTISED_MIN_COSINE, QUANTISED_MAX_LOSS); returns
    the figures (the sidecar's "quantisation")."""
    import tempfile

    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    from vision.training.dataset import normalize

    ranges = np.concatenate([x[:QUANTISE_PRINTINGS].reshape(-1, *x.shape[3:]) for x in val_sets.values()])

    class Crops(CalibrationDataReader):
        def __init__(self):
            self.batches = iter([{"crop": normalize(ranges[i:i + 64])} for i in range(0, len(ranges), 64)])

        def get_next(self):
            return next(self.batches, None)

    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "float32.onnx"
        onnx.save(float32_model(float_path), str(plain))
        quantize_static(str(plain), str(out_path), Crops(), quant_format=QuantFormat.QOperator,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=True,
                        reduce_range=True)

    def embed(path: Path, x: np.ndarray) -> np.ndarray:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        flat = x.reshape(-1, *x.shape[3:])
        z = np.concatenate([session.run(None, {"crop": normalize(flat[i:i + 256])})[0] for i in range(0, len(flat), 256)])
        return z.reshape(*x.shape[:3], -1)

    figures: dict = {"format": "QOperator, activations uint8, weights int8 per channel (7 bits), min-max ranges",
                     "range_crops": int(len(ranges))}
    cosines = []
    for kind, x in val_sets.items():
        check = x[QUANTISE_PRINTINGS:]
        if not len(check):
            continue
        z_float, z_int8 = embed(float_path, check), embed(out_path, check)
        cosines.append((z_float * z_int8).sum(axis=-1).ravel())
        figures[f"{kind}_one_shot_accuracy"] = {"float": round(_one_shot(z_float), 4), "int8": round(_one_shot(z_int8), 4)}
    if cosines:
        cosine = np.concatenate(cosines)
        figures["cosine_with_float"] = {"median": round(float(np.median(cosine)), 4),
                                        "1st_percentile": round(float(np.percentile(cosine, 1)), 4),
                                        "crops": int(len(cosine))}
    log.info("quantised %s -> %s (%.0f kB): %s", float_path.name, out_path, out_path.stat().st_size / 1024,
             json.dumps({k: v for k, v in figures.items() if k != "format"}))
    lost = [kind for kind in val_sets if f"{kind}_one_shot_accuracy" in figures and
            figures[f"{kind}_one_shot_accuracy"]["float"] - figures[f"{kind}_one_shot_accuracy"]["int8"] > QUANTISED_MAX_LOSS]
    if cosines and (figures["cosine_with_float"]["1st_percentile"] < QUANTISED_MIN_COSINE or lost):
        raise RuntimeError(f"the int8 look network is not close enough to its float network: {figures}")
    return figures


def _one_shot(z: np.ndarray) -> float:
    """one_shot_accuracy of embeddings (P, L, 2, D)."""
    sims = np.einsum("pld,pmd->plm", z[:, :, 1], z[:, :, 0])
    return float((sims.argmax(2) == np.arange(z.shape[1])).mean())


def quantise_only(args) -> int:
    """--quantise-only: quantise OUT/card-look-float.onnx again into OUT/card-look.onnx, with the
    validation printings a training run of these arguments uses, and record it in the sidecar."""
    out_dir = Path(args.out)
    float_path, onnx_path = out_dir / f"{LOOK_NAME}{FLOAT_SUFFIX}.onnx", out_dir / f"{LOOK_NAME}.onnx"
    sidecar_path = onnx_path.with_suffix(".json")
    sidecar = json.loads(sidecar_path.read_text(encoding="utf-8"))
    size = (sidecar["input"]["width"], sidecar["input"]["height"])
    val_sets = {kind: cached_look_samples(args.val_printings, args.seed + 1, args.threads, kind, size).x
                for kind in ("family", "generic")}
    sidecar["weights"] = QUANTISED_WEIGHTS
    sidecar["quantisation"] = quantise_look(float_path, onnx_path, val_sets)
    sidecar_path.write_text(json.dumps(sidecar, indent=2) + "\n")
    log.info("wrote %s and %s", onnx_path, sidecar_path)
    return 0


def export_look(model, path: Path, crops_bgr) -> None:
    """ONNX export (input `crop`, output `embedding`), checked against the trained module."""
    import onnxruntime as ort
    import torch

    from vision.training.dataset import normalize

    model.eval()
    torch.onnx.export(model, torch.zeros(1, 3, *crops_bgr.shape[1:3]), str(path), input_names=["crop"],
                      output_names=["embedding"], dynamic_axes={"crop": {0: "n"}, "embedding": {0: "n"}},
                      opset_version=17, dynamo=False)
    xb = torch.from_numpy(normalize(crops_bgr))
    with torch.no_grad():
        want = model(xb).numpy()

    def exported() -> np.ndarray:
        session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        return session.run(["embedding"], {"crop": xb.numpy()})[0]

    err = float(np.abs(exported() - want).max())
    if err > 1e-4:
        raise RuntimeError(f"ONNX export differs from the trained model by {err}")
    store_weights_half(path)
    half_err = float(np.abs(exported() - want).max())
    if half_err > HALF_TOLERANCE:
        raise RuntimeError(f"the ONNX file with half-precision weights differs from the trained model by {half_err}")
    log.info("ONNX export checked: max |diff| %.2e over %d crops (%.2e with its weights stored in half precision)",
             err, len(xb), half_err)


HALF_TOLERANCE = 1e-3  # of a unit-length embedding (the 56 x 80 network: 1.4e-4)


def store_weights_half(path: Path) -> None:
    """Rewrite the ONNX file's float32 weights as float16, each cast back to float32 where it is
    used: half the file (the width-1.5 network at 56 x 80: 3.3 -> 1.6 MB; 3.0 MB at 84 x 120), the same float32 arithmetic at run
    time (onnxruntime folds the casts into constants when it loads the model)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(path))
    graph = model.graph
    initializers, casts = [], []
    for tensor in graph.initializer:
        if tensor.data_type == TensorProto.FLOAT and int(np.prod(tensor.dims)) >= 16:
            half = numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float16), f"{tensor.name}.half")
            initializers.append(half)
            casts.append(helper.make_node("Cast", [half.name], [tensor.name], to=TensorProto.FLOAT))
        else:
            initializers.append(tensor)
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    nodes = casts + list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.training.train_look", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--printings", type=int, default=6000, help="training printings (8 cards x 2 captures each)")
    parser.add_argument("--generic-share", type=float, default=0.6667,
                        help="share of the training printings drawn by vision.synth.render_generic (0: the training family only)")
    parser.add_argument("--uno-numerals-share", type=float, default=0.0,
                        help="share of the training printings that are UNO Flip printings dealing numerals of one "
                             "colour together (vision.training.look_data.one_colour_numerals; 0: none)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads and data-generation processes")
    parser.add_argument("--val-printings", type=int, default=150)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-printings", type=int, default=16, help="printings per batch (x 16 crops)")
    parser.add_argument("--data-only", action="store_true", help="generate (and cache) the data, do not train")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--width", type=float, default=1.5,
                        help="channel multiplier of the backbone (1.5: 24-48-48-96-96-192, the committed network; "
                             "1: 16-32-32-64-64-128)")
    parser.add_argument("--input-size", type=int, nargs=2, metavar=("W", "H"), default=list(LOOK_INPUT_SIZE),
                        help="the crop the network reads (default %(default)s: the committed network's; "
                             "the sidecar tells the run time)")
    parser.add_argument("--poor-share", type=float, default=0.0,
                        help="share of the cards in a batch with one capture made poor (a glare or a blur: "
                             "poor_capture); 0: none, as the network the committed one was fine-tuned from was trained")
    parser.add_argument("--init", metavar="ONNX", default=None,
                        help="fine-tune this exported look model (its batch norms stay folded) instead of "
                             "training a new network; --width and --input-size must match it")
    parser.add_argument("--out", default=str(MODELS_DIR), help="output folder (default: models/)")
    parser.add_argument("--quantise-only", action="store_true",
                        help=f"train nothing: quantise OUT/{LOOK_NAME}{FLOAT_SUFFIX}.onnx (the float network a run "
                             f"exports) into OUT/{LOOK_NAME}.onnx again, its int8 ranges set by this --seed's "
                             "validation printings, and record it in the sidecar")
    parser.add_argument("--resume", action="store_true",
                        help=f"go on from the last epoch kept in OUT/{CHECKPOINT_NAME} by a run of this same "
                             "command that was stopped")
    args = parser.parse_args(argv)
    args.command = "python -m vision.training.train_look " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))
    args.init_sha256 = None
    if args.init is not None:
        import hashlib

        if not Path(args.init).is_file():
            parser.error(f"--init {args.init}: no such file")
        args.init_sha256 = hashlib.sha256(Path(args.init).read_bytes()).hexdigest()
    if args.quantise_only:
        if not (Path(args.out) / f"{LOOK_NAME}{FLOAT_SUFFIX}.onnx").is_file():
            parser.error(f"--quantise-only: no {Path(args.out) / f'{LOOK_NAME}{FLOAT_SUFFIX}.onnx'} to quantise")
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
        return quantise_only(args)
    args.resume_state = None
    checkpoint = Path(args.out) / CHECKPOINT_NAME
    if args.resume:  # refused now, not after the data are made
        try:
            args.resume_state = read_checkpoint(checkpoint, args)
        except CheckpointError as error:
            parser.error(f"--resume: {error}")
    elif checkpoint.exists() and not args.data_only:  # a new run would overwrite a stopped run's epochs
        parser.error(f"{checkpoint}: a stopped run's checkpoint; add --resume to go on with it, or delete it "
                     "to start again")
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    return train(args)


if __name__ == "__main__":
    sys.exit(main())
