"""What a test of the device's entry points changes for the whole process, put back after it.

`tablemate` configures the root logger and the excepthook (device.logs) and `run` takes SIGTERM
(device.run): right for a service, but in a test process they would outlive the test, so the
next test's log lines went to a closed capture stream, and a worker of `make test` (pytest-xdist)
would ignore a CI's SIGTERM."""

import logging
import signal
import sys

import pytest


@pytest.fixture(autouse=True)
def _process_wide_state_restored():
    root = logging.getLogger()
    handlers, level = set(root.handlers), root.level
    excepthook = sys.excepthook
    sigterm = signal.getsignal(signal.SIGTERM)
    yield
    for handler in root.handlers[:]:  # pytest's own capture handlers come and go with each phase: theirs
        if handler not in handlers and not type(handler).__module__.startswith("_pytest"):
            root.removeHandler(handler)
    root.setLevel(level)
    sys.excepthook = excepthook
    signal.signal(signal.SIGTERM, sigterm)
