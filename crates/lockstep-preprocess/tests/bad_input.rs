//! Malformed and hostile input: diagnostics, never panics, hangs or stack overflows.

mod common;

use std::time::{Duration, Instant};

use common::{run, MemLoader};
use lockstep_diag::Severity;
use lockstep_preprocess::{preprocess, Options};
use lockstep_source::{SourceDb, Span};

#[test]
fn unterminated_block_comment() {
    let r = run("int a;\n/* never closed\n#define X 1\nX\n");
    assert_eq!(r.text(), "int a;\n               \n           \n \n");
    assert_eq!(r.rules(), ["unterminated-comment"]);
    assert_eq!(r.diag("unterminated-comment").span, Span::new(r.main, 7, 9));
}

#[test]
fn unterminated_conditional_reports_the_if() {
    let r = run("a\n#ifdef X\nb\n#if 1\nc\n");
    assert_eq!(r.text(), "a\n\n\n\n\n");
    assert_eq!(r.rules(), ["unterminated-conditional", "unterminated-conditional"]);
    let snippets: Vec<&str> = r.out.diagnostics.iter().map(|d| r.db.snippet(d.span)).collect();
    assert_eq!(snippets, ["ifdef", "if"]);
    assert!(r.out.diagnostics.iter().all(|d| d.severity == Severity::Error));
}

#[test]
fn stray_else_elif_and_endif() {
    let r = run("#else\n#elif 1\n#endif\nx\n#if 1\n#else\n#else\n#elif 1\n#endif\n");
    assert_eq!(r.text(), "\n\n\nx\n\n\n\n\n\n");
    let messages: Vec<&str> = r.out.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        ["#else without #if", "#elif without #if", "#endif without #if", "#else after #else", "#elif after #else"]
    );
    assert!(r.out.diagnostics.iter().all(|d| d.rule == "malformed-directive" && d.severity == Severity::Error));
}

#[test]
fn unterminated_macro_arguments_leave_the_name() {
    let r = run("#define F(x) x\nint a = F(1, (2;\nint b;\n");
    assert_eq!(r.text(), "\nint a = F(1, (2; int b;\n\n");
    let d = r.diag("preprocessor-error");
    assert_eq!(d.message, "unterminated argument list invoking macro `F`");
    assert_eq!(r.db.snippet(d.span), "F");
}

#[test]
fn wrong_argument_count_leaves_the_call() {
    let r = run("#define F(x, y) x\nF(1) F(1, 2)\n");
    assert_eq!(r.text(), "\nF(1) 1\n");
    assert_eq!(r.diag("preprocessor-error").message, "macro `F` takes 2 argument(s), but 1 were given");
}

#[test]
fn exponential_expansion_hits_the_limit() {
    let mut src = String::from("#define M0 x\n");
    for i in 1..40 {
        src.push_str(&format!("#define M{i} M{p} M{p}\n", p = i - 1));
    }
    src.push_str("M39;\nafter\n");
    let start = Instant::now();
    let r = run(&src);
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(r.rules(), ["macro-expansion-limit"]);
    assert_eq!(r.db.snippet(r.diag("macro-expansion-limit").span), "M39");
    assert!(r.text().ends_with(";\nafter\n"));
}

#[test]
fn exponential_argument_growth_hits_the_limit() {
    let mut src = String::from("#define D(x) x x\n");
    src.push_str(&"D(".repeat(40));
    src.push('1');
    src.push_str(&")".repeat(40));
    src.push_str("\nafter\n");
    let r = run(&src);
    assert_eq!(r.rules(), ["macro-expansion-limit"]);
    assert!(r.text().ends_with("\nafter\n"));
}

#[test]
fn deeply_nested_macro_arguments_are_cut_off() {
    let src = format!("#define F(x) x\n{}1{}\nafter\n", "F(".repeat(100_000), ")".repeat(100_000));
    let r = run(&src);
    assert_eq!(r.rules(), ["macro-expansion-limit"]);
    assert!(r.text().ends_with("\nafter\n"));
}

#[test]
fn hundred_thousand_nested_parentheses_in_if() {
    let src = format!("#if {}1{}\nyes\n#endif\nafter\n", "(".repeat(100_000), ")".repeat(100_000));
    let r = run(&src);
    assert_eq!(r.text(), "\n\n\nafter\n");
    let d = r.diag("malformed-directive");
    assert_eq!(d.message, "#if expression nested more than 256 levels deep");
}

#[test]
fn binary_input_with_nul_bytes() {
    let bytes: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    let mut db = SourceDb::new();
    let main = db.add_bytes("blob.bin", &bytes);
    let out = preprocess(&mut db, main, &Options::default(), &MemLoader::default());
    assert!(out.text.contains('\0'));
    // Every output offset maps somewhere without panicking.
    for at in (0..out.text.len() as u32).step_by(97) {
        out.map.offset(at);
    }
}

#[test]
fn odd_fragments_do_not_panic() {
    let cases = [
        "#",
        "#define",
        "#define F(",
        "#define F(x",
        "#define F(x,",
        "#define F(...) __VA_OPT__(",
        "#define F(x) #",
        "#define F(x) ## x",
        "#if",
        "#if (",
        "#if defined(",
        "#if 'a",
        "#include \"",
        "#include <",
        "#line",
        "#line x",
        "\"unterminated",
        "'",
        "\\",
        "a\\",
        "/*",
        "//\\",
        "#define A(x) A(x\nA(A(A(",
        "#define C(x,...) __VA_OPT__(x ## x) #__VA_ARGS__\nC() C(,) C(a,b)",
        "#define P(a,b) a##b\nP(/,/) P(+,-) P(.,.)",
    ];
    for src in cases {
        run(src);
    }
}

/// Kernel-like code: mostly plain lines, with comments, a macro use and a
/// conditional in every block.
fn large_source(target: usize) -> String {
    let block = "// block NUM: a kernel-like stretch of code\n\
#if NUM % 2\nint odd_NUM;\n#else\nint even_NUM;\n#endif\n\
float value_NUM = SCALE(input[NUM]) + 1.0f; /* inline */\n\
int plain_line_without_macros_NUM = 12345 + 67890;\n";
    let plain = "    groupshared float cache[256]; uint idx = threadId.x * 4 + 1;\n";
    let mut s = String::from("#define SCALE(v) ((v) * 2)\n");
    let mut i = 0;
    while s.len() < target {
        s.push_str(&block.replace("NUM", &i.to_string()));
        for _ in 0..12 {
            s.push_str(plain);
        }
        i += 1;
    }
    s
}

fn preprocess_large(size: usize) -> Duration {
    let src = large_source(size);
    let mut db = SourceDb::new();
    let main = db.add("big.hlsl", src.as_str());
    let start = Instant::now();
    let out = preprocess(&mut db, main, &Options::default(), &MemLoader::default());
    let elapsed = start.elapsed();
    assert!(out.diagnostics.is_empty());
    assert_eq!(out.text.matches('\n').count(), src.matches('\n').count());
    let (lo, _) = common::find(&out.text, "int plain_line_without_macros_7 ", 0);
    let (src_lo, _) = common::find(&src, "int plain_line_without_macros_7 ", 0);
    assert_eq!(out.map.offset(lo), Span::new(main, src_lo, src_lo));
    elapsed
}

#[test]
fn five_megabytes_preprocess_in_linear_time() {
    let elapsed = preprocess_large(5 << 20);
    // Generous for debug builds on a loaded machine; quadratic behaviour takes minutes.
    assert!(elapsed < Duration::from_secs(30), "{elapsed:?}");
}

#[test]
#[ignore = "50 MB; run in release: cargo test --release -- --ignored"]
fn fifty_megabytes_preprocess_quickly() {
    let elapsed = preprocess_large(50 << 20);
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}
