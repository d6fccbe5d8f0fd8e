// Kernel, one thread per entry of the flattened ray list of the pairs traced iteratively this step:
// one record of last step (a vertex in contact, or a prediction) walks the hit mesh's adjacency from
// its triangle (IRTCD 2013 Alg. 1 with the 2014 prediction lines), then Hermann validity and
// prediction culling; against a box, the exact contact of one of its faces instead of a walk. Mirror of
// iterative_direction in crates/rtcd/src/detect/pair.rs.
#import rtcd::types::{EntryHit, Slot, Record, NONE, PAIR_STANDARD, RECORD_PREDICTION, OUTCOME_CONTACT, OUTCOME_PREDICTION, OUTCOME_REJECTED, RAY_ITERATIVE, RAY_PREDICTIVE, COUNT_ITERATIVE_RAYS, COUNT_PREDICTIVE_RAYS, COUNT_ITERATIVE_HITS, COUNT_WALK_STEPS, COUNTERS}
#import rtcd::math::{quat_rotate, transform_point, linear_index}
#import rtcd::geometry::{vertex_of, triangle_of}
#import rtcd::pairs::{pairs, params, entry_ref, from_mesh, to_mesh, from_to_q, from_to_t, reach_flags}
#import rtcd::walk::{walk, WALK_HIT, WALK_BEHIND}
#import rtcd::hermann::{contact_valid, prediction_valid, ray_limit}
#import rtcd::cuboid::{box_half_extents, box_vertex_face, box_outcome}

@group(0) @binding(5) var<storage, read> slots: array<Slot>;
@group(0) @binding(6) var<storage, read> prev_records: array<Record>;
@group(0) @binding(7) var<storage, read_write> entries: array<EntryHit>;
@group(0) @binding(8) var<storage, read_write> counters: array<atomic<u32>, COUNTERS>;

var<workgroup> wg_iterative: atomic<u32>;
var<workgroup> wg_predictive: atomic<u32>;
var<workgroup> wg_hits: atomic<u32>;
var<workgroup> wg_steps: atomic<u32>;

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    if (li == 0u) {
        atomicStore(&wg_iterative, 0u);
        atomicStore(&wg_predictive, 0u);
        atomicStore(&wg_hits, 0u);
        atomicStore(&wg_steps, 0u);
    }
    workgroupBarrier();
    let i = linear_index(wg, nwg, li);
    if (i < params.entry_count) {
        let e = entry_ref(i);
        let pair = pairs[e.pair];
        if ((pair.step.flags & PAIR_STANDARD) == 0u && !e.edge) {
            let slot = slots[pair.step.slot];
            let rec = prev_records[select(slot.rec_offset_b, slot.rec_offset_a, e.dir == 0u) + e.index];
            let predictive = (rec.triangle & RECORD_PREDICTION) != 0u;
            let start = rec.triangle & ~RECORD_PREDICTION;
            let kind = select(RAY_ITERATIVE, RAY_PREDICTIVE, predictive);
            if (predictive) {
                atomicAdd(&wg_predictive, 1u);
            } else {
                atomicAdd(&wg_iterative, 1u);
            }
            let src = from_mesh(pair, e.dir);
            let to = to_mesh(pair, e.dir);
            let v = vertex_of(src, rec.vertex);
            let q = from_to_q(pair, e.dir);
            let o = transform_point(q, from_to_t(pair, e.dir), v.p.xyz);
            if (to.cuboid != 0u) {
                // A box: the exact contact of one of its faces again, no walk.
                let d = quat_rotate(q, -v.n.xyz);
                let f = box_vertex_face(box_half_extents(to), o, d, v.p.w);
                let outcome = box_outcome(f.distance, dot(d, f.normal), params.prediction != 0u, pair.statics.culling_dist);
                if (outcome == OUTCOME_CONTACT) {
                    atomicAdd(&wg_hits, 1u);
                }
                entries[i] = EntryHit(f.triangle, -f.distance, outcome | (kind << 2u) | (e.dir << 4u), rec.vertex);
            } else {
                let d = quat_rotate(q, -v.n.xyz);
                let w = walk(to, o, d, start, pair.statics.max_it);
                atomicAdd(&wg_steps, w.steps);
                var outcome = OUTCOME_REJECTED;
                if (w.outcome == WALK_HIT || w.outcome == WALK_BEHIND) {
                    let n_tri = triangle_of(to, w.triangle).n.xyz;
                    let limit = ray_limit(v.p.w, v.n.w, pair.statics.culling_dist, reach_flags(pair, e.dir, to, o));
                    if (w.outcome == WALK_HIT && contact_valid(d, n_tri, w.t, limit)) {
                        outcome = OUTCOME_CONTACT;
                        atomicAdd(&wg_hits, 1u);
                    } else if (w.outcome == WALK_BEHIND && params.prediction != 0u && prediction_valid(d, n_tri, w.t, pair.statics.culling_dist)) {
                        outcome = OUTCOME_PREDICTION;
                    }
                }
                entries[i] = EntryHit(w.triangle, w.t, outcome | (kind << 2u) | (e.dir << 4u), rec.vertex);
            }
        }
    }
    workgroupBarrier();
    if (li == 0u) {
        atomicAdd(&counters[COUNT_ITERATIVE_RAYS], atomicLoad(&wg_iterative));
        atomicAdd(&counters[COUNT_PREDICTIVE_RAYS], atomicLoad(&wg_predictive));
        atomicAdd(&counters[COUNT_ITERATIVE_HITS], atomicLoad(&wg_hits));
        atomicAdd(&counters[COUNT_WALK_STEPS], atomicLoad(&wg_steps));
    }
}
