//! Adopting lockstep on a real codebase: configuration, suppressions, rule selection, output
//! formats, file walking, stdin, safe fixes, bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

fn lockstep_in(dir: &Path, args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Out {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lockstep"));
    cmd.args(args).current_dir(dir).env_remove("GITHUB_ACTIONS").env_remove("NO_COLOR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() }).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    if let Some(text) = stdin {
        use std::io::Write;
        // A run that refuses its arguments exits without reading: a broken pipe is its answer, not a failure.
        if let Err(e) = child.stdin.take().unwrap().write_all(text.as_bytes()) {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
        }
    }
    let out = child.wait_with_output().unwrap();
    Out { code: out.status.code().unwrap_or(-1), stdout: String::from_utf8_lossy(&out.stdout).into(), stderr: String::from_utf8_lossy(&out.stderr).into() }
}

fn lockstep(dir: &Path, args: &[&str]) -> Out {
    lockstep_in(dir, args, &[], None)
}

/// A fresh project directory with the given files.
fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

/// A divergent barrier on line 3, a device-memory race on line 7.
const BUGGY: &str = "__global__ void diverge(int* out) {
    if (threadIdx.x < 16) {
        __syncthreads();
    }
}
__global__ void race(int* out) {
    out[0] = threadIdx.x;
}
";

/// A dead barrier on line 4 (with a group size of 256).
const DEAD: &str = "__global__ void dead(int* out) {
    __shared__ int s[256];
    s[threadIdx.x] = 1;
    __syncthreads();
    out[blockIdx.x * 256 + threadIdx.x] = s[threadIdx.x];
}
";

/// (rule, line) of every diagnostic in a `--format json` document.
fn findings(json: &str) -> Vec<(String, u64)> {
    let v: serde_json::Value = serde_json::from_str(json).unwrap_or_else(|e| panic!("{e}: {json}"));
    v["diagnostics"].as_array().unwrap().iter().map(|d| (d["rule"].as_str().unwrap().to_string(), d["line"].as_u64().unwrap())).collect()
}

fn rules_of(json: &str) -> Vec<String> {
    findings(json).into_iter().map(|(r, _)| r).collect()
}

#[test]
fn configuration_is_found_above_the_file_and_sets_levels() {
    let p = project(&[("lockstep.toml", "[rules]\ndevice-memory-race = \"warn\"\ndivergence = \"allow\"\n"), ("src/k.cu", BUGGY)]);
    let o = lockstep(p.path(), &["check", "--format", "json", "src/k.cu"]);
    assert_eq!(o.code, 1, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let diags = v["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 1, "{}", o.stdout);
    assert_eq!((diags[0]["rule"].as_str(), diags[0]["severity"].as_str()), (Some("device-memory-race"), Some("warning")));
    // --isolated ignores it; --config names another.
    assert_eq!(rules_of(&lockstep(p.path(), &["check", "--isolated", "--format", "json", "src/k.cu"]).stdout).len(), 2);
    std::fs::write(p.path().join("other.toml"), "[rules]\nraces = \"allow\"\n").unwrap();
    let o = lockstep(p.path(), &["check", "--config", "other.toml", "--format", "json", "src/k.cu"]);
    assert_eq!(rules_of(&o.stdout), vec!["barrier-in-divergent-cf"]);
}

#[test]
fn dot_lockstep_toml_and_pyproject_are_read_and_nearer_wins() {
    let p = project(&[
        ("pyproject.toml", "[project]\nname = \"x\"\n[tool.black]\nline-length = 100\n[tool.lockstep]\n[tool.lockstep.rules]\nraces = \"allow\"\n"),
        ("a/k.cu", BUGGY),
        ("b/.lockstep.toml", "[rules]\ndivergence = \"allow\"\n"),
        ("b/k.cu", BUGGY),
    ]);
    assert_eq!(rules_of(&lockstep(p.path(), &["check", "--format", "json", "a/k.cu"]).stdout), vec!["barrier-in-divergent-cf"]);
    assert_eq!(rules_of(&lockstep(p.path(), &["check", "--format", "json", "b/k.cu"]).stdout), vec!["device-memory-race"]);
}

#[test]
fn unknown_keys_are_errors_naming_the_key_and_line() {
    let p = project(&[("lockstep.toml", "exclude = []\n\n[kernels.k]\ngroup-sise = [64]\n"), ("k.cu", BUGGY)]);
    let o = lockstep(p.path(), &["check", "k.cu"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("line 4") && o.stderr.contains("unknown field `group-sise`"), "{}", o.stderr);
    let p = project(&[("pyproject.toml", "[tool.lockstep]\nselect = [\"races\"]\n"), ("k.cu", BUGGY)]);
    let o = lockstep(p.path(), &["check", "k.cu"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("line 2") && o.stderr.contains("unknown field `select`"), "{}", o.stderr);
    let p = project(&[("lockstep.toml", "[rules]\nno-such-rule = \"warn\"\n"), ("k.cu", BUGGY)]);
    assert!(lockstep(p.path(), &["check", "k.cu"]).stderr.contains("unknown rule or family `no-such-rule`"));
}

#[test]
fn overrides_kernels_and_excludes_apply() {
    let p = project(&[
        (
            "lockstep.toml",
            "exclude = [\"vendor/**\"]\n[[overrides]]\nfiles = [\"shaders/**\"]\nlang = \"cuda\"\ndefines = { BUG = 1 }\n[kernels.dead]\ngroup-size = [256, 1, 1]\n",
        ),
        ("shaders/k.kernel", "__global__ void k() {\n#if BUG\n  if (threadIdx.x) __syncthreads();\n#endif\n}\n"),
        ("vendor/v.cu", BUGGY),
        ("d.cu", DEAD),
    ]);
    let o = lockstep(p.path(), &["check", "--format", "json", "."]);
    let mut found = findings(&o.stdout);
    found.sort();
    assert_eq!(found, vec![("barrier-in-divergent-cf".to_string(), 3), ("dead-barrier".to_string(), 4)], "{}", o.stdout);
    // Without the configured group size, the barrier cannot be proven dead.
    assert_eq!(rules_of(&lockstep(p.path(), &["check", "--isolated", "--format", "json", "d.cu"]).stdout), Vec::<String>::new());
    let o = lockstep(p.path(), &["config", "shaders/k.kernel"]);
    assert_eq!(o.code, 0);
    assert!(o.stdout.contains("language           cuda") && o.stdout.contains("BUG=1"), "{}", o.stdout);
    assert!(o.stdout.contains("kernel dead        group-size 256,1,1"), "{}", o.stdout);
}

#[test]
fn suppressions_in_every_form_and_unused_ones_are_reported() {
    let text = "// lockstep: allow-file(dead-barrier)
__global__ void diverge(int* out) {
    if (threadIdx.x < 16) {
        __syncthreads(); /* lockstep: allow(divergence) */
    }
}
// lockstep: allow-begin(races)
__global__ void race(int* out) {
    out[0] = threadIdx.x;
}
// lockstep: allow-end(races)
__global__ void race2(int* out) {
    // lockstep: allow(device-memory-race)
    out[1] = threadIdx.x;
    out[2] = threadIdx.x; // lockstep: allow(barrier-in-divergent-cf)
}
";
    let p = project(&[("k.cu", text)]);
    let o = lockstep(p.path(), &["check", "--format", "json", "k.cu"]);
    let found = findings(&o.stdout);
    assert_eq!(
        found,
        vec![("unused-suppression".to_string(), 1), ("device-memory-race".to_string(), 15), ("unused-suppression".to_string(), 15)],
        "{}",
        o.stdout
    );
    assert!(o.stderr.contains("3 problems (3 suppressed)"), "{}", o.stderr);
    // Ignoring the unused warnings leaves the real finding.
    let o = lockstep(p.path(), &["check", "--ignore", "unused-suppression", "--format", "json", "k.cu"]);
    assert_eq!(rules_of(&o.stdout), vec!["device-memory-race"]);
}

#[test]
fn a_suppression_in_an_included_header_applies_to_findings_there() {
    let p = project(&[
        ("sync.cuh", "__device__ void sync_some() {\n    if (threadIdx.x < 16) __syncthreads(); // lockstep: allow(divergence)\n}\n"),
        ("k.cu", "#include \"sync.cuh\"\n__global__ void k() {\n    sync_some();\n}\n"),
    ]);
    let o = lockstep(p.path(), &["check", "--format", "json", "k.cu"]);
    assert_eq!(o.code, 0, "{}", o.stdout);
    assert!(o.stderr.contains("(1 suppressed)"), "{}", o.stderr);
}

#[test]
fn select_ignore_warn_families_and_exit_codes() {
    let p = project(&[("k.cu", BUGGY), ("d.cu", DEAD)]);
    let json = |args: &[&str]| {
        let mut all = vec!["check", "--format", "json", "--group-size", "256"];
        all.extend_from_slice(args);
        let o = lockstep(p.path(), &all);
        (o.code, rules_of(&o.stdout))
    };
    assert_eq!(json(&["--select", "divergence", "k.cu"]), (1, vec!["barrier-in-divergent-cf".to_string()]));
    assert_eq!(json(&["--ignore", "races,divergence", "k.cu"]), (0, vec![]));
    assert_eq!(json(&["--select", "dead-barriers", "d.cu"]), (1, vec!["dead-barrier".to_string()]));
    assert_eq!(json(&["--ignore", "dead-barrier", "d.cu"]), (0, vec![]));
    let o = lockstep(p.path(), &["check", "--warn", "races", "--select", "races", "--format", "json", "k.cu"]);
    assert!(o.stdout.contains("\"severity\": \"warning\"") && !o.stdout.contains("\"severity\": \"error\""), "{}", o.stdout);
    assert_eq!(lockstep(p.path(), &["check", "--exit-zero", "k.cu"]).code, 0);
    let o = lockstep(p.path(), &["check", "--select", "no-such-family", "k.cu"]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("no-such-family"), "{}", o.stderr);
}

#[test]
fn statistics_quiet_and_the_summary_line() {
    let p = project(&[("k.cu", BUGGY), ("skip.frag", "")]);
    let o = lockstep(p.path(), &["check", "--statistics", "."]);
    assert!(o.stdout.contains("1  barrier-in-divergent-cf") && o.stdout.contains("1  device-memory-race"), "{}", o.stdout);
    assert!(!o.stdout.contains("-->") && !o.stdout.contains("┌─"), "statistics replace the findings: {}", o.stdout);
    let o = lockstep(p.path(), &["check", "."]);
    assert!(o.stdout.ends_with("checked 1 file (2 kernels), 2 problems (0 suppressed), 1 skipped\n"), "{}", o.stdout);
    let o = lockstep(p.path(), &["check", "--quiet", "."]);
    assert!(!o.stdout.contains("checked 1 file") && !o.stderr.contains("skipped"), "{}{}", o.stdout, o.stderr);
    let o = lockstep(p.path(), &["check", "--show-skipped", "."]);
    assert!(o.stderr.contains("skipped: ./skip.frag"), "{}", o.stderr);
}

#[test]
fn sarif_validates_against_the_2_1_0_schema_and_carries_related_locations_and_fixes() {
    let p = project(&[("k.cu", BUGGY), ("d.cu", DEAD)]);
    let o = lockstep(p.path(), &["check", "--format", "sarif", "--group-size", "256", "."]);
    assert_eq!(o.code, 1);
    assert!(o.stderr.contains("3 problems"), "the summary goes to stderr: {}", o.stderr);
    let log: serde_json::Value = serde_json::from_str(&o.stdout).unwrap();
    let schema: serde_json::Value = serde_json::from_str(include_str!("data/sarif-schema-2.1.0.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&log).map(|e| format!("{e} at {}", e.instance_path)).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let run = &log["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    assert!(rules.iter().any(|r| r["id"] == "barrier-in-divergent-cf" && r["help"]["markdown"].as_str().unwrap().contains("## What it detects")));
    let results = run["results"].as_array().unwrap();
    let divergent = results.iter().find(|r| r["ruleId"] == "barrier-in-divergent-cf").unwrap();
    assert_eq!(rules[divergent["ruleIndex"].as_u64().unwrap() as usize]["id"], "barrier-in-divergent-cf");
    assert_eq!(divergent["relatedLocations"][0]["physicalLocation"]["region"]["startLine"], 2, "the divergent predicate");
    let dead = results.iter().find(|r| r["ruleId"] == "dead-barrier").unwrap();
    let replacement = &dead["fixes"][0]["artifactChanges"][0]["replacements"][0];
    assert_eq!(replacement["deletedRegion"]["startLine"], 4);
    assert_eq!(replacement["insertedContent"]["text"], "");
}

#[test]
fn github_annotations_are_chosen_inside_github_actions() {
    let p = project(&[("k.cu", BUGGY)]);
    let o = lockstep_in(p.path(), &["check", "k.cu"], &[("GITHUB_ACTIONS", "true")], None);
    assert!(o.stdout.starts_with("::error file=k.cu,line=3,col=9,"), "{}", o.stdout);
    assert!(o.stdout.contains("title=lockstep barrier-in-divergent-cf::"), "{}", o.stdout);
    assert!(o.stderr.contains("checked 1 file"), "{}", o.stderr);
    let explicit = lockstep(p.path(), &["check", "--format", "github", "k.cu"]);
    assert_eq!(explicit.stdout, o.stdout);
}

#[test]
fn json_has_a_version_and_stays_json_with_diff() {
    let p = project(&[("d.cu", DEAD)]);
    let o = lockstep(p.path(), &["check", "--format", "json", "--diff", "--group-size", "256", "d.cu"]);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", o.stdout));
    assert_eq!(v["version"], 1);
    assert!(v["diffs"][0]["diff"].as_str().unwrap().contains("-    __syncthreads();"), "{}", o.stdout);
    assert_eq!(std::fs::read_to_string(p.path().join("d.cu")).unwrap(), DEAD, "--diff changes nothing");
}

#[test]
fn color_follows_the_flag_and_no_color() {
    let p = project(&[("k.cu", BUGGY)]);
    assert!(lockstep(p.path(), &["check", "--color", "always", "k.cu"]).stdout.contains("\x1b["));
    assert!(!lockstep(p.path(), &["check", "--color", "never", "k.cu"]).stdout.contains("\x1b["));
    // Not a terminal: auto means no color.
    assert!(!lockstep_in(p.path(), &["check", "k.cu"], &[("NO_COLOR", "1")], None).stdout.contains("\x1b["));
}

#[test]
fn walking_respects_gitignore_and_hidden_files_and_empty_trees_exit_2() {
    let p = project(&[(".gitignore", "build/\n"), ("build/gen.cu", BUGGY), (".hidden/h.cu", BUGGY), ("ok.cu", DEAD)]);
    let o = lockstep(p.path(), &["check", "--format", "json", "--isolated", "."]);
    assert_eq!(rules_of(&o.stdout), Vec::<String>::new(), "{}", o.stdout);
    assert!(o.stderr.contains("checked 1 file"), "{}", o.stderr);
    let empty = project(&[("README.md", "no kernels"), ("a.frag", "")]);
    let o = lockstep(empty.path(), &["check", "."]);
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("no kernel files found"), "{}", o.stderr);
}

#[test]
fn stdin_is_checked_under_its_given_name() {
    let p = project(&[("lockstep.toml", "[rules]\nraces = \"allow\"\n")]);
    let o = lockstep_in(p.path(), &["check", "-", "--stdin-filename", "src/k.cu", "--format", "json"], &[], Some(BUGGY));
    assert_eq!(findings(&o.stdout), vec![("barrier-in-divergent-cf".to_string(), 3)], "{}", o.stderr);
    assert!(o.stdout.contains("\"path\": \"src/k.cu\""), "{}", o.stdout);
    let o = lockstep_in(p.path(), &["check", "-"], &[], Some(BUGGY));
    assert_eq!(o.code, 2, "no name, no language");
}

#[cfg(unix)]
#[test]
fn fix_through_a_symlink_rewrites_the_target_and_respects_suppressions() {
    let p = project(&[("real/d.cu", DEAD), ("kept.cu", &DEAD.replace("__syncthreads();", "__syncthreads(); // lockstep: allow(dead-barrier)"))]);
    let link: PathBuf = p.path().join("d.cu");
    std::os::unix::fs::symlink(p.path().join("real/d.cu"), &link).unwrap();
    let o = lockstep(p.path(), &["check", "--fix", "--group-size", "256", "d.cu", "kept.cu"]);
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays a link");
    assert!(!std::fs::read_to_string(p.path().join("real/d.cu")).unwrap().contains("__syncthreads"));
    assert!(std::fs::read_to_string(p.path().join("kept.cu")).unwrap().contains("__syncthreads"), "a suppressed finding is not fixed");
}

#[test]
fn a_binary_file_gets_one_diagnostic_and_is_skipped() {
    let p = project(&[("ok.cu", DEAD)]);
    std::fs::write(p.path().join("blob.cu"), b"\x7fELF\x00\x00\x01binary").unwrap();
    let o = lockstep(p.path(), &["check", "--format", "json", "--group-size", "256", "--ignore", "dead-barrier", "."]);
    assert_eq!(rules_of(&o.stdout), vec!["binary-file"]);
    assert!(o.stderr.contains("checked 1 file (1 kernel), 1 problem (0 suppressed), 1 skipped"), "{}", o.stderr);
}

#[test]
fn explain_covers_tool_diagnostics() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    for id in ["parse-error", "unsupported", "include-not-found", "kernel-skipped", "unused-suppression", "internal-error", "binary-file"] {
        let o = lockstep(here, &["explain", id]);
        assert_eq!(o.code, 0, "{id}");
        assert!(o.stdout.contains("## What to do"), "{id}: {}", o.stdout);
    }
}
