#!/usr/bin/env bash
# The main job: the falling-objects example (IRTCD's avalanche). Arguments go to the example, e.g.
#   bash scripts/falling_objects.sh --headless --steps 600
# Without --headless it opens a window (under Xvfb when there is no display).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cargo build --release --locked --example falling_objects
headless=0
for a in "$@"; do [[ "$a" == "--headless" ]] && headless=1; done
if [[ $headless -eq 0 && -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
    exec xvfb-run -a -s "-screen 0 1920x1080x24" target/release/examples/falling_objects "$@"
fi
exec target/release/examples/falling_objects "$@"
