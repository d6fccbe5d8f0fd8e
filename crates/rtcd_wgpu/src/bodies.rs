//! The bodies of a step and the kinds of its pairs, as the device keeps them.
//!
//! **Bodies.** The host uploads one world pose per body a step ([`BodyTable`]), and the device makes
//! each pair's relative pose of its two bodies' (`pair_assemble.wgsl`): upload grows with bodies, not
//! pairs. A body is known by its id ([`rtcd::PairKey::a`], [`rtcd::PairKey::b`]) and keeps its slot
//! from step to step while some pair of the step names it; a pair without world poses
//! ([`rtcd::PairInput::world`]), or whose id came with another pose earlier in the same step, has a
//! body of its own holding its `pos12`, against slot 0, which holds the identity.
//!
//! **Kinds.** What a pair keeps on the device that its two meshes and lengths decide (reach,
//! solid-behind and candidate-region boxes, mesh places: [`GpuPairStatic`]) is one record per pair
//! of meshes ([`KindTable`]), uploaded once; a pair new in its slot uploads only its link (slot,
//! bodies, kind: 16 bytes). Kinds live as long as the backend, as its meshes do.

use rtcd::{PairKey, Pose};
use rustc_hash::FxHashMap;

use crate::gpu_types::{GpuBody, GpuPairStatic, quat4, vec4};

/// Who a body slot belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum BodyKey {
    /// A body by its id, with its world pose.
    Id(u64),
    /// A pair's own body (its `pos12` against the identity at slot 0).
    Pair(PairKey),
}

/// Body slots and their poses (see the module docs). Slot 0 is the identity.
pub(crate) struct BodyTable {
    slots: FxHashMap<BodyKey, u32>,
    /// By slot: whose it is (`None`: free, or slot 0).
    owner: Vec<Option<BodyKey>>,
    free: Vec<u32>,
    /// By slot: the pose uploaded this step.
    poses: Vec<GpuBody>,
    /// By slot: the step that last named it (0: free).
    seen: Vec<u64>,
    step: u64,
}

const IDENTITY: GpuBody = GpuBody { q: [0.0, 0.0, 0.0, 1.0], t: [0.0; 4] };

fn body(p: &Pose) -> GpuBody {
    GpuBody { q: quat4(p.rotation), t: vec4(p.translation, 0.0) }
}

impl BodyTable {
    pub fn new() -> Self {
        Self {
            slots: FxHashMap::default(),
            owner: vec![None],
            free: Vec::new(),
            poses: vec![IDENTITY],
            seen: vec![u64::MAX],
            step: 1,
        }
    }

    /// Starts a step: slots not named since the last `begin` are freed.
    pub fn begin(&mut self) {
        let last = self.step;
        let (seen, free, owner) = (&mut self.seen, &mut self.free, &mut self.owner);
        self.slots.retain(|_, s| {
            let keep = seen[*s as usize] == last;
            if !keep {
                seen[*s as usize] = 0;
                owner[*s as usize] = None;
                free.push(*s);
            }
            keep
        });
        self.step += 1;
    }

    /// The two body slots of a pair this step: its bodies' by id, with their world poses
    /// ([`world_poses`]), or its own against the identity.
    /// `last`: the pair's bodies' slots of its last step, if it had one; where those slots still
    /// belong to the same bodies they are taken without a lookup.
    pub fn pair_bodies(
        &mut self,
        key: PairKey,
        world: Option<[Pose; 2]>,
        pos12: &Pose,
        last: Option<[u32; 2]>,
    ) -> [u32; 2] {
        let held = |table: &Self, slot: u32, k: BodyKey| {
            (slot != 0 && table.owner.get(slot as usize) == Some(&Some(k))).then_some(slot)
        };
        if let Some([p1, p2]) = world {
            let (b1, b2) = (body(&p1), body(&p2));
            let (k1, k2) = (BodyKey::Id(key.a), BodyKey::Id(key.b));
            let a = match last.and_then(|[a, _]| held(self, a, k1)) {
                Some(s) => self.named_at(s, b1),
                None => self.named(k1, b1),
            };
            let b = match last.and_then(|[_, b]| held(self, b, k2)) {
                Some(s) => self.named_at(s, b2),
                None => self.named(k2, b2),
            };
            if let (Some(a), Some(b)) = (a, b) {
                return [a, b];
            }
        }
        let k = BodyKey::Pair(key);
        let own = match last.and_then(|[_, b]| held(self, b, k)) {
            Some(s) => self.named_at(s, body(pos12)),
            None => self.named(k, body(pos12)),
        };
        [0, own.expect("a pair's own body is named once a step")]
    }

    /// [`BodyTable::named`] for a key known to hold slot `s`.
    fn named_at(&mut self, s: u32, pose: GpuBody) -> Option<u32> {
        let i = s as usize;
        if self.seen[i] == self.step {
            return (self.poses[i] == pose).then_some(s);
        }
        self.seen[i] = self.step;
        self.poses[i] = pose;
        Some(s)
    }

    /// The slot of `key` with pose `pose` this step: a new one for a key first named this step;
    /// `None` when the key was already named this step with another pose.
    fn named(&mut self, key: BodyKey, pose: GpuBody) -> Option<u32> {
        let step = self.step;
        if let Some(&s) = self.slots.get(&key) {
            return self.named_at(s, pose);
        }
        let s = self.free.pop().unwrap_or_else(|| {
            self.poses.push(IDENTITY);
            self.seen.push(0);
            self.owner.push(None);
            self.poses.len() as u32 - 1
        });
        self.slots.insert(key, s);
        self.owner[s as usize] = Some(key);
        self.seen[s as usize] = step;
        self.poses[s as usize] = pose;
        Some(s)
    }

    /// Every slot's pose, to upload (free slots hold stale poses no pair reads).
    pub fn poses(&self) -> &[GpuBody] {
        &self.poses
    }
}

/// A pair's world poses ([`rtcd::PairInput::world`]) where they are valid and make its `pos12`
/// (`w[0].inv_mul(&w[1])`, within rounding: 1e-5 of the poses' distance from the origin plus a
/// metre, and 1e-6 in the rotations' dot product, 3 mrad); `None` otherwise, and the pair is its
/// own body.
pub(crate) fn world_poses(world: Option<[Pose; 2]>, pos12: &Pose) -> Option<[Pose; 2]> {
    let w = world?;
    if !(w[0].is_valid() && w[1].is_valid()) {
        return None;
    }
    let made = w[0].inv_mul(&w[1]);
    let scale = 1.0 + w[0].translation.length() + w[1].translation.length();
    ((made.translation - pos12.translation).length() <= 1e-5 * scale
        && made.rotation.dot(pos12.rotation).abs() >= 1.0 - 1e-6)
        .then_some(w)
}

/// One [`GpuPairStatic`] per pair of meshes (see the module docs).
pub(crate) struct KindTable {
    kinds: FxHashMap<(u64, u64), u32>,
    /// Kinds made since the last [`KindTable::take_new`], in index order from `uploaded`.
    new: Vec<GpuPairStatic>,
    uploaded: u32,
}

impl KindTable {
    pub fn new() -> Self {
        Self { kinds: FxHashMap::default(), new: Vec::new(), uploaded: 0 }
    }

    /// The kind of a pair of meshes, made with `make` the first time.
    pub fn kind(&mut self, mesh_ids: (u64, u64), make: impl FnOnce() -> GpuPairStatic) -> u32 {
        if let Some(&k) = self.kinds.get(&mesh_ids) {
            return k;
        }
        let k = self.uploaded + self.new.len() as u32;
        self.new.push(make());
        self.kinds.insert(mesh_ids, k);
        k
    }

    /// Kinds in all (uploaded or not).
    pub fn len(&self) -> u32 {
        self.uploaded + self.new.len() as u32
    }

    /// The kinds made since the last call and the index of the first of them.
    pub fn take_new(&mut self) -> (u32, Vec<GpuPairStatic>) {
        let first = self.uploaded;
        let new = std::mem::take(&mut self.new);
        self.uploaded += new.len() as u32;
        (first, new)
    }
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::*;

    fn pose(x: f32) -> Pose {
        Pose::new(Vec3::new(x, 0.0, 0.0), Quat::from_rotation_y(x))
    }

    /// The relative pose of bodies at `pose(a)` and `pose(b)`.
    fn rel(a: f32, b: f32) -> Pose {
        pose(a).inv_mul(&pose(b))
    }

    #[test]
    fn bodies_keep_their_slots_and_share_them_across_pairs() {
        let mut t = BodyTable::new();
        t.begin();
        let ab = t.pair_bodies(PairKey::new(1, 2), Some([pose(1.0), pose(2.0)]), &rel(1.0, 2.0), None);
        let ac = t.pair_bodies(PairKey::new(1, 3), Some([pose(1.0), pose(3.0)]), &rel(1.0, 3.0), None);
        assert_eq!(ab[0], ac[0], "body 1 has one slot");
        assert!(ab[0] != 0 && ab[1] != ab[0] && ac[1] != ab[1]);
        assert_eq!(t.poses()[ab[1] as usize], body(&pose(2.0)));
        // Next step: the same slots, new poses; body 3 is gone and its slot is reused.
        t.begin();
        let ab2 = t.pair_bodies(PairKey::new(1, 2), Some([pose(1.5), pose(2.5)]), &rel(1.5, 2.5), None);
        assert_eq!(ab2, ab);
        assert_eq!(t.poses()[ab[0] as usize], body(&pose(1.5)));
        t.begin();
        let d = t.pair_bodies(PairKey::new(1, 4), Some([pose(1.5), pose(4.0)]), &rel(1.5, 4.0), None);
        assert_eq!(d[0], ab[0]);
        assert!(d[1] == ac[1] || d[1] == ab[1], "a freed slot is reused: {d:?}");
    }

    /// A pair's last slots are taken without a lookup while they hold its bodies; once a slot was
    /// freed and given to another body, the pair finds its body's slot as without them: the same
    /// slots as a table that is never given them.
    #[test]
    fn last_slots_stand_only_while_they_hold_the_same_bodies() {
        let (mut hinted, mut plain) = (BodyTable::new(), BodyTable::new());
        let mut last: FxHashMap<PairKey, [u32; 2]> = FxHashMap::default();
        // Step by step, the pairs of the step: (a, b) with body b at x = b + step / 4.
        let steps: [&[(u64, u64)]; 4] =
            [&[(1, 2), (1, 3)], &[(1, 2)], &[(1, 4), (5, 6)], &[(1, 3), (1, 4), (5, 6)]];
        for (k, pairs) in steps.iter().enumerate() {
            hinted.begin();
            plain.begin();
            for &(a, b) in pairs.iter() {
                let key = PairKey::new(a, b);
                let (pa, pb) = (a as f32 + k as f32 / 4.0, b as f32 + k as f32 / 4.0);
                let world = Some([pose(pa), pose(pb)]);
                let with = hinted.pair_bodies(key, world, &rel(pa, pb), last.get(&key).copied());
                let without = plain.pair_bodies(key, world, &rel(pa, pb), None);
                assert_eq!(with, without, "step {k}, pair {key:?}");
                assert_eq!(hinted.poses()[with[1] as usize], body(&pose(pb)));
                last.insert(key, with);
            }
        }
        // Body 3's slot was freed after step 1 and body 4 took it at step 2; at step 3 the pair
        // (1, 3) held that slot from step 0, and must not take it.
        let (s3, s4) = (last[&PairKey::new(1, 3)][1], last[&PairKey::new(1, 4)][1]);
        assert_ne!(s3, s4);
    }

    /// A pair without world poses, or whose body id came with another pose in the step, or whose
    /// world poses are not valid or do not make its `pos12`, has its own body holding its `pos12`
    /// against the identity.
    #[test]
    fn pairs_without_consistent_world_poses_have_their_own_body() {
        let mut t = BodyTable::new();
        t.begin();
        let plain = t.pair_bodies(PairKey::new(7, 8), None, &pose(0.5), None);
        assert_eq!(plain[0], 0);
        assert_eq!(t.poses()[0], IDENTITY);
        assert_eq!(t.poses()[plain[1] as usize], body(&pose(0.5)));
        let first = t.pair_bodies(PairKey::new(1, 2), Some([pose(1.0), pose(2.0)]), &rel(1.0, 2.0), None);
        let clash = t.pair_bodies(PairKey::new(1, 3), Some([pose(1.25), pose(3.0)]), &rel(1.25, 3.0), None);
        assert_ne!(first[0], 0);
        assert_eq!(clash[0], 0);
        assert_eq!(t.poses()[clash[1] as usize], body(&rel(1.25, 3.0)));
        assert_eq!(t.poses()[first[0] as usize], body(&pose(1.0)), "the first pose of body 1 stands");
    }

    /// World poses are taken only where they are valid and make the pair's `pos12`.
    #[test]
    fn world_poses_must_make_the_relative_pose() {
        let (p1, p2) = (pose(4.0), pose(5.0));
        assert_eq!(world_poses(Some([p1, p2]), &p1.inv_mul(&p2)), Some([p1, p2]));
        assert_eq!(world_poses(None, &p1.inv_mul(&p2)), None);
        assert_eq!(world_poses(Some([p1, p2]), &pose(0.25)), None);
        let far = Pose::new(Vec3::new(1000.0, 0.0, 0.0), p2.rotation);
        let shifted = Pose::new(p1.inv_mul(&far).translation + Vec3::splat(0.05), p1.inv_mul(&far).rotation);
        assert_eq!(world_poses(Some([p1, far]), &shifted), None, "5 cm off at 1 km");
        let nan = Pose::new(Vec3::splat(f32::NAN), Quat::IDENTITY);
        assert_eq!(world_poses(Some([nan, p2]), &p1.inv_mul(&p2)), None);
    }

    #[test]
    fn kinds_are_made_once_per_pair_of_meshes() {
        let mut k = KindTable::new();
        let mut made = 0;
        let mut make = || {
            made += 1;
            GpuPairStatic::default()
        };
        assert_eq!(k.kind((1, 2), &mut make), 0);
        assert_eq!(k.kind((2, 1), &mut make), 1);
        assert_eq!(k.kind((1, 2), &mut make), 0);
        let (first, new) = k.take_new();
        assert_eq!((first, new.len()), (0, 2));
        assert_eq!(k.kind((3, 3), &mut make), 2);
        assert_eq!(k.take_new().0, 2);
        assert_eq!(made, 3);
        assert_eq!(k.len(), 3);
    }
}
