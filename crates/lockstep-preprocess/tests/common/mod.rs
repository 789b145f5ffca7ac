//! Shared helpers: an in-memory file loader and one-call preprocessing.

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use lockstep_diag::Diagnostic;
use lockstep_preprocess::{preprocess, FileLoader, Options, Output};
use lockstep_source::{FileId, SourceDb};

#[derive(Default)]
pub struct MemLoader(pub HashMap<PathBuf, Vec<u8>>);

impl FileLoader for MemLoader {
    fn load(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.0.get(path).cloned().ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))
    }
}

pub struct Run {
    pub db: SourceDb,
    pub main: FileId,
    pub out: Output,
}

pub const MAIN: &str = "src/main.hlsl";

/// Preprocesses `src` as `src/main.hlsl`, with `files` loadable by path.
pub fn run_with(src: &str, files: &[(&str, &str)], options: &Options) -> Run {
    let loader = MemLoader(files.iter().map(|(p, t)| (PathBuf::from(p), t.as_bytes().to_vec())).collect());
    let mut db = SourceDb::new();
    let main = db.add(MAIN, src);
    let out = preprocess(&mut db, main, options, &loader);
    Run { db, main, out }
}

pub fn run(src: &str) -> Run {
    run_with(src, &[], &Options::default())
}

impl Run {
    pub fn text(&self) -> &str {
        &self.out.text
    }

    pub fn rules(&self) -> Vec<&str> {
        self.out.diagnostics.iter().map(|d| d.rule.as_str()).collect()
    }

    pub fn diag(&self, rule: &str) -> &Diagnostic {
        self.out
            .diagnostics
            .iter()
            .find(|d| d.rule == rule)
            .unwrap_or_else(|| panic!("no {rule} in {:?}", self.out.diagnostics))
    }

    /// Output range of the `n`th occurrence of `needle` in the output.
    pub fn find_out(&self, needle: &str, n: usize) -> (u32, u32) {
        let at = self
            .out
            .text
            .match_indices(needle)
            .nth(n)
            .unwrap_or_else(|| panic!("{needle:?} not in {:?}", self.out.text))
            .0;
        (at as u32, (at + needle.len()) as u32)
    }

    /// 1-based line of an output offset.
    pub fn out_line(&self, at: u32) -> usize {
        self.out.text[..at as usize].matches('\n').count() + 1
    }
}

/// Byte range of the `n`th occurrence of `needle` in `text`.
pub fn find(text: &str, needle: &str, n: usize) -> (u32, u32) {
    let at = text.match_indices(needle).nth(n).unwrap_or_else(|| panic!("{needle:?} not in {text:?}")).0;
    (at as u32, (at + needle.len()) as u32)
}
