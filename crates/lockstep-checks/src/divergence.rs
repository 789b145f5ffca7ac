//! `barrier-in-divergent-cf`: a barrier that not every thread of its scope
//! reaches, because of a non-uniform branch, an early exit taken by some
//! threads, or a loop whose trip count differs between threads.

use crate::explain::{explain, show};
use crate::KernelFacts;
use lockstep_analysis::{Level, Uniformity};
use lockstep_diag::{Diagnostic, Severity};
use lockstep_ir::{BlockId, ExitKind, Op, Scope, Value};
use lockstep_source::SourceDb;

pub const RULE: &str = "barrier-in-divergent-cf";

/// The uniformity a barrier needs from the control flow that reaches it, and
/// how severe it is when that is missing (None: not checked).
fn requirement(b: &lockstep_ir::Barrier, collective_fences: bool) -> Option<(Level, Severity)> {
    match b.exec {
        Scope::Group => Some((Level::Group, Severity::Error)),
        Scope::Device | Scope::System => Some((Level::Grid, Severity::Error)),
        // A wave barrier (`__syncwarp(mask)`) may legally run in divergent code with a mask.
        Scope::Wave => None,
        Scope::None if collective_fences && b.mem >= Scope::Group => Some((Level::Group, Severity::Warning)),
        Scope::None => None,
    }
}

/// Reports every divergent barrier; returns them (the dead-barrier engine leaves them alone).
pub fn check(db: &SourceDb, k: &KernelFacts, out: &mut Vec<Diagnostic>) -> Vec<Value> {
    let f = &k.func;
    let mut divergent = Vec::new();
    // A language that judges barriers by its own uniformity rules (WGSL)
    // rejects some that lockstep can prove every thread reaches.
    let by_language = f.entry.as_ref().is_some_and(|e| e.barriers_need_language_uniformity).then(|| Uniformity::by_language_rules(f, &k.cfg));
    let mut found: Vec<Diagnostic> = Vec::new();
    // Per branch that made a barrier divergent, the finding's severity and
    // whether it is a fence: its finding in `found`.
    let mut by_cause: Vec<((BlockId, Severity, bool), usize)> = Vec::new();
    for b in f.block_ids() {
        if !k.cfg.is_reachable(b) {
            continue;
        }
        for &v in &f.block(b).insts {
            let Op::Barrier(barrier, _) = &f.inst(v).op else { continue };
            let Some((needed, severity)) = requirement(barrier, k.module.collective_fences) else { continue };
            if k.uniformity.block_level(b) >= needed {
                if let Some(strict) = by_language.as_ref().filter(|u| u.block_level(b) < needed) {
                    let cause = cause(&k.cfg.control_deps_transitive(b), strict, needed);
                    let d = report(db, k, strict, (b, cause), v, needed, severity, barrier.is_fence_only(), false).with_note(
                        "the language's own uniformity analysis rejects this barrier (WGSL, section \"Uniformity Analysis\"): to it, `local_invocation_id` and values read from workgroup or read_write storage memory are non-uniform (use workgroupUniformLoad), whatever they hold; Tint refuses to compile the shader, naga does not check this yet",
                    );
                    out.push(d);
                    divergent.push(v);
                }
                continue;
            }
            // Divergent only along an axis the kernel treats as one thread
            // wide (rows picked by global ids): not reported, but still never removed.
            divergent.push(v);
            if k.likely_uniformity.as_ref().is_some_and(|u| u.block_level(b) >= needed) {
                continue;
            }
            // Explained by what differs between threads of a likely group.
            let explained_by = k.likely_uniformity.as_ref().unwrap_or(&k.uniformity);
            let deps = k.cfg.control_deps_transitive(b);
            let cause = cause(&deps, explained_by, needed);
            let vote = group_vote(k, explained_by, &deps, needed);
            let fence = barrier.is_fence_only();
            // One finding per defect: a later barrier the same branch keeps
            // some threads from is a label of the first one's report, when
            // the two would say the same (an unproven report never hides a
            // proven one, nor a fence's a barrier's).
            let key = cause.map(|c| (c, if vote.is_some() { Severity::Warning } else { severity }, fence));
            if let Some(&(_, first)) = key.and_then(|key| by_cause.iter().find(|(x, _)| *x == key)) {
                let d = &mut found[first];
                d.occurrences += 1;
                let label = if fence { "the same threads skip this fence too" } else { "the same threads skip this barrier too" };
                d.labels.push(lockstep_diag::Label { span: f.inst(v).span, message: label.into() });
                continue;
            }
            if let Some(key) = key {
                by_cause.push((key, found.len()));
            }
            let mut d = report(db, k, explained_by, (b, cause), v, needed, severity, fence, vote.is_some());
            if let Some((load, collective)) = vote {
                let line = |x: Value| db.location(f.inst(x).span).0.line;
                d = d.with_note(format!(
                    "not proven: the condition also reads {} (line {}), where a wave collective of the very values that make it differ was stored ({}, line {}); such a group vote may send every thread the same way, which lockstep can neither prove nor refute",
                    show(db, f, load),
                    line(load),
                    show(db, f, collective),
                    line(collective)
                ));
            }
            found.push(d);
        }
    }
    for mut d in found {
        if d.occurrences > 1 {
            let more = d.occurrences - 1;
            d = d.with_note(format!("the same condition keeps some threads from {more} more barrier{} (labelled)", if more == 1 { "" } else { "s" }));
        }
        out.push(d);
    }
    divergent
}

/// The nearest branch, of those a block depends on (`deps`), that makes it
/// divergent at the `needed` level.
fn cause(deps: &[BlockId], uniformity: &Uniformity, needed: Level) -> Option<BlockId> {
    deps.iter().copied().find(|&c| uniformity.branch_level(c) < needed)
}

/// The group vote every branch that makes `block` divergent takes part in
/// (see `Uniformity::vote_through_memory`): its first load of the votes and
/// the collective. None when some such branch differs for another reason.
fn group_vote(k: &KernelFacts, uniformity: &Uniformity, deps: &[BlockId], needed: Level) -> Option<(Value, Value)> {
    let mut first = None;
    for &c in deps {
        if uniformity.branch_level(c) >= needed {
            continue;
        }
        let cond = k.func.block(c).term.condition()?;
        let vote = uniformity.vote_through_memory(&k.func, &k.cfg, cond)?;
        first.get_or_insert(vote);
    }
    first
}

#[allow(clippy::too_many_arguments)]
fn report(db: &SourceDb, k: &KernelFacts, uniformity: &Uniformity, (block, cause): (BlockId, Option<BlockId>), barrier: Value, needed: Level, severity: Severity, fence: bool, unproven: bool) -> Diagnostic {
    let f = &k.func;
    let span = f.inst(barrier).span;
    let name = barrier_name(db.snippet(span));
    let scope = if needed == Level::Grid { "dispatch" } else { "group" };
    let message = match (fence, unproven) {
        (true, false) => format!("fence `{name}` is executed by only some threads of the {scope}"),
        (true, true) => format!("fence `{name}` may be executed by only some threads of the {scope}"),
        (false, false) => format!("barrier `{name}` is not reached by every thread of the {scope}"),
        (false, true) => format!("barrier `{name}` may not be reached by every thread of the {scope}"),
    };
    // Not proven: a warning, whatever the barrier's scope.
    let severity = if unproven { Severity::Warning } else { severity };
    let mut d = Diagnostic::new(RULE, severity, span, message)
        .with_primary_label(if fence { "only some threads execute this fence" } else { "threads that skip this barrier leave the others waiting" });

    if let Some(c) = cause {
        let cond = f.block(c).term.condition().expect("a branch has a condition");
        let cond_span = f.block(c).cond_span.unwrap_or(f.inst(cond).span);
        let in_loop = k.cfg.innermost_loop(block).is_some_and(|l| l.exiting.contains(&c) && l.blocks.contains(&block));
        let what = if in_loop { "this loop condition" } else { "this condition" };
        let level = uniformity.branch_level(c);
        d = d.with_label(cond_span, format!("{what} {}", level.describe()));
        // Early exits taken under that condition, before the barrier: blocks the
        // branch reaches without passing the barrier, which leave the structured
        // flow and come earlier in program order.
        let avoiding = reachable_avoiding(k, c, block);
        let mut exits = 0;
        for x in f.block_ids() {
            let Some(kind) = f.block(x).exit else { continue };
            if exits >= 3 || x.index() >= block.index() || !avoiding[x.index()] {
                continue;
            }
            // A `return` from an inlined helper only leaves the helper: a thread
            // that comes back to the barrier from it was not kept away by it.
            if matches!(kind, ExitKind::Return | ExitKind::Discard) && reaches(k, x, block) {
                continue;
            }
            let phrase = match kind {
                ExitKind::Return => "threads that take this `return` never reach the barrier",
                ExitKind::Discard => "threads that `discard` here never reach the barrier",
                ExitKind::Break => "threads that take this `break` leave the loop without reaching the barrier",
                ExitKind::Continue => "threads that take this `continue` skip the barrier in that iteration",
            };
            d = d.with_label(f.block(x).term_span, phrase);
            exits += 1;
        }
        let why = explain(db, k.module, f, uniformity, cond);
        if !why.is_empty() {
            d = d.with_note(format!("{} {}: {why}", show(db, f, cond), level.describe()));
        }
        if in_loop {
            d = d.with_note("the loop runs a different number of times in different threads, so the barrier is reached a different number of times");
        }
    }
    // A barrier in a helper: name every call site it was inlined through.
    for site in f.inline_chain(barrier) {
        d = d.with_label(site.call_span, format!("the barrier is inside `{}`, called here", site.callee));
    }
    if fence {
        d = d.with_note(
            "a fence-only barrier makes the writes of the threads that execute it visible; threads that skip it give no such guarantee, so others may read stale shared memory",
        );
    } else {
        d = d.with_note(format!(
            "a {scope} barrier waits until every thread of the {scope} arrives; if some never do, the {scope} hangs or the behaviour is undefined"
        ));
    }
    d.with_macro_notes(db)
}

/// Whether `to` is reachable from the successors of `from`.
fn reaches(k: &KernelFacts, from: BlockId, to: BlockId) -> bool {
    let mut seen = vec![false; k.func.blocks.len()];
    let mut stack: Vec<BlockId> = k.cfg.succs[from.index()].clone();
    while let Some(x) = stack.pop() {
        if x == to {
            return true;
        }
        if !std::mem::replace(&mut seen[x.index()], true) {
            stack.extend(k.cfg.succs[x.index()].iter().copied());
        }
    }
    false
}

/// Blocks reachable from the successors of `from` without passing `avoid`.
fn reachable_avoiding(k: &KernelFacts, from: BlockId, avoid: BlockId) -> Vec<bool> {
    let mut seen = vec![false; k.func.blocks.len()];
    let mut stack: Vec<BlockId> = k.cfg.succs[from.index()].clone();
    while let Some(x) = stack.pop() {
        if x == avoid || std::mem::replace(&mut seen[x.index()], true) {
            continue;
        }
        stack.extend(k.cfg.succs[x.index()].iter().copied());
    }
    seen
}

/// The callee text of a barrier call: `GroupMemoryBarrierWithGroupSync();` →
/// `GroupMemoryBarrierWithGroupSync`, `cg::this_thread_block().sync()` →
/// `cg::this_thread_block().sync`.
fn barrier_name(text: &str) -> String {
    let t = text.trim().trim_end_matches(';').trim_end();
    let mut name = t;
    if t.ends_with(')') {
        let mut depth = 0i32;
        for (i, c) in t.char_indices().rev() {
            match c {
                ')' => depth += 1,
                '(' => {
                    depth -= 1;
                    if depth == 0 {
                        name = t[..i].trim_end();
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    if name.is_empty() {
        "barrier".into()
    } else {
        name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::barrier_name;

    #[test]
    fn barrier_names_drop_only_the_final_arguments() {
        assert_eq!(barrier_name("GroupMemoryBarrierWithGroupSync();"), "GroupMemoryBarrierWithGroupSync");
        assert_eq!(barrier_name("cg::this_thread_block().sync()"), "cg::this_thread_block().sync");
        assert_eq!(barrier_name("__syncthreads_count(p > (1))"), "__syncthreads_count");
        assert_eq!(barrier_name("SYNC_IF(li < 4)"), "SYNC_IF");
        assert_eq!(barrier_name(""), "barrier");
    }
}
