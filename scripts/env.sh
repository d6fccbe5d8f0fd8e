# Sourced by the other scripts: the repository root as working directory, Rust present, system
# dependencies installed (scripts/install-deps.sh), and a private XDG_RUNTIME_DIR (silences a
# harmless warning of the Vulkan and windowing libraries).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# rustup's environment, where a non-login shell has not put ~/.cargo/bin on the PATH.
if ! command -v cargo >/dev/null && [[ -f "$HOME/.cargo/env" ]]; then
    # shellcheck source=/dev/null
    source "$HOME/.cargo/env"
fi
command -v cargo >/dev/null || { echo "cargo not found: install Rust 1.95 (rustup) first" >&2; exit 1; }
bash scripts/install-deps.sh
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/xdg-runtime-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 0700 "$XDG_RUNTIME_DIR"
