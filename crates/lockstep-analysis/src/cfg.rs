//! Control-flow facts: predecessors, reverse post-order, dominators,
//! post-dominators (with a virtual exit), control dependence and natural loops.

use lockstep_ir::{BlockId, Function};

/// Immediate-dominator tree over `n` nodes; the root's parent is itself.
#[derive(Clone, Debug)]
pub struct DomTree {
    idom: Vec<Option<usize>>,
    /// Position of each node in the order the tree was built (for intersection).
    order: Vec<usize>,
    /// Each reachable node's entry and exit times in a depth-first walk of
    /// the tree: `a` dominates `b` when `b`'s interval lies in `a`'s.
    interval: Vec<(u32, u32)>,
}

/// Entry and exit times of a depth-first walk of the tree given by `idom`
/// from `root` (iteratively: trees of unrolled code are deep).
fn tree_intervals(n: usize, root: usize, idom: &[Option<usize>]) -> Vec<(u32, u32)> {
    let mut children = vec![Vec::new(); n];
    for (b, p) in idom.iter().enumerate() {
        if let Some(p) = *p {
            if p != b {
                children[p].push(b);
            }
        }
    }
    let mut interval = vec![(0, 0); n];
    let mut clock = 0u32;
    let mut stack = vec![(root, 0usize)];
    interval[root].0 = clock;
    while let Some((b, i)) = stack.pop() {
        if let Some(&c) = children[b].get(i) {
            stack.push((b, i + 1));
            clock += 1;
            interval[c].0 = clock;
            stack.push((c, 0));
        } else {
            clock += 1;
            interval[b].1 = clock;
        }
    }
    interval
}

impl DomTree {
    /// Cooper, Harvey & Kennedy, "A Simple, Fast Dominance Algorithm".
    fn build(n: usize, root: usize, succs: &[Vec<usize>], preds: &[Vec<usize>]) -> DomTree {
        // Reverse post-order from the root, iteratively.
        let mut rpo = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        let mut stack = vec![(root, 0usize)];
        seen[root] = true;
        while let Some((b, i)) = stack.pop() {
            if i < succs[b].len() {
                stack.push((b, i + 1));
                let s = succs[b][i];
                if !seen[s] {
                    seen[s] = true;
                    stack.push((s, 0));
                }
            } else {
                rpo.push(b);
            }
        }
        rpo.reverse();
        let mut order = vec![usize::MAX; n];
        for (i, &b) in rpo.iter().enumerate() {
            order[b] = i;
        }
        let mut idom = vec![None; n];
        idom[root] = Some(root);
        let mut changed = true;
        while changed {
            changed = false;
            for &b in rpo.iter().skip(1) {
                let mut new: Option<usize> = None;
                for &p in &preds[b] {
                    if idom[p].is_none() {
                        continue;
                    }
                    new = Some(match new {
                        None => p,
                        Some(q) => intersect(&idom, &order, p, q),
                    });
                }
                if new.is_some() && idom[b] != new {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        let interval = tree_intervals(n, root, &idom);
        DomTree { idom, order, interval }
    }

    /// The immediate dominator (None for the root and unreachable nodes).
    pub fn idom(&self, b: usize) -> Option<usize> {
        match self.idom[b] {
            Some(p) if p != b => Some(p),
            _ => None,
        }
    }

    pub fn dominates(&self, a: usize, b: usize) -> bool {
        if self.idom[b].is_none() || self.idom[a].is_none() {
            return false;
        }
        let ((a_in, a_out), (b_in, b_out)) = (self.interval[a], self.interval[b]);
        a_in <= b_in && b_out <= a_out
    }

    pub fn is_reachable(&self, b: usize) -> bool {
        self.order[b] != usize::MAX
    }
}

fn intersect(idom: &[Option<usize>], order: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while order[a] > order[b] {
            a = idom[a].expect("processed");
        }
        while order[b] > order[a] {
            b = idom[b].expect("processed");
        }
    }
    a
}

/// A block where paths from different successors of a branch meet, and the
/// predecessors they arrive through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Join {
    pub block: BlockId,
    pub from: Vec<BlockId>,
}

/// The joins of one branch, and the blocks its paths reach going forward.
pub struct BranchJoins {
    pub joins: Vec<Join>,
    reached: Vec<bool>,
}

impl BranchJoins {
    /// Whether a path from the branch reaches `b` without taking a back edge.
    pub fn reaches(&self, b: BlockId) -> bool {
        self.reached.get(b.index()).copied().unwrap_or(false)
    }
}

/// A natural loop: a header and the blocks that reach a back edge to it.
#[derive(Clone, Debug)]
pub struct Loop {
    pub header: BlockId,
    pub blocks: Vec<BlockId>,
    /// Blocks inside the loop with a successor outside it.
    pub exiting: Vec<BlockId>,
    /// Sources of the back edges.
    pub latches: Vec<BlockId>,
}

#[derive(Clone, Debug)]
pub struct Cfg {
    pub succs: Vec<Vec<BlockId>>,
    /// Reachable blocks in reverse post-order, and each block's position in it.
    pub rpo: Vec<BlockId>,
    pub rpo_index: Vec<usize>,
    pub preds: Vec<Vec<BlockId>>,
    pub dom: DomTree,
    /// Post-dominators; node `n` (= number of blocks) is the virtual exit.
    pub pdom: DomTree,
    /// For each block, the branch blocks it is directly control dependent on.
    pub control_deps: Vec<Vec<BlockId>>,
    pub loops: Vec<Loop>,
    /// For each block, the loops containing it (indices into `loops`), outermost first.
    pub loops_of: Vec<Vec<usize>>,
}

impl Cfg {
    pub fn new(f: &Function) -> Cfg {
        let n = f.blocks.len();
        let succs: Vec<Vec<BlockId>> = f.blocks.iter().map(|b| {
            let mut s = b.term.successors();
            s.dedup();
            s
        }).collect();
        let preds = f.predecessors();
        let to_us = |v: &Vec<Vec<BlockId>>| -> Vec<Vec<usize>> { v.iter().map(|x| x.iter().map(|b| b.index()).collect()).collect() };
        let s_us = to_us(&succs);
        let p_us = to_us(&preds);
        let dom = DomTree::build(n, 0, &s_us, &p_us);

        // Reverse graph with a virtual exit `n`; blocks that cannot reach an
        // exit (infinite loops) are tied to it so every block has a post-dominator.
        let mut rsuccs: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
        let mut rpreds: Vec<Vec<usize>> = vec![Vec::new(); n + 1];
        let add = |from: usize, to: usize, rs: &mut Vec<Vec<usize>>, rp: &mut Vec<Vec<usize>>| {
            // Reverse edge of from→to is to→from.
            rs[to].push(from);
            rp[from].push(to);
        };
        for (b, succs) in s_us.iter().enumerate() {
            if succs.is_empty() {
                add(b, n, &mut rsuccs, &mut rpreds);
            }
            for &s in succs {
                add(b, s, &mut rsuccs, &mut rpreds);
            }
        }
        // Tie the deepest block of each exit-less region to the exit, one at a
        // time, so blocks before an infinite loop keep their real post-dominators.
        let post_order: Vec<usize> = {
            let mut order = Vec::with_capacity(n);
            let mut seen = vec![false; n];
            let mut stack = vec![(0usize, 0usize)];
            if n > 0 {
                seen[0] = true;
            }
            while let Some((b, i)) = stack.pop() {
                if i < s_us[b].len() {
                    stack.push((b, i + 1));
                    let s = s_us[b][i];
                    if !seen[s] {
                        seen[s] = true;
                        stack.push((s, 0));
                    }
                } else {
                    order.push(b);
                }
            }
            order
        };
        loop {
            let mut reaches_exit = vec![false; n + 1];
            let mut stack = vec![n];
            while let Some(x) = stack.pop() {
                if std::mem::replace(&mut reaches_exit[x], true) {
                    continue;
                }
                stack.extend(rsuccs[x].iter().copied());
            }
            match post_order.iter().find(|&&b| !reaches_exit[b]) {
                Some(&b) => add(b, n, &mut rsuccs, &mut rpreds),
                None => break,
            }
        }
        let pdom = DomTree::build(n + 1, n, &rsuccs, &rpreds);

        // Control dependence (Ferrante et al.): for each edge a→b where b does
        // not post-dominate a, every node from b up to (excluding) ipdom(a) depends on a.
        let mut control_deps: Vec<Vec<BlockId>> = vec![Vec::new(); n];
        for (a, succs) in s_us.iter().enumerate() {
            if succs.len() < 2 {
                continue;
            }
            let stop = pdom.idom(a);
            for &b in succs {
                let mut x = b;
                let mut guard = 0;
                while Some(x) != stop && x != n && guard <= n {
                    if !control_deps[x].contains(&BlockId(a as u32)) {
                        control_deps[x].push(BlockId(a as u32));
                    }
                    match pdom.idom(x) {
                        Some(p) => x = p,
                        None => break,
                    }
                    guard += 1;
                }
            }
        }

        // Natural loops from back edges (latch → header with header dominating latch).
        let mut loops: Vec<Loop> = Vec::new();
        for (latch, succs) in s_us.iter().enumerate() {
            for &h in succs {
                if !dom.dominates(h, latch) {
                    continue;
                }
                let li = match loops.iter().position(|l| l.header.index() == h) {
                    Some(i) => i,
                    None => {
                        loops.push(Loop { header: BlockId(h as u32), blocks: vec![BlockId(h as u32)], exiting: Vec::new(), latches: Vec::new() });
                        loops.len() - 1
                    }
                };
                loops[li].latches.push(BlockId(latch as u32));
                let mut stack = vec![latch];
                while let Some(x) = stack.pop() {
                    if loops[li].blocks.contains(&BlockId(x as u32)) {
                        continue;
                    }
                    loops[li].blocks.push(BlockId(x as u32));
                    stack.extend(p_us[x].iter().copied().filter(|&p| dom.is_reachable(p)));
                }
            }
        }
        for l in loops.iter_mut() {
            l.blocks.sort();
            l.exiting = l.blocks.iter().copied().filter(|b| s_us[b.index()].iter().any(|s| l.blocks.binary_search(&BlockId(*s as u32)).is_err())).collect();
        }
        // Outermost first: larger loops contain smaller ones.
        let mut order: Vec<usize> = (0..loops.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(loops[i].blocks.len()));
        let loops: Vec<Loop> = order.into_iter().map(|i| loops[i].clone()).collect();
        let mut loops_of = vec![Vec::new(); n];
        for (i, l) in loops.iter().enumerate() {
            for b in &l.blocks {
                loops_of[b.index()].push(i);
            }
        }
        let mut rpo: Vec<BlockId> = post_order.iter().rev().map(|&b| BlockId(b as u32)).collect();
        rpo.retain(|b| dom.is_reachable(b.index()));
        let mut rpo_index = vec![usize::MAX; n];
        for (i, b) in rpo.iter().enumerate() {
            rpo_index[b.index()] = i;
        }
        Cfg { succs, rpo, rpo_index, preds, dom, pdom, control_deps, loops, loops_of }
    }

    pub fn block_count(&self) -> usize {
        self.succs.len()
    }

    /// The immediate post-dominator (None when it is the virtual exit).
    pub fn ipdom(&self, b: BlockId) -> Option<BlockId> {
        self.pdom.idom(b.index()).filter(|&p| p < self.block_count()).map(|p| BlockId(p as u32))
    }

    pub fn dominates(&self, a: BlockId, b: BlockId) -> bool {
        self.dom.dominates(a.index(), b.index())
    }

    pub fn post_dominates(&self, a: BlockId, b: BlockId) -> bool {
        self.pdom.dominates(a.index(), b.index())
    }

    pub fn is_reachable(&self, b: BlockId) -> bool {
        self.dom.is_reachable(b.index())
    }

    /// Branch blocks `b` depends on, transitively (nearest first).
    pub fn control_deps_transitive(&self, b: BlockId) -> Vec<BlockId> {
        let mut out: Vec<BlockId> = Vec::new();
        // One bit per block: long chains of branches (a switch on an unknown
        // value, tested case by case) make the list long.
        let mut seen = vec![0u64; self.block_count().div_ceil(64)];
        let mut queue: std::collections::VecDeque<BlockId> = self.control_deps[b.index()].iter().copied().collect();
        while let Some(x) = queue.pop_front() {
            let (word, bit) = (x.index() / 64, 1u64 << (x.index() % 64));
            if seen[word] & bit != 0 {
                continue;
            }
            seen[word] |= bit;
            out.push(x);
            queue.extend(self.control_deps[x.index()].iter().copied());
        }
        out
    }

    /// Whether the edge from→to is a loop back edge.
    pub fn is_back_edge(&self, from: BlockId, to: BlockId) -> bool {
        self.dominates(to, from)
    }

    /// Blocks where paths starting at different successors of `branch` meet
    /// (the sync dependences of the branch). Labels flow forward in reverse
    /// post-order; a block reached by two labels is a join and starts its own.
    /// Back edges are followed once, so a loop header is a join when different
    /// paths of a branch inside the loop reach it.
    /// Each join comes with the predecessors the branch's paths arrive
    /// through: a value coming from any other predecessor (a loop header's
    /// entry, for a branch inside the loop) is not chosen by the branch.
    pub fn joins(&self, branch: BlockId) -> BranchJoins {
        let n = self.block_count();
        let succs = &self.succs[branch.index()];
        if succs.len() < 2 {
            return BranchJoins { joins: Vec::new(), reached: Vec::new() };
        }
        let mut label: Vec<Option<BlockId>> = vec![None; n];
        let mut joins = Vec::new();
        for &s in succs {
            label[s.index()] = Some(s);
        }
        let start = self.rpo_index[branch.index()];
        for &x in &self.rpo[start + 1..] {
            let mut incoming: Option<BlockId> = if succs.contains(&x) { Some(x) } else { None };
            let mut join = false;
            for &p in &self.preds[x.index()] {
                if self.is_back_edge(p, x) || p == branch {
                    continue;
                }
                if let Some(l) = label[p.index()] {
                    match incoming {
                        None => incoming = Some(l),
                        Some(cur) if cur != l => join = true,
                        _ => {}
                    }
                }
            }
            if join {
                let from = self.preds[x.index()].iter().copied().filter(|&p| p == branch || (label[p.index()].is_some() && !self.is_back_edge(p, x))).collect();
                joins.push(Join { block: x, from });
                label[x.index()] = Some(x);
            } else if incoming.is_some() {
                label[x.index()] = incoming;
            }
        }
        // Loop headers of loops around the branch: labels arriving over back edges.
        for l in &self.loops {
            if !l.blocks.contains(&branch) {
                continue;
            }
            let mut arriving: Vec<BlockId> = Vec::new();
            let mut from = Vec::new();
            for &latch in &l.latches {
                if latch == branch {
                    arriving.push(l.header);
                } else if let Some(lb) = label[latch.index()] {
                    arriving.push(lb);
                } else {
                    continue;
                }
                from.push(latch);
            }
            arriving.sort();
            arriving.dedup();
            if arriving.len() > 1 && !joins.iter().any(|j| j.block == l.header) {
                joins.push(Join { block: l.header, from });
            }
        }
        BranchJoins { joins, reached: label.iter().map(Option::is_some).collect() }
    }

    /// The innermost loop containing `b`.
    pub fn innermost_loop(&self, b: BlockId) -> Option<&Loop> {
        self.loops_of[b.index()].last().map(|&i| &self.loops[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_ir::{Const, Op, Terminator, Type};
    use lockstep_source::{FileId, Span};

    fn sp() -> Span {
        Span::new(FileId(0), 0, 0)
    }

    /// bb0: if c → bb1 else bb2; bb1 → bb3; bb2 → bb3; bb3: loop header → bb4 | bb5; bb4 → bb3; bb5: return
    fn diamond_then_loop() -> Function {
        let mut f = Function::new("f", sp());
        let b: Vec<BlockId> = (0..6).map(|_| f.add_block(sp())).collect();
        let c = f.push(b[0], Op::Const(Const::Bool(true)), Type::Bool, sp());
        f.set_term(b[0], Terminator::Branch { cond: c, then_to: b[1], else_to: b[2] }, sp());
        f.set_term(b[1], Terminator::Jump(b[3]), sp());
        f.set_term(b[2], Terminator::Jump(b[3]), sp());
        f.set_term(b[3], Terminator::Branch { cond: c, then_to: b[4], else_to: b[5] }, sp());
        f.set_term(b[4], Terminator::Jump(b[3]), sp());
        f.set_term(b[5], Terminator::Return(None), sp());
        f
    }

    /// Dominance read from tree intervals agrees with walking up the
    /// immediate dominators, on random graphs (unreachable nodes included).
    #[test]
    fn interval_dominance_matches_the_idom_chain() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n) as usize
        };
        for _ in 0..200 {
            let n = 2 + next(14);
            let mut succs = vec![Vec::new(); n];
            for (b, out) in succs.iter_mut().enumerate() {
                for _ in 0..next(3) {
                    let s = next(n as u64);
                    if s != b || next(4) == 0 {
                        out.push(s);
                    }
                }
            }
            let mut preds = vec![Vec::new(); n];
            for (b, out) in succs.iter().enumerate() {
                out.iter().for_each(|&s| preds[s].push(b));
            }
            let t = DomTree::build(n, 0, &succs, &preds);
            let by_chain = |a: usize, b: usize| {
                if t.idom[b].is_none() {
                    return false;
                }
                let mut x = b;
                loop {
                    if x == a {
                        return true;
                    }
                    match t.idom(x) {
                        Some(p) => x = p,
                        None => return false,
                    }
                }
            };
            for a in 0..n {
                for b in 0..n {
                    assert_eq!(t.dominates(a, b), by_chain(a, b), "{a} dom {b} in {succs:?}");
                }
            }
        }
    }

    #[test]
    fn dominators_post_dominators_and_control_dependence() {
        let f = diamond_then_loop();
        let cfg = Cfg::new(&f);
        let b = |i: u32| BlockId(i);
        assert!(cfg.dominates(b(0), b(3)));
        assert!(!cfg.dominates(b(1), b(3)));
        assert!(cfg.dominates(b(3), b(4)));
        assert!(cfg.post_dominates(b(3), b(0)));
        assert!(!cfg.post_dominates(b(1), b(0)));
        assert_eq!(cfg.ipdom(b(0)), Some(b(3)));
        assert_eq!(cfg.ipdom(b(3)), Some(b(5)));
        assert_eq!(cfg.control_deps[1], vec![b(0)]);
        assert_eq!(cfg.control_deps[2], vec![b(0)]);
        // The loop body depends on the loop condition, and so does the header itself
        // (it runs once more than the body: a thread-dependent trip count varies both).
        assert_eq!(cfg.control_deps[4], vec![b(3)]);
        assert_eq!(cfg.control_deps[3], vec![b(3)]);
        assert!(cfg.control_deps[5].is_empty());
        assert_eq!(cfg.loops.len(), 1);
        assert_eq!(cfg.loops[0].header, b(3));
        assert_eq!(cfg.loops[0].blocks, vec![b(3), b(4)]);
        assert_eq!(cfg.loops[0].exiting, vec![b(3)]);
        assert!(cfg.is_back_edge(b(4), b(3)));
        assert_eq!(cfg.joins(b(0)).joins, vec![Join { block: b(3), from: vec![b(1), b(2)] }]);
        // The loop branch's paths (body, exit) never meet again.
        assert!(cfg.joins(b(3)).joins.is_empty());
    }

    #[test]
    fn a_branch_whose_one_side_returns_has_no_join() {
        // bb0: if c → bb1 (return) else bb2; bb2 → bb3 (loop: bb3 → bb4 → bb3 | bb5)
        let mut f = Function::new("f", sp());
        let b: Vec<BlockId> = (0..6).map(|_| f.add_block(sp())).collect();
        let c = f.push(b[0], Op::Const(Const::Bool(true)), Type::Bool, sp());
        f.set_term(b[0], Terminator::Branch { cond: c, then_to: b[1], else_to: b[2] }, sp());
        f.set_term(b[1], Terminator::Return(None), sp());
        f.set_term(b[2], Terminator::Jump(b[3]), sp());
        f.set_term(b[3], Terminator::Branch { cond: c, then_to: b[4], else_to: b[5] }, sp());
        f.set_term(b[4], Terminator::Jump(b[3]), sp());
        f.set_term(b[5], Terminator::Return(None), sp());
        let cfg = Cfg::new(&f);
        assert!(cfg.joins(b[0]).joins.is_empty());
    }

    #[test]
    fn continue_and_fallthrough_join_at_the_loop_header() {
        // bb0 → bb1 (header: → bb2 | bb5); bb2: if c → bb3 (continue → bb1) else bb4; bb4 → bb1
        let mut f = Function::new("f", sp());
        let b: Vec<BlockId> = (0..6).map(|_| f.add_block(sp())).collect();
        let c = f.push(b[0], Op::Const(Const::Bool(true)), Type::Bool, sp());
        f.set_term(b[0], Terminator::Jump(b[1]), sp());
        f.set_term(b[1], Terminator::Branch { cond: c, then_to: b[2], else_to: b[5] }, sp());
        f.set_term(b[2], Terminator::Branch { cond: c, then_to: b[3], else_to: b[4] }, sp());
        f.set_term(b[3], Terminator::Jump(b[1]), sp());
        f.set_term(b[4], Terminator::Jump(b[1]), sp());
        f.set_term(b[5], Terminator::Return(None), sp());
        let cfg = Cfg::new(&f);
        // The loop's entry edge (from bb0) is not one of the branch's paths.
        assert_eq!(cfg.joins(b[2]).joins, vec![Join { block: b[1], from: vec![b[3], b[4]] }]);
    }

    #[test]
    fn infinite_loop_still_gets_post_dominators() {
        let mut f = Function::new("f", sp());
        let b0 = f.add_block(sp());
        let b1 = f.add_block(sp());
        f.set_term(b0, Terminator::Jump(b1), sp());
        f.set_term(b1, Terminator::Jump(b1), sp());
        let cfg = Cfg::new(&f);
        assert_eq!(cfg.ipdom(b0), Some(b1));
        assert_eq!(cfg.loops.len(), 1);
    }
}
