//! A C-style preprocessor for HLSL and CUDA kernels, with a source map from
//! the preprocessed text back to the original files and macro use sites.
//!
//! What it does:
//! - `#include "…"` searches the including file's directory, then the `-I`
//!   directories; `#include <…>` searches the `-I` directories, then the
//!   including file's directory. `#pragma once` and classic `#ifndef` guards
//!   stop re-inclusion; a real cycle is a warning and the include is skipped.
//! - Object-like and function-like macros with `#`, `##`, `__VA_ARGS__`,
//!   `__VA_OPT__` and named variadic parameters; Prosser's hide sets stop
//!   recursion. `__FILE__`, `__LINE__` and `__COUNTER__` are built in.
//! - `#if` expressions follow C (64-bit, with unsigned conversions); after
//!   expansion `true` is 1 and other identifiers are 0, as in C++.
//! - Directive lines and skipped groups become blank lines and comments
//!   become spaces (newlines kept), so copied text stays on its lines.
//!   An `#include` line becomes a blank line followed by the included text.
//!   Lines that a macro call spans are written after the call's line.
//!   `#pragma` lines are copied verbatim, except `#pragma once`, and dropped
//!   where the language ignores the directive (GLSL).
//! - Limits: one top-level macro use may create 1M tokens (10 MB of text)
//!   and 100k expansions, with macro calls nested 100 deep in arguments;
//!   `#if` expressions nest 256 deep; includes nest 200 deep. Going past a
//!   limit is an error and the offending expansion or include is dropped.
//! - `#line N "file"`: `__LINE__` and `__FILE__` follow it. When "file" is a
//!   file that is loaded or loadable, later tokens of the physical file map
//!   to the same line and column counted from line N of that file; otherwise
//!   spans stay in the physical file. Directive diagnostics always point at
//!   the physical file.
//! - Pastes that do not form one token keep both tokens, without an error.

mod expand;
mod expr;
mod lexer;
mod macros;
mod pp;
mod source_map;
mod token;

use std::path::{Path, PathBuf};

use lockstep_diag::Diagnostic;
use lockstep_source::{FileId, SourceDb};

pub use source_map::{MapCursor, SourceMap};

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// `-D NAME[=VALUE]`; a value of None means `1`. `NAME` may carry a
    /// parameter list, as in `-D 'F(x)=x+1'`.
    pub defines: Vec<(String, Option<String>)>,
    /// `-I` directories, searched in order.
    pub include_dirs: Vec<PathBuf>,
    /// Directives of the language that say nothing the analyses need
    /// (GLSL's `#version`, `#extension`): dropped without a warning.
    pub ignored_directives: &'static [&'static str],
}

/// Reads included files; tests supply an in-memory one.
pub trait FileLoader {
    fn load(&self, path: &Path) -> std::io::Result<Vec<u8>>;
}

/// Reads from the file system.
pub struct FsLoader;

impl FileLoader for FsLoader {
    fn load(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        std::fs::read(path)
    }
}

pub struct Output {
    /// The preprocessed text.
    pub text: String,
    pub map: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
}

/// Preprocesses `main` (already in `db`). Included files are added to `db`,
/// as is every macro expansion the map refers to.
pub fn preprocess(db: &mut SourceDb, main: FileId, options: &Options, loader: &dyn FileLoader) -> Output {
    pp::Preprocessor::new(db, main, options, loader).run()
}
