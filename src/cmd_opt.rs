//! `lockstep opt`: remove dead barrier calls from textual LLVM IR, keeping
//! every other byte of the file.

use lockstep_dbe::{Mode, Options};
use lockstep_llvm::{dump_line, optimize, OptConfig};
use lockstep_source::SourceDb;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct OptArgs {
    /// The `.ll` file to read.
    pub input: PathBuf,
    /// Where to write the result (standard output when absent or `-`).
    #[arg(short = 'o', long = "output", value_name = "OUT.ll")]
    pub output: Option<PathBuf>,
    /// How much the engine may assume: local, categories or precise.
    #[arg(long = "dead-barriers", value_name = "MODE", default_value = "precise", value_parser = parse_mode)]
    pub dead_barriers: Mode,
    /// Print one line per removed barrier (source line, function, the four flags) on standard error.
    #[arg(long)]
    pub dump: bool,
    /// Assume calls to functions without a body touch no shared or global memory.
    #[arg(long)]
    pub assume_calls_safe: bool,
    /// Reason only inside each basic block.
    #[arg(long)]
    pub no_inter_block: bool,
    /// Leave these functions alone (LLVM names, comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    pub skip_functions: Vec<String>,
    /// Process at most this many functions, in file order.
    #[arg(long, value_name = "N")]
    pub max_functions: Option<usize>,
    /// Leave alone functions with more basic blocks than this.
    #[arg(long, value_name = "N")]
    pub max_blocks: Option<usize>,
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    Mode::parse(s).ok_or_else(|| format!("unknown mode `{s}` (expected local, categories or precise)"))
}

pub fn execute(args: &OptArgs) -> ExitCode {
    let bytes = match std::fs::read(&args.input) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("lockstep opt: cannot read {}: {e}", args.input.display());
            return ExitCode::from(2);
        }
    };
    // The writer keeps bytes as they are, so the text must be exactly what is on disk.
    let Ok(text) = String::from_utf8(bytes) else {
        eprintln!("lockstep opt: {} is not UTF-8 text", args.input.display());
        return ExitCode::from(2);
    };
    if !looks_like_llvm_ir(&text) {
        eprintln!("lockstep opt: {} is not textual LLVM IR (no `define`, `declare`, `target` or `source_filename` line); nothing was written", args.input.display());
        return ExitCode::from(2);
    }
    let config = OptConfig {
        options: Options { mode: args.dead_barriers, assume_calls_safe: args.assume_calls_safe, inter_block: !args.no_inter_block },
        skip_functions: args.skip_functions.clone(),
        max_functions: args.max_functions,
        max_blocks: args.max_blocks,
    };
    let result = optimize(&mut SourceDb::new(), &args.input, &text, &config);
    if args.dump {
        for r in &result.removals {
            eprintln!("{}", dump_line(r));
        }
    }
    // Always said: a function left alone keeps every barrier, which a user may not expect.
    for (name, why) in &result.skipped {
        eprintln!("lockstep opt: left {name} alone: {why}");
    }
    let written = match args.output.as_deref() {
        Some(path) if path.as_os_str() != "-" => write_atomically(path, &result.output),
        _ => std::io::stdout().write_all(result.output.as_bytes()),
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lockstep opt: cannot write the output: {e}");
            ExitCode::from(2)
        }
    }
}

/// Whether `text` reads as an LLVM module: an empty one, or one with a top-level entity line.
fn looks_like_llvm_ir(text: &str) -> bool {
    const TOP_LEVEL: &[&str] = &["define ", "declare ", "target ", "source_filename", "; ModuleID"];
    text.trim().is_empty() || text.lines().any(|l| TOP_LEVEL.iter().any(|k| l.trim_start().starts_with(k)))
}

/// Writes next to the target, then renames, so a failed write leaves no half file.
fn write_atomically(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.lockstep-tmp"));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const INPUT: &str = r#"target triple = "nvptx64-nvidia-cuda"
@s = internal addrspace(3) global [32 x i32] undef
define ptx_kernel void @k() {
  call void @llvm.nvvm.barrier0()   ; nothing above
  store i32 1, ptr addrspace(3) @s
  call void @llvm.nvvm.barrier0()
  %v = load i32, ptr addrspace(3) @s
  ret void
}
declare void @llvm.nvvm.barrier0()
"#;

    fn args(input: PathBuf, output: Option<PathBuf>) -> OptArgs {
        OptArgs {
            input,
            output,
            dead_barriers: Mode::Categories,
            dump: true,
            assume_calls_safe: false,
            no_inter_block: false,
            skip_functions: Vec::new(),
            max_functions: None,
            max_blocks: None,
        }
    }

    #[test]
    fn writes_the_file_without_the_dead_barrier_line() {
        let dir = std::env::temp_dir().join(format!("lockstep-opt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (input, output) = (dir.join("in.ll"), dir.join("out.ll"));
        std::fs::write(&input, INPUT).unwrap();
        assert_eq!(execute(&args(input.clone(), Some(output.clone()))), ExitCode::SUCCESS);
        let expected = INPUT.replace("  call void @llvm.nvvm.barrier0()   ; nothing above\n", "");
        assert_eq!(std::fs::read_to_string(&output).unwrap(), expected);
        // Errors: a missing input, and bytes that are not UTF-8.
        assert_eq!(execute(&args(dir.join("missing.ll"), Some(output.clone()))), ExitCode::from(2));
        std::fs::write(&input, b"\xff\xfe").unwrap();
        assert_eq!(execute(&args(input.clone(), Some(output.clone()))), ExitCode::from(2));
        // A CUDA file is not IR: refused, and no output is written.
        std::fs::remove_file(&output).unwrap();
        std::fs::write(&input, "__global__ void k() { __syncthreads(); }\n").unwrap();
        assert_eq!(execute(&args(input, Some(output.clone()))), ExitCode::from(2));
        assert!(!output.exists());
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn modes_parse_by_name() {
        assert_eq!(parse_mode("precise"), Ok(Mode::Precise));
        assert!(parse_mode("fast").unwrap_err().contains("expected local, categories or precise"));
    }
}
