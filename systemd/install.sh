#!/usr/bin/env bash
# Install tablemate as a service on Raspberry Pi OS (Bookworm or later). Run as root from a clone:
#   sudo systemd/install.sh
# Creates the user `tablemate`, a venv in /opt/tablemate/venv that sees apt's packages (picamera2
# and its numpy come from apt: python3-picamera2), installs tablemate into it, writes the default
# config to /etc/tablemate/config.toml (kept if present), allows the service to power the Pi off
# (polkit), and enables and starts the service.
set -euo pipefail

SRC="$(cd "$(dirname "$0")/.." && pwd)"
PREFIX=/opt/tablemate
[ "$(id -u)" -eq 0 ] || { echo "run as root: sudo $0" >&2; exit 1; }

echo "== packages from apt (camera stack, I2C tools, polkit)"
apt-get install -y --no-install-recommends python3-venv python3-numpy python3-picamera2 python3-lgpio \
    i2c-tools fonts-dejavu-core polkitd

echo "== user tablemate in groups video, i2c, gpio"
for group in video i2c gpio; do getent group "$group" >/dev/null || groupadd --system "$group"; done
id tablemate >/dev/null 2>&1 || useradd --system --home-dir /var/lib/tablemate --no-create-home \
    --shell /usr/sbin/nologin --user-group tablemate
usermod -a -G video,i2c,gpio tablemate

echo "== venv in $PREFIX/venv (with system site packages, for picamera2)"
mkdir -p "$PREFIX"
[ -x "$PREFIX/venv/bin/python" ] || python3 -m venv --system-site-packages "$PREFIX/venv"
# picamera2 and simplejpeg from apt are built against apt's numpy: a newer numpy from pip breaks
# `import picamera2` ("numpy.dtype size changed"). Keep apt's numpy; with numpy 1.x (Bookworm) that
# also means an OpenCV wheel from before 4.12, which is the first to require numpy 2.
CONSTRAINTS="$PREFIX/constraints.txt"
NUMPY=$(/usr/bin/python3 -c 'import numpy; print(numpy.__version__)')
echo "numpy==$NUMPY" > "$CONSTRAINTS"
case "$NUMPY" in 1.*) echo "opencv-python-headless<4.12" >> "$CONSTRAINTS" ;; esac
"$PREFIX/venv/bin/pip" install --quiet --disable-pip-version-check --constraint "$CONSTRAINTS" "$SRC"

echo "== config /etc/tablemate/config.toml"
mkdir -p /etc/tablemate
[ -f /etc/tablemate/config.toml ] || "$PREFIX/venv/bin/python" -c \
    "from device.config import example_toml; print(example_toml())" > /etc/tablemate/config.toml

echo "== polkit: the service may power the Pi off (menu > Shut down)"
install -m 0644 "$SRC/systemd/50-tablemate-poweroff.rules" /etc/polkit-1/rules.d/50-tablemate-poweroff.rules

echo "== I2C and camera"
if command -v raspi-config >/dev/null; then raspi-config nonint do_i2c 0; fi

echo "== service"
install -m 0644 "$SRC/systemd/tablemate.service" /etc/systemd/system/tablemate.service
systemctl daemon-reload
systemctl enable --now tablemate.service
echo "done: journalctl -u tablemate -f   shows what it does"
