//! Oclgrind (`oclgrind-kernel --data-races`, Debian package `oclgrind`) as
//! a dynamic oracle for the OpenCL versions of the algorithm set: where it
//! observes a data race or a barrier only part of a work-group reaches,
//! `lockstep check` must report that family of rule, and where it observes
//! neither, lockstep must report nothing. Skipped, with a message, when
//! Oclgrind is not installed.

use lockstep::check::{check_file_with, parse_group_size};
use lockstep_checks::CheckOptions;
use lockstep_lower::{Lang, Options};
use std::path::Path;
use std::process::Command;

/// (file stem, kernel, global size, local size, arguments in Oclgrind's simulator syntax)
const RUNS: &[(&str, &str, &str, &str, &[&str])] = &[
    ("reduction", "reduce", "128 1 1", "64 1 1", &["<size=512 float fill=1>", "<size=8 float fill=0>"]),
    ("matmul", "matmul", "16 16 1", "8 8 1", &["<size=1024 float fill=1>", "<size=1024 float fill=1>", "<size=1024 float fill=0>", "<size=4 uint fill=16>"]),
    ("early_exit", "reduce_early_exit", "128 1 1", "64 1 1", &["<size=512 float fill=1>", "<size=8 float fill=0>", "<size=4 uint fill=100>"]),
    ("scan", "scan", "128 1 1", "64 1 1", &["<size=512 float fill=1>", "<size=512 float fill=0>"]),
];

#[derive(Debug, PartialEq)]
struct Verdict {
    race: bool,
    divergence: bool,
}

#[test]
fn oclgrind_and_lockstep_agree_on_the_opencl_algorithm_set() {
    if Command::new("oclgrind-kernel").arg("--version").output().is_err() {
        eprintln!("skipped: oclgrind-kernel is not installed (Debian package `oclgrind`)");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/algorithms");
    let dir = std::env::temp_dir().join(format!("lockstep-oclgrind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut disagreements = Vec::new();
    for (stem, kernel, global, local, args) in RUNS {
        let source = root.join(format!("{stem}.cl"));
        std::fs::copy(&source, dir.join(format!("{stem}.cl"))).unwrap();
        let sim = format!("{stem}.cl\n{kernel}\n{global}\n{local}\n\n{}\n", args.join("\n"));
        let sim_path = dir.join(format!("{stem}.sim"));
        std::fs::write(&sim_path, sim).unwrap();
        let out = Command::new("oclgrind-kernel").arg("--data-races").arg(&sim_path).current_dir(&dir).output().unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        let oracle = Verdict { race: text.contains("data race"), divergence: text.contains("divergence") };

        let group: Vec<&str> = local.split(' ').collect();
        let options = Options { group_size: Some(parse_group_size(&group.join(",")).unwrap()), ..Options::default() };
        let report = check_file_with(&source, Lang::OpenCl, &options, CheckOptions::default()).unwrap();
        let rules: Vec<&str> = report.diagnostics.iter().map(|d| d.rule.as_str()).collect();
        let ours = Verdict {
            race: rules.iter().any(|r| r.starts_with("groupshared-") || r.ends_with("-race")),
            divergence: rules.contains(&"barrier-in-divergent-cf"),
        };
        if ours != oracle {
            disagreements.push(format!("{stem}: Oclgrind {oracle:?}, lockstep {ours:?} ({rules:?})\n{text}"));
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
