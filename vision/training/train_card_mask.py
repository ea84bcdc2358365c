"""Train the card mask network (vision.card_mask) on the repo's own scenes and export it.

    python -m vision.training.train_card_mask                      # ~20 min on two threads
    python -m vision.training.train_card_mask --printed-faces REAL # with the team's printed faces

Each scene is vision.synth.scenes.make_scene's: one to four cards of a deck (Flip 7, UNO Flip,
Flip 7: Vengeance), touching or apart, nuisance cards under, beside and cut by the frame's edge,
clutter, fingers, light, glare, blur, noise and JPEG, on the tables of the "train" split (the
"heldout" split's kinds of table are never seen: vision.evaluation.real_eval reads its captures on
those). With REAL/flip7-art and REAL/uno-flip-art given, a share of the faces are the decks'
printed ones (as vision.training.train draws them). The target is every card drawn (make_scene's
`drawn`), less a band of BAND of its short side round its edge, painted bottom to top so that a
card's band cuts it from the card beneath.

Writes models/card-mask.onnx (input `image`: float32 1 x 3 x H x W RGB in -0.5..0.5, H and W
multiples of 16; output `logits`: 1 x 1 x H/2 x W/2) and models/card-mask.json. Scenes are cached
under data/ (gitignored), keyed by count, seed and recipe. Progress and the held-out scenes' mask
IoU go to stderr.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

import numpy as np

from vision.card_mask import INPUT_LONG_SIDE
from vision.evaluation.real_eval import ART_FOLDERS
from vision.training.train import DATA_DIR, MODELS_DIR

log = logging.getLogger(__name__)

RECIPE_VERSION = 1
FRAME = (640, 480)                                    # scenes are rendered as the camera sees the table ...
INPUT = (INPUT_LONG_SIDE, INPUT_LONG_SIDE * 3 // 4)   # ... and shrunk as the runtime shrinks a photo
BAND = 0.08               # of a card's short side, left out of the target round its edge
THRESHOLD = 0.5
DECK_SHARES = {"flip7": 0.45, "uno-flip": 0.4, "flip7-vengeance": 0.15}
PRINTED_SHARE = 0.5


def target(quads, size: tuple[int, int], scale: float, band: float = BAND) -> np.ndarray:
    """(h, w) uint8: 1 on every card's face less `band` of its short side round its edge, the
    cards painted in the order given (bottom to top), each band cutting the card beneath."""
    import cv2

    out = np.zeros(size[::-1], np.uint8)
    for quad in quads:
        q = np.asarray(quad, np.float32) * scale
        short = min(np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[3] - q[0]))
        points = np.round(q * 4).astype(np.int32)            # (2 bits of sub-pixel precision)
        cv2.fillConvexPoly(out, points, 1, cv2.LINE_8, shift=2)
        width = max(1, int(round(band * short)))
        cv2.polylines(out, [points], True, 0, 2 * width - 1, cv2.LINE_8, shift=2)
    return out


def make_scenes(n: int, seed: int, split: str, real: Path | None) -> tuple[np.ndarray, np.ndarray]:
    """(inputs (n, 240, 320, 3) uint8 BGR, targets (n, 120, 160) uint8) of n scenes."""
    import cv2

    from rules.cards import DECKS
    from vision.synth.printed import load_printed_faces
    from vision.synth.scenes import make_scene
    from vision.training.dataset import FacePool

    rng = np.random.default_rng(seed)
    pools = {}
    for deck in DECK_SHARES:
        folder = real / ART_FOLDERS[deck] if real is not None and deck in ART_FOLDERS else None
        printed = load_printed_faces(deck, folder) if folder is not None and folder.is_dir() else None
        pools[deck] = FacePool(deck, split, rng, printed=printed, printed_share=PRINTED_SHARE if printed else 0.0)
    decks, shares = list(DECK_SHARES), list(DECK_SHARES.values())
    out_size = (INPUT[0] // 2, INPUT[1] // 2)
    xs = np.zeros((n, INPUT[1], INPUT[0], 3), np.uint8)
    ys = np.zeros((n, out_size[1], out_size[0]), np.uint8)
    t0 = time.perf_counter()
    made = 0
    while made < n:
        deck = decks[rng.choice(len(decks), p=shares)]
        labels = list(rng.choice(DECKS[deck].labels, int(rng.integers(1, 5))))
        drawn: list = []
        try:
            frame, _ = make_scene(rng, labels, deck, size=FRAME, split=split, apart=bool(rng.random() < 0.6),
                                  faces=pools[deck], drawn=drawn)
        except ValueError:          # the cards did not fit apart: another scene
            continue
        xs[made] = cv2.resize(frame, INPUT, interpolation=cv2.INTER_AREA)
        ys[made] = target(drawn, out_size, out_size[0] / FRAME[0])
        made += 1
        if made % 500 == 0 or made == n:
            log.info("%s scenes: %d of %d (%.0f s)", split, made, n, time.perf_counter() - t0)
    return xs, ys


def cached_scenes(n: int, seed: int, split: str, real: Path | None):
    key = f"card-mask-v{RECIPE_VERSION}-{split}-{n}-{seed}-{'printed' if real is not None else 'renders'}.npz"
    path = DATA_DIR / key
    if path.is_file():
        data = np.load(path)
        return data["x"], data["y"]
    xs, ys = make_scenes(n, seed, split, real)
    DATA_DIR.mkdir(exist_ok=True)
    np.savez(path, x=xs, y=ys)
    return xs, ys


def build_model():
    """An encoder of plain 3 x 3 convolutions halving the picture four times (16-32-48-64
    channels, the last level dilated to see a whole card), and a light decoder back to half the
    input's size: at each level a 1 x 1 convolution of the level above (nearest upsampled) and the
    encoder's features, then a 3 x 3 depthwise one. ~0.2 M parameters."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def conv(cin, cout, stride=1, dilation=1):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, dilation, dilation=dilation, bias=False),
                             nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    def merge(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True),
                             nn.Conv2d(cout, cout, 3, 1, 1, groups=cout, bias=False), nn.BatchNorm2d(cout),
                             nn.ReLU(inplace=True))

    class CardMaskNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1 = conv(3, 16, 2)
            self.e2 = nn.Sequential(conv(16, 32, 2), conv(32, 32))
            self.e3 = nn.Sequential(conv(32, 48, 2), conv(48, 48))
            self.e4 = nn.Sequential(conv(48, 64, 2), conv(64, 64, dilation=2), conv(64, 64, dilation=4))
            self.d3, self.d2, self.d1 = merge(64 + 48, 48), merge(48 + 32, 32), merge(32 + 16, 16)
            self.out = nn.Conv2d(16, 1, 1)

        def forward(self, x):
            e1 = self.e1(x)
            e2 = self.e2(e1)
            e3 = self.e3(e2)
            e4 = self.e4(e3)

            def up(t):
                return F.interpolate(t, scale_factor=2.0, mode="nearest")

            d3 = self.d3(torch.cat([up(e4), e3], 1))
            d2 = self.d2(torch.cat([up(d3), e2], 1))
            return self.out(self.d1(torch.cat([up(d2), e1], 1)))

    return CardMaskNet()


def to_tensor(xs: np.ndarray):
    import torch

    return torch.from_numpy(np.ascontiguousarray(xs[..., ::-1]).astype(np.float32) / 255.0 - 0.5).permute(0, 3, 1, 2)


def mask_iou(model, xs: np.ndarray, ys: np.ndarray, threshold: float = THRESHOLD) -> float:
    import torch

    model.eval()
    with torch.no_grad():
        logits = torch.cat([model(to_tensor(xs[i:i + 32])) for i in range(0, len(xs), 32)]).numpy()[:, 0]
    predicted, truth = logits > np.log(threshold / (1 - threshold)), ys > 0
    return float((predicted & truth).sum() / max(1, (predicted | truth).sum()))


def train(args) -> int:
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    real = Path(args.printed_faces) if args.printed_faces else None
    if real is not None and not any((real / folder).is_dir() for folder in ART_FOLDERS.values()):
        log.error("%s holds neither %s: no printed faces to train with", real, " nor ".join(ART_FOLDERS.values()))
        return 2
    xs, ys = cached_scenes(args.scenes, args.seed, "train", real)
    # Validation on the held-out split's tables (never trained on), renders and printed alike.
    xv, yv = cached_scenes(args.val_scenes, args.seed + 1, "heldout", real)
    model = build_model()
    log.info("card mask network: %d parameters; %d training scenes, %d held-out",
             sum(p.numel() for p in model.parameters()), len(xs), len(xv))
    batches = len(xs) // args.batch
    optimiser = torch.optim.AdamW(model.parameters(), args.lr, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, args.lr, total_steps=args.epochs * batches)
    rng = np.random.default_rng(args.seed)
    positive = torch.tensor(2.0)          # the target is ~10 % of the pixels
    t0 = time.perf_counter()
    for epoch in range(args.epochs):
        model.train()
        order = rng.permutation(len(xs))
        total = 0.0
        for b in range(batches):
            rows = np.sort(order[b * args.batch:(b + 1) * args.batch])
            x, y = to_tensor(xs[rows]), torch.from_numpy(ys[rows].astype(np.float32))[:, None]
            if rng.random() < 0.5:
                x, y = x.flip(3), y.flip(3)
            if rng.random() < 0.5:
                x, y = x.flip(2), y.flip(2)
            x = x * float(rng.uniform(0.7, 1.3)) + float(rng.uniform(-0.15, 0.15))   # contrast, brightness
            loss = F.binary_cross_entropy_with_logits(model(x), y, pos_weight=positive)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item()
            if (b + 1) % 50 == 0:
                log.info("epoch %d: %d of %d batches, loss %.4f (%.0f s)", epoch + 1, b + 1, batches,
                         total / (b + 1), time.perf_counter() - t0)
        iou = mask_iou(model, xv, yv)
        log.info("epoch %d of %d: loss %.4f, held-out scenes' mask IoU %.3f (%.0f s)", epoch + 1, args.epochs,
                 total / batches, iou, time.perf_counter() - t0)
    return export(model, args, iou)


def export(model, args, iou: float) -> int:
    import torch

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model.eval()
    onnx_path = out / "card-mask.onnx"
    torch.onnx.export(model, torch.zeros(1, 3, INPUT[1], INPUT[0]), str(onnx_path), input_names=["image"],
                      output_names=["logits"], dynamic_axes={"image": {0: "n", 2: "h", 3: "w"},
                                                             "logits": {0: "n", 2: "h", 3: "w"}},
                      opset_version=17, dynamo=False)
    sidecar = {
        "input": {"long_side": INPUT[0], "multiple_of": 16, "channel_order": "rgb", "scale": "x / 255 - 0.5"},
        "output": "logits at half the input's size: a card's face, less `band` of its short side round its edge",
        "band": BAND,
        "threshold": THRESHOLD,
        "metrics": {"heldout_scenes_mask_iou": round(iou, 4), "heldout_scenes": args.val_scenes},
        "training": {"command": args.command, "scenes": args.scenes, "epochs": args.epochs, "seed": args.seed,
                     "decks": DECK_SHARES, "printed_faces": bool(args.printed_faces),
                     "recipe_version": RECIPE_VERSION},
    }
    (out / "card-mask.json").write_text(json.dumps(sidecar, indent=2) + "\n", encoding="utf-8")
    log.info("wrote %s (%.0f KiB) and card-mask.json", onnx_path, onnx_path.stat().st_size / 1024)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.training.train_card_mask", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenes", type=int, default=5000, help="training scenes to generate (default: 5000)")
    parser.add_argument("--val-scenes", type=int, default=300, help="held-out scenes to measure on (default: 300)")
    parser.add_argument("--printed-faces", metavar="REAL",
                        help="folder holding the decks' printed faces (flip7-art/, uno-flip-art/): half the "
                             "faces drawn of those decks are these")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--threads", type=int, default=2, help="torch threads (the machine is shared)")
    parser.add_argument("--out", default=str(MODELS_DIR), help="output folder (default: models/)")
    args = parser.parse_args(argv)
    args.command = "python -m vision.training.train_card_mask " + " ".join(argv if argv is not None else sys.argv[1:])
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr)
    return train(args)


if __name__ == "__main__":
    sys.exit(main())
