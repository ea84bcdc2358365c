"""Few-shot adaptation to the user's own deck: calibration profiles and the calibrated classifier.

The trained classifier has only ever seen rendered cards. After the user shows each card once (or
a few times), a *profile* holds the look network's embeddings (vision.look: one network for every
deck, trained to compare card faces within a printing) of each crop shown, both ways up (cards
lie either way), of altered copies of each (AUGMENTED_VIEWS per label and way, shared among its
crops: light level and colour cast, a light gradient, a corner error of the locator, blur, sensor
noise: what changes between the calibration capture and a later one), and of four views of each
that are NOT a whole card (not_a_card_views: what the locator's wrong quads see): samples of
"none" made of this very deck. It also records how many of the crops the trained classifier itself named right: a deck
printed like the training family is read by the model, a foreign one is not. At run time a crop's
embedding is compared with the profile; no training run, no PyTorch, only numpy.

Reading (numbers in CalibrationParams, tuned with `python -m vision.evaluation.foreign_eval --tune` on
foreign printings and printings of the training family in held-out fonts, scenes never used for
the reported figures; models/calibration.md):
* embeddings are centred on the profile's mean card (the mean over labels of each label's mean)
  and scaled to unit length, so cosine similarity measures what tells this deck's cards apart
  rather than what all cards share ("simple shot" normalisation); a label's similarity to a crop
  is its best sample's;
* class scores are similarity / temperature, plus model_weight x the trained model's logit x its
  agreement (the share of the profile's crops, both ways up, the model named right by itself):
  the model votes for a deck printed like its training family, and not for one it cannot read;
* in a deck whose colours are part of what a card is (UNO Flip: rules.cards.Deck.colours), a
  label's similarity is its nearest sample's plus colour_weight x the cosine with the mean
  card of its colour (colour_cards; none_similarity is on that scale): the dozen cards of one
  colour, each shown in its own light, say what that ink looks like far better than one sample,
  so a colour twin (pink 5 / purple 5) leans less on one capture;
* in such a deck a label's similarity also gains ink_weight x how near the crop's *ink* is to the
  ink of its colour's cards, less the nearest colour's (ink_signature: the hue of its coloured
  pixels and the lightness of the rest, after the brightest near-white pixels are made neutral,
  which undoes most of a lamp's colour cast). The look network compares faces and lets a poor
  capture's colour drift; the pixels' hue is what an orange 8 and a blue 8 differ by, and the
  dozen cards of a colour pin it down (colour_means, as for colour_cards);
* "none" competes as a virtual sample at similarity none_similarity or at its best cosine with
  the deck's "none" views, whichever is higher: a crop unlike every card of the deck, or like a
  part of one, is not named;
* the softmax of those scores goes through the same reject rule as the trained classifier
  (min_confidence, min_margin), so a card close to two labels is "not sure", not a guess;
* a label the profile has no sample of scores the model's vote alone, and only where the model by
  its own reject rule names it: the model still names it in a deck it reads (agreement near 1),
  and never in one it cannot read (agreement near 0, or the model not naming it); where the model
  leans to it but is not sure, the crop is "not sure" (not read as a shown card it resembles);
* the pictures must agree (version 5 profiles): each crop shown is also kept as a small picture
  (picture_template: grey 32 x 44 for normalised correlation, both ways up, and a hue histogram).
  Where the reading names a shown label but the nearest kept picture is another label's, both
  keep the lesser of their shares and the crop is "not sure" (pictures_agree); where the trained
  model misnamed none of the walk's crops and names the card too, it stands in for the pictures
  (Profile.model_trusted). One look at a physical deck read in another session: 5 wrong in 181
  accepted, 35 % refused (46 wrong in 318 without the check).

Version 6 profiles read by the user's own crops as **templates** (vision.card_templates: each crop
both ways up, its grey detail compared by normalised correlation after a shift search of a few
pixels, weighted where the deck's cards differ, and its ink), together with the look network
(template_probabilities, TemplateParams): a label's score is its templates' plus look_weight x its
nearest sample's similarity; the labels share by the softmax of their scores, the crop is "no
card" as far as its best score is below card_score (but "not sure" where the trained model leans
to a card: another deck's card, or one the lamp changed, is shown again rather than passed over),
and the reject rule decides. A card's printed
face is fixed: the user's own crop of it, warped, is what a later crop of it looks like, where the
look network only resembles it. Those read above (colour, ink, "none" views, the model's vote) are
the look network's alone (`picture_check=False`), the figure beside it in real_eval.
`python -m vision.evaluation.real_eval --deck uno-flip --real REAL --no-captures` (models/calibration.md,
which also says which photos chose what): one look at a physical deck read in its other sessions,
275 right, 0 wrong, 1.8 % refused of 280 (version 5: 176 right, 5 wrong, 35.4 % refused); every
photo set calibrating in turn and every other read, 0 wrong in 539 accepted.
Version 2 profiles also compared the classifier's own features (its last feature map) and let
the model vote with a fixed weight: features and vote carried a deck like the training family but
blurred a foreign one, so the reject rule had to refuse a quarter to two thirds of foreign cards.

Profiles are .npz files (no pickles) with a JSON header: format name and version, deck id, the
SHA-256 of the classifier and of the look model, their names, labels, per-label crop counts and
model agreement, the scoring parameters (and a version 6 profile's TemplateParams). A profile
that is corrupt, of another version, another deck or another model is refused with a ProfileError
saying so: embeddings of another network would silently mean nothing. Versions 3 to 5 are still
read, as they were (without templates); walking the whole deck again makes a version 6 one.
"""

from __future__ import annotations

import io
import json
import math
import os
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

from vision.card_templates import DETAIL_SIZE, TemplateReader, card_grey, card_ink
from vision.classifier import CardClassifier, ModelError, Prediction, reject_rule
from vision.files import write_atomically
from vision.geometry import turned_half_round
from vision.look import LookModel

PROFILE_FORMAT = "tablemate-calibration-profile"
# 1: the classifier's features alone; 2: look embedding and classifier features, nearest sample
# 3: without the cards' inks (read as before: ink_weight 0); 3 and 4 read without the picture check
# 4: with the cards' inks; 5: with the crops' pictures (picture_template), checked against the reading
# 6: with the crops' templates (vision.card_templates), read by them and the look network together
PROFILE_VERSION = 6
READABLE_VERSIONS = (3, 4, 5, 6)
# Photos per card that read surest: "3 samples" of models/calibration.md, the most any figure there
# was measured with (the device's walk keeps this many of each card, the command suggests it).
SUREST_PHOTOS = 3
AUGMENTED_VIEWS = 16  # altered copies per label and way up, shared among its crops (at least 4 each)
# `python -m vision.evaluation.foreign_eval --deck flip7` with the previous look network: 1 sample 97.83 % /
# 41.05 % rejected with 4 copies per crop, 97.89 % / 39.49 % with 16 per label (a one-off sweep of
# 4 / 8 / 16 / 24 copies on the tuning printings levelled off at 16). A budget per label, not per
# crop, keeps 3-crop calibration from costing three times one crop's.


# A card shrunk inside a quad far too big still looks much like the card to the look network
# (it compares faces at any scale): two such views per crop, not one, keep it nearer "none"
# (tests/test_calibrate.py: 15 of 20 such views with one, see models/calibration.md).
INSIDE_VIEWS = 2


# ink_signature: hue bins (10 degrees) of the coloured pixels, lightness bins of the others. A
# throwaway sweep on UNO Flip's cached tuning crops (models/calibration.md, "The cards' ink") chose
# the white patch and the lightness bins: the nearest colour's cards named a crop's colour for
# 82-97 % of crops by hue alone, 92-99 % with both.
INK_HUE_BINS = 36
INK_LIGHTNESS_BINS = 6
INK_DIM = INK_HUE_BINS + INK_LIGHTNESS_BINS
INK_SIZE = (42, 60)              # the crop is shrunk to this first: colours, not strokes
INK_COLOURED = (0.25, 0.15)      # a pixel is coloured above this saturation and value (HSV, 0-1)
INK_WHITE_PATCH = (0.95, 0.35)   # the brightest 5 % of pixels are the light's white if less saturated than this

# picture_template: a crop as the grey picture a normalised correlation compares (blurred at
# sigma 1: a locator's outline a pixel or two off must not matter; less its blur at PICTURE_LIGHT_SIGMA:
# a lamp's fall-off across the card must not either) and its hue histogram, weighed in at
# PICTURE_HUE_WEIGHT (two cards of one layout differ by their ink: UNO's red 5 / blue 5). Taking
# the light out lowered the check's refusals on printed UNO Flip captures after one look from 87 %
# to 75.5 % with the UNO Flip network before this one (vision.evaluation.real_eval; models/calibration.md).
PICTURE_LIGHT_SIGMA = 3.0
PICTURE_SIZE = (32, 44)
PICTURE_HUE_BINS = 30
PICTURE_DIM = PICTURE_SIZE[0] * PICTURE_SIZE[1]
PICTURE_HUE_WEIGHT = 0.5
# The trained model is a second opinion that stands in for the pictures' (Profile.model_trusted)
# where it named at least this share of the profile's crops (both ways up) right and none wrongly.
MODEL_TRUSTED_SHARE = 1 / 3
# A trusted model naming another symbol than the templates makes the crop "not sure" from this
# confidence on (CalibratedClassifier._tie_disagreements; its colour twin at any).
MODEL_SURE_OTHERWISE = 0.9
# A card the templates do not name but score within this of TemplateParams.card_score, and that is
# their likeliest label, the one a trusted model leans to and version 5's reading names: named
# (template_probabilities). Chosen on the tuning captures and the photos: without the bound
# (LEANED_SLACK = inf), `real_eval --deck uno-flip --no-captures` misreads 7 photos of decks of
# another design through nuno-set1's profile, each scored 0.48 or more below card_score (a throwaway
# log, models/calibration.md); at 0.3 and 0.4 none. 0.3 -> 0.4 (2026-12-05), on the tuning captures
# after one / three looks: Flip 7's (`real_eval --tuning-captures --captures 60`) not read 18 / 16
# -> 16 / 14 of 1,320 (a dark +8, a flip three in glare under a hand), UNO Flip's (`--captures 4`)
# 1 / 1 as before; then the held-out ones: Flip 7's 5 / 5 of 330 as before, UNO Flip's 4 / 3 -> 3 / 3
# of 540; every photo line as before; none misread anywhere.
LEANED_SLACK = 0.4


class ProfileError(ValueError):
    """A calibration profile cannot be used; the message says which file and why."""


@dataclass(frozen=True)
class CalibrationParams:
    """Chosen by `python -m vision.evaluation.foreign_eval --tune flip7 flip7-vengeance uno-flip --printings 6
    --test-per-label 6` on tuning printings and scenes of the three decks (foreign ones, and the
    training family in held-out fonts: a user's deck may be either), never those of the reported
    figures: accuracy among accepted first, then fewest rejected."""
    temperature: float = 0.12      # similarity -> score scale
    none_similarity: float = 0.7   # the virtual "none" sample's similarity: below it a crop is rather none
    model_weight: float = 4.0      # of the trained model's logits, times its agreement with the profile
    min_confidence: float = 0.2
    min_margin: float = 0.2
    colour_weight: float = 0.0     # of a label's similarity to the mean card of its colour, added (decks with colours)
    ink_weight: float = 0.0        # of how near a crop's ink is to its colour's, less the nearest colour's (decks with colours)


# Each deck's own set (its foreign printings bind the thresholds differently: UNO Flip's colour
# twins, Vengeance's -4 / -6), chosen by `python -m vision.evaluation.foreign_eval --tune flip7 flip7-vengeance
# uno-flip --printings 40 --test-per-label 6 --per-deck --bound 0.05` (the targets' accuracy on the
# foreign tuning printings at the low end of its bootstrap over the printings: a deck's failures
# come one label of one printing at a time, so the margin is what the printings' spread asks; the
# family's printings at the targets; models/calibration.md). UNO Flip's with `--refusal-budget
# 0.025` added (`--tune uno-flip` alone): the most accurate set refusing at most 2.5 %, where the
# fewest refused gave up accuracy it needed. A deck not listed reads with the defaults above.
DECK_PARAMS: dict[str, CalibrationParams] = {
    "flip7": CalibrationParams(temperature=0.05, none_similarity=0.6, model_weight=8.0, min_confidence=0.2,
                               min_margin=0.2),
    "flip7-vengeance": CalibrationParams(temperature=0.03, none_similarity=0.6, model_weight=8.0,
                                         min_confidence=0.5, min_margin=0.3),
    "uno-flip": CalibrationParams(temperature=0.065, none_similarity=0.7, model_weight=8.0, min_confidence=0.4,
                                  min_margin=0.05, colour_weight=0.25, ink_weight=0.25),
}


def params_for(deck: str) -> CalibrationParams:
    """The scoring parameters a new profile of `deck` gets (a profile keeps its own)."""
    return DECK_PARAMS.get(deck, CalibrationParams())


@dataclass(frozen=True)
class TemplateParams:
    """How a version 6 profile reads a crop (CalibratedClassifier.template_probabilities): each
    label's score is its templates' (vision.card_templates) plus look_weight x the look network's
    similarity to its nearest sample; a label's share among the labels is the softmax of score /
    temperature; the crop is a card of the deck at all as far as its best score is above
    card_score (a logistic of card_softness), "no card" for the rest; then the reject rule
    (min_confidence, min_margin). Chosen on real photos
    (`python -m vision.evaluation.real_eval`, models/calibration.md: tuning and held-out sets)."""
    look_weight: float = 0.4
    temperature: float = 0.08
    card_score: float = 1.1
    card_softness: float = 0.04
    min_confidence: float = 0.8
    min_margin: float = 0.6


@dataclass
class Profile:
    deck: str
    model_sha256: str                # of the deck classifier (its logits vote, its agreement is stored)
    look_sha256: str                 # of the look model (vision.look) whose embeddings are stored
    labels: tuple[str, ...]          # the deck's labels, classifier order
    embeddings: np.ndarray           # (M, look dim) look embeddings; float16 on disk
    sample_labels: np.ndarray        # (M,) int: i = a view of label i; -1 - i = a "none" view made from label i's crop
    counts: dict[str, int]           # crops captured per label
    model_named: dict[str, int]      # of those crops' 2 x counts ways up, how many the trained model named right
    params: CalibrationParams = field(default_factory=CalibrationParams)
    inks: np.ndarray | None = None   # (L, INK_DIM) per label its crops' mean ink_signature, zeros where none
    # of those ways up, how many the trained model named as another card; None: not recorded
    # (a version 3 or 4 profile)
    model_misnamed: dict[str, int] | None = None
    # (K, PICTURE_DIM), (K, PICTURE_HUE_BINS), (K,) label index: each crop shown, both ways up, as
    # picture_template gives it; empty in a version 3 or 4 profile (read without the picture check)
    pictures: np.ndarray | None = None
    picture_hues: np.ndarray | None = None
    picture_labels: np.ndarray | None = None
    # (K, h, w) uint8, (K, 2), (K,) label index: each crop shown, both ways up, as card_grey and
    # card_ink give it (vision.card_templates); empty before version 6 (read without templates)
    templates: np.ndarray | None = None
    template_inks: np.ndarray | None = None
    template_labels: np.ndarray | None = None
    template_params: TemplateParams = field(default_factory=TemplateParams)
    model_name: str = ""
    look_name: str = ""
    created: str = ""

    @property
    def dim(self) -> int:
        return int(self.embeddings.shape[1])

    def __post_init__(self):
        if self.inks is None:   # a version 3 profile: no inks (its params have ink_weight 0)
            self.inks = np.zeros((len(self.labels), INK_DIM), np.float32)
        if self.pictures is None:   # a version 3 or 4 profile (or a version 6 one): no pictures
            self.pictures = np.zeros((0, PICTURE_DIM), np.float32)
            self.picture_hues = np.zeros((0, PICTURE_HUE_BINS), np.float32)
            self.picture_labels = np.zeros(0, np.int64)
        if self.templates is None:  # before version 6: no templates
            self.templates = np.zeros((0, DETAIL_SIZE[1], DETAIL_SIZE[0]), np.uint8)
            self.template_inks = np.zeros((0, 2), np.float32)
            self.template_labels = np.zeros(0, np.int64)

    @property
    def read_by_templates(self) -> bool:
        """Whether every label shown has templates (a version 6 profile; not one updated from an
        older one for a few labels: those are read as before, by the look network)."""
        shown = np.unique(self.sample_labels[self.sample_labels >= 0])
        return len(self.templates) > 0 and set(np.unique(self.template_labels)) == set(shown)

    def missing(self) -> list[str]:
        return [label for label in self.labels if self.counts.get(label, 0) == 0]

    @property
    def model_agreement(self) -> float:
        """How far the trained model reads this deck: the share of the profile's crops (both ways
        up) it names right by itself, taken at the low end of what that many crops can tell (Wilson
        bound, z = 1.96): one card of a foreign deck the model happens to read does not switch its
        vote on (1 of 1 crop: 0.34; 42 of 44 ways: 0.84; none: 0)."""
        n = 2 * sum(self.counts.values())
        if n == 0:
            return 0.0
        p, z2 = sum(self.model_named.values()) / n, 1.96 ** 2
        low = (p + z2 / (2 * n) - math.sqrt(z2 * p * (1 - p) / n + z2 * z2 / (4 * n * n))) / (1 + z2 / n)
        return max(0.0, low)

    @property
    def model_trusted(self) -> bool:
        """Whether the trained model's own naming of a card is evidence on this deck: it named at
        least MODEL_TRUSTED_SHARE of the profile's crops (both ways up) right and not one wrongly.
        (One crop of the user's own walk named as another card shows its naming is not: the camera
        photos of a classic UNO deck, 2 to 11 of 108 misnamed, against none of a printed Flip 7
        deck's captures; vision.evaluation.real_eval.)"""
        if self.model_misnamed is None:
            return False
        ways = 2 * sum(self.counts.values())
        return (ways > 0 and sum(self.model_misnamed.values()) == 0
                and sum(self.model_named.values()) >= MODEL_TRUSTED_SHARE * ways)

    @property
    def model_reads_deck(self) -> bool:
        """Whether the trained model reads this deck at all (its agreement at least
        MODEL_TRUSTED_SHARE): only then does its naming of a card the walk did not show count."""
        return self.model_agreement >= MODEL_TRUSTED_SHARE

    # -- file format ---------------------------------------------------------------------------

    def save(self, path: str | Path) -> None:
        header = {"format": PROFILE_FORMAT, "version": PROFILE_VERSION, "deck": self.deck,
                  "model": {"sha256": self.model_sha256, "name": self.model_name},
                  "look_model": {"sha256": self.look_sha256, "name": self.look_name},
                  "embedding_dim": self.dim, "labels": list(self.labels), "counts": self.counts,
                  "model_named": self.model_named, "model_misnamed": self.model_misnamed,
                  "params": asdict(self.params), "template_params": asdict(self.template_params),
                  "created": self.created}
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        np.savez_compressed(buffer, header=np.frombuffer(json.dumps(header).encode("utf-8"), np.uint8),
                            embeddings=self.embeddings.astype(np.float16),
                            sample_labels=self.sample_labels.astype(np.int32), inks=self.inks.astype(np.float32),
                            pictures=self.pictures.astype(np.float16), picture_hues=self.picture_hues.astype(np.float16),
                            picture_labels=self.picture_labels.astype(np.int32),
                            templates=self.templates.astype(np.uint8), template_inks=self.template_inks.astype(np.float32),
                            template_labels=self.template_labels.astype(np.int32))
        # A Pi unplugged right after a calibration walk keeps the old profile or the new one.
        # (A full card, or PATH a folder: OSError, and the profile there, if any, stays.)
        write_atomically(path, buffer.getvalue())

    @classmethod
    def load(cls, path: str | Path) -> "Profile":
        path = Path(path)
        if not path.is_file():
            raise ProfileError(f"calibration profile {path} not found")
        with open(path, "rb") as f:
            if f.read(4) != b"PK\x03\x04":        # (numpy's own message for, say, a text file is advice to unpickle)
                raise ProfileError(f"{path}: not a readable calibration profile (not an .npz file: corrupt or "
                                   "another kind of file)")
        try:
            with np.load(path, allow_pickle=False) as z:
                header = json.loads(bytes(z["header"]).decode("utf-8"))
                if not isinstance(header, dict) or header.get("format") != PROFILE_FORMAT:
                    raise ProfileError(f"{path}: not a tablemate calibration profile")
                if header.get("version") not in READABLE_VERSIONS:
                    raise ProfileError(f"{path}: calibration profile version {header.get('version')!r} is not "
                                       f"supported (this tablemate reads versions {', '.join(map(str, READABLE_VERSIONS))}); "
                                       "calibrate again")
                embeddings = np.asarray(z["embeddings"], np.float32)
                sample_labels = np.asarray(z["sample_labels"], np.int64)
                inks = np.asarray(z["inks"], np.float32) if header["version"] >= 4 else None
                pictures = picture_hues = picture_labels = None
                if header["version"] >= 5:
                    pictures = np.asarray(z["pictures"], np.float32)
                    picture_hues = np.asarray(z["picture_hues"], np.float32)
                    picture_labels = np.asarray(z["picture_labels"], np.int64)
                templates = template_inks = template_labels = None
                if header["version"] >= 6:
                    templates = np.asarray(z["templates"], np.uint8)
                    template_inks = np.asarray(z["template_inks"], np.float32)
                    template_labels = np.asarray(z["template_labels"], np.int64)
        except ProfileError:
            raise
        except Exception as error:  # numpy, zlib and json raise many kinds for a damaged file
            raise ProfileError(f"{path}: not a readable calibration profile (corrupt or another kind "
                               f"of file: {type(error).__name__}: {error})") from None
        try:
            labels = tuple(str(x) for x in header["labels"])
            counts = {str(k): int(v) for k, v in header["counts"].items()}
            model_named = {str(k): int(v) for k, v in header["model_named"].items()}
            model_misnamed = ({str(k): int(v) for k, v in header["model_misnamed"].items()}
                              if header["version"] >= 5 else None)
            params = CalibrationParams(**{k: float(v) for k, v in header["params"].items()})
            template_params = (TemplateParams(**{k: float(v) for k, v in header["template_params"].items()})
                               if header["version"] >= 6 else TemplateParams())
            profile = cls(deck=str(header["deck"]), model_sha256=str(header["model"]["sha256"]),
                          look_sha256=str(header["look_model"]["sha256"]), labels=labels,
                          embeddings=embeddings, sample_labels=sample_labels,
                          counts=counts, model_named=model_named, model_misnamed=model_misnamed,
                          params=params, inks=inks,
                          pictures=pictures, picture_hues=picture_hues, picture_labels=picture_labels,
                          templates=templates, template_inks=template_inks, template_labels=template_labels,
                          template_params=template_params,
                          model_name=str(header["model"].get("name", "")),
                          look_name=str(header["look_model"].get("name", "")), created=str(header.get("created", "")))
            dim = int(header["embedding_dim"])
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise ProfileError(f"{path}: calibration profile header is incomplete or malformed "
                               f"({type(error).__name__}: {error})") from None
        if (embeddings.ndim != 2 or sample_labels.ndim != 1 or embeddings.shape[1] != dim
                or len(sample_labels) != len(embeddings) or profile.inks.shape != (len(labels), INK_DIM)
                or profile.pictures.ndim != 2 or profile.pictures.shape[1] != PICTURE_DIM
                or profile.picture_hues.shape != (len(profile.pictures), PICTURE_HUE_BINS)
                or profile.picture_labels.shape != (len(profile.pictures),)
                or profile.templates.shape[1:] != (DETAIL_SIZE[1], DETAIL_SIZE[0])
                or profile.template_inks.shape != (len(profile.templates), 2)
                or profile.template_labels.shape != (len(profile.templates),)):
            raise ProfileError(f"{path}: calibration profile arrays do not match its header (corrupt)")
        problem = profile._invalid()
        if problem:
            raise ProfileError(f"{path}: calibration profile holds invalid values ({problem}; corrupt)")
        return profile

    def _invalid(self) -> str:
        """What is wrong with the contents, or "" (arrays and header fields already parsed)."""
        labels, sl = self.labels, self.sample_labels
        if not all(np.isfinite(a).all() for a in (self.embeddings, self.inks, self.pictures, self.picture_hues,
                                                  self.template_inks)):
            return "embeddings not finite"
        if len(self.picture_labels) and not set(np.unique(self.picture_labels)) <= set(np.unique(sl[sl >= 0])):
            return "pictures of labels without samples"
        if len(self.template_labels) and not set(np.unique(self.template_labels)) <= set(np.unique(sl[sl >= 0])):
            return "templates of labels without samples"
        t = self.template_params
        if not all(math.isfinite(v) for v in asdict(t).values()) or t.temperature <= 0 or t.card_softness <= 0:
            return "template parameters out of range"
        if not len(sl) or sl.min() < -len(labels) or sl.max() >= len(labels):
            return "sample labels out of range"
        shown = {labels[i] for i in np.unique(sl[sl >= 0])}
        if not shown or set(self.counts) != shown or min(self.counts.values()) < 1:
            return "crop counts do not match the samples"
        if set(self.model_named) != set(self.counts) or any(
                not 0 <= self.model_named[lab] <= 2 * n for lab, n in self.counts.items()):
            return "model agreement does not match the crop counts"
        if self.model_misnamed is not None and (set(self.model_misnamed) != set(self.counts) or any(
                not 0 <= self.model_misnamed[lab] <= 2 * n - self.model_named[lab] for lab, n in self.counts.items())):
            return "model misnamings do not match the crop counts"
        p = self.params
        if not all(math.isfinite(v) for v in asdict(p).values()) or p.temperature <= 0:
            return "scoring parameters out of range"
        return ""

    def check_matches(self, classifier: CardClassifier, look: LookModel, deck: str, source: str = "profile") -> None:
        """Refuse (ProfileError) a profile made for another deck or with another model."""
        if self.deck != deck:
            raise ProfileError(f"{source} was calibrated for the {self.deck} deck, not {deck}")
        if self.model_sha256 != classifier.identity:
            raise ProfileError(f"{source} was calibrated with another model ({self.model_name or 'unknown'}, "
                               f"sha256 {self.model_sha256[:12]}…) than {classifier.name} "
                               f"(sha256 {classifier.identity[:12]}…); calibrate again with this model")
        if self.look_sha256 != look.identity:
            raise ProfileError(f"{source} was calibrated with another look model ({self.look_name or 'unknown'}, "
                               f"sha256 {self.look_sha256[:12]}…) than {look.name} "
                               f"(sha256 {look.identity[:12]}…); calibrate again with this model")
        if self.dim != look.dim:
            raise ProfileError(f"{source} holds {self.dim}-value embeddings, {look.name} gives {look.dim}")
        if tuple(self.labels) != tuple(classifier.labels):
            raise ProfileError(f"{source} lists other labels than the model {classifier.name}")


def look_model_for(classifier: CardClassifier, source: str = "profile") -> LookModel:
    """The look model kept beside the classifier's model file (loaded once per folder). A missing
    or broken one is a ProfileError: the profile cannot be used, the classifier still can."""
    folder = str(Path(classifier.name).parent)
    if folder not in _LOOK_MODELS:
        try:
            _LOOK_MODELS[folder] = LookModel.load(folder)
        except ModelError as error:
            raise ProfileError(f"{source} cannot be used: {error}") from None
    return _LOOK_MODELS[folder]


_LOOK_MODELS: dict[str, LookModel] = {}


def augment(crop_bgr: np.ndarray, rng: np.random.Generator, n: int, size: tuple[int, int]) -> list[np.ndarray]:
    """The crop at the model's input size, then n altered copies (see the module docstring)."""
    import cv2

    base = cv2.resize(crop_bgr, size, interpolation=cv2.INTER_AREA)
    if n == 0:
        return [base]
    w, h = size
    corners = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    moved = corners + rng.normal(0, 0.025 * h, (n, 4, 2)).astype(np.float32)
    a = np.stack([cv2.warpPerspective(base, cv2.getPerspectiveTransform(corners, m), size,
                                      borderMode=cv2.BORDER_REFLECT) for m in moved]).astype(np.float32)
    # All n copies at once (one calibration makes ~700 of them: a loop of small numpy steps cost
    # a quarter of its compute): light level and colour cast, an offset, a light gradient.
    gain = rng.uniform(0.6, 1.3, (n, 1, 1, 1)) * rng.uniform(0.85, 1.15, (n, 1, 1, 3))
    offset = rng.normal(0, 15, (n, 1, 1, 1))
    gx, gy = rng.uniform(-0.35, 0.35, (2, n, 1, 1, 1))
    x = (np.arange(w, dtype=np.float32) / w - 0.5)[None, None, :, None]
    y = (np.arange(h, dtype=np.float32) / h - 0.5)[None, :, None, None]
    a = (a * gain.astype(np.float32) + offset.astype(np.float32)) * (1 + gx * x + gy * y).astype(np.float32)
    for i in np.flatnonzero(rng.random(n) < 0.5):
        a[i] = cv2.GaussianBlur(a[i], (0, 0), rng.uniform(0.3, 1.2))
    a += rng.standard_normal(a.shape, dtype=np.float32) * rng.uniform(0, 6, (n, 1, 1, 1)).astype(np.float32)
    return [base, *np.clip(a, 0, 255).astype(np.uint8)]


def not_a_card_views(crop_bgr: np.ndarray, rng: np.random.Generator, size: tuple[int, int]) -> list[np.ndarray]:
    """Views of the crop that are not one whole card, as the locator's wrong quads see it: its
    middle (40-60 %) blown up (a quad far too small); the card shifted 35-70 % of a side out of
    the frame (astride its edge); the card shrunk to 45-70 % somewhere inside (far too big), in
    INSIDE_VIEWS places; and no card at all, the colour of its edge with a little noise (the table)."""
    import cv2

    h, w = crop_bgr.shape[:2]
    f = rng.uniform(0.4, 0.6)
    y0, x0 = int((1 - f) / 2 * h), int((1 - f) / 2 * w)
    middle = crop_bgr[y0:h - y0, x0:w - x0]
    edge = np.concatenate([crop_bgr[:3].reshape(-1, 3), crop_bgr[-3:].reshape(-1, 3)]).mean(0).astype(np.uint8)
    shifted = np.empty_like(crop_bgr)
    shifted[:] = edge
    axis = int(rng.integers(2))
    d = max(1, int(rng.uniform(0.35, 0.7) * crop_bgr.shape[axis])) * int(rng.choice([-1, 1]))
    src = [slice(None), slice(None)]
    dst = [slice(None), slice(None)]
    src[axis], dst[axis] = (slice(0, -d), slice(d, None)) if d > 0 else (slice(-d, None), slice(0, d))
    shifted[tuple(dst)] = crop_bgr[tuple(src)]
    insides = []
    for _ in range(INSIDE_VIEWS):
        inside = np.empty_like(crop_bgr)
        inside[:] = edge
        f = rng.uniform(0.45, 0.7)
        sw, sh = max(1, int(w * f)), max(1, int(h * f))
        x0, y0 = int(rng.uniform(0, w - sw)), int(rng.uniform(0, h - sh))
        inside[y0:y0 + sh, x0:x0 + sw] = cv2.resize(crop_bgr, (sw, sh), interpolation=cv2.INTER_AREA)
        insides.append(inside)
    table = np.clip(edge + rng.normal(0, 6, crop_bgr.shape), 0, 255).astype(np.uint8)
    return [cv2.resize(v, size, interpolation=cv2.INTER_AREA) for v in (middle, shifted, *insides, table)]


def ink_signature(crop_bgr: np.ndarray) -> np.ndarray:
    """(INK_DIM,) of unit length: what colours a card crop is printed in, as far as the light allows.
    The crop is shrunk; where its brightest pixels are nearly white (the card's paper or white
    print), each channel is scaled so that they are neutral grey, which undoes a lamp's colour cast (a
    warm lamp turns a red card orange); then a histogram of the hue of its coloured pixels, each
    weighted by saturation x value and spread over the neighbouring bins (a hue on a bin's edge),
    beside the share of the other pixels in each band of lightness (a dark-side card's black
    paper, a light-side card's white). Turned half round, a crop gives next to the same."""
    import cv2

    small = cv2.resize(crop_bgr, INK_SIZE, interpolation=cv2.INTER_AREA).astype(np.float32) / 255
    brightest = np.maximum(np.maximum(small[..., 0], small[..., 1]), small[..., 2]).ravel()
    # np.quantile's 95 % threshold exactly, for a uint8 crop (its linear interpolation falls just
    # above the (k-1)th value), at a third of the cost
    k = math.ceil(INK_WHITE_PATCH[0] * (len(brightest) - 1))
    light = small.reshape(-1, 3)[brightest >= np.partition(brightest, k)[k]].mean(axis=0)
    if 1 - light.min() / max(float(light.max()), 1e-6) < INK_WHITE_PATCH[1]:
        small = np.clip(small * (light.max() / np.maximum(light, 1e-3)), 0, 1)
    hsv = cv2.cvtColor(small, cv2.COLOR_BGR2HSV).reshape(-1, 3)
    hue, sat, val = hsv[:, 0], hsv[:, 1], hsv[:, 2]
    coloured = (sat > INK_COLOURED[0]) & (val > INK_COLOURED[1])
    bins = np.minimum((hue / 360 * INK_HUE_BINS).astype(int), INK_HUE_BINS - 1)
    hues = np.bincount(bins, weights=np.where(coloured, sat * val, 0.0), minlength=INK_HUE_BINS)
    hues = 0.5 * hues + 0.25 * (np.roll(hues, 1) + np.roll(hues, -1))
    hues /= max(float(hues.sum()), 1e-9)
    bands = np.minimum((val * INK_LIGHTNESS_BINS).astype(int), INK_LIGHTNESS_BINS - 1)
    lightness = np.bincount(bands, weights=(~coloured).astype(np.float64), minlength=INK_LIGHTNESS_BINS) / len(val)
    return _unit(np.concatenate([hues, lightness])).astype(np.float32)


def ink_signatures(crops_bgr) -> np.ndarray:
    """(N, INK_DIM): ink_signature of each crop."""
    return np.array([ink_signature(c) for c in crops_bgr], np.float32).reshape(-1, INK_DIM)


def picture_template(crop_bgr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A crop as the picture check compares it: grey PICTURE_SIZE, its detail (blurred a little,
    less its light: PICTURE_LIGHT_SIGMA), zero mean and unit
    length (so a dot product is the normalised correlation), and the unit hue histogram of its
    coloured pixels (PICTURE_HUE_BINS bins)."""
    import cv2

    grey = cv2.resize(cv2.cvtColor(crop_bgr, cv2.COLOR_BGR2GRAY), PICTURE_SIZE,
                      interpolation=cv2.INTER_AREA).astype(np.float32)
    grey = (cv2.GaussianBlur(grey, (0, 0), 1.0) - cv2.GaussianBlur(grey, (0, 0), PICTURE_LIGHT_SIGMA)).ravel()
    grey -= grey.mean()
    grey /= np.linalg.norm(grey) + 1e-6
    hsv = cv2.cvtColor(cv2.resize(crop_bgr, INK_SIZE, interpolation=cv2.INTER_AREA), cv2.COLOR_BGR2HSV)
    coloured = (hsv[..., 1] > 80) & (hsv[..., 2] > 60)
    hue = np.bincount(hsv[..., 0][coloured] // (180 // PICTURE_HUE_BINS), minlength=PICTURE_HUE_BINS)[:PICTURE_HUE_BINS]
    hue = hue.astype(np.float32)
    return grey, hue / (np.linalg.norm(hue) + 1e-6)


def picture_templates(crops_bgr) -> tuple[np.ndarray, np.ndarray]:
    """(N, PICTURE_DIM), (N, PICTURE_HUE_BINS): picture_template of each crop."""
    pairs = [picture_template(c) for c in crops_bgr]
    if not pairs:
        return np.zeros((0, PICTURE_DIM), np.float32), np.zeros((0, PICTURE_HUE_BINS), np.float32)
    return np.stack([g for g, _ in pairs]), np.stack([h for _, h in pairs])


def sample_views(crops_bgr, size: tuple[int, int], seed: int = 0) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(card views, none views) of one label's crops, at the look network's input `size`: each crop
    and the crop turned half round, each with its augmentations, N * 2 * (1 +
    augmentations_per_crop(N)) views; and their not-a-card views, N * 2 * (3 + INSIDE_VIEWS).
    Seeded: the same crops give the same views."""
    rng = np.random.default_rng(seed)
    copies = augmentations_per_crop(len(crops_bgr))
    cards, nones = [], []
    for crop in crops_bgr:
        for way in (crop, turned_half_round(crop)):
            cards += augment(way, rng, copies, size)
            nones += not_a_card_views(way, rng, size)
    return cards, nones


def augmentations_per_crop(crops: int) -> int:
    """Altered copies of each of a label's `crops` crops (and way up): AUGMENTED_VIEWS shared."""
    return max(4, -(-AUGMENTED_VIEWS // max(1, crops)))


def usable_cores() -> int:
    """CPUs this process may run on (its affinity, where the system tells it): calibrate's threads."""
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def calibrate(classifier: CardClassifier, deck: str, crops_by_label: dict[str, list[np.ndarray]],
              params: CalibrationParams | None = None, update: Profile | None = None,
              look: LookModel | None = None) -> Profile:
    """A profile from captured card crops (BGR, any size) per label, embedded by `look` (default:
    the look model beside the classifier's). With `update`, the labels given crops replace that
    profile's samples of those labels; the others are kept (a label given no crop is kept too), and
    so are its parameters unless every label it holds is given again."""
    crops_by_label = {label: crops for label, crops in crops_by_label.items() if len(crops)}
    unknown = sorted(set(crops_by_label) - set(classifier.labels))
    if unknown:
        raise ValueError(f"not {deck} labels: {', '.join(unknown)}")
    labels = tuple(classifier.labels)
    look = look or look_model_for(classifier, "calibration")
    if update is not None:
        update.check_matches(classifier, look, deck, "the profile to update")
        redone = np.array([labels.index(lab) for lab in crops_by_label])
        keep = ~np.isin(update.sample_labels, np.concatenate([redone, -1 - redone]))
        parts = [(update.embeddings[keep], update.sample_labels[keep])]
        inks = update.inks.copy()
        kept_pictures = ~np.isin(update.picture_labels, redone)
        pictures = [(update.pictures[kept_pictures], update.picture_hues[kept_pictures],
                     update.picture_labels[kept_pictures])]
        kept_templates = ~np.isin(update.template_labels, redone)
        templates = [(update.templates[kept_templates], update.template_inks[kept_templates],
                      update.template_labels[kept_templates])]
        counts = {lab: n for lab, n in update.counts.items() if lab not in crops_by_label}
        model_named = {lab: n for lab, n in update.model_named.items() if lab not in crops_by_label}
        # (a kept label of a profile that did not record them: 0, as the pictures it lacks are not checked)
        model_misnamed = {lab: (update.model_misnamed or {}).get(lab, 0) for lab in model_named}
        # Every label of the profile shown again is a new calibration: the deck's present
        # parameters (and its inks, a version 3 profile had none), not the ones it was made with.
        everything_again = set(update.counts) <= set(crops_by_label)
        params = params or (params_for(deck) if everything_again else update.params)
        template_params = TemplateParams() if everything_again else update.template_params
    else:
        parts, counts, model_named, model_misnamed, pictures, templates = [], {}, {}, {}, [], []
        inks = np.zeros((len(labels), INK_DIM), np.float32)
        template_params = TemplateParams()
    size = (look.width, look.height)

    def learn(item):
        label, crops = item
        index = labels.index(label)
        cards, nones = sample_views(crops, size, seed=index)
        both_ways = [view for crop in crops for view in (crop, turned_half_round(crop))]
        readings = classifier.classify_batch(both_ways)
        named = (sum(p.label == label for p in readings), sum(p.label not in (None, label) for p in readings))
        # The templates: each crop both ways up, its ink measured once (a turn does not change it).
        template_inks = np.repeat(np.stack([card_ink(crop) for crop in crops]), 2, axis=0)
        template = (np.stack([card_grey(view) for view in both_ways]), template_inks, np.full(len(both_ways), index))
        return ((look.embed(cards + nones), np.array([index] * len(cards) + [-1 - index] * len(nones))), named,
                _unit(ink_signatures(crops).mean(axis=0)), template)

    # The labels are learnt on every core at once: making the views and running the look network
    # over them (44 per label with one photo each) is all of calibration's compute, and OpenCV, numpy's large steps and
    # onnxruntime release the GIL (models/calibration.md, "Compute").
    with ThreadPoolExecutor(usable_cores()) as pool:
        learnt = list(pool.map(learn, crops_by_label.items()))
    for (label, crops), (part, named, ink, template) in zip(crops_by_label.items(), learnt):
        parts.append(part)
        templates.append(template)
        inks[labels.index(label)] = ink
        counts[label] = len(crops)
        model_named[label], model_misnamed[label] = named
    if not counts:
        raise ValueError("no card crops to calibrate with")
    order = {lab: i for i, lab in enumerate(labels)}
    if not pictures:    # (the pictures of version 5, kept from a profile updated only)
        pictures = [(np.zeros((0, PICTURE_DIM), np.float32), np.zeros((0, PICTURE_HUE_BINS), np.float32),
                     np.zeros(0, np.int64))]
    return Profile(deck=deck, model_sha256=classifier.identity, look_sha256=look.identity, labels=labels,
                   embeddings=np.concatenate([e for e, _ in parts]).astype(np.float32),
                   sample_labels=np.concatenate([s for _, s in parts]).astype(np.int64),
                   counts=dict(sorted(counts.items(), key=lambda kv: order[kv[0]])),
                   model_named=dict(sorted(model_named.items(), key=lambda kv: order[kv[0]])),
                   model_misnamed=dict(sorted(model_misnamed.items(), key=lambda kv: order[kv[0]])),
                   params=params or params_for(deck), inks=inks,
                   pictures=np.concatenate([p for p, _, _ in pictures]).astype(np.float32),
                   picture_hues=np.concatenate([h for _, h, _ in pictures]).astype(np.float32),
                   picture_labels=np.concatenate([i for _, _, i in pictures]).astype(np.int64),
                   templates=np.concatenate([t for t, _, _ in templates]).astype(np.uint8),
                   template_inks=np.concatenate([k for _, k, _ in templates]).astype(np.float32),
                   template_labels=np.concatenate([i for _, _, i in templates]).astype(np.int64),
                   template_params=template_params,
                   model_name=Path(classifier.name).name,
                   look_name=Path(look.name).name, created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


class CalibratedClassifier:
    """A CardClassifier read through a profile: same interface (labels, spec, probabilities,
    decide, classify, classify_batch), so the placement detector and the commands take either."""

    def __init__(self, base: CardClassifier, profile: Profile, deck: str, source: str = "profile",
                 look: LookModel | None = None, picture_check: bool = True):
        self.look = look or look_model_for(base, source)
        profile.check_matches(base, self.look, deck, source)
        self.base = base
        self.profile = profile
        self.spec = base.spec
        self.name = f"{base.name} + {source}"
        self.params = profile.params
        self._class_of_label = np.array([base.spec.classes.index(lab) for lab in profile.labels])
        self._model_weight = self.params.model_weight * profile.model_agreement
        present = np.unique(profile.sample_labels[profile.sample_labels >= 0])
        raw = profile.embeddings.astype(np.float64)
        # What the deck's cards share drops out: the mean over labels of each label's mean. One label
        # alone has nothing to share with: its own mean would leave only noise, so its none views
        # (parts of the card, the table) join it.
        groups = [raw[profile.sample_labels == i].mean(0) for i in present]
        if len(present) == 1 and (profile.sample_labels < 0).any():
            groups.append(raw[profile.sample_labels < 0].mean(0))
        self._center = np.mean(groups, axis=0)
        self.samples = self._normalised(raw)  # (M, D) centred, unit length
        self.sample_labels = profile.sample_labels
        # Each label's samples as one run of columns: a label's best cosine is one reduceat over it.
        # Kept transposed and contiguous, the cards' apart from the none views': a crop's cosines
        # are then two plain products (a third of the time of one product with the samples as
        # they are and its columns gathered after: 0.29 -> 0.05 ms for UNO Flip's 4,752 samples).
        grouped = np.argsort(profile.sample_labels, kind="stable")
        grouped = grouped[profile.sample_labels[grouped] >= 0]
        run_labels = profile.sample_labels[grouped]
        self._run_starts = np.flatnonzero(np.r_[True, run_labels[1:] != run_labels[:-1]]) if len(run_labels) else \
            np.zeros(0, int)
        self._run_labels = run_labels[self._run_starts]
        self._card_columns = np.ascontiguousarray(self.samples[grouped].T)
        self._none_columns = np.ascontiguousarray(self.samples[profile.sample_labels < 0].T)
        self._has_samples = np.isin(np.arange(len(profile.labels)), present)
        self._colour_cards = colour_cards(self.samples, self.sample_labels, profile.labels, deck)
        self._ink_cards = colour_means(profile.inks, self._has_samples, profile.labels, deck)
        self._colour_twins = colour_twins(base.spec.classes, deck)
        # A version 6 profile reads by its templates and the look network together
        # (template_probabilities); an older one by the look network, checked by its pictures
        # where it keeps them (module docstring). Without the check: the look network alone.
        self.templates = (TemplateReader(profile.templates, profile.template_inks, profile.template_labels,
                                         len(profile.labels))
                          if picture_check and profile.read_by_templates else None)
        self.picture_check = picture_check and self.templates is None and len(profile.picture_labels) > 0

    @property
    def labels(self) -> tuple[str, ...]:
        return self.base.labels

    def _normalised(self, embeddings: np.ndarray) -> np.ndarray:
        """Centred on the profile's mean card, unit length."""
        return _unit(embeddings.astype(np.float64) - self._center).astype(np.float32)

    def similarities(self, embeddings: np.ndarray, inks: np.ndarray | None = None) -> Similarities:
        """Per crop: for each label, the best cosine with that label's samples (-1: the label has
        no samples) and the cosine with the mean card of its colour (0: no samples); the best
        cosine with the "none" views (-1: none); with the crops' `inks` (ink_signatures), how near
        each is to each label's colour's ink less the nearest colour's (relative_ink: <= 0; 0
        without inks, for a label without samples and in a deck without colours)."""
        z = self._normalised(embeddings)
        nearest = np.full((len(z), len(self.profile.labels)), -1.0)
        if len(self._run_labels):
            nearest[:, self._run_labels] = np.maximum.reduceat(z @ self._card_columns, self._run_starts, axis=1)
        none = (z @ self._none_columns).max(axis=1) if self._none_columns.shape[1] else np.full(len(z), -1.0)
        ink = relative_ink(inks, self._ink_cards) if inks is not None else np.zeros_like(nearest)
        return Similarities(nearest, (z @ self._colour_cards.T).astype(np.float64), none, ink)

    def probabilities(self, crops_bgr) -> np.ndarray:
        classes = self.spec.classes
        if len(crops_bgr) == 0:
            return np.zeros((0, len(classes)), np.float32)
        if self.templates is not None:
            return self.template_probabilities(crops_bgr, *describe(self.base, self.look, crops_bgr))
        inks = ink_signatures(crops_bgr) if self.params.ink_weight else None
        logits, embeddings = describe(self.base, self.look, crops_bgr)
        probs = self.scores_to_probabilities(logits, embeddings, inks)
        if self.picture_check:
            probs = self.pictures_agree(probs, crops_bgr, logits)
        return probs

    def both_ways_probabilities(self, crops_bgr) -> np.ndarray:
        """(N, C): each crop's probabilities averaged with its half turn's (vision.reading reads a
        card both ways up), the templates' scores and the look network's embedding taken once per
        crop. The templates and the look network's samples are kept both ways up (sample_views), so
        a crop and its half turn score alike: the templates to float rounding, the look network's
        nearest samples nearly alike (within 3 % of a probability in tests/test_calibrate.py; the
        printed faces' tuning captures read exactly as with the turn embedded too, the held-out
        ones and the photos to a refusal: models/calibration.md). Scoring the turn again was a quarter of a calibrated
        card's reading, and embedding it a fifth (bench/vision_bench.py)."""
        crops = list(crops_bgr)
        both = crops + [turned_half_round(c) for c in crops]
        if self.templates is None or not crops:
            probs = self.probabilities(both)
        else:
            embeddings = self.look.embed(crops)
            scores = self.templates.scores(crops)
            probs = self.template_probabilities(both, self.base.logits(both), np.concatenate([embeddings, embeddings]),
                                                template_scores=np.concatenate([scores, scores]))
        return (probs[:len(crops)] + probs[len(crops):]) / 2.0

    def template_probabilities(self, crops_bgr, logits: np.ndarray, embeddings: np.ndarray,
                               template_scores: np.ndarray | None = None) -> np.ndarray:
        """The reading of a version 6 profile (TemplateParams): (N, C) probabilities, the labels
        shown sharing what is not "none" (how far the crop is no card of the deck). A crop the
        templates do not name is read for a label not shown as the trained model alone reads it,
        and only in a deck the model reads (Profile.model_reads_deck): where it names such a label,
        that label; where it leans to one without naming it, "not sure" leaning to it (a card a
        shown one looks like must not be named in its stead). (A crop the templates name is the
        user's own card: the model's leaning does not count against it. The photos' wild, read as
        UNO Flip's wild, is the model's `wild-draw-color`: "not sure" in all 8 readings otherwise.)
        And a crop the templates do not name, where the model is trusted (Profile.model_trusted)
        and names a card shown, is read as version 5 read it (below). (`template_scores`: the
        templates' scores of the crops, when already known.)"""
        p = self.profile.template_params
        has = self._has_samples
        if template_scores is None:
            template_scores = self.templates.scores(crops_bgr)
        scores = template_scores + p.look_weight * self.similarities(embeddings).nearest
        shown_scores = np.where(has, scores, -np.inf)       # (the labels shown only)
        shares = np.zeros((len(scores), len(self.spec.classes)))
        if has.any():
            z = shown_scores / p.temperature
            z = np.exp(z - z.max(axis=1, keepdims=True))
            shares[:, self._class_of_label] = z / z.sum(axis=1, keepdims=True)
        best = shown_scores.max(axis=1)
        card = 1.0 / (1.0 + np.exp(-np.clip((best - p.card_score) / p.card_softness, -50, 50)))
        probs = shares * card[:, None]
        probs[:, self.spec.none_index] = 1.0 - card
        decided = [self.decide(row).label for row in probs]
        unread = np.array([label is None for label in decided])
        # "No card" only where there is none: a crop the templates find no card of the walked deck
        # in, and the trained model sees a card in (it leans to one), is a card the walk did not
        # show, another deck or a printing the lamp changed: "not sure" (leaning as the model does),
        # so the table is asked to show it again and a run of them offers the walk. (Another
        # physical deck read through a profile was refused almost only as "no card" before.)
        leaning = logits.argmax(axis=1)     # the class the model leans to (its softmax's argmax)
        unseen = unread & (probs.argmax(axis=1) == self.spec.none_index) & (leaning != self.spec.none_index)
        if unseen.any():
            rows = np.flatnonzero(unseen)
            probs[rows] = 0.0
            probs[rows, leaning[rows]] = NOT_SURE_SHARE
        # The trained model's own reading counts only in a deck it reads or where it is trusted
        # (below); a trusted one is also asked of the cards the templates name.
        if not (self.profile.model_trusted or (unread.any() and self.profile.model_reads_deck)):
            return probs.astype(np.float32)
        named, _ = model_alone_classes(self.base, logits)
        if self.profile.model_trusted:
            self._tie_disagreements(probs, decided, named, self.base.probabilities_from_logits(logits).max(axis=1))
        if not unread.any():
            return probs.astype(np.float32)
        if not has.all() and self.profile.model_reads_deck:
            unshown = unread & np.isin(leaning, self._class_of_label[~has])
            probs[unshown] = 0.0
            rows = np.flatnonzero(unshown)
            probs[rows, leaning[rows]] = np.where(named[rows] == leaning[rows], 1.0, NOT_SURE_SHARE)
            unread &= ~unshown
        if self.profile.model_trusted:
            # A card the templates do not name and the trained model, which misnamed none of the
            # walk's crops, names itself: named where version 5 read it so too (the look network
            # and the model's vote, by their own reject rule). (A deck printed like the training
            # family, captured in a light the walk's was not: the printed Flip 7 game of
            # tests/test_real_game.py, whose templates named 4 of 43 held-out captures.)
            # So too where it only leans to a card that is the templates' likeliest, scored near
            # card_score: the user's own card in glare, or at an outline a little off, that neither
            # names (Flip 7's tuning captures after one look: 8 -> 5 refused, none misread).
            nearly = ((named < 0) & (leaning == self._class_of_label[shown_scores.argmax(axis=1)])
                      & (best >= p.card_score - LEANED_SLACK))
            named = np.where(nearly, leaning, named)
            rows = np.flatnonzero(unread & np.isin(named, self._class_of_label[has]))
            if len(rows):
                crops = [crops_bgr[i] for i in rows]
                inks = ink_signatures(crops) if self.params.ink_weight else None
                by_look = self.scores_to_probabilities(logits[rows], embeddings[rows], inks)
                look_named = [reject_rule(row, self.spec.classes, self.spec.none_index, self.params.min_confidence,
                                          self.params.min_margin).label for row in by_look]
                for row, label in zip(rows, look_named):
                    if label is not None and self.spec.classes.index(label) == named[row]:
                        probs[row] = 0.0
                        probs[row, named[row]] = 1.0
        return probs.astype(np.float32)

    def _tie_disagreements(self, probs: np.ndarray, decided: list, named: np.ndarray, sure: np.ndarray) -> None:
        """Where the templates name a card and the trained model, which misnamed none of the
        walk's crops (Profile.model_trusted), names another card by its own reject rule (`named`):
        the two tied in `probs` at half the templates' share, so the reject rule says "not sure".
        Two cards the templates find alike (a colour twin under a lamp that brings their inks
        together, Flip 7's +6 and +8) are told apart by a model that reads the deck. (The printed
        UNO Flip deck's pink 9, read as the purple 9 by its templates and as the pink 9 by the
        model; Flip 7's tuning captures after one look, a +6 read as +8 and a +8 as +6 by the
        templates, each named right by the model: 2 wrong of 233 accepted with colour twins alone,
        none with this.) Another symbol counts only where the model is sure of it (`sure`, its
        softmax's top, at least MODEL_SURE_OTHERWISE): on the classic UNO photos a trusted model
        names a yellow flip a yellow 6 at 0.70, and there the templates are right."""
        for row, label in enumerate(decided):
            if label is None or named[row] < 0:
                continue
            mine = self.spec.classes.index(label)
            if self._colour_twins[mine, named[row]] or (named[row] != mine and sure[row] >= MODEL_SURE_OTHERWISE):
                probs[row, mine] = probs[row, named[row]] = probs[row, mine] / 2

    def nearest_pictures(self, crops_bgr) -> np.ndarray:
        """(N,) class index of the label whose kept picture is nearest each crop (picture_template:
        normalised correlation of the grey pictures plus PICTURE_HUE_WEIGHT x the hues' cosine)."""
        grey, hues = picture_templates(crops_bgr)
        p = self.profile
        score = grey @ p.pictures.T + PICTURE_HUE_WEIGHT * (hues @ p.picture_hues.T)
        return self._class_of_label[p.picture_labels[score.argmax(axis=1)]]

    def pictures_agree(self, probs: np.ndarray, crops_bgr, logits: np.ndarray) -> np.ndarray:
        """`probs` where a crop's likeliest card is a label with pictures and the nearest picture
        is another label's: those two tied at the lesser of their shares, so the reject rule says
        "not sure" (the row no longer sums to 1: what this crop would name is taken away).
        Where the trained model's naming is evidence on this deck (Profile.model_trusted) and it
        names the same card by its own reject rule, that second opinion stands in for the pictures'."""
        probs = probs.copy()
        best = probs.argmax(axis=1)
        pictured = np.isin(best, self._class_of_label[np.unique(self.profile.picture_labels)])
        if pictured.any() and self.profile.model_trusted:
            named, _ = model_alone_classes(self.base, logits)
            pictured &= named != best
        if not pictured.any():
            return probs
        rows = np.flatnonzero(pictured)
        nearest = self.nearest_pictures([crops_bgr[i] for i in rows])
        for row, picture in zip(rows, nearest):
            if picture != best[row]:
                # Neither is named by this crop: both keep the lesser share. (A tie at their mean
                # would not do: the second look averages 14 crops of the card, and one crop the
                # pictures let through would carry a tie of all the others.)
                probs[row, best[row]] = probs[row, picture] = min(probs[row, best[row]], probs[row, picture])
        return probs

    def scores_to_probabilities(self, logits: np.ndarray, embeddings: np.ndarray,
                                inks: np.ndarray | None = None) -> np.ndarray:
        sims = self.similarities(embeddings, inks)
        named_alone = leaning_alone = None
        if not self._has_samples.all():
            named_alone, leaning_alone = model_alone_classes(self.base, logits)
        return reading_probabilities(self._model_weight * logits, sims.nearest, self._has_samples, sims.none,
                                     self._class_of_label, self.spec.none_index, self.params, named_alone,
                                     leaning_alone, colour=sims.colour, ink=sims.ink)

    def decide(self, probs: np.ndarray) -> Prediction:
        thresholds = self.profile.template_params if self.templates is not None else self.params
        return reject_rule(probs, self.spec.classes, self.spec.none_index,
                           thresholds.min_confidence, thresholds.min_margin)

    def classify(self, crop_bgr: np.ndarray) -> Prediction:
        return self.classify_batch([crop_bgr])[0]

    def classify_batch(self, crops_bgr) -> list[Prediction]:
        return [self.decide(p) for p in self.probabilities(crops_bgr)]


class Similarities(NamedTuple):
    """What CalibratedClassifier.similarities measures of N crops against a profile of L labels."""
    nearest: np.ndarray   # (N, L) best cosine with each label's samples, -1 where it has none
    colour: np.ndarray    # (N, L) cosine with the mean card of each label's colour, 0 where it has no samples
    none: np.ndarray      # (N,) best cosine with the "none" views, -1 where there are none
    ink: np.ndarray       # (N, L) ink nearness to each label's colour less the nearest colour's (<= 0), 0 where not measured


def colour_cards(samples: np.ndarray, sample_labels: np.ndarray, labels, deck: str) -> np.ndarray:
    """(L, D): for each label with samples, the mean card of its colour: the mean of the mean
    directions of every label of that colour with samples (colour_means), of unit length. Cards of
    one colour share their ink, so a dozen cards shown once each, in a dozen lights, say what that
    ink looks like far better than one card's sample does: a pink 5 close to the purple 5's sample
    is still nearer the pink cards than the purple ones. A label without a colour (a wild), or
    alone in its colour among the labels shown, has its own mean; a label without samples, zeros;
    every label of a deck without colours, zeros (colour_weight changes nothing there)."""
    means = np.zeros((len(labels), samples.shape[1]))
    present = np.unique(sample_labels[sample_labels >= 0])
    for i in present:
        means[i] = _unit(samples[sample_labels == i].astype(np.float64).mean(0))
    return colour_means(means, np.isin(np.arange(len(labels)), present), labels, deck).astype(np.float32)


def colour_twins(classes, deck: str) -> np.ndarray:
    """(C, C) bool: the two classes are one symbol in two colours (rules.cards.Deck.colours and
    Deck.symbol); all False in a deck without colours."""
    from rules.cards import DECKS

    cards = DECKS.get(deck)
    colours = cards.colours if cards else {}
    symbols = [cards.symbol(label) if label in colours else None for label in classes]
    return np.array([[a is not None and a == b and ca != cb for b, cb in zip(symbols, classes)]
                     for a, ca in zip(symbols, classes)])


def colour_means(vectors: np.ndarray, shown: np.ndarray, labels, deck: str) -> np.ndarray:
    """(L, D): every label `shown` (a mask) gets the unit mean of the vectors of its colour's labels
    shown (rules.cards.Deck.colours) whose vector was measured (not all zeros: an ink kept from a
    version 3 profile by an update enters no mean); a label without a colour (a wild) is a colour
    of its own. The other labels, and every label of a deck without colours, zeros. What
    colour_cards gives of the look embeddings, and the inks' colours (CalibratedClassifier)."""
    from rules.cards import DECKS

    colours = DECKS[deck].colours if deck in DECKS else {}
    out = np.zeros((len(labels), vectors.shape[1]))
    if not colours:
        return out
    groups: dict = {}
    for i in np.flatnonzero(shown):
        groups.setdefault(colours.get(labels[i], ("no colour", i)), []).append(i)
    for members in groups.values():
        measured = [i for i in members if vectors[i].any()]
        if measured:
            out[members] = _unit(vectors[measured].astype(np.float64).mean(0))
    return out


def relative_ink(crop_inks: np.ndarray, cards: np.ndarray) -> np.ndarray:
    """(N, L): each crop's ink (ink_signatures) against each label's colour's ink (colour_means), less
    the nearest colour's: 0 for the labels of the crop's nearest colour, below 0 for the others,
    0 for a label without an ink card. Only taking away keeps "none" on its scale."""
    inked = cards.any(axis=1)
    out = np.zeros((len(crop_inks), len(cards)))
    if inked.any():
        # Once per distinct colour card: a matrix product may round identical rows differently
        # (OpenBLAS's kernels at a block's edge; seen with numpy 2.4), and a colour's labels must
        # tie exactly, at 0 for the nearest colour.
        distinct, which = np.unique(cards[inked], axis=0, return_inverse=True)
        near = (crop_inks.astype(np.float64) @ distinct.T)[:, which.ravel()]
        out[:, inked] = near - near.max(axis=1, keepdims=True)
    return out


# The share a crop's reading leaves to the card the model leaned to when it is "not sure" of a
# label the profile has no sample of: far below any min_confidence, so the reject rule says "not
# sure" and names the leaning.
NOT_SURE_SHARE = 1e-6


def reading_probabilities(vote: np.ndarray, sims: np.ndarray, has_samples: np.ndarray, none: np.ndarray,
                          class_of_label: np.ndarray, none_index: int, params: CalibrationParams,
                          named_alone: np.ndarray | None = None,
                          leaning_alone: np.ndarray | None = None, colour: np.ndarray | None = None,
                          ink: np.ndarray | None = None) -> np.ndarray:
    """The reading's probabilities (N, C) (module docstring): `vote` the model's logits times its
    weight and agreement (N, C); `sims` (N, L) and `none` (N,) from CalibratedClassifier.similarities.
    A label without samples (`has_samples` False) scores the vote alone, and keeps its share only
    where the model alone names it (`named_alone`: the class it names per crop, -1 none): elsewhere
    the share is dropped, not handed to the others, so a crop most like it stays "not sure". Where
    the model alone leans to such a label without naming it (`leaning_alone`: its most likely
    class per crop), the profile cannot say the crop is not that card: the crop is "not sure",
    leaning to it (a card one sample looks like must not be named in its stead). `colour` (N, L):
    each label's similarity to the mean card of its colour, added params.colour_weight times (the
    "none" views' similarity is not: a crop like the deck's cards gains on "none" by its colour).
    `ink` (N, L): Similarities.ink, added params.ink_weight times (<= 0: a label whose colour's ink
    is not the nearest loses, the nearest colour's labels keep their similarity, so "none" keeps
    its scale)."""
    scores = vote.astype(np.float64)
    if colour is not None and params.colour_weight:
        sims = sims + params.colour_weight * colour
    if ink is not None and params.ink_weight:
        sims = sims + params.ink_weight * ink
    scores[:, class_of_label] += sims * has_samples / params.temperature
    scores[:, none_index] += np.maximum(params.none_similarity, none) / params.temperature
    scores -= scores.max(axis=1, keepdims=True)
    probs = np.exp(scores)
    probs /= probs.sum(axis=1, keepdims=True)
    if named_alone is not None and not has_samples.all():
        unsampled = class_of_label[~has_samples]
        probs[:, unsampled] *= unsampled[None, :] == named_alone[:, None]
        if leaning_alone is not None:
            unsure = np.isin(leaning_alone, unsampled) & (leaning_alone != named_alone)
            probs[unsure] = 0.0
            probs[unsure, leaning_alone[unsure]] = NOT_SURE_SHARE
    return probs.astype(np.float32)


def model_alone_classes(classifier: CardClassifier, logits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the class the trained model names by its own reject rule, -1 where it names none; the class
    it leans to) per crop: what a label without samples is read by (reading_probabilities)."""
    alone = classifier.probabilities_from_logits(logits)
    named = np.array([classifier.spec.classes.index(p.label) if p.label is not None else -1
                      for p in map(classifier.decide, alone)])
    return named, alone.argmax(axis=1)


def describe(classifier: CardClassifier, look: LookModel, crops_bgr) -> tuple[np.ndarray, np.ndarray]:
    """(the trained model's logits (N, C), look embeddings (N, D)): what a crop is read by."""
    return classifier.logits(crops_bgr), look.embed(crops_bgr)


def load_classifier(deck: str, models_dir=None, profile_path=None):
    """The deck's classifier, read through the calibration profile at profile_path when given.
    Raises vision.classifier.ModelError or ProfileError with a message for the user."""
    base = CardClassifier.load(deck, models_dir)
    if profile_path is None:
        return base
    return CalibratedClassifier(base, Profile.load(profile_path), deck, source=f"profile {profile_path}")


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-9)

