"""Small, fully controlled test scenes for the card locator: simple card faces on plain, wood,
cloth and patterned surfaces, at any rotation and with perspective tilt. Independent of the
training renderer on purpose, so the locator is tested on looks it was never tuned with."""

from __future__ import annotations

import cv2
import numpy as np

CARD_PX = (126, 176)   # a card face drawn at 2 px/mm before it is placed


def surface(rng: np.random.Generator, kind: str, size=(640, 480)) -> np.ndarray:
    w, h = size
    if kind == "light":
        img = np.full((h, w, 3), (205, 210, 215), np.float32)
    elif kind == "dark":
        img = np.full((h, w, 3), (40, 45, 38), np.float32)
    elif kind == "wood":
        x = np.arange(w, dtype=np.float32)[None, :]
        y = np.arange(h, dtype=np.float32)[:, None]
        grain = np.sin(x / 9.0 + 3 * np.sin(y / 60.0)) * 0.5 + 0.5
        base = np.array((60, 110, 165), np.float32)
        img = base[None, None, :] * (0.75 + 0.35 * grain[..., None])
    elif kind == "cloth":
        base = np.array((70, 120, 40), np.float32)
        noise = rng.normal(0, 14, (h // 2, w // 2, 1)).astype(np.float32)
        img = base[None, None, :] + cv2.resize(noise, (w, h))[..., None]
    elif kind == "dotted":                  # a dark cloth with a pattern of faint dots
        img = np.empty((h, w, 3), np.float32)
        img[:] = (75, 32, 58)
        for y in range(10, h, 30):
            for x in range(10 + (y // 30 % 2) * 15, w, 30):
                cv2.circle(img, (x, y), 6, (70, 70, 70), -1)
    elif kind == "checker":
        yy, xx = np.mgrid[0:h, 0:w]
        check = ((xx // 23 + yy // 23) % 2).astype(np.float32)
        img = np.stack([90 + 90 * check, 60 + 60 * check, 120 + 40 * check], axis=2)
    else:
        raise ValueError(kind)
    # uneven light: a broad gradient across the table
    gx = np.linspace(0.75, 1.15, w, dtype=np.float32)[None, :, None]
    img = img * gx + rng.normal(0, 3, img.shape).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def plain_face(text: str, paper, ink, frame) -> np.ndarray:
    """A card with square corners printed all over in one paper colour (a dark malus card, or
    one of a family of cards that differ little: +2 and +8 on the same orange)."""
    w, h = CARD_PX
    face = np.zeros((h, w, 4), np.uint8)
    face[:, :] = (*paper, 255)
    cv2.rectangle(face, (7, 7), (w - 8, h - 8), (*frame, 255), 2)
    cv2.putText(face, text, (14, 110), cv2.FONT_HERSHEY_DUPLEX, 2.2, (*ink, 255), 5)
    return face


def card_face(rng: np.random.Generator, text: str = "7", colour=(40, 60, 200)) -> np.ndarray:
    """A cream card with a frame and a big numeral; alpha 0 outside its rounded corners."""
    w, h = CARD_PX
    face = np.zeros((h, w, 4), np.uint8)
    r = 10
    cv2.rectangle(face, (r, 0), (w - 1 - r, h - 1), (225, 240, 248, 255), -1)
    cv2.rectangle(face, (0, r), (w - 1, h - 1 - r), (225, 240, 248, 255), -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(face, (cx, cy), r, (225, 240, 248, 255), -1)
    cv2.rectangle(face, (8, 8), (w - 9, h - 9), (60, 160, 200, 255), 3)
    cv2.putText(face, text, (30, 115), cv2.FONT_HERSHEY_DUPLEX, 3.0, (*colour, 255), 6)
    cv2.rectangle(face, (20, 140), (w - 21, 160), (*colour, 255), -1)
    return face


def place(frame: np.ndarray, face: np.ndarray, quad: np.ndarray) -> None:
    """Paint the RGBA face onto the frame so that its corners land on quad (TL TR BR BL)."""
    h, w = face.shape[:2]
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    m = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
    size = (frame.shape[1], frame.shape[0])
    warped = cv2.warpPerspective(face, m, size, flags=cv2.INTER_LINEAR)
    alpha = warped[:, :, 3:4].astype(np.float32) / 255.0
    frame[:] = (frame * (1 - alpha) + warped[:, :, :3] * alpha).astype(np.uint8)


def card_quad(centre, angle_deg: float, length: float = 200.0, tilt: float = 0.0) -> np.ndarray:
    """Corners TL TR BR BL of a card of the given long side, rotated, with a keystone tilt."""
    half_w, half_h = length / CARD_PX[1] * CARD_PX[0] / 2, length / 2
    pts = np.array([[-half_w * (1 - tilt), -half_h], [half_w * (1 - tilt), -half_h],
                    [half_w * (1 + tilt), half_h], [-half_w * (1 + tilt), half_h]], np.float32)
    a = np.deg2rad(angle_deg)
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]], np.float32)
    return pts @ rot.T + np.asarray(centre, np.float32)


def hand(frame: np.ndarray, rng: np.random.Generator, tip, from_side: str = "bottom") -> None:
    """A skin-coloured arm reaching in from a frame border to the point tip."""
    h, w = frame.shape[:2]
    start = {"bottom": (tip[0], h + 40), "right": (w + 40, tip[1]),
             "left": (-40, tip[1]), "top": (tip[0], -40)}[from_side]
    colour = tuple(int(c) for c in rng.integers(0, 30, 3) + np.array([120, 150, 200]))
    cv2.line(frame, tuple(int(v) for v in start), tuple(int(v) for v in tip), colour, 70)
    cv2.circle(frame, tuple(int(v) for v in tip), 40, colour, -1)


# ---------------------------------------------------------------------------------------------
# Deal clips with scripted hard cases, and a colour-keyed stand-in classifier that reads them
# perfectly, so the event logic is tested on its own.

PALETTE = {"red": (40, 40, 210), "green": (40, 160, 40), "blue": (200, 90, 30), "violet": (160, 40, 150),
           "orange": (20, 130, 240)}


class Clip:
    """Frames of a scripted deal and the true placements (frame index where each card lies still)."""

    def __init__(self, rng: np.random.Generator, kind: str = "wood", size=(640, 480)):
        self.rng = rng
        self.size = size
        self.table = surface(rng, kind, size)
        self.lying: list[tuple[str, np.ndarray]] = []
        self.frames: list[np.ndarray] = []
        self.events: list[tuple[int, str]] = []
        self.faces = {name: card_face(rng, "7", colour) for name, colour in PALETTE.items()}
        self._static_key = None
        self._static = None
        self._noise = [rng.normal(0, 2.0, (size[1], size[0], 3)).round().astype(np.int16) for _ in range(7)]

    def _frame(self, moving=None, tip=None, side="bottom") -> None:
        key = [(label, quad.tobytes()) for label, quad in self.lying]
        if key != self._static_key:          # the cards lying still change rarely: draw them once
            self._static = self.table.copy()
            for label, quad in self.lying:
                place(self._static, self.faces[label], quad)
            self._static_key = key
        frame = self._static.copy()
        for label, quad in [moving] if isinstance(moving, tuple) else moving or []:
            place(frame, self.faces[label], quad)
        if tip is not None:
            hand(frame, np.random.default_rng(1), tip, side)
        noise = self._noise[len(self.frames) % len(self._noise)]   # sensor noise, fresh each frame
        self.frames.append(np.clip(frame.astype(np.int16) + noise, 0, 255).astype(np.uint8))

    def still(self, n: int = 8) -> None:
        for _ in range(n):
            self._frame()

    def _carry(self, label, q0, q1, n, side):
        for k in range(1, n + 1):
            t = k / n
            q = q0 + (q1 - q0) * t
            self._frame((label, q), (q[2] + q[3]) / 2, side)

    def _reach(self, tip0, tip1, n, side):
        for k in range(1, n + 1):
            t = k / n
            self._frame(None, tip0 + (tip1 - tip0) * t, side)

    def place(self, label: str, quad: np.ndarray, side: str = "bottom") -> None:
        """The hand brings the card in from a border, lays it down, and leaves."""
        w, h = self.size
        enter = {"bottom": np.array([0, h], np.float32), "top": np.array([0, -h], np.float32),
                 "left": np.array([-w, 0], np.float32), "right": np.array([w, 0], np.float32)}[side]
        self._carry(label, quad + enter, quad, 8, side)
        self.lying.append((label, quad))
        self.events.append((len(self.frames), label))
        tip = (quad[2] + quad[3]) / 2
        self._frame(None, tip, side)                  # the hand lets go
        self._reach(tip, tip + enter * 1.2, 6, side)
        self.still()

    def hand_pass(self, side: str = "right") -> None:
        w, h = self.size
        out = {"right": np.array([w + 60, h / 2], np.float32), "left": np.array([-60, h / 2], np.float32),
               "top": np.array([w / 2, -60], np.float32), "bottom": np.array([w / 2, h + 60], np.float32)}[side]
        centre = np.array([w / 2, h / 2], np.float32)
        self._reach(out, centre, 6, side)
        self._reach(centre, out, 6, side)
        self.still(6)

    def hand_rests(self, n: int = 20, side: str = "bottom") -> None:
        """A hand comes in, rests still in the zone for n frames, and leaves: no card."""
        w, h = self.size
        tip = np.array([w * 0.3, h * 0.6], np.float32)
        out = tip + np.array([0, h], np.float32)
        self._reach(out, tip, 5, side)
        for _ in range(n):
            self._frame(None, tip, side)
        self._reach(tip, out, 5, side)
        self.still()

    def nudge(self, index: int, shift, angle: float = 0.0) -> None:
        """A hand pushes a lying card a little: no new card."""
        label, q0 = self.lying.pop(index)
        c = q0.mean(axis=0)
        a = np.deg2rad(angle)
        rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]], np.float32)
        q1 = ((q0 - c) @ rot.T + c + np.asarray(shift, np.float32)).astype(np.float32)
        tip0 = (q0[2] + q0[3]) / 2
        self._reach(tip0 + [0, 400], tip0, 5, "bottom")
        self._carry(label, q0, q1, 4, "bottom")
        self.lying.append((label, q1))
        tip1 = (q1[2] + q1[3]) / 2
        self._reach(tip1, tip1 + [0, 400], 5, "bottom")
        self.still()

    def pick_up_and_put_back(self, index: int, lift, side: str = "bottom") -> None:
        """A hand picks a lying card up, carries it by `lift` (a shift, frame pixels) and lays it
        back exactly where it lay: no new card."""
        label, q0 = self.lying.pop(index)
        q1 = (q0 + np.asarray(lift, np.float32)).astype(np.float32)
        tip0 = (q0[2] + q0[3]) / 2
        self._reach(tip0 + [0, 400], tip0, 5, side)
        self._carry(label, q0, q1, 5, side)
        self._carry(label, q1, q0, 5, side)
        self.lying.append((label, q0))
        self._reach(tip0, tip0 + [0, 400], 5, side)
        self.still()

    def carry_over(self, label: str, quad: np.ndarray, side: str = "bottom") -> None:
        """A hand carries a card in from a border, over `quad` (on the way: no stop) and out at the
        opposite border, never laying it: no new card."""
        w, h = self.size
        enter = {"bottom": np.array([0, h], np.float32), "top": np.array([0, -h], np.float32),
                 "left": np.array([-w, 0], np.float32), "right": np.array([w, 0], np.float32)}[side]
        self._carry(label, quad + enter, quad, 8, side)
        self._carry(label, quad, quad - enter, 8, side)
        self.still()

    def slide_away(self, index: int, side: str = "left") -> None:
        """The dealer slides a lying card out of the picture to a player: no new card."""
        w, h = self.size
        label, q0 = self.lying.pop(index)
        away = {"left": np.array([-w, 0], np.float32), "right": np.array([w, 0], np.float32),
                "top": np.array([0, -h], np.float32), "bottom": np.array([0, h], np.float32)}[side]
        tip0 = (q0[2] + q0[3]) / 2
        self._reach(tip0 + away, tip0, 5, side)
        self._carry(label, q0, q0 + away, 7, side)
        self.still()


    def sweep(self, indices=None, side: str = "right") -> None:
        """The hand takes several lying cards off at once (a pile, or cards lying apart; default
        all), carrying them out of the picture together: no new card."""
        w, h = self.size
        indices = set(range(len(self.lying)) if indices is None else indices)
        taken = [card for i, card in enumerate(self.lying) if i in indices]
        self.lying = [card for i, card in enumerate(self.lying) if i not in indices]
        away = {"left": np.array([-w, 0], np.float32), "right": np.array([w, 0], np.float32),
                "top": np.array([0, -h], np.float32), "bottom": np.array([0, h], np.float32)}[side]
        tip0 = np.mean([(q[2] + q[3]) / 2 for _, q in taken], axis=0)
        self._reach(tip0 + away, tip0, 5, side)
        for k in range(1, 8):
            shift = away * k / 7
            self._frame([(label, q + shift) for label, q in taken], tip0 + shift, side)
        self.still()


def run(detector, frames, now: dict | None = None) -> list:
    """The detector's events on the frames; now["i"], if given, is the frame being fed (for a
    patch that acts on some frames only)."""
    events = []
    for i, frame in enumerate(frames):
        if now is not None:
            now["i"] = i
        events += detector.feed(frame, i)
    return events


class ColourClassifier:
    """Stand-in for the model on Clip frames: names a crop by its mean colour, "no card" when
    the crop matches no card face."""

    def __init__(self, faces: dict):
        from vision.geometry import CANON_H, CANON_W

        self.means = {}
        for label, face in faces.items():
            crop = cv2.resize(face[:, :, :3], (CANON_W, CANON_H), interpolation=cv2.INTER_AREA)
            self.means[label] = self._signature(crop)

    @staticmethod
    def _signature(crop):
        h, w = crop.shape[:2]
        inner = crop[h // 6: h - h // 6, w // 6: w - w // 6].reshape(-1, 3).astype(np.float32)
        return np.concatenate([inner.mean(axis=0), inner.std(axis=0)])

    def probabilities(self, crops):
        out = []
        labels = list(self.means)
        for crop in crops:
            sig = self._signature(crop)
            d = np.array([np.linalg.norm(sig - self.means[lab]) for lab in labels] + [25.0])
            p = np.exp(-(d - d.min()) / 3.0)
            out.append(p / p.sum())
        return np.array(out, np.float32)

    def decide(self, probs):
        from vision.classifier import NO_CARD, NOT_SURE, Prediction

        labels = list(self.means)
        i = int(np.argmax(probs))
        if i == len(labels):
            return Prediction(None, float(probs[i]), NO_CARD)
        if probs[i] < 0.8:
            return Prediction(None, float(probs[i]), NOT_SURE)
        return Prediction(labels[i], float(probs[i]), None)
