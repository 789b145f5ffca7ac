//! Shadow state per memory cell and the raw findings of a run.
//!
//! Within a group, time is cut into intervals by barriers: two accesses of
//! different threads conflict when they fall in the same interval and one of
//! them writes. As in FastTrack, a cell keeps epochs, not access histories:
//! the interval it was last touched in, its last write and up to two readers
//! of that interval from different threads (whichever thread writes next, at
//! least one of them is another thread when any is). That is a 16-byte
//! [`Cell`]; the accesses it names are [`Sites`], interned per interval and
//! dropped when the interval ends, so a witness keeps its thread, line and
//! loop iterations without a record per access.
//!
//! Between groups every access conflicts; each device cell keeps one
//! [`Wit`] for the first write (or atomic, when no group wrote) and one for
//! the first read of the groups folded so far (see `CrossShadow` in lib.rs).

use std::collections::HashMap;

pub(crate) const NONE: u32 = u32::MAX;

/// One access: who, where (IR value), in which iterations of the two
/// innermost loops around it (so a report can name the iteration of the
/// loop the two conflicting accesses share).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Rec {
    pub thread: u32,
    pub inst: u32,
    /// Back edges taken in the innermost loop (`NONE` outside loops).
    pub iter: u32,
    /// The same for the loop around that one.
    pub outer_iter: u32,
    /// Wave of the thread, and wave-level barriers its wave had passed.
    pub wave: u32,
    pub wave_epoch: u32,
    pub epoch: u32,
}

impl Rec {
    pub const EMPTY: Rec = Rec { thread: NONE, inst: NONE, iter: NONE, outer_iter: NONE, wave: NONE, wave_epoch: NONE, epoch: NONE };
    /// An access of another thread in the same interval, not ordered by a
    /// wave-level barrier of a wave both threads belong to.
    fn unordered_with(&self, me: &Rec) -> bool {
        self.thread != me.thread && !(self.wave == me.wave && self.wave_epoch != me.wave_epoch)
    }
    fn same_site(&self, other: &Rec) -> bool {
        (self.thread, self.inst, self.iter, self.outer_iter, self.wave_epoch)
            == (other.thread, other.inst, other.iter, other.outer_iter, other.wave_epoch)
    }
}

/// The accesses the cells of one memory space name in the current interval.
/// A thread that repeats an access (same instruction and iterations) reuses
/// its site, so straight code adds one site per thread and instruction.
pub(crate) struct Sites {
    recs: Vec<Rec>,
    /// Per thread, its latest site (`NONE`: none this interval).
    last: Vec<u32>,
}

impl Sites {
    pub fn new(threads: usize) -> Sites {
        Sites { recs: Vec::new(), last: vec![NONE; threads] }
    }
    fn id(&mut self, me: &Rec) -> u32 {
        let last = &mut self.last[me.thread as usize];
        if *last != NONE && self.recs[*last as usize].same_site(me) {
            return *last;
        }
        // Site ids leave the top three bits free for flags; an interval with
        // 2^29 sites would need 12 GiB of them first.
        *last = self.recs.len() as u32;
        self.recs.push(*me);
        *last
    }
    fn get(&self, id: u32, epoch: u32) -> Rec {
        Rec { epoch, ..self.recs[(id & SITE_BITS) as usize] }
    }
    /// The interval ended: no cell names these sites any more.
    pub fn clear(&mut self) {
        if !self.recs.is_empty() {
            self.recs.clear();
            self.last.fill(NONE);
        }
    }
}

/// Top bit of `Cell::w` (the last write was atomic) and of `Cell::epoch`
/// (the cell was written in an earlier interval).
const FLAG: u32 = 1 << 31;
/// With [`FLAG`] on `Cell::w`: the atomic was a store, or an exchange.
const STORE_BIT: u32 = 1 << 30;
const SWAP_BIT: u32 = 1 << 29;
/// The bits of `Cell::w` that name the site.
const SITE_BITS: u32 = !(FLAG | STORE_BIT | SWAP_BIT);

/// Shadow of one cell within a group: 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cell {
    /// The interval `w`, `r1` and `r2` belong to, with [`FLAG`] when the cell
    /// was written before it.
    epoch: u32,
    /// Site of the last write of the interval, with [`FLAG`] when atomic; `NONE`: none.
    w: u32,
    /// First reader of the interval, and the first reader after it that is another thread.
    r1: u32,
    r2: u32,
}

impl Cell {
    /// Never written (group-shared memory when a group starts).
    pub const EMPTY: Cell = Cell { epoch: 0, w: NONE, r1: NONE, r2: NONE };
    /// A cell whose contents exist before the group starts (device memory,
    /// initialised globals): written before interval 1, where groups start.
    pub const INITIALISED: Cell = Cell { epoch: FLAG, ..Cell::EMPTY };
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Read,
    Write,
    /// An arithmetic read-modify-write atomic (add, min, or, …).
    Atomic,
    /// An atomic load.
    AtomicRead,
    /// An atomic overwrite whose old value nobody reads (`atomicStore`).
    AtomicStore,
    /// An exchange or compare-exchange whose old value is read (a lock, a hand-off).
    AtomicSwap,
}

impl Kind {
    pub fn verb(self) -> &'static str {
        match self {
            Kind::Read => "reads",
            Kind::Write => "writes",
            Kind::Atomic => "atomically updates",
            Kind::AtomicRead => "atomically reads",
            Kind::AtomicStore => "atomically overwrites",
            Kind::AtomicSwap => "atomically exchanges",
        }
    }
    pub fn past(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Write => "wrote",
            Kind::Atomic => "atomically updated",
            Kind::AtomicRead => "atomically read",
            Kind::AtomicStore => "atomically overwrote",
            Kind::AtomicSwap => "atomically exchanged",
        }
    }
    pub fn writes(self) -> bool {
        !matches!(self, Kind::Read | Kind::AtomicRead)
    }
    /// Whether the access reads the cell (a read-modify-write does).
    pub fn reads(self) -> bool {
        !matches!(self, Kind::Write | Kind::AtomicStore)
    }
    pub fn atomic(self) -> bool {
        !matches!(self, Kind::Read | Kind::Write)
    }
    /// Two atomics conflict only where one overwrites what the other adds up.
    fn atomics_meet(self, other: Kind) -> bool {
        matches!((self, other), (Kind::Atomic, Kind::AtomicStore) | (Kind::AtomicStore, Kind::Atomic))
    }
    /// The bits of [`Cell::w`] that keep which atomic the last write was.
    fn write_bits(self) -> u32 {
        match self {
            Kind::Read | Kind::Write => 0,
            Kind::Atomic | Kind::AtomicRead => FLAG,
            Kind::AtomicStore => FLAG | STORE_BIT,
            Kind::AtomicSwap => FLAG | SWAP_BIT,
        }
    }
    fn of_write_bits(w: u32) -> Kind {
        match (w & FLAG != 0, w & STORE_BIT != 0, w & SWAP_BIT != 0) {
            (false, ..) => Kind::Write,
            (true, true, _) => Kind::AtomicStore,
            (true, _, true) => Kind::AtomicSwap,
            _ => Kind::Atomic,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Hazard {
    Raw,
    War,
    Waw,
    /// Read of a cell no thread has written.
    Uninit,
    /// Read of a cell first written in this interval, by another thread.
    UnsyncedFirst,
}

/// Checks one access against the cell's history, then records it.
/// Returns the earlier conflicting access, if any.
pub(crate) fn check(cell: &mut Cell, sites: &mut Sites, kind: Kind, me: Rec, shared: bool) -> Option<(Hazard, Rec, Kind)> {
    let e = me.epoch;
    if cell.epoch & !FLAG != e {
        let written = cell.epoch & FLAG != 0 || cell.w != NONE;
        *cell = Cell { epoch: e | if written { FLAG } else { 0 }, ..Cell::EMPTY };
    }
    let written_before = cell.epoch & FLAG != 0;
    let w = (cell.w != NONE).then(|| sites.get(cell.w, e));
    // Decoded only where needed: this runs for every access.
    let w_bits = cell.w;
    let w_kind = || Kind::of_write_bits(w_bits);
    let both_atomic = kind.atomic() && w.is_some() && w_bits & FLAG != 0;
    let w_other = w.is_some_and(|w| w.unordered_with(&me));
    let mut hit = None;
    if kind.reads() {
        if shared && !written_before && w.is_none() {
            hit = Some((Hazard::Uninit, Rec::EMPTY, Kind::Write));
        } else if w_other && !both_atomic {
            let h = if shared && !written_before { Hazard::UnsyncedFirst } else { Hazard::Raw };
            hit = w.map(|w| (h, w, w_kind()));
        }
    }
    if kind.writes() {
        if hit.is_none() && w_other && (!both_atomic || kind.atomics_meet(w_kind())) {
            hit = w.map(|w| (Hazard::Waw, w, w_kind()));
        }
        if hit.is_none() {
            for r in [cell.r1, cell.r2] {
                if r == NONE {
                    break;
                }
                let r = sites.get(r, e);
                if r.unordered_with(&me) {
                    hit = Some((Hazard::War, r, Kind::Read));
                    break;
                }
            }
        }
        // An atomic store stays the write an update meets: later updates by
        // other threads conflict with the store, not with the updates.
        if !(kind == Kind::Atomic && both_atomic && w_kind() == Kind::AtomicStore) {
            cell.w = sites.id(&me) | kind.write_bits();
        }
    } else if kind == Kind::Read {
        if cell.r1 == NONE {
            cell.r1 = sites.id(&me);
        } else if cell.r2 == NONE && sites.get(cell.r1, e).thread != me.thread {
            cell.r2 = sites.id(&me);
        }
    }
    hit
}

/// A device access in the cross-group shadow: 12 bytes. Only the innermost
/// loop's iteration is kept (below 65 535).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Wit {
    pub group: u32,
    /// Instruction, with [`FLAG`] for atomics; `NONE`: no access.
    pub inst: u32,
    pub thread: u16,
    pub iter: u16,
}

impl Wit {
    pub const EMPTY: Wit = Wit { group: NONE, inst: NONE, thread: 0, iter: 0 };
    pub fn new(group: u32, rec: &Rec, atomic: bool) -> Wit {
        Wit { group, inst: rec.inst | if atomic { FLAG } else { 0 }, thread: rec.thread as u16, iter: rec.iter.min(u16::MAX as u32) as u16 }
    }
    pub fn is_some(&self) -> bool {
        self.inst != NONE
    }
    pub fn atomic(&self) -> bool {
        self.is_some() && self.inst & FLAG != 0
    }
    /// The access for a report (`kind_if_plain` unless it was atomic).
    pub fn who(&self, kind_if_plain: Kind) -> Who {
        let iter = if self.iter == u16::MAX { NONE } else { self.iter as u32 };
        let rec = Rec { thread: self.thread as u32, inst: self.inst & !FLAG, iter, outer_iter: NONE, wave: NONE, wave_epoch: NONE, epoch: NONE };
        Who { group: self.group, rec, kind: if self.atomic() { Kind::Atomic } else { kind_if_plain } }
    }
}

/// What groups did to one device cell: the first write (or, until a group
/// writes, the first atomic) and the first plain read. Enough to find every
/// conflict with a later group: a write conflicts with either, a read with
/// the first, an atomic with a plain write or a read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Firsts {
    pub write: Wit,
    pub read: Wit,
}

impl Firsts {
    pub const EMPTY: Firsts = Firsts { write: Wit::EMPTY, read: Wit::EMPTY };
    /// Notes an access of `group`; witnesses of other groups count as none.
    pub fn note(&mut self, kind: Kind, group: u32, me: &Rec) {
        match kind {
            Kind::Read if self.read.group != group => self.read = Wit::new(group, me, false),
            Kind::Read => {}
            Kind::Write | Kind::Atomic | Kind::AtomicRead | Kind::AtomicStore | Kind::AtomicSwap => {
                let atomic = kind != Kind::Write;
                if self.write.group != group || (self.write.atomic() && !atomic) {
                    self.write = Wit::new(group, me, atomic);
                }
            }
        }
    }
    pub fn is_some(&self) -> bool {
        self.write.is_some() || self.read.is_some()
    }
    /// Conflicts of a later group's accesses with these: (later, earlier).
    pub fn conflicts(&self, later: &Firsts) -> impl Iterator<Item = (Who, Who)> {
        let w = |x: &Wit| x.who(Kind::Write);
        let r = |x: &Wit| x.who(Kind::Read);
        let lw = later.write;
        let pairs = [
            (lw.is_some() && self.write.is_some() && !(lw.atomic() && self.write.atomic())).then(|| (w(&lw), w(&self.write))),
            (lw.is_some() && self.read.is_some()).then(|| (w(&lw), r(&self.read))),
            (later.read.is_some() && self.write.is_some()).then(|| (r(&later.read), w(&self.write))),
        ];
        pairs.into_iter().flatten()
    }
    pub fn absorb(&mut self, later: &Firsts) {
        if !self.write.is_some() || (self.write.atomic() && later.write.is_some() && !later.write.atomic()) {
            self.write = later.write;
        }
        if !self.read.is_some() {
            self.read = later.read;
        }
    }
}

/// An access named for a report: group (linear), thread (linear in group), kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Who {
    pub group: u32,
    pub rec: Rec,
    pub kind: Kind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// Finished, at this code slot (its return).
    Finished(u32),
    /// Waiting at the barrier in this code slot.
    Barrier(u32),
}

#[derive(Clone, Debug)]
pub(crate) enum Event {
    Hazard {
        hazard: Hazard,
        device: bool,
        alloc: u32,
        cell: u64,
        later: Who,
        earlier: Option<Who>,
    },
    OutOfBounds {
        alloc: u32,
        cell: i64,
        who: Who,
    },
    /// An access through a null or otherwise invalid pointer.
    BadPointer {
        who: Who,
    },
    ReadOnlyWrite {
        alloc: u32,
        cell: u64,
        who: Who,
    },
    Divergence {
        group: u32,
        barrier_pc: u32,
        reached: u32,
        total: u32,
        others: Vec<(Place, Vec<(u32, u32)>)>,
    },
    Runaway {
        group: u32,
        thread: u32,
        pc: u32,
        loop_id: Option<u32>,
        steps: u64,
    },
    Trap {
        group: u32,
        thread: u32,
        pc: u32,
        trap: crate::program::Trap,
    },
}

pub(crate) type Key = (u8, u32, u32);

/// Findings deduplicated by (kind, pair of instructions), keeping the first
/// witness and counting the others.
#[derive(Default)]
pub(crate) struct Events {
    pub list: Vec<(Event, u64)>,
    index: HashMap<Key, usize>,
}

impl Events {
    pub fn add(&mut self, key: Key, make: impl FnOnce() -> Event) {
        match self.index.get(&key) {
            Some(&i) => self.list[i].1 += 1,
            None => {
                self.index.insert(key, self.list.len());
                self.list.push((make(), 1));
            }
        }
    }
    pub fn merge(&mut self, other: Events) {
        let mut keys: Vec<(usize, Key)> = other.index.into_iter().map(|(k, i)| (i, k)).collect();
        keys.sort();
        let mut items: Vec<Option<(Event, u64)>> = other.list.into_iter().map(Some).collect();
        for (i, key) in keys {
            let (ev, n) = items[i].take().expect("each index once");
            match self.index.get(&key) {
                Some(&j) => self.list[j].1 += n,
                None => {
                    self.index.insert(key, self.list.len());
                    self.list.push((ev, n));
                }
            }
        }
    }
    pub fn clear(&mut self) {
        self.list.clear();
        self.index.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(thread: u32, epoch: u32) -> Rec {
        Rec { thread, inst: thread * 10, iter: NONE, outer_iter: NONE, wave: thread / 4, wave_epoch: 0, epoch }
    }

    /// A cell and its sites, with the sites dropped when the interval changes
    /// (as a barrier does).
    struct One {
        cell: Cell,
        sites: Sites,
        epoch: u32,
    }

    impl One {
        fn new(cell: Cell) -> One {
            One { cell, sites: Sites::new(64), epoch: 0 }
        }
        fn check(&mut self, kind: Kind, me: Rec, shared: bool) -> Option<(Hazard, Rec, Kind)> {
            if me.epoch != self.epoch {
                self.sites.clear();
                self.epoch = me.epoch;
            }
            check(&mut self.cell, &mut self.sites, kind, me, shared)
        }
    }

    #[test]
    fn a_cell_is_sixteen_bytes_and_a_cross_group_witness_twelve() {
        assert_eq!(std::mem::size_of::<Cell>(), 16);
        assert_eq!(std::mem::size_of::<Wit>(), 12);
    }

    #[test]
    fn conflicts_need_two_threads_in_one_interval() {
        let mut s = One::new(Cell::EMPTY);
        assert_eq!(s.check(Kind::Read, rec(1, 1), true).map(|h| h.0), Some(Hazard::Uninit));
        let mut s = One::new(Cell::EMPTY);
        assert_eq!(s.check(Kind::Write, rec(0, 1), true), None);
        assert_eq!(s.check(Kind::Read, rec(0, 1), true), None, "a thread never races with itself");
        assert_eq!(s.check(Kind::Read, rec(1, 1), true).map(|h| (h.0, h.1.thread)), Some((Hazard::UnsyncedFirst, 0)));
        assert_eq!(s.check(Kind::Read, rec(2, 2), true), None, "a barrier orders them");
        assert_eq!(s.check(Kind::Write, rec(3, 2), true).map(|h| (h.0, h.1.thread)), Some((Hazard::War, 2)));
        assert_eq!(s.check(Kind::Write, rec(4, 2), true).map(|h| (h.0, h.1.thread, h.1.inst)), Some((Hazard::Waw, 3, 30)));
        assert_eq!(s.check(Kind::Read, rec(5, 2), true).map(|h| (h.0, h.1.thread)), Some((Hazard::Raw, 4)));
    }

    #[test]
    fn second_reader_is_kept_for_a_writer_that_was_the_first_reader() {
        let mut s = One::new(Cell::INITIALISED);
        s.check(Kind::Read, rec(1, 1), false);
        s.check(Kind::Read, rec(2, 1), false);
        assert_eq!(s.check(Kind::Write, rec(1, 1), false).map(|h| (h.0, h.1.thread)), Some((Hazard::War, 2)));
    }

    #[test]
    fn a_wave_level_barrier_orders_lanes_of_its_wave_only() {
        let mut s = One::new(Cell::INITIALISED);
        s.check(Kind::Write, rec(1, 1), false);
        // Thread 2 is in the same wave (threads 0..3) and past a wave barrier.
        assert_eq!(s.check(Kind::Read, Rec { wave_epoch: 1, ..rec(2, 1) }, false), None);
        // Thread 5 is in another wave.
        assert_eq!(s.check(Kind::Read, Rec { wave_epoch: 1, ..rec(5, 1) }, false).map(|h| h.0), Some(Hazard::Raw));
    }

    #[test]
    fn atomics_do_not_race_with_atomics() {
        let mut s = One::new(Cell::INITIALISED);
        assert_eq!(s.check(Kind::Atomic, rec(1, 1), true), None);
        assert_eq!(s.check(Kind::Atomic, rec(2, 1), true), None);
        assert_eq!(s.check(Kind::Read, rec(3, 1), true).map(|h| (h.0, h.2)), Some((Hazard::Raw, Kind::Atomic)));
        assert_eq!(s.check(Kind::Write, rec(4, 1), true).map(|h| (h.0, h.2)), Some((Hazard::Waw, Kind::Atomic)));
    }

    #[test]
    fn a_witness_keeps_its_loop_iterations() {
        let mut s = One::new(Cell::INITIALISED);
        s.check(Kind::Write, Rec { iter: 6, outer_iter: 2, ..rec(1, 1) }, false);
        let hit = s.check(Kind::Read, rec(2, 1), false).unwrap().1;
        assert_eq!((hit.thread, hit.iter, hit.outer_iter, hit.epoch), (1, 6, 2, 1));
    }

    #[test]
    fn firsts_between_groups_find_every_conflicting_kind() {
        let at = |group: u32, kinds: &[(Kind, u32)]| {
            let mut f = Firsts::EMPTY;
            for &(k, t) in kinds {
                f.note(k, group, &rec(t, 1));
            }
            f
        };
        let pairs = |earlier: &Firsts, later: &Firsts| -> Vec<(Kind, u32, Kind, u32)> {
            earlier.conflicts(later).map(|(l, e)| (l.kind, l.rec.thread, e.kind, e.rec.thread)).collect()
        };
        let atomics = at(0, &[(Kind::Atomic, 1), (Kind::AtomicRead, 2)]);
        assert_eq!(pairs(&atomics, &at(1, &[(Kind::Atomic, 3)])), vec![]);
        assert_eq!(pairs(&atomics, &at(1, &[(Kind::Read, 3)])), vec![(Kind::Read, 3, Kind::Atomic, 1)]);
        let mixed = at(0, &[(Kind::Read, 1), (Kind::Atomic, 2), (Kind::Write, 3)]);
        assert_eq!(mixed.write.who(Kind::Write).rec.thread, 3, "a plain write replaces an atomic as the witness");
        assert_eq!(pairs(&mixed, &at(1, &[(Kind::Atomic, 4)])), vec![(Kind::Atomic, 4, Kind::Write, 3), (Kind::Atomic, 4, Kind::Read, 1)]);
        assert_eq!(pairs(&at(0, &[(Kind::Read, 1)]), &at(1, &[(Kind::Read, 2)])), vec![]);
        let mut all = at(0, &[(Kind::Atomic, 1)]);
        all.absorb(&at(1, &[(Kind::Write, 5), (Kind::Read, 6)]));
        assert_eq!((all.write.group, all.write.atomic(), all.read.group), (1, false, 1));
    }

    /// One access of a random sequence, as the brute-force detector keeps it.
    #[derive(Clone, Copy)]
    struct Access {
        cell: usize,
        kind: Kind,
        rec: Rec,
    }

    /// The definition the shadow implements, over every earlier access:
    /// another thread, same interval, not ordered by a wave barrier of their
    /// wave, one of them writes, not both atomic (atomic loads are not kept as
    /// readers, so a later write does not meet them).
    fn conflict(earlier: &Access, later: &Access) -> bool {
        earlier.cell == later.cell
            && earlier.rec.epoch == later.rec.epoch
            && earlier.rec.unordered_with(&later.rec)
            && (earlier.kind.writes() || later.kind.writes())
            && (!(earlier.kind.atomic() && later.kind.atomic()) || earlier.kind.atomics_meet(later.kind))
            && !(earlier.kind == Kind::AtomicRead && later.kind == Kind::Write)
    }

    /// Random access sequences against a detector that keeps every access:
    /// each witness the shadow names is a real conflict of the right hazard,
    /// and without atomics and wave barriers it finds a conflict in every
    /// (cell, interval) that has one, and every read of a never-written cell.
    #[test]
    fn shadow_agrees_with_a_detector_that_keeps_every_access() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for round in 0..3000 {
            let exact = round % 2 == 0;
            let shared = round % 3 != 0;
            let fresh = if shared { Cell::EMPTY } else { Cell::INITIALISED };
            let mut cells = [fresh; 3];
            let mut sites = Sites::new(8);
            let (mut epoch, mut wave_epochs) = (1, [0u32; 2]);
            let mut log: Vec<Access> = Vec::new();
            let mut found = std::collections::HashSet::new();
            for n in 0..(10 + next(40)) as u32 {
                match next(12) {
                    0 => {
                        epoch += 1;
                        sites.clear();
                    }
                    1 if !exact => wave_epochs[next(2) as usize] += 1,
                    _ => {}
                }
                let thread = next(8) as u32;
                let kinds: &[Kind] = if exact { &[Kind::Read, Kind::Write] } else { &[Kind::Read, Kind::Write, Kind::Atomic, Kind::AtomicRead, Kind::AtomicStore, Kind::AtomicSwap] };
                let kind = kinds[next(kinds.len() as u64) as usize];
                let wave = thread / 4;
                let rec = Rec { thread, inst: n, iter: NONE, outer_iter: NONE, wave, wave_epoch: wave_epochs[wave as usize], epoch };
                let me = Access { cell: next(3) as usize, kind, rec };
                let hit = check(&mut cells[me.cell], &mut sites, kind, rec, shared);
                let reads = kind.reads();
                let written =
                    |before_interval: bool| log.iter().any(|a| a.cell == me.cell && a.kind.writes() && (!before_interval || a.rec.epoch < epoch));
                let never_written = shared && !written(false);
                let conflicting: Vec<&Access> = log.iter().filter(|a| conflict(a, &me)).collect();
                match hit {
                    Some((Hazard::Uninit, _, _)) => assert!(reads && never_written, "round {round} access {n}: not an uninitialised read"),
                    Some((hazard, other, other_kind)) => {
                        let e = log.iter().find(|a| a.rec.inst == other.inst).expect("the witness is an earlier access");
                        assert!(conflict(e, &me), "round {round} access {n}: {hazard:?} with access {} is no conflict", other.inst);
                        assert_eq!(other, e.rec);
                        let expected = match (e.kind.writes(), kind.writes() && (!reads || kind.atomics_meet(e.kind))) {
                            (true, true) => Hazard::Waw,
                            (false, _) => Hazard::War,
                            (true, false) if shared && !written(true) => Hazard::UnsyncedFirst,
                            (true, false) => Hazard::Raw,
                        };
                        assert_eq!(hazard, expected, "round {round} access {n}");
                        assert_eq!(other_kind == Kind::Read, !e.kind.writes());
                        found.insert((me.cell, epoch));
                    }
                    None => {
                        assert!(!(reads && never_written), "round {round} access {n}: uninitialised read missed");
                        if exact && !conflicting.is_empty() {
                            assert!(
                                found.contains(&(me.cell, epoch)),
                                "round {round} access {n}: the first race on cell {} in interval {epoch} was missed",
                                me.cell
                            );
                        }
                    }
                }
                log.push(me);
            }
        }
    }
}
