"""The deal zone as layers: the table, and the cards on it from the bottom up, each with the
picture it showed when it was laid. A change in the zone is explained, not guessed at: each
explanation (this card stayed, that one went, this one moved there, a new card lies here) is
drawn as the picture it predicts and compared with the picture seen; the explanation whose
drawing fits best, after a small price for each thing it claims happened, is taken.

Why layers: what a change reveals is known. A card slid off another shows the one beneath as it
was laid; a card pushed a little leaves a sliver of what lay under it; a twin laid a little off
its twin leaves a sliver of the twin. Rules about outlines and overlaps can tell none of these
apart from a new card once they lose track of which card lies where; a drawing can.

Pictures are kept at VIEW_LONG_SIDE (320 px for the frame's long side): a card is 60-120 px
long there, enough to see slivers and far cheaper than the frame. Nothing here knows any game.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.geometry import CARD_ASPECT, intersection_area, quad_area, quad_iou
from vision.locate import card_shaped

log = logging.getLogger(__name__)

VIEW_LONG_SIDE = 320
FACE_SIZE = (72, 100)       # (w, h): a card's stored picture, no smaller than a card in the view
                            # (a picture cut smaller than the card misfits when drawn back)
LOOK_SIZE = (24, 34)        # the small grey look of a card (vision.placement's picture search)
RIM_PX = 3                  # view pixels round every outline where a card's shadow may fall
OUTSIDE_PX = 2              # view pixels just outside every outline left out of a comparison
SHADE_DEPTH, SHADE_EVEN = 0.45, 0.08    # a shadow darkens by at most this, every colour alike
OUTLINE_REACH, OUTLINE_NEAR, OUTLINE_CHANGE = 14, 4, 25   # a new card's side may move out this
                            # far (view pixels; OUTLINE_NEAR if further leaves no card's shape)
                            # where the view changed by more than this (grey levels) from before
SLACK_PX = 2                # view pixels a drawing may be off and still fit
NOISE, CAP = 6.0, 40.0      # grey levels: a difference up to NOISE is noise, beyond CAP a full miss
UNKNOWN = 0.35              # cost of a pixel whose picture the zone never saw (a full miss is 1)
# What each claimed happening costs, in card areas of misfit: the explanation must fit better
# by more than this. A new card asks the most (it explains its own place whatever lies there).
# By what the model read there: a card named (anew: as a label no known card near it bears, so
# not one of them found again), one it is not sure of, one it reads as no card.
PRICE_NEW = {"named": 0.06, "named anew": 0.02, "not sure": 0.15, "no card": 0.6}
PRICE_GONE, PRICE_MOVED = 0.02, 0.03
FIT_STEPS, FIT_FINE_STEPS, FIT_REACH, FIT_AREA = 30, 10, 0.12, 0.15   # picture alignment:
                            # iterations at half size and at full size; how far a corner may go
                            # (card lengths) and the area change allowed
CLASH_IOU = 0.6             # a pose and a new card this alike (IoU) are one place
RELIGHT_OFF, RELIGHT_MAX = 0.15, 0.4    # a moved card's light: pixels this far off the fitted
                            # gain are left out of the fit; the gain stays within this of 1
PRINTED_AREA, PRINTED_FIT, PRINTED_OVER = 0.12, 0.75, 0.6   # a card outlined by a printing: its
                            # size within this of the printed card's, the picture fitting at least
                            # this well (ECC), this much of it (or of the located outline) on that
PRINTED_LEAST = (0.35, 0.6)  # a printing whose alignment at half size fits worse (shifted; then
                            # affine) is not there (ECC at full size fits no better than at half)
FIT_INSIDE = 0.08           # of a picture's width and height left out all round when it is aligned
SEARCH_STEP, SEARCH_BLUR = 0.06, 0.045  # a picture search's coarse step and blur (card lengths)
SEARCH_REACH, SEARCH_TURN = 0.3, 16.0   # a new card's printing is looked for this far off and turned
PRINTED_WHOLE = 0.97        # a printing gives way to a card at least this large (of its area)
LEFT_OVER, LEFT_GAIN = 0.2, 0.05   # misfit (card areas) that a card found must explain, by this
HIDDEN_UNSEEN = 0.2         # a new card at least this much on what the zone never saw may be one hidden
MAX_STEPS = 6               # happenings in one change at most (greedy search steps)


@dataclass
class ZoneCard:
    quad: np.ndarray        # frame pixels, corners in the order of `face` (TL, TR, BR, BL of it)
    label: str | None       # None: the model never named it
    face: np.ndarray        # FACE_SIZE colour picture (uint8, view colours) as it was seen
    seen: np.ndarray        # FACE_SIZE bool: the parts of it that were seen
    leaning: str | None = None   # unnamed: the card the model leaned to
    # FACE_SIZE x 3 bool, or None: where its picture was burnt out (vision.light.burnt_out) when
    # seen, channel by channel, and shows only how bright it is at least.
    floor: np.ndarray | None = None
    _look: np.ndarray | None = field(default=None, repr=False)

    @property
    def guess(self) -> str | None:
        """Its label, or for a card the model never named, the card it leaned to."""
        return self.label if self.label is not None else self.leaning

    @property
    def look(self) -> np.ndarray:
        """Its picture as a small grey crop, zero mean and unit length (see _unit)."""
        if self._look is None:
            # Shrunk with the corners kept where they are (a plain resize shifts the picture by
            # half a pixel of the large one): the look is sampled as face_matrix(quad, LOOK_SIZE)
            # maps the card.
            (fw, fh), (lw, lh) = FACE_SIZE, LOOK_SIZE
            grey = cv2.GaussianBlur(cv2.cvtColor(self.face, cv2.COLOR_BGR2GRAY).astype(np.float32), (0, 0),
                                    0.5 * fw / lw)
            shrink = np.array([[lw / fw, 0, 0], [0, lh / fh, 0]], np.float32)
            self._look = _unit(cv2.warpAffine(grey, shrink, LOOK_SIZE, flags=cv2.INTER_LINEAR,
                                              borderMode=cv2.BORDER_REPLICATE))
        return self._look

    def moved_to(self, quad: np.ndarray) -> None:
        self.quad = quad.astype(np.float32)

    def forget_look(self) -> None:
        """Its picture changed: the look is made again when next asked for."""
        self._look = None


def face_matrix(quad, size=FACE_SIZE) -> np.ndarray:
    """The 3x3 perspective matrix taking the quad, corners in the order given, onto a (w, h)
    picture (unlike vision.geometry.card_transform, which orders the corners itself)."""
    w, h = size
    dst = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    return cv2.getPerspectiveTransform(np.asarray(quad, np.float32), dst)


def half_turned(quad) -> np.ndarray:
    """The same outline with its corners named from the opposite one: the picture turned."""
    return np.roll(np.asarray(quad, np.float32), 2, axis=0)


def search(picture: np.ndarray, look: np.ndarray, quad: np.ndarray, reach: float, turn: float):
    """Where a card's look (LOOK_SIZE, zero mean, unit length; its corners at `quad`'s) fits the
    picture best with the card shifted up to `reach` of its length and turned up to `turn` degrees
    about its centre: (that quad, its correlation, the correlation where it is). The look's
    sample points are moved as the card would be, all poses of a stage sampled in one remap:
    first coarsely, every third point of the look on the picture and the look both blurred (a
    sharp picture matches only within a pixel or two: a coarse grid would miss it), then finely
    round the best, sharp, every other point; the pose found is judged on the whole look. Only
    the part of the picture the card can reach is looked at."""
    w, h = LOOK_SIZE
    xs, ys = np.meshgrid(np.arange(w, dtype=np.float32), np.arange(h, dtype=np.float32))
    inverse = np.linalg.inv(face_matrix(quad, LOOK_SIZE))
    points = cv2.perspectiveTransform(np.stack([xs, ys], axis=-1).reshape(-1, 1, 2), inverse).reshape(h, w, 2)
    length = float(np.sqrt(quad_area(quad) * CARD_ASPECT))
    reach = reach * length
    fh, fw = picture.shape[:2]
    x0, y0 = (np.maximum(quad.min(axis=0) - reach - 0.2 * length, 0)).astype(int)
    x1, y1 = (np.minimum(quad.max(axis=0) + reach + 0.2 * length, [fw, fh])).astype(int)
    origin = np.array([x0, y0], np.float32)
    grey = cv2.cvtColor(picture[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
    centre = quad.mean(axis=0) - origin
    blur = SEARCH_BLUR * length
    # (The blurred picture needs no more than a quarter of the pixels.)
    small = cv2.resize(grey, (max(1, grey.shape[1] // 4), max(1, grey.shape[0] // 4)), interpolation=cv2.INTER_AREA)
    blurred = cv2.GaussianBlur(small, (0, 0), blur / 4)
    soft = cv2.GaussianBlur(look, (0, 0), blur * h / length)

    def best_of(image, target, rel, angles, shifts, scale=1.0):
        a = np.deg2rad(np.asarray(angles, np.float32))
        cos, sin = np.cos(a)[:, None] * scale, np.sin(a)[:, None] * scale
        turned_x = cos * rel[None, :, 0] - sin * rel[None, :, 1]                        # (A, N)
        turned_y = sin * rel[None, :, 0] + cos * rel[None, :, 1]
        moved = (centre + np.asarray(shifts, np.float32)) * np.float32(scale)          # (S, 2)
        map_x = (turned_x[:, None, :] + moved[None, :, 0, None]).reshape(-1, len(rel))  # (A * S, N)
        map_y = (turned_y[:, None, :] + moved[None, :, 1, None]).reshape(-1, len(rel))
        values = cv2.remap(image, map_x.astype(np.float32), map_y.astype(np.float32), cv2.INTER_LINEAR,
                           borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
        # Normalised correlation with the zero-mean target, without centring every row.
        target = target - target.mean()
        n = values.shape[1]
        sums = values.sum(axis=1)
        spread = np.einsum("ij,ij->i", values, values) - sums * sums / n
        corr = values @ target / (np.sqrt(np.maximum(spread, 1e-6)) * np.linalg.norm(target) + 1e-6)
        best = int(np.argmax(corr))
        return float(corr[best]), float(angles[best // len(shifts)]), np.asarray(shifts[best % len(shifts)], np.float32)

    def grid(step, reach):
        ticks = np.arange(-reach, reach + 1e-6, step)
        return [(dx, dy) for dy in ticks for dx in ticks]

    def relative(every):         # every `every`-th sample point of the look, about the card's centre
        return points[::every, ::every].reshape(-1, 2) - origin - centre

    step = SEARCH_STEP * length
    _, angle, shift = best_of(blurred, soft[::3, ::3].ravel(), relative(3),
                              np.arange(-turn, turn + 1e-6, 8.0), grid(step, reach), scale=0.25)
    _, angle, shift = best_of(grey, look[::2, ::2].ravel(), relative(2), angle + np.arange(-4.0, 4.1, 2.0),
                              [tuple(shift + d) for d in grid(step / 4, step / 2)])
    # Judged on the whole look, found and where it was.
    corr, _, _ = best_of(grey, look.ravel(), relative(1), [angle], [tuple(shift)])
    here, _, _ = best_of(grey, look.ravel(), relative(1), [0.0], [(0.0, 0.0)])
    a = np.deg2rad(angle)
    rotation = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]], np.float32)
    found = ((quad - quad.mean(axis=0)) @ rotation.T + quad.mean(axis=0) + shift).astype(np.float32)
    return found, corr, here


def _resized(quad: np.ndarray, like: np.ndarray) -> np.ndarray:
    """A rectangle with the sides of `like` on the centre and slant of `quad` (corners in the
    same order)."""
    centre = quad.mean(axis=0)
    across = ((quad[1] - quad[0]) + (quad[2] - quad[3])) / 2          # side 0-1 and its opposite
    down = ((quad[3] - quad[0]) + (quad[2] - quad[1])) / 2
    u = across / (np.linalg.norm(across) + 1e-6)
    v = down / (np.linalg.norm(down) + 1e-6)
    w = (np.linalg.norm(like[1] - like[0]) + np.linalg.norm(like[2] - like[3])) / 2
    h = (np.linalg.norm(like[3] - like[0]) + np.linalg.norm(like[2] - like[1])) / 2
    half = [(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)]
    return np.array([centre + a * u + b * v for a, b in half], np.float32)


def _meeting(lines) -> np.ndarray | None:
    """The quad whose corner k is where line k-1 meets line k (each line: a point, a direction)."""
    corners = []
    for k in range(4):
        (p1, d1), (p0, d0) = lines[k], lines[k - 1]
        m = np.array([[d0[0], -d1[0]], [d0[1], -d1[1]]], np.float32)
        if abs(np.linalg.det(m)) < 1e-6:
            return None
        corners.append(p0 + np.linalg.solve(m, p1 - p0)[0] * d0)
    return np.array(corners, np.float32)


def _fitted_card_shaped(quad: np.ndarray) -> bool:
    """Sides in a card's proportions and corners near right angles, more strictly than the
    locator asks (an alignment that ran off squashes the picture)."""
    return card_shaped(quad, aspect=1.12, max_cos=0.2)


# A difference of d grey levels (0-255) between view and drawing as a misfit (0-1).
_MISFIT = np.clip((np.arange(256, dtype=np.float32) - NOISE) / (CAP - NOISE), 0.0, 1.0)


def _unit(grey: np.ndarray) -> np.ndarray:
    grey = grey.astype(np.float32) - grey.mean()
    return grey / (np.linalg.norm(grey) + 1e-6)


@dataclass
class Option:
    """A possible happening: card `card` went (quad None) or moved to `quad`; or (card None)
    a new card at candidate `new`."""
    card: int | None
    quad: np.ndarray | None = None
    new: int | None = None


@dataclass
class Explanation:
    gone: list[int]                       # known cards that left the zone
    moved: dict[int, np.ndarray]          # known card -> where it lies now (corners in its face's order)
    new: list[int]                        # candidates that are new cards, bottom up
    misfit: float                         # what the drawing leaves unexplained, in card areas
    cost: float
    # new card -> share of its place that the zone had never seen before (under cards lying
    # there from the start) or that did not change: where both make nearly all of it, the card
    # lay there all along, hidden
    hidden: dict[int, float] = field(default_factory=dict)


class Zone:
    """The table and the cards on it, bottom up, at view scale."""

    def __init__(self):
        self.cards: list[ZoneCard] = []
        # The last card seen of each label: its picture is the printing of every card of that
        # label in this deck (a twin laid on its twin is outlined by fitting it).
        self.printed: dict[str, ZoneCard] = {}
        self.table: np.ndarray | None = None         # view colours where no card lies
        self.table_seen: np.ndarray | None = None    # bool
        self.scale = 1.0                             # view pixels per frame pixel
        self.burnt: np.ndarray | None = None         # the last view's burnt-out values (see view)
        self._alignments: dict = {}                  # this view's picture alignments (see _aligned)

    # ------------------------------------------------------------------ kept across a restart
    def to_arrays(self) -> tuple[dict, dict[str, np.ndarray]]:
        """(plain data, named arrays): the zone as a file keeps it (from_arrays reads it back)."""
        arrays = {"table": self.table, "table_seen": self.table_seen}
        cards = list(self.cards) + [k for k in self.printed.values() if not any(k is c for c in self.cards)]
        for i, card in enumerate(cards):
            arrays.update({f"quad{i}": card.quad, f"face{i}": card.face, f"seen{i}": card.seen})
            if card.floor is not None:
                arrays[f"floor{i}"] = card.floor
        data = {"scale": self.scale, "lying": len(self.cards),
                "cards": [{"label": k.label, "leaning": k.leaning} for k in cards],
                "printed": {label: next(i for i, k in enumerate(cards) if k is card)
                            for label, card in self.printed.items()}}
        return data, arrays

    @classmethod
    def from_arrays(cls, data: dict, arrays) -> "Zone":
        """The zone to_arrays kept; KeyError, TypeError or ValueError for data that are not one."""
        zone = cls()
        cards = []
        for i, meta in enumerate(data["cards"]):
            face, seen = np.asarray(arrays[f"face{i}"], np.uint8), np.asarray(arrays[f"seen{i}"], bool)
            quad = np.asarray(arrays[f"quad{i}"], np.float32)
            if quad.shape != (4, 2) or face.shape != (FACE_SIZE[1], FACE_SIZE[0], 3) or seen.shape != face.shape[:2]:
                raise ValueError(f"card {i} is not a picture of a card")
            floor = np.asarray(arrays[f"floor{i}"], bool) if f"floor{i}" in arrays else None
            label, leaning = meta["label"], meta["leaning"]
            if not all(x is None or isinstance(x, str) for x in (label, leaning)):
                raise ValueError(f"card {i} has no label")
            cards.append(ZoneCard(quad, label, face, seen, leaning, floor))
        zone.cards = cards[: int(data["lying"])]
        zone.printed = {str(label): cards[int(i)] for label, i in data["printed"].items()}
        zone.table = np.asarray(arrays["table"], np.uint8)
        zone.table_seen = np.asarray(arrays["table_seen"], bool)
        if zone.table.ndim != 3 or zone.table_seen.shape != zone.table.shape[:2]:
            raise ValueError("the table is not a picture")
        zone.scale = float(data["scale"])
        return zone

    # ------------------------------------------------------------------ pictures
    def view(self, frame: np.ndarray, burnt: np.ndarray | None = None) -> np.ndarray:
        """The frame at view scale. `burnt` (vision.light.burnt_out of the frame before it was
        relit, if it was): where a value was burnt out, the view shows only how bright it was at
        least, and a drawing brighter there fits it (see _Layers._misfit)."""
        h, w = frame.shape[:2]
        self.scale = VIEW_LONG_SIDE / max(h, w)
        self._alignments = {}
        size = (max(1, round(w * self.scale)), max(1, round(h * self.scale)))
        self.burnt = None
        if burnt is not None:   # (a view pixel partly burnt out is taken as burnt: a floor all the same)
            self.burnt = cv2.threshold(cv2.resize(burnt, size, interpolation=cv2.INTER_AREA), 0, 255, cv2.THRESH_BINARY)[1]
        return cv2.resize(frame, size, interpolation=cv2.INTER_AREA)

    def start(self, view: np.ndarray) -> None:
        """An empty zone over this picture of the table (cards found on it are added after)."""
        self.cards = []
        self.table = view.copy()
        self.table_seen = np.ones(view.shape[:2], bool)

    def capture(self, view: np.ndarray, quad: np.ndarray, over=()) -> tuple[np.ndarray, np.ndarray]:
        """The picture at quad (frame pixels, corners in order), and which parts of it were seen:
        inside the picture and not under the `over` quads."""
        matrix = face_matrix(quad * self.scale)
        face = cv2.warpPerspective(view, matrix, FACE_SIZE, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        inside = np.full(view.shape[:2], 255, np.uint8)
        for q in over:
            cv2.fillConvexPoly(inside, np.round(q * self.scale).astype(np.int32), 0)
        seen = cv2.warpPerspective(inside, matrix, FACE_SIZE, flags=cv2.INTER_NEAREST,
                                   borderMode=cv2.BORDER_CONSTANT, borderValue=0) > 0
        return face, seen

    def floor_of(self, quad: np.ndarray) -> np.ndarray | None:
        """Where the picture capture() cuts at quad from the last view was burnt out, channel by
        channel (FACE_SIZE x 3 bool; None where nothing was)."""
        if self.burnt is None:
            return None
        burnt = cv2.warpPerspective(self.burnt, face_matrix(quad * self.scale), FACE_SIZE,
                                    flags=cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT, borderValue=0) > 0
        return burnt if burnt.any() else None

    def add(self, view, quad, label, leaning=None) -> ZoneCard:
        """A card laid on top of the others, as the view shows it."""
        face, seen = self.capture(view, quad)
        card = ZoneCard(np.asarray(quad, np.float32), label, face, seen, leaning, self.floor_of(quad))
        self.cards.append(card)
        self.keep_printing(card)
        return card

    def keep_printing(self, card: ZoneCard) -> None:
        """The card's picture becomes the printing of its label unless one seen before is of a
        whole card where this one's outline left part of it out (cut at a banner, say): every
        card of a deck is the same size, so the larger is the more whole."""
        known = self.printed.get(card.label)
        if card.label is not None and (known is None or quad_area(card.quad) >= PRINTED_WHOLE * quad_area(known.quad)):
            self.printed[card.label] = card

    def printings(self, label, quad) -> list[ZoneCard]:
        """The pictures a card of `label` found at `quad` may be outlined by: the cards of that
        label lying here, nearest first, then the label's printing (`printed`)."""
        if label is None:
            return []
        centre = np.asarray(quad, np.float32).mean(axis=0)
        lying = sorted((k for k in self.cards if k.label == label),
                       key=lambda k: float(np.linalg.norm(k.quad.mean(axis=0) - centre)))
        printed = self.printed.get(label)
        return lying + ([printed] if printed is not None and not any(printed is k for k in lying) else [])

    def forget_table_under_cards(self) -> None:
        """What the table shows under the cards is not known (cards found lying at the start)."""
        for card in self.cards:
            hidden = np.zeros(self.table_seen.shape, np.uint8)
            cv2.fillConvexPoly(hidden, np.round(card.quad * self.scale).astype(np.int32), 1)
            self.table_seen[hidden > 0] = False

    def update_table(self, view: np.ndarray) -> None:
        """The table where no card lies (less a rim round each card: its shadow) is as seen now."""
        free = np.full(view.shape[:2], 255, np.uint8)
        for card in self.cards:
            poly = np.round(card.quad * self.scale).astype(np.int32)
            cv2.fillConvexPoly(free, poly, 0)
            cv2.polylines(free, [poly], True, 0, thickness=2 * RIM_PX + 1)
        free = free > 0
        np.copyto(self.table, view, where=free[..., None])
        self.table_seen |= free

    def outline(self, view: np.ndarray, before: np.ndarray, quad: np.ndarray) -> np.ndarray:
        """A new card's outline (frame pixels), each side moved out as far as the view beyond
        it changed from the view `before` it came (not by an even shade: its shadow), as long
        as the card keeps a card's shape. The locator's outline of a card laid on cards often
        runs a few pixels inside it (along the printed frame, where the card's own edge is
        faint), or stops at a banner printed across it; a picture cut there would leave the
        rest of the card to what lies beneath and misfit wherever the card is drawn again."""
        q = np.asarray(quad, np.float32) * self.scale
        centre = q.mean(axis=0)
        h, w = view.shape[:2]
        t = np.linspace(0.15, 0.85, 16, dtype=np.float32)[:, None]
        sides = []
        for k in range(4):
            a, b = q[k], q[(k + 1) % 4]
            along = b - a
            normal = np.array([along[1], -along[0]], np.float32) / (np.linalg.norm(along) + 1e-6)
            if np.dot(normal, (a + b) / 2 - centre) < 0:
                normal = -normal
            points = a + t * along
            out = 0.0
            for step in np.arange(1.0, OUTLINE_REACH + 0.5, 1.0):
                p = points + step * normal
                inside = (p[:, 0] >= 0) & (p[:, 0] < w - 1) & (p[:, 1] >= 0) & (p[:, 1] < h - 1)
                if inside.mean() < 0.5:
                    break
                x, y = np.round(p[inside, 0]).astype(int), np.round(p[inside, 1]).astype(int)
                now, then = view[y, x].astype(np.float32), before[y, x].astype(np.float32)
                ratio = now / np.maximum(then, 8.0)
                shade = (ratio.max(axis=1) <= 1 + SHADE_EVEN) & (ratio.min(axis=1) >= 1 - SHADE_DEPTH) \
                    & (ratio.max(axis=1) - ratio.min(axis=1) <= SHADE_EVEN)
                changed = (np.abs(now - then).max(axis=1) > OUTLINE_CHANGE) & ~shade
                if changed.mean() < 0.6:
                    break
                out = step
            sides.append((a, along, normal, out))
        # The sides as far out as they went, else each at most a few pixels out, else as located:
        # the first of these that is card-shaped.
        for cap in (OUTLINE_REACH, OUTLINE_NEAR):
            grown = _meeting([(a + min(out, cap) * n, d) for a, d, n, out in sides])
            if grown is not None and _fitted_card_shaped(grown):
                return (grown / self.scale).astype(np.float32)
        return np.asarray(quad, np.float32)

    def best_turn(self, view: np.ndarray, card: ZoneCard, quad: np.ndarray) -> np.ndarray:
        """The outline's corners named so that the card's picture fits the view best there
        (the locator's corner order says nothing of which way up the card lies)."""
        fits = []
        for q in (quad, half_turned(quad)):
            now, seen = self.capture(view, q)
            grey_now = cv2.cvtColor(now, cv2.COLOR_BGR2GRAY).astype(np.float32)
            grey_then = cv2.cvtColor(card.face, cv2.COLOR_BGR2GRAY).astype(np.float32)
            both = seen & card.seen
            if both.sum() < 8:
                fits.append(-1.0)
                continue
            a, b = grey_now[both] - grey_now[both].mean(), grey_then[both] - grey_then[both].mean()
            fits.append(float((a * b).sum() / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-6)))
        return np.asarray(quad if fits[0] >= fits[1] else half_turned(quad), np.float32)

    def fit(self, view: np.ndarray, card: ZoneCard, quad: np.ndarray) -> np.ndarray:
        """The card's outline near `quad` (frame pixels, corners in its picture's order) where
        its own picture fits the view best (ECC alignment of the picture's inside, affine): the
        outline a locator or a search found may be a few pixels off, and a picture drawn a few
        pixels off misfits along every edge of its print. The outline given if the alignment
        fails or runs off (further than FIT_REACH, or to another size)."""
        found = self._aligned(view, card, quad)
        if found is None:
            return quad
        fitted, _ = found
        length = np.sqrt(quad_area(quad) * CARD_ASPECT)
        if (np.abs(fitted - quad).max() > FIT_REACH * length
                or abs(quad_area(fitted) / max(quad_area(quad), 1e-6) - 1) > FIT_AREA):
            return quad
        return fitted

    def fit_printed(self, view: np.ndarray, printed: ZoneCard, quad: np.ndarray) -> np.ndarray | None:
        """A card's outline found by fitting the picture of `printed` (the card itself, moved,
        or a card of its label seen before: the same printing) near the located `quad`, which
        may be far off (a card laid on its twin is often outlined round part of both, or cut at
        its banner). Tried from the quad as located; failing that, from a card of the printed
        card's size on the quad's centre and slant, and from where the printed picture is found
        nearby, each either way up. A fit counts if the card it finds is of the printed card's
        size and shape, lies mostly where the card was located, and the picture fits well (else
        None)."""
        size = quad_area(printed.quad)

        def fitted(start):
            found = self._aligned(view, printed, start, PRINTED_LEAST)
            if found is None:
                return None
            outline, fit = found
            if (abs(quad_area(outline) / size - 1) <= PRINTED_AREA and _fitted_card_shaped(outline) and fit >= PRINTED_FIT
                    and intersection_area(outline, quad) >= PRINTED_OVER * min(quad_area(outline), quad_area(quad))):
                return outline, fit
            return None

        located = self.best_turn(view, printed, quad)
        first = fitted(located)
        if first is not None:
            return first[0]
        sized = _resized(located, printed.quad) * self.scale
        searched = max((search(view, printed.look, q, SEARCH_REACH, SEARCH_TURN) for q in (sized, half_turned(sized))),
                       key=lambda found: found[1])[0] / self.scale
        # The card's size on the quad both ways up: best_turn's choice, made at an outline that
        # may be far off, is a guess for a picture that looks nearly alike turned half round.
        fits = [f for f in (fitted(sized / self.scale), fitted(half_turned(sized) / self.scale), fitted(searched))
                if f is not None]
        return max(fits, key=lambda f: f[1])[0] if fits else None

    def _aligned(self, view: np.ndarray, card: ZoneCard, quad: np.ndarray, least=(-1.0, -1.0)):
        """(outline, ECC correlation) of the card's picture aligned to the view from `quad`, or
        None if the alignment did not converge (a flat picture, say) or, at half size, fitted
        worse than `least` (where it lies; how): a picture that far off is not there, and most
        of an alignment's cost would be spent on such. One judgement asks for the same alignment
        more than once (a card pushed is both a pose of itself and the printing of a card found):
        alignments are kept until the next view."""
        key = (id(card.face), np.asarray(quad, np.float32).tobytes(), least)
        if key not in self._alignments:
            self._alignments[key] = (card.face, self._align(view, card.face, quad, least))
        return self._alignments[key][1]

    def _align(self, view, face, quad, least):
        length = np.sqrt(quad_area(quad) * CARD_ASPECT)
        h, w = view.shape[:2]
        margin = (FIT_REACH * length + 4) * self.scale
        (x0, y0), (x1, y1) = quad.min(axis=0) * self.scale - margin, quad.max(axis=0) * self.scale + margin
        x0, y0, x1, y1 = max(0, int(x0)), max(0, int(y0)), min(w, int(np.ceil(x1))), min(h, int(np.ceil(y1)))
        if x1 - x0 < 16 or y1 - y0 < 16:
            return None
        # Only the picture's inside is aligned: an outline a little off leaves a strip of what lay
        # round the card in its picture, which does not move with the card and pulls the fit.
        fw, fh = FACE_SIZE
        mx, my = round(FIT_INSIDE * fw), round(FIT_INSIDE * fh)
        template = cv2.cvtColor(face, cv2.COLOR_BGR2GRAY)[my:fh - my, mx:fw - mx]
        # The picture's points -> the searched box (an affine map: a card moved a little keeps its
        # perspective), from the template's (the picture's inside).
        shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
        matrix = shift @ np.linalg.inv(face_matrix(quad * self.scale))
        matrix = np.vstack([(matrix / matrix[2, 2])[:2], [0, 0, 1]])
        matrix = (matrix @ np.array([[1, 0, mx], [0, 1, my], [0, 0, 1]]))[:2].astype(np.float32)
        grey = cv2.cvtColor(view[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
        # Coarse to fine: at half size first where it lies (a shift alone: far from the right
        # place, a freer alignment may squash the picture onto what it half matches), then how
        # (affine); then a few steps at full size. (Halving by INTER_AREA puts pixel x' of the
        # half picture at 2x' + 0.5 of the whole one.)
        half_t = cv2.resize(template, (template.shape[1] // 2, template.shape[0] // 2), interpolation=cv2.INTER_AREA)
        half_g = cv2.resize(grey, (grey.shape[1] // 2, grey.shape[0] // 2), interpolation=cv2.INTER_AREA)
        half = matrix.copy()
        half[:, 2] = (matrix[:, :2] @ np.array([0.5, 0.5], np.float32) + matrix[:, 2] - 0.5) / 2
        # (At half size a coarser stop: the steps at full size make it exact.)
        criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, FIT_STEPS, 1e-3)
        try:
            there, half = cv2.findTransformECC(half_t, half_g, half, cv2.MOTION_TRANSLATION, criteria, None, 3)
            if there < least[0]:
                return None
            how, half = cv2.findTransformECC(half_t, half_g, half, cv2.MOTION_AFFINE, criteria, None, 3)
            if how < least[1]:
                return None
            matrix = half.copy()
            matrix[:, 2] = 2 * half[:, 2] + 0.5 - half[:, :2] @ np.array([0.5, 0.5], np.float32)
            fine = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, FIT_FINE_STEPS, 1e-4)
            fit, matrix = cv2.findTransformECC(template, grey, matrix, cv2.MOTION_AFFINE, fine, None, 3)
        except cv2.error:
            return None
        corners = np.array([[-mx, -my, 1], [fw - mx, -my, 1], [fw - mx, fh - my, 1], [-mx, fh - my, 1]], np.float32)
        return ((corners @ matrix.T + [x0, y0]) / self.scale).astype(np.float32), float(fit)

    # ------------------------------------------------------------------ explaining a change
    def explain(self, view: np.ndarray, changed: np.ndarray, touched: list[int], poses: dict[int, list],
                candidates: list[tuple[np.ndarray, str]]) -> Explanation:
        """The best explanation of the view: which of the `touched` known cards went or moved
        (to one of their `poses`), and which `candidates` (quad, reading: a key of PRICE_NEW)
        are new cards.

        `changed` is the view-scale mask of where the picture changed: the drawing is compared
        within its box (and the places of every card and candidate in play), so the same
        pixels judge every explanation."""
        card_px = self._card_px()
        layers = _Layers(self, view, changed, touched, poses, candidates)

        def cost_of(state):
            misfit = layers.misfit(state) / card_px
            price = sum(PRICE_GONE if s is None else PRICE_MOVED for s in state.cards.values() if s != "stay")
            price += sum(PRICE_NEW[candidates[c][1]] for c in state.new)
            return misfit, misfit + price

        state = _State({i: "stay" for i in touched}, [])
        tracing = log.isEnabledFor(logging.DEBUG)      # (every option weighed, in the debug log)
        misfit, cost = cost_of(state)
        for _ in range(MAX_STEPS):
            best = None
            for option in layers.options(state):
                trial = state.with_option(option)
                m, c = cost_of(trial)
                if tracing:
                    log.debug("   option %s state %s misfit %.3f cost %.3f", option, trial, m, c)
                if best is None or c < best[2]:
                    best = (trial, m, c)
            if best is None or best[2] >= cost - 1e-6:
                break
            state, misfit, cost = best
        # Much left unexplained is something there: the card found that explains most of it is
        # taken whatever it costs (a dark card on a dark cloth, read as no card from a part of
        # it: unnamed, the table is asked to show it again), rather than the change being taken
        # into the table.
        # (Only what the zone has seen counts: a card found where it never saw the table, as
        # where a card lay from the start, explains nothing by drawing what it sees.)
        if misfit >= LEFT_OVER:
            seen = layers.known(state)
            left = layers.misfit(state, seen) / card_px
            trials = [(layers.misfit(state.with_option(("new", c, None)), seen) / card_px, c)
                      for c in range(len(candidates)) if c not in state.new]
            if trials and left >= LEFT_OVER and min(trials)[0] <= left - LEFT_GAIN:
                state = state.with_option(("new", min(trials)[1], None))
                misfit, cost = cost_of(state)
        still = ~layers.changed
        hidden = {}
        for c in state.new:
            # (What would show there without it.)
            unseen = ~layers.known(state.with_option(("new", c, None)))
            place = layers.covers[layers.index[("new", c)]]
            if place.any() and unseen[place].mean() >= HIDDEN_UNSEEN:
                hidden[c] = float((unseen | still)[place].mean())
        return Explanation(gone=[i for i, s in state.cards.items() if s is None],
                           moved={i: layers.pose(i, s) for i, s in state.cards.items() if isinstance(s, int)},
                           new=list(state.new), misfit=misfit, cost=cost, hidden=hidden)

    def _card_px(self) -> float:
        if self.cards:
            return float(np.median([quad_area(c.quad) for c in self.cards])) * self.scale ** 2
        return (0.45 * VIEW_LONG_SIDE * 0.75) ** 2 / 1.4


def _piles(cards: list, touched: list[int]) -> list[tuple[int, ...]]:
    """What a hand may take off the table at once, each of two cards or more: a touched card
    with the touched cards lying over it (bottom up, each on one already in the pile), and
    every touched card (the zone cleared)."""
    piles = []
    for i in touched:
        pile = [i]
        for j in touched:
            if j > i and any(intersection_area(cards[j].quad, cards[k].quad) > 0 for k in pile):
                pile.append(j)
        piles.append(tuple(pile))
    piles.append(tuple(touched))
    return [pile for pile in dict.fromkeys(piles) if len(pile) > 1]


@dataclass
class _State:
    cards: dict               # touched card -> "stay", None (gone) or the index of its pose
    new: list                 # candidate indices, bottom up

    def with_option(self, option: tuple) -> "_State":
        kind, a, b = option
        if kind == "card":
            return _State({**self.cards, a: b}, self.new)
        if kind == "pile":
            return _State({**self.cards, **{i: None for i in a}}, self.new)
        if a in self.new:
            return _State(self.cards, [c for c in self.new if c != a])
        return _State(self.cards, self.new + [a])


class _Layers:
    """Every picture an explanation can draw, cut to the box compared: each known card where it
    lies and at each pose it may have moved to, and each candidate as a new card; with its
    misfit against the view, pixel by pixel, computed once."""

    def __init__(self, zone: Zone, view, changed, touched, poses, candidates):
        self.zone, self.touched, self.candidates = zone, touched, candidates
        s = zone.scale
        quads = [c.quad for c in zone.cards] + [q for qs in poses.values() for q in qs] + [q for q, _ in candidates]
        ys, xs = np.nonzero(changed)
        h, w = view.shape[:2]
        if len(xs):
            x0, y0, x1, y1 = xs.min(), ys.min(), xs.max() + 1, ys.max() + 1
        else:
            x0, y0, x1, y1 = w, h, 0, 0
        for q in [zone.cards[i].quad for i in touched] + [q for qs in poses.values() for q in qs] + \
                 [q for q, _ in candidates]:
            (qx0, qy0), (qx1, qy1) = q.min(axis=0) * s, q.max(axis=0) * s
            x0, y0, x1, y1 = min(x0, qx0), min(y0, qy0), max(x1, qx1), max(y1, qy1)
        x0, y0 = max(0, int(x0) - RIM_PX), max(0, int(y0) - RIM_PX)
        x1, y1 = min(w, int(np.ceil(x1)) + RIM_PX), min(h, int(np.ceil(y1)) + RIM_PX)
        self.box = (x0, y0, x1, y1)
        self.changed = changed[y0:y1, x0:x1]
        self.origin = np.array([x0, y0], np.float32)
        bw, bh = max(1, x1 - x0), max(1, y1 - y0)
        self.size = (bw, bh)
        seen_now = cv2.blur(view[y0:y1, x0:x1], (3, 3))
        self.view = seen_now
        self.burnt = None if zone.burnt is None else cv2.dilate(zone.burnt[y0:y1, x0:x1], np.ones((3, 3), np.uint8))
        # Near every outline in play a shadow may fall (see _misfit).
        rims = np.zeros((bh, bw), np.uint8)
        for q in quads:
            cv2.polylines(rims, [np.round(q * s - self.origin).astype(np.int32)], True, 255,
                          thickness=2 * RIM_PX + 1)
        self.near = rims > 0
        # Just outside every outline nothing is compared: the rim of a card whose outline runs a
        # little inside it (the locator's often does, along the printed frame) is drawn as what
        # lies beneath wherever it moves, and its shadow falls there.
        outside = np.zeros((bh, bw), np.uint8)
        for q in quads:
            band = np.zeros((bh, bw), np.uint8)
            poly = np.round(q * s - self.origin).astype(np.int32)
            cv2.polylines(band, [poly], True, 1, thickness=2 * OUTSIDE_PX + 1)
            cv2.fillConvexPoly(band, poly, 0)
            outside |= band
        self.weight = (outside == 0).astype(np.float32)
        self.kernel = np.ones((2 * SLACK_PX + 1, 2 * SLACK_PX + 1), np.uint8)
        table = zone.table[y0:y1, x0:x1]
        self.maps = [self._misfit(table, zone.table_seen[y0:y1, x0:x1])]     # index 0: the table
        self.seens = [zone.table_seen[y0:y1, x0:x1]]
        self.covers = [None]
        self.index: dict = {}
        for i, card in enumerate(zone.cards):
            (cx0, cy0), (cx1, cy1) = card.quad.min(axis=0) * s, card.quad.max(axis=0) * s
            if cx1 > x0 and cx0 < x1 and cy1 > y0 and cy0 < y1:       # (a card off the box draws nothing)
                self.index[("at", i)] = self._layer(card.face, card.seen, card.quad, floor=card.floor)
        self.pose_quads = {i: list(qs) for i, qs in poses.items()}
        self.piles = _piles(zone.cards, touched)
        self.clash = {i: [{c for c, (cq, _) in enumerate(candidates) if quad_iou(q, cq) >= CLASH_IOU} for q in qs]
                      for i, qs in poses.items()}
        for i, qs in poses.items():
            for k, q in enumerate(qs):
                card = zone.cards[i]
                self.index[("pose", i, k)] = self._layer(card.face, card.seen, q, relit=True, floor=card.floor)
        for c, (q, _) in enumerate(candidates):
            face, seen = zone.capture(view, q)
            self.index[("new", c)] = self._layer(face, seen, q)
        self.stack = np.stack(self.maps)
        self.seen = np.stack(self.seens)

    def _misfit(self, picture, seen, rect=None, floor=None) -> np.ndarray:
        """How badly the drawing misfits the view, pixel by pixel (0 fits, 1 a full miss), within
        `rect` (x0, y0, x1, y1) of the box (all of it if None).
        A pixel fits where the drawing shows its colour within SLACK_PX of it (an outline a
        pixel or two off, and a picture resampled twice, must not misfit along every edge of its
        print; a sliver wider than that does), and near an outline where it is the drawing's
        colour evenly darkened (a card's shadow on what lies beneath it, which nothing draws).
        A value burnt out shows only how bright it is at least: where the view's was (self.burnt),
        a drawing brighter fits; where the drawing's was (`floor`, 255 there, of rect's size), a
        view brighter fits."""
        x0, y0, x1, y1 = rect or (0, 0, *self.size)
        view, near = self.view[y0:y1, x0:x1], self.near[y0:y1, x0:x1]
        picture = cv2.blur(picture, (3, 3))
        low, high = cv2.erode(picture, self.kernel), cv2.dilate(picture, self.kernel)
        # (uint8 arithmetic saturates: each difference is 0 where the view is within the range.)
        # (Channel by channel: numpy's reductions along a short last axis are slow.)
        view_darker = cv2.subtract(low, view)
        if self.burnt is not None:       # a burnt-out value is a floor: a drawing brighter there fits
            view_darker = cv2.bitwise_and(view_darker, cv2.bitwise_not(self.burnt[y0:y1, x0:x1]))
        view_brighter = cv2.subtract(view, high)
        if floor is not None:
            view_brighter = cv2.bitwise_and(view_brighter, cv2.cvtColor(cv2.bitwise_not(cv2.dilate(floor, self.kernel)),
                                                                        cv2.COLOR_GRAY2BGR))
        b, g, r = cv2.split(cv2.max(view_brighter, view_darker))
        m = _MISFIT[cv2.max(cv2.max(b, g), r)]
        ratio = view[near].astype(np.float32) / np.maximum(picture[near], 8).astype(np.float32)
        top = np.maximum(np.maximum(ratio[:, 0], ratio[:, 1]), ratio[:, 2])
        bottom = np.minimum(np.minimum(ratio[:, 0], ratio[:, 1]), ratio[:, 2])
        shade = (top <= 1.0 + SHADE_EVEN) & (bottom >= 1.0 - SHADE_DEPTH) & (top - bottom <= SHADE_EVEN)
        m[near] = np.where(shade, 0.0, m[near])
        m[~seen] = UNKNOWN
        return m * self.weight[y0:y1, x0:x1]

    def _layer(self, face, seen, quad, relit: bool = False, floor=None) -> int:
        """A picture drawn at quad: its misfit is computed only around where it covers (it is
        drawn nowhere else), with the margin the blur and the slack need to see past its edge.
        `floor` (FACE_SIZE x 3 bool): where the picture shows only how bright it is at least."""
        q = quad * self.zone.scale - self.origin
        poly = np.round(q).astype(np.int32)
        cover = np.zeros(self.size[::-1], np.uint8)
        cv2.fillConvexPoly(cover, poly, 1)
        bw, bh = self.size
        px, py, pw, ph = cv2.boundingRect(poly)
        margin = SLACK_PX + 2
        rect = (max(0, px - margin), max(0, py - margin), min(bw, px + pw + margin), min(bh, py + ph + margin))
        x0, y0, x1, y1 = rect
        maps = np.zeros((bh, bw), np.float32)
        seens = np.zeros((bh, bw), bool)
        if x1 > x0 and y1 > y0:
            matrix = np.linalg.inv(face_matrix(q - np.array([x0, y0], np.float32)))
            size = (x1 - x0, y1 - y0)
            picture = cv2.warpPerspective(face, matrix, size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
            seen_here = cv2.warpPerspective(seen.astype(np.uint8), matrix, size, flags=cv2.INTER_NEAREST,
                                            borderMode=cv2.BORDER_CONSTANT, borderValue=0) > 0
            floor_here = None if floor is None else cv2.warpPerspective(
                floor.astype(np.uint8) * 255, matrix, size, flags=cv2.INTER_NEAREST,
                borderMode=cv2.BORDER_CONSTANT, borderValue=0)
            if relit:
                where = (cover[y0:y1, x0:x1] > 0) & seen_here & ~self.near[y0:y1, x0:x1]
                # A burnt-out value, of the view or of the picture, tells how bright it is only at
                # least: the fit reads the channels that were not. (Pixel by pixel was wrong both
                # ways: leaving out every pixel with a burnt channel fitted a green card, its green
                # burnt, on its dark outline alone, and UNO Flip 9013 --light bright counted a
                # green-5 pushed off its twin again (frame 779); keeping them fitted a white card
                # to its burnt white, and flip7 9013 --light bright a 6 moved (frame 4762).)
                known = None                    # (None: every channel tells)
                for burnt in (None if self.burnt is None else self.burnt[y0:y1, x0:x1], floor_here):
                    if burnt is not None:
                        known = (burnt == 0) if known is None else known & (burnt == 0)
                picture = self._relit(picture, where, self.view[y0:y1, x0:x1], known)
            if floor_here is not None:
                floor_here = floor_here.max(axis=2)
            maps[y0:y1, x0:x1] = self._misfit(picture, seen_here, rect, floor_here)
            seens[y0:y1, x0:x1] = seen_here
        self.maps.append(maps)
        self.seens.append(seens)
        self.covers.append(cover > 0)
        return len(self.maps) - 1

    @staticmethod
    def _relit(picture, where, view, known=None) -> np.ndarray:
        """The picture of a card moved, lit as the view is lit where it lies now: light falls
        unevenly on a table (a lamp to one side), so a card pushed into another part of it is
        brighter or darker on one side than it was. A smooth gain (a plane) is fitted to the
        brightness of view over picture where the card lies, twice, the second time without the
        pixels the first fit leaves far off (what the picture does not show). `known` (h x w x 3
        bool): the channels whose values both tell (not burnt out); the others are not read."""
        if known is not None:
            where = where & known.any(axis=2)
        ys, xs = np.nonzero(where)
        if len(xs) < 50:
            return picture
        use = np.ones((len(xs), 3), np.float32) if known is None else known[ys, xs].astype(np.float32)
        now = (view[ys, xs] * use).sum(axis=1, dtype=np.float32)
        then = np.maximum((picture[ys, xs] * use).sum(axis=1, dtype=np.float32), 8.0)
        ratio = now / then
        h, w = where.shape
        basis = np.stack([np.ones_like(xs, np.float32), xs / w - 0.5, ys / h - 0.5], axis=1).astype(np.float32)
        keep = np.abs(ratio - np.median(ratio)) < RELIGHT_OFF
        for _ in range(2):
            if keep.sum() < 30:
                return picture
            coef, *_ = np.linalg.lstsq(basis[keep], ratio[keep], rcond=None)
            keep = np.abs(basis @ coef - ratio) < RELIGHT_OFF
        gy, gx = np.mgrid[0:h, 0:w].astype(np.float32)
        gain = coef[0] + coef[1] * (gx / w - 0.5) + coef[2] * (gy / h - 0.5)
        relit = picture * np.clip(gain, 1 - RELIGHT_MAX, 1 + RELIGHT_MAX)[..., None]
        return np.clip(relit, 0, 255).astype(np.uint8)

    def pose(self, i, k) -> np.ndarray:
        return self.pose_quads[i][k]

    def options(self, state: _State):
        """The states one happening away. A card moved to where a new card is found, and that
        new card, exclude each other (drawn over it, the new card would only hide how well or
        badly the moved card fits). Cards swept off at once are one happening (_piles): one
        step at a time, taking away the bottom card of a pile still draws the one over it, the
        top card the one beneath, and one of two cards lying apart the other, so no single step
        fits the table now seen, and the cleared place was taken for a new thing lying there."""
        for i in self.touched:
            for choice in ["stay", None, *range(len(self.pose_quads.get(i, [])))]:
                if choice != state.cards[i] and not (isinstance(choice, int) and self.clash[i][choice] & set(state.new)):
                    yield ("card", i, choice)
        for pile in self.piles:
            if any(state.cards[i] is not None for i in pile):
                yield ("pile", pile, None)
        taken = set().union(*(self.clash[i][s] for i, s in state.cards.items() if isinstance(s, int)))
        for c in range(len(self.candidates)):
            if c in state.new or c not in taken:
                yield ("new", c, None)

    def misfit(self, state: _State, where: np.ndarray | None = None) -> float:
        """The misfit of the drawing of a state (within `where`, if given): cards that stayed
        (bottom up), then the ones moved (a card pushed lies over what it now reaches), then the
        new ones."""
        top = self._top(state)
        found = np.take_along_axis(self.stack, top[None], axis=0)[0]
        return float(found.sum() if where is None else found[where].sum())

    def known(self, state: _State) -> np.ndarray:
        """Where the drawing of a state shows what the zone has seen (not a table never seen)."""
        return np.take_along_axis(self.seen, self._top(state)[None], axis=0)[0]

    def _top(self, state: _State) -> np.ndarray:
        """Which layer is drawn on top at each pixel (0: the table)."""
        order = []
        moved = []
        for i in range(len(self.zone.cards)):
            s = state.cards.get(i, "stay")
            if s == "stay":
                if ("at", i) in self.index:
                    order.append(self.index[("at", i)])
            elif s is not None:
                moved.append(self.index[("pose", i, s)])
        order += moved + [self.index[("new", c)] for c in state.new]
        top = np.zeros(self.size[::-1], np.intp)
        for layer in order:
            top[self.covers[layer]] = layer
        return top
