//! The registry of rules: one entry per check, each with its documentation page.

use lockstep_diag::Severity;

pub struct Rule {
    pub id: &'static str,
    pub severity: Severity,
    pub summary: &'static str,
    /// Whether a machine-applicable fix is offered.
    pub fix: bool,
    /// The rule's documentation page (docs/rules/ID.md).
    pub doc: &'static str,
}

pub static RULES: &[Rule] = &[Rule {
    id: "barrier-in-divergent-cf",
    severity: Severity::Error,
    summary: "a group barrier that not every thread of the group reaches",
    fix: false,
    doc: include_str!("../../../docs/rules/barrier-in-divergent-cf.md"),
}];

pub fn find_rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}
