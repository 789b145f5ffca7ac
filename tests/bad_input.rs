//! Bad input never crashes lockstep: every case gets a clear diagnostic or a
//! skipped region with a note, and the rest of the file is still analysed.

use lockstep::check::check_file;
use lockstep_lower::{Lang, Options};
use std::path::Path;

/// A scratch folder of the test's own, removed when dropped.
fn dir() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("lockstep-bad-input-").tempdir().unwrap()
}

/// Checks bytes written to `name` in a scratch folder of its own; returns
/// (rule, line) of every diagnostic.
fn check_bytes(name: &str, bytes: &[u8]) -> Vec<(String, u32)> {
    check_bytes_in(dir().path(), name, bytes)
}

/// [`check_bytes`] in a given folder (next to headers the file includes).
fn check_bytes_in(dir: &Path, name: &str, bytes: &[u8]) -> Vec<(String, u32)> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let lang = Lang::from_path(&path).unwrap();
    let report = check_file(&path, lang, &Options::default()).unwrap();
    report.diagnostics.iter().map(|d| (d.rule.clone(), report.db.location(d.span).0.line)).collect()
}

fn has(diags: &[(String, u32)], rule: &str, line: u32) -> bool {
    diags.iter().any(|(r, l)| r == rule && *l == line)
}

#[test]
fn binary_file_gets_one_diagnostic_and_is_skipped() {
    let mut state = 0x2545f491u32;
    let bytes: Vec<u8> = (0..50_000)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as u8
        })
        .collect();
    let diags = check_bytes("random.cu", &bytes);
    assert_eq!(diags, vec![("binary-file".to_string(), 1)]);
}

#[test]
fn invalid_utf8_is_reported_and_the_kernel_still_checked() {
    let src = b"\xff\xfe// junk bytes above\n__global__ void k(int* o) {\n  if (threadIdx.x < 4)\n    __syncthreads();\n}\n";
    let diags = check_bytes("latin1.cu", src);
    assert!(has(&diags, "invalid-utf8", 1), "{diags:?}");
    assert!(has(&diags, "barrier-in-divergent-cf", 4), "{diags:?}");
}

#[test]
fn a_syntax_error_in_one_kernel_leaves_the_others_checked() {
    let src = "__global__ void broken(int* a) { if (threadIdx.x < 3 { __syncthreads(); }\n\
               __global__ void fine(int* a) {\n  if (threadIdx.x < 3)\n    __syncthreads();\n}\n";
    let diags = check_bytes("syntax.cu", src.as_bytes());
    assert!(has(&diags, "parse-error", 1), "{diags:?}");
    assert!(has(&diags, "barrier-in-divergent-cf", 4), "{diags:?}");
}

#[test]
fn an_error_inside_a_balanced_function_skips_only_that_function() {
    let src = "[numthreads(8,1,1)] void bad(uint i : SV_GroupIndex) { int x = ; }\n\
               [numthreads(8,1,1)] void good(uint i : SV_GroupIndex) {\n  if (i < 3)\n    GroupMemoryBarrierWithGroupSync();\n}\n";
    let diags = check_bytes("balanced.hlsl", src.as_bytes());
    assert!(diags.iter().any(|(r, l)| r == "parse-error" && *l == 1), "{diags:?}");
    assert!(has(&diags, "barrier-in-divergent-cf", 4), "{diags:?}");
}

#[test]
fn a_kernel_calling_a_helper_that_does_not_parse_is_not_checked() {
    // What `helper` does is a guess past its syntax error: nothing is
    // reported for `uses_broken`, which is named as not checked.
    let src = "__device__ void helper(int* a) {\n  if (threadIdx.x < 3 { a[0] = 1; }\n  if (threadIdx.x < 3) __syncthreads();\n}\n\
               __global__ void uses_broken(int* a) {\n  helper(a);\n}\n\
               __global__ void fine(int* a) {\n  if (threadIdx.x < 3)\n    __syncthreads();\n}\n";
    let diags = check_bytes("helper.cu", src.as_bytes());
    assert!(has(&diags, "parse-error", 2), "{diags:?}");
    assert!(has(&diags, "parse-error", 5), "{diags:?}");
    assert!(!has(&diags, "barrier-in-divergent-cf", 3), "{diags:?}");
    assert!(has(&diags, "barrier-in-divergent-cf", 10), "{diags:?}");
}

#[test]
fn unterminated_comment_and_macro_call() {
    let diags = check_bytes("comment.cu", b"__global__ void k() {\n  if (threadIdx.x) __syncthreads();\n}\n/* never closed\n");
    assert!(has(&diags, "unterminated-comment", 4), "{diags:?}");
    assert!(has(&diags, "barrier-in-divergent-cf", 2), "{diags:?}");
    let diags = check_bytes("macro.cu", b"#define F(x) x\n__global__ void k() { F(__syncthreads(); }\n");
    assert!(has(&diags, "preprocessor-error", 2), "{diags:?}");
}

#[test]
fn include_cycle_and_recursive_macros_terminate() {
    let d = dir();
    std::fs::write(d.path().join("a.hlsli"), "#include \"b.hlsli\"\n").unwrap();
    std::fs::write(d.path().join("b.hlsli"), "#include \"a.hlsli\"\n").unwrap();
    let diags = check_bytes_in(d.path(), "cycle.hlsl", b"#include \"a.hlsli\"\n[numthreads(4,1,1)] void f(uint i : SV_GroupIndex) {\n  if (i == 1) GroupMemoryBarrierWithGroupSync();\n}\n");
    assert!(diags.iter().any(|(r, _)| r == "include-cycle"), "{diags:?}");
    assert!(has(&diags, "barrier-in-divergent-cf", 3), "{diags:?}");
    let diags = check_bytes("recursive.cu", b"#define A B\n#define B A\n#define S() S()\n__global__ void k() {\n  int x = A; S();\n  if (threadIdx.x) __syncthreads();\n}\n");
    assert!(has(&diags, "barrier-in-divergent-cf", 6), "{diags:?}");
}

#[test]
fn missing_include_is_a_warning_and_analysis_continues() {
    let diags = check_bytes("missing.cu", b"#include \"nowhere.cuh\"\n__global__ void k() {\n  if (threadIdx.x) __syncthreads();\n}\n");
    assert!(has(&diags, "include-not-found", 1), "{diags:?}");
    assert!(has(&diags, "barrier-in-divergent-cf", 3), "{diags:?}");
}

#[test]
fn hundred_thousand_nested_parentheses() {
    let src = format!("__global__ void k(int* o) {{\n  int x = {}1{};\n  if (threadIdx.x) __syncthreads();\n}}\n", "(".repeat(100_000), ")".repeat(100_000));
    let diags = check_bytes("parens.cu", src.as_bytes());
    assert!(diags.iter().any(|(r, l)| r == "nesting-too-deep" && *l == 2), "{diags:?}");
    assert!(has(&diags, "barrier-in-divergent-cf", 3), "{diags:?}");
    // The same inside an #if expression.
    let src = format!("#if {}1{}\n#endif\n__global__ void k() {{ if (threadIdx.x) __syncthreads(); }}\n", "(".repeat(100_000), ")".repeat(100_000));
    let diags = check_bytes("pp_parens.cu", src.as_bytes());
    assert!(diags.iter().any(|(r, _)| r == "malformed-directive" || r == "preprocessor-error"), "{diags:?}");
    assert!(has(&diags, "barrier-in-divergent-cf", 3), "{diags:?}");
}

#[test]
fn deeply_nested_blocks_and_ifs() {
    let depth = 5_000;
    let src = format!(
        "__global__ void k(int* o) {{\n{}  __syncthreads();\n{}}}\n",
        "if (threadIdx.x > 0) {\n".repeat(depth),
        "}\n".repeat(depth)
    );
    let diags = check_bytes("nested_ifs.cu", src.as_bytes());
    assert!(diags.iter().any(|(r, _)| r == "nesting-too-deep" || r == "barrier-in-divergent-cf"), "{diags:?}");
}

#[test]
fn a_long_run_of_skippable_loops_stops_the_race_analysis_only() {
    // Each loop may run no iteration: after any barrier every later loop's
    // access is in the same interval, under its own iteration offsets.
    let loops = "  for (int iN = 0; iN < n; iN++) { s[(threadIdx.x + iN) & 255] += 1; __syncthreads(); }\n";
    let body: String = (0..450).map(|i| loops.replace('N', &i.to_string())).collect();
    let src = format!("__global__ void k(int* o, int n) {{\n  __shared__ int s[256];\n  if (threadIdx.x < 3) __syncthreads();\n{body}  o[threadIdx.x] = s[0];\n}}\n");
    let diags = check_bytes("skippable_loops.cu", src.as_bytes());
    assert!(has(&diags, "kernel-skipped", 1), "{diags:?}");
    assert!(has(&diags, "barrier-in-divergent-cf", 3), "{diags:?}");
}

#[test]
fn large_file_is_checked_completely() {
    // 2 MB here (debug build); the 50 MB case is measured by the benchmark (see BENCHMARKS.md).
    let kernel = "__global__ void kNUM(float* out) {\n  __shared__ float t[64];\n  t[threadIdx.x] = 1.0f;\n  __syncthreads();\n  if (threadIdx.x < 3) __syncthreads();\n  out[threadIdx.x] = t[0];\n}\n";
    let mut src = String::new();
    let mut n = 0;
    while src.len() < 2 << 20 {
        src.push_str(&kernel.replace("NUM", &n.to_string()));
        n += 1;
    }
    let diags = check_bytes("large.cu", src.as_bytes());
    let found = diags.iter().filter(|(r, _)| r == "barrier-in-divergent-cf").count();
    assert_eq!(found, n, "one divergent barrier per kernel");
}

#[test]
fn recursive_class_constants_and_missing_members_terminate_with_a_note() {
    // Each instantiation is read once (fib<40> would be 2^40 reads), one
    // recursing forever stops, and a member no definition declares says so.
    let src = b"template <int n> struct fib { static constexpr int value = fib<n - 1>::value + fib<n - 2>::value; };\n\
template <> struct fib<1> { static constexpr int value = 1; };\n\
template <> struct fib<0> { static constexpr int value = 0; };\n\
template <int n> struct runaway { static constexpr int value = runaway<n + 1>::value + runaway<n + 2>::value; };\n\
__global__ void k(int* out)\n\
{\n\
    out[threadIdx.x] = fib<40>::value + runaway<0>::value + fib<3>::missing;\n\
}\n";
    let diags = check_bytes("class_constants.cu", src);
    assert!(has(&diags, "unsupported", 7), "{diags:?}");
}

#[test]
fn many_undeclared_names_make_one_note_and_the_rest_is_analysed() {
    let mut src = String::from("__global__ void k(int* o) {\n  int x = 0;\n");
    for i in 0..20_000 {
        src.push_str(&format!("  x += U{i};\n"));
    }
    src.push_str("  if (threadIdx.x) __syncthreads();\n  o[0] = x;\n}\n");
    let diags = check_bytes("undeclared.cu", src.as_bytes());
    assert_eq!(diags.iter().filter(|(r, _)| r == "unsupported").count(), 1, "{:?}", &diags[..diags.len().min(5)]);
    assert!(has(&diags, "unsupported", 3), "{:?}", &diags[..diags.len().min(5)]);
    assert!(has(&diags, "barrier-in-divergent-cf", 20_003), "{:?}", &diags[..diags.len().min(5)]);
}

#[test]
fn huge_glsl_constructors_and_over_long_block_arrays_are_noted_briefly() {
    let dir = dir();
    let path = dir.path().join("huge.comp");
    let constructor = format!("float[]({})[0]", vec!["1.0"; 100_000].join(","));
    let src = format!(
        "#version 450\nlayout(local_size_x = 1) in;\nlayout(std430, binding = 0) buffer D {{ float d[]; }};\n\
         layout(std430, binding = 1) buffer B {{ uint v[]; }} bufs[1000000];\n\
         void main() {{ float x = {constructor}; float{} y; bufs[999999].v[0] = 1u; d[0] = x; }}\n",
        "[1]".repeat(20_000)
    );
    std::fs::write(&path, src).unwrap();
    let report = check_file(&path, Lang::Glsl, &Options::default()).unwrap();
    let notes: Vec<&str> = report.diagnostics.iter().filter(|d| d.rule == "unsupported").map(|d| d.message.as_str()).collect();
    assert!(notes.iter().all(|m| m.len() < 300), "{notes:?}");
    assert!(notes.iter().any(|m| m.contains("the read of `float[](1.0,")), "{notes:?}");
    assert!(notes.iter().any(|m| m.contains("array of interface blocks")), "{notes:?}");
    assert!(notes.iter().any(|m| m.contains("`bufs[999999].v[0]`")), "{notes:?}");
    assert!(!notes.iter().any(|m| m.contains("not declared")), "{notes:?}");
}

#[test]
fn broken_wgsl_templates_get_directive_diagnostics_not_a_panic() {
    let unterminated = b"#if 1\n@compute @workgroup_size(64)\nfn f() {}\n";
    assert!(has(&check_bytes("unterminated.wgsl", unterminated), "unterminated-conditional", 1));
    let missing = b"#include \"nope.tmpl\"\n#define X(\n@compute @workgroup_size(64)\nfn f() {}\n";
    let diags = check_bytes("missing.wgsl", missing);
    assert!(has(&diags, "include-not-found", 1) && has(&diags, "malformed-directive", 2), "{diags:?}");
    // Each macro doubles the one before: far past the expansion limit.
    let mut runaway = String::from("#define A0(x) x x\n");
    for i in 1..40 {
        runaway.push_str(&format!("#define A{i}(x) A{p}(x) A{p}(x)\n", p = i - 1));
    }
    runaway.push_str("@compute @workgroup_size(64)\nfn f() { let v = A39(1); }\n");
    let diags = check_bytes("runaway.wgsl", runaway.as_bytes());
    assert!(diags.iter().any(|(r, _)| r == "macro-expansion-limit"), "{diags:?}");
}

#[test]
fn a_syntax_error_at_an_undefined_macro_says_it_reads_like_one() {
    // A shader meant to be included after the file that defines FOR_UNROLL.
    let src = "kernel void k(device float* o [[buffer(0)]], uint l [[thread_position_in_threadgroup]]) {\n\
               \x20   float acc = 0.0f;\n\
               \x20   FOR_UNROLL (short j = 0; j < 4; ++j) { acc += o[j]; }\n\
               \x20   o[l] = acc;\n}\n";
    let scratch = dir();
    let path = scratch.path().join("common.metal");
    std::fs::write(&path, src).unwrap();
    let report = check_file(&path, Lang::Metal, &Options::default()).unwrap();
    let error = report.diagnostics.iter().find(|d| d.rule == "parse-error" && report.db.location(d.span).0.line == 3).expect("a syntax error on line 3");
    assert!(error.notes.iter().any(|n| n.contains("`FOR_UNROLL(…)` reads like a macro this file does not define")), "{:?}", error.notes);
    // An ordinary syntax error gets no such note.
    let path = scratch.path().join("plain.cu");
    std::fs::write(&path, "__global__ void k(int* a) { if (threadIdx.x < 3 { a[0] = 1; } }\n").unwrap();
    let report = check_file(&path, Lang::Cuda, &Options::default()).unwrap();
    assert!(report.diagnostics.iter().filter(|d| d.rule == "parse-error").all(|d| d.notes.iter().all(|n| !n.contains("reads like a macro"))));
}
