// Candidate-vertex selection (Hermann 2008 §3.2, 2014 §3.1): a vertex casts a ray when it lies in the
// overlap of the two bounding boxes extended by distance_extension (rtcd::detect::vertex_candidate_region,
// computed per pair and step by pair_assemble.wgsl into Pair.frame.region*).
#define_import_path rtcd::candidates

fn is_candidate(p: vec3<f32>, region_min: vec4<f32>, region_max: vec4<f32>) -> bool {
    return all(p >= region_min.xyz) && all(p <= region_max.xyz);
}
