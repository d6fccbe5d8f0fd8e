#!/usr/bin/env bash
# Installs what the tests and the example need on a fresh Debian bookworm machine: a C compiler
# and linker (Rust links through `cc`, and some build scripts compile C), Mesa 25 (lavapipe,
# Vulkan 1.4) from bookworm-backports, the Vulkan loader, Xvfb, and the X libraries that winit
# loads at run time for the windowed example (libXcursor, libXi, libX11-xcb).
# Idempotent: does nothing when everything is there already. Needs root (CI has it).
set -euo pipefail

need=()
have_mesa25() {
    local v
    v=$(dpkg-query -W -f='${Version}' mesa-vulkan-drivers 2>/dev/null || true)
    [[ -n "$v" ]] && dpkg --compare-versions "$v" ge 25 && [[ -f /usr/share/vulkan/icd.d/lvp_icd.x86_64.json || -n $(ls /usr/share/vulkan/icd.d/lvp_icd.*.json 2>/dev/null) ]]
}
have_mesa25 || need+=(mesa)
pkgs=(gcc libc6-dev libvulkan1 xvfb xauth pkg-config libudev-dev libxkbcommon-x11-0 libx11-dev libxcursor1 libxi6 libx11-xcb1)
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need+=("$p")
done
[[ ${#need[@]} -eq 0 ]] && exit 0

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
    # Never waits for a password; sudo's env_reset would drop DEBIAN_FRONTEND, so it goes through env.
    if command -v sudo >/dev/null; then SUDO="sudo -n env DEBIAN_FRONTEND=noninteractive"; else
        echo "install-deps: need root to install: ${need[*]}" >&2; exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive

# Mesa 25 comes from bookworm-backports. Where the apt sources have no entry for it, add one on the
# mirror the machine's own bookworm entry uses; this script names no package host itself.
# A commented-out entry does not count.
if ! grep -rqsE '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    mirror=$(grep -rhs -E '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/ \
        | grep -v security | grep -oE 'https?://[^ ]+/debian/?' | head -n1 || true)
    if [[ -z "$mirror" ]]; then
        echo "install-deps: no Debian mirror found in /etc/apt/sources.list{,.d/}." >&2
        echo "install-deps: add a 'bookworm-backports' entry (component main) for your Debian mirror to" >&2
        echo "install-deps: the apt sources, then run this again; it needs: ${need[*]}" >&2
        exit 1
    fi
    echo "install-deps: adding bookworm-backports from the machine's mirror $mirror"
    printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$mirror" | $SUDO tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq -t bookworm-backports mesa-vulkan-drivers libvulkan1
# The rest from bookworm itself (the loader came with Mesa above).
rest=()
for p in "${pkgs[@]}"; do [[ "$p" == libvulkan1 ]] || rest+=("$p"); done
$SUDO apt-get install -y -qq "${rest[@]}"
