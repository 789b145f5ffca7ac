//! The per-space dataflow. Each block is cut by its live sync points into
//! segments; `above_in` holds what reaches a block's entry from the previous
//! sync points along every path (loop back edges included), `below_out` what
//! follows its exit up to the next ones. Facts only grow when a barrier goes
//! away, so removal updates them incrementally from the current fixed point.

use crate::access::{Alloc, Effect, HazardOracle, Space};
use crate::Flags;
use lockstep_ir::*;
use std::collections::{HashMap, VecDeque};

/// A set of access ids, sorted.
pub(crate) type Set = Vec<u32>;

/// Adds `src` to `dst`; true when `dst` grew.
pub(crate) fn union_into(dst: &mut Set, src: &[u32]) -> bool {
    if src.iter().all(|x| dst.binary_search(x).is_ok()) {
        return false;
    }
    let mut out = Vec::with_capacity(dst.len() + src.len());
    let (mut i, mut j) = (0, 0);
    while i < dst.len() && j < src.len() {
        match dst[i].cmp(&src[j]) {
            std::cmp::Ordering::Less => {
                out.push(dst[i]);
                i += 1
            }
            std::cmp::Ordering::Greater => {
                out.push(src[j]);
                j += 1
            }
            std::cmp::Ordering::Equal => {
                out.push(dst[i]);
                i += 1;
                j += 1
            }
        }
    }
    out.extend_from_slice(&dst[i..]);
    out.extend_from_slice(&src[j..]);
    *dst = out;
    true
}

fn union(a: &[u32], b: &[u32]) -> Set {
    let mut out = a.to_vec();
    union_into(&mut out, b);
    out
}

/// An entry of the access table of one space.
#[derive(Clone, Copy, Debug)]
struct Access {
    /// The load/store/atomic, when the access is one (the oracle is asked only about those).
    mem: Option<Value>,
    read: bool,
    write: bool,
    alloc: Alloc,
}

/// The table id standing for "read and write of anything": opaque context.
const TOP: u32 = 0;
/// In the category modes every access maps to one of three ids: TOP (read+write), read, write.
const READ: u32 = 1;
const WRITE: u32 = 2;

/// Function-wide facts shared by both spaces and by every re-analysis.
pub(crate) struct Prep<'a> {
    pub f: &'a Function,
    pub preds: Vec<Vec<usize>>,
    pub succs: Vec<Vec<usize>>,
    /// Blocks whose end leaves the function (the caller's context follows).
    pub returns: Vec<bool>,
    pub kernel: bool,
    /// Visible effects of each instruction, by instruction index.
    pub effects: Vec<Vec<Effect>>,
}

impl Prep<'_> {
    fn entry_has_preds(&self) -> bool {
        self.preds.first().is_some_and(|p| !p.is_empty())
    }
}

struct Node {
    block: usize,
    prev: Option<usize>,
    next: Option<usize>,
    /// Accesses from this sync point to the next one in the block, or to the block's end.
    after: Set,
}

pub(crate) struct SpaceFlow {
    table: Vec<Access>,
    precise: bool,
    inter_block: bool,
    /// Accesses from the block start to its first live sync point (the whole block when none).
    head: Vec<Set>,
    first: Vec<Option<usize>>,
    last: Vec<Option<usize>>,
    nodes: Vec<Node>,
    node_of: HashMap<Value, usize>,
    above_in: Vec<Set>,
    below_out: Vec<Set>,
    /// Worklist marks, all false between propagations (kept to avoid an
    /// allocation per removal, which would make removals cost O(blocks)).
    queued: Vec<bool>,
    forced: Vec<bool>,
}

impl SpaceFlow {
    /// Builds the segments and solves the dataflow. `is_sync` says which
    /// barriers are sync points of this space.
    pub fn build(prep: &Prep, space: Space, precise: bool, inter_block: bool, is_sync: &dyn Fn(Value) -> bool) -> SpaceFlow {
        let f = prep.f;
        let nb = f.blocks.len();
        let mut table = vec![Access { mem: None, read: true, write: true, alloc: Alloc::Any }];
        if !precise {
            table.push(Access { mem: None, read: true, write: false, alloc: Alloc::Any });
            table.push(Access { mem: None, read: false, write: true, alloc: Alloc::Any });
        }
        let mut flow = SpaceFlow {
            table,
            precise,
            inter_block,
            head: vec![Vec::new(); nb],
            first: vec![None; nb],
            last: vec![None; nb],
            nodes: Vec::new(),
            node_of: HashMap::new(),
            above_in: vec![Vec::new(); nb],
            below_out: vec![Vec::new(); nb],
            queued: vec![false; nb],
            forced: vec![false; nb],
        };
        for b in 0..nb {
            let mut cur: Option<usize> = None;
            for &v in &f.blocks[b].insts {
                if is_sync(v) {
                    let n = flow.nodes.len();
                    flow.nodes.push(Node { block: b, prev: cur, next: None, after: Vec::new() });
                    match cur {
                        Some(p) => flow.nodes[p].next = Some(n),
                        None => flow.first[b] = Some(n),
                    }
                    flow.node_of.insert(v, n);
                    cur = Some(n);
                    continue;
                }
                for e in prep.effects.get(v.index()).into_iter().flatten().filter(|e| e.space == space) {
                    let id = if precise {
                        let mem = f.inst(v).op.mem_ref().map(|_| v);
                        flow.table.push(Access { mem, read: e.read, write: e.write, alloc: e.alloc });
                        flow.table.len() as u32 - 1
                    } else {
                        match (e.read, e.write) {
                            (true, true) => TOP,
                            (true, false) => READ,
                            (false, true) => WRITE,
                            (false, false) => continue,
                        }
                    };
                    let seg = match cur {
                        Some(n) => &mut flow.nodes[n].after,
                        None => &mut flow.head[b],
                    };
                    union_into(seg, &[id]);
                }
            }
            flow.last[b] = cur;
        }
        // Outside a kernel the caller's accesses before and after are unknown.
        let boundary: Set = if prep.kernel { Vec::new() } else { vec![TOP] };
        for b in 0..nb {
            // Without propagation an entry block that is also a loop header sees "anything".
            let entry = b == 0 && (inter_block || !prep.entry_has_preds());
            flow.above_in[b] = if entry {
                boundary.clone()
            } else if inter_block {
                Vec::new()
            } else {
                vec![TOP]
            };
            flow.below_out[b] = if prep.returns[b] {
                boundary.clone()
            } else if !inter_block && !prep.succs[b].is_empty() {
                vec![TOP]
            } else {
                Vec::new()
            };
        }
        if inter_block {
            let all: Vec<usize> = (0..nb).collect();
            flow.propagate_forward(prep, &all);
            flow.propagate_backward(prep, &all);
        }
        flow
    }

    fn above_out(&self, b: usize) -> Set {
        match self.last[b] {
            Some(l) => self.nodes[l].after.clone(),
            None => union(&self.above_in[b], &self.head[b]),
        }
    }

    fn below_in(&self, b: usize) -> Set {
        match self.first[b] {
            Some(_) => self.head[b].clone(),
            None => union(&self.head[b], &self.below_out[b]),
        }
    }

    /// Pushes the above-facts of `seeds` to their successors until nothing grows.
    fn propagate_forward(&mut self, prep: &Prep, seeds: &[usize]) {
        let mut queue: VecDeque<usize> = seeds.iter().copied().collect();
        for &b in seeds {
            self.queued[b] = true;
            self.forced[b] = true;
        }
        while let Some(b) = queue.pop_front() {
            self.queued[b] = false;
            // A block with a sync point passes on its own tail, which a grown entry fact does not change.
            let force = std::mem::take(&mut self.forced[b]);
            if self.last[b].is_some() && !force {
                continue;
            }
            let out = self.above_out(b);
            for &s in &prep.succs[b] {
                if union_into(&mut self.above_in[s], &out) && !self.queued[s] {
                    self.queued[s] = true;
                    queue.push_back(s);
                }
            }
        }
    }

    fn propagate_backward(&mut self, prep: &Prep, seeds: &[usize]) {
        let mut queue: VecDeque<usize> = seeds.iter().copied().collect();
        for &b in seeds {
            self.queued[b] = true;
            self.forced[b] = true;
        }
        while let Some(b) = queue.pop_front() {
            self.queued[b] = false;
            let force = std::mem::take(&mut self.forced[b]);
            if self.first[b].is_some() && !force {
                continue;
            }
            let inn = self.below_in(b);
            for &p in &prep.preds[b] {
                if union_into(&mut self.below_out[p], &inn) && !self.queued[p] {
                    self.queued[p] = true;
                    queue.push_back(p);
                }
            }
        }
    }

    pub fn has(&self, v: Value) -> bool {
        self.node_of.contains_key(&v)
    }

    /// Deletes a sync point: its two segments merge and the facts grow from there.
    pub fn remove(&mut self, prep: &Prep, v: Value) {
        let Some(k) = self.node_of.remove(&v) else { return };
        let (b, prev, next) = (self.nodes[k].block, self.nodes[k].prev, self.nodes[k].next);
        let after = std::mem::take(&mut self.nodes[k].after);
        match prev {
            Some(p) => {
                union_into(&mut self.nodes[p].after, &after);
                self.nodes[p].next = next;
            }
            None => {
                union_into(&mut self.head[b], &after);
                self.first[b] = next;
            }
        }
        match next {
            Some(n) => self.nodes[n].prev = prev,
            None => self.last[b] = prev,
        }
        if self.inter_block {
            self.propagate_forward(prep, &[b]);
            self.propagate_backward(prep, &[b]);
        }
    }

    fn above(&self, v: Value) -> Set {
        let n = &self.nodes[self.node_of[&v]];
        match n.prev {
            Some(p) => self.nodes[p].after.clone(),
            None => union(&self.above_in[n.block], &self.head[n.block]),
        }
    }

    fn below(&self, v: Value) -> Set {
        let n = &self.nodes[self.node_of[&v]];
        match n.next {
            Some(_) => n.after.clone(),
            None => union(&n.after, &self.below_out[n.block]),
        }
    }

    fn kinds(&self, set: &[u32]) -> (bool, bool) {
        set.iter().fold((false, false), |(r, w), &id| {
            let a = &self.table[id as usize];
            (r || a.read, w || a.write)
        })
    }

    pub fn flags(&self, v: Value) -> Flags {
        let (read_above, write_above) = self.kinds(&self.above(v));
        let (read_below, write_below) = self.kinds(&self.below(v));
        Flags { read_above, write_above, read_below, write_below }
    }

    /// A pair of an access above and one below that forms RAW, WAR or WAW
    /// (only WAR with `reads_then_writes`): the loads, stores or atomics when
    /// the pair is made of them (precise mode), None for a call or a category.
    pub fn hazard(&self, f: &Function, v: Value, oracle: &dyn HazardOracle, reads_then_writes: bool) -> Option<(Option<Value>, Option<Value>)> {
        let flags = self.flags(v);
        if !(if reads_then_writes { flags.read_above && flags.write_below } else { flags.hazard() }) {
            return None;
        }
        if !self.precise {
            return Some((None, None));
        }
        let (above, below) = (self.above(v), self.below(v));
        above.iter().find_map(|&x| {
            let a = self.table[x as usize];
            below.iter().find_map(|&y| {
                let b = self.table[y as usize];
                let kinds = if reads_then_writes { a.read && b.write } else { (a.write && (b.read || b.write)) || (a.read && b.write) };
                let conflict = kinds
                    && a.alloc.overlaps(b.alloc)
                    && match (a.mem, b.mem) {
                        (Some(e), Some(l)) => oracle.conflicts(f, e, l),
                        _ => true,
                    };
                conflict.then_some((a.mem, b.mem))
            })
        })
    }

    /// No access between this sync point and a neighbouring one in its block
    /// (the kernel's start or end counts as a neighbour).
    pub fn locally_redundant(&self, prep: &Prep, v: Value) -> bool {
        let n = &self.nodes[self.node_of[&v]];
        let before_empty = match n.prev {
            Some(p) => self.nodes[p].after.is_empty(),
            None => prep.kernel && n.block == 0 && !prep.entry_has_preds() && self.head[0].is_empty(),
        };
        let after_empty = n.after.is_empty() && (n.next.is_some() || (prep.kernel && prep.returns[n.block]));
        before_empty || after_empty
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_keeps_sets_sorted_and_reports_growth() {
        let mut a = vec![1, 4, 9];
        assert!(!union_into(&mut a, &[4, 9]));
        assert!(union_into(&mut a, &[0, 5, 10]));
        assert_eq!(a, vec![0, 1, 4, 5, 9, 10]);
        assert!(!union_into(&mut a, &[]));
    }
}
