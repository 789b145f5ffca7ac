//! The static race check against brute force: random small CUDA kernels with
//! shared-memory accesses at affine (and xor / modulo / shift) indices of the
//! thread id, under optional guards, barriers (some behind a flag that the
//! first pass of a loop flips), fences and a two-iteration loop around all
//! of them or a slice (with statements before and after the loop). For every pair of accesses that share a barrier interval, every
//! pair of different threads of the group is enumerated; each pair that
//! touches one cell (at least one writing) must be reported, and the witness
//! threads a report names must really conflict. Reports of pairs the
//! enumeration clears are counted as false positives.
//!
//! `RACE_CASES=20000 cargo test --release --test race_property` runs more
//! cases than the default 150.
//!
//! `cargo test --release --test race_property -- --ignored --nocapture` also
//! prints the false-positive rate and the cost on a generated corpus
//! (recorded in BENCHMARKS-race.md).

use lockstep::check::check_file_with;
use lockstep_checks::CheckOptions;
use lockstep_lower::{Lang, Options};
use std::collections::BTreeSet;
use std::path::PathBuf;

const SIZE: i64 = 64;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> i64 {
        (self.next() % n) as i64
    }
}

#[derive(Clone, Copy, Debug)]
enum Index {
    Affine(i64, i64),
    Xor(i64),
    RotateMod(i64),
    Half,
    EvenDown,
}

impl Index {
    fn eval(self, t: i64, group: i64) -> i64 {
        match self {
            Index::Affine(a, b) => a * t + b,
            Index::Xor(c) => t ^ c,
            Index::RotateMod(c) => (t + c) % group,
            Index::Half => t / 2,
            Index::EvenDown => t & !1,
        }
    }
    fn text(self, group: i64) -> String {
        match self {
            Index::Affine(a, b) => format!("{a} * threadIdx.x + {b}"),
            Index::Xor(c) => format!("threadIdx.x ^ {c}"),
            Index::RotateMod(c) => format!("(threadIdx.x + {c}) % {group}"),
            Index::Half => "threadIdx.x / 2".into(),
            Index::EvenDown => "threadIdx.x & ~1u".into(),
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Guard {
    Always,
    Lt(i64),
    Eq(i64),
    Ge(i64),
    Even,
}

impl Guard {
    fn holds(self, t: i64) -> bool {
        match self {
            Guard::Always => true,
            Guard::Lt(c) => t < c,
            Guard::Eq(c) => t == c,
            Guard::Ge(c) => t >= c,
            Guard::Even => t % 2 == 0,
        }
    }
    fn text(self) -> String {
        match self {
            Guard::Always => String::new(),
            Guard::Lt(c) => format!("if (threadIdx.x < {c}) "),
            Guard::Eq(c) => format!("if (threadIdx.x == {c}) "),
            Guard::Ge(c) => format!("if (threadIdx.x >= {c}) "),
            Guard::Even => "if (threadIdx.x % 2 == 0) ".into(),
        }
    }
}

#[derive(Clone, Debug)]
enum Stmt {
    Barrier,
    /// `if (flag) __syncthreads(); flag = !init;` with the flag starting at
    /// `init`: in a loop, a barrier only the first pass runs, or every pass but the first.
    FlagBarrier { init: bool },
    Fence,
    Access { write: bool, guard: Guard, index: Index },
}

struct Kernel {
    group: i64,
    /// The size comes from `__launch_bounds__` (a bound, blockDim symbolic) instead of `--group-size`.
    bounded: bool,
    /// The statements that run in a two-iteration loop (none, all, or a
    /// slice with statements before and after it).
    looped: std::ops::Range<usize>,
    body: Vec<Stmt>,
}

/// Source lines of the kernel; body statement i is on line `first_line + i`.
fn render(k: &Kernel) -> (String, u32) {
    let bounds = if k.bounded { format!("__launch_bounds__({}) ", k.group) } else { String::new() };
    let flags: String = k.body.iter().enumerate().filter_map(|(i, st)| match st {
        Stmt::FlagBarrier { init } => Some(format!(" bool f{i} = {init};")),
        _ => None,
    }).collect();
    let mut s = format!("__global__ void {bounds}k(float* out)\n{{\n    __shared__ float s[64];\n    float acc = 0.0f;{flags}\n");
    let line = 5;
    for (i, st) in k.body.iter().enumerate() {
        // Opening the loop on the line of its first statement, and closing
        // it on the line of the first statement after it, keeps statement
        // i on line `first_line + i`.
        if !k.looped.is_empty() && i == k.looped.end {
            s.push_str("    }");
        }
        if !k.looped.is_empty() && i == k.looped.start {
            s.push_str("    for (int it = 0; it < 2; ++it) {");
        }
        s.push_str("        ");
        match st {
            Stmt::Barrier => s.push_str("__syncthreads();"),
            Stmt::FlagBarrier { init } => s.push_str(&format!("if (f{i}) __syncthreads(); f{i} = {};", !init)),
            Stmt::Fence => s.push_str("__threadfence_block();"),
            Stmt::Access { write: true, guard, index } => s.push_str(&format!("{}s[{}] = acc + 1.0f;", guard.text(), index.text(k.group))),
            Stmt::Access { write: false, guard, index } => s.push_str(&format!("{}acc += s[{}];", guard.text(), index.text(k.group))),
        }
        s.push('\n');
    }
    if !k.looped.is_empty() && k.looped.end == k.body.len() {
        s.push_str("    }\n");
    }
    s.push_str("    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;\n}\n");
    (s, line)
}

fn generate(rng: &mut Rng) -> Kernel {
    let group = if rng.below(2) == 0 { 8 } else { 16 };
    let n = 2 + rng.below(5) as usize;
    let mut body = Vec::new();
    for _ in 0..n {
        let st = match rng.below(11) {
            0 | 1 => Stmt::Barrier,
            2 => Stmt::Fence,
            3 => Stmt::FlagBarrier { init: rng.below(2) == 0 },
            _ => {
                let index = match rng.below(6) {
                    0 | 1 => Index::Affine(rng.below(3), rng.below(5)),
                    2 => Index::Xor(1 + rng.below(group as u64 - 1)),
                    3 => Index::RotateMod(rng.below(group as u64)),
                    4 => Index::Half,
                    _ => Index::EvenDown,
                };
                let guard = match rng.below(6) {
                    0 | 1 => Guard::Always,
                    2 => Guard::Lt(1 + rng.below(group as u64)),
                    3 => Guard::Eq(rng.below(group as u64)),
                    4 => Guard::Ge(rng.below(group as u64)),
                    _ => Guard::Even,
                };
                Stmt::Access { write: rng.below(2) == 0, guard, index }
            }
        };
        body.push(st);
    }
    let n = body.len();
    let looped = match rng.below(4) {
        0 | 1 => 0..0,
        2 => 0..n,
        _ => {
            let start = rng.below(n as u64) as usize;
            start..start + 1 + rng.below((n - start) as u64) as usize
        }
    };
    Kernel { group, bounded: rng.below(2) == 0, looped, body }
}

/// Racing (line, thread, line, thread) combinations: the first line is the
/// access that can come second.
type Races = BTreeSet<(u32, i64, u32, i64)>;

fn enumerate(k: &Kernel, first_line: u32) -> Races {
    // The statements in the order one thread runs them (two passes of the
    // loop, then the rest), cut into barrier intervals by the barriers that run.
    let (start, end) = (k.looped.start, k.looped.end);
    let order: Vec<usize> = (0..start).chain(k.looped.clone()).chain(k.looped.clone()).chain(end..k.body.len()).collect();
    let mut flag = vec![None; k.body.len()];
    let mut intervals: Vec<Vec<usize>> = vec![Vec::new()];
    for i in order {
        let runs_barrier = match k.body[i] {
            Stmt::Barrier => true,
            Stmt::FlagBarrier { init } => flag[i].replace(!init).unwrap_or(init),
            _ => false,
        };
        if runs_barrier {
            intervals.push(Vec::new());
        } else if matches!(k.body[i], Stmt::Access { .. }) {
            intervals.last_mut().unwrap().push(i);
        }
    }
    let mut out = BTreeSet::new();
    for interval in &intervals {
        for (n, &i) in interval.iter().enumerate() {
            for &j in &interval[n..] {
                let (Stmt::Access { write: wi, guard: gi, index: xi }, Stmt::Access { write: wj, guard: gj, index: xj }) = (&k.body[i], &k.body[j]) else { continue };
                if !(*wi || *wj) {
                    continue;
                }
                for t1 in 0..k.group {
                    for t2 in 0..k.group {
                        if t1 == t2 || !gi.holds(t1) || !gj.holds(t2) {
                            continue;
                        }
                        let (c1, c2) = (xi.eval(t1, k.group), xj.eval(t2, k.group));
                        if c1 == c2 && (0..SIZE).contains(&c1) {
                            let (li, lj) = (first_line + i as u32, first_line + j as u32);
                            out.insert((li, t1, lj, t2));
                            out.insert((lj, t2, li, t1));
                        }
                    }
                }
            }
        }
    }
    out
}

const SHARED_RULES: &[&str] = &[
    "possible-race",
    "warp-synchronous-race",
    "benign-race",
    "groupshared-write-then-no-barrier-read",
    "groupshared-read-then-no-barrier-write",
    "groupshared-write-write-race",
    "groupshared-first-read-without-barrier",
    "fence-without-sync",
];

/// A reported pair: (primary line, other line, witness threads if exact),
/// and the other lines of the defect the finding stands for.
struct Reported {
    later: u32,
    earlier: u32,
    threads: Option<(i64, i64)>,
    also: Vec<u32>,
}

impl Reported {
    /// Whether the finding covers the pair of lines `a`, `b`: both are among its lines.
    fn covers(&self, a: u32, b: u32) -> bool {
        let lines: Vec<u32> = [self.later, self.earlier].into_iter().chain(self.also.iter().copied()).collect();
        lines.contains(&a) && lines.contains(&b)
    }
}

/// The lines a note names ("… also accessed this way on lines 14, 15 of this kernel").
fn also_lines(notes: &[String]) -> Vec<u32> {
    notes
        .iter()
        .filter_map(|n| n.split_once("also accessed this way on line"))
        .flat_map(|(_, rest)| rest.trim_start_matches('s').split(" of this kernel").next().unwrap_or("").split(',').filter_map(|x| x.trim().parse().ok()).collect::<Vec<u32>>())
        .collect()
}

fn first_thread_ids(message: &str) -> Option<(i64, i64)> {
    let mut ids = message.match_indices("thread (").map(|(at, m)| {
        let rest = &message[at + m.len()..];
        rest.split(',').next().and_then(|x| x.parse::<i64>().ok())
    });
    Some((ids.next()??, ids.next()??))
}

fn check_kernel(dir: &std::path::Path, n: usize, k: &Kernel) -> (Vec<Reported>, Races, String) {
    let (text, first_line) = render(k);
    let path: PathBuf = dir.join(format!("k{n}.cu"));
    std::fs::write(&path, &text).unwrap();
    let options = Options { group_size: (!k.bounded).then_some([k.group as u32, 1, 1]), ..Options::default() };
    let report = check_file_with(&path, Lang::Cuda, &options, every_class()).unwrap();
    let line = |span| report.db.location(span).0.line;
    let mut reported = Vec::new();
    for d in &report.diagnostics {
        assert!(!d.rule.starts_with("parse") && d.rule != "syntax-error", "{text}\n{}", d.message);
        if !SHARED_RULES.contains(&d.rule.as_str()) || d.labels.is_empty() {
            continue;
        }
        // A fence finding (of any class) points at the fence and labels both accesses.
        let mut lines: Vec<u32> = d.labels.iter().map(|l| line(l.span)).collect();
        if lines.len() < 2 {
            lines.insert(0, line(d.span));
        }
        let exact = d.rule != "possible-race";
        let (later, earlier) = (lines[0], *lines.get(1).unwrap_or(&lines[0]));
        reported.push(Reported { later, earlier, threads: if exact { first_thread_ids(&d.message) } else { None }, also: also_lines(&d.notes) });
    }
    (reported, enumerate(k, first_line), text)
}

/// The checks with the quieter classes on: the property is that no race is missed.
fn every_class() -> CheckOptions {
    CheckOptions { include_unproven: true, include_benign: true, ..CheckOptions::default() }
}

#[derive(Default)]
struct Tally {
    kernels: usize,
    racy_pairs: usize,
    reports: usize,
    false_positives: usize,
}

fn run(count: usize, seed: u64) -> Tally {
    let dir = std::env::temp_dir().join(format!("lockstep-race-prop-{}-{seed}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng(seed);
    let mut tally = Tally::default();
    for n in 0..count {
        let k = generate(&mut rng);
        let (reported, races, text) = check_kernel(&dir, n, &k);
        tally.kernels += 1;
        let pairs: BTreeSet<(u32, u32)> = races.iter().map(|&(a, _, b, _)| (a.min(b), a.max(b))).collect();
        tally.racy_pairs += pairs.len();
        // Soundness: every racing pair of lines is reported.
        for &(a, b) in &pairs {
            let covered = reported.iter().any(|r| r.covers(a, b));
            assert!(covered, "kernel {n}: the race between lines {a} and {b} was not reported\n{text}");
        }
        // Exact witnesses are real.
        for r in &reported {
            tally.reports += 1;
            let pair = (r.later.min(r.earlier), r.later.max(r.earlier));
            if !pairs.contains(&pair) {
                tally.false_positives += 1;
                continue;
            }
            if let Some((tl, te)) = r.threads {
                assert!(races.contains(&(r.later, tl, r.earlier, te)), "kernel {n}: witness threads {tl} (line {}) and {te} (line {}) do not conflict\n{text}", r.later, r.earlier);
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    tally
}

#[test]
fn static_check_never_misses_an_enumerated_race() {
    let t = run(std::env::var("RACE_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(150), 0x9e37_79b9_7f4a_7c15);
    assert!(t.racy_pairs > 50, "the generator should produce races: {}", t.racy_pairs);
    // A loose bound that fails if the analysis degenerates into "everything races".
    assert!(t.false_positives * 4 <= t.reports, "{} of {} reports are false positives", t.false_positives, t.reports);
}

/// The reports of the HLSL fixture, word for word where the witness matters.
#[test]
fn reports_name_both_accesses_the_hazard_and_a_witness() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hlsl/race_shared.hlsl");
    let report = check_file_with(&path, Lang::Hlsl, &Options::default(), every_class()).unwrap();
    let at = |rule: &str, line: u32| {
        report.diagnostics.iter().find(|d| d.rule == rule && report.db.location(d.span).0.line == line).unwrap_or_else(|| panic!("no {rule} at line {line}"))
    };
    let war = at("groupshared-read-then-no-barrier-write", 31);
    assert_eq!(
        war.message,
        "WAR race on `TileA` with no barrier between: thread (0,0,0) writes `TileA[0][0]` (line 31) in iteration k+1 while thread (1,0,0) reads it (line 35) in iteration k"
    );
    assert_eq!(war.severity, lockstep_diag::Severity::Error);
    assert_eq!(report.db.location(war.labels[0].span).0.line, 35);
    assert!(war.notes[0].contains("back edge") && war.notes[0].contains("GroupMemoryBarrierWithGroupSync()"), "{:?}", war.notes);
    // Every thread with gtid.x == 0 stores the same uniform value: a benign-race note.
    let same = at("benign-race", 97);
    assert_eq!(same.severity, lockstep_diag::Severity::Note);
    assert!(same.notes.iter().any(|n| n.contains("the threads store the same value")), "{:?}", same.notes);
    assert_eq!(at("groupshared-write-write-race", 99).severity, lockstep_diag::Severity::Error);
    // The fence is the primary span; both accesses are labels.
    let fence = at("fence-without-sync", 118);
    let labels: Vec<u32> = fence.labels.iter().map(|l| report.db.location(l.span).0.line).collect();
    assert_eq!(labels, vec![119, 117]);
    assert!(fence.message.contains("thread (0,0,0) reads `Row[1]` (line 119) while thread (1,0,0) writes it (line 117)"), "{}", fence.message);
}

#[test]
#[ignore = "measurement: run with --release --ignored --nocapture"]
fn false_positive_rate_and_cost() {
    let start = std::time::Instant::now();
    let t = run(2000, 0x2545_f491_4f6c_dd1d);
    let elapsed = start.elapsed();
    println!(
        "kernels {} racy line pairs {} reports {} false positives {} ({:.2}%) in {:.2?}",
        t.kernels,
        t.racy_pairs,
        t.reports,
        t.false_positives,
        100.0 * t.false_positives as f64 / t.reports.max(1) as f64,
        elapsed
    );
}
