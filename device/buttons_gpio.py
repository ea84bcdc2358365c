"""Three push buttons to ground on GPIO pins (BCM numbers from the config), with the internal
pull-ups, through gpiozero. A press shorter than the hold time is a press, reported on release;
holding reports a hold as soon as the hold time is reached (so the user feels the menu open), and
its release reports nothing more.

gpiozero picks its pin factory (lgpio on a Pi 5 / Bookworm); tests set
`gpiozero.Device.pin_factory = MockFactory()` before constructing.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable

from device.buttons import ButtonPress, Buttons
from device.config import ButtonsConfig

log = logging.getLogger(__name__)


def gpio_missing() -> str | None:
    """Why this machine has no GPIO buttons (no GPIO chip: a laptop), or None. Asked before
    gpiozero is, which on a laptop warns four times and then fails."""
    return None if list(Path("/dev").glob("gpiochip*")) else "no GPIO here (/dev/gpiochip*)"


class GpioButtons(Buttons):
    name = "gpio"

    def __init__(self, config: ButtonsConfig):
        self.config = config
        self._buttons = []

    def start(self, post: Callable[[ButtonPress], None]) -> None:
        from gpiozero import Button
        from gpiozero.exc import GPIOZeroError

        pins = {"ok": self.config.ok_pin, "next": self.config.next_pin, "back": self.config.back_pin}
        try:
            for name, pin in pins.items():
                button = Button(pin, pull_up=True, bounce_time=self.config.bounce_seconds or None,
                                hold_time=self.config.hold_seconds)
                self._wire(button, name, post)
                self._buttons.append(button)
        except (GPIOZeroError, OSError) as error:
            self.close()
            raise OSError(f"GPIO buttons unavailable: {error}") from None
        log.info("buttons on GPIO %s", ", ".join(f"{n}={p}" for n, p in pins.items()))

    @staticmethod
    def _wire(button, name: str, post) -> None:
        held = [False]

        def on_press():
            held[0] = False

        def on_hold():
            held[0] = True
            post(ButtonPress(name, hold=True))

        def on_release():
            if not held[0]:
                post(ButtonPress(name))

        button.when_pressed = on_press
        button.when_held = on_hold
        button.when_released = on_release

    def close(self) -> None:
        for button in self._buttons:
            button.close()
        self._buttons.clear()
