"""The look network at run time: card crops -> unit-length embeddings that compare card faces.

`models/card-look.onnx` (trained by vision.training.train_look, one network for every deck, read as
its int8 quantisation: the float original, card-look-float.onnx, is for training only) maps a
canonical card crop to 128 values of unit length; two captures of the same face of one printing
have a high cosine, two different faces of that printing a low one. Calibration (vision.adapt)
stores the embeddings of the user's own cards in a profile and compares every later crop with
them. The sidecar `card-look.json` gives the input size and normalisation.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from vision.classifier import InputFormat, ModelError, network_files, onnx_session

LOOK_MODEL = "card-look"


class LookModel:
    def __init__(self, session, width: int, height: int, rgb: bool, mean, std, name: str, identity: str):
        self._session = session
        self._input = session.get_inputs()[0].name
        self.width, self.height, self.rgb = width, height, rgb
        self.input_format = InputFormat.of(width, height, rgb, mean, std)
        self.name = name
        self.identity = identity  # sha256 of the model file: a calibration profile is bound to it
        self.dim = int(session.get_outputs()[0].shape[-1])

    @classmethod
    def load(cls, models_dir: str | Path | None = None) -> "LookModel":
        model_path, sidecar_path, data = network_files(models_dir, LOOK_MODEL, "look model", "train it with `python -m vision.training.train_look`")
        try:
            inp, norm = data["input"], data["normalize"]
            width, height, rgb = int(inp["width"]), int(inp["height"]), inp.get("channel_order", "rgb") == "rgb"
            mean, std = np.asarray(norm["mean"], np.float32).reshape(3), np.asarray(norm["std"], np.float32).reshape(3)
            if np.any(std <= 0):
                raise ValueError("normalize.std must be positive")
        except (KeyError, TypeError, ValueError) as error:
            raise ModelError(f"{sidecar_path}: not a usable look model sidecar ({error})") from None
        identity = hashlib.sha256(model_path.read_bytes()).hexdigest()
        return cls(onnx_session(model_path), width, height, rgb, mean, std, str(model_path), identity)

    def embed(self, crops_bgr, batch: int = 256) -> np.ndarray:
        """(N, dim) float32 unit-length embeddings of BGR crops (any size)."""
        if len(crops_bgr) == 0:
            return np.zeros((0, self.dim), np.float32)
        out = []
        for i in range(0, len(crops_bgr), batch):
            x = self.input_format.batch(crops_bgr[i:i + batch])
            out.append(self._session.run(None, {self._input: x})[0])
        return np.concatenate(out).astype(np.float32)
