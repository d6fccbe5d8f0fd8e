#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this script). Installs what it needs first:
# Mesa's lavapipe software Vulkan driver (GPU tests run on it), Xvfb, and the Vulkan loader.
# Then: formatting, the tests, clippy and rustdoc with warnings denied, a minimal headless app
# built with only the Bevy features the plugin asks for, and the scene benchmarks at a small scale.
set -euo pipefail
source "$(dirname "$0")/env.sh"
log=$(mktemp)
# Each step's limit, well past what it takes on 2 cores (the whole script: about 25 minutes from a
# cold build), so that a hang (a GPU driver's, say) ends with a message naming the step inside CI's
# 90 minutes instead of using them up.
limit() {
    local minutes=$1; shift
    timeout -k 30 "$((minutes * 60))" "$@" || {
        local rc=$?
        [[ $rc -eq 124 || $rc -eq 137 ]] && echo "test.sh: '$*' ran past ${minutes} minutes" >&2
        return "$rc"
    }
}
trap 'rm -f "$log"' EXIT

echo "== cargo fmt --check"
cargo fmt --all --check

# Every test binary runs (--no-fail-fast), so a failure in one does not hide the others'; the
# suite's status is kept and returned after the closing line below.
echo "== cargo test"
set +e
limit 60 cargo test --workspace --locked --no-fail-fast 2>&1 | tee "$log"
test_rc=${PIPESTATUS[0]}
set -e
# One closing line for the whole suite (cargo prints one per test binary).
summary() {
    local passed failed
    passed=$(grep -oE '^test result: [a-zA-Z]+\. [0-9]+ passed' "$log" | awk '{s+=$4} END {print s+0}')
    failed=$(grep -oE '^test result: [a-zA-Z]+\. [0-9]+ passed; [0-9]+ failed' "$log" | awk '{s+=$6} END {print s+0}')
    echo "tests: $passed passed, $failed failed"
}
if [[ $test_rc -ne 0 ]]; then
    summary
    echo "cargo test failed (exit $test_rc)" >&2
    exit "$test_rc"
fi

echo "== cargo clippy (warnings denied)"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== cargo doc (warnings denied)"
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --locked

# A user's headless app: bevy_rtcd without default features, Bevy with only what the plugin
# enables. Its dependency tree must hold no windowing, PBR, UI, text or image-format crate; it
# must build and its torus must come to rest.
echo "== minimal headless app"
tree=$(cargo tree --locked -p rtcd_headless_app -e normal --prefix none --format '{p}')
unwanted=$(grep -E '^(winit|bevy_winit|bevy_pbr|bevy_ui|bevy_text|bevy_gizmos|png|ktx2|x11-dl|accesskit_winit) ' <<<"$tree" | sort -u || true)
if [[ -n "$unwanted" ]]; then
    echo "the plugin brings crates a headless app did not ask for:" >&2
    echo "$unwanted" >&2
    exit 1
fi
limit 20 cargo run --locked -p rtcd_headless_app

# The three scene benchmarks at --quick scale: times and targets printed, never asserted; run so the
# bench cannot rot.
echo "== rtcd_bench --quick"
limit 20 cargo run --release --locked -p rtcd_bench -- --quick --scene 1,2,3

summary
