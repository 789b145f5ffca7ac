//! Shadow state per memory cell and the raw findings of a run.
//!
//! Within a group, time is cut into intervals by barriers: two accesses of
//! different threads conflict when they fall in the same interval (the same
//! `epoch`) and one of them writes. A cell remembers its last write and up to
//! two readers of the current interval from different threads: whichever
//! thread writes next, at least one of them is another thread when any is.

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
    fn live(&self, epoch: u32) -> bool {
        self.thread != NONE && self.epoch == epoch
    }
    /// An access of another thread in the same interval, not ordered by a
    /// wave-level barrier of a wave both threads belong to.
    fn conflicts_with(&self, me: &Rec) -> bool {
        self.live(me.epoch) && self.thread != me.thread && !(self.wave == me.wave && self.wave_epoch != me.wave_epoch)
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Shadow {
    pub w: Rec,
    pub w_atomic: bool,
    /// Interval of the first write to the cell (`NONE`: never written).
    pub first_write: u32,
    pub r1: Rec,
    pub r2: Rec,
}

impl Shadow {
    pub const EMPTY: Shadow = Shadow { w: Rec::EMPTY, w_atomic: false, first_write: NONE, r1: Rec::EMPTY, r2: Rec::EMPTY };
    /// A cell whose contents exist before the group starts (device memory,
    /// initialised globals): written in interval 0; groups start in interval 1.
    pub const INITIALISED: Shadow = Shadow { first_write: 0, ..Shadow::EMPTY };
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Read,
    Write,
    /// A read-modify-write atomic.
    Atomic,
    /// An atomic load.
    AtomicRead,
}

impl Kind {
    pub fn verb(self) -> &'static str {
        match self {
            Kind::Read => "reads",
            Kind::Write => "writes",
            Kind::Atomic => "atomically updates",
            Kind::AtomicRead => "atomically reads",
        }
    }
    pub fn past(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Write => "wrote",
            Kind::Atomic => "atomically updated",
            Kind::AtomicRead => "atomically read",
        }
    }
    pub fn writes(self) -> bool {
        matches!(self, Kind::Write | Kind::Atomic)
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
pub(crate) fn check(sh: &mut Shadow, kind: Kind, me: Rec, shared: bool) -> Option<(Hazard, Rec, Kind)> {
    let e = me.epoch;
    let w_other = sh.w.conflicts_with(&me);
    let w_kind = if sh.w_atomic { Kind::Atomic } else { Kind::Write };
    let atomic = matches!(kind, Kind::Atomic | Kind::AtomicRead);
    let mut hit = None;
    if !kind.writes() || kind == Kind::Atomic {
        // The access reads the cell.
        if shared && sh.first_write == NONE {
            hit = Some((Hazard::Uninit, Rec::EMPTY, Kind::Write));
        } else if w_other && !(atomic && sh.w_atomic) {
            let h = if shared && sh.first_write == e { Hazard::UnsyncedFirst } else { Hazard::Raw };
            hit = Some((h, sh.w, w_kind));
        }
    }
    if kind.writes() {
        if hit.is_none() && w_other && !(atomic && sh.w_atomic) {
            hit = Some((Hazard::Waw, sh.w, w_kind));
        }
        if hit.is_none() {
            for r in [sh.r1, sh.r2] {
                if r.conflicts_with(&me) {
                    hit = Some((Hazard::War, r, Kind::Read));
                    break;
                }
            }
        }
        sh.w = me;
        sh.w_atomic = atomic;
        if sh.first_write == NONE {
            sh.first_write = e;
        }
    } else if kind == Kind::Read {
        if !sh.r1.live(e) {
            sh.r1 = me;
            sh.r2 = Rec::EMPTY;
        } else if sh.r1.thread != me.thread && !sh.r2.live(e) {
            sh.r2 = me;
        }
    }
    hit
}

/// The first access of each kind a group made to a device cell, for
/// checking conflicts between groups after they all ran.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Summary {
    pub write: Rec,
    pub read: Rec,
    pub atomic: Rec,
}

impl Summary {
    pub const EMPTY: Summary = Summary { write: Rec::EMPTY, read: Rec::EMPTY, atomic: Rec::EMPTY };
    pub fn note(&mut self, kind: Kind, me: Rec) {
        let slot = match kind {
            Kind::Read => &mut self.read,
            Kind::Write => &mut self.write,
            Kind::Atomic | Kind::AtomicRead => &mut self.atomic,
        };
        if slot.thread == NONE {
            *slot = me;
        }
    }
    /// Conflicts of `later` (a later group's accesses) with `self`: (later access, earlier access).
    pub fn conflicts(&self, later: &Summary) -> impl Iterator<Item = ((Rec, Kind), (Rec, Kind))> {
        let pairs = [
            (later.write, Kind::Write, self.write, Kind::Write),
            (later.write, Kind::Write, self.read, Kind::Read),
            (later.write, Kind::Write, self.atomic, Kind::Atomic),
            (later.read, Kind::Read, self.write, Kind::Write),
            (later.read, Kind::Read, self.atomic, Kind::Atomic),
            (later.atomic, Kind::Atomic, self.write, Kind::Write),
            (later.atomic, Kind::Atomic, self.read, Kind::Read),
        ];
        pairs.into_iter().filter(|p| p.0.thread != NONE && p.2.thread != NONE).map(|p| ((p.0, p.1), (p.2, p.3)))
    }
    pub fn absorb(&mut self, other: &Summary) {
        for (mine, theirs) in [(&mut self.write, other.write), (&mut self.read, other.read), (&mut self.atomic, other.atomic)] {
            if mine.thread == NONE {
                *mine = theirs;
            }
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
    Hazard { hazard: Hazard, device: bool, alloc: u32, cell: u64, later: Who, earlier: Option<Who> },
    OutOfBounds { alloc: u32, cell: i64, who: Who },
    /// An access through a null or otherwise invalid pointer.
    BadPointer { who: Who },
    ReadOnlyWrite { alloc: u32, cell: u64, who: Who },
    Divergence { group: u32, barrier_pc: u32, reached: u32, total: u32, others: Vec<(Place, Vec<(u32, u32)>)> },
    Runaway { group: u32, thread: u32, pc: u32, loop_id: Option<u32>, steps: u64 },
    Trap { group: u32, thread: u32, pc: u32, trap: crate::program::Trap },
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

    #[test]
    fn conflicts_need_two_threads_in_one_interval() {
        let mut s = Shadow::EMPTY;
        assert_eq!(check(&mut s, Kind::Read, rec(1, 0), true).map(|h| h.0), Some(Hazard::Uninit));
        let mut s = Shadow::EMPTY;
        assert_eq!(check(&mut s, Kind::Write, rec(0, 0), true), None);
        assert_eq!(check(&mut s, Kind::Read, rec(0, 0), true), None, "a thread never races with itself");
        assert_eq!(check(&mut s, Kind::Read, rec(1, 0), true).map(|h| (h.0, h.1.thread)), Some((Hazard::UnsyncedFirst, 0)));
        assert_eq!(check(&mut s, Kind::Read, rec(2, 1), true), None, "a barrier orders them");
        assert_eq!(check(&mut s, Kind::Write, rec(3, 1), true).map(|h| (h.0, h.1.thread)), Some((Hazard::War, 2)));
        assert_eq!(check(&mut s, Kind::Write, rec(4, 1), true).map(|h| (h.0, h.1.thread)), Some((Hazard::Waw, 3)));
        assert_eq!(check(&mut s, Kind::Read, rec(5, 1), true).map(|h| (h.0, h.1.thread)), Some((Hazard::Raw, 4)));
    }

    #[test]
    fn second_reader_is_kept_for_a_writer_that_was_the_first_reader() {
        let mut s = Shadow::INITIALISED;
        check(&mut s, Kind::Read, rec(1, 1), false);
        check(&mut s, Kind::Read, rec(2, 1), false);
        assert_eq!(check(&mut s, Kind::Write, rec(1, 1), false).map(|h| (h.0, h.1.thread)), Some((Hazard::War, 2)));
    }

    #[test]
    fn a_wave_level_barrier_orders_lanes_of_its_wave_only() {
        let mut s = Shadow::INITIALISED;
        check(&mut s, Kind::Write, rec(1, 1), false);
        // Thread 2 is in the same wave (threads 0..3) and past a wave barrier.
        assert_eq!(check(&mut s, Kind::Read, Rec { wave_epoch: 1, ..rec(2, 1) }, false), None);
        // Thread 5 is in another wave.
        assert_eq!(check(&mut s, Kind::Read, Rec { wave_epoch: 1, ..rec(5, 1) }, false).map(|h| h.0), Some(Hazard::Raw));
    }

    #[test]
    fn atomics_do_not_race_with_atomics() {
        let mut s = Shadow::INITIALISED;
        assert_eq!(check(&mut s, Kind::Atomic, rec(1, 1), true), None);
        assert_eq!(check(&mut s, Kind::Atomic, rec(2, 1), true), None);
        assert_eq!(check(&mut s, Kind::Read, rec(3, 1), true).map(|h| (h.0, h.2)), Some((Hazard::Raw, Kind::Atomic)));
    }
}
