"""vision.evaluation.evaluate's scoring of a deal video (the model tests are in tests/test_deck_models.py)."""

import numpy as np
import pytest


def test_event_matching_counts_missed_doubled_and_wrong():
    from vision.evaluation.evaluate import match_events
    from vision.placement import Placement
    from vision.synth.scenes import TrueEvent

    truth = [TrueEvent(10, "3"), TrueEvent(50, "7"), TrueEvent(90, "3"), TrueEvent(130, "x2")]
    quad = np.zeros((4, 2), np.float32)
    detected = [Placement("3", 0.99, quad, 14),                     # ok
                Placement("7", 0.99, quad, 55), Placement("7", 0.9, quad, 60),   # doubled
                Placement("5", 0.99, quad, 95)]                     # wrong; x2 missed
    r = match_events(truth, detected, fps=15)
    assert (r["missed"], r["doubled"], r["wrong"]) == (1, 1, 1)
    assert r["doubled_examples"] == ["frame 60: 7"] and r["missed_examples"] == ["frame 130: x2"]


@pytest.mark.parametrize("jobs", [1, 2])
def test_several_deal_videos_are_summed_with_each_ones_figures_kept(capsys, jobs):
    """`--video-only --video-seeds A B [--jobs 2]`: the event figures of both videos and their
    sum, the same whether the videos are read one after the other or side by side."""
    import json

    from vision.evaluation.evaluate import main

    assert main(["--deck", "flip7", "--video-only", "--placements", "3", "--video-seeds", "5", "6",
                 "--jobs", str(jobs)]) == 0
    video = json.loads(capsys.readouterr().out)["video"]
    per = video["per_video"]
    assert sorted(per) == ["5", "6"]
    for key in ("placements", "missed", "doubled", "wrong", "unsure"):
        assert video[key] == per["5"][key] + per["6"][key]
    assert video["placements"] == 6


def test_a_traced_deal_video_logs_the_detectors_decisions_beside_the_truth(capsys, caplog):
    """`--trace FIRST LAST`: over those frames, the cards lying, each true placement, the
    detector's own DEBUG lines, and each event with the true cards it overlaps and the IoUs; the
    figures are the untraced run's."""
    import json
    import logging

    from vision.evaluation.evaluate import deal_video, main

    video = deal_video("flip7", 5, 3)
    first = video.events[0].frame_index - 5
    caplog.set_level(logging.INFO)             # as the command's own logging: INFO and up
    caplog.handler.setLevel(logging.DEBUG)     # so that only the trace can let DEBUG lines through
    assert main(["--deck", "flip7", "--video-only", "--placements", "3", "--video-seeds", "5",
                 "--trace", str(first), str(len(video.frames) + 100)]) == 0      # past its end
    traced = json.loads(capsys.readouterr().out)["video"]
    lines = [r.getMessage() for r in caplog.records]
    assert any(line.startswith(f"trace frame {first}: lying") for line in lines)
    assert sum("(true placement)" in line for line in lines) == 3
    assert any(r.name == "vision.placement" and r.levelno == logging.DEBUG for r in caplog.records)
    events = [line for line in lines if ": event " in line]
    assert len(events) == traced["detected"] + traced["unsure"]
    assert all(float(line.split("overlaps (IoU): ", 1)[1].split(",")[0].split()[1]) > 0.8 for line in events)
    assert logging.getLogger("vision.placement").level == logging.NOTSET   # DEBUG only while tracing
    assert main(["--deck", "flip7", "--video-only", "--placements", "3", "--video-seeds", "5"]) == 0
    plain = json.loads(capsys.readouterr().out)["video"]
    assert {k: plain[k] for k in ("missed", "doubled", "wrong", "unsure")} == \
        {k: traced[k] for k in ("missed", "doubled", "wrong", "unsure")}


def test_a_deal_video_under_a_changing_light(capsys):
    """`--light KIND`: the same video with the light changing now and then; the report says so."""
    import json

    from vision.evaluation.evaluate import main
    from vision.synth.scenes import ChangingLight

    assert main(["--deck", "flip7", "--video-only", "--placements", "3", "--video-seeds", "5",
                 "--light", "shadow"]) == 0
    video = json.loads(capsys.readouterr().out)["video"]
    assert video["light"] == "shadow" and video["placements"] == 3
    light = ChangingLight([None] * 1500, "dim")
    assert [light.amount(i) for i in (0, 199, 200, 204, 208, 450, 458, 462, 466, 900, 904)] == \
        [0.0, 0.0, 0.0, 0.5, 1.0, 1.0, 1.0, 0.5, 0.0, 0.0, 0.5]


def test_trace_needs_one_video_and_a_range_of_frames(capsys):
    from vision.evaluation.evaluate import main

    with pytest.raises(SystemExit):
        main(["--deck", "flip7", "--video-only", "--video-seeds", "5", "6", "--trace", "0", "10"])
    assert "--trace needs --video-only and exactly one video seed" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--deck", "flip7", "--video-only", "--video-seeds", "5", "--trace", "10", "0"])
    assert "needs 0 <= FIRST <= LAST" in capsys.readouterr().err


def test_the_detectors_reading_is_reported_both_ways_up_and_with_its_second_look(capsys):
    """`--reading-only`: the placement detector's reading of the test crops, with and without
    the second look; the second look only ever turns a "not sure" into a named card."""
    import json

    from vision.evaluation.evaluate import main

    assert main(["--deck", "flip7", "--reading-only", "--test-samples", "40"]) == 0
    reading = json.loads(capsys.readouterr().out)["reading"]
    assert reading["crops"] == 40 and 0 < reading["cards"] <= 40
    first, second = reading["both_ways_up"], reading["with_second_look"]
    assert first["accepted_cards"] <= second["accepted_cards"] <= first["accepted_cards"] + reading["named_by_second_look"]
    assert reading["named_by_second_look"] <= reading["second_looks"]
    assert second["reject_rate"] <= first["reject_rate"]


def test_the_still_photos_alone_are_read_end_to_end(capsys):
    """`--scenes-only`: every card of the photos is counted once as right, wrong, rejected or
    not found."""
    import json

    from vision.evaluation.evaluate import main

    assert main(["--deck", "flip7", "--scenes-only", "--scenes", "4"]) == 0
    scenes = json.loads(capsys.readouterr().out)["scenes"]
    assert scenes["scenes"] == 4
    assert scenes["right"] + scenes["wrong"] + scenes["rejected"] + scenes["not_found"] == scenes["cards"]
