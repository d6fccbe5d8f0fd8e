//! The batch pass's own broad phase: sort and sweep on x over world boxes. Rapier only registers new
//! pairs inside its step, after our batch has run, so the batch finds its candidate pairs itself.

use rtcd::Aabb;

/// Appends to `out` every pair `(i, j)`, `i < j`, of boxes that overlap (touching counts). Empty
/// boxes and boxes with NaN never overlap anything. `sorted`: scratch.
pub(crate) fn sweep_and_prune(boxes: &[Aabb], sorted: &mut Vec<(Aabb, u32)>, out: &mut Vec<(u32, u32)>) {
    sorted.clear();
    sorted.extend(
        boxes
            .iter()
            .zip(0u32..)
            .filter(|(b, _)| !b.is_empty() && b.min.is_finite() && b.max.is_finite())
            .map(|(b, i)| (*b, i)),
    );
    sorted.sort_unstable_by(|a, b| a.0.min.x.total_cmp(&b.0.min.x));
    // The y and z tests of a sweep pass or fail at random: the pairs are written without a branch
    // on them (each test writes its pair, which the next one overwrites unless it overlapped).
    let start = out.len();
    let mut len = start;
    for (k, (bi, i)) in sorted.iter().enumerate() {
        for (bj, j) in &sorted[k + 1..] {
            if bj.min.x > bi.max.x {
                break;
            }
            let overlap = (bj.min.y <= bi.max.y) & (bi.min.y <= bj.max.y) & (bj.min.z <= bi.max.z) & (bi.min.z <= bj.max.z);
            if len == out.len() {
                out.resize(len + 1024, (0, 0));
            }
            out[len] = ((*i).min(*j), (*i).max(*j));
            len += overlap as usize;
        }
    }
    out.truncate(len);
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
        let (mut sorted, mut got) = (Vec::new(), vec![(7, 7)]);
        sweep_and_prune(&boxes, &mut sorted, &mut got);
        assert_eq!(got.remove(0), (7, 7), "appends");
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
