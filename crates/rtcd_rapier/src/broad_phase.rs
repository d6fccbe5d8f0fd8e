//! The batch pass's own broad phase: sort and sweep on x over world boxes. Rapier only registers new
//! pairs inside its step, after our batch has run, so the batch finds its candidate pairs itself.

use rtcd::Aabb;

/// Appends to `out` every pair `(i, j)`, `i < j`, of boxes that overlap (touching counts). Empty
/// boxes and boxes with NaN never overlap anything.
pub(crate) fn sweep_and_prune(boxes: &[Aabb], order: &mut Vec<u32>, out: &mut Vec<(u32, u32)>) {
    order.clear();
    order.extend((0..boxes.len() as u32).filter(|&i| {
        let b = &boxes[i as usize];
        !b.is_empty() && b.min.is_finite() && b.max.is_finite()
    }));
    order.sort_unstable_by(|&a, &b| boxes[a as usize].min.x.total_cmp(&boxes[b as usize].min.x));
    for (k, &i) in order.iter().enumerate() {
        let bi = &boxes[i as usize];
        for &j in &order[k + 1..] {
            let bj = &boxes[j as usize];
            if bj.min.x > bi.max.x {
                break;
            }
            if bj.min.y <= bi.max.y && bi.min.y <= bj.max.y && bj.min.z <= bi.max.z && bi.min.z <= bj.max.z {
                out.push((i.min(j), i.max(j)));
            }
        }
    }
}

/// Sorts pairs `(i, j)` of indices below `n` by `i`, then `j` (a two-pass counting sort, linear in
/// the pairs and `n`). The batch's pairs then come in the same order from step to step, whatever the
/// sweep's order: state kept per pair is found by walking it alongside.
pub(crate) fn sort_pairs(pairs: &mut Vec<(u32, u32)>, n: usize, scratch: &mut Vec<(u32, u32)>, counts: &mut Vec<u32>) {
    // Least significant key first; each pass is stable.
    for pass in 0..2 {
        let key = |p: &(u32, u32)| if pass == 0 { p.1 } else { p.0 } as usize;
        counts.clear();
        counts.resize(n + 1, 0);
        for p in pairs.iter() {
            counts[key(p) + 1] += 1;
        }
        for k in 1..counts.len() {
            counts[k] += counts[k - 1];
        }
        scratch.clear();
        scratch.resize(pairs.len(), (0, 0));
        for p in pairs.iter() {
            let at = &mut counts[key(p)];
            scratch[*at as usize] = *p;
            *at += 1;
        }
        std::mem::swap(pairs, scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn matches_brute_force() {
        let mut seed = 7u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        let boxes: Vec<Aabb> = (0..200)
            .map(|_| {
                let c = Vec3::new(rnd(), rnd(), rnd()) * 10.0;
                let h = Vec3::new(rnd(), rnd(), rnd()) * 0.8;
                Aabb::new(c - h, c + h)
            })
            .chain([Aabb::EMPTY, Aabb::new(Vec3::splat(f32::NAN), Vec3::ONE)])
            .collect();
        let (mut order, mut got) = (Vec::new(), Vec::new());
        sweep_and_prune(&boxes, &mut order, &mut got);
        got.sort_unstable();
        let valid = |b: &Aabb| !b.is_empty() && b.min.is_finite() && b.max.is_finite();
        let mut want = Vec::new();
        for i in 0..boxes.len() {
            for j in i + 1..boxes.len() {
                if valid(&boxes[i]) && valid(&boxes[j]) && !boxes[i].intersection(boxes[j]).is_empty() {
                    want.push((i as u32, j as u32));
                }
            }
        }
        assert!(!want.is_empty());
        assert_eq!(got, want);
    }

    #[test]
    fn sorts_pairs_by_first_then_second() {
        let mut seed = 11u32;
        let mut pairs: Vec<(u32, u32)> = (0..500)
            .map(|_| {
                seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                ((seed >> 8) % 37, (seed >> 20) % 37)
            })
            .collect();
        let mut want = pairs.clone();
        want.sort_unstable();
        let (mut scratch, mut counts) = (Vec::new(), Vec::new());
        sort_pairs(&mut pairs, 37, &mut scratch, &mut counts);
        assert_eq!(pairs, want);
        sort_pairs(&mut pairs, 37, &mut scratch, &mut counts);
        assert_eq!(pairs, want, "sorting twice changes nothing");
        let mut none = Vec::new();
        sort_pairs(&mut none, 0, &mut scratch, &mut counts);
        assert!(none.is_empty());
    }
}
