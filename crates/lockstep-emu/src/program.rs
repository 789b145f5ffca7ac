//! Lowering of a flat IR function into the executable form: one dense code
//! array (blocks laid out one after another), register operands as indices
//! into a per-thread register file indexed by `Value`, constants and
//! parameters pre-materialised in a register template, and phis turned into
//! parallel copies on CFG edges. Loops are found once (back edges by
//! dominance) so threads can count iterations of their innermost loop.

use crate::value::{self, make_ptr, Ty};
use lockstep_ir::*;
use lockstep_source::Span;

#[derive(Clone, Copy, Debug)]
pub(crate) enum Base {
    /// A statically known allocation.
    Alloc(u32),
    /// A pointer held in a register.
    Ptr(u32),
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Mem {
    pub base: Base,
    pub idx: u32,
    pub idx_ty: Ty,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct BarrierInfo {
    pub orders_shared: bool,
    pub orders_device: bool,
    pub reduce: Option<BarrierReduce>,
    pub pred: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Trap {
    OpaqueCall,
    Unreachable,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Code {
    Un { op: UnOp, ty: Ty, d: u32, a: u32 },
    Bin { op: BinOp, ty: Ty, d: u32, a: u32, b: u32 },
    Cmp { op: CmpOp, ty: Ty, d: u32, a: u32, b: u32 },
    Select { d: u32, c: u32, a: u32, b: u32 },
    Convert { from: Ty, to: Ty, d: u32, a: u32 },
    Math { f: MathFn, arg_ty: Ty, ty: Ty, d: u32, args: [u32; 3] },
    Load { d: u32, m: Mem },
    Store { m: Mem, v: u32 },
    /// `overwrite`: an exchange whose old value nobody reads (an atomic store).
    Atomic { op: AtomicOp, ty: Ty, d: u32, m: Mem, args: [u32; 2], nargs: u8, overwrite: bool },
    AddrOf { d: u32, base: Base, idx: u32, idx_ty: Ty },
    PtrAdd { d: u32, p: u32, idx: u32, idx_ty: Ty },
    /// A group-wide execution barrier.
    Barrier { d: u32, info: BarrierInfo },
    Wave { op: WaveOp, ty: Ty, rty: Ty, d: u32, args: [u32; 2], nargs: u8 },
    /// A wave-level barrier (`__syncwarp`): the wave's active lanes meet here.
    WaveSync,
    Jump { edge: u32 },
    Branch { c: u32, t: u32, f: u32 },
    Switch { v: u32, mask: u64, cases: (u32, u32), default: u32 },
    Return,
    Trap(Trap),
}

/// A CFG edge: phi copies to perform and loop bookkeeping.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub target_pc: u32,
    pub target_block: u32,
    pub copies: (u32, u32),
    /// Loops left by taking this edge (innermost first).
    pub pops: u8,
    /// Back edge of the innermost remaining loop: its iteration count grows.
    pub back: bool,
    /// Entering loop `n` from outside (through its header).
    pub enter: Option<u32>,
}

pub(crate) struct Loop {
    /// Where to point when naming the loop (its condition, or the header's terminator).
    pub span: Span,
}

pub(crate) struct Program {
    pub code: Vec<Code>,
    /// IR value of each code slot (terminators: `NO_INST`).
    pub code_inst: Vec<u32>,
    /// Source span of each code slot.
    pub code_span: Vec<Span>,
    pub edges: Vec<Edge>,
    pub copies: Vec<(u32, u32)>,
    pub cases: Vec<(u64, u32)>,
    pub nregs: usize,
    /// Initial register file: constants, parameters, undefs.
    pub template: Vec<u64>,
    /// Per-thread values set at thread start.
    pub builtins: Vec<(u32, Builtin)>,
    pub entry_pc: u32,
    /// Values materialised at start, by block (for tracing which ones "executed").
    pub block_defs: Vec<Vec<u32>>,
    pub entry_block: u32,
    pub loops: Vec<Loop>,
    /// Loops around each block, outermost first.
    pub block_loops: Vec<Vec<u32>>,
    pub max_loop_depth: usize,
    /// Which code can still reach which, for wave reconvergence (None without wave ops).
    pub reach: Option<Reach>,
}

/// Reachability between code slots, so lanes of a wave that diverged run a
/// wave operation together once the lanes behind have caught up.
pub(crate) struct Reach {
    code_block: Vec<u32>,
    /// `strict[a]` has bit `b` when block `b` is reachable from `a` in one or more edges.
    strict: Vec<Vec<u64>>,
}

impl Reach {
    fn new(f: &Function, code_block: Vec<u32>) -> Reach {
        let nb = f.blocks.len();
        let words = nb.div_ceil(64);
        let strict = (0..nb)
            .map(|a| {
                let mut bits = vec![0u64; words];
                let mut stack: Vec<usize> = f.block(BlockId(a as u32)).term.successors().iter().map(|b| b.index()).collect();
                while let Some(b) = stack.pop() {
                    if bits[b / 64] & (1 << (b % 64)) != 0 {
                        continue;
                    }
                    bits[b / 64] |= 1 << (b % 64);
                    stack.extend(f.block(BlockId(b as u32)).term.successors().iter().map(|s| s.index()));
                }
                bits
            })
            .collect();
        Reach { code_block, strict }
    }

    /// True when a thread at code slot `from` can later arrive at `to`.
    pub fn reaches(&self, from: u32, to: u32) -> bool {
        let (a, b) = (self.code_block[from as usize] as usize, self.code_block[to as usize] as usize);
        (a == b && to > from) || self.strict[a][b / 64] & (1 << (b % 64)) != 0
    }
}

pub(crate) const NO_INST: u32 = u32::MAX;

/// Per allocation, whether some store or read-modify-write atomic of `f` may
/// write it, following pointers back to where they point. Accesses to device
/// buffers nothing writes cannot race, so race detection skips them. A
/// pointer whose origin is not visible (loaded, converted) counts as
/// pointing anywhere.
pub(crate) fn written_allocs(f: &Function, ids: &AllocIds, n_allocs: usize) -> Vec<bool> {
    let mut written = vec![false; n_allocs];
    for inst in &f.insts {
        let m = match &inst.op {
            Op::Store(m, _) => m,
            Op::Atomic(op, m, _) if *op != AtomicOp::Load => m,
            _ => continue,
        };
        let mut roots = Vec::new();
        if !pointer_origins(f, m.root, &mut roots, &mut Vec::new()) {
            return vec![true; n_allocs];
        }
        for root in roots {
            if let Base::Alloc(a) = ids.base(root) {
                if let Some(w) = written.get_mut(a as usize) {
                    *w = true;
                }
            }
        }
    }
    written
}

/// The allocation roots `root` may point into; false when one is not visible.
fn pointer_origins(f: &Function, root: Root, out: &mut Vec<Root>, seen: &mut Vec<Value>) -> bool {
    let Root::Ptr(v) = root else {
        out.push(root);
        return true;
    };
    if seen.contains(&v) {
        return true;
    }
    seen.push(v);
    match &f.inst(v).op {
        Op::AddrOf(r, _) => pointer_origins(f, *r, out, seen),
        Op::PtrAdd(p, _) => pointer_origins(f, Root::Ptr(*p), out, seen),
        Op::Param(i) => {
            out.push(Root::Param(*i));
            true
        }
        Op::Phi(ins) => ins.iter().all(|(_, p)| pointer_origins(f, Root::Ptr(*p), out, seen)),
        Op::Select(_, a, b) => pointer_origins(f, Root::Ptr(*a), out, seen) && pointer_origins(f, Root::Ptr(*b), out, seen),
        _ => false,
    }
}

/// How roots map to allocation ids (see `layout`).
pub(crate) struct AllocIds {
    pub n_globals: u32,
    pub n_locals: u32,
}

impl AllocIds {
    pub fn base(&self, root: Root) -> Base {
        match root {
            Root::Global(g) => Base::Alloc(g.0),
            Root::Local(l) => Base::Alloc(self.n_globals + l.0),
            Root::Param(p) => Base::Alloc(self.n_globals + self.n_locals + p),
            Root::Ptr(v) => Base::Ptr(v.0),
        }
    }
}

fn const_bits(c: &Const, ty: Ty) -> u64 {
    match *c {
        Const::Int(i) if ty.is_float() => value::from_f64(ty, i as i64 as f64),
        Const::Int(i) if ty == Ty::Bool => (i != 0) as u64,
        Const::Int(i) => i & ty.mask(),
        Const::Float(x) => value::from_f64(ty, x),
        Const::Bool(b) => b as u64,
    }
}

/// Lowers `f`. `param_bits[i]` is the value of scalar parameter `i`
/// (pointer parameters get a pointer to their allocation here).
pub(crate) fn lower(f: &Function, ids: &AllocIds, param_bits: &[u64]) -> Program {
    let n = f.insts.len();
    let ty_of = |v: Value| Ty::of(f.inst(v).ty);
    let mut template = vec![0u64; n];
    let mut builtins = Vec::new();
    let mut block_defs = vec![Vec::new(); f.blocks.len()];
    let loops = find_loops(f);

    let mut code = Vec::new();
    let mut code_inst = Vec::new();
    let mut code_span = Vec::new();
    let mut code_block = Vec::new();
    let mut block_pc = vec![0u32; f.blocks.len()];
    // Terminators refer to edges, which need block_pc: patch after layout.
    let mut pending_edges: Vec<(u32, u32)> = Vec::new(); // (from block, to block) per edge id
    let mut cases = Vec::new();
    let new_edge = |from: BlockId, to: BlockId, pending: &mut Vec<(u32, u32)>| -> u32 {
        pending.push((from.0, to.0));
        pending.len() as u32 - 1
    };

    let used = f.used_values();
    for b in f.block_ids() {
        block_pc[b.index()] = code.len() as u32;
        let block = f.block(b);
        for &v in &block.insts {
            let inst = f.inst(v);
            let d = v.0;
            let ty = ty_of(v);
            let c = match &inst.op {
                Op::Phi(_) => continue,
                Op::Const(c) => {
                    template[v.index()] = const_bits(c, ty);
                    block_defs[b.index()].push(d);
                    continue;
                }
                Op::Undef => {
                    block_defs[b.index()].push(d);
                    continue;
                }
                Op::Param(i) => {
                    template[v.index()] = match inst.ty {
                        Type::Ptr(_) => make_ptr(match ids.base(Root::Param(*i)) {
                            Base::Alloc(a) => a,
                            Base::Ptr(_) => unreachable!("parameter roots are allocations"),
                        }, 0),
                        _ => param_bits.get(*i as usize).copied().unwrap_or(0),
                    };
                    block_defs[b.index()].push(d);
                    continue;
                }
                Op::Builtin(bi) => {
                    builtins.push((d, *bi));
                    block_defs[b.index()].push(d);
                    continue;
                }
                Op::Unary(op, a) => Code::Un { op: *op, ty: ty_of(*a), d, a: a.0 },
                Op::Binary(op, a, bb) => Code::Bin { op: *op, ty, d, a: a.0, b: bb.0 },
                Op::Cmp(op, a, bb) => Code::Cmp { op: *op, ty: ty_of(*a), d, a: a.0, b: bb.0 },
                Op::Select(c, a, bb) => Code::Select { d, c: c.0, a: a.0, b: bb.0 },
                Op::Convert(a) => Code::Convert { from: ty_of(*a), to: ty, d, a: a.0 },
                Op::Math(mf, args) => {
                    let first = args.first().map(|a| a.0).unwrap_or(d);
                    let arg = |i: usize| args.get(i).map(|a| a.0).unwrap_or(first);
                    let arg_ty = args.first().map(|&a| ty_of(a)).unwrap_or(ty);
                    Code::Math { f: *mf, arg_ty, ty, d, args: [arg(0), arg(1), arg(2)] }
                }
                Op::Load(m) => Code::Load { d, m: mem(ids, f, m) },
                Op::Store(m, val) => Code::Store { m: mem(ids, f, m), v: val.0 },
                Op::Atomic(op, m, args) => {
                    let arg = |i: usize| args.get(i).map(|a| a.0).unwrap_or(d);
                    let overwrite = *op == AtomicOp::Exchange && !used[v.index()];
                    Code::Atomic { op: *op, ty, d, m: mem(ids, f, m), args: [arg(0), arg(1)], nargs: args.len().min(2) as u8, overwrite }
                }
                Op::AddrOf(root, idx) => Code::AddrOf { d, base: ids.base(*root), idx: idx.0, idx_ty: ty_of(*idx) },
                Op::PtrAdd(p, idx) => Code::PtrAdd { d, p: p.0, idx: idx.0, idx_ty: ty_of(*idx) },
                Op::Barrier(bar, pred) => {
                    // Fences do not stop the thread: the emulator's memory is
                    // sequentially consistent within a group.
                    if bar.exec == Scope::Wave {
                        code.push(Code::WaveSync);
                        code_inst.push(d);
                        code_span.push(inst.span);
                        code_block.push(b.0);
                        continue;
                    }
                    if !bar.syncs_group() {
                        continue;
                    }
                    let orders = |s: MemSpace| bar.mem >= Scope::Group && bar.spaces.contains(s);
                    Code::Barrier {
                        d,
                        info: BarrierInfo {
                            orders_shared: orders(MemSpace::Shared),
                            orders_device: orders(MemSpace::Device),
                            reduce: bar.reduce,
                            pred: pred.map(|p| p.0),
                        },
                    }
                }
                Op::Wave(op, args) => {
                    let arg = |i: usize| args.get(i).map(|a| a.0).unwrap_or(d);
                    let arg_ty = args.first().map(|&a| ty_of(a)).unwrap_or(ty);
                    Code::Wave { op: *op, ty: arg_ty, rty: ty, d, args: [arg(0), arg(1)], nargs: args.len().min(2) as u8 }
                }
                Op::Call(..) => Code::Trap(Trap::OpaqueCall),
            };
            code.push(c);
            code_inst.push(d);
            code_span.push(inst.span);
            code_block.push(b.0);
        }
        let term = match &block.term {
            Terminator::Jump(t) => Code::Jump { edge: new_edge(b, *t, &mut pending_edges) },
            Terminator::Branch { cond, then_to, else_to } => Code::Branch {
                c: cond.0,
                t: new_edge(b, *then_to, &mut pending_edges),
                f: new_edge(b, *else_to, &mut pending_edges),
            },
            Terminator::Switch { value, cases: cs, default } => {
                let mask = ty_of(*value).mask();
                let start = cases.len() as u32;
                for &(k, t) in cs {
                    cases.push((k & mask, new_edge(b, t, &mut pending_edges)));
                }
                Code::Switch { v: value.0, mask, cases: (start, cases.len() as u32), default: new_edge(b, *default, &mut pending_edges) }
            }
            Terminator::Return(_) | Terminator::Discard => Code::Return,
            Terminator::Unreachable => Code::Trap(Trap::Unreachable),
        };
        code.push(term);
        code_block.push(b.0);
        code_inst.push(NO_INST);
        code_span.push(block.cond_span.unwrap_or(block.term_span));
    }

    let mut copies = Vec::new();
    let edges = pending_edges
        .iter()
        .map(|&(from, to)| {
            let start = copies.len() as u32;
            for &v in &f.block(BlockId(to)).insts {
                if let Op::Phi(inc) = &f.inst(v).op {
                    if let Some(&(_, src)) = inc.iter().find(|(p, _)| p.0 == from) {
                        copies.push((v.0, src.0));
                    }
                }
            }
            let (pops, back, enter) = loops.edge(from as usize, to as usize);
            Edge {
                target_pc: block_pc[to as usize],
                target_block: to,
                copies: (start, copies.len() as u32),
                pops,
                back,
                enter,
            }
        })
        .collect();

    let has_waves = code.iter().any(|c| matches!(c, Code::Wave { .. } | Code::WaveSync));
    Program {
        reach: has_waves.then(|| Reach::new(f, code_block)),
        code,
        code_inst,
        code_span,
        edges,
        copies,
        cases,
        nregs: n,
        template,
        builtins,
        entry_pc: block_pc[0],
        block_defs,
        entry_block: 0,
        max_loop_depth: loops.max_depth,
        block_loops: (0..f.blocks.len())
            .map(|b| {
                let mut around: Vec<u32> = (0..loops.headers.len() as u32).filter(|&l| loops.member[l as usize][b]).collect();
                // An enclosing loop has more blocks than the loops inside it.
                around.sort_by_key(|&l| std::cmp::Reverse(loops.member[l as usize].iter().filter(|m| **m).count()));
                around
            })
            .collect(),
        loops: loops
            .headers
            .iter()
            .map(|&h| {
                let b = f.block(BlockId(h as u32));
                Loop { span: b.cond_span.unwrap_or(b.term_span) }
            })
            .collect(),
    }
}

fn mem(ids: &AllocIds, f: &Function, m: &MemRef) -> Mem {
    Mem { base: ids.base(m.root), idx: m.index.0, idx_ty: Ty::of(f.inst(m.index).ty) }
}

/// Natural loops of a function, merged per header.
struct Loops {
    headers: Vec<usize>,
    /// `member[l][b]`: block `b` is in loop `l`.
    member: Vec<Vec<bool>>,
    /// Loop index of each header block.
    header_of: Vec<Option<u32>>,
    max_depth: usize,
}

impl Loops {
    fn edge(&self, from: usize, to: usize) -> (u8, bool, Option<u32>) {
        let pops = self.member.iter().filter(|m| m[from] && !m[to]).count() as u8;
        match self.header_of[to] {
            Some(l) if self.member[l as usize][from] => (pops, true, None),
            Some(l) => (pops, false, Some(l)),
            None => (pops, false, None),
        }
    }
}

fn find_loops(f: &Function) -> Loops {
    let nb = f.blocks.len();
    let preds = f.predecessors();
    let idom = dominators(f, &preds);
    let dominates = |a: usize, mut b: usize| loop {
        if a == b {
            return true;
        }
        match idom[b] {
            Some(p) if p != b => b = p,
            _ => return false,
        }
    };
    let mut headers: Vec<usize> = Vec::new();
    let mut member: Vec<Vec<bool>> = Vec::new();
    for (s, dom) in idom.iter().enumerate() {
        if dom.is_none() {
            continue; // unreachable (the entry is its own dominator)
        }
        for h in f.block(BlockId(s as u32)).term.successors() {
            let h = h.index();
            if !dominates(h, s) {
                continue;
            }
            let l = match headers.iter().position(|&x| x == h) {
                Some(l) => l,
                None => {
                    headers.push(h);
                    member.push(vec![false; nb]);
                    member[headers.len() - 1][h] = true;
                    headers.len() - 1
                }
            };
            // Blocks reaching the back edge's source without passing the header.
            let mut stack = vec![s];
            while let Some(x) = stack.pop() {
                if std::mem::replace(&mut member[l][x], true) {
                    continue;
                }
                stack.extend(preds[x].iter().map(|p| p.index()));
            }
        }
    }
    let mut header_of = vec![None; nb];
    for (l, &h) in headers.iter().enumerate() {
        header_of[h] = Some(l as u32);
    }
    let max_depth = (0..nb).map(|b| member.iter().filter(|m| m[b]).count()).max().unwrap_or(0);
    Loops { headers, member, header_of, max_depth }
}

/// Immediate dominators (Cooper, Harvey, Kennedy); None for unreachable blocks.
fn dominators(f: &Function, preds: &[Vec<BlockId>]) -> Vec<Option<usize>> {
    let nb = f.blocks.len();
    // Reverse postorder from the entry.
    let mut order = Vec::with_capacity(nb);
    let mut seen = vec![false; nb];
    let mut stack = vec![(0usize, 0usize)];
    seen[0] = true;
    while let Some((b, i)) = stack.pop() {
        let succ = f.block(BlockId(b as u32)).term.successors();
        if i < succ.len() {
            stack.push((b, i + 1));
            let s = succ[i].index();
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            order.push(b);
        }
    }
    order.reverse();
    let mut rpo = vec![usize::MAX; nb];
    for (i, &b) in order.iter().enumerate() {
        rpo[b] = i;
    }
    let mut idom: Vec<Option<usize>> = vec![None; nb];
    idom[0] = Some(0);
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().skip(1) {
            let mut new: Option<usize> = None;
            for p in &preds[b] {
                let p = p.index();
                if idom[p].is_none() {
                    continue;
                }
                new = Some(match new {
                    None => p,
                    Some(mut a) => {
                        let mut c = p;
                        while a != c {
                            while rpo[a] > rpo[c] {
                                a = idom[a].unwrap();
                            }
                            while rpo[c] > rpo[a] {
                                c = idom[c].unwrap();
                            }
                        }
                        a
                    }
                });
            }
            if new.is_some() && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}
