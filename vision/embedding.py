"""Give a card classifier an `embedding` output: the features its final classification layer reads.

    python -m vision.embedding models/flip7.onnx [models/uno-flip.onnx ...]

Few-shot calibration (vision.adapt) compares a crop's embedding with the embeddings of the user's
own cards, so the model must expose them next to `logits`, from the same session run. The
embedding is the input of the last layer that produces `logits` (a Gemm or MatMul; for
vision.train's net, the globally average-pooled 128 features). Only an Identity node and a graph
output are added: the logits are unchanged, and running this again on a model that already has
the output leaves the file byte for byte as it was (idempotent).

Needs the `onnx` package (the train extra); the device only reads the result with onnxruntime.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

log = logging.getLogger(__name__)

EMBEDDING = "embedding"
LOGITS = "logits"


def add_embedding_output(model_path: str | Path) -> bool:
    """Add the `embedding` output to the ONNX model at model_path in place. Returns True when the
    file was changed, False when it already had the output. Raises ValueError when the graph has
    no `logits` produced by a linear layer."""
    import onnx
    from onnx import helper

    model_path = Path(model_path)
    model = onnx.load(str(model_path))
    graph = model.graph
    if any(o.name == EMBEDDING for o in graph.output):
        return False
    producer = next((n for n in graph.node if LOGITS in n.output), None)
    if producer is None or producer.op_type not in ("Gemm", "MatMul"):
        raise ValueError(f"{model_path}: `{LOGITS}` is not produced by a Gemm/MatMul layer "
                         f"({producer.op_type if producer else 'no producer'})")
    features = producer.input[0]
    weight = next((t for t in graph.initializer if t.name == producer.input[1]), None)
    if weight is None or len(weight.dims) != 2:
        raise ValueError(f"{model_path}: the final layer's weight is not a 2-D initializer")
    transposed = producer.op_type == "Gemm" and any(a.name == "transB" and a.i == 1 for a in producer.attribute)
    dim = int(weight.dims[1] if transposed else weight.dims[0])
    graph.node.append(helper.make_node("Identity", [features], [EMBEDDING], name="embedding_output"))
    batch = graph.output[0].type.tensor_type.shape.dim[0]
    out = helper.make_tensor_value_info(EMBEDDING, onnx.TensorProto.FLOAT, [batch.dim_param or batch.dim_value or "n", dim])
    graph.output.append(out)
    onnx.checker.check_model(model)
    onnx.save(model, str(model_path))
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vision.embedding", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="+", metavar="MODEL.onnx")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    status = 0
    for path in args.models:
        try:
            changed = add_embedding_output(path)
        except (OSError, ValueError) as error:
            log.error("%s", error)
            status = 1
            continue
        log.info("%s: %s", path, "embedding output added" if changed else "already has an embedding output")
    return status


if __name__ == "__main__":
    sys.exit(main())
