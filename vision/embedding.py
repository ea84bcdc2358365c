"""Give a card classifier an `embedding` output: the features its final classification layer reads.

    python -m vision.embedding models/flip7.onnx [models/uno-flip.onnx ...]

Few-shot calibration (vision.adapt) compares a crop's embedding with the embeddings of the user's
own cards, so the model must expose them next to `logits`, from the same session run. The
embedding is the last feature map, flattened, where the final layer reads it through global
average pooling (vision.train's net: 128 channels x 5 x 4 = 2560 values), else the input of the
last layer itself (a Gemm or MatMul). The map keeps *where* things are on the card (a word on
top or at the bottom, the underline of a 6), which the pooled 128 values lose: on foreign
printings (vision.foreign_eval) one-sample nearest-neighbour reading was 81 % with the map
against 72 % with the pooled features. Only a Flatten node and a graph output are added: the
logits are unchanged, and running this again on a model that already has the output leaves the
file byte for byte as it was (idempotent).

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
    import numpy as np
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
    producers = {o: n for n in graph.node for o in n.output}
    node = producers.get(features)
    if node is not None and node.op_type in ("Flatten", "Reshape"):
        node = producers.get(node.input[0])
    if node is not None and node.op_type == "GlobalAveragePool":
        features = node.input[0]  # the map before pooling
    inferred = onnx.shape_inference.infer_shapes(model)
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim]
              for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    dims = shapes.get(features, [])[1:]
    if not dims or not all(dims):
        raise ValueError(f"{model_path}: the size of the features {features!r} is not known")
    dim = int(np.prod(dims))
    graph.node.append(helper.make_node("Flatten", [features], [EMBEDDING], name="embedding_output", axis=1))
    batch = graph.output[0].type.tensor_type.shape.dim[0]
    graph.output.append(helper.make_tensor_value_info(EMBEDDING, onnx.TensorProto.FLOAT,
                                                      [batch.dim_param or batch.dim_value or "n", dim]))
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
