//! Checks: each turns analysis results on a kernel into diagnostics, and
//! each has an entry in [`RULES`] with its documentation page.

mod divergence;
mod explain;
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
    pub fn new(module: &'m Module, entry: FuncId) -> KernelFacts<'m> {
        let source = module.function(entry);
        let has_calls = source.insts.iter().any(|i| matches!(i.op, Op::Call(Callee::Func(_), _)));
        let func = if has_calls { lockstep_ir::inline_calls(module, entry) } else { source.clone() };
        let cfg = Cfg::new(&func);
        let uniformity = Uniformity::analyze(&func, &cfg);
        KernelFacts { module, func, cfg, uniformity }
    }
}

/// Runs every check on every kernel of a module.
pub fn check_module(db: &SourceDb, module: &Module) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for entry in module.entries() {
        let facts = KernelFacts::new(module, entry);
        divergence::check(db, &facts, &mut out);
    }
    dedup(&mut out);
    out
}

/// Removes exact duplicates (the same finding reached through two paths).
fn dedup(diags: &mut Vec<Diagnostic>) {
    let mut seen = std::collections::HashSet::new();
    diags.retain(|d| seen.insert((d.rule.clone(), d.span, d.message.clone(), d.labels.iter().map(|l| l.span).collect::<Vec<_>>())));
}
