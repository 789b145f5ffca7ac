//! `lockstep check`: find kernel files, analyse each in parallel, report.

use crate::config::{sizes_of, Config, Discovery};
use crate::select::Selection;
use clap::{Args, ValueEnum};
use lockstep_checks::{CheckOptions, FileChecker};
use lockstep_diag::{render_human, to_json_value, Diagnostic, Severity};
use lockstep_lower::{compile_streaming, KernelShape, Lang, Options};
use lockstep_source::{FileId, SourceDb};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    /// `{"version": 1, "diagnostics": [...]}`.
    Json,
    /// SARIF 2.1.0, for code-scanning services.
    Sarif,
    /// GitHub Actions workflow annotations.
    Github,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Color on a terminal, unless NO_COLOR is set.
    Auto,
    Always,
    Never,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Files or directories to check; `-` reads standard input (see --stdin-filename).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The name standard input is checked under: its language, configuration and include directory.
    #[arg(long, value_name = "FILE")]
    pub stdin_filename: Option<PathBuf>,
    /// Use this configuration file for every checked file instead of looking for one.
    #[arg(long, value_name = "FILE", conflicts_with = "isolated")]
    pub config: Option<PathBuf>,
    /// Ignore every configuration file.
    #[arg(long)]
    pub isolated: bool,
    /// Define a macro: NAME or NAME=VALUE.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub defines: Vec<String>,
    /// Add an include directory.
    #[arg(short = 'I', value_name = "DIR")]
    pub include_dirs: Vec<PathBuf>,
    /// Threads per group for every kernel: X,Y,Z (overrides the source and the configuration).
    #[arg(long, value_name = "X,Y,Z", value_parser = parse_group_size)]
    pub group_size: Option<[u32; 3]>,
    /// Groups in the grid for every kernel: X,Y,Z (overrides the launches in the source and the configuration).
    #[arg(long, value_name = "X,Y,Z", value_parser = parse_grid_size)]
    pub grid_size: Option<[u32; 3]>,
    /// Output format (github is the default when GITHUB_ACTIONS=true, human otherwise).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// When to color human output.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
    /// Language of the inputs, instead of guessing from the extension: hlsl (.hlsl .hlsli .fx .fxh .csh),
    /// cuda (.cu .cuh), opencl (.cl), glsl (.comp, and .glsl with a compute layout), metal (.metal),
    /// cpp-amp (.cpp .cxx .cc using `restrict(amp)`), wgsl (.wgsl).
    #[arg(long, value_parser = parse_lang)]
    pub lang: Option<Lang>,
    /// Report only these rules or families (races, divergence, dead-barriers), comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub select: Vec<String>,
    /// Do not report these rules or families.
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub ignore: Vec<String>,
    /// Report these rules or families as warnings.
    #[arg(long, value_delimiter = ',', value_name = "RULES")]
    pub warn: Vec<String>,
    /// Exit with 0 even when problems are reported.
    #[arg(long)]
    pub exit_zero: bool,
    /// Print how many problems each rule reported (instead of the problems, in human output).
    #[arg(long)]
    pub statistics: bool,
    /// Print the problems only: no summary line, no notes.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// List the files skipped because lockstep does not read their language.
    #[arg(long)]
    pub show_skipped: bool,
    /// Apply machine-applicable fixes (files with syntax errors are left alone).
    #[arg(long, conflicts_with = "diff")]
    pub fix: bool,
    /// Print the fixes as a unified diff instead of applying them.
    #[arg(long)]
    pub diff: bool,
    /// Dead-barrier detection: off, local, categories, or precise (the default).
    #[arg(long, value_name = "MODE", value_parser = parse_dead_barriers)]
    pub dead_barriers: Option<DeadBarriers>,
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

pub fn parse_dead_barriers(s: &str) -> Result<DeadBarriers, String> {
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

/// The result of checking one file.
pub struct FileReport {
    pub db: SourceDb,
    pub diagnostics: Vec<Diagnostic>,
    /// The file (or an include) had syntax errors: fixes are not applied.
    pub has_syntax_errors: bool,
    /// Entry points lowered and checked.
    pub kernels: usize,
    /// Device functions checked as if a kernel in another file called them
    /// (the file has no kernel).
    pub device_functions: usize,
    /// The file is not text (NUL bytes near its start): one `binary-file` diagnostic, nothing checked.
    pub binary: bool,
    /// Every group barrier in every kernel, with what the dead-barrier analysis found around it
    /// (for the language server's hover; empty when `dead-barrier` is off).
    pub barriers: Vec<lockstep_dbe::BarrierReport>,
}

/// Operations (with helpers inlined) one file's kernels may hold in all
/// before the rest are skipped: keeps every file to seconds (ggml's Metal
/// flash-attention files instantiate one large template 16 times).
const FILE_OPERATION_BUDGET: usize = 1_500_000;

fn kernel_skipped_for_budget(kernel: &lockstep_ir::Function) -> Diagnostic {
    Diagnostic::new("kernel-skipped", lockstep_diag::Severity::Warning, kernel.span, format!("kernel `{}` was not checked: the file's analysis budget is spent", kernel.name))
        .with_primary_label("skipped")
        .with_note(format!(
            "the kernels checked before it in this file hold over {FILE_OPERATION_BUDGET} operations with their helpers inlined; check this kernel's instantiation on its own (a file of its own, or fewer instantiations) to analyse it"
        ))
}

/// How far into a file NUL bytes mark it as binary.
const BINARY_PROBE: usize = 8192;

pub fn check_file(path: &Path, lang: Lang, options: &Options) -> Result<FileReport, String> {
    check_file_with(path, lang, options, CheckOptions::default())
}

pub fn check_file_with(path: &Path, lang: Lang, options: &Options, checks: CheckOptions) -> Result<FileReport, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(check_bytes(path, &bytes, lang, options, checks))
}

/// Checks one file's contents; `path` is the name diagnostics use (and where includes are looked up).
pub fn check_bytes(path: &Path, bytes: &[u8], lang: Lang, options: &Options, checks: CheckOptions) -> FileReport {
    let mut db = SourceDb::new();
    if bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) {
        let file = db.add(path, "");
        let d = Diagnostic::new("binary-file", Severity::Warning, lockstep_source::Span::new(file, 0, 0), "not a text file; skipped")
            .with_primary_label("NUL bytes in the first 8 KiB");
        return FileReport { db, diagnostics: vec![d], has_syntax_errors: true, kernels: 0, device_functions: 0, binary: true, barriers: Vec::new() };
    }
    let file = db.add_bytes(path, bytes);
    let mut found = Vec::new();
    let mut checker = FileChecker::new(checks);
    let (mut kernels, mut device_functions) = (0, 0);
    let mut spent = 0usize;
    let mut skipped = Vec::new();
    // Each kernel is checked as soon as it is lowered, then dropped.
    let compiled = compile_streaming(&mut db, file, lang, options, &mut |db, module, kernel| {
        // A deterministic budget per file: once the kernels checked so far
        // hold this many operations, the rest are listed as skipped.
        if spent > FILE_OPERATION_BUDGET {
            skipped.push(kernel_skipped_for_budget(&kernel));
            return;
        }
        spent += kernel.insts.len();
        if kernel.entry.as_ref().is_some_and(|e| e.caller_unknown) {
            device_functions += 1;
        } else {
            kernels += 1;
        }
        let facts = lockstep_checks::KernelFacts::from_flat(module, kernel);
        checker.kernel(db, &facts, &mut found);
    });
    let barriers = checker.barriers().cloned().collect();
    checker.finish(&db, &mut found);
    found.extend(skipped);
    let mut diagnostics = compiled.diagnostics;
    diagnostics.extend(found);
    diagnostics.sort_by_key(|d| d.sort_key());
    FileReport { db, diagnostics, has_syntax_errors: compiled.has_errors, kernels, device_functions, binary: false, barriers }
}

/// Everything decided for one file: language, front-end options, checks, rule levels.
pub struct FileSettings {
    pub config: Option<Arc<Config>>,
    pub lang: Option<Lang>,
    pub options: Options,
    pub checks: CheckOptions,
    pub selection: Selection,
}

/// The settings that apply to every file before its configuration is known.
#[derive(Default)]
pub struct CommonSettings<'a> {
    pub lang: Option<Lang>,
    pub defines: &'a [String],
    pub include_dirs: &'a [PathBuf],
    pub group_size: Option<[u32; 3]>,
    pub grid_size: Option<[u32; 3]>,
    pub dead_barriers: Option<DeadBarriers>,
    pub assume_calls_safe: bool,
    pub include_unproven: bool,
    pub include_benign: bool,
    pub select: &'a [String],
    pub ignore: &'a [String],
    pub warn: &'a [String],
}

impl CheckArgs {
    pub fn common(&self) -> CommonSettings<'_> {
        CommonSettings {
            lang: self.lang,
            defines: &self.defines,
            include_dirs: &self.include_dirs,
            group_size: self.group_size,
            grid_size: self.grid_size,
            dead_barriers: self.dead_barriers,
            assume_calls_safe: self.assume_calls_safe,
            include_unproven: self.include_unproven,
            include_benign: self.include_benign,
            select: &self.select,
            ignore: &self.ignore,
            warn: &self.warn,
        }
    }
}

/// Combines the command line with the configuration that governs `path` (the command line wins).
pub fn settings_for(common: &CommonSettings, discovery: &Discovery, path: &Path) -> Result<FileSettings, String> {
    let config = discovery.for_file(path)?;
    let mut selection = Selection::default();
    let mut defines = Vec::new();
    let mut include_dirs = common.include_dirs.to_vec();
    let mut lang = common.lang;
    let mut options = Options { group_size: common.group_size, grid_size: common.grid_size, ..Options::default() };
    let mut dead_barriers = common.dead_barriers;
    let (mut include_unproven, mut include_benign, mut assume_calls_safe) = (common.include_unproven, common.include_benign, common.assume_calls_safe);
    if let Some(c) = &config {
        let f = &c.file;
        let define = |(n, v): (&String, &crate::config::DefineValue)| (n.clone(), v.value());
        defines.extend(f.defines.iter().map(define));
        selection = selection.with_levels(&f.rules)?;
        let overrides: Vec<_> = c.overrides_for(path).collect();
        for o in &overrides {
            defines.extend(o.defines.iter().map(define));
            include_dirs.extend(o.include_dirs.iter().map(|d| c.dir.join(d)));
            selection = selection.with_levels(&o.rules)?;
        }
        include_dirs.extend(f.include_dirs.iter().map(|d| c.dir.join(d)));
        if lang.is_none() {
            lang = overrides.iter().rev().find_map(|o| o.lang.as_deref()).map(parse_lang).transpose()?;
        }
        options.wave_size = f.wave_size;
        for (name, k) in &f.kernels {
            let shape = KernelShape {
                group_size: k.group_size.as_deref().map(sizes_of).transpose()?,
                grid_size: k.grid_size.as_deref().map(sizes_of).transpose()?,
            };
            options.kernels.insert(name.clone(), shape);
        }
        if dead_barriers.is_none() {
            dead_barriers = f.dead_barriers.as_deref().map(parse_dead_barriers).transpose()?;
        }
        include_unproven |= f.include_unproven.unwrap_or(false);
        include_benign |= f.include_benign.unwrap_or(false);
        assume_calls_safe |= f.assume_calls_safe.unwrap_or(false);
    }
    // Command-line defines come last, so they win over the configuration's.
    defines.extend(parse_defines(common.defines));
    options.defines = defines;
    options.include_dirs = include_dirs;
    let selection = selection.with_command_line(common.select, common.ignore, common.warn)?;
    let dead_barriers = dead_barriers.unwrap_or(DeadBarriers(Some(lockstep_dbe::Mode::Precise)));
    let checks = CheckOptions {
        // A rule nobody will see is not worth computing.
        dead_barriers: dead_barriers.0.filter(|_| selection.enabled("dead-barrier")),
        assume_calls_safe,
        races: true,
        include_unproven: include_unproven || selection.asked_for("possible-race"),
        include_benign: include_benign || selection.asked_for("benign-race"),
    };
    let lang = lang.or_else(|| Lang::from_path(path)).or_else(|| is_cpp_amp_source(path).then_some(Lang::CppAmp));
    Ok(FileSettings { config, lang, options, checks, selection })
}

/// What was found to check.
struct Inputs {
    /// Kernel files, each with its settings.
    files: Vec<(PathBuf, FileSettings)>,
    /// Read from standard input under this name.
    stdin: Option<(PathBuf, FileSettings)>,
    /// Files in walked directories whose language lockstep does not read.
    skipped: Vec<PathBuf>,
}

/// Expands directories into the kernel files below them (honouring `.gitignore`, hidden files
/// and the configuration's `include`/`exclude`), sorted.
fn collect_inputs(args: &CheckArgs, discovery: &Discovery) -> Result<Inputs, String> {
    let common = args.common();
    let mut files = Vec::new();
    let mut skipped = Vec::new();
    let mut stdin = None;
    for p in &args.paths {
        if p.as_os_str() == "-" {
            let name = args.stdin_filename.clone().unwrap_or_else(|| PathBuf::from("stdin"));
            let settings = settings_for(&common, discovery, &name)?;
            if settings.lang.is_none() {
                return Err(format!("standard input: unknown language (use --stdin-filename with a kernel extension, or --lang {})", Lang::names()));
            }
            stdin = Some((name, settings));
            continue;
        }
        let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
        if !meta.is_dir() {
            let settings = settings_for(&common, discovery, p)?;
            if settings.lang.is_none() {
                return Err(format!("{}: unknown file type (use --lang {})", p.display(), Lang::names()));
            }
            files.push((p.clone(), settings));
            continue;
        }
        let walk = ignore::WalkBuilder::new(p).hidden(true).git_ignore(true).require_git(false).follow_links(true).build();
        for entry in walk {
            let entry = entry.map_err(|e| e.to_string())?;
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let path = entry.into_path();
            let config = discovery.for_file(&path)?;
            if config.as_ref().is_some_and(|c| c.excludes(&path)) {
                continue;
            }
            let overridden = config.as_ref().is_some_and(|c| c.overrides_for(&path).any(|o| o.lang.is_some()));
            if is_other_glsl_stage(&path) && !overridden {
                skipped.push(path);
            } else if Lang::from_path(&path).is_some() || overridden || is_cpp_amp_source(&path) {
                let settings = settings_for(&common, discovery, &path)?;
                files.push((path, settings));
            } else if lockstep_lower::is_unread_gpu_source(&path) {
                skipped.push(path);
            }
        }
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files.dedup_by(|a, b| a.0 == b.0);
    skipped.sort();
    skipped.dedup();
    Ok(Inputs { files, stdin, skipped })
}

/// A `.glsl` file met in a directory that is not a compute shader (a vertex
/// or fragment stage, or a library of functions for one): lockstep does not read it.
fn is_other_glsl_stage(path: &Path) -> bool {
    let glsl = path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("glsl"));
    glsl && !std::fs::read(path).is_ok_and(|bytes| lockstep_lower::declares_compute_layout(&String::from_utf8_lossy(&bytes)))
}

/// A C++ file whose text uses `restrict(amp)`: C++ AMP kernels live in ordinary C++ sources.
fn is_cpp_amp_source(path: &Path) -> bool {
    Lang::from_path(path).is_none()
        && std::fs::read(path).is_ok_and(|bytes| Lang::from_path_and_text(path, &String::from_utf8_lossy(&bytes)) == Some(Lang::CppAmp))
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
    Some(format!("skipped {n} file{} lockstep does not read ({})", plural(n), counts.join(", ")))
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A checked file after selection and suppressions.
pub struct Outcome {
    pub report: FileReport,
    pub suppressed: usize,
}

/// Checks one file (`bytes`, or the file on disk when None) as `check` does: with its settings'
/// language, options and checks, then rule selection and suppressions.
pub fn check_one(path: &Path, bytes: Option<&[u8]>, settings: &FileSettings) -> Result<Outcome, String> {
    let lang = settings.lang.unwrap_or(Lang::Hlsl);
    let mut report = match bytes {
        Some(b) => check_bytes(path, b, lang, &settings.options, settings.checks),
        None => check_file_with(path, lang, &settings.options, settings.checks)?,
    };
    settings.selection.apply(&mut report.diagnostics);
    let suppressed = if report.binary { 0 } else { crate::suppress::apply(&report.db, FileId(0), &mut report.diagnostics, &settings.selection) };
    Ok(Outcome { report, suppressed })
}

fn use_color(choice: ColorChoice, format: Format) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => format == Format::Human && std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

/// The output format asked for, or GitHub annotations inside GitHub Actions.
fn format_of(args: &CheckArgs) -> Format {
    args.format.unwrap_or_else(|| if std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true") { Format::Github } else { Format::Human })
}

pub fn run(args: &CheckArgs) -> ExitCode {
    let discovery = match Discovery::new(args.config.as_deref(), args.isolated) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let Inputs { files, stdin, skipped } = match collect_inputs(args, &discovery) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if files.is_empty() && stdin.is_none() {
        let where_ = args.paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ");
        eprintln!("error: no kernel files found in {where_}");
        if let Some(line) = skipped_summary(&skipped) {
            eprintln!("note: {line}");
        }
        return ExitCode::from(2);
    }
    let format = format_of(args);
    let mut results: Vec<Mutex<Option<Result<Outcome, String>>>> = files.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(files.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((path, settings)) = files.get(i) else { break };
                *results[i].lock().expect("no poisoned lock") = Some(check_one(path, None, settings));
            });
        }
    });
    let mut outcomes: Vec<Result<Outcome, String>> = results.iter_mut().filter_map(|r| r.get_mut().expect("no poisoned lock").take()).collect();
    if let Some((name, settings)) = &stdin {
        let mut bytes = Vec::new();
        if let Err(e) = std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes) {
            eprintln!("error: standard input: {e}");
            return ExitCode::from(2);
        }
        outcomes.push(check_one(name, Some(&bytes), settings));
    }
    let from_stdin = |i: usize| stdin.is_some() && i == files.len();
    let color = use_color(args.color, format);
    let mut stdout = std::io::stdout().lock();
    let mut io_error = false;
    let (mut problems, mut suppressed, mut fixed, mut kernels, mut checked, mut binary) = (0usize, 0usize, 0usize, 0usize, 0usize, 0usize);
    let mut device_functions = 0usize;
    let mut machine = Vec::new();
    let mut diffs = Vec::new();
    let mut statistics = std::collections::BTreeMap::<(String, &'static str), usize>::new();
    for (i, outcome) in outcomes.into_iter().enumerate() {
        let mut outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                eprintln!("error: {e}");
                io_error = true;
                continue;
            }
        };
        let report = &mut outcome.report;
        if report.binary {
            binary += 1;
        } else {
            checked += 1;
        }
        kernels += report.kernels;
        device_functions += report.device_functions;
        suppressed += outcome.suppressed;
        if args.fix || args.diff {
            let (planned, refused) = crate::fix::plan(&report.db, &report.diagnostics, report.has_syntax_errors);
            for r in refused.iter().filter(|_| !report.binary) {
                eprintln!("warning: not fixing {}: {}", report.db.file(r.file).path.display(), r.reason);
            }
            for p in &planned {
                let path = report.db.file(p.file).path.clone();
                if args.diff || from_stdin(i) {
                    let diff = crate::fix::unified_diff(&path, p);
                    match format {
                        Format::Json => diffs.push(serde_json::json!({ "path": path.display().to_string(), "diff": diff })),
                        Format::Human => {
                            let _ = stdout.write_all(diff.as_bytes());
                        }
                        Format::Sarif | Format::Github => eprint!("{diff}"),
                    }
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
        problems += report.diagnostics.len();
        for d in &report.diagnostics {
            *statistics.entry((d.rule.clone(), d.severity.as_str())).or_default() += 1;
        }
        match format {
            Format::Human if !args.statistics => {
                let _ = stdout.write_all(render_human(&report.db, &report.diagnostics, color).as_bytes());
            }
            Format::Human => {}
            Format::Json => machine.extend(report.diagnostics.iter().map(|d| to_json_value(&report.db, d))),
            Format::Sarif => machine.extend(report.diagnostics.iter().map(|d| crate::output::sarif_result(&report.db, d))),
            Format::Github => {
                for d in &report.diagnostics {
                    let _ = stdout.write_all(crate::output::github_annotation(&report.db, d).as_bytes());
                }
            }
        }
    }
    match format {
        Format::Json => {
            let mut doc = serde_json::json!({ "version": JSON_VERSION, "diagnostics": machine });
            if args.diff {
                doc["diffs"] = serde_json::json!(diffs);
            }
            let _ = writeln!(stdout, "{}", serde_json::to_string_pretty(&doc).expect("json serializes"));
        }
        Format::Sarif => {
            let _ = writeln!(stdout, "{}", serde_json::to_string_pretty(&crate::output::sarif_log(machine)).expect("json serializes"));
        }
        Format::Human | Format::Github => {}
    }
    // Human output keeps its report on standard output; machine formats keep standard output parseable.
    let mut report_line = |line: String| {
        if format == Format::Human {
            let _ = writeln!(stdout, "{line}");
        } else {
            eprintln!("{line}");
        }
    };
    if args.statistics {
        for ((rule, severity), n) in &statistics {
            report_line(format!("{n:>6}  {rule:<44} {severity}"));
        }
    }
    if !args.quiet {
        // Notes about the run, not findings, go to standard error in every format.
        if args.show_skipped {
            for p in &skipped {
                eprintln!("skipped: {} (a language lockstep does not read)", p.display());
            }
        } else if let Some(line) = skipped_summary(&skipped) {
            eprintln!("note: {line}");
        }
        if fixed > 0 {
            eprintln!("applied {fixed} fix{}", if fixed == 1 { "" } else { "es" });
        }
        let skipped_total = skipped.len() + binary;
        let without_kernel = if device_functions > 0 {
            format!(", {device_functions} device function{} of files without a kernel", plural(device_functions))
        } else {
            String::new()
        };
        report_line(format!(
            "checked {checked} file{} ({kernels} kernel{}{without_kernel}), {problems} problem{} ({suppressed} suppressed), {skipped_total} skipped",
            plural(checked),
            plural(kernels),
            plural(problems)
        ));
    }
    if io_error {
        ExitCode::from(2)
    } else if problems > 0 && !args.exit_zero {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The version of the `--format json` document; raised when a field changes meaning or goes away.
pub const JSON_VERSION: u32 = 1;

#[derive(Args, Debug)]
pub struct ConfigArgs {
    /// The file whose settings to show (a directory: a file in it); the current directory when absent.
    pub file: Option<PathBuf>,
    /// Use this configuration file instead of looking for one.
    #[arg(long, value_name = "FILE", conflicts_with = "isolated")]
    pub config: Option<PathBuf>,
    /// Ignore every configuration file.
    #[arg(long)]
    pub isolated: bool,
}

/// `lockstep config [FILE]`: the effective settings, as `check` would use them for FILE.
pub fn show_config(args: &ConfigArgs) -> ExitCode {
    let file = args.file.clone().unwrap_or_else(|| PathBuf::from("."));
    // Settings are looked up for a file; a directory stands for a file inside it.
    let probe = if file.is_dir() { file.join("*") } else { file.clone() };
    let settings = Discovery::new(args.config.as_deref(), args.isolated).and_then(|d| settings_for(&CommonSettings::default(), &d, &probe));
    let s = match settings {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let mut out = String::new();
    let mut line = |k: &str, v: String| out.push_str(&format!("{k:<18} {v}\n"));
    line("file", file.display().to_string());
    line("configuration", s.config.as_ref().map_or("none".into(), |c| c.path.display().to_string()));
    line("excluded", s.config.as_ref().is_some_and(|c| c.excludes(&file)).to_string());
    line("language", s.lang.map_or("unknown".into(), |l| l.name().to_string()));
    let defines: Vec<String> = s.options.defines.iter().map(|(n, v)| v.as_ref().map_or(n.clone(), |v| format!("{n}={v}"))).collect();
    line("defines", defines.join(" "));
    line("include-dirs", s.options.include_dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(" "));
    let sizes = |v: Option<[u32; 3]>| v.map_or("from the source".into(), |[x, y, z]| format!("{x},{y},{z}"));
    line("group-size", sizes(s.options.group_size));
    line("grid-size", sizes(s.options.grid_size));
    for (name, k) in &s.options.kernels {
        line(&format!("kernel {name}"), format!("group-size {}, grid-size {}", sizes(k.group_size), sizes(k.grid_size)));
    }
    line("wave-size", s.options.wave_size.map_or("from the source".into(), |w| w.to_string()));
    line("dead-barriers", s.checks.dead_barriers.map_or("off".into(), |m| format!("{m:?}").to_lowercase()));
    line("include-unproven", s.checks.include_unproven.to_string());
    line("include-benign", s.checks.include_benign.to_string());
    line("assume-calls-safe", s.checks.assume_calls_safe.to_string());
    out.push_str("rules\n");
    for r in lockstep_checks::RULES.iter().chain(lockstep_checks::TOOL_DIAGNOSTICS) {
        // Rules whose analysis is off are not reported whatever their level.
        let computed = match r.id {
            "possible-race" => s.checks.include_unproven,
            "benign-race" => s.checks.include_benign,
            "dead-barrier" => s.checks.dead_barriers.is_some(),
            _ => true,
        };
        let level = s.selection.severity(r.id, r.severity).filter(|_| computed).map_or("allow", Severity::as_str);
        out.push_str(&format!("  {:<44} {level}\n", r.id));
    }
    print!("{out}");
    ExitCode::SUCCESS
}
