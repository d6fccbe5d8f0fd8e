//! Command-line flags (hand-parsed).

use std::path::PathBuf;

/// Usage text.
pub const USAGE: &str = "\
rtcd_bench: the papers' scenes (IRTCD 2013 §4.1, 2014 §5.1), rtcd's narrow-phase variants side by side
with plain Rapier trimesh colliders and V-HACD convex decomposition. Writes CSV + SVG to --out.

USAGE: cargo run --release -p rtcd_bench -- [FLAGS]

  --quick               reduced scenes (scene 1: 64 bodies, 3 s; scene 2: 50 objects, 5 s; scene 3:
                        20 bodies, 4 s): < 2 min for scenes 1 and 2
  --scene LIST          1, 2, 3 or a list such as 1,2,3 (default: 1,2). Scene 3 is not the papers':
                        a pile of everyday content (boxes, planks, a 1 cm plate, a 5 m beam,
                        furniture, rings, balls, a rock, a spring; 12-2,000 triangles, 5 cm-5 m),
                        judged at the end by an independent measure (vertex depths and crossing
                        edges by ray parity, no rtcd code)
  --bodies N            scene 3's body count (default 60, 20 with --quick)
  --variants LIST       narrow-phase variants replayed, by substring of their key, comma-separated:
                        keys are {standard,iterative}-{brute,bvh}/{pred,nopred}, and
                        iterative-bvh/pred/noedges and /nomotion (the default without edge or
                        motion rays); e.g. `bvh` or `iterative-bvh/pred,standard-bvh/pred`; `none`
                        skips replays (default: all)
  --compare LIST        simulated set-ups besides the main one (rtcd with Rapier's contact
                        recycling off, whose poses the replays trace): trimesh, vhacd, nopred,
                        noreproj, recycle (rtcd following Rapier's contact recycling, the batch
                        holding recycled pairs: the plugin's default set-up), nomerge (the same
                        with deep overlaps' manifolds not merged), bound (the same with the depth
                        bound on), widespec (speculative contact groups within 30° instead of 5°),
                        or none (default: all but nomerge, bound and widespec)
  --recycle-distance D  Rapier's normalized_contact_recycle_distance for the `recycle` set-up
                        (default: Rapier's, 0.05, i.e. 5 cm)
  --gpu MODE            auto (default): GPU rows when an adapter exists, on a software adapter
                        (lavapipe) only at --quick scale unless --gpu-steps is given; on: the same,
                        but no adapter or a failing GPU row fails the run; off. The GPU rows begin
                        with the GPU backend's host cost: the default variant replayed beside the
                        CPU backend on the same pairs (host time without the waits for the device,
                        the waits, bytes uploaded and read back, kernel time; per-step medians and
                        their targets, MET or NOT MET)
  --gpu-steps N         GPU rows replay the first N steps only (0: all)
  --brute-window N      brute-force variants (too slow to run every step at scale) are timed in
                        windows of N steps in the middle of each phase (scene 1) or of the peak
                        (scene 2), each on a fresh backend after 4 untimed warm-up steps (iterative)
                        (default 4 with --quick, 10 otherwise)
  --brute-every-step    run brute-force variants over the whole run instead (hours at full scale)
  --brute-stride N      with --brute-every-step: time standard brute force on every N-th step
                        (default 1; standard tracing keeps no state between steps)
  --bvh-stride N        time standard BVH variants on every N-th step (default: 1 with --quick,
                        2 otherwise)
  --measure-stride N    penetration measure (standard trace) on every N-th step (default 1 / 5)
  --repeat N            CPU replays run N times, each on a fresh backend, in rounds (every variant
                        once, then every variant again), and keep each step's fastest time
                        (steadier figures on a busy machine; default 1)
  --interleave          replay the CPU variants timed every k-th step together, step by step
                        (the machine's drift then weighs on all alike; each variant's step then
                        follows the others', not its own previous one: colder caches)
  --ground LIST         level geometry: terrain (a wavy grid terrain, 0.3 m hills 10 m apart, 0.5 m
                        cells, as a Rapier trimesh collider), heightfield (the same heights as a
                        Rapier heightfield), or both, e.g. terrain,heightfield (default: cuboid, the
                        ground box). With a level ground, scenes 1 and 3 run the level comparison
                        instead of the papers' set-ups: the plugin's default set-up on the ground
                        box, on each level ground, and with Rapier's own path on it
                        (CacheSettings::levels off); --repeat runs each N times (median kept)
  --big-level           the level build time of a 100k- and a 1M-triangle terrain, and scene 1's
                        narrow phase on them beside the scene's own terrain
  --no-errors           skip the erroneous-ray runs (measure_errors, one per prediction setting)
  --seconds S           override the scenes' simulated duration
  --out DIR             output folder (default: <workspace>/target/rtcd_bench)
  --assets DIR          meshes folder (default: <workspace>/assets/meshes)
  --threads N           rayon threads, this one among them when N >= 2 (default: all cores)
  --json                print the figures as one JSON object on stdout (the table goes to stderr)
  -h, --help            this text
";

/// Parsed flags.
#[derive(Clone, Debug)]
pub struct Options {
    /// Reduced scenes.
    pub quick: bool,
    /// Scenes to run (1, 2, 3).
    pub scenes: Vec<u32>,
    /// Scene 3's body count (`None`: its default for the scale).
    pub bodies: Option<usize>,
    /// Variant filters (substrings), empty: all; `["none"]`: no replay.
    pub variants: Vec<String>,
    /// Simulated comparisons.
    pub compare: Vec<String>,
    /// Rapier's `normalized_contact_recycle_distance` for the `recycle` set-up (`None`: Rapier's).
    pub recycle_distance: Option<f32>,
    /// GPU mode: auto, on, off.
    pub gpu: String,
    /// GPU step limit (0: all).
    pub gpu_steps: Option<usize>,
    /// Strides of standard variants.
    pub brute_stride: usize,
    /// Brute-force window length.
    pub brute_window: usize,
    /// Untimed steps before each brute-force window.
    pub brute_warmup: usize,
    /// Brute force over the whole run.
    pub brute_every_step: bool,
    /// Stride of standard BVH variants.
    pub bvh_stride: usize,
    /// Stride of the penetration measure.
    pub measure_stride: usize,
    /// Runs of each CPU replay (fastest time per step kept).
    pub repeat: usize,
    /// CPU variants timed every k-th step replayed together, interleaved step by step.
    pub interleave: bool,
    /// Erroneous-ray runs.
    pub errors: bool,
    /// Duration override.
    pub seconds: Option<f32>,
    /// Output folder.
    pub out: PathBuf,
    /// Meshes folder.
    pub assets: PathBuf,
    /// Rayon threads.
    pub threads: Option<usize>,
    /// JSON on stdout.
    pub json: bool,
    /// Level grounds (`terrain`, `heightfield`); empty: the ground box.
    pub ground: Vec<String>,
    /// The big-level figures.
    pub big_level: bool,
}

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

impl Options {
    /// Parses `args` (without the program name). `Err` carries the message to print (usage on -h).
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Self, String> {
        let mut args = args.into_iter();
        let mut o = Options {
            quick: false,
            scenes: vec![1, 2],
            bodies: None,
            variants: Vec::new(),
            compare: ["trimesh", "vhacd", "nopred", "noreproj", "recycle"].map(String::from).to_vec(),
            recycle_distance: None,
            gpu: "auto".into(),
            gpu_steps: None,
            brute_stride: 1,
            brute_window: 0,
            brute_warmup: 4,
            brute_every_step: false,
            bvh_stride: 0,
            measure_stride: 0,
            repeat: 1,
            interleave: false,
            errors: true,
            seconds: None,
            out: workspace().join("target/rtcd_bench"),
            assets: workspace().join("assets/meshes"),
            threads: None,
            json: false,
            ground: Vec::new(),
            big_level: false,
        };
        let list = |v: String| {
            v.split(',').map(|s| s.trim().to_lowercase()).filter(|s| !s.is_empty()).collect::<Vec<_>>()
        };
        while let Some(a) = args.next() {
            let mut value = || args.next().ok_or_else(|| format!("{a} needs a value\n\n{USAGE}"));
            let num = |v: String| v.parse::<usize>().map_err(|_| format!("{a}: not a number: {v}"));
            match a.as_str() {
                "--quick" => o.quick = true,
                "--scene" | "--scenes" => {
                    o.scenes = list(value()?)
                        .iter()
                        .map(|s| match s.as_str() {
                            "1" => Ok(1),
                            "2" => Ok(2),
                            "3" => Ok(3),
                            _ => Err(format!("--scene: unknown scene {s} (1, 2 or 3)")),
                        })
                        .collect::<Result<_, _>>()?
                }
                "--variants" => o.variants = list(value()?),
                "--compare" => {
                    o.compare = list(value()?);
                    if o.compare == ["none"] {
                        o.compare.clear();
                    }
                    for c in &o.compare {
                        if ![
                            "trimesh", "vhacd", "nopred", "noreproj", "widespec", "recycle", "nomerge",
                            "bound",
                        ]
                        .contains(&c.as_str())
                        {
                            return Err(format!("--compare: unknown set-up {c}"));
                        }
                    }
                }
                "--gpu" => {
                    o.gpu = value()?;
                    if !["auto", "on", "off"].contains(&o.gpu.as_str()) {
                        return Err(format!("--gpu: auto, on or off, not {}", o.gpu));
                    }
                }
                "--gpu-steps" => o.gpu_steps = Some(num(value()?)?),
                "--brute-stride" => o.brute_stride = num(value()?)?.max(1),
                "--brute-window" => o.brute_window = num(value()?)?.max(1),
                "--brute-every-step" => o.brute_every_step = true,
                "--bvh-stride" => o.bvh_stride = num(value()?)?.max(1),
                "--measure-stride" => o.measure_stride = num(value()?)?.max(1),
                "--repeat" => o.repeat = num(value()?)?.max(1),
                "--interleave" => o.interleave = true,
                "--no-errors" => o.errors = false,
                "--seconds" => {
                    let v = value()?;
                    o.seconds = Some(v.parse().map_err(|_| format!("--seconds: not a number: {v}"))?)
                }
                "--out" => o.out = PathBuf::from(value()?),
                "--assets" => o.assets = PathBuf::from(value()?),
                "--threads" => o.threads = Some(num(value()?)?),
                "--bodies" => o.bodies = Some(num(value()?)?.max(1)),
                "--recycle-distance" => {
                    let v = value()?;
                    o.recycle_distance = Some(
                        v.parse::<f32>()
                            .ok()
                            .filter(|d| d.is_finite() && *d >= 0.0)
                            .ok_or_else(|| format!("--recycle-distance: not a distance >= 0: {v}"))?,
                    );
                }
                "--json" => o.json = true,
                "--ground" => {
                    o.ground = list(value()?);
                    for g in &o.ground {
                        if !["cuboid", "terrain", "heightfield"].contains(&g.as_str()) {
                            return Err(format!("--ground: cuboid, terrain or heightfield, not {g}"));
                        }
                    }
                    o.ground.retain(|g| g != "cuboid");
                }
                "--big-level" => o.big_level = true,
                "-h" | "--help" => return Err(USAGE.to_string()),
                _ => return Err(format!("unknown flag {a}\n\n{USAGE}")),
            }
        }
        let (b, v, m) = if o.quick { (4, 1, 1) } else { (10, 2, 5) };
        if o.brute_window == 0 {
            o.brute_window = b;
        }
        if o.bvh_stride == 0 {
            o.bvh_stride = v;
        }
        if o.measure_stride == 0 {
            o.measure_stride = m;
        }
        Ok(o)
    }

    /// Whether a variant key is selected.
    pub fn variant_selected(&self, key: &str) -> bool {
        if self.variants.iter().any(|v| v == "none") {
            return false;
        }
        self.variants.is_empty() || self.variants.iter().any(|v| key.contains(v.as_str()))
    }

    /// Whether a comparison set-up is selected.
    pub fn compares(&self, name: &str) -> bool {
        self.compare.iter().any(|c| c == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(a: &str) -> Result<Options, String> {
        Options::parse(a.split_whitespace().map(String::from))
    }

    #[test]
    fn quick_and_full_defaults() {
        let q = parse("--quick").unwrap();
        assert!(q.quick && q.scenes == [1, 2] && q.brute_window == 4 && q.measure_stride == 1);
        let f = parse("").unwrap();
        assert!(
            !f.quick && f.brute_window == 10 && f.bvh_stride == 2 && f.measure_stride == 5 && !f.interleave
        );
        assert!(parse("--interleave").unwrap().interleave);
        assert_eq!(f.compare, ["trimesh", "vhacd", "nopred", "noreproj", "recycle"]);
        assert_eq!(parse("--compare recycle,widespec").unwrap().compare, ["recycle", "widespec"]);
    }

    #[test]
    fn filters_and_errors() {
        let o = parse("--scene 2 --variants bvh --compare none --gpu off").unwrap();
        assert_eq!(o.scenes, [2]);
        assert!(o.variant_selected("iterative-bvh/pred") && !o.variant_selected("standard-brute/pred"));
        assert!(o.compare.is_empty() && o.gpu == "off");
        assert!(!parse("--variants none").unwrap().variant_selected("iterative-bvh/pred"));
        assert!(parse("--scene 4").is_err());
        let o = parse("--scene 1,2,3 --bodies 5").unwrap();
        assert_eq!((o.scenes, o.bodies), (vec![1, 2, 3], Some(5)));
        assert_eq!(parse("--scene 3").unwrap().scenes, [3]);
        assert!(parse("--compare bullet").is_err());
        assert!(parse("--threads").is_err());
        assert!(parse("--bogus").is_err());
        assert_eq!(parse("--recycle-distance 0.01").unwrap().recycle_distance, Some(0.01));
        assert!(parse("--recycle-distance -1").is_err());
        assert!(parse("--recycle-distance x").is_err());
        assert_eq!(parse("--ground terrain,heightfield").unwrap().ground, ["terrain", "heightfield"]);
        assert!(parse("--ground cuboid").unwrap().ground.is_empty());
        assert!(parse("--ground sand").is_err());
        assert!(parse("--big-level").unwrap().big_level);
    }
}
