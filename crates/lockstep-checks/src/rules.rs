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

/// Diagnostics about the input or the tool rather than the kernels (`parse-error`,
/// `unused-suppression`, `lockstep run`'s `out-of-bounds`...): documented like rules, with a
/// lighter page (docs/diagnostics/ID.md: what it means, what to do).
pub static TOOL_DIAGNOSTICS: &[Rule] = &[
    Rule {
        id: "invalid-utf8",
        severity: Severity::Warning,
        summary: "a file that is not valid UTF-8; it is checked but never fixed",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/invalid-utf8.md"),
    },
    Rule {
        id: "parse-error",
        severity: Severity::Error,
        summary: "the file (or a kernel in it) could not be parsed",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/parse-error.md"),
    },
    Rule {
        id: "internal-error",
        severity: Severity::Error,
        summary: "lockstep failed on this file; please report it",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/internal-error.md"),
    },
    Rule {
        id: "kernel-skipped",
        severity: Severity::Warning,
        summary: "a kernel too large to analyse was not checked",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/kernel-skipped.md"),
    },
    Rule {
        id: "nesting-too-deep",
        severity: Severity::Warning,
        summary: "a statement or expression nested too deeply was skipped",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/nesting-too-deep.md"),
    },
    Rule {
        id: "unsupported",
        severity: Severity::Note,
        summary: "a construct lockstep does not model; it is taken to read and write any memory",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/unsupported.md"),
    },
    Rule {
        id: "include-not-found",
        severity: Severity::Warning,
        summary: "an `#include` that could not be found",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/include-not-found.md"),
    },
    Rule {
        id: "include-cycle",
        severity: Severity::Error,
        summary: "a file includes itself, directly or through others",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/include-cycle.md"),
    },
    Rule {
        id: "malformed-directive",
        severity: Severity::Error,
        summary: "a preprocessor directive lockstep cannot read",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/malformed-directive.md"),
    },
    Rule {
        id: "preprocessor-error",
        severity: Severity::Error,
        summary: "an `#error` directive or an invalid macro use",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/preprocessor-error.md"),
    },
    Rule {
        id: "unknown-directive",
        severity: Severity::Warning,
        summary: "a preprocessor directive lockstep does not know",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/unknown-directive.md"),
    },
    Rule {
        id: "unterminated-comment",
        severity: Severity::Error,
        summary: "a `/*` comment that never ends",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/unterminated-comment.md"),
    },
    Rule {
        id: "unterminated-conditional",
        severity: Severity::Error,
        summary: "an `#if` without its `#endif`",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/unterminated-conditional.md"),
    },
    Rule {
        id: "macro-expansion-limit",
        severity: Severity::Error,
        summary: "a macro expanded too many times",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/macro-expansion-limit.md"),
    },
    Rule {
        id: "unused-suppression",
        severity: Severity::Warning,
        summary: "a `lockstep: allow(...)` comment that suppresses nothing",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/unused-suppression.md"),
    },
    Rule {
        id: "binary-file",
        severity: Severity::Warning,
        summary: "a file that is not text was skipped",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/binary-file.md"),
    },
    Rule {
        id: "out-of-bounds",
        severity: Severity::Error,
        summary: "`lockstep run`: a thread accessed a buffer outside its bounds",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/out-of-bounds.md"),
    },
    Rule {
        id: "write-to-read-only",
        severity: Severity::Error,
        summary: "`lockstep run`: a thread wrote a read-only buffer",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/write-to-read-only.md"),
    },
    Rule {
        id: "runaway-loop",
        severity: Severity::Error,
        summary: "`lockstep run`: a thread ran more steps than `--max-steps` allows",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/runaway-loop.md"),
    },
    Rule {
        id: "emulation-error",
        severity: Severity::Error,
        summary: "`lockstep run`: the emulator could not continue",
        fix: false,
        doc: include_str!("../../../docs/diagnostics/emulation-error.md"),
    },
];

/// A check or a tool diagnostic by id.
pub fn find_rule(id: &str) -> Option<&'static Rule> {
    RULES.iter().chain(TOOL_DIAGNOSTICS).find(|r| r.id == id)
}
