// Kernel, one thread per element of the scan input (entry count + 1): 1 where the entry is a contact
// or a prediction (kept for the next step and read back), else 0. The extra last element is 0, so the
// exclusive scan ends with the total.
#import rtcd::types::{EntryHit, OUTCOME_CONTACT, OUTCOME_PREDICTION, ScanParams}
#import rtcd::math::linear_index

@group(0) @binding(0) var<storage, read> entries: array<EntryHit>;
@group(0) @binding(1) var<storage, read_write> data: array<u32>;
@group(0) @binding(2) var<uniform> scan: ScanParams;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = linear_index(wg, nwg, li);
    // scan.n = entry count + 1
    if (i >= scan.n) {
        return;
    }
    var keep = 0u;
    if (i + 1u < scan.n) {
        let outcome = entries[i].kind & 3u;
        keep = select(0u, 1u, outcome == OUTCOME_CONTACT || outcome == OUTCOME_PREDICTION);
    }
    data[i] = keep;
}
