#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this script). Installs what it needs first:
# Mesa's lavapipe software Vulkan driver (GPU tests run on it), Xvfb, and the Vulkan loader.
set -euo pipefail
source "$(dirname "$0")/env.sh"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cargo test --workspace --locked 2>&1 | tee "$log"
# Scene benchmarks at --quick scale (~90 s on the 2-core machine, plus a release build): times
# printed, never asserted; run so the bench cannot rot.
cargo run --release --locked -p rtcd_bench -- --quick
# One closing line for the whole suite (cargo prints one per test binary).
passed=$(grep -oE 'test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | awk '{s+=$4} END {print s+0}')
failed=$(grep -oE '[0-9]+ failed' "$log" | awk '{s+=$1} END {print s+0}')
echo "tests: $passed passed, $failed failed"
