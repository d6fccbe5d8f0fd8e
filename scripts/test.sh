#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this script). Installs what it needs first:
# Mesa's lavapipe software Vulkan driver (GPU tests run on it), Xvfb, and the Vulkan loader.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cargo test --workspace --locked
# Scene benchmarks at --quick scale (~90 s on the 2-core machine, plus a release build): times printed, never asserted.
cargo run --release --locked -p rtcd_bench -- --quick
