//! Inlining of calls to functions with bodies, so that every analysis and the
//! emulator see one flat CFG per kernel. Each inlined instruction remembers
//! the call site it came through, so diagnostics can name it.

use crate::*;

/// Deepest call chain that is inlined; deeper (or recursive) calls stay opaque.
const MAX_DEPTH: usize = 32;

/// Returns a copy of `entry` with every call to a function that has a body
/// inlined, transitively. Recursive calls, and calls nested more than
/// `MAX_DEPTH` deep, become opaque calls.
pub fn inline_calls(module: &Module, entry: FuncId) -> Function {
    let mut f = module.function(entry).clone();
    let mut block_index = 0;
    while block_index < f.blocks.len() {
        let b = BlockId(block_index as u32);
        let call_at = f.block(b).insts.iter().position(|&v| matches!(f.inst(v).op, Op::Call(Callee::Func(_), _)));
        let Some(pos) = call_at else {
            block_index += 1;
            continue;
        };
        let call = f.block(b).insts[pos];
        let Op::Call(Callee::Func(callee), args) = f.inst(call).op.clone() else { unreachable!() };
        let chain: Vec<String> = f.inline_chain(call).iter().map(|s| s.callee.clone()).collect();
        let callee_fn = module.function(callee);
        if chain.len() >= MAX_DEPTH || chain.contains(&callee_fn.name) || callee_fn.name == f.name || callee_fn.blocks.is_empty() {
            f.inst_mut(call).op = Op::Call(Callee::Opaque(callee_fn.name.clone()), args);
            continue;
        }
        inline_one(&mut f, b, pos, callee_fn, &args);
        // Re-scan the same block: it now ends in a jump into the callee copy.
    }
    f
}

fn inline_one(f: &mut Function, b: BlockId, pos: usize, callee: &Function, args: &[Value]) {
    let call = f.block(b).insts[pos];
    let call_span = f.inst(call).span;
    let site = f.inline_sites.len() as u32;
    f.inline_sites.push(InlineSite { callee: callee.name.clone(), call_span, parent: f.inst(call).inlined_at });
    // Nested call sites of the callee (from its own earlier inlining) hang below this one.
    let site_base = f.inline_sites.len() as u32;
    for s in &callee.inline_sites {
        f.inline_sites.push(InlineSite {
            callee: s.callee.clone(),
            call_span: s.call_span,
            parent: Some(s.parent.map(|p| p + site_base).unwrap_or(site)),
        });
    }

    // Split: the continuation block takes the rest of the block and its terminator.
    let cont = f.add_block(call_span);
    let tail: Vec<Value> = f.block_mut(b).insts.split_off(pos + 1);
    f.block_mut(b).insts.pop(); // the call itself; it becomes the result phi in `cont`
    let old = std::mem::replace(f.block_mut(b), Block {
        insts: Vec::new(),
        term: Terminator::Unreachable,
        term_span: call_span,
        exit: None,
        cond_span: None,
    });
    let head_insts = old.insts;
    {
        let c = f.block_mut(cont);
        c.insts = std::iter::once(call).chain(tail).collect();
        c.term = old.term;
        c.term_span = old.term_span;
        c.exit = old.exit;
        c.cond_span = old.cond_span;
    }
    f.block_mut(b).insts = head_insts;
    // Phis in the old successors now come from `cont`.
    for s in f.block(cont).term.successors() {
        let insts = f.block(s).insts.clone();
        for v in insts {
            if let Op::Phi(inc) = &mut f.inst_mut(v).op {
                for (p, _) in inc.iter_mut() {
                    if *p == b {
                        *p = cont;
                    }
                }
            }
        }
    }

    // Copy the callee's blocks and instructions.
    let block_base = f.blocks.len() as u32;
    let local_base = f.locals.len() as u32;
    f.locals.extend(callee.locals.iter().cloned());
    let map_block = |x: BlockId| BlockId(x.0 + block_base);
    let mut value_map: Vec<Value> = Vec::with_capacity(callee.insts.len());
    for inst in &callee.insts {
        let v = match inst.op {
            Op::Param(i) => args.get(i as usize).copied().unwrap_or_else(|| f.add_inst(Op::Undef, inst.ty, inst.span)),
            _ => f.add_inst(Op::Undef, inst.ty, inst.span),
        };
        value_map.push(v);
    }
    for (i, inst) in callee.insts.iter().enumerate() {
        if matches!(inst.op, Op::Param(_)) {
            continue;
        }
        let mut op = inst.op.clone();
        op.map_operands(|v| value_map[v.index()]);
        remap_roots(&mut op, local_base);
        if let Op::Phi(inc) = &mut op {
            inc.iter_mut().for_each(|(p, _)| *p = map_block(*p));
        }
        let new = f.inst_mut(value_map[i]);
        new.op = op;
        new.name = inst.name.clone();
        new.inlined_at = Some(inst.inlined_at.map(|p| p + site_base).unwrap_or(site));
    }
    let mut returns = Vec::new();
    for (i, block) in callee.blocks.iter().enumerate() {
        let nb = f.add_block(block.term_span);
        debug_assert_eq!(nb, BlockId(block_base + i as u32));
        let insts: Vec<Value> =
            block.insts.iter().filter(|v| !matches!(callee.inst(**v).op, Op::Param(_))).map(|v| value_map[v.index()]).collect();
        let mut term = block.term.clone();
        term.map_operands(|v| value_map[v.index()]);
        term.map_successors(map_block);
        let mut exit = block.exit;
        if let Terminator::Return(ret) = term {
            if let Some(r) = ret {
                returns.push((nb, r));
            } else {
                returns.push((nb, Value(u32::MAX)));
            }
            term = Terminator::Jump(cont);
            exit = exit.or(Some(ExitKind::Return));
        }
        let nbm = f.block_mut(nb);
        nbm.insts = insts;
        nbm.term = term;
        nbm.exit = exit;
        nbm.cond_span = block.cond_span;
    }
    f.set_term(b, Terminator::Jump(map_block(BlockId(0))), call_span);

    // The call's value becomes a phi over the callee's returned values.
    let ret_ty = f.inst(call).ty;
    let inc: Vec<(BlockId, Value)> = if ret_ty == Type::Void {
        Vec::new()
    } else {
        returns
            .iter()
            .map(|&(blk, v)| if v.0 == u32::MAX { (blk, f.add_inst(Op::Undef, ret_ty, call_span)) } else { (blk, v) })
            .collect()
    };
    let call_inst = f.inst_mut(call);
    call_inst.op = if ret_ty == Type::Void || inc.is_empty() { Op::Undef } else { Op::Phi(inc) };
    // A void call leaves a placeholder; phis must list every predecessor, so drop it from the block.
    if matches!(f.inst(call).op, Op::Undef) {
        f.block_mut(cont).insts.retain(|&v| v != call);
    }
    // Void-typed phis would be meaningless; for non-void calls whose callee never
    // returns, the Undef placeholder is simply never used at run time.
    let preds = f.predecessors();
    if let Op::Phi(inc) = &mut f.inst_mut(call).op {
        inc.retain(|(p, _)| preds[cont.index()].contains(p));
    }
}

fn remap_roots(op: &mut Op, local_base: u32) {
    let fix = |r: &mut Root| {
        if let Root::Local(l) = r {
            *l = LocalId(l.0 + local_base);
        }
    };
    match op {
        Op::Load(m) | Op::Store(m, _) | Op::Atomic(_, m, _) => fix(&mut m.root),
        Op::AddrOf(r, _) => fix(r),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_source::{FileId, Span};

    fn sp() -> Span {
        Span::new(FileId(0), 0, 0)
    }

    /// helper(x) { if (x) return 1; barrier; return 2; }
    fn helper() -> Function {
        let mut h = Function::new("helper", sp());
        h.ret = Type::U32;
        h.params.push(Param { name: "x".into(), ty: Type::Bool, span: sp(), noalias: false });
        let b0 = h.add_block(sp());
        let b1 = h.add_block(sp());
        let b2 = h.add_block(sp());
        let x = h.push(b0, Op::Param(0), Type::Bool, sp());
        h.set_term(b0, Terminator::Branch { cond: x, then_to: b1, else_to: b2 }, sp());
        let one = h.push(b1, Op::Const(Const::Int(1)), Type::U32, sp());
        h.set_term(b1, Terminator::Return(Some(one)), sp());
        let bar = Barrier { exec: Scope::Group, mem: Scope::Group, spaces: Spaces::SHARED, reduce: None };
        h.push(b2, Op::Barrier(bar, None), Type::Void, sp());
        let two = h.push(b2, Op::Const(Const::Int(2)), Type::U32, sp());
        h.set_term(b2, Terminator::Return(Some(two)), sp());
        h
    }

    #[test]
    fn inlined_body_joins_returns_in_a_phi_and_records_the_call_site() {
        let mut m = Module::default();
        let hid = m.add_function(helper());
        let mut k = Function::new("kernel", sp());
        k.entry = Some(EntryInfo::default());
        let b0 = k.add_block(sp());
        let lid = k.push(b0, Op::Builtin(Builtin::LocalId(0)), Type::U32, sp());
        let zero = k.push(b0, Op::Const(Const::Int(0)), Type::U32, sp());
        let c = k.push(b0, Op::Cmp(CmpOp::Eq, lid, zero), Type::Bool, sp());
        let call_span = Span::new(FileId(0), 10, 20);
        let r = k.push(b0, Op::Call(Callee::Func(hid), vec![c]), Type::U32, call_span);
        k.set_term(b0, Terminator::Return(Some(r)), sp());
        let kid = m.add_function(k);

        let flat = inline_calls(&m, kid);
        assert!(verify(&flat).is_empty(), "{:?}\n{}", verify(&flat), crate::display::function_to_string(&m, &flat));
        assert!(!flat.insts.iter().any(|i| matches!(i.op, Op::Call(..))));
        // The call value is now a phi with one entry per return.
        let Op::Phi(inc) = &flat.inst(r).op else { panic!("call not turned into phi") };
        assert_eq!(inc.len(), 2);
        // The barrier remembers the call site.
        let bar = flat.insts.iter().position(|i| i.op.is_barrier()).unwrap();
        let chain = flat.inline_chain(Value(bar as u32));
        assert_eq!(chain.len(), 1);
        assert_eq!(chain[0].callee, "helper");
        assert_eq!(chain[0].call_span, call_span);
        // The helper's parameter was replaced by the argument.
        let branch_cond = flat.blocks.iter().find_map(|b| match b.term {
            Terminator::Branch { cond, .. } => Some(cond),
            _ => None,
        });
        assert_eq!(branch_cond, Some(c));
    }

    #[test]
    fn recursion_stays_an_opaque_call() {
        let mut m = Module::default();
        let mut r = Function::new("rec", sp());
        let b0 = r.add_block(sp());
        r.push(b0, Op::Call(Callee::Func(FuncId(0)), vec![]), Type::Void, sp());
        r.set_term(b0, Terminator::Return(None), sp());
        let id = m.add_function(r);
        let flat = inline_calls(&m, id);
        assert!(verify(&flat).is_empty());
        assert!(flat.insts.iter().any(|i| matches!(&i.op, Op::Call(Callee::Opaque(n), _) if n == "rec")));
    }
}
