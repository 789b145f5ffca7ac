use crate::{Diagnostic, Severity};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::{Error as FilesError, Files};
use codespan_reporting::term;
use lockstep_source::{FileId, SourceDb};
use serde_json::{json, Value};
use std::ops::Range;

/// Adapter so codespan-reporting can read our SourceDb.
struct DbFiles<'a>(&'a SourceDb);

impl<'a> Files<'a> for DbFiles<'a> {
    type FileId = FileId;
    type Name = String;
    type Source = &'a str;

    fn name(&'a self, id: FileId) -> Result<String, FilesError> {
        Ok(self.0.file(id).path.display().to_string())
    }

    fn source(&'a self, id: FileId) -> Result<&'a str, FilesError> {
        Ok(&self.0.file(id).text)
    }

    fn line_index(&'a self, id: FileId, byte_index: usize) -> Result<usize, FilesError> {
        Ok(self.0.file(id).location(byte_index as u32).line as usize - 1)
    }

    fn line_range(&'a self, id: FileId, line_index: usize) -> Result<Range<usize>, FilesError> {
        let f = self.0.file(id);
        if line_index >= f.line_count() {
            return Err(FilesError::LineTooLarge { given: line_index, max: f.line_count() - 1 });
        }
        let start = f.line_start(line_index as u32 + 1) as usize;
        let end = if line_index + 1 < f.line_count() {
            f.line_start(line_index as u32 + 2) as usize
        } else {
            f.text.len()
        };
        Ok(start..end)
    }
}

fn clamp(db: &SourceDb, span: lockstep_source::Span) -> Range<usize> {
    let len = db.file(span.file).text.len();
    let lo = (span.lo as usize).min(len);
    let hi = (span.hi as usize).clamp(lo, len);
    lo..hi
}

/// Renders diagnostics in the rustc style.
pub fn render_human(db: &SourceDb, diagnostics: &[Diagnostic], color: bool) -> String {
    let files = DbFiles(db);
    let config = term::Config::default();
    let mut out: Vec<u8> = Vec::new();
    for d in diagnostics {
        let severity = match d.severity {
            Severity::Error => cs::Severity::Error,
            Severity::Warning => cs::Severity::Warning,
            Severity::Note => cs::Severity::Note,
        };
        let mut labels = vec![cs::Label::primary(d.span.file, clamp(db, d.span)).with_message(d.primary_label.clone())];
        for l in &d.labels {
            labels.push(cs::Label::secondary(l.span.file, clamp(db, l.span)).with_message(l.message.clone()));
        }
        let mut notes = d.notes.clone();
        if let Some(fix) = &d.fix {
            notes.push(format!("fix available: {}", fix.message));
        }
        let diag = cs::Diagnostic::new(severity)
            .with_code(d.rule.clone())
            .with_message(d.message.clone())
            .with_labels(labels)
            .with_notes(notes);
        if color {
            let mut w = term::termcolor::Ansi::new(&mut out);
            let _ = term::emit_to_write_style(&mut w, &config, &files, &diag);
        } else {
            let mut w = term::termcolor::NoColor::new(&mut out);
            let _ = term::emit_to_write_style(&mut w, &config, &files, &diag);
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One diagnostic as the stable JSON object.
pub fn to_json_value(db: &SourceDb, d: &Diagnostic) -> Value {
    let (start, end) = db.location(d.span);
    let labels: Vec<Value> = d
        .labels
        .iter()
        .map(|l| {
            let (s, e) = db.location(l.span);
            json!({
                "path": db.file(l.span.file).path.display().to_string(),
                "line": s.line, "column": s.column,
                "end_line": e.line, "end_column": e.column,
                "message": l.message,
            })
        })
        .collect();
    let fix = d.fix.as_ref().map(|f| {
        json!({
            "message": f.message,
            "edits": f.edits.iter().map(|e| {
                let (s, en) = db.location(e.span);
                json!({"path": db.file(e.span.file).path.display().to_string(),
                       "line": s.line, "column": s.column, "end_line": en.line, "end_column": en.column,
                       "replacement": e.replacement})
            }).collect::<Vec<_>>(),
        })
    });
    let mut v = json!({
        "rule": d.rule,
        "severity": d.severity.as_str(),
        "count": d.occurrences,
        "path": db.file(d.span.file).path.display().to_string(),
        "line": start.line,
        "column": start.column,
        "end_line": end.line,
        "end_column": end.column,
        "message": d.message,
        "primary_label": d.primary_label,
        "labels": labels,
        "notes": d.notes,
    });
    if let Some(fix) = fix {
        v["fix"] = fix;
    }
    v
}

/// All diagnostics as `{"diagnostics":[…]}`.
pub fn render_json(db: &SourceDb, diagnostics: &[Diagnostic]) -> String {
    let all: Vec<Value> = diagnostics.iter().map(|d| to_json_value(db, d)).collect();
    serde_json::to_string_pretty(&json!({ "diagnostics": all })).expect("json values serialize")
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_source::Span;

    fn sample() -> (SourceDb, Diagnostic) {
        let mut db = SourceDb::new();
        let f = db.add("k.hlsl", "void f() {\n  if (x) {\n    Barrier();\n  }\n}\n");
        let d = Diagnostic::new("barrier-in-divergent-cf", Severity::Error, Span::new(f, 26, 35), "barrier in divergent control flow")
            .with_primary_label("not every thread reaches this")
            .with_label(Span::new(f, 17, 18), "this predicate differs between threads")
            .with_note("`x` depends on the thread id");
        (db, d)
    }

    #[test]
    fn json_has_the_stable_fields_with_one_based_positions() {
        let (db, d) = sample();
        let v: Value = serde_json::from_str(&render_json(&db, &[d])).unwrap();
        let d = &v["diagnostics"][0];
        assert_eq!(d["rule"], "barrier-in-divergent-cf");
        assert_eq!(d["severity"], "error");
        assert_eq!(d["path"], "k.hlsl");
        assert_eq!((d["line"].as_u64(), d["column"].as_u64()), (Some(3), Some(5)));
        assert_eq!((d["end_line"].as_u64(), d["end_column"].as_u64()), (Some(3), Some(14)));
        assert_eq!(d["labels"][0]["line"], 2);
        assert_eq!(d["labels"][0]["column"], 7);
        assert_eq!(d["notes"][0], "`x` depends on the thread id");
    }

    #[test]
    fn human_output_names_rule_file_line_and_labels() {
        let (db, d) = sample();
        let text = render_human(&db, &[d], false);
        assert!(text.contains("error[barrier-in-divergent-cf]"), "{text}");
        assert!(text.contains("k.hlsl:3:5"), "{text}");
        assert!(text.contains("this predicate differs between threads"), "{text}");
        assert!(text.contains("= `x` depends on the thread id"), "{text}");
    }
}
