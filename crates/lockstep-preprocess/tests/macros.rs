mod common;

use common::{find, run, run_with};
use lockstep_preprocess::Options;
use lockstep_source::Span;

#[test]
fn text_without_macros_is_copied_offset_for_offset() {
    let src = "int a; // note\n/* two\nlines */ float b;\n";
    let r = run(src);
    assert_eq!(r.text(), "int a;        \n      \n         float b;\n");
    assert!(r.out.diagnostics.is_empty());
    for at in [0u32, 4, 25, 31] {
        assert_eq!(r.out.map.offset(at), Span::new(r.main, at, at));
    }
    assert_eq!(r.out.map.span(32, 33), Span::new(r.main, 32, 33));
}

#[test]
fn object_like_macros_expand_and_directive_lines_become_blank() {
    let r = run("#define N 4\n#define EMPTY\nint a[N]EMPTY;\n");
    assert_eq!(r.text(), "\n\nint a[4];\n");
}

#[test]
fn nested_function_like_macros() {
    let r = run("#define SQ(x) ((x)*(x))\n#define TWICE(x) (2*(x))\nTWICE(SQ(a+1))\n");
    assert_eq!(r.text(), "\n\n(2*(((a+1)*(a+1))))\n");
}

#[test]
fn function_like_name_without_parenthesis_is_not_expanded() {
    let r = run("#define f(x) x+1\nint f; f (2)\n");
    assert_eq!(r.text(), "\nint f; 2+1\n");
}

#[test]
fn stringize_paste_and_variadic_arguments() {
    let src = r#"#define STR(x) #x
#define CAT(a, b) a##b
#define CALL(f, ...) f(__VA_ARGS__)
#define NAMED(args...) h(args)
STR(a   "b\n" c) CAT(foo, bar) CALL(g, 1, (2, 3)) NAMED(x, y) CAT(, z) CAT(1, )
"#;
    let r = run(src);
    assert_eq!(r.text(), "\n\n\n\n\"a \\\"b\\\\n\\\" c\" foobar g(1, (2, 3)) h(x, y) z 1\n");
}

#[test]
fn va_opt_only_appears_with_variadic_arguments() {
    let r = run("#define F(a, ...) f(a __VA_OPT__(,) __VA_ARGS__)\nF(1) F(1, 2)\n");
    assert_eq!(r.text(), "\nf(1) f(1 , 2)\n");
}

#[test]
fn arguments_are_expanded_before_substitution_except_next_to_hash() {
    let src =
        "#define V 7\n#define STR(x) #x\n#define XSTR(x) STR(x)\n#define CAT(a, b) a ## b\nSTR(V) XSTR(V) CAT(V, 1)\n";
    assert_eq!(run(src).text(), "\n\n\n\n\"V\" \"7\" V1\n");
}

#[test]
fn recursive_macros_terminate() {
    let src = "#define A A\n#define B C\n#define C B\n#define f(x) x f\n#define g(x) g(x + 1)\nA B C f(f)(1) g(g(0))\n";
    assert_eq!(run(src).text(), "\n\n\n\n\nA B C f f(1) g(g(0 + 1) + 1)\n");
}

#[test]
fn expansion_does_not_paste_neighbouring_tokens() {
    let r = run("#define NEG -1\n#define P +\nint a = -NEG; a P+ 1;\n");
    assert_eq!(r.text(), "\n\nint a = - -1; a + + 1;\n");
}

#[test]
fn argument_tokens_map_to_their_source_position() {
    let src = "#define BARRIER_IF(c) if (c) GroupMemoryBarrierWithGroupSync()\nvoid k(uint tid) {\n    BARRIER_IF(tid < 4);\n}\n";
    let r = run(src);
    assert_eq!(r.text(), "\nvoid k(uint tid) {\n    if (tid < 4) GroupMemoryBarrierWithGroupSync();\n}\n");

    // `tid` in the output maps to `tid` inside the argument.
    let (olo, ohi) = r.find_out("tid", 1);
    let (slo, shi) = find(src, "tid", 1);
    let span = r.out.map.span(olo, ohi);
    assert_eq!((span.file, span.lo, span.hi), (r.main, slo, shi));
    let id = span.expansion.expect("argument keeps its expansion");
    assert_eq!(r.db.expansion(id).name, "BARRIER_IF");

    // The whole condition maps to the condition in the source.
    let (clo, _) = r.find_out("tid < 4", 0);
    let cond = r.out.map.span(clo, clo + 7);
    assert_eq!(r.db.snippet(cond), "tid < 4");

    // A body token maps to the whole use site, with the macro's expansion.
    let (blo, bhi) = r.find_out("GroupMemoryBarrierWithGroupSync", 0);
    let body = r.out.map.span(blo, bhi);
    assert_eq!(r.db.snippet(body), "BARRIER_IF(tid < 4)");
    assert_eq!(r.out.map.offset(blo + 3), body);
    let e = r.db.expansion(body.expansion.expect("from a macro"));
    assert_eq!(e.name, "BARRIER_IF");
    assert_eq!(e.parent, None);
    assert_eq!(r.db.snippet(e.call_site), "BARRIER_IF(tid < 4)");
    assert_eq!(e.definition, Some(Span::new(r.main, 8, 18)));
    assert_eq!(r.db.snippet(e.definition.unwrap()), "BARRIER_IF");
}

#[test]
fn nested_expansions_point_at_the_outermost_use_and_chain_parents() {
    let src = "#define INNER y\n#define OUTER INNER + 1\nint x = OUTER;\n";
    let r = run(src);
    assert_eq!(r.text(), "\n\nint x = y + 1;\n");
    let (lo, hi) = r.find_out("y", 0);
    let span = r.out.map.span(lo, hi);
    assert_eq!(r.db.snippet(span), "OUTER");
    let chain: Vec<&str> = r.db.macro_chain(span).iter().map(|e| e.name.as_str()).collect();
    assert_eq!(chain, ["INNER", "OUTER"]);
}

#[test]
fn macros_in_arguments_chain_to_the_invoking_macro() {
    let src = "#define ID(x) x\n#define B y\nID(B)\n";
    let r = run(src);
    assert_eq!(r.text(), "\n\ny\n");
    let span = r.out.map.offset(r.find_out("y", 0).0);
    assert_eq!(r.db.snippet(span), "B");
    let chain: Vec<&str> = r.db.macro_chain(span).iter().map(|e| e.name.as_str()).collect();
    assert_eq!(chain, ["B", "ID"]);
}

#[test]
fn command_line_defines() {
    let options = Options {
        defines: vec![
            ("__HLSL_VERSION".into(), Some("2021".into())),
            ("DEBUG".into(), None),
            ("EMPTY".into(), Some(String::new())),
            ("SQ(x)".into(), Some("x*x".into())),
        ],
        include_dirs: vec![],
        ignored_directives: &[],
    };
    let r = run_with(
        "__HLSL_VERSION DEBUG [EMPTY] SQ(3)\n#if __HLSL_VERSION >= 2021 && DEBUG\nnew\n#endif\n",
        &[],
        &options,
    );
    assert_eq!(r.text(), "2021 1 [] 3*3\n\nnew\n\n");
    let (lo, hi) = r.find_out("2021", 0);
    let e = r.db.expansion(r.out.map.span(lo, hi).expansion.unwrap());
    assert_eq!((e.name.as_str(), e.definition), ("__HLSL_VERSION", None));
}

#[test]
fn multi_line_invocations_keep_later_lines_in_place() {
    let r = run("#define F(a, b) a + b\nx = F(1,\n      2);\ny;\n");
    assert_eq!(r.text(), "\nx = 1 + 2;\n\ny;\n");
}

#[test]
fn line_splices_are_joined_and_map_to_real_offsets() {
    let src = "int a = \\\n  b;\n#define TWO 1 + \\\n 1\nint c = TWO;\n";
    let r = run(src);
    assert_eq!(r.text(), "int a = \n  b;\n\n\nint c = 1 + 1;\n");
    let (lo, hi) = r.find_out("b", 0);
    assert_eq!(r.out.map.span(lo, hi), Span::new(r.main, 12, 13));
}

#[test]
fn builtin_macros() {
    let r = run("__LINE__\n\n__LINE__ __FILE__ __COUNTER__ __COUNTER__\n#define L __LINE__\nL\n");
    assert_eq!(r.text(), "1\n\n3 \"src/main.hlsl\" 0 1\n\n5\n");
}

#[test]
fn undef_removes_a_macro() {
    assert_eq!(run("#define X 1\nX\n#undef X\nX\n").text(), "\n1\n\nX\n");
}

#[test]
fn comments_in_directive_lines_are_whitespace() {
    let r = run("#define X 1 /* multi\nline */ + 2 // trailing\nX\n");
    assert_eq!(r.text(), "\n\n1 + 2\n");
}

#[test]
fn strings_and_comments_are_not_scanned_for_macros() {
    assert_eq!(run("#define X 1\n\"X\" 'X' /* X */ X\n").text(), "\n\"X\" 'X'         1\n");
}

#[test]
fn pragma_operators_are_removed_like_pragma_lines() {
    let r = run("#define UNROLL(x) _Pragma(\"clang loop unroll(full)\") for (x)\nUNROLL(int i = 0; i < 4; ++i) a();\n__pragma(warning(push)) b();\n");
    assert_eq!(r.text().split_whitespace().collect::<Vec<_>>().join(" "), "for (int i = 0; i < 4; ++i) a(); b();");
    assert!(r.out.diagnostics.is_empty());
    // An operand that never closes keeps its text and says so.
    let r = run("_Pragma(\"x\" a b\n");
    assert!(r.text().contains("_Pragma"));
    assert_eq!(r.out.diagnostics.len(), 1);
}
