//! The engine on hand-built kernels: the seed's scenarios, loops, calls,
//! fences, reductions, per-allocation precision and the knobs.

use lockstep_dbe::*;
use lockstep_ir::*;
use lockstep_source::{FileId, Span};
use std::collections::HashSet;

fn sp() -> Span {
    Span::new(FileId(0), 0, 0)
}

const SYNC: Barrier = Barrier { exec: Scope::Group, mem: Scope::Group, spaces: Spaces::ALL, reduce: None };

/// A kernel under construction: `tid`, shared arrays `a`, `b`, dynamic shared
/// memory `dynamic`, and a device buffer (parameter 0).
struct K {
    m: Module,
    f: Function,
    cur: BlockId,
    tid: Value,
    a: GlobalId,
    b: GlobalId,
    dynamic: GlobalId,
}

fn shared_global(m: &mut Module, name: &str, kind: GlobalKind) -> GlobalId {
    m.add_global(Global {
        name: name.into(),
        kind,
        space: MemSpace::Shared,
        elem: Type::F32,
        dims: vec![256],
        cells_per_elem: 1,
        cell_names: Vec::new(),
        len: Some(256),
        coherent: false,
        texel_width: 0,
        open_value: None,
        init: Vec::new(),
        span: sp(),
    })
}

impl K {
    fn kernel() -> K {
        let mut k = K::function("k");
        k.f.entry = Some(EntryInfo::default());
        k
    }

    /// A device function (not a kernel): its callers' context is unknown.
    fn function(name: &str) -> K {
        let mut m = Module::default();
        let a = shared_global(&mut m, "a", GlobalKind::GroupShared);
        let b = shared_global(&mut m, "b", GlobalKind::GroupShared);
        let dynamic = shared_global(&mut m, "dyn", GlobalKind::DynamicShared);
        let mut f = Function::new(name, sp());
        let cur = f.add_block(sp());
        let tid = f.push(cur, Op::Builtin(Builtin::LocalId(0)), Type::U32, sp());
        K { m, f, cur, tid, a, b, dynamic }
    }

    fn push(&mut self, op: Op, ty: Type) -> Value {
        self.f.push(self.cur, op, ty, sp())
    }
    /// `tid + off`.
    fn idx(&mut self, off: u64) -> Value {
        if off == 0 {
            return self.tid;
        }
        let c = self.push(Op::Const(Const::Int(off)), Type::U32);
        self.push(Op::Binary(BinOp::Add, self.tid, c), Type::U32)
    }
    fn shared(&mut self, g: GlobalId, off: u64) -> MemRef {
        let index = self.idx(off);
        MemRef { space: MemSpace::Shared, root: Root::Global(g), index }
    }
    fn store(&mut self, m: MemRef) -> Value {
        self.push(Op::Store(m, self.tid), Type::Void)
    }
    fn load(&mut self, m: MemRef) -> Value {
        self.push(Op::Load(m), Type::F32)
    }
    fn st(&mut self, g: GlobalId, off: u64) -> Value {
        let m = self.shared(g, off);
        self.store(m)
    }
    fn ld(&mut self, g: GlobalId, off: u64) -> Value {
        let m = self.shared(g, off);
        self.load(m)
    }
    fn device(&mut self, off: u64) -> MemRef {
        let index = self.idx(off);
        MemRef { space: MemSpace::Device, root: Root::Param(0), index }
    }
    fn bar(&mut self) -> Value {
        self.push(Op::Barrier(SYNC, None), Type::Void)
    }
    fn bar_with(&mut self, bar: Barrier) -> Value {
        self.push(Op::Barrier(bar, None), Type::Void)
    }
    fn block(&mut self) -> BlockId {
        self.f.add_block(sp())
    }
    fn jump(&mut self, to: BlockId) {
        self.f.set_term(self.cur, Terminator::Jump(to), sp());
        self.cur = to;
    }
    fn ret(&mut self) {
        self.f.set_term(self.cur, Terminator::Return(None), sp());
        assert!(verify(&self.f).is_empty(), "{:?}", verify(&self.f));
    }

    fn run_with(&self, options: Options, leave_alone: &[Value]) -> FunctionResult {
        let engine = Engine::new(&self.m, options);
        let oracle = SameAllocation { module: &self.m };
        let leave: HashSet<Value> = leave_alone.iter().copied().collect();
        let result = engine.run(&self.f, &oracle, &leave);
        // The reference restart algorithm must agree on every verdict and flag.
        assert_eq!(decisions(&result), decisions(&engine.run_restart(&self.f, &oracle, &leave)), "worklist and restart disagree");
        result
    }
    fn run(&self, mode: Mode) -> FunctionResult {
        self.run_with(Options { mode, ..Options::default() }, &[])
    }
}

const ALL_MODES: [Mode; 3] = [Mode::Local, Mode::Categories, Mode::Precise];

fn flags(ra: bool, wa: bool, rb: bool, wb: bool) -> Flags {
    Flags { read_above: ra, write_above: wa, read_below: rb, write_below: wb }
}

/// What the worklist and the restart algorithm must agree on: each barrier's verdict and flags
/// (only the worklist names a hazard for the barriers it keeps).
fn decisions(r: &FunctionResult) -> Vec<(Value, Verdict, BarrierFlags)> {
    r.barriers.iter().map(|b| (b.value, b.verdict, b.flags)).collect()
}

fn report(r: &FunctionResult, v: Value) -> &BarrierReport {
    r.barriers.iter().find(|b| b.value == v).expect("barrier reported")
}

/// write; B1; read neighbour; B2; B3; device write.
#[test]
fn seed_scenario_keeps_the_first_barrier_and_removes_the_two_after_the_read() {
    let mut k = K::kernel();
    k.st(k.a, 0);
    let b1 = k.bar();
    let val = k.ld(k.a, 1);
    let b2 = k.bar();
    let b3 = k.bar();
    let out = k.device(0);
    k.push(Op::Store(out, val), Type::Void);
    k.ret();
    for mode in [Mode::Categories, Mode::Precise] {
        let r = k.run(mode);
        assert_eq!(r.kept(), vec![b1], "{mode:?}");
        assert_eq!(r.removed(), vec![b2, b3], "{mode:?}");
        // B2 went first: the read above, nothing before B3.
        assert_eq!(report(&r, b2).flags.shared, flags(true, false, false, false));
        assert_eq!(report(&r, b2).flags.device, Flags::default());
        // B3 then saw the read above and the device write below: no hazard in either space.
        assert_eq!(report(&r, b3).flags.shared, flags(true, false, false, false));
        assert_eq!(report(&r, b3).flags.device, flags(false, false, false, true));
        assert_eq!(report(&r, b3).flags.combined(), flags(true, false, false, true));
        // B1 orders the write against the read.
        assert_eq!(report(&r, b1).flags.shared, flags(false, true, true, false));
        assert_eq!(report(&r, b1).verdict, Verdict::Kept(Keep::Needed));
    }
    // Local mode gets there per space: B2 and B3 are adjacent; then no shared
    // access follows B3 and no device access lies between B1 and B3.
    let r = k.run(Mode::Local);
    assert_eq!(r.removed(), vec![b2, b3]);
    assert_eq!(r.kept(), vec![b1]);
}

#[test]
fn five_barriers_between_a_write_and_a_read_leave_exactly_one() {
    let mut k = K::kernel();
    k.st(k.a, 0);
    let bars: Vec<Value> = (0..5).map(|_| k.bar()).collect();
    k.ld(k.a, 1);
    k.ret();
    for mode in ALL_MODES {
        let r = k.run(mode);
        assert_eq!(r.kept(), vec![bars[4]], "{mode:?}");
        assert_eq!(r.removed(), bars[..4].to_vec(), "{mode:?}");
    }
}

/// write; B1; B2; read; B3; device write: one barrier between the write and the read suffices.
#[test]
fn read_between_the_second_and_third_barrier_keeps_one_barrier_before_it() {
    let mut k = K::kernel();
    k.st(k.a, 0);
    let b1 = k.bar();
    let b2 = k.bar();
    let val = k.ld(k.a, 1);
    let b3 = k.bar();
    let out = k.device(0);
    k.push(Op::Store(out, val), Type::Void);
    k.ret();
    for mode in [Mode::Categories, Mode::Precise] {
        let r = k.run(mode);
        assert_eq!(r.kept(), vec![b2], "{mode:?}");
        assert_eq!(r.removed(), vec![b1, b3], "{mode:?}");
    }
}

#[test]
fn read_of_a_neighbour_then_overwrite_of_own_element_keeps_the_barrier() {
    let mut k = K::kernel();
    k.ld(k.a, 1);
    let b = k.bar();
    k.st(k.a, 0);
    k.ret();
    for mode in ALL_MODES {
        let r = k.run(mode);
        assert_eq!(r.kept(), vec![b], "{mode:?}");
    }
    assert_eq!(report(&k.run(Mode::Categories), b).flags.shared, flags(true, false, false, true));
}

/// for (...) { a[tid] = x; B1; y = a[tid+1]; B2 }: B2 orders this iteration's
/// read against the next iteration's write, through the back edge.
fn loop_kernel(write_next_iteration: bool) -> (K, Value, Value) {
    let mut k = K::kernel();
    let pre = k.cur;
    let zero = k.push(Op::Const(Const::Int(0)), Type::U32);
    let header = k.block();
    let (body, exit) = (k.block(), k.block());
    k.jump(header);
    let i = k.push(Op::Phi(Vec::new()), Type::U32);
    let n = k.push(Op::Param(1), Type::U32);
    let c = k.push(Op::Cmp(CmpOp::Lt, i, n), Type::Bool);
    k.f.set_term(header, Terminator::Branch { cond: c, then_to: body, else_to: exit }, sp());
    k.cur = body;
    if write_next_iteration {
        k.st(k.a, 0);
    } else {
        k.st(k.b, 0);
    }
    let b1 = k.bar();
    k.ld(k.a, 1);
    let b2 = k.bar();
    let one = k.push(Op::Const(Const::Int(1)), Type::U32);
    let next = k.push(Op::Binary(BinOp::Add, i, one), Type::U32);
    k.f.set_term(body, Terminator::Jump(header), sp());
    k.f.inst_mut(i).op = Op::Phi(vec![(pre, zero), (body, next)]);
    k.cur = exit;
    k.ret();
    (k, b1, b2)
}

#[test]
fn barrier_at_the_end_of_a_loop_body_orders_against_the_next_iteration() {
    let (k, b1, b2) = loop_kernel(true);
    for mode in [Mode::Categories, Mode::Precise] {
        let r = k.run(mode);
        assert_eq!(r.kept(), vec![b1, b2], "{mode:?}");
        assert_eq!(report(&r, b2).flags.shared, flags(true, false, false, true), "{mode:?}");
    }
    // With `b[tid]` written at the top, precise mode sees B1 order a write of
    // `b` against a read of `a` and drops it; B2 then orders the write of `b`
    // against the next iteration's (WAW). The categories keep both.
    let (k, b1, b2) = loop_kernel(false);
    assert_eq!(k.run(Mode::Precise).removed(), vec![b1]);
    assert_eq!(k.run(Mode::Precise).kept(), vec![b2]);
    assert_eq!(k.run(Mode::Categories).kept(), vec![b1, b2]);
}

#[test]
fn precise_mode_tells_shared_arrays_apart_but_not_dynamic_shared_memory() {
    let mut k = K::kernel();
    k.st(k.a, 0);
    let b = k.bar();
    k.ld(k.b, 1);
    k.ret();
    assert_eq!(k.run(Mode::Precise).removed(), vec![b]);
    assert_eq!(k.run(Mode::Categories).kept(), vec![b]);

    let mut k = K::kernel();
    k.st(k.dynamic, 0);
    let b = k.bar();
    k.ld(k.a, 1);
    k.ret();
    assert_eq!(k.run(Mode::Precise).kept(), vec![b]);

    // A pointer traced through AddrOf/PtrAdd to `b` is an access of `b`...
    let mut k = K::kernel();
    k.st(k.a, 0);
    let b = k.bar();
    let base = k.push(Op::AddrOf(Root::Global(k.b), k.tid), Type::Ptr(MemSpace::Unknown));
    let p = k.push(Op::PtrAdd(base, k.tid), Type::Ptr(MemSpace::Unknown));
    let m = MemRef { space: MemSpace::Unknown, root: Root::Ptr(p), index: k.tid };
    k.load(m);
    k.ret();
    assert_eq!(k.run(Mode::Precise).removed(), vec![b]);
    // ...while a pointer parameter may point anywhere in its space.
    let mut k = K::kernel();
    k.st(k.a, 0);
    let b = k.bar();
    let p = k.push(Op::Param(3), Type::Ptr(MemSpace::Shared));
    let m = MemRef { space: MemSpace::Shared, root: Root::Ptr(p), index: k.tid };
    k.load(m);
    k.ret();
    assert_eq!(k.run(Mode::Precise).kept(), vec![b]);
}

/// An oracle that knows `a[tid]` against `a[tid]` never conflicts across threads.
struct OwnElement {
    asked: std::cell::RefCell<Vec<(Value, Value)>>,
}

impl HazardOracle for OwnElement {
    fn conflicts(&self, f: &Function, earlier: Value, later: Value) -> bool {
        self.asked.borrow_mut().push((earlier, later));
        let own = |v: Value| f.inst(v).op.mem_ref().is_some_and(|m| matches!(f.inst(m.index).op, Op::Builtin(_)));
        !(own(earlier) && own(later))
    }
}

#[test]
fn precise_mode_asks_the_oracle_about_pairs_in_program_order() {
    let mut k = K::kernel();
    let w = k.st(k.a, 0);
    let b1 = k.bar();
    let r = k.ld(k.a, 0);
    let b2 = k.bar();
    k.ld(k.a, 1);
    k.ret();
    let engine = Engine::new(&k.m, Options::default());
    let oracle = OwnElement { asked: Default::default() };
    let res = engine.run(&k.f, &oracle, &HashSet::new());
    // B1 orders a[tid] = ..; .. = a[tid]: the oracle says no conflict. B2 then
    // separates the write from the neighbour read.
    assert_eq!(res.removed(), vec![b1]);
    assert_eq!(res.kept(), vec![b2]);
    assert!(oracle.asked.borrow().contains(&(w, r)));
    assert!(!oracle.asked.borrow().iter().any(|&(e, _)| e == r), "a read above is never asked about a read below");
    assert_eq!(decisions(&res), decisions(&engine.run_restart(&k.f, &oracle, &HashSet::new())));
}

#[test]
fn calls_are_classified_by_their_callee() {
    // helper writes a[0]; the kernel calls it, syncs, then reads a.
    let build = |callee_writes: bool, opaque: bool| {
        let mut k = K::kernel();
        let mut h = Function::new("helper", sp());
        let hb = h.add_block(sp());
        let z = h.push(hb, Op::Const(Const::Int(0)), Type::U32, sp());
        let space = if callee_writes { MemSpace::Shared } else { MemSpace::Private };
        let root = if callee_writes { Root::Global(k.a) } else { Root::Local(LocalId(0)) };
        h.push(hb, Op::Store(MemRef { space, root, index: z }, z), Type::Void, sp());
        h.set_term(hb, Terminator::Return(None), sp());
        let hid = k.m.add_function(h);
        let callee = if opaque { Callee::Opaque("extern_fn".into()) } else { Callee::Func(hid) };
        k.push(Op::Call(callee, vec![]), Type::Void);
        let b = k.bar();
        k.ld(k.a, 1);
        k.ret();
        (k, b)
    };
    let (k, b) = build(true, false);
    assert_eq!(k.run(Mode::Categories).kept(), vec![b]);
    assert_eq!(k.run(Mode::Precise).kept(), vec![b]);
    let (k, b) = build(false, false);
    assert_eq!(k.run(Mode::Categories).removed(), vec![b]);
    let (k, b) = build(false, true);
    assert_eq!(k.run(Mode::Categories).kept(), vec![b]);
    let safe = Options { mode: Mode::Categories, assume_calls_safe: true, inter_block: true };
    assert_eq!(k.run_with(safe, &[]).removed(), vec![b]);
}

#[test]
fn a_recursive_callee_counts_as_opaque() {
    let mut k = K::kernel();
    let mut h = Function::new("rec", sp());
    let hb = h.add_block(sp());
    h.push(hb, Op::Call(Callee::Func(FuncId(0)), vec![]), Type::Void, sp());
    h.set_term(hb, Terminator::Return(None), sp());
    let hid = k.m.add_function(h);
    assert_eq!(hid, FuncId(0));
    k.push(Op::Call(Callee::Func(hid), vec![]), Type::Void);
    let b = k.bar();
    k.ld(k.a, 1);
    k.ret();
    assert_eq!(k.run(Mode::Categories).kept(), vec![b]);
}

#[test]
fn a_fence_is_not_a_sync_point_and_is_not_reported() {
    let mut k = K::kernel();
    k.st(k.a, 0);
    let fence = Barrier { exec: Scope::None, mem: Scope::Group, spaces: Spaces::ALL, reduce: None };
    k.bar_with(fence);
    let b = k.bar();
    k.ld(k.a, 1);
    k.ret();
    for mode in ALL_MODES {
        let r = k.run(mode);
        assert_eq!(r.kept(), vec![b], "{mode:?}");
        assert_eq!(r.barriers.len(), 1);
    }
}

#[test]
fn a_reduction_barrier_stays_and_still_synchronizes() {
    let mut k = K::kernel();
    k.st(k.a, 0);
    let count = Barrier { reduce: Some(BarrierReduce::Count), ..SYNC };
    let pred = k.push(Op::Const(Const::Bool(true)), Type::Bool);
    let c = k.push(Op::Barrier(count, Some(pred)), Type::U32);
    let b = k.bar();
    k.ld(k.a, 1);
    k.ret();
    for mode in ALL_MODES {
        let r = k.run(mode);
        assert_eq!(r.removed(), vec![b], "{mode:?}");
        assert_eq!(report(&r, c).verdict, Verdict::Kept(Keep::Reduction));
    }
}

#[test]
fn barriers_left_alone_are_neither_removed_nor_trusted() {
    let mut k = K::kernel();
    k.st(k.a, 0);
    let b1 = k.bar();
    let b2 = k.bar();
    k.ld(k.a, 1);
    k.ret();
    assert_eq!(k.run(Mode::Categories).removed(), vec![b1]);
    let r = k.run_with(Options { mode: Mode::Categories, ..Options::default() }, &[b1]);
    assert_eq!(r.removed(), Vec::<Value>::new());
    assert_eq!(report(&r, b1).verdict, Verdict::Kept(Keep::LeftAlone));
    assert_eq!(report(&r, b2).verdict, Verdict::Kept(Keep::Needed));
}

/// write in bb0; barrier alone in bb1; read in bb2.
#[test]
fn accesses_in_other_blocks_count_unless_inter_block_propagation_is_off() {
    let mut k = K::kernel();
    k.st(k.a, 0);
    let b1 = k.block();
    k.jump(b1);
    let bar = k.bar();
    let b2 = k.block();
    k.jump(b2);
    k.ld(k.a, 1);
    k.ret();
    assert_eq!(k.run(Mode::Categories).kept(), vec![bar]);

    // With nothing around it the barrier is dead across blocks, but block-local
    // reasoning must assume anything at the block's edges.
    let mut k = K::kernel();
    let b1 = k.block();
    k.jump(b1);
    let bar = k.bar();
    let b2 = k.block();
    k.jump(b2);
    k.ret();
    assert_eq!(k.run(Mode::Categories).removed(), vec![bar]);
    // Local mode looks only inside the block, where nothing is known.
    assert_eq!(k.run(Mode::Local).kept(), vec![bar]);
    let local_only = Options { mode: Mode::Categories, inter_block: false, ..Options::default() };
    assert_eq!(k.run_with(local_only, &[]).kept(), vec![bar]);
    assert_eq!(report(&k.run_with(local_only, &[]), bar).flags.combined(), flags(true, true, true, true));
}

#[test]
fn in_a_device_function_the_callers_context_is_unknown() {
    let mut k = K::function("helper");
    let b1 = k.bar();
    let b2 = k.bar();
    k.ret();
    // B1 has nothing below it before B2; B2 then has the caller on both sides.
    for mode in ALL_MODES {
        let r = k.run(mode);
        assert_eq!(r.removed(), vec![b1], "{mode:?}");
        assert_eq!(r.kept(), vec![b2], "{mode:?}");
    }
}

#[test]
fn a_barrier_orders_only_its_spaces() {
    let shared_only = Barrier { spaces: Spaces::SHARED, ..SYNC };
    // Device write; shared-only barrier; device read: it orders nothing there.
    let mut k = K::kernel();
    let w = k.device(0);
    k.store(w);
    let b = k.bar_with(shared_only);
    let r = k.device(1);
    k.load(r);
    k.ret();
    assert_eq!(k.run(Mode::Categories).removed(), vec![b]);
    assert_eq!(report(&k.run(Mode::Categories), b).flags.device, Flags::default());

    // Device write; full barrier; shared-only barrier; device read: the full one stays.
    let mut k = K::kernel();
    let w = k.device(0);
    k.store(w);
    let full = k.bar();
    let partial = k.bar_with(shared_only);
    let r = k.device(1);
    k.load(r);
    k.ret();
    for mode in ALL_MODES {
        let r = k.run(mode);
        assert_eq!(r.kept(), vec![full], "{mode:?}");
        assert_eq!(r.removed(), vec![partial], "{mode:?}");
    }

    // A store through a pointer of unknown space counts against a shared read...
    let unknown_store = |origin: Op| {
        let mut k = K::kernel();
        let p = k.push(origin, Type::Ptr(MemSpace::Unknown));
        k.store(MemRef { space: MemSpace::Unknown, root: Root::Ptr(p), index: k.tid });
        let b = k.bar_with(shared_only);
        k.ld(k.a, 1);
        k.ret();
        (k, b)
    };
    let (k, b) = unknown_store(Op::Undef);
    assert_eq!(k.run(Mode::Categories).kept(), vec![b]);
    // ...unless it is a kernel's pointer parameter, which the host filled with device memory.
    let (k, b) = unknown_store(Op::Param(2));
    assert_eq!(k.run(Mode::Categories).removed(), vec![b]);
}

#[test]
fn atomics_count_as_read_and_write_and_private_memory_never_counts() {
    let mut k = K::kernel();
    let m = k.shared(k.a, 0);
    let one = k.push(Op::Const(Const::Int(1)), Type::U32);
    k.push(Op::Atomic(AtomicOp::Add, m, vec![one]), Type::U32);
    let b = k.bar();
    k.push(Op::Atomic(AtomicOp::Add, m, vec![one]), Type::U32);
    k.ret();
    assert_eq!(k.run(Mode::Categories).kept(), vec![b]);
    assert_eq!(report(&k.run(Mode::Categories), b).flags.shared, flags(true, true, true, true));

    let mut k = K::kernel();
    k.f.locals.push(Local { name: "tmp".into(), elem: Type::F32, len: 4, span: sp() });
    let m = MemRef { space: MemSpace::Private, root: Root::Local(LocalId(0)), index: k.tid };
    k.store(m);
    let b = k.bar();
    k.load(m);
    let c = MemRef { space: MemSpace::Constant, root: Root::Param(1), index: k.tid };
    k.load(c);
    k.ret();
    for mode in ALL_MODES {
        assert_eq!(k.run(mode).removed(), vec![b], "{mode:?}");
    }
}

#[test]
fn apply_deletes_exactly_the_removed_barriers() {
    let mut k = K::kernel();
    k.st(k.a, 0);
    let bars: Vec<Value> = (0..3).map(|_| k.bar()).collect();
    k.ld(k.a, 1);
    k.ret();
    let r = k.run(Mode::Categories);
    let mut f = k.f.clone();
    apply(&mut f, &r);
    let left: Vec<Value> = f.blocks[0].insts.iter().copied().filter(|v| f.inst(*v).op.is_barrier()).collect();
    assert_eq!(left, vec![bars[2]]);
    // Running again on the result removes nothing more.
    let engine = Engine::new(&k.m, Options { mode: Mode::Categories, ..Options::default() });
    assert!(engine.run(&f, &SameAllocation { module: &k.m }, &HashSet::new()).removed().is_empty());
}

#[test]
fn worklist_and_restart_agree_on_generated_kernels() {
    let (mut removed, mut kept) = ([0usize; 3], [0usize; 3]);
    for seed in 1..60u64 {
        let (m, f) = synth::kernel(25, seed);
        for mode in ALL_MODES {
            for inter_block in [true, false] {
                for assume_calls_safe in [false, true] {
                    let engine = Engine::new(&m, Options { mode, assume_calls_safe, inter_block });
                    let oracle = SameAllocation { module: &m };
                    let none = HashSet::new();
                    let fast = engine.run(&f, &oracle, &none);
                    removed[mode as usize] += fast.removed().len();
                    kept[mode as usize] += fast.kept().len();
                    assert_eq!(decisions(&fast), decisions(&engine.run_restart(&f, &oracle, &none)), "seed {seed} {mode:?} {inter_block}");
                    // Nothing the engine kept is dead once the removals are applied.
                    let mut g = f.clone();
                    apply(&mut g, &fast);
                    assert!(engine.run(&g, &oracle, &none).removed().is_empty(), "seed {seed} {mode:?}");
                }
            }
        }
    }
    // The kernels exercise both outcomes in every mode.
    for mode in 0..3 {
        assert!(removed[mode] > 100 && kept[mode] > 100, "mode {mode}: {} removed, {} kept", removed[mode], kept[mode]);
    }
}

#[test]
fn a_source_barrier_is_removable_only_when_every_copy_is_dead() {
    use lockstep_source::FileId;
    let at = |lo| Span::new(FileId(1), lo, lo + 10);
    let rep = |lo, verdict| BarrierReport { value: Value(lo), span: at(lo), verdict, orders: Spaces::ALL, flags: BarrierFlags::default(), hazard: None };
    let kernel_a = FunctionResult { barriers: vec![rep(40, Verdict::Removed), rep(10, Verdict::Removed)] };
    let kernel_b = FunctionResult { barriers: vec![rep(40, Verdict::Kept(Keep::Needed)), rep(20, Verdict::Removed)] };
    let spans: Vec<Span> = removable_everywhere([&kernel_a, &kernel_b]).iter().map(|b| b.span).collect();
    assert_eq!(spans, vec![at(10), at(20)]);
}

/// helper() { B_h } called by two kernels: in `k1` nothing surrounds the call
/// (B_h is dead there), in `k2` a write comes before it and a read after.
#[test]
fn dead_barriers_of_a_module_need_every_inlined_copy_dead() {
    let file = lockstep_source::FileId(0);
    let bar_span = Span::new(file, 100, 115);
    let mut m = Module::default();
    let a = shared_global(&mut m, "a", GlobalKind::GroupShared);
    let mut h = Function::new("helper", sp());
    let hb = h.add_block(sp());
    h.push(hb, Op::Barrier(SYNC, None), Type::Void, bar_span);
    h.set_term(hb, Terminator::Return(None), sp());
    let helper = m.add_function(h);
    for (name, around) in [("k1", false), ("k2", true)] {
        let mut k = Function::new(name, sp());
        k.entry = Some(EntryInfo::default());
        let b = k.add_block(sp());
        let tid = k.push(b, Op::Builtin(Builtin::LocalId(0)), Type::U32, sp());
        let r = MemRef { space: MemSpace::Shared, root: Root::Global(a), index: tid };
        if around {
            k.push(b, Op::Store(r, tid), Type::Void, sp());
        }
        k.push(b, Op::Call(Callee::Func(helper), vec![]), Type::Void, sp());
        if around {
            k.push(b, Op::Load(r), Type::F32, sp());
        }
        // A barrier of the kernel itself, dead in both (nothing after it).
        let lo = if around { 220 } else { 200 };
        k.push(b, Op::Barrier(SYNC, None), Type::Void, Span::new(file, lo, lo + 15));
        k.set_term(b, Terminator::Return(None), sp());
        m.add_function(k);
    }
    let options = Options { mode: Mode::Categories, ..Options::default() };
    let spans = |r: Vec<BarrierReport>| r.into_iter().map(|b| b.span.lo).collect::<Vec<_>>();
    let none = HashSet::new();
    assert_eq!(spans(dead_barriers(&m, options, &SameAllocation { module: &m }, &none)), vec![200, 220]);
    // With k1 alone the helper's barrier is dead, unless the uniformity check reported it.
    m.functions.truncate(2);
    assert_eq!(spans(dead_barriers(&m, options, &SameAllocation { module: &m }, &none)), vec![100, 200]);
    let divergent: HashSet<Span> = [bar_span].into_iter().collect();
    assert_eq!(spans(dead_barriers(&m, options, &SameAllocation { module: &m }, &divergent)), vec![200]);
}
