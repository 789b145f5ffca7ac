//! `lockstep run`: executes a kernel over a dispatch on the CPU with
//! lockstep-emu and reports races, barrier divergence, out-of-bounds
//! accesses, uninitialised shared reads and runaway loops as they happen.
//!
//! Exit status: 0 when the run found nothing, 1 when it reported findings,
//! 2 on usage, input or I/O errors (including sources that do not compile
//! and launch files that do not fit the kernel).

use clap::{Args, ValueEnum};
use lockstep_diag::{render_human, Severity};
use lockstep_emu::{Launch, Output, RunConfig, Scheduler};
use lockstep_lower::{compile, Lang, Options};
use lockstep_source::SourceDb;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RunFormat {
    Human,
    Json,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SchedulerArg {
    RoundRobin,
    Reverse,
    Random,
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// Kernel source file in any language lockstep reads (HLSL, CUDA, OpenCL C, GLSL, Metal, C++ AMP, WGSL).
    pub file: PathBuf,
    /// Entry point to run; may be omitted when the file has one kernel.
    #[arg(long)]
    pub entry: Option<String>,
    /// Number of groups in the dispatch: X, X,Y or X,Y,Z.
    #[arg(long, value_name = "X,Y,Z", value_parser = parse_xyz, default_value = "1")]
    pub groups: [u32; 3],
    /// Threads per group (overrides the source's [numthreads]).
    #[arg(long, value_name = "X,Y,Z", value_parser = parse_xyz)]
    pub group_size: Option<[u32; 3]>,
    /// Run only this group (repeatable); the others are skipped.
    #[arg(long = "only-group", value_name = "X,Y,Z", value_parser = parse_coord)]
    pub only_groups: Vec<[u32; 3]>,
    /// Launch description (TOML): constants, buffer contents, outputs.
    #[arg(long, value_name = "launch.toml")]
    pub input: Option<PathBuf>,
    /// Lanes per wave (default: the kernel's required size, else 32).
    #[arg(long, value_name = "N")]
    pub wave_size: Option<u32>,
    /// Order in which the threads of a group run between barriers.
    #[arg(long, value_enum, default_value = "round-robin")]
    pub scheduler: SchedulerArg,
    /// Seed of the random scheduler.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Instructions one thread may run before it counts as a runaway loop.
    #[arg(long, default_value_t = 1 << 24)]
    pub max_steps: u64,
    /// Only compute results; report no races.
    #[arg(long)]
    pub no_race_detection: bool,
    /// Refuse to start a run estimated to need more memory than this (bytes, or with K, M, G;
    /// default: the memory available when the run starts).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_memory: Option<u64>,
    /// Output format of the findings.
    #[arg(long, value_enum, default_value = "human")]
    pub format: RunFormat,
    /// Define a macro: NAME or NAME=VALUE.
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub defines: Vec<String>,
    /// Add an include directory.
    #[arg(short = 'I', value_name = "DIR")]
    pub include_dirs: Vec<PathBuf>,
    /// Language of the file, instead of guessing from the extension or, for C++, the text
    /// (hlsl, cuda, opencl, glsl, metal, cpp-amp, wgsl).
    #[arg(long, value_parser = parse_lang)]
    pub lang: Option<Lang>,
    /// Run even when the launch file leaves kernel arguments or dynamically sized shared arrays
    /// unspecified: arguments and buffers are zero, such arrays are empty.
    #[arg(long)]
    pub zero_fill: bool,
}

/// A size `X`, `X,Y` or `X,Y,Z`; missing axes are 1.
pub fn parse_xyz(s: &str) -> Result<[u32; 3], String> {
    parse_axes(s, 1)
}

/// A group's coordinates `X`, `X,Y` or `X,Y,Z`; missing axes are 0.
pub fn parse_coord(s: &str) -> Result<[u32; 3], String> {
    parse_axes(s, 0)
}

fn parse_axes(s: &str, missing: u32) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(',').collect();
    if parts.len() > 3 {
        return Err("expected X, X,Y or X,Y,Z".into());
    }
    let mut out = [missing; 3];
    for (i, p) in parts.iter().enumerate() {
        out[i] = p.trim().parse::<u32>().map_err(|_| format!("`{}` is not a non-negative integer", p.trim()))?;
    }
    Ok(out)
}

/// A size in bytes: `1073741824`, `512M`, `4G` (powers of 1024; `KiB`, `MB` and the like read the same).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let digits = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (num, unit) = t.split_at(digits);
    let shift = match unit.trim().to_ascii_lowercase().trim_end_matches("ib").trim_end_matches('b') {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err(format!("`{s}` is not a size (expected bytes, or a number with K, M, G or T)")),
    };
    let n: f64 = num.parse().map_err(|_| format!("`{s}` is not a size (expected bytes, or a number with K, M, G or T)"))?;
    Ok((n * (1u64 << shift) as f64) as u64)
}

/// Memory the system can give a process now without swapping (Linux), for
/// refusing runs that would be killed for memory.
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn parse_lang(s: &str) -> Result<Lang, String> {
    Lang::from_name(s).ok_or_else(|| format!("unknown language `{s}` (expected {})", Lang::names()))
}

/// The kernel's arguments, and the shared arrays it uses without a declared size, that the launch
/// file does not give: running with zeros for them rarely tests what the user meant.
fn unspecified_inputs(module: &lockstep_ir::Module, entry: lockstep_ir::FuncId, launch: &Launch) -> Vec<String> {
    let f = module.function(entry);
    let given = |name: &str| launch.buffer(name).is_some() || launch.constants.iter().any(|(c, _)| c == name);
    let mut missing: Vec<String> = f.params.iter().filter(|p| !given(&p.name)).map(|p| format!("argument `{}`", p.name)).collect();
    let mut used = std::collections::BTreeSet::new();
    for inst in &f.insts {
        let root = match &inst.op {
            lockstep_ir::Op::AddrOf(root, _) => Some(*root),
            op => op.mem_ref().map(|r| r.root),
        };
        if let Some(lockstep_ir::Root::Global(g)) = root {
            used.insert(g);
        }
    }
    for g in used {
        let global = module.global(g);
        let sized_by_launch = launch.buffer(&global.name).is_some_and(|b| b.len.is_some());
        if global.space == lockstep_ir::MemSpace::Shared && global.len.is_none() && !sized_by_launch {
            missing.push(format!("the length of shared array `{}`", global.name));
        }
        // A pipeline constant without a default has no value until the host gives one.
        if global.open_value == Some(lockstep_ir::OpenValue::PipelineConstant) && global.init.is_empty() && !given(&global.name) {
            missing.push(format!("pipeline constant `{}`", global.name));
        }
    }
    missing
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

pub fn execute(args: &RunArgs) -> ExitCode {
    let bytes = match std::fs::read(&args.file) {
        Ok(b) => b,
        Err(e) => return fail(format!("{}: {e}", args.file.display())),
    };
    let Some(lang) = args.lang.or_else(|| Lang::from_path_and_text(&args.file, &String::from_utf8_lossy(&bytes))) else {
        return fail(format!("{}: unknown file type (use --lang {})", args.file.display(), Lang::names()));
    };
    let mut db = SourceDb::new();
    let file = db.add_bytes(&args.file, &bytes);
    let defines = args
        .defines
        .iter()
        .map(|d| match d.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (d.clone(), None),
        })
        .collect();
    let options = Options { defines, include_dirs: args.include_dirs.clone(), group_size: args.group_size, ..Options::default() };
    let compiled = compile(&mut db, file, lang, &options);
    let errors: Vec<_> = compiled.diagnostics.iter().filter(|d| d.severity == Severity::Error).cloned().collect();
    if compiled.has_errors || !errors.is_empty() {
        eprint!("{}", render_human(&db, &errors, std::io::stderr().is_terminal()));
        return fail(format!("{} does not compile; nothing was run", args.file.display()));
    }
    let module = compiled.module;
    let entries: Vec<&str> = module.entries().map(|f| module.function(f).name.as_str()).collect();
    let entry = match &args.entry {
        Some(name) => match module.entries().find(|&f| module.function(f).name == *name) {
            Some(f) => f,
            None => return fail(format!("no kernel named `{name}` in {} (kernels: {})", args.file.display(), list(&entries))),
        },
        None => match module.entries().collect::<Vec<_>>()[..] {
            [f] => f,
            [] => return fail(format!("{} has no kernel entry point", args.file.display())),
            _ => return fail(format!("{} has several kernels; pick one with --entry ({})", args.file.display(), list(&entries))),
        },
    };
    let launch = match &args.input {
        Some(path) => match Launch::from_file(path) {
            Ok(l) => l,
            Err(e) => return fail(e),
        },
        None => Launch::default(),
    };
    let unspecified = unspecified_inputs(&module, entry, &launch);
    if !unspecified.is_empty() && !args.zero_fill {
        let missing = args.input.as_ref().map_or("there is no launch file (--input) to give".to_string(), |p| format!("the launch file {} does not give", p.display()));
        return fail(format!(
            "{missing} {}; give them under [constants] and [buffers] (see docs/run.md), or pass --zero-fill to run with zeros",
            unspecified.join(", ")
        ));
    }
    let config = RunConfig {
        groups: args.groups,
        group_size: args.group_size,
        wave_size: args.wave_size,
        scheduler: match args.scheduler {
            SchedulerArg::RoundRobin => Scheduler::RoundRobin,
            SchedulerArg::Reverse => Scheduler::Reverse,
            SchedulerArg::Random => Scheduler::Random,
        },
        seed: args.seed,
        max_steps: args.max_steps,
        detect_races: !args.no_race_detection,
        group_filter: (!args.only_groups.is_empty()).then(|| args.only_groups.clone()),
        threads: 0,
        progress: true,
        all_buffers: false,
        max_memory: args.max_memory.or_else(available_memory),
    };
    let outcome = match lockstep_emu::run(&db, &module, entry, &launch, &config) {
        Ok(o) => o,
        Err(e) => return fail(e),
    };
    for b in &outcome.buffers {
        if let Some(Output::File(path)) = &b.output {
            if let Err(e) = std::fs::write(path, b.to_bytes()) {
                return fail(format!("cannot write buffer `{}` to {}: {e}", b.name, path.display()));
            }
        }
    }
    let mut stdout = std::io::stdout().lock();
    match args.format {
        RunFormat::Json => {
            let _ = writeln!(stdout, "{}", lockstep_emu::outcome_json(&db, &outcome));
        }
        RunFormat::Human => {
            let color = std::io::stdout().is_terminal();
            let _ = stdout.write_all(render_human(&db, &outcome.findings, color).as_bytes());
            for b in outcome.buffers.iter().filter(|b| b.output == Some(Output::Stdout)) {
                let _ = writeln!(stdout, "{}", b.to_toml_line());
            }
            let s = &outcome.stats;
            let n = outcome.findings.len();
            eprintln!(
                "ran {} group{} ({} threads, {} thread-instructions) in {:.2} s{}: {}",
                s.groups,
                if s.groups == 1 { "" } else { "s" },
                s.threads,
                s.thread_instructions,
                s.elapsed.as_secs_f64(),
                if outcome.aborted { ", stopped early" } else { "" },
                if n == 0 { "no problems found".to_string() } else { format!("{n} problem{} found", if n == 1 { "" } else { "s" }) }
            );
        }
    }
    if outcome.findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

fn list(names: &[&str]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}
