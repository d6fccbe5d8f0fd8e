#!/usr/bin/env bash
# Saves a screenshot of the windowed falling-objects example (the avalanche with the ray overlay on and
# the diagnostics panel) as a PNG, under Xvfb, so it works on a machine without a display or a GPU
# (Mesa's llvmpipe renders it):
#   bash scripts/screenshot.sh [OUT.png] [more example flags, e.g. --count 128 --no-overlay]
# Default output: out/falling_objects.png. Every rendered frame runs exactly 4 fixed 60 Hz ticks
# (--ticks-per-frame 4, so that a slow software renderer still gets through the fall in a few
# dozen frames), so the picture shows the same scene state on every machine: by default at tick 240
# (4 s after the drop), or at tick 4 × N with --frames N.
# The README's picture, small enough to keep in the repository, is made with
#   bash scripts/screenshot.sh docs/falling_objects.png --window 640x360 --frames 35
# (tick 140: the pile is landing, and many pairs are traced).
# A relative OUT.png is relative to the repository root.
set -euo pipefail
out="out/falling_objects.png"
if [[ $# -gt 0 && "$1" != --* ]]; then out="$1"; shift; fi
source "$(dirname "$0")/env.sh"
mkdir -p "$(dirname "$out")"
cargo build --release --locked --example falling_objects
rm -f "$out"
xvfb-run -a -s "-screen 0 1920x1080x24" target/release/examples/falling_objects --screenshot "$out" --ticks-per-frame 4 "$@"
[[ -s "$out" ]] || { echo "screenshot.sh: no screenshot was written to $out" >&2; exit 1; }
echo "screenshot.sh: wrote $out ($(stat -c %s "$out") bytes)"
