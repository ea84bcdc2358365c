"""The look network's training pairs (vision.training.look_data, no torch needed) and its runtime (vision.look)."""

import json
import shutil

import numpy as np
import pytest

from vision.classifier import ModelError
from vision.training.dataset import LOOK_INPUT_H as INPUT_H, LOOK_INPUT_W as INPUT_W
from vision.look import LookModel
from vision.training.look_data import (GENERIC, LABELS_PER_PRINTING, VIEWS, LookSamples, colour_twins, make_look_samples,
                              recolour)


def test_samples_are_pairs_of_upright_crops_the_same_with_any_number_of_workers():
    one = make_look_samples(3, seed=5)
    two = make_look_samples(3, seed=5, workers=2)
    assert one.x.shape == (3, LABELS_PER_PRINTING, VIEWS, INPUT_H, INPUT_W, 3) and one.x.dtype == np.uint8
    np.testing.assert_array_equal(one.x, two.x)
    np.testing.assert_array_equal(one.labels, two.labels)
    assert all(len(set(row)) == LABELS_PER_PRINTING for row in one.labels)  # distinct cards per printing
    # The two views of a card come from different scenes.
    assert all(np.abs(one.x[p, c, 0].astype(int) - one.x[p, c, 1]).mean() > 3 for p in range(3) for c in range(2))


def test_generic_printings_are_pairs_of_crops_too():
    one = make_look_samples(2, seed=5, kind="generic")
    assert one.x.shape == (2, LABELS_PER_PRINTING, VIEWS, INPUT_H, INPUT_W, 3) and one.x.dtype == np.uint8
    assert (one.decks == GENERIC).all() and all(len(set(row)) == LABELS_PER_PRINTING for row in one.labels)
    np.testing.assert_array_equal(one.x, make_look_samples(2, seed=5, kind="generic").x)
    with pytest.raises(ValueError, match="kind"):
        make_look_samples(1, seed=5, kind="foreign")


def test_samples_at_another_input_size_are_the_same_scenes_cut_larger(tmp_path, monkeypatch):
    """--input-size: the crops are cut at that size from the same scenes, and cached apart."""
    import cv2

    from vision.training import train_look

    small, large = make_look_samples(1, seed=5, size=(56, 80)), make_look_samples(1, seed=5, size=(84, 120))
    assert large.x.shape == (1, LABELS_PER_PRINTING, VIEWS, 120, 84, 3)
    np.testing.assert_array_equal(small.labels, large.labels)
    shrunk = cv2.resize(large.x[0, 0, 0], (56, 80), interpolation=cv2.INTER_AREA)
    assert np.abs(shrunk.astype(int) - small.x[0, 0, 0]).mean() < 6  # the same card in the same scene
    monkeypatch.setattr(train_look, "DATA_DIR", tmp_path)
    assert train_look.look_cache_path(3, 5, "generic", (84, 120)) != train_look.look_cache_path(3, 5, "generic", (56, 80))
    # caches named before sizes
    assert train_look.look_cache_path(3, 5, size=(56, 80)).name == f"look-p3-s5-v{train_look.LOOK_DATA_VERSION}.npz"


def uno_deals(pick, times: int = 50):
    """`times` UNO Flip printings' labels as `pick` (rng, labels, n) deals them, each checked to
    be LABELS_PER_PRINTING distinct labels."""
    from rules.cards import DECKS

    labels = DECKS["uno-flip"].labels
    rng = np.random.default_rng(3)
    for _ in range(times):
        picked = [labels[i] for i in pick(rng, labels, LABELS_PER_PRINTING)]
        assert len(picked) == LABELS_PER_PRINTING == len(set(picked))
        yield picked


def test_uno_printings_often_deal_colour_twins():
    """Cards only their colour tells apart (pink 5 / purple 5) are dealt together: hard negatives."""
    for picked in uno_deals(colour_twins):
        symbols = [lab.partition("-")[2] for lab in picked]
        assert max(map(symbols.count, symbols)) >= 2


def test_uno_numeral_printings_deal_numerals_of_one_colour_together():
    """An 8 and a 5 of one ink (what one poor UNO Flip photo confuses) are each other's negatives."""
    from vision.training.look_data import one_colour_numerals
    from vision.training.train_look import printings_of_each_kind

    for picked in uno_deals(one_colour_numerals):
        numerals = [lab.rpartition("-") for lab in picked if lab[-1].isdigit()]
        colours = [colour for colour, _, _ in numerals]
        assert max(map(colours.count, colours)) >= 4
    assert printings_of_each_kind(10, 0.4, 0.4) == {"family": 2, "generic": 4, "uno-numerals": 4}
    assert printings_of_each_kind(10, 0.5) == {"family": 5, "generic": 5, "uno-numerals": 0}


@pytest.mark.parametrize("deck", ["flip7", "flip7-vengeance"])
def test_flip7_printings_often_deal_look_alikes(deck):
    """Cards told apart by a small mark (13 / lucky-13, -4 / -6, 6 / 9) are dealt together."""
    from rules.cards import DECKS
    from vision.training.look_data import FAMILY_LOOK_ALIKES, look_alikes

    labels, groups = DECKS[deck].labels, FAMILY_LOOK_ALIKES[deck]
    assert all(lab in labels for group in groups for lab in group)
    rng = np.random.default_rng(3)
    for _ in range(50):
        picked = [labels[i] for i in look_alikes(rng, labels, groups, LABELS_PER_PRINTING)]
        assert len(picked) == LABELS_PER_PRINTING == len(set(picked))
        assert any(len(set(group) & set(picked)) >= 2 for group in groups)


def test_a_poor_capture_is_a_glare_or_a_blur_of_the_same_crop():
    from vision.training.train_look import poor_capture

    rng = np.random.default_rng(0)
    crop = rng.integers(0, 160, (INPUT_H, INPUT_W, 3), dtype=np.uint8)
    kinds = set()
    for _ in range(20):
        poor = poor_capture(crop, rng)
        assert poor.shape == crop.shape and poor.dtype == np.uint8
        brighter = (poor.astype(int) - crop).mean()
        kinds.add("glare" if brighter > 1 else "blur")
        if brighter > 1:  # a glare only adds light, and only over part of the card
            assert (poor >= crop).all() and (poor == crop).mean() > 0.2
        else:             # a blur keeps the light and loses the detail
            assert abs(brighter) < 1 and np.abs(np.diff(poor.astype(int), axis=1)).mean() < \
                np.abs(np.diff(crop.astype(int), axis=1)).mean()
    assert kinds == {"glare", "blur"}


def test_a_fine_tune_starts_from_the_exported_network_exactly():
    """--init: the exported model's weights (batch norms folded) give its very embeddings in torch."""
    torch = pytest.importorskip("torch")
    from pathlib import Path

    from vision.classifier import MODELS_DIR
    from vision.training.dataset import normalize
    from vision.training.train_look import build_look_model, load_exported_weights

    look = LookModel.load()
    sidecar = json.loads((MODELS_DIR / "card-look.json").read_text())
    model = build_look_model(width=sidecar["backbone"]["width_multiplier"], input_size=(look.width, look.height),
                             folded=True)
    exported = MODELS_DIR / "card-look-float.onnx"     # the float network the int8 one is quantised from
    load_exported_weights(model, Path(exported))
    crops = np.random.default_rng(1).integers(0, 255, (3, look.height, look.width, 3), dtype=np.uint8)
    with torch.no_grad():
        mine = model.eval()(torch.from_numpy(normalize(crops))).numpy()
    np.testing.assert_allclose(mine, float_embeddings(exported, crops), atol=1e-5)


def test_training_samples_mix_the_kinds_and_reuse_a_larger_cache(tmp_path, monkeypatch):
    from vision.training import train_look

    monkeypatch.setattr(train_look, "DATA_DIR", tmp_path)
    rng = np.random.default_rng(0)

    def fake(n, deck):
        return LookSamples(rng.integers(0, 255, (n, 1, 1, 2, 2, 3), dtype=np.uint8),
                           np.arange(n)[:, None], np.full(n, deck))

    big = fake(6, 0)
    np.savez(train_look.look_cache_path(6, 3, "family"), **big.__dict__)
    np.savez(train_look.look_cache_path(2, 3, "generic"), **fake(2, GENERIC).__dict__)
    mixed = train_look.training_samples(6, 1 / 3, seed=3)  # 4 family (the first 4 of 6) + 2 generic
    np.testing.assert_array_equal(mixed.x[:4], big.x[:4])
    assert list(mixed.decks) == [0, 0, 0, 0, GENERIC, GENERIC]


def test_a_smaller_cache_is_extended_with_the_same_printings_a_full_run_makes(tmp_path, monkeypatch):
    from vision.training import train_look

    monkeypatch.setattr(train_look, "DATA_DIR", tmp_path)
    train_look.cached_look_samples(2, 5, kind="generic")
    longer = train_look.cached_look_samples(3, 5, kind="generic")  # printing 2 made, 0 and 1 read
    whole = make_look_samples(3, seed=5, kind="generic")
    np.testing.assert_array_equal(longer.x, whole.x)
    np.testing.assert_array_equal(longer.labels, whole.labels)
    assert train_look.look_cache_path(3, 5, "generic").exists()
    np.testing.assert_array_equal(make_look_samples(3, seed=5, kind="generic", start=2).x, whole.x[2:])


def test_recolour_changes_the_colours_not_the_card_outline():
    rng = np.random.default_rng(1)
    face = np.zeros((60, 40, 4), np.uint8)
    face[..., :3] = (200, 40, 40)
    face[20:40, 10:30, :3] = 250
    face[..., 3] = 255
    face[0, 0, 3] = 0
    changed = 0
    for _ in range(10):
        out = recolour({"7": face}, rng)["7"]
        assert out.shape == face.shape and out.dtype == np.uint8
        np.testing.assert_array_equal(out[..., 3], face[..., 3])
        changed += np.abs(out[..., :3].astype(int) - face[..., :3]).mean() > 10
    assert changed >= 5


def test_committed_look_model_loads_and_embeds():
    look = LookModel.load()
    e = look.embed([np.full((176, 126, 3), 128, np.uint8), np.zeros((80, 56, 3), np.uint8)])
    assert e.shape == (2, look.dim) and np.allclose(np.linalg.norm(e, axis=1), 1, atol=1e-4)
    assert len(look.identity) == 64


def test_missing_or_broken_look_model_is_refused_with_a_message(tmp_path):
    with pytest.raises(ModelError, match="card-look.onnx not found"):
        LookModel.load(tmp_path)
    shutil.copy("models/card-look.onnx", tmp_path / "card-look.onnx")
    (tmp_path / "card-look.json").write_text(json.dumps({"input": {"width": 56}}))
    with pytest.raises(ModelError, match="not a usable look model sidecar"):
        LookModel.load(tmp_path)


def test_weights_stored_in_half_precision_read_back_as_float32(tmp_path):
    """vision.training.train_look.store_weights_half: half the file, the same outputs within float16's precision."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    from vision.training.train_look import store_weights_half

    rng = np.random.default_rng(0)
    w = rng.normal(0, 1, (64, 256)).astype(np.float32)
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256])],
                              [numpy_helper.from_array(w, "w")])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    x = rng.normal(0, 1, (1, 64)).astype(np.float32)
    before, size = ort.InferenceSession(str(path)).run(None, {"x": x})[0], path.stat().st_size
    store_weights_half(path)
    after = ort.InferenceSession(str(path)).run(None, {"x": x})[0]
    assert after.dtype == np.float32 and path.stat().st_size < 0.6 * size
    np.testing.assert_allclose(after, before, rtol=0, atol=0.05)  # 64 products of float16-rounded weights


def test_the_committed_float_look_model_keeps_its_weights_in_half_precision():
    import onnx
    from onnx import TensorProto

    model = onnx.load("models/card-look-float.onnx")
    halves = [t for t in model.graph.initializer if t.data_type == TensorProto.FLOAT16]
    assert halves and all(any(n.op_type == "Cast" and n.input[0] == t.name for n in model.graph.node) for t in halves)


def float_embeddings(path, crops) -> np.ndarray:
    """The embeddings of (N, H, W, 3) BGR crops by the float ONNX network at `path`."""
    import onnxruntime as ort

    from vision.training.dataset import normalize

    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"crop": normalize(crops)})[0]


def test_the_device_reads_the_int8_network_quantised_from_the_float_one_and_it_embeds_as_that_does():
    """The committed card-look.onnx is train_look.quantise_look's int8 network (its convolutions
    QLinearConv), and on rendered crops of printings neither saw it embeds as the float network
    beside it does: cosines near 1, the same card picked out of each printing's."""
    import onnx

    nodes = {n.op_type for n in onnx.load("models/card-look.onnx").graph.node}
    assert "QLinearConv" in nodes and "Conv" not in nodes
    look = LookModel.load()
    samples = make_look_samples(3, seed=4321).x                           # (P, L, 2, H, W, 3)
    crops = samples.reshape(-1, *samples.shape[3:])
    z_int8 = look.embed(list(crops))
    z_float = float_embeddings("models/card-look-float.onnx", crops)
    z_float /= np.linalg.norm(z_float, axis=1, keepdims=True)
    cosine = (z_int8 * z_float).sum(axis=1)
    assert np.percentile(cosine, 5) > 0.99 and cosine.min() > 0.97, np.sort(cosine)[:5]
    for z in (z_int8, z_float):
        views = z.reshape(*samples.shape[:3], -1)
        picked = np.einsum("pld,pmd->plm", views[:, :, 1], views[:, :, 0]).argmax(axis=2)
        assert (picked == np.arange(LABELS_PER_PRINTING)).mean() >= 0.9


def test_quantising_writes_an_int8_network_checked_against_its_float_one(tmp_path, monkeypatch):
    """quantise_look sets the int8 ranges on the first printings of each validation set, checks the
    result on the rest (cosines and one-shot accuracy, recorded for the sidecar), and refuses an
    int8 network too far from its float one."""
    pytest.importorskip("onnx")
    from pathlib import Path

    from vision.training import train_look

    monkeypatch.setattr(train_look, "QUANTISE_PRINTINGS", 2)
    val_sets = {"family": make_look_samples(3, seed=77).x, "generic": make_look_samples(3, seed=77, kind="generic").x}
    out = tmp_path / "card-look.onnx"
    figures = train_look.quantise_look(Path("models/card-look-float.onnx"), out, val_sets)
    assert figures["range_crops"] == 2 * 2 * LABELS_PER_PRINTING * VIEWS
    assert figures["cosine_with_float"]["crops"] == 2 * LABELS_PER_PRINTING * VIEWS
    assert figures["cosine_with_float"]["1st_percentile"] >= train_look.QUANTISED_MIN_COSINE
    assert set(figures["family_one_shot_accuracy"]) == {"float", "int8"}
    assert out.stat().st_size < 0.6 * Path("models/card-look-float.onnx").stat().st_size
    monkeypatch.setattr(train_look, "QUANTISED_MIN_COSINE", 1.01)
    with pytest.raises(RuntimeError, match="not close enough"):
        train_look.quantise_look(Path("models/card-look-float.onnx"), out, val_sets)


def test_a_stopped_run_resumed_makes_the_network_an_unbroken_run_makes(tmp_path, monkeypatch, capsys):
    """--resume: after each epoch the run keeps its state; stopped in the second epoch and started
    again with --resume, it ends with the very file a run that was never stopped writes. A
    checkpoint of another run, a damaged one or none is refused before any work."""
    pytest.importorskip("torch")
    from vision.training import train_look

    monkeypatch.setattr(train_look, "DATA_DIR", tmp_path / "data")
    (tmp_path / "data").mkdir()
    rng = np.random.default_rng(0)
    seed, size = 5, (56, 80)
    for n, s, kind in ((2, seed, "family"), (2, seed, "generic"), (2, seed + 1, "family"), (2, seed + 1, "generic")):
        samples = LookSamples(rng.integers(0, 255, (n, LABELS_PER_PRINTING, VIEWS, size[1], size[0], 3), dtype=np.uint8),
                              np.tile(np.arange(LABELS_PER_PRINTING), (n, 1)), np.zeros(n, int))
        np.savez(train_look.look_cache_path(n, s, kind, size), **samples.__dict__)
    run = ["--seed", str(seed), "--printings", "4", "--generic-share", "0.5", "--val-printings", "2", "--epochs", "3",
           "--batch-printings", "2", "--width", "0.5", "--input-size", *map(str, size), "--threads", "1"]

    assert train_look.main([*run, "--out", str(tmp_path / "unbroken")]) == 0
    unbroken = (tmp_path / "unbroken" / "card-look.onnx").read_bytes()
    assert not (tmp_path / "unbroken" / train_look.CHECKPOINT_NAME).exists()   # gone once the network is written

    validations = []
    real = train_look.one_shot_accuracy

    def stop_in_the_second_epoch(model, x):
        validations.append(1)
        if len(validations) == 3:            # epoch 2's validation: trained, not yet kept
            raise KeyboardInterrupt
        return real(model, x)
    monkeypatch.setattr(train_look, "one_shot_accuracy", stop_in_the_second_epoch)
    stopped = tmp_path / "stopped"
    with pytest.raises(KeyboardInterrupt):
        train_look.main([*run, "--out", str(stopped)])
    monkeypatch.setattr(train_look, "one_shot_accuracy", real)
    checkpoint = stopped / train_look.CHECKPOINT_NAME
    assert not (stopped / "card-look.onnx").exists() and checkpoint.is_file()

    # refused, naming why, before any work; the checkpoint stays for the right command
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / train_look.CHECKPOINT_NAME).write_bytes(checkpoint.read_bytes()[:1000])
    capsys.readouterr()
    for argv, out, why in (([*run, "--lr", "0.01"], stopped, "differs in lr (it has 0.003, this command 0.01)"),
                           ([*run, "--epochs", "4"], stopped, "differs in epochs"),
                           (run, tmp_path / "nowhere", "no checkpoint to resume"),
                           (run, damaged, "not a readable checkpoint")):
        with pytest.raises(SystemExit) as refused:
            train_look.main([*argv, "--out", str(out), "--resume"])
        assert refused.value.code == 2 and why in capsys.readouterr().err, why
    with pytest.raises(SystemExit) as refused:  # nor is a stopped run started again over its epochs
        train_look.main([*run, "--out", str(stopped)])
    assert refused.value.code == 2 and "add --resume" in capsys.readouterr().err
    assert checkpoint.is_file()

    assert train_look.main([*run, "--out", str(stopped), "--resume"]) == 0
    assert (stopped / "card-look.onnx").read_bytes() == unbroken
    assert not checkpoint.exists()
