//! Symbolic addresses: index expressions of two accesses, each as seen by
//! one of two threads, turned into one [`Problem`] whose solutions are the
//! pairs of different threads that touch the same cell.
//!
//! Thread ids are per side; group-uniform values are one shared symbol when
//! both threads see the same instance of them (same group, same iteration of
//! every loop around their definition) and two symbols otherwise; loop
//! headers' induction variables become functions of an iteration count,
//! which is shared, offset by the number of back edges between the two
//! accesses (loop-carried hazards), or independent. Guards dominating an
//! access constrain its side. Anything not modelled is a fresh symbol, so
//! the answer errs towards "may conflict".

use crate::intervals::{CountedLoop, APART, MANY, NOT_IN};
use crate::solver::{Budget, FnOp, Func, Lin, Outcome, Problem, Terms, Var, DEFAULT_BUDGET, INF};
use lockstep_analysis::{Cfg, Level, Uniformity};
use lockstep_ir::{BinOp, BlockId, Builtin, CmpOp, Const, Function, MathFn, Op, Terminator, Type, UnOp, Value, WaveOp};
use std::cell::RefCell;
use rustc_hash::FxHashMap as HashMap;

/// Branch conditions that hold in a block, with their polarity (shared, cached).
pub type Guards = std::rc::Rc<[(Value, bool)]>;

/// What address questions may assume beyond the program's own facts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Assumptions {
    /// For race reports: the launch the code most likely gets. The group is
    /// no wider than keeps row-indexed accesses in bounds, an axis the kernel
    /// never names is one thread wide, lanes are the flat index modulo the
    /// wave size the uniformity analysis assumes, and different buffers do
    /// not alias.
    Likely,
    /// For removing a barrier: only what the program and its language
    /// guarantee. Any block shape the hardware allows (up to the kernel's
    /// stated bounds), a wave of unknown width unless the kernel or the
    /// language fixes it, and buffers that may alias one another.
    Facts,
}

/// The integer functions an index may go through that the solver follows
/// exactly (`Build::compute`); any other is a value it chooses per thread.
pub const EXACT_INT_MATH: [MathFn; 5] = [MathFn::Mul24, MathFn::Min, MathFn::Max, MathFn::Clamp, MathFn::Abs];

/// A kernel prepared for address questions.
pub struct Kernel<'a> {
    pub f: &'a Function,
    pub cfg: &'a Cfg,
    pub uni: &'a Uniformity,
    pub assume: Assumptions,
    pub group_size: Option<[u32; 3]>,
    /// Upper bound on threads per group when the size is not known.
    pub max_threads: u32,
    /// Threads a group can have at most: the kernel's bound or the hardware's.
    group_threads: u32,
    /// The wave width lanes are taken modulo, when it may be relied on.
    wave_size: Option<u32>,
    /// Per axis, how wide the group can be with every in-bounds access staying in bounds.
    axis_limits: [Option<u32>; 3],
    /// Likely exact extents (see [`lockstep_ir::EntryInfo::axis_widths`]).
    axis_widths: [Option<u32>; 3],
    inst_block: Vec<Option<BlockId>>,
    /// For each block, the loop (index into `cfg.loops`) it heads.
    header_of: Vec<Option<usize>>,
    /// Per loop, how many times its body runs when that is a constant
    /// (`for (s = 64; s > 0; s >>= 1)` runs 7 times).
    trip_counts: Vec<Option<i128>>,
    /// Per axis: whether the kernel mentions the thread (group) axis at all.
    /// With unknown sizes, an axis the kernel never names is taken to be 1
    /// thread (group) wide: a kernel written for 1-D launches is launched so.
    thread_axes: [bool; 3],
    /// Whether the kernel places its threads only by the flat index (see `Kernel::new`).
    flat_only: bool,
    group_axes: [bool; 3],
    /// Axes along which the kernel reads its group's id or the group count.
    group_ids_read: [bool; 3],
    /// Groups per axis where the launches fix it.
    grid_size: [Option<u32>; 3],
    /// [`Kernel::guards`] by block.
    guards: RefCell<HashMap<BlockId, Guards>>,
    /// Per axis, the group extent every launch in the file gives.
    launched: [Option<u32>; 3],
    /// Constants the file does not fix (template parameters, pipeline constants).
    pub open_values: Vec<lockstep_ir::GlobalId>,
}

impl<'a> Kernel<'a> {
    pub fn new(module: &lockstep_ir::Module, f: &'a Function, cfg: &'a Cfg, uni: &'a Uniformity, group_size: Option<[u32; 3]>, assume: Assumptions) -> Kernel<'a> {
        let mut header_of = vec![None; f.blocks.len()];
        for (i, l) in cfg.loops.iter().enumerate() {
            header_of[l.header.index()] = Some(i);
        }
        let trip_counts = (0..cfg.loops.len()).map(|l| trip_count(f, cfg, l)).collect();
        let max_threads = f.entry.as_ref().and_then(|e| e.max_threads).unwrap_or(1024).clamp(1, 1024);
        let (mut thread_axes, mut group_axes) = ([false; 3], [false; 3]);
        // Only ids something reads count: front ends materialize whole vectors.
        // A wave's index within the group (`flat / wave size`) and the
        // group's thread count (`x * y * z`, as in the number of waves)
        // are the same for a group one row wide as for any other shape:
        // they do not say the kernel spreads threads along y or z.
        let is = |v: Value, b: Builtin| matches!(f.inst(v).op, Op::Builtin(x) if x == b);
        let extent = |v: Value| matches!(f.inst(v).op, Op::Builtin(Builtin::GroupSize(_)));
        let count = |v: Value| extent(v) || matches!(f.inst(v).op, Op::Binary(BinOp::Mul, p, q) if extent(p) && extent(q));
        let extents_open = f.entry.as_ref().is_none_or(|e| e.group_extent == [None; 3]);
        let mut used = vec![false; f.insts.len()];
        for b in &f.blocks {
            for &v in &b.insts {
                match f.inst(v).op {
                    Op::Binary(BinOp::Div, flat, width) if is(flat, Builtin::LocalIndex) && is(width, Builtin::WaveSize) => {
                        thread_axes[0] = true;
                        used[width.index()] = true;
                    }
                    Op::Binary(BinOp::Mul, p, q) if count(p) && count(q) => {
                        thread_axes[0] = true;
                        used[p.index()] |= !extent(p);
                        used[q.index()] |= !extent(q);
                    }
                    ref op => op.for_each_operand(|o| used[o.index()] = true),
                }
            }
            if let Some(c) = b.term.condition() {
                used[c.index()] = true;
            }
        }
        let names_x = f.insts.iter().enumerate().any(|(i, inst)| used[i] && matches!(inst.op, Op::Builtin(Builtin::LocalId(0) | Builtin::GroupSize(0))));
        for (i, inst) in f.insts.iter().enumerate() {
            if !used[i] {
                continue;
            }
            match inst.op {
                Op::Builtin(Builtin::LocalId(a) | Builtin::GroupSize(a)) => thread_axes[a as usize % 3] = true,
                // A flat index names no axis: where no launch or layout gives
                // an extent, a kernel that names x and spreads its threads
                // along y or z names them too (`threadIdx.y`, `blockDim.y`).
                Op::Builtin(Builtin::LocalIndex) if extents_open && names_x => thread_axes[0] = true,
                Op::Builtin(Builtin::LocalIndex) => thread_axes = [true; 3],
                Op::Builtin(Builtin::GroupId(a) | Builtin::NumGroups(a)) => group_axes[a as usize % 3] = true,
                _ => {}
            }
        }
        // A kernel that places its threads only by the flat index (and its
        // lane and wave) runs the same for every shape of N threads as for
        // one row of N: its questions are asked for one row, where no
        // launch fixes an extent (a witness never contradicts one).
        let mut operand = vec![false; f.insts.len()];
        for b in &f.blocks {
            for &v in &b.insts {
                f.inst(v).op.for_each_operand(|o| operand[o.index()] = true);
            }
            if let Some(c) = b.term.condition() {
                operand[c.index()] = true;
            }
        }
        let flat_only = extents_open && f.insts.iter().enumerate().all(|(i, inst)| !operand[i] || !matches!(inst.op, Op::Builtin(Builtin::LocalId(_) | Builtin::GroupSize(_))));
        let group_ids_read = group_axes;
        // The grid always may have several groups along x, unless the launches
        // say otherwise (or, for reports, a flat global id does).
        let mut grid_size = f.entry.as_ref().map_or([None; 3], |e| e.grid_size);
        if assume == Assumptions::Likely {
            let widths = f.entry.as_ref().map_or([None; 3], |e| e.grid_widths);
            grid_size = std::array::from_fn(|ax| grid_size[ax].or(widths[ax]));
        }
        group_axes[0] = true;
        for (wide, groups) in group_axes.iter_mut().zip(grid_size) {
            *wide = groups.map_or(*wide, |n| n > 1);
        }
        // A block extent every launch in the file gives is a fact; the
        // extent in-bounds accesses suggest is only likely.
        let launched = f.entry.as_ref().map_or([None; 3], |e| e.group_extent);
        let axis_widths = match assume {
            Assumptions::Likely => f.entry.as_ref().map_or([None; 3], |e| e.axis_widths),
            Assumptions::Facts => [None; 3],
        };
        let (max_threads, axis_limits, wave_size) = match assume {
            Assumptions::Likely => {
                let inferred = f.entry.as_ref().map_or([None; 3], |e| e.axis_limits);
                let limits: [Option<u32>; 3] = std::array::from_fn(|ax| match (inferred[ax], launched[ax]) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                });
                (limits[0].map_or(max_threads, |x| max_threads.min(x.max(1))), limits, Some(uni.wave_size.max(1)))
            }
            Assumptions::Facts => {
                thread_axes = [true; 3];
                (max_threads, launched, f.entry.as_ref().and_then(|e| e.wave_size))
            }
        };
        let group_threads = f.entry.as_ref().and_then(|e| e.max_threads).unwrap_or(1024).clamp(1, 1024);
        // Sizes the file leaves open; an open flag is any truth value.
        let open_values = (0..module.globals.len() as u32)
            .map(lockstep_ir::GlobalId)
            .filter(|&g| module.global(g).open_value.is_some() && module.global(g).elem != Type::Bool)
            .collect();
        Kernel {
            f,
            cfg,
            uni,
            assume,
            group_size,
            max_threads,
            group_threads,
            wave_size,
            axis_limits,
            axis_widths,
            inst_block: f.inst_blocks(),
            header_of,
            trip_counts,
            thread_axes,
            flat_only,
            group_axes,
            group_ids_read,
            grid_size,
            guards: RefCell::default(),
            launched,
            open_values,
        }
    }

    /// The wave width lanes are counted in, when it may be relied on.
    pub fn wave_size(&self) -> Option<u32> {
        self.wave_size
    }

    /// Whether two threads (groups) can differ along an axis.
    fn wide(&self, mode: Mode, ax: usize) -> bool {
        match mode {
            Mode::SameGroup => match self.group_size {
                Some(g) => g[ax] > 1,
                None => self.thread_axes[ax] && self.axis_limits[ax] != Some(1),
            },
            Mode::CrossGroup => self.group_axes[ax],
        }
    }

    fn in_loop(&self, l: usize, b: BlockId) -> bool {
        self.cfg.loops[l].blocks.binary_search(&b).is_ok()
    }

    /// The block an instruction is in (None for one removed from every block).
    /// Whether the kernel reads its group's id or the number of groups
    /// along an axis: where it does not, groups along it do the same work.
    pub fn reads_group_id(&self, ax: usize) -> bool {
        self.group_ids_read[ax % 3]
    }

    pub fn block_of(&self, v: Value) -> Option<BlockId> {
        self.inst_block[v.index()]
    }

    /// Whether a block is the header of a loop (its phis are the loop's counters).
    pub fn heads_loop(&self, b: BlockId) -> bool {
        self.header_of[b.index()].is_some()
    }

    /// Branch conditions that hold whenever block `b` runs: (condition, polarity).
    /// Whether `v` elects a lane (`simd_is_first()`, `subgroupElect()`)
    /// where the whole wave runs: it elects lane 0.
    pub fn elects_lane_zero(&self, v: Value) -> bool {
        matches!(self.f.inst(v).op, Op::Wave(WaveOp::IsFirstLane, _)) && self.block_of(v).is_some_and(|b| self.uni.block_level(b) >= Level::Wave)
    }

    /// Whether `v` has one value in every iteration of loop `l`.
    pub fn invariant_in_loop(&self, l: usize, v: Value) -> bool {
        invariant_in(self.f, &self.inst_block, &self.cfg.loops[l], v, 0)
    }

    pub fn guards(&self, b: BlockId) -> Guards {
        if let Some(g) = self.guards.borrow().get(&b) {
            return g.clone();
        }
        let g: Guards = self.find_guards(b).into();
        self.guards.borrow_mut().insert(b, g.clone());
        g
    }

    /// Whether the solver follows a loop-header phi's values through the
    /// loop's iterations (`i += stride`, `s >>= 1`, `b ^= 1`); any other
    /// carried value (`row += col / w`) it takes as any value.
    pub fn follows_loop_phi(&self, phi: Value) -> bool {
        let Op::Phi(incoming) = &self.f.inst(phi).op else { return false };
        let header = self.inst_block[phi.index()].and_then(|b| self.header_of[b.index()]);
        header.is_some_and(|l| recurrence(self, phi, l, incoming).is_some())
    }

    /// A two-way phi that selects by one branch, as `(condition, value
    /// when it held, value when it did not)`: each incoming edge comes from
    /// its own arm of the branch that dominates the join.
    fn gated(&self, phi: Value) -> Option<(Value, Value, Value)> {
        let Op::Phi(incoming) = &self.f.inst(phi).op else { return None };
        let [(from_a, a), (from_b, b)] = incoming.as_slice() else { return None };
        let join = self.inst_block[phi.index()]?;
        let head = self.cfg.dom.idom(join.index())?;
        let Terminator::Branch { cond, then_to, else_to } = &self.f.blocks[head].term else { return None };
        let arm = |to: BlockId, from: BlockId| to != join && self.cfg.preds[to.index()].len() == 1 && self.cfg.dominates(to, from);
        if then_to == else_to {
            return None;
        }
        if arm(*then_to, *from_a) && arm(*else_to, *from_b) {
            Some((*cond, *a, *b))
        } else if arm(*then_to, *from_b) && arm(*else_to, *from_a) {
            Some((*cond, *b, *a))
        } else {
            None
        }
    }

    fn find_guards(&self, b: BlockId) -> Vec<(Value, bool)> {
        let mut out = Vec::new();
        let mut x = b.index();
        while let Some(d) = self.cfg.dom.idom(x) {
            if let Terminator::Branch { cond, then_to, else_to } = &self.f.blocks[d].term {
                if then_to != else_to {
                    for (succ, pol) in [(*then_to, true), (*else_to, false)] {
                        if self.cfg.preds[succ.index()].len() == 1 && self.cfg.dominates(succ, b) {
                            out.push((*cond, pol));
                        }
                    }
                }
            }
            x = d;
        }
        out
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Two threads of one group, between the same two barrier instances.
    SameGroup,
    /// Two threads of different groups, anywhere in the dispatch.
    CrossGroup,
}

/// One side of the question: an access and where it runs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Side {
    pub block: BlockId,
    pub index: Value,
    /// For accesses through an untraceable pointer: the pointer, an unknown base address.
    pub base: Option<Value>,
    /// Back edges crossed per loop (see [`crate::intervals::Offsets`]); empty
    /// when unknown, which relates two sides only outside every loop.
    pub offsets: Vec<u8>,
    /// Constants any of which may be added to the index (`lo..=hi`): one
    /// question then stands for several accesses at `index + c` (the fields
    /// of one struct). `(0, 0)` for a single access.
    pub spread: (i64, i64),
    /// Conditions on group-uniform values that hold on the way to this
    /// access from the other one (the side of `if (n > 4) __syncthreads();`
    /// that passes no barrier): the witness must take that way.
    pub way: Vec<(Value, bool)>,
}

/// Which waves the two threads of a question may be in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Waves {
    Any,
    /// A wave barrier orders the accesses for threads of one wave.
    Different,
    /// Whether threads of two different waves reach the two accesses at
    /// all, wherever they point.
    DifferentReach,
    /// [`Waves::Different`] for waves of the given width, where nothing
    /// fixes it (lanes and wave indices follow that width).
    DifferentAt(u32),
    /// [`Waves::DifferentReach`] likewise.
    DifferentReachAt(u32),
    /// [`Waves::Any`] for waves of the given width: lanes and wave indices
    /// follow it. Where nothing fixes the group's size, the two threads are
    /// in the group's first two such waves.
    AnyAt(u32),
}

impl Waves {
    /// Whether the question is about the same cell (not only reaching).
    pub fn same_cell(self) -> bool {
        !matches!(self, Waves::DifferentReach | Waves::DifferentReachAt(_))
    }

    /// The wave width the question supposes, when it supposes one.
    fn width(self) -> Option<u32> {
        match self {
            Waves::DifferentAt(w) | Waves::DifferentReachAt(w) | Waves::AnyAt(w) => Some(w),
            _ => None,
        }
    }

    /// The same question for waves `width` wide.
    pub fn at(self, width: u32) -> Waves {
        match self {
            Waves::Different => Waves::DifferentAt(width),
            Waves::DifferentReach => Waves::DifferentReachAt(width),
            Waves::Any => Waves::AnyAt(width),
            w => w,
        }
    }
}

pub struct Query<'k> {
    pub k: &'k Kernel<'k>,
    pub mode: Mode,
    pub waves: Waves,
    /// Whether the witness will be reported, and so must be proven where
    /// the search could only assume it (questions that only filter need not).
    pub prove: bool,
    pub sides: [Side; 2],
    /// Cells in the allocation, when known: accesses stay in bounds.
    pub len: Option<u64>,
    /// For a texture: cells per texel and the widest x coordinate. Texel
    /// indices are `x + (y << 16) + …` (see `Global::texel_width`).
    pub texels: Option<(u32, u32)>,
    /// Cells per element of the allocation (a vector's components), when
    /// both accesses are in the same one: indices are `element * cells + component`.
    pub cells_per_elem: u32,
    /// The thread CPU time its searches stop at (the file's time for race analysis).
    pub deadline: Option<std::time::Duration>,
}

/// Two threads and the cell they both touch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    pub threads: [[i64; 3]; 2],
    /// Group ids, for cross-group hazards.
    pub groups: Option<[[i64; 3]; 2]>,
    pub cell: Option<i64>,
    /// False when the solver assumed an undecided constraint satisfiable.
    pub exact: bool,
    /// The values the witness picks for constants the file does not fix.
    pub open_values: Vec<(lockstep_ir::GlobalId, i64)>,
    /// The values the witness picks for the kernel's scalar parameters its
    /// indices, guards or barrier-free way use (parameter index, value).
    pub param_values: Vec<(u32, i64)>,
    /// The group's extent along each axis the witness needs where nothing
    /// fixes it (its indices or guards use the group size).
    pub open_group_size: [Option<i64>; 3],
    /// Values the file does not fix that the race needs to be other than a
    /// positive multiple of [`TYPICAL_SIZE_STEP`] (a tile of no cells, rows
    /// of width 1, a byte count not a multiple of 4): such a race is not proven.
    pub atypical_open_values: Vec<lockstep_ir::GlobalId>,
    /// The race needs a group width (x) that nothing fixes to be other than
    /// a positive multiple of [`TYPICAL_SIZE_STEP`].
    pub atypical_group_width: bool,
    /// Products `row * stride` (their instructions) with a stride the host
    /// passes, whose rows the race needs to differ between the two threads
    /// while both columns stay below a width the program states: such rows
    /// meet only where the host lays rows out narrower than what they hold.
    pub rows_apart: Vec<Value>,
    /// The host's values an offset between the two indices comes from
    /// (`dst[i + n_dims]` against `dst[i]`, both columns below a stated
    /// width), where the race needs that offset: the two halves meet only
    /// where the host passes an offset narrower than the half it holds.
    pub offset_apart: Vec<Value>,
    /// The wave width the witness supposes, where nothing fixes it and the
    /// race needs its threads in different waves, or the width the threads
    /// shown suppose where the race holds at every width ([`Witness::every_width`]).
    pub wave_width: Option<u32>,
    /// The race holds for waves of every width hardware has, though its
    /// indices or guards use lanes or the width.
    pub every_width: bool,
}

/// Sizes given by a value the file does not fix (a template parameter no
/// instantiation fixes, a pipeline constant) are taken to be positive
/// multiples of this when a race is called proven: tiles, rows and groups
/// are written for such sizes.
pub const TYPICAL_SIZE_STEP: i128 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rel {
    Same,
    /// Side B runs this many iterations after side A.
    Offset(i64),
    /// Side A runs a later iteration than side B, however many later.
    Later,
    Independent,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Owner {
    Shared,
    Side(u8),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Key {
    Tid(u8, u8),
    /// A side's lane when the wave width is not fixed.
    Lane(u8),
    WaveSize,
    Gid(Owner, u8),
    BlockDim(u8),
    NumGroups(u8),
    Leaf(Owner, Value),
    /// A constant-memory cell at a literal index: every load of it is one value.
    ConstCell(lockstep_ir::Root, i64),
    Iter(Owner, usize),
    /// The constant a side's [`Side::spread`] adds.
    Spread(u8),
}

impl Query<'_> {
    fn rel(&self, l: usize) -> Rel {
        let k = self.k;
        let (in_a, in_b) = (k.in_loop(l, self.sides[0].block), k.in_loop(l, self.sides[1].block));
        let off = |s: usize| self.sides[s].offsets.get(l).copied();
        match (self.mode, off(0), off(1)) {
            (Mode::SameGroup, Some(a), Some(b)) if a < MANY && b < MANY => {
                if a == b {
                    Rel::Same
                } else {
                    Rel::Offset(b as i64 - a as i64)
                }
            }
            (Mode::SameGroup, Some(NOT_IN), Some(NOT_IN)) => Rel::Same,
            (Mode::SameGroup, Some(APART), Some(APART)) => Rel::Later,
            // An access in the loop, met by one after it with no barrier
            // between, is in the loop's last iteration: the other side
            // counts one more.
            (Mode::SameGroup, Some(a), Some(NOT_IN)) if a < MANY && in_a && self.follows_loop(l, 1) => Rel::Offset(1),
            (Mode::SameGroup, Some(NOT_IN), Some(b)) if b < MANY && in_b && self.follows_loop(l, 0) => Rel::Offset(-1),
            (Mode::SameGroup, Some(_), Some(_)) => Rel::Independent,
            _ if !in_a && !in_b => Rel::Same,
            _ => Rel::Independent,
        }
    }

    /// Whether side `s` runs after loop `l` (outside it, past its header).
    fn follows_loop(&self, l: usize, s: usize) -> bool {
        let block = self.sides[s].block;
        !self.k.in_loop(l, block) && self.k.cfg.dominates(self.k.cfg.loops[l].header, block)
    }

    fn needed(&self) -> Level {
        match self.mode {
            Mode::SameGroup => Level::Group,
            Mode::CrossGroup => Level::Grid,
        }
    }

    /// Whether both threads see the same instance of a value defined in `b`
    /// (every loop around it relates the two sides as the same iteration).
    fn same_instance(&self, b: Option<BlockId>, skip: Option<usize>) -> bool {
        let Some(b) = b else { return true };
        // A value of the loop body is one instance only when both accesses are
        // in the same iteration, or both after the loop (its last iteration).
        self.k.cfg.loops_of[b.index()].iter().filter(|&&l| Some(l) != skip).all(|&l| {
            let (in_a, in_b) = (self.k.in_loop(l, self.sides[0].block), self.k.in_loop(l, self.sides[1].block));
            self.rel(l) == Rel::Same && in_a == in_b
        })
    }

    /// Decides whether two different threads can touch the same cell.
    pub fn conflict(&self) -> Option<Witness> {
        // Sized for a typical question, so the maps do not grow step by step.
        let mut b = Build {
            q: self,
            p: Problem::default(),
            keys: sized_map(),
            cell_loads: Vec::new(),
            memo: [sized_map(), sized_map()],
            fcache: sized_map(),
            linked: Vec::new(),
            strides: Vec::new(),
        };
        let mut addr = [b.val(0, self.sides[0].index, 0), b.val(1, self.sides[1].index, 0)];
        for (s, side) in self.sides.iter().enumerate() {
            if let Some(p) = side.base {
                addr[s] = addr[s].add(&b.leaf(s as u8, p));
            }
            if side.spread != (0, 0) {
                let (lo, hi) = side.spread;
                addr[s] = addr[s].add(&Lin::var(b.var(Key::Spread(s as u8), lo as i128, hi as i128)));
            }
        }
        for (s, (side, a)) in self.sides.iter().zip(&addr).enumerate() {
            for &(c, pol) in self.k.guards(side.block).iter().chain(&side.way) {
                b.cond(s as u8, c, pol, 0);
            }
            if self.k.assume == Assumptions::Likely {
                // The tile's layout bounds the group, whichever access shows
                // it: each thread's columns fit in both accesses' rows.
                b.rows_hold_their_columns(s as u8, side.index);
                let other = self.sides[1 - s].index;
                if other != side.index {
                    b.rows_hold_their_columns(s as u8, other);
                }
            }
            if let Some(len) = self.len {
                b.p.at_most(&Lin::konst(0), a);
                b.p.at_most(a, &Lin::konst(len as i128 - 1));
            }
            if let Some((cells, width)) = self.texels {
                // The x part of the index (terms not multiples of a row) is an in-range x.
                let [_, y_shift, z_shift] = lockstep_ir::TEXEL_SHIFTS;
                let row = (cells as i128) << y_shift;
                let x = Lin { terms: a.terms.iter().filter(|t| t.1 % row != 0).copied().collect(), k: a.k.rem_euclid(row) };
                b.p.at_most(&Lin::konst(0), &x);
                b.p.at_most(&x, &Lin::konst(cells as i128 * width as i128 - 1));
                // A reported texel's y stays below where `y << 16` reaches
                // `z << 28` (4096): there two different texels would share an
                // index only in lockstep's layout. Reports only: a question
                // that decides a barrier's removal keeps every y.
                if self.prove {
                    let plane = (cells as i128) << z_shift;
                    let y = Lin { terms: a.terms.iter().filter(|t| t.1 % row == 0 && t.1 % plane != 0).copied().collect(), k: a.k.rem_euclid(plane) - a.k.rem_euclid(row) };
                    b.p.at_most(&Lin::konst(0), &y);
                    b.p.at_most(&y, &Lin::konst(plane - row));
                }
            }
        }
        b.size_bounds();
        match self.waves {
            Waves::Any => {}
            Waves::AnyAt(width) => b.first_two_waves(width),
            _ => b.different_waves(),
        }
        if self.waves.same_cell() {
            b.same_cell(&addr[0], &addr[1], 0);
        }
        b.finish();
        // Repeated questions are answered from the callers' memos, before
        // any problem is built.
        let budget = Budget { nodes: DEFAULT_BUDGET, until: self.deadline };
        let outcome = if self.prove { b.p.solve_proven(budget) } else { b.p.solve(budget) };
        match outcome {
            Outcome::Infeasible => None,
            Outcome::Feasible { values, exact } if self.prove => Some(b.reported_witness(&values, &addr, exact)),
            Outcome::Feasible { values, exact } => Some(b.witness(&values, &addr, exact)),
        }
    }
}

fn sized_map<K, V>() -> HashMap<K, V> {
    HashMap::with_capacity_and_hasher(32, Default::default())
}

struct Build<'q> {
    q: &'q Query<'q>,
    p: Problem,
    keys: HashMap<Key, Var>,
    /// A load of each constant cell seen (`p.n_dims` from a push constant
    /// block): the host's value it stands for, by the source that names it.
    cell_loads: Vec<(Key, Value)>,
    memo: [HashMap<Value, Lin>; 2],
    /// Functional constraints by operation and arguments: equal arguments, one result.
    fcache: HashMap<(FnOp, Lin, Lin), Var>,
    /// Loops whose per-side iteration counts are already linked.
    linked: Vec<usize>,
    strides: Vec<StrideProduct>,
}

/// Rows of host strides a witness takes apart: the pairs of rows (side 0's,
/// side 1's), and side 0's products.
/// The last are the host's values an offset between the two indices comes
/// from (see [`Witness::offset_apart`]).
type StridedRows = (Vec<(Lin, Lin)>, Vec<Value>, Vec<Value>);

/// `row * stride` in a side's index, where the stride is a value the host
/// passes (a kernel parameter, a uniform load) that every thread in question
/// shares, and the row is the side's own.
struct StrideProduct {
    side: u8,
    inst: Value,
    stride: Lin,
    row: Lin,
    out: Var,
}

const MAX_DEPTH: u32 = 48;

/// The narrowest and widest waves any supported hardware runs.
const MIN_WAVE: i128 = 4;
const MAX_WAVE: i128 = 128;

impl Build<'_> {
    fn var(&mut self, key: Key, lo: i128, hi: i128) -> Var {
        if let Some(&v) = self.keys.get(&key) {
            return v;
        }
        let v = self.p.new_var(lo, hi);
        self.keys.insert(key, v);
        v
    }

    /// The two threads' flat indices fall in different waves. Without a
    /// wave width to rely on, nothing is added: any two threads may be in
    /// different waves of some width.
    fn different_waves(&mut self) {
        let Some(w) = self.wave_width() else { return };
        let w = w.max(1) as i128;
        let wave = |b: &mut Self, s: u8| {
            let flat = b.builtin(s, Builtin::LocalIndex);
            b.func(FnOp::Div, flat, Lin::konst(w), 0, INF)
        };
        let (a, c) = (wave(self, 0), wave(self, 1));
        self.p.differ(&a, &c);
    }

    /// Where the group's size is open: the two threads are in the group's
    /// first two waves `width` wide. How many waves a group holds is the
    /// host's choice; a race that needs a later one may need more than it
    /// ever launches (`j = jj * NSG + sgitg` meets another `j` only for a
    /// wave index past NSG).
    fn first_two_waves(&mut self, width: u32) {
        if self.q.k.group_size.is_some() {
            return;
        }
        for s in 0..2 {
            let flat = self.builtin(s, Builtin::LocalIndex);
            self.p.at_most(&flat, &Lin::konst(2 * width as i128 - 1));
        }
    }

    /// The wave width lanes and wave indices follow in this question.
    fn wave_width(&self) -> Option<u32> {
        self.q.waves.width().or(self.q.k.wave_size())
    }

    fn tid(&mut self, s: u8, ax: u8) -> Var {
        let one_row = self.q.k.flat_only;
        let hi = match self.q.k.group_size {
            Some(g) => g[ax as usize % 3] as i128 - 1,
            // One row: x is the flat index, below the group's thread count.
            None if one_row && (ax as usize).is_multiple_of(3) => self.q.k.group_threads as i128 - 1,
            None if one_row || !self.q.k.thread_axes[ax as usize % 3] => 0,
            None if ax == 2 => 63.min(self.q.k.max_threads as i128 - 1),
            None => self.q.k.max_threads as i128 - 1,
        };
        // Limits on the x extent do not bound a flat index.
        let hi = match (self.q.k.group_size, self.q.k.axis_limits[ax as usize % 3]) {
            (None, Some(limit)) if !one_row => hi.min(limit as i128 - 1),
            _ => hi,
        };
        let v = self.var(Key::Tid(s, ax), 0, hi.max(0));
        self.p.first[v] = true;
        v
    }

    fn owner(&self, s: u8, shared: bool) -> Owner {
        if shared {
            Owner::Shared
        } else {
            Owner::Side(s)
        }
    }

    fn func(&mut self, op: FnOp, a: Lin, b: Lin, lo: i128, hi: i128) -> Lin {
        if let (Some(x), Some(y)) = (a.as_const(), b.as_const()) {
            if let Some(r) = op.eval(x, y) {
                return Lin::konst(r);
            }
        }
        let key = (op, a.clone(), b.clone());
        if let Some(&v) = self.fcache.get(&key) {
            return Lin::var(v);
        }
        let out = self.p.new_var(lo, hi);
        self.p.funcs.push(Func { out, op, a, b });
        self.fcache.insert(key, out);
        Lin::var(out)
    }

    fn nonneg(&self, l: &Lin) -> bool {
        l.k >= 0 && l.terms.iter().all(|&(v, c)| c > 0 && self.p.dom[v].0 >= 0)
    }

    /// Likely launch, for an index `… + u * P + c` where `u` is the same for
    /// the whole group (a loop counter, a group id) or the row of a flat tile
    /// each thread picks, and the column `c` is made of the thread's own ids
    /// (`dst[i * stride + tid]`, `buf[(tid % 4) * 64 + tid / 4]`): the rows
    /// are written to be at least as wide as the threads that fill them, so
    /// `c ≤ P - 1`. A column with a group id in it (`blockIdx.x * 16 + tx`
    /// past the matrix edge) gets nothing: there the rows may overlap.
    fn rows_hold_their_columns(&mut self, s: u8, index: Value) {
        let q = self.q;
        let f = q.k.f;
        let mut summands = Vec::new();
        flatten_sum(f, index, &mut summands, 0);
        // Rows and columns count elements, not their components.
        if q.cells_per_elem > 1 {
            let cells = q.cells_per_elem as i64;
            let mut elements = Vec::new();
            for &t in &summands {
                match f.inst(t).op {
                    Op::Binary(BinOp::Mul, a, b) if f.as_int(b) == Some(cells) => flatten_sum(f, a, &mut elements, 0),
                    Op::Binary(BinOp::Mul, a, b) if f.as_int(a) == Some(cells) => flatten_sum(f, b, &mut elements, 0),
                    _ if f.as_int(t).is_some_and(|c| (0..cells).contains(&c)) => {}
                    _ => return,
                }
            }
            summands = elements;
        }
        let uniform = |v: Value| q.k.uni.level(v) >= Level::Group;
        let product = |t: Value| {
            let mut x = t;
            while let Op::Convert(y) = &f.inst(x).op {
                x = *y;
            }
            match f.inst(x).op {
                Op::Binary(BinOp::Mul, a, b) => Some((a, b)),
                _ => None,
            }
        };
        // A row each thread picks in a tile laid out flat (`(tid % 4) * BM`
        // in `buf[(tid % 4) * BM + tid / 4]`): its stride, when another
        // summand made of thread ids is the column.
        let thread_row = |t: Value| {
            let (a, b) = product(t)?;
            [(a, b), (b, a)].into_iter().find(|&(row, stride)| !uniform(row) && uniform(stride) && launch_input(f, stride, 0)).map(|(_, stride)| stride)
        };
        let local: Vec<Value> = summands.iter().copied().filter(|&t| only_local_ids(f, t).is_some()).collect();
        let rows_per_thread = local.iter().any(|&t| thread_row(t).is_none());
        // The column within a row a thread picks, and within a row of the
        // whole tile (which holds every thread's own part, its row included:
        // `KQ[j * 128 + 32 * ty + tx]`).
        let mut column = Lin::konst(0);
        let mut threads_part = Lin::konst(0);
        let mut has_column = false;
        let (mut thread_strides, mut strides) = (Vec::new(), Vec::new());
        for &t in &summands {
            if let Some(axes) = only_local_ids(f, t) {
                if let Some(stride) = thread_row(t).filter(|_| rows_per_thread) {
                    thread_strides.push(stride);
                    threads_part = threads_part.add(&self.val(s, t, 0));
                    continue;
                }
                // Where a size or a launch fixes the extent, the launch
                // decides and nothing is assumed.
                let free = |ax: usize| matches!(q.k.launched[ax], None | Some(1));
                if q.k.group_size.is_some() || !(0..3).all(|ax| !axes[ax] || free(ax)) {
                    return;
                }
                let part = self.val(s, t, 0);
                column = column.add(&part);
                threads_part = threads_part.add(&part);
                has_column = true;
                continue;
            }
            // The stride is the launch input (a parameter, a constant, a
            // template value); the row is what moves along the rows (a loop
            // counter, a group id).
            if let Some((a, b)) = product(t).filter(|&(a, b)| uniform(a) && uniform(b)) {
                match (launch_input(f, a, 0), launch_input(f, b, 0)) {
                    (false, true) => strides.push(b),
                    (true, false) => strides.push(a),
                    _ => {}
                }
            }
        }
        if !has_column {
            return;
        }
        // A constant summand shifts the column within its row by what is
        // left over after whole rows (`(tid & 3) * 32 + (tid >> 2) + 16`).
        let shift: i64 = summands.iter().filter_map(|&t| f.as_int(t)).sum();
        for (stride, part) in thread_strides.into_iter().map(|st| (st, &column)).chain(strides.into_iter().map(|st| (st, &threads_part))) {
            let p = self.val(s, stride, 0);
            let within_row = f.as_int(stride).filter(|&p| p > 0).map_or(0, |p| shift.rem_euclid(p));
            self.p.at_most(&part.plus(within_row as i128), &p.plus(-1));
        }
    }

    /// For a loop counter that starts uniform and steps by a group-uniform
    /// launch input (`for (i0 = 0; …; i0 += 128)`), the step.
    fn uniform_step(&self, v: Value) -> Option<Value> {
        let k = self.q.k;
        let f = k.f;
        let mut v = v;
        while let Op::Convert(x) = f.inst(v).op {
            if !f.inst(x).ty.is_int() {
                return None;
            }
            v = x;
        }
        let Op::Phi(incoming) = &f.inst(v).op else { return None };
        let l = k.inst_block[v.index()].and_then(|b| k.header_of[b.index()])?;
        let lp = &k.cfg.loops[l];
        let mut step = None;
        for &(pred, val) in incoming {
            if lp.blocks.binary_search(&pred).is_ok() {
                let Op::Binary(BinOp::Add, a, b) = f.inst(val).op else { return None };
                let st = if a == v { b } else if b == v { a } else { return None };
                if step.is_some_and(|s| s != st) || !launch_input(f, st, 0) {
                    return None;
                }
                step = Some(st);
            } else if k.uni.level(val) < Level::Group {
                return None;
            }
        }
        step
    }

    /// Whether a value is the thread's own ids on axes no launch fixes.
    fn thread_offset_on_free_axes(&self, v: Value) -> bool {
        let k = self.q.k;
        let free = |ax: usize| matches!(k.launched[ax], None | Some(1));
        k.group_size.is_none() && only_local_ids(k.f, v).is_some_and(|axes| (0..3).all(|ax| !axes[ax] || free(ax)))
    }

    /// A value not modelled further: one symbol per owner.
    fn leaf(&mut self, s: u8, v: Value) -> Lin {
        let q = self.q;
        if let Op::Load(m) = &q.k.f.inst(v).op {
            if let (lockstep_ir::MemSpace::Constant, Some(i)) = (m.space, q.k.f.as_int(m.index)) {
                let ty = q.k.f.inst(v).ty;
                // A flag in constant memory is one value in every iteration too.
                if ty.is_int() || ty == Type::Bool {
                    let lo = if ty.is_signed() { -INF } else { 0 };
                    let hi = if ty == Type::Bool { 1 } else { INF };
                    let key = Key::ConstCell(m.root, i);
                    if !self.cell_loads.iter().any(|(k, _)| *k == key) {
                        self.cell_loads.push((key, v));
                    }
                    return Lin::var(self.var(key, lo, hi));
                }
            }
        }
        let shared = q.k.uni.level(v) >= q.needed() && q.same_instance(q.k.inst_block[v.index()], None);
        let ty = q.k.f.inst(v).ty;
        let (lo, hi) = match ty {
            Type::Bool => (0, 1),
            Type::U32 => (0, u32::MAX as i128),
            Type::U64 => (0, INF),
            _ => (-INF, INF),
        };
        let key = Key::Leaf(self.owner(s, shared), v);
        Lin::var(self.var(key, lo, hi))
    }

    fn val(&mut self, s: u8, v: Value, depth: u32) -> Lin {
        if let Some(l) = self.memo[s as usize].get(&v) {
            return l.clone();
        }
        let l = if depth > MAX_DEPTH { self.leaf(s, v) } else { self.compute(s, v, depth + 1) };
        self.memo[s as usize].insert(v, l.clone());
        l
    }

    fn compute(&mut self, s: u8, v: Value, d: u32) -> Lin {
        let q = self.q;
        let f = q.k.f;
        let inst = f.inst(v);
        match &inst.op {
            Op::Const(Const::Int(_)) | Op::Const(Const::Bool(_)) => match f.as_int(v) {
                Some(x) => Lin::konst(x as i128),
                None => self.leaf(s, v),
            },
            Op::Builtin(b) => self.builtin(s, *b),
            Op::Convert(x) if inst.ty.is_int() && f.inst(*x).ty.is_int() => self.val(s, *x, d),
            Op::Unary(UnOp::Neg, x) if inst.ty.is_int() => self.val(s, *x, d).scale(-1),
            // ~x == -x - 1 in two's complement.
            Op::Unary(UnOp::Not, x) if inst.ty.is_int() => self.val(s, *x, d).scale(-1).plus(-1),
            Op::Binary(op, x, y) if inst.ty.is_int() => self.binary(s, v, *op, *x, *y, d),
            // `mul24` is the product for the operands it is defined on (24-bit).
            Op::Math(MathFn::Mul24, args) if inst.ty.is_int() && args.len() == 2 => self.binary(s, v, BinOp::Mul, args[0], args[1], d),
            Op::Math(fun @ (MathFn::Min | MathFn::Max), args) if inst.ty.is_int() && args.len() == 2 => {
                let (a, b) = (self.val(s, args[0], d), self.val(s, args[1], d));
                self.func(if *fun == MathFn::Min { FnOp::Min } else { FnOp::Max }, a, b, -INF, INF)
            }
            Op::Math(MathFn::Clamp, args) if inst.ty.is_int() && args.len() == 3 => {
                let (x, lo, hi) = (self.val(s, args[0], d), self.val(s, args[1], d), self.val(s, args[2], d));
                let above = self.func(FnOp::Max, x, lo, -INF, INF);
                self.func(FnOp::Min, above, hi, -INF, INF)
            }
            Op::Math(MathFn::Abs, args) if inst.ty.is_int() && args.len() == 1 => {
                let x = self.val(s, args[0], d);
                let negated = x.scale(-1);
                self.func(FnOp::Max, x, negated, 0, INF)
            }
            // One value on every way in (a branch folded away): that value.
            Op::Phi(incoming) if incoming.windows(2).all(|w| w[0].1 == w[1].1) && incoming.first().is_some_and(|i| i.1 != v) => self.val(s, incoming[0].1, d),
            Op::Phi(incoming) => match q.k.inst_block[v.index()].and_then(|b| q.k.header_of[b.index()]) {
                Some(l) => self.induction(s, v, l, incoming, d).unwrap_or_else(|| self.leaf(s, v)),
                None => self.leaf(s, v),
            },
            _ => self.leaf(s, v),
        }
    }

    fn builtin(&mut self, s: u8, b: Builtin) -> Lin {
        let q = self.q;
        match b {
            Builtin::LocalId(ax) => Lin::var(self.tid(s, ax % 3)),
            Builtin::LocalIndex => {
                // x + sx*y + sx*sy*z; without a known size, z and y strides are blockDim.
                let x = Lin::var(self.tid(s, 0));
                let y = Lin::var(self.tid(s, 1));
                let z = Lin::var(self.tid(s, 2));
                match q.k.group_size {
                    Some([sx, sy, _]) => x.add(&y.scale(sx as i128)).add(&z.scale(sx as i128 * sy as i128)),
                    None if q.k.flat_only || !q.k.thread_axes[1] && !q.k.thread_axes[2] => x,
                    None => {
                        let bx = self.builtin(s, Builtin::GroupSize(0));
                        let by = self.builtin(s, Builtin::GroupSize(1));
                        let ys = self.func(FnOp::Mul, y, bx.clone(), 0, INF);
                        let bxy = self.func(FnOp::Mul, bx, by, 1, INF);
                        let zs = self.func(FnOp::Mul, z, bxy, 0, INF);
                        // A flat index is below the group's thread count, at most the bound.
                        let flat = x.add(&ys).add(&zs);
                        self.p.at_most(&flat, &Lin::konst(q.k.group_threads as i128 - 1));
                        flat
                    }
                }
            }
            // Lanes are the flat index modulo the wave size; with a width
            // nobody fixed, any lane of the widest wave.
            Builtin::LaneId => match self.wave_width() {
                Some(w) => {
                    let flat = self.builtin(s, Builtin::LocalIndex);
                    let w = w.max(1) as i128;
                    self.func(FnOp::Rem, flat, Lin::konst(w), 0, w - 1)
                }
                None => Lin::var(self.var(Key::Lane(s), 0, MAX_WAVE - 1)),
            },
            Builtin::WaveSize => match self.wave_width() {
                Some(w) => Lin::konst(w.max(1) as i128),
                None => Lin::var(self.var(Key::WaveSize, MIN_WAVE, MAX_WAVE)),
            },
            Builtin::GroupId(ax) => {
                let owner = self.owner(s, q.mode == Mode::SameGroup);
                let hi = match q.k.grid_size[ax as usize % 3] {
                    Some(n) => n as i128 - 1,
                    None if q.k.group_axes[ax as usize % 3] => INF,
                    None => 0,
                };
                Lin::var(self.var(Key::Gid(owner, ax % 3), 0, hi))
            }
            Builtin::GroupSize(ax) => match q.k.group_size {
                Some(g) => Lin::konst(g[ax as usize % 3] as i128),
                None => {
                    let hi = if ax % 3 == 2 { 64 } else { q.k.max_threads as i128 };
                    let hi = q.k.axis_limits[ax as usize % 3].map_or(hi, |limit| hi.min(limit as i128));
                    // The extent every launch gives is the extent; the width a
                    // flat id is written for is, when it fits.
                    let lo = q.k.launched[ax as usize % 3].or(q.k.axis_widths[ax as usize % 3]).map_or(1, |w| w as i128).min(hi);
                    Lin::var(self.var(Key::BlockDim(ax % 3), lo, hi))
                }
            },
            Builtin::NumGroups(ax) => match q.k.grid_size[ax as usize % 3] {
                Some(n) => Lin::konst(n as i128),
                None => Lin::var(self.var(Key::NumGroups(ax % 3), 1, INF)),
            },
        }
    }

    fn binary(&mut self, s: u8, v: Value, op: BinOp, x: Value, y: Value, d: u32) -> Lin {
        let a = self.val(s, x, d);
        let b = self.val(s, y, d);
        let unsigned = !self.q.k.f.inst(v).ty.is_signed();
        let kb = b.as_const();
        match op {
            BinOp::Add => {
                if self.q.k.assume == Assumptions::Likely {
                    for (counter, offset, off_lin) in [(x, y, &b), (y, x, &a)] {
                        if let Some(step) = self.uniform_step(counter) {
                            // Only threads side by side cover a step: `i + 2 * tid`
                            // with `++i` gives each thread a run of its own.
                            let side_by_side = off_lin.terms.iter().any(|t| t.1 == 1);
                            if side_by_side && self.thread_offset_on_free_axes(offset) {
                                // `i0 + tid` with `i0 += S`: the threads of one
                                // step cover [i0, i0 + S); the kernel is written
                                // for a group that fits in one step.
                                let st = self.val(s, step, d);
                                self.p.at_most(off_lin, &st.plus(-1));
                            }
                        }
                    }
                }
                a.add(&b)
            }
            BinOp::Sub => a.sub(&b),
            BinOp::Mul => match (a.as_const(), kb) {
                (_, Some(c)) => a.scale(c),
                (Some(c), _) => b.scale(c),
                _ => {
                    // A factor the threads share that scales one of their own
                    // (`t * n_head + h`) is a stride.
                    let uniform = |v: Value| self.q.k.uni.level(v) >= self.q.needed();
                    let stride = match (uniform(x), uniform(y)) {
                        (true, false) => Some((a.clone(), b.clone())),
                        (false, true) => Some((b.clone(), a.clone())),
                        _ => None,
                    };
                    // The likely launch does not pass a stride of 0, which
                    // would send every thread to one cell.
                    if let (Some((stride, _)), Assumptions::Likely) = (&stride, self.q.k.assume) {
                        self.p.differ(stride, &Lin::konst(0));
                    }
                    let lo = if self.nonneg(&a) && self.nonneg(&b) { 0 } else { -INF };
                    let product = self.func(FnOp::Mul, a, b, lo, INF);
                    if let (Some((stride, row)), [(out, 1)]) = (stride, product.terms.as_slice()) {
                        if product.k == 0 && self.computed_by_host(&stride) {
                            self.strides.push(StrideProduct { side: s, inst: v, stride, row, out: *out });
                        }
                    }
                    product
                }
            },
            BinOp::Shl => match kb {
                Some(c) if (0..40).contains(&c) => a.scale(1 << c),
                _ => self.func(FnOp::Shl, a, b, -INF, INF),
            },
            // Alignment leaves no remainder: `a` is exactly `c` times the quotient.
            BinOp::ExactDiv => match kb {
                Some(1) => a,
                Some(c) if c > 1 => {
                    // The likely launch passes byte strides of at least one
                    // value of the memory they step through (ggml's `nb0`).
                    if let Assumptions::Likely = self.q.k.assume {
                        let steps: Vec<Lin> =
                            self.strides.iter().filter(|p| p.side == s && a.terms.iter().any(|t| t.0 == p.out) && self.nonneg(&p.stride)).map(|p| p.stride.clone()).collect();
                        for stride in steps {
                            self.p.at_most(&Lin::konst(c), &stride);
                        }
                    }
                    let lo = if unsigned || self.nonneg(&a) { 0 } else { -INF };
                    let out = self.func(FnOp::Div, a.clone(), b, lo, INF);
                    self.p.at_most(&out.scale(c), &a);
                    self.p.at_most(&a, &out.scale(c));
                    out
                }
                _ => self.func(FnOp::Div, a, b, -INF, INF),
            },
            BinOp::Div | BinOp::Shr => {
                let divisor = match (op, kb) {
                    (BinOp::Div, Some(c)) if c > 0 => Some(c),
                    (BinOp::Shr, Some(c)) if (0..40).contains(&c) => Some(1 << c),
                    _ => None,
                };
                let fop = if op == BinOp::Div { FnOp::Div } else { FnOp::Shr };
                match divisor {
                    Some(1) => a,
                    // Exact for non-negative dividends: c*out <= a <= c*out + c - 1.
                    Some(c) if unsigned || self.nonneg(&a) => {
                        let out = self.func(fop, a.clone(), b, 0, INF);
                        self.p.at_most(&out.scale(c), &a);
                        self.p.at_most(&a, &out.scale(c).plus(c - 1));
                        out
                    }
                    _ => self.func(fop, a, b, -INF, INF),
                }
            }
            BinOp::Rem => match kb {
                Some(c) if c > 0 && (unsigned || self.nonneg(&a)) => self.func(FnOp::Rem, a, b, 0, c - 1),
                Some(c) if c != 0 => self.func(FnOp::Rem, a, b, -(c.abs() - 1), c.abs() - 1),
                _ => self.func(FnOp::Rem, a, b, -INF, INF),
            },
            BinOp::And => match kb.or(a.as_const()) {
                Some(m) if m >= 0 => {
                    let (a, b) = if kb.is_some() { (a, b) } else { (b, a) };
                    self.func(FnOp::And, a, b, 0, m)
                }
                _ => self.func(FnOp::And, a, b, -INF, INF),
            },
            BinOp::Or => self.func(FnOp::Or, a, b, -INF, INF),
            BinOp::Xor => {
                let lo = if self.nonneg(&a) && self.nonneg(&b) { 0 } else { -INF };
                self.func(FnOp::Xor, a, b, lo, INF)
            }
            BinOp::LAnd | BinOp::LOr => self.leaf(s, v),
        }
    }

    /// A loop-header phi `x = phi(init, x op step)`: a function of the
    /// iteration count of its loop.
    fn induction(&mut self, s: u8, v: Value, l: usize, incoming: &[(BlockId, Value)], d: u32) -> Option<Lin> {
        let q = self.q;
        let (init, step) = recurrence(q.k, v, l, incoming)?;
        // Both sides in one iteration see one value of an alternating
        // variable: the phi's plain treatment is as exact there, and cheaper.
        // Barrier removal keeps the plain treatment everywhere (it only
        // over-approximates, so a barrier may stay that parity would free).
        if matches!(step, Step::Toggle(_) | Step::Reflect(_)) && (matches!(q.rel(l), Rel::Same) || q.k.assume != Assumptions::Likely) {
            return None;
        }
        // 32 steps exhaust a 32-bit value either way.
        let hi = if matches!(step, Step::Pow(_)) { 32 } else { INF };
        let n = self.iteration(s, v, l, hi);
        let init_value = init;
        let init = self.val(s, init, d);
        Some(match step {
            Step::Linear(st, sign) => {
                let stride_value = st;
                let st = self.val(s, st, d).scale(sign);
                // A loop that starts at a different index in each thread and
                // steps by a group-uniform stride (`for (i = tid; …; i += 128)`)
                // is a block-stride loop: it is written for a group whose
                // threads start within one stride of each other. Race reports
                // assume that launch; barrier removal does not.
                if s == 1
                    && sign > 0
                    && q.k.assume == Assumptions::Likely
                    && q.mode == Mode::SameGroup
                    && q.k.uni.level(init_value) < q.needed()
                    && q.k.uni.level(stride_value) >= q.needed()
                {
                    let spread = init.sub(&self.val(0, init_value, d));
                    self.p.at_most(&spread, &st.plus(-1));
                    self.p.at_most(&spread.scale(-1), &st.plus(-1));
                }
                match st.as_const() {
                    Some(c) => init.add(&n.scale(c)),
                    None => {
                        let prod = self.func(FnOp::Mul, st, n, -INF, INF);
                        init.add(&prod)
                    }
                }
            }
            Step::Pow(op) => {
                let lo = if self.nonneg(&init) { 0 } else { -INF };
                self.func(op, init, n, lo, INF)
            }
            // After n steps: `init` when n is even, `init ^ c` when it is odd.
            Step::Toggle(c) => {
                let odd = self.func(FnOp::Rem, n, Lin::konst(2), 0, 1);
                match init.as_const() {
                    Some(i0) => init.add(&odd.scale((i0 ^ c) - i0)),
                    None => {
                        let lo = if self.nonneg(&init) { 0 } else { -INF };
                        self.func(FnOp::Xor, init, odd.scale(c), lo, INF)
                    }
                }
            }
            // After n steps: `init` when n is even, `c - init` when it is odd.
            Step::Reflect(c) => {
                let odd = self.func(FnOp::Rem, n, Lin::konst(2), 0, 1);
                let swing = self.val(s, c, d).sub(&init.scale(2));
                match swing.as_const() {
                    Some(k) => init.add(&odd.scale(k)),
                    None => {
                        let step = self.func(FnOp::Mul, swing, odd, -INF, INF);
                        init.add(&step)
                    }
                }
            }
        })
    }

    /// The iteration count of loop `l` as side `s` sees it at phi `v`.
    fn iteration(&mut self, s: u8, v: Value, l: usize, hi: i128) -> Lin {
        let q = self.q;
        let header = Some(q.k.cfg.loops[l].header);
        let outer_same = q.same_instance(header, Some(l));
        // Inside a loop both threads run in step (same iteration), the phi is
        // one value when it is uniform or the loop holds the threads together.
        let in_step = q.mode == Mode::SameGroup && q.sides.iter().all(|s| s.offsets.get(l).is_some_and(|&o| o < MANY));
        let uniform = q.k.uni.level(v) >= q.needed();
        let n = match q.rel(l) {
            Rel::Same if outer_same && (in_step || uniform) => Lin::var(self.var(Key::Iter(Owner::Shared, l), 0, hi)),
            Rel::Offset(off) if outer_same => {
                let a = self.var(Key::Iter(Owner::Side(0), l), 0, INF);
                let b = self.var(Key::Iter(Owner::Side(1), l), 0, INF);
                if !self.linked.contains(&l) {
                    self.linked.push(l);
                    self.p.equal(&Lin::var(b), &Lin::var(a).plus(off as i128));
                }
                Lin::var(if s == 0 { a } else { b })
            }
            Rel::Later if outer_same => {
                let a = self.var(Key::Iter(Owner::Side(0), l), 0, hi);
                let b = self.var(Key::Iter(Owner::Side(1), l), 0, hi);
                if !self.linked.contains(&l) {
                    self.linked.push(l);
                    self.p.at_most(&Lin::var(b).plus(1), &Lin::var(a));
                }
                Lin::var(if s == 0 { a } else { b })
            }
            _ => Lin::var(self.var(Key::Iter(Owner::Side(s), l), 0, hi)),
        };
        // A constant trip count pins the count after the loop and bounds it inside.
        if let (Some(trips), [(var, 1)]) = (q.k.trip_counts[l], n.terms.as_slice()) {
            let block = q.sides[s as usize].block;
            let (lo, hi) = if !q.k.in_loop(l, block) {
                (trips, trips)
            } else if block == q.k.cfg.loops[l].header {
                (0, trips)
            } else {
                (0, trips - 1)
            };
            let d = &mut self.p.dom[*var];
            *d = (d.0.max(lo), d.1.min(hi));
        }
        n
    }

    /// Adds what a branch condition says when it went the `pol` way.
    fn cond(&mut self, s: u8, c: Value, pol: bool, depth: u32) {
        if depth > 8 {
            return;
        }
        let f = self.q.k.f;
        match &f.inst(c).op {
            // `ok != 0` of a truth value kept as an integer: that truth value.
            Op::Cmp(op @ (CmpOp::Ne | CmpOp::Eq), x, y) if f.as_int(*y) == Some(0) && matches!(f.inst(*x).op, Op::Convert(b) if f.inst(b).ty == Type::Bool) => {
                self.cond(s, *x, pol == (*op == CmpOp::Ne), depth + 1)
            }
            Op::Cmp(op, x, y) if f.inst(*x).ty.is_int() || f.inst(*x).ty == Type::Bool => {
                let a = self.val(s, *x, 0);
                let b = self.val(s, *y, 0);
                let op = if pol { *op } else { negate(*op) };
                match op {
                    CmpOp::Eq => self.p.equal(&a, &b),
                    CmpOp::Ne => self.p.differ(&a, &b),
                    CmpOp::Lt => self.p.at_most(&a.plus(1), &b),
                    CmpOp::Le => self.p.at_most(&a, &b),
                    CmpOp::Gt => self.p.at_most(&b.plus(1), &a),
                    CmpOp::Ge => self.p.at_most(&b, &a),
                }
            }
            Op::Binary(BinOp::LAnd | BinOp::And, x, y) if pol && f.inst(c).ty == Type::Bool => {
                self.cond(s, *x, true, depth + 1);
                self.cond(s, *y, true, depth + 1);
            }
            Op::Binary(BinOp::LOr | BinOp::Or, x, y) if !pol && f.inst(c).ty == Type::Bool => {
                self.cond(s, *x, false, depth + 1);
                self.cond(s, *y, false, depth + 1);
            }
            Op::Unary(UnOp::LNot | UnOp::Not, x) if f.inst(c).ty == Type::Bool => self.cond(s, *x, !pol, depth + 1),
            // A short-circuit `a && b` kept as a value is a phi of `b` and
            // `false` after a branch on `a`: the one way to the asked value.
            Op::Phi(_) if let Some((branch, then_value, else_value)) = self.q.k.gated(c) => {
                let gives = |x: Value| f.as_int(x).map(|k| (k != 0) == pol);
                match (gives(then_value), gives(else_value)) {
                    (_, Some(false)) => {
                        self.cond(s, branch, true, depth + 1);
                        self.cond(s, then_value, pol, depth + 1);
                    }
                    (Some(false), _) => {
                        self.cond(s, branch, false, depth + 1);
                        self.cond(s, else_value, pol, depth + 1);
                    }
                    _ => self.unknown_truth(s, c, pol),
                }
            }
            // Electing a lane where the whole wave runs (`if (simd_is_first())`
            // in wave-uniform code) elects lane 0.
            Op::Wave(WaveOp::IsFirstLane, _) if self.q.k.elects_lane_zero(c) => {
                let lane = self.builtin(s, Builtin::LaneId);
                if pol {
                    self.p.equal(&lane, &Lin::konst(0));
                } else {
                    self.p.at_most(&Lin::konst(1), &lane);
                }
            }
            // A truth value kept as an integer (`int ok = a < b; if (ok)`): that truth value.
            Op::Convert(x) if f.inst(*x).ty == Type::Bool => self.cond(s, *x, pol, depth + 1),
            Op::Convert(x) if matches!(f.inst(*x).op, Op::Convert(b) if f.inst(b).ty == Type::Bool) => self.cond(s, *x, pol, depth + 1),
            Op::Convert(x) if f.inst(*x).ty.is_int() => {
                let a = self.val(s, *x, 0);
                if pol {
                    self.p.differ(&a, &Lin::konst(0));
                } else {
                    self.p.equal(&a, &Lin::konst(0));
                }
            }
            // Anything else (a flag loaded from memory, a float comparison)
            // is one unknown truth value per owner: a launch-wide flag
            // sends every thread the same way.
            _ if f.inst(c).ty.is_int() || f.inst(c).ty == Type::Bool => self.unknown_truth(s, c, pol),
            _ => {}
        }
    }

    fn unknown_truth(&mut self, s: u8, c: Value, pol: bool) {
        let a = self.val(s, c, 0);
        if pol {
            self.p.differ(&a, &Lin::konst(0));
        } else {
            self.p.equal(&a, &Lin::konst(0));
        }
    }

    /// `a == b`, splitting mixed-radix forms `c*(P*W) + R` with `0 <= R < c*W`
    /// on both sides into `P_a == P_b` and `R_a == R_b` (how
    /// `blockIdx.x * blockDim.x + threadIdx.x` and grid-stride loops stay
    /// injective when the block and grid sizes are symbols).
    fn same_cell(&mut self, a: &Lin, b: &Lin, depth: u32) {
        if depth < 6 {
            if let Some(((pa, ra), (pb, rb))) = self.radix(a, 0).zip(self.radix(b, 0)) {
                if pa.0 == pb.0 && pa.2 == pb.2 {
                    self.same_cell(&pa.1, &pb.1, depth + 1);
                    self.same_cell(&ra, &rb, depth + 1);
                    return;
                }
            }
            // The same with a literal radix: `64*(8*gy + ty) + (8*gx + tx)`
            // with the remainder below 64 on both sides.
            let mut radices: Vec<i128> = a.terms.iter().map(|t| t.1.abs()).filter(|&c| c > 1).collect();
            radices.sort_unstable_by(|x, y| y.cmp(x));
            radices.dedup();
            for c in radices {
                if let (Some((pa, ra)), Some((pb, rb))) = (self.const_radix(a, c), self.const_radix(b, c)) {
                    self.same_cell(&pa, &pb, depth + 1);
                    self.same_cell(&ra, &rb, depth + 1);
                    return;
                }
            }
            // Terms both sides share (one base pointer, one uniform offset)
            // cancel; the rest may split then.
            let common: Terms = a.terms.iter().filter(|t| b.terms.contains(t)).copied().collect();
            if !common.is_empty() {
                let c = Lin { terms: common, k: 0 };
                return self.same_cell(&a.sub(&c), &b.sub(&c), depth + 1);
            }
        }
        self.p.equal(a, b);
    }

    /// Splits `l` as `c*P + R` with `0 <= R < c`.
    fn const_radix(&self, l: &Lin, c: i128) -> Option<(Lin, Lin)> {
        let (high, low): (Terms, Terms) = l.terms.iter().copied().partition(|t| t.1 % c == 0);
        if high.is_empty() {
            return None;
        }
        let p = Lin { terms: high.iter().map(|&(v, x)| (v, x / c)).collect(), k: l.k.div_euclid(c) };
        let r = Lin { terms: low, k: l.k.rem_euclid(c) };
        (self.nonneg(&r) && self.below(&r, &Lin::konst(c), 0)).then_some((p, r))
    }

    /// Splits `l` as `c * (P * W) + R` with `R` provably in `[0, c*W)`:
    /// returns ((c, P, W), R).
    fn radix(&self, l: &Lin, depth: u32) -> Option<((i128, Lin, Lin), Lin)> {
        if depth > 3 {
            return None;
        }
        for &(m, c) in &l.terms {
            if c <= 0 {
                continue;
            }
            let Some(func) = self.p.funcs.iter().find(|f| f.out == m && f.op == FnOp::Mul) else { continue };
            let rest = l.sub(&Lin::var(m).scale(c));
            for (p, w) in [(&func.a, &func.b), (&func.b, &func.a)] {
                if self.nonneg(&rest) && self.below(&rest, &w.scale(c), depth) {
                    return Some(((c, p.clone(), w.clone()), rest));
                }
            }
        }
        None
    }

    /// Whether a guard says `x <= y - 1`.
    fn guard_below(&self, x: &Lin, y: &Lin) -> bool {
        let diff = x.sub(y);
        self.p.les.iter().any(|g| g.terms == diff.terms && g.k - diff.k >= 1)
    }

    /// Whether `r < w` follows from the domains, a guard, or the shape of `r`.
    fn below(&self, r: &Lin, w: &Lin, depth: u32) -> bool {
        if self.guard_below(r, w) || r.range(&self.p.dom).1 < w.range(&self.p.dom).0 {
            return true;
        }
        // A thread id against its own block size.
        if let ([(t, 1)], [(bd, 1)]) = (r.terms.as_slice(), w.terms.as_slice()) {
            if r.k == 0 && w.k == 0 {
                for ax in 0..3 {
                    if self.keys.get(&Key::BlockDim(ax)) == Some(bd) && (0..2).any(|s| self.keys.get(&Key::Tid(s, ax)) == Some(t)) {
                        return true;
                    }
                }
            }
        }
        // r = c*g + r2 with 0 <= r2 < c and g < q, against w = c*q.
        for &(g, c) in &r.terms {
            if c <= 0 || w.k % c != 0 || w.terms.iter().any(|t| t.1 % c != 0) {
                continue;
            }
            let q = Lin { terms: w.terms.iter().map(|&(v, x)| (v, x / c)).collect(), k: w.k / c };
            if !self.guard_below(&Lin::var(g), &q) {
                continue;
            }
            let r2 = r.sub(&Lin::var(g).scale(c));
            if self.nonneg(&r2) && self.below(&r2, &Lin::konst(c), depth + 1) {
                return true;
            }
        }
        // r = c*(p*w2) + r2 (itself mixed radix) with p < q, against w = c*(w2*q).
        if let Some(((c, p, w2), _)) = self.radix(r, depth + 1) {
            if let [(x, cx)] = w.terms.as_slice() {
                if w.k == 0 && *cx == c {
                    if let Some(f) = self.p.funcs.iter().find(|f| f.out == *x && f.op == FnOp::Mul) {
                        for (a, q) in [(&f.a, &f.b), (&f.b, &f.a)] {
                            if *a == w2 && self.guard_below(&p, q) {
                                return true;
                            }
                        }
                    }
                }
            }
        }
        false
    }

    /// Block and grid sizes bound the ids: `t < blockDim`, `g < gridDim`.
    fn size_bounds(&mut self) {
        if self.q.k.assume == Assumptions::Likely {
            self.argument_relations();
        }
        for ax in 0..3u8 {
            self.group_count_from_argument(ax);
            self.group_extent_from_argument(ax);
            if let Some(&bd) = self.keys.get(&Key::BlockDim(ax)) {
                for s in 0..2 {
                    if let Some(&t) = self.keys.get(&Key::Tid(s, ax)) {
                        self.p.at_most(&Lin::var(t).plus(1), &Lin::var(bd));
                    }
                }
            }
            if let Some(&ng) = self.keys.get(&Key::NumGroups(ax)) {
                for o in [Owner::Shared, Owner::Side(0), Owner::Side(1)] {
                    if let Some(&g) = self.keys.get(&Key::Gid(o, ax)) {
                        self.p.at_most(&Lin::var(g).plus(1), &Lin::var(ng));
                    }
                }
            }
        }
    }

    /// Where every launch computes the group count along `ax` from a kernel
    /// argument the question reads (`grid(n / 16)` with `n` passed on), the
    /// count and the argument bound each other: `div * groups <= n + add <
    /// div * (groups + 1)`. A group's index below the count then bounds the
    /// argument (`16 * blockIdx.x + 15 < n`).
    fn group_count_from_argument(&mut self, ax: u8) {
        let f = self.q.k.f;
        let Some(count) = f.entry.as_ref().and_then(|e| e.grid_count_params[ax as usize]) else { return };
        if self.q.k.grid_size[ax as usize].is_some() {
            return;
        }
        let arguments: Vec<Var> = self.keys.iter().filter(|(key, _)| matches!(key, Key::Leaf(_, v) if f.inst(*v).op == Op::Param(count.param))).map(|(_, &var)| var).collect();
        let counted = self.keys.iter().any(|(key, _)| matches!(key, Key::Gid(_, a) | Key::NumGroups(a) if *a == ax));
        if arguments.is_empty() || !counted {
            return;
        }
        let groups = Lin::var(self.var(Key::NumGroups(ax), 1, INF)).scale(count.div as i128);
        for arg in arguments {
            self.p.tied.push(arg);
            let dividend = Lin::var(arg).plus(count.add as i128);
            self.p.at_most(&groups, &dividend);
            self.p.at_most(&dividend, &groups.plus(count.div as i128 - 1));
        }
    }

    /// Where every launch makes the group's extent along `ax` a kernel
    /// argument (`dim3 block(n / 8)` with `n / 8` passed on), the extent
    /// the question reads is that argument, and the thread ids are below it.
    fn group_extent_from_argument(&mut self, ax: u8) {
        let f = self.q.k.f;
        let Some(param) = f.entry.as_ref().and_then(|e| e.group_extent_params[ax as usize]) else { return };
        let arguments: Vec<Var> = self.keys.iter().filter(|(key, _)| matches!(key, Key::Leaf(_, v) if f.inst(*v).op == Op::Param(param))).map(|(_, &var)| var).collect();
        let extent = self.keys.get(&Key::BlockDim(ax)).copied();
        let ids: Vec<Var> = (0..2).filter_map(|s| self.keys.get(&Key::Tid(s, ax)).copied()).collect();
        for arg in arguments {
            self.p.tied.push(arg);
            if let Some(extent) = extent {
                self.p.equal(&Lin::var(arg), &Lin::var(extent));
            }
            for &t in &ids {
                self.p.at_most(&Lin::var(t).plus(1), &Lin::var(arg));
            }
        }
    }

    /// The comparisons of kernel arguments every launch runs under (`if (C
    /// / H == 64) k<<<…>>>(C, H)`), for race reports: where the question
    /// reads every argument one names, it holds. A quotient is compared with
    /// constants only, and its divisor taken positive (a size).
    fn argument_relations(&mut self) {
        use lockstep_ir::{ArgComparison, ArgOperand};
        let f = self.q.k.f;
        let Some(entry) = f.entry.as_ref() else { return };
        for r in &entry.arg_relations {
            let var_of = |p: u32| self.keys.iter().find(|(key, _)| matches!(key, Key::Leaf(_, v) if f.inst(*v).op == Op::Param(p))).map(|(_, &var)| var);
            let params: Vec<u32> = r.lhs.params().into_iter().chain(r.rhs.params()).collect();
            let Some(vars) = params.iter().map(|&p| var_of(p)).collect::<Option<Vec<Var>>>() else { continue };
            if vars.is_empty() {
                continue;
            }
            let linear = |o: ArgOperand| match o {
                ArgOperand::Param(p) => var_of(p).map(Lin::var),
                ArgOperand::Constant(c) => Some(Lin::konst(c as i128)),
                ArgOperand::Quotient(..) => None,
            };
            // A quotient against a constant: the range `lo..=hi` it lies in.
            let range = match (r.lhs, r.cmp, r.rhs) {
                (ArgOperand::Quotient(a, b), cmp, ArgOperand::Constant(k)) => {
                    let k = k as i128;
                    Some((a, b, (cmp == ArgComparison::Equal).then_some(k), Some(if cmp == ArgComparison::Below { k - 1 } else { k })))
                }
                (ArgOperand::Constant(k), cmp, ArgOperand::Quotient(a, b)) => {
                    let k = k as i128;
                    Some((a, b, Some(if cmp == ArgComparison::Below { k + 1 } else { k }), (cmp == ArgComparison::Equal).then_some(k)))
                }
                _ => None,
            };
            if let Some((a, b, lo, hi)) = range {
                let (Some(a), Some(b)) = (var_of(a), var_of(b)) else { continue };
                let (a, b) = (Lin::var(a), Lin::var(b));
                // With `b >= 1`: `lo <= a / b` is `lo*b <= a` (lo >= 1), and
                // `a / b <= hi` is `a <= (hi + 1)*b - 1` (hi >= 0).
                self.p.at_most(&Lin::konst(1), &b);
                if let Some(lo) = lo.filter(|&lo| lo >= 1) {
                    self.p.at_most(&b.scale(lo), &a);
                }
                if let Some(hi) = hi.filter(|&hi| hi >= 0) {
                    self.p.at_most(&a, &b.scale(hi + 1).plus(-1));
                }
            } else {
                let (Some(lhs), Some(rhs)) = (linear(r.lhs), linear(r.rhs)) else { continue };
                match r.cmp {
                    ArgComparison::Equal => self.p.equal(&lhs, &rhs),
                    ArgComparison::AtMost => self.p.at_most(&lhs, &rhs),
                    ArgComparison::Below => self.p.at_most(&lhs.plus(1), &rhs),
                }
            }
            self.p.tied.extend(vars);
        }
    }

    /// Thread distinctness, and dropping unused functions.
    fn finish(&mut self) {
        let q = self.q;
        // Different threads: some id component differs. A component neither
        // side mentions can always differ, so then nothing needs adding.
        let mut diffs = Vec::new();
        let mut free = false;
        for ax in 0..3u8 {
            let key: fn(u8, u8) -> Key = match q.mode {
                Mode::SameGroup => |s, ax| Key::Tid(s, ax),
                Mode::CrossGroup => |s, ax| Key::Gid(Owner::Side(s), ax),
            };
            if !q.k.wide(q.mode, ax as usize) {
                continue;
            }
            let used = (0..2).any(|s| self.keys.contains_key(&key(s, ax)));
            if !used {
                free = true;
                continue;
            }
            let a = match q.mode {
                Mode::SameGroup => self.tid(0, ax),
                Mode::CrossGroup => self.var(key(0, ax), 0, INF),
            };
            let b = match q.mode {
                Mode::SameGroup => self.tid(1, ax),
                Mode::CrossGroup => self.var(key(1, ax), 0, INF),
            };
            diffs.push(Lin::var(a).sub(&Lin::var(b)));
        }
        if !free {
            self.p.distinct.push(diffs);
        }
        // Functions whose result nothing reads constrain nothing.
        loop {
            let mut used = vec![false; self.p.dom.len()];
            let mut mark = |l: &Lin| l.terms.iter().for_each(|t| used[t.0] = true);
            self.p.eqs.iter().chain(&self.p.les).chain(&self.p.nes).for_each(&mut mark);
            self.p.distinct.iter().flatten().for_each(&mut mark);
            for f in &self.p.funcs {
                mark(&f.a);
                mark(&f.b);
            }
            let before = self.p.funcs.len();
            self.p.funcs.retain(|f| used[f.out]);
            if self.p.funcs.len() == before {
                break;
            }
        }
    }

    /// Whether a value is computed from the host's values alone: kernel
    /// parameters, values loaded alike by every thread in question, and
    /// arithmetic on them (`nb2 / sizeof(float)`).
    fn computed_by_host(&self, l: &Lin) -> bool {
        !l.terms.is_empty() && l.terms.iter().all(|t| self.host_inputs(t.0).is_some())
    }

    /// The host's values a variable is computed from (shared leaves and
    /// constant cells, through functions), or None when it also depends on
    /// anything else or on too much to follow.
    fn host_inputs(&self, v: Var) -> Option<Vec<&Key>> {
        let mut inputs = Vec::new();
        let mut open = vec![v];
        let mut seen = 0;
        while let Some(v) = open.pop() {
            seen += 1;
            if seen > 32 {
                return None;
            }
            match self.keys.iter().find(|&(_, &var)| var == v) {
                Some((key @ (Key::Leaf(Owner::Shared, _) | Key::ConstCell(..)), _)) => inputs.push(key),
                Some(_) => return None,
                None => {
                    let f = self.p.funcs.iter().find(|f| f.out == v)?;
                    open.extend(f.a.terms.iter().chain(&f.b.terms).map(|t| t.0));
                }
            }
        }
        Some(inputs)
    }

    /// Marks what functions compute from marked variables alone.
    fn closed_under_funcs(&self, mut marked: Vec<bool>) -> Vec<bool> {
        loop {
            let mut changed = false;
            for f in &self.p.funcs {
                if !marked[f.out] && f.a.terms.iter().chain(&f.b.terms).all(|t| marked[t.0]) {
                    marked[f.out] = true;
                    changed = true;
                }
            }
            if !changed {
                return marked;
            }
        }
    }

    /// The variables both threads share: shared symbols (the group's id
    /// within a group, an iteration both are in), launch sizes, and
    /// functions of them alone.
    fn uniform_vars(&self) -> Vec<bool> {
        let mut uniform = vec![false; self.p.dom.len()];
        for (key, &var) in &self.keys {
            uniform[var] = matches!(
                key,
                Key::Leaf(Owner::Shared, _) | Key::Gid(Owner::Shared, _) | Key::Iter(Owner::Shared, _) | Key::ConstCell(..) | Key::BlockDim(_) | Key::NumGroups(_) | Key::WaveSize
            );
        }
        self.closed_under_funcs(uniform)
    }

    /// A pitched layout (`dst + i1*nb1 + i2*nb2 + i0` with `i0 < ne00`):
    /// rows of host strides whose columns are bounded by a width the program
    /// states (a guard or loop bound over the whole column). Returns the
    /// pairs of rows (side 0's, side 1's) of one stride that the witness
    /// `values` takes apart, with side 0's products; None when no such row
    /// differs or a column has no stated width (a matrix output past its
    /// edge writes into the next row for real).
    fn strided_rows(&self, values: &[Option<i128>], addr: &[Lin; 2]) -> Option<StridedRows> {
        let addr = &[self.in_bytes(0, &addr[0]), self.in_bytes(1, &addr[1])];
        let of_side = |s: u8| self.strides.iter().filter(move |p| p.side == s);
        let value = |l: &Lin| l.terms.iter().try_fold(l.k, |acc, &(v, c)| values[v].map(|x| acc + c * x));
        let mut pairs = Vec::new();
        let mut insts = Vec::new();
        let uniform = self.uniform_vars();
        let spread: Vec<Var> = (0..2u8).filter_map(|s| self.keys.get(&Key::Spread(s)).copied()).collect();
        let group_size: Vec<Var> = self.keys.iter().filter(|(key, _)| matches!(key, Key::BlockDim(_) | Key::NumGroups(_) | Key::WaveSize)).map(|(_, &v)| v).collect();
        // Whether side `s` of `sums` (the indices, or two rows of one
        // stride) holds a column bounded by a width the program states.
        let stated_width = |s: u8, sums: &[Lin; 2]| {
            let products: Vec<Var> = of_side(s).map(|p| p.out).collect();
            // A symbol in both sums is one value for both threads.
            let shared = |v: Var| uniform[v] || sums[1 - s as usize].coef(v) != 0;
            let column: Terms = sums[s as usize].terms.iter().filter(|t| !shared(t.0) && !products.contains(&t.0) && !spread.contains(&t.0)).copied().collect();
            // `column < bound` for some bound: the host's width, a width
            // that moves with the row (a triangle), or a loop's count (a
            // loop to a constant). A thread id's range is the group's, not
            // a width the kernel states (a matrix tile past the edge).
            let mut given: Vec<bool> = (0..uniform.len()).map(|w| uniform[w] && !group_size.contains(&w)).collect();
            for p in of_side(s) {
                p.row.terms.iter().for_each(|t| given[t.0] = true);
            }
            // And what the row and the host's values compute (`i1 * ne0`).
            let given = self.closed_under_funcs(given);
            let given = |w: Var| given[w];
            self.stated_bound(column, &given, 4)
        };
        // Products each sum adds; one inside another's row (`i2*ne1` of
        // `(i2*ne1)*ne0`) lays out rows within rows, taken apart in turn
        // where the inner column has a stated width. Products of one stride
        // add up to one row of it (`(i1 + r1)*ne0`).
        const MAX_LEVELS: usize = 3;
        let mut levels = vec![addr.clone()];
        for depth in 0..MAX_LEVELS {
            let Some(sums) = levels.get(depth).cloned() else { break };
            let sums = &sums;
            let in_sum = |s: u8| of_side(s).filter(move |p| sums[s as usize].coef(p.out) != 0);
            let row_of = |s: u8, stride: &Lin| in_sum(s).filter(|p| p.stride == *stride).fold(Lin::konst(0), |row, p| row.add(&p.row.scale(sums[s as usize].coef(p.out))));
            let mut strides: Vec<&Lin> = Vec::new();
            for a in in_sum(0) {
                if strides.contains(&&a.stride) || in_sum(1).all(|b| b.stride != a.stride) {
                    continue;
                }
                strides.push(&a.stride);
                let rows = [row_of(0, &a.stride), row_of(1, &a.stride)];
                // Rows the witness keeps together stay together when it is
                // solved again for the others.
                if !matches!((value(&rows[0]), value(&rows[1])), (Some(x), Some(y)) if x == y) {
                    // The products whose rows differ, or the first of them.
                    let differs = |p: &StrideProduct| !in_sum(1).any(|b| b.inst == p.inst && matches!((value(&p.row), value(&b.row)), (Some(x), Some(y)) if x == y));
                    let apart: Vec<Value> = in_sum(0).filter(|p| p.stride == a.stride && differs(p)).map(|p| p.inst).collect();
                    insts.extend(if apart.is_empty() { vec![a.inst] } else { apart });
                }
                if depth + 1 < MAX_LEVELS && stated_width(0, &rows) && stated_width(1, &rows) {
                    levels.push(rows.clone());
                }
                pairs.push((rows[0].clone(), rows[1].clone()));
            }
        }
        insts.sort_unstable();
        insts.dedup();
        // A value the host passes that one index adds and the other does
        // not (`dst[i + n_dims]` against `dst[i]`): the halves of a row it
        // places apart.
        let products: Vec<Var> = self.strides.iter().map(|p| p.out).collect();
        let host_part = |l: &Lin| Lin { terms: l.terms.iter().filter(|t| !products.contains(&t.0) && self.host_leaves(t.0).is_some()).copied().collect(), k: 0 };
        let (h0, h1) = (host_part(&addr[0]), host_part(&addr[1]));
        let offset = h0.sub(&h1);
        let mut offsets: Vec<Value> = offset.terms.iter().filter_map(|t| self.host_leaves(t.0)).flatten().collect();
        offsets.sort_unstable();
        offsets.dedup();
        if !offsets.is_empty() && !matches!((value(&h0), value(&h1)), (Some(x), Some(y)) if x == y) {
            pairs.push((h0, h1));
        } else {
            offsets.clear();
        }
        if insts.is_empty() && offsets.is_empty() {
            return None;
        }
        (stated_width(0, addr) && stated_width(1, addr)).then_some((pairs, insts, offsets))
    }

    /// A side's index with the rows it adds in bytes counted in bytes too:
    /// `float* row = (char*)dst + i*nb1; row[j]` indexes floats at
    /// `(i*nb1) / 4 + j`, which is `i*nb1 + 4*j` in bytes, so that the row
    /// `i` of stride `nb1` shows as one. The index as it is where no such
    /// quotient, or quotients by different sizes, occur.
    fn in_bytes(&self, s: u8, index: &Lin) -> Lin {
        let products: Vec<Var> = self.strides.iter().filter(|p| p.side == s).map(|p| p.out).collect();
        let mut size = None;
        let mut bytes = Lin::konst(0);
        let mut elements = Lin::konst(index.k);
        for &(v, c) in &index.terms {
            let quotient = self.p.funcs.iter().find(|f| {
                f.out == v && f.op == FnOp::Div && f.a.k == 0 && f.a.terms.iter().any(|t| products.contains(&t.0)) && f.a.terms.iter().all(|t| products.contains(&t.0) || self.host_inputs(t.0).is_some())
            });
            match quotient.and_then(|f| Some((f, f.b.as_const().filter(|&k| k > 1)?))) {
                Some((f, k)) if size.is_none_or(|n| n == k) => {
                    size = Some(k);
                    bytes = bytes.add(&f.a.scale(c));
                }
                _ => elements = elements.add(&Lin::var(v).scale(c)),
            }
        }
        match size {
            Some(k) => bytes.add(&elements.scale(k)),
            None => index.clone(),
        }
    }

    /// Whether the program bounds the sum `column` from above by values
    /// `given` accepts and constants, following the constraints a few steps
    /// (`i0 / 2` is at most what it divides, which a guard bounds). A
    /// loop's count bounds its iterations. Across groups the launch's shape
    /// bounds a thread id, and a group's index counts rows of the grid the
    /// host launches for its data; within one, where only the threads'
    /// difference counts, a group wider than a row is what the race is
    /// about, so a thread id's range is never a width the program states.
    fn stated_bound(&self, column: Terms, given: &dyn Fn(Var) -> bool, depth: u32) -> bool {
        let launched = match (self.q.mode, self.q.k.f.entry.as_ref()) {
            (Mode::CrossGroup, Some(e)) => std::array::from_fn(|ax| e.threads_along(ax)),
            _ => [None; 3],
        };
        let bounded = |v: Var| self.p.dom[v].1 < INF;
        let counted = |v: Var| {
            self.keys.iter().any(|(key, &var)| var == v && match key {
                Key::Iter(..) => bounded(v),
                Key::Tid(_, ax) => bounded(v) && launched[*ax as usize].is_some(),
                // Across groups, a group's index counts the rows of a grid the
                // host sizes to its data.
                Key::Gid(_, ax) => self.q.mode == Mode::CrossGroup && (bounded(v) || self.q.k.grid_size[*ax as usize % 3].is_none()),
                _ => false,
            })
        };
        // `i % n` is below a host's `n` (in magnitude, whatever the signs).
        let remainder_of_given = |v: Var| self.p.funcs.iter().any(|f| f.out == v && f.op == FnOp::Rem && !f.b.terms.is_empty() && f.b.terms.iter().all(|t| given(t.0)));
        if column.iter().all(|&(v, c)| if c > 0 { counted(v) || remainder_of_given(v) } else { self.p.dom[v].0 > -INF }) {
            return true;
        }
        if depth == 0 {
            return false;
        }
        let (v0, c0) = column[0];
        // `λ*column + rest <= 0` with λ > 0: the column is at most `-rest/λ`,
        // whose parts each need a bound from the side their sign asks for.
        let through = |e: &Lin| {
            let proportional = column.iter().all(|&(v, c)| e.coef(v) * c0 == e.coef(v0) * c) && e.coef(v0) * c0 > 0;
            let rest = || e.terms.iter().filter(|t| column.iter().all(|u| u.0 != t.0) && !given(t.0));
            proportional
                && rest().all(|&(w, cw)| cw < 0 || self.p.dom[w].0 > -INF)
                && self.stated_bound(rest().filter(|t| t.1 < 0).map(|&(w, cw)| (w, -cw)).collect(), given, depth - 1)
        };
        self.p.les.iter().any(through) || (column.len() > 1 && column.iter().all(|&t| self.stated_bound(smallvec::smallvec![t], given, depth - 1)))
    }

    /// The host's values (kernel parameters, uniform loads) a variable is
    /// computed from, or None when it also depends on anything else (a
    /// thread's id, a template value no instantiation fixes).
    fn host_leaves(&self, v: Var) -> Option<Vec<Value>> {
        let leaves: Option<Vec<Value>> = self
            .host_inputs(v)?
            .into_iter()
            .map(|key| match key {
                Key::Leaf(_, value) => Some(*value),
                // A template or pipeline value is the file's open question, not the host's data.
                Key::ConstCell(lockstep_ir::Root::Global(g), _) if self.q.k.open_values.contains(g) => None,
                Key::ConstCell(..) => self.cell_loads.iter().find(|(k, _)| k == key).map(|&(_, load)| load),
                _ => None,
            })
            .collect();
        leaves.filter(|l| !l.is_empty())
    }

    /// The witness a report shows: one whose rows of host strides agree
    /// when there is one, else one marked as needing them to overlap; with
    /// typical template values where the race allows them.
    fn reported_witness(&self, values: &[Option<i128>], addr: &[Lin; 2], exact: bool) -> Witness {
        // An unproven witness stays one: rows apart add no doubt to it.
        let strided = if exact { self.strided_rows(values, addr) } else { None };
        let Some((pairs, insts, offsets)) = strided else { return self.typical_open_witness(&self.p, values, addr, exact) };
        let mut same_rows = self.p.clone();
        for (a, b) in &pairs {
            same_rows.equal(a, b);
        }
        match same_rows.solve_proven(Budget { nodes: DEFAULT_BUDGET, until: self.q.deadline }) {
            Outcome::Feasible { values, exact } => self.typical_open_witness(&same_rows, &values, addr, exact),
            Outcome::Infeasible => {
                let mut w = self.witness(values, addr, exact);
                w.rows_apart = insts;
                w.offset_apart = offsets;
                w
            }
        }
    }

    /// When the witness takes a value the file does not fix that is not a
    /// positive multiple of [`TYPICAL_SIZE_STEP`] (a template or pipeline
    /// constant, or the group's width where nothing fixes it but it may be
    /// that wide), a witness of `p` with typical values instead, or this one
    /// marked as needing atypical values.
    fn typical_open_witness(&self, p: &Problem, values: &[Option<i128>], addr: &[Lin; 2], exact: bool) -> Witness {
        let k = self.q.k;
        let atypical_value = |var: Var| values[var].is_some_and(|x| x < TYPICAL_SIZE_STEP || x % TYPICAL_SIZE_STEP != 0);
        let atypical: Vec<(lockstep_ir::GlobalId, Var)> = self
            .keys
            .iter()
            .filter_map(|(key, &var)| match key {
                Key::ConstCell(lockstep_ir::Root::Global(g), _) if k.open_values.contains(g) => Some((*g, var)),
                _ => None,
            })
            .filter(|&(_, var)| atypical_value(var))
            .collect();
        let may_be_typical = k.max_threads as i128 >= TYPICAL_SIZE_STEP && k.axis_limits[0].is_none_or(|l| l as i128 >= TYPICAL_SIZE_STEP);
        let width = self.keys.get(&Key::BlockDim(0)).copied().filter(|&var| may_be_typical && atypical_value(var));
        // A witness that is not proven stays a possible race whatever the sizes.
        if !exact || (atypical.is_empty() && width.is_none()) {
            return self.witness(values, addr, exact);
        }
        let mut typical = p.clone();
        for var in atypical.iter().map(|a| a.1).chain(width) {
            let (lo, hi) = p.dom[var];
            let steps = typical.new_var((lo.max(1) + TYPICAL_SIZE_STEP - 1) / TYPICAL_SIZE_STEP, hi / TYPICAL_SIZE_STEP);
            typical.equal(&Lin::var(steps).scale(TYPICAL_SIZE_STEP), &Lin::var(var));
        }
        match typical.solve_proven(Budget { nodes: DEFAULT_BUDGET, until: self.q.deadline }) {
            Outcome::Feasible { values, exact } => self.witness(&values, addr, exact),
            Outcome::Infeasible => {
                let mut w = self.witness(values, addr, exact);
                w.atypical_open_values = atypical.into_iter().map(|(g, _)| g).collect();
                w.atypical_open_values.sort_unstable();
                w.atypical_open_values.dedup();
                w.atypical_group_width = width.is_some();
                w
            }
        }
    }

    fn witness(&self, values: &[Option<i128>], addr: &[Lin; 2], exact: bool) -> Witness {
        let q = self.q;
        let get = |key: Key| self.keys.get(&key).and_then(|&v| values[v]).unwrap_or(0) as i64;
        let mut threads = [[0i64; 3]; 2];
        let mut groups = [[0i64; 3]; 2];
        for s in 0..2u8 {
            for ax in 0..3u8 {
                threads[s as usize][ax as usize] = get(Key::Tid(s, ax));
                let owner = if q.mode == Mode::SameGroup { Owner::Shared } else { Owner::Side(s) };
                groups[s as usize][ax as usize] = get(Key::Gid(owner, ax));
            }
        }
        // Ids the solver left open, or that one side never uses, are free:
        // make the two groups differ.
        if q.mode == Mode::CrossGroup && groups[0] == groups[1] {
            let free = |s: u8, ax: u8| self.keys.get(&Key::Gid(Owner::Side(s), ax)).is_none_or(|&v| values[v].is_none());
            if let Some((s, ax)) = (0..3u8).flat_map(|ax| [(1u8, ax), (0, ax)]).find(|&(s, ax)| q.k.wide(q.mode, ax as usize) && free(s, ax)) {
                let other = groups[1 - s as usize][ax as usize];
                groups[s as usize][ax as usize] = other + 1;
            }
        }
        // Unconstrained components: make the two threads (groups) differ.
        match q.mode {
            Mode::SameGroup if threads[0] == threads[1] => {
                if let Some(ax) = (0..3).find(|&ax| q.k.wide(q.mode, ax) && (0..2).all(|s| !self.keys.contains_key(&Key::Tid(s, ax as u8)))) {
                    threads[0][ax] = 1;
                }
            }
            Mode::CrossGroup if groups[0] == groups[1] => {
                if let Some(ax) = (0..3).find(|&ax| q.k.wide(q.mode, ax) && (0..2).all(|s| !self.keys.contains_key(&Key::Gid(Owner::Side(s), ax as u8)))) {
                    groups[0][ax] = 1;
                }
            }
            _ => {}
        }
        let cell = addr[0].terms.iter().try_fold(addr[0].k, |acc, &(v, c)| values[v].map(|x| acc + c * x)).map(|c| c as i64);
        // The values chosen for what the host decides: constants the file
        // leaves open, and the kernel's scalar parameters.
        let mut open_values: Vec<(lockstep_ir::GlobalId, i64)> = Vec::new();
        let mut param_values: Vec<(u32, i64)> = Vec::new();
        for (key, &var) in &self.keys {
            let Some(x) = values[var] else { continue };
            match *key {
                Key::ConstCell(lockstep_ir::Root::Global(g), _) if q.k.open_values.contains(&g) => open_values.push((g, x as i64)),
                Key::Leaf(Owner::Shared, v) => {
                    if let Op::Param(i) = q.k.f.inst(v).op {
                        if q.k.f.params.get(i as usize).is_some_and(|p| p.ty.is_int()) {
                            param_values.push((i, x as i64));
                        }
                    }
                }
                _ => {}
            }
        }
        open_values.sort_unstable();
        open_values.dedup_by_key(|x| x.0);
        param_values.sort_unstable();
        param_values.dedup_by_key(|x| x.0);
        let open_group_size = std::array::from_fn(|ax| self.keys.get(&Key::BlockDim(ax as u8)).and_then(|&v| values[v]).map(|x| x as i64));
        Witness {
            threads,
            groups: (q.mode == Mode::CrossGroup).then_some(groups),
            cell,
            exact,
            open_values,
            param_values,
            open_group_size,
            atypical_open_values: Vec::new(),
            atypical_group_width: false,
            rows_apart: Vec::new(),
            offset_apart: Vec::new(),
            wave_width: q.waves.width(),
            every_width: false,
        }
    }
}

/// How many times the body of a [`CountedLoop`] runs when its step is a
/// constant too; None otherwise (or beyond 64).
fn trip_count(f: &Function, cfg: &Cfg, l: usize) -> Option<i128> {
    let lp = &cfg.loops[l];
    let counted = CountedLoop::of(f, cfg, l)?;
    let Op::Phi(incoming) = &f.inst(counted.phi).op else { return None };
    let mut updates = incoming.iter().filter(|i| lp.blocks.binary_search(&i.0).is_ok()).map(|i| i.1);
    let update = updates.next()?;
    if !updates.all(|u| u == update) {
        return None;
    }
    let Op::Binary(step, a, b) = &f.inst(update).op else { return None };
    let c = match (*a == counted.phi, f.as_int(*b)) {
        (true, Some(c)) => c as i128,
        _ => return None,
    };
    let mut value = counted.start;
    for trips in 0..=64 {
        if !counted.stays_at(value)? {
            return Some(trips);
        }
        value = match step {
            BinOp::Add => value + c,
            BinOp::Sub => value - c,
            BinOp::Mul => value * c,
            BinOp::Shl if (0..32).contains(&c) => value << c,
            BinOp::Shr if (0..32).contains(&c) => value >> c,
            BinOp::Div if c > 0 => value / c,
            _ => return None,
        };
        // Beyond 32 bits the program would wrap around: not simulated.
        if !(i32::MIN as i128..=u32::MAX as i128).contains(&value) {
            return None;
        }
    }
    None
}

/// Whether `x` has the same value in every iteration of `lp`: defined
/// outside it, or pure arithmetic on such values and launch constants.
/// The summands of a sum, through integer conversions.
fn flatten_sum(f: &Function, v: Value, out: &mut Vec<Value>, depth: u32) {
    match &f.inst(v).op {
        Op::Binary(BinOp::Add, a, b) if depth < 16 => {
            flatten_sum(f, *a, out, depth + 1);
            flatten_sum(f, *b, out, depth + 1);
        }
        Op::Convert(x) if depth < 16 && f.inst(v).ty.is_int() && f.inst(*x).ty.is_int() => flatten_sum(f, *x, out, depth + 1),
        _ => out.push(v),
    }
}

/// Whether a value is fixed for the whole launch: computed from constants,
/// parameters, constant memory and the launch's sizes alone.
pub(crate) fn launch_input(f: &Function, v: Value, depth: u32) -> bool {
    if depth > 12 {
        return false;
    }
    match &f.inst(v).op {
        Op::Const(_) | Op::Param(_) => true,
        Op::Builtin(b) => matches!(b, Builtin::GroupSize(_) | Builtin::NumGroups(_)),
        Op::Load(m) => m.space == lockstep_ir::MemSpace::Constant && launch_input(f, m.index, depth + 1),
        Op::Convert(a) | Op::Unary(_, a) => launch_input(f, *a, depth + 1),
        Op::Binary(_, a, b) | Op::Cmp(_, a, b) => launch_input(f, *a, depth + 1) && launch_input(f, *b, depth + 1),
        Op::Select(c, a, b) => launch_input(f, *c, depth + 1) && launch_input(f, *a, depth + 1) && launch_input(f, *b, depth + 1),
        _ => false,
    }
}

/// When a value is computed from the thread's ids within its group and
/// constants alone (and uses at least one id): the axes it uses.
fn only_local_ids(f: &Function, v: Value) -> Option<[bool; 3]> {
    fn walk(f: &Function, v: Value, depth: u32, axes: &mut [bool; 3]) -> bool {
        if depth > 12 {
            return false;
        }
        match &f.inst(v).op {
            Op::Builtin(Builtin::LocalId(ax)) => {
                axes[*ax as usize % 3] = true;
                true
            }
            Op::Builtin(Builtin::LocalIndex) => {
                *axes = [true; 3];
                true
            }
            Op::Const(_) => true,
            Op::Convert(a) | Op::Unary(_, a) => walk(f, *a, depth + 1, axes),
            Op::Binary(_, a, b) => walk(f, *a, depth + 1, axes) && walk(f, *b, depth + 1, axes),
            _ => false,
        }
    }
    let mut axes = [false; 3];
    (walk(f, v, 0, &mut axes) && axes.iter().any(|&a| a)).then_some(axes)
}

fn invariant_in(f: &Function, inst_block: &[Option<BlockId>], lp: &lockstep_analysis::cfg::Loop, x: Value, depth: u32) -> bool {
    if inst_block[x.index()].is_none_or(|b| lp.blocks.binary_search(&b).is_err()) {
        return true;
    }
    if depth > 8 {
        return false;
    }
    match &f.inst(x).op {
        Op::Const(_) | Op::Param(_) => true,
        Op::Builtin(b) => !matches!(b, Builtin::LaneId),
        // Constant memory is never written while a kernel runs.
        Op::Load(m) if m.space == lockstep_ir::MemSpace::Constant => invariant_in(f, inst_block, lp, m.index, depth + 1),
        Op::Unary(_, a) | Op::Convert(a) => invariant_in(f, inst_block, lp, *a, depth + 1),
        Op::Binary(_, a, b) => invariant_in(f, inst_block, lp, *a, depth + 1) && invariant_in(f, inst_block, lp, *b, depth + 1),
        _ => false,
    }
}

fn negate(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Eq => CmpOp::Ne,
        CmpOp::Ne => CmpOp::Eq,
        CmpOp::Lt => CmpOp::Ge,
        CmpOp::Le => CmpOp::Gt,
        CmpOp::Gt => CmpOp::Le,
        CmpOp::Ge => CmpOp::Lt,
    }
}


/// How a loop-header phi changes per iteration.
enum Step {
    Linear(Value, i128),
    Pow(FnOp),
    /// `x ^= c`: the value alternates between two (double buffers).
    Toggle(i128),
    /// `x = c - x`: alternates too.
    Reflect(Value),
}

/// A loop-header phi's first value and step, where the solver follows it.
fn recurrence(k: &Kernel, v: Value, l: usize, incoming: &[(BlockId, Value)]) -> Option<(Value, Step)> {
    let f = k.f;
    let lp = &k.cfg.loops[l];
    let (mut init, mut update) = (None, None);
    for &(pred, val) in incoming {
        let slot = if lp.blocks.binary_search(&pred).is_ok() { &mut update } else { &mut init };
        match *slot {
            None => *slot = Some(val),
            Some(x) if x == val => {}
            Some(_) => return None,
        }
    }
    let (init, update) = (init?, update?);
    // Integer conversions do not change the recurrence (wrap-around aside).
    let strip = |mut x: Value| {
        while let Op::Convert(y) = &f.inst(x).op {
            if !(f.inst(x).ty.is_int() && f.inst(*y).ty.is_int()) {
                break;
            }
            x = *y;
        }
        x
    };
    let update = strip(update);
    let is_v = |x: Value| strip(x) == v;
    let invariant = |x: Value| invariant_in(f, &k.inst_block, lp, x, 0);
    let step = match &f.inst(update).op {
        Op::Binary(BinOp::Add, a, b) if is_v(*a) && invariant(*b) => Step::Linear(*b, 1),
        Op::Binary(BinOp::Add, a, b) if is_v(*b) && invariant(*a) => Step::Linear(*a, 1),
        Op::Binary(BinOp::Sub, a, b) if is_v(*a) && invariant(*b) => Step::Linear(*b, -1),
        Op::Binary(BinOp::Sub, a, b) if is_v(*b) && invariant(*a) => Step::Reflect(*a),
        Op::Binary(op @ (BinOp::Mul | BinOp::Shl | BinOp::Div | BinOp::Shr), a, b) if is_v(*a) => {
            let c = f.as_int(*b)?;
            let m = match op {
                BinOp::Mul | BinOp::Div if c > 1 => c,
                BinOp::Shl | BinOp::Shr if (1..32).contains(&c) => 1 << c,
                _ => return None,
            };
            Step::Pow(if matches!(op, BinOp::Mul | BinOp::Shl) { FnOp::MulPow(m) } else { FnOp::DivPow(m) })
        }
        Op::Binary(BinOp::Xor, a, b) if is_v(*a) || is_v(*b) => {
            let c = f.as_int(if is_v(*a) { *b } else { *a })?;
            if c <= 0 {
                return None;
            }
            Step::Toggle(c as i128)
        }
        _ => return None,
    };
    Some((init, step))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_lower::{compile, Lang, Options};
    use lockstep_source::SourceDb;

    /// The trip counts of the entry's loops, in loop order.
    fn trip_counts(body: &str) -> Vec<Option<i128>> {
        let src = format!("cbuffer C : register(b0) {{ uint N; }};\nRWStructuredBuffer<uint> Out : register(u0);\n[numthreads(64, 1, 1)]\nvoid main(uint gi : SV_GroupIndex) {{\n{body}\n}}\n");
        let mut db = SourceDb::new();
        let file = db.add_bytes(std::path::Path::new("k.hlsl"), src.as_bytes());
        let m = compile(&mut db, file, Lang::Hlsl, &Options::default()).module;
        let f = &m.functions[m.entries().next().expect("an entry").index()];
        let cfg = Cfg::new(f);
        (0..cfg.loops.len()).map(|l| trip_count(f, &cfg, l)).collect()
    }

    #[test]
    fn constant_loops_have_trip_counts() {
        assert_eq!(trip_counts("for (uint s = 64; s > 0; s >>= 1) Out[gi] += s;"), [Some(7)]);
        assert_eq!(trip_counts("for (uint i = 0; i < 10; i += 3) Out[gi] += i;"), [Some(4)]);
        assert_eq!(trip_counts("for (uint i = 5; i < 5; i++) Out[gi] += i;"), [Some(0)]);
    }

    #[test]
    fn launch_dependent_or_broken_loops_have_none() {
        assert_eq!(trip_counts("for (uint i = 0; i < N; i++) Out[gi] += i;"), [None]);
        assert_eq!(trip_counts("for (uint i = 0; i < 8; i++) { if (Out[i] == 0) break; Out[gi] += i; }"), [None]);
        // A count beyond what the simulation follows.
        assert_eq!(trip_counts("for (uint i = 0; i < 100000; i++) Out[gi] += i;"), [None]);
    }
}
