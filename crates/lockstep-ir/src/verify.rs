//! Structural checks of a function: every reference in range, phis match predecessors.

use crate::*;

/// Returns a description of every structural problem found (empty when well formed).
pub fn verify(f: &Function) -> Vec<String> {
    let mut errors = Vec::new();
    let n_insts = f.insts.len() as u32;
    let n_blocks = f.blocks.len() as u32;
    if f.blocks.is_empty() {
        errors.push(format!("{}: no blocks", f.name));
        return errors;
    }
    let preds = f.predecessors();
    let mut placed = vec![false; f.insts.len()];
    for b in f.block_ids() {
        let block = f.block(b);
        for &v in &block.insts {
            if v.0 >= n_insts {
                errors.push(format!("{b}: instruction {v} out of range"));
                continue;
            }
            if std::mem::replace(&mut placed[v.index()], true) {
                errors.push(format!("{b}: {v} placed twice"));
            }
            let inst = f.inst(v);
            inst.op.for_each_operand(|o| {
                if o.0 >= n_insts {
                    errors.push(format!("{v}: operand {o} out of range"));
                }
            });
            if let Op::Phi(inc) = &inst.op {
                for (p, _) in inc {
                    if !preds[b.index()].contains(p) {
                        errors.push(format!("{v}: phi names {p}, which is not a predecessor of {b}"));
                    }
                }
                for p in &preds[b.index()] {
                    if !inc.iter().any(|(q, _)| q == p) {
                        errors.push(format!("{v}: phi lacks an entry for predecessor {p} of {b}"));
                    }
                }
            }
        }
        for s in block.term.successors() {
            if s.0 >= n_blocks {
                errors.push(format!("{b}: successor {s} out of range"));
            }
        }
        if let Some(c) = block.term.condition() {
            if c.0 >= n_insts {
                errors.push(format!("{b}: condition {c} out of range"));
            }
        }
    }
    errors
}
