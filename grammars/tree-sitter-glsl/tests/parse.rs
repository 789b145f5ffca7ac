//! Parses GLSL compute-shader snippets with the forked grammar.

use tree_sitter::{Node, Parser, Tree};

fn parse(src: &str) -> Tree {
    let mut parser = Parser::new();
    parser.set_language(&tree_sitter_lockstep_glsl::LANGUAGE.into()).expect("load GLSL grammar");
    parser.parse(src, None).expect("parse")
}

fn top_level_kinds(tree: &Tree) -> Vec<String> {
    let root = tree.root_node();
    let mut cursor = root.walk();
    root.named_children(&mut cursor).map(|n: Node| n.kind().to_string()).collect()
}

#[test]
fn a_compute_layout_is_a_qualifier_declaration_and_keeps_the_next_declaration() {
    let src = "layout(local_size_x = 64, local_size_y_id = 1) in;\nshared float tile[64];\nvoid main() { barrier(); }\n";
    let tree = parse(src);
    assert!(!tree.root_node().has_error(), "{}", tree.root_node().to_sexp());
    assert_eq!(top_level_kinds(&tree), ["qualifier_declaration", "declaration", "function_definition"]);
}

#[test]
fn interface_blocks_parse_with_and_without_an_instance_name() {
    let src = "layout(std430, binding = 0) coherent buffer Data { float data[]; } buf;\n\
               layout(std430, binding = 1) readonly buffer In { uint values[]; };\n\
               layout(push_constant) uniform Params { uint n; } pc;\n\
               layout(std430, binding = 2) restrict buffer R { float r[]; };\n\
               layout(std430, binding = 3) volatile coherent buffer V { uint v[]; };\n";
    let tree = parse(src);
    assert!(!tree.root_node().has_error(), "{}", tree.root_node().to_sexp());
    assert_eq!(top_level_kinds(&tree), ["declaration"; 5]);
}

#[test]
fn constructors_named_by_c_types_are_calls_after_a_parenthesis() {
    let src = "void main() { uint a = uint((float(i) + 1.0)); uint b = ~(uint32_t(x[i].h[0]) | (uint32_t(y) << 16)); }\n";
    let tree = parse(src);
    assert!(!tree.root_node().has_error(), "{}", tree.root_node().to_sexp());
    let sexp = tree.root_node().to_sexp();
    assert_eq!(sexp.matches("(call_expression function: (primitive_type)").count(), 3, "{sexp}");
}

#[test]
fn parameter_qualifiers_come_in_any_order_around_const() {
    let src = "void f(const in uint i, in const float v, const inout vec4 w, out float o[2], highp uint h) { }\n";
    let tree = parse(src);
    assert!(!tree.root_node().has_error(), "{}", tree.root_node().to_sexp());
    assert_eq!(tree.root_node().to_sexp().matches("(parameter_declaration").count(), 5);
}

#[test]
fn arrays_sized_at_their_type_declare_and_construct() {
    let src = "const uint[2] table = { 1, 2 };\n\
               void main() { const uint16_t[4] s = data[i].scales; float[2] w = float[2](0.5, 1.0); a[3] = 4; x = a[i]; }\n";
    let tree = parse(src);
    let sexp = tree.root_node().to_sexp();
    assert!(!tree.root_node().has_error(), "{sexp}");
    assert_eq!(sexp.matches("type: (array_type").count(), 3, "{sexp}");
    assert_eq!(sexp.matches("(call_expression function: (array_type").count(), 1, "{sexp}");
    // Subscripts stay expressions.
    assert_eq!(sexp.matches("(subscript_expression").count(), 3, "{sexp}");
}

#[test]
fn cooperative_matrix_types_take_parameters_and_other_names_compare() {
    let src = "void main() {\n\
               coopmat<float16_t, gl_ScopeSubgroup, TM, (TK * 2), gl_MatrixUseA> m[2];\n\
               coopmat<float, 3, 16, 16, 2> c = coopmat<float, 3, 16, 16, 2>(0.0);\n\
               tensorLayoutNV<2, Clamp> t = createTensorLayoutNV(2, Clamp);\n\
               tensorViewNV<3, false, 1, 0, 2> v;\n\
               bool b = x < y && z > w; }\n";
    let tree = parse(src);
    let sexp = tree.root_node().to_sexp();
    assert!(!tree.root_node().has_error(), "{sexp}");
    assert_eq!(sexp.matches("(parameterized_type").count(), 5, "{sexp}");
    assert_eq!(sexp.matches("(call_expression function: (parameterized_type").count(), 1, "{sexp}");
    // `TK * 2`, and the comparisons `x < y`, `z > w` and their `&&`.
    assert_eq!(sexp.matches("(binary_expression").count(), 4, "{sexp}");
}
