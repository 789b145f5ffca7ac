//! Raw lexing of preprocessing tokens. Tokens are byte ranges into the file
//! text; whitespace, comments, newlines and line splices are tokens too so
//! that plain text can be copied to the output unchanged.

use std::borrow::Cow;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RawKind {
    Ident,
    Number,
    Str,
    Char,
    Punct,
    /// A byte that starts no other token (`@`, a stray `\`, NUL, ...).
    Other,
    Space,
    Comment,
    Newline,
    /// Backslash-newline: joins two physical lines into one logical line.
    Splice,
    Eof,
}

impl RawKind {
    /// Whitespace-like tokens that never matter to the grammar of a line.
    pub(crate) fn is_trivia(self) -> bool {
        matches!(self, RawKind::Space | RawKind::Comment | RawKind::Splice)
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct RawToken {
    pub kind: RawKind,
    pub lo: u32,
    pub hi: u32,
    /// The token contains a line splice, so its spelling differs from its source text.
    pub spliced: bool,
    /// A block comment or literal that ran into the end of the file or line.
    pub unterminated: bool,
}

/// Punctuators, longest first so the first match is the longest one.
const PUNCTUATORS: &[&str] = &[
    "->*", "<<=", ">>=", "...", "<=>", "##", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "*=",
    "/=", "%=", "+=", "-=", "&=", "^=", "|=", "::", ".*",
];

/// A stretch of plain text found by [`Lexer::scan_plain`].
pub(crate) struct PlainRun {
    pub end: usize,
    pub newlines: u32,
    /// Only whitespace since the last newline (or since the run began at a line start).
    pub at_line_start: bool,
    /// Something other than whitespace was passed.
    pub significant: bool,
}

pub(crate) struct Lexer {
    text: Arc<str>,
    pos: usize,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b >= 0x80
}

fn is_ident_continue(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit()
}

impl Lexer {
    pub(crate) fn new(text: Arc<str>) -> Lexer {
        Lexer { text, pos: 0 }
    }

    pub(crate) fn text(&self) -> &Arc<str> {
        &self.text
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }

    /// Rewinds to a position previously returned by [`Lexer::pos`].
    pub(crate) fn reset(&mut self, pos: usize) {
        self.pos = pos;
    }

    fn byte(&self, at: usize) -> u8 {
        self.text.as_bytes().get(at).copied().unwrap_or(0)
    }

    /// Length of a backslash-newline at `at`, or 0.
    fn splice_len(&self, at: usize) -> usize {
        let b = self.text.as_bytes();
        match (b.get(at), b.get(at + 1), b.get(at + 2)) {
            (Some(b'\\'), Some(b'\n'), _) => 2,
            (Some(b'\\'), Some(b'\r'), Some(b'\n')) => 3,
            _ => 0,
        }
    }

    /// Skips splices at the current position; true if there were any.
    fn skip_splices(&mut self) -> bool {
        let mut any = false;
        loop {
            let n = self.splice_len(self.pos);
            if n == 0 {
                return any;
            }
            self.pos += n;
            any = true;
        }
    }

    /// Scans forward over text that needs no token-level handling:
    /// whitespace, newlines, punctuation, numbers, and identifiers for which
    /// `stop_at` is false. Stops before comments, literals, splices, `#`, and
    /// anything unusual, leaving those to [`Lexer::next`]. Does not move.
    pub(crate) fn scan_plain(&self, at_line_start: bool, mut stop_at: impl FnMut(&str) -> bool) -> PlainRun {
        let bytes = self.text.as_bytes();
        let mut run = PlainRun { end: self.pos, newlines: 0, at_line_start, significant: false };
        let mut i = self.pos;
        while let Some(&b) = bytes.get(i) {
            let next = bytes.get(i + 1).copied().unwrap_or(0);
            let token_end = match b {
                b'\n' => {
                    run.newlines += 1;
                    run.at_line_start = true;
                    run.end = i + 1;
                    i += 1;
                    continue;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => {
                    i += 1;
                    run.end = i;
                    continue;
                }
                b'#' | b'"' | b'\'' | b'\\' => break,
                b'/' if next == b'/' || next == b'*' => break,
                b'0'..=b'9' => self.plain_number_end(i),
                b'.' if next.is_ascii_digit() => self.plain_number_end(i),
                _ if is_ident_start(b) => {
                    let mut j = i + 1;
                    while bytes.get(j).is_some_and(|&c| is_ident_continue(c)) {
                        j += 1;
                    }
                    // A literal prefix, a splice, or a macro name needs the slow path.
                    if matches!(bytes.get(j), Some(b'"' | b'\'' | b'\\')) || stop_at(&self.text[i..j]) {
                        break;
                    }
                    Some(j)
                }
                _ if b.is_ascii() => Some(i + 1),
                _ => None,
            };
            let Some(end) = token_end else { break };
            i = end;
            run.end = end;
            run.at_line_start = false;
            run.significant = true;
        }
        run
    }

    /// End of a pp-number at `at`, or None when it has a digit separator or splice.
    fn plain_number_end(&self, at: usize) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let mut j = at + 1;
        while let Some(&c) = bytes.get(j) {
            let exponent_sign = matches!(c, b'+' | b'-') && matches!(bytes[j - 1], b'e' | b'E' | b'p' | b'P');
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || exponent_sign {
                j += 1;
            } else if c == b'\'' || c == b'\\' {
                return None;
            } else {
                break;
            }
        }
        Some(j)
    }

    pub(crate) fn next(&mut self) -> RawToken {
        let lo = self.pos;
        let mut tok =
            RawToken { kind: RawKind::Eof, lo: lo as u32, hi: lo as u32, spliced: false, unterminated: false };
        let bytes = self.text.as_bytes();
        let Some(&b) = bytes.get(lo) else { return tok };
        tok.kind = match b {
            b'\n' => {
                self.pos += 1;
                RawKind::Newline
            }
            b'\r' if self.byte(lo + 1) == b'\n' => {
                self.pos += 2;
                RawKind::Newline
            }
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c => {
                self.pos += 1;
                while matches!(self.byte(self.pos), b' ' | b'\t' | 0x0b | 0x0c)
                    || (self.byte(self.pos) == b'\r' && self.byte(self.pos + 1) != b'\n')
                {
                    self.pos += 1;
                }
                RawKind::Space
            }
            b'\\' if self.splice_len(lo) > 0 => {
                self.pos += self.splice_len(lo);
                RawKind::Splice
            }
            b'/' if self.byte(lo + 1) == b'/' => {
                self.line_comment();
                RawKind::Comment
            }
            b'/' if self.byte(lo + 1) == b'*' => {
                tok.unterminated = !self.block_comment();
                RawKind::Comment
            }
            b'"' | b'\'' => {
                tok.unterminated = !self.quoted(b, &mut tok.spliced);
                if b == b'"' {
                    RawKind::Str
                } else {
                    RawKind::Char
                }
            }
            b'.' if self.byte(lo + 1).is_ascii_digit() => {
                self.number(&mut tok.spliced);
                RawKind::Number
            }
            b'0'..=b'9' => {
                self.number(&mut tok.spliced);
                RawKind::Number
            }
            _ if is_ident_start(b) => self.ident_or_prefixed_literal(&mut tok),
            _ if b.is_ascii_punctuation() => {
                let rest = &bytes[lo..bytes.len().min(lo + 3)];
                let len = PUNCTUATORS.iter().find(|p| rest.starts_with(p.as_bytes())).map_or(1, |p| p.len());
                self.pos += len;
                RawKind::Punct
            }
            _ => {
                // Any other ASCII byte; non-ASCII bytes are identifier characters.
                self.pos += 1;
                RawKind::Other
            }
        };
        tok.hi = self.pos as u32;
        tok
    }

    fn line_comment(&mut self) {
        let bytes = self.text.as_bytes();
        self.pos += 2;
        while let Some(&b) = bytes.get(self.pos) {
            if b == b'\n' || (b == b'\r' && self.byte(self.pos + 1) == b'\n') {
                break;
            }
            // A splice continues the comment onto the next line.
            self.pos += self.splice_len(self.pos).max(1);
        }
    }

    /// Returns false when the comment runs to the end of the file.
    fn block_comment(&mut self) -> bool {
        match self.text[self.pos + 2..].find("*/") {
            Some(i) => {
                self.pos += 2 + i + 2;
                true
            }
            None => {
                self.pos = self.text.len();
                false
            }
        }
    }

    /// A string or character literal; it ends at its closing quote or before
    /// the end of the line. Returns false when unterminated.
    fn quoted(&mut self, quote: u8, spliced: &mut bool) -> bool {
        let bytes = self.text.as_bytes();
        self.pos += 1;
        while let Some(&b) = bytes.get(self.pos) {
            match b {
                b'\\' => {
                    let n = self.splice_len(self.pos);
                    if n > 0 {
                        *spliced = true;
                        self.pos += n;
                    } else if self.pos + 1 < bytes.len() && bytes[self.pos + 1] != b'\n' {
                        // Step over the escaped character, whole if it is multi-byte.
                        self.pos += 1;
                        self.pos += self.text[self.pos..].chars().next().map_or(1, char::len_utf8);
                    } else {
                        self.pos += 1;
                    }
                }
                b'\n' => return false,
                b'\r' if self.byte(self.pos + 1) == b'\n' => return false,
                _ if b == quote => {
                    self.pos += 1;
                    return true;
                }
                _ => self.pos += 1,
            }
        }
        false
    }

    /// A pp-number: digits, letters, `_`, `.`, exponent signs and digit separators.
    fn number(&mut self, spliced: &mut bool) {
        self.pos += 1;
        loop {
            *spliced |= self.skip_splices();
            let b = self.byte(self.pos);
            let prev = self.byte(self.pos - 1);
            let exponent_sign = matches!(b, b'+' | b'-') && matches!(prev, b'e' | b'E' | b'p' | b'P');
            if (b.is_ascii_alphanumeric() || b == b'_' || b == b'.') || exponent_sign {
                self.pos += 1;
            } else if b == b'\'' && self.byte(self.pos + 1).is_ascii_alphanumeric() {
                self.pos += 2;
            } else {
                return;
            }
        }
    }

    fn ident_or_prefixed_literal(&mut self, tok: &mut RawToken) -> RawKind {
        let start = self.pos;
        loop {
            // Non-ASCII characters are consumed whole so slices stay on char boundaries.
            let b = self.byte(self.pos);
            if b >= 0x80 {
                self.pos += self.text[self.pos..].chars().next().map_or(1, char::len_utf8);
            } else if is_ident_continue(b) {
                self.pos += 1;
            } else if self.splice_len(self.pos) > 0
                && is_ident_continue(self.byte(self.pos + self.splice_len(self.pos)))
            {
                tok.spliced |= self.skip_splices();
            } else {
                break;
            }
        }
        let q = self.byte(self.pos);
        if (q == b'"' || q == b'\'') && matches!(&self.text[start..self.pos], "L" | "u" | "U" | "u8") {
            tok.unterminated = !self.quoted(q, &mut tok.spliced);
            return if q == b'"' { RawKind::Str } else { RawKind::Char };
        }
        RawKind::Ident
    }
}

/// The spelling of a token: its source text without line splices.
pub(crate) fn spelling<'t>(text: &'t str, tok: &RawToken) -> Cow<'t, str> {
    let src = &text[tok.lo as usize..tok.hi as usize];
    if tok.spliced {
        Cow::Owned(src.replace("\\\r\n", "").replace("\\\n", ""))
    } else {
        Cow::Borrowed(src)
    }
}

pub(crate) fn count_newlines(s: &str) -> u32 {
    s.bytes().filter(|&b| b == b'\n').count() as u32
}

/// Lexes a standalone string (a `-D` value or a `##` paste result), without trivia.
pub(crate) fn lex_str(text: &str) -> Vec<(RawKind, String, bool)> {
    let mut lexer = Lexer::new(Arc::from(text));
    let mut out = Vec::new();
    let mut space = false;
    loop {
        let t = lexer.next();
        match t.kind {
            RawKind::Eof => return out,
            k if k.is_trivia() || k == RawKind::Newline => space = true,
            k => {
                out.push((k, spelling(text, &t).into_owned(), space));
                space = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<(RawKind, String)> {
        let mut lexer = Lexer::new(Arc::from(text));
        let mut out = Vec::new();
        loop {
            let t = lexer.next();
            if t.kind == RawKind::Eof {
                return out;
            }
            out.push((t.kind, text[t.lo as usize..t.hi as usize].to_string()));
        }
    }

    #[test]
    fn splits_tokens_and_keeps_trivia() {
        use RawKind::*;
        let got = kinds("a+=1.5e+3 /*c*/\"s\\\"\"'x'//z\n>>=");
        let want = [
            (Ident, "a"),
            (Punct, "+="),
            (Number, "1.5e+3"),
            (Space, " "),
            (Comment, "/*c*/"),
            (Str, "\"s\\\"\""),
            (Char, "'x'"),
            (Comment, "//z"),
            (Newline, "\n"),
            (Punct, ">>="),
        ];
        assert_eq!(got, want.map(|(k, s)| (k, s.to_string())));
    }

    #[test]
    fn splices_inside_identifiers_and_line_comments() {
        let text = "ab\\\ncd // x \\\n y\nz";
        let mut lexer = Lexer::new(Arc::from(text));
        let t = lexer.next();
        assert_eq!((t.kind, t.spliced, spelling(text, &t).as_ref()), (RawKind::Ident, true, "abcd"));
        lexer.next();
        let c = lexer.next();
        assert_eq!((c.kind, &text[c.lo as usize..c.hi as usize]), (RawKind::Comment, "// x \\\n y"));
    }

    #[test]
    fn unterminated_literals_and_comments_are_flagged() {
        let mut lexer = Lexer::new(Arc::from("'abc\n/* x"));
        let t = lexer.next();
        assert!(t.unterminated && t.kind == RawKind::Char && t.hi == 4);
        lexer.next();
        let c = lexer.next();
        assert!(c.unterminated && c.kind == RawKind::Comment && c.hi == 9);
    }

    #[test]
    fn prefixed_literals_and_binary_bytes() {
        let got = kinds("L\"w\" u8'c' \0\u{e9}x");
        assert_eq!(got[0], (RawKind::Str, "L\"w\"".to_string()));
        assert_eq!(got[2], (RawKind::Char, "u8'c'".to_string()));
        assert_eq!(got[4], (RawKind::Other, "\0".to_string()));
        assert_eq!(got[5], (RawKind::Ident, "\u{e9}x".to_string()));
    }
}
