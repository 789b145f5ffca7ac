//! Static race detection between barriers.
//!
//! [`analyze`] finds, for one flat kernel, pairs of memory accesses that two
//! different threads can make to the same cell with nothing ordering them:
//! within a group, between the same two barrier instances (loop back edges
//! included); across groups, anywhere in the dispatch. Accesses are grouped
//! by allocation and interval before any pair is examined, and each pair is
//! decided by [`sym::Query`], which solves for a witness pair of threads.
//!
//! [`may_conflict_across`] answers the narrower question the dead-barrier
//! engine's precise mode needs.

pub mod congruence;
pub mod intervals;
pub mod relax;
pub mod solver;
pub mod sym;

use intervals::{collect_accesses, intervals, reached_from, reaches, reaches_next_iteration, Access, AccessKind, Alloc, Interval, Offsets, Positions, Space, Start, APART, MANY, NOT_IN};
use lockstep_analysis::decided::value_in_block;
use lockstep_analysis::{Cfg, Level, Uniformity};
use lockstep_ir::{AtomicOp, BinOp, Barrier, BlockId, Function, MemRef, Module, Op, Scope, Value};
use std::collections::{BTreeMap, HashSet};
use sym::{Kernel, Mode, Query, Side, Waves, Witness};
pub use sym::Assumptions;

/// An iteration offset meaning "some later iteration".
pub use intervals::MANY as MANY_ITERATIONS;

/// The rules this analysis reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rule {
    SharedRaw,
    SharedWar,
    SharedWaw,
    SharedFirstRead,
    RwBufferNotCoherent,
    GlobalNoThreadfence,
    DeviceRace,
    FenceWithoutSync,
}

impl Rule {
    pub const ALL: [Rule; 8] = [
        Rule::SharedRaw,
        Rule::SharedWar,
        Rule::SharedWaw,
        Rule::SharedFirstRead,
        Rule::RwBufferNotCoherent,
        Rule::GlobalNoThreadfence,
        Rule::DeviceRace,
        Rule::FenceWithoutSync,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Rule::SharedRaw => "groupshared-write-then-no-barrier-read",
            Rule::SharedWar => "groupshared-read-then-no-barrier-write",
            Rule::SharedWaw => "groupshared-write-write-race",
            Rule::SharedFirstRead => "groupshared-first-read-without-barrier",
            Rule::RwBufferNotCoherent => "rwbuffer-store-without-globallycoherent",
            Rule::GlobalNoThreadfence => "global-store-without-threadfence",
            Rule::DeviceRace => "device-memory-race",
            Rule::FenceWithoutSync => "fence-without-sync",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hazard {
    Raw,
    War,
    Waw,
}

impl Hazard {
    pub fn short(self) -> &'static str {
        match self {
            Hazard::Raw => "RAW",
            Hazard::War => "WAR",
            Hazard::Waw => "WAW",
        }
    }
}

/// One access of a finding.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct At {
    pub inst: Value,
    pub kind: AccessKind,
    /// Back edges crossed since the interval start (loop-carried hazards), for the innermost loop that differs.
    pub iteration: Option<u8>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub rule: Rule,
    /// None for a read of memory no thread has written yet.
    pub hazard: Option<Hazard>,
    pub alloc: Alloc,
    /// The access that comes second (the primary span).
    pub later: At,
    /// The conflicting access.
    pub earlier: Option<At>,
    /// Witness threads: `threads[0]` runs `later`, `threads[1]` runs `earlier`.
    pub witness: Option<Witness>,
    /// The fence that was used where a synchronizing barrier was needed.
    pub fence: Option<Value>,
    /// WAW where both stores write the same group-uniform value.
    pub same_value: bool,
    /// Only threads of one wave can meet: the code relies on a wave running
    /// in lockstep, which independent thread scheduling does not promise.
    pub warp_synchronous: bool,
    /// A wave barrier orders the accesses within a wave, and the witness's
    /// threads are in different waves of a width nothing fixes (OpenCL's
    /// sub-groups): whether a group spans several waves is not known.
    pub across_unfixed_waves: bool,
    /// A wave barrier is on every path between the accesses: only threads of
    /// different waves can meet.
    pub wave_ordered: bool,
    /// For cross-group read-after-write: whether a device-scope fence is on every path between.
    pub fenced: bool,
    /// Whether the allocation is `globallycoherent` / `volatile`.
    pub coherent: bool,
    /// A barrier between the two accesses that holds the group but fences
    /// none of this memory (Metal `mem_none`, OpenCL's local-only barrier
    /// for global memory), which therefore does not order them.
    pub held_by: Option<Value>,
    /// A call lockstep cannot see into (a function without a body, a
    /// construct it does not model) on every barrier-free way between the
    /// accesses: it may hold a group barrier (CUB's block collectives do),
    /// so the race is not proven.
    pub unseen_sync: Option<Value>,
}

fn barrier(f: &Function, v: Value) -> Option<&Barrier> {
    match &f.inst(v).op {
        Op::Barrier(b, _) => Some(b),
        _ => None,
    }
}

/// Ends a group interval for `space`: every thread of the group waits and the space is ordered.
fn group_sync(f: &Function, v: Value, space: Space) -> bool {
    barrier(f, v).is_some_and(|b| b.exec >= Scope::Group && b.spaces.contains(mem_space(space)))
}

/// Orders `space` for the threads of one wave (`__syncwarp()`, a tile's sync).
/// The widths of the waves (sub-groups) GPUs run, for kernels whose wave
/// width nothing fixes.
const HARDWARE_WAVE_WIDTHS: [u32; 6] = [4, 8, 16, 32, 64, 128];
/// The width a race found at every width is shown at.
const COMMON_WAVE_WIDTH: u32 = 32;

/// Whether an index is computed from the thread's lane or its wave's
/// index (`get_sub_group_id() * 256 + …`): code that lays memory out by wave.
fn placed_by_wave(f: &Function, v: Value, depth: u32) -> bool {
    if depth > 12 {
        return false;
    }
    match &f.inst(v).op {
        Op::Builtin(lockstep_ir::Builtin::LaneId) => true,
        Op::Binary(lockstep_ir::BinOp::Div, _, w) if matches!(f.inst(*w).op, Op::Builtin(lockstep_ir::Builtin::WaveSize)) => true,
        Op::Binary(_, a, b) => placed_by_wave(f, *a, depth + 1) || placed_by_wave(f, *b, depth + 1),
        Op::Unary(_, a) | Op::Convert(a) => placed_by_wave(f, *a, depth + 1),
        _ => false,
    }
}

fn wave_sync(f: &Function, v: Value, space: Space) -> bool {
    barrier(f, v).is_some_and(|b| b.exec == Scope::Wave && b.spaces.contains(mem_space(space)))
}

/// A call whose body lockstep does not see: it may synchronize the group.
fn may_sync_unseen(f: &Function, v: Value) -> bool {
    matches!(f.inst(v).op, Op::Call(lockstep_ir::Callee::Opaque(_) | lockstep_ir::Callee::Unmodelled(_), _))
}

fn grid_sync(f: &Function, v: Value) -> bool {
    barrier(f, v).is_some_and(|b| b.exec >= Scope::Device)
}

fn mem_space(s: Space) -> lockstep_ir::MemSpace {
    match s {
        Space::Shared => lockstep_ir::MemSpace::Shared,
        Space::Device => lockstep_ir::MemSpace::Device,
    }
}

fn alloc_len(module: &Module, a: Alloc) -> Option<u64> {
    match a {
        Alloc::Global(g) => {
            let g = module.global(g);
            // Dynamic shared memory and unsized buffers have no useful bound.
            g.len.filter(|&n| n > 0 && g.kind != lockstep_ir::GlobalKind::DynamicShared)
        }
        Alloc::Param(_) | Alloc::Unknown => None,
    }
}

/// The store a same-value question is about: the level its threads share
/// values at, and the loops (indices into `cfg.loops`) whose iterations
/// they may be apart in.
struct Cell<'a> {
    store: Value,
    need: Level,
    loops: &'a [usize],
}

struct Ctx<'a> {
    module: &'a Module,
    f: &'a Function,
    cfg: &'a Cfg,
    uni: &'a Uniformity,
    k: &'a Kernel<'a>,
    acc: Vec<Access>,
    pos: Positions,
    after_atomic: Vec<bool>,
    /// Buffers the kernel never writes: equal cells hold equal values.
    read_only: std::collections::HashSet<lockstep_ir::Root>,
    /// Unordered instruction pairs already reported, by allocation.
    done: HashSet<(Value, Value, Alloc)>,
    /// Pairs reported as stores of one value (a note), still asked about.
    benign: HashSet<(Value, Value, Alloc)>,
    out: Vec<Finding>,
    stats: Stats,
    queries: std::cell::Cell<usize>,
    exhausted: std::cell::Cell<bool>,
    /// The intervals' walk gave up: more paths than it keeps.
    too_many_paths: std::cell::Cell<bool>,
    /// Questions the solver answered (not from the memo).
    solved: std::cell::Cell<usize>,
    /// The thread CPU time at which the analysis stops asking.
    deadline: Option<std::time::Duration>,
    /// Answers by question: one pair recurs in several intervals, and
    /// accesses with one index in one block ask the same questions.
    answers: std::cell::RefCell<rustc_hash::FxHashMap<QueryKey, Option<Witness>>>,
    /// Launch conditions found equal or not, by pair (every access pair
    /// under such guards asks about every branch).
    equal_conditions: std::cell::RefCell<rustc_hash::FxHashMap<(Value, Value), bool>>,
}

/// Rewrites the sides' loop offsets to the representative of what a query
/// reads from them (see `Query::rel`): within a group, per loop, the same
/// iteration, one iteration apart (1 and 2 ask what 0 and 1 ask), unrelated
/// iterations, or both outside the loop; across groups nothing.
fn canonical_offsets(mode: Mode, sides: &mut [Side; 2]) {
    if mode == Mode::CrossGroup {
        sides.iter_mut().for_each(|s| s.offsets.clear());
        return;
    }
    let [a, b] = sides;
    for (x, y) in a.offsets.iter_mut().zip(b.offsets.iter_mut()) {
        if *x < MANY && *y < MANY {
            let low = (*x).min(*y);
            *x -= low;
            *y -= low;
        } else if (*x < MANY && *y == NOT_IN) || (*x == NOT_IN && *y < MANY) {
            // In the loop against after it: its last iteration (see `Query::rel`).
            let inside = if *x < MANY { x } else { y };
            *inside = 0;
        } else if (*x, *y) != (NOT_IN, NOT_IN) && (*x, *y) != (APART, APART) {
            // Unrelated iterations, however they came about.
            (*x, *y) = (MANY, MANY);
        }
    }
}

/// How many solver answers a kernel's analysis keeps before it starts over.
const ANSWERS_KEPT: usize = 1 << 14;

/// What a [`Query`] depends on besides the kernel.
#[derive(PartialEq, Eq, Hash)]
struct QueryKey {
    mode: Mode,
    waves: Waves,
    sides: [Side; 2],
    len: Option<u64>,
    texels: Option<(u32, u32)>,
    cells_per_elem: u32,
}

/// Finds the races of one flat kernel.
pub fn analyze(module: &Module, f: &Function, cfg: &Cfg, uni: &Uniformity) -> Vec<Finding> {
    analyze_with_stats(module, f, cfg, uni).0
}

/// What the analysis did, for cost measurements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Shared and device accesses of the kernel.
    pub accesses: usize,
    /// Barrier intervals examined (group and grid, all spaces).
    pub intervals: usize,
    /// Access pairs handed to the solver (after grouping by allocation and interval).
    pub queries: usize,
    /// Of those, questions the solver answered (the rest came from its memo).
    pub solved: usize,
    /// Why the analysis stopped early, if it did: pairs after that were not examined.
    pub stopped: Option<Stopped>,
}

/// Why a race analysis stopped before examining every pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// Its deadline passed.
    Deadline,
    /// The ways between its barriers are too many to list (deep loop nests,
    /// long runs of loops that may be skipped).
    TooManyPaths,
}

/// How much CPU time checking one file's kernels may take, from the first
/// kernel's checks on (lowering the later kernels included): every file is
/// checked in seconds (ggml's Metal flash-attention files, 16 instances of
/// one template, would take minutes). Race analysis stops at that point; a
/// kernel whose analysis it cuts short is reported as such. CPU time of the
/// checking thread, so a busy machine does not change what is checked.
pub const FILE_CHECK_TIME: std::time::Duration = std::time::Duration::from_secs(2);

/// CPU time the calling thread has used.
pub fn thread_cpu_time() -> std::time::Duration {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `t` is a valid timespec for the call to fill in.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
    if ok {
        std::time::Duration::new(t.tv_sec.max(0) as u64, t.tv_nsec.clamp(0, 999_999_999) as u32)
    } else {
        std::time::Duration::ZERO
    }
}

/// [`analyze`], also reporting how much work it took.
pub fn analyze_with_stats(module: &Module, f: &Function, cfg: &Cfg, uni: &Uniformity) -> (Vec<Finding>, Stats) {
    let group_size = f.entry.as_ref().and_then(|e| e.group_size);
    analyze_kernel(module, &Kernel::new(module, f, cfg, uni, group_size, Assumptions::Likely))
}

/// [`analyze_with_stats`] on a prepared kernel (loop trip counts, branch
/// guards), which [`ConflictOracle::kernel`] shares with the dead-barrier engine.
pub fn analyze_kernel<'a>(module: &'a Module, k: &'a Kernel<'a>) -> (Vec<Finding>, Stats) {
    analyze_kernel_until(module, k, None)
}

/// [`analyze_kernel`], stopping (and saying so in the stats) when the
/// thread's CPU time ([`thread_cpu_time`]) reaches `deadline`.
pub fn analyze_kernel_until<'a>(module: &'a Module, k: &'a Kernel<'a>, deadline: Option<std::time::Duration>) -> (Vec<Finding>, Stats) {
    let (f, cfg, uni) = (k.f, k.cfg, k.uni);
    let acc = collect_accesses(module, f, cfg);
    if acc.is_empty() {
        return (Vec::new(), Stats::default());
    }
    let stats = Stats { accesses: acc.len(), ..Stats::default() };
    let mut cx = Ctx {
        module,
        f,
        cfg,
        uni,
        after_atomic: after_atomic(f, cfg),
        read_only: f.read_only_roots(),
        k,
        pos: Positions::new(f),
        acc,
        done: HashSet::new(),
        benign: HashSet::new(),
        out: Vec::new(),
        stats,
        queries: std::cell::Cell::new(0),
        exhausted: std::cell::Cell::new(false),
        too_many_paths: std::cell::Cell::new(false),
        solved: std::cell::Cell::new(0),
        deadline,
        answers: Default::default(),
        equal_conditions: Default::default(),
    };
    cx.passes();
    cx.stats.queries = cx.queries.get();
    cx.stats.stopped = if cx.exhausted.get() { Some(Stopped::Deadline) } else { cx.too_many_paths.get().then_some(Stopped::TooManyPaths) };
    cx.stats.solved = cx.solved.get();
    (cx.out, cx.stats)
}

/// Members of an interval by allocation, for one space. Accesses through
/// untraceable pointers join every allocation's group.
fn by_alloc<'i>(acc: &[Access], iv: &'i Interval, space: Space) -> BTreeMap<Alloc, Vec<&'i (usize, Offsets)>> {
    let mut m: BTreeMap<Alloc, Vec<&(usize, Offsets)>> = BTreeMap::new();
    let mut unknown = Vec::new();
    for member in &iv.members {
        let a = &acc[member.0];
        if a.space == space {
            m.entry(a.alloc).or_default().push(member);
            if a.alloc == Alloc::Unknown {
                unknown.push(member);
            }
        }
    }
    for (alloc, members) in m.iter_mut() {
        if *alloc != Alloc::Unknown {
            members.extend(unknown.iter().copied());
        }
    }
    m
}

/// Accesses of one allocation, block and iteration whose indices are one
/// base value plus different constants (the fields of a struct, the
/// components of a vector): one question decides all their pairs when none
/// of them can conflict.
struct Cluster {
    alloc: Alloc,
    block: BlockId,
    base: Value,
    pointer: Option<Value>,
    offsets: Offsets,
    /// The smallest and largest constant.
    spread: (i64, i64),
    size: usize,
}

/// The clusters of an interval's members, and the cluster of each member.
fn clusters(f: &Function, acc: &[Access], members: &[&(usize, Offsets)]) -> (Vec<Cluster>, Vec<usize>) {
    let mut out: Vec<Cluster> = Vec::new();
    let mut of = Vec::with_capacity(members.len());
    let mut found: rustc_hash::FxHashMap<(Alloc, BlockId, Value, Option<Value>, &Offsets), usize> = Default::default();
    for (ai, offsets) in members.iter().map(|m| (m.0, &m.1)) {
        let a = &acc[ai];
        let (base, c) = constant_offset(f, a.index);
        match found.get(&(a.alloc, a.block, base, a.base, offsets)).copied() {
            Some(i) => {
                let k = &mut out[i];
                k.spread = (k.spread.0.min(c), k.spread.1.max(c));
                k.size += 1;
                of.push(i);
            }
            None => {
                found.insert((a.alloc, a.block, base, a.base, offsets), out.len());
                out.push(Cluster { alloc: a.alloc, block: a.block, base, pointer: a.base, offsets: offsets.clone(), spread: (c, c), size: 1 });
                of.push(out.len() - 1);
            }
        }
    }
    (out, of)
}

/// `v` as `base + c` for a constant `c` (0 when `v` adds none).
fn constant_offset(f: &Function, v: Value) -> (Value, i64) {
    match f.inst(v).op {
        Op::Binary(lockstep_ir::BinOp::Add, x, y) => match (f.as_int(x), f.as_int(y)) {
            (None, Some(c)) => (x, c),
            (Some(c), None) => (y, c),
            _ => (v, 0),
        },
        Op::Binary(lockstep_ir::BinOp::Sub, x, y) => match f.as_int(y).and_then(i64::checked_neg) {
            Some(c) if f.as_int(x).is_none() => (x, c),
            _ => (v, 0),
        },
        _ => (v, 0),
    }
}

fn may_race(f: &Function, x: &Access, y: &Access) -> bool {
    // An unmodelled construct against itself: nothing is known of what it
    // does (its access's index is the construct itself), only of what it
    // may meet elsewhere.
    let unknown_itself = x.inst == y.inst && x.index == x.inst;
    // Atomics meet each other only where one overwrites what the other adds
    // up (a counter reset as others count); exchanges and compare-exchanges
    // that read the old value are protocols (locks, hand-offs).
    let arithmetic = |a: &Access| {
        matches!(
            f.inst(a.inst).op,
            Op::Atomic(AtomicOp::Add | AtomicOp::Sub | AtomicOp::Min | AtomicOp::Max | AtomicOp::And | AtomicOp::Or | AtomicOp::Xor | AtomicOp::Inc | AtomicOp::Dec, ..)
        )
    };
    let atomics_meet = match (x.kind, y.kind) {
        (AccessKind::AtomicStore, AccessKind::Atomic) => arithmetic(y),
        (AccessKind::Atomic, AccessKind::AtomicStore) => arithmetic(x),
        (AccessKind::Atomic | AccessKind::AtomicStore, AccessKind::Atomic | AccessKind::AtomicStore) => false,
        _ => true,
    };
    (x.kind.writes() || y.kind.writes()) && atomics_meet && !unknown_itself
}

fn hazard(earlier: AccessKind, later: AccessKind) -> Hazard {
    match (earlier.writes(), later.writes()) {
        (true, false) => Hazard::Raw,
        (false, true) => Hazard::War,
        _ => Hazard::Waw,
    }
}

/// The innermost loop offset where two offset vectors differ.
fn carried(a: &[u8], b: &[u8]) -> Option<(u8, u8)> {
    a.iter().zip(b).rev().find(|(x, y)| x != y && **x < intervals::NOT_IN && **y < intervals::NOT_IN).map(|(&x, &y)| (x, y))
}

impl Ctx<'_> {
    /// Whether a loop holds one of two accesses while the other comes after
    /// it (a write in a loop, a read after it): None when none does, else
    /// whether `x` is the one inside.
    fn after_loop(&self, x: &(usize, Offsets), y: &(usize, Offsets)) -> Option<bool> {
        let (bx, by) = (self.acc[x.0].block, self.acc[y.0].block);
        let (lx, ly) = (&self.cfg.loops_of[bx.index()], &self.cfg.loops_of[by.index()]);
        let around = |loops: &[usize], others: &[usize], outside: BlockId| loops.iter().any(|&l| !others.contains(&l) && self.cfg.dominates(self.cfg.loops[l].header, outside));
        if around(lx, ly, by) {
            Some(true)
        } else if around(ly, lx, bx) {
            Some(false)
        } else {
            None
        }
    }

    /// Orders two members of one interval: (earlier, later). Iterations
    /// decide first (for loops both are in), then a loop before what
    /// follows it (reverse postorder may number a loop's exit before its
    /// body), then program order.
    fn order<'m>(&self, x: &'m (usize, Offsets), y: &'m (usize, Offsets)) -> (&'m (usize, Offsets), &'m (usize, Offsets)) {
        let by_iteration = x.1.iter().zip(&y.1).find(|(a, b)| a != b && **a < intervals::NOT_IN && **b < intervals::NOT_IN).map(|(a, b)| a.cmp(b));
        let place = |m: &(usize, Offsets)| {
            let a = &self.acc[m.0];
            (self.cfg.rpo_index[a.block.index()], a.pos)
        };
        let earlier_first = match (by_iteration, self.after_loop(x, y)) {
            (Some(o), _) => o.is_lt(),
            (None, Some(x_inside)) => x_inside,
            (None, None) => place(x) <= place(y),
        };
        if earlier_first {
            (x, y)
        } else {
            (y, x)
        }
    }

    /// Whether threads can make accesses `e` and then `l` to one cell; `way`:
    /// what the group-uniform conditions hold on every way from `e` to `l`
    /// that passes no barrier.
    fn query(&self, mode: Mode, e: (&Access, &[u8]), l: (&Access, &[u8]), way: &[(Value, bool)]) -> Option<Witness> {
        self.query_waves(mode, Waves::Any, e, l, way)
    }

    fn query_waves(&self, mode: Mode, waves: Waves, e: (&Access, &[u8]), l: (&Access, &[u8]), way: &[(Value, bool)]) -> Option<Witness> {
        let side = |(a, offsets): (&Access, &[u8]), way: &[(Value, bool)]| Side { block: a.block, index: a.index, base: a.base, offsets: offsets.to_vec(), spread: (0, 0), way: way.to_vec() };
        self.ask_waves(mode, waves, e.0.alloc, l.0.alloc, [side(l, way), side(e, &[])])
    }

    /// For a store that writes one value per cell in any one iteration,
    /// run by threads a pass lets be in any iterations of its loops: the
    /// outermost loop whose iterations they can meet in apart, in one
    /// iteration of the loops around it (its offsets set to [`APART`],
    /// theirs to 0), or None when they meet only in one iteration
    /// (`sq4[qq*32 + i] = q[qq*32 + i]` with `i < 32`: rows never overlap).
    fn meets_iterations_apart(&self, e: (&Access, &[u8]), l: (&Access, &[u8]), way: &[(Value, bool)]) -> Option<(Offsets, Offsets)> {
        let loops = self.pos.of(e.0.inst).map_or(&[][..], |(b, _)| &self.cfg.loops_of[b.index()][..]);
        loops.iter().enumerate().find_map(|(depth, &lp)| {
            let (x, y) = (*e.1.get(lp)?, *l.1.get(lp)?);
            if x == y && x < MANY {
                return None;
            }
            let (mut ea, mut la) = (e.1.to_vec(), l.1.to_vec());
            for &outer in &loops[..depth] {
                (ea[outer], la[outer]) = (0, 0);
            }
            (ea[lp], la[lp]) = (APART, APART);
            self.query(Mode::SameGroup, (e.0, &ea), (l.0, &la), way).map(|_| (ea, la))
        })
    }

    /// A witness for waves 32 lanes wide, where one exists for waves of
    /// every width hardware has.
    fn at_every_width(&self, e: (&Access, &[u8]), l: (&Access, &[u8]), way: &[(Value, bool)]) -> Option<Witness> {
        let mut shown = None;
        for width in HARDWARE_WAVE_WIDTHS {
            let w = self.query_waves(Mode::SameGroup, Waves::Any.at(width), e, l, way).filter(|w| w.exact)?;
            if width == COMMON_WAVE_WIDTH {
                shown = Some(Witness { every_width: true, ..w });
            }
        }
        shown
    }

    /// Whether no pair of the two clusters' accesses can conflict; each pair
    /// is asked on its own otherwise. One question covers them all: each
    /// side's index is the cluster's base plus any of its constants.
    fn clusters_clear(&self, mode: Mode, e: &Cluster, l: &Cluster) -> bool {
        let side = |c: &Cluster| Side { block: c.block, index: c.base, base: c.pointer, offsets: c.offsets.clone(), spread: c.spread, way: Vec::new() };
        self.ask_waves(mode, Waves::Any, e.alloc, l.alloc, [side(l), side(e)]).is_none()
    }

    /// Whether the analysis is out of time (and records that it is).
    fn past_deadline(&self) -> bool {
        if self.exhausted.get() || self.deadline.is_some_and(|d| thread_cpu_time() > d) {
            self.exhausted.set(true);
        }
        self.exhausted.get()
    }

    fn ask_waves(&self, mode: Mode, waves: Waves, earlier: Alloc, later: Alloc, mut sides: [Side; 2]) -> Option<Witness> {
        self.queries.set(self.queries.get() + 1);
        if self.past_deadline() {
            return None;
        }
        // Through a pointer the other access's allocation bound does not apply.
        let len = if earlier == later { alloc_len(self.module, later) } else { None };
        let texels = match (earlier, later) {
            (Alloc::Global(a), Alloc::Global(b)) if a == b && self.module.global(a).texel_width > 0 => {
                let g = self.module.global(a);
                Some((g.cells_per_elem.max(1), g.texel_width))
            }
            _ => None,
        };
        let cells_per_elem = match (earlier, later) {
            (Alloc::Global(a), Alloc::Global(b)) if a == b => self.module.global(a).cells_per_elem.max(1),
            _ => 1,
        };
        canonical_offsets(mode, &mut sides);
        let key = QueryKey { mode, waves, sides, len, texels, cells_per_elem };
        if let Some(w) = self.answers.borrow().get(&key) {
            return w.clone();
        }
        // Cluster and reach questions only filter; pairs' witnesses are reported.
        let prove = waves.same_cell() && key.sides.iter().all(|s| s.spread == (0, 0));
        self.solved.set(self.solved.get() + 1);
        let q = Query { k: self.k, mode, waves, prove, sides: key.sides.clone(), len, texels, cells_per_elem, deadline: self.deadline };
        let w = q.conflict();
        let mut answers = self.answers.borrow_mut();
        // Memory stays bounded on kernels of millions of distinct questions.
        if answers.len() >= ANSWERS_KEPT {
            answers.clear();
        }
        answers.insert(key, w.clone());
        w
    }

    fn coherent(&self, a: Alloc) -> bool {
        match a {
            Alloc::Global(g) => self.module.global(g).coherent,
            Alloc::Param(_) | Alloc::Unknown => false,
        }
    }

    /// Whether both stores write one value: the same constant, or one
    /// value uniform at `need` that is the same instance for both threads
    /// (`same_iteration`: they are in one iteration of every loop around
    /// the accesses; otherwise it must not change from one to the next).
    fn same_value(&self, e: &Access, l: &Access, need: Level, same_iteration: bool) -> bool {
        let stored = |a: &Access| match &self.f.inst(a.inst).op {
            Op::Store(_, v) => Some(*v),
            _ => None,
        };
        match (stored(e), stored(l)) {
            (Some(x), Some(y)) => {
                if let (Op::Const(p), Op::Const(q)) = (&self.f.inst(x).op, &self.f.inst(y).op) {
                    return p == q;
                }
                // One value, uniform, and the same in every iteration of the
                // loops around the stores: the two threads may be in
                // different iterations (`y[i * 64 + tid] = x[i]`).
                let loops_of = |v: Value| self.pos.of(v).map_or(&[][..], |(b, _)| &self.cfg.loops_of[b.index()][..]);
                let per_iteration = !same_iteration && loops_of(x).iter().any(|lp| loops_of(e.inst).contains(lp) || loops_of(l.inst).contains(lp));
                // What the store writes where it runs: a phi a branch on the
                // store's own guard selects is the input that guard picks.
                let block_of = |v: Value| self.pos.of(v).map(|(b, _)| b);
                let level_at_store = |a: &Access| block_of(a.inst).map_or(Level::Thread, |b| self.uni.level_at(self.cfg, value_in_block(self.f, self.cfg, &block_of, x, b), b));
                // Iterations apart, what decides the value must stay put
                // between them (`sq4[qq*32 + i] = q[qq*32 + i]` in every wave).
                let store_loops = if same_iteration { &[][..] } else { loops_of(e.inst) };
                let cell = Cell { store: e.inst, need, loops: store_loops };
                if x == y && e.inst == l.inst && self.decided_by_cell(x, e.index, &cell, 0) {
                    return true;
                }
                x == y && !per_iteration && level_at_store(e) >= need && level_at_store(l) >= need
            }
            _ => false,
        }
    }

    /// Whether equal indices mean equal values of `v`: the index is `v`
    /// itself, or `v` scaled by a constant or moved by a shared amount
    /// (`s[lane * 4]` through a byte view).
    fn index_determines(&self, index: Value, v: Value, cell: &Cell, depth: u32) -> bool {
        if self.same_expression(index, v, 0) {
            return true;
        }
        if depth > 8 {
            return false;
        }
        let nonzero = |k: Value| self.f.as_int(k).is_some_and(|k| k != 0);
        let shared = |k: Value| self.shared_at_store(k, cell);
        let inner = |x: Value| self.index_determines(x, v, cell, depth + 1);
        match self.f.inst(index).op {
            Op::Convert(x) => {
                let (to, from) = (self.f.inst(index).ty, self.f.inst(x).ty);
                !to.is_float() && !from.is_float() && to.bits() >= from.bits() && inner(x)
            }
            Op::Binary(BinOp::Mul, x, k) | Op::Binary(BinOp::Mul, k, x) if nonzero(k) && inner(x) => true,
            Op::Binary(BinOp::Shl, x, k) if self.f.as_int(k).is_some() => inner(x),
            Op::Binary(BinOp::Add | BinOp::Xor, x, k) | Op::Binary(BinOp::Add | BinOp::Xor, k, x) if shared(k) && inner(x) => true,
            Op::Binary(BinOp::Sub, x, k) if shared(k) => inner(x),
            _ => false,
        }
    }

    /// Whether two values are one pure expression computed twice (two calls
    /// of `get_sub_group_local_id()`): the same for every thread.
    fn same_expression(&self, a: Value, b: Value, depth: u32) -> bool {
        if a == b {
            return true;
        }
        if depth > 12 || self.f.inst(a).ty != self.f.inst(b).ty {
            return false;
        }
        let same = |x: &Value, y: &Value| self.same_expression(*x, *y, depth + 1);
        match (&self.f.inst(a).op, &self.f.inst(b).op) {
            (Op::Builtin(p), Op::Builtin(q)) => p == q,
            (Op::Const(p), Op::Const(q)) => p == q,
            (Op::Convert(x), Op::Convert(y)) => same(x, y),
            (Op::Unary(o, x), Op::Unary(p, y)) => o == p && same(x, y),
            (Op::Binary(o, x1, x2), Op::Binary(p, y1, y2)) => o == p && same(x1, y1) && same(x2, y2),
            _ => false,
        }
    }

    /// Whether a store's value is computed from its cell's index and values
    /// every thread in question shares (`s[lane] = table[lane % 16]`): at
    /// one store, threads that write the same cell write the same value.
    /// Memory it reads must be constant.
    fn decided_by_cell(&self, v: Value, index: Value, cell: &Cell, depth: u32) -> bool {
        if depth > 12 {
            return false;
        }
        if self.index_determines(index, v, cell, 0) {
            return true;
        }
        let decided = |x: Value| self.decided_by_cell(x, index, cell, depth + 1);
        self.shared_at_store(v, cell)
            || match &self.f.inst(v).op {
                Op::Const(_) => true,
                Op::Unary(_, a) | Op::Convert(a) => decided(*a),
                Op::Binary(_, a, b) | Op::Cmp(_, a, b) => decided(*a) && decided(*b),
                Op::Select(c, a, b) => [c, a, b].iter().all(|&&x| decided(x)),
                Op::Math(_, args) => args.iter().all(|&x| decided(x)),
                Op::Load(m) => (m.space == lockstep_ir::MemSpace::Constant || self.read_only.contains(&m.root)) && decided(m.index),
                _ => false,
            }
    }

    /// Whether every thread in question sees one value of `k` at the store,
    /// in every iteration of the loops the threads may be apart in.
    fn shared_at_store(&self, k: Value, cell: &Cell) -> bool {
        self.pos.of(cell.store).is_some_and(|(b, _)| self.uni.level_at(self.cfg, k, b) >= cell.need) && cell.loops.iter().all(|&l| self.k.invariant_in_loop(l, k))
    }

    fn at(&self, a: &Access, iteration: Option<u8>) -> At {
        At { inst: a.inst, kind: a.kind, iteration }
    }

    /// Whether the accesses only share the barrier interval along paths
    /// that a condition fixed for the whole launch rules out: the guards of
    /// both accesses require `block_size > 32` (a template value, a
    /// parameter, the group size), and the only barrier-free way from the
    /// interval's start to one of them takes the branch where an equal
    /// condition is false (`if (block_size > 32) __syncthreads();`).
    fn launch_conditions_keep_apart(&self, iv: &Interval, e: &Access, l: &Access, ends: &dyn Fn(Value) -> bool) -> bool {
        let f = self.f;
        let mut fixed: Vec<(Value, bool)> = Vec::new();
        for a in [e, l] {
            if let Some((b, _)) = self.pos.of(a.inst) {
                fixed.extend(self.k.guards(b).iter().copied().filter(|&(c, _)| sym::launch_input(f, c, 0)));
            }
        }
        if fixed.is_empty() {
            return false;
        }
        // Edges into the side of a branch whose condition the guards decide the other way.
        let mut dead: Vec<(BlockId, BlockId)> = Vec::new();
        for b in f.block_ids() {
            let lockstep_ir::Terminator::Branch { cond, then_to, else_to } = f.block(b).term else { continue };
            if then_to == else_to {
                continue;
            }
            for &(c, holds) in &fixed {
                let equal = *self.equal_conditions.borrow_mut().entry((c, cond)).or_insert_with(|| equal_launch_conditions(f, self.k, c, cond));
                if equal {
                    dead.push((b, if holds { else_to } else { then_to }));
                }
            }
        }
        if dead.is_empty() {
            return false;
        }
        let Some(start) = self.first_point(iv) else { return false };
        let blocked = |b: BlockId, s: BlockId| dead.contains(&(b, s));
        [e, l].iter().any(|a| !intervals::reaches_along(f, self.cfg, &self.pos, start, a.inst, ends, &blocked))
    }

    /// Where an interval's threads start: the entry, or just after its barrier.
    fn first_point(&self, iv: &Interval) -> Option<(BlockId, usize)> {
        match iv.start {
            Start::Entry => Some((BlockId(0), 0)),
            Start::After(barrier) => self.pos.of(barrier).map(|(b, i)| (b, i + 1)),
        }
    }

    /// The branches on group-uniform conditions that barriers are under
    /// (`if (n > 4) __syncthreads();`): the branch, the successor that skips
    /// the barrier, the condition and the value it has there.
    fn barrier_skips(&self, ends: &dyn Fn(Value) -> bool) -> Vec<(BlockId, BlockId, Value, bool)> {
        let f = self.f;
        let guards: Vec<(Value, bool)> = f
            .block_ids()
            .filter(|&b| f.block(b).insts.iter().any(|&v| ends(v)))
            .flat_map(|b| self.k.guards(b).iter().copied().filter(|&(c, _)| sym::launch_input(f, c, 0)).collect::<Vec<_>>())
            .collect();
        let mut out = Vec::new();
        for branch in f.block_ids() {
            let lockstep_ir::Terminator::Branch { cond, then_to, else_to } = f.block(branch).term else { continue };
            if then_to == else_to {
                continue;
            }
            for &(c, holds) in guards.iter().filter(|g| g.0 == cond) {
                let skip = (branch, if holds { else_to } else { then_to }, c, !holds);
                if !out.contains(&skip) {
                    out.push(skip);
                }
            }
        }
        out
    }

    /// The conditions of `skips` that every way from the interval's start to
    /// `a` passing no barrier holds: the way through the skipping successor
    /// is the only one.
    fn way_from_start(&self, iv: &Interval, a: &Access, skips: &[(BlockId, BlockId, Value, bool)], ends: &dyn Fn(Value) -> bool) -> Vec<(Value, bool)> {
        let Some(start) = self.first_point(iv) else { return Vec::new() };
        let only_way = |&&(branch, skip, _, _): &&(BlockId, BlockId, Value, bool)| {
            !intervals::reaches_along(self.f, self.cfg, &self.pos, start, a.inst, ends, &|x, y| x == branch && y == skip)
        };
        skips.iter().filter(only_way).map(|&(_, _, c, holds)| (c, holds)).collect()
    }

    /// Races between threads of one group within one barrier interval.
    fn group_pass(&mut self, space: Space, ivs: &[Interval]) {
        let f = self.f;
        let ends = |v: Value| group_sync(f, v, space);
        self.stats.intervals += ivs.len();
        let fences: Vec<Value> = f.blocks.iter().flat_map(|b| b.insts.iter().copied()).filter(|&v| barrier(f, v).is_some_and(|b| b.is_fence_only() && b.spaces.contains(mem_space(space)))).collect();
        let unseen_calls: Vec<Value> = f.blocks.iter().flat_map(|b| b.insts.iter().copied()).filter(|&v| may_sync_unseen(f, v)).collect();
        let wave_barriers = f.blocks.iter().flat_map(|b| &b.insts).any(|&v| wave_sync(f, v, space));
        // Code that never names a wave (no lane, wave width or index, no wave
        // operation or barrier) is not written for one; where the width is
        // not fixed either, its races are not asked about waves at all.
        let fixed_width = f.entry.as_ref().is_some_and(|e| e.wave_size.is_some());
        let is_width = |v: Value| matches!(f.inst(v).op, Op::Builtin(lockstep_ir::Builtin::WaveSize));
        let names_lanes = f.blocks.iter().flat_map(|b| &b.insts).any(|&v| matches!(f.inst(v).op, Op::Builtin(lockstep_ir::Builtin::LaneId)) || is_width(v));
        let names_waves = fixed_width || wave_barriers || names_lanes || f.blocks.iter().flat_map(|b| &b.insts).any(|&v| matches!(f.inst(v).op, Op::Wave(..)));
        // Races in lanes are asked at every width where the waves a group
        // holds follow from its size, or the kernel tells its waves apart
        // (`simdgroup_index_in_threadgroup`): it is written for groups of
        // several. Code indexing only by lane may run one wave per group.
        let group_fixed = self.k.group_size.is_some();
        let names_wave_index = f.blocks.iter().flat_map(|b| &b.insts).any(|&v| matches!(f.inst(v).op, Op::Binary(BinOp::Div | BinOp::ExactDiv, _, w) if is_width(w)));
        let lanes_at_every_width = names_lanes && !fixed_width && (group_fixed || names_wave_index);
        let skips = self.barrier_skips(&ends);
        for iv in ivs {
            // Per access, the uniform conditions every barrier-free way to it from the interval's start holds.
            let mut ways: rustc_hash::FxHashMap<Value, Vec<(Value, bool)>> = Default::default();
            for members in by_alloc(&self.acc, iv, space).values() {
                let (clusters, cluster_of) = clusters(f, &self.acc, members);
                let mut cleared = rustc_hash::FxHashMap::default();
                for i in 0..members.len() {
                    if self.past_deadline() {
                        return;
                    }
                    for j in i..members.len() {
                        let (em, lm) = self.order(members[i], members[j]);
                        let (e, l) = (&self.acc[em.0], &self.acc[lm.0]);
                        if !may_race(f, e, l) || self.done.contains(&reported(e, l)) {
                            continue;
                        }
                        // Threads take the same way through uniform branches between two
                        // barriers: accesses in different iterations share a phase only
                        // when one follows the other without a barrier.
                        let same_iteration = same_pass(&em.1, &lm.1);
                        match self.after_loop(em, lm) {
                            // The loop's last iteration (any, when it holds no
                            // barrier) meets what follows it with no barrier between.
                            Some(_) if !reaches(f, self.cfg, &self.pos, e.inst, l.inst, &ends) => continue,
                            None if !same_iteration && !reaches_next_iteration(f, self.cfg, &self.pos, e.inst, l.inst, &ends) => continue,
                            _ => {}
                        }
                        let (ce, cl) = if std::ptr::eq(em, members[i]) { (cluster_of[i], cluster_of[j]) } else { (cluster_of[j], cluster_of[i]) };
                        if clusters[ce].size * clusters[cl].size > 1
                            && *cleared.entry((ce, cl)).or_insert_with(|| self.clusters_clear(Mode::SameGroup, &clusters[ce], &clusters[cl]))
                        {
                            continue;
                        }
                        if same_iteration && self.launch_conditions_keep_apart(iv, e, l, &ends) {
                            continue;
                        }
                        let mut way = Vec::new();
                        for a in [e, l] {
                            let to_a = ways.entry(a.inst).or_insert_with(|| self.way_from_start(iv, a, &skips, &ends));
                            way.extend(to_a.iter().copied());
                        }
                        // A store of one value per cell in any one iteration (every wave
                        // copying the same input), run in any iterations of a loop with no
                        // barrier: benign where threads meet only within one iteration,
                        // else asked, and shown, in different ones.
                        let mut apart = None;
                        let mut values_in_one_iteration = same_iteration;
                        if !same_iteration
                            && hazard(e.kind, l.kind) == Hazard::Waw
                            && !self.same_value(e, l, Level::Group, false)
                            && self.same_value(e, l, Level::Group, true)
                        {
                            match self.meets_iterations_apart((e, &em.1), (l, &lm.1), &way) {
                                Some(offsets) => apart = Some(offsets),
                                None => values_in_one_iteration = true,
                            }
                        }
                        let (e_at, l_at): (&[u8], &[u8]) = apart.as_ref().map_or((&em.1, &lm.1), |(x, y)| (x, y));
                        // A pair noted as stores of one value is asked again only where that may not hold.
                        if apart.is_none()
                            && self.benign.contains(&reported(e, l))
                            && hazard(e.kind, l.kind) == Hazard::Waw
                            && self.same_value(e, l, Level::Group, values_in_one_iteration)
                        {
                            continue;
                        }
                        let Some(w) = self.query(Mode::SameGroup, (e, e_at), (l, l_at), &way) else { continue };
                        // A wave barrier (`__syncwarp()`, `tile.sync()`) on every path
                        // between them orders the threads of one wave: only threads of
                        // different waves can still meet. With none, a race only threads
                        // of one wave can have relies on them running in lockstep.
                        let wave_ends = |v: Value| ends(v) || wave_sync(f, v, space);
                        // Ordered: the second access follows the first, and only through a wave barrier.
                        let follows = |stop: &dyn Fn(Value) -> bool| {
                            if same_iteration {
                                e.inst != l.inst && reaches(f, self.cfg, &self.pos, e.inst, l.inst, stop)
                            } else {
                                reaches_next_iteration(f, self.cfg, &self.pos, e.inst, l.inst, stop)
                            }
                        };
                        let wave_ordered = wave_barriers && follows(&ends) && !follows(&wave_ends);
                        // Only a call between the two accesses can order them: threads at
                        // one instruction, or on two sides of a branch, meet before it.
                        let unseen_sync = if !unseen_calls.is_empty() && follows(&ends) && !follows(&|v: Value| ends(v) || may_sync_unseen(f, v)) {
                            let pos = &self.pos;
                            unseen_calls.iter().copied().find(|&c| reaches(f, self.cfg, pos, e.inst, c, &ends) && reaches(f, self.cfg, pos, c, l.inst, &ends))
                        } else {
                            None
                        };
                        // Where nothing fixes the width, threads in different waves even
                        // when waves are as wide as hardware makes them are in different
                        // waves at every width: the race is proven on every device.
                        let widest_apart = if wave_ordered && !fixed_width {
                            let widest = HARDWARE_WAVE_WIDTHS[HARDWARE_WAVE_WIDTHS.len() - 1];
                            self.query_waves(Mode::SameGroup, Waves::Different.at(widest), (e, e_at), (l, l_at), &way).filter(|a| a.exact).map(|a| Witness { wave_width: None, ..a })
                        } else {
                            None
                        };
                        let (w, warp_synchronous) = if wave_ordered {
                            match widest_apart.clone().or_else(|| self.query_waves(Mode::SameGroup, Waves::Different, (e, e_at), (l, l_at), &way)) {
                                Some(across) => (across, false),
                                None => continue,
                            }
                        } else {
                            // Code only one wave runs (`if (tid < 32)`), exchanging without a
                            // wave barrier. Or cells only threads of one wave share (each
                            // warp's own slice of a tile) in warp-aware code: the kernel
                            // orders its warps with wave barriers elsewhere, places the
                            // cells by the wave's index or the lane, or every way between
                            // the accesses passes a lane exchange it relies on the warp
                            // converging at. Where nothing fixes the wave's width, this
                            // must hold for waves of every width hardware has.
                            let waves_of = |question: Waves| -> Vec<Waves> {
                                if fixed_width { vec![question] } else { HARDWARE_WAVE_WIDTHS.map(|w| question.at(w)).to_vec() }
                            };
                            let warp_aware = || {
                                wave_barriers
                                    || (follows(&ends)
                                        && (placed_by_wave(f, e.index, 0)
                                            || placed_by_wave(f, l.index, 0)
                                            || !follows(&|v: Value| ends(v) || matches!(f.inst(v).op, Op::Wave(..)))))
                            };
                            // Threads of different waves that only an undecided
                            // witness puts together leave the proven race one of a wave.
                            let one_reaches = || waves_of(Waves::DifferentReach).into_iter().all(|q| self.query_waves(Mode::SameGroup, q, (e, e_at), (l, l_at), &way).is_none());
                            // Widest first: a pair apart in the widest waves is apart at
                            // every width, and its report needs no width.
                            let across = || {
                                waves_of(Waves::Different).into_iter().rev().find_map(|q| self.query_waves(Mode::SameGroup, q, (e, e_at), (l, l_at), &way).filter(|a| a.exact)).map(|mut a| {
                                    if a.wave_width == Some(HARDWARE_WAVE_WIDTHS[HARDWARE_WAVE_WIDTHS.len() - 1]) {
                                        a.wave_width = None;
                                    }
                                    a
                                })
                            };
                            // Where the width is open, the many questions are asked only of
                            // a race in group memory at places lockstep traces, that would be
                            // reported as proven and not benign.
                            let settled = !fixed_width
                                && (!w.exact
                                    || space != Space::Shared
                                    || e.base.is_some()
                                    || l.base.is_some()
                                    || (hazard(e.kind, l.kind) == Hazard::Waw && self.same_value(e, l, Level::Group, values_in_one_iteration)));
                            if !names_waves || settled {
                                (w, false)
                            } else if one_reaches() {
                                (w, true)
                            } else if !warp_aware() {
                                (w, false)
                            } else {
                                // Shown with threads of two waves, the pair that makes it more than one wave's.
                                match across() {
                                    Some(across) => (across, false),
                                    None => (w, true),
                                }
                            }
                        };
                        // Lanes and wave indices of a width nothing fixes: a race
                        // the threads meet in at every width hardware has is proven
                        // on every device, shown at the most common width.
                        let w = if lanes_at_every_width && !wave_ordered && w.wave_width.is_none() {
                            self.at_every_width((e, e_at), (l, l_at), &way).unwrap_or(w)
                        } else {
                            w
                        };
                        let hz = hazard(e.kind, l.kind);
                        let (it_l, it_e) = match carried(&lm.1, &em.1) {
                            _ if apart.is_some() => (Some(MANY), Some(0)),
                            Some((x, y)) if x < MANY && y < MANY => (Some(x), Some(y)),
                            Some(_) => (Some(MANY), Some(0)),
                            None => (None, None),
                        };
                        let fence = fences.iter().copied().find(|&fv| {
                            let pos = &self.pos;
                            reaches(f, self.cfg, pos, e.inst, fv, &ends) && reaches(f, self.cfg, pos, fv, l.inst, &ends)
                        });
                        let rule = match (space, fence, hz) {
                            (Space::Device, _, _) => {
                                // A UAV read after another wave's write, with no device fence or qualifier.
                                let raw = hz == Hazard::Raw && e.kind == AccessKind::Write;
                                let device_fence = |v: Value| barrier(f, v).is_some_and(|b| b.mem >= Scope::Device && b.spaces.contains(lockstep_ir::MemSpace::Device));
                                let unfenced = reaches(f, self.cfg, &self.pos, e.inst, l.inst, &device_fence);
                                if self.module.collective_fences && raw && unfenced && !self.coherent(l.alloc) {
                                    Rule::RwBufferNotCoherent
                                } else {
                                    Rule::DeviceRace
                                }
                            }
                            (_, Some(_), _) => Rule::FenceWithoutSync,
                            (_, None, Hazard::War) if iv.start == Start::Entry && !self.module.group_memory_zeroed => Rule::SharedFirstRead,
                            (_, None, Hazard::Raw) => Rule::SharedRaw,
                            (_, None, Hazard::War) => Rule::SharedWar,
                            (_, None, Hazard::Waw) => Rule::SharedWaw,
                        };
                        // One value per wave (a shuffle reduction's result) is one
                        // value for the pair when only threads of one wave can meet.
                        let same_value = hz == Hazard::Waw
                            && (self.same_value(e, l, Level::Group, values_in_one_iteration)
                                || (self.same_value(e, l, Level::Wave, values_in_one_iteration)
                                    && f.entry.as_ref().is_some_and(|e| e.wave_size.is_some())
                                    && self.query_waves(Mode::SameGroup, Waves::Different, (e, e_at), (l, l_at), &way).is_none()));
                        // One note per pair of stores of one value. Where that took the
                        // threads being in one iteration, other passes are still asked,
                        // and a race found there replaces the note.
                        let key = reported(e, l);
                        if same_value && !self.same_value(e, l, Level::Group, false) {
                            if !self.benign.insert(key) {
                                continue;
                            }
                        } else {
                            self.done.insert(key);
                            if self.benign.remove(&key) {
                                self.out.retain(|x| !(x.same_value && reports(x, key)));
                            }
                        }
                        let held_by = f.blocks.iter().flat_map(|b| b.insts.iter().copied()).find(|&bv| {
                            barrier(f, bv).is_some_and(|b| b.exec >= Scope::Group && !b.spaces.contains(mem_space(space)))
                                && reaches(f, self.cfg, &self.pos, e.inst, bv, &ends)
                                && reaches(f, self.cfg, &self.pos, bv, l.inst, &ends)
                        });
                        self.out.push(Finding {
                            rule,
                            hazard: Some(hz),
                            alloc: l.alloc,
                            later: self.at(l, it_l),
                            earlier: Some(self.at(e, it_e)),
                            witness: Some(w),
                            held_by,
                            fence: if space == Space::Shared { fence } else { None },
                            same_value,
                            warp_synchronous,
                            across_unfixed_waves: wave_ordered && !fixed_width && widest_apart.is_none(),
                            wave_ordered,
                            fenced: false,
                            coherent: self.coherent(l.alloc),
                            unseen_sync,
                        });
                    }
                }
            }
        }
    }

    /// Shared reads before the first barrier that no earlier write of the
    /// same allocation can have initialized.
    fn first_reads(&mut self, shared: &[Interval]) {
        let f = self.f;
        let ends = |v: Value| group_sync(f, v, Space::Shared);
        let Some(entry) = shared.iter().find(|i| i.start == Start::Entry) else { return };
        let reported: HashSet<Value> = self.out.iter().filter(|x| x.rule == Rule::SharedFirstRead).map(|x| x.later.inst).collect();
        let mut seen = HashSet::new();
        // Per allocation, what its writes in this interval reach: one walk each.
        let mut written: BTreeMap<Alloc, rustc_hash::FxHashSet<Value>> = BTreeMap::new();
        for (ai, _) in &entry.members {
            let r = &self.acc[*ai];
            if r.space != Space::Shared || r.kind != AccessKind::Read || reported.contains(&r.inst) || !seen.insert(r.inst) {
                continue;
            }
            let reached = written.entry(r.alloc).or_insert_with(|| {
                let writes = entry.members.iter().map(|(wi, _)| &self.acc[*wi]).filter(|w| w.alloc == r.alloc && w.kind.writes()).map(|w| w.inst);
                reached_from(f, self.cfg, &self.pos, writes, &ends)
            });
            if !reached.contains(&r.inst) {
                self.out.push(Finding {
                    rule: Rule::SharedFirstRead,
                    hazard: None,
                    alloc: r.alloc,
                    later: self.at(r, None),
                    earlier: None,
                    witness: None,
                    fence: None,
                    held_by: None,
                    warp_synchronous: false,
                    across_unfixed_waves: false,
                    wave_ordered: false,
                    same_value: false,
                    fenced: false,
                    coherent: false,
                    unseen_sync: None,
                });
            }
        }
    }

    /// The race passes, until one runs out of time.
    fn passes(&mut self) {
        let f = self.f;
        let Some(shared) = self.intervals(&|v| group_sync(f, v, Space::Shared)) else { return };
        self.group_pass(Space::Shared, &shared);
        if !self.module.group_memory_zeroed {
            self.first_reads(&shared);
        }
        // Barriers that order both spaces (`__syncthreads()`) cut the same intervals.
        let same_cuts = f.blocks.iter().flat_map(|b| &b.insts).all(|&v| group_sync(f, v, Space::Shared) == group_sync(f, v, Space::Device));
        let device = if same_cuts { Some(shared) } else { self.intervals(&|v| group_sync(f, v, Space::Device)) };
        let Some(device) = device else { return };
        self.group_pass(Space::Device, &device);
        // With one group per launch no two groups ever meet.
        if !f.entry.as_ref().is_some_and(|e| e.single_group()) {
            self.cross_group_pass();
        }
    }

    /// [`intervals`] cut by `ends`; None when the walk gives up (out of
    /// time, or with too many paths).
    fn intervals(&self, ends: &dyn Fn(Value) -> bool) -> Option<Vec<Interval>> {
        let ivs = intervals(self.f, self.cfg, &self.acc, ends, &|| self.past_deadline());
        if ivs.is_none() && !self.exhausted.get() {
            self.too_many_paths.set(true);
        }
        ivs
    }

    /// Races between threads of different groups: nothing but a grid barrier
    /// orders them, unless an atomic protocol does (then only the fence or
    /// qualifier that publishes the data is checked).
    fn cross_group_pass(&mut self) {
        let f = self.f;
        let cfg = self.cfg;
        let ends = |v: Value| grid_sync(f, v);
        let Some(ivs) = self.intervals(&ends) else { return };
        self.stats.intervals += ivs.len();
        let hlsl = self.module.collective_fences;
        let atomic_or_grid = |v: Value| grid_sync(f, v) || matches!(f.inst(v).op, Op::Atomic(..));
        let device_fence = |v: Value| grid_sync(f, v) || barrier(f, v).is_some_and(|b| b.mem >= Scope::Device && b.spaces.contains(lockstep_ir::MemSpace::Device));
        // Per access, once: the control dependences walk the whole CFG.
        let guarded: Vec<bool> = self.acc.iter().map(|a| self.protocol_guarded(a)).collect();
        for iv in &ivs {
            for members in by_alloc(&self.acc, iv, Space::Device).values_mut() {
                // Across groups iterations do not matter: one member per access
                // (an unrolled loop nest lists each access under many offsets).
                let mut seen = HashSet::new();
                members.retain(|m| seen.insert(m.0));
                let (clusters, cluster_of) = clusters(f, &self.acc, members);
                let mut cleared = rustc_hash::FxHashMap::default();
                for i in 0..members.len() {
                    if self.past_deadline() {
                        return;
                    }
                    for j in i..members.len() {
                        let (em, lm) = self.order(members[i], members[j]);
                        let (e, l) = (&self.acc[em.0], &self.acc[lm.0]);
                        if !may_race(f, e, l) {
                            continue;
                        }
                        // A pair already reported in its group is asked again
                        // across groups only where the in-group witness was a
                        // guess: a proven race across groups then replaces it.
                        let key = reported(e, l);
                        let guessed_in_group = if self.done.contains(&key) {
                            let Some(at) = self.out.iter().position(|x| x.witness.as_ref().is_some_and(|w| !w.exact) && reports(x, key)) else { continue };
                            Some(at)
                        } else {
                            None
                        };
                        if guarded[em.0] && guarded[lm.0] {
                            continue;
                        }
                        let (ce, cl) = if std::ptr::eq(em, members[i]) { (cluster_of[i], cluster_of[j]) } else { (cluster_of[j], cluster_of[i]) };
                        if clusters[ce].size * clusters[cl].size > 1
                            && *cleared.entry((ce, cl)).or_insert_with(|| self.clusters_clear(Mode::CrossGroup, &clusters[ce], &clusters[cl]))
                        {
                            continue;
                        }
                        let Some(w) = self.query(Mode::CrossGroup, (e, &em.1), (l, &lm.1), &[]) else { continue };
                        if let Some(at) = guessed_in_group {
                            if !w.exact {
                                continue;
                            }
                            self.out.remove(at);
                        }
                        let hz = hazard(e.kind, l.kind);
                        let ordered = e.inst != l.inst && reaches(f, cfg, &self.pos, e.inst, l.inst, &ends);
                        // After the atomic on every path, or after the very
                        // atomic whose result elects the group that runs `l`
                        // (the last group to take its ticket runs after every
                        // other group's ticket).
                        let synced = ordered && (!reaches(f, cfg, &self.pos, e.inst, l.inst, &atomic_or_grid) || self.ticket_for(e, l));
                        let fenced = ordered && !reaches(f, cfg, &self.pos, e.inst, l.inst, &device_fence);
                        let coherent = self.coherent(l.alloc);
                        let raw = hz == Hazard::Raw && e.kind == AccessKind::Write;
                        let publish_rule = if hlsl { Rule::RwBufferNotCoherent } else { Rule::GlobalNoThreadfence };
                        let rule = if synced {
                            if raw && !fenced && !(hlsl && coherent) {
                                publish_rule
                            } else {
                                continue;
                            }
                        } else if hlsl && raw && ordered && !coherent && !fenced {
                            Rule::RwBufferNotCoherent
                        } else {
                            Rule::DeviceRace
                        };
                        self.done.insert(key);
                        let same_value = hz == Hazard::Waw && self.same_value(e, l, Level::Grid, false);
                        self.out.push(Finding {
                            rule,
                            hazard: Some(hz),
                            alloc: l.alloc,
                            later: self.at(l, None),
                            earlier: Some(self.at(e, None)),
                            witness: Some(w),
                            fence: None,
                            held_by: None,
                            warp_synchronous: false,
                            across_unfixed_waves: false,
                            wave_ordered: false,
                            same_value,
                            fenced,
                            coherent,
                            unseen_sync: None,
                        });
                    }
                }
            }
        }
    }

    /// An access under a branch that depends on per-group data computed after
    /// an atomic (a "last block done" ticket): the protocol decides which
    /// group runs it, which this analysis cannot follow, so it stays quiet.
    fn protocol_guarded(&self, a: &Access) -> bool {
        self.cfg.control_deps_transitive(a.block).into_iter().any(|c| {
            self.after_atomic[c.index()] && self.f.block(c).term.condition().is_some_and(|cond| self.per_group_term(cond, 0))
        })
    }

    /// Whether `ticket` is an atomic whose result decides a protocol branch
    /// that `a` runs under (`isLast = atomicInc(&count, n) == n - 1`, through
    /// memory too).
    fn ticket_for(&self, ticket: &Access, a: &Access) -> bool {
        if ticket.kind != AccessKind::Atomic {
            return false;
        }
        self.cfg.control_deps_transitive(a.block).into_iter().any(|c| {
            self.after_atomic[c.index()] && self.f.block(c).term.condition().is_some_and(|cond| self.per_group_term(cond, 0) && depends_on(self.f, cond, ticket.inst))
        })
    }

    /// Whether a condition, or one conjunct/disjunct of it, is per-group data.
    fn per_group_term(&self, c: Value, depth: u32) -> bool {
        if (Level::Group..Level::Grid).contains(&self.uni.level(c)) {
            return true;
        }
        match &self.f.inst(c).op {
            Op::Binary(lockstep_ir::BinOp::LAnd | lockstep_ir::BinOp::LOr | lockstep_ir::BinOp::And | lockstep_ir::BinOp::Or, x, y) if depth < 8 => {
                self.per_group_term(*x, depth + 1) || self.per_group_term(*y, depth + 1)
            }
            _ => false,
        }
    }
}

/// Whether `v` is computed from `source`: through operands, and through
/// memory (a load of an allocation some store of a value computed from
/// `source` writes).
fn depends_on(f: &Function, v: Value, source: Value) -> bool {
    let mut stored: rustc_hash::FxHashMap<lockstep_ir::Root, Vec<Value>> = rustc_hash::FxHashMap::default();
    for inst in f.block_ids().flat_map(|b| f.block(b).insts.iter().copied()) {
        if let Op::Store(m, value) = &f.inst(inst).op {
            stored.entry(m.root).or_default().push(*value);
        }
    }
    let mut seen = HashSet::new();
    let mut work = vec![v];
    while let Some(x) = work.pop() {
        if x == source {
            return true;
        }
        if !seen.insert(x) || seen.len() > 4096 {
            continue;
        }
        let op = &f.inst(x).op;
        op.for_each_operand(|o| work.push(o));
        if let Op::Load(m) = op {
            work.extend(stored.get(&m.root).into_iter().flatten().copied());
        }
    }
    false
}

/// Blocks whose end some atomic operation can precede.
fn after_atomic(f: &Function, cfg: &Cfg) -> Vec<bool> {
    let mut seen = vec![false; f.blocks.len()];
    let mut work: Vec<BlockId> = f.block_ids().filter(|&b| f.block(b).insts.iter().any(|&v| matches!(f.inst(v).op, Op::Atomic(..)))).collect();
    while let Some(b) = work.pop() {
        if std::mem::replace(&mut seen[b.index()], true) {
            continue;
        }
        work.extend(cfg.succs[b.index()].iter().copied());
    }
    seen
}

/// Whether two members of an interval are in one iteration of every loop:
/// the same count of back-edge crossings, where an access outside a loop
/// and one in the first pass after entering it (`tile[t] = …` before a
/// loop, `tile[t + s]` in its first iteration) count as one.
fn same_pass(a: &[u8], b: &[u8]) -> bool {
    a.iter().zip(b).all(|(&x, &y)| x == y || (x.min(y) == 0 && x.max(y) == intervals::NOT_IN)) && !a.contains(&MANY) && !b.contains(&MANY)
}

/// A pair of accesses, once reported: one instruction may access two
/// allocations (`tile[i] = src[j]` copies in one step).
fn reported(e: &Access, l: &Access) -> (Value, Value, Alloc) {
    let (a, b) = pair(e.inst, l.inst);
    (a, b, l.alloc)
}

/// Whether finding `x` is the one reported for the pair `key`.
fn reports(x: &Finding, key: (Value, Value, Alloc)) -> bool {
    x.alloc == key.2 && x.earlier.as_ref().is_some_and(|y| pair(x.later.inst, y.inst) == (key.0, key.1))
}

fn pair(a: Value, b: Value) -> (Value, Value) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

/// For the dead-barrier engine's precise mode: can two *different* threads
/// of one group make access `a` (before a barrier) and access `b` (after it)
/// to the same cell? Both must be loads, stores or atomics of the same
/// allocation root; anything else answers true. Group-uniform values are the
/// same for both threads only where no loop can put them in different
/// iterations, so the answer holds for any placement of the barrier.
pub fn may_conflict_across(module: &Module, f: &Function, cfg: &Cfg, a: Value, b: Value, group_size: Option<[u32; 3]>) -> bool {
    let uni = Uniformity::analyze(f, cfg);
    ConflictOracle::new(module, f, cfg, &uni, group_size, Assumptions::Facts).may_conflict(a, b)
}

/// [`may_conflict_across`] with the uniformity analysis computed once per function.
pub struct ConflictOracle<'a> {
    module: &'a Module,
    k: Kernel<'a>,
    blocks: Vec<Option<BlockId>>,
    /// The dead-barrier engine asks about the same pairs for every candidate
    /// barrier, and accesses with one index in one block ask the same question.
    answers: std::cell::RefCell<rustc_hash::FxHashMap<[(BlockId, Value); 2], bool>>,
}

impl<'a> ConflictOracle<'a> {
    pub fn new(module: &'a Module, f: &'a Function, cfg: &'a Cfg, uni: &'a Uniformity, group_size: Option<[u32; 3]>, assume: Assumptions) -> ConflictOracle<'a> {
        let group_size = group_size.or_else(|| f.entry.as_ref().and_then(|e| e.group_size));
        ConflictOracle { module, k: Kernel::new(module, f, cfg, uni, group_size, assume), blocks: f.inst_blocks(), answers: Default::default() }
    }

    /// Whether what `root` names may be the same memory as another root of
    /// the same kind: the host can bind one buffer to two parameters or
    /// slots, and every dynamic shared array is the same memory.
    fn may_alias(&self, root: &lockstep_ir::Root) -> bool {
        use lockstep_ir::{GlobalKind, Root};
        match root {
            Root::Param(i) => self.k.f.params.get(*i as usize).is_none_or(|p| !p.noalias),
            Root::Ptr(_) => true,
            Root::Global(g) => self.module.globals.get(g.index()).is_none_or(|g| matches!(g.kind, GlobalKind::Uav | GlobalKind::DynamicShared)),
            Root::Local(_) => false,
        }
    }

    /// The prepared kernel, to run [`analyze_kernel`] with the same solver answers.
    pub fn kernel(&self) -> &Kernel<'a> {
        &self.k
    }

    pub fn may_conflict(&self, a: Value, b: Value) -> bool {
        let f = self.k.f;
        let get = |v: Value| f.insts.get(v.index()).and_then(|i| i.op.mem_ref().copied());
        let (Some(ma), Some(mb)) = (get(a), get(b)) else { return true };
        if ma.root != mb.root {
            // Different roots of kinds we can name never overlap; pointers may,
            // and so may two buffers when only facts count (a kernel may be
            // handed one buffer twice).
            let buffers = self.k.assume == Assumptions::Facts && self.may_alias(&ma.root) && self.may_alias(&mb.root);
            return buffers || matches!(ma.root, lockstep_ir::Root::Ptr(_)) || matches!(mb.root, lockstep_ir::Root::Ptr(_));
        }
        if matches!(ma.root, lockstep_ir::Root::Ptr(_)) {
            return true;
        }
        let (Some(ba), Some(bb)) = (self.blocks[a.index()], self.blocks[b.index()]) else { return true };
        let key = [(ba, ma.index), (bb, mb.index)];
        if let Some(&known) = self.answers.borrow().get(&key) {
            return known;
        }
        let answer = self.decide((ba, ma), (bb, mb));
        self.answers.borrow_mut().insert(key, answer);
        answer
    }

    fn decide(&self, (ba, ma): (BlockId, MemRef), (bb, mb): (BlockId, MemRef)) -> bool {
        let q = Query {
            k: &self.k,
            mode: Mode::SameGroup,
            waves: Waves::Any,
            prove: false,
            sides: [Side { block: bb, index: mb.index, base: None, offsets: Vec::new(), spread: (0, 0), way: Vec::new() }, Side { block: ba, index: ma.index, base: None, offsets: Vec::new(), spread: (0, 0), way: Vec::new() }],
            len: None,
            texels: None,
            cells_per_elem: 1,
            deadline: None,
        };
        q.conflict().is_some()
    }
}

/// Whether two conditions fixed for the launch always agree: the same
/// expression, or functions of one group extent alone (`block_size > 32`
/// computed once as `int` and once as `unsigned`) that agree for every
/// extent a group can have. For reports, a template value no instantiation
/// fixes may take part too (`block_size = size_template == 0 ? blockDim.x :
/// size_template`): then they must agree for the sizes a kernel is written
/// for (0 to 64, and multiples of 32 up to 1024).
fn equal_launch_conditions(f: &Function, k: &sym::Kernel, a: Value, b: Value) -> bool {
    if lockstep_analysis::decided::same_value(f, a, b, 0) {
        return true;
    }
    let templates = if k.assume == sym::Assumptions::Likely { &k.open_values[..] } else { &[] };
    let mut leaves = Vec::new();
    if !launch_leaves(f, templates, a, &mut leaves, 0) || !launch_leaves(f, templates, b, &mut leaves, 0) {
        return false;
    }
    leaves.sort_unstable();
    leaves.dedup();
    let axes: Vec<u8> = leaves.iter().filter_map(|l| if let LaunchLeaf::Extent(ax) = l { Some(*ax) } else { None }).collect();
    let templates: Vec<lockstep_ir::GlobalId> = leaves.iter().filter_map(|l| if let LaunchLeaf::Template(g) = l { Some(*g) } else { None }).collect();
    if axes.len() > 1 {
        return false;
    }
    // Both conditions under one choice of the extent (`n`) and of every
    // template value (`t`).
    let agree = |n: i128, t: i128| {
        let leaf = |_: Value, op: &Op| match op {
            Op::Builtin(lockstep_ir::Builtin::GroupSize(ax)) if axes.contains(&(ax % 3)) => Some(n),
            Op::Load(m) if matches!(m.root, lockstep_ir::Root::Global(g) if templates.contains(&g)) => Some(t),
            _ => None,
        };
        let x = lockstep_analysis::decided::evaluate(f, a, &leaf);
        x.is_some() && x == lockstep_analysis::decided::evaluate(f, b, &leaf)
    };
    if templates.is_empty() {
        return if axes.is_empty() { agree(1, 0) } else { (1..=1024).all(|n| agree(n, 0)) };
    }
    let typical: Vec<i128> = (0..=64).chain((3..=32).map(|m| 32 * m)).collect();
    let sizes: &[i128] = if axes.is_empty() { &[1] } else { &typical[1..] };
    typical.iter().all(|&t| sizes.iter().all(|&n| agree(n, t)))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum LaunchLeaf {
    Extent(u8),
    Template(lockstep_ir::GlobalId),
}

/// Whether a value is computed from constants, group extents and the given
/// template values alone (collecting which).
fn launch_leaves(f: &Function, templates: &[lockstep_ir::GlobalId], v: Value, leaves: &mut Vec<LaunchLeaf>, depth: u32) -> bool {
    if depth > 12 {
        return false;
    }
    let operands: &[Value] = match &f.inst(v).op {
        Op::Convert(x) | Op::Unary(_, x) => &[*x],
        Op::Binary(_, x, y) | Op::Cmp(_, x, y) => &[*x, *y],
        Op::Select(c, x, y) => &[*c, *x, *y],
        _ => &[],
    };
    if !operands.is_empty() {
        return operands.iter().all(|&x| launch_leaves(f, templates, x, leaves, depth + 1));
    }
    match &f.inst(v).op {
        Op::Const(_) => true,
        Op::Builtin(lockstep_ir::Builtin::GroupSize(ax)) => {
            leaves.push(LaunchLeaf::Extent(*ax % 3));
            true
        }
        Op::Load(m) => match m.root {
            lockstep_ir::Root::Global(g) if templates.contains(&g) => {
                leaves.push(LaunchLeaf::Template(g));
                true
            }
            _ => false,
        },
        _ => false,
    }
}
