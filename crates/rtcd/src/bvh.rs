//! A flattened bounding volume hierarchy for stackless traversal (IRTCD 2013 §4.2, after Wald et al.
//! 2007 and Popov et al. 2007).
//!
//! Nodes are stored in depth-first pre-order. An internal node's first child is the next node; every
//! node carries a *miss link*, the index to continue at when the ray misses the node's box or after a
//! leaf's triangles are tested. Traversal is a single loop over an index, with no stack, which is what
//! a GPU thread wants. Leaves hold a contiguous range of the mesh's triangles: the mesh reorders its
//! triangles at build time so no indirection table is needed. The GPU reads [`BvhNode`] as is.

use bytemuck::{Pod, Zeroable};
use glam::Vec3;

use crate::aabb::Aabb;

/// Most triangles in a leaf.
pub const LEAF_SIZE: usize = 4;
/// Bits of [`BvhNode::leaf`] holding the triangle count.
pub const LEAF_COUNT_BITS: u32 = 4;

/// One node, 32 bytes, the same layout as `BvhNode` in `shaders/types.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct BvhNode {
    /// Box lower corner.
    pub min: [f32; 3],
    /// Index of the node to visit when the ray misses this one (or after this leaf); equal to the
    /// node count for the last subtree.
    pub miss: u32,
    /// Box upper corner.
    pub max: [f32; 3],
    /// 0 for an internal node; for a leaf, `first_triangle << LEAF_COUNT_BITS | count`.
    pub leaf: u32,
}

impl BvhNode {
    /// The node's box.
    pub fn aabb(&self) -> Aabb {
        Aabb::new(Vec3::from_array(self.min), Vec3::from_array(self.max))
    }

    /// For a leaf, `(first triangle, count)`.
    #[inline]
    pub fn leaf_range(&self) -> Option<(u32, u32)> {
        (self.leaf != 0).then_some((self.leaf >> LEAF_COUNT_BITS, self.leaf & ((1 << LEAF_COUNT_BITS) - 1)))
    }
}

/// Builds the hierarchy over triangle boxes with a binned surface-area heuristic.
///
/// Returns the nodes and the triangle order the leaves expect: `order[i]` is the input index of the
/// triangle that must sit at position `i`.
pub fn build(tri_boxes: &[Aabb]) -> (Vec<BvhNode>, Vec<u32>) {
    let mut order: Vec<u32> = (0..tri_boxes.len() as u32).collect();
    let centroids: Vec<Vec3> = tri_boxes.iter().map(|b| b.center()).collect();
    let mut nodes = Vec::with_capacity(2 * tri_boxes.len() / LEAF_SIZE + 1);
    let mut right_of = Vec::with_capacity(nodes.capacity());
    if !tri_boxes.is_empty() {
        build_node(tri_boxes, &centroids, &mut order, 0, &mut nodes, &mut right_of);
        // Miss links: the node after each subtree.
        let n = nodes.len() as u32;
        link_misses(&mut nodes, &right_of, 0, n);
    }
    (nodes, order)
}

/// A hierarchy of one leaf holding every triangle in input order (at most
/// `2^LEAF_COUNT_BITS - 1` of them), returned as [`build`] returns its own: for a box
/// ([`RtcdMesh::cuboid`](crate::RtcdMesh::cuboid)), whose leaf is then the solid box.
pub fn single_leaf(tri_boxes: &[Aabb]) -> (Vec<BvhNode>, Vec<u32>) {
    let count = tri_boxes.len() as u32;
    assert!(count > 0 && count < 1 << LEAF_COUNT_BITS, "{count} triangles in one leaf");
    let bounds = tri_boxes.iter().fold(Aabb::EMPTY, |b, t| b.union(*t));
    let node = BvhNode { min: bounds.min.to_array(), miss: 1, max: bounds.max.to_array(), leaf: count };
    (vec![node], (0..count).collect())
}

const BINS: usize = 12;

fn build_node(
    boxes: &[Aabb],
    centroids: &[Vec3],
    order: &mut [u32],
    first: u32,
    nodes: &mut Vec<BvhNode>,
    right_of: &mut Vec<u32>,
) {
    let bounds = order.iter().fold(Aabb::EMPTY, |b, &t| b.union(boxes[t as usize]));
    let index = nodes.len();
    nodes.push(BvhNode { min: bounds.min.to_array(), max: bounds.max.to_array(), miss: 0, leaf: 0 });
    right_of.push(0);
    let count = order.len();
    let make_leaf = |nodes: &mut Vec<BvhNode>| {
        nodes[index].leaf = (first << LEAF_COUNT_BITS) | count as u32;
    };
    if count <= LEAF_SIZE {
        make_leaf(nodes);
        return;
    }
    let cb = order.iter().fold(Aabb::EMPTY, |b, &t| b.grow(centroids[t as usize]));
    let ext = cb.extents();
    let axis = if ext.x >= ext.y && ext.x >= ext.z {
        0
    } else if ext.y >= ext.z {
        1
    } else {
        2
    };
    let split = if ext[axis] <= 0.0 {
        None
    } else {
        sah_split(boxes, centroids, order, axis, cb.min[axis], ext[axis], bounds.surface_area())
    };
    let mid = match split {
        Some(pos) => partition(order, |t| centroids[t as usize][axis] < pos),
        None => 0,
    };
    // Fall back to a median split when binning cannot separate the centroids.
    let mid = if mid == 0 || mid == count {
        order.sort_unstable_by(|&a, &b| centroids[a as usize][axis].total_cmp(&centroids[b as usize][axis]));
        count / 2
    } else {
        mid
    };
    let (left, right) = order.split_at_mut(mid);
    build_node(boxes, centroids, left, first, nodes, right_of);
    right_of[index] = nodes.len() as u32;
    build_node(boxes, centroids, right, first + mid as u32, nodes, right_of);
}

fn sah_split(
    boxes: &[Aabb],
    centroids: &[Vec3],
    order: &[u32],
    axis: usize,
    lo: f32,
    extent: f32,
    parent_area: f32,
) -> Option<f32> {
    let mut bin_box = [Aabb::EMPTY; BINS];
    let mut bin_count = [0usize; BINS];
    let scale = BINS as f32 / extent;
    let bin_of = |c: f32| (((c - lo) * scale) as usize).min(BINS - 1);
    for &t in order {
        let b = bin_of(centroids[t as usize][axis]);
        bin_box[b] = bin_box[b].union(boxes[t as usize]);
        bin_count[b] += 1;
    }
    let mut best = (f32::INFINITY, None);
    for split in 1..BINS {
        let (l, r) = bin_box.split_at(split);
        let lb = l.iter().fold(Aabb::EMPTY, |a, b| a.union(*b));
        let rb = r.iter().fold(Aabb::EMPTY, |a, b| a.union(*b));
        let lc: usize = bin_count[..split].iter().sum();
        let rc: usize = bin_count[split..].iter().sum();
        if lc == 0 || rc == 0 {
            continue;
        }
        let cost =
            1.0 + (lb.surface_area() * lc as f32 + rb.surface_area() * rc as f32) / parent_area.max(1e-30);
        if cost < best.0 {
            best = (cost, Some(lo + split as f32 / scale));
        }
    }
    best.1
}

fn partition(order: &mut [u32], pred: impl Fn(u32) -> bool) -> usize {
    let mut i = 0;
    for j in 0..order.len() {
        if pred(order[j]) {
            order.swap(i, j);
            i += 1;
        }
    }
    i
}

/// Sets miss links in the subtree rooted at `index`, whose own miss link is `miss`.
fn link_misses(nodes: &mut [BvhNode], right_of: &[u32], index: u32, miss: u32) {
    nodes[index as usize].miss = miss;
    if nodes[index as usize].leaf == 0 {
        let right = right_of[index as usize];
        link_misses(nodes, right_of, index + 1, right);
        link_misses(nodes, right_of, right, miss);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_boxes(n: usize) -> Vec<Aabb> {
        let mut s = 12345u32;
        let mut r = || {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s % 10_000) as f32 / 1000.0
        };
        (0..n)
            .map(|_| {
                let c = Vec3::new(r(), r(), r());
                Aabb::new(c, c + Vec3::new(r(), r(), r()) * 0.05)
            })
            .collect()
    }

    #[test]
    fn every_triangle_in_exactly_one_leaf_and_boxes_nest() {
        for n in [1, 3, 4, 5, 17, 900, 3456] {
            let boxes = random_boxes(n);
            let (nodes, order) = build(&boxes);
            let mut seen = vec![0u32; n];
            for node in &nodes {
                if let Some((first, count)) = node.leaf_range() {
                    assert!(count as usize <= LEAF_SIZE && count > 0);
                    for i in first..first + count {
                        let t = order[i as usize] as usize;
                        seen[t] += 1;
                        let b = boxes[t];
                        assert!(node.aabb().contains(b.min) && node.aabb().contains(b.max));
                    }
                }
            }
            assert!(seen.iter().all(|&c| c == 1), "n = {n}");
            let mut sorted = order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..n as u32).collect::<Vec<_>>());
        }
    }

    #[test]
    fn miss_links_skip_exactly_the_subtree() {
        let boxes = random_boxes(200);
        let (nodes, _) = build(&boxes);
        // Walking with "always descend" visits every node once in order; walking with "always miss"
        // from the root ends at once.
        assert_eq!(nodes[0].miss as usize, nodes.len());
        let mut i = 0usize;
        let mut visited = 0;
        while i < nodes.len() {
            visited += 1;
            i = if nodes[i].leaf != 0 { nodes[i].miss as usize } else { i + 1 };
        }
        assert_eq!(visited, nodes.len());
        // A node's miss link is past all its descendants and every node in between is inside its box.
        for (k, node) in nodes.iter().enumerate() {
            for inner in &nodes[k + 1..node.miss as usize] {
                let b = inner.aabb();
                assert!(
                    node.aabb().extended(1e-6).contains(b.min) && node.aabb().extended(1e-6).contains(b.max)
                );
            }
        }
    }
}
