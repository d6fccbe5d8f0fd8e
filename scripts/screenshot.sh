#!/usr/bin/env bash
# Saves a screenshot of the windowed falling-objects example (the avalanche with the ray overlay on and
# the diagnostics panel) as a PNG, under Xvfb, so it works on a machine without a display or a GPU
# (Mesa's llvmpipe renders it):
#   bash scripts/screenshot.sh [OUT.png] [more example flags, e.g. --count 128 --frames 200]
# Default output: out/falling_objects.png. Every frame runs exactly one 60 Hz tick, so the picture
# is the same scene state on every machine (the pile some 4 s after the drop by default).
set -euo pipefail
cd "$(dirname "$0")/.."
out="out/falling_objects.png"
if [[ $# -gt 0 && "$1" != --* ]]; then out="$1"; shift; fi
command -v cargo >/dev/null || { echo "cargo not found: install Rust 1.95 (rustup) first" >&2; exit 1; }
bash scripts/install-deps.sh
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/xdg-runtime-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 0700 "$XDG_RUNTIME_DIR"
mkdir -p "$(dirname "$out")"
cargo build --release --locked --example falling_objects
rm -f "$out"
xvfb-run -a -s "-screen 0 1280x720x24" target/release/examples/falling_objects --screenshot "$out" "$@"
[[ -s "$out" ]] || { echo "screenshot.sh: no screenshot was written to $out" >&2; exit 1; }
echo "screenshot.sh: wrote $out"
