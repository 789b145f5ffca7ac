//! Every rule's documentation page (`lockstep explain RULE`) keeps the promised shape: what it
//! detects, why it matters on a GPU, a bad and a good example in a fenced code block, and the fix.

use lockstep_checks::{RULES, TOOL_DIAGNOSTICS};

/// Headings and markers every page must contain.
const REQUIRED: &[&str] = &["## What it detects", "## Why it matters on a GPU", "Bad", "Good"];

fn has_fenced_code_block(doc: &str) -> bool {
    let mut fences = doc.lines().filter(|l| l.trim_start().starts_with("```"));
    fences.next().is_some() && fences.next().is_some()
}

#[test]
fn every_rule_doc_has_the_promised_sections() {
    let mut problems = Vec::new();
    for rule in RULES {
        let doc = rule.doc;
        for needle in REQUIRED {
            if !doc.contains(needle) {
                problems.push(format!("{}: missing `{}`", rule.id, needle));
            }
        }
        if !(doc.contains("## Fix") || doc.contains("**Fix:**")) {
            problems.push(format!("{}: missing `## Fix` or `**Fix:**`", rule.id));
        }
        if !has_fenced_code_block(doc) {
            problems.push(format!("{}: missing a fenced code block", rule.id));
        }
    }
    assert!(problems.is_empty(), "rule docs are incomplete:\n{}", problems.join("\n"));
}

#[test]
fn every_example_section_has_a_bad_and_a_good_code_block() {
    for rule in RULES {
        let Some((_, example)) = rule.doc.split_once("## Example") else { continue };
        let example = example.split("\n## ").next().unwrap_or("");
        for kind in ["Bad", "Good"] {
            let Some((_, after)) = example.split_once(kind) else {
                panic!("{}: `## Example` has no {kind} example", rule.id);
            };
            assert!(
                after.contains("```hlsl") || after.contains("```cuda"),
                "{}: the {kind} example has no ```hlsl or ```cuda block",
                rule.id
            );
        }
    }
}

/// Tool diagnostics (about the input, not the kernels) have a lighter page: what it means, what to do.
#[test]
fn every_tool_diagnostic_doc_says_what_it_means_and_what_to_do() {
    for d in TOOL_DIAGNOSTICS {
        for needle in [format!("# {}", d.id), "## What it means".to_string(), "## What to do".to_string()] {
            assert!(d.doc.contains(&needle), "{}: missing `{needle}`", d.id);
        }
        assert!(!RULES.iter().any(|r| r.id == d.id), "{} is both a rule and a tool diagnostic", d.id);
    }
}

/// `lockstep explain` covers every id the front end, the checks and the emulator emit.
#[test]
fn every_emitted_id_is_documented() {
    let mut ids = std::collections::BTreeSet::new();
    for dir in ["crates/lockstep-lower/src", "crates/lockstep-preprocess/src", "crates/lockstep-checks/src", "crates/lockstep-emu/src", "crates/lockstep-dbe/src", "src"] {
        collect_emitted_ids(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir), &mut ids);
    }
    assert!(ids.contains("parse-error") && ids.contains("unsupported"), "the scan finds the emitted ids: {ids:?}");
    let missing: Vec<&String> = ids.iter().filter(|id| lockstep_checks::find_rule(id).is_none()).collect();
    assert!(missing.is_empty(), "ids without a doc page: {missing:?}");
}

/// The first argument of every `Diagnostic::new(`, `diag(`, `warn(`, `error(` and `warning(` call
/// that is a string literal.
fn collect_emitted_ids(dir: &std::path::Path, ids: &mut std::collections::BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_emitted_ids(&path, ids);
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for call in ["Diagnostic::new(", "diag(", "warn(", "error(", "warning("] {
            for (at, _) in text.match_indices(call) {
                let rest = text[at + call.len()..].trim_start().strip_prefix('"').unwrap_or("");
                let id: String = rest.chars().take_while(|c| c.is_ascii_lowercase() || *c == '-').collect();
                if !id.is_empty() && rest[id.len()..].starts_with('"') {
                    ids.insert(id);
                }
            }
        }
    }
}
