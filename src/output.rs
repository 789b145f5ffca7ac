//! Machine formats for `lockstep check`: SARIF 2.1.0 and GitHub Actions workflow commands.

use lockstep_checks::Rule;
use lockstep_diag::{Diagnostic, Severity};
use lockstep_source::{SourceDb, Span};
use serde_json::{json, Value};

/// Every id a SARIF log may name, in `ruleIndex` order.
fn all_rules() -> impl Iterator<Item = &'static Rule> {
    lockstep_checks::RULES.iter().chain(lockstep_checks::TOOL_DIAGNOSTICS)
}

fn sarif_level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

/// A relative URI reference for a path: forward slashes, with the characters a URI may not hold escaped.
fn uri(path: &std::path::Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~:@!$&'()*+,;=".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn region(db: &SourceDb, span: Span) -> Value {
    let (start, end) = db.location(span);
    json!({ "startLine": start.line, "startColumn": start.column, "endLine": end.line, "endColumn": end.column })
}

fn physical(db: &SourceDb, span: Span) -> Value {
    json!({ "artifactLocation": { "uri": uri(&db.file(span.file).path) }, "region": region(db, span) })
}

/// One result. The labels (the other access, the divergent predicate) become related locations.
pub fn sarif_result(db: &SourceDb, d: &Diagnostic) -> Value {
    let index = all_rules().position(|r| r.id == d.rule);
    let mut text = d.message.clone();
    if !d.primary_label.is_empty() {
        text.push_str(&format!(": {}", d.primary_label));
    }
    let mut result = json!({
        "ruleId": d.rule,
        "level": sarif_level(d.severity),
        "message": { "text": text },
        "locations": [{ "physicalLocation": physical(db, d.span) }],
        "occurrenceCount": d.occurrences.max(1),
    });
    if let Some(i) = index {
        result["ruleIndex"] = json!(i);
    }
    if !d.labels.is_empty() {
        let related: Vec<Value> = d
            .labels
            .iter()
            .enumerate()
            .map(|(i, l)| json!({ "id": i, "physicalLocation": physical(db, l.span), "message": { "text": l.message } }))
            .collect();
        result["relatedLocations"] = json!(related);
    }
    if !d.notes.is_empty() {
        result["properties"] = json!({ "notes": d.notes });
    }
    if let Some(fix) = &d.fix {
        let mut by_file: Vec<(lockstep_source::FileId, Vec<Value>)> = Vec::new();
        for e in &fix.edits {
            let replacement = json!({ "deletedRegion": region(db, e.span), "insertedContent": { "text": e.replacement } });
            match by_file.iter_mut().find(|(f, _)| *f == e.span.file) {
                Some((_, list)) => list.push(replacement),
                None => by_file.push((e.span.file, vec![replacement])),
            }
        }
        let changes: Vec<Value> = by_file
            .into_iter()
            .map(|(f, replacements)| json!({ "artifactLocation": { "uri": uri(&db.file(f).path) }, "replacements": replacements }))
            .collect();
        result["fixes"] = json!([{ "description": { "text": fix.message }, "artifactChanges": changes }]);
    }
    result
}

/// The whole SARIF log: one run, the registry as the driver's rules.
pub fn sarif_log(results: Vec<Value>) -> Value {
    let rules: Vec<Value> = all_rules()
        .map(|r| {
            json!({
                "id": r.id,
                "shortDescription": { "text": r.summary },
                "help": { "text": r.doc, "markdown": r.doc },
                "defaultConfiguration": { "level": sarif_level(r.severity) },
                "properties": { "fixAvailable": r.fix },
            })
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": { "name": "lockstep", "version": env!("CARGO_PKG_VERSION"), "rules": rules } },
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    })
}

/// Escapes a workflow command's message.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escapes a workflow command's property value.
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// One diagnostic as a GitHub Actions annotation (`::error file=…,line=…::message`).
pub fn github_annotation(db: &SourceDb, d: &Diagnostic) -> String {
    let command = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "notice",
    };
    let (start, end) = db.location(d.span);
    let path = db.file(d.span.file).path.to_string_lossy().replace('\\', "/");
    let mut message = d.message.clone();
    if !d.primary_label.is_empty() {
        message.push_str(&format!(": {}", d.primary_label));
    }
    for l in &d.labels {
        let (at, _) = db.location(l.span);
        message.push_str(&format!("\n{}:{}: {}", at.line, at.column, l.message));
    }
    format!(
        "::{command} file={},line={},col={},endLine={},endColumn={},title={}::{}\n",
        escape_property(&path),
        start.line,
        start.column,
        end.line,
        end.column,
        escape_property(&format!("lockstep {}", d.rule)),
        escape_data(&message)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations_escape_what_the_runner_would_split_on() {
        let mut db = SourceDb::new();
        let f = db.add("dir/k, 1.cu", "a;\nb;\n");
        let d = Diagnostic::new("dead-barrier", Severity::Warning, Span::new(f, 3, 4), "100% dead\nreally").with_primary_label("x");
        let line = github_annotation(&db, &d);
        assert_eq!(line, "::warning file=dir/k%2C 1.cu,line=2,col=1,endLine=2,endColumn=2,title=lockstep dead-barrier::100%25 dead%0Areally: x\n");
    }

    #[test]
    fn uris_escape_spaces() {
        assert_eq!(uri(std::path::Path::new("a b/k.cu")), "a%20b/k.cu");
    }
}
