//! SSA construction straight from the syntax tree, after Braun et al.,
//! "Simple and Efficient Construction of Static Single Assignment Form":
//! variables are read and written per block; unsealed blocks get placeholder
//! phis that are completed when all predecessors are known; trivial phis are
//! removed at the end so joins of identical values do not look divergent.

use lockstep_ir::{BlockId, ExitKind, Function, Op, Terminator, Type, Value};
use lockstep_source::Span;
use rustc_hash::{FxHashMap, FxHashSet};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Var(pub u32);

/// Operations one kernel may have after inlining. Real kernels stay far
/// below; heavily templated code that inlines without bound would otherwise
/// exhaust memory building phis.
pub const MAX_KERNEL_OPERATIONS: usize = 400_000;

/// Blocks [`Ssa::known_incoming`] looks back through at most.
const MAX_PEEKED_BLOCKS: usize = 256;

#[derive(Default)]
pub struct Ssa {
    /// Set once the function outgrew [`MAX_KERNEL_OPERATIONS`]: reads stop
    /// making phis, and the lowering abandons the kernel.
    pub too_large: bool,
    var_types: Vec<Type>,
    var_names: Vec<String>,
    defs: FxHashMap<(Var, BlockId), Value>,
    sealed: Vec<bool>,
    preds: Vec<Vec<BlockId>>,
    incomplete: FxHashMap<BlockId, Vec<(Var, Value)>>,
    /// Blocks holding code that follows a `return`, `break` or `continue`.
    unreachable: FxHashSet<BlockId>,
}

impl Ssa {
    pub fn new_var(&mut self, ty: Type, name: &str) -> Var {
        self.var_types.push(ty);
        self.var_names.push(name.to_string());
        Var(self.var_types.len() as u32 - 1)
    }

    pub fn var_type(&self, v: Var) -> Type {
        self.var_types[v.0 as usize]
    }

    /// A new block of `f`, registered.
    pub fn new_block(&mut self, f: &mut Function, span: Span) -> BlockId {
        let b = f.add_block(span);
        self.add_block();
        b
    }

    /// Ends block `cur` with `term` and returns a fresh block for the code
    /// after it. Code after `return`/`break` adds no edges, so it cannot
    /// feed phis: that block is sealed with no predecessors, and a block
    /// already unreachable ends in `Unreachable`.
    pub fn terminate(&mut self, f: &mut Function, cur: BlockId, term: Terminator, span: Span, exit: Option<ExitKind>) -> BlockId {
        let term = if self.unreachable.contains(&cur) { Terminator::Unreachable } else { term };
        for s in term.successors() {
            self.add_edge(cur, s);
        }
        f.set_term(cur, term, span);
        f.block_mut(cur).exit = exit;
        let dead = self.new_block(f, span);
        self.seal(f, dead);
        dead
    }

    /// Registers a block created in `f`.
    pub fn add_block(&mut self) {
        self.sealed.push(false);
        self.preds.push(Vec::new());
    }

    pub fn add_edge(&mut self, from: BlockId, to: BlockId) {
        let p = &mut self.preds[to.index()];
        if !p.contains(&from) {
            p.push(from);
        }
    }

    pub fn write(&mut self, var: Var, block: BlockId, value: Value) {
        self.defs.insert((var, block), value);
    }

    pub fn read(&mut self, f: &mut Function, var: Var, block: BlockId, span: Span) -> Value {
        // Walk single-predecessor chains iteratively: long straight-line code must not recurse.
        let mut chain = Vec::new();
        let mut b = block;
        let value = loop {
            if let Some(&v) = self.defs.get(&(var, b)) {
                break v;
            }
            if !self.sealed[b.index()] {
                let phi = self.new_phi(f, var, b, span);
                self.incomplete.entry(b).or_default().push((var, phi));
                self.defs.insert((var, b), phi);
                break phi;
            }
            // A cycle of single-predecessor blocks is code nothing reaches
            // (`for (;;)` after a `return`): the variable has no value there.
            let unreachable_cycle = chain.len() > self.preds.len();
            match self.preds[b.index()].len() {
                _ if unreachable_cycle => {
                    let undef = f.add_inst(Op::Undef, self.var_type(var), span);
                    f.block_mut(b).insts.insert(0, undef);
                    self.defs.insert((var, b), undef);
                    break undef;
                }
                0 => {
                    let undef = f.add_inst(Op::Undef, self.var_type(var), span);
                    f.block_mut(b).insts.insert(0, undef);
                    self.defs.insert((var, b), undef);
                    break undef;
                }
                1 => {
                    chain.push(b);
                    b = self.preds[b.index()][0];
                }
                _ => {
                    let phi = self.new_phi(f, var, b, span);
                    self.defs.insert((var, b), phi);
                    self.fill_phi(f, var, phi, b, span);
                    break phi;
                }
            }
        };
        for c in chain {
            self.defs.insert((var, c), value);
        }
        value
    }

    fn new_phi(&mut self, f: &mut Function, var: Var, block: BlockId, span: Span) -> Value {
        if f.insts.len() > MAX_KERNEL_OPERATIONS {
            self.too_large = true;
        }
        let op = if self.too_large { Op::Undef } else { Op::Phi(Vec::new()) };
        let phi = f.add_inst(op, self.var_type(var), span);
        // A temporary (a short-circuit `&&`'s value) has no name to give.
        let name = &self.var_names[var.0 as usize];
        f.inst_mut(phi).name = (!name.is_empty()).then(|| name.clone());
        f.block_mut(block).insts.insert(0, phi);
        phi
    }

    fn fill_phi(&mut self, f: &mut Function, var: Var, phi: Value, block: BlockId, span: Span) {
        if self.too_large {
            return;
        }
        let preds = self.preds[block.index()].clone();
        let mut incoming = Vec::with_capacity(preds.len());
        for p in preds {
            incoming.push((p, self.read(f, var, p, span)));
        }
        f.inst_mut(phi).op = Op::Phi(incoming);
    }

    /// All predecessors of `block` are known: complete its placeholder phis.
    pub fn seal(&mut self, f: &mut Function, block: BlockId) {
        if self.sealed[block.index()] {
            return;
        }
        self.sealed[block.index()] = true;
        // No edge reaches it (the join of branches that all return): code in
        // it is dead, and adds no edges either.
        if self.preds[block.index()].is_empty() {
            self.unreachable.insert(block);
        }
        for (var, phi) in self.incomplete.remove(&block).unwrap_or_default() {
            let span = f.inst(phi).span;
            self.fill_phi(f, var, phi, block, span);
        }
    }

    /// Whether `phi` waits for its block's predecessors (its operands are not all known yet).
    pub fn is_open_phi(&self, phi: Value) -> bool {
        self.incomplete.values().any(|list| list.iter().any(|&(_, p)| p == phi))
    }

    /// The values an open phi receives from the predecessors known so far
    /// (a loop's entry edge), read without making phis.
    pub fn known_incoming(&self, phi: Value) -> Vec<Value> {
        let Some((block, var)) = self.incomplete.iter().find_map(|(b, list)| list.iter().find(|&&(_, p)| p == phi).map(|&(v, _)| (*b, v))) else {
            return Vec::new();
        };
        self.preds[block.index()].iter().flat_map(|&p| self.peek(var, p)).collect()
    }

    /// The values `var` may have at the end of `block`, found by following
    /// predecessors back to definitions without making phis (through the
    /// joins of earlier loops and branches). Only the predecessors known so
    /// far are followed: the caller checks its open phi again once complete.
    fn peek(&self, var: Var, block: BlockId) -> Vec<Value> {
        let (mut seen, mut work, mut found) = (FxHashSet::default(), vec![block], Vec::new());
        while let Some(b) = work.pop() {
            if !seen.insert(b) {
                continue;
            }
            if seen.len() > MAX_PEEKED_BLOCKS {
                return Vec::new();
            }
            if let Some(&v) = self.defs.get(&(var, b)) {
                if !found.contains(&v) {
                    found.push(v);
                }
                continue;
            }
            work.extend(self.preds[b.index()].iter().copied());
        }
        found
    }

    /// Seals a function's entry block, which no edge reaches but runs.
    pub fn seal_entry(&mut self, block: BlockId) {
        self.sealed[block.index()] = true;
    }

    /// Seals every block still open (after lowering): every phi is complete.
    pub fn seal_all(&mut self, f: &mut Function) {
        for b in 0..f.blocks.len() {
            self.seal(f, BlockId(b as u32));
        }
    }

    /// Seals every block still open (after lowering) and removes trivial phis.
    pub fn finish(&mut self, f: &mut Function) {
        self.seal_all(f);
        remove_trivial_phis(f);
    }
}

/// Replaces phis whose incoming values are all one value (or the phi itself)
/// by that value, to a fixed point, and drops them from their blocks.
pub fn remove_trivial_phis(f: &mut Function) {
    let mut replace: Vec<Option<Value>> = vec![None; f.insts.len()];
    fn find(replace: &[Option<Value>], mut v: Value) -> Value {
        let mut steps = 0;
        while let Some(r) = replace.get(v.index()).copied().flatten() {
            v = r;
            steps += 1;
            if steps > replace.len() {
                break;
            }
        }
        v
    }
    loop {
        let mut changed = false;
        for b in 0..f.blocks.len() {
            for i in 0..f.blocks[b].insts.len() {
                let v = f.blocks[b].insts[i];
                if replace[v.index()].is_some() {
                    continue;
                }
                let Op::Phi(inc) = &f.inst(v).op else { continue };
                let mut same: Option<Value> = None;
                let mut trivial = true;
                for &(_, x) in inc {
                    let x = find(&replace, x);
                    if x == v || Some(x) == same {
                        continue;
                    }
                    if same.is_some() {
                        trivial = false;
                        break;
                    }
                    same = Some(x);
                }
                if trivial {
                    if let Some(s) = same {
                        replace[v.index()] = Some(s);
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    if replace.iter().all(Option::is_none) {
        return;
    }
    for inst in f.insts.iter_mut() {
        inst.op.map_operands(|v| find(&replace, v));
    }
    for block in f.blocks.iter_mut() {
        block.term.map_operands(|v| find(&replace, v));
        block.insts.retain(|v| replace[v.index()].is_none());
    }
}
