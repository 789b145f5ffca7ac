//! Whitespace the parser does not need, so that it can be cut from the text
//! before parsing.
//!
//! tree-sitter skips whitespace byte by byte each time it lexes a token, and
//! it lexes many tokens more than once (once per parse stack version and lex
//! mode), so blanks cost far more than their share of the bytes. Preprocessed
//! text has many: comments became spaces, and code is indented.

use std::ops::Range;

/// Byte ranges of preprocessed text whose removal leaves the same tokens on
/// the same lines, in order and disjoint: blanks at the end of a line, and
/// all but the first blank of every other run (so a line that started at
/// column 0 still does, and two tokens stay apart). Newlines, and string and
/// character literals, are kept whole; a raw string literal (C++ `R"(…)"`)
/// may lose blanks inside, since quotes are matched one line at a time, but
/// it stays one literal and no analysis reads string contents.
pub fn redundant_whitespace(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let blank = |b: u8| matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c);
    let mut cuts = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'"' | b'\'') => {
                // To the closing quote or the end of the line, past escapes.
                i += 1;
                while i < bytes.len() && bytes[i] != quote && bytes[i] != b'\n' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b if blank(b) => {
                let start = i;
                while i < bytes.len() && blank(bytes[i]) {
                    i += 1;
                }
                let at_line_end = i == bytes.len() || bytes[i] == b'\n';
                let keep = if at_line_end { 0 } else { 1 };
                if i - start > keep {
                    cuts.push(start + keep..i);
                }
            }
            _ => i += 1,
        }
    }
    cuts
}

/// The union of two lists of sorted, disjoint ranges, as one such list
/// (overlapping and touching ranges merged).
pub fn union_of_ranges(a: &[Range<usize>], b: &[Range<usize>]) -> Vec<Range<usize>> {
    let mut all: Vec<Range<usize>> = a.iter().chain(b).filter(|r| !r.is_empty()).cloned().collect();
    all.sort_unstable_by_key(|r| r.start);
    let mut out: Vec<Range<usize>> = Vec::with_capacity(all.len());
    for r in all {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str) -> String {
        let mut out = String::new();
        let mut from = 0;
        for r in redundant_whitespace(text) {
            out.push_str(&text[from..r.start]);
            from = r.end;
        }
        out + &text[from..]
    }

    #[test]
    fn blanks_shrink_to_one_and_vanish_at_line_ends() {
        let text = "void k()   \n{\n    int a  =  b;      \t\n\t\tif (a)   return;\n}\n   \n";
        assert_eq!(cut(text), "void k()\n{\n int a = b;\n\tif (a) return;\n}\n\n");
    }

    #[test]
    fn literals_keep_their_blanks() {
        let text = "printf(\"a    b\\\"   c\",   '  ');  x = 'a';    s = \"unterminated   \n  y;";
        assert_eq!(cut(text), "printf(\"a    b\\\"   c\", '  '); x = 'a'; s = \"unterminated   \n y;");
    }

    #[test]
    fn column_zero_stays_column_zero_and_tokens_stay_apart() {
        let text = "a\n  b\nc    d\n";
        let out = cut(text);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines, ["a", " b", "c d"]);
    }

    #[test]
    fn unions_merge_overlapping_and_touching_ranges() {
        assert_eq!(union_of_ranges(&[0..2, 5..9, 20..21], &[1..3, 9..10, 12..12, 15..16]), vec![0..3, 5..10, 15..16, 20..21]);
        assert_eq!(union_of_ranges(&[], &[4..6, 8..9]), [4..6, 8..9]);
    }
}
