//! Execution of one thread group: the interpreter loop, memory, wave
//! operations, barriers and the scheduler.
//!
//! A [`Worker`] owns the state of one group at a time (registers, private and
//! shared memory, shadow state) and is reused for the next group, so running
//! a group allocates nothing once the buffers have grown.
//!
//! Scheduling: every ready thread runs until it parks (at a barrier or a wave
//! operation) or finishes; round-robin and reverse do this in thread order,
//! random picks a random ready thread and runs it for a random quantum of
//! 1 to 64 instructions, so interleavings differ between seeds.
//! When all threads are parked, pending wave operations execute (per wave,
//! among the lanes waiting at the same instruction, holding one back while
//! lanes that can still reach it are parked elsewhere, so diverged lanes
//! reconverge before a wave operation after the branch); when only barriers are
//! left, the group is released (reporting divergence if not every thread
//! waits at the same barrier).

use crate::detect::{self, Cell, Event, Events, Firsts, Hazard, Kind, Place, Rec, Sites, Who, Wit, NONE};
use crate::layout::{Alloc, Class};
use crate::program::{Base, Code, Mem, Program, NO_INST};
use crate::value::{self, make_ptr, split_ptr, Ty};
use crate::Scheduler;
use lockstep_ir::{AtomicOp, BarrierReduce, BinOp, Builtin, MathFn, WaveOp};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Read-only state shared by all workers of a run.
pub(crate) struct Ctx<'a> {
    pub prog: &'a Program,
    pub allocs: &'a [Alloc],
    /// Per allocation, whether the kernel may write it (`program::written_allocs`).
    pub written: &'a [bool],
    pub device: &'a [AtomicU64],
    pub constant: &'a [u64],
    pub shared_init: &'a [u64],
    pub shared_preset: &'a [bool],
    pub private_init: &'a [u64],
    pub group_size: [u32; 3],
    pub num_groups: [u32; 3],
    pub wave: u32,
    pub scheduler: Scheduler,
    pub seed: u64,
    pub max_steps: u64,
    /// Whether groups report their first accesses per device cell (for
    /// conflicts between groups).
    pub cross_groups: bool,
    pub abort: &'a AtomicBool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Ready,
    Barrier,
    Wave,
    Done,
}

#[derive(Clone, Copy, Debug)]
struct Th {
    pc: u32,
    status: Status,
    steps: u64,
    depth: u32,
}

const PAGE_BITS: u32 = 8;
const PAGE: usize = 1 << PAGE_BITS;

/// Shadow of one page of device cells for the group being run.
struct DevPage {
    page: u32,
    cells: [Cell; PAGE],
    firsts: [Firsts; PAGE],
}

/// Device-memory shadow of the group being run: pages allocated when the
/// group first touches them (buffers can be large, groups touch little of
/// them), and kept for the worker's next groups without clearing: a cell
/// left by an earlier group has an older interval (device intervals count on
/// across a worker's groups) and witnesses of another group, so it reads as
/// fresh.
struct DevShadow {
    /// Page number to its slot in `pages` (`NONE`: not touched by this group).
    index: Vec<u32>,
    pages: Vec<Box<DevPage>>,
    used: usize,
    /// The page found last (page number, slot): accesses cluster.
    last: (u32, u32),
}

impl DevShadow {
    fn new(device_cells: usize) -> DevShadow {
        DevShadow { index: vec![NONE; device_cells.div_ceil(PAGE)], pages: Vec::new(), used: 0, last: (NONE, 0) }
    }

    /// Forgets the pages of the last group; `wipe` also resets their contents
    /// (when device intervals start again from 1).
    fn clear(&mut self, wipe: bool) {
        for p in &self.pages[..self.used] {
            self.index[p.page as usize] = NONE;
        }
        if wipe {
            for p in &mut self.pages {
                p.cells.fill(Cell::INITIALISED);
                p.firsts.fill(Firsts::EMPTY);
            }
        }
        self.used = 0;
        self.last = (NONE, 0);
    }

    #[inline]
    fn at(&mut self, idx: usize) -> (&mut Cell, &mut Firsts) {
        let page = (idx >> PAGE_BITS) as u32;
        let slot = if self.last.0 == page { self.last.1 } else { self.slot(page) };
        let p = &mut self.pages[slot as usize];
        let i = idx & (PAGE - 1);
        (&mut p.cells[i], &mut p.firsts[i])
    }

    fn slot(&mut self, page: u32) -> u32 {
        let slot = match self.index[page as usize] {
            NONE => {
                let s = self.used;
                self.used += 1;
                if s == self.pages.len() {
                    self.pages.push(Box::new(DevPage { page, cells: [Cell::INITIALISED; PAGE], firsts: [Firsts::EMPTY; PAGE] }));
                } else {
                    self.pages[s].page = page;
                }
                self.index[page as usize] = s as u32;
                s as u32
            }
            s => s,
        };
        self.last = (page, slot);
        slot
    }

    /// The first accesses of `group` per cell it touched, by cell index.
    fn firsts(&self, group: u32) -> Vec<(u32, Firsts)> {
        let mut pages: Vec<&DevPage> = self.pages[..self.used].iter().map(|p| &**p).collect();
        pages.sort_by_key(|p| p.page);
        let mut out = Vec::new();
        for p in pages {
            let base = p.page << PAGE_BITS;
            let mine = |w: Wit| if w.group == group { w } else { Wit::EMPTY };
            let firsts = p.firsts.iter().map(|f| Firsts { write: mine(f.write), read: mine(f.read) });
            out.extend(firsts.enumerate().filter(|(_, f)| f.is_some()).map(|(i, f)| (base + i as u32, f)));
        }
        out
    }
}


/// What a group run produced.
pub(crate) struct GroupResult {
    pub events: Events,
    pub instructions: u64,
    /// First accesses per device cell, by cell index, for cross-group checks.
    pub device: Vec<(u32, Firsts)>,
    pub aborted: bool,
    /// Last value of each register per thread, with whether it was ever set.
    pub trace: Option<Vec<Vec<Option<u64>>>>,
}

/// Memory and shadow state of the group being run.
struct MemState {
    private: Vec<u64>,
    private_cells: usize,
    shared: Vec<u64>,
    sh_shadow: Vec<Cell>,
    /// Shadow of shared memory when a group starts.
    sh_fresh: Vec<Cell>,
    sh_sites: Sites,
    /// Shadow of the device cells this group touched.
    dev: DevShadow,
    dev_sites: Sites,
    cross_groups: bool,
    /// Per allocation, whether the kernel may write it.
    written: Vec<bool>,
    epoch_shared: u32,
    epoch_device: u32,
    /// Wave-level barriers each wave has passed.
    wave_epochs: Vec<u32>,
    group: u32,
    events: Events,
}

pub(crate) struct Worker {
    n: usize,
    regs: Vec<u64>,
    th: Vec<Th>,
    /// (loop id, back edges taken) per thread and nesting level.
    loops: Vec<(u32, u32)>,
    scratch: Vec<u64>,
    /// Threads waiting at barriers (reused between releases).
    waiting: Vec<usize>,
    seen: Vec<bool>,
    mem: MemState,
    rng: u64,
    instructions: u64,
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Key tags for deduplication (one per finding kind).
const K_RAW: u8 = 0;
const K_WAR: u8 = 1;
const K_WAW: u8 = 2;
const K_UNINIT: u8 = 3;
const K_FIRST: u8 = 4;
const K_DEVICE: u8 = 5;
const K_OOB: u8 = 6;
const K_RO: u8 = 7;
const K_DIVERGE: u8 = 8;
const K_RUNAWAY: u8 = 9;
const K_TRAP: u8 = 10;
pub(crate) const K_CROSS: u8 = 11;

impl MemState {
    fn report_hazard(&mut self, device: bool, alloc: u32, cell: u64, me: Rec, kind: Kind, hit: (Hazard, Rec, Kind)) {
        let (hazard, other, other_kind) = hit;
        let tag = if device {
            K_DEVICE
        } else {
            match hazard {
                Hazard::Raw => K_RAW,
                Hazard::War => K_WAR,
                Hazard::Waw => K_WAW,
                Hazard::Uninit => K_UNINIT,
                Hazard::UnsyncedFirst => K_FIRST,
            }
        };
        let group = self.group;
        self.events.add((tag, me.inst, other.inst), || Event::Hazard {
            hazard,
            device,
            alloc,
            cell,
            later: Who { group, rec: me, kind },
            earlier: (other.thread != NONE).then_some(Who { group, rec: other, kind: other_kind }),
        });
    }

    /// The allocation a pointer names; reports null and invalid pointers.
    #[inline]
    fn alloc<'c>(&mut self, ctx: &Ctx<'c>, alloc: u32, me: Rec, kind: Kind) -> Option<&'c Alloc> {
        let a = ctx.allocs.get(alloc as usize);
        if a.is_none() {
            let group = self.group;
            self.events.add((K_OOB, me.inst, 1), || Event::BadPointer { who: Who { group, rec: me, kind } });
        }
        a
    }

    /// Bounds check; reports and returns None when outside the allocation.
    #[inline]
    fn cell(&mut self, a: &Alloc, alloc: u32, off: i64, me: Rec, kind: Kind) -> Option<u64> {
        if off >= 0 && (off as u64) < a.len {
            return Some(off as u64);
        }
        let group = self.group;
        self.events.add((K_OOB, me.inst, 0), || Event::OutOfBounds { alloc, cell: off, who: Who { group, rec: me, kind } });
        None
    }

    #[inline]
    fn detect(&mut self, class: Class, idx: usize, alloc: u32, cell: u64, me: Rec, kind: Kind) {
        match class {
            Class::Shared => {
                let me = Rec { epoch: self.epoch_shared, ..me };
                if let Some(hit) = detect::check(&mut self.sh_shadow[idx], &mut self.sh_sites, kind, me, true) {
                    self.report_hazard(false, alloc, cell, me, kind, hit);
                }
            }
            // Nothing writes this buffer: its reads cannot race.
            Class::Device if !kind.writes() && !self.written[alloc as usize] => {}
            Class::Device => {
                let me = Rec { epoch: self.epoch_device, ..me };
                let (cell_shadow, firsts) = self.dev.at(idx);
                if self.cross_groups {
                    firsts.note(kind, self.group, &me);
                }
                if let Some(hit) = detect::check(cell_shadow, &mut self.dev_sites, kind, me, false) {
                    self.report_hazard(true, alloc, cell, me, kind, hit);
                }
            }
            Class::Constant | Class::Private => {}
        }
    }

    #[inline]
    fn read<const D: bool>(&mut self, ctx: &Ctx, t: usize, alloc: u32, off: i64, me: Rec) -> u64 {
        let Some(a) = self.alloc(ctx, alloc, me, Kind::Read) else {
            return 0;
        };
        let Some(cell) = self.cell(a, alloc, off, me, Kind::Read) else {
            return 0;
        };
        let idx = a.base + cell as usize;
        if D {
            self.detect(a.class, idx, alloc, cell, me, Kind::Read);
        }
        match a.class {
            Class::Private => self.private[t * self.private_cells + idx],
            Class::Shared => self.shared[idx],
            Class::Device => ctx.device[idx].load(Ordering::Relaxed),
            Class::Constant => ctx.constant[idx],
        }
    }

    #[inline]
    fn write<const D: bool>(&mut self, ctx: &Ctx, t: usize, alloc: u32, off: i64, me: Rec, v: u64) {
        let Some(a) = self.alloc(ctx, alloc, me, Kind::Write) else {
            return;
        };
        let Some(cell) = self.cell(a, alloc, off, me, Kind::Write) else {
            return;
        };
        let idx = a.base + cell as usize;
        if D {
            self.detect(a.class, idx, alloc, cell, me, Kind::Write);
        }
        match a.class {
            Class::Private => self.private[t * self.private_cells + idx] = v,
            Class::Shared => self.shared[idx] = v,
            Class::Device => ctx.device[idx].store(v, Ordering::Relaxed),
            Class::Constant => {
                let group = self.group;
                self.events.add((K_RO, me.inst, 0), || Event::ReadOnlyWrite { alloc, cell, who: Who { group, rec: me, kind: Kind::Write } });
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn atomic<const D: bool>(&mut self, ctx: &Ctx, t: usize, alloc: u32, off: i64, me: Rec, op: AtomicOp, overwrite: bool, ty: Ty, args: [u64; 2]) -> u64 {
        let kind = match op {
            AtomicOp::Load => Kind::AtomicRead,
            AtomicOp::Exchange if overwrite => Kind::AtomicStore,
            AtomicOp::Exchange | AtomicOp::CompareExchange => Kind::AtomicSwap,
            _ => Kind::Atomic,
        };
        let Some(a) = self.alloc(ctx, alloc, me, kind) else {
            return 0;
        };
        let Some(cell) = self.cell(a, alloc, off, me, kind) else {
            return 0;
        };
        let idx = a.base + cell as usize;
        if D {
            self.detect(a.class, idx, alloc, cell, me, kind);
        }
        let f = |old: u64| atomic_new(op, ty, old, args);
        match a.class {
            Class::Private => {
                let c = &mut self.private[t * self.private_cells + idx];
                let old = *c;
                *c = f(old);
                old
            }
            Class::Shared => {
                let old = self.shared[idx];
                self.shared[idx] = f(old);
                old
            }
            // Groups run in parallel: device atomics must be atomic on the host too.
            Class::Device => ctx.device[idx].fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| Some(f(old))).unwrap_or(0),
            Class::Constant => {
                if kind.writes() {
                    let group = self.group;
                    self.events.add((K_RO, me.inst, 0), || Event::ReadOnlyWrite { alloc, cell, who: Who { group, rec: me, kind } });
                }
                ctx.constant[idx]
            }
        }
    }
}

fn atomic_new(op: AtomicOp, ty: Ty, old: u64, args: [u64; 2]) -> u64 {
    let [a, b] = args;
    match op {
        AtomicOp::Add => value::binary(BinOp::Add, ty, old, a),
        AtomicOp::Sub => value::binary(BinOp::Sub, ty, old, a),
        AtomicOp::And => old & a,
        AtomicOp::Or => old | a,
        AtomicOp::Xor => old ^ a,
        AtomicOp::Min => value::math(MathFn::Min, ty, ty, &[old, a, 0]),
        AtomicOp::Max => value::math(MathFn::Max, ty, ty, &[old, a, 0]),
        AtomicOp::Exchange => a,
        AtomicOp::CompareExchange => {
            if old & ty.mask() == a & ty.mask() {
                b
            } else {
                old
            }
        }
        // CUDA's atomicInc/atomicDec wrap at the operand; HLSL-style ones without it step by one.
        AtomicOp::Inc => {
            if old & ty.mask() >= a & ty.mask() && a != 0 {
                0
            } else {
                value::binary(BinOp::Add, ty, old, 1)
            }
        }
        AtomicOp::Dec => {
            if a != 0 && (old == 0 || old & ty.mask() > a & ty.mask()) {
                a
            } else {
                value::binary(BinOp::Sub, ty, old, 1)
            }
        }
        AtomicOp::Load => old,
    }
}

#[inline]
fn index(r: &[u64], idx: u32, ty: Ty) -> i64 {
    value::as_i64(ty, r[idx as usize])
}

#[inline]
fn addr(r: &[u64], m: &Mem) -> (u32, i64) {
    let i = index(r, m.idx, m.idx_ty);
    match m.base {
        Base::Alloc(a) => (a, i),
        Base::Ptr(p) => {
            let (a, off) = split_ptr(r[p as usize]);
            (a, off.wrapping_add(i))
        }
    }
}

impl Worker {
    pub fn new(ctx: &Ctx, detect_races: bool) -> Worker {
        let [x, y, z] = ctx.group_size;
        let n = (x * y * z) as usize;
        let prog = ctx.prog;
        let md = prog.max_loop_depth.max(1);
        Worker {
            n,
            regs: vec![0; n * prog.nregs],
            th: vec![Th { pc: 0, status: Status::Done, steps: 0, depth: 0 }; n],
            loops: vec![(0, 0); n * md],
            scratch: Vec::new(),
            waiting: Vec::with_capacity(n),
            seen: Vec::new(),
            mem: MemState {
                private: vec![0; n * ctx.private_init.len()],
                private_cells: ctx.private_init.len(),
                shared: ctx.shared_init.to_vec(),
                sh_shadow: if detect_races { vec![Cell::EMPTY; ctx.shared_init.len()] } else { Vec::new() },
                sh_fresh: if detect_races {
                    ctx.shared_preset.iter().map(|&p| if p { Cell::INITIALISED } else { Cell::EMPTY }).collect()
                } else {
                    Vec::new()
                },
                sh_sites: Sites::new(if detect_races { n } else { 0 }),
                dev: DevShadow::new(if detect_races { ctx.device.len() } else { 0 }),
                dev_sites: Sites::new(if detect_races { n } else { 0 }),
                cross_groups: ctx.cross_groups,
                written: ctx.written.to_vec(),
                epoch_shared: 0,
                epoch_device: 0,
                wave_epochs: vec![0; n.div_ceil(ctx.wave as usize)],
                group: 0,
                events: Events::default(),
            },
            rng: 0,
            instructions: 0,
        }
    }

    /// Runs group `gid` (linear index `glin`) to completion.
    pub fn run_group<const D: bool, const T: bool>(&mut self, ctx: &Ctx, gid: [u32; 3], glin: u32) -> GroupResult {
        self.start(ctx, gid, glin, D, T);
        let aborted = self.schedule::<D, T>(ctx);
        let device = if D && ctx.cross_groups { self.mem.dev.firsts(glin) } else { Vec::new() };
        let trace = T.then(|| {
            let nr = ctx.prog.nregs;
            (0..self.n).map(|t| (0..nr).map(|v| self.seen[t * nr + v].then(|| self.regs[t * nr + v])).collect()).collect()
        });
        GroupResult { events: std::mem::take(&mut self.mem.events), instructions: self.instructions, device, aborted, trace }
    }

    fn start(&mut self, ctx: &Ctx, gid: [u32; 3], glin: u32, detect_races: bool, trace: bool) {
        let prog = ctx.prog;
        let nr = prog.nregs;
        let [sx, sy, _] = ctx.group_size;
        for t in 0..self.n {
            let r = &mut self.regs[t * nr..(t + 1) * nr];
            r.copy_from_slice(&prog.template);
            let l = t as u32;
            let local = [l % sx, (l / sx) % sy, l / (sx * sy)];
            for &(d, b) in &prog.builtins {
                r[d as usize] = match b {
                    Builtin::LocalId(a) => local[a as usize % 3],
                    Builtin::GroupId(a) => gid[a as usize % 3],
                    Builtin::GroupSize(a) => ctx.group_size[a as usize % 3],
                    Builtin::NumGroups(a) => ctx.num_groups[a as usize % 3],
                    Builtin::LocalIndex => l,
                    Builtin::LaneId => l % ctx.wave,
                    Builtin::WaveSize => ctx.wave,
                } as u64;
            }
            self.th[t] = Th { pc: prog.entry_pc, status: Status::Ready, steps: 0, depth: 0 };
        }
        let pc = ctx.private_init.len();
        for t in 0..self.n {
            self.mem.private[t * pc..(t + 1) * pc].copy_from_slice(ctx.private_init);
        }
        self.mem.shared.copy_from_slice(ctx.shared_init);
        if detect_races {
            self.mem.sh_shadow.copy_from_slice(&self.mem.sh_fresh);
            self.mem.sh_sites.clear();
            // Device intervals go on from the last group's (see `DevShadow`), far from the flag bit.
            let wipe = self.mem.epoch_device >= 1 << 30;
            self.mem.dev.clear(wipe);
            self.mem.epoch_device = if wipe { 1 } else { self.mem.epoch_device + 1 };
            self.mem.dev_sites.clear();
        }
        // Interval 0 stands for "before the group started" (initialised cells).
        self.mem.epoch_shared = 1;
        self.mem.wave_epochs.fill(0);
        self.mem.group = glin;
        self.mem.events.clear();
        self.instructions = 0;
        self.rng = ctx.seed ^ (glin as u64).wrapping_mul(0xa076_1d64_78bd_642f);
        if trace {
            self.seen.clear();
            self.seen.resize(self.n * nr, false);
            for t in 0..self.n {
                for &d in &prog.block_defs[prog.entry_block as usize] {
                    self.seen[t * nr + d as usize] = true;
                }
            }
        }
    }

    /// Runs the group until every thread finished; true when aborted.
    fn schedule<const D: bool, const T: bool>(&mut self, ctx: &Ctx) -> bool {
        let n = self.n;
        let mut ready: Vec<usize> = Vec::with_capacity(n);
        loop {
            match ctx.scheduler {
                Scheduler::RoundRobin | Scheduler::Reverse => {
                    for i in 0..n {
                        let t = if ctx.scheduler == Scheduler::Reverse { n - 1 - i } else { i };
                        if self.th[t].status == Status::Ready && self.run_thread::<D, T>(ctx, t, u64::MAX) {
                            return true;
                        }
                    }
                }
                Scheduler::Random => {
                    ready.clear();
                    ready.extend((0..n).filter(|&t| self.th[t].status == Status::Ready));
                    while !ready.is_empty() {
                        let r = splitmix(&mut self.rng);
                        let i = (r % ready.len() as u64) as usize;
                        // Log-uniform quanta (1, 2, 4, .. 64): short ones expose fine-grained interleavings.
                        let quantum = 1 << ((r >> 32) % 7);
                        if self.run_thread::<D, T>(ctx, ready[i], quantum) {
                            return true;
                        }
                        if self.th[ready[i]].status != Status::Ready {
                            ready.swap_remove(i);
                        }
                    }
                }
            }
            if ctx.abort.load(Ordering::Relaxed) {
                return true;
            }
            let (mut waves, mut barriers) = (false, false);
            for th in &self.th {
                waves |= th.status == Status::Wave;
                barriers |= th.status == Status::Barrier;
            }
            if waves {
                self.run_waves::<T>(ctx);
                continue;
            }
            if !barriers {
                return false;
            }
            self.release_barrier::<T>(ctx);
        }
    }

    fn run_waves<const T: bool>(&mut self, ctx: &Ctx) {
        let ws = ctx.wave as usize;
        let mut lanes: Vec<usize> = Vec::with_capacity(ws);
        for w0 in (0..self.n).step_by(ws) {
            let w1 = (w0 + ws).min(self.n);
            // Lanes waiting at one wave instruction run it together; one instruction per
            // wave per round, so the lanes it releases run before the next. Among several,
            // one that no other waiting lane can still reach goes first: lanes behind
            // catch up, as they reconverge on a GPU.
            if let Some(first) = (w0..w1).find(|&t| self.th[t].status == Status::Wave) {
                let mut pc = self.th[first].pc;
                if let Some(reach) = &ctx.prog.reach {
                    let waiting = |t: &usize| self.th[*t].status == Status::Wave;
                    let behind = |q: u32| {
                        (w0..w1).filter(waiting).any(|u| self.th[u].pc != q && reach.reaches(self.th[u].pc, q) && !reach.reaches(q, self.th[u].pc))
                    };
                    if let Some(t) = (w0..w1).filter(waiting).find(|&t| !behind(self.th[t].pc)) {
                        pc = self.th[t].pc;
                    }
                }
                lanes.clear();
                lanes.extend((w0..w1).filter(|&t| self.th[t].status == Status::Wave && self.th[t].pc == pc));
                self.exec_wave::<T>(ctx, pc, w0, w1, &lanes);
            }
        }
    }

    fn exec_wave<const T: bool>(&mut self, ctx: &Ctx, pc: u32, w0: usize, w1: usize, lanes: &[usize]) {
        if let Code::WaveSync = ctx.prog.code[pc as usize] {
            self.mem.wave_epochs[w0 / ctx.wave as usize] += 1;
            for &t in lanes {
                self.th[t].pc += 1;
                self.th[t].status = Status::Ready;
            }
            self.instructions += lanes.len() as u64;
            return;
        }
        let Code::Wave { op, ty, rty, d, args, nargs } = ctx.prog.code[pc as usize] else { unreachable!("parked at a wave op") };
        let nr = ctx.prog.nregs;
        let val = |t: usize, i: usize| self.regs[t * nr + args[i] as usize];
        let lane = |t: usize| (t - w0) as u64;
        let truthy = |t: usize| val(t, 0) != 0;
        let fold = |ts: &mut dyn Iterator<Item = usize>, init: Option<u64>| -> u64 {
            let mut acc = init;
            for t in ts {
                let v = val(t, 0);
                acc = Some(match acc {
                    None => v,
                    Some(a) => match op {
                        WaveOp::Sum | WaveOp::PrefixSum => value::binary(BinOp::Add, ty, a, v),
                        WaveOp::Product | WaveOp::PrefixProduct => value::binary(BinOp::Mul, ty, a, v),
                        WaveOp::Min => value::math(MathFn::Min, ty, ty, &[a, v, 0]),
                        WaveOp::Max => value::math(MathFn::Max, ty, ty, &[a, v, 0]),
                        WaveOp::BitAnd => a & v,
                        WaveOp::BitOr => a | v,
                        WaveOp::BitXor => a ^ v,
                        _ => a,
                    },
                });
            }
            acc.unwrap_or(0)
        };
        let one = |ty: Ty| {
            if ty.is_float() {
                value::from_f64(ty, 1.0)
            } else {
                1
            }
        };
        let results: Vec<u64> = lanes
            .iter()
            .enumerate()
            .map(|(k, &t)| match op {
                WaveOp::ReadFirst => val(lanes[0], 0),
                WaveOp::ReadLane | WaveOp::Shuffle => {
                    let src = w0 + (val(if op == WaveOp::ReadLane { lanes[0] } else { t }, 1) as usize % ctx.wave as usize);
                    if src < w1 {
                        val(src, 0)
                    } else {
                        val(t, 0)
                    }
                }
                WaveOp::ShuffleUp => {
                    let delta = val(t, 1) as usize;
                    if (t - w0) >= delta {
                        val(t - delta, 0)
                    } else {
                        val(t, 0)
                    }
                }
                WaveOp::ShuffleDown => {
                    let src = t + val(t, 1) as usize;
                    if src < w1 {
                        val(src, 0)
                    } else {
                        val(t, 0)
                    }
                }
                WaveOp::ShuffleXor => {
                    let src = w0 + (((t - w0) ^ val(t, 1) as usize) % ctx.wave as usize);
                    if src < w1 {
                        val(src, 0)
                    } else {
                        val(t, 0)
                    }
                }
                WaveOp::AllTrue => lanes.iter().all(|&u| truthy(u)) as u64,
                WaveOp::AnyTrue => lanes.iter().any(|&u| truthy(u)) as u64,
                WaveOp::AllEqual => lanes.iter().all(|&u| val(u, 0) == val(lanes[0], 0)) as u64,
                WaveOp::Ballot => {
                    let mask = lanes.iter().filter(|&&u| truthy(u)).fold(0u64, |m, &u| m | 1 << lane(u));
                    // A second operand selects a 32-bit word of a wider mask (HLSL's uint4).
                    let word = if nargs > 1 { val(t, 1) } else { 0 };
                    if word > 1 {
                        0
                    } else {
                        (mask >> (32 * word)) & rty.mask()
                    }
                }
                WaveOp::CountBits => lanes.iter().filter(|&&u| truthy(u)).count() as u64,
                WaveOp::IsFirstLane => (k == 0) as u64,
                WaveOp::Sum | WaveOp::Product | WaveOp::Min | WaveOp::Max | WaveOp::BitAnd | WaveOp::BitOr | WaveOp::BitXor => {
                    fold(&mut lanes.iter().copied(), None)
                }
                WaveOp::PrefixSum => fold(&mut lanes[..k].iter().copied(), Some(0)),
                WaveOp::PrefixProduct => fold(&mut lanes[..k].iter().copied(), Some(one(ty))),
                WaveOp::PrefixCountBits => lanes[..k].iter().filter(|&&u| truthy(u)).count() as u64,
                WaveOp::MatchAny => lanes.iter().filter(|&&u| val(u, 0) == val(t, 0)).fold(0u64, |m, &u| m | 1 << lane(u)) & rty.mask(),
            })
            .collect();
        for (&t, r) in lanes.iter().zip(results) {
            self.regs[t * nr + d as usize] = r;
            if T {
                self.seen[t * nr + d as usize] = true;
            }
            self.th[t].pc += 1;
            self.th[t].status = Status::Ready;
        }
        self.instructions += lanes.len() as u64;
    }

    fn release_barrier<const T: bool>(&mut self, ctx: &Ctx) {
        let prog = ctx.prog;
        let nr = prog.nregs;
        // The barrier most threads wait at is "this barrier" in reports.
        let all_at_first = self.th.iter().all(|t| t.status == Status::Barrier && t.pc == self.th[0].pc);
        let (bpc, reached) = if all_at_first {
            (self.th[0].pc, self.n as u32)
        } else {
            let mut counts: Vec<(u32, u32)> = Vec::new();
            for th in self.th.iter().filter(|t| t.status == Status::Barrier) {
                match counts.iter_mut().find(|c| c.0 == th.pc) {
                    Some(c) => c.1 += 1,
                    None => counts.push((th.pc, 1)),
                }
            }
            counts.sort_by_key(|&(pc, k)| (std::cmp::Reverse(k), pc));
            counts[0]
        };
        if reached as usize != self.n {
            let mut others: Vec<(Place, Vec<(u32, u32)>)> = Vec::new();
            for (t, th) in self.th.iter().enumerate() {
                let place = match th.status {
                    Status::Barrier if th.pc == bpc => continue,
                    Status::Barrier => Place::Barrier(th.pc),
                    _ => Place::Finished(th.pc),
                };
                let t = t as u32;
                match others.iter_mut().find(|o| o.0 == place) {
                    Some((_, ranges)) => match ranges.last_mut() {
                        Some(last) if last.1 + 1 == t => last.1 = t,
                        _ => ranges.push((t, t)),
                    },
                    None => others.push((place, vec![(t, t)])),
                }
            }
            let other_pc = match others[0].0 {
                Place::Finished(p) | Place::Barrier(p) => p,
            };
            let group = self.mem.group;
            let total = self.n as u32;
            self.mem.events.add((K_DIVERGE, prog.code_inst[bpc as usize], other_pc), || Event::Divergence {
                group,
                barrier_pc: bpc,
                reached,
                total,
                others,
            });
        }
        let Code::Barrier { info, .. } = prog.code[bpc as usize] else { unreachable!("parked at a barrier") };
        if all_at_first && info.reduce.is_none() {
            // The common case: every thread at one plain barrier.
            for th in &mut self.th {
                th.pc += 1;
                th.status = Status::Ready;
            }
            self.instructions += self.n as u64;
            self.end_interval(info.orders_shared, info.orders_device);
            return;
        }
        let mut waiting = std::mem::take(&mut self.waiting);
        waiting.clear();
        waiting.extend((0..self.n).filter(|&t| self.th[t].status == Status::Barrier));
        for &t in &waiting {
            let Code::Barrier { d, info } = prog.code[self.th[t].pc as usize] else { unreachable!("parked at a barrier") };
            if let (Some(reduce), Some(_)) = (info.reduce, info.pred) {
                let pred = |u: usize| {
                    let Code::Barrier { info, .. } = prog.code[self.th[u].pc as usize] else {
                        return false;
                    };
                    info.pred.is_some_and(|p| self.regs[u * nr + p as usize] != 0)
                };
                let r = match reduce {
                    BarrierReduce::Count => waiting.iter().filter(|&&u| pred(u)).count() as u64,
                    BarrierReduce::And => waiting.iter().all(|&u| pred(u)) as u64,
                    BarrierReduce::Or => waiting.iter().any(|&u| pred(u)) as u64,
                };
                self.regs[t * nr + d as usize] = r;
                if T {
                    self.seen[t * nr + d as usize] = true;
                }
            }
        }
        for &t in &waiting {
            self.th[t].pc += 1;
            self.th[t].status = Status::Ready;
        }
        self.instructions += waiting.len() as u64;
        self.waiting = waiting;
        self.end_interval(info.orders_shared, info.orders_device);
    }

    /// A barrier released: a new interval for the memory spaces it orders.
    fn end_interval(&mut self, shared: bool, device: bool) {
        if shared {
            self.mem.epoch_shared += 1;
            self.mem.sh_sites.clear();
        }
        if device {
            self.mem.epoch_device += 1;
            self.mem.dev_sites.clear();
        }
    }

    /// Runs thread `t` until it parks, finishes or used `quantum` steps.
    /// Returns true when the run must stop (runaway loop or a trap).
    fn run_thread<const D: bool, const T: bool>(&mut self, ctx: &Ctx, t: usize, quantum: u64) -> bool {
        let prog = ctx.prog;
        let nr = prog.nregs;
        let md = prog.max_loop_depth.max(1);
        let Worker { regs, th, loops, scratch, seen, mem, instructions, .. } = self;
        let r = &mut regs[t * nr..(t + 1) * nr];
        let lp = &mut loops[t * md..(t + 1) * md];
        let me = th[t];
        let mut pc = me.pc as usize;
        let mut depth = me.depth as usize;
        let start = me.steps;
        let mut steps = start;
        let limit = start.saturating_add(quantum).min(ctx.max_steps);
        let tid = t as u32;
        // Wave barriers only happen while the thread is parked: fixed for this run.
        let wave = tid / ctx.wave;
        let wave_epoch = mem.wave_epochs[wave as usize];
        let rec = |pc: usize, depth: usize, lp: &[(u32, u32)]| Rec {
            thread: tid,
            inst: prog.code_inst[pc],
            iter: if depth > 0 { lp[depth - 1].1 } else { NONE },
            outer_iter: if depth > 1 { lp[depth - 2].1 } else { NONE },
            wave,
            wave_epoch,
            epoch: 0,
        };
        let mut abort = false;
        let status = loop {
            if steps >= limit {
                if steps >= ctx.max_steps {
                    let group = mem.group;
                    let loop_id = (depth > 0).then(|| lp[depth - 1].0);
                    mem.events.add((K_RUNAWAY, 0, 0), || Event::Runaway { group, thread: tid, pc: pc as u32, loop_id, steps });
                    ctx.abort.store(true, Ordering::Relaxed);
                    abort = true;
                    break Status::Done;
                }
                break Status::Ready;
            }
            steps += 1;
            let mut next = pc + 1;
            match prog.code[pc] {
                Code::Un { op, ty, d, a } => r[d as usize] = value::unary(op, ty, r[a as usize]),
                Code::Bin { op, ty, d, a, b } => r[d as usize] = value::binary(op, ty, r[a as usize], r[b as usize]),
                Code::Cmp { op, ty, d, a, b } => r[d as usize] = value::compare(op, ty, r[a as usize], r[b as usize]),
                Code::Select { d, c, a, b } => r[d as usize] = if r[c as usize] != 0 { r[a as usize] } else { r[b as usize] },
                Code::Convert { from, to, d, a } => r[d as usize] = value::convert(from, to, r[a as usize]),
                Code::Math { f, arg_ty, ty, d, args } => {
                    let x = [r[args[0] as usize], r[args[1] as usize], r[args[2] as usize]];
                    r[d as usize] = value::math(f, arg_ty, ty, &x);
                }
                Code::Load { d, m } => {
                    let (a, off) = addr(r, &m);
                    r[d as usize] = mem.read::<D>(ctx, t, a, off, rec(pc, depth, lp));
                }
                Code::Store { m, v } => {
                    let (a, off) = addr(r, &m);
                    mem.write::<D>(ctx, t, a, off, rec(pc, depth, lp), r[v as usize]);
                }
                Code::Atomic { op, ty, d, m, args, nargs, overwrite } => {
                    let (a, off) = addr(r, &m);
                    // Missing operands read as 0 (a plain increment for Inc/Dec).
                    let x = [if nargs > 0 { r[args[0] as usize] } else { 0 }, if nargs > 1 { r[args[1] as usize] } else { 0 }];
                    r[d as usize] = mem.atomic::<D>(ctx, t, a, off, rec(pc, depth, lp), op, overwrite, ty, x);
                }
                Code::AddrOf { d, base, idx, idx_ty } => {
                    let i = index(r, idx, idx_ty);
                    r[d as usize] = match base {
                        Base::Alloc(a) => make_ptr(a, i),
                        Base::Ptr(p) => {
                            let (a, off) = split_ptr(r[p as usize]);
                            make_ptr(a, off.wrapping_add(i))
                        }
                    };
                }
                Code::PtrAdd { d, p, idx, idx_ty } => {
                    let (a, off) = split_ptr(r[p as usize]);
                    r[d as usize] = make_ptr(a, off.wrapping_add(index(r, idx, idx_ty)));
                }
                // Parked: the barrier or wave op executes when the group releases it.
                Code::Barrier { .. } => {
                    steps -= 1;
                    break Status::Barrier;
                }
                Code::Wave { .. } | Code::WaveSync => {
                    steps -= 1;
                    break Status::Wave;
                }
                Code::Jump { edge } => next = take_edge::<T>(prog, edge, r, lp, &mut depth, scratch, seen, t),
                Code::Branch { c, t: te, f: fe } => {
                    let e = if r[c as usize] != 0 { te } else { fe };
                    next = take_edge::<T>(prog, e, r, lp, &mut depth, scratch, seen, t);
                }
                Code::Switch { v, mask, cases, default } => {
                    let x = r[v as usize] & mask;
                    let e = prog.cases[cases.0 as usize..cases.1 as usize].iter().find(|c| c.0 == x).map_or(default, |c| c.1);
                    next = take_edge::<T>(prog, e, r, lp, &mut depth, scratch, seen, t);
                }
                Code::Return => break Status::Done,
                Code::Trap(trap) => {
                    let group = mem.group;
                    mem.events.add((K_TRAP, prog.code_inst[pc], 0), || Event::Trap { group, thread: tid, pc: pc as u32, trap });
                    ctx.abort.store(true, Ordering::Relaxed);
                    abort = true;
                    break Status::Done;
                }
            }
            if T {
                let v = prog.code_inst[pc];
                if v != NO_INST {
                    seen[t * nr + v as usize] = true;
                }
            }
            pc = next;
        };
        *instructions += steps - start;
        th[t] = Th { pc: pc as u32, status, steps, depth: depth as u32 };
        abort
    }
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn take_edge<const T: bool>(
    prog: &Program,
    edge: u32,
    r: &mut [u64],
    lp: &mut [(u32, u32)],
    depth: &mut usize,
    scratch: &mut Vec<u64>,
    seen: &mut [bool],
    t: usize,
) -> usize {
    let e = &prog.edges[edge as usize];
    let (s, end) = (e.copies.0 as usize, e.copies.1 as usize);
    match end - s {
        0 => {}
        1 => {
            let (d, src) = prog.copies[s];
            r[d as usize] = r[src as usize];
        }
        _ => {
            // Phis read their inputs simultaneously.
            scratch.clear();
            scratch.extend(prog.copies[s..end].iter().map(|&(_, src)| r[src as usize]));
            for (i, &(d, _)) in prog.copies[s..end].iter().enumerate() {
                r[d as usize] = scratch[i];
            }
        }
    }
    *depth = depth.saturating_sub(e.pops as usize);
    if e.back {
        if *depth > 0 {
            lp[*depth - 1].1 = lp[*depth - 1].1.saturating_add(1).min(NONE - 1);
        }
    } else if let Some(l) = e.enter {
        if *depth < lp.len() {
            lp[*depth] = (l, 0);
            *depth += 1;
        }
    }
    if T {
        let nr = prog.nregs;
        for &(d, _) in &prog.copies[s..end] {
            seen[t * nr + d as usize] = true;
        }
        for &d in &prog.block_defs[e.target_block as usize] {
            seen[t * nr + d as usize] = true;
        }
    }
    e.target_pc as usize
}
