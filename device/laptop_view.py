"""What a laptop shows beside the OLED, fed from the frame loop: the table at a glance (every
player's row, round score, total and bust odds were the next card theirs, then the rounds so far
as `tablemate replay` prints them) and the camera preview (device/preview.py), in the laptop
window (--display window, --preview) and saved as pictures (--preview-dir). No Tk here: the
window only shows what it is handed, and nothing here waits for it.
"""

from __future__ import annotations

import logging
import time

from device.replay_cmd import format_scoreboard

log = logging.getLogger(__name__)

CAMERA_PANE_SECONDS = 0.2      # the window's camera pane is drawn at most 5 times a second


def table_text(match) -> str:
    """The view of `match` (rules.match.Match) now."""
    state = match.state
    summary = match.summary()
    status = summary["state"].get("status", {})
    rows = summary["state"].get("rows")
    hands = summary["state"].get("hands")
    turn = summary["state"].get("turn")
    lines = []
    width = max(len(name) for name in match.config.players)
    for name in match.config.players:
        mark = ">" if name == turn else " "
        cells = [f"{mark} {name:<{width}}", f"total {match.totals[name]:>4}"]
        if rows is not None:
            cells.append(f"round {state.round_score(name):>3}")
            odds = state.bust_odds(name) if status.get(name) == "active" else None
            cells.append(f"bust {odds:>4.0%}" if odds is not None else f"{status.get(name, ''):>9}")
            cells.append(" ".join(rows.get(name, [])))
        elif hands is not None:
            cells.append(f"holds {hands.get(name, 0):>2}")
        lines.append("  ".join(cells))
    return "\n".join(lines + ["", format_scoreboard(summary)])


class LaptopView:
    """`window`: a LaptopWindow (or None); `camera_pane`: show the preview in it; `saver`: a
    device.preview.PreviewSaver (or None)."""

    def __init__(self, window=None, camera_pane: bool = False, saver=None):
        from device.preview import Preview

        self.window = window
        self.camera_pane = camera_pane and window is not None
        self.saver = saver
        self.preview = Preview()
        self._table_version = None
        self._pane_at = float("-inf")

    def on_frame(self, frame, events, detector) -> None:
        """A frame the loop has read, the detector's events of it (Placement / Unsure)."""
        self.preview.note(events, frame.t)
        now = time.monotonic()
        to_pane = self.camera_pane and now - self._pane_at >= CAMERA_PANE_SECONDS
        to_save = self.saver is not None and self.saver.wants(frame.t, events)
        if not (to_pane or to_save):
            return
        image = self.preview.draw(frame, detector)
        if to_save:
            try:
                self.saver.save(image, frame.index, frame.t)
            except OSError as error:       # the game goes on; the pictures stop
                log.error("preview pictures stopped: %s", error)
                self.saver = None
        if to_pane:
            self._pane_at = now
            self.window.show_camera(image)

    def on_table(self, match) -> None:
        """The game now (each turn of the loop); the table pane is redrawn when it changed."""
        if self.window is None or self._table_version == (id(match), match.version):
            return
        self._table_version = (id(match), match.version)
        self.window.show_table(table_text(match))
