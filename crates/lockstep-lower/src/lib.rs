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
