//! Checks: each turns analysis results on a kernel into diagnostics, and
//! each has an entry in [`RULES`] with its documentation page.

mod divergence;
mod explain;
mod races;
mod rules;

pub use rules::{find_rule, Rule, RULES};

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
    pub fn from_flat(module: &'m Module, func: Function) -> KernelFacts<'m> {
        let cfg = Cfg::new(&func);
        let uniformity = Uniformity::analyze(&func, &cfg);
        KernelFacts { module, func, cfg, uniformity }
    }
}

/// Runs every check on one kernel.
pub fn check_kernel(db: &SourceDb, facts: &KernelFacts, out: &mut Vec<Diagnostic>) {
    divergence::check(db, facts, out);
}

/// Runs every check on every kernel of a module.
pub fn check_module(db: &SourceDb, module: &Module) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for entry in module.entries() {
        let facts = KernelFacts::new(module, entry);
        check_kernel(db, &facts, &mut out);
    }
    dedup(&mut out);
    out
}

/// Removes exact duplicates (the same finding reached through two call sites).
pub fn dedup_diagnostics(diags: &mut Vec<Diagnostic>) {
    dedup(diags)
}

/// Removes exact duplicates (the same finding reached through two paths).
fn dedup(diags: &mut Vec<Diagnostic>) {
    let mut seen = std::collections::HashSet::new();
    diags.retain(|d| seen.insert((d.rule.clone(), d.span, d.message.clone(), d.labels.iter().map(|l| l.span).collect::<Vec<_>>())));
}
