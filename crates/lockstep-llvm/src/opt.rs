//! `lockstep opt`: read a `.ll` file, decide the dead barriers of each
//! function, and write the file back without their call lines.

use crate::parse::read;
use lockstep_dbe::{BarrierFlags, Engine, Options, SameAllocation, Verdict};
use lockstep_ir::Value;
use lockstep_source::{SourceDb, Span};
use std::collections::HashSet;
use std::path::Path;

/// The engine options and the seed's knobs.
#[derive(Clone, Debug, Default)]
pub struct OptConfig {
    pub options: Options,
    /// Functions (LLVM names) left alone.
    pub skip_functions: Vec<String>,
    /// Process at most this many functions, in file order.
    pub max_functions: Option<usize>,
    /// Leave alone functions with more blocks than this.
    pub max_blocks: Option<usize>,
}

/// A removed barrier call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Removal {
    pub function: String,
    /// `file:line` from `!dbg`, else the `.ll` file and line.
    pub location: String,
    pub flags: BarrierFlags,
    /// The call's line in the `.ll` file.
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct OptResult {
    /// The input without the removed lines.
    pub output: String,
    pub removals: Vec<Removal>,
    /// Functions left alone, with the reason.
    pub skipped: Vec<(String, String)>,
}

fn bit(b: bool) -> u8 {
    b as u8
}

/// The seed's two-line dump of a removal, with the per-space flags appended.
pub fn dump_line(r: &Removal) -> String {
    let all = r.flags.combined();
    let space = |f: lockstep_dbe::Flags| format!("{}{}{}{}", bit(f.read_above), bit(f.write_above), bit(f.read_below), bit(f.write_below));
    format!(
        " Removed dead synch: [{}] in function {}\nRead above: {}, Write above: {}, Read below: {}, Write below: {} (shared {}, device {})",
        r.location,
        r.function,
        bit(all.read_above),
        bit(all.write_above),
        bit(all.read_below),
        bit(all.write_below),
        space(r.flags.shared),
        space(r.flags.device)
    )
}

pub fn optimize(db: &mut SourceDb, path: &Path, text: &str, config: &OptConfig) -> OptResult {
    let ll = read(db, path, text);
    let engine = Engine::new(&ll.module, config.options);
    let oracle = SameAllocation { module: &ll.module };
    let mut removals = Vec::new();
    let mut skipped = Vec::new();
    let mut processed = 0usize;
    for lf in &ll.functions {
        let f = ll.module.function(lf.id);
        let reason = if let Some(why) = &lf.opaque {
            Some(format!("not read: {why}"))
        } else if config.skip_functions.contains(&lf.name) {
            Some("skipped by --skip-functions".to_string())
        } else if config.max_blocks.is_some_and(|m| f.blocks.len() > m) {
            Some(format!("{} blocks, more than --max-blocks", f.blocks.len()))
        } else if config.max_functions.is_some_and(|m| processed >= m) {
            Some("past --max-functions".to_string())
        } else {
            None
        };
        if let Some(reason) = reason {
            skipped.push((lf.name.clone(), reason));
            continue;
        }
        processed += 1;
        let leave: HashSet<Value> = lf.untrusted.iter().copied().collect();
        let result = engine.run(f, &oracle, &leave);
        for b in result.barriers.iter().filter(|b| b.verdict == Verdict::Removed) {
            let location = match lf.debug.get(&b.value) {
                Some((file, line)) => format!("{file}:{line}"),
                None => {
                    let (loc, _) = db.location(b.span);
                    format!("{}:{}", path.display(), loc.line)
                }
            };
            removals.push(Removal { function: lf.name.clone(), location, flags: b.flags, span: b.span });
        }
    }
    let spans: Vec<Span> = removals.iter().map(|r| r.span).collect();
    OptResult { output: crate::write::delete_lines(text, &spans), removals, skipped }
}
