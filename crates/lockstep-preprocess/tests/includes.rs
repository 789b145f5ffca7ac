mod common;

use std::path::{Path, PathBuf};

use common::{find, run_with, MAIN};
use lockstep_diag::Severity;
use lockstep_preprocess::Options;
use lockstep_source::Span;

fn with_include_dir(dir: &str) -> Options {
    Options { defines: vec![], include_dirs: vec![PathBuf::from(dir)], ignored_directives: &[] }
}

#[test]
fn quoted_include_searches_the_including_directory_first() {
    let files = [("src/common.hlsli", "int local;\n"), ("inc/common.hlsli", "int from_dir;\n")];
    let r = run_with("#include \"common.hlsli\"\nint after;\n", &files, &with_include_dir("inc"));
    assert_eq!(r.text(), "\nint local;\nint after;\n");
    // Included text maps into the included file.
    let header = r.db.find(Path::new("src/common.hlsli")).expect("loaded");
    let (lo, hi) = r.find_out("local", 0);
    assert_eq!(r.out.map.span(lo, hi), Span::new(header, 4, 9));
    // Text after the include maps back to the main file.
    let (lo, hi) = r.find_out("after", 0);
    assert_eq!(r.out.map.span(lo, hi), Span::new(r.main, 28, 33));
}

#[test]
fn angle_include_searches_include_dirs_then_the_including_directory() {
    let files = [("src/a.h", "int src_a;\n"), ("inc/a.h", "int inc_a;\n"), ("src/b.h", "int src_b;\n")];
    let r = run_with("#include <a.h>\n#include <b.h>\n", &files, &with_include_dir("inc"));
    assert_eq!(r.text(), "\nint inc_a;\n\nint src_b;\n");
    assert!(r.out.diagnostics.is_empty());
}

#[test]
fn nested_includes_resolve_relative_to_each_file() {
    let files = [("inc/sub/x.h", "#include \"../y.h\"\nx\n"), ("inc/y.h", "y\n")];
    let r = run_with("#include <sub/x.h>\nmain\n", &files, &with_include_dir("inc"));
    assert_eq!(r.text(), "\n\ny\nx\nmain\n");
    assert!(r.db.find(Path::new("inc/y.h")).is_some());
}

#[test]
fn macros_flow_between_files_and_computed_includes_work() {
    let files = [("src/defs.h", "#define WIDTH 64\n#define HEADER \"more.h\"\n"), ("src/more.h", "more\n")];
    let r = run_with("#include \"defs.h\"\n#include HEADER\nWIDTH\n", &files, &Options::default());
    assert_eq!(r.text(), "\n\n\n\nmore\n64\n");
}

#[test]
fn missing_include_warns_and_continues() {
    let src = "#include \"nope.h\"\n#include <gone.h>\nint x;\n";
    let r = run_with(src, &[], &Options::default());
    assert_eq!(r.text(), "\n\nint x;\n");
    assert_eq!(r.rules(), ["include-not-found", "include-not-found"]);
    let d = &r.out.diagnostics[0];
    assert_eq!(d.severity, Severity::Warning);
    assert_eq!(r.db.snippet(d.span), "\"nope.h\"");
    assert_eq!(r.db.snippet(r.out.diagnostics[1].span), "<gone.h>");
}

#[test]
fn include_cycle_is_reported_and_skipped() {
    let files = [("src/a.h", "a_start\n#include \"b.h\"\na_end\n"), ("src/b.h", "b\n#include \"a.h\"\n")];
    let r = run_with("#include \"a.h\"\n", &files, &Options::default());
    let kept: Vec<&str> = r.text().split_whitespace().collect();
    assert_eq!(kept, ["a_start", "b", "a_end"]);
    assert_eq!(r.rules(), ["include-cycle"]);
    let d = r.diag("include-cycle");
    assert_eq!(d.severity, Severity::Warning);
    let b = r.db.find(Path::new("src/b.h")).expect("loaded");
    assert_eq!(d.span, Span::new(b, 11, 16));
}

#[test]
fn a_file_including_itself_is_a_cycle() {
    let r = run_with("x\n#include \"main.hlsl\"\n", &[], &Options::default());
    assert_eq!(r.rules(), ["include-cycle"]);
    assert_eq!(r.text(), "x\n\n");
}

#[test]
fn pragma_once_and_include_guards_prevent_repeats_without_cycle_warnings() {
    let files = [
        ("src/once.h", "#pragma once\nonce\n#include \"once.h\"\n"),
        ("src/guard.h", "// leading comment\n#ifndef GUARD_H\n#define GUARD_H\nguarded\n#include \"guard.h\"\n#include \"other.h\"\n#endif\n"),
        ("src/other.h", "#ifndef OTHER_H\n#define OTHER_H\nother\n#include \"guard.h\"\n#endif\n"),
    ];
    let src =
        "#include \"once.h\"\n#include \"once.h\"\n#include \"guard.h\"\n#include \"guard.h\"\n#include \"other.h\"\n";
    let r = run_with(src, &files, &Options::default());
    let kept: Vec<&str> = r.text().split_whitespace().collect();
    assert_eq!(kept, ["once", "guarded", "other"]);
    assert!(r.out.diagnostics.is_empty(), "{:?}", r.out.diagnostics);
}

#[test]
fn include_depth_is_limited() {
    // Each level includes itself again with a growing counter, so it is not a cycle.
    let header = "#include \"deeper.h\"\n";
    let files: Vec<(String, String)> =
        (0..300).map(|i| (format!("src/d{i}.h"), header.replace("deeper", &format!("d{}", i + 1)))).collect();
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    let r = run_with("#include \"d0.h\"\nend\n", &files, &Options::default());
    assert_eq!(r.rules(), ["preprocessor-error"]);
    assert!(r.diag("preprocessor-error").message.contains("200"));
    assert!(r.text().ends_with("end\n"));
}

#[test]
fn main_path_is_the_one_given() {
    let r = run_with("__FILE__\n", &[], &Options::default());
    assert_eq!(r.text(), format!("\"{MAIN}\"\n"));
    let (lo, _) = find(r.text(), "src", 0);
    assert_eq!(r.out.map.offset(lo).file, r.main);
}

#[test]
fn a_missing_include_is_reported_once_with_the_macros_it_may_have_defined() {
    let src = "#include \"config.h\"\n#ifdef USE_FAST_PATH\nfast\n#endif\n#include \"config.h\"\n#if defined(HAS_WARP) && VERSION > 2\nwarp\n#endif\n#define LOCAL 1\n#ifdef LOCAL\nlocal\n#endif\n";
    let r = run_with(src, &[], &Options::default());
    assert_eq!(r.rules(), ["include-not-found"], "one diagnostic for two includes of the same file");
    let d = r.diag("include-not-found");
    let note = d.notes.iter().find(|n| n.contains("may define")).expect("a note naming the macros");
    for name in ["`USE_FAST_PATH` (line 2)", "`HAS_WARP` (line 6)", "`VERSION` (line 6)"] {
        assert!(note.contains(name), "{name} missing from {note}");
    }
    assert!(!note.contains("LOCAL"), "a macro defined before the test is no guess: {note}");
}

#[test]
fn a_missing_include_with_no_later_tests_has_no_macro_note() {
    let r = run_with("#include <vector>\nint x;\n", &[], &Options::default());
    assert_eq!(r.rules(), ["include-not-found"]);
    assert!(r.diag("include-not-found").notes.is_empty());
}
