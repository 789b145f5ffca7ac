//! Clean-ups every front end runs after building a function: drop blocks no
//! path reaches, and pure instructions whose results nobody uses.

use crate::*;

impl Function {
    /// Removes blocks unreachable from the entry, renumbering the rest and
    /// dropping phi entries of removed predecessors.
    pub fn remove_unreachable_blocks(&mut self) {
        let mut reachable = vec![false; self.blocks.len()];
        let mut stack = vec![BlockId(0)];
        while let Some(b) = stack.pop() {
            if std::mem::replace(&mut reachable[b.index()], true) {
                continue;
            }
            stack.extend(self.block(b).term.successors());
        }
        if reachable.iter().all(|&r| r) {
            return;
        }
        let mut new_id = vec![None; self.blocks.len()];
        let mut next = 0u32;
        for (i, &r) in reachable.iter().enumerate() {
            if r {
                new_id[i] = Some(BlockId(next));
                next += 1;
            }
        }
        let old = std::mem::take(&mut self.blocks);
        for (i, mut block) in old.into_iter().enumerate() {
            if !reachable[i] {
                continue;
            }
            block.term.map_successors(|s| new_id[s.index()].expect("successor of a reachable block is reachable"));
            self.blocks.push(block);
        }
        for b in 0..self.blocks.len() {
            for &v in &self.blocks[b].insts.clone() {
                if let Op::Phi(inc) = &mut self.insts[v.index()].op {
                    inc.retain(|(p, _)| new_id[p.index()].is_some());
                    for (p, _) in inc.iter_mut() {
                        *p = new_id[p.index()].expect("kept");
                    }
                }
            }
        }
    }

    /// Removes pure instructions whose values are never used (to a fixed point).
    pub fn remove_dead_code(&mut self) {
        loop {
            let mut used = vec![false; self.insts.len()];
            for block in &self.blocks {
                for &v in &block.insts {
                    self.insts[v.index()].op.for_each_operand(|o| used[o.index()] = true);
                }
                if let Some(c) = block.term.condition() {
                    used[c.index()] = true;
                }
                if let Terminator::Return(Some(v)) = block.term {
                    used[v.index()] = true;
                }
            }
            let mut changed = false;
            for block in self.blocks.iter_mut() {
                let before = block.insts.len();
                block.insts.retain(|&v| used[v.index()] || !is_pure(&self.insts[v.index()].op));
                changed |= block.insts.len() != before;
            }
            if !changed {
                break;
            }
        }
    }
}

/// Operations with no effect besides their value (loads count as effects:
/// the analyses care that memory was touched).
fn is_pure(op: &Op) -> bool {
    matches!(
        op,
        Op::Const(_)
            | Op::Undef
            | Op::Unary(..)
            | Op::Binary(..)
            | Op::Cmp(..)
            | Op::Select(..)
            | Op::Convert(_)
            | Op::Math(..)
            | Op::Builtin(_)
            | Op::AddrOf(..)
            | Op::PtrAdd(..)
            | Op::Phi(_)
    )
}
