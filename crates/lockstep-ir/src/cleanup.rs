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
            let used = self.used_values();
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

impl Function {
    /// Rewrites memory operations that address through a pointer value
    /// (`Root::Ptr`) to the allocation the pointer provably comes from, when
    /// its definition chain (address-of, pointer additions, conversions, a
    /// kernel's pointer parameter) says so. The index becomes the sum of the
    /// chain's offsets and the access's own index; `space_of` gives the memory
    /// space of a root when it is known exactly (generic pointers are not).
    pub fn resolve_pointer_roots(&mut self, space_of: impl Fn(Root) -> Option<MemSpace>) {
        for b in 0..self.blocks.len() {
            let mut i = 0;
            while i < self.blocks[b].insts.len() {
                let v = self.blocks[b].insts[i];
                let Some(m) = self.insts[v.index()].op.mem_ref().copied() else {
                    i += 1;
                    continue;
                };
                let Root::Ptr(p) = m.root else {
                    i += 1;
                    continue;
                };
                let Some((root, offsets)) = self.pointer_chain(p) else {
                    i += 1;
                    continue;
                };
                let span = self.insts[v.index()].span;
                let index_ty = self.insts[m.index.index()].ty;
                let mut index = m.index;
                let mut added = Vec::new();
                for off in offsets {
                    let off = if self.insts[off.index()].ty == index_ty {
                        off
                    } else {
                        let c = self.add_inst(Op::Convert(off), index_ty, span);
                        added.push(c);
                        c
                    };
                    index = self.add_inst(Op::Binary(BinOp::Add, index, off), index_ty, span);
                    added.push(index);
                }
                let space = space_of(root).unwrap_or(m.space);
                let new_ref = MemRef { space, root, index };
                match &mut self.insts[v.index()].op {
                    Op::Load(r) | Op::Store(r, _) | Op::Atomic(_, r, _) => *r = new_ref,
                    _ => {}
                }
                let n = added.len();
                for (k, a) in added.into_iter().enumerate() {
                    self.insts[a.index()].inlined_at = self.insts[v.index()].inlined_at;
                    self.blocks[b].insts.insert(i + k, a);
                }
                i += n + 1;
            }
        }
    }

    /// The allocation a pointer value points into and the offsets added on the way.
    fn pointer_chain(&self, p: Value) -> Option<(Root, Vec<Value>)> {
        let mut offsets = Vec::new();
        let mut v = p;
        for _ in 0..64 {
            match &self.insts[v.index()].op {
                Op::AddrOf(Root::Ptr(_), _) => return None,
                Op::AddrOf(root, idx) => {
                    offsets.push(*idx);
                    return Some((*root, offsets));
                }
                Op::PtrAdd(q, k) => {
                    offsets.push(*k);
                    v = *q;
                }
                Op::Param(i) if matches!(self.insts[v.index()].ty, Type::Ptr(_)) => return Some((Root::Param(*i), offsets)),
                Op::Convert(q) => v = *q,
                _ => return None,
            }
        }
        None
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
