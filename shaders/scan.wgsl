// Exclusive prefix sum over u32 (the compaction's offsets), in blocks of 1024 (256 threads × 4):
// `scan_blocks` scans each block in place and writes its total to block_sums; the host scans
// block_sums the same way (recursively) and `add_block_sums` adds each block's offset back.
#import rtcd::types::ScanParams

const THREADS: u32 = 256u;
const PER_THREAD: u32 = 4u;
const BLOCK: u32 = 1024u;

@group(0) @binding(0) var<storage, read_write> data: array<u32>;
@group(0) @binding(1) var<storage, read_write> block_sums: array<u32>;
@group(0) @binding(2) var<uniform> scan: ScanParams;

var<workgroup> sums: array<u32, 256>;

@compute @workgroup_size(256)
fn scan_blocks(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let base = wg.x * BLOCK + li * PER_THREAD;
    var v: array<u32, 4>;
    var total = 0u;
    for (var k = 0u; k < PER_THREAD; k++) {
        let idx = base + k;
        var x = 0u;
        if (idx < scan.n) {
            x = data[idx];
        }
        v[k] = total;
        total += x;
    }
    sums[li] = total;
    workgroupBarrier();
    // Hillis-Steele inclusive scan of the 256 thread totals.
    for (var offset = 1u; offset < THREADS; offset = offset * 2u) {
        var add = 0u;
        if (li >= offset) {
            add = sums[li - offset];
        }
        workgroupBarrier();
        sums[li] += add;
        workgroupBarrier();
    }
    let before = sums[li] - total;
    for (var k = 0u; k < PER_THREAD; k++) {
        let idx = base + k;
        if (idx < scan.n) {
            data[idx] = before + v[k];
        }
    }
    if (li == THREADS - 1u) {
        block_sums[wg.x] = sums[li];
    }
}

@compute @workgroup_size(256)
fn add_block_sums(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let add = block_sums[wg.x];
    let base = wg.x * BLOCK + li * PER_THREAD;
    for (var k = 0u; k < PER_THREAD; k++) {
        let idx = base + k;
        if (idx < scan.n) {
            data[idx] += add;
        }
    }
}
