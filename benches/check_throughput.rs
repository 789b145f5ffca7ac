//! `cargo bench --bench check_throughput`: throughput of `lockstep check` on a
//! generated corpus of realistic kernels, side by side with tree-sitter
//! parse-only time on the same input. Prints MB/s, lines/s and the ratio.
//!
//! Knobs: `BENCH_FILES` (default 16), `BENCH_FILE_BYTES` (default 384 KiB),
//! `BENCH_ROUNDS` (default 3),
//! `BENCH_CORPUS` (`mixed`, the default: many kernel families, see
//! `corpus/mod.rs`; `scan`: the old two-template stress case).

use lockstep::check::check_file_with;
use lockstep_checks::CheckOptions;
use lockstep_lower::{Lang, Options};
use std::path::{Path, PathBuf};
use std::time::Instant;

mod corpus;

// As in the `lockstep` binary (tree-sitter's own allocations stay with libc
// malloc in both, so the parse-only yardstick is unchanged).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn parallel<T: Send>(paths: &[PathBuf], work: impl Fn(&Path) -> T + Sync) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out: Vec<std::sync::Mutex<Option<T>>> = paths.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(p) = paths.get(i) else { break };
                *out[i].lock().unwrap() = Some(work(p));
            });
        }
    });
    out.into_iter().map(|m| m.into_inner().unwrap().unwrap()).collect()
}

/// Rounds of the five pipelines unless `BENCH_ROUNDS` says otherwise; each
/// row is its best round.
const ROUNDS: usize = 3;

fn main() {
    let dir = std::env::temp_dir().join("lockstep-bench-corpus");
    let files: usize = std::env::var("BENCH_FILES").ok().and_then(|v| v.parse().ok()).unwrap_or(16);
    let per_file: usize = std::env::var("BENCH_FILE_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(384 << 10);
    let kind_name = std::env::var("BENCH_CORPUS").unwrap_or_else(|_| "mixed".into());
    let Some(kind) = corpus::Kind::parse(&kind_name) else {
        eprintln!("BENCH_CORPUS must be `mixed` or `scan`, not `{kind_name}`");
        std::process::exit(2);
    };
    let corpus::Corpus { paths, bytes, lines } = corpus::write(&dir, kind, files, per_file);
    let mb = bytes as f64 / (1 << 20) as f64;
    println!(
        "corpus `{}` in {}: {files} files, {mb:.1} MB, {lines} lines; {} worker threads",
        kind.name(),
        dir.display(),
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    );

    // The pipelines take turns, round after round, and each keeps its best
    // round: on a shared machine a slow stretch then costs every row alike
    // instead of whichever happened to run during it.
    let paths = &paths;
    let parse_only = || {
        parallel(paths, |p| {
            let text = std::fs::read_to_string(p).unwrap();
            let lang = Lang::from_path(p).unwrap();
            lockstep_syntax::parse(lang.grammar().expect("a tree-sitter language"), &text).map(|t| t.root_node().child_count()).unwrap_or(0)
        })
        .len()
    };
    let preprocess_and_parse = || {
        parallel(paths, |p| {
            let mut db = lockstep_source::SourceDb::new();
            let file = db.add(p, std::fs::read_to_string(p).unwrap());
            let out = lockstep_preprocess::preprocess(&mut db, file, &Default::default(), &lockstep_preprocess::FsLoader);
            let lang = Lang::from_path(p).unwrap();
            lockstep_syntax::parse(lang.grammar().expect("a tree-sitter language"), &out.text).map(|t| t.root_node().child_count()).unwrap_or(0)
        })
        .len()
    };
    let check = |checks: CheckOptions| {
        move || {
            parallel(paths, |p| check_file_with(p, Lang::from_path(p).unwrap(), &Options::default(), checks).unwrap().diagnostics.len())
                .iter()
                .sum::<usize>()
        }
    };
    let divergence = check(CheckOptions { dead_barriers: None, races: false, ..CheckOptions::default() });
    let dead = check(CheckOptions { races: false, ..CheckOptions::default() });
    let full = check(CheckOptions::default());
    let pipelines: [&dyn Fn() -> usize; 5] = [&parse_only, &preprocess_and_parse, &divergence, &dead, &full];
    let mut best = [f64::MAX; 5];
    let mut best_cpu = [f64::MAX; 5];
    let mut found = 0;
    let rounds: usize = std::env::var("BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(ROUNDS);
    for _round in 0..rounds {
        for (i, run) in pipelines.iter().enumerate() {
            let (t, cpu) = (Instant::now(), process_cpu_seconds());
            let n = run();
            best[i] = best[i].min(t.elapsed().as_secs_f64());
            best_cpu[i] = best_cpu[i].min(process_cpu_seconds() - cpu);
            if i == 4 {
                found = n;
            }
        }
    }
    let names = ["tree-sitter parse only", "preprocess + parse", "check: divergence only", "check: + dead barriers", "lockstep check (full)"];
    println!("{:<28} {:>10} {:>11} {:>14} {:>10}", "", "wall", "MB/s", "lines/s", "CPU");
    for (i, name) in names.iter().enumerate() {
        let s = best[i];
        println!("{name:<28} {s:>8.3} s {:>9.2} MB/s {:>12.0} lines/s {:>8.2} s", mb / s, lines as f64 / s, best_cpu[i]);
    }
    for (i, what) in [(2, "divergence check"), (3, "divergence + dead barriers"), (4, "full check")] {
        println!("{what} / parse-only: {:.2}x wall, {:.2}x CPU", best[i] / best[0], best_cpu[i] / best_cpu[0]);
    }
    println!("(diagnostics: {found})");
}

/// CPU time of this process, all threads, from /proc (Linux; 0 elsewhere).
/// Unlike wall time it does not grow while a shared machine runs other work.
fn process_cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the parenthesized command name: utime and stime are the 12th and 13th.
    let Some(rest) = stat.rsplit(')').next() else { return 0.0 };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    // USER_HZ is 100 on every Linux configuration Rust supports.
    (ticks(11) + ticks(12)) / 100.0
}
