#!/usr/bin/env bash
# Builds what scripts/gpu_device_bench.sh runs on a GPU machine that has no network and no Rust
# toolchain, and lists what must be carried there:
#   bash scripts/pack_device_bench.sh [--out DIR] [--no-build]
#
# 1. Release builds (x86-64 Linux, this machine's glibc or older on the target): rtcd_bench and the
#    headless example, falling_objects (its --headless flag prints its figures, --backend picks the
#    GPU backend), in target/release (target/release/rtcd_bench, target/release/examples/).
# 2. The Vulkan loader and the GL vendor-neutral dispatch libraries the NVIDIA driver's Vulkan ICD
#    loads (libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2), as Debian packages
#    fetched with `apt-get download` (this machine's apt sources) and unpacked, not installed, into
#    target/release/vulkan/, beside the binaries: gpu_device_bench.sh puts that folder on
#    LD_LIBRARY_PATH. Where the download fails, the loader of this machine is copied instead.
# 3. A compact bundle, DIR (default target/device_bench): bin/ (the two binaries, without debug
#    information), vulkan/, assets/meshes/ (the scenes' meshes; gpu_device_bench.sh points the
#    example at them with RTCD_ASSETS_DIR) and gpu_device_bench.sh; and
#    DIR.tar.gz, the same packed (the example alone is over 80 MB unpacked).
#
# On the GPU machine, from a checkout of this repository or anywhere:
#   bash gpu_device_bench.sh --bin-dir DIR --out RESULTS        # the unpacked bundle
#   bash scripts/gpu_device_bench.sh --bundle DIR.tar.gz --out RESULTS
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
out="target/device_bench"
build=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --out) [[ $# -ge 2 ]] || { echo "pack_device_bench: --out needs a folder" >&2; exit 2; }; out="$2"; shift 2 ;;
        --no-build) build=0; shift ;;
        -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
        *) echo "pack_device_bench: unknown argument $1" >&2; exit 2 ;;
    esac
done
# The bundle folder is emptied first: only a folder under target/ is taken.
case "$out" in
    target/?*|"$root"/target/?*) ;;
    *) echo "pack_device_bench: --out must be a folder under target/ (it is emptied first)" >&2; exit 2 ;;
esac
[[ "$out" != *..* ]] || { echo "pack_device_bench: --out must not contain .." >&2; exit 2; }
[[ "$(uname -m)" == x86_64 ]] || { echo "pack_device_bench: builds here are $(uname -m), the GPU machines are x86_64" >&2; exit 1; }

rel=target/release
if [[ $build -eq 1 ]]; then
    command -v cargo >/dev/null || { echo "pack_device_bench: cargo not found" >&2; exit 1; }
    cargo build --release --locked -p rtcd_bench
    cargo build --release --locked --example falling_objects
fi
for b in "$rel/rtcd_bench" "$rel/examples/falling_objects"; do
    [[ -x "$b" ]] || { echo "pack_device_bench: $b is missing (run without --no-build)" >&2; exit 1; }
done

# The loader and the GL dispatch libraries, unpacked beside the binaries.
vk="$rel/vulkan"
pkgs=(libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
rm -rf "$vk" && mkdir -p "$vk/debs"
if (cd "$vk/debs" && apt-get download "${pkgs[@]}" >/dev/null 2>&1); then
    for d in "$vk"/debs/*.deb; do dpkg -x "$d" "$vk"; done
    echo "pack_device_bench: unpacked $(ls "$vk"/debs | tr '\n' ' ')into $vk"
else
    echo "pack_device_bench: apt-get download failed; copying this machine's libraries instead" >&2
    lib="$vk/usr/lib/x86_64-linux-gnu"
    mkdir -p "$lib"
    for so in libvulkan.so.1 libGLdispatch.so.0 libGLX.so.0 libEGL.so.1 libOpenGL.so.0 libGL.so.1 libGLESv2.so.2; do
        p=$(ldconfig -p | awk -v n="$so" '$1 == n && /x86-64/ {print $NF; exit}')
        if [[ -n "$p" ]]; then cp -L "$p" "$lib/$so"; else echo "pack_device_bench: no $so here" >&2; fi
    done
    [[ -f "$lib/libvulkan.so.1" ]] || { echo "pack_device_bench: no Vulkan loader to carry" >&2; exit 1; }
fi
rm -rf "$vk/debs"

# The compact bundle.
rm -rf "$out" && mkdir -p "$out/bin" "$out/assets"
strip -o "$out/bin/rtcd_bench" "$rel/rtcd_bench"
strip -o "$out/bin/falling_objects" "$rel/examples/falling_objects"
cp -a "$vk" "$out/vulkan"
cp -a assets/meshes "$out/assets/meshes"
cp scripts/gpu_device_bench.sh "$out/"
tar -C "$(dirname "$out")" -czf "$out.tar.gz" "$(basename "$out")"

echo
echo "pack_device_bench: carry ONE of these to the GPU machine:"
echo "  $out.tar.gz   ($(du -h "$out.tar.gz" | cut -f1)), unpacked there by gpu_device_bench.sh --bundle"
echo "  $out/         ($(du -sh "$out" | cut -f1)):"
(cd "$out" && find . \( -type f -o -type l \) ! -path './vulkan/usr/share/*' ! -path './assets/*' | sort | sed 's/^\.\//    /')
echo "    assets/meshes/ ($(ls "$out/assets/meshes" | wc -l) files), vulkan/usr/share/ (the packages' copyright files)"
echo "  or $rel/rtcd_bench, $rel/examples/falling_objects and $vk/ inside a checkout (the defaults"
echo "  of gpu_device_bench.sh; $(du -ch "$rel/rtcd_bench" "$rel/examples/falling_objects" "$vk" | tail -1 | cut -f1) with debug information)"
echo "then run: bash gpu_device_bench.sh --bundle device_bench.tar.gz --out RESULTS   (add --quick for a short run)"
