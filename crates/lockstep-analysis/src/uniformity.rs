//! Uniformity analysis in the manner of LLVM's UniformityAnalysis.
//!
//! Every value gets the widest scope over which it is the same for all
//! threads: thread < wave < group < grid. Divergence starts at sources
//! (thread ids, atomics, per-lane wave operations), flows along def-use
//! edges, into phis at the joins of divergent branches (sync dependence), and
//! out of loops that threads leave at different iterations (temporal
//! divergence). Each lowered value records why, so checks can explain it.

use crate::cfg::{BranchJoins, Cfg, Join};
use std::collections::HashSet;
use lockstep_ir::{BinOp, BlockId, Builtin, EntryInfo, Function, MemSpace, Op, Root, Type, Value, WaveOp};

/// How widely a value is shared; ordered from narrowest to widest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// May differ between any two threads.
    Thread,
    /// The same across a wave / warp.
    Wave,
    /// The same across the thread group.
    Group,
    /// The same for the whole dispatch.
    Grid,
}

impl Level {
    pub fn describe(self) -> &'static str {
        match self {
            Level::Thread => "differs between threads",
            Level::Wave => "is uniform only within a wave",
            Level::Group => "is uniform across the group",
            Level::Grid => "is uniform across the dispatch",
        }
    }
}

/// Why a value is less uniform than the whole dispatch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// Uniform everywhere.
    Uniform,
    /// A thread-identity builtin.
    Builtin(Builtin),
    /// An atomic returns a different old value to each thread.
    Atomic,
    /// A wave operation: uniform only per wave, or different per lane.
    Wave(WaveOp),
    /// Loaded at an index (or through a pointer) that is not uniform.
    LoadIndex(Value),
    /// Loaded from memory that is only uniform within a group.
    LoadMemory,
    /// Computed from this operand.
    Operand(Value),
    /// A phi joining paths of a branch on this block whose condition is not uniform.
    SyncDependence(BlockId),
    /// Leaves a loop (by its header) that threads exit at different iterations.
    TemporalDivergence(BlockId),
    /// A lane-linear value divided down to one value per wave.
    WaveAligned(Value),
}

/// See [`Uniformity::affine`]: thread-dependent terms (sorted, non-zero
/// coefficients) and the level of the rest.
struct Affine {
    divergent: Vec<(Leaf, i64)>,
    uniform: Level,
}

/// A thread-dependent term: a builtin (every read of `threadIdx.x` is the
/// same value, though the front end emits one instruction per read) or any
/// other value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Leaf {
    Builtin(Builtin),
    Value(Value),
}

impl Affine {
    fn plus(mut self, o: &Affine, sign: i64) -> Affine {
        for &(v, c) in &o.divergent {
            match self.divergent.binary_search_by_key(&v, |t| t.0) {
                Ok(i) => self.divergent[i].1 += sign * c,
                Err(i) => self.divergent.insert(i, (v, sign * c)),
            }
        }
        self.divergent.retain(|t| t.1 != 0);
        self.uniform = self.uniform.min(o.uniform);
        self
    }

    fn scaled(mut self, k: i64) -> Affine {
        self.divergent.iter_mut().for_each(|t| t.1 *= k);
        self.divergent.retain(|t| t.1 != 0);
        self
    }
}

pub struct Uniformity {
    levels: Vec<Level>,
    /// The block each instruction is placed in.
    inst_block: Vec<Option<BlockId>>,
    reasons: Vec<Reason>,
    /// Per block: the narrowest level of the branches it is (transitively) control dependent on.
    block_levels: Vec<Level>,
    /// Per block: the level of its branch condition, at the branch.
    branch_levels: Vec<Level>,
    /// Threads per wave assumed for wave-alignment reasoning.
    pub wave_size: u32,
    /// Per value: the loop after which it holds a whole wave's butterfly
    /// reduction (see [`butterfly_reductions`]).
    butterfly: Vec<Option<usize>>,
    /// Judging by the language's own rules (see [`Uniformity::by_language_rules`]).
    language_rules: bool,
    /// Taking the group's likely extents (see [`Uniformity::assuming_axis_limits`]) as facts.
    likely_extents: bool,
    /// Every wave of the group is whole (its thread count is a multiple of
    /// the fixed wave width): lanes of one number exist in every wave.
    whole_waves: bool,
    /// The group is no wider than the fixed wave width: it is one wave, so
    /// what is uniform within a wave is uniform within the group.
    one_wave: bool,
    /// Per value: the same in every thread of the group that has the same
    /// lane (the lane, group-uniform values, memory read at such indices).
    /// A reduction over whole waves of such a value is group-uniform.
    lane_fixed: Vec<bool>,
    /// Per phi: it joins the paths of a branch whose condition differs
    /// between lanes of one number.
    lane_joins: Vec<bool>,
    /// Per block that exits a loop: the branches inside that loop it is
    /// control dependent on.
    exit_deps: Vec<Vec<BlockId>>,
}

impl Uniformity {
    /// The level of a value where it is defined.
    pub fn level(&self, v: Value) -> Level {
        self.levels[v.index()]
    }

    /// The level of a value as seen from `at`: lower than [`Self::level`] when
    /// the value leaves a loop that threads exit at different iterations.
    pub fn level_at(&self, cfg: &Cfg, v: Value, at: BlockId) -> Level {
        self.operand(cfg, v, at, &self.inst_block).0
    }

    pub fn reason(&self, v: Value) -> Reason {
        self.reasons[v.index()]
    }

    /// A group vote `cond` takes part in, which a level per value cannot
    /// judge: every value that makes `cond` differ between threads is also
    /// what a wave collective stored into group memory combined, and `cond`
    /// reads that memory back (`all = subgroupAll(m <= x); if (lane == 0)
    /// votes[wave] = all; barrier(); for (s …) m = max(m, votes[s]); if (m
    /// <= x) …`): the threads may agree by construction. Returns the load of
    /// that memory and the collective; None when some cause of divergence
    /// has nothing to do with such a vote.
    pub fn vote_through_memory(&self, f: &Function, cfg: &Cfg, cond: Value) -> Option<(Value, Value)> {
        if !f.insts.iter().any(|i| matches!(&i.op, Op::Wave(w, _) if w.is_wave_uniform())) {
            return None;
        }
        let own = self.divergence_sources(f, cfg, cond);
        if own.is_empty() {
            return None;
        }
        let read = ssa_closure(f, cond);
        let votes = read.iter().filter_map(|&v| match &f.inst(v).op {
            Op::Load(m) if m.space == MemSpace::Shared && matches!(m.root, Root::Global(_)) => Some((v, m.root)),
            _ => None,
        });
        for (load, root) in votes {
            let stored = f.insts.iter().filter_map(|i| match &i.op {
                Op::Store(m, x) if m.root == root => Some(*x),
                _ => None,
            });
            for x in stored {
                for w in ssa_closure(f, x) {
                    let Op::Wave(op, args) = &f.inst(w).op else { continue };
                    if !op.is_wave_uniform() {
                        continue;
                    }
                    let voted: HashSet<Value> = args.iter().flat_map(|&a| self.divergence_sources(f, cfg, a)).collect();
                    if own.is_subset(&voted) {
                        return Some((load, w));
                    }
                }
            }
        }
        None
    }

    /// The values a value's divergence comes from: thread ids, loads,
    /// atomics, wave results, values leaving a loop threads leave at
    /// different times, through the operands and branch conditions that make
    /// it less than group-uniform.
    fn divergence_sources(&self, f: &Function, cfg: &Cfg, v: Value) -> HashSet<Value> {
        let mut sources = HashSet::new();
        let mut seen = HashSet::new();
        let mut stack = vec![v];
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            if seen.len() > 4096 {
                sources.insert(v);
                break;
            }
            let mut divergent_operands = Vec::new();
            if let Some(at) = self.inst_block[x.index()] {
                f.inst(x).op.for_each_operand(|o| {
                    if self.operand(cfg, o, at, &self.inst_block).0 < Level::Group {
                        divergent_operands.push(o);
                    }
                });
            }
            match self.reasons[x.index()] {
                Reason::Uniform => {}
                Reason::Operand(_) | Reason::SyncDependence(_) => {
                    for o in divergent_operands {
                        // Uniform where it is defined, divergent where used: it leaves a loop.
                        if self.levels[o.index()] >= Level::Group {
                            sources.insert(o);
                        } else {
                            stack.push(o);
                        }
                    }
                    if let Reason::SyncDependence(b) = self.reasons[x.index()] {
                        stack.extend(f.block(b).term.condition());
                    }
                }
                _ => {
                    sources.insert(x);
                }
            }
        }
        sources
    }

    /// How uniformly a block is reached: the narrowest condition it depends on.
    pub fn block_level(&self, b: BlockId) -> Level {
        self.block_levels[b.index()]
    }

    /// The level of a branch block's condition (Grid for non-branches).
    pub fn branch_level(&self, b: BlockId) -> Level {
        self.branch_levels[b.index()]
    }

    fn condition_level(&self, f: &Function, cfg: &Cfg, b: BlockId) -> Level {
        // A branch to where no thread may go (`__builtin_assume`) sends every
        // thread the other way.
        if f.block(b).term.successors().into_iter().any(|s| f.never_entered(s)) {
            return Level::Grid;
        }
        f.block(b).term.condition().map(|c| self.level_at(cfg, c, b)).unwrap_or(Level::Grid)
    }

    pub fn analyze(f: &Function, cfg: &Cfg) -> Uniformity {
        Self::analyze_with(f, cfg, false, false)
    }

    /// Uniformity when the group is as narrow as the kernel's own accesses
    /// suggest (`EntryInfo::axis_limits`), and made of whole waves when its
    /// size is unknown: for reports only, never for removing a barrier.
    /// None when that changes nothing (no axis is likely one thread wide
    /// without being known to be, and no wave operation).
    pub fn assuming_axis_limits(f: &Function, cfg: &Cfg) -> Option<Uniformity> {
        let e = f.entry.as_ref()?;
        let narrower = (0..3).any(|ax| e.axis_limits[ax] == Some(1) && e.threads_along(ax) != Some(1));
        let wave_reductions = e.group_size.is_none() && f.insts.iter().any(|i| matches!(i.op, Op::Wave(..)));
        (narrower || wave_reductions).then(|| Self::analyze_with(f, cfg, false, true))
    }

    /// Uniformity as a language with syntactic uniformity rules (WGSL) judges
    /// it: thread ids are never uniform, memory the group or other groups may
    /// write is not uniform once read (except a load between two group
    /// barriers at a uniform address, which is how `workgroupUniformLoad`
    /// lowers), and no reasoning about launch shapes, lanes or cancelling
    /// thread ids is used.
    pub fn by_language_rules(f: &Function, cfg: &Cfg) -> Uniformity {
        Self::analyze_with(f, cfg, true, false)
    }

    fn analyze_with(f: &Function, cfg: &Cfg, language_rules: bool, likely_extents: bool) -> Uniformity {
        let wave_size = f.entry.as_ref().and_then(|e| e.wave_size).unwrap_or(32);
        let n = f.insts.len();
        let whole_waves = !language_rules
            && f.entry.as_ref().is_some_and(|e| {
                let threads = (0..3).try_fold(1u64, |acc, ax| e.threads_along(ax).map(|t| acc * t as u64));
                e.wave_size.is_some_and(|w| match threads {
                    Some(t) => t % w as u64 == 0,
                    None => likely_extents && e.group_size.is_none(),
                })
            });
        let one_wave = !language_rules
            && f.entry.as_ref().is_some_and(|e| {
                let threads = (0..3).try_fold(1u64, |acc, ax| e.threads_along(ax).map(|t| acc * t as u64));
                let bound = match (threads, e.max_threads) {
                    (Some(t), Some(m)) => Some(t.min(m as u64)),
                    (t, m) => t.or(m.map(u64::from)),
                };
                e.wave_size.zip(bound).is_some_and(|(w, t)| t <= w as u64)
            });
        let mut u = Uniformity {
            levels: vec![Level::Grid; n],
            inst_block: f.inst_blocks(),
            branch_levels: vec![Level::Grid; f.blocks.len()],
            reasons: vec![Reason::Uniform; n],
            block_levels: vec![Level::Grid; f.blocks.len()],
            wave_size,
            butterfly: if language_rules { vec![None; n] } else { butterfly_reductions(f, cfg) },
            language_rules,
            likely_extents,
            whole_waves,
            one_wave,
            lane_fixed: vec![whole_waves; n],
            lane_joins: vec![false; n],
            exit_deps: loop_exit_dependences(f, cfg),
        };
        let inst_block = u.inst_block.clone();
        let forwarded = forwarded_stores(f, cfg);
        // The uniformity of values stored to each private array (flow-insensitive).
        let mut local_levels: Vec<(Level, Option<Value>)> = vec![(Level::Grid, None); f.locals.len()];
        let mut control_deps: Vec<Option<Vec<BlockId>>> = vec![None; f.blocks.len()];
        // Join blocks depend only on the CFG: compute each branch's once.
        let mut joins: Vec<Option<BranchJoins>> = (0..f.blocks.len()).map(|_| None).collect();
        // Iterate to a fixed point: levels only go down and the lattice is finite.
        let mut changed = true;
        let mut rounds = 0;
        while changed && rounds < 10_000 {
            changed = false;
            rounds += 1;
            for b in f.block_ids() {
                if !cfg.is_reachable(b) {
                    continue;
                }
                for &v in &f.block(b).insts {
                    let (mut level, mut reason) = match forwarded[v.index()] {
                        // The value the last store left in that element.
                        Some(stored) => u.operand(cfg, stored, b, &inst_block),
                        None => u.transfer(f, cfg, v, b, &inst_block, &local_levels),
                    };
                    level = u.in_group(level);
                    if let Op::Store(m, x) = &f.inst(v).op {
                        if let Root::Local(l) = m.root {
                            // The least uniform of the value, the index, and
                            // the branches that decide whether the store runs:
                            // one only some threads run leaves the array
                            // different between threads, whatever it stores.
                            let deps = control_deps[b.index()].get_or_insert_with(|| cfg.control_deps_transitive(b));
                            let branches = deps.iter().filter_map(|d| f.block(*d).term.condition().map(|c| (u.branch_levels[d.index()], c)));
                            let candidates = [(u.operand(cfg, *x, b, &inst_block).0, *x), (u.operand(cfg, m.index, b, &inst_block).0, m.index)];
                            let (least, cause) = candidates.into_iter().chain(branches).fold((Level::Grid, *x), |a, c| if c.0 < a.0 { c } else { a });
                            let entry = &mut local_levels[l.index()];
                            if least < entry.0 {
                                *entry = (least, Some(cause));
                                changed = true;
                            }
                        }
                        level = Level::Grid;
                        reason = Reason::Uniform;
                    }
                    if level < u.levels[v.index()] {
                        u.levels[v.index()] = level;
                        u.reasons[v.index()] = reason;
                        changed = true;
                    }
                    if u.lane_fixed[v.index()] && u.levels[v.index()] < Level::Group && !u.lane_fixed_now(f, cfg, v, b, &inst_block) {
                        u.lane_fixed[v.index()] = false;
                        changed = true;
                    }
                }
                // Sync dependence: phis at joins of a non-uniform branch.
                let cond_level = u.condition_level(f, cfg, b);
                u.branch_levels[b.index()] = cond_level;
                if cond_level < Level::Grid && cfg.succs[b.index()].len() > 1 {
                    let branch_joins = joins[b.index()].get_or_insert_with(|| cfg.joins(b));
                    changed |= u.mark_joins(f, branch_joins, b, cond_level);
                    if !u.lane_fixed_branch(f, b) {
                        changed |= u.mark_lane_joins(f, branch_joins, b);
                    }
                }
            }
        }
        for b in f.block_ids() {
            let mut level = Level::Grid;
            for dep in cfg.control_deps_transitive(b) {
                level = level.min(u.branch_level(dep));
            }
            u.block_levels[b.index()] = level;
        }
        u
    }

    /// Level of an operand as seen from `use_block`, including temporal divergence.
    fn operand(&self, cfg: &Cfg, o: Value, use_block: BlockId, inst_block: &[Option<BlockId>]) -> (Level, Reason) {
        let mut level = self.levels[o.index()];
        let mut reason = Reason::Operand(o);
        if let Some(def_block) = inst_block[o.index()] {
            for &li in &cfg.loops_of[def_block.index()] {
                let l = &cfg.loops[li];
                if l.blocks.binary_search(&use_block).is_ok() {
                    continue;
                }
                for &e in &l.exiting {
                    // An exit some threads reach only through a branch in
                    // the loop is as divergent as that branch.
                    let exit_level = self.exit_deps[e.index()].iter().map(|d| self.branch_levels[d.index()]).fold(self.branch_levels[e.index()], Level::min);
                    if exit_level < level {
                        level = exit_level;
                        reason = Reason::TemporalDivergence(l.header);
                    }
                }
            }
        }
        if let Some(li) = self.butterfly[o.index()] {
            if level < Level::Wave && cfg.loops[li].blocks.binary_search(&use_block).is_err() {
                level = Level::Wave;
                reason = Reason::Wave(WaveOp::ShuffleXor);
            }
        }
        (self.in_group(level), reason)
    }

    /// A level as the group sees it: in a group of one wave, uniform within
    /// the wave is uniform within the group.
    fn in_group(&self, level: Level) -> Level {
        if self.one_wave && level == Level::Wave {
            Level::Group
        } else {
            level
        }
    }

    fn transfer(
        &self,
        f: &Function,
        cfg: &Cfg,
        v: Value,
        b: BlockId,
        inst_block: &[Option<BlockId>],
        local_levels: &[(Level, Option<Value>)],
    ) -> (Level, Reason) {
        let inst = f.inst(v);
        let min_operands = |skip: Option<Value>| -> (Level, Reason) {
            let mut best = (Level::Grid, Reason::Uniform);
            inst.op.for_each_operand(|o| {
                if Some(o) == skip {
                    return;
                }
                let x = self.operand(cfg, o, b, inst_block);
                if x.0 < best.0 {
                    best = x;
                }
            });
            best
        };
        match &inst.op {
            Op::Param(_) | Op::Const(_) | Op::Undef => (Level::Grid, Reason::Uniform),
            Op::Builtin(bi) if self.language_rules => (builtin_level(*bi, None, false), Reason::Builtin(*bi)),
            Op::Builtin(bi) => (builtin_level(*bi, f.entry.as_ref(), self.likely_extents), Reason::Builtin(*bi)),
            Op::Atomic(..) => (Level::Thread, Reason::Atomic),
            Op::Barrier(_, Some(_)) => (Level::Group, Reason::Uniform),
            Op::Barrier(_, None) => (Level::Grid, Reason::Uniform),
            Op::Wave(w, _) => {
                let args = min_operands(None);
                if w.is_wave_uniform() {
                    if args.0 >= Level::Wave {
                        args
                    } else if self.whole_waves && self.operands_lane_fixed(f, cfg, v, b, inst_block) && self.same_lanes_in_every_wave(f, cfg, b) {
                        // Every wave combines the same values, lane by lane.
                        (Level::Group, Reason::Uniform)
                    } else {
                        (Level::Wave, Reason::Wave(*w))
                    }
                } else {
                    (Level::Thread, Reason::Wave(*w))
                }
            }
            Op::Load(m) => {
                let args = min_operands(None);
                let cap = match (m.space, m.root) {
                    (_, Root::Local(l)) => local_levels[l.index()].0,
                    (MemSpace::Constant, _) => Level::Grid,
                    (MemSpace::Private, _) => Level::Thread,
                    _ if self.language_rules && !between_group_barriers(f, b, v) => Level::Thread,
                    _ => Level::Group,
                };
                if args.0 < cap {
                    let idx_reason = match args.1 {
                        Reason::Operand(o) => Reason::LoadIndex(o),
                        r => r,
                    };
                    (args.0, idx_reason)
                } else if cap < Level::Grid {
                    let reason = match (m.root, local_levels.get(root_local(m.root).unwrap_or(usize::MAX))) {
                        (Root::Local(_), Some((_, Some(stored)))) => Reason::Operand(*stored),
                        _ => Reason::LoadMemory,
                    };
                    (cap, reason)
                } else {
                    (Level::Grid, Reason::Uniform)
                }
            }
            Op::Call(..) => {
                let args = min_operands(None);
                if args.0 < Level::Group {
                    args
                } else {
                    (Level::Group, Reason::LoadMemory)
                }
            }
            Op::Cmp(_, x, y) => {
                let args = min_operands(None);
                if args.0 < Level::Group && !self.language_rules {
                    // `t < bound + tid` with `t` starting at `start + tid`: the
                    // thread-dependent parts cancel and every thread compares
                    // the same difference.
                    // Unsigned differences wrap around for some threads only
                    // (`tid - 7 < tid + 8` fails for tid < 7, `(0 - p) + tid
                    // < tid` for tid >= p): there only sums cancel (launch
                    // values are taken to stay below 2^31).
                    let wraps = !f.inst(*x).ty.is_signed() && (subtracts(f, *x) || subtracts(f, *y));
                    if let (false, Some(a), Some(c)) = (wraps, self.affine(f, cfg, *x, b, inst_block, 0), self.affine(f, cfg, *y, b, inst_block, 0)) {
                        if a.divergent == c.divergent {
                            return (a.uniform.min(c.uniform), Reason::Uniform);
                        }
                    }
                }
                args
            }
            Op::Binary(op @ (BinOp::Div | BinOp::ExactDiv | BinOp::Shr | BinOp::And), x, y) => {
                let args = min_operands(None);
                if args.0 < Level::Wave && !self.language_rules && self.wave_aligned(f, *op, *x, *y) {
                    let rest = min_operands(Some(*x));
                    if rest.0 >= Level::Wave {
                        return (Level::Wave, Reason::WaveAligned(*x));
                    }
                }
                args
            }
            _ => min_operands(None),
        }
    }

    /// An integer value as a sum of thread-dependent terms with constant
    /// coefficients plus a part that is uniform at `uniform`, through
    /// additions, subtractions, scaling by constants, integer conversions and
    /// loop counters that step by a uniform amount. None when a term cannot
    /// be split so.
    fn affine(&self, f: &Function, cfg: &Cfg, v: Value, at: BlockId, inst_block: &[Option<BlockId>], depth: u32) -> Option<Affine> {
        let level = self.operand(cfg, v, at, inst_block).0;
        if level >= Level::Group {
            return Some(Affine { divergent: Vec::new(), uniform: level });
        }
        if depth > 12 || !f.inst(v).ty.is_int() {
            return None;
        }
        let sub = |x: Value| self.affine(f, cfg, x, at, inst_block, depth + 1);
        let term = match f.inst(v).op {
            Op::Builtin(bi) => Leaf::Builtin(bi),
            _ => Leaf::Value(v),
        };
        let leaf = Affine { divergent: vec![(term, 1)], uniform: Level::Grid };
        Some(match &f.inst(v).op {
            Op::Binary(BinOp::Add, x, y) => sub(*x)?.plus(&sub(*y)?, 1),
            Op::Binary(BinOp::Sub, x, y) => sub(*x)?.plus(&sub(*y)?, -1),
            Op::Binary(BinOp::Mul, x, y) => match (f.as_int(*x), f.as_int(*y)) {
                (Some(k), _) => sub(*y)?.scaled(k),
                (_, Some(k)) => sub(*x)?.scaled(k),
                _ => leaf,
            },
            Op::Convert(x) if f.inst(*x).ty.is_int() => sub(*x)?,
            Op::Phi(incoming) => {
                // A loop counter `phi(start, phi + step)` with a uniform step
                // is its start plus a count all threads share while none has left.
                let header = inst_block[v.index()]?;
                let lp = cfg.loops.iter().find(|l| l.header == header)?;
                let inside = |blk: &BlockId| lp.blocks.binary_search(blk).is_ok();
                let (starts, updates): (Vec<_>, Vec<_>) = incoming.iter().partition(|(from, _)| !inside(from));
                let [(_, start)] = starts[..] else { return Some(leaf) };
                let mut step_level = Level::Grid;
                for (_, u) in updates {
                    let step = match &f.inst(u).op {
                        Op::Binary(BinOp::Add, a, s) if *a == v => *s,
                        Op::Binary(BinOp::Add, s, a) if *a == v => *s,
                        _ => return Some(leaf),
                    };
                    let l = self.levels[step.index()];
                    if l < Level::Group {
                        return Some(leaf);
                    }
                    step_level = step_level.min(l);
                }
                let mut a = sub(start)?;
                a.uniform = a.uniform.min(step_level);
                a
            }
            _ => leaf,
        })
    }

    /// `lane_linear / k`, `>> s` or `& ~mask` where whole waves map to one
    /// value, or `lane_linear / wave_size` (the wave's index) at any width.
    fn wave_aligned(&self, f: &Function, op: BinOp, x: Value, y: Value) -> bool {
        if !lane_linear(f, x, self.wave_size) {
            return false;
        }
        if matches!(op, BinOp::Div | BinOp::ExactDiv) && matches!(f.inst(y).op, Op::Builtin(Builtin::WaveSize)) {
            return true;
        }
        let Some(k) = f.as_int(y) else { return false };
        let w = self.wave_size as i64;
        match op {
            BinOp::Div | BinOp::ExactDiv => k > 0 && k % w == 0,
            BinOp::Shr => (0..63).contains(&k) && (1i64 << k) % w == 0,
            BinOp::And => k & (w - 1) == 0,
            _ => false,
        }
    }

    /// Whether a value is lane-fixed (see `lane_fixed`) by what its operands
    /// are now; values uniform across the group are by definition.
    fn lane_fixed_now(&self, f: &Function, cfg: &Cfg, v: Value, b: BlockId, inst_block: &[Option<BlockId>]) -> bool {
        let w = self.wave_size as i64;
        let lane_of = |x: Value| lane_linear(f, x, self.wave_size);
        match &f.inst(v).op {
            Op::Builtin(Builtin::LaneId) => true,
            Op::Builtin(_) | Op::Atomic(..) | Op::Call(..) | Op::Wave(..) => false,
            // `tid % 32`, `tid & 31`: the lane, or a part of it.
            Op::Binary(BinOp::Rem, x, k) if lane_of(*x) && f.as_int(*k).is_some_and(|k| k > 0 && w % k == 0) => true,
            Op::Binary(BinOp::And, x, m) if lane_of(*x) && f.as_int(*m).is_some_and(|m| m >= 0 && w % (m + 1) == 0) => true,
            Op::Load(m) if m.space == MemSpace::Private || matches!(m.root, Root::Local(_)) => false,
            Op::Phi(_) if self.lane_joins[v.index()] => false,
            _ => self.operands_lane_fixed(f, cfg, v, b, inst_block),
        }
    }

    fn operands_lane_fixed(&self, f: &Function, cfg: &Cfg, v: Value, b: BlockId, inst_block: &[Option<BlockId>]) -> bool {
        let mut all = true;
        f.inst(v).op.for_each_operand(|o| all &= self.operand_lane_fixed(f, cfg, o, b, inst_block));
        all
    }

    /// An operand as seen from `use_block`: a value leaving a loop is
    /// lane-fixed only if lanes of one number leave it together.
    fn operand_lane_fixed(&self, f: &Function, cfg: &Cfg, o: Value, use_block: BlockId, inst_block: &[Option<BlockId>]) -> bool {
        if self.operand(cfg, o, use_block, inst_block).0 >= Level::Group {
            return true;
        }
        if !self.lane_fixed[o.index()] {
            return false;
        }
        let Some(def_block) = inst_block[o.index()] else { return true };
        cfg.loops_of[def_block.index()].iter().map(|&li| &cfg.loops[li]).filter(|l| l.blocks.binary_search(&use_block).is_err()).all(|l| l.exiting.iter().all(|&e| self.lane_fixed_branch(f, e)))
    }

    /// Whether a branch goes the same way in lanes of one number.
    fn lane_fixed_branch(&self, f: &Function, b: BlockId) -> bool {
        self.branch_levels[b.index()] >= Level::Group || f.block(b).term.condition().is_none_or(|c| self.lane_fixed[c.index()])
    }

    /// Whether every wave that reaches `b` has the same lanes active there:
    /// each branch it depends on is decided per wave or per lane number.
    fn same_lanes_in_every_wave(&self, f: &Function, cfg: &Cfg, b: BlockId) -> bool {
        cfg.control_deps_transitive(b).into_iter().all(|dep| self.branch_levels[dep.index()] >= Level::Wave || self.lane_fixed_branch(f, dep))
    }

    /// Marks the phis at the joins of a branch that differs between lanes of one number.
    fn mark_lane_joins(&mut self, f: &Function, joins: &BranchJoins, branch: BlockId) -> bool {
        let mut changed = false;
        for join in &joins.joins {
            for &v in &f.block(join.block).insts {
                if let Op::Phi(inc) = &f.inst(v).op {
                    if !chosen_alike(f, &self.inst_block, inc, join, joins, branch) && !self.lane_joins[v.index()] {
                        self.lane_joins[v.index()] = true;
                        changed = true;
                    }
                }
            }
        }
        changed
    }

    /// Caps the phis at the join blocks of a non-uniform branch.
    fn mark_joins(&mut self, f: &Function, joins: &BranchJoins, branch: BlockId, level: Level) -> bool {
        let mut changed = false;
        for join in &joins.joins {
            for &v in &f.block(join.block).insts {
                if let Op::Phi(inc) = &f.inst(v).op {
                    if chosen_alike(f, &self.inst_block, inc, join, joins, branch) {
                        continue;
                    }
                    if level < self.levels[v.index()] {
                        self.levels[v.index()] = level;
                        self.reasons[v.index()] = Reason::SyncDependence(branch);
                        changed = true;
                    }
                }
            }
        }
        changed
    }
}

/// Every value `v` is computed from, through operands (bounded).
fn ssa_closure(f: &Function, v: Value) -> Vec<Value> {
    let mut seen = HashSet::new();
    let mut stack = vec![v];
    while let Some(x) = stack.pop() {
        if seen.len() < 4096 && seen.insert(x) {
            f.inst(x).op.for_each_operand(|o| stack.push(o));
        }
    }
    let mut values: Vec<Value> = seen.into_iter().collect();
    values.sort();
    values
}

/// Whether a phi at a join gets one value whichever way `branch` went: the
/// same value arrives over every edge the branch's paths take. Other edges
/// (a loop's entry, for a branch inside the loop) are not the branch's
/// choice, and a phi on the way takes only what comes from the branch
/// (`if (uniform) x = v;` after `x = v` was set on both sides).
fn chosen_alike(f: &Function, inst_block: &[Option<BlockId>], incoming: &[(BlockId, Value)], join: &Join, joins: &BranchJoins, branch: BlockId) -> bool {
    let on_the_way = |v: Value| matches!(f.inst(v).op, Op::Phi(_)) && inst_block[v.index()].is_some_and(|b| b != join.block && joins.reaches(b));
    let chosen = || incoming.iter().filter(|(from, _)| join.from.contains(from)).map(|&(_, v)| v);
    // Most joins decide at once: one value over every edge, or different values none of which is a phi on the way.
    let first = chosen().next();
    if chosen().all(|v| Some(v) == first) && !first.is_some_and(on_the_way) {
        return true;
    }
    if !chosen().any(on_the_way) {
        return false;
    }
    let mut arriving: Option<Value> = None;
    let mut stack: Vec<Value> = chosen().collect();
    let mut seen = HashSet::new();
    while let Some(v) = stack.pop() {
        if seen.len() > 64 {
            return false;
        }
        if !seen.insert(v) {
            continue;
        }
        match &f.inst(v).op {
            Op::Phi(inc) if on_the_way(v) => stack.extend(inc.iter().filter(|&&(from, _)| from == branch || joins.reaches(from)).map(|&(_, x)| x)),
            _ if arriving.is_some_and(|a| a != v) => return false,
            _ => arriving = Some(v),
        }
    }
    true
}

/// Whether an integer expression subtracts or negates anywhere (through
/// conversions, arithmetic and phis: loop counters' starts and steps).
fn subtracts(f: &Function, v: Value) -> bool {
    let mut stack = vec![v];
    let mut seen = std::collections::HashSet::new();
    while let Some(x) = stack.pop() {
        if !seen.insert(x) {
            continue;
        }
        if seen.len() > 64 {
            return true;
        }
        match &f.inst(x).op {
            Op::Binary(BinOp::Sub, ..) | Op::Unary(lockstep_ir::UnOp::Neg | lockstep_ir::UnOp::Not, _) => return true,
            Op::Const(_) if f.as_int(x).is_some_and(|k| k < 0) => return true,
            Op::Binary(_, a, b) => stack.extend([*a, *b]),
            Op::Convert(a) => stack.push(*a),
            Op::Phi(incoming) => stack.extend(incoming.iter().map(|&(_, y)| y)),
            _ => {}
        }
    }
    false
}

/// For each block that exits a loop, the branches inside the loop it is
/// (transitively) control dependent on: a `break` under a divergent `if`.
fn loop_exit_dependences(f: &Function, cfg: &Cfg) -> Vec<Vec<BlockId>> {
    let mut out = vec![Vec::new(); f.blocks.len()];
    for l in &cfg.loops {
        for &e in &l.exiting {
            for d in cfg.control_deps_transitive(e) {
                if d != e && l.blocks.binary_search(&d).is_ok() && !out[e.index()].contains(&d) {
                    out[e.index()].push(d);
                }
            }
        }
    }
    out
}

/// For each load from a private array: the value stored to the same
/// element by a store that dominates the load, when no other store to the
/// array (or through a private pointer) and no call lies on any way from
/// that store to the load
/// (`acc[j] = warp_reduce(acc[j]); … shared[w] = acc[j];`). Private arrays
/// are otherwise judged by everything ever stored to them.
fn forwarded_stores(f: &Function, cfg: &Cfg) -> Vec<Option<Value>> {
    let mut out = vec![None; f.insts.len()];
    let loads = f.block_ids().flat_map(|b| f.block(b).insts.iter().enumerate().map(move |(pos, &v)| (b, pos, v)));
    for (lb, pos, v) in loads {
        let Op::Load(load) = &f.inst(v).op else { continue };
        let Root::Local(_) = load.root else { continue };
        // Stores to this array, through a pointer that may point into it
        // (private or generic), atomics through such pointers, and calls.
        let through_pointer = |m: &lockstep_ir::MemRef| matches!(m.space, MemSpace::Private | MemSpace::Unknown) && !matches!(m.root, Root::Local(_));
        let clobbers = |v: &Value| match &f.inst(*v).op {
            Op::Store(m, _) => m.root == load.root || through_pointer(m),
            Op::Atomic(_, m, _) => through_pointer(m),
            Op::Call(callee, _) => !matches!(callee, lockstep_ir::Callee::UnknownValue(_)),
            _ => false,
        };
        // The nearest store or call before the load, up the dominator tree;
        // at a join that a branch on the load's own guard decides, up the
        // side the load's executions came by (`if (c) acc[j] = sum(acc[j]);
        // … if (c) s[w] = acc[j];`), remembering the join and that way in.
        let mut found = None;
        let mut steps: Vec<(BlockId, BlockId)> = Vec::new();
        let mut block = Some((lb, pos));
        while let Some((b, end)) = block {
            if let Some(&x) = f.block(b).insts[..end].iter().rev().find(|x| clobbers(x)) {
                found = Some((b, x));
                break;
            }
            let up = match crate::decided::decided_ways_into(f, cfg, b, lb).as_deref() {
                Some(&[way]) => {
                    steps.push((b, way));
                    Some(way)
                }
                _ => cfg.dom.idom(b.index()).map(|p| BlockId(p as u32)),
            };
            block = up.map(|p| (p, f.block(p).insts.len()));
        }
        let Some((sb, store)) = found else { continue };
        let Op::Store(m, stored) = &f.inst(store).op else { continue };
        let same_index = crate::decided::same_value(f, m.index, load.index, 0);
        if m.root != load.root || !same_index {
            continue;
        }
        // Every execution from the store to the load enters each such join
        // last by its way in: clean from the store to that way's end, from
        // each join to the next way's end, and from the last join to the load.
        let mut from = sb;
        let mut clean = true;
        for &(join, way) in steps.iter().rev() {
            clean &= clean_between(f, cfg, from, way, f.block(way).insts.len(), &clobbers);
            from = join;
        }
        if !clean || (from != lb && !clean_between(f, cfg, from, lb, pos, &clobbers)) {
            continue;
        }
        out[v.index()] = Some(*stored);
    }
    out
}

/// Whether no instruction `clobbers` lies on a way from the end of block
/// `from` to instruction `pos` of block `to` that does not pass `from` again.
fn clean_between(f: &Function, cfg: &Cfg, from: BlockId, to: BlockId, pos: usize, clobbers: &dyn Fn(&Value) -> bool) -> bool {
    // Blocks with a way to `to` that does not pass `from` (which stores anew).
    let mut reaches_to = vec![false; f.blocks.len()];
    let mut stack = vec![to];
    while let Some(b) = stack.pop() {
        if b != from && !std::mem::replace(&mut reaches_to[b.index()], true) {
            stack.extend(cfg.preds[b.index()].iter().copied());
        }
    }
    let mut seen = vec![false; f.blocks.len()];
    let mut stack = cfg.succs[from.index()].clone();
    while let Some(b) = stack.pop() {
        if b == from || !reaches_to[b.index()] || std::mem::replace(&mut seen[b.index()], true) {
            continue;
        }
        let insts = &f.block(b).insts;
        // Into `to`: up to the load; through it: all of it.
        let passes_through = cfg.succs[b.index()].iter().any(|s| reaches_to[s.index()]);
        let checked = if b == to && !passes_through { &insts[..pos] } else { &insts[..] };
        if checked.iter().any(clobbers) {
            return false;
        }
        stack.extend(cfg.succs[b.index()].iter().copied());
    }
    true
}

fn root_local(r: Root) -> Option<usize> {
    match r {
        Root::Local(l) => Some(l.index()),
        _ => None,
    }
}

/// An id along an axis one thread (group) wide is the same everywhere.
/// Whether a load sits between two group barriers in its block (every
/// thread reads after all stores and before any later one).
fn between_group_barriers(f: &Function, b: BlockId, v: Value) -> bool {
    let insts = &f.block(b).insts;
    let Some(i) = insts.iter().position(|&x| x == v) else { return false };
    let group_barrier = |x: Option<&Value>| x.is_some_and(|&x| matches!(&f.inst(x).op, Op::Barrier(bar, _) if bar.exec == lockstep_ir::Scope::Group));
    let orders = |x: &&Value| matches!(f.inst(**x).op, Op::Load(_) | Op::Store(..) | Op::Atomic(..) | Op::Barrier(..) | Op::Call(..) | Op::Wave(..));
    let before = insts[..i].iter().rev().find(orders);
    let after = insts[i + 1..].iter().find(orders);
    group_barrier(before) && group_barrier(after)
}

fn builtin_level(b: Builtin, entry: Option<&EntryInfo>, likely_extents: bool) -> Level {
    let one_thread = |ax: u8| {
        let ax = ax as usize % 3;
        entry.is_some_and(|e| e.threads_along(ax) == Some(1) || (likely_extents && e.axis_limits[ax] == Some(1)))
    };
    let one_group = |ax: u8| entry.is_some_and(|e| e.grid_size[ax as usize % 3] == Some(1));
    match b {
        Builtin::LocalId(ax) if one_thread(ax) => Level::Grid,
        Builtin::LocalId(_) | Builtin::LocalIndex | Builtin::LaneId => Level::Thread,
        Builtin::GroupId(ax) if one_group(ax) => Level::Grid,
        Builtin::GroupId(_) => Level::Group,
        Builtin::GroupSize(_) | Builtin::NumGroups(_) | Builtin::WaveSize => Level::Grid,
    }
}

/// Values that increase by one from lane to lane within a wave, with waves
/// starting at multiples of the wave size: `local_id.x`, the flat local index,
/// and `group_id * size + local_id` when the size is a multiple of the wave.
fn lane_linear(f: &Function, v: Value, wave: u32) -> bool {
    match &f.inst(v).op {
        Op::Builtin(Builtin::LocalId(0) | Builtin::LocalIndex) => true,
        Op::Convert(x) => f.inst(v).ty.is_int() && lane_linear(f, *x, wave),
        Op::Binary(BinOp::Add, a, b) => {
            let multiple = |x: Value| match &f.inst(x).op {
                Op::Binary(BinOp::Mul, p, q) => {
                    let k = f.as_int(*q).or_else(|| f.as_int(*p));
                    k.is_some_and(|k| k % wave as i64 == 0)
                }
                _ => f.as_int(x).is_some_and(|k| k % wave as i64 == 0),
            };
            (lane_linear(f, *a, wave) && multiple(*b)) || (lane_linear(f, *b, wave) && multiple(*a))
        }
        _ => false,
    }
}

/// Whether a type can carry divergence worth reporting (everything but void).
pub fn has_value(t: Type) -> bool {
    t != Type::Void
}

/// Loop-header phis that, once their loop is done, hold a reduction over a
/// whole wave: the butterfly `for (o = W/2; o > 0; o >>= 1) x = x ⊕ shfl_xor(x, o)`
/// with `⊕` associative and commutative and `W` at least the wave width the
/// language fixes. Every lane then holds the same combination of all lanes'
/// values. Inside the loop the phi still differs between lanes.
fn butterfly_reductions(f: &Function, cfg: &Cfg) -> Vec<Option<usize>> {
    let mut out = vec![None; f.insts.len()];
    let Some(wave) = f.entry.as_ref().and_then(|e| e.wave_size) else { return out };
    for (li, l) in cfg.loops.iter().enumerate() {
        if l.exiting != [l.header] {
            continue;
        }
        let in_loop = |b: BlockId| l.blocks.binary_search(&b).is_ok();
        let split = |inc: &[(BlockId, Value)]| -> Option<(Value, Value)> {
            let init = inc.iter().filter(|(p, _)| !in_loop(*p)).map(|p| p.1).collect::<Vec<_>>();
            let next = inc.iter().filter(|(p, _)| in_loop(*p)).map(|p| p.1).collect::<Vec<_>>();
            match (init.as_slice(), next.as_slice()) {
                ([i], [n]) => Some((*i, *n)),
                _ => None,
            }
        };
        // The offset: starts at a power of two, halves, runs while positive.
        let Some(cond) = f.block(l.header).term.condition() else { continue };
        let offset = match f.inst(cond).op {
            Op::Cmp(lockstep_ir::CmpOp::Gt, o, z) if f.as_int(z) == Some(0) => o,
            Op::Cmp(lockstep_ir::CmpOp::Ge, o, z) if f.as_int(z) == Some(1) => o,
            Op::Cmp(lockstep_ir::CmpOp::Ne, o, z) if f.as_int(z) == Some(0) => o,
            _ => continue,
        };
        let Op::Phi(inc) = &f.inst(offset).op else { continue };
        let Some((start, next)) = split(inc) else { continue };
        let Some(start) = f.as_int(start).filter(|&c| c > 0 && (c as u64).is_power_of_two()) else { continue };
        let halves = match f.inst(next).op {
            Op::Binary(BinOp::Shr, a, k) => a == offset && f.as_int(k) == Some(1),
            Op::Binary(BinOp::Div, a, k) => a == offset && f.as_int(k) == Some(2),
            _ => false,
        };
        if !halves || (2 * start as u64) < wave as u64 {
            continue;
        }
        for &v in &f.block(l.header).insts {
            let Op::Phi(inc) = &f.inst(v).op else { continue };
            let Some((_, update)) = split(inc) else { continue };
            let shuffled = |s: Value| match &f.inst(s).op {
                Op::Wave(WaveOp::ShuffleXor, args) => {
                    args.first() == Some(&v)
                        && args.get(1) == Some(&offset)
                        && args.get(2).is_none_or(|&w| f.as_int(w).is_some_and(|w| w as u64 >= wave as u64))
                }
                _ => false,
            };
            let combines = match &f.inst(update).op {
                Op::Binary(BinOp::Add | BinOp::Mul | BinOp::And | BinOp::Or | BinOp::Xor | BinOp::LAnd | BinOp::LOr, a, b) => {
                    (*a == v && shuffled(*b)) || (*b == v && shuffled(*a))
                }
                Op::Math(lockstep_ir::MathFn::Min | lockstep_ir::MathFn::Max, args) if args.len() == 2 => {
                    (args[0] == v && shuffled(args[1])) || (args[1] == v && shuffled(args[0]))
                }
                _ => false,
            };
            if combines {
                out[v.index()] = Some(li);
            }
        }
    }
    out
}
