"""Train the card classifier of one deck on synthetic crops and export it (`make model`).

    python -m vision.training.train --deck flip7            # full run, ~20 min on one core
    python -m vision.training.train --deck flip7 --quick    # a few minutes, for trying things

The recipe (crops, epochs, extra "located" crops) has per-deck defaults in DECK_RECIPES; flags
given on the command line override them.

Writes models/<deck>.onnx (input `crop`: float32 N x 3 x H x W RGB, normalised; output `logits`:
N x C, dynamic batch) and models/<deck>.json (classes, input size, normalisation, reject
thresholds, training recipe). The reject thresholds written here are provisional: run
`python -m vision.evaluation.evaluate --deck DECK` afterwards to tune them on held-out data.
Generated samples are cached under data/ (gitignored), keyed by deck, count, seed and recipe.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

MODELS_DIR = Path(__file__).resolve().parents[2] / "models"
DATA_DIR = Path(__file__).resolve().parents[2] / "data"
RECIPE_VERSION = 4  # bump when the sample generator changes, so stale caches are not reused
LOCATED_VERSION = 1  # the same for make_located_samples

# The recipe every deck starts from, and what a deck changes in it. "located_samples" are extra
# crops cut at quads with a locator's larger errors (vision.training.dataset.make_located_samples), added to the usual ones.
BASE_RECIPE = {"samples": 40000, "epochs": 18, "located_samples": 0, "printed_share": 0.5}
DECK_RECIPES: dict[str, dict] = {
    # The deal video's "not sure" misses were cards read from a quad with one corner or one side
    # off by 10-20 % of the card (models/flip7-vengeance.md): train on such crops too.
    "flip7-vengeance": {"located_samples": 16000},
    # Trained with the printed faces (models/flip7.md): with half of them printed, renders were
    # seen too seldom and six tests of the synthetic cases failed; a third, with crops at the
    # locator's larger errors (the printed faces' busy borders put its outline further off), passes.
    "flip7": {"located_samples": 12000, "printed_share": 0.3},
    # The same for UNO Flip (models/uno-flip.md): half printed made it guess on other printings.
    "uno-flip": {"located_samples": 12000, "printed_share": 0.3},
}


def deck_recipe(deck: str) -> dict:
    return {**BASE_RECIPE, **DECK_RECIPES.get(deck, {})}


def backbone_channels(width: float = 1.0) -> list[int]:
    """The look network's six conv layers' output channels: 16-32-32-64-64-128 times `width` (rounded)."""
    return [int(round(c * width)) for c in (16, 32, 32, 64, 64, 128)]


# The deck classifiers' six layers' output channels (a plain 3 x 3 convolution, then five
# depthwise-separable ones).
CLASSIFIER_CHANNELS = (16, 32, 48, 64, 96, 128)
CLASSIFIER_STRIDES = (2, 2, 1, 2, 1, 2)


def build_model(num_classes: int):
    """The deck classifier: a 3 x 3 convolution, five depthwise-separable ones (a 3 x 3 per
    channel, then a 1 x 1 across channels; each convolution with batch norm and ReLU), global
    average pooling, dropout 0.2, one linear layer. ~31 k parameters, ~2.7 M multiply-adds at
    63 x 88: a seventh of the plain network's cost (build_plain_model), which is what a card's
    reading spends most of its time in."""
    import torch.nn as nn

    def norm_relu(channels):
        return [nn.BatchNorm2d(channels), nn.ReLU(inplace=True)]

    c_in = CLASSIFIER_CHANNELS[0]
    layers = [nn.Conv2d(3, c_in, 3, CLASSIFIER_STRIDES[0], 1, bias=False), *norm_relu(c_in)]
    for c_out, stride in zip(CLASSIFIER_CHANNELS[1:], CLASSIFIER_STRIDES[1:]):
        layers += [nn.Conv2d(c_in, c_in, 3, stride, 1, groups=c_in, bias=False), *norm_relu(c_in),
                   nn.Conv2d(c_in, c_out, 1, bias=False), *norm_relu(c_out)]
        c_in = c_out
    return nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
                         nn.Linear(c_in, num_classes))


def build_plain_model(num_classes: int, width: float = 1.0):
    """Six plain 3x3 conv + BN + ReLU layers (four of stride 2), global average pooling, one linear
    layer: ~150 k parameters, ~10 M multiply-adds at 56 x 80. The deck classifiers' network until
    2026-11-27 and the look network's backbone (vision.training.train_look), `width` times its channels."""
    import torch.nn as nn

    def block(cin, cout, stride):
        return [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

    c1, c2, c3, c4, c5, c6 = backbone_channels(width)
    return nn.Sequential(
        *block(3, c1, 2), *block(c1, c2, 2), *block(c2, c3, 1), *block(c3, c4, 2), *block(c4, c5, 1),
        *block(c5, c6, 2), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(c6, num_classes))


def cached(path: Path, make, kind):
    """Samples (a dataclass of arrays, `kind`) saved at path, or made by make() and saved there
    (generation takes minutes)."""
    from dataclasses import asdict, fields

    if path.exists():
        with np.load(path) as z:
            log.info("using cached samples %s", path)
            return kind(**{f.name: z[f.name] for f in fields(kind)})
    t = time.perf_counter()
    samples = make()
    log.info("generated %s in %.0f s", path.name, time.perf_counter() - t)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez(path, **asdict(samples))
    return samples


def printed_tag(printed: dict | None, share: float) -> str:
    """The part of a cache's name that says which printed faces were dealt in, and how often."""
    if not printed or share <= 0:
        return ""
    from vision.synth.printed import printed_digest

    return f"-printed{printed_digest(printed)}x{share:g}"


def cached_samples(deck: str, n: int, seed: int, split: str, printed: dict | None = None, printed_share: float = 0.0):
    from vision.training.dataset import Samples, make_samples

    tag = printed_tag(printed, printed_share)
    return cached(DATA_DIR / f"{deck}-{split}-n{n}-s{seed}-v{RECIPE_VERSION}{tag}.npz",
                  lambda: make_samples(deck, n, seed, split, printed=printed, printed_share=printed_share), Samples)


def cached_located_samples(deck: str, n: int, seed: int, split: str, printed: dict | None = None,
                           printed_share: float = 0.0):
    from vision.training.dataset import Samples, make_located_samples

    tag = printed_tag(printed, printed_share)
    return cached(DATA_DIR / f"{deck}-{split}-located-n{n}-s{seed}-v{RECIPE_VERSION}.{LOCATED_VERSION}{tag}.npz",
                  lambda: make_located_samples(deck, n, seed, split, printed=printed, printed_share=printed_share),
                  Samples)


def _augment(xb, rng):
    """Cheap per-batch photometric jitter on normalised tensors, and a random half-turn (the
    runtime sees cards both ways up)."""
    import torch

    n = xb.shape[0]
    flip = torch.from_numpy(rng.random(n) < 0.5)
    xb[flip] = torch.flip(xb[flip], dims=(2, 3))
    gain = torch.from_numpy(rng.uniform(0.75, 1.25, (n, 1, 1, 1)).astype(np.float32))
    bias = torch.from_numpy(rng.normal(0, 0.25, (n, 1, 1, 1)).astype(np.float32))
    chan = torch.from_numpy(rng.normal(0, 0.12, (n, 3, 1, 1)).astype(np.float32))
    return xb * gain + bias + chan


def train(args) -> int:
    import torch
    import torch.nn.functional as F

    from vision.training.dataset import INPUT_H, INPUT_W, MEAN, NONE_CLASS, STD, class_names, normalize

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    import cv2
    cv2.setNumThreads(1)
    rng = np.random.default_rng(args.seed)
    names = class_names(args.deck)
    t_start = time.perf_counter()
    printed = None
    if args.printed_faces:
        from vision.synth.printed import load_printed_faces

        printed = load_printed_faces(args.deck, args.printed_faces)
        log.info("printed faces: %d of %d labels from %s, dealt in as %.0f %% of new faces", len(printed),
                 len(names) - 1, args.printed_faces, 100 * args.printed_share)
    share = args.printed_share if printed else 0.0
    train_set = cached_samples(args.deck, args.samples, args.seed, "train", printed, share)
    val_set = cached_samples(args.deck, args.val_samples, args.seed + 1, "train", printed, share)
    if args.located_samples:
        located = cached_located_samples(args.deck, args.located_samples, args.seed + 2, "train", printed, share)
        train_set = type(train_set)(np.concatenate([train_set.x, located.x]), np.concatenate([train_set.y, located.y]))
    x_train = torch.from_numpy(normalize(train_set.x))
    y_train = torch.from_numpy(train_set.y)
    x_val = torch.from_numpy(normalize(val_set.x))
    y_val = torch.from_numpy(val_set.y)

    model = build_model(len(names))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=5e-4)
    steps_per_epoch = (len(x_train) + args.batch - 1) // args.batch
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.epochs * steps_per_epoch,
                                                pct_start=0.15)
    for epoch in range(args.epochs):
        model.train()
        order = torch.from_numpy(rng.permutation(len(x_train)))
        t0, total, correct, loss_sum = time.perf_counter(), 0, 0, 0.0
        for i in range(steps_per_epoch):
            idx = order[i * args.batch:(i + 1) * args.batch]
            xb, yb = _augment(x_train[idx].clone(), rng), y_train[idx]
            logits = model(xb)
            loss = F.cross_entropy(logits, yb, label_smoothing=0.05)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            loss_sum += loss.item() * len(idx)
            correct += int((logits.argmax(1) == yb).sum())
            total += len(idx)
        val_acc = evaluate_accuracy(model, x_val, y_val)
        log.info("epoch %d/%d: loss %.4f, train acc %.4f, val acc %.4f (%.0f s)", epoch + 1, args.epochs,
                 loss_sum / total, correct / total, val_acc, time.perf_counter() - t0)

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    onnx_path = out_dir / f"{args.deck}.onnx"
    export_onnx(model, onnx_path, INPUT_H, INPUT_W)
    check_export(model, onnx_path, x_val[:64])
    data = ("crops warped at jittered true quads from vision.synth scenes (render split 'train': "
            "train fonts, train surfaces), ~20% 'none' crops (table, hands, part of a card, "
            "oversized/undersized quads, two overlapping cards)")
    if printed:
        data += (f"; {100 * share:.0f} % of the faces drawn were the deck's real printed faces ({len(printed)} "
                 "labels, scans of the printed deck, not in the repo), each as another print run would look "
                 "(inks, cut, register, wear: vision.printed)")
    if args.located_samples:
        data += (f"; plus {args.located_samples} crops at quads with a locator's larger errors (one corner "
                 "5-22% or one side 4-14% of the card off, shifted 3-9%, turned 2-8 deg, scaled 0.85-1.12; "
                 "vision.dataset.make_located_samples, seed + 2) and their share of 'none' crops")
    sidecar = {
        "deck": args.deck,
        "classes": names,
        "none_class": NONE_CLASS,
        "input": {"width": INPUT_W, "height": INPUT_H, "channel_order": "rgb", "resize": "area"},
        "normalize": {"mean": list(MEAN), "std": list(STD)},
        # Provisional until `python -m vision.evaluation.evaluate` tunes them on held-out data.
        "reject": {"min_confidence": 0.9, "min_margin": 0.5},
        "training": {
            "seed": args.seed, "samples": args.samples, "epochs": args.epochs, "batch": args.batch,
            "lr": args.lr, "threads": args.threads, "recipe_version": RECIPE_VERSION,
            **({"located_samples": args.located_samples, "located_version": LOCATED_VERSION}
               if args.located_samples else {}),
            **({"printed_faces": len(printed), "printed_share": share, "printed_digest": printed_tag(printed, share)}
               if printed else {}),
            "network": {"kind": "3x3 conv, then depthwise-separable (vision.train.build_model)",
                        "channels": list(CLASSIFIER_CHANNELS), "strides": list(CLASSIFIER_STRIDES),
                        "parameters": sum(p.numel() for p in model.parameters())},
            "val_accuracy": round(val_acc, 5), "minutes": round((time.perf_counter() - t_start) / 60, 1),
            "data": data,
            "command": args.command,
        },
        "metrics": {},
    }
    (out_dir / f"{args.deck}.json").write_text(json.dumps(sidecar, indent=2) + "\n")
    log.info("wrote %s (%.0f kB) and %s.json in %.1f min; now run: python -m vision.evaluation.evaluate --deck %s",
             onnx_path, onnx_path.stat().st_size / 1024, onnx_path.with_suffix(""),
             (time.perf_counter() - t_start) / 60, args.deck)
    return 0


def evaluate_accuracy(model, x, y, batch: int = 512) -> float:
    import torch

    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            correct += int((model(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum())
    return correct / max(1, len(x))


def export_onnx(model, path: Path, height: int, width: int) -> None:
    import torch

    model.eval()
    dummy = torch.zeros(1, 3, height, width)
    torch.onnx.export(model, dummy, str(path), input_names=["crop"], output_names=["logits"],
                      dynamic_axes={"crop": {0: "n"}, "logits": {0: "n"}}, opset_version=17, dynamo=False)


def check_export(model, path: Path, x) -> None:
    """The exported graph must give the same logits as the trained module."""
    import onnxruntime as ort
    import torch

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    with torch.no_grad():
        want = model(x).numpy()
    got = sess.run(["logits"], {"crop": x.numpy()})[0]
    err = float(np.abs(got - want).max())
    if err > 1e-3:
        raise RuntimeError(f"ONNX export differs from the trained model by {err}")
    log.info("ONNX export checked: max |diff| %.2e over %d crops", err, len(x))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.training.train", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deck", default="flip7", help="deck id (a renderer must exist for it)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--samples", type=int, help="training crops to generate (default: the deck's recipe, "
                        f"else {BASE_RECIPE['samples']})")
    parser.add_argument("--located-samples", type=int,
                        help="extra training crops at quads with a locator's larger errors (default: the deck's "
                             "recipe, else 0)")
    parser.add_argument("--val-samples", type=int, default=3000)
    parser.add_argument("--printed-faces", metavar="DIR",
                        help="folder of the deck's real printed faces, LABEL.png each (e.g. the team's scans): a "
                             "share of the training faces are these, as other print runs would look")
    parser.add_argument("--printed-share", type=float,
                        help="share of the new training faces drawn from --printed-faces (default: the deck's "
                             f"recipe, else {BASE_RECIPE['printed_share']})")
    parser.add_argument("--epochs", type=int, help=f"default: the deck's recipe, else {BASE_RECIPE['epochs']}")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--lr", type=float, default=4e-3)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (the machine is shared)")
    parser.add_argument("--quick", action="store_true", help="small data, few epochs (minutes)")
    parser.add_argument("--out", default=str(MODELS_DIR), help="output folder (default: models/)")
    args = parser.parse_args(argv)
    args.command = "python -m vision.training.train " + " ".join(argv if argv is not None else sys.argv[1:])
    recipe = deck_recipe(args.deck)
    if args.quick:
        recipe = {**recipe, "samples": 10000, "epochs": 6, "located_samples": recipe["located_samples"] // 4}
        args.val_samples = 1000
    for key, value in recipe.items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr)
    from vision.synth.render import RENDERERS

    if args.deck not in RENDERERS:
        parser.error(f"no card renderer for deck {args.deck!r} yet (have: {', '.join(RENDERERS)})")
    return train(args)


if __name__ == "__main__":
    sys.exit(main())
