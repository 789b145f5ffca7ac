//! Diagnostics as data (rule, severity, primary span, secondary labels,
//! notes, machine-applicable fixes) and the renderers that print them.

mod render;

pub use render::{render_human, render_json, to_json_value};

use lockstep_source::{SourceDb, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Note,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// A text replacement in an original source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub span: Span,
    pub replacement: String,
}

/// A fix a tool may apply without asking: all edits or none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub message: String,
    pub edits: Vec<Edit>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The rule id, e.g. `barrier-in-divergent-cf`; tool-level problems use
    /// ids such as `parse-error` or `include-not-found`.
    pub rule: String,
    pub severity: Severity,
    pub message: String,
    /// Where the problem is.
    pub span: Span,
    /// The message printed under the primary span.
    pub primary_label: String,
    /// Other places that explain it (the divergent predicate, the other access).
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
    pub fix: Option<Fix>,
    /// How many findings this one stands for: the same defect met at
    /// several elements (vector components, struct fields, unrolled copies).
    pub occurrences: u32,
}

impl Diagnostic {
    pub fn new(rule: impl Into<String>, severity: Severity, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            rule: rule.into(),
            severity,
            message: message.into(),
            span,
            primary_label: String::new(),
            labels: Vec::new(),
            notes: Vec::new(),
            fix: None,
            occurrences: 1,
        }
    }

    pub fn with_primary_label(mut self, message: impl Into<String>) -> Diagnostic {
        self.primary_label = message.into();
        self
    }

    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label { span, message: message.into() });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_fix(mut self, fix: Fix) -> Diagnostic {
        self.fix = Some(fix);
        self
    }

    /// Adds "in this expansion of macro `X`" notes for every macro the
    /// primary span came through.
    pub fn with_macro_notes(mut self, db: &SourceDb) -> Diagnostic {
        for e in db.macro_chain(self.span) {
            let def = match e.definition {
                Some(d) => {
                    let (loc, _) = db.location(d);
                    format!(" (defined at {}:{})", db.file(d.file).path.display(), loc.line)
                }
                None => " (defined on the command line)".to_string(),
            };
            self.notes.push(format!("this comes from an expansion of macro `{}`{}", e.name, def));
        }
        self
    }

    /// Sort key: file, position, rule.
    pub fn sort_key(&self) -> (u32, u32, String) {
        (self.span.file.0, self.span.lo, self.rule.clone())
    }
}
