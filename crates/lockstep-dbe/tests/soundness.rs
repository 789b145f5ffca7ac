//! The precise mode's soundness property: removing every barrier it calls
//! dead makes the static race checker find no race it did not find before.
//! The race analysis's thread-index reasoning is plugged in as the oracle.
//!
//! Every branch of the generated kernels is group-uniform, so all threads
//! of a group follow the same path. The checker also pairs accesses that
//! only threads on different paths could make within one interval (the two
//! arms of an `if`, or the next loop iteration against the loop exit); those
//! cannot race here, and the test counts a new finding only when one access
//! reaches the other on a path that crosses no remaining barrier.

use lockstep_analysis::{Cfg, Uniformity};
use lockstep_dbe::{apply, synth, Engine, HazardOracle, Mode, Options, SameAllocation};
use lockstep_ir::{inline_calls, BlockId, Function, Module, Value};
use lockstep_race::{analyze, Assumptions, ConflictOracle};
use std::collections::{BTreeSet, HashSet};

/// The race checker's findings as (earlier access, later access); the rule
/// is left out because the same pair can change rules (a WAR becomes a
/// "first read" once no write precedes it in its interval).
fn races(m: &Module, f: &Function) -> BTreeSet<(Option<Value>, Value)> {
    let cfg = Cfg::new(f);
    let uni = Uniformity::analyze(f, &cfg);
    analyze(m, f, &cfg, &uni).into_iter().filter(|x| x.hazard.is_some()).map(|x| (x.earlier.map(|e| e.inst), x.later.inst)).collect()
}

/// Whether a path leads from access `a` to access `b` without crossing a barrier.
fn unordered_path(f: &Function, a: Value, b: Value) -> bool {
    let at = f.inst_blocks();
    let Some(start) = at[a.index()] else { return true };
    let is_barrier = |v: Value| f.inst(v).op.is_barrier();
    // Scans a block from `from`; true when `b` comes before any barrier, None when a barrier stops the path.
    let scan = |blk: BlockId, from: usize| -> Option<bool> {
        for &v in &f.block(blk).insts[from..] {
            if v == b {
                return Some(true);
            }
            if is_barrier(v) {
                return None;
            }
        }
        Some(false)
    };
    let pos = f.block(start).insts.iter().position(|&v| v == a).unwrap();
    match scan(start, pos + 1) {
        Some(true) => return true,
        None => return false,
        Some(false) => {}
    }
    let mut seen = vec![false; f.blocks.len()];
    let mut stack = f.block(start).term.successors();
    while let Some(x) = stack.pop() {
        if std::mem::replace(&mut seen[x.index()], true) {
            continue;
        }
        match scan(x, 0) {
            Some(true) => return true,
            Some(false) => stack.extend(f.block(x).term.successors()),
            None => {}
        }
    }
    false
}

struct Race<'a>(ConflictOracle<'a>);

impl HazardOracle for Race<'_> {
    fn conflicts(&self, _: &Function, earlier: Value, later: Value) -> bool {
        self.0.may_conflict(earlier, later)
    }
}

/// A generated kernel in its module, with calls inlined as `lockstep check`
/// sees it. Kept small: the checker's solver takes long on some larger ones.
fn flat_kernel(seed: u64) -> (Module, Function) {
    let (mut m, f) = synth::kernel(12, seed);
    let id = m.add_function(f);
    let flat = inline_calls(&m, id);
    (m, flat)
}

#[test]
fn removing_what_precise_mode_calls_dead_adds_no_race() {
    let mut removed_total = 0;
    let mut beyond_same_allocation = 0;
    for seed in 1..40u64 {
        let (m, f) = flat_kernel(seed);
        let before = races(&m, &f);
        let cfg = Cfg::new(&f);
        let uni = Uniformity::analyze(&f, &cfg);
        let oracle = Race(ConflictOracle::new(&m, &f, &cfg, &uni, None, Assumptions::Facts));
        let engine = Engine::new(&m, Options { mode: Mode::Precise, ..Options::default() });
        let result = engine.run(&f, &oracle, &HashSet::new());
        removed_total += result.removed().len();
        beyond_same_allocation += result.removed().len() - engine.run(&f, &SameAllocation { module: &m }, &HashSet::new()).removed().len();
        let mut g = f.clone();
        apply(&mut g, &result);
        let after = races(&m, &g);
        let new: Vec<_> =
            after.difference(&before).filter(|(e, l)| e.is_none_or(|e| unordered_path(&g, e, *l) || unordered_path(&g, *l, e))).collect();
        assert!(new.is_empty(), "seed {seed}: removing {:?} added races {new:?}", result.removed());
    }
    // The property is not vacuous: barriers went, some only thanks to the thread-index reasoning.
    assert!(removed_total > 50, "{removed_total}");
    assert!(beyond_same_allocation > 0);
}
