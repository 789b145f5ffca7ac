//! Turns the uniformity analysis's reasons into a sentence a GPU programmer
//! can check: why a value differs between threads, traced to its source.

use lockstep_analysis::{Level, Reason, Uniformity};
use lockstep_ir::{Builtin, Function, Module, Root, Value};
use lockstep_source::SourceDb;

/// How a value is shown: its variable name, or its source text.
pub fn show(db: &SourceDb, f: &Function, v: Value) -> String {
    let inst = f.inst(v);
    if let Some(n) = &inst.name {
        return format!("`{n}`");
    }
    let text = db.snippet(inst.span).split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() || text.len() > 60 {
        "a value".to_string()
    } else {
        format!("`{text}`")
    }
}

/// Describes a thread-identity builtin, naming how the source spelled it when
/// that is visible.
fn builtin_phrase(db: &SourceDb, f: &Function, v: Value, b: Builtin) -> String {
    let text = db.snippet(f.inst(v).span);
    let what = match b {
        Builtin::LocalId(_) | Builtin::LocalIndex => "the thread's index within its group",
        Builtin::LaneId => "the thread's lane within its wave",
        Builtin::GroupId(_) => "the group's index in the dispatch",
        Builtin::GroupSize(_) => "the group size",
        Builtin::NumGroups(_) => "the number of groups",
        Builtin::WaveSize => "the wave size",
    };
    // A declaration that binds the builtin through an annotation (`uint3 id : SEMANTIC`)
    // is shown by its annotation; an expression (`threadIdx.x`) as written.
    let spelled = match text.rsplit_once(':') {
        Some((_, tag)) if !tag.trim().is_empty() && tag.trim().chars().all(|c| c.is_alphanumeric() || c == '_') => tag.trim().to_string(),
        _ => text.split_whitespace().collect::<Vec<_>>().join(" "),
    };
    if spelled.is_empty() || spelled.len() > 40 {
        what.to_string()
    } else {
        format!("{what} (`{spelled}`)")
    }
}

/// Explains why `v` is only as uniform as the analysis says, following the
/// chain of reasons to the source of divergence. Unnamed intermediate values
/// are skipped; each named variable on the way gets one clause.
pub fn explain(db: &SourceDb, m: &Module, f: &Function, u: &Uniformity, v: Value) -> String {
    let mut clauses: Vec<String> = Vec::new();
    let mut subject = show(db, f, v);
    let mut cur = v;
    let mut seen = Vec::new();
    let line = |b: lockstep_ir::BlockId| db.location(f.block(b).term_span).0.line;
    while clauses.len() < 6 && !seen.contains(&cur) {
        seen.push(cur);
        match u.reason(cur) {
            Reason::Uniform => break,
            Reason::Operand(o) => {
                if f.inst(o).name.is_some() && show(db, f, o) != subject {
                    clauses.push(format!("{subject} depends on {}", show(db, f, o)));
                    subject = show(db, f, o);
                }
                cur = o;
            }
            Reason::Builtin(b) => {
                clauses.push(format!("{subject} depends on {}", builtin_phrase(db, f, cur, b)));
                break;
            }
            Reason::Atomic => {
                clauses.push(format!("{subject} depends on the old value an atomic operation returned, which is different for each thread"));
                break;
            }
            Reason::Wave(w) => {
                let how = if u.level(cur) == Level::Wave {
                    "which agrees only within one wave, not across the group"
                } else {
                    "which returns a different value on each lane"
                };
                clauses.push(format!("{subject} depends on the wave operation {w:?}, {how}"));
                break;
            }
            Reason::WaveAligned(x) => {
                clauses.push(format!(
                    "{subject} divides {} down to one value per wave: it agrees within a wave but differs between the waves of a group",
                    show(db, f, x)
                ));
                break;
            }
            Reason::LoadIndex(o) => {
                let from = match f.inst(cur).op.mem_ref().map(|r| r.root) {
                    Some(Root::Global(g)) => format!("`{}`", m.global(g).name),
                    Some(Root::Param(p)) => f.params.get(p as usize).map(|p| format!("`{}`", p.name)).unwrap_or_else(|| "memory".into()),
                    Some(Root::Local(l)) => format!("`{}`", f.locals[l.index()].name),
                    _ => "memory".into(),
                };
                let loaded = if show(db, f, cur) == subject { subject.clone() } else { format!("{subject} depends on a value that") };
                clauses.push(format!("{loaded} is loaded from {from} at a location that depends on {}", show(db, f, o)));
                subject = show(db, f, o);
                cur = o;
            }
            Reason::LoadMemory => {
                clauses.push(format!("{subject} is read from memory that other threads may change"));
                break;
            }
            Reason::SyncDependence(b) => {
                let cond = f.block(b).term.condition();
                let cond_text = cond.map(|c| show(db, f, c)).unwrap_or_else(|| "a condition".into());
                // A short-circuit `a || b` is a value chosen by a branch on its own text.
                if cond_text != subject {
                    clauses.push(format!(
                        "{subject} is assigned differently on the paths of the branch on {cond_text} (line {}), which threads take differently",
                        line(b)
                    ));
                }
                match cond {
                    Some(c) => {
                        subject = show(db, f, c);
                        cur = c;
                    }
                    None => break,
                }
            }
            Reason::TemporalDivergence(h) => {
                clauses.push(format!(
                    "{subject} is used after the loop at line {}, which threads leave after different numbers of iterations",
                    line(h)
                ));
                break;
            }
        }
    }
    clauses.join("; ")
}
