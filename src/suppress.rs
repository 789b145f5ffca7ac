//! Inline suppressions in comments (`//` or `/* */`, in every language lockstep reads):
//!
//! - `lockstep: allow(RULE, …)` at the end of a line suppresses findings on that line; alone on
//!   its line, it suppresses findings on the next line;
//! - `lockstep: allow-file(RULE, …)` suppresses findings anywhere in the file;
//! - `lockstep: allow-begin(RULE, …)` … `lockstep: allow-end(RULE, …)` suppresses findings on the
//!   lines between them.
//!
//! RULE is a rule id or a family (`races`, `divergence`, `dead-barriers`). A suppression that
//! suppresses nothing gets an `unused-suppression` warning.

use crate::select::{expand, Selection};
use lockstep_diag::{Diagnostic, Severity};
use lockstep_source::{FileId, SourceDb, Span};
use std::collections::BTreeMap;

pub const UNUSED_SUPPRESSION: &str = "unused-suppression";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// Lines `first..=last`.
    Lines(u32, u32),
    File,
}

/// One rule name in one suppression comment.
#[derive(Debug)]
struct Entry {
    name: String,
    ids: Vec<&'static str>,
    scope: Scope,
    /// The comment's directive, for the unused warning.
    span: Span,
    used: bool,
}

/// Every suppression in one file.
#[derive(Debug, Default)]
pub struct Suppressions {
    entries: Vec<Entry>,
    /// Malformed directives (unknown rules, an `allow-begin` without its end).
    problems: Vec<Diagnostic>,
}

const MARKER: &str = "lockstep:";

impl Suppressions {
    pub fn parse(db: &SourceDb, file: FileId) -> Suppressions {
        let source = db.file(file);
        let text: &str = &source.text;
        let mut out = Suppressions::default();
        // Open `allow-begin` blocks by name: (line, span).
        let mut open: BTreeMap<String, Vec<(u32, Span)>> = BTreeMap::new();
        let mut search_from = 0;
        while let Some(found) = text[search_from..].find(MARKER) {
            let at = search_from + found;
            search_from = at + MARKER.len();
            let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
            let before = &text[line_start..at];
            let comment_start = match (before.rfind("//"), before.rfind("/*")) {
                (Some(a), Some(b)) => a.max(b),
                (Some(a), None) | (None, Some(a)) => a,
                (None, None) => continue,
            };
            // Only the comment opener and spaces may come between it and the marker.
            let between = before[comment_start + 2..].trim_start_matches(['/', '*', '!']);
            if !between.trim().is_empty() {
                continue;
            }
            let rest = &text[at + MARKER.len()..];
            let rest = &rest[..rest.find('\n').unwrap_or(rest.len())];
            let trimmed = rest.trim_start();
            let Some(open_paren) = trimmed.find('(') else { continue };
            let Some(close_paren) = trimmed.find(')') else { continue };
            if close_paren < open_paren {
                continue;
            }
            let kind = trimmed[..open_paren].trim();
            let names: Vec<String> = trimmed[open_paren + 1..close_paren].split(',').map(|n| n.trim().to_string()).filter(|n| !n.is_empty()).collect();
            let directive_end = at + MARKER.len() + (rest.len() - trimmed.len()) + close_paren + 1;
            let span = Span::new(file, at as u32, directive_end as u32);
            let line = source.location(at as u32).line;
            let code_before = !text[line_start..line_start + comment_start].trim().is_empty();
            let scope = match kind {
                "allow" if code_before => Scope::Lines(line, line),
                "allow" => Scope::Lines(line + 1, line + 1),
                "allow-file" => Scope::File,
                "allow-begin" => {
                    for name in names {
                        open.entry(name).or_default().push((line, span));
                    }
                    continue;
                }
                "allow-end" => {
                    for name in names {
                        match open.get_mut(&name).and_then(Vec::pop) {
                            Some((begin, begin_span)) => out.add(&name, Scope::Lines(begin, line), begin_span),
                            None => out.problem(span, format!("`allow-end({name})` has no matching `allow-begin`")),
                        }
                    }
                    continue;
                }
                _ => continue,
            };
            for name in names {
                out.add(&name, scope, span);
            }
        }
        for (name, begins) in open {
            for (_, span) in begins {
                out.problem(span, format!("`allow-begin({name})` has no matching `allow-end`"));
            }
        }
        out
    }

    fn add(&mut self, name: &str, scope: Scope, span: Span) {
        match expand(name) {
            Ok(ids) => self.entries.push(Entry { name: name.to_string(), ids, scope, span, used: false }),
            Err(e) => self.problem(span, e),
        }
    }

    fn problem(&mut self, span: Span, message: String) {
        self.problems.push(Diagnostic::new(UNUSED_SUPPRESSION, Severity::Warning, span, message).with_primary_label("this suppression has no effect"));
    }

    /// Whether a finding of `rule` on `line` is suppressed; marks the suppressions that match.
    fn suppresses(&mut self, rule: &str, line: u32) -> bool {
        let mut hit = false;
        for e in &mut self.entries {
            let in_scope = match e.scope {
                Scope::File => true,
                Scope::Lines(first, last) => (first..=last).contains(&line),
            };
            if in_scope && e.ids.contains(&rule) {
                e.used = true;
                hit = true;
            }
        }
        hit
    }
}

/// Removes the suppressed findings from `diagnostics`, adds `unused-suppression` warnings for
/// the suppressions in `root` (the checked file) that matched nothing a `selection` enables,
/// and returns how many findings were suppressed. A finding is suppressed by the comments of the
/// file its primary span is in, an included header too.
pub fn apply(db: &SourceDb, root: FileId, diagnostics: &mut Vec<Diagnostic>, selection: &Selection) -> usize {
    let mut by_file: BTreeMap<FileId, Suppressions> = BTreeMap::new();
    by_file.insert(root, Suppressions::parse(db, root));
    let before = diagnostics.len();
    diagnostics.retain(|d| {
        let file = d.span.file;
        let sup = by_file.entry(file).or_insert_with(|| Suppressions::parse(db, file));
        let line = db.location(d.span).0.line;
        !sup.suppresses(&d.rule, line)
    });
    let suppressed = before - diagnostics.len();
    let root_suppressions = by_file.remove(&root).unwrap_or_default();
    for e in root_suppressions.entries {
        if !e.used && e.ids.iter().any(|id| selection.enabled(id)) {
            diagnostics.push(
                Diagnostic::new(UNUSED_SUPPRESSION, Severity::Warning, e.span, format!("suppression of `{}` suppresses nothing", e.name))
                    .with_primary_label("no finding here to suppress"),
            );
        }
    }
    diagnostics.extend(root_suppressions.problems);
    diagnostics.retain(|d| d.rule != UNUSED_SUPPRESSION || selection.enabled(UNUSED_SUPPRESSION));
    diagnostics.sort_by_key(|d| d.sort_key());
    suppressed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, findings: &[(&str, u32)]) -> (Vec<String>, usize) {
        let mut db = SourceDb::new();
        let f = db.add("k.cu", text);
        let mut diags: Vec<Diagnostic> = findings
            .iter()
            .map(|(rule, line)| {
                let lo = db.file(f).line_start(*line);
                Diagnostic::new(*rule, Severity::Error, Span::new(f, lo, lo + 1), "m")
            })
            .collect();
        let n = apply(&db, f, &mut diags, &Selection::default());
        (diags.iter().map(|d| format!("{}:{}", d.rule, db.location(d.span).0.line)).collect(), n)
    }

    #[test]
    fn trailing_and_preceding_line_forms() {
        let text = "a; // lockstep: allow(dead-barrier)\n// lockstep: allow(races, divergence)\nb;\nc;\n";
        let (left, n) = run(text, &[("dead-barrier", 1), ("device-memory-race", 3), ("barrier-in-divergent-cf", 3), ("dead-barrier", 4)]);
        assert_eq!(n, 3);
        assert_eq!(left, vec!["dead-barrier:4"]);
    }

    #[test]
    fn file_and_block_forms_in_block_comments() {
        let text = "/* lockstep: allow-file(possible-race) */\n/* lockstep: allow-begin(dead-barrier) */\nx;\ny;\n/* lockstep: allow-end(dead-barrier) */\nz;\n";
        let (left, n) = run(text, &[("possible-race", 6), ("dead-barrier", 3), ("dead-barrier", 4), ("dead-barrier", 6)]);
        assert_eq!(n, 3);
        assert_eq!(left, vec!["dead-barrier:6"]);
    }

    #[test]
    fn unused_unknown_and_unbalanced_suppressions_are_reported() {
        let text = "a; // lockstep: allow(dead-barrier)\n// lockstep: allow(no-such-rule)\n// lockstep: allow-begin(races)\n";
        let (left, n) = run(text, &[]);
        assert_eq!(n, 0);
        assert_eq!(left, vec!["unused-suppression:1", "unused-suppression:2", "unused-suppression:3"]);
    }

    #[test]
    fn the_marker_outside_a_comment_is_not_a_suppression() {
        let (left, _) = run("s = \"lockstep: allow(dead-barrier)\";\n", &[("dead-barrier", 1)]);
        assert_eq!(left, vec!["dead-barrier:1"]);
    }
}
