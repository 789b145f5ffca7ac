//! `lockstep check`: find kernel files, analyse each in parallel, report.

use clap::{Args, ValueEnum};
use lockstep_checks::{CheckOptions, FileChecker};
use lockstep_diag::{render_human, to_json_value, Diagnostic};
use lockstep_lower::{compile_streaming, Lang, Options};
use lockstep_source::SourceDb;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Files or directories to check.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Define a macro: NAME or NAME=VALUE.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub defines: Vec<String>,
    /// Add an include directory.
    #[arg(short = 'I', value_name = "DIR")]
    pub include_dirs: Vec<PathBuf>,
    /// Threads per group for every kernel: X,Y,Z (overrides the source).
    #[arg(long, value_name = "X,Y,Z", value_parser = parse_group_size)]
    pub group_size: Option<[u32; 3]>,
    /// Groups in the grid for every kernel: X,Y,Z (overrides the launches in the source).
    #[arg(long, value_name = "X,Y,Z", value_parser = parse_grid_size)]
    pub grid_size: Option<[u32; 3]>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
    /// Language of the inputs, instead of guessing from the extension: hlsl (.hlsl .hlsli .fx .fxh .csh),
    /// cuda (.cu .cuh), opencl (.cl), glsl (.comp, and .glsl with a compute layout), wgsl (.wgsl).
    #[arg(long, value_parser = parse_lang)]
    pub lang: Option<Lang>,
    /// Apply machine-applicable fixes (files with syntax errors are left alone).
    #[arg(long, conflicts_with = "diff")]
    pub fix: bool,
    /// Print the fixes as a unified diff instead of applying them.
    #[arg(long)]
    pub diff: bool,
    /// Dead-barrier detection: off, local, categories, or precise (the default).
    #[arg(long, value_name = "MODE", default_value = "precise", value_parser = parse_dead_barriers)]
    pub dead_barriers: DeadBarriers,
    /// Treat calls to functions without a body as touching no shared or device memory.
    #[arg(long)]
    pub assume_calls_safe: bool,
    /// Also report races lockstep could not prove (`possible-race` warnings).
    #[arg(long)]
    pub include_unproven: bool,
    /// Also report stores where every thread writes the same value (`benign-race` notes).
    #[arg(long)]
    pub include_benign: bool,
}

/// `--dead-barriers`: a mode, or off.
#[derive(Clone, Copy, Debug)]
pub struct DeadBarriers(pub Option<lockstep_dbe::Mode>);

fn parse_dead_barriers(s: &str) -> Result<DeadBarriers, String> {
    if s == "off" {
        return Ok(DeadBarriers(None));
    }
    lockstep_dbe::Mode::parse(s).map(|m| DeadBarriers(Some(m))).ok_or_else(|| format!("unknown mode `{s}` (expected off, local, categories or precise)"))
}

pub fn parse_grid_size(s: &str) -> Result<[u32; 3], String> {
    parse_sizes(s, "grid sizes")
}

pub fn parse_group_size(s: &str) -> Result<[u32; 3], String> {
    parse_sizes(s, "group sizes")
}

/// `X`, `X,Y` or `X,Y,Z`, each at least 1; missing axes are 1.
fn parse_sizes(s: &str, what: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err("expected X, X,Y or X,Y,Z".into());
    }
    let mut out = [1u32; 3];
    for (i, p) in parts.iter().enumerate() {
        out[i] = p.trim().parse::<u32>().map_err(|_| format!("`{p}` is not a positive integer"))?;
        if out[i] == 0 {
            return Err(format!("{what} must be at least 1"));
        }
    }
    Ok(out)
}

pub fn parse_lang(s: &str) -> Result<Lang, String> {
    Lang::from_name(s).ok_or_else(|| format!("unknown language `{s}` (expected {})", Lang::names()))
}

pub fn parse_defines(defines: &[String]) -> Vec<(String, Option<String>)> {
    defines
        .iter()
        .map(|d| match d.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (d.clone(), None),
        })
        .collect()
}

/// The kernel files to check, and the GPU sources found in directories that lockstep does not read.
struct Inputs {
    files: Vec<PathBuf>,
    skipped: Vec<PathBuf>,
}

/// Expands directories into the kernel files below them, sorted.
fn collect_files(paths: &[PathBuf], lang: Option<Lang>) -> Result<Inputs, String> {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        if meta.is_dir() {
            let mut stack = vec![p.clone()];
            while let Some(dir) = stack.pop() {
                let entries = std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                for e in entries.flatten() {
                    let path = e.path();
                    match e.file_type() {
                        Ok(t) if t.is_dir() => stack.push(path),
                        Ok(t) if t.is_file() && is_other_glsl_stage(&path) => skipped.push(path),
                        Ok(t) if t.is_file() && Lang::from_path(&path).is_some() => out.push(path),
                        Ok(t) if t.is_file() && lockstep_lower::is_unread_gpu_source(&path) => skipped.push(path),
                        _ => {}
                    }
                }
            }
        } else if lang.is_some() || Lang::from_path(p).is_some() {
            out.push(p.clone());
        } else {
            return Err(format!("{}: unknown file type (use --lang {})", p.display(), Lang::names()));
        }
    }
    out.sort();
    out.dedup();
    skipped.sort();
    skipped.dedup();
    Ok(Inputs { files: out, skipped })
}

/// A `.glsl` file met in a directory that is not a compute shader (a vertex
/// or fragment stage, or a library of functions for one): lockstep does not read it.
fn is_other_glsl_stage(path: &Path) -> bool {
    let glsl = path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("glsl"));
    glsl && !std::fs::read(path).is_ok_and(|bytes| lockstep_lower::declares_compute_layout(&String::from_utf8_lossy(&bytes)))
}

/// One line counting the skipped files by extension: `skipped 3 files lockstep does not read (2 .frag, 1 .spv)`.
fn skipped_summary(skipped: &[PathBuf]) -> Option<String> {
    if skipped.is_empty() {
        return None;
    }
    let mut by_extension = std::collections::BTreeMap::<String, usize>::new();
    for p in skipped {
        let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        *by_extension.entry(ext).or_default() += 1;
    }
    let counts: Vec<String> = by_extension.iter().map(|(ext, n)| format!("{n} .{ext}")).collect();
    let n = skipped.len();
    Some(format!("skipped {n} file{} lockstep does not read ({})", if n == 1 { "" } else { "s" }, counts.join(", ")))
}

/// The result of checking one file.
pub struct FileReport {
    pub db: SourceDb,
    pub diagnostics: Vec<Diagnostic>,
    /// The file (or an include) had syntax errors: fixes are not applied.
    pub has_syntax_errors: bool,
}

pub fn check_file(path: &Path, lang: Lang, options: &Options) -> Result<FileReport, String> {
    check_file_with(path, lang, options, CheckOptions::default())
}

pub fn check_file_with(path: &Path, lang: Lang, options: &Options, checks: CheckOptions) -> Result<FileReport, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut db = SourceDb::new();
    let file = db.add_bytes(path, &bytes);
    let mut found = Vec::new();
    let mut checker = FileChecker::new(checks);
    // Each kernel is checked as soon as it is lowered, then dropped.
    let compiled = compile_streaming(&mut db, file, lang, options, &mut |db, module, kernel| {
        let facts = lockstep_checks::KernelFacts::from_flat(module, kernel);
        checker.kernel(db, &facts, &mut found);
    });
    checker.finish(&db, &mut found);
    let mut diagnostics = compiled.diagnostics;
    diagnostics.extend(found);
    diagnostics.sort_by_key(|d| d.sort_key());
    Ok(FileReport { db, diagnostics, has_syntax_errors: compiled.has_errors })
}

pub fn run(args: &CheckArgs) -> ExitCode {
    let Inputs { files, skipped } = match collect_files(&args.paths, args.lang) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(line) = skipped_summary(&skipped) {
        eprintln!("note: {line}");
    }
    let options = Options {
        defines: parse_defines(&args.defines),
        include_dirs: args.include_dirs.clone(),
        group_size: args.group_size,
        grid_size: args.grid_size,
    };
    let results: Vec<Mutex<Option<Result<FileReport, String>>>> = files.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(files.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(path) = files.get(i) else { break };
                let lang = args.lang.or_else(|| Lang::from_path(path)).unwrap_or(Lang::Hlsl);
                let checks = CheckOptions {
                    dead_barriers: args.dead_barriers.0,
                    assume_calls_safe: args.assume_calls_safe,
                    races: true,
                    include_unproven: args.include_unproven,
                    include_benign: args.include_benign,
                };
                let r = check_file_with(path, lang, &options, checks);
                *results[i].lock().expect("no poisoned lock") = Some(r);
            });
        }
    });
    let mut io_error = false;
    let mut found = 0usize;
    let mut fixed = 0usize;
    let mut json = Vec::new();
    let color = args.format == Format::Human && std::io::stdout().is_terminal();
    let mut stdout = std::io::stdout().lock();
    for r in results {
        match r.into_inner().expect("no poisoned lock") {
            Some(Ok(mut report)) => {
                if args.fix || args.diff {
                    let (planned, refused) = crate::fix::plan(&report.db, &report.diagnostics, report.has_syntax_errors);
                    for r in &refused {
                        eprintln!("warning: not fixing {}: {}", report.db.file(r.file).path.display(), r.reason);
                    }
                    for p in &planned {
                        let path = report.db.file(p.file).path.clone();
                        if args.diff {
                            let _ = stdout.write_all(crate::fix::unified_diff(&path, p).as_bytes());
                        } else if let Err(e) = crate::fix::write_atomically(&path, &p.after) {
                            eprintln!("error: {}: {e}", path.display());
                            io_error = true;
                        } else {
                            fixed += p.applied;
                            // What was fixed is no longer a problem.
                            report.diagnostics.retain(|d| !d.fix.as_ref().is_some_and(|f| f.edits.iter().all(|e| e.span.file == p.file)));
                        }
                    }
                }
                found += report.diagnostics.len();
                match args.format {
                    Format::Human => {
                        let _ = stdout.write_all(render_human(&report.db, &report.diagnostics, color).as_bytes());
                    }
                    Format::Json => json.extend(report.diagnostics.iter().map(|d| to_json_value(&report.db, d))),
                }
            }
            Some(Err(e)) => {
                eprintln!("error: {e}");
                io_error = true;
            }
            None => {}
        }
    }
    if args.format == Format::Json {
        let doc = serde_json::json!({ "diagnostics": json });
        let _ = writeln!(stdout, "{}", serde_json::to_string_pretty(&doc).expect("json serializes"));
    } else if found > 0 {
        let _ = writeln!(stdout, "{found} problem{} found in {} file{}", if found == 1 { "" } else { "s" }, files.len(), if files.len() == 1 { "" } else { "s" });
    }
    if fixed > 0 {
        eprintln!("applied {fixed} fix{}", if fixed == 1 { "" } else { "es" });
    }
    if io_error {
        ExitCode::from(2)
    } else if found > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
