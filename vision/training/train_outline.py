"""Train the card-outline network the locator proposes cards with, and export it (`make outline-model`).

    python -m vision.training.train_outline                  # the committed recipe, ~40 min on two cores
    python -m vision.training.train_outline --quick          # minutes, for trying things

The network (vision.outline reads it) takes a camera frame at 256 x 192 (any size whose sides are
multiples of 16) and gives two maps at half that size: the probability that a pixel shows a card's
face, and that it lies on a card's outline (between a card and the table, or between two cards).
Its scenes are vision.training.outline_data's: the scene synthesiser's tables of the "train"
split (the "heldout" kinds stay unseen), every training renderer's faces and, with
--printed-faces-dir, the team's scans of the printed decks. Writes models/card-outline.onnx (input
`frame`: float32 N x 3 x H x W RGB, pixels / 255 then (x - 0.5) / 0.25; output `maps`: N x 2 x H/2 x
W/2 probabilities, card then outline) and models/card-outline.json. Generated scenes are cached
under data/ (gitignored).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

import numpy as np

from vision.training.train import DATA_DIR, MODELS_DIR, cached, check_export, export_onnx

log = logging.getLogger(__name__)

INPUT_SIZE = (256, 192)          # (w, h): a 4:3 camera frame; fully convolutional, any multiple of 16 reads
DATA_VERSION = 1                 # bump when vision.training.outline_data changes, so stale caches are not reused
CHANNELS = (16, 32, 48, 64)      # encoder widths at 1/2, 1/4, 1/8 and 1/16 of the input
PRINTED_FOLDERS = {"flip7": "flip7-art", "uno-flip": "uno-flip-art"}


def build_outline_model():
    """A small encoder-decoder: a 3 x 3 convolution and three depthwise-separable ones down to a
    sixteenth of the input, two dilated ones there (a card's whole outline in view), then back up
    to half the input adding each level's features (a U-Net's skips, summed), and a 1 x 1
    convolution to the two maps' logits."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def norm_relu(c):
        return [nn.BatchNorm2d(c), nn.ReLU(inplace=True)]

    def separable(c_in, c_out, stride=1, dilation=1):
        return nn.Sequential(nn.Conv2d(c_in, c_in, 3, stride, dilation, dilation=dilation, groups=c_in, bias=False),
                             *norm_relu(c_in), nn.Conv2d(c_in, c_out, 1, bias=False), *norm_relu(c_out))

    c1, c2, c3, c4 = CHANNELS

    class OutlineNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.down1 = nn.Sequential(nn.Conv2d(3, c1, 3, 2, 1, bias=False), *norm_relu(c1))
            self.down2 = separable(c1, c2, 2)
            self.down3 = separable(c2, c3, 2)
            self.down4 = nn.Sequential(separable(c3, c4, 2), separable(c4, c4, dilation=2),
                                       separable(c4, c4, dilation=4))
            self.up3 = separable(c4, c3)
            self.up2 = separable(c3, c2)
            self.up1 = separable(c2, c1)
            self.head = nn.Conv2d(c1, 2, 1)

        def forward(self, x):
            x1 = self.down1(x)
            x2 = self.down2(x1)
            x3 = self.down3(x2)
            y = self.down4(x3)
            y = self.up3(F.interpolate(y, scale_factor=2.0, mode="nearest")) + x3
            y = self.up2(F.interpolate(y, scale_factor=2.0, mode="nearest")) + x2
            y = self.up1(F.interpolate(y, scale_factor=2.0, mode="nearest")) + x1
            return self.head(y)

    return OutlineNet()


def with_probabilities(model):
    """The trained module with a sigmoid on its logits: what is exported (the runtime reads
    probabilities)."""
    import torch

    return torch.nn.Sequential(model, torch.nn.Sigmoid())


def cached_outline_samples(n: int, seed: int, split: str, printed: dict, workers: int):
    from vision.synth.printed import printed_digest
    from vision.training.outline_data import CHUNK, OutlineSamples, make_outline_samples

    from dataclasses import fields

    tag = "".join(f"-{deck}{printed_digest(faces)}" for deck, faces in sorted(printed.items()))
    w, h = INPUT_SIZE

    def path(count):
        return DATA_DIR / f"outline-{split}-n{count}-s{seed}-{w}x{h}-v{DATA_VERSION}{tag}.npz"

    def make():
        # Scenes are seeded by chunk, so a smaller cache of this seed holds this set's first scenes.
        smaller = [k for k in range(n - CHUNK, 0, -CHUNK) if path(k).exists()]
        if not smaller:
            return make_outline_samples(n, seed, INPUT_SIZE, split, printed, workers=workers)
        with np.load(path(smaller[0])) as z:
            head = OutlineSamples(**{f.name: z[f.name] for f in fields(OutlineSamples)})
        log.info("extending cached samples %s to %d scenes", path(smaller[0]).name, n)
        tail = make_outline_samples(n, seed, INPUT_SIZE, split, printed, workers=workers, start=smaller[0])
        return OutlineSamples(*(np.concatenate([getattr(head, f.name), getattr(tail, f.name)])
                                for f in fields(OutlineSamples)))
    return cached(path(n), make, OutlineSamples)


def _normalise(x_uint8):
    """(N, H, W, 3) BGR uint8 -> (N, 3, H, W) float32 RGB standardised (as vision.outline does)."""
    import torch

    x = torch.from_numpy(x_uint8[..., ::-1].copy()).permute(0, 3, 1, 2).float()
    return (x / 255.0 - 0.5) / 0.25


def _batch(samples, idx, rng, augment: bool):
    """Inputs and targets of the samples at idx: turned upside down or mirrored at random (a card
    is a card every way), its light and colour jittered."""
    import torch

    x = _normalise(samples.x[idx])
    y = torch.from_numpy(np.stack([samples.card[idx], samples.edge[idx]], axis=1).astype(np.float32))
    if augment:
        n = len(idx)
        for dims, share in (((3,), 0.5), ((2,), 0.5)):
            flip = torch.from_numpy(rng.random(n) < share)
            x[flip], y[flip] = torch.flip(x[flip], dims=dims), torch.flip(y[flip], dims=dims)
        gain = torch.from_numpy(rng.uniform(0.7, 1.3, (n, 1, 1, 1)).astype(np.float32))
        bias = torch.from_numpy(rng.normal(0, 0.3, (n, 1, 1, 1)).astype(np.float32))
        chan = torch.from_numpy(rng.normal(0, 0.15, (n, 3, 1, 1)).astype(np.float32))
        x = x * gain + bias + chan
    return x, y


def map_scores(model, samples, batch: int = 64) -> dict:
    """Intersection over union of the card map, and F1 of the outline map (both at 0.5)."""
    import torch

    model.eval()
    inter = union = tp = fp = fn = 0
    with torch.no_grad():
        for i in range(0, len(samples.x), batch):
            idx = np.arange(i, min(i + batch, len(samples.x)))
            x, y = _batch(samples, idx, None, augment=False)
            p = torch.sigmoid(model(x)) > 0.5
            t = y > 0.5
            inter += int((p[:, 0] & t[:, 0]).sum())
            union += int((p[:, 0] | t[:, 0]).sum())
            tp += int((p[:, 1] & t[:, 1]).sum())
            fp += int((p[:, 1] & ~t[:, 1]).sum())
            fn += int((~p[:, 1] & t[:, 1]).sum())
    return {"card_iou": round(inter / max(1, union), 4), "outline_f1": round(2 * tp / max(1, 2 * tp + fp + fn), 4)}


def train(args) -> int:
    import cv2
    import torch
    import torch.nn.functional as F

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)
    rng = np.random.default_rng(args.seed)
    t_start = time.perf_counter()
    printed = {}
    if args.printed_faces_dir:
        from vision.synth.printed import load_printed_faces

        for deck, folder in PRINTED_FOLDERS.items():
            path = Path(args.printed_faces_dir) / folder
            if path.is_dir():
                printed[deck] = load_printed_faces(deck, path)
                log.info("printed faces: %d of %s from %s", len(printed[deck]), deck, path)
    train_set = cached_outline_samples(args.samples, args.seed, "train", printed, args.workers)
    val_set = cached_outline_samples(args.val_samples, args.seed + 1, "train", printed, args.workers)

    model = build_outline_model()
    if args.init:
        model.load_state_dict(torch.load(args.init))
        log.info("starting from %s", args.init)
    log.info("outline network: %d parameters", sum(p.numel() for p in model.parameters()))
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    steps = (len(train_set.x) + args.batch - 1) // args.batch
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=args.epochs * steps, pct_start=0.1)
    # The outline is a thin share of the pixels: its positives weigh more.
    pos_weight = torch.tensor([1.0, args.outline_weight]).view(1, 2, 1, 1)
    for epoch in range(args.epochs):
        model.train()
        order = rng.permutation(len(train_set.x))
        t0, loss_sum = time.perf_counter(), 0.0
        for i in range(steps):
            idx = np.sort(order[i * args.batch:(i + 1) * args.batch])
            x, y = _batch(train_set, idx, rng, augment=True)
            loss = F.binary_cross_entropy_with_logits(model(x), y, pos_weight=pos_weight)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            loss_sum += loss.item() * len(idx)
            if (i + 1) % 100 == 0:
                log.info("epoch %d/%d: step %d/%d, loss %.4f (%.0f s)", epoch + 1, args.epochs, i + 1, steps,
                         loss_sum / ((i + 1) * args.batch), time.perf_counter() - t0)
        scores = map_scores(model, val_set)
        log.info("epoch %d/%d: loss %.4f, validation card IoU %.4f, outline F1 %.4f (%.0f s)", epoch + 1, args.epochs,
                 loss_sum / len(train_set.x), scores["card_iou"], scores["outline_f1"], time.perf_counter() - t0)

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), DATA_DIR / "card-outline-last.pt")   # to start a longer run from (--init)
    onnx_path = out_dir / "card-outline.onnx"
    exported = with_probabilities(model)
    w, h = INPUT_SIZE
    export_onnx(exported, onnx_path, h, w, names=("frame", "maps"), any_size=True)
    check_export(exported, onnx_path, _batch(val_set, np.arange(8), None, augment=False)[0], names=("frame", "maps"))
    sidecar = {
        "input": {"width": w, "height": h, "multiple": 16, "channel_order": "rgb", "resize": "area"},
        "normalize": {"mean": [0.5, 0.5, 0.5], "std": [0.25, 0.25, 0.25]},
        "maps": ["card", "outline"],
        "training": {
            "seed": args.seed, "samples": args.samples, "init": args.init, "epochs": args.epochs, "batch": args.batch, "lr": args.lr,
            "outline_weight": args.outline_weight, "data_version": DATA_VERSION,
            "printed_faces": {deck: len(faces) for deck, faces in printed.items()},
            "network": {"channels": list(CHANNELS), "parameters": sum(p.numel() for p in model.parameters())},
            "validation": scores, "minutes": round((time.perf_counter() - t_start) / 60, 1),
            "data": "vision.training.outline_data scenes on the 'train' split's tables (make_scene's and compose's)",
            "command": args.command,
        },
    }
    (out_dir / "card-outline.json").write_text(json.dumps(sidecar, indent=2) + "\n")
    log.info("wrote %s (%.0f kB) and card-outline.json in %.1f min", onnx_path, onnx_path.stat().st_size / 1024,
             (time.perf_counter() - t_start) / 60)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.training.train_outline", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--samples", type=int, default=16000, help="training scenes to generate (default: 16000)")
    parser.add_argument("--val-samples", type=int, default=800)
    parser.add_argument("--printed-faces-dir", metavar="REAL",
                        help="folder holding the team's printed decks (flip7-art/, uno-flip-art/): a share of "
                             "the scenes' faces are these")
    parser.add_argument("--init", metavar="PT", help="start from these weights (a run's data/card-outline-last.pt)")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--outline-weight", type=float, default=3.0,
                        help="weight of the outline map's positives in the loss (default: 3)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads (the machine is shared)")
    parser.add_argument("--workers", type=int, default=2, help="processes generating scenes")
    parser.add_argument("--quick", action="store_true", help="small data, few epochs (minutes)")
    parser.add_argument("--out", default=str(MODELS_DIR), help="output folder (default: models/)")
    args = parser.parse_args(argv)
    args.command = "python -m vision.training.train_outline " + " ".join(argv if argv is not None else sys.argv[1:])
    if args.quick:
        args.samples, args.val_samples, args.epochs = 2000, 200, 4
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr)
    return train(args)


if __name__ == "__main__":
    sys.exit(main())
