//! Source files, byte spans into them, 1-based line/column lookup, and the
//! table of macro expansions that lets a diagnostic point at a macro's use
//! site while naming the macro.

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Index of a file in a [`SourceDb`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// Index of a macro expansion in a [`SourceDb`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExpnId(pub u32);

/// A byte range in an original source file. When the text came from a macro
/// expansion, `lo..hi` is the macro's use site and `expansion` says which
/// macro produced it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    pub file: FileId,
    pub lo: u32,
    pub hi: u32,
    pub expansion: Option<ExpnId>,
}

impl Span {
    pub fn new(file: FileId, lo: u32, hi: u32) -> Span {
        Span { file, lo, hi, expansion: None }
    }

    /// The smallest span covering both, when they are in the same file.
    pub fn to(self, other: Span) -> Span {
        if self.file != other.file {
            return self;
        }
        Span {
            file: self.file,
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
            expansion: self.expansion.or(other.expansion),
        }
    }
}

/// One use of a macro: what it was called, where it was defined, where it was used.
#[derive(Clone, Debug)]
pub struct MacroExpansion {
    pub name: String,
    /// Where the macro was `#define`d (None for `-D` command-line macros).
    pub definition: Option<Span>,
    /// The use site, in the file being read; for nested expansions the outermost use.
    pub call_site: Span,
    /// The expansion this one happened inside of, if any.
    pub parent: Option<ExpnId>,
}

#[derive(Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: Arc<str>,
    /// Byte offsets at which each line starts.
    line_starts: Vec<u32>,
    /// True when the bytes on disk were not valid UTF-8 and were replaced.
    pub lossy: bool,
}

impl SourceFile {
    pub fn new(path: PathBuf, text: Arc<str>, lossy: bool) -> SourceFile {
        let mut line_starts = vec![0u32];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        SourceFile { path, text, line_starts, lossy }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn location(&self, offset: u32) -> Location {
        let offset = offset.min(self.text.len() as u32);
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line] as usize;
        let mut end = offset as usize;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let column = self.text[start..end].chars().count() + 1;
        Location { line: line as u32 + 1, column: column as u32 }
    }

    /// The text of a 1-based line, without its line break.
    pub fn line_text(&self, line: u32) -> &str {
        let i = (line as usize).saturating_sub(1);
        let Some(&start) = self.line_starts.get(i) else { return "" };
        let end = self.line_starts.get(i + 1).map(|&e| e as usize).unwrap_or(self.text.len());
        self.text[start as usize..end].trim_end_matches(['\n', '\r'])
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Byte offset of the start of a 1-based line.
    pub fn line_start(&self, line: u32) -> u32 {
        let i = (line as usize).saturating_sub(1).min(self.line_starts.len() - 1);
        self.line_starts[i]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Location {
    pub line: u32,
    pub column: u32,
}

/// Every file read during one run, and every macro expansion seen.
#[derive(Debug, Default)]
pub struct SourceDb {
    files: Vec<SourceFile>,
    expansions: Vec<MacroExpansion>,
}

impl SourceDb {
    pub fn new() -> SourceDb {
        SourceDb::default()
    }

    /// Adds text under a path and returns its id.
    pub fn add(&mut self, path: impl Into<PathBuf>, text: impl Into<Arc<str>>) -> FileId {
        self.add_file(SourceFile::new(path.into(), text.into(), false))
    }

    /// Adds raw bytes, replacing invalid UTF-8 (the caller may report `lossy`).
    pub fn add_bytes(&mut self, path: impl Into<PathBuf>, bytes: &[u8]) -> FileId {
        let (text, lossy) = match std::str::from_utf8(bytes) {
            Ok(s) => (Arc::<str>::from(s), false),
            Err(_) => (Arc::<str>::from(String::from_utf8_lossy(bytes).as_ref()), true),
        };
        self.add_file(SourceFile::new(path.into(), text, lossy))
    }

    fn add_file(&mut self, file: SourceFile) -> FileId {
        self.files.push(file);
        FileId(self.files.len() as u32 - 1)
    }

    /// Finds an already loaded file by path.
    pub fn find(&self, path: &Path) -> Option<FileId> {
        self.files.iter().position(|f| f.path == path).map(|i| FileId(i as u32))
    }

    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn files(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files.iter().enumerate().map(|(i, f)| (FileId(i as u32), f))
    }

    pub fn add_expansion(&mut self, expansion: MacroExpansion) -> ExpnId {
        self.expansions.push(expansion);
        ExpnId(self.expansions.len() as u32 - 1)
    }

    pub fn expansion(&self, id: ExpnId) -> &MacroExpansion {
        &self.expansions[id.0 as usize]
    }

    /// The chain of macros a span came through, innermost first.
    pub fn macro_chain(&self, span: Span) -> Vec<&MacroExpansion> {
        let mut chain = Vec::new();
        let mut next = span.expansion;
        while let Some(id) = next {
            let e = self.expansion(id);
            chain.push(e);
            next = e.parent;
        }
        chain
    }

    pub fn location(&self, span: Span) -> (Location, Location) {
        let f = self.file(span.file);
        (f.location(span.lo), f.location(span.hi))
    }

    pub fn snippet(&self, span: Span) -> &str {
        let text = &self.file(span.file).text;
        let lo = (span.lo as usize).min(text.len());
        let hi = (span.hi as usize).clamp(lo, text.len());
        text.get(lo..hi).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_and_column_are_one_based_and_count_characters() {
        let mut db = SourceDb::new();
        let f = db.add("a.hlsl", "ab\nçd e\n");
        let file = db.file(f);
        assert_eq!(file.location(0), Location { line: 1, column: 1 });
        assert_eq!(file.location(3), Location { line: 2, column: 1 });
        // 'ç' is two bytes: "d" starts at byte 5, column 2.
        assert_eq!(file.location(5), Location { line: 2, column: 2 });
        assert_eq!(file.line_text(2), "çd e");
        assert_eq!(file.line_text(9), "");
    }

    #[test]
    fn invalid_utf8_is_replaced_and_flagged() {
        let mut db = SourceDb::new();
        let f = db.add_bytes("bin.cu", &[b'a', 0xff, 0xfe, b'\n']);
        assert!(db.file(f).lossy);
        assert!(db.file(f).text.starts_with('a'));
    }

    #[test]
    fn macro_chain_walks_outwards() {
        let mut db = SourceDb::new();
        let f = db.add("k.hlsl", "X Y");
        let outer = db.add_expansion(MacroExpansion {
            name: "OUTER".into(),
            definition: None,
            call_site: Span::new(f, 0, 1),
            parent: None,
        });
        let inner = db.add_expansion(MacroExpansion {
            name: "INNER".into(),
            definition: None,
            call_site: Span::new(f, 0, 1),
            parent: Some(outer),
        });
        let span = Span { expansion: Some(inner), ..Span::new(f, 0, 1) };
        let names: Vec<_> = db.macro_chain(span).iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["INNER", "OUTER"]);
    }
}
