//! Lowers HLSL and CUDA to the kernel IR.
//!
//! One lowering serves every C-family language: both grammars share the
//! tree-sitter C/C++ node shapes, and everything language-specific (barrier
//! intrinsics, builtins, address-space keywords, resource types) comes from
//! a [`dialect::Dialect`] table. Helper functions are inlined at each call
//! site while lowering, so each kernel becomes one flat CFG whose
//! instructions remember the call sites they came through.

pub mod dialect;
mod expr;
mod module;
mod srctype;
mod ssa;
mod stmt;

use lockstep_diag::Diagnostic;
use lockstep_ir::Module;
use lockstep_source::{FileId, Span};

pub use module::lower_tree;

/// Source languages lockstep reads through this lowering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lang {
    Hlsl,
    Cuda,
}

impl Lang {
    /// Picks the language from a file extension.
    pub fn from_path(path: &std::path::Path) -> Option<Lang> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "hlsl" | "hlsli" | "fx" | "fxh" | "csh" => Some(Lang::Hlsl),
            "cu" | "cuh" => Some(Lang::Cuda),
            _ => None,
        }
    }

    pub fn from_name(name: &str) -> Option<Lang> {
        match name.to_ascii_lowercase().as_str() {
            "hlsl" => Some(Lang::Hlsl),
            "cuda" | "cu" => Some(Lang::Cuda),
            _ => None,
        }
    }

    pub fn dialect(self) -> &'static dialect::Dialect {
        match self {
            Lang::Hlsl => &dialect::HLSL,
            Lang::Cuda => &dialect::CUDA,
        }
    }

    pub fn grammar(self) -> lockstep_syntax::Grammar {
        match self {
            Lang::Hlsl => lockstep_syntax::Grammar::Hlsl,
            Lang::Cuda => lockstep_syntax::Grammar::Cuda,
        }
    }
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
}

/// The result of lowering one file.
pub struct Compiled {
    pub module: Module,
    pub diagnostics: Vec<Diagnostic>,
    /// True when the source had syntax errors (`--fix` refuses such files).
    pub has_errors: bool,
}

impl SpanMap for lockstep_preprocess::SourceMap {
    fn span(&self, lo: u32, hi: u32) -> Span {
        lockstep_preprocess::SourceMap::span(self, lo, hi)
    }
}

/// Preprocesses, parses and lowers one file.
pub fn compile(db: &mut lockstep_source::SourceDb, file: FileId, lang: Lang, options: &Options) -> Compiled {
    compile_with(db, file, lang, options, &lockstep_preprocess::FsLoader)
}

/// [`compile`] with a custom file loader for `#include` (tests, editors).
pub fn compile_with(
    db: &mut lockstep_source::SourceDb,
    file: FileId,
    lang: Lang,
    options: &Options,
    loader: &dyn lockstep_preprocess::FileLoader,
) -> Compiled {
    let pp_options = lockstep_preprocess::Options { defines: options.defines.clone(), include_dirs: options.include_dirs.clone() };
    let pp = lockstep_preprocess::preprocess(db, file, &pp_options, loader);
    let mut diagnostics = pp.diagnostics;
    let modelled = lang.dialect().modelled_headers;
    diagnostics.retain(|d| {
        d.rule != "include-not-found" || !modelled.iter().any(|h| d.message.ends_with(&format!("<{h}>")))
    });
    if db.file(file).lossy {
        diagnostics.push(
            lockstep_diag::Diagnostic::new("invalid-utf8", lockstep_diag::Severity::Warning, Span::new(file, 0, 0), "file is not valid UTF-8")
                .with_primary_label("invalid bytes were replaced before analysis")
                .with_note("lockstep reads kernel sources as UTF-8 text; binary files cannot be analysed"),
        );
    }
    let Some(tree) = lockstep_syntax::parse(lang.grammar(), &pp.text) else {
        diagnostics.push(lockstep_diag::Diagnostic::new(
            "parse-error",
            lockstep_diag::Severity::Error,
            Span::new(file, 0, 0),
            "the parser gave up on this file",
        ));
        return Compiled { module: Module::default(), diagnostics, has_errors: true };
    };
    // Deeply nested input must not overflow the stack: lower on a thread with room.
    let text = pp.text;
    let map = pp.map;
    let lowered = std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn_scoped(s, || lower_tree(&text, &tree, lang, &map, options))
            .expect("spawning the lowering thread")
            .join()
    });
    match lowered {
        Ok(mut c) => {
            diagnostics.append(&mut c.diagnostics);
            c.diagnostics = diagnostics;
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
