//! A small builder for hand-written kernels: every instruction gets the span
//! of a source line written alongside, so reports can be checked by line.
#![allow(dead_code)]

use lockstep_emu::{run, Launch, RunConfig, RunOutcome, Scheduler};
use lockstep_ir::*;
use lockstep_source::{FileId, SourceDb, Span};

pub const FILE: FileId = FileId(0);

pub struct Kb {
    pub m: Module,
    pub f: Function,
    pub cur: BlockId,
    text: String,
    /// Span of the line written last; new instructions get it.
    pub at: Span,
}

pub fn group_barrier() -> Barrier {
    Barrier { exec: Scope::Group, mem: Scope::Group, spaces: Spaces::ALL, reduce: None }
}

impl Kb {
    pub fn new(name: &str, group_size: [u32; 3]) -> Kb {
        let mut f = Function::new(name, Span::new(FILE, 0, 0));
        f.entry = Some(EntryInfo { group_size: Some(group_size), ..EntryInfo::default() });
        let b = f.add_block(Span::new(FILE, 0, 0));
        let mut k = Kb { m: Module::default(), f, cur: b, text: String::new(), at: Span::new(FILE, 0, 0) };
        k.line(&format!("kernel {name}"));
        k
    }

    /// Writes the next source line; instructions built after it point at it.
    /// Returns its 1-based line number.
    pub fn line(&mut self, text: &str) -> u32 {
        let lo = self.text.len() as u32;
        self.text.push_str(text);
        self.at = Span::new(FILE, lo, self.text.len() as u32);
        self.text.push('\n');
        self.text.lines().count() as u32
    }

    fn global(&mut self, name: &str, kind: GlobalKind, space: MemSpace, elem: Type, dims: &[u64], len: Option<u64>) -> GlobalId {
        self.m.add_global(Global {
            name: name.into(),
            kind,
            space,
            elem,
            dims: dims.to_vec(),
            cells_per_elem: 1,
            cell_names: Vec::new(),
            len,
            coherent: false,
            texel_width: 0,
            open_value: None,
            init: Vec::new(),
            span: self.at,
        })
    }
    pub fn shared(&mut self, name: &str, elem: Type, dims: &[u64]) -> GlobalId {
        let len = dims.iter().product();
        self.global(name, GlobalKind::GroupShared, MemSpace::Shared, elem, dims, Some(len))
    }
    pub fn uav(&mut self, name: &str, elem: Type, len: Option<u64>) -> GlobalId {
        self.global(name, GlobalKind::Uav, MemSpace::Device, elem, &[], len)
    }
    pub fn cbuf(&mut self, name: &str, elem: Type) -> GlobalId {
        self.global(name, GlobalKind::Constant, MemSpace::Constant, elem, &[], Some(1))
    }

    pub fn push(&mut self, op: Op, ty: Type) -> Value {
        self.f.push(self.cur, op, ty, self.at)
    }
    pub fn u32c(&mut self, v: u32) -> Value {
        self.push(Op::Const(Const::Int(v as u64)), Type::U32)
    }
    pub fn f32c(&mut self, v: f32) -> Value {
        self.push(Op::Const(Const::Float(v as f64)), Type::F32)
    }
    pub fn builtin(&mut self, b: Builtin) -> Value {
        self.push(Op::Builtin(b), Type::U32)
    }
    pub fn tid(&mut self) -> Value {
        self.builtin(Builtin::LocalIndex)
    }
    pub fn ty(&self, v: Value) -> Type {
        self.f.inst(v).ty
    }
    pub fn bin(&mut self, op: BinOp, a: Value, b: Value) -> Value {
        let t = self.ty(a);
        self.push(Op::Binary(op, a, b), t)
    }
    pub fn add(&mut self, a: Value, b: Value) -> Value {
        self.bin(BinOp::Add, a, b)
    }
    pub fn mul(&mut self, a: Value, b: Value) -> Value {
        self.bin(BinOp::Mul, a, b)
    }
    pub fn cmp(&mut self, op: CmpOp, a: Value, b: Value) -> Value {
        self.push(Op::Cmp(op, a, b), Type::Bool)
    }
    pub fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        let t = self.ty(a);
        self.push(Op::Select(c, a, b), t)
    }
    pub fn load(&mut self, g: GlobalId, idx: Value) -> Value {
        let g_ = self.m.global(g);
        let (space, elem) = (g_.space, g_.elem);
        self.push(Op::Load(MemRef { space, root: Root::Global(g), index: idx }), elem)
    }
    pub fn store(&mut self, g: GlobalId, idx: Value, v: Value) {
        let space = self.m.global(g).space;
        self.push(Op::Store(MemRef { space, root: Root::Global(g), index: idx }, v), Type::Void);
    }
    pub fn atomic(&mut self, op: AtomicOp, g: GlobalId, idx: Value, args: Vec<Value>) -> Value {
        let g_ = self.m.global(g);
        let (space, elem) = (g_.space, g_.elem);
        self.push(Op::Atomic(op, MemRef { space, root: Root::Global(g), index: idx }, args), elem)
    }
    pub fn local(&mut self, name: &str, elem: Type, len: u64) -> LocalId {
        self.f.locals.push(Local { name: name.into(), elem, len, span: self.at });
        LocalId(self.f.locals.len() as u32 - 1)
    }
    pub fn load_local(&mut self, l: LocalId, idx: Value) -> Value {
        let elem = self.f.locals[l.index()].elem;
        self.push(Op::Load(MemRef { space: MemSpace::Private, root: Root::Local(l), index: idx }), elem)
    }
    pub fn store_local(&mut self, l: LocalId, idx: Value, v: Value) {
        self.push(Op::Store(MemRef { space: MemSpace::Private, root: Root::Local(l), index: idx }, v), Type::Void);
    }
    pub fn barrier(&mut self) {
        self.push(Op::Barrier(group_barrier(), None), Type::Void);
    }
    pub fn wave(&mut self, op: WaveOp, args: Vec<Value>, ty: Type) -> Value {
        self.push(Op::Wave(op, args), ty)
    }

    pub fn block(&mut self) -> BlockId {
        self.f.add_block(self.at)
    }
    pub fn switch_to(&mut self, b: BlockId) {
        self.cur = b;
    }
    pub fn jump(&mut self, to: BlockId) {
        self.f.set_term(self.cur, Terminator::Jump(to), self.at);
    }
    pub fn branch(&mut self, c: Value, t: BlockId, e: BlockId) {
        self.f.set_term(self.cur, Terminator::Branch { cond: c, then_to: t, else_to: e }, self.at);
    }
    pub fn ret(&mut self) {
        self.f.set_term(self.cur, Terminator::Return(None), self.at);
    }

    /// `if (c) { then(...) }`, continuing after it.
    pub fn if_then(&mut self, c: Value, then: impl FnOnce(&mut Kb)) {
        let (t, join) = (self.block(), self.block());
        self.branch(c, t, join);
        self.switch_to(t);
        then(self);
        self.jump(join);
        self.switch_to(join);
    }

    /// `for (i = start; i <cmp> end; i = step(i)) body(i)`, on the current line's span for the
    /// condition; returns after the loop. `body` may create blocks.
    pub fn for_loop(&mut self, start: Value, cond: impl FnOnce(&mut Kb, Value) -> Value, step: impl FnOnce(&mut Kb, Value) -> Value, body: impl FnOnce(&mut Kb, Value)) {
        let pre = self.cur;
        let (header, body_b, exit) = (self.block(), self.block(), self.block());
        self.jump(header);
        self.switch_to(header);
        let ty = self.ty(start);
        let i = self.push(Op::Phi(vec![]), ty);
        let c = cond(self, i);
        self.f.block_mut(header).cond_span = Some(self.at);
        self.branch(c, body_b, exit);
        self.switch_to(body_b);
        body(self, i);
        let next = step(self, i);
        let latch = self.cur;
        self.jump(header);
        self.f.inst_mut(i).op = Op::Phi(vec![(pre, start), (latch, next)]);
        self.switch_to(exit);
    }

    pub fn finish(mut self) -> (SourceDb, Module, FuncId) {
        if matches!(self.f.block(self.cur).term, Terminator::Unreachable) {
            self.ret();
        }
        let errors = verify(&self.f);
        assert!(errors.is_empty(), "{errors:?}");
        let mut db = SourceDb::new();
        db.add("kernel.hlsl", self.text.clone());
        let id = self.m.add_function(self.f);
        (db, self.m, id)
    }
}

/// A finished kernel with its source.
pub struct Built {
    pub db: SourceDb,
    pub m: Module,
    pub f: FuncId,
}

impl Built {
    pub fn new(k: Kb) -> Built {
        let (db, m, f) = k.finish();
        Built { db, m, f }
    }
    pub fn run(&self, groups: [u32; 3], launch: &Launch, config: &RunConfig) -> RunOutcome {
        run(&self.db, &self.m, self.f, launch, &RunConfig { groups, ..config.clone() }).expect("run starts")
    }
    /// Findings as (rule, line, message).
    pub fn summary(&self, o: &RunOutcome) -> Vec<(String, u32, String)> {
        o.findings.iter().map(|d| (d.rule.clone(), self.db.location(d.span).0.line, d.message.clone())).collect()
    }
}

pub fn launch(text: &str) -> Launch {
    Launch::parse(text, std::path::Path::new(".")).expect("launch parses")
}

pub const SCHEDULERS: [(Scheduler, u64); 4] = [(Scheduler::RoundRobin, 0), (Scheduler::Reverse, 0), (Scheduler::Random, 1), (Scheduler::Random, 99)];

pub const N: u32 = 16;
pub const TILE: u32 = 4;

/// Tiled C = A × B (16×16, f32) with 4×4 groups; `second_barrier` is the one
/// that keeps the next iteration's tile loads from overwriting tiles still being read.
/// Returns the lines of: the tile loop, the tile loads, the inner product, the second barrier.
pub fn matmul(second_barrier: bool) -> (Built, [u32; 4]) {
    let mut k = Kb::new("matmul", [TILE, TILE, 1]);
    k.line("groupshared float As[4][4]; groupshared float Bs[4][4];");
    let a_s = k.shared("As", Type::F32, &[4, 4]);
    let b_s = k.shared("Bs", Type::F32, &[4, 4]);
    let a = k.uav("A", Type::F32, Some((N * N) as u64));
    let b = k.uav("B", Type::F32, Some((N * N) as u64));
    let c = k.uav("C", Type::F32, Some((N * N) as u64));
    k.line("uint tx = GTid.x, ty = GTid.y, row = Gid.y * 4 + ty, col = Gid.x * 4 + tx; float acc[1];");
    let tx = k.builtin(Builtin::LocalId(0));
    let ty = k.builtin(Builtin::LocalId(1));
    let bx = k.builtin(Builtin::GroupId(0));
    let by = k.builtin(Builtin::GroupId(1));
    let four = k.u32c(TILE);
    let n = k.u32c(N);
    let r0 = k.mul(by, four);
    let row = k.add(r0, ty);
    let c0 = k.mul(bx, four);
    let col = k.add(c0, tx);
    let acc = k.local("acc", Type::F32, 1);
    let zero = k.u32c(0);
    let fz = k.f32c(0.0);
    k.store_local(acc, zero, fz);
    let tile_idx0 = k.mul(ty, four);
    let tile_idx = k.add(tile_idx0, tx);
    let mut lines = [0u32; 4];
    lines[0] = k.line("for (uint t = 0; t < 4; t++) {");
    let t0 = k.u32c(0);
    k.for_loop(
        t0,
        |k, t| {
            let lim = k.u32c(N / TILE);
            k.cmp(CmpOp::Lt, t, lim)
        },
        |k, t| {
            let one = k.u32c(1);
            k.add(t, one)
        },
        |k, t| {
            lines[1] = k.line("    As[ty][tx] = A[row * 16 + t * 4 + tx]; Bs[ty][tx] = B[(t * 4 + ty) * 16 + col];");
            let rn = k.mul(row, n);
            let t4 = k.mul(t, four);
            let ai0 = k.add(rn, t4);
            let ai = k.add(ai0, tx);
            let av = k.load(a, ai);
            k.store(a_s, tile_idx, av);
            let bi0 = k.add(t4, ty);
            let bi1 = k.mul(bi0, n);
            let bi = k.add(bi1, col);
            let bv = k.load(b, bi);
            k.store(b_s, tile_idx, bv);
            k.line("    GroupMemoryBarrierWithGroupSync();");
            k.barrier();
            k.line("    for (uint k = 0; k < 4; k++)");
            let k0 = k.u32c(0);
            k.for_loop(
                k0,
                |k, kk| {
                    let lim = k.u32c(TILE);
                    k.cmp(CmpOp::Lt, kk, lim)
                },
                |k, kk| {
                    let one = k.u32c(1);
                    k.add(kk, one)
                },
                |k, kk| {
                    lines[2] = k.line("        acc += As[ty][k] * Bs[k][tx];");
                    let four = k.u32c(TILE);
                    let ai0 = k.mul(ty, four);
                    let ai = k.add(ai0, kk);
                    let x = k.load(a_s, ai);
                    let bi0 = k.mul(kk, four);
                    let bi = k.add(bi0, tx);
                    let y = k.load(b_s, bi);
                    let p = k.mul(x, y);
                    let zero = k.u32c(0);
                    let cur = k.load_local(acc, zero);
                    let s = k.add(cur, p);
                    k.store_local(acc, zero, s);
                },
            );
            lines[3] = k.line(if second_barrier { "    GroupMemoryBarrierWithGroupSync();" } else { "    // GroupMemoryBarrierWithGroupSync();" });
            if second_barrier {
                k.barrier();
            }
            k.line("}");
        },
    );
    k.line("C[row * 16 + col] = acc;");
    let rn = k.mul(row, n);
    let ci = k.add(rn, col);
    let zero = k.u32c(0);
    let v = k.load_local(acc, zero);
    k.store(c, ci, v);
    (Built::new(k), lines)
}

pub const MATMUL_LAUNCH: &str = "[buffers.A]\nfill = { start = 0.5, step = 0.25 }\n[buffers.B]\nfill = { start = 1, step = -0.125 }\n";

