//! Prints each kernel's IR and the race findings: `cargo run -p lockstep-race --example race_dump FILE`.
//! `REPS=N` repeats each kernel's analysis N times (for profiling; the time printed is the last run).

use lockstep_analysis::{Cfg, Uniformity};
use lockstep_lower::{compile, Lang, Options};
use lockstep_source::SourceDb;

fn main() {
    let path = std::env::args().nth(1).expect("usage: race_dump FILE");
    let bytes = std::fs::read(&path).expect("readable file");
    let mut db = SourceDb::new();
    let file = db.add_bytes(std::path::Path::new(&path), &bytes);
    let lang = Lang::from_path(std::path::Path::new(&path)).unwrap_or(Lang::Hlsl);
    let compiled = compile(&mut db, file, lang, &Options::default());
    let m = &compiled.module;
    for id in m.entries() {
        let f = lockstep_ir::inline_calls(m, id);
        println!("{}", lockstep_ir::function_to_string(m, &f));
        let cfg = Cfg::new(&f);
        let uni = Uniformity::analyze(&f, &cfg);
        let reps: usize = std::env::var("REPS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
        for _ in 1..reps { lockstep_race::analyze_with_stats(m, &f, &cfg, &uni); }
        let t = std::time::Instant::now();
        let (found, stats) = lockstep_race::analyze_with_stats(m, &f, &cfg, &uni);
        eprintln!("{}: {} accesses, {} intervals, {} queries, {:?}", f.name, stats.accesses, stats.intervals, stats.queries, t.elapsed());
        for x in found {
            println!("{:?} later={:?} earlier={:?} w={:?}", x.rule, x.later, x.earlier, x.witness);
        }
    }
}
