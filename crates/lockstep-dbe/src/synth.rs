//! Generated kernels with many barriers, for the scaling benchmark and for
//! cross-checking the incremental engine against the full restart.

use lockstep_ir::*;
use lockstep_source::{FileId, Span};

/// A small deterministic generator (xorshift64*), so runs are repeatable.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct Gen {
    f: Function,
    rng: Rng,
    cur: BlockId,
    tid: Value,
    arrays: [GlobalId; 3],
    helper: FuncId,
    barriers: usize,
}

fn sp() -> Span {
    Span::new(FileId(0), 0, 0)
}

impl Gen {
    fn push(&mut self, op: Op, ty: Type) -> Value {
        self.f.push(self.cur, op, ty, sp())
    }

    fn int(&mut self, k: u64) -> Value {
        self.push(Op::Const(Const::Int(k)), Type::U32)
    }

    fn barrier(&mut self) {
        let bar = Barrier { exec: Scope::Group, mem: Scope::Group, spaces: Spaces::ALL, reduce: None };
        self.push(Op::Barrier(bar, None), Type::Void);
        self.barriers += 1;
    }

    /// One random access (or none): own or neighbour element of a shared array,
    /// a device write, an atomic, a call.
    fn access(&mut self) {
        let g = self.arrays[self.rng.below(3) as usize];
        let (space, root) = if g == self.arrays[2] { (MemSpace::Device, Root::Param(0)) } else { (MemSpace::Shared, Root::Global(g)) };
        let one = self.int(1);
        let index = if self.rng.below(2) == 0 { self.tid } else { self.push(Op::Binary(BinOp::Add, self.tid, one), Type::U32) };
        let m = MemRef { space, root, index };
        match self.rng.below(6) {
            0 | 1 => {
                self.push(Op::Load(m), Type::F32);
            }
            2 | 3 => {
                self.push(Op::Store(m, one), Type::Void);
            }
            4 => {
                self.push(Op::Atomic(AtomicOp::Add, m, vec![one]), Type::U32);
            }
            _ => {
                if self.rng.below(2) == 0 {
                    self.push(Op::Call(Callee::Func(self.helper), vec![]), Type::Void);
                } else {
                    self.push(Op::Binary(BinOp::Mul, self.tid, one), Type::U32);
                }
            }
        }
    }

    fn accesses(&mut self) {
        for _ in 0..self.rng.below(3) {
            self.access();
        }
    }

    fn new_block(&mut self) -> BlockId {
        self.f.add_block(sp())
    }

    fn jump_to_new(&mut self) -> BlockId {
        let b = self.new_block();
        self.f.set_term(self.cur, Terminator::Jump(b), sp());
        self.cur = b;
        b
    }

    /// One section: straight code, a uniform if/else, a counted loop, or a run of barriers.
    fn section(&mut self) {
        match self.rng.below(4) {
            0 => {
                self.accesses();
                self.barrier();
                self.accesses();
            }
            1 => {
                let cond = self.push(Op::Param(1), Type::Bool);
                let (then_b, else_b, join) = (self.new_block(), self.new_block(), self.new_block());
                self.f.set_term(self.cur, Terminator::Branch { cond, then_to: then_b, else_to: else_b }, sp());
                for arm in [then_b, else_b] {
                    self.cur = arm;
                    self.accesses();
                    if self.rng.below(2) == 0 {
                        self.barrier();
                    }
                    self.accesses();
                    self.f.set_term(arm, Terminator::Jump(join), sp());
                }
                self.cur = join;
            }
            2 => {
                let pre = self.cur;
                let zero = self.int(0);
                let header = self.jump_to_new();
                let (body, exit) = (self.new_block(), self.new_block());
                let i = self.push(Op::Phi(Vec::new()), Type::U32);
                let n = self.push(Op::Param(2), Type::U32);
                let c = self.push(Op::Cmp(CmpOp::Lt, i, n), Type::Bool);
                self.f.set_term(header, Terminator::Branch { cond: c, then_to: body, else_to: exit }, sp());
                self.cur = body;
                self.accesses();
                self.barrier();
                self.accesses();
                let one = self.int(1);
                let next = self.push(Op::Binary(BinOp::Add, i, one), Type::U32);
                let latch = self.cur;
                self.f.set_term(latch, Terminator::Jump(header), sp());
                self.f.inst_mut(i).op = Op::Phi(vec![(pre, zero), (latch, next)]);
                self.cur = exit;
            }
            _ => {
                for _ in 0..2 + self.rng.below(2) {
                    self.barrier();
                }
                self.accesses();
            }
        }
    }
}

/// A kernel with at least `barriers` group barriers (sections are added until
/// the count is reached), plus the module holding its shared arrays and a
/// helper function that writes shared memory.
pub fn kernel(barriers: usize, seed: u64) -> (Module, Function) {
    let mut m = Module::default();
    let mut arrays = [GlobalId(0); 3];
    for (i, a) in arrays.iter_mut().enumerate() {
        *a = m.add_global(Global {
            name: format!("s{i}"),
            kind: GlobalKind::GroupShared,
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
        });
    }
    let mut h = Function::new("helper", sp());
    let hb = h.add_block(sp());
    let z = h.push(hb, Op::Const(Const::Int(0)), Type::U32, sp());
    h.push(hb, Op::Store(MemRef { space: MemSpace::Shared, root: Root::Global(arrays[0]), index: z }, z), Type::Void, sp());
    h.set_term(hb, Terminator::Return(None), sp());
    let helper = m.add_function(h);

    let mut f = Function::new(format!("synth{barriers}"), sp());
    f.entry = Some(EntryInfo::default());
    let entry = f.add_block(sp());
    let tid = f.push(entry, Op::Builtin(Builtin::LocalId(0)), Type::U32, sp());
    let mut g = Gen { f, rng: Rng(seed.max(1)), cur: entry, tid, arrays, helper, barriers: 0 };
    while g.barriers < barriers {
        g.section();
    }
    g.accesses();
    g.f.set_term(g.cur, Terminator::Return(None), sp());
    (m, g.f)
}

#[cfg(test)]
mod tests {
    #[test]
    fn generated_kernels_are_well_formed_and_have_the_barriers_asked_for() {
        for n in [1, 10, 100] {
            let (_, f) = super::kernel(n, 7);
            assert!(lockstep_ir::verify(&f).is_empty(), "{:?}", lockstep_ir::verify(&f));
            let count = f.blocks.iter().flat_map(|b| &b.insts).filter(|v| f.inst(**v).op.is_barrier()).count();
            assert!(count >= n && count < n + 4, "{count} for {n}");
        }
    }
}
