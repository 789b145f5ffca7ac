//! Races between barriers: turns the findings of `lockstep-race` into
//! diagnostics that name both accesses, the hazard and a witness pair of
//! threads, and say which barrier, fence or qualifier is missing.

use crate::KernelFacts;
use lockstep_diag::{Diagnostic, Severity};
use lockstep_ir::{Function, Module, Value};
use lockstep_race::intervals::{AccessKind, Alloc};
use lockstep_race::sym::Witness;
use lockstep_race::{At, Finding, Hazard, Rule, MANY_ITERATIONS};
use lockstep_source::SourceDb;

pub fn check(db: &SourceDb, k: &KernelFacts, oracle: &lockstep_race::ConflictOracle, out: &mut Vec<Diagnostic>) {
    for finding in lockstep_race::analyze_kernel(k.module, oracle.kernel()).0 {
        out.push(report(db, k.module, &k.func, &finding));
    }
}

fn alloc_name(m: &Module, f: &Function, a: Alloc) -> String {
    match a {
        Alloc::Global(g) => m.global(g).name.clone(),
        Alloc::Param(p) => f.params.get(p as usize).map_or_else(|| format!("parameter {p}"), |p| p.name.clone()),
        Alloc::Unknown => "memory reached through a pointer".into(),
    }
}

fn cell_name(m: &Module, f: &Function, a: Alloc, w: Option<&Witness>) -> Option<String> {
    let cell = w?.cell?;
    let cell = u64::try_from(cell).ok()?;
    Some(match a {
        Alloc::Global(g) => {
            let global = m.global(g);
            if global.dims.is_empty() && global.len != Some(global.cells_per_elem.max(1) as u64) {
                // An unsized buffer: still show the element index.
                let mut indexed = global.clone();
                indexed.dims = vec![0];
                indexed.describe_cell(cell)
            } else {
                global.describe_cell(cell)
            }
        }
        Alloc::Param(_) => format!("{}[{cell}]", alloc_name(m, f, a)),
        Alloc::Unknown => return None,
    })
}

fn verb(k: AccessKind) -> &'static str {
    match k {
        AccessKind::Read => "reads",
        AccessKind::Write => "writes",
        AccessKind::Atomic => "atomically updates",
    }
}

fn noun(k: AccessKind) -> &'static str {
    match k {
        AccessKind::Read => "read",
        AccessKind::Write => "write",
        AccessKind::Atomic => "atomic update",
    }
}

fn tuple(t: [i64; 3]) -> String {
    format!("({},{},{})", t[0], t[1], t[2])
}

fn iteration(at: &At) -> &'static str {
    match at.iteration {
        Some(0) => " in iteration k",
        Some(1) => " in iteration k+1",
        Some(MANY_ITERATIONS) => " in a later iteration",
        _ => "",
    }
}

fn line(db: &SourceDb, f: &Function, v: Value) -> u32 {
    db.location(f.inst(v).span).0.line
}

/// "thread (1,0,0) writes `tile[0][1]` (line 31) in iteration k+1 while thread (3,0,0) reads it (line 38) in iteration k"
fn witness_sentence(db: &SourceDb, m: &Module, f: &Function, x: &Finding, e: &At, w: &Witness) -> String {
    let who = |i: usize| match w.groups {
        Some(g) => format!("thread {} of group {}", tuple(w.threads[i]), tuple(g[i])),
        None => format!("thread {}", tuple(w.threads[i])),
    };
    let cell = cell_name(m, f, x.alloc, Some(w)).map_or_else(|| format!("an element of `{}`", alloc_name(m, f, x.alloc)), |c| format!("`{c}`"));
    format!(
        "{} {} {cell} (line {}){} while {} {} it (line {}){}",
        who(0),
        verb(x.later.kind),
        line(db, f, x.later.inst),
        iteration(&x.later),
        who(1),
        verb(e.kind),
        line(db, f, e.inst),
        iteration(e)
    )
}

fn barrier_name(m: &Module) -> &'static str {
    if m.collective_fences {
        "GroupMemoryBarrierWithGroupSync()"
    } else {
        "__syncthreads()"
    }
}

fn report(db: &SourceDb, m: &Module, f: &Function, x: &Finding) -> Diagnostic {
    let name = alloc_name(m, f, x.alloc);
    let later_span = f.inst(x.later.inst).span;
    let hz = x.hazard.map(Hazard::short).unwrap_or("");
    let sentence = match (&x.earlier, &x.witness) {
        (Some(e), Some(w)) => witness_sentence(db, m, f, x, e, w),
        _ => String::new(),
    };
    let severity = if x.same_value { Severity::Warning } else { Severity::Error };
    let hlsl = m.collective_fences;
    let (span, message) = match x.rule {
        Rule::FenceWithoutSync => {
            let fence = x.fence.unwrap_or(x.later.inst);
            let text = db.snippet(f.inst(fence).span);
            let fname = text.split('(').next().unwrap_or(text).trim().to_string();
            (f.inst(fence).span, format!("`{fname}` only orders memory, it does not wait for other threads: it fails to order this {hz} exchange on `{name}`: {sentence}"))
        }
        Rule::SharedFirstRead if x.earlier.is_none() => {
            (later_span, format!("`{name}` is read before any barrier, and no thread has written it yet in this dispatch"))
        }
        Rule::SharedFirstRead => (later_span, format!("`{name}` is read before any barrier while another thread writes it in the same interval ({hz}): {sentence}")),
        Rule::RwBufferNotCoherent => (
            later_span,
            format!("`{name}` is written and then read by a thread of another group in the same dispatch, with no `globallycoherent` and no device-scope barrier between ({hz}): {sentence}"),
        ),
        Rule::GlobalNoThreadfence => (
            later_span,
            format!("global memory `{name}` is written by one block and read by another with no `__threadfence()` between ({hz}): {sentence}"),
        ),
        Rule::DeviceRace => (later_span, format!("{hz} race on device memory `{name}`: {sentence}")),
        Rule::SharedRaw | Rule::SharedWar | Rule::SharedWaw => (later_span, format!("{hz} race on `{name}` with no barrier between: {sentence}")),
    };
    let mut d = Diagnostic::new(x.rule.id(), severity, span, message);
    d = if x.rule == Rule::FenceWithoutSync {
        d.with_primary_label("a fence, not a barrier")
            .with_label(later_span, format!("this {} by one thread is not ordered by the fence", noun(x.later.kind)))
    } else {
        d.with_primary_label(format!("this {}", noun(x.later.kind)))
    };
    if let Some(e) = &x.earlier {
        let what = if e.inst == x.later.inst { "also run by another thread" } else { "conflicts with this access by another thread" };
        d = d.with_label(f.inst(e.inst).span, format!("{} {what}", noun(e.kind)));
    }
    match x.rule {
        Rule::FenceWithoutSync => {
            d = d.with_note(format!(
                "a fence makes a thread's earlier writes visible before its later ones, but other threads do not wait at it; use {} so every thread arrives before any continues",
                barrier_name(m)
            ));
        }
        Rule::SharedFirstRead if x.earlier.is_none() => {
            d = d.with_note("group-shared memory starts undefined in every dispatch; write it (or have one thread write it) and put a barrier before the first read");
        }
        Rule::RwBufferNotCoherent => {
            if let Alloc::Global(g) = x.alloc {
                d = d.with_label(m.global(g).span, "declared without `globallycoherent`");
            }
            d = d.with_note(format!(
                "missing: the `globallycoherent` qualifier on `{name}`{}; without them the reading group may see a stale value from its own cache",
                if x.fenced { "" } else { ", or a `DeviceMemoryBarrier()` between the write and the read" }
            ));
            d = d.with_note("or split the work into two dispatches with a UAV barrier between them");
        }
        Rule::GlobalNoThreadfence => {
            d = d.with_note("missing: `__threadfence()` after the write and before the atomic that signals the other block; without it the reading block may see the signal before the data");
        }
        Rule::DeviceRace => {
            let across = x.witness.as_ref().is_some_and(|w| w.groups.is_some());
            if across && x.coherent {
                d = d.with_note(format!("`{name}` is coherent, which makes writes visible to other groups but does not order them"));
            }
            d = d.with_note(if across {
                "threads of different groups are not ordered by any barrier inside one dispatch; give each thread its own cells, use atomics, or split the dispatch".to_string()
            } else if hlsl {
                "no barrier that orders device memory (`DeviceMemoryBarrierWithGroupSync()` or `AllMemoryBarrierWithGroupSync()`) is between these accesses".to_string()
            } else {
                "no `__syncthreads()` is between these accesses".to_string()
            });
        }
        _ => {
            let carried = x.later.iteration.is_some();
            d = d.with_note(if carried {
                format!("the accesses meet across the loop's back edge: a thread that starts the next iteration reaches this access while slower threads are still in the previous one; put {} at the end of the loop body", barrier_name(m))
            } else {
                format!("no {} is between these accesses, so the threads are not ordered", barrier_name(m))
            });
        }
    }
    if x.same_value {
        d = d.with_note("every thread stores the same group-uniform value, so the outcome does not depend on which write lands last; it is still a data race in the memory model");
    }
    if x.witness.as_ref().is_some_and(|w| !w.exact) {
        d = d.with_note("the indices could not be compared exactly; lockstep assumes they may overlap, and the threads shown are one candidate");
    }
    d.with_macro_notes(db)
}
