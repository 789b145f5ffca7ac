//! Memory accesses of a flat kernel and the barrier intervals they fall in.
//!
//! An interval starts at the kernel entry or just after a synchronizing
//! barrier and extends along every path until the next one, following loop
//! back edges: an access reached from the barrier through a back edge runs
//! in the next iteration of that loop while other threads may still run the
//! accesses before the back edge. Two accesses reachable from the same start
//! can be executed by different threads between the same two barrier
//! instances, which is the only way they can race within a group.

use lockstep_analysis::Cfg;
use lockstep_ir::{BlockId, CmpOp, Function, GlobalId, GlobalKind, MemRef, MemSpace, Module, Op, Root, Terminator, UnOp, Value};
use rustc_hash::FxHashSet as HashSet;
use smallvec::SmallVec;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccessKind {
    Read,
    Write,
    /// A read-modify-write; races with plain accesses, and with other
    /// threads' atomic stores only.
    Atomic,
    /// An atomic overwrite whose old value nobody reads (`atomicStore`, an
    /// exchange whose result is dropped): it erases other threads' atomic
    /// arithmetic updates it is not ordered with.
    AtomicStore,
}

impl AccessKind {
    pub fn writes(self) -> bool {
        self != AccessKind::Read
    }
}

/// Which memory an access touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    Shared,
    Device,
}

/// The allocation an access addresses; different allocations never overlap
/// (kernel pointer parameters are assumed not to alias each other).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Alloc {
    Global(GlobalId),
    Param(u32),
    /// Through a pointer the IR cannot trace to a root: may be any allocation of its space.
    Unknown,
}

#[derive(Clone, Debug)]
pub struct Access {
    pub inst: Value,
    pub block: BlockId,
    pub pos: usize,
    pub kind: AccessKind,
    pub space: Space,
    pub alloc: Alloc,
    pub index: Value,
    /// The pointer an untraceable access goes through.
    pub base: Option<Value>,
}

/// Classifies a memory reference; None for private and read-only memory.
/// Untraceable pointers count as device memory unless typed shared.
pub fn classify(module: &Module, m: &MemRef) -> Option<(Space, Alloc)> {
    match m.root {
        Root::Global(g) => {
            let global = module.globals.get(g.index())?;
            let space = match global.kind {
                GlobalKind::GroupShared | GlobalKind::DynamicShared => Space::Shared,
                GlobalKind::Uav | GlobalKind::DeviceVar => Space::Device,
                GlobalKind::ReadOnly | GlobalKind::Constant => return None,
            };
            Some((space, Alloc::Global(g)))
        }
        Root::Param(p) => match m.space {
            MemSpace::Shared => Some((Space::Shared, Alloc::Param(p))),
            MemSpace::Device | MemSpace::Unknown => Some((Space::Device, Alloc::Param(p))),
            MemSpace::Private | MemSpace::Constant => None,
        },
        Root::Ptr(_) => match m.space {
            MemSpace::Shared => Some((Space::Shared, Alloc::Unknown)),
            MemSpace::Device | MemSpace::Unknown => Some((Space::Device, Alloc::Unknown)),
            MemSpace::Private | MemSpace::Constant => None,
        },
        Root::Local(_) => None,
    }
}

pub fn collect_accesses(module: &Module, f: &Function, cfg: &Cfg) -> Vec<Access> {
    let mut out = Vec::new();
    let used = f.used_values();
    for &b in &cfg.rpo {
        for (pos, &v) in f.block(b).insts.iter().enumerate() {
            let (kind, m) = match &f.inst(v).op {
                Op::Load(m) => (AccessKind::Read, m),
                Op::Store(m, _) => (AccessKind::Write, m),
                Op::Atomic(lockstep_ir::AtomicOp::Load, m, _) => (AccessKind::Read, m),
                Op::Atomic(lockstep_ir::AtomicOp::Exchange, m, _) if !used[v.index()] => (AccessKind::AtomicStore, m),
                Op::Atomic(_, m, _) => (AccessKind::Atomic, m),
                _ => continue,
            };
            // A pointer the front end left undefined (an array it could not
            // bind to a parameter) addresses nothing this analysis can name.
            if let Root::Ptr(p) = m.root {
                if matches!(f.inst(p).op, Op::Undef) {
                    continue;
                }
            }
            if let Some((space, alloc)) = classify(module, m) {
                let base = match m.root {
                    Root::Ptr(p) => Some(p),
                    _ => None,
                };
                out.push(Access { inst: v, block: b, pos, kind, space, alloc, index: m.index, base });
            }
        }
    }
    // A construct the front end could not model (a lambda it does not
    // inline), or a function without a body handed a pointer, may write any
    // of the memory the kernel touches, at a cell nobody knows: its result
    // stands for the index (an access whose index is its own instruction),
    // so what it meets is at most a possible race, and a read after it is
    // not uninitialized.
    let mut touched: Vec<(Space, Alloc)> = out.iter().map(|a| (a.space, a.alloc)).collect();
    touched.sort_unstable();
    touched.dedup();
    let mut unmodelled = Vec::new();
    for &b in &cfg.rpo {
        for (pos, &v) in f.block(b).insts.iter().enumerate() {
            // The spaces it may write: any, or those of the pointers a
            // function without a body is handed.
            let spaces: &[Space] = match &f.inst(v).op {
                Op::Call(lockstep_ir::Callee::Unmodelled(_), _) => &[Space::Shared, Space::Device],
                Op::Call(lockstep_ir::Callee::Opaque(_), args) => {
                    let handed = |space: MemSpace| args.iter().any(|&a| f.inst(a).ty == lockstep_ir::Type::Ptr(space));
                    match (handed(MemSpace::Unknown), handed(MemSpace::Shared), handed(MemSpace::Device)) {
                        (true, ..) | (_, true, true) => &[Space::Shared, Space::Device],
                        (_, true, false) => &[Space::Shared],
                        (_, false, true) => &[Space::Device],
                        _ => &[],
                    }
                }
                _ => &[],
            };
            if spaces.is_empty() {
                continue;
            }
            let writes = touched.iter().filter(|(space, _)| spaces.contains(space));
            unmodelled.extend(writes.map(|&(space, alloc)| Access { inst: v, block: b, pos, kind: AccessKind::Write, space, alloc, index: v, base: None }));
        }
    }
    out.extend(unmodelled);
    out
}

/// Per loop of the function (index into `cfg.loops`): back-edge crossings
/// since the interval start, or since the path entered the loop when the
/// start is outside it: 0, 1, [`MANY`] (twice or more), or [`NOT_IN`] (the
/// path is not inside the loop: not entered yet, or left it).
pub type Offsets = Vec<u8>;
pub const MANY: u8 = 2;
pub const NOT_IN: u8 = 3;
/// Only in a race question, on both sides: the later access is in a later
/// iteration than the earlier one, however many later.
pub const APART: u8 = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Start {
    Entry,
    After(Value),
}

#[derive(Clone, Debug)]
pub struct Interval {
    pub start: Start,
    /// (access index, offsets) for every access the interval reaches.
    pub members: Vec<(usize, Offsets)>,
}

/// Where each instruction sits: (block, position).
pub struct Positions {
    at: Vec<Option<(BlockId, usize)>>,
}

impl Positions {
    pub fn new(f: &Function) -> Positions {
        let mut at = vec![None; f.insts.len()];
        for b in f.block_ids() {
            for (i, &v) in f.block(b).insts.iter().enumerate() {
                at[v.index()] = Some((b, i));
            }
        }
        Positions { at }
    }
    pub fn of(&self, v: Value) -> Option<(BlockId, usize)> {
        self.at.get(v.index()).copied().flatten()
    }
}

/// How many bytes of (access, iterations) members all intervals of one
/// kernel may hold: deep loop nests multiply each access's iteration
/// offsets, and loops that may run no iteration put every access after a
/// barrier into its interval.
const MEMBER_BYTES_KEPT: usize = 64 << 20;

/// The intervals between barriers for which `ends` holds; None when the walk
/// gives up, because `out_of_time` says so or its members outgrow
/// [`MEMBER_BYTES_KEPT`].
pub fn intervals(f: &Function, cfg: &Cfg, accesses: &[Access], ends: &dyn Fn(Value) -> bool, out_of_time: &dyn Fn() -> bool) -> Option<Vec<Interval>> {
    // The accesses of each instruction, in order, as a list threaded through
    // `next_access` (an unmodelled construct is one access per allocation it
    // may touch); flat arrays, as this runs once per kernel and question.
    const NONE: u32 = u32::MAX;
    let mut first_access = vec![NONE; f.insts.len()];
    let mut next_access = vec![NONE; accesses.len()];
    for (i, a) in accesses.iter().enumerate().rev() {
        next_access[i] = first_access[a.inst.index()];
        first_access[a.inst.index()] = i as u32;
    }
    let mut starts = vec![(Start::Entry, BlockId(0), 0usize)];
    for &b in &cfg.rpo {
        for (i, &v) in f.block(b).insts.iter().enumerate() {
            if ends(v) {
                starts.push((Start::After(v), b, i + 1));
            }
        }
    }
    // The loop each block heads, and whether its first test always passes
    // (`for (s = 64; s > 0; ...)`).
    let headed: Vec<Option<usize>> = f.block_ids().map(|b| headed_loop(cfg, b)).collect();
    let always_entered: Vec<Option<usize>> = headed
        .iter()
        .map(|&l| l.filter(|&l| CountedLoop::of(f, cfg, l).is_some_and(|c| c.stays_at(c.start) == Some(true))))
        .collect();
    // Offsets inline while a kernel has few loops: the walk copies them per edge.
    type Off = SmallVec<[u8; 8]>;
    // Per block, the positions of the interval ends and accesses in it.
    #[derive(Clone, Copy)]
    enum Event {
        End,
        Access(usize),
    }
    let events: Vec<Vec<(usize, Event)>> = f
        .block_ids()
        .map(|b| {
            let mut events = Vec::new();
            for (i, &v) in f.block(b).insts.iter().enumerate() {
                if ends(v) {
                    events.push((i, Event::End));
                    continue;
                }
                let mut a = first_access[v.index()];
                while a != NONE {
                    events.push((i, Event::Access(a as usize)));
                    a = next_access[a as usize];
                }
            }
            events
        })
        .collect();
    let flags = Flags::of(f);
    let mut out = Vec::new();
    let (mut kept, mut steps) = (0usize, 0usize);
    let members_kept = MEMBER_BYTES_KEPT / (std::mem::size_of::<(usize, Offsets)>() + cfg.loops.len());
    for (start, block, from) in starts {
        if f.blocks.is_empty() {
            break;
        }
        let mut init: Off = SmallVec::from_elem(NOT_IN, cfg.loops.len());
        if start != Start::Entry {
            for &l in &cfg.loops_of[block.index()] {
                init[l] = 0;
            }
        }
        let mut members: Vec<(usize, Offsets)> = Vec::new();
        let mut recorded: HashSet<(usize, Off)> = HashSet::with_capacity_and_hasher(accesses.len(), Default::default());
        // `entering`: this visit of a loop header is that loop's first test.
        let mut seen: HashSet<(BlockId, Off, bool, FlagValues)> = HashSet::with_capacity_and_hasher(2 * f.blocks.len(), Default::default());
        // What the flags hold before the start is not known.
        let unknown = FlagValues::default();
        let mut work: Vec<(BlockId, usize, Off, bool, FlagValues)> = vec![(block, from, init, false, unknown)];
        while let Some((b, from, off, entering, held)) = work.pop() {
            steps += 1;
            if kept + members.len() > members_kept || (steps % 1024 == 0 && out_of_time()) {
                return None;
            }
            let mut stopped = false;
            for &(pos, event) in &events[b.index()] {
                if pos < from {
                    continue;
                }
                match event {
                    Event::End => {
                        stopped = true;
                        break;
                    }
                    Event::Access(ai) => {
                        if recorded.insert((ai, off.clone())) {
                            members.push((ai, off.to_vec()));
                        }
                    }
                }
            }
            if stopped {
                continue;
            }
            let taken = flags.taken(f, b, held);
            for &s in &cfg.succs[b.index()] {
                if taken.is_some_and(|t| t != s) {
                    continue;
                }
                // A loop whose first test always passes is never skipped.
                if let (true, Some(l)) = (entering, always_entered[b.index()]) {
                    if !cfg.loops_of[s.index()].contains(&l) {
                        continue;
                    }
                }
                let mut next = off.clone();
                // Leaving a loop: only loops around the path stay counted, so
                // the states per block stay few however many loops come in a row.
                for &l in &cfg.loops_of[b.index()] {
                    if !cfg.loops_of[s.index()].contains(&l) {
                        next[l] = NOT_IN;
                    }
                }
                let entering_s = match headed[s.index()] {
                    Some(l) if cfg.loops_of[b.index()].contains(&l) => {
                        next[l] = if next[l] == NOT_IN { MANY } else { (next[l] + 1).min(MANY) };
                        false
                    }
                    Some(l) => {
                        next[l] = 0;
                        true
                    }
                    None => false,
                };
                let held_s = flags.enter(f, b, s, held);
                if seen.insert((s, next.clone(), entering_s, held_s)) {
                    work.push((s, 0, next, entering_s, held_s));
                }
            }
        }
        kept += members.len();
        out.push(Interval { start, members });
    }
    Some(out)
}

/// The values of the tracked flags along one path: two bits per flag,
/// 0 for not known, 1 for false (0) and 2 for true (1); a flag holding any
/// other value is not known. Small, as it is part of every walk state.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
struct FlagValues(u16);

impl FlagValues {
    fn get(self, i: usize) -> Option<i64> {
        match (self.0 >> (2 * i)) & 3 {
            1 => Some(0),
            2 => Some(1),
            _ => None,
        }
    }

    fn set(&mut self, i: usize, value: Option<i64>) {
        let bits = match value {
            Some(0) => 1,
            Some(1) => 2,
            _ => 0,
        };
        self.0 = (self.0 & !(3 << (2 * i))) | (bits << (2 * i));
    }
}

/// Flags: phis that only ever hold constants or other flags and that decide
/// a branch (`bool need_barrier = false; for (…) { if (need_barrier)
/// barrier(); need_barrier = true; … }`). The interval walk carries their
/// values so that it does not follow a branch the path has already decided:
/// after the first iteration that barrier opens every iteration.
struct Flags {
    phis: Vec<Value>,
    /// Per instruction, its position in `phis`.
    slot: Vec<Option<usize>>,
    /// Per block, the tracked phis it holds.
    in_block: Vec<SmallVec<[Value; 1]>>,
}

impl Flags {
    /// More flags than this are not tracked: each one can double the walk's states.
    const MOST: usize = 6;

    fn of(f: &Function) -> Flags {
        let none = || Flags { phis: Vec::new(), slot: Vec::new(), in_block: Vec::new() };
        // Most kernels have no phi with a constant coming in: nothing to track.
        let constant_in = |v: &Value| matches!(&f.inst(*v).op, Op::Phi(incoming) if incoming.iter().any(|&(_, x)| f.as_int(x).is_some()));
        if !f.block_ids().any(|b| f.block(b).insts.iter().any(constant_in)) {
            return none();
        }
        let phis_of = |v: Value| match &f.inst(v).op {
            Op::Phi(incoming) => Some(incoming),
            _ => None,
        };
        let mut candidate = vec![false; f.insts.len()];
        // Per phi, the phis it feeds.
        let mut users: Vec<Vec<Value>> = vec![Vec::new(); f.insts.len()];
        let mut work: Vec<Value> = Vec::new();
        for b in f.block_ids() {
            for &v in &f.block(b).insts {
                if let Some(incoming) = phis_of(v) {
                    candidate[v.index()] = true;
                    work.push(v);
                    incoming.iter().for_each(|&(_, x)| users[x.index()].push(v));
                }
            }
        }
        // Drop phis fed by anything but constants and candidates, to a fixed point.
        while let Some(v) = work.pop() {
            let Some(incoming) = phis_of(v) else { continue };
            if candidate[v.index()] && !incoming.iter().all(|&(_, x)| f.as_int(x).is_some() || candidate[x.index()]) {
                candidate[v.index()] = false;
                work.extend(users[v.index()].iter().copied());
            }
        }
        // Keep those a branch tests, and the flags they are copied from.
        let mut phis = Vec::new();
        let mut slot = vec![None; f.insts.len()];
        for b in f.block_ids() {
            if let Terminator::Branch { cond, .. } | Terminator::Switch { value: cond, .. } = f.block(b).term {
                tested_flags(f, cond, &candidate, &mut work);
            }
        }
        while let Some(v) = work.pop() {
            if slot[v.index()].is_some() {
                continue;
            }
            if phis.len() == Flags::MOST {
                return none();
            }
            slot[v.index()] = Some(phis.len());
            phis.push(v);
            if let Op::Phi(incoming) = &f.inst(v).op {
                work.extend(incoming.iter().map(|&(_, x)| x).filter(|x| candidate[x.index()]));
            }
        }
        let mut in_block = vec![SmallVec::new(); f.blocks.len()];
        if !phis.is_empty() {
            for b in f.block_ids() {
                in_block[b.index()] = f.block(b).insts.iter().copied().filter(|v| slot[v.index()].is_some()).collect();
            }
        }
        Flags { phis, slot, in_block }
    }

    /// The value of `v` on a path where the flags hold `held`.
    fn value(&self, f: &Function, v: Value, held: FlagValues) -> Option<i64> {
        let flag = |x: Value, _: &Op| self.slot.get(x.index()).copied().flatten().and_then(|i| held.get(i)).map(i128::from);
        lockstep_analysis::decided::evaluate(f, v, &flag).map(|x| x as i64)
    }

    /// The one successor of `b` a path with these flag values takes, if its branch is decided.
    fn taken(&self, f: &Function, b: BlockId, held: FlagValues) -> Option<BlockId> {
        if self.phis.is_empty() {
            return None;
        }
        match &f.block(b).term {
            Terminator::Branch { cond, then_to, else_to } => Some(if self.value(f, *cond, held)? != 0 { *then_to } else { *else_to }),
            Terminator::Switch { value, cases, default } => {
                let v = self.value(f, *value, held)? as u64;
                Some(cases.iter().find(|c| c.0 == v).map_or(*default, |c| c.1))
            }
            _ => None,
        }
    }

    /// The flag values after the edge `from -> to`, whose phis all take their value at once.
    fn enter(&self, f: &Function, from: BlockId, to: BlockId, held: FlagValues) -> FlagValues {
        let mut next = held;
        for &v in self.in_block.get(to.index()).into_iter().flatten() {
            let (Op::Phi(incoming), Some(i)) = (&f.inst(v).op, self.slot[v.index()]) else { continue };
            next.set(i, incoming.iter().find(|x| x.0 == from).and_then(|&(_, x)| self.value(f, x, held)));
        }
        next
    }
}

/// The flag candidates a branch condition tests (through `!` and
/// comparisons, a few deep: what `decided::evaluate` follows).
fn tested_flags(f: &Function, cond: Value, candidate: &[bool], out: &mut Vec<Value>) {
    let mut stack = vec![(cond, 0)];
    while let Some((v, depth)) = stack.pop() {
        if candidate[v.index()] {
            out.push(v);
            continue;
        }
        match &f.inst(v).op {
            Op::Unary(UnOp::LNot, x) if depth < 16 => stack.push((*x, depth + 1)),
            Op::Cmp(_, x, y) if depth < 16 => stack.extend([(*x, depth + 1), (*y, depth + 1)]),
            _ => {}
        }
    }
}

/// The loop `b` heads.
fn headed_loop(cfg: &Cfg, b: BlockId) -> Option<usize> {
    cfg.loops.iter().position(|l| l.header == b)
}

/// A loop whose only exit is its header's comparison of a header phi with a
/// constant, entered with a constant start value: `for (s = 64; s > 0; s >>= 1)`.
pub struct CountedLoop {
    pub phi: Value,
    pub start: i128,
    op: CmpOp,
    bound: i128,
    /// Which outcome of the comparison stays in the loop.
    stays: bool,
    unsigned: bool,
}

impl CountedLoop {
    pub fn of(f: &Function, cfg: &Cfg, l: usize) -> Option<CountedLoop> {
        let lp = &cfg.loops[l];
        if lp.exiting != [lp.header] {
            return None;
        }
        let Terminator::Branch { cond, then_to, else_to } = &f.block(lp.header).term else { return None };
        let inside = |b: BlockId| lp.blocks.binary_search(&b).is_ok();
        let stays = match (inside(*then_to), inside(*else_to)) {
            (true, false) => true,
            (false, true) => false,
            _ => return None,
        };
        let Op::Cmp(op, x, y) = &f.inst(*cond).op else { return None };
        let (phi, bound, op) = match (f.as_int(*x), f.as_int(*y)) {
            (None, Some(c)) => (*x, c, *op),
            (Some(c), None) => (*y, c, mirrored(*op)),
            _ => return None,
        };
        let Op::Phi(incoming) = &f.inst(phi).op else { return None };
        let mut starts = incoming.iter().filter(|i| !inside(i.0)).map(|i| f.as_int(i.1));
        let start = starts.next()??;
        if !starts.all(|s| s == Some(start)) {
            return None;
        }
        let unsigned = !f.inst(phi).ty.is_signed();
        Some(CountedLoop { phi, start: start as i128, op, bound: bound as i128, stays, unsigned })
    }

    /// Whether the header's test keeps a thread in the loop when the phi
    /// holds `value`; None for a value the phi's type cannot hold.
    pub fn stays_at(&self, value: i128) -> Option<bool> {
        if self.unsigned && (value < 0 || self.bound < 0) {
            return None;
        }
        let holds = match self.op {
            CmpOp::Eq => value == self.bound,
            CmpOp::Ne => value != self.bound,
            CmpOp::Lt => value < self.bound,
            CmpOp::Le => value <= self.bound,
            CmpOp::Gt => value > self.bound,
            CmpOp::Ge => value >= self.bound,
        };
        Some(holds == self.stays)
    }
}

/// `a op b` as `b op' a`.
fn mirrored(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        other => other,
    }
}

/// Whether `to` can execute after `from` in the same thread without passing
/// an instruction for which `stop` holds (`from` itself is not tested;
/// `from == to` asks whether a loop brings the thread back).
pub fn reaches(f: &Function, cfg: &Cfg, pos: &Positions, from: Value, to: Value, stop: &dyn Fn(Value) -> bool) -> bool {
    let Some((fb, fi)) = pos.of(from) else { return false };
    reaches_along(f, cfg, pos, (fb, fi + 1), to, stop, &|_, _| false)
}

/// Whether `to` can execute after the point `start` (a block and the index
/// of the first instruction to run) without passing an instruction for
/// which `stop` holds, nor an edge for which `blocked` holds.
pub fn reaches_along(
    f: &Function,
    cfg: &Cfg,
    pos: &Positions,
    start: (BlockId, usize),
    to: Value,
    stop: &dyn Fn(Value) -> bool,
    blocked: &dyn Fn(BlockId, BlockId) -> bool,
) -> bool {
    if pos.of(to).is_none() {
        return false;
    }
    let mut seen = vec![false; f.blocks.len()];
    let mut work: Vec<(BlockId, usize)> = vec![start];
    while let Some((b, start)) = work.pop() {
        let mut stopped = false;
        for &v in f.block(b).insts.iter().skip(start) {
            if v == to {
                return true;
            }
            if stop(v) {
                stopped = true;
                break;
            }
        }
        if stopped {
            continue;
        }
        for &s in &cfg.succs[b.index()] {
            if !seen[s.index()] && !blocked(b, s) {
                seen[s.index()] = true;
                work.push((s, 0));
            }
        }
    }
    false
}

/// The instructions that can execute after one of `from` in the same thread
/// without passing an instruction for which `stop` holds: [`reaches`] from a
/// set, in one walk (`from` themselves count only when a loop brings the
/// thread back).
pub fn reached_from(f: &Function, cfg: &Cfg, pos: &Positions, from: impl IntoIterator<Item = Value>, stop: &dyn Fn(Value) -> bool) -> HashSet<Value> {
    let mut reached = HashSet::default();
    let mut entered = vec![false; f.blocks.len()];
    let mut work: Vec<(BlockId, usize)> = from.into_iter().filter_map(|v| pos.of(v)).map(|(b, i)| (b, i + 1)).collect();
    while let Some((b, start)) = work.pop() {
        let mut stopped = false;
        for &v in f.block(b).insts.iter().skip(start) {
            if stop(v) {
                stopped = true;
                break;
            }
            reached.insert(v);
        }
        if stopped {
            continue;
        }
        for &s in &cfg.succs[b.index()] {
            if !std::mem::replace(&mut entered[s.index()], true) {
                work.push((s, 0));
            }
        }
    }
    reached
}

/// Like [`reaches`], but only along paths that cross a loop back edge: the
/// `to` it finds runs in a later iteration than `from`.
pub fn reaches_next_iteration(f: &Function, cfg: &Cfg, pos: &Positions, from: Value, to: Value, stop: &dyn Fn(Value) -> bool) -> bool {
    let Some((fb, fi)) = pos.of(from) else { return false };
    let mut seen = vec![[false; 2]; f.blocks.len()];
    let mut work: Vec<(BlockId, usize, bool)> = vec![(fb, fi + 1, false)];
    while let Some((b, start, crossed)) = work.pop() {
        let mut stopped = false;
        for &v in f.block(b).insts.iter().skip(start) {
            if v == to && crossed {
                return true;
            }
            if stop(v) {
                stopped = true;
                break;
            }
        }
        if stopped {
            continue;
        }
        for &s in &cfg.succs[b.index()] {
            let c = crossed || cfg.is_back_edge(b, s);
            if !std::mem::replace(&mut seen[s.index()][c as usize], true) {
                work.push((s, 0, c));
            }
        }
    }
    false
}
