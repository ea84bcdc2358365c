"""Every worked example and ruling of the games (docs/flip7.md, docs/vengeance.md, docs/uno-flip.md)
as table scripts (tests/scenarios/GAME/*.txt).

A `#> {json}` line in a scenario states part of what `tablemate replay --json` must say after the
lines above it: dicts match on the keys given, lists element by element and in full length.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rules.script import parse_script, replay_script

SCENARIOS = sorted((Path(__file__).parent / "scenarios").glob("*/*.txt"))


def summary_of(text: str) -> dict:
    script = parse_script(text)
    assert script.config is not None, script.fatal
    result = replay_script(script)
    summary = result.match.summary()
    summary["errors"] = [e.to_json() for e in result.errors]
    return summary


def assert_subset(expected, actual, path="") -> None:
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{path}.{key} missing in {actual!r}"
            assert_subset(value, actual[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{path}: expected {expected!r}, got {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_subset(e, a, f"{path}[{i}]")
    elif isinstance(expected, float):
        assert actual == pytest.approx(expected, abs=1e-4), f"{path}: expected {expected}, got {actual}"
    else:
        assert expected == actual, f"{path}: expected {expected!r}, got {actual!r}"


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_scenario(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    checks = [i for i, line in enumerate(lines) if line.startswith("#>")]
    assert checks, "a scenario states what it expects"
    for i in checks:
        # lines after the check become blank so that line numbers stay the script's own
        prefix = "\n".join(lines[:i] + [""] * (len(lines) - i))
        assert_subset(json.loads(lines[i][2:]), summary_of(prefix), f"{path.name}:{i + 1}")
