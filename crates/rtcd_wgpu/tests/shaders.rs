//! Every shader composes and passes naga validation; every Rust mirror has the WGSL struct's size.

use rtcd_wgpu::{
    gpu_types::*,
    shaders::{Kernel, compose, composer, validate, wgsl_type_layouts},
};

#[test]
fn every_kernel_composes_and_validates() {
    let mut c = composer().unwrap_or_else(|e| panic!("{e}"));
    for kernel in Kernel::ALL {
        let module = compose(&mut c, kernel).unwrap_or_else(|e| panic!("{kernel:?}: {e}"));
        validate(&module).unwrap_or_else(|e| panic!("{kernel:?}: {e}"));
        assert!(
            module.entry_points.iter().any(|ep| ep.name == kernel.entry_point()),
            "{kernel:?} has no entry point {}",
            kernel.entry_point()
        );
    }
}

/// The tracer's shader def reaches the modules a kernel imports: each BVH kernel calls the BVH
/// tracer (the edge kernels through `edges.wgsl`), its brute-force twin does not.
#[test]
fn the_tracer_def_reaches_imported_modules() {
    let mut c = composer().unwrap_or_else(|e| panic!("{e}"));
    let calls_bvh = |c: &mut naga_oil::compose::Composer, kernel: Kernel| {
        let module = compose(c, kernel).unwrap_or_else(|e| panic!("{kernel:?}: {e}"));
        module.functions.iter().any(|(_, f)| f.name.as_deref().is_some_and(|n| n.contains("trace_bvh")))
    };
    for (bvh, brute) in [
        (Kernel::EdgeRaysBvh, Kernel::EdgeRaysBrute),
        (Kernel::EdgeStepBvh, Kernel::EdgeStepBrute),
        (Kernel::TraceStandardBvh, Kernel::TraceStandardBrute),
        (Kernel::MotionPathsBvh, Kernel::MotionPathsBrute),
    ] {
        assert!(calls_bvh(&mut c, bvh), "{bvh:?} does not call the BVH tracer");
        assert!(!calls_bvh(&mut c, brute), "{brute:?} calls the BVH tracer");
    }
}

#[test]
fn rust_mirrors_match_wgsl_sizes() {
    let layouts = wgsl_type_layouts().unwrap();
    let check = |name: &str, size: usize, align: usize| {
        let (s, a) = layouts.get(name).copied().unwrap_or_else(|| panic!("no struct {name} in types.wgsl"));
        assert_eq!(s as usize, size, "size of {name}");
        assert_eq!(size % a as usize, 0, "{name}: Rust size is not a multiple of the WGSL alignment");
        assert!(align <= a as usize);
    };
    check("Vertex", size_of::<GpuVertex>(), align_of::<GpuVertex>());
    check("Triangle", size_of::<GpuTriangle>(), align_of::<GpuTriangle>());
    check("BvhNode", size_of::<GpuBvhNode>(), align_of::<GpuBvhNode>());
    check("MeshRef", size_of::<GpuMeshRef>(), align_of::<GpuMeshRef>());
    check("Pair", size_of::<GpuPair>(), align_of::<GpuPair>());
    check("PairStep", size_of::<GpuPairStep>(), align_of::<GpuPairStep>());
    check("PairStatic", size_of::<GpuPairStatic>(), align_of::<GpuPairStatic>());
    check("Slot", size_of::<GpuSlot>(), align_of::<GpuSlot>());
    check("Record", size_of::<GpuRecord>(), align_of::<GpuRecord>());
    check("EntryHit", size_of::<GpuEntryHit>(), align_of::<GpuEntryHit>());
    check("ContactOut", size_of::<GpuContactOut>(), align_of::<GpuContactOut>());
    check("Params", size_of::<GpuParams>(), align_of::<GpuParams>());
    check("ScanParams", size_of::<GpuScanParams>(), align_of::<GpuScanParams>());
    check("EdgeJob", size_of::<GpuEdgeJob>(), align_of::<GpuEdgeJob>());
    check("EdgeTask", size_of::<GpuEdgeTask>(), align_of::<GpuEdgeTask>());
    check("EdgeOut", size_of::<GpuEdgeOut>(), align_of::<GpuEdgeOut>());
    check("MotionPlan", size_of::<GpuMotionPlan>(), align_of::<GpuMotionPlan>());
    check("MotionHit", size_of::<GpuMotionHit>(), align_of::<GpuMotionHit>());
}

/// The constants both sides read have one value: each WGSL constant in `shaders/types.wgsl` that
/// has a Rust counterpart equals it.
#[test]
fn wgsl_constants_match_rust() {
    let source: String = rtcd_wgpu::shaders::MODULES[0]
        .1
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    let module = naga::front::wgsl::parse_str(&source).unwrap();
    let value = |name: &str| -> u64 {
        let (_, c) = module
            .constants
            .iter()
            .find(|(_, c)| c.name.as_deref() == Some(name))
            .unwrap_or_else(|| panic!("no constant {name} in types.wgsl"));
        match module.global_expressions[c.init] {
            naga::Expression::Literal(naga::Literal::U32(v)) => v as u64,
            naga::Expression::Literal(naga::Literal::F32(v)) => v.to_bits() as u64,
            ref e => panic!("{name}: {e:?}"),
        }
    };
    assert_eq!(value("TRIANGLES_PER_BOX_FACE"), TRIANGLES_PER_BOX_FACE as u64);
    assert_eq!(value("LEAF_COUNT_BITS"), rtcd::bvh::LEAF_COUNT_BITS as u64);
    assert_eq!(value("BARYCENTRIC_EPS"), rtcd::ray::BARYCENTRIC_EPS.to_bits() as u64);
    assert_eq!(value("RECORD_PREDICTION"), RECORD_PREDICTION as u64);
    assert_eq!(value("PAIR_STANDARD"), PAIR_STANDARD as u64);
    assert_eq!(value("PAIR_NEW"), PAIR_NEW as u64);
    assert_eq!(value("PAIR_PRESENT"), PAIR_PRESENT as u64);
    assert_eq!(value("PAIR_SEPARATED"), PAIR_SEPARATED as u64);
    assert_eq!(value("PAIR_MOTION"), PAIR_MOTION as u64);
    assert_eq!(value("PAIR_FLAG_BITS"), PAIR_FLAG_BITS as u64);
    assert_eq!(value("PARALLEL_EPS"), rtcd::ray::PARALLEL_EPS.to_bits() as u64);
    assert_eq!(value("RAY_STANDARD"), RAY_STANDARD as u64);
    assert_eq!(value("RAY_EDGE"), RAY_EDGE as u64);
    assert_eq!(value("COUNT_STANDARD_RAYS"), COUNT_STANDARD_RAYS as u64);
    assert_eq!(value("COUNT_ITERATIVE_RAYS"), COUNT_ITERATIVE_RAYS as u64);
    assert_eq!(value("COUNT_PREDICTIVE_RAYS"), COUNT_PREDICTIVE_RAYS as u64);
    assert_eq!(value("COUNT_ITERATIVE_HITS"), COUNT_ITERATIVE_HITS as u64);
    assert_eq!(value("COUNT_WALK_STEPS"), COUNT_WALK_STEPS as u64);
    assert_eq!(value("COUNT_EDGE_RAYS"), COUNT_EDGE_RAYS as u64);
    assert_eq!(value("COUNT_PREDICTION_RECORDS"), COUNT_PREDICTION_RECORDS as u64);
    assert_eq!(value("COUNT_MOTION_HITS"), COUNT_MOTION_HITS as u64);
    assert_eq!(value("COUNT_MOTION_PATHS"), COUNT_MOTION_PATHS as u64);
    assert_eq!(value("COUNTERS"), COUNTERS as u64);
    assert_eq!(value("SLOT_COUNTS"), SLOT_COUNTS as u64);
    assert_eq!(value("OUTCOME_CONTACT"), OUTCOME_CONTACT as u64);
    assert_eq!(value("OUTCOME_PREDICTION"), OUTCOME_PREDICTION as u64);
    assert_eq!(value("OUTCOME_REJECTED"), OUTCOME_REJECTED as u64);
    assert_eq!(value("RAY_ITERATIVE"), RAY_ITERATIVE as u64);
    assert_eq!(value("RAY_PREDICTIVE"), RAY_PREDICTIVE as u64);
    assert_eq!(value("ENTRY_RECORD_ONLY"), ENTRY_RECORD_ONLY as u64);
    assert_eq!(value("CONTACT_KIND_BITS"), CONTACT_KIND_BITS as u64);
    assert_eq!(value("REACH_SOLID_BEHIND"), MESH_REACH_SOLID_BEHIND as u64);
    assert_eq!(value("REACH_CLOSED"), MESH_REACH_CLOSED as u64);
    assert_eq!(value("EDGE_APART"), EDGE_APART as u64);
    assert_eq!(value("EDGE_TOUCHING"), EDGE_TOUCHING as u64);
    assert_eq!(value("EDGE_CROSSING"), EDGE_CROSSING as u64);
}
