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
            let overlap = overlap(bi, bj);
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
pub(crate) fn sort_pairs(
    pairs: &mut Vec<(u32, u32)>,
    n: usize,
    scratch: &mut Vec<(u32, u32)>,
    counts: &mut Vec<u32>,
) {
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

/// Whether two boxes overlap (touching counts), as [`sweep_and_prune`] decides it.
#[inline]
fn overlap(a: &Aabb, b: &Aabb) -> bool {
    (b.min.x <= a.max.x)
        & (a.min.x <= b.max.x)
        & (b.min.y <= a.max.y)
        & (a.min.y <= b.max.y)
        & (b.min.z <= a.max.z)
        & (a.min.z <= b.max.z)
}

/// [`sweep_and_prune`] then [`sort_pairs`], reusing the last sweep while the boxes stay put. A
/// sweep is made over boxes grown by a slack and kept; at the next step, if the same ids have boxes
/// each inside its grown one, every overlapping pair is among the kept ones, and only those are
/// tested. A few boxes out of their grown ones are grown again and their pairs found against every
/// other grown box; more make a new sweep. A resting pile makes a sweep now and then instead of
/// every step.
#[derive(Debug, Default)]
pub(crate) struct CachedSweep {
    ids: Vec<u64>,
    grown: Vec<Aabb>,
    pairs: Vec<(u32, u32)>,
    sorted: Vec<(Aabb, u32)>,
    scratch: Vec<(u32, u32)>,
    counts: Vec<u32>,
    escaped: Vec<u32>,
    is_escaped: Vec<bool>,
    found: Vec<(u32, u32)>,
    /// Sweeps made (for tests and figures).
    pub(crate) sweeps: u64,
    /// Boxes grown again without a sweep.
    pub(crate) regrown: u64,
}

/// Most boxes grown again without a sweep, as a share of all boxes.
const REGROW_SHARE: usize = 16;

impl CachedSweep {
    /// Writes to `out` (cleared first) every pair `(i, j)`, `i < j`, of `boxes` that overlap, sorted
    /// by `i` then `j` (as `sweep_and_prune` then `sort_pairs`). `ids[i]` names box `i` from step to
    /// step; `slack`: how far a box may move before the next sweep.
    pub(crate) fn candidates(&mut self, ids: &[u64], boxes: &[Aabb], slack: f32, out: &mut Vec<(u32, u32)>) {
        out.clear();
        let valid = |b: &Aabb| !b.is_empty() && b.min.is_finite() && b.max.is_finite();
        let grow = |b: &Aabb| if valid(b) { b.extended(slack.max(0.0)) } else { *b };
        self.escaped.clear();
        let mut reusable = self.ids == ids;
        if reusable {
            self.escaped.extend(boxes.iter().zip(&self.grown).zip(0u32..).filter_map(|((b, g), i)| {
                // Invalid boxes overlap nothing: they may stay invalid.
                let inside = if valid(b) {
                    valid(g) && g.min.cmple(b.min).all() && b.max.cmple(g.max).all()
                } else {
                    !valid(g)
                };
                (!inside).then_some(i)
            }));
            reusable = self.escaped.len() <= boxes.len() / REGROW_SHARE;
        }
        if reusable && !self.escaped.is_empty() {
            // The escaped boxes' pairs go; their new ones are found against every grown box and
            // merged in, in order.
            self.regrown += self.escaped.len() as u64;
            self.is_escaped.clear();
            self.is_escaped.resize(boxes.len(), false);
            for &e in &self.escaped {
                self.is_escaped[e as usize] = true;
                self.grown[e as usize] = grow(&boxes[e as usize]);
            }
            let is_escaped = &self.is_escaped;
            self.pairs.retain(|&(i, j)| !is_escaped[i as usize] && !is_escaped[j as usize]);
            self.found.clear();
            for &e in &self.escaped {
                let ge = &self.grown[e as usize];
                if !valid(ge) {
                    continue;
                }
                for (k, gk) in self.grown.iter().enumerate() {
                    let k = k as u32;
                    // A pair of two escaped boxes is found once, from its lower one.
                    if k == e || (is_escaped[k as usize] && k < e) || !valid(gk) || !overlap(ge, gk) {
                        continue;
                    }
                    self.found.push((e.min(k), e.max(k)));
                }
            }
            self.found.sort_unstable();
            // Merge the two sorted lists.
            let (a, b) = (&self.pairs, &self.found);
            let (mut i, mut j) = (0, 0);
            self.scratch.clear();
            while i < a.len() || j < b.len() {
                if j == b.len() || (i < a.len() && a[i] <= b[j]) {
                    self.scratch.push(a[i]);
                    i += 1;
                } else {
                    self.scratch.push(b[j]);
                    j += 1;
                }
            }
            std::mem::swap(&mut self.pairs, &mut self.scratch);
        }
        if !reusable {
            self.sweeps += 1;
            self.ids.clear();
            self.ids.extend_from_slice(ids);
            self.grown.clear();
            self.grown.extend(boxes.iter().map(grow));
            self.pairs.clear();
            sweep_and_prune(&self.grown, &mut self.sorted, &mut self.pairs);
            sort_pairs(&mut self.pairs, boxes.len(), &mut self.scratch, &mut self.counts);
        }
        out.extend(self.pairs.iter().filter(|&&(i, j)| overlap(&boxes[i as usize], &boxes[j as usize])));
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

    /// The cached sweep gives what a fresh sweep and sort give, step after step, while boxes
    /// creep, jump, turn invalid and colliders come and go; it sweeps again only when needed.
    #[test]
    fn cached_sweep_equals_a_fresh_one() {
        let mut seed = 5u32;
        let mut rnd = move || {
            seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (seed >> 8) as f32 / (1u32 << 24) as f32
        };
        let mut centres: Vec<Vec3> = (0..150).map(|_| Vec3::new(rnd(), rnd(), rnd()) * 6.0).collect();
        let mut ids: Vec<u64> = (0..150).collect();
        let mut cached = CachedSweep::default();
        let (mut got, mut want, mut sorted, mut scratch, mut counts) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for step in 0..200 {
            // Creeping (under the slack over a few steps), and now and then a jump.
            for c in centres.iter_mut() {
                *c += (Vec3::new(rnd(), rnd(), rnd()) - 0.5) * 0.004;
            }
            if step % 20 == 10 {
                centres[7] += Vec3::X;
            }
            if step % 50 == 25 {
                centres.pop();
                ids.pop();
            }
            if step % 50 == 40 {
                centres.push(Vec3::splat(3.0));
                ids.push(1000 + step);
            }
            let mut boxes: Vec<Aabb> =
                centres.iter().map(|&c| Aabb::new(c - Vec3::splat(0.4), c + Vec3::splat(0.4))).collect();
            if step % 30 == 7 {
                boxes[3] = Aabb::EMPTY;
                boxes[4] = Aabb::new(Vec3::splat(f32::NAN), Vec3::ONE);
            }
            cached.candidates(&ids, &boxes, 0.01, &mut got);
            want.clear();
            sweep_and_prune(&boxes, &mut sorted, &mut want);
            sort_pairs(&mut want, boxes.len(), &mut scratch, &mut counts);
            assert_eq!(got, want, "step {step}");
        }
        println!("{} sweeps, {} boxes grown again in 200 steps", cached.sweeps, cached.regrown);
        assert!(cached.sweeps > 5 && cached.sweeps < 100, "{} sweeps", cached.sweeps);
        assert!(cached.regrown > 50, "{} boxes grown again", cached.regrown);
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
