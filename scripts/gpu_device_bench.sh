#!/usr/bin/env bash
# The GPU backend's figures on a machine with an NVIDIA GPU, from prebuilt release binaries: no
# network and no Rust toolchain needed (scripts/pack_device_bench.sh builds and packs them).
#   bash scripts/gpu_device_bench.sh [--bin-dir DIR | --bundle FILE.tar.gz] [--out DIR] [--quick]
#                                    [--gpu-steps N] [--variants LIST] [--allow-software] [--no-pipelined]
#                                    [--bench-timeout S] [--headless-timeout S]
#
#   --bin-dir DIR       the binaries: DIR/rtcd_bench or DIR/bin/rtcd_bench, and the headless example
#                       DIR/examples/falling_objects, DIR/falling_objects or DIR/bin/falling_objects;
#                       the Vulkan loader unpacked beside them in DIR/vulkan/ (default ./target/release)
#   --bundle FILE       pack_device_bench.sh's .tar.gz: unpacked into a temporary folder, used as DIR
#   --out DIR           where the figures go (default ./device_bench_out): bench.json (rtcd_bench
#                       --json), bench.log (its table), scene1/2 per-step host-cost CSVs, the
#                       headless runs' logs, summary.txt
#   --quick             rtcd_bench --quick (reduced scenes), the example with 64 bodies for 120 ticks
#                       (for a software adapter: checking this script without a GPU)
#   --gpu-steps N       passed to rtcd_bench (GPU rows on the first N steps only)
#   --variants LIST     passed to rtcd_bench (default iterative-bvh: the default variant and the
#                       iterative variants without predictions, edge or motion rays); the host-cost
#                       figures need only iterative-bvh/pred, about half the time
#   --allow-software    accept a software adapter (lavapipe, llvmpipe): without it a run on one is a
#                       fall-back to the CPU, and fails
#   --no-pipelined      skip the example's pipelined GPU run (render world)
#
# What it runs: rtcd_bench on scenes 1 and 2 with the GPU on (`--gpu on --json`), the default
# variant's GPU and CPU backends replayed side by side (the host-cost figures and their targets),
# the iterative variants' other rows, no comparison set-ups (under 8 minutes on 16 cores at full
# scale); then the headless falling-objects example with the CPU backend and the GPU backend,
# immediate and pipelined.
# Prints the adapter and the figures. Exits non-zero when a run fails or times out, or a GPU run fell
# back to the CPU: no adapter, a software adapter (unless allowed), a host-cost section missing, or
# the example reporting the CPU backend.
#
# Vulkan: the loader (libvulkan.so.1) and the GL dispatch libraries come from DIR/vulkan/ through
# LD_LIBRARY_PATH; the NVIDIA driver's ICD is named in VK_DRIVER_FILES and VK_ICD_FILENAMES when
# neither is set (nvidia_icd.json under /usr/local/nvidia/share/vulkan/icd.d, /usr/share/vulkan/icd.d
# or /etc/vulkan/icd.d), and the driver's own folder /usr/local/nvidia/lib64 joins LD_LIBRARY_PATH.
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin_dir="./target/release"
bundle=""
out="./device_bench_out"
quick=0
gpu_steps=""
variants="iterative-bvh"
allow_software=0
pipelined=1
bench_timeout=""
headless_timeout=""
die() { echo "gpu_device_bench: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
    case "$1" in
        --bin-dir) [[ $# -ge 2 ]] || die "$1 needs a value"; bin_dir="$2"; shift 2 ;;
        --bundle) [[ $# -ge 2 ]] || die "$1 needs a value"; bundle="$2"; shift 2 ;;
        --out) [[ $# -ge 2 ]] || die "$1 needs a value"; out="$2"; shift 2 ;;
        --quick) quick=1; shift ;;
        --gpu-steps) [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || die "$1 needs a number"; gpu_steps="$2"; shift 2 ;;
        --variants) [[ $# -ge 2 ]] || die "$1 needs a list"; variants="$2"; shift 2 ;;
        --allow-software) allow_software=1; shift ;;
        --no-pipelined) pipelined=0; shift ;;
        --bench-timeout) [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || die "$1 needs seconds"; bench_timeout="$2"; shift 2 ;;
        --headless-timeout) [[ $# -ge 2 && "$2" =~ ^[0-9]+$ ]] || die "$1 needs seconds"; headless_timeout="$2"; shift 2 ;;
        -h|--help) sed -n '2,36p' "$0"; exit 0 ;;
        *) die "unknown argument $1 (--help lists them)" ;;
    esac
done
# Full scale: rtcd_bench at most 4.5 min, each of the three headless runs at most 55 s: 435 s, with
# the unpacking and a killed run's 15 s grace under 8 minutes.
if [[ $quick -eq 1 ]]; then
    bench_timeout="${bench_timeout:-900}"; headless_timeout="${headless_timeout:-300}"
else
    bench_timeout="${bench_timeout:-270}"; headless_timeout="${headless_timeout:-55}"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [[ -n "$bundle" ]]; then
    [[ -f "$bundle" ]] || die "no bundle $bundle"
    tar -C "$work" -xzf "$bundle" || die "cannot unpack $bundle"
    bin_dir="$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n1)"
fi
[[ -d "$bin_dir" ]] || die "no folder $bin_dir (build one with scripts/pack_device_bench.sh)"
bin_dir="$(cd "$bin_dir" && pwd)"
first() { for f in "$@"; do [[ -e "$f" ]] && { echo "$f"; return 0; }; done; return 1; }
bench="$(first "$bin_dir/rtcd_bench" "$bin_dir/bin/rtcd_bench")" || die "no rtcd_bench in $bin_dir"
example="$(first "$bin_dir/examples/falling_objects" "$bin_dir/falling_objects" "$bin_dir/bin/falling_objects")" \
    || die "no falling_objects in $bin_dir"
assets="$(first "$bin_dir/assets/meshes" "$here/../assets/meshes" "./assets/meshes")" || die "no assets/meshes"
assets="$(cd "$assets" && pwd)"
mkdir -p "$out" || die "cannot create $out"
out="$(cd "$out" && pwd)"
summary="$out/summary.txt"
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
failures=()
fail() { failures+=("$*"); say "FAILED: $*"; }

# Vulkan.
for d in "$bin_dir/vulkan/usr/lib/x86_64-linux-gnu" "$bin_dir/vulkan/lib/x86_64-linux-gnu" \
    /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
    [[ -d "$d" ]] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
if [[ -z "${VK_DRIVER_FILES:-}${VK_ICD_FILENAMES:-}" ]]; then
    icd="$(first /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json \
        /etc/vulkan/icd.d/nvidia_icd.json /usr/local/share/vulkan/icd.d/nvidia_icd.json)"
    if [[ -n "$icd" ]]; then
        export VK_DRIVER_FILES="$icd" VK_ICD_FILENAMES="$icd"
    elif [[ $allow_software -eq 0 ]]; then
        say "warning: no nvidia_icd.json found; the Vulkan loader searches its default places"
    fi
fi
egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[[ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" && -f "$egl" ]] && export __EGL_VENDOR_LIBRARY_FILENAMES="$egl"
if [[ -z "${XDG_RUNTIME_DIR:-}" ]]; then
    export XDG_RUNTIME_DIR="$work/xdg" && mkdir -p "$XDG_RUNTIME_DIR" && chmod 0700 "$XDG_RUNTIME_DIR"
fi

say "== gpu_device_bench ($([[ $quick -eq 1 ]] && echo quick || echo full) scale), $(date -u +%Y-%m-%dT%H:%MZ)"
say "machine: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
if command -v nvidia-smi >/dev/null; then
    say "nvidia-smi: $(nvidia-smi -L 2>&1 | head -n1)"
fi
say "binaries: $bench, $example"
say "Vulkan: loader from ${LD_LIBRARY_PATH:-the system}; ICD ${VK_DRIVER_FILES:-${VK_ICD_FILENAMES:-(loader default)}}"

is_software() { grep -qiE 'llvmpipe|lavapipe|swiftshader|softpipe|\(Cpu,' <<<"$1"; }

# 1. rtcd_bench, scenes 1 and 2: the GPU backend beside the CPU backend.
args=(--gpu on --json --scene 1,2 --variants "$variants" --compare none --no-errors
    --measure-stride 20 --assets "$assets" --out "$work/rtcd_bench")
[[ $quick -eq 1 ]] && args+=(--quick)
[[ -n "$gpu_steps" ]] && args+=(--gpu-steps "$gpu_steps")
say ""
say "== rtcd_bench ${args[*]}  (at most ${bench_timeout} s)"
start=$SECONDS
timeout -k 15 "$bench_timeout" "$bench" "${args[@]}" >"$out/bench.json" 2>"$out/bench.log"
rc=$?
say "rtcd_bench: exit $rc after $((SECONDS - start)) s"
[[ $rc -eq 124 || $rc -eq 137 ]] && fail "rtcd_bench ran past ${bench_timeout} s, or was killed (exit $rc)"
[[ $rc -ne 0 && $rc -ne 124 && $rc -ne 137 ]] && { fail "rtcd_bench exited $rc"; tail -n 20 "$out/bench.log" | tee -a "$summary"; }
adapter="$(grep -o '"gpu":"[^"]*"' "$out/bench.json" | head -n1 | cut -d'"' -f4)"
say "rtcd_bench adapter: ${adapter:-none}"
if grep -q '"gpu_software":true' "$out/bench.json"; then
    [[ $allow_software -eq 1 ]] || fail "rtcd_bench ran on a software adapter ($adapter): a fall-back to the CPU"
elif ! grep -q '"gpu_software":false' "$out/bench.json"; then
    fail "rtcd_bench had no GPU adapter"
fi
sections="$(grep -o '"gpu_host_cost":{' "$out/bench.json" | wc -l)"
[[ "$sections" -eq 2 ]] || fail "rtcd_bench gave $sections host-cost sections of 2"
# The host-cost sections and the targets, from the table.
awk '/^GPU backend: host cost/ {on=1} on && /^$/ {on=0; print ""} on' "$out/bench.log" | tee -a "$summary"
say "targets:"
awk '/^targets:/ {on=1; next} on && /^$/ {on=0} on' "$out/bench.log" | tee -a "$summary"
for k in 1 2; do
    f="$(ls "$work"/rtcd_bench/scene${k}*_gpu_host_cost.csv 2>/dev/null | head -n1)"
    [[ -n "$f" ]] && cp "$f" "$out/"
done

# 2. The headless example with the GPU backend. It reads its meshes from the folder that
# RTCD_ASSETS_DIR names (rtcd_scenes::assets_dir), not from the checkout it was built in.
export RTCD_ASSETS_DIR="$assets"
ex_args=(--headless)
if [[ $quick -eq 1 ]]; then ex_args+=(--count 64 --steps 120); else ex_args+=(--count 512 --steps 600); fi
# The CPU backend first, on the same machine's cores: what the GPU runs are measured against.
modes=(cpu gpu)
[[ $pipelined -eq 1 ]] && modes+=(gpu-pipelined)
for mode in "${modes[@]}"; do
    log="$out/headless_${mode//-/_}.log"
    say ""
    say "== falling_objects ${ex_args[*]} --backend $mode  (at most ${headless_timeout} s)"
    start=$SECONDS
    timeout -k 15 "$headless_timeout" "$example" "${ex_args[@]}" --backend "$mode" >"$log" 2>&1
    rc=$?
    awk '/^== falling_objects:/ {on=1} on; /^wall time:/ {on=0}' "$log" | tee -a "$summary"
    grep -E '^(FAILED|note|pipelined):' "$log" | tee -a "$summary"
    say "falling_objects --backend $mode: exit $rc after $((SECONDS - start)) s"
    [[ $rc -eq 124 || $rc -eq 137 ]] && fail "falling_objects --backend $mode ran past ${headless_timeout} s, or was killed (exit $rc)"
    [[ $rc -ne 0 && $rc -ne 124 && $rc -ne 137 ]] && { fail "falling_objects --backend $mode exited $rc"; tail -n 15 "$log" | tee -a "$summary"; }
    backend="$(grep -m1 '^== falling_objects:' "$log" | sed 's/.*, backend //')"
    [[ "$mode" == cpu ]] && continue
    want="gpu immediate ("
    [[ "$mode" == gpu-pipelined ]] && want="gpu pipelined ("
    if [[ "$backend" != "$want"* ]]; then
        fail "falling_objects --backend $mode ran on '${backend:-nothing}': a fall-back to the CPU"
    elif is_software "$backend" && [[ $allow_software -eq 0 ]]; then
        fail "falling_objects --backend $mode ran on a software adapter ($backend)"
    fi
    if grep -qiE 'using the CPU backend|GPU backend cannot start' "$log"; then
        fail "falling_objects --backend $mode: the plugin reported a fall-back to the CPU"
    fi
done

say ""
if [[ ${#failures[@]} -gt 0 ]]; then
    say "gpu_device_bench: ${#failures[@]} failure(s):"
    for f in "${failures[@]}"; do say "  $f"; done
    say "figures in $out"
    exit 1
fi
say "gpu_device_bench: every run on the GPU (${adapter}); figures in $out"
