// Kernels over the step's edge jobs (edge_select.wgsl gathered them; edge_args.wgsl sized these
// dispatches from their count): each edge's line traced against the other mesh and its crossing made
// a contact (Mochi 2024 §3.4, rtcd::edges), in three waves so that no thread runs the traces one after
// another: `lines` traces the edge's two lines (two threads a job), `checks` its ridge check and its
// four ways out (five threads a job, where the lines left it pending), `outcome` decides as
// rtcd::edges::edge_crossing does and writes the entry. The traces wait between the kernels in
// `traces` (EDGE_TRACES a job); a job past their room is tested whole by one thread of `lines`.
// Brute force, or the stackless BVH with the TRACER_BVH shader def. As edge_direction in
// crates/rtcd/src/detect/pair.rs: a crossing is written as a contact (the edge in `vertex`, the entry
// triangle, the depth): the host traces the edge again to make its contact. An edge that does not
// cross is kept as a record only (ENTRY_RECORD_ONLY) when prediction is on, it lies within the rays'
// reach of the other mesh's box, and it is long and sharp (rtcd::RtcdMesh::predicting_edges) or the
// direction kept no vertex record.
#import rtcd::types::{EntryHit, Slot, EdgeJob, EdgeTrace, EdgeOut, MeshRef, NONE, OUTCOME_CONTACT, OUTCOME_PREDICTION, RAY_EDGE, ENTRY_RECORD_ONLY, COUNT_EDGE_RAYS, EDGE_CROSSING, EDGE_APART}
#import rtcd::math::{transform_point, linear_index, Box}
#import rtcd::geometry::corner
#import rtcd::edge_geometry::edge_of
#import rtcd::pairs::{pairs, params, from_mesh, to_mesh, from_to_q, from_to_t}
#import rtcd::edges::{Fwd, Exit, EdgeLine, EDGE_PENDING, edge_line, line_trace, edge_stage, check_trace, ridge_holds, ridge_result, exit_trace, through_result, edge_crossing, result_of}

@group(0) @binding(5) var<storage, read> slots: array<Slot>;
@group(0) @binding(7) var<storage, read_write> entries: array<EntryHit>;
@group(0) @binding(8) var<storage, read_write> counters: array<atomic<u32>, 8>;
@group(0) @binding(23) var<storage, read> jobs: array<EdgeJob>;
@group(0) @binding(25) var<storage, read_write> traces: array<EdgeTrace>;

// A job's traces: its two lines, its ridge check, its four ways out.
const EDGE_TRACES: u32 = 7u;

fn job_count() -> u32 {
    return min(atomicLoad(&counters[COUNT_EDGE_RAYS]), arrayLength(&jobs));
}

// Whether job j's traces have room (else one thread of `lines` tests it whole).
fn staged(j: u32) -> bool {
    return j < arrayLength(&traces) / EDGE_TRACES;
}

fn job_to(job: EdgeJob) -> MeshRef {
    return to_mesh(pairs[job.pair], job.dir);
}

fn job_line(job: EdgeJob) -> EdgeLine {
    let pair = pairs[job.pair];
    let src = from_mesh(pair, job.dir);
    let ends = edge_of(src, job.edge);
    return edge_line(src, to_mesh(pair, job.dir), from_to_q(pair, job.dir), from_to_t(pair, job.dir), ends.x, ends.y);
}

fn put_fwd(i: u32, h: Fwd) {
    traces[i] = EdgeTrace(h.tri, h.t, select(0u, 1u, h.from_inside), 0u, vec4<f32>(h.n, 0.0));
}

fn get_fwd(i: u32) -> Fwd {
    let x = traces[i];
    return Fwd(x.tri, x.t, x.n.xyz, x.inside != 0u);
}

fn put_exit(i: u32, x: Exit) {
    traces[i] = EdgeTrace(x.tri, x.depth, 0u, 0u, vec4<f32>(x.n, 0.0));
}

fn get_exit(i: u32) -> Exit {
    let x = traces[i];
    return Exit(x.tri, x.n.xyz, x.t);
}

// Job `job`'s entry, from what its edge's test found.
fn write_outcome(job: EdgeJob, c: EdgeOut) {
    let dir = job.dir;
    let k = job.edge;
    if (c.kind == EDGE_CROSSING) {
        entries[job.entry] = EntryHit(c.triangle, c.depth, OUTCOME_CONTACT | (RAY_EDGE << 2u) | (dir << 4u), k);
        return;
    }
    let pair = pairs[job.pair];
    let src = from_mesh(pair, dir);
    let ends = edge_of(src, k);
    let q = from_to_q(pair, dir);
    let t = from_to_t(pair, dir);
    // Near: the edge's box (in the other mesh's frame) meets the other mesh's box grown by the rays'
    // reach (rtcd::detect::ray_reach).
    var to_box = Box(pair.statics.box_b_min.xyz, pair.statics.box_b_max.xyz);
    if (dir == 1u) {
        to_box = Box(pair.statics.box_a_min.xyz, pair.statics.box_a_max.xyz);
    }
    let reach = vec3<f32>(select(0.0, pair.statics.culling_dist, params.prediction != 0u));
    let p0 = transform_point(q, t, corner(src, ends.x));
    let p1 = transform_point(q, t, corner(src, ends.y));
    let near = all(min(p0, p1) <= to_box.hi + reach) && all(max(p0, p1) >= to_box.lo - reach);
    let slot = slots[pair.step.slot];
    let rec_count = select(slot.rec_count_b, slot.rec_count_a, dir == 0u);
    if (params.prediction != 0u && (rec_count == 0u || k < src.strong_edges) && near) {
        entries[job.entry] = EntryHit(0u, 0.0, OUTCOME_PREDICTION | ENTRY_RECORD_ONLY | (RAY_EDGE << 2u) | (dir << 4u), k);
    }
}

// Two threads a job: its first line (from the edge's first end) and its second.
@compute @workgroup_size(64)
fn lines(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = linear_index(wg, nwg, li);
    let j = i / 2u;
    let side = i % 2u;
    if (j >= job_count()) {
        return;
    }
    let job = jobs[j];
    if (!staged(j)) {
        if (side == 0u) {
            let pair = pairs[job.pair];
            let src = from_mesh(pair, job.dir);
            let ends = edge_of(src, job.edge);
            let c = edge_crossing(src, to_mesh(pair, job.dir), from_to_q(pair, job.dir), from_to_t(pair, job.dir), ends.x, ends.y);
            write_outcome(job, c);
        }
        return;
    }
    let l = job_line(job);
    var h = Fwd(NONE, 0.0, vec3<f32>(0.0), false);
    if (l.ok) {
        h = line_trace(job_to(job), l, side);
    }
    put_fwd(EDGE_TRACES * j + side, h);
}

// Five threads a job its lines left pending: its ridge check, and its four ways out (traced whether
// or not the ridge holds, so that none waits for the check).
@compute @workgroup_size(64)
fn checks(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let i = linear_index(wg, nwg, li);
    let j = i / 5u;
    let k = i % 5u;
    if (j >= job_count() || !staged(j)) {
        return;
    }
    let job = jobs[j];
    let l = job_line(job);
    if (!l.ok) {
        return;
    }
    let s = edge_stage(l, get_fwd(EDGE_TRACES * j), get_fwd(EDGE_TRACES * j + 1u));
    if (s.kind != EDGE_PENDING) {
        return;
    }
    let to = job_to(job);
    if (k == 0u) {
        put_fwd(EDGE_TRACES * j + 2u, check_trace(to, l, s));
    } else {
        put_exit(EDGE_TRACES * j + 2u + k, exit_trace(to, l, s, k - 1u));
    }
}

// One thread a job: the test's result from its traces, written into its entry.
@compute @workgroup_size(64)
fn outcome(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {
    let j = linear_index(wg, nwg, li);
    if (j >= job_count() || !staged(j)) {
        return;
    }
    let job = jobs[j];
    let l = job_line(job);
    var c = result_of(EDGE_APART);
    if (l.ok) {
        let h_in = get_fwd(EDGE_TRACES * j);
        let s = edge_stage(l, h_in, get_fwd(EDGE_TRACES * j + 1u));
        let x = EDGE_TRACES * j + 3u;
        if (s.kind != EDGE_PENDING) {
            c = result_of(s.kind);
        } else if (ridge_holds(l, s, get_fwd(EDGE_TRACES * j + 2u))) {
            c = ridge_result(h_in, s);
        } else {
            c = through_result(s, array<Exit, 4>(get_exit(x), get_exit(x + 1u), get_exit(x + 2u), get_exit(x + 3u)));
        }
    }
    write_outcome(job, c);
}
