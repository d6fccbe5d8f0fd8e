#!/usr/bin/env bash
# Saves a screenshot of the windowed falling-objects example (the avalanche with the ray overlay on and
# the diagnostics panel) as a PNG, under Xvfb, so it works on a machine without a display or a GPU
# (Mesa's llvmpipe renders it):
#   bash scripts/screenshot.sh [OUT.png] [more example flags, e.g. --count 128 --no-overlay]
# Default output: out/falling_objects.png. Every rendered frame runs exactly 4 fixed 60 Hz ticks
# (--ticks-per-frame 4: llvmpipe needs ~1.5 s per frame of the 512-body pile with the overlay), and
# the picture is taken at tick 240 (4 s after the drop), so it shows the same scene state on every
# machine. It takes about 2-3 minutes on a 2-core machine without a GPU.
# A relative OUT.png is relative to the repository root.
set -euo pipefail
out="out/falling_objects.png"
if [[ $# -gt 0 && "$1" != --* ]]; then out="$1"; shift; fi
source "$(dirname "$0")/env.sh"
mkdir -p "$(dirname "$out")"
cargo build --release --locked --example falling_objects
rm -f "$out"
xvfb-run -a -s "-screen 0 1280x720x24" target/release/examples/falling_objects --screenshot "$out" --ticks-per-frame 4 "$@"
[[ -s "$out" ]] || { echo "screenshot.sh: no screenshot was written to $out" >&2; exit 1; }
echo "screenshot.sh: wrote $out"
