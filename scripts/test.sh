#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this script). Installs what it needs first:
# Mesa's lavapipe software Vulkan driver (GPU tests run on it), Xvfb, and the Vulkan loader.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cargo >/dev/null || { echo "cargo not found: install Rust 1.95 (rustup) first" >&2; exit 1; }
bash scripts/install-deps.sh
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/xdg-runtime-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 0700 "$XDG_RUNTIME_DIR"
cargo test --workspace --locked
