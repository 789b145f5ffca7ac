//! Branches whose outcome an enclosing branch already decided: inside
//! `for (j = 0; j < n; ++j) { … if (j < n) __syncthreads(); }` the inner
//! test always holds. Folding such a branch into a jump keeps every analysis
//! from following a path no execution takes (a barrier that looks skippable,
//! a race across it). Branches on constants (`if (256 > 32)` in a template
//! instance) are folded too, and so is a `?:` on a constant (`warp_size ==
//! 32 ? tid : tid % 16` with a constexpr width): its uses read the arm it
//! picks. The program's meaning is unchanged, so barrier removal may rely on
//! it.

use crate::Cfg;
use lockstep_ir::{BinOp, BlockId, Builtin, CmpOp, Function, MemSpace, Op, Terminator, Type, UnOp, Value};

/// Folds every branch decided by a dominating branch on the same condition,
/// then drops the blocks no path reaches any more; and every `?:` on a
/// constant. Returns whether anything changed.
pub fn fold_decided_branches(f: &mut Function) -> bool {
    let selects = fold_constant_selects(f);
    let cfg = Cfg::new(f);
    let mut folds: Vec<(BlockId, BlockId, BlockId)> = Vec::new();
    for b in f.block_ids() {
        if !cfg.is_reachable(b) {
            continue;
        }
        let Terminator::Branch { cond, then_to, else_to } = f.block(b).term else { continue };
        if then_to == else_to {
            continue;
        }
        let known = evaluate(f, cond, &|_, _| None).map(|c| c != 0).or_else(|| decided(f, &cfg, b, cond, None)).or_else(|| against_group_extent(f, cond));
        if let Some(holds) = known {
            let (keep, drop) = if holds { (then_to, else_to) } else { (else_to, then_to) };
            folds.push((b, keep, drop));
        }
    }
    if folds.is_empty() {
        return selects;
    }
    for &(b, keep, drop) in &folds {
        let span = f.block(b).term_span;
        f.set_term(b, Terminator::Jump(keep), span);
        // The dropped successor no longer has `b` as a predecessor.
        for &v in &f.block(drop).insts.clone() {
            if let Op::Phi(incoming) = &mut f.inst_mut(v).op {
                incoming.retain(|(p, _)| *p != b);
            }
        }
        f.block_mut(b).cond_span = None;
    }
    f.remove_unreachable_blocks();
    true
}

/// Points every use of a select whose condition is a constant (or whose
/// arms are one value) at the arm it picks.
fn fold_constant_selects(f: &mut Function) -> bool {
    let arm: Vec<Option<Value>> = f
        .insts
        .iter()
        .map(|inst| match inst.op {
            Op::Select(_, a, b) if a == b => Some(a),
            Op::Select(c, a, b) => evaluate(f, c, &|_, _| None).map(|x| if x != 0 { a } else { b }),
            _ => None,
        })
        .collect();
    if arm.iter().all(Option::is_none) {
        return false;
    }
    // A select of a select picks through both.
    let resolve = |mut v: Value| {
        while let Some(a) = arm[v.index()] {
            v = a;
        }
        v
    };
    for inst in &mut f.insts {
        inst.op.map_operands(resolve);
    }
    for b in f.block_ids().collect::<Vec<_>>() {
        f.block_mut(b).term.map_operands(resolve);
    }
    true
}

/// The value `cond` must have in block `b`, when a dominating branch on an
/// equal condition fixed it (one that `top` dominates, where given): the
/// edge into the side `b` lies on dominates `b` and is that side's only way
/// in.
fn decided(f: &Function, cfg: &Cfg, b: BlockId, cond: Value, top: Option<BlockId>) -> Option<bool> {
    let mut x = b.index();
    while let Some(d) = cfg.dom.idom(x) {
        if top.is_some_and(|top| !cfg.dominates(top, BlockId(d as u32))) {
            return None;
        }
        if let Terminator::Branch { cond: c, then_to, else_to } = f.blocks[d].term {
            if then_to != else_to && same_value(f, c, cond, 0) {
                if let Some(holds) = side_of(cfg, then_to, else_to, b) {
                    return Some(holds);
                }
            }
        }
        x = d;
    }
    None
}

/// Which side of a branch to `then_to` or `else_to` block `b` lies on: the
/// side whose first block dominates `b` and has the branch as its only way
/// in. None where neither does.
fn side_of(cfg: &Cfg, then_to: BlockId, else_to: BlockId, b: BlockId) -> Option<bool> {
    [(then_to, true), (else_to, false)].into_iter().find(|&(succ, _)| cfg.preds[succ.index()].len() == 1 && cfg.dominates(succ, b)).map(|(_, holds)| holds)
}

/// The value `v` holds wherever block `at` runs, when `v` is a phi that a
/// branch selects and `at` lies where a branch on an equal condition went
/// the same way: `if (c) g = f(g); … if (c) s[i] = g;` stores `f(g)`. `v`
/// itself where nothing decides it.
pub fn value_in_block(f: &Function, cfg: &Cfg, block_of: &dyn Fn(Value) -> Option<BlockId>, mut v: Value, at: BlockId) -> Value {
    const MAX_STEPS: u32 = 8;
    for _ in 0..MAX_STEPS {
        let Op::Phi(incoming) = &f.inst(v).op else { break };
        let Some(ways) = block_of(v).and_then(|join| decided_ways_into(f, cfg, join, at)) else { break };
        let mut picked = incoming.iter().filter(|(p, _)| ways.contains(p)).map(|&(_, x)| x);
        match picked.next() {
            Some(x) if picked.all(|y| y == x) => v = x,
            _ => break,
        }
    }
    v
}

/// The ways into `join` that any execution reaching `at` came by, when a
/// branch decides them: `join` merges the two sides of a branch on a
/// condition (the branch dominates it, and each way in lies on one side),
/// and a branch on an equal condition that `join` dominates sent `at` the
/// same way. `join`'s dominance keeps the condition from being computed
/// anew in between. None where nothing decides them.
pub(crate) fn decided_ways_into(f: &Function, cfg: &Cfg, join: BlockId, at: BlockId) -> Option<Vec<BlockId>> {
    if cfg.preds[join.index()].len() < 2 {
        return None;
    }
    let d = cfg.dom.idom(join.index())?;
    let Terminator::Branch { cond, then_to, else_to } = f.blocks[d].term else { return None };
    if then_to == else_to || !cfg.dominates(join, at) {
        return None;
    }
    let d = BlockId(d as u32);
    // Which way the branch went for a way in: the branch block's own edge,
    // or the side it lies on.
    let side = |p: BlockId| {
        if p == d {
            return (then_to == join).then_some(true).or((else_to == join).then_some(false));
        }
        side_of(cfg, then_to, else_to, p)
    };
    let holds = decided(f, cfg, at, cond, Some(join))?;
    let preds = &cfg.preds[join.index()];
    let sides: Option<Vec<bool>> = preds.iter().map(|&p| side(p)).collect();
    Some(preds.iter().zip(sides?).filter(|&(_, s)| s == holds).map(|(&p, _)| p).collect())
}

/// The outcome of comparing a thread's id with a bound its group's extent
/// decides: `threadIdx.y >= k` where every launch makes `blockDim.y` the
/// parameter `k` (or `blockDim.y` itself), `threadIdx.y < 32` where every
/// launch is 32 threads tall. The same for every thread.
fn against_group_extent(f: &Function, cond: Value) -> Option<bool> {
    let Op::Cmp(op, x, y) = f.inst(cond).op else { return None };
    let entry = f.entry.as_ref()?;
    let local_axis = |v: Value| crate::launch::thread_id_axis(f, v);
    // Oriented as `id op bound`.
    let (ax, bound, op) = match (local_axis(x), local_axis(y)) {
        (Some(ax), None) => (ax, y, op),
        (None, Some(ax)) => (ax, x, match op {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            same => same,
        }),
        _ => return None,
    };
    let mut plain = bound;
    while let Op::Convert(inner) = f.inst(plain).op {
        plain = inner;
    }
    let is_extent = match f.inst(plain).op {
        Op::Param(p) => entry.group_extent_params[ax] == Some(p),
        Op::Builtin(Builtin::GroupSize(a)) => a as usize == ax,
        _ => false,
    };
    // The id is in `lo..=hi`: against the extent itself (as `0..=0`
    // against 1), or a constant against the known range. Each comparison
    // is monotone in the id, so the ends decide it.
    let (lo, hi, bound) = if is_extent {
        (0, 0, 1)
    } else {
        let c = evaluate(f, bound, &|_, _| None)?;
        (0, i128::from(entry.threads_along(ax)?) - 1, c)
    };
    let all = |holds: &dyn Fn(i128) -> bool| (holds(lo) == holds(hi)).then(|| holds(lo));
    match op {
        CmpOp::Lt => all(&|t| t < bound),
        CmpOp::Le => all(&|t| t <= bound),
        CmpOp::Gt => all(&|t| t > bound),
        CmpOp::Ge => all(&|t| t >= bound),
        CmpOp::Eq if bound < lo || bound > hi => Some(false),
        CmpOp::Ne if bound < lo || bound > hi => Some(true),
        CmpOp::Eq | CmpOp::Ne => None,
    }
}

/// Whether two values are equal in every execution: the same value, or the
/// same pure operation on equal operands (loads only from constant memory,
/// which nothing writes while the kernel runs).
pub fn same_value(f: &Function, a: Value, b: Value, depth: u32) -> bool {
    if a == b {
        return true;
    }
    if depth > 8 {
        return false;
    }
    let (x, y) = (f.inst(a), f.inst(b));
    if x.ty != y.ty {
        return false;
    }
    let same = |p: Value, q: Value| same_value(f, p, q, depth + 1);
    match (&x.op, &y.op) {
        (Op::Const(p), Op::Const(q)) => p == q,
        (Op::Builtin(p), Op::Builtin(q)) => p == q,
        (Op::Param(p), Op::Param(q)) => p == q,
        (Op::Convert(p), Op::Convert(q)) => same(*p, *q),
        (Op::Unary(o, p), Op::Unary(r, q)) => o == r && same(*p, *q),
        (Op::Binary(o, p1, p2), Op::Binary(r, q1, q2)) => o == r && same(*p1, *q1) && same(*p2, *q2),
        (Op::Cmp(o, p1, p2), Op::Cmp(r, q1, q2)) => o == r && same(*p1, *q1) && same(*p2, *q2),
        (Op::Select(c, p1, p2), Op::Select(d, q1, q2)) => same(*c, *d) && same(*p1, *q1) && same(*p2, *q2),
        (Op::Load(p), Op::Load(q)) => p.space == MemSpace::Constant && q.space == MemSpace::Constant && p.root == q.root && same(p.index, q.index),
        _ => false,
    }
}

/// The value of an integer or boolean expression built from constants and
/// the leaves `leaf` gives a value (None where anything else is needed).
pub fn evaluate(f: &Function, v: Value, leaf: &dyn Fn(Value, &Op) -> Option<i128>) -> Option<i128> {
    evaluate_at(f, v, leaf, 0)
}

fn evaluate_at(f: &Function, v: Value, leaf: &dyn Fn(Value, &Op) -> Option<i128>, depth: u32) -> Option<i128> {
    if depth > 16 {
        return None;
    }
    let inst = f.inst(v);
    if !(inst.ty.is_int() || inst.ty == Type::Bool) {
        return None;
    }
    let wrap = |x: i128| -> i128 {
        let bits = inst.ty.bits();
        if !inst.ty.is_int() || bits >= 64 || bits == 0 {
            return x;
        }
        let m = x & ((1i128 << bits) - 1);
        if inst.ty.is_signed() && m >= 1i128 << (bits - 1) {
            m - (1i128 << bits)
        } else {
            m
        }
    };
    let sub = |x: Value| evaluate_at(f, x, leaf, depth + 1);
    if let Some(x) = leaf(v, &inst.op) {
        return Some(x);
    }
    Some(match &inst.op {
        Op::Const(_) => f.as_int(v)? as i128,
        Op::Convert(x) if inst.ty == Type::Bool => i128::from(sub(*x)? != 0),
        Op::Convert(x) => wrap(sub(*x)?),
        Op::Unary(UnOp::Neg, x) => wrap(-sub(*x)?),
        Op::Unary(UnOp::Not, x) if inst.ty == Type::Bool => i128::from(sub(*x)? == 0),
        Op::Unary(UnOp::LNot, x) => i128::from(sub(*x)? == 0),
        Op::Select(c, x, y) => {
            if sub(*c)? != 0 {
                sub(*x)?
            } else {
                sub(*y)?
            }
        }
        Op::Cmp(op, x, y) => {
            let (x, y) = (sub(*x)?, sub(*y)?);
            i128::from(op.holds(x, y))
        }
        Op::Binary(op, x, y) => {
            let (x, y) = (sub(*x)?, sub(*y)?);
            wrap(match op {
                BinOp::Add => x + y,
                BinOp::Sub => x - y,
                BinOp::Mul => x.checked_mul(y)?,
                BinOp::Div | BinOp::ExactDiv => x.checked_div(y)?,
                BinOp::Rem => x.checked_rem(y)?,
                BinOp::And => x & y,
                BinOp::Or => x | y,
                BinOp::Xor => x ^ y,
                BinOp::Shl => x.checked_shl(u32::try_from(y).ok()?)?,
                BinOp::Shr => x.checked_shr(u32::try_from(y).ok()?)?,
                BinOp::LAnd => i128::from(x != 0 && y != 0),
                BinOp::LOr => i128::from(x != 0 || y != 0),
            })
        }
        _ => return None,
    })
}
