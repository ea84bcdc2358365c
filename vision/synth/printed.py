"""Faces of a real printed deck, for training and for the real-material evaluation.

A folder holds one image per label, `LABEL.png` (the team's scans of the printed decks; a user's
clone has none, and none is ever committed). Each is scaled to the renderer's canvas (CARD_W x
CARD_H: the scans are not all of a card's 63 x 88 shape, and a card is warped to that shape at run
time anyway) and given the renderer's rounded corners. `printed_face` draws one copy of it as
another print run would look: its inks a little off (hue, saturation, value from the renderer's
own CardStyle), cut a little off centre, a colour plate off register, ink spread and wear, so the
model learns this design, not these exact pixels.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from vision.synth.render import CARD_H, CARD_W, CardStyle, _corner_alpha, _print_and_wear

PrintedFaces = dict  # label -> (CARD_H, CARD_W, 3) float32 RGB canvas


def label_file(folder: Path, label: str) -> Path:
    return Path(folder) / f"{label}.png"


def load_printed_faces(deck: str, folder: str | Path) -> PrintedFaces:
    """{label: RGB float32 canvas} for every label of `deck` in `folder`. Raises ValueError naming
    the folder when it is missing, holds no label's image or an image cannot be read."""
    from rules.cards import DECKS

    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"printed faces: {folder} is not a folder")
    faces: PrintedFaces = {}
    for label in DECKS[deck].labels:
        path = label_file(folder, label)
        if not path.is_file():
            continue
        image = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        if image is None or image.ndim != 3:
            raise ValueError(f"printed faces: {path} is not a colour image OpenCV can read")
        if image.shape[2] == 4:  # flatten a transparent border onto white card stock
            alpha = image[..., 3:].astype(np.float32) / 255.0
            image = (image[..., :3] * alpha + 255.0 * (1.0 - alpha)).astype(np.uint8)
        sized = cv2.resize(image, (CARD_W, CARD_H), interpolation=cv2.INTER_CUBIC if image.shape[0] < CARD_H
                           else cv2.INTER_AREA)
        faces[label] = np.ascontiguousarray(sized[..., ::-1], dtype=np.float32)
    if not faces:
        raise ValueError(f"printed faces: {folder} holds no {deck} label's image (LABEL.png)")
    return faces


def printed_digest(faces: PrintedFaces) -> str:
    """A short digest of the faces (their pixels, in label order): names what a cache was made of."""
    import hashlib

    return hashlib.sha256(b"".join(faces[k].tobytes() for k in sorted(faces))).hexdigest()[:10]


def _inks_off(canvas: np.ndarray, style: CardStyle) -> np.ndarray:
    """The canvas with the style's hue shift, saturation and value factors (as its renderer
    jitters every ink), in HSV."""
    hsv = cv2.cvtColor(np.clip(canvas, 0, 255).astype(np.uint8), cv2.COLOR_RGB2HSV).astype(np.float32)
    hsv[..., 0] = (hsv[..., 0] + style.hue_shift / 2.0) % 180.0      # OpenCV's hue is 0..180
    hsv[..., 1] = np.clip(hsv[..., 1] * style.saturation, 0, 255)
    hsv[..., 2] = np.clip(hsv[..., 2] * style.value, 0, 255)
    return cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2RGB).astype(np.float32)


def _cut_off_centre(canvas: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The print shifted and scaled a little on the card (a die cut is never exact), the edge
    filled with the border's own colour."""
    shift = rng.normal(0, 0.012, 2) * (CARD_W, CARD_H)
    scale = rng.uniform(0.97, 1.03)
    c = np.array([CARD_W / 2, CARD_H / 2])
    m = np.float32([[scale, 0, c[0] - scale * c[0] + shift[0]], [0, scale, c[1] - scale * c[1] + shift[1]]])
    return cv2.warpAffine(canvas, m, (CARD_W, CARD_H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def printed_face(faces: PrintedFaces, label: str, rng: np.random.Generator, style: CardStyle | None = None
                 ) -> np.ndarray:
    """RGBA uint8 (CARD_H, CARD_W, 4) face of `label` from the printed deck, as one print run and
    its wear would change it (render_card's format)."""
    style = style or CardStyle.sample(rng)
    canvas = _cut_off_centre(_inks_off(faces[label], style), rng)
    canvas = _print_and_wear(canvas, rng, style)
    rgba = np.empty((CARD_H, CARD_W, 4), np.uint8)
    rgba[..., :3] = np.clip(canvas, 0, 255)
    rgba[..., 3] = _corner_alpha()
    return rgba
