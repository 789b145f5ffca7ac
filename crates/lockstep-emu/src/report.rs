//! Turning raw findings into diagnostics: both threads as `[group][local]`
//! coordinates, both lines, loop iterations, and repeat counts.

use crate::detect::{Event, Hazard, Place, Rec, Who, NONE};
use crate::layout::Alloc;
use crate::program::{Program, Trap};
use lockstep_diag::{Diagnostic, Severity};
use lockstep_ir::{Callee, Function, Module, Op};
use lockstep_source::{SourceDb, Span};

pub(crate) struct Namer<'a> {
    pub db: &'a SourceDb,
    pub module: &'a Module,
    pub func: &'a Function,
    pub prog: &'a Program,
    pub allocs: &'a [Alloc],
    pub group_size: [u32; 3],
    pub num_groups: [u32; 3],
    pub max_steps: u64,
    /// Block of each instruction of `func`.
    pub inst_block: Vec<Option<lockstep_ir::BlockId>>,
}

fn coords(l: u32, dims: [u32; 3]) -> [u32; 3] {
    [l % dims[0], (l / dims[0]) % dims[1], l / (dims[0] * dims[1])]
}

fn fmt3(c: [u32; 3]) -> String {
    format!("[{},{},{}]", c[0], c[1], c[2])
}

impl Namer<'_> {
    fn n_files(&self) -> u32 {
        self.db.files().count() as u32
    }

    pub fn line(&self, span: Span) -> String {
        if span.file.0 < self.n_files() {
            format!("line {}", self.db.location(span).0.line)
        } else {
            format!("byte {}", span.lo)
        }
    }

    pub fn thread(&self, group: u32, thread: u32) -> String {
        format!("{}{}", fmt3(coords(group, self.num_groups)), fmt3(coords(thread, self.group_size)))
    }

    /// A range of threads of one group, compact when it runs along x.
    fn threads(&self, group: u32, (a, b): (u32, u32)) -> String {
        let g = fmt3(coords(group, self.num_groups));
        let (ca, cb) = (coords(a, self.group_size), coords(b, self.group_size));
        if a == b {
            format!("{g}{}", fmt3(ca))
        } else if ca[1] == cb[1] && ca[2] == cb[2] {
            format!("{g}[{}..{},{},{}]", ca[0], cb[0], ca[1], ca[2])
        } else {
            format!("{g}{}..{}", fmt3(ca), fmt3(cb))
        }
    }

    fn inst_span(&self, inst: u32) -> Span {
        self.func.insts.get(inst as usize).map(|i| i.span).unwrap_or(self.func.span)
    }

    fn cell(&self, alloc: u32, cell: u64) -> String {
        let a = &self.allocs[alloc as usize];
        match a.global.map(|g| self.module.global(g)) {
            // Undimensioned buffers still have elements: name them by index.
            Some(g) if g.dims.is_empty() && a.len > g.cells_per_elem.max(1) as u64 => {
                lockstep_ir::Global { dims: vec![0], ..g.clone() }.describe_cell(cell)
            }
            Some(g) => g.describe_cell(cell),
            None => format!("{}[{cell}]", a.name),
        }
    }

    fn loops_of(&self, inst: u32) -> &[u32] {
        match self.inst_block.get(inst as usize) {
            Some(Some(b)) => &self.prog.block_loops[b.index()],
            _ => &[],
        }
    }

    /// " in iteration N" of `loop_id` for an access, when it is one of the
    /// two innermost loops around it (1-based, counting back edges taken).
    fn iteration(&self, rec: &Rec, loop_id: Option<u32>) -> String {
        let Some(l) = loop_id else { return String::new() };
        let around = self.loops_of(rec.inst);
        let n = around.len();
        let iter = if n >= 1 && around[n - 1] == l {
            rec.iter
        } else if n >= 2 && around[n - 2] == l {
            rec.outer_iter
        } else {
            NONE
        };
        if iter == NONE {
            String::new()
        } else {
            format!(" in iteration {}", iter as u64 + 1)
        }
    }

    /// The innermost loop around both instructions (the one a hazard between them is carried by).
    fn common_loop(&self, a: u32, b: u32) -> Option<u32> {
        let (la, lb) = (self.loops_of(a), self.loops_of(b));
        la.iter().zip(lb).take_while(|(x, y)| x == y).last().map(|(x, _)| *x)
    }

    /// "thread [g][l] writes tile[0][1] (line 31) in iteration 3"
    fn access(&self, who: &Who, what: &str, loop_id: Option<u32>) -> String {
        format!(
            "thread {} {} {what} ({}){}",
            self.thread(who.group, who.rec.thread),
            who.kind.verb(),
            self.line(self.inst_span(who.rec.inst)),
            self.iteration(&who.rec, loop_id)
        )
    }

    fn earlier(&self, who: &Who, loop_id: Option<u32>) -> String {
        format!(
            "thread {} {} it ({}){}",
            self.thread(who.group, who.rec.thread),
            who.kind.past(),
            self.line(self.inst_span(who.rec.inst)),
            self.iteration(&who.rec, loop_id)
        )
    }

    pub fn diagnostic(&self, event: &Event, count: u64, cross_group: bool) -> Diagnostic {
        let mut d = match event {
            Event::Hazard { hazard, device, alloc, cell, later, earlier } => {
                let what = self.cell(*alloc, *cell);
                let rule = match (device, hazard) {
                    (true, _) => "device-memory-race",
                    (false, Hazard::Raw) => "groupshared-write-then-no-barrier-read",
                    (false, Hazard::War) => "groupshared-read-then-no-barrier-write",
                    (false, Hazard::Waw) => "groupshared-write-write-race",
                    (false, Hazard::Uninit | Hazard::UnsyncedFirst) => "groupshared-first-read-without-barrier",
                };
                let span = self.inst_span(later.rec.inst);
                let message = match earlier {
                    None => {
                        let inner = self.loops_of(later.rec.inst).last().copied();
                        format!("{}, which no thread has written", self.access(later, &what, inner))
                    }
                    Some(e) => {
                        let gap = if cross_group { "with no device-scope ordering between their groups" } else { "with no barrier in between" };
                        let l = self.common_loop(later.rec.inst, e.rec.inst);
                        let mut m = format!("{} while {} {gap}", self.access(later, &what, l), self.earlier(e, l));
                        if *hazard == Hazard::UnsyncedFirst {
                            m.push_str("; the cell held no earlier value");
                        }
                        m
                    }
                };
                let mut d = Diagnostic::new(rule, Severity::Error, span, message).with_primary_label(format!("{} here", later.kind.verb()));
                if let Some(e) = earlier {
                    d = d.with_label(
                        self.inst_span(e.rec.inst),
                        format!("thread {} {} it here", self.thread(e.group, e.rec.thread), e.kind.past()),
                    );
                }
                d
            }
            Event::OutOfBounds { alloc, cell, who } => {
                let a = &self.allocs[*alloc as usize];
                let span = self.inst_span(who.rec.inst);
                Diagnostic::new(
                    "out-of-bounds",
                    Severity::Error,
                    span,
                    format!(
                        "thread {} {} `{}` at cell {cell}, outside its {} cells ({}){}",
                        self.thread(who.group, who.rec.thread),
                        who.kind.verb(),
                        a.name,
                        a.len,
                        self.line(span),
                        self.iteration(&who.rec, self.loops_of(who.rec.inst).last().copied())
                    ),
                )
                .with_primary_label("out of bounds")
            }
            Event::BadPointer { who } => {
                let span = self.inst_span(who.rec.inst);
                Diagnostic::new(
                    "out-of-bounds",
                    Severity::Error,
                    span,
                    format!("thread {} {} through a null or invalid pointer ({})", self.thread(who.group, who.rec.thread), who.kind.verb(), self.line(span)),
                )
                .with_primary_label("no memory here")
            }
            Event::ReadOnlyWrite { alloc, cell, who } => {
                let span = self.inst_span(who.rec.inst);
                Diagnostic::new(
                    "write-to-read-only",
                    Severity::Error,
                    span,
                    format!("thread {} {} read-only {} ({})", self.thread(who.group, who.rec.thread), who.kind.verb(), self.cell(*alloc, *cell), self.line(span)),
                )
                .with_primary_label("this memory is read-only; the write was dropped")
            }
            Event::Divergence { group, barrier_pc, reached, total, others } => {
                let span = self.prog.code_span[*barrier_pc as usize];
                let mut d = Diagnostic::new(
                    "barrier-in-divergent-cf",
                    Severity::Error,
                    span,
                    format!("only {reached} of {total} threads of group {} reached this barrier", fmt3(coords(*group, self.num_groups))),
                )
                .with_primary_label(format!("{reached} threads wait here"));
                for (place, ranges) in others {
                    let n: u32 = ranges.iter().map(|(a, b)| b - a + 1).sum();
                    let mut list: Vec<String> = ranges.iter().take(6).map(|&r| self.threads(*group, r)).collect();
                    if ranges.len() > 6 {
                        list.push(format!("and {} more ranges", ranges.len() - 6));
                    }
                    let (pc, state) = match place {
                        Place::Finished(pc) => (*pc, "finished"),
                        Place::Barrier(pc) => (*pc, "wait at another barrier"),
                    };
                    let at = self.prog.code_span[pc as usize];
                    d = d
                        .with_label(at, format!("{n} threads {state} here"))
                        .with_note(format!("{n} threads {state} ({}) without reaching it: {}", self.line(at), list.join(", ")));
                }
                d
            }
            Event::Runaway { group, thread, pc, loop_id, steps } => {
                let here = self.prog.code_span[*pc as usize];
                let span = loop_id.map(|l| self.prog.loops[l as usize].span).unwrap_or(here);
                Diagnostic::new(
                    "runaway-loop",
                    Severity::Error,
                    span,
                    format!(
                        "thread {} ran {steps} steps without finishing; stopped in the loop at {} (the limit is --max-steps {})",
                        self.thread(*group, *thread),
                        self.line(span),
                        self.max_steps
                    ),
                )
                .with_primary_label("this loop did not end")
                .with_label(here, "the thread was here when stopped")
            }
            Event::Trap { group, thread, pc, trap } => {
                let span = self.prog.code_span[*pc as usize];
                let inst = self.prog.code_inst[*pc as usize];
                let what = match (trap, self.func.insts.get(inst as usize).map(|i| &i.op)) {
                    (Trap::OpaqueCall, Some(Op::Call(Callee::Opaque(name), _))) => format!("called `{name}`, whose body is not available"),
                    (Trap::OpaqueCall, Some(Op::Call(Callee::Unmodelled(what) | Callee::UnknownValue(what) | Callee::PointerView(what), _))) => format!("reached {what}, which lockstep does not model"),
                    (Trap::OpaqueCall, _) => "called a function whose body is not available".to_string(),
                    (Trap::Unreachable, _) => "reached code that should be unreachable".to_string(),
                };
                Diagnostic::new("emulation-error", Severity::Error, span, format!("thread {} {what}; the run stopped", self.thread(*group, *thread)))
                    .with_primary_label("cannot execute this")
            }
        };
        if count > 1 {
            let what = match event {
                Event::Divergence { .. } => "times",
                _ => "times by other threads or iterations",
            };
            d = d.with_note(format!("seen {} more {what}", count - 1));
        }
        let primary = match event {
            Event::Hazard { later: who, .. } | Event::OutOfBounds { who, .. } | Event::BadPointer { who } | Event::ReadOnlyWrite { who, .. } => {
                Some(who.rec.inst)
            }
            Event::Divergence { barrier_pc: pc, .. } | Event::Runaway { pc, .. } | Event::Trap { pc, .. } => {
                Some(self.prog.code_inst[*pc as usize]).filter(|&v| v != crate::program::NO_INST)
            }
        };
        if let Some(v) = primary.filter(|&v| (v as usize) < self.func.insts.len()) {
            // Name the helper functions the access was inlined from, innermost first.
            for site in self.func.inline_chain(lockstep_ir::Value(v)) {
                d = d.with_note(format!("this is in `{}`, called at {}", site.callee, self.line(site.call_span)));
            }
        }
        d.with_macro_notes(self.db)
    }
}
