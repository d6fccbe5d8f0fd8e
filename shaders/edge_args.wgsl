// Kernel, one thread: the workgroups of the edge kernels (edge_step.wgsl) from the count of edge jobs
// edge_select.wgsl gathered, for their indirect dispatch: `lines` (2 threads a job), `checks` (5),
// `outcome` (1), 64-wide workgroups in a 2D grid within the per-dimension limit (kernels.rs grid).
#import rtcd::types::{EdgeJob, COUNT_EDGE_RAYS}

@group(0) @binding(8) var<storage, read_write> counters: array<atomic<u32>, 8>;
@group(0) @binding(23) var<storage, read> jobs: array<EdgeJob>;
@group(0) @binding(26) var<storage, read_write> args: array<u32>;

fn put_grid(at: u32, threads: u32) {
    let groups = (threads + 63u) / 64u;
    let x = min(groups, 65535u);
    args[at] = x;
    args[at + 1u] = select((groups + x - 1u) / max(x, 1u), 1u, x == 0u);
    args[at + 2u] = 1u;
}

@compute @workgroup_size(1)
fn main() {
    let n = min(atomicLoad(&counters[COUNT_EDGE_RAYS]), arrayLength(&jobs));
    put_grid(0u, 2u * n);
    put_grid(4u, 5u * n);
    put_grid(8u, n);
}
