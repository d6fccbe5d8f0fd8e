#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this script). Installs what it needs first:
# Mesa's lavapipe software Vulkan driver (GPU tests run on it), Xvfb, and the Vulkan loader.
set -euo pipefail
source "$(dirname "$0")/env.sh"
cargo test --workspace --locked
