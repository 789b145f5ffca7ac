//! Fixture kernels carry their expectations on the exact lines:
//!
//! - `// expect: RULE[, RULE…]` — a diagnostic of each rule must start on this line;
//! - `// expect-warning: RULE[, RULE…]` — the same, at warning severity (a finding
//!   lockstep could not prove, where the rule's proven findings are errors);
//! - `// label: RULE` — a diagnostic of RULE must have a secondary label on this line;
//! - `// ok` or `// ok: RULE` — no diagnostic (of RULE) may start on this line;
//! - `// args: …` anywhere — command-line options for the file (`--group-size X,Y,Z`,
//!   `--grid-size X,Y,Z`, `-D N=V`, `--include-unproven`, `--include-benign`).
//!
//! The harness fails on every missing and every unexpected diagnostic.
//!
//! `tests/algorithms/` holds one algorithm set written in every language
//! lockstep reads; each version must meet its own line expectations, and
//! all versions of an algorithm must report the same rules.

use lockstep::check::{check_file_with, parse_defines, parse_grid_size, parse_group_size};
use lockstep_checks::CheckOptions;
use lockstep_lower::{Lang, Options};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

#[derive(Default)]
struct Expectations {
    expect: BTreeSet<(String, u32)>,
    warnings: BTreeSet<(String, u32)>,
    labels: BTreeSet<(String, u32)>,
    ok: Vec<(Option<String>, u32)>,
    options: Options,
    checks: CheckOptions,
}

/// The rule list after a marker, up to the next `//` (markers can share a line).
fn rules_after(line: &str, marker: &str) -> Option<Vec<String>> {
    let at = line.find(marker)?;
    let rest = &line[at + marker.len()..];
    let rest = rest.split("//").next().unwrap_or("");
    Some(rest.split(',').map(|r| r.split_whitespace().next().unwrap_or("").to_string()).filter(|r| !r.is_empty()).collect())
}

fn parse(text: &str) -> Expectations {
    let mut e = Expectations::default();
    for (i, line) in text.lines().enumerate() {
        let n = i as u32 + 1;
        if let Some(rules) = rules_after(line, "// expect:") {
            e.expect.extend(rules.into_iter().map(|r| (r, n)));
        }
        if let Some(rules) = rules_after(line, "// expect-warning:") {
            e.expect.extend(rules.iter().map(|r| (r.clone(), n)));
            e.warnings.extend(rules.into_iter().map(|r| (r, n)));
        }
        if let Some(rules) = rules_after(line, "// label:") {
            e.labels.extend(rules.into_iter().map(|r| (r, n)));
        }
        if let Some(at) = line.find("// ok") {
            let rest = line[at + 5..].split("//").next().unwrap_or("").trim_start();
            match rest.strip_prefix(':') {
                Some(r) => e.ok.extend(r.split(',').map(|x| (Some(x.trim().to_string()), n))),
                None => e.ok.push((None, n)),
            }
        }
        if let Some(at) = line.find("// args:") {
            let words: Vec<&str> = line[at + 8..].split_whitespace().collect();
            let mut it = words.iter();
            while let Some(w) = it.next() {
                match *w {
                    "--group-size" => e.options.group_size = it.next().and_then(|v| parse_group_size(v).ok()),
                    "--grid-size" => e.options.grid_size = it.next().and_then(|v| parse_grid_size(v).ok()),
                    "-D" => e.options.defines.extend(parse_defines(&[it.next().unwrap_or(&"").to_string()])),
                    "-I" => e.options.include_dirs.push(PathBuf::from(it.next().unwrap_or(&""))),
                    "--include-unproven" => e.checks.include_unproven = true,
                    "--include-benign" => e.checks.include_benign = true,
                    other => panic!("unknown fixture argument `{other}`"),
                }
            }
        }
    }
    e
}

/// Checks one fixture; on success, the rules it reported (sorted, with repeats).
fn check_fixture(path: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut exp = parse(&text);
    for dir in exp.options.include_dirs.iter_mut() {
        *dir = path.parent().unwrap().join(&*dir);
    }
    let lang = Lang::from_path_and_text(path, &text).ok_or("unknown extension")?;
    let report = check_file_with(path, lang, &exp.options, exp.checks)?;
    let mut got = BTreeSet::new();
    let mut got_warnings = BTreeSet::new();
    let mut got_labels = BTreeSet::new();
    for d in &report.diagnostics {
        if report.db.file(d.span.file).path != path {
            return Err(format!("diagnostic in another file: {} {:?}", d.rule, report.db.file(d.span.file).path));
        }
        got.insert((d.rule.clone(), report.db.location(d.span).0.line));
        if d.severity == lockstep_diag::Severity::Warning {
            got_warnings.insert((d.rule.clone(), report.db.location(d.span).0.line));
        }
        for l in &d.labels {
            if report.db.file(l.span.file).path == path {
                got_labels.insert((d.rule.clone(), report.db.location(l.span).0.line));
            }
        }
    }
    let mut problems = Vec::new();
    for (rule, line) in exp.expect.difference(&got) {
        problems.push(format!("{}:{line}: missing `{rule}`", path.display()));
    }
    for (rule, line) in got.difference(&exp.expect) {
        problems.push(format!("{}:{line}: unexpected `{rule}`", path.display()));
    }
    for (rule, line) in exp.warnings.intersection(&got).filter(|x| !got_warnings.contains(x)) {
        problems.push(format!("{}:{line}: `{rule}` is not a warning", path.display()));
    }
    for (rule, line) in exp.labels.difference(&got_labels) {
        problems.push(format!("{}:{line}: missing a label of `{rule}`", path.display()));
    }
    for (rule, line) in &exp.ok {
        if got.iter().any(|(r, l)| l == line && rule.as_ref().is_none_or(|x| x == r)) {
            problems.push(format!("{}:{line}: marked ok but reported", path.display()));
        }
    }
    if problems.is_empty() {
        let mut rules: Vec<String> = report.diagnostics.iter().map(|d| d.rule.clone()).collect();
        rules.sort();
        Ok(rules)
    } else {
        let rendered = lockstep_diag::render_human(&report.db, &report.diagnostics, false);
        Err(format!("{}\n--- diagnostics ---\n{rendered}", problems.join("\n")))
    }
}

/// A file whose extension, or for `.cpp` whose text, names a language lockstep reads.
fn is_kernel_file(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|text| Lang::from_path_and_text(path, &text).is_some())
}

fn run_dir(dir: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(dir);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().flatten().map(|e| e.path()).filter(|p| is_kernel_file(p)).collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", root.display());
    let failures: Vec<String> = files.iter().filter_map(|f| check_fixture(f).err()).collect();
    assert!(failures.is_empty(), "{} of {} fixtures failed:\n\n{}", failures.len(), files.len(), failures.join("\n\n"));
}

#[test]
fn hlsl_fixtures() {
    run_dir("hlsl");
}

#[test]
fn cuda_fixtures() {
    run_dir("cuda");
}

#[test]
fn opencl_fixtures() {
    run_dir("opencl");
}

#[test]
fn glsl_fixtures() {
    run_dir("glsl");
}

#[test]
fn metal_fixtures() {
    run_dir("metal");
}

#[test]
fn cppamp_fixtures() {
    run_dir("cppamp");
}

#[test]
fn wgsl_fixtures() {
    run_dir("wgsl");
}

#[test]
fn harness_reports_missing_and_unexpected_diagnostics() {
    let dir = std::env::temp_dir().join(format!("lockstep-harness-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Expectation on the wrong line: one missing, one unexpected.
    let bad = dir.join("wrong_line.cu");
    std::fs::write(
        &bad,
        "__global__ void k(int* o) {\n  if (threadIdx.x < 3) {\n    __syncthreads(); \n  } // expect: barrier-in-divergent-cf\n}\n",
    )
    .unwrap();
    let err = check_fixture(&bad).unwrap_err();
    assert!(err.contains(":4: missing `barrier-in-divergent-cf`"), "{err}");
    assert!(err.contains(":3: unexpected `barrier-in-divergent-cf`"), "{err}");
    // An `ok` mark on a reported line fails too.
    let ok = dir.join("ok_mark.cu");
    std::fs::write(&ok, "__global__ void k(int* o) {\n  if (threadIdx.x < 3) {\n    __syncthreads(); // ok\n  }\n}\n").unwrap();
    let err = check_fixture(&ok).unwrap_err();
    assert!(err.contains("marked ok but reported"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn one_algorithm_set_gives_the_same_findings_in_every_language() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/algorithms");
    let mut failures = Vec::new();
    for algorithm in ["reduction", "matmul", "early_exit", "scan"] {
        let mut versions: Vec<PathBuf> = std::fs::read_dir(&root)
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_stem().is_some_and(|s| s == algorithm))
            .collect();
        versions.sort();
        let langs: BTreeSet<&str> = versions
            .iter()
            .filter_map(|p| Lang::from_path_and_text(p, &std::fs::read_to_string(p).unwrap()).map(|l| l.name()))
            .collect();
        if langs.len() != 7 {
            failures.push(format!("{algorithm}: written in {} languages ({langs:?}), not 7", langs.len()));
        }
        let mut first: Option<(PathBuf, Vec<String>)> = None;
        for path in versions {
            match check_fixture(&path) {
                Err(e) => failures.push(e),
                Ok(rules) => match &first {
                    None => first = Some((path, rules)),
                    Some((p0, r0)) if *r0 != rules => {
                        failures.push(format!("{}: {rules:?}, but {}: {r0:?}", path.display(), p0.display()));
                    }
                    Some(_) => {}
                },
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
