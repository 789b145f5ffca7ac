//! Every rule's documentation page (`lockstep explain RULE`) keeps the promised shape: what it
//! detects, why it matters on a GPU, a bad and a good example in a fenced code block, and the fix.

use lockstep_checks::RULES;

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
