//! Checks: each turns analysis results on a kernel into diagnostics, and
//! each has an entry in [`RULES`] with its documentation page.

mod divergence;
mod explain;
mod races;
mod rules;

pub use rules::{find_rule, Rule, RULES, TOOL_DIAGNOSTICS};

use lockstep_analysis::{Cfg, Uniformity};
use lockstep_diag::Diagnostic;
use lockstep_ir::{Callee, FuncId, Function, Module, Op};
use lockstep_source::SourceDb;

/// One kernel prepared for checking: flat, with its CFG and uniformity.
pub struct KernelFacts<'m> {
    pub module: &'m Module,
    pub func: Function,
    pub cfg: Cfg,
    pub uniformity: Uniformity,
    /// Uniformity under the group extents the kernel's accesses suggest,
    /// where that differs: what reports are judged by, never barrier removal.
    pub likely_uniformity: Option<Uniformity>,
}

impl<'m> KernelFacts<'m> {
    /// Facts for an entry point of the module (its calls inlined).
    pub fn new(module: &'m Module, entry: FuncId) -> KernelFacts<'m> {
        let source = module.function(entry);
        let has_calls = source.insts.iter().any(|i| matches!(i.op, Op::Call(Callee::Func(_), _)));
        let func = if has_calls { lockstep_ir::inline_calls(module, entry) } else { source.clone() };
        KernelFacts::from_flat(module, func)
    }

    /// Facts for a kernel that is already flat (no calls to bodies).
    pub fn from_flat(module: &'m Module, mut func: Function) -> KernelFacts<'m> {
        lockstep_analysis::decided::fold_decided_branches(&mut func);
        let cfg = Cfg::new(&func);
        let uniformity = Uniformity::analyze(&func, &cfg);
        // With no known group size, accesses that index a row by the thread id
        // bound how wide the group likely is (race reports only: removing a
        // barrier never relies on it).
        if func.entry.as_ref().is_some_and(|e| e.group_size.is_none()) {
            let mut extent = lockstep_analysis::launch::in_bounds_group_extent(module, &func, &cfg, &uniformity);
            let global_only = lockstep_analysis::launch::axes_seen_only_in_global_ids(&func);
            let mut widths = lockstep_analysis::launch::flat_id_widths(&func);
            let rows_are_waves = lockstep_analysis::launch::rows_are_waves(&func);
            if let Some(entry) = func.entry.as_mut() {
                for ax in 0..3 {
                    if global_only[ax] && entry.threads_along(ax).is_none() {
                        extent[ax] = Some(1);
                    }
                }
                // Rows of one wave each, where the wave's width is fixed.
                if let (true, Some(w), None) = (rows_are_waves, entry.wave_size, entry.threads_along(0)) {
                    extent[0] = Some(extent[0].map_or(w, |e| e.min(w)));
                    widths[0] = Some(w);
                }
                entry.axis_limits = extent;
                // Only where the launch leaves the extent open.
                entry.axis_widths = std::array::from_fn(|ax| widths[ax].filter(|_| entry.threads_along(ax).is_none()));
            }
        }
        // A flat global id says how many groups the grid has along an axis
        // (race reports only), where no launch says.
        let groups = lockstep_analysis::launch::flat_grid_id_groups(&func, func.entry.as_ref().and_then(|e| e.group_size));
        if let Some(entry) = func.entry.as_mut() {
            entry.grid_widths = std::array::from_fn(|ax| groups[ax].filter(|_| entry.grid_size[ax].is_none()));
        }
        let likely_uniformity = Uniformity::assuming_axis_limits(&func, &cfg);
        KernelFacts { module, func, cfg, uniformity, likely_uniformity }
    }
}

/// What `lockstep check` runs.
#[derive(Clone, Copy, Debug)]
pub struct CheckOptions {
    /// The dead-barrier engine's mode; None turns `dead-barrier` off.
    pub dead_barriers: Option<lockstep_dbe::Mode>,
    /// Treat calls to functions without a body as touching no shared or device memory.
    pub assume_calls_safe: bool,
    /// Run the race checks (shared- and device-memory hazards).
    pub races: bool,
    /// Also report races lockstep could not prove (`possible-race`).
    pub include_unproven: bool,
    /// Also report races where every thread stores the same value (`benign-race`).
    pub include_benign: bool,
}

impl Default for CheckOptions {
    fn default() -> CheckOptions {
        CheckOptions { dead_barriers: Some(lockstep_dbe::Mode::Precise), assume_calls_safe: false, races: true, include_unproven: false, include_benign: false }
    }
}

/// Checks the kernels of one file one at a time; findings that need every
/// kernel (a barrier in a helper is dead only if dead in every inlined copy)
/// are reported by [`FileChecker::finish`].
pub struct FileChecker {
    options: CheckOptions,
    dead: Vec<lockstep_dbe::FunctionResult>,
    /// The checking thread's CPU time at which race analysis stops for the
    /// rest of the file ([`lockstep_race::FILE_CHECK_TIME`] after the first
    /// kernel's checks start).
    deadline: Option<std::time::Duration>,
}

impl FileChecker {
    pub fn new(options: CheckOptions) -> FileChecker {
        FileChecker { options, dead: Vec::new(), deadline: None }
    }

    pub fn kernel(&mut self, db: &SourceDb, facts: &KernelFacts, out: &mut Vec<Diagnostic>) {
        let first = out.len();
        self.kernel_findings(db, facts, out);
        // Findings in a template's body say which version of it they are in.
        if let Some(version) = facts.func.entry.as_ref().and_then(|e| e.template.as_ref()) {
            for d in &mut out[first..] {
                d.notes.push(format!("in {version}"));
            }
        }
    }

    fn kernel_findings(&mut self, db: &SourceDb, facts: &KernelFacts, out: &mut Vec<Diagnostic>) {
        let deadline = *self.deadline.get_or_insert_with(|| lockstep_race::thread_cpu_time() + lockstep_race::FILE_CHECK_TIME);
        let divergent = divergence::check(db, facts, out);
        if self.options.races {
            let likely_uniformity = facts.likely_uniformity.as_ref().unwrap_or(&facts.uniformity);
            let likely = lockstep_race::ConflictOracle::new(facts.module, &facts.func, &facts.cfg, likely_uniformity, None, lockstep_race::Assumptions::Likely);
            races::check(db, facts, &likely, &self.options, deadline, out);
        }
        if let Some(mode) = self.options.dead_barriers {
            let options = lockstep_dbe::Options { mode, assume_calls_safe: self.options.assume_calls_safe, inter_block: true };
            let engine = lockstep_dbe::Engine::new(facts.module, options);
            // Divergent barriers are reported, never "fixed" by removal.
            let leave_alone = divergent.into_iter().collect();
            let result = if mode == lockstep_dbe::Mode::Precise {
                // Precise mode asks the race analysis whether two threads can
                // meet at one cell, in any launch the kernel allows.
                let oracle = lockstep_race::ConflictOracle::new(facts.module, &facts.func, &facts.cfg, &facts.uniformity, None, lockstep_race::Assumptions::Facts);
                engine.run(&facts.func, &ThreadIndexOracle(&oracle), &leave_alone)
            } else {
                engine.run(&facts.func, &lockstep_dbe::SameAllocation { module: facts.module }, &leave_alone)
            };
            self.dead.push(result);
        }
    }

    /// Every group-synchronizing barrier of the kernels checked so far, with the dead-barrier
    /// engine's verdict and what is accessed around it (none when `dead-barrier` is off).
    pub fn barriers(&self) -> impl Iterator<Item = &lockstep_dbe::BarrierReport> {
        self.dead.iter().flat_map(|r| &r.barriers)
    }

    pub fn finish(self, db: &SourceDb, out: &mut Vec<Diagnostic>) {
        for report in lockstep_dbe::removable_everywhere(&self.dead) {
            out.push(lockstep_dbe::diagnostic(db, report));
        }
        dedup(out);
        races::drop_reports_of_proven_races(out);
        merge_same_defect(out);
    }
}

/// The race analysis's thread-index reasoning as the dead-barrier engine's oracle.
struct ThreadIndexOracle<'o, 'a>(&'o lockstep_race::ConflictOracle<'a>);

impl lockstep_dbe::HazardOracle for ThreadIndexOracle<'_, '_> {
    fn conflicts(&self, _: &Function, earlier: lockstep_ir::Value, later: lockstep_ir::Value) -> bool {
        self.0.may_conflict(earlier, later)
    }
}

/// Runs every check on every kernel of a module.
pub fn check_module(db: &SourceDb, module: &Module, options: CheckOptions) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut checker = FileChecker::new(options);
    for entry in module.entries() {
        let facts = KernelFacts::new(module, entry);
        checker.kernel(db, &facts, &mut out);
    }
    checker.finish(db, &mut out);
    out
}



/// One finding per defect: findings of one rule between the same source
/// lines (the components of a vector, the fields of a struct, the copies of
/// an unrolled or instantiated body) become the first of them, with a count.
fn merge_same_defect(diags: &mut Vec<Diagnostic>) {
    let key = |d: &Diagnostic| (d.rule.clone(), d.span.file, d.span.lo, d.labels.iter().map(|l| (l.span.file, l.span.lo)).collect::<Vec<_>>());
    let mut first: std::collections::HashMap<_, usize> = std::collections::HashMap::new();
    let mut kept: Vec<Diagnostic> = Vec::with_capacity(diags.len());
    // Per kept finding: how many it took in here.
    let mut merged: Vec<u32> = Vec::with_capacity(diags.len());
    for d in diags.drain(..) {
        match first.get(&key(&d)) {
            Some(&i) => {
                kept[i].occurrences += d.occurrences;
                merged[i] += d.occurrences;
            }
            None => {
                first.insert(key(&d), kept.len());
                kept.push(d);
                merged.push(0);
            }
        }
    }
    for (d, more) in kept.iter_mut().zip(merged) {
        if more > 0 {
            d.notes.push(format!("and {more} more element pair{} between these lines", if more == 1 { "" } else { "s" }));
        }
    }
    *diags = kept;
}

/// Removes exact duplicates (the same finding reached through two paths).
fn dedup(diags: &mut Vec<Diagnostic>) {
    let mut seen = std::collections::HashSet::new();
    diags.retain(|d| seen.insert((d.rule.clone(), d.span, d.message.clone(), d.labels.iter().map(|l| l.span).collect::<Vec<_>>())));
}
