//! Which diagnostics are reported, and at what severity: `--select`, `--ignore`, `--warn`
//! and the configuration's `[rules]` table, over rule ids and families.

use lockstep_diag::{Diagnostic, Severity};
use serde::Deserialize;
use std::collections::BTreeMap;

/// A rule's level in the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Allow,
    Warn,
    Error,
}

/// Families: names for groups of rules.
pub const FAMILIES: &[(&str, &[&str])] = &[
    (
        "races",
        &[
            "groupshared-write-then-no-barrier-read",
            "groupshared-read-then-no-barrier-write",
            "groupshared-write-write-race",
            "groupshared-first-read-without-barrier",
            "rwbuffer-store-without-globallycoherent",
            "global-store-without-threadfence",
            "device-memory-race",
            "fence-without-sync",
            "shared-read-uninitialized",
            "possible-race",
            "benign-race",
        ],
    ),
    ("divergence", &["barrier-in-divergent-cf"]),
    ("dead-barriers", &["dead-barrier"]),
];

/// The ids a rule id or family name stands for.
pub fn expand(name: &str) -> Result<Vec<&'static str>, String> {
    if let Some((_, ids)) = FAMILIES.iter().find(|(f, _)| *f == name) {
        return Ok(ids.to_vec());
    }
    match lockstep_checks::find_rule(name) {
        Some(r) => Ok(vec![r.id]),
        None => {
            let families: Vec<&str> = FAMILIES.iter().map(|(f, _)| *f).collect();
            Err(format!("unknown rule or family `{name}` (`lockstep rules` lists the rules; families: {})", families.join(", ")))
        }
    }
}

/// The decided level of every rule that is not at its default.
#[derive(Clone, Debug, Default)]
pub struct Selection {
    /// With `--select`: only these ids are reported.
    only: Option<Vec<&'static str>>,
    levels: BTreeMap<&'static str, Level>,
}

impl Selection {
    /// Applies a `[rules]` table (configuration levels come before the command line's).
    pub fn with_levels(mut self, rules: &BTreeMap<String, Level>) -> Result<Selection, String> {
        for (name, level) in rules {
            for id in expand(name)? {
                self.levels.insert(id, *level);
            }
        }
        Ok(self)
    }

    /// Applies `--select`, `--ignore` and `--warn`.
    pub fn with_command_line(mut self, select: &[String], ignore: &[String], warn: &[String]) -> Result<Selection, String> {
        if !select.is_empty() {
            let mut only = Vec::new();
            for name in select {
                only.extend(expand(name)?);
            }
            // A selected rule is reported even where the configuration allows it.
            for id in &only {
                if self.levels.get(id) == Some(&Level::Allow) {
                    self.levels.remove(id);
                }
            }
            self.only = Some(only);
        }
        for name in ignore {
            for id in expand(name)? {
                self.levels.insert(id, Level::Allow);
            }
        }
        for name in warn {
            for id in expand(name)? {
                self.levels.insert(id, Level::Warn);
            }
        }
        Ok(self)
    }

    /// Whether `id` is reported at all.
    pub fn enabled(&self, id: &str) -> bool {
        let selected = self.only.as_ref().is_none_or(|only| only.contains(&id) || !is_rule(id));
        selected && self.levels.get(id) != Some(&Level::Allow)
    }

    /// Whether `id` was asked for by name, which turns on rules that are off by default.
    pub fn asked_for(&self, id: &str) -> bool {
        let selected = self.only.as_ref().is_some_and(|only| only.contains(&id));
        selected || matches!(self.levels.get(id), Some(Level::Warn | Level::Error))
    }

    /// The severity `id` is reported with, None when it is not reported.
    pub fn severity(&self, id: &str, default: Severity) -> Option<Severity> {
        if !self.enabled(id) {
            return None;
        }
        Some(match self.levels.get(id) {
            Some(Level::Warn) => Severity::Warning,
            Some(Level::Error) => Severity::Error,
            _ => default,
        })
    }

    /// Drops what is not enabled and sets the severities the levels ask for.
    pub fn apply(&self, diagnostics: &mut Vec<Diagnostic>) {
        diagnostics.retain_mut(|d| match self.severity(&d.rule, d.severity) {
            Some(s) => {
                d.severity = s;
                true
            }
            None => false,
        });
    }
}

/// Whether `id` is one of the checks (tool diagnostics such as `parse-error` are not: `--select`
/// never hides them).
fn is_rule(id: &str) -> bool {
    lockstep_checks::RULES.iter().any(|r| r.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn families_expand_and_unknown_names_are_errors() {
        assert!(expand("races").unwrap().contains(&"possible-race"));
        assert_eq!(expand("divergence").unwrap(), vec!["barrier-in-divergent-cf"]);
        assert!(expand("no-such-rule").unwrap_err().contains("no-such-rule"));
    }

    #[test]
    fn select_ignore_and_warn_combine() {
        let sel = Selection::default().with_command_line(&s(&["races"]), &s(&["device-memory-race"]), &s(&["fence-without-sync"])).unwrap();
        assert!(sel.enabled("groupshared-write-write-race"));
        assert!(!sel.enabled("device-memory-race"));
        assert!(!sel.enabled("dead-barrier"));
        assert!(sel.enabled("parse-error"), "tool diagnostics are never unselected");
        assert!(sel.asked_for("possible-race"));
        assert!(!sel.asked_for("dead-barrier"));
    }

    #[test]
    fn configured_levels_set_severity_and_select_overrides_allow() {
        let rules = BTreeMap::from([("dead-barrier".to_string(), Level::Error), ("device-memory-race".to_string(), Level::Allow)]);
        let sel = Selection::default().with_levels(&rules).unwrap();
        let span = lockstep_source::Span::new(lockstep_source::FileId(0), 0, 0);
        let mut diags = vec![Diagnostic::new("dead-barrier", Severity::Warning, span, "m"), Diagnostic::new("device-memory-race", Severity::Error, span, "m")];
        sel.apply(&mut diags);
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].severity, Severity::Error);
        let sel = sel.with_command_line(&s(&["device-memory-race"]), &[], &[]).unwrap();
        assert!(sel.enabled("device-memory-race"));
    }
}
