// Kernel, one thread: the motion paths' indirect dispatch (motion_paths.wgsl) from the total of
// their scan, as crates/rtcd_wgpu/src/kernels.rs `grid` lays out 64-wide workgroups.
#import rtcd::types::Params

@group(0) @binding(4) var<uniform> params: Params;
@group(0) @binding(31) var<storage, read> motion_scan: array<u32>;
@group(0) @binding(34) var<storage, read_write> motion_args: array<u32>;

@compute @workgroup_size(1)
fn main() {
    let groups = (motion_scan[params.pair_count] + 63u) / 64u;
    let x = min(groups, 65535u);
    motion_args[0] = x;
    motion_args[1] = select((groups + x - 1u) / max(x, 1u), 0u, groups == 0u);
    motion_args[2] = 1u;
}
