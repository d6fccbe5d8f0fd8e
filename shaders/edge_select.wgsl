// Kernel, one thread per entry of the flattened ray list: chooses the step's edge rays. The edge rays'
// entries (a pair's entries after its vertex rays, pairs.wgsl entry_ref) are written as tracing
// nothing, and each edge to trace is appended to the step's edge jobs, which edge_step.wgsl traces
// (Mochi 2024 §3.4, rtcd::edges): the tracing threads are then dense, not scattered among the
// vertex rays' entries. The other entries pass. Mirror of edge_direction in
// crates/rtcd/src/detect/pair.rs:
// - a standard step tests each edge of the casting mesh whose box meets the candidate region (the two
//   meshes' boxes' overlap, grown by the pair's candidate extension, in the casting mesh's frame);
// - an iterative step tests the edges at the direction's prediction records (last step's vertex
//   records not in contact), each once: by the lower of its ends that is such a record, and then its
//   edge records that no such record reaches; an edge with an end in contact is left to that end's
//   vertex ray.
#import rtcd::types::{EntryHit, Slot, Record, EdgeJob, NONE, PAIR_STANDARD, RECORD_PREDICTION, OUTCOME_NONE, RAY_EDGE, COUNT_EDGE_RAYS, COUNTERS}
#import rtcd::math::{linear_index, inverse_q, inverse_t, Box, box_transformed}
#import rtcd::geometry::corner
#import rtcd::edge_geometry::{edge_of, vertex_edge_range, vertex_edge_list}
#import rtcd::pairs::{pairs, params, entry_ref, from_mesh}

@group(0) @binding(5) var<storage, read> slots: array<Slot>;
@group(0) @binding(6) var<storage, read> prev_records: array<Record>;
@group(0) @binding(7) var<storage, read_write> entries: array<EntryHit>;
@group(0) @binding(8) var<storage, read_write> counters: array<atomic<u32>, COUNTERS>;
// Last step's records' edges at prediction records (compact.wgsl), scanned at the start of the
// step (exclusive).
@group(0) @binding(22) var<storage, read> rec_edges: array<u32>;
@group(0) @binding(23) var<storage, read_write> jobs: array<EdgeJob>;

// The record of vertex v among `count` records from `first` (sorted by vertex), or NONE.
fn find_record(first: u32, count: u32, v: u32) -> u32 {
    var lo = first;
    var hi = first + count;
    while (lo < hi) {
        let mid = (lo + hi) / 2u;
        if (prev_records[mid].vertex < v) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    if (lo < first + count && prev_records[lo].vertex == v) {
        return lo;
    }
    return NONE;
}

fn is_prediction(r: u32) -> bool {
    return r != NONE && (prev_records[r].triangle & RECORD_PREDICTION) != 0u;
}

fn is_contact(r: u32) -> bool {
    return r != NONE && (prev_records[r].triangle & RECORD_PREDICTION) == 0u;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = linear_index(wg, nwg, li);
    if (i < params.entry_count) {
        let e = entry_ref(i);
        if (e.edge) {
            let pair = pairs[e.pair];
            let slot = slots[pair.step.slot];
            let dir = e.dir;
            let src = from_mesh(pair, dir);
            let rec_first = select(slot.rec_offset_b, slot.rec_offset_a, dir == 0u);
            let rec_count = select(slot.rec_count_b, slot.rec_count_a, dir == 0u);
            var k = NONE;
            var ends = vec2<u32>(0u);
            if ((pair.step.flags & PAIR_STANDARD) != 0u) {
                k = e.index;
                ends = edge_of(src, k);
                // rtcd::detect::candidate_region: the casting mesh's box and the other's brought into
                // its frame (the inverse of the pair's from-to pose), grown by the extension.
                var own = Box(pair.statics.box_a_min.xyz, pair.statics.box_a_max.xyz);
                var other = Box(pair.statics.box_b_min.xyz, pair.statics.box_b_max.xyz);
                var q = inverse_q(pair.frame.pose21_q);
                var t = inverse_t(pair.frame.pose21_q, pair.frame.pose21_t);
                if (dir == 1u) {
                    own = Box(pair.statics.box_b_min.xyz, pair.statics.box_b_max.xyz);
                    other = Box(pair.statics.box_a_min.xyz, pair.statics.box_a_max.xyz);
                    q = pair.frame.pose21_q;
                    t = pair.frame.pose21_t;
                }
                let c = box_transformed(other, q, t);
                let ext = vec3<f32>(pair.statics.candidate_extension);
                let lo = max(own.lo, c.lo) - ext;
                let hi = min(own.hi, c.hi) + ext;
                let pa = corner(src, ends.x);
                let pb = corner(src, ends.y);
                if (any(lo > hi) || !(all(min(pa, pb) <= hi) && all(max(pa, pb) >= lo))) {
                    k = NONE;
                }
            } else {
                let edge_first = select(slot.edge_offset_b, slot.edge_offset_a, dir == 0u);
                let edge_count = select(slot.edge_count_b, slot.edge_count_a, dir == 0u);
                let per_dir = select(pair.step.edges_b, pair.step.edges_a, dir == 0u);
                let from_records = per_dir - edge_count;
                let j = e.index;
                if (j < from_records) {
                    // The record whose edges hold j: the first whose running sum (inclusive, from the
                    // direction's first record) passes it.
                    let base = rec_edges[rec_first];
                    var lo = rec_first;
                    var hi = rec_first + rec_count - 1u;
                    while (lo < hi) {
                        let mid = (lo + hi) / 2u;
                        if (rec_edges[mid + 1u] - base > j) {
                            hi = mid;
                        } else {
                            lo = mid + 1u;
                        }
                    }
                    let v = prev_records[lo].vertex;
                    let start = rec_edges[lo] - base;
                    k = vertex_edge_list[vertex_edge_range(src, v).x + (j - start)];
                    ends = edge_of(src, k);
                    let u = select(ends.x, ends.y, ends.x == v);
                    // Tested from its lower prediction end.
                    if (u < v && is_prediction(find_record(rec_first, rec_count, u))) {
                        k = NONE;
                    }
                } else {
                    k = prev_records[edge_first + (j - from_records)].vertex;
                    ends = edge_of(src, k);
                    // Reached from a prediction record already.
                    if (is_prediction(find_record(rec_first, rec_count, ends.x))
                        || is_prediction(find_record(rec_first, rec_count, ends.y))) {
                        k = NONE;
                    }
                }
                if (k != NONE && (is_contact(find_record(rec_first, rec_count, ends.x))
                    || is_contact(find_record(rec_first, rec_count, ends.y)))) {
                    k = NONE;
                }
            }
            entries[i] = EntryHit(NONE, 0.0, OUTCOME_NONE | (RAY_EDGE << 2u) | (dir << 4u), k);
            if (k != NONE) {
                // At most one job per edge entry: the jobs buffer holds the step's edge entries.
                let j = atomicAdd(&counters[COUNT_EDGE_RAYS], 1u);
                // Beyond it only if the device's records disagreed with the host's plan, which the
                // host then reports (the laid-out count differs): nothing is written past the end.
                if (j < arrayLength(&jobs)) {
                    jobs[j] = EdgeJob(i, k, e.pair, dir);
                }
            }
        }
    }
}
