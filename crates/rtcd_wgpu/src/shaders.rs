//! The WGSL sources in `shaders/`, composed with naga_oil imports (`#define_import_path` /
//! `#import`), one kernel per file, shared types and functions in importable modules.

use std::{borrow::Cow, collections::HashMap};

use naga_oil::compose::{ComposableModuleDescriptor, Composer, NagaModuleDescriptor, ShaderDefValue};

use crate::error::GpuError;

/// Importable modules, dependencies first.
pub const MODULES: &[(&str, &str)] = &[
    ("types.wgsl", include_str!("../../../shaders/types.wgsl")),
    ("math.wgsl", include_str!("../../../shaders/math.wgsl")),
    ("ray_triangle.wgsl", include_str!("../../../shaders/ray_triangle.wgsl")),
    ("geometry.wgsl", include_str!("../../../shaders/geometry.wgsl")),
    ("edge_geometry.wgsl", include_str!("../../../shaders/edge_geometry.wgsl")),
    ("cuboid.wgsl", include_str!("../../../shaders/cuboid.wgsl")),
    ("trace_brute.wgsl", include_str!("../../../shaders/trace_brute.wgsl")),
    ("trace_bvh.wgsl", include_str!("../../../shaders/trace_bvh.wgsl")),
    ("edges.wgsl", include_str!("../../../shaders/edges.wgsl")),
    ("walk.wgsl", include_str!("../../../shaders/walk.wgsl")),
    ("hermann.wgsl", include_str!("../../../shaders/hermann.wgsl")),
    ("candidates.wgsl", include_str!("../../../shaders/candidates.wgsl")),
    ("pairs.wgsl", include_str!("../../../shaders/pairs.wgsl")),
];

/// The compute kernels, one per file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// `pair_links.wgsl`: the bodies and kinds of pairs new in their slots.
    PairLinks,
    /// `pair_assemble.wgsl`: each slot's pair of the step, from the bodies' poses, the uploaded
    /// flags, its link and kind.
    PairAssemble,
    /// `pair_layout.wgsl`: each pair's first entry, from the scan of the slots' entry counts.
    PairLayout,
    /// `pair_begin.wgsl`: resets new slots, stores reference poses.
    PairBegin,
    /// `trace_standard.wgsl` with the brute-force tracer.
    TraceStandardBrute,
    /// `trace_standard.wgsl` with the BVH tracer (`TRACER_BVH`).
    TraceStandardBvh,
    /// `walk_iterative.wgsl`.
    WalkIterative,
    /// `flag_entries.wgsl`: the compaction's scan input.
    FlagEntries,
    /// `scan.wgsl`, entry point `scan_blocks`.
    ScanBlocks,
    /// `scan.wgsl`, entry point `add_block_sums`.
    AddBlockSums,
    /// `compact.wgsl`: dense records, and the rays that found contacts, to read back.
    Compact,
    /// `pair_end.wgsl`: record ranges into the slots.
    PairEnd,
    /// `edge_select.wgsl`: the step's edge rays to trace, appended to its edge jobs.
    EdgeSelect,
    /// `edge_step.wgsl` with the brute-force tracer: the step's edge jobs traced.
    EdgeStepBrute,
    /// `edge_step.wgsl` with the BVH tracer (`TRACER_BVH`).
    EdgeStepBvh,
    /// `edge_rays.wgsl` with the brute-force tracer: one edge ray of a list a thread.
    EdgeRaysBrute,
    /// `edge_rays.wgsl` with the BVH tracer (`TRACER_BVH`).
    EdgeRaysBvh,
    /// `motion_args.wgsl`: the motion paths' indirect dispatch, from their scan.
    MotionArgs,
    /// `motion_paths.wgsl` with the brute-force tracer: the step's motion paths traced.
    MotionPathsBrute,
    /// `motion_paths.wgsl` with the BVH tracer (`TRACER_BVH`).
    MotionPathsBvh,
}

impl Kernel {
    /// Every kernel.
    pub const ALL: [Kernel; 20] = [
        Kernel::PairLinks,
        Kernel::PairAssemble,
        Kernel::PairLayout,
        Kernel::PairBegin,
        Kernel::TraceStandardBrute,
        Kernel::TraceStandardBvh,
        Kernel::WalkIterative,
        Kernel::FlagEntries,
        Kernel::ScanBlocks,
        Kernel::AddBlockSums,
        Kernel::Compact,
        Kernel::PairEnd,
        Kernel::EdgeSelect,
        Kernel::EdgeStepBrute,
        Kernel::EdgeStepBvh,
        Kernel::EdgeRaysBrute,
        Kernel::EdgeRaysBvh,
        Kernel::MotionArgs,
        Kernel::MotionPathsBrute,
        Kernel::MotionPathsBvh,
    ];

    /// Whether a step runs the kernel, so that a backend compiles it when it starts; the others
    /// ([`Kernel::EdgeRaysBrute`], [`Kernel::EdgeRaysBvh`]: `GpuNarrowPhase::edge_crossings`) are
    /// compiled on their first use.
    pub fn in_step(self) -> bool {
        !matches!(self, Kernel::EdgeRaysBrute | Kernel::EdgeRaysBvh)
    }

    /// File name and source.
    pub fn source(self) -> (&'static str, &'static str) {
        match self {
            Kernel::PairLinks => ("pair_links.wgsl", include_str!("../../../shaders/pair_links.wgsl")),
            Kernel::PairAssemble => {
                ("pair_assemble.wgsl", include_str!("../../../shaders/pair_assemble.wgsl"))
            }
            Kernel::PairLayout => ("pair_layout.wgsl", include_str!("../../../shaders/pair_layout.wgsl")),
            Kernel::PairBegin => ("pair_begin.wgsl", include_str!("../../../shaders/pair_begin.wgsl")),
            Kernel::TraceStandardBrute | Kernel::TraceStandardBvh => {
                ("trace_standard.wgsl", include_str!("../../../shaders/trace_standard.wgsl"))
            }
            Kernel::WalkIterative => {
                ("walk_iterative.wgsl", include_str!("../../../shaders/walk_iterative.wgsl"))
            }
            Kernel::FlagEntries => ("flag_entries.wgsl", include_str!("../../../shaders/flag_entries.wgsl")),
            Kernel::ScanBlocks | Kernel::AddBlockSums => {
                ("scan.wgsl", include_str!("../../../shaders/scan.wgsl"))
            }
            Kernel::Compact => ("compact.wgsl", include_str!("../../../shaders/compact.wgsl")),
            Kernel::PairEnd => ("pair_end.wgsl", include_str!("../../../shaders/pair_end.wgsl")),
            Kernel::EdgeSelect => ("edge_select.wgsl", include_str!("../../../shaders/edge_select.wgsl")),
            Kernel::EdgeStepBrute | Kernel::EdgeStepBvh => {
                ("edge_step.wgsl", include_str!("../../../shaders/edge_step.wgsl"))
            }
            Kernel::EdgeRaysBrute | Kernel::EdgeRaysBvh => {
                ("edge_rays.wgsl", include_str!("../../../shaders/edge_rays.wgsl"))
            }
            Kernel::MotionArgs => ("motion_args.wgsl", include_str!("../../../shaders/motion_args.wgsl")),
            Kernel::MotionPathsBrute | Kernel::MotionPathsBvh => {
                ("motion_paths.wgsl", include_str!("../../../shaders/motion_paths.wgsl"))
            }
        }
    }

    /// Entry point name.
    pub fn entry_point(self) -> &'static str {
        match self {
            Kernel::ScanBlocks => "scan_blocks",
            Kernel::AddBlockSums => "add_block_sums",
            _ => "main",
        }
    }

    fn shader_defs(self) -> HashMap<String, ShaderDefValue> {
        let mut defs = HashMap::new();
        if matches!(
            self,
            Kernel::TraceStandardBvh | Kernel::EdgeStepBvh | Kernel::EdgeRaysBvh | Kernel::MotionPathsBvh
        ) {
            defs.insert("TRACER_BVH".to_string(), ShaderDefValue::Bool(true));
        }
        defs
    }

    /// A short label (`"rtcd:kernel:trace_standard_bvh"`).
    pub fn label(self) -> &'static str {
        match self {
            Kernel::PairLinks => "rtcd:kernel:pair_links",
            Kernel::PairAssemble => "rtcd:kernel:pair_assemble",
            Kernel::PairLayout => "rtcd:kernel:pair_layout",
            Kernel::PairBegin => "rtcd:kernel:pair_begin",
            Kernel::TraceStandardBrute => "rtcd:kernel:trace_standard_brute",
            Kernel::TraceStandardBvh => "rtcd:kernel:trace_standard_bvh",
            Kernel::WalkIterative => "rtcd:kernel:walk_iterative",
            Kernel::FlagEntries => "rtcd:kernel:flag_entries",
            Kernel::ScanBlocks => "rtcd:kernel:scan_blocks",
            Kernel::AddBlockSums => "rtcd:kernel:add_block_sums",
            Kernel::Compact => "rtcd:kernel:compact",
            Kernel::PairEnd => "rtcd:kernel:pair_end",
            Kernel::EdgeSelect => "rtcd:kernel:edge_select",
            Kernel::EdgeStepBrute => "rtcd:kernel:edge_step_brute",
            Kernel::EdgeStepBvh => "rtcd:kernel:edge_step_bvh",
            Kernel::EdgeRaysBrute => "rtcd:kernel:edge_rays_brute",
            Kernel::EdgeRaysBvh => "rtcd:kernel:edge_rays_bvh",
            Kernel::MotionArgs => "rtcd:kernel:motion_args",
            Kernel::MotionPathsBrute => "rtcd:kernel:motion_paths_brute",
            Kernel::MotionPathsBvh => "rtcd:kernel:motion_paths_bvh",
        }
    }
}

/// A composer with every module added.
pub fn composer() -> Result<Composer, GpuError> {
    let mut c = Composer::default();
    for (file, source) in MODULES {
        if let Err(e) = c.add_composable_module(ComposableModuleDescriptor {
            source,
            file_path: file,
            ..Default::default()
        }) {
            return Err(GpuError::Shader { shader: (*file).to_string(), message: e.emit_to_string(&c) });
        }
    }
    Ok(c)
}

/// Composes (and validates, as naga_oil does) one kernel into a naga module.
pub fn compose(composer: &mut Composer, kernel: Kernel) -> Result<naga::Module, GpuError> {
    let (file, source) = kernel.source();
    composer
        .make_naga_module(NagaModuleDescriptor {
            source,
            file_path: file,
            shader_defs: kernel.shader_defs(),
            ..Default::default()
        })
        .map_err(|e| GpuError::Shader { shader: file.to_string(), message: e.emit_to_string(composer) })
}

/// Validates a composed module with naga's validator (all checks, default capabilities).
pub fn validate(module: &naga::Module) -> Result<naga::valid::ModuleInfo, String> {
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::default())
        .validate(module)
        .map_err(|e| format!("{e:?}"))
}

/// A wgpu shader module for a kernel.
pub fn shader_module(
    device: &wgpu::Device,
    composer: &mut Composer,
    kernel: Kernel,
) -> Result<wgpu::ShaderModule, GpuError> {
    let module = compose(composer, kernel)?;
    Ok(device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(kernel.label()),
        source: wgpu::ShaderSource::Naga(Cow::Owned(module)),
    }))
}

/// Struct sizes and alignments of `shaders/types.wgsl`, as WGSL lays them out (for the size tests of
/// the Rust mirrors).
pub fn wgsl_type_layouts() -> Result<HashMap<String, (u32, u32)>, String> {
    let source: String =
        MODULES[0].1.lines().filter(|l| !l.trim_start().starts_with('#')).collect::<Vec<_>>().join("\n");
    let module = naga::front::wgsl::parse_str(&source).map_err(|e| e.emit_to_string(&source))?;
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(module.to_ctx()).map_err(|e| format!("{e:?}"))?;
    let mut out = HashMap::new();
    for (handle, ty) in module.types.iter() {
        if let Some(name) = &ty.name {
            let l = &layouter[handle];
            out.insert(name.clone(), (l.size, l.alignment.round_up(1)));
        }
    }
    Ok(out)
}
