//! `lockstep check --fix` round trips: after fixing, every file still parses,
//! re-checks with no `dead-barrier` left and no new findings of other rules,
//! and fixing again changes nothing. `--diff` shows the same edit without
//! writing, and files with syntax errors are never touched.

use std::path::{Path, PathBuf};
use std::process::Command;

fn lockstep(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lockstep")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Rule ids of a JSON report.
fn rules(path: &str, extra: &[&str]) -> Vec<(String, u64)> {
    let mut args = vec!["check", "--format", "json"];
    args.extend_from_slice(extra);
    args.push(path);
    let (_, out, _) = lockstep(&args);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v["diagnostics"].as_array().unwrap().iter().map(|d| (d["rule"].as_str().unwrap().to_string(), d["line"].as_u64().unwrap())).collect()
}

fn fixture_args(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.find("// args:").map(|at| l[at + 8..].split_whitespace().map(String::from).collect::<Vec<_>>()))
        .flatten()
        .collect()
}

fn fixtures_with_dead_barriers() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut out = Vec::new();
    for lang in ["hlsl", "cuda", "wgsl", "metal", "cppamp"] {
        for e in std::fs::read_dir(root.join(lang)).unwrap().flatten() {
            let p = e.path();
            // Quoted includes would not resolve from the copy; system headers are known, not read.
            if std::fs::read_to_string(&p).is_ok_and(|t| t.contains("expect: dead-barrier") && !t.contains("#include \"")) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn fixing_every_dead_barrier_round_trips() {
    let files = fixtures_with_dead_barriers();
    assert!(files.len() >= 4, "{files:?}");
    let dir = std::env::temp_dir().join(format!("lockstep-fix-roundtrip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for src in files {
        let text = std::fs::read_to_string(&src).unwrap();
        let args = fixture_args(&text);
        let extra: Vec<&str> = args.iter().map(String::as_str).collect();
        let copy = dir.join(src.file_name().unwrap());
        std::fs::write(&copy, &text).unwrap();
        let path = copy.to_str().unwrap();
        let before = rules(path, &extra);
        assert!(before.iter().any(|(r, _)| r == "dead-barrier"), "{}: nothing to fix", src.display());

        // --diff shows the edit and leaves the file alone.
        let mut diff_args = vec!["check", "--diff"];
        diff_args.extend_from_slice(&extra);
        diff_args.push(path);
        let (_, diff, _) = lockstep(&diff_args);
        assert!(diff.contains("@@") && diff.lines().any(|l| l.starts_with('-') && l.contains("arrier")), "{diff}");
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), text);

        let mut fix_args = vec!["check", "--fix"];
        fix_args.extend_from_slice(&extra);
        fix_args.push(path);
        lockstep(&fix_args);
        let fixed = std::fs::read_to_string(&copy).unwrap();
        assert_ne!(fixed, text, "{}: --fix changed nothing", src.display());
        let after = rules(path, &extra);
        assert!(!after.iter().any(|(r, _)| r == "dead-barrier" || r == "parse-error"), "{}: {after:?}\n{fixed}", src.display());
        // Removing dead barriers creates no new finding of another rule.
        let other = |v: &[(String, u64)]| v.iter().filter(|(r, _)| r != "dead-barrier").count();
        assert_eq!(other(&after), other(&before), "{}: {before:?} -> {after:?}", src.display());
        // Comments around the edits survive: every `//` comment of a kept line is still there.
        for line in text.lines().filter(|l| l.contains("// ok") && !l.contains("dead-barrier") && l.to_lowercase().contains("sync")) {
            assert!(fixed.contains(line), "kept barrier line lost: {line}");
        }
        lockstep(&fix_args);
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), fixed, "{}: second --fix changed the file", src.display());
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn fix_never_touches_a_file_with_syntax_errors() {
    let dir = std::env::temp_dir().join(format!("lockstep-fix-syntax-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("broken.cu");
    let text = "__global__ void k(float* o) {\n  __syncthreads();\n  __syncthreads();\n  o[0] = ;\n}\n";
    std::fs::write(&p, text).unwrap();
    let (_, _, err) = lockstep(&["check", "--fix", p.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), text);
    assert!(err.contains("syntax errors") || !err.contains("applied"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
