//! Applying machine-applicable fixes to source files, safely: a file with
//! syntax errors or bytes that are not UTF-8 is never touched, edits that
//! overlap are skipped, and the new text is written to a temporary file in
//! the same directory and renamed over the original.

use lockstep_diag::{Diagnostic, Edit};
use lockstep_source::{FileId, SourceDb};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

/// The edited text of every file the fixes touch.
pub struct Planned {
    pub file: FileId,
    pub before: String,
    pub after: String,
    pub applied: usize,
}

/// Why a file's fixes were not applied.
pub struct Refused {
    pub file: FileId,
    pub reason: String,
}

/// Computes the new text of each file from the fixes of `diagnostics`.
pub fn plan(db: &SourceDb, diagnostics: &[Diagnostic], has_syntax_errors: bool) -> (Vec<Planned>, Vec<Refused>) {
    let mut by_file: BTreeMap<FileId, Vec<&Edit>> = BTreeMap::new();
    for d in diagnostics {
        if let Some(fix) = &d.fix {
            // A fix whose edits span several files is applied file by file; each edit stands alone.
            for e in &fix.edits {
                by_file.entry(e.span.file).or_default().push(e);
            }
        }
    }
    let mut planned = Vec::new();
    let mut refused = Vec::new();
    for (file, mut edits) in by_file {
        let source = db.file(file);
        if has_syntax_errors {
            refused.push(Refused { file, reason: "it has syntax errors".into() });
            continue;
        }
        if source.lossy {
            refused.push(Refused { file, reason: "it is not valid UTF-8".into() });
            continue;
        }
        edits.sort_by_key(|e| (e.span.lo, e.span.hi));
        edits.dedup_by(|a, b| a.span == b.span && a.replacement == b.replacement);
        let text: &str = &source.text;
        let mut after = String::with_capacity(text.len());
        let mut at = 0usize;
        let mut applied = 0;
        for e in edits {
            let (lo, hi) = (e.span.lo as usize, e.span.hi as usize);
            if lo < at || hi > text.len() || lo > hi || !text.is_char_boundary(lo) || !text.is_char_boundary(hi) {
                continue;
            }
            after.push_str(&text[at..lo]);
            after.push_str(&e.replacement);
            at = hi;
            applied += 1;
        }
        after.push_str(&text[at..]);
        if applied > 0 && after != text {
            planned.push(Planned { file, before: text.to_string(), after, applied });
        }
    }
    (planned, refused)
}

/// A unified diff of one planned change.
pub fn unified_diff(path: &Path, p: &Planned) -> String {
    let name = path.display().to_string();
    similar::TextDiff::from_lines(&p.before, &p.after).unified_diff().context_radius(3).header(&name, &name).to_string()
}

/// Writes the new text to a temporary file in the target's directory, then renames it into place.
/// A symbolic link is followed: the file it points to is rewritten and the link stays a link. The
/// file keeps its permissions.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let target = std::fs::canonicalize(path)?;
    let dir = target.parent().unwrap_or(Path::new("."));
    let permissions = std::fs::metadata(&target)?.permissions();
    let mut tmp = tempfile::Builder::new().prefix(".lockstep-fix-").tempfile_in(dir)?;
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.as_file().set_permissions(permissions)?;
    tmp.persist(&target).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_diag::{Fix, Severity};
    use lockstep_source::Span;

    fn diag_with_edit(file: FileId, lo: u32, hi: u32, replacement: &str) -> Diagnostic {
        Diagnostic::new("dead-barrier", Severity::Warning, Span::new(file, lo, hi), "m")
            .with_fix(Fix { message: "remove".into(), edits: vec![Edit { span: Span::new(file, lo, hi), replacement: replacement.into() }] })
    }

    #[test]
    fn edits_apply_in_order_and_overlaps_are_skipped() {
        let mut db = SourceDb::new();
        let f = db.add("k.cu", "a;\nb;\nc;\n");
        let diags = vec![diag_with_edit(f, 3, 6, ""), diag_with_edit(f, 4, 8, "X"), diag_with_edit(f, 0, 3, "")];
        let (planned, refused) = plan(&db, &diags, false);
        assert!(refused.is_empty());
        assert_eq!(planned[0].after, "c;\n");
        assert_eq!(planned[0].applied, 2);
    }

    #[test]
    fn files_with_syntax_errors_or_bad_bytes_are_refused() {
        let mut db = SourceDb::new();
        let f = db.add("k.cu", "a;\n");
        let (planned, refused) = plan(&db, &[diag_with_edit(f, 0, 2, "")], true);
        assert!(planned.is_empty());
        assert_eq!(refused[0].reason, "it has syntax errors");
        let g = db.add_bytes("bad.cu", b"a;\xff\n");
        let (planned, refused) = plan(&db, &[diag_with_edit(g, 0, 2, "")], false);
        assert!(planned.is_empty());
        assert_eq!(refused[0].reason, "it is not valid UTF-8");
    }

    #[cfg(unix)]
    #[test]
    fn atomic_write_through_a_symlink_rewrites_the_target_and_keeps_link_and_mode() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.cu");
        std::fs::write(&real, "old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.cu");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_atomically(&link, "new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        assert_eq!(std::fs::metadata(&real).unwrap().permissions().mode() & 0o777, 0o640);
    }

    #[test]
    fn atomic_write_replaces_the_file() {
        let dir = std::env::temp_dir().join(format!("lockstep-fix-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("k.cu");
        std::fs::write(&p, "old").unwrap();
        write_atomically(&p, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().starts_with(".lockstep-fix-")).collect();
        assert!(leftovers.is_empty());
        std::fs::remove_dir_all(&dir).ok();
    }
}
