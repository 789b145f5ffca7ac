//! The `dead-barrier` diagnostic and its fix, for source front ends.

use crate::{BarrierReport, Flags};
use lockstep_diag::{Diagnostic, Edit, Fix, Severity};
use lockstep_source::{SourceDb, Span};

pub const RULE: &str = "dead-barrier";

/// What one side of the barrier does, in words.
fn side(read: bool, write: bool) -> &'static str {
    match (read, write) {
        (false, false) => "no accesses",
        (true, false) => "only reads",
        (false, true) => "only writes",
        (true, true) => "reads and writes",
    }
}

/// What the accesses on both sides of the barrier are, in one memory space.
pub fn accesses_around(f: Flags) -> String {
    format!("{} before it, {} after it", side(f.read_above, f.write_above), side(f.read_below, f.write_below))
}

/// The warning for a barrier the engine removed, saying in words why no thread depends on it,
/// and a fix that deletes the statement.
pub fn diagnostic(db: &SourceDb, report: &BarrierReport) -> Diagnostic {
    let f = report.flags;
    Diagnostic::new(RULE, Severity::Warning, report.span, "this barrier orders no memory hazard")
        .with_primary_label("nothing before it is read or written by another thread after it")
        .with_note(format!("shared memory: {}", accesses_around(f.shared)))
        .with_note(format!("device memory: {}", accesses_around(f.device)))
        .with_note("a barrier is needed only for a write before it and a read or write after it, or a read before it and a write after it, in a memory space it orders")
        .with_fix(Fix { message: "remove the barrier".into(), edits: vec![removal_edit(db, report.span)] })
        .with_macro_notes(db)
}

/// The last significant character before `at`, skipping whitespace and
/// `//` and trailing `/* */` comments.
fn previous_code_char(text: &str, at: usize) -> Option<char> {
    let mut before = &text[..at];
    loop {
        let line_start = before.rfind('\n').map(|i| i + 1).unwrap_or(0);
        let mut line = &before[line_start..];
        if let Some(c) = line.find("//") {
            line = &line[..c];
        }
        let mut line = line.trim_end();
        while let Some(stripped) = line.strip_suffix("*/") {
            line = stripped.rfind("/*").map(|o| stripped[..o].trim_end()).unwrap_or("");
        }
        if let Some(c) = line.chars().last() {
            return Some(c);
        }
        if line_start == 0 {
            return None;
        }
        before = &before[..line_start - 1];
    }
}

/// Deletes the barrier statement at `span` (the call and its `;`): the whole
/// line when nothing else is on it, else just the statement. When the
/// statement is the body of an `if`/`for`/`while`/`else` without braces it
/// becomes an empty statement `;` instead, so the next statement does not
/// slide into that body.
pub fn removal_edit(db: &SourceDb, span: Span) -> Edit {
    let text: &str = &db.file(span.file).text;
    let lo = (span.lo as usize).min(text.len());
    let hi = (span.hi as usize).clamp(lo, text.len());
    let after_call = &text[hi..];
    let gap = after_call.len() - after_call.trim_start_matches([' ', '\t']).len();
    let end = if after_call[gap..].starts_with(';') { hi + gap + 1 } else { hi };
    let at = |lo: usize, hi: usize, replacement: &str| Edit {
        span: Span { lo: lo as u32, hi: hi as u32, ..span },
        replacement: replacement.into(),
    };
    if !text.is_char_boundary(lo) || !text.is_char_boundary(hi) {
        return at(lo, hi, "");
    }
    if !matches!(previous_code_char(text, lo), None | Some(';' | '{' | '}' | ':')) {
        return at(lo, end, ";");
    }
    let line_start = text[..lo].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line_end = text[end..].find('\n').map(|i| end + i).unwrap_or(text.len());
    if text[line_start..lo].trim().is_empty() && text[end..line_end].trim().is_empty() {
        let through_break = (line_end + 1).min(text.len());
        return at(line_start, through_break, "");
    }
    let rest = &text[end..line_end];
    let trailing = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    at(lo, end + trailing, "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BarrierFlags, Verdict};
    use lockstep_ir::{Spaces, Value};

    /// Applies the removal of the barrier named `call` in `src`.
    fn fixed(src: &str, call: &str) -> String {
        let mut db = SourceDb::new();
        let file = db.add("k.cu", src);
        let lo = src.find(call).unwrap() as u32;
        let e = removal_edit(&db, Span::new(file, lo, lo + call.len() as u32));
        let mut out = src.to_string();
        out.replace_range(e.span.lo as usize..e.span.hi as usize, &e.replacement);
        out
    }

    #[test]
    fn the_statement_goes_and_everything_around_it_stays() {
        assert_eq!(fixed("  x = 1;\n  __syncthreads();\n  y = 2;\n", "__syncthreads()"), "  x = 1;\n  y = 2;\n");
        assert_eq!(fixed("{\r\n\t__syncthreads() ;\r\n}", "__syncthreads()"), "{\r\n}");
        assert_eq!(fixed("x = 1; __syncthreads(); y = 2;", "__syncthreads()"), "x = 1; y = 2;");
        assert_eq!(fixed("  x = 1;\n  __syncthreads(); // wait\n", "__syncthreads()"), "  x = 1;\n  // wait\n");
        assert_eq!(fixed("  x = 1; // store\n  /* all */ __syncthreads();\n", "__syncthreads()"), "  x = 1; // store\n  /* all */ \n");
        assert_eq!(fixed("__syncthreads();", "__syncthreads()"), "");
        assert_eq!(fixed("case 1:\n  GroupMemoryBarrierWithGroupSync();\n", "GroupMemoryBarrierWithGroupSync()"), "case 1:\n");
    }

    #[test]
    fn an_unbraced_body_keeps_an_empty_statement() {
        assert_eq!(fixed("  if (t == 0)\n    __syncthreads();\n  y = 2;\n", "__syncthreads()"), "  if (t == 0)\n    ;\n  y = 2;\n");
        assert_eq!(fixed("else __syncthreads(); y = 2;", "__syncthreads()"), "else ; y = 2;");
        // A comment between the condition and the barrier does not hide the `)`.
        assert_eq!(fixed("for (;;) // spin\n  __syncthreads();", "__syncthreads()"), "for (;;) // spin\n  ;");
    }

    #[test]
    fn the_diagnostic_carries_the_flags_and_the_fix() {
        let mut db = SourceDb::new();
        let src = "s[t] = 1;\n__syncthreads();\n";
        let file = db.add("k.cu", src);
        let mut flags = BarrierFlags::default();
        flags.shared.read_above = true;
        flags.device.write_below = true;
        let report =
            BarrierReport { value: Value(3), span: Span::new(file, 10, 25), verdict: Verdict::Removed, orders: Spaces::ALL, flags, hazard: None };
        let d = diagnostic(&db, &report);
        assert_eq!(d.rule, "dead-barrier");
        assert_eq!(d.severity, Severity::Warning);
        assert_eq!(d.primary_label, "nothing before it is read or written by another thread after it");
        assert_eq!(d.notes[0], "shared memory: only reads before it, no accesses after it");
        assert_eq!(d.notes[1], "device memory: no accesses before it, only writes after it");
        let fix = d.fix.unwrap();
        assert_eq!(fix.edits, vec![Edit { span: Span::new(file, 10, 27), replacement: String::new() }]);
    }
}
