//! The byte-preserving writer.

use lockstep_source::Span;

/// Returns `text` without the whole lines the spans start on (line break
/// included); every other byte is kept as it was.
pub fn delete_lines(text: &str, spans: &[Span]) -> String {
    let mut cuts: Vec<(usize, usize)> = spans
        .iter()
        .map(|s| {
            // Byte searches: the cut points sit after a line break or at the ends.
            let bytes = text.as_bytes();
            let lo = (s.lo as usize).min(text.len());
            let start = bytes[..lo].iter().rposition(|&b| b == b'\n').map(|i| i + 1).unwrap_or(0);
            let hi = (s.hi as usize).clamp(lo, text.len());
            let end = bytes[hi..].iter().position(|&b| b == b'\n').map(|i| hi + i + 1).unwrap_or(text.len());
            (start, end)
        })
        .collect();
    cuts.sort();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for (start, end) in cuts {
        if start >= at {
            out.push_str(&text[at..start]);
        }
        at = at.max(end);
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_source::FileId;

    #[test]
    fn deletes_whole_lines_once_and_keeps_the_rest() {
        let text = "a\n  call b\nc\r\n  call d";
        let b = text.find("call b").unwrap() as u32;
        let d = text.find("call d").unwrap() as u32;
        let spans = [Span::new(FileId(0), b, b + 6), Span::new(FileId(0), d, d + 6), Span::new(FileId(0), b, b + 1)];
        assert_eq!(delete_lines(text, &spans), "a\nc\r\n");
        assert_eq!(delete_lines(text, &[]), text);
    }
}
