"""The card classifier: an ONNX model plus its sidecar JSON, with a reject option.

The sidecar (models/<deck>.json) says how to feed the model (input size, channel order,
normalisation), which output class means "no card", and the reject thresholds tuned on held-out
data. A prediction is accepted only when a card class wins with enough probability and a
clear lead over the runner-up; otherwise it carries a reason, "no card" or "not sure", and no
label: the table is asked to show the card again rather than being given a guess.

onnxruntime runs with one intra-op thread, sequential execution and no spinning: the Pi's other
cores belong to the camera and the frame loop, and a spinning worker would burn a core while idle.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
NO_CARD = "no card"
NOT_SURE = "not sure"


class ModelError(RuntimeError):
    """The model or its sidecar is missing or unusable; the message says which file and why."""


@dataclass(frozen=True)
class Prediction:
    label: str | None          # None when rejected
    confidence: float          # probability of the winning class (a card class or "none")
    reason: str | None = None  # None when accepted, else NO_CARD or NOT_SURE
    # NOT_SURE only: the card the model leaned to. Never reported as a reading; the placement
    # detector uses it only to recognise a card it saw before when the model names it later.
    leaning: str | None = None


@dataclass(frozen=True)
class ModelSpec:
    classes: tuple[str, ...]
    none_index: int
    width: int
    height: int
    rgb: bool
    mean: np.ndarray       # (3,) in model channel order, for pixels scaled to 0..1
    std: np.ndarray
    min_confidence: float
    min_margin: float

    @classmethod
    def from_sidecar(cls, data: dict, path: Path) -> "ModelSpec":
        try:
            classes = tuple(str(c) for c in data["classes"])
            none_index = classes.index(data["none_class"])
            inp = data["input"]
            order = inp.get("channel_order", "rgb").lower()
            if order not in ("rgb", "bgr"):
                raise ValueError(f"channel_order {order!r} is neither rgb nor bgr")
            norm = data["normalize"]
            mean = np.asarray(norm["mean"], np.float32).reshape(3)
            std = np.asarray(norm["std"], np.float32).reshape(3)
            if np.any(std <= 0):
                raise ValueError("normalize.std must be positive")
            reject = data["reject"]
            return cls(classes, none_index, int(inp["width"]), int(inp["height"]), order == "rgb",
                       mean, std, float(reject["min_confidence"]), float(reject["min_margin"]))
        except (KeyError, TypeError, ValueError) as error:
            raise ModelError(f"{path}: sidecar is incomplete or malformed ({type(error).__name__}: {error})") from None


class CardClassifier:
    def __init__(self, session, spec: ModelSpec, name: str = "model", identity: str = ""):
        self._session = session
        self.spec = spec
        self.name = name
        self.identity = identity  # sha256 of the model file: a calibration profile is bound to it
        self._input = session.get_inputs()[0].name
        outputs = [o.name for o in session.get_outputs()]
        self._output = "logits" if "logits" in outputs else outputs[0]
        n_out = session.get_outputs()[outputs.index(self._output)].shape[-1]
        if isinstance(n_out, int) and n_out != len(spec.classes):
            raise ModelError(f"{name}: the model has {n_out} outputs but its sidecar lists "
                             f"{len(spec.classes)} classes")
        self.input_format = InputFormat.of(spec.width, spec.height, spec.rgb, spec.mean, spec.std)

    @property
    def labels(self) -> tuple[str, ...]:
        """The card labels (every class but "none"), in model order."""
        return tuple(c for i, c in enumerate(self.spec.classes) if i != self.spec.none_index)

    @classmethod
    def load(cls, deck: str, models_dir: str | Path | None = None) -> "CardClassifier":
        """Load models/<deck>.onnx and models/<deck>.json (or from models_dir)."""
        folder = Path(models_dir) if models_dir is not None else MODELS_DIR
        return cls.from_files(folder / f"{deck}.onnx", folder / f"{deck}.json")

    @classmethod
    def from_files(cls, model_path: str | Path, sidecar_path: str | Path) -> "CardClassifier":
        model_path, sidecar_path = Path(model_path), Path(sidecar_path)
        data = read_model_files(model_path, sidecar_path, "model", "train one with `make model`")
        spec = ModelSpec.from_sidecar(data, sidecar_path)
        identity = hashlib.sha256(model_path.read_bytes()).hexdigest()
        return cls(onnx_session(model_path), spec, name=str(model_path), identity=identity)

    def preprocess(self, crops_bgr) -> np.ndarray:
        """BGR uint8 crops (any size) -> float32 NCHW as the sidecar prescribes."""
        return self.input_format.batch(crops_bgr)

    def probabilities(self, crops_bgr) -> np.ndarray:
        """Softmax over the classes, (N, C), for BGR crops."""
        if len(crops_bgr) == 0:
            return np.zeros((0, len(self.spec.classes)), np.float32)
        return self.probabilities_from_logits(self.logits(crops_bgr))

    @staticmethod
    def probabilities_from_logits(logits: np.ndarray) -> np.ndarray:
        # In float32, in place: the largest logit is 0 after the shift, so nothing overflows.
        e = np.subtract(logits, logits.max(axis=1, keepdims=True), dtype=np.float32)
        np.exp(e, out=e)
        e /= e.sum(axis=1, keepdims=True)
        return e

    def logits(self, crops_bgr) -> np.ndarray:
        """Raw logits (N, C) for BGR crops."""
        return self.logits_of_input(self.preprocess(crops_bgr))

    def logits_of_input(self, batch: np.ndarray) -> np.ndarray:
        """Raw logits (N, C) for a batch already preprocessed (float32 NCHW)."""
        return self._session.run([self._output], {self._input: batch})[0]

    def decide(self, probs: np.ndarray) -> Prediction:
        """The reject rule applied to one probability vector (possibly averaged over frames)."""
        return reject_rule(probs, self.spec.classes, self.spec.none_index,
                           self.spec.min_confidence, self.spec.min_margin)

    def classify(self, crop_bgr: np.ndarray) -> Prediction:
        return self.classify_batch([crop_bgr])[0]

    def classify_batch(self, crops_bgr) -> list[Prediction]:
        return [self.decide(p) for p in self.probabilities(crops_bgr)]


def read_model_files(model_path: Path, sidecar_path: Path, what: str, how: str) -> dict:
    """The sidecar JSON object of a network's two files, both there; else ModelError saying which
    `what` file is missing (and `how` to make it) or why its sidecar cannot be read."""
    for path, kind in ((model_path, what), (sidecar_path, f"{what} sidecar")):
        if not path.is_file():
            raise ModelError(f"{kind} {path} not found ({how})")
    try:
        data = json.loads(sidecar_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelError(f"{sidecar_path}: cannot read the sidecar JSON ({error})") from None
    if not isinstance(data, dict):
        raise ModelError(f"{sidecar_path}: the sidecar must be a JSON object")
    return data


def network_files(models_dir: str | Path | None, stem: str, what: str, how: str) -> tuple[Path, Path, dict]:
    """(model path, sidecar path, sidecar JSON object) of `stem`.onnx and `stem`.json in
    models_dir (default: models/), checked as read_model_files checks them."""
    folder = Path(models_dir) if models_dir is not None else MODELS_DIR
    model_path, sidecar_path = folder / f"{stem}.onnx", folder / f"{stem}.json"
    return model_path, sidecar_path, read_model_files(model_path, sidecar_path, what, how)


def onnx_session(model_path: Path):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(str(model_path), sess_options=options,
                                    providers=["CPUExecutionProvider"])
    except Exception as error:  # onnxruntime raises its own exception types for a bad file
        raise ModelError(f"{model_path}: not a usable ONNX model ({str(error).splitlines()[0][:200]})") from None


@dataclass(frozen=True)
class InputFormat:
    """How crops are fed to a network: resized to width x height (area resize), channels in RGB
    order when rgb, each pixel value times `scale` plus `shift` (per channel)."""
    width: int
    height: int
    rgb: bool
    scale: np.ndarray   # (3,) float32, in the model's channel order
    shift: np.ndarray
    # With one scale for every channel (every committed sidecar), OpenCV's blob maker subtracts
    # the mean (in pixel units, in the output's channel order), scales, reorders and lays out the
    # batch in one pass (0.009 ms a crop against ~0.06 ms for the numpy steps, a throwaway timeit;
    # `bench/vision_bench.py` prints the whole preprocessing).
    blob_scale: float | None
    blob_mean: tuple[float, float, float]

    @classmethod
    def of(cls, width: int, height: int, rgb: bool, mean, std) -> "InputFormat":
        """For pixels scaled to 0..1 then standardised: (v / 255 - mean) / std."""
        mean, std = np.asarray(mean, np.float32).reshape(3), np.asarray(std, np.float32).reshape(3)
        scale = (1.0 / (255.0 * std)).astype(np.float32)
        shift = (-mean / std).astype(np.float32)
        uniform = bool(np.all(scale == scale[0]))
        return cls(int(width), int(height), bool(rgb), scale, shift, float(scale[0]) if uniform else None,
                   tuple(float(v) for v in -shift / scale))

    def sized(self, crop: np.ndarray) -> np.ndarray:
        """The crop at the network's input size (area resize; a crop already that size as it is)."""
        import cv2

        if crop is None or crop.ndim != 3 or crop.shape[2] != 3:
            raise ValueError("a crop must be a BGR colour image (H, W, 3)")
        if crop.shape[0] != self.height or crop.shape[1] != self.width:
            crop = cv2.resize(crop, (self.width, self.height), interpolation=cv2.INTER_AREA)
        return crop

    def batch(self, crops_bgr) -> np.ndarray:
        """BGR crops (any size; uint8, or float pictures) -> float32 N x 3 x height x width."""
        import cv2

        width, height = self.width, self.height
        sized = [self.sized(crop) for crop in crops_bgr]
        if not sized:
            return np.zeros((0, 3, height, width), np.float32)
        if any(crop.dtype != np.uint8 for crop in sized):  # a float picture (a test's, a synthetic one)
            sized = [crop.astype(np.float32) for crop in sized]
        if self.blob_scale is not None:
            return cv2.dnn.blobFromImages(sized, self.blob_scale, (width, height), self.blob_mean,
                                          swapRB=self.rgb, crop=False)
        batch = np.empty((len(sized), 3, height, width), np.float32)
        for i, crop in enumerate(sized):
            img = crop[:, :, ::-1] if self.rgb else crop
            batch[i] = (img.astype(np.float32) * self.scale + self.shift).transpose(2, 0, 1)
        return batch


def reject_rule(probs: np.ndarray, classes, none_index: int, min_confidence: float,
                min_margin: float) -> Prediction:
    """Name the most likely card only when it is not the "none" class and is both likely enough and
    clearly ahead of the runner-up; otherwise say "no card" or "not sure". Never a forced guess."""
    order = np.argsort(probs)[::-1]
    best, second = int(order[0]), int(order[1])
    confidence = float(probs[best])
    if not math.isfinite(confidence):
        return Prediction(None, 0.0, NOT_SURE)
    if best == none_index:
        return Prediction(None, confidence, NO_CARD)
    if confidence < min_confidence or confidence - float(probs[second]) < min_margin:
        return Prediction(None, confidence, NOT_SURE, classes[best])
    return Prediction(classes[best], confidence, None)
