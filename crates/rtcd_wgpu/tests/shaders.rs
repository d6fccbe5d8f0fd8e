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
    check("Slot", size_of::<GpuSlot>(), align_of::<GpuSlot>());
    check("Record", size_of::<GpuRecord>(), align_of::<GpuRecord>());
    check("EntryHit", size_of::<GpuEntryHit>(), align_of::<GpuEntryHit>());
    check("ContactOut", size_of::<GpuContactOut>(), align_of::<GpuContactOut>());
    check("Params", size_of::<GpuParams>(), align_of::<GpuParams>());
    check("ScanParams", size_of::<GpuScanParams>(), align_of::<GpuScanParams>());
}
