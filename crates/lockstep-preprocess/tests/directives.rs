mod common;

use common::{find, run, run_with};
use lockstep_diag::Severity;
use lockstep_preprocess::Options;
use lockstep_source::Span;

#[test]
fn if_elif_else_select_one_group_and_keep_lines() {
    let src = "#if 0\na\n#elif 2 > 1\nb\n#elif 1\nc\n#else\nd\n#endif\ne\n";
    let r = run(src);
    assert_eq!(r.text(), "\n\n\nb\n\n\n\n\n\ne\n");
    assert!(r.out.diagnostics.is_empty());
}

#[test]
fn ifdef_ifndef_elifdef_and_nesting_in_skipped_groups() {
    let src = "#define A\n#ifdef A\na\n#endif\n#ifndef A\nnot_a\n#endif\n#if 0\n#if 1\nx\n#else\ny\n#endif\n#error not here\n#endif\n#ifdef B\nb\n#elifdef A\nelif_a\n#endif\n#ifdef B\n#elifndef B\nelifndef_b\n#endif\n";
    let r = run(src);
    let kept: Vec<&str> = r.text().split_whitespace().collect();
    assert_eq!(kept, ["a", "elif_a", "elifndef_b"]);
    assert_eq!(r.text().matches('\n').count(), src.matches('\n').count());
    assert!(r.out.diagnostics.is_empty(), "{:?}", r.out.diagnostics);
}

#[test]
fn constant_expressions_with_defined_precedence_and_ternary() {
    let src = "#define TWO 2\n#define F(x) (x * 2)\n\
#if defined TWO && defined(TWO) && !defined NOPE && F(TWO) == 4\nok1\n#endif\n\
#if 1 + 2 * 3 == 7 && (1 ? 10 : 20) == 10 && 0 ? 0 : 1\nok2\n#endif\n\
#if 0x10 == 16 && 010 == 8 && 'a' == 97 && 1u - 2 > 0 && UNDEFINED == 0 && -1 >> 1 == -1\nok3\n#endif\n";
    let r = run(src);
    let kept: Vec<&str> = r.text().split_whitespace().collect();
    assert_eq!(kept, ["ok1", "ok2", "ok3"]);
    assert!(r.out.diagnostics.is_empty(), "{:?}", r.out.diagnostics);
}

#[test]
fn division_by_zero_is_an_error_and_counts_as_zero() {
    let src = "#if 1 / 0 == 0\nyes\n#endif\n";
    let r = run(src);
    assert_eq!(r.text(), "\nyes\n\n");
    let d = r.diag("preprocessor-error");
    assert_eq!(d.severity, Severity::Error);
    assert_eq!(d.span, Span::new(r.main, 6, 7));
}

#[test]
fn malformed_expressions_are_false_with_an_error() {
    let r = run("#if 1 +\nno\n#endif\n#if\nno\n#endif\n#ifdef\nno\n#endif\n");
    assert_eq!(r.text().trim(), "");
    assert_eq!(r.rules(), ["malformed-directive"; 3]);
}

#[test]
fn error_warning_and_unknown_directives() {
    let src = "#error stop \"now\"\nint a;\n#warning careful\n#frobnicate x\nint b;\n";
    let r = run(src);
    assert_eq!(r.text(), "\nint a;\n\n\nint b;\n");
    let e = r.diag("preprocessor-error");
    assert_eq!((e.severity, e.message.as_str()), (Severity::Error, "#error: stop \"now\""));
    assert_eq!(e.span, Span::new(r.main, 0, 17));
    let w = &r.out.diagnostics[1];
    assert_eq!((w.severity, w.message.as_str()), (Severity::Warning, "#warning: careful"));
    let u = r.diag("unknown-directive");
    let (lo, hi) = find(src, "frobnicate", 0);
    assert_eq!((u.severity, u.span), (Severity::Warning, Span::new(r.main, lo, hi)));
}

#[test]
fn directives_the_language_ignores_are_dropped_without_a_warning() {
    let options = Options { ignored_directives: &["version", "extension"], ..Options::default() };
    let r = run_with("#version 450\n#extension GL_KHR_shader_subgroup_basic : enable\nx\n#frobnicate\n", &[], &options);
    assert_eq!(r.text(), "\n\nx\n\n");
    assert_eq!(r.rules(), ["unknown-directive"]);
}

#[test]
fn pragmas_are_kept_verbatim_except_once() {
    let r = run("#pragma once\n#pragma unroll(4)\n  #  pragma   warning(disable: 3571)\nx\n");
    assert_eq!(r.text(), "\n#pragma unroll(4)\n  #  pragma   warning(disable: 3571)\nx\n");
    let (lo, _) = r.find_out("unroll", 0);
    assert_eq!(r.out.map.offset(lo), Span::new(r.main, 21, 21));
}

#[test]
fn line_directive_renumbers_lines_of_a_missing_file() {
    let r = run("#line 100 \"gen.hlsl\"\n__LINE__ __FILE__\n__LINE__\n");
    assert_eq!(r.text(), "\n100 \"gen.hlsl\"\n101\n");
    assert!(r.out.diagnostics.is_empty());
    // No such file: spans stay in the physical file.
    let (lo, _) = r.find_out("101", 0);
    assert_eq!(r.out.map.offset(lo).file, r.main);
}

#[test]
fn line_directive_redirects_spans_into_a_known_file() {
    let original = "line one\nline two\n    float x;\n";
    let src = "#line 3 \"orig.hlsl\"\n    float x;\n";
    let r = run_with(src, &[("orig.hlsl", original)], &Options::default());
    assert_eq!(r.text(), "\n    float x;\n");
    let (lo, hi) = r.find_out("x", 0);
    let span = r.out.map.span(lo, hi);
    let orig = r.db.find(std::path::Path::new("orig.hlsl")).expect("loaded");
    let (x_lo, x_hi) = find(original, "x;", 0);
    assert_eq!(span, Span::new(orig, x_lo, x_hi - 1));
}

#[test]
fn gnu_line_markers_are_accepted() {
    let r = run("# 7 \"a.cu\" 1\n__LINE__\n");
    assert_eq!(r.text(), "\n7\n");
    assert!(r.out.diagnostics.is_empty());
}

#[test]
fn directive_diagnostics_point_at_the_directive() {
    let r = run("x\n#endif\n#else\n#define 3\n#undef\n#include\n");
    assert_eq!(r.rules(), ["malformed-directive"; 5]);
    let spans: Vec<&str> = r.out.diagnostics.iter().map(|d| r.db.snippet(d.span)).collect();
    assert_eq!(spans, ["endif", "else", "3", "undef", "include"]);
}
