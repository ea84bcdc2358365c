"""A 128x64 SSD1306 or SH1106 OLED over I2C through luma.oled (bus and address from the config).

luma raises its own errors (luma.core.error.DeviceNotFoundError, DevicePermissionError, ...) when
/dev/i2c-N is missing or not allowed, and OSError when the bus fails mid-transfer; the first become
OSError here too, so that the display worker reports and retries both the same way.
"""

from __future__ import annotations

from pathlib import Path

from device.config import DisplayConfig
from device.display import HEIGHT, WIDTH, Display

# Contrast for brightness levels 1..4; OLEDs age faster at full contrast, so the default is 3.
CONTRAST = {1: 0x08, 2: 0x40, 3: 0x9F, 4: 0xFF}


def oled_missing(config: DisplayConfig) -> str | None:
    """Why this machine has no OLED to drive (no I2C bus: a laptop), or None."""
    bus = Path(f"/dev/i2c-{config.i2c_bus}")
    return None if bus.exists() else f"no OLED here ({bus})"


class OledDisplay(Display):
    def __init__(self, config: DisplayConfig):
        from luma.core.error import Error as LumaError
        from luma.core.interface.serial import i2c
        from luma.oled.device import sh1106, ssd1306

        driver = {"ssd1306": ssd1306, "sh1106": sh1106}[config.driver]
        self.name = f"{config.driver} on i2c-{config.i2c_bus} 0x{config.i2c_address:02X}"
        try:
            serial = i2c(port=config.i2c_bus, address=config.i2c_address)
            self._device = driver(serial, width=WIDTH, height=HEIGHT, rotate=config.rotate)
        except LumaError as error:
            raise OSError(f"{self.name}: {error}") from None
        self._device.persist = True  # keep the last screen (e.g. "shutting down") after exit

    def show(self, image, t: float) -> None:
        self._device.display(image)

    def set_brightness(self, level: int) -> None:
        self._device.contrast(CONTRAST[level])

    def close(self) -> None:
        self._device.cleanup()
