//! Parses HLSL snippets with the forked grammar and checks that there are no
//! ERROR/MISSING nodes and that the expected node kinds are present.

use tree_sitter::{Node, Parser, Tree};

fn parse(src: &str) -> Tree {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_lockstep_hlsl::LANGUAGE.into())
        .expect("load HLSL grammar");
    parser.parse(src, None).expect("parse")
}

fn collect<'a>(node: Node<'a>, out: &mut Vec<Node<'a>>) {
    out.push(node);
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        collect(child, out);
    }
}

fn nodes(tree: &Tree) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    collect(tree.root_node(), &mut out);
    out
}

/// Number of *named* nodes of the given kind (keyword tokens are not counted).
fn count(tree: &Tree, kind: &str) -> usize {
    nodes(tree)
        .iter()
        .filter(|n| n.is_named() && n.kind() == kind)
        .count()
}

fn text<'a>(node: Node<'_>, src: &'a str) -> &'a str {
    node.utf8_text(src.as_bytes()).unwrap()
}

/// Parses `src`, asserts it has no error and that every kind in `kinds` occurs.
fn parse_clean(src: &str, kinds: &[&str]) -> Tree {
    let tree = parse(src);
    let root = tree.root_node();
    assert!(
        !root.has_error(),
        "unexpected parse error in:\n{src}\n{}",
        root.to_sexp()
    );
    for kind in kinds {
        assert!(
            count(&tree, kind) > 0,
            "expected a `{kind}` node in:\n{src}\n{}",
            root.to_sexp()
        );
    }
    tree
}

// ---------------------------------------------------------------------------
// Bug a: cbuffer / tbuffer / ConstantBuffer<T>
// ---------------------------------------------------------------------------

#[test]
fn cbuffer_at_top_level() {
    let src = "cbuffer C : register(b0) { float4 x; uint n; };";
    let tree = parse_clean(src, &["cbuffer_specifier", "register_binding"]);
    assert_eq!(count(&tree, "function_definition"), 0);
    let cb = nodes(&tree)
        .into_iter()
        .find(|n| n.kind() == "cbuffer_specifier")
        .unwrap();
    assert_eq!(text(cb.child_by_field_name("kind").unwrap(), src), "cbuffer");
    assert_eq!(text(cb.child_by_field_name("name").unwrap(), src), "C");
    let body = cb.child_by_field_name("body").unwrap();
    assert_eq!(body.kind(), "field_declaration_list");
    assert_eq!(body.named_child_count(), 2);
    let binding = nodes(&tree)
        .into_iter()
        .find(|n| n.kind() == "register_binding")
        .unwrap();
    assert_eq!(text(binding.child_by_field_name("slot").unwrap(), src), "b0");
    assert!(binding.child_by_field_name("space").is_none());
}

#[test]
fn cbuffer_variants() {
    // no register, no trailing semicolon
    let tree = parse_clean("cbuffer Globals { float g; }", &["cbuffer_specifier"]);
    assert_eq!(count(&tree, "function_definition"), 0);
    // two buffers in a row, one with register and space
    let src = "cbuffer A : register(b0, space2) { float a; }\ncbuffer B { float b; };\n";
    let tree = parse_clean(src, &["cbuffer_specifier"]);
    assert_eq!(count(&tree, "cbuffer_specifier"), 2);
    assert_eq!(count(&tree, "function_definition"), 0);
}

#[test]
fn tbuffer_at_top_level() {
    let src = "tbuffer T : register(t1) { float4 y; };";
    let tree = parse_clean(src, &["cbuffer_specifier"]);
    assert_eq!(count(&tree, "function_definition"), 0);
    let cb = nodes(&tree)
        .into_iter()
        .find(|n| n.kind() == "cbuffer_specifier")
        .unwrap();
    assert_eq!(text(cb.child_by_field_name("kind").unwrap(), src), "tbuffer");
}

#[test]
fn cbuffer_packoffset() {
    let src = "cbuffer C : register(b0) { float4 x : packoffset(c0); float y : packoffset(c1.y); };";
    let tree = parse_clean(src, &["cbuffer_specifier", "packoffset_binding", "semantics"]);
    assert_eq!(count(&tree, "packoffset_binding"), 2);
    let po: Vec<_> = nodes(&tree)
        .into_iter()
        .filter(|n| n.kind() == "packoffset_binding")
        .collect();
    assert_eq!(text(po[1].child_by_field_name("offset").unwrap(), src), "c1");
    assert_eq!(text(po[1].child_by_field_name("component").unwrap(), src), "y");
}

#[test]
fn constant_buffer_template() {
    let src = "ConstantBuffer<Params> params : register(b0);";
    let tree = parse_clean(
        src,
        &["declaration", "template_type", "semantics", "register_binding"],
    );
    assert_eq!(count(&tree, "function_definition"), 0);
    let decl = tree.root_node().named_child(0).unwrap();
    assert_eq!(decl.kind(), "declaration");
    assert_eq!(decl.child_by_field_name("type").unwrap().kind(), "template_type");
    assert_eq!(text(decl.child_by_field_name("declarator").unwrap(), src), "params");
}

// ---------------------------------------------------------------------------
// Bug b: several attributes, attributes on statements
// ---------------------------------------------------------------------------

#[test]
fn function_with_two_attributes() {
    let src = "[numthreads(64,1,1)] [WaveSize(32)] void main(uint3 id : SV_DispatchThreadID) {}";
    let tree = parse_clean(src, &["function_definition", "hlsl_attribute", "semantics"]);
    assert_eq!(count(&tree, "function_definition"), 1);
    let f = tree.root_node().named_child(0).unwrap();
    assert_eq!(f.kind(), "function_definition");
    let mut cursor = f.walk();
    let attrs: Vec<_> = f
        .named_children(&mut cursor)
        .filter(|n| n.kind() == "hlsl_attribute")
        .collect();
    assert_eq!(attrs.len(), 2);
    assert_eq!(text(attrs[0].child_by_field_name("name").unwrap(), src), "numthreads");
    let args = attrs[0].child_by_field_name("arguments").unwrap();
    assert_eq!(args.named_child_count(), 3);
    assert_eq!(text(attrs[1].child_by_field_name("name").unwrap(), src), "WaveSize");
}

#[test]
fn attributes_on_separate_lines() {
    let src = "[numthreads(8, 8, 1)]\n[WaveSize(32)]\nvoid main(uint3 gid : SV_GroupID, uint gi : SV_GroupIndex)\n{\n}\n";
    let tree = parse_clean(src, &["function_definition"]);
    assert_eq!(count(&tree, "function_definition"), 1);
    assert_eq!(count(&tree, "hlsl_attribute"), 2);
    assert_eq!(count(&tree, "semantics"), 2);
}

#[test]
fn single_attributes() {
    let tree = parse_clean("[numthreads(8, 8, 1)] void main() {}", &["hlsl_attribute"]);
    assert_eq!(count(&tree, "hlsl_attribute"), 1);
    let tree = parse_clean("[WaveSize(32)] void main() {}", &["hlsl_attribute"]);
    assert_eq!(count(&tree, "hlsl_attribute"), 1);
    parse_clean(
        "[shader(\"compute\")]\n[RootSignature(\"RootFlags(0)\")]\n[numthreads(8,8,1)]\nvoid cs() {}",
        &["function_definition", "string_literal"],
    );
}

#[test]
fn attributes_on_statements() {
    let src = r#"
void main() {
  [unroll] for (int i = 0; i < 4; i++) { x += i; }
  [loop] while (i < 3) { i++; }
  [branch] if (i) { i = 0; }
  [flatten] if (i) { i = 0; } else { i = 1; }
  [unroll(4)] for (int j = 0; j < 4; j++) {}
  [call] switch (i) { case 0: break; default: break; }
  [loop] do { i++; } while (i < 10);
  [unroll] [allow_uav_condition] for (;;) { break; }
}
"#;
    let tree = parse_clean(
        src,
        &[
            "for_statement",
            "while_statement",
            "if_statement",
            "switch_statement",
            "do_statement",
        ],
    );
    assert_eq!(count(&tree, "hlsl_attribute"), 9);
    for n in nodes(&tree) {
        if n.kind() == "hlsl_attribute" {
            let parent = n.parent().unwrap().kind();
            assert!(parent.ends_with("_statement"), "attribute under {parent}");
        }
    }
}

// ---------------------------------------------------------------------------
// Bug c: unorm / snorm template arguments
// ---------------------------------------------------------------------------

#[test]
fn unorm_snorm_template_arguments() {
    let src = "Texture2D<unorm float4> t;\nRWTexture2D<snorm float4> u;\n";
    let tree = parse_clean(src, &["template_type", "type_descriptor", "type_qualifier"]);
    assert_eq!(count(&tree, "declaration"), 2);
    assert_eq!(count(&tree, "type_qualifier"), 2);
}

// ---------------------------------------------------------------------------
// Bug d: contextual keywords used as identifiers
// ---------------------------------------------------------------------------

#[test]
fn sample_and_line_as_variables() {
    let src = "void f() { float sample = 1; int line = 2; sample += line; }";
    let tree = parse_clean(src, &["assignment_expression"]);
    assert_eq!(count(&tree, "qualifiers"), 0);
    let idents: Vec<_> = nodes(&tree)
        .into_iter()
        .filter(|n| n.kind() == "identifier")
        .map(|n| text(n, src))
        .collect();
    assert_eq!(idents, ["f", "sample", "line", "sample", "line"]);
}

#[test]
fn contextual_keywords_as_identifiers() {
    let src = r#"
float sample;
static int line = 2;
struct V { float3 center; float sample; uint indices[3]; };
void f(float sample, int line, float point) {
  float triangle = 1, vertices = 2, indices = 3, payload = 4, center = 5;
  float precise = 6, linear = 7, centroid = 8;
  point = triangle + vertices * indices - payload / center;
  precise = 3;
  triangle++;
  line = 3;
  sample.x = 1;
  g(sample, line);
  for (sample = 0; sample < line; sample++) {}
  return sample + line;
}
"#;
    let tree = parse_clean(src, &["function_definition"]);
    assert_eq!(count(&tree, "qualifiers"), 0);
}

#[test]
fn hlsl_qualifiers_still_work() {
    let src = r#"
[maxvertexcount(3)]
void GS(triangle VSOut input[3], inout TriangleStream<GSOut> stream) {}
[outputtopology("triangle")]
[numthreads(64,1,1)]
void MS(out vertices VOut verts[64], out indices uint3 tris[64], in payload Payload p) {}
struct PSIn { nointerpolation float3 n : NORMAL; sample float4 c : COLOR; centroid float2 uv : TEXCOORD0; };
void g() { precise float x = 1; }
"#;
    let tree = parse_clean(src, &["qualifiers"]);
    let q: Vec<_> = nodes(&tree)
        .into_iter()
        .filter(|n| n.kind() == "qualifiers")
        .map(|n| text(n, src))
        .collect();
    assert_eq!(
        q,
        [
            "triangle", "inout", "out", "vertices", "out", "indices", "in", "payload",
            "nointerpolation", "sample", "centroid", "precise"
        ]
    );
}

// ---------------------------------------------------------------------------
// Common compute-shader forms
// ---------------------------------------------------------------------------

#[test]
fn groupshared_array() {
    let src = "groupshared float tile[16][16];";
    let tree = parse_clean(src, &["declaration", "qualifiers", "array_declarator"]);
    let q = nodes(&tree)
        .into_iter()
        .find(|n| n.kind() == "qualifiers")
        .unwrap();
    assert_eq!(text(q, src), "groupshared");
    assert_eq!(q.parent().unwrap().kind(), "declaration");
    assert_eq!(count(&tree, "array_declarator"), 2);
}

#[test]
fn globallycoherent_buffer() {
    let src = "globallycoherent RWStructuredBuffer<uint> b : register(u1);";
    let tree = parse_clean(src, &["qualifiers", "template_type", "register_binding"]);
    let q = nodes(&tree)
        .into_iter()
        .find(|n| n.kind() == "qualifiers")
        .unwrap();
    assert_eq!(text(q, src), "globallycoherent");
}

#[test]
fn register_with_space() {
    let src = "RWByteAddressBuffer raw : register(u0, space1);";
    let tree = parse_clean(src, &["declaration", "semantics", "register_binding"]);
    let b = nodes(&tree)
        .into_iter()
        .find(|n| n.kind() == "register_binding")
        .unwrap();
    assert_eq!(text(b.child_by_field_name("slot").unwrap(), src), "u0");
    assert_eq!(text(b.child_by_field_name("space").unwrap(), src), "space1");
    parse_clean(
        "StructuredBuffer<float> arr[] : register(t0, space1);",
        &["array_declarator", "register_binding"],
    );
}

#[test]
fn static_const_and_storage() {
    parse_clean(
        "static const uint N = 64;",
        &["storage_class_specifier", "type_qualifier", "init_declarator"],
    );
    parse_clean("static groupshared uint counter;", &["storage_class_specifier", "qualifiers"]);
}

#[test]
fn parameter_semantics_and_directions() {
    let src = "void main(uint3 gid : SV_GroupID, uint gi : SV_GroupIndex, in float a, out float b, inout float c, const uint3 t : SV_GroupThreadID) {}";
    let tree = parse_clean(src, &["parameter_declaration", "semantics", "qualifiers"]);
    assert_eq!(count(&tree, "semantics"), 3);
    assert_eq!(count(&tree, "qualifiers"), 3);
    let names: Vec<_> = nodes(&tree)
        .into_iter()
        .filter(|n| n.kind() == "semantics")
        .map(|n| text(n.child_by_field_name("name").unwrap(), src))
        .collect();
    assert_eq!(names, ["SV_GroupID", "SV_GroupIndex", "SV_GroupThreadID"]);
}

#[test]
fn struct_field_semantics() {
    let src = "struct S { float3 p : POSITION; float4 pos : SV_Position; uint bits : 4; };";
    let tree = parse_clean(src, &["struct_specifier", "field_declaration", "semantics"]);
    assert_eq!(count(&tree, "semantics"), 2);
    assert_eq!(count(&tree, "bitfield_clause"), 1);
}

#[test]
fn return_semantics() {
    let src = "float4 ps(float4 pos : SV_Position) : SV_Target { return pos; }";
    let tree = parse_clean(src, &["function_definition", "function_declarator"]);
    let fd = nodes(&tree)
        .into_iter()
        .find(|n| n.kind() == "function_declarator")
        .unwrap();
    let mut cursor = fd.walk();
    let sem: Vec<_> = fd
        .named_children(&mut cursor)
        .filter(|n| n.kind() == "semantics")
        .collect();
    assert_eq!(sem.len(), 1);
    assert_eq!(text(sem[0], src), ": SV_Target");
}

#[test]
fn expressions() {
    let src = r#"
void main(uint3 c : SV_DispatchThreadID) {
  float4 v = float4(1,2,3,4);
  float3 w = v.xyz;
  uint old;
  InterlockedAdd(buf[0], 1, old);
  float4 a = tex.Load(int3(c.xy, 0));
  float4 b = tex.SampleLevel(s, uv, 0);
  Barrier(GROUP_SHARED_MEMORY, GROUP_SYNC);
  Barrier(GROUP_SHARED_MEMORY | DEVICE_MEMORY, GROUP_SCOPE | GROUP_SYNC);
  GroupMemoryBarrierWithGroupSync();
  uint2 sz; tex.GetDimensions(sz.x, sz.y);
  float x = (float)sz.x;
  int2 p = int2(1, 2); p = p.yx;
  float arr[4] = { 1, 2, 3, 4 };
  uint r = WaveReadLaneAt(x, 0) + WaveActiveSum(x);
  Out[c.xy] = b;
  if (c.x == 0) discard;
}
"#;
    let tree = parse_clean(
        src,
        &[
            "call_expression",
            "field_expression",
            "subscript_expression",
            "discard_statement",
            "cast_expression",
            "initializer_list",
        ],
    );
    assert!(count(&tree, "call_expression") >= 10);
}

#[test]
fn preprocessor_leftovers() {
    let src = "#line 12 \"foo.hlsl\"\n#pragma warning(disable: 3206)\nvoid f() {\n#pragma unroll\n  x = 1;\n#line 40\n}\n";
    parse_clean(src, &["preproc_call", "function_definition"]);
}

#[test]
fn templates() {
    let src = "template<typename T> T f(T x) { return x; }";
    parse_clean(src, &["template_declaration", "function_definition"]);
}

#[test]
fn types() {
    let src = r#"
uint64_t big;
half h;
min16float mf;
float16_t f16;
matrix<float,4,4> m3;
vector<float, 4> v4;
float4x4 m;
row_major float4x4 rm;
column_major float3x3 cm;
StructuredBuffer<row_major float4x4> mats;
sampler s2;
SamplerState s : register(s0);
Texture2D<float4> tex : register(t0);
typedef float4 color;
"#;
    let tree = parse_clean(src, &["declaration", "template_type", "primitive_type"]);
    assert_eq!(count(&tree, "declaration"), 13);
}

#[test]
fn nointerpolation_field() {
    let src = "struct PSIn { nointerpolation float3 n : NORMAL; };";
    let tree = parse_clean(src, &["qualifiers", "semantics"]);
    let q = nodes(&tree)
        .into_iter()
        .find(|n| n.kind() == "qualifiers")
        .unwrap();
    assert_eq!(text(q, src), "nointerpolation");
}

#[test]
fn full_compute_shader() {
    let src = r#"
#line 1 "reduce.hlsl"
cbuffer Params : register(b0) { uint count; float scale; };
StructuredBuffer<float> input : register(t0);
globallycoherent RWStructuredBuffer<float> output : register(u0);
RWByteAddressBuffer counters : register(u1, space1);
groupshared float tile[16][16];
groupshared float partial[64];
static const uint N = 64;

float load(uint i) { return i < count ? input[i] : 0.0f; }

[numthreads(64, 1, 1)]
[WaveSize(32)]
void main(uint3 gid : SV_GroupID, uint gi : SV_GroupIndex, uint3 dtid : SV_DispatchThreadID)
{
    partial[gi] = load(dtid.x) * scale;
    GroupMemoryBarrierWithGroupSync();
    [unroll]
    for (uint s = N / 2; s > 0; s >>= 1) {
        if (gi < s) {
            partial[gi] += partial[gi + s];
        }
        GroupMemoryBarrierWithGroupSync();
    }
    if (gi == 0) {
        uint old;
        counters.InterlockedAdd(0, 1, old);
        InterlockedAdd(output[gid.x], 1, old);
        output[gid.x] = partial[0];
    }
}
"#;
    let tree = parse_clean(src, &["cbuffer_specifier", "hlsl_attribute", "for_statement"]);
    assert_eq!(count(&tree, "function_definition"), 2);
    assert_eq!(count(&tree, "cbuffer_specifier"), 1);
    assert_eq!(count(&tree, "hlsl_attribute"), 3);
}

// ---------------------------------------------------------------------------
// Negative tests
// ---------------------------------------------------------------------------

#[test]
fn invalid_input_reports_error() {
    for src in ["void f( { ]", "cbuffer { float x; ", "[numthreads(1,1,1) void f() {}", "float x = ;"] {
        let tree = parse(src);
        assert!(tree.root_node().has_error(), "expected an error for {src:?}");
    }
}

#[test]
fn node_types_are_exported() {
    let v = tree_sitter_lockstep_hlsl::NODE_TYPES;
    for kind in ["\"cbuffer_specifier\"", "\"hlsl_attribute\"", "\"semantics\"", "\"qualifiers\"", "\"register_binding\"", "\"packoffset_binding\""] {
        assert!(v.contains(kind), "{kind} missing from NODE_TYPES");
    }
}
