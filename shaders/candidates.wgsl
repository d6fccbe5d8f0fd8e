// Candidate-vertex selection (Hermann 2008 §3.2, 2014 §3.1): a vertex casts a ray when it lies in the
// overlap of the two bounding boxes extended by distance_extension (computed per pair on the host by
// rtcd::detect::candidate_region, uploaded in Pair.region*).
#define_import_path rtcd::candidates

fn is_candidate(p: vec3<f32>, region_min: vec4<f32>, region_max: vec4<f32>) -> bool {
    return all(p >= region_min.xyz) && all(p <= region_max.xyz);
}
