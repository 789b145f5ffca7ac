//! `lockstep`: finds synchronization bugs in GPU compute kernels.

use lockstep::{check, cmd_opt, cmd_run, server};

use clap::{Parser, Subcommand};
use std::process::ExitCode;

// The analyses allocate many small vectors; mimalloc serves them faster than
// the system allocator (about 10 % of `lockstep check`, see BENCHMARKS.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "lockstep", version, about = "Finds synchronization bugs in GPU compute kernels and removes barriers that protect nothing")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check kernels for divergent barriers, races and dead barriers.
    Check(check::CheckArgs),
    /// Execute a kernel on the CPU over a dispatch and catch races as they happen.
    Run(cmd_run::RunArgs),
    /// Remove dead barriers from textual LLVM IR.
    Opt(cmd_opt::OptArgs),
    /// Print the settings that apply to a file: its configuration, language, options and rule levels.
    Config(check::ConfigArgs),
    /// Serve editors as a language server on standard input and output.
    Server,
    /// List the checks.
    Rules,
    /// Print the documentation of a rule.
    Explain {
        /// A rule id, as printed by `lockstep rules`.
        rule: String,
    },
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match cli.command {
        Command::Check(args) => check::run(&args),
        Command::Run(args) => cmd_run::execute(&args),
        Command::Opt(args) => cmd_opt::execute(&args),
        Command::Config(args) => check::show_config(&args),
        Command::Server => server::run(),
        Command::Rules => {
            for r in lockstep_checks::RULES {
                let fix = if r.fix { " (fix available)" } else { "" };
                println!("{:<44} {:<8} {}{fix}", r.id, r.severity.as_str(), r.summary);
            }
            ExitCode::SUCCESS
        }
        Command::Explain { rule } => match lockstep_checks::find_rule(&rule) {
            Some(r) => {
                print!("{}", r.doc);
                ExitCode::SUCCESS
            }
            None => {
                eprintln!("error: no rule named `{rule}`; `lockstep rules` lists them");
                ExitCode::from(2)
            }
        },
    }
}
