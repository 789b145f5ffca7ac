//! Lowers HLSL, CUDA, OpenCL C, GLSL compute shaders, Metal, C++ AMP and WGSL to the kernel IR.
//!
//! WGSL comes through naga's front end and its IR ([`wgsl`]); the C-family
//! languages through tree-sitter and the lowering described below.
//!
//! One lowering serves every C-family language: the grammars share the
//! tree-sitter C/C++ node shapes, and everything language-specific (barrier
//! intrinsics, builtins, address-space keywords, resource types) comes from
//! a [`dialect::Dialect`] table. Helper functions are inlined at each call
//! site while lowering, so each kernel becomes one flat CFG whose
//! instructions remember the call sites they came through.

pub mod dialect;
mod expr;
mod function_value;
mod lambda;
mod module;
mod packed_dot;
mod packed_lanes;
mod srctype;
mod ssa;
mod stmt;
mod template;
mod view;
mod wgsl;

use lockstep_diag::Diagnostic;
use lockstep_ir::Module;
use lockstep_source::{FileId, Span};

pub use module::{launch_table, lower_tree, lower_tree_streaming, lower_tree_with_launches, KernelSink, LaunchTable};

/// Source languages lockstep reads through this lowering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    Hlsl,
    Cuda,
    OpenCl,
    Glsl,
    Metal,
    /// C++ AMP: each `parallel_for_each` lambda is a kernel.
    CppAmp,
    /// Read through naga, not tree-sitter: it has no dialect table or grammar.
    Wgsl,
}

impl Lang {
    pub const ALL: [Lang; 7] = [Lang::Hlsl, Lang::Cuda, Lang::OpenCl, Lang::Glsl, Lang::Metal, Lang::CppAmp, Lang::Wgsl];

    /// The name `--lang` takes.
    pub fn name(self) -> &'static str {
        self.dialect().map_or("wgsl", |d| d.name)
    }

    /// Every language's `--lang` name, as `hlsl|cuda|…`.
    pub fn names() -> String {
        Lang::ALL.map(Lang::name).join("|")
    }

    /// Picks the language from a file extension.
    pub fn from_path(path: &std::path::Path) -> Option<Lang> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "hlsl" | "hlsli" | "fx" | "fxh" | "csh" => Some(Lang::Hlsl),
            "cu" | "cuh" => Some(Lang::Cuda),
            "cl" => Some(Lang::OpenCl),
            "comp" | "glsl" => Some(Lang::Glsl),
            "wgsl" => Some(Lang::Wgsl),
            "metal" => Some(Lang::Metal),
            _ => None,
        }
    }

    /// Picks the language from a file extension and, for extensions several
    /// languages share, the text: a `.cpp` file using `restrict(amp)` is C++ AMP.
    pub fn from_path_and_text(path: &std::path::Path, text: &str) -> Option<Lang> {
        Lang::from_path(path).or_else(|| (is_cpp_source(path) && uses_cpp_amp(text)).then_some(Lang::CppAmp))
    }

    pub fn from_name(name: &str) -> Option<Lang> {
        match name.to_ascii_lowercase().as_str() {
            "hlsl" => Some(Lang::Hlsl),
            "cuda" | "cu" => Some(Lang::Cuda),
            "opencl" | "cl" => Some(Lang::OpenCl),
            "glsl" | "comp" => Some(Lang::Glsl),
            "wgsl" => Some(Lang::Wgsl),
            "metal" => Some(Lang::Metal),
            "cpp-amp" | "amp" => Some(Lang::CppAmp),
            _ => None,
        }
    }

    /// The dialect table of a C-family language; None for WGSL, which is
    /// lowered from naga's IR.
    pub fn dialect(self) -> Option<&'static dialect::Dialect> {
        match self {
            Lang::Hlsl => Some(&dialect::HLSL),
            Lang::Cuda => Some(&dialect::CUDA),
            Lang::OpenCl => Some(&dialect::OPENCL),
            Lang::Glsl => Some(&dialect::GLSL),
            Lang::Metal => Some(&dialect::METAL),
            Lang::CppAmp => Some(&dialect::CPP_AMP),
            Lang::Wgsl => None,
        }
    }

    /// The dialect table and grammar of a language read through tree-sitter.
    pub(crate) fn c_family(self) -> (&'static dialect::Dialect, lockstep_syntax::Grammar) {
        match (self.dialect(), self.grammar()) {
            (Some(d), Some(g)) => (d, g),
            _ => unreachable!("WGSL is lowered from naga's IR, never through tree-sitter"),
        }
    }

    /// The tree-sitter grammar of a C-family language; None for WGSL.
    pub fn grammar(self) -> Option<lockstep_syntax::Grammar> {
        match self {
            Lang::Hlsl => Some(lockstep_syntax::Grammar::Hlsl),
            // OpenCL C, Metal and C++ AMP are C and C++; their keywords reach the C++ grammar as CUDA words.
            Lang::Cuda | Lang::OpenCl | Lang::Metal | Lang::CppAmp => Some(lockstep_syntax::Grammar::Cuda),
            Lang::Glsl => Some(lockstep_syntax::Grammar::Glsl),
            Lang::Wgsl => None,
        }
    }
}

/// Extensions of GPU shader and kernel files lockstep does not read yet;
/// a directory walk counts them as skipped rather than ignoring them.
pub const UNREAD_EXTENSIONS: &[&str] = &[
    "frag", "vert", "geom", "tesc", "tese", "mesh", "task", "rgen", "rchit", "rmiss", "rahit", "rint", "rcall",
    "spv", "spvasm", "ptx", "amdgcn", "dxil",
];

/// Whether `path` has a C++ source extension (C++ AMP kernels live in ordinary C++ files).
fn is_cpp_source(path: &std::path::Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| ["cpp", "cxx", "cc"].contains(&e.to_ascii_lowercase().as_str()))
}

/// Whether C++ text marks code for the accelerator with `restrict(amp)` (or
/// `restrict(cpu, amp)`): the sign of a C++ AMP source.
pub fn uses_cpp_amp(text: &str) -> bool {
    text.match_indices("restrict").any(|(at, word)| {
        let rest = text[at + word.len()..].trim_start();
        let Some(args) = rest.strip_prefix('(') else { return false };
        args.split_once(')').is_some_and(|(inside, _)| inside.split(',').any(|w| w.trim() == "amp"))
    })
}

/// Whether GLSL source declares a compute shader's group size
/// (`layout(local_size_x = …) in;`): a `.glsl` file may hold any stage.
pub fn declares_compute_layout(text: &str) -> bool {
    text.match_indices("layout").any(|(at, word)| {
        let rest = text[at + word.len()..].trim_start();
        let Some(args) = rest.strip_prefix('(') else { return false };
        let Some((inside, after)) = args.split_once(')') else { return false };
        inside.contains("local_size_") && after.trim_start().starts_with("in")
    })
}

/// Whether `path` is a GPU source lockstep does not read (by extension).
pub fn is_unread_gpu_source(path: &std::path::Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| UNREAD_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// Maps byte ranges of the parsed (preprocessed) text to original spans.
pub trait SpanMap {
    fn span(&self, lo: u32, hi: u32) -> Span;
}

/// The identity map, for text that was not preprocessed.
pub struct FileSpans(pub FileId);

impl SpanMap for FileSpans {
    fn span(&self, lo: u32, hi: u32) -> Span {
        Span::new(self.0, lo, hi)
    }
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `-D NAME[=VALUE]`.
    pub defines: Vec<(String, Option<String>)>,
    /// `-I DIR`.
    pub include_dirs: Vec<std::path::PathBuf>,
    /// Threads per group for every entry point (overrides the source).
    pub group_size: Option<[u32; 3]>,
    /// Groups in the grid for every entry point (overrides the source's launches).
    pub grid_size: Option<[u32; 3]>,
    /// Launch shapes of named entry points (a project's configuration); `group_size` and
    /// `grid_size` above still override them.
    pub kernels: std::collections::BTreeMap<String, KernelShape>,
    /// The wave width, for kernels whose source and language leave it open.
    pub wave_size: Option<u32>,
}

/// The launch shape one entry point is known to run with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelShape {
    pub group_size: Option<[u32; 3]>,
    pub grid_size: Option<[u32; 3]>,
}

/// The result of lowering one file.
pub struct Compiled {
    pub module: Module,
    pub diagnostics: Vec<Diagnostic>,
    /// True when the source had syntax errors (`--fix` refuses such files).
    pub has_errors: bool,
}

impl SpanMap for lockstep_preprocess::MapCursor<'_> {
    fn span(&self, lo: u32, hi: u32) -> Span {
        lockstep_preprocess::MapCursor::span(self, lo, hi)
    }
}

/// Preprocesses, parses and lowers one file.
pub fn compile(db: &mut lockstep_source::SourceDb, file: FileId, lang: Lang, options: &Options) -> Compiled {
    compile_with(db, file, lang, options, &lockstep_preprocess::FsLoader)
}

/// [`compile`], handing each kernel to `sink` as soon as it is lowered; the
/// returned module holds the globals only.
pub fn compile_streaming(
    db: &mut lockstep_source::SourceDb,
    file: FileId,
    lang: Lang,
    options: &Options,
    sink: &mut KernelSink,
) -> Compiled {
    compile_inner(db, file, lang, options, &lockstep_preprocess::FsLoader, Some(sink))
}

/// [`compile`] with a custom file loader for `#include` (tests, editors).
pub fn compile_with(
    db: &mut lockstep_source::SourceDb,
    file: FileId,
    lang: Lang,
    options: &Options,
    loader: &dyn lockstep_preprocess::FileLoader,
) -> Compiled {
    compile_inner(db, file, lang, options, loader, None)
}

fn compile_inner(
    db: &mut lockstep_source::SourceDb,
    file: FileId,
    lang: Lang,
    options: &Options,
    loader: &dyn lockstep_preprocess::FileLoader,
    sink: Option<&mut KernelSink>,
) -> Compiled {
    if lang == Lang::Wgsl {
        return wgsl_file(db, file, options, loader, sink);
    }
    let predefined = lang.c_family().0.predefined_macros.iter().map(|(name, value)| (name.to_string(), Some(value.to_string())));
    let defines = predefined.chain(options.defines.iter().cloned()).collect();
    let pp_options = lockstep_preprocess::Options {
        defines,
        include_dirs: options.include_dirs.clone(),
        ignored_directives: lang.c_family().0.ignored_directives,
    };
    let pp = lockstep_preprocess::preprocess(db, file, &pp_options, loader);
    let mut diagnostics = pp.diagnostics;
    let modelled = lang.c_family().0.modelled_headers;
    diagnostics.retain(|d| {
        let quiet = |h: &str| d.message.ends_with(&format!("<{h}>"));
        // A standard library header declares host code and types the front end knows.
        let standard = STANDARD_HEADERS.iter().any(|h| quiet(h));
        d.rule != "include-not-found" || !(modelled.iter().any(|h| quiet(h)) || standard)
    });
    if db.file(file).lossy {
        diagnostics.push(
            lockstep_diag::Diagnostic::new("invalid-utf8", lockstep_diag::Severity::Warning, Span::new(file, 0, 0), "file is not valid UTF-8")
                .with_primary_label("invalid bytes were replaced before analysis")
                .with_note("lockstep reads kernel sources as UTF-8 text; binary files cannot be analysed"),
        );
    }
    // Launches are in host code, which is cut before parsing.
    let launches = launch_table(lang, &pp.text, &pp.map.cursor());
    let (text, map, tree, skipped) = parse_isolating_errors(lang, pp.text, pp.map);
    let (text, tree) = without_values_read_as_casts(lang, text, tree);
    for region in skipped {
        let line = db.location(region.start).0.line;
        diagnostics.push(
            lockstep_diag::Diagnostic::new("parse-error", lockstep_diag::Severity::Error, region.error, "syntax error")
                .with_primary_label(region.what)
                .with_note(format!(
                    "the definition starting at line {line} was skipped up to the next definition; the definitions after it are checked"
                )),
        );
    }
    let Some(tree) = tree else {
        diagnostics.push(lockstep_diag::Diagnostic::new(
            "parse-error",
            lockstep_diag::Severity::Error,
            Span::new(file, 0, 0),
            "the parser gave up on this file",
        ));
        return Compiled { module: Module::default(), diagnostics, has_errors: true };
    };
    // Deeply nested input must not overflow the stack: lower on a thread with room.
    let db: &lockstep_source::SourceDb = db;
    let lowered = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn_scoped(s, || {
                // The walk asks for spans in text order, near each other.
                let spans = map.cursor();
                match sink {
                    Some(sink) => lower_tree_streaming(&text, &tree, lang, &spans, options, &launches, db, Some(file), sink),
                    None => lower_tree_with_launches(&text, &tree, lang, &spans, options, &launches),
                }
            })
            .expect("spawning the lowering thread")
            .join()
    });
    match lowered {
        Ok(mut c) => {
            diagnostics.append(&mut c.diagnostics);
            c.diagnostics = one_note_per_construct(diagnostics);
            c
        }
        Err(_) => {
            diagnostics.push(lockstep_diag::Diagnostic::new(
                "internal-error",
                lockstep_diag::Severity::Error,
                Span::new(file, 0, 0),
                "lockstep failed while lowering this file; please report it",
            ));
            Compiled { module: Module::default(), diagnostics, has_errors: true }
        }
    }
}

/// Lowers a WGSL file, keeping its kernels in the module when there is no sink.
/// WGSL has no `#`: a file with directive lines is a template of the C
/// preprocessor's kind, expanded with `-D`/`-I` before naga reads it. So is
/// any file when `-D` names macros (a generator's `WG_SIZE`).
fn wgsl_file(
    db: &mut lockstep_source::SourceDb,
    file: FileId,
    options: &Options,
    loader: &dyn lockstep_preprocess::FileLoader,
    sink: Option<&mut KernelSink>,
) -> Compiled {
    let has_directives = db.file(file).text.lines().any(|line| line.trim_start().starts_with('#'));
    let mut compiled = if has_directives || !options.defines.is_empty() {
        let pp_options = lockstep_preprocess::Options {
            defines: options.defines.clone(),
            include_dirs: options.include_dirs.clone(),
            ignored_directives: &[],
        };
        let pp = lockstep_preprocess::preprocess(db, file, &pp_options, loader);
        let mut compiled = wgsl::compile(db, file, &pp.text, &pp.map.cursor(), options, sink);
        let mut diagnostics = pp.diagnostics;
        diagnostics.append(&mut compiled.diagnostics);
        compiled.diagnostics = diagnostics;
        compiled
    } else {
        let text = db.file(file).text.clone();
        wgsl::compile(db, file, &text, &FileSpans(file), options, sink)
    };
    compiled.diagnostics = one_note_per_construct(compiled.diagnostics);
    compiled
}

/// The C and C++ standard library's headers.
const STANDARD_HEADERS: &[&str] = &[
    "algorithm", "array", "atomic", "bitset", "cassert", "cctype", "cfloat", "chrono", "climits", "cmath", "complex", "condition_variable",
    "cstddef", "cstdint", "cstdio", "cstdlib", "cstring", "ctime", "deque", "exception", "functional", "initializer_list", "iomanip",
    "iostream", "iterator", "limits", "list", "map", "memory", "mutex", "new", "numeric", "optional", "queue", "random", "set", "sstream",
    "stdexcept", "string", "string_view", "thread", "tuple", "type_traits", "unordered_map", "unordered_set", "utility", "variant",
    "vector", "assert.h", "float.h", "limits.h", "math.h", "stdbool.h", "stddef.h", "stdint.h", "stdio.h", "stdlib.h", "string.h",
    "time.h",
];

/// `unsupported` notes with one message become the first of them, with a
/// count: a construct repeated through a macro or a header is one note.
fn one_note_per_construct(diagnostics: Vec<lockstep_diag::Diagnostic>) -> Vec<lockstep_diag::Diagnostic> {
    let mut first: rustc_hash::FxHashMap<String, usize> = Default::default();
    let mut out: Vec<lockstep_diag::Diagnostic> = Vec::with_capacity(diagnostics.len());
    for d in diagnostics {
        if d.rule == "unsupported" {
            if let Some(&i) = first.get(&d.message) {
                out[i].occurrences += 1;
                continue;
            }
            first.insert(d.message.clone(), out.len());
        }
        out.push(d);
    }
    for d in out.iter_mut().filter(|d| d.occurrences > 1) {
        d.notes.push(format!("the same construct is met {} more times in this file", d.occurrences - 1));
    }
    out
}

/// Parses, and when a broken top-level definition swallowed the definitions
/// after it (a missing `)` or `}`), blanks the broken part — keeping every
/// byte offset — and parses again, so later kernels are still checked.
/// Returns the text finally parsed, its map, its tree, and the blanked regions.
///
/// A file that parses cleanly is parsed once, without its redundant
/// whitespace. A broken one keeps its blanks while its errors are isolated:
/// tree-sitter's error recovery weighs the bytes and lines it would skip, so
/// where it places an error depends on them. Host bodies are cut before each
/// parse: a broken kernel can hide the bodies after it from the scanner.
fn parse_isolating_errors(
    lang: Lang,
    text: String,
    map: lockstep_preprocess::SourceMap,
) -> (String, lockstep_preprocess::SourceMap, Option<lockstep_syntax::Tree>, Vec<SkippedRegion>) {
    if let Some((compact, compact_map)) = map.remove(&text, &parser_cuts(lang, &text, Blanks::Cut)) {
        if let Some(tree) = lockstep_syntax::parse(lang.c_family().1, &compact).filter(|t| !t.root_node().has_error()) {
            return (compact, compact_map, Some(tree), Vec::new());
        }
    }
    let mut skipped = Vec::new();
    let (mut text, mut map) = without_host_bodies(lang, text, map);
    let grammar = lang.c_family().1;
    // The tree of the text before the last blanking, reused where it did not change.
    let parse_after = |last: Option<(lockstep_syntax::Tree, String)>, text: &str| match last {
        Some((old, old_text)) => lockstep_syntax::reparse(grammar, old, &old_text, text),
        None => lockstep_syntax::parse(grammar, text),
    };
    let mut last = None;
    for _ in 0..16 {
        let Some(tree) = parse_after(last.take(), &text) else { return (text, map, None, skipped) };
        let root = tree.root_node();
        if !root.has_error() {
            return (text, map, Some(tree), skipped);
        }
        let mut cut = None;
        let mut cursor = root.walk();
        for item in root.children(&mut cursor) {
            if !item.has_error() {
                continue;
            }
            let (lo, hi) = (item.start_byte(), item.end_byte());
            if let Some(next) = next_top_level_start(&text[lo..hi]) {
                cut = Some((lo, lo + next, first_error(item)));
                break;
            }
        }
        drop(cursor);
        let Some((lo, hi, (error, what))) = cut else { return (text, map, Some(tree), skipped) };
        let old_text = text.clone();
        let blank: String = text[lo..hi].chars().map(|c| if c == '\n' { '\n' } else { ' ' }).collect();
        text.replace_range(lo..hi, &blank);
        skipped.push(SkippedRegion { start: map.offset(lo as u32), error: map.span(error.0, error.1), what });
        (text, map) = without_host_bodies(lang, text, map);
        last = Some((tree, old_text));
    }
    let tree = parse_after(last, &text);
    (text, map, tree, skipped)
}

/// Parses again, with the parentheses blanked, a text where values in
/// parentheses before `&&` were read as casts (see
/// [`lockstep_syntax::parenthesized_values_read_as_casts`]); byte offsets stay.
fn without_values_read_as_casts(lang: Lang, mut text: String, tree: Option<lockstep_syntax::Tree>) -> (String, Option<lockstep_syntax::Tree>) {
    let Some(parens) = tree.as_ref().map(|t| lockstep_syntax::parenthesized_values_read_as_casts(t, &text)).filter(|p| !p.is_empty()) else { return (text, tree) };
    let (Some(tree), old_text) = (tree, text.clone()) else { return (text, None) };
    for at in parens {
        text.replace_range(at..at + 1, " ");
    }
    let reparsed = lockstep_syntax::reparse(lang.c_family().1, tree, &old_text, &text);
    (text, reparsed)
}

/// Whether [`parser_cuts`] includes redundant whitespace.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Blanks {
    Cut,
    Keep,
}

/// What the parser does not need of the preprocessed text: redundant
/// whitespace (see [`lockstep_syntax::redundant_whitespace`]) if asked, and
/// in dialects with host code (CUDA) the bodies of host-only functions. Only
/// kernels and the device code they call are lowered, and host code is much
/// of a CUDA file. So syntax errors inside host bodies go unreported
/// (lockstep is not a compiler; nor does `--fix` refuse such a file, its
/// edits being in device code), and host C++ the grammar does not know no
/// longer yields spurious parse errors. Host functions that kept code names
/// are kept; a call the scanner could not see lowers to an empty body.
/// C++ the grammar does not take goes too: braced default arguments and the
/// execution spaces of extended lambdas (see [`lockstep_syntax::brace_default_arguments`],
/// [`lockstep_syntax::lambda_execution_spaces`]).
fn parser_cuts(lang: Lang, text: &str, blanks: Blanks) -> Vec<std::ops::Range<usize>> {
    let host = if lang.c_family().0.host_code { lockstep_syntax::host_function_bodies(text) } else { Vec::new() };
    let gaps = lockstep_syntax::union_of_ranges(&lockstep_syntax::brace_default_arguments(text), &lockstep_syntax::lambda_execution_spaces(text));
    let gaps = lockstep_syntax::union_of_ranges(&gaps, &lockstep_syntax::typename_in_expressions(text));
    let cuts = lockstep_syntax::union_of_ranges(&host, &gaps);
    match blanks {
        Blanks::Cut => lockstep_syntax::union_of_ranges(&lockstep_syntax::redundant_whitespace(text), &cuts),
        Blanks::Keep => cuts,
    }
}

/// The text and map without the host bodies ([`parser_cuts`] keeping blanks).
fn without_host_bodies(lang: Lang, text: String, map: lockstep_preprocess::SourceMap) -> (String, lockstep_preprocess::SourceMap) {
    match map.remove(&text, &parser_cuts(lang, &text, Blanks::Keep)) {
        Some(cut) => cut,
        None => (text, map),
    }
}

/// A definition blanked out because it did not parse.
struct SkippedRegion {
    start: Span,
    /// The first syntax error in it.
    error: Span,
    what: String,
}

/// The first ERROR or MISSING node below `n` (iteratively: trees can be deep).
fn first_error(n: lockstep_syntax::Node) -> ((u32, u32), String) {
    let mut cursor = n.walk();
    loop {
        let node = cursor.node();
        if node.is_missing() {
            return ((node.start_byte() as u32, node.end_byte() as u32), format!("expected `{}` here", node.kind()));
        }
        if node.is_error() {
            let hi = node.end_byte().min(node.start_byte() + 200);
            return ((node.start_byte() as u32, hi as u32), "lockstep could not parse this".into());
        }
        let mut moved = false;
        if cursor.goto_first_child() {
            loop {
                if cursor.node().has_error() {
                    moved = true;
                    break;
                }
                if !cursor.goto_next_sibling() {
                    break;
                }
            }
        }
        if !moved {
            return ((n.start_byte() as u32, n.start_byte() as u32 + 1), "lockstep could not parse this".into());
        }
    }
}

/// Offset of the first line after the first one that starts, at column 0,
/// like a new top-level definition.
fn next_top_level_start(text: &str) -> Option<usize> {
    const STARTS: &[&str] = &[
        "__global__", "__device__", "__host__", "extern ", "template", "static ", "struct ", "void ", "inline ", "[numthreads",
        "[Numthreads", "cbuffer ", "groupshared ", "RWStructuredBuffer", "StructuredBuffer", "layout", "#",
    ];
    let mut offset = 0;
    let mut previous = "";
    for (i, line) in text.split_inclusive('\n').enumerate() {
        // The declaration a template header (`template <…>` ending the line
        // before) introduces belongs to it.
        let after_template_header = previous.ends_with('>') && !previous.starts_with('#');
        if i > 0 && !after_template_header && STARTS.iter().any(|s| line.starts_with(s)) {
            return Some(offset);
        }
        if !line.trim().is_empty() {
            previous = line.trim();
        }
        offset += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compile_cuda(text: &str) -> (lockstep_source::SourceDb, Compiled) {
        let mut db = lockstep_source::SourceDb::new();
        let file = db.add("test.cu", text);
        let compiled = compile(&mut db, file, Lang::Cuda, &Options::default());
        (db, compiled)
    }

    /// The text `parse_isolating_errors` ends with, for preprocessed `text`.
    fn parsed_text(lang: Lang, text: &str) -> (String, bool) {
        let mut db = lockstep_source::SourceDb::new();
        let file = db.add("test.hlsl", text);
        let pp = lockstep_preprocess::preprocess(&mut db, file, &Default::default(), &lockstep_preprocess::FsLoader);
        let (text, _, tree, _) = parse_isolating_errors(lang, pp.text, pp.map);
        (text, tree.is_some_and(|t| t.root_node().has_error()))
    }

    #[test]
    fn clean_files_lose_their_blanks_and_broken_ones_keep_them() {
        let clean = "[numthreads(64, 1, 1)]\nvoid k(uint i : SV_GroupIndex)\n{\n    // a comment\n    if (i < 4)\n        return;\n}\n";
        let (text, errors) = parsed_text(Lang::Hlsl, clean);
        assert!(!errors);
        assert_eq!(text, "[numthreads(64, 1, 1)]\nvoid k(uint i : SV_GroupIndex)\n{\n\n if (i < 4)\n return;\n}\n");
        // tree-sitter places errors by the bytes and lines its recovery
        // would skip: a broken file is parsed with its blanks.
        let broken = clean.replace("(i < 4)", "(i < 4");
        let (text, errors) = parsed_text(Lang::Hlsl, &broken);
        assert!(errors);
        assert!(text.contains("\n        return;"), "{text:?}");
    }

    #[test]
    fn syntax_errors_in_host_bodies_are_not_reported() {
        let text = "void launch(int* a) {\n  k<<<1, 32>>>(a;\n}\n__global__ void k(int* a) {\n  a[threadIdx.x] = 1;\n}\n";
        let (_, compiled) = compile_cuda(text);
        assert!(!compiled.has_errors, "{:?}", compiled.diagnostics);
        assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.diagnostics);
        assert_eq!(compiled.module.functions.len(), 1);
    }

    #[test]
    fn a_broken_kernel_is_isolated_and_the_host_code_after_it_skipped() {
        let text = "__global__ void broken(int* a) { if (threadIdx.x < 3 { __syncthreads(); }\n\
                    void launch(int* a) { broken<<<1, 32>>>(a; }\n\
                    __global__ void fine(int* a) {\n  if (threadIdx.x < 3)\n    __syncthreads();\n}\n";
        let (db, compiled) = compile_cuda(text);
        let errors: Vec<u32> = compiled.diagnostics.iter().filter(|d| d.rule == "parse-error").map(|d| db.location(d.span).0.line).collect();
        assert_eq!(errors, [1], "{:?}", compiled.diagnostics);
        let names: Vec<&str> = compiled.module.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["fine"]);
    }

    #[test]
    fn an_undefined_macro_is_one_syntax_error_for_all_its_uses() {
        // `UNROLL (…) {` twice in a template (whose header is part of its
        // definition): one error, at the first use, counting both.
        let text = "template <\n    int N>\n__global__ void broken(int* a) {\n  UNROLL (int i = 0; i < N; ++i) { a[i] = 0; }\n  UNROLL (int j = 0; j < N; ++j) { a[j] += 1; }\n}\n\
                    __global__ void fine(int* a) {\n  a[threadIdx.x] = 1;\n}\n";
        let (db, compiled) = compile_cuda(text);
        let errors: Vec<_> = compiled.diagnostics.iter().filter(|d| d.rule == "parse-error" && d.severity == lockstep_diag::Severity::Error).collect();
        assert_eq!(errors.len(), 1, "{:?}", compiled.diagnostics);
        assert_eq!(db.location(errors[0].span).0.line, 4);
        assert_eq!(errors[0].occurrences, 2);
        assert!(errors[0].notes.iter().any(|n| n.contains("`UNROLL(…)`")), "{:?}", errors[0].notes);
        let names: Vec<&str> = compiled.module.functions.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["fine"]);
    }

    #[test]
    fn a_kernel_calling_a_skipped_function_still_lowers() {
        // `helper` is unmarked and, being named by the kernel, kept by the
        // scanner; a body it skipped would lower to an empty function.
        let text = "int helper(int x) { return x * 2; }\nvoid launch(int* a) { k<<<1, 32>>>(a); }\n__global__ void k(int* a) {\n  a[threadIdx.x] = helper(3);\n  __syncthreads();\n}\n";
        let (db, compiled) = compile_cuda(text);
        assert!(compiled.diagnostics.is_empty(), "{:?}", compiled.diagnostics);
        let kernel = compiled.module.functions.iter().find(|f| f.name == "k").expect("the kernel is lowered");
        assert!(lockstep_ir::verify(kernel).is_empty());
        // Spans still point into the original text after the launcher's body was cut.
        let barrier = text.find("__syncthreads").unwrap();
        let spans: Vec<_> = kernel.insts.iter().map(|i| i.span).collect();
        assert!(spans.iter().any(|s| s.lo as usize == barrier && db.location(*s).0.line == 5), "{spans:?}");
    }
}
