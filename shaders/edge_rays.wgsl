// Kernel, one thread per edge ray of a list (EdgeTask): rtcd::edges::edge_crossing, the edge rays of
// Mochi 2024 §3.4 (GpuNarrowPhase::edge_crossings). Brute force, or the stackless BVH with the
// TRACER_BVH shader def.
#import rtcd::types::{EdgeTask, EdgeOut}
#import rtcd::math::linear_index
#import rtcd::edges::edge_crossing

@group(0) @binding(17) var<storage, read> tasks: array<EdgeTask>;
@group(0) @binding(18) var<storage, read_write> results: array<EdgeOut>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = linear_index(wg, nwg, li);
    if (i >= arrayLength(&tasks)) {
        return;
    }
    let task = tasks[i];
    results[i] = edge_crossing(task.from_mesh, task.to_mesh, task.q, task.t, task.a, task.b);
}
