//! Parsing of preprocessed kernel source with tree-sitter.

mod gaps;
mod host;
mod launch;
mod whitespace;

pub use gaps::{brace_default_arguments, lambda_execution_spaces, parenthesized_values_read_as_casts, typename_in_expressions};
pub use host::host_function_bodies;
pub use launch::{kernel_launches, ArgRelation, Comparison, KernelLaunch, Operand};
pub use whitespace::{redundant_whitespace, union_of_ranges};
use std::sync::OnceLock;
pub use tree_sitter::{Node, Tree, TreeCursor};

/// The source languages with a grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Grammar {
    Hlsl,
    Cuda,
    Glsl,
}

/// Parses text with the grammar; `None` only if tree-sitter gives up (cancellation).
pub fn parse(grammar: Grammar, text: &str) -> Option<Tree> {
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&syntax(grammar).language).ok()?;
    parser.parse(text, None)
}

/// Parses `text`, which is `old_text` with some bytes replaced in place
/// (blanked regions: every offset kept), reusing `old`'s subtrees outside
/// the changed bytes. On a file of megabytes that errors make us parse again
/// and again, a fresh parse each time costs seconds.
pub fn reparse(grammar: Grammar, mut old: Tree, old_text: &str, text: &str) -> Option<Tree> {
    if old_text.len() != text.len() {
        return parse(grammar, text);
    }
    let mut points = Points { text: text.as_bytes(), at: 0, point: tree_sitter::Point { row: 0, column: 0 } };
    for changed in changed_runs(old_text.as_bytes(), text.as_bytes()) {
        let start = points.at(changed.start);
        let end = points.at(changed.end);
        old.edit(&tree_sitter::InputEdit {
            start_byte: changed.start,
            old_end_byte: changed.end,
            new_end_byte: changed.end,
            start_position: start,
            old_end_position: end,
            new_end_position: end,
        });
    }
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&syntax(grammar).language).ok()?;
    parser.parse(text, Some(&old))
}

/// The byte ranges where two texts of one length differ; runs closer than a
/// line apart are one (fewer edits, each re-lexed whole anyway).
fn changed_runs(a: &[u8], b: &[u8]) -> Vec<std::ops::Range<usize>> {
    const JOIN: usize = 80;
    let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
    let mut i = 0;
    while i < a.len() {
        if a[i] == b[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < a.len() && a[i] != b[i] {
            i += 1;
        }
        match runs.last_mut() {
            Some(last) if start - last.end <= JOIN => last.end = i,
            _ => runs.push(start..i),
        }
    }
    runs
}

/// Rows and byte columns of increasing offsets, as tree-sitter counts them.
struct Points<'t> {
    text: &'t [u8],
    at: usize,
    point: tree_sitter::Point,
}

impl Points<'_> {
    fn at(&mut self, offset: usize) -> tree_sitter::Point {
        for &c in &self.text[self.at..offset] {
            if c == b'\n' {
                self.point.row += 1;
                self.point.column = 0;
            } else {
                self.point.column += 1;
            }
        }
        self.at = offset;
        self.point
    }
}

/// A grammar's node-kind names and field ids, resolved once: looking a field
/// up by name scans the grammar's field names, and [`Node::kind`] measures
/// and validates a C string, on every call.
pub struct Syntax {
    language: tree_sitter::Language,
    kinds: Vec<Box<str>>,
    pub fields: Fields,
}

/// The tables of a grammar, built on first use.
pub fn syntax(grammar: Grammar) -> &'static Syntax {
    static HLSL: OnceLock<Syntax> = OnceLock::new();
    static CUDA: OnceLock<Syntax> = OnceLock::new();
    static GLSL: OnceLock<Syntax> = OnceLock::new();
    match grammar {
        Grammar::Hlsl => HLSL.get_or_init(|| Syntax::new(tree_sitter_lockstep_hlsl::LANGUAGE.into())),
        Grammar::Cuda => CUDA.get_or_init(|| Syntax::new(tree_sitter_cuda::LANGUAGE.into())),
        Grammar::Glsl => GLSL.get_or_init(|| Syntax::new(tree_sitter_lockstep_glsl::LANGUAGE.into())),
    }
}

impl Syntax {
    fn new(language: tree_sitter::Language) -> Syntax {
        let kinds = (0..language.node_kind_count()).map(|id| language.node_kind_for_id(id as u16).unwrap_or("").into()).collect();
        Syntax { fields: Fields::resolve(&language), kinds, language }
    }

    /// The node's kind, as [`Node::kind`] gives it.
    pub fn kind(&self, n: Node) -> &str {
        let id = n.kind_id();
        match self.kinds.get(id as usize) {
            Some(kind) => kind,
            // The built-in error symbols lie outside the grammar's table.
            None if id == u16::MAX => "ERROR",
            None => "_ERROR",
        }
    }
}

/// A field of a grammar; absent when the grammar has no field of that name,
/// so that no child carries it.
#[derive(Clone, Copy, Debug)]
pub struct Field(Option<std::num::NonZeroU16>);

macro_rules! fields {
    ($($field:ident: $name:literal),* $(,)?) => {
        /// The fields the lowering reads, by their grammar names.
        #[derive(Clone, Copy, Debug)]
        pub struct Fields {
            $(pub $field: Field,)*
        }

        impl Fields {
            fn resolve(language: &tree_sitter::Language) -> Fields {
                Fields { $($field: Field(language.field_id_for_name($name)),)* }
            }
        }
    };
}

fields! {
    alternative: "alternative",
    argument: "argument",
    arguments: "arguments",
    body: "body",
    condition: "condition",
    consequence: "consequence",
    declarator: "declarator",
    default_type: "default_type",
    default_value: "default_value",
    element: "element",
    field: "field",
    function: "function",
    index: "index",
    indices: "indices",
    initializer: "initializer",
    left: "left",
    name: "name",
    operator: "operator",
    parameters: "parameters",
    right: "right",
    scope: "scope",
    size: "size",
    ty: "type",
    update: "update",
    value: "value",
}

/// Field access by resolved id ([`Node::child_by_field_name`] and
/// [`Node::children_by_field_name`] without the name lookup).
pub trait NodeFields<'t> {
    /// The first child in the field.
    fn field(&self, field: Field) -> Option<Node<'t>>;
    /// Every child in the field.
    fn fields<'c>(&self, field: Field, cursor: &'c mut TreeCursor<'t>) -> impl Iterator<Item = Node<'t>> + 'c;
}

impl<'t> NodeFields<'t> for Node<'t> {
    fn field(&self, field: Field) -> Option<Node<'t>> {
        self.child_by_field_id(field.0?.get())
    }

    fn fields<'c>(&self, field: Field, cursor: &'c mut TreeCursor<'t>) -> impl Iterator<Item = Node<'t>> + 'c {
        field.0.map(|id| self.children_by_field_id(id, cursor)).into_iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reparse_after_blanking_gives_the_tree_of_a_fresh_parse() {
        let text = "__global__ void a(int* p) { p[0] = 1; }\nvoid broken( { int x = ;\n__global__ void b(int* p) { p[1] = 2; }\n";
        let old = parse(Grammar::Cuda, text).unwrap();
        assert!(old.root_node().has_error());
        let (lo, hi) = (text.find("void broken").unwrap(), text.find("__global__ void b").unwrap());
        let blanked: String = text.char_indices().map(|(i, c)| if (lo..hi).contains(&i) && c != '\n' { ' ' } else { c }).collect();
        let again = reparse(Grammar::Cuda, old, text, &blanked).unwrap();
        let fresh = parse(Grammar::Cuda, &blanked).unwrap();
        assert!(!again.root_node().has_error());
        assert_eq!(again.root_node().to_sexp(), fresh.root_node().to_sexp());
        // A change of length is parsed afresh.
        let shorter = blanked.replacen("p[1]", "p", 1);
        let again = reparse(Grammar::Cuda, fresh, &blanked, &shorter).unwrap();
        assert_eq!(again.root_node().to_sexp(), parse(Grammar::Cuda, &shorter).unwrap().root_node().to_sexp());
    }

    /// Every node of the tree, errors included, in pre-order.
    fn walk(tree: &Tree) -> Vec<Node<'_>> {
        let mut nodes = Vec::new();
        let mut cursor = tree.walk();
        'walk: loop {
            nodes.push(cursor.node());
            if cursor.goto_first_child() {
                continue;
            }
            while !cursor.goto_next_sibling() {
                if !cursor.goto_parent() {
                    break 'walk;
                }
            }
        }
        nodes
    }

    /// A CUDA file with kernels, a device helper and host code around them.
    const CUDA_WITH_HOST_CODE: &str = r#"#pragma once
#line 1 "saxpy.cu"
struct Params { float a; int n; };

__device__ float scale(float a, float x) { return a * x; }

__global__ void saxpy(Params p, const float* x, float* y)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < p.n ? x[i] : 0.0f;
    __syncthreads();
    if (i < p.n) y[i] = scale(p.a, tile[threadIdx.x]) + y[i];
}

template <typename T>
static std::vector<T> host_copy(const T* device, size_t n)
{
    std::vector<T> out(n);
    do { cudaError_t status_ = (cudaMemcpy(out.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost)); if (status_ != cudaSuccess) { fprintf(stderr, "%s:%d: %s\n", "saxpy.cu", 21, cudaGetErrorString(status_)); exit(1); } } while (0);
    return out;
}

void launch_saxpy(Params p, const float* x, float* y, cudaStream_t stream)
{
    const dim3 block(256);
    const dim3 grid((p.n + 255) / 256);
    saxpy<<<grid, block, 0, stream>>>(p, x, y);
}

int main(int argc, char** argv)
{
    float *x, *y;
    cudaMalloc(&x, 1024 * sizeof(float));
    cudaMalloc((void**)&y, 1024 * sizeof(float));
    auto check = [&](const char* what) { if (cudaGetLastError() != cudaSuccess) { std::cerr << what << '\n'; } };
    launch_saxpy(Params{2.0f, 1024}, x, y, 0);
    check("saxpy");
    for (float v : host_copy(y, 1024)) printf("%f\n", v);
    return 0;
}

__global__ void __launch_bounds__(128) fill(float* y, float v) { y[blockIdx.x * 128 + threadIdx.x] = v; }
"#;

    /// The text of every node of the function definitions that are kernels or device functions.
    fn device_nodes<'t>(tree: &'t Tree, text: &'t str) -> Vec<(&'t str, &'t str)> {
        walk(tree)
            .into_iter()
            .filter(|n| n.kind() != "translation_unit")
            .filter(|n| {
                let mut top = *n;
                while let Some(parent) = top.parent().filter(|p| p.kind() != "translation_unit") {
                    top = parent;
                }
                let head = &text[top.start_byte()..top.child_by_field_name("body").map_or(top.end_byte(), |b| b.start_byte())];
                top.kind() == "function_definition" && (head.contains("__global__") || head.contains("__device__"))
            })
            .map(|n| (n.kind(), &text[n.byte_range()]))
            .collect()
    }

    #[test]
    fn without_host_bodies_the_text_parses_cleanly_and_keeps_device_code() {
        let text = CUDA_WITH_HOST_CODE;
        let skip = host_function_bodies(text);
        let skipped: Vec<&str> = skip.iter().map(|r| text[r.clone()].trim_start()).collect();
        assert_eq!(skipped.len(), 3, "host_copy, launch_saxpy and main: {skipped:?}");
        assert!(skipped.iter().all(|s| !s.contains("__syncthreads")), "{skipped:?}");
        let mut cut = String::new();
        let mut kept_from = 0;
        for body in &skip {
            cut.push_str(&text[kept_from..body.start]);
            kept_from = body.end;
        }
        cut.push_str(&text[kept_from..]);
        let tree = parse(Grammar::Cuda, &cut).expect("parses");
        let errors: Vec<_> = walk(&tree).into_iter().filter(|n| n.is_error() || n.is_missing()).map(|n| (n.kind(), n.byte_range())).collect();
        assert!(errors.is_empty(), "{errors:?}\n{}", tree.root_node().to_sexp());
        let empty_bodies = walk(&tree).into_iter().filter(|n| n.kind() == "compound_statement" && n.byte_range().len() == 2).count();
        assert_eq!(empty_bodies, skip.len());
        let full = parse(Grammar::Cuda, text).expect("parses");
        let kept = device_nodes(&tree, &cut);
        assert!(kept.iter().filter(|n| n.0 == "function_definition").count() == 3, "{kept:?}");
        assert_eq!(kept, device_nodes(&full, text));
    }

    #[test]
    fn tables_agree_with_lookups_by_name() {
        let sources = [
            (Grammar::Hlsl, "RWStructuredBuffer<uint> b : register(u0);\n[numthreads(64, 1, 1)]\nvoid main(uint3 t : SV_DispatchThreadID) {\n  for (int i = 0; i < 4; i++) { if (t.x > i) b[t.x] += (uint)i; else break; }\n  GroupMemoryBarrierWithGroupSync(); x = ) ;\n}\n"),
            (Grammar::Cuda, "__global__ void k(float* a, int n) {\n  __shared__ float s[256];\n  int i = threadIdx.x + blockIdx.x * blockDim.x;\n  while (i < n) { s[i % 256] = a[i]; i += 1; }\n  __syncthreads(); do { a[0] = s[0] ? 1 : 2; } while (0); } }\n"),
        ];
        for (grammar, text) in sources {
            let syntax = syntax(grammar);
            let tree = parse(grammar, text).expect("parses");
            assert!(tree.root_node().has_error(), "the sources exercise error nodes too");
            for n in walk(&tree) {
                assert_eq!(syntax.kind(n), n.kind());
                for (name, field) in [("body", syntax.fields.body), ("declarator", syntax.fields.declarator), ("type", syntax.fields.ty)] {
                    assert_eq!(n.field(field), n.child_by_field_name(name));
                    let mut by_id = n.walk();
                    let mut by_name = n.walk();
                    assert!(n.fields(field, &mut by_id).eq(n.children_by_field_name(name, &mut by_name)));
                }
            }
        }
    }
}
