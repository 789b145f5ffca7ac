//! Just enough debug metadata to name a source line: `!DILocation` → its
//! scope (`!DISubprogram`, `!DILexicalBlock`, ...) → `!DIFile`.

use std::collections::HashMap;

struct Node {
    kind: String,
    fields: HashMap<String, String>,
}

#[derive(Default)]
pub struct DebugInfo {
    nodes: HashMap<String, Node>,
}

/// Splits `a: 1, b: "x, y", c: !3` at top-level commas.
fn split_fields(s: &str) -> Vec<&str> {
    let (mut out, mut depth, mut in_str, mut start) = (Vec::new(), 0i32, false, 0);
    for (i, c) in s.char_indices() {
        match c {
            '"' => in_str = !in_str,
            '(' | '{' | '[' if !in_str => depth += 1,
            ')' | '}' | ']' if !in_str => depth -= 1,
            ',' if !in_str && depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

impl DebugInfo {
    /// Records a `!N = [distinct] !DIKind(...)` line; other metadata is ignored.
    pub fn add_line(&mut self, line: &str) {
        let Some((id, rest)) = line.split_once('=') else { return };
        let id = id.trim().trim_start_matches('!').to_string();
        let rest = rest.trim().trim_start_matches("distinct").trim();
        let Some(rest) = rest.strip_prefix('!') else { return };
        let Some(open) = rest.find('(') else { return };
        let kind = rest[..open].to_string();
        if !kind.starts_with("DI") {
            return;
        }
        let body = rest[open + 1..].trim_end();
        let body = body.strip_suffix(')').unwrap_or(body);
        let fields = split_fields(body)
            .into_iter()
            .filter_map(|f| f.split_once(':'))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        self.nodes.insert(id, Node { kind, fields });
    }

    fn field(&self, id: &str, key: &str) -> Option<&str> {
        self.nodes.get(id)?.fields.get(key).map(|s| s.as_str())
    }

    /// The file name and line a `!dbg !N` attachment names.
    pub fn location(&self, dbg: &str) -> Option<(String, u32)> {
        let loc = self.nodes.get(dbg).filter(|n| n.kind == "DILocation")?;
        let line = loc.fields.get("line")?.parse().ok()?;
        let mut scope = loc.fields.get("scope")?.trim_start_matches('!').to_string();
        // Scopes nest (lexical blocks in subprograms); the first with a file names it.
        for _ in 0..64 {
            if let Some(file) = self.field(&scope, "file") {
                let file = file.trim_start_matches('!');
                let name = self.field(file, "filename")?.trim_matches('"');
                return Some((name.to_string(), line));
            }
            scope = self.field(&scope, "scope")?.trim_start_matches('!').to_string();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_follows_lexical_blocks_to_the_file() {
        let mut d = DebugInfo::default();
        d.add_line(r#"!1 = !DIFile(filename: "k, 1.cu", directory: "/src")"#);
        d.add_line("!9 = distinct !DISubprogram(name: \"f\", scope: !1, file: !1, line: 4, type: !10, flags: DIFlagPrototyped | DIFlagAllCallsDescribed)");
        d.add_line("!10 = distinct !DILexicalBlock(scope: !9, line: 5)");
        d.add_line("!12 = !DILocation(line: 6, column: 16, scope: !10)");
        d.add_line("!13 = !{!\"float\"}");
        assert_eq!(d.location("12"), Some(("k, 1.cu".to_string(), 6)));
        assert_eq!(d.location("13"), None);
        assert_eq!(d.location("99"), None);
    }
}
