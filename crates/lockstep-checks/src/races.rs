//! Races between barriers: turns the findings of `lockstep-race` into
//! diagnostics that name both accesses, the hazard and a witness pair of
//! threads, and say which barrier, fence or qualifier is missing.

use crate::KernelFacts;
use lockstep_diag::{Diagnostic, Severity};
use lockstep_ir::{BinOp, Callee, Function, Module, Op, Value};
use lockstep_race::intervals::{AccessKind, Alloc};
use lockstep_race::sym::Witness;
use lockstep_race::{At, Finding, Hazard, Rule, MANY_ITERATIONS};
use lockstep_source::SourceDb;
use std::collections::BTreeSet;

/// Rule ids of the quieter classes a race finding can fall into.
pub const POSSIBLE_RACE: &str = "possible-race";
pub const BENIGN_RACE: &str = "benign-race";
pub const SHARED_READ_UNINITIALIZED: &str = "shared-read-uninitialized";
pub const WARP_SYNCHRONOUS_RACE: &str = "warp-synchronous-race";

/// One finding per defect across classes: where a race between two lines
/// is an error (for one pair of threads, one instantiation), the quieter
/// reports of the same lines (possible, warp-synchronous, benign; other
/// pairs or instantiations) say nothing more and go.
pub fn drop_reports_of_proven_races(diags: &mut Vec<Diagnostic>) {
    let lines = |d: &Diagnostic| (d.span, d.labels.iter().map(|l| l.span).collect::<Vec<_>>());
    let proven: std::collections::HashSet<_> =
        diags.iter().filter(|d| d.severity == Severity::Error && Rule::ALL.iter().any(|r| r.id() == d.rule)).map(lines).collect();
    if proven.is_empty() {
        return;
    }
    diags.retain(|d| !([POSSIBLE_RACE, WARP_SYNCHRONOUS_RACE, BENIGN_RACE].contains(&d.rule.as_str()) && proven.contains(&lines(d))));
}

/// Reports the races of one kernel, stopping when the thread's CPU time reaches `deadline`.
pub fn check(db: &SourceDb, k: &KernelFacts, oracle: &lockstep_race::ConflictOracle, options: &crate::CheckOptions, deadline: std::time::Duration, out: &mut Vec<Diagnostic>) {
    let (findings, stats) = lockstep_race::analyze_kernel_until(k.module, oracle.kernel(), Some(deadline));
    if let Some(stopped) = stats.stopped {
        let why = match stopped {
            lockstep_race::Stopped::Deadline => format!("the file's time for checking ({} s of CPU) is spent", lockstep_race::FILE_CHECK_TIME.as_secs_f64()),
            lockstep_race::Stopped::TooManyPaths => "its loops make too many ways between barriers to list (deep nests, or many loops that may run no iteration)".to_string(),
        };
        out.push(
            Diagnostic::new("kernel-skipped", Severity::Warning, k.func.span, format!("the race analysis of `{}` stopped: {why}", k.func.name))
            .with_primary_label("not every pair of accesses was examined")
            .with_note("races between the accesses examined after that point may be missing; barriers, divergence and barrier removal were checked in full"),
        );
    }
    // Findings of one class and hazard on one allocation that share a line
    // are one finding: unrolled stores (`dst[idx] = c.s0; idx += m; …`) or
    // the steps of an unrolled warp-synchronous reduction otherwise give one
    // report per pair of lines for what is one defect.
    // (class, allocation, hazard), the lines seen, the finding kept and its
    // lines (findings on those very lines, other elements of one access, are
    // counted as copies of it instead).
    type Group = ((String, Alloc, Option<Hazard>), BTreeSet<u32>, usize, Vec<u32>);
    let mut groups: Vec<Group> = Vec::new();
    // Per finding kept: the other lines, and whether its memory is a device buffer.
    let mut more_lines: Vec<(BTreeSet<u32>, bool)> = Vec::new();
    let first = out.len();
    for finding in findings {
        let d = report(db, k.module, &k.func, oracle.kernel(), &finding);
        let shown = match d.rule.as_str() {
            POSSIBLE_RACE => options.include_unproven,
            BENIGN_RACE => options.include_benign,
            _ => true,
        };
        if !shown {
            continue;
        }
        if finding.earlier.is_some() {
            let key = (d.rule.clone(), finding.alloc, finding.hazard);
            let own: Vec<u32> = std::iter::once(d.span).chain(d.labels.iter().map(|l| l.span)).map(|sp| db.location(sp).0.line).collect();
            let lines: BTreeSet<u32> = own.iter().copied().collect();
            if let Some((_, seen, kept, _)) = groups.iter_mut().find(|(k, seen, _, kept_lines)| *k == key && !seen.is_disjoint(&lines) && *kept_lines != own) {
                more_lines[*kept].0.extend(lines.difference(seen));
                seen.extend(lines);
                continue;
            }
            groups.push((key, lines, more_lines.len(), own));
        }
        more_lines.push((BTreeSet::new(), in_device_memory(finding.rule)));
        out.push(d);
    }
    for (d, (lines, device)) in out[first..].iter_mut().zip(more_lines) {
        if !lines.is_empty() {
            let mut list: Vec<String> = lines.iter().take(MORE_LINES_SHOWN).map(u32::to_string).collect();
            if lines.len() > MORE_LINES_SHOWN {
                list.push(format!("and {} more", lines.len() - MORE_LINES_SHOWN));
            }
            let what = if device { "buffer" } else { "array" };
            d.notes.push(format!("the same {what} is also accessed this way on line{} {} of this kernel", if lines.len() == 1 { "" } else { "s" }, list.join(", ")));
        }
    }
}

/// How many of a merged finding's other lines its note names before "and N more".
const MORE_LINES_SHOWN: usize = 8;

/// Whether a finding's rule is about device memory (buffers), not group-shared memory.
fn in_device_memory(rule: Rule) -> bool {
    matches!(rule, Rule::DeviceRace | Rule::GlobalNoThreadfence | Rule::RwBufferNotCoherent)
}

/// What a finding is, once classified: proven races are errors; a witness
/// the solver could not confirm, or one that relies on values read from
/// memory (which the program may never hold), is only a possible race;
/// every thread storing one value is benign; reading memory nobody wrote is
/// its own mistake, not a race between threads.
fn class(f: &Function, x: &Finding, reads_data: bool) -> (&'static str, Severity) {
    if reads_data || x.witness.as_ref().is_some_and(|w| !w.exact) || witness_refuted(f, x) {
        (POSSIBLE_RACE, Severity::Warning)
    } else if x.same_value {
        (BENIGN_RACE, Severity::Note)
    } else if x.warp_synchronous {
        (WARP_SYNCHRONOUS_RACE, Severity::Warning)
    } else if x.rule == Rule::SharedFirstRead && x.earlier.is_none() {
        (SHARED_READ_UNINITIALIZED, Severity::Warning)
    } else {
        (x.rule.id(), Severity::Error)
    }
}

/// The value of `v` for one concrete thread, where it follows from the
/// thread's ids and constants alone (None where it needs anything else: a
/// parameter, a load, a loop counter).
fn evaluate(f: &Function, v: Value, tid: [i64; 3]) -> Option<i128> {
    lockstep_analysis::decided::evaluate(f, v, &|_, op| match op {
        Op::Builtin(lockstep_ir::Builtin::LocalId(ax)) => Some(tid[*ax as usize % 3] as i128),
        _ => None,
    })
}

/// Whether the witness's two threads, evaluated concretely, reach two
/// different cells: the solver's witness then does not hold (a case its
/// model of the index got wrong), and the finding is not proven.
fn witness_refuted(f: &Function, x: &Finding) -> bool {
    let (Some(w), Some(e)) = (&x.witness, &x.earlier) else { return false };
    let index = |at: &At| f.inst(at.inst).op.mem_ref().map(|r| r.index);
    let (Some(il), Some(ie)) = (index(&x.later), index(e)) else { return false };
    match (evaluate(f, il, w.threads[0]), evaluate(f, ie, w.threads[1])) {
        (Some(a), Some(b)) => a != b,
        _ => false,
    }
}

/// When the witness's two groups differ only along axes the kernel cannot
/// tell groups apart on (it never reads the group id or count there) and no
/// launch says how many groups run along them: those axes, in words. Such a
/// race needs a dispatch the kernel shows no sign of being written for.
fn groups_never_told_apart(f: &Function, kernel: &lockstep_race::sym::Kernel, w: &Witness) -> Option<String> {
    let [a, b] = w.groups?;
    let launches = f.entry.as_ref().map_or(&[][..], |e| &e.launches[..]);
    let differ: Vec<usize> = (0..3).filter(|&ax| a[ax] != b[ax]).collect();
    let unseen = !differ.is_empty() && differ.iter().all(|&ax| !kernel.reads_group_id(ax) && launches.iter().all(|l| l.grid[ax].is_none()));
    unseen.then(|| differ.iter().map(|&ax| ["x", "y", "z"][ax]).collect::<Vec<_>>().join(" and "))
}

/// What an access's index depends on that lockstep cannot pin down, in
/// words: data read from memory or exchanged between lanes (`data`), and
/// arithmetic the solver may not decide (`hard`). Kernel parameters and
/// constant buffers are launch inputs, not data: a witness may choose them.
#[derive(Default)]
struct Undecided {
    data: Vec<String>,
    hard: Vec<String>,
    /// What the branch conditions guarding the accesses compute in ways the
    /// solver treats as free per thread: lane exchanges, atomics, opaque calls.
    guards: Vec<String>,
    /// The launch shape the witness needs but nothing in the file shows.
    launch: Option<String>,
    /// The call lockstep cannot see into that every way between the
    /// accesses passes, in words: it may hold a barrier.
    unseen_sync: Option<String>,
    /// Buffers the kernel only reads whose values choose the cell an atomic
    /// updates: an atomic is there because threads meet on data-chosen
    /// cells, so the witness takes the input that makes them meet.
    atomic_inputs: Vec<String>,
}

/// The lane exchanges, atomics and opaque calls a guard condition is computed
/// from. The solver gives their results a free value per thread, which can
/// let both threads of a witness pass a guard only one of them can pass
/// (`if ((max & 31) == lane)` after a shuffle reduction makes `max` the same
/// in every lane). Loads are inputs a witness may choose, and stop the walk.
fn computed_guard_inputs(m: &Module, kernel: &lockstep_race::sym::Kernel, cond: Value, out: &mut Vec<String>) {
    let f = kernel.f;
    let mut stack = vec![cond];
    let mut seen = std::collections::HashSet::new();
    while let Some(v) = stack.pop() {
        if !seen.insert(v) || seen.len() > 256 {
            continue;
        }
        let inst = f.inst(v);
        let words = match &inst.op {
            Op::Load(_) => continue,
            Op::Atomic(_, r, _) => Some(format!("the result of an atomic on `{}`", root_name(m, f, &r.root))),
            Op::Call(Callee::Opaque(name) | Callee::Unmodelled(name) | Callee::UnknownValue(name), _) => Some(format!("the result of `{name}`")),
            // Modelled exactly: lane 0.
            Op::Wave(..) if kernel.elects_lane_zero(v) => None,
            Op::Wave(..) => Some("a value exchanged between lanes".to_string()),
            _ => None,
        };
        match words {
            Some(w) => {
                if !out.contains(&w) {
                    out.push(w);
                }
            }
            None => inst.op.for_each_operand(|o| stack.push(o)),
        }
    }
}

/// `shared`: the uniformity at which both threads see one value (the group
/// for threads of one group, the grid across groups).
/// `inputs`: for an atomic's index, the allocations the kernel only reads,
/// whose values the witness chooses.
fn undecided_inputs(
    m: &Module,
    kernel: &lockstep_race::sym::Kernel,
    index: Value,
    shared: lockstep_analysis::Level,
    inputs: Option<&std::collections::HashSet<lockstep_ir::Root>>,
    every_width: bool,
    out: &mut Undecided,
) {
    let f = kernel.f;
    let unfixed_waves = f.entry.as_ref().is_none_or(|e| e.wave_size.is_none()) && !every_width;
    let mut stack = vec![index];
    let mut seen = std::collections::HashSet::new();
    while let Some(v) = stack.pop() {
        if !seen.insert(v) || seen.len() > 256 {
            continue;
        }
        let inst = f.inst(v);
        let (words, data) = match &inst.op {
            Op::Load(r) if r.space == lockstep_ir::MemSpace::Constant => (None, false),
            Op::Load(r) if inputs.is_some_and(|inputs| inputs.contains(&r.root)) => {
                let name = root_name(m, f, &r.root);
                if !out.atomic_inputs.contains(&name) {
                    out.atomic_inputs.push(name);
                }
                (None, false)
            }
            Op::Load(r) => (Some(format!("a value loaded from `{}`", root_name(m, f, &r.root))), true),
            Op::Atomic(_, r, _) => (Some(format!("the result of an atomic on `{}`", root_name(m, f, &r.root))), true),
            Op::Call(Callee::Opaque(name) | Callee::Unmodelled(name) | Callee::UnknownValue(name), _) => (Some(format!("the result of `{name}`")), true),
            Op::Wave(..) => (Some("a value exchanged between lanes".to_string()), true),
            // Which threads share a lane depends on the wave's width.
            Op::Builtin(lockstep_ir::Builtin::LaneId) if unfixed_waves => {
                (Some("the thread's lane in its wave (sub-group), whose width the device chooses".to_string()), true)
            }
            // Which value a thread got depends on the way it came; the
            // solver takes any (a loop's counter is followed exactly).
            Op::Phi(incoming) if incoming.windows(2).any(|w| w[0].1 != w[1].1) && !kernel.block_of(v).is_some_and(|b| kernel.heads_loop(b)) => {
                (Some("a value set differently on different branches".to_string()), true)
            }
            // A value carried around a loop other than by a step it follows
            // (`row += col / w`): the solver takes any value per thread.
            Op::Phi(_) if kernel.block_of(v).is_some_and(|b| kernel.heads_loop(b)) && !kernel.follows_loop_phi(v) && kernel.uni.level(v) < shared => {
                (Some("a value carried around a loop in a way the solver does not follow".to_string()), true)
            }
            // The solver takes the arm a thread picks as any value (selects
            // on constants are folded before any analysis), even where the
            // threads share the condition (`ntg.y == 1 ? gid : gid * ntg.y + tid`).
            Op::Select(..) if kernel.uni.level(v) < shared => {
                (Some("a value each thread picks by a condition (`c ? a : b`, `select`)".to_string()), true)
            }
            // The solver picks such a value for each thread freely.
            Op::Math(fun, _) if inst.ty.is_int() && !lockstep_race::sym::EXACT_INT_MATH.contains(fun) && kernel.uni.level(v) < shared => {
                (Some("a value computed by a bit or math function the solver does not follow".to_string()), true)
            }
            Op::Convert(x) if inst.ty.is_int() && f.inst(*x).ty.is_float() && kernel.uni.level(v) < shared => {
                (Some("a value converted from a floating-point number".to_string()), true)
            }
            Op::Binary(BinOp::Mul, a, b) if f.as_int(*a).is_none() && f.as_int(*b).is_none() => (Some("a product of two values that are not constants".to_string()), false),
            Op::Binary(BinOp::Div | BinOp::ExactDiv | BinOp::Rem | BinOp::Shl | BinOp::Shr, _, b) if f.as_int(*b).is_none() => (Some("a division or shift by a value that is not a constant".to_string()), false),
            _ => (None, false),
        };
        if let Some(w) = words {
            let list = if data { &mut out.data } else { &mut out.hard };
            if !list.contains(&w) {
                list.push(w);
            }
        }
        if !matches!(inst.op, Op::Load(_) | Op::Atomic(..)) {
            inst.op.for_each_operand(|o| stack.push(o));
        }
    }
}

fn root_name(m: &Module, f: &Function, root: &lockstep_ir::Root) -> String {
    match root {
        lockstep_ir::Root::Global(g) => m.global(*g).name.clone(),
        lockstep_ir::Root::Param(p) => f.params.get(*p as usize).map_or_else(|| format!("parameter {p}"), |p| p.name.clone()),
        lockstep_ir::Root::Local(l) => f.locals.get(l.0 as usize).map_or_else(|| "a local array".to_string(), |l| l.name.clone()),
        lockstep_ir::Root::Ptr(_) => "memory reached through a pointer".to_string(),
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
        AccessKind::AtomicStore => "atomically overwrites",
    }
}

fn noun(k: AccessKind) -> &'static str {
    match k {
        AccessKind::Read => "read",
        AccessKind::Write => "write",
        AccessKind::Atomic => "atomic update",
        AccessKind::AtomicStore => "atomic store",
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
    // The values the witness needs for constants the host chooses.
    let mut chosen: Vec<String> = w.open_values.iter().map(|&(g, v)| format!("`{}` = {v}", m.global(g).name)).collect();
    chosen.extend(w.param_values.iter().filter_map(|&(i, v)| f.params.get(i as usize).map(|p| format!("`{}` = {v}", p.name))));
    // Across groups a flat id's cell depends on the group size chosen; in
    // one group the threads shown already say how large it is at least.
    if w.groups.is_some() {
        let size = match w.open_group_size {
            [Some(x), Some(y), Some(z)] => tuple([x, y, z]),
            open => (0..3).filter_map(|ax| open[ax].map(|n| format!("{n} along {}", ["x", "y", "z"][ax]))).collect::<Vec<_>>().join(" and "),
        };
        if !size.is_empty() {
            chosen.push(format!("a group size of {size}"));
        }
    }
    let with = match chosen.split_last() {
        None => String::new(),
        Some((last, [])) => format!(", with {last}"),
        Some((last, rest)) => format!(", with {} and {last}", rest.join(", ")),
    };
    format!(
        "{} {} {cell} (line {}){} while {} {} it (line {}){}{with}",
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

/// The language's group barrier, as its programmers write it.
fn barrier_name(m: &Module) -> &str {
    if m.group_barrier.is_empty() {
        "a group barrier"
    } else {
        &m.group_barrier
    }
}

fn report(db: &SourceDb, m: &Module, f: &Function, kernel: &lockstep_race::sym::Kernel, x: &Finding) -> Diagnostic {
    let name = alloc_name(m, f, x.alloc);
    let later_span = f.inst(x.later.inst).span;
    let hz = x.hazard.map(Hazard::short).unwrap_or("");
    let sentence = match (&x.earlier, &x.witness) {
        (Some(e), Some(w)) => witness_sentence(db, m, f, x, e, w),
        _ => String::new(),
    };
    let mut undecided = Undecided::default();
    let shared = if x.witness.as_ref().is_some_and(|w| w.groups.is_some()) { lockstep_analysis::Level::Grid } else { lockstep_analysis::Level::Group };
    let through_pointer = |at: &At| f.inst(at.inst).op.mem_ref().is_some_and(|r| matches!(r.root, lockstep_ir::Root::Ptr(_)));
    if x.alloc == Alloc::Unknown || through_pointer(&x.later) || x.earlier.as_ref().is_some_and(through_pointer) {
        // The witness picks the addresses the two pointers hold.
        undecided.data.push("addresses through pointers lockstep could not follow back to their buffers".to_string());
    }
    let is_atomic = |at: &At| matches!(f.inst(at.inst).op, Op::Atomic(..));
    let inputs = (is_atomic(&x.later) || x.earlier.as_ref().is_some_and(is_atomic)).then(|| f.read_only_roots());
    for at in std::iter::once(&x.later).chain(x.earlier.as_ref()) {
        if let Some(r) = f.inst(at.inst).op.mem_ref() {
            let inputs = inputs.as_ref().filter(|_| is_atomic(at));
            let every_width = x.witness.as_ref().is_some_and(|w| w.every_width);
            undecided_inputs(m, kernel, r.index, shared, inputs, every_width, &mut undecided);
        }
        // An unmodelled construct, or a function without a body handed a
        // pointer, stands for any access to the memory.
        let words = match &f.inst(at.inst).op {
            Op::Call(Callee::Unmodelled(what), _) => Some(format!("whatever {what} accesses, which lockstep does not model")),
            Op::Call(Callee::Opaque(name), _) => Some(format!("whatever `{name}`, whose body lockstep did not see, does with the pointers it is handed")),
            _ => None,
        };
        if let Some(words) = words.filter(|w| !undecided.data.contains(w)) {
            undecided.data.push(words);
        }
    }
    for &g in x.witness.iter().flat_map(|w| &w.atypical_open_values) {
        // Tiles, rows and groups are written for sizes that are multiples of 8.
        let global = m.global(g);
        let (whose, fixed_by) = match global.open_value {
            Some(lockstep_ir::OpenValue::PipelineConstant) => ("the pipeline constant", "which the host sets when it creates the pipeline"),
            _ => ("the template parameter", "which no instantiation in this file fixes"),
        };
        undecided.data.push(format!(
            "a value of {whose} `{}` that is not a multiple of {}, {fixed_by}",
            global.name,
            lockstep_race::sym::TYPICAL_SIZE_STEP
        ));
    }
    if x.witness.as_ref().is_some_and(|w| w.atypical_group_width) {
        undecided.data.push(format!(
            "a group width that is not a multiple of {}, which the host chooses at launch",
            lockstep_race::sym::TYPICAL_SIZE_STEP
        ));
    }
    for &product in x.witness.iter().flat_map(|w| &w.rows_apart) {
        // A pitched layout: the host keeps such rows apart.
        undecided.data.push(format!(
            "different rows of `{}`, which overlap only if the host passes a stride narrower than the row it holds",
            db.snippet(f.inst(product).span).trim()
        ));
    }
    for &value in x.witness.iter().flat_map(|w| &w.offset_apart) {
        // Two halves of a row, placed apart by a value the host passes.
        let name = match &f.inst(value).op {
            Op::Param(p) => f.params.get(*p as usize).map_or_else(|| format!("parameter {p}"), |p| p.name.clone()),
            // A cell of a constant buffer or push constant block, as the source names it.
            Op::Load(r) => match (r.root, f.as_int(r.index)) {
                (lockstep_ir::Root::Global(g), Some(cell)) if cell >= 0 => m.global(g).describe_cell(cell as u64),
                _ => db.snippet(f.inst(value).span).trim().to_string(),
            },
            _ => db.snippet(f.inst(value).span).trim().to_string(),
        };
        undecided.data.push(format!(
            "an offset `{name}` that one index adds and the other does not: they meet only if the host passes an offset smaller than the width the other index covers"
        ));
    }
    let caller_unknown = f.entry.as_ref().is_some_and(|e| e.caller_unknown);
    let through_parameter = |at: &At| f.inst(at.inst).op.mem_ref().is_some_and(|r| matches!(r.root, lockstep_ir::Root::Param(_)));
    if caller_unknown && (through_parameter(&x.later) || x.earlier.as_ref().is_some_and(through_parameter)) {
        // Which memory the pointer holds, and which threads share it, is the
        // unseen caller's choice.
        undecided.data.push("memory a pointer parameter points to, which the caller (not in this file) chooses".to_string());
    }
    undecided.launch = if x.across_unfixed_waves {
        Some("the race needs the two threads in different waves (sub-groups), whose width the device chooses: a group no wider than one wave is ordered by the wave barrier between the accesses".to_string())
    } else {
        x.witness.as_ref().and_then(|w| groups_never_told_apart(f, kernel, w)).map(|axes| {
            format!("the race needs several groups along {axes}, but the kernel never reads its group's index there (such groups would all do the same work) and no launch in this file says how many run")
        })
    };
    for at in std::iter::once(&x.later).chain(x.earlier.as_ref()) {
        if let Some(b) = kernel.block_of(at.inst) {
            for &(cond, _) in kernel.guards(b).iter() {
                computed_guard_inputs(m, kernel, cond, &mut undecided.guards);
            }
        }
    }
    undecided.unseen_sync = x.unseen_sync.map(|call| {
        let what = match &f.inst(call).op {
            Op::Call(lockstep_ir::Callee::Opaque(name), _) => format!("calls `{name}`, whose body lockstep did not see"),
            Op::Call(lockstep_ir::Callee::Unmodelled(what), _) => format!("passes {what}, which lockstep does not model"),
            _ => "passes code lockstep cannot see into".to_string(),
        };
        format!("every way from one access to the other {what} (line {}): it may hold a barrier that orders them", db.location(f.inst(call).span).0.line)
    });
    let (class_id, severity) = class(f, x, !undecided.data.is_empty() || !undecided.guards.is_empty() || undecided.launch.is_some() || undecided.unseen_sync.is_some());
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
        Rule::SharedRaw | Rule::SharedWar | Rule::SharedWaw => {
            let between = if x.held_by.is_some() { "no barrier that fences it" } else { "no barrier" };
            (later_span, format!("{hz} race on `{name}` with {between} between: {sentence}"))
        }
    };
    let message = if class_id == POSSIBLE_RACE { format!("possible {message}") } else { message };
    let mut d = Diagnostic::new(class_id, severity, span, message);
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
            } else if m.device_barrier.is_empty() {
                "no group barrier that orders device memory is between these accesses".to_string()
            } else {
                format!("no barrier that orders device memory (`{}`) is between these accesses", m.device_barrier)
            });
        }
        // A barrier that holds the threads but fences other memory is explained below.
        _ if x.held_by.is_some() => {}
        _ => {
            let carried = x.later.iteration.is_some();
            d = d.with_note(if x.wave_ordered {
                format!("only a wave barrier is between these accesses: it orders the threads of one wave (warp, sub-group), and these two are in different waves; put {} between them", barrier_name(m))
            } else if carried {
                format!("the accesses meet across the loop's back edge: a thread that starts the next iteration reaches this access while slower threads are still in the previous one; put {} at the end of the loop body", barrier_name(m))
            } else {
                format!("no {} is between these accesses, so the threads are not ordered", barrier_name(m))
            });
        }
    }
    if let Some(call) = x.unseen_sync {
        d = d.with_label(f.inst(call).span, "lockstep cannot see whether this waits for the group");
    }
    if let Some(held) = x.held_by {
        let memory = if in_device_memory(x.rule) { "device" } else { "group-shared" };
        d = d.with_label(f.inst(held).span, format!("holds the threads, but fences no {memory} memory"));
        d = d.with_note(format!(
            "the barrier between them makes every thread arrive before any continues, but by the memory model it orders only the memory it fences; give it the {memory} memory flag"
        ));
    }
    if !undecided.atomic_inputs.is_empty() && class_id != POSSIBLE_RACE {
        let names: Vec<String> = undecided.atomic_inputs.iter().map(|n| format!("`{n}`")).collect();
        let cell = cell_name(m, f, x.alloc, x.witness.as_ref()).map_or_else(|| "the cell shown".to_string(), |c| format!("`{c}`"));
        d = d.with_note(format!(
            "the cell the atomic updates is chosen by data from {}, which the kernel only reads: any input that sends the update to {cell} makes the threads meet",
            names.join(" and ")
        ));
    }
    if std::iter::once(&x.later).chain(x.earlier.as_ref()).any(|a| a.kind == AccessKind::AtomicStore) {
        d = d.with_note(format!(
            "both accesses are atomic, so neither tears, but nothing orders them: the store may land after the other thread's update and erase it; put {} between them",
            barrier_name(m)
        ));
    }
    if x.same_value {
        d = d.with_note("the threads store the same value (one the whole group shares, or one the cell decides, such as a copy of an input the kernel never writes), so the outcome does not depend on which write lands last; it is still a data race in the memory model");
    }
    if class_id == WARP_SYNCHRONOUS_RACE {
        let fix = if m.wave_barrier.is_empty() {
            format!("the language has no barrier for one wave: put `{}` between the accesses", m.group_barrier)
        } else {
            format!("put `{}` between the accesses", m.wave_barrier)
        };
        d = d.with_note(format!(
            "only threads of one wave (warp, sub-group) can meet here: the code relies on a wave running in lockstep, which the memory model does not promise and GPUs with independent thread scheduling (Volta and later) do not do; {fix}"
        ));
    }
    if let Some(w) = x.witness.as_ref().filter(|w| w.every_width) {
        d = d.with_note(format!(
            "nothing fixes how wide the waves (sub-groups) are, and the threads meet at every width hardware has; the threads shown suppose waves {} lanes wide",
            w.wave_width.unwrap_or_default()
        ));
    } else if let Some(width) = x.witness.as_ref().and_then(|w| w.wave_width) {
        d = d.with_note(format!(
            "nothing fixes how wide the waves (sub-groups) are; the threads shown are in different ones when the device makes them {width} lanes wide"
        ));
    }
    if class_id == POSSIBLE_RACE {
        let inputs: Vec<String> = undecided.data.into_iter().chain(undecided.hard).collect();
        let mut why = if inputs.is_empty() { String::new() } else { format!("the indices use {}", inputs.join(", ")) };
        if !undecided.guards.is_empty() {
            let guards = format!("the conditions guarding the accesses use {}", undecided.guards.join(", "));
            why = if why.is_empty() { guards } else { format!("{why}, and {guards}") };
        }
        for unknown in [undecided.launch, undecided.unseen_sync].into_iter().flatten() {
            why = if why.is_empty() { unknown } else { format!("{why}, and {unknown}") };
        }
        if why.is_empty() {
            why = "the indices are too involved for lockstep to compare".to_string();
        }
        d = d.with_note(format!(
            "not proven: {why}; the threads shown are a candidate that satisfies what lockstep could decide. If it happens, this is `{}`",
            x.rule.id()
        ));
    }
    d.with_macro_notes(db)
}
