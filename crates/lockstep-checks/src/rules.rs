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

pub static RULES: &[Rule] = &[
    Rule {
        id: "barrier-in-divergent-cf",
        severity: Severity::Error,
        summary: "a group barrier that not every thread of the group reaches",
        fix: false,
        doc: include_str!("../../../docs/rules/barrier-in-divergent-cf.md"),
    },
    Rule {
        id: "groupshared-write-then-no-barrier-read",
        severity: Severity::Error,
        summary: "a thread reads group-shared memory another thread wrote with no barrier between (RAW)",
        fix: false,
        doc: include_str!("../../../docs/rules/groupshared-write-then-no-barrier-read.md"),
    },
    Rule {
        id: "groupshared-read-then-no-barrier-write",
        severity: Severity::Error,
        summary: "a thread overwrites group-shared memory another thread read with no barrier between (WAR), also across loop iterations",
        fix: false,
        doc: include_str!("../../../docs/rules/groupshared-read-then-no-barrier-write.md"),
    },
    Rule {
        id: "groupshared-write-write-race",
        severity: Severity::Error,
        summary: "two threads write the same group-shared element with no barrier between (WAW)",
        fix: false,
        doc: include_str!("../../../docs/rules/groupshared-write-write-race.md"),
    },
    Rule {
        id: "groupshared-first-read-without-barrier",
        severity: Severity::Error,
        summary: "group-shared memory read before any barrier, before it is written or while another thread writes it",
        fix: false,
        doc: include_str!("../../../docs/rules/groupshared-first-read-without-barrier.md"),
    },
    Rule {
        id: "rwbuffer-store-without-globallycoherent",
        severity: Severity::Error,
        summary: "a UAV written and then read by another group in one dispatch without `globallycoherent` or a device barrier",
        fix: false,
        doc: include_str!("../../../docs/rules/rwbuffer-store-without-globallycoherent.md"),
    },
    Rule {
        id: "global-store-without-threadfence",
        severity: Severity::Error,
        summary: "global memory handed to another block through an atomic without `__threadfence()`",
        fix: false,
        doc: include_str!("../../../docs/rules/global-store-without-threadfence.md"),
    },
    Rule {
        id: "device-memory-race",
        severity: Severity::Error,
        summary: "two threads of a dispatch access the same device-memory element, at least one writing, with nothing ordering them",
        fix: false,
        doc: include_str!("../../../docs/rules/device-memory-race.md"),
    },
    Rule {
        id: "fence-without-sync",
        severity: Severity::Error,
        summary: "a fence-only barrier where threads exchange shared data and a synchronizing barrier is needed",
        fix: false,
        doc: include_str!("../../../docs/rules/fence-without-sync.md"),
    },
    Rule {
        id: "shared-read-uninitialized",
        severity: Severity::Warning,
        summary: "group-shared memory read before any thread of the group wrote it",
        fix: false,
        doc: include_str!("../../../docs/rules/shared-read-uninitialized.md"),
    },
    Rule {
        id: "warp-synchronous-race",
        severity: Severity::Warning,
        summary: "threads of one warp exchange shared data with no `__syncwarp()`, relying on the warp running in lockstep",
        fix: false,
        doc: include_str!("../../../docs/rules/warp-synchronous-race.md"),
    },
    Rule {
        id: "possible-race",
        severity: Severity::Warning,
        summary: "a race lockstep could not prove, because its witness needs data from memory or arithmetic it cannot decide (off by default)",
        fix: false,
        doc: include_str!("../../../docs/rules/possible-race.md"),
    },
    Rule {
        id: "benign-race",
        severity: Severity::Note,
        summary: "threads store the same group-uniform value to one element with nothing ordering them (off by default)",
        fix: false,
        doc: include_str!("../../../docs/rules/benign-race.md"),
    },
    Rule {
        id: "dead-barrier",
        severity: Severity::Warning,
        summary: "a barrier that orders no memory hazard and only stalls the group",
        fix: true,
        doc: include_str!("../../../docs/rules/dead-barrier.md"),
    },
];

pub fn find_rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}
