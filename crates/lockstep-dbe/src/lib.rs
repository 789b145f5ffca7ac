//! Dead-barrier elimination: decides which barriers order no hazard and removes them.
//!
//! For every group-synchronizing barrier the engine computes, per memory space
//! (shared, device), what is read and written above it (back to the previous
//! sync points along every path, loop back edges included) and below it (up to
//! the next ones). A barrier is dead when no space it orders has a hazard
//! across it: RAW (write above, read below), WAR (read above, write below) or
//! WAW (write above, write below). Removing a barrier merges its two regions,
//! which can make a neighbour necessary again, so barriers are removed one at
//! a time in program order with the facts updated after each removal.

mod access;
mod diag;
mod flow;
pub mod synth;

pub use access::{classify_ref, Alloc, HazardOracle, SameAllocation, Space, SPACES};

use access::Effects;
pub use diag::{accesses_around, diagnostic, removal_edit, RULE};

use flow::{Prep, SpaceFlow};
use lockstep_ir::*;
use lockstep_source::Span;
use std::collections::{HashMap, HashSet};

/// How much the engine may assume.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Only barriers with no access between them and a neighbouring barrier of their block.
    Local,
    /// Boolean read/write categories per space with the hazard rule.
    Categories,
    /// Per allocation and per space, refined by a [`HazardOracle`].
    Precise,
}

impl Mode {
    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "local" => Some(Mode::Local),
            "categories" => Some(Mode::Categories),
            "precise" => Some(Mode::Precise),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    pub mode: Mode,
    /// Calls without a body access no shared or device memory.
    pub assume_calls_safe: bool,
    /// Follow accesses across blocks; when false a block's entry and exit count as "anything".
    pub inter_block: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options { mode: Mode::Precise, assume_calls_safe: false, inter_block: true }
    }
}

/// The four access categories around a barrier in one space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Flags {
    pub read_above: bool,
    pub write_above: bool,
    pub read_below: bool,
    pub write_below: bool,
}

impl Flags {
    /// RAW, WAR or WAW across the barrier.
    pub fn hazard(&self) -> bool {
        (self.write_above && (self.read_below || self.write_below)) || (self.read_above && self.write_below)
    }
    fn or(self, o: Flags) -> Flags {
        Flags {
            read_above: self.read_above || o.read_above,
            write_above: self.write_above || o.write_above,
            read_below: self.read_below || o.read_below,
            write_below: self.write_below || o.write_below,
        }
    }
}

/// Flags per space. A space the barrier does not order is all false.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BarrierFlags {
    pub shared: Flags,
    pub device: Flags,
}

impl BarrierFlags {
    /// Both spaces together, as the seed's one-line message prints them.
    pub fn combined(&self) -> Flags {
        self.shared.or(self.device)
    }
    fn space_mut(&mut self, s: Space) -> &mut Flags {
        match s {
            Space::Shared => &mut self.shared,
            Space::Device => &mut self.device,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keep {
    /// A hazard crosses it (or, in local mode, it has no empty neighbour).
    Needed,
    /// `__syncthreads_count/and/or`: its result is data.
    Reduction,
    /// The caller asked to leave it alone (a barrier in divergent control flow).
    LeftAlone,
    /// The function is too large for the dataflow to finish in time.
    TooLarge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    Removed,
    Kept(Keep),
}

/// One group-synchronizing barrier and what the engine decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BarrierReport {
    pub value: Value,
    pub span: Span,
    pub verdict: Verdict,
    /// The spaces the barrier orders.
    pub orders: Spaces,
    /// For removed barriers: the flags when it was removed; for kept ones: after all removals.
    pub flags: BarrierFlags,
    /// For a barrier kept as needed in the categories and precise modes: a hazard it orders.
    pub hazard: Option<Hazard>,
}

/// Two accesses on either side of a barrier that threads could see out of order without it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hazard {
    pub space: Space,
    /// The access before the barrier, when it is a load, store or atomic (not a call, and not a
    /// category in categories mode).
    pub before: Option<Span>,
    /// The access after it.
    pub after: Option<Span>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionResult {
    /// Every group-synchronizing barrier placed in a block, in program order.
    pub barriers: Vec<BarrierReport>,
}

impl FunctionResult {
    pub fn removed(&self) -> Vec<Value> {
        self.barriers.iter().filter(|b| b.verdict == Verdict::Removed).map(|b| b.value).collect()
    }
    pub fn kept(&self) -> Vec<Value> {
        self.barriers.iter().filter(|b| b.verdict != Verdict::Removed).map(|b| b.value).collect()
    }
}

/// The removed barriers whose source barrier may go: one report per span,
/// kept only when every report with that span (every inlined copy of a
/// helper's barrier, in every kernel) was removed. Sorted by position.
pub fn removable_everywhere<'a>(results: impl IntoIterator<Item = &'a FunctionResult>) -> Vec<&'a BarrierReport> {
    let mut by_span: HashMap<Span, (&'a BarrierReport, bool)> = HashMap::new();
    for b in results.into_iter().flat_map(|r| &r.barriers) {
        let entry = by_span.entry(b.span).or_insert((b, true));
        entry.1 &= b.verdict == Verdict::Removed;
    }
    let mut out: Vec<&BarrierReport> = by_span.into_values().filter(|(_, all)| *all).map(|(b, _)| b).collect();
    out.sort_by_key(|b| (b.span.file, b.span.lo, b.span.hi));
    out
}

/// `lockstep check`'s entry point: runs the engine on every kernel of
/// `module` with its calls inlined, and returns the barriers whose source
/// statement may go (dead in every inlined copy), sorted by position.
/// Barriers whose span is in `divergent` (reported by the uniformity check)
/// are left alone in every copy.
pub fn dead_barriers(module: &Module, options: Options, oracle: &dyn HazardOracle, divergent: &HashSet<Span>) -> Vec<BarrierReport> {
    let engine = Engine::new(module, options);
    let results: Vec<FunctionResult> = module
        .entries()
        .map(|id| {
            let flat = inline_calls(module, id);
            let leave: HashSet<Value> =
                group_barriers(&flat).into_iter().filter(|(v, _)| divergent.contains(&flat.inst(*v).span)).map(|(v, _)| v).collect();
            engine.run(&flat, oracle, &leave)
        })
        .collect();
    removable_everywhere(&results).into_iter().cloned().collect()
}

/// Deletes the removed barriers from their blocks.
pub fn apply(f: &mut Function, result: &FunctionResult) {
    let gone: HashSet<Value> = result.removed().into_iter().collect();
    for b in &mut f.blocks {
        b.insts.retain(|v| !gone.contains(v));
    }
}

/// Blocks times accesses beyond which a function is not analysed: the
/// dataflow's facts are sets of accesses per block, and a huge inlined
/// kernel (ggml's quantized matrix multiply: 7 400 blocks, 7 700 accesses)
/// would take tens of seconds. Its barriers are all kept.
const MAX_FLOW_CELLS: usize = 1_000_000;

/// The engine over one module; callee summaries are computed once and shared
/// by every function it is run on.
pub struct Engine<'m> {
    options: Options,
    effects: Effects<'m>,
}

/// The group-synchronizing barriers of a function, in program order.
fn group_barriers(f: &Function) -> Vec<(Value, Barrier)> {
    let mut out = Vec::new();
    for b in &f.blocks {
        for &v in &b.insts {
            if let Some(Inst { op: Op::Barrier(bar, _), .. }) = f.insts.get(v.index()) {
                if bar.syncs_group() {
                    out.push((v, *bar));
                }
            }
        }
    }
    out
}

fn orders(bar: &Barrier) -> impl Iterator<Item = Space> + '_ {
    SPACES.into_iter().filter(|s| bar.spaces.contains(s.mem_space()))
}

impl<'m> Engine<'m> {
    pub fn new(module: &'m Module, options: Options) -> Engine<'m> {
        Engine { options, effects: Effects::new(module, options.assume_calls_safe) }
    }

    fn prep<'f>(&self, f: &'f Function) -> Prep<'f> {
        let nb = f.blocks.len();
        let in_range = |b: &BlockId| b.index() < nb;
        let succs: Vec<Vec<usize>> =
            f.blocks.iter().map(|b| b.term.successors().iter().filter(|s| in_range(s)).map(|s| s.index()).collect()).collect();
        let mut preds = vec![Vec::new(); nb];
        for (b, ss) in succs.iter().enumerate() {
            for &s in ss {
                if !preds[s].contains(&b) {
                    preds[s].push(b);
                }
            }
        }
        let mut effects = vec![Vec::new(); f.insts.len()];
        for b in &f.blocks {
            for &v in &b.insts {
                if v.index() < f.insts.len() {
                    effects[v.index()] = self.effects.of_inst(f, v);
                }
            }
        }
        Prep {
            f,
            preds,
            succs,
            returns: f.blocks.iter().map(|b| matches!(b.term, Terminator::Return(_))).collect(),
            kernel: f.entry.is_some(),
            effects,
        }
    }

    /// Per space, the flow whose sync points are the barriers that fence it
    /// (index [`Space::index`]); then, per space some group barrier does not
    /// fence, the flow whose sync points are all group barriers (index
    /// `SPACES.len() + space.index()`, None where every barrier fences it).
    ///
    /// A barrier that holds the group orders a read before it against another
    /// thread's write after it in any memory, fenced or not: the read is done
    /// before the write starts (an execution dependency is all a
    /// write-after-read needs). Removing it there would let the write pass
    /// the read, so the second flows keep a barrier that separates such a
    /// pair. (A write on either side of a barrier that does not fence its
    /// memory is unordered with or without it.)
    fn flows(&self, prep: &Prep, transparent: &dyn Fn(Value) -> bool) -> Vec<Option<SpaceFlow>> {
        let f = prep.f;
        let precise = self.options.mode == Mode::Precise;
        let group_barrier = |v: Value| match &f.inst(v).op {
            Op::Barrier(bar, _) if bar.syncs_group() && !transparent(v) => Some(*bar),
            _ => None,
        };
        let fenced = SPACES.iter().map(|&space| {
            let is_sync = |v: Value| group_barrier(v).is_some_and(|bar| bar.spaces.contains(space.mem_space()));
            Some(SpaceFlow::build(prep, space, precise, self.options.inter_block, &is_sync))
        });
        let held = SPACES.iter().map(|&space| {
            let unfenced = f.blocks.iter().flat_map(|b| &b.insts).any(|&v| group_barrier(v).is_some_and(|bar| !bar.spaces.contains(space.mem_space())));
            let effects = || prep.effects.iter().flatten().filter(|e| e.space == space);
            let reads_and_writes = effects().any(|e| e.read) && effects().any(|e| e.write);
            (unfenced && reads_and_writes).then(|| SpaceFlow::build(prep, space, precise, self.options.inter_block, &|v| group_barrier(v).is_some()))
        });
        fenced.chain(held).collect()
    }

    fn is_dead(&self, prep: &Prep, flows: &[Option<SpaceFlow>], v: Value, bar: &Barrier, oracle: &dyn HazardOracle) -> bool {
        self.needed_for(prep, flows, v, bar, oracle).is_none()
    }

    /// Why the barrier is needed (None: it is dead); `Some(None)` in local mode, which has no pairs.
    fn needed_for(&self, prep: &Prep, flows: &[Option<SpaceFlow>], v: Value, bar: &Barrier, oracle: &dyn HazardOracle) -> Option<Option<Hazard>> {
        // A barrier that fences no memory (Metal `mem_flags::mem_none`) still
        // holds every thread until all arrive: a read before it completes
        // before another thread's write after it. Kernels rely on that ("this
        // barrier fixes a failing test"), so such a barrier is never removed.
        if orders(bar).next().is_none() {
            return Some(None);
        }
        let fenced = orders(bar).map(|space| (space, space.index(), false));
        // The spaces it holds the threads for without fencing them: reads then writes.
        let held = SPACES.into_iter().filter(|s| !bar.spaces.contains(s.mem_space())).map(|space| (space, SPACES.len() + space.index(), true));
        fenced.chain(held).find_map(|(space, index, reads_then_writes)| {
            let flow = flows[index].as_ref()?;
            match self.options.mode {
                Mode::Local => (!flow.locally_redundant(prep, v)).then_some(None),
                Mode::Categories | Mode::Precise => flow.hazard(prep.f, v, oracle, reads_then_writes).map(|(before, after)| {
                    let span = |a: Option<Value>| a.map(|a| prep.f.inst(a).span);
                    Some(Hazard { space, before: span(before), after: span(after) })
                }),
            }
        })
    }

    fn flags(flows: &[Option<SpaceFlow>], v: Value) -> BarrierFlags {
        let mut out = BarrierFlags::default();
        for s in SPACES {
            if let Some(flow) = flows[s.index()].as_ref().filter(|flow| flow.has(v)) {
                *out.space_mut(s) = flow.flags(v);
            }
        }
        out
    }

    fn report(
        f: &Function,
        barriers: &[(Value, Barrier)],
        leave_alone: &HashSet<Value>,
        removed: &HashMap<Value, BarrierFlags>,
        hazards: &HashMap<Value, Hazard>,
        flows: &[Option<SpaceFlow>],
    ) -> FunctionResult {
        let barriers = barriers
            .iter()
            .map(|&(v, bar)| {
                let (verdict, flags) = match removed.get(&v) {
                    Some(flags) => (Verdict::Removed, *flags),
                    None => {
                        let keep = if bar.reduce.is_some() {
                            Keep::Reduction
                        } else if leave_alone.contains(&v) {
                            Keep::LeftAlone
                        } else {
                            Keep::Needed
                        };
                        (Verdict::Kept(keep), Self::flags(flows, v))
                    }
                };
                BarrierReport { value: v, span: f.inst(v).span, verdict, orders: bar.spaces, flags, hazard: hazards.get(&v).copied() }
            })
            .collect();
        FunctionResult { barriers }
    }

    fn candidates<'b>(barriers: &'b [(Value, Barrier)], leave_alone: &'b HashSet<Value>) -> impl Iterator<Item = &'b (Value, Barrier)> {
        barriers.iter().filter(|(v, bar)| bar.reduce.is_none() && !leave_alone.contains(v))
    }

    /// Decides every barrier of `f` and returns the verdicts (the function is
    /// not changed: see [`apply`]). `leave_alone` barriers are neither removed
    /// nor trusted as sync points (pass the ones the uniformity check reported).
    ///
    /// Removal only makes other barriers more necessary, so the barriers dead
    /// at the start are visited once, in program order; each is re-checked
    /// against the facts as updated by the removals before it.
    pub fn run(&self, f: &Function, oracle: &dyn HazardOracle, leave_alone: &HashSet<Value>) -> FunctionResult {
        let barriers = group_barriers(f);
        if barriers.is_empty() {
            return FunctionResult { barriers: Vec::new() };
        }
        let prep = self.prep(f);
        let accesses: usize = prep.effects.iter().map(Vec::len).sum();
        if f.blocks.len().saturating_mul(accesses) > MAX_FLOW_CELLS {
            // Too large to decide in time: every barrier stays.
            let barriers = barriers
                .iter()
                .map(|&(v, bar)| BarrierReport { value: v, span: f.inst(v).span, verdict: Verdict::Kept(Keep::TooLarge), orders: bar.spaces, flags: BarrierFlags::default(), hazard: None })
                .collect();
            return FunctionResult { barriers };
        }
        let mut flows = self.flows(&prep, &|v| leave_alone.contains(&v));
        // A hazard found across a barrier stays across it: removals only add accesses around it.
        let mut hazards = HashMap::new();
        let mut dead_at_start = Vec::new();
        for &(v, bar) in Self::candidates(&barriers, leave_alone) {
            match self.needed_for(&prep, &flows, v, &bar, oracle) {
                None => dead_at_start.push((v, bar)),
                Some(hazard) => hazards.extend(hazard.map(|h| (v, h))),
            }
        }
        let mut removed = HashMap::new();
        for (v, bar) in dead_at_start {
            match self.needed_for(&prep, &flows, v, &bar, oracle) {
                None => {
                    removed.insert(v, Self::flags(&flows, v));
                    for flow in flows.iter_mut().flatten() {
                        flow.remove(&prep, v);
                    }
                }
                Some(hazard) => hazards.extend(hazard.map(|h| (v, h))),
            }
        }
        Self::report(f, &barriers, leave_alone, &removed, &hazards, &flows)
    }

    /// The seeds' algorithm, for reference and benchmarks: solve from scratch,
    /// remove the first dead barrier, repeat until none is dead.
    pub fn run_restart(&self, f: &Function, oracle: &dyn HazardOracle, leave_alone: &HashSet<Value>) -> FunctionResult {
        let prep = self.prep(f);
        let barriers = group_barriers(f);
        let mut removed: HashMap<Value, BarrierFlags> = HashMap::new();
        loop {
            let flows = self.flows(&prep, &|v| leave_alone.contains(&v) || removed.contains_key(&v));
            let next = Self::candidates(&barriers, leave_alone)
                .find(|(v, bar)| !removed.contains_key(v) && self.is_dead(&prep, &flows, *v, bar, oracle));
            match next {
                Some(&(v, _)) => {
                    removed.insert(v, Self::flags(&flows, v));
                }
                // The reference algorithm records no hazards.
                None => return Self::report(f, &barriers, leave_alone, &removed, &HashMap::new(), &flows),
            }
        }
    }
}
