//! `cargo bench --bench check_phases -- FILE MODE REPS`: time one file through one
//! prefix of the pipeline, REPS times, for profiling (`perf record` this binary).
//! MODE: `parse` (tree-sitter only), `pp` (preprocessing only), `ppparse`
//! (preprocessing, then parsing its output), `div` (divergence check only), `dbe`
//! (+ dead barriers), `full` (+ races).

use lockstep::check::check_file_with;
use lockstep_checks::CheckOptions;
use lockstep_lower::{Lang, Options};
use std::time::Instant;

// As in the `lockstep` binary.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // `cargo bench` passes `--bench` first.
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let [path, mode, reps] = args.as_slice() else {
        eprintln!("usage: check_phases FILE parse|pp|ppparse|div|dbe|full REPS");
        std::process::exit(2);
    };
    let path = std::path::Path::new(path);
    let mode = mode.as_str();
    let reps: usize = reps.parse().expect("REPS is a number");
    let text = std::fs::read_to_string(path).unwrap();
    let lang = Lang::from_path(path).unwrap();
    let t = Instant::now();
    let mut n = 0;
    for _ in 0..reps {
        n += match mode {
            "parse" => lockstep_syntax::parse(lang.grammar().expect("a tree-sitter language"), &text).map(|t| t.root_node().child_count() as usize).unwrap_or(0),
            "pp" => {
                let mut db = lockstep_source::SourceDb::new();
                let file = db.add(path, text.clone());
                let out = lockstep_preprocess::preprocess(&mut db, file, &Default::default(), &lockstep_preprocess::FsLoader);
                out.text.len()
            }
            "ppparse" => {
                let mut db = lockstep_source::SourceDb::new();
                let file = db.add(path, text.clone());
                let out = lockstep_preprocess::preprocess(&mut db, file, &Default::default(), &lockstep_preprocess::FsLoader);
                lockstep_syntax::parse(lang.grammar().expect("a tree-sitter language"), &out.text).map(|t| t.root_node().child_count() as usize).unwrap_or(0)
            }
            "div" => check_file_with(path, lang, &Options::default(), CheckOptions { dead_barriers: None, races: false, ..CheckOptions::default() }).unwrap().diagnostics.len(),
            "dbe" => check_file_with(path, lang, &Options::default(), CheckOptions { races: false, ..CheckOptions::default() }).unwrap().diagnostics.len(),
            _ => check_file_with(path, lang, &Options::default(), CheckOptions::default()).unwrap().diagnostics.len(),
        };
    }
    eprintln!("{mode}: {:?} per rep ({n})", t.elapsed() / reps as u32);
}
