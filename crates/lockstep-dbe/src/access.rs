//! What an instruction does to memory other threads of the group can see:
//! which space, read or write, and which allocation (as far as is known).

use lockstep_ir::*;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// The memory spaces whose accesses other threads can observe; the dataflow runs once per space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    Shared,
    Device,
}

pub const SPACES: [Space; 2] = [Space::Shared, Space::Device];

impl Space {
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn mem_space(self) -> MemSpace {
        match self {
            Space::Shared => MemSpace::Shared,
            Space::Device => MemSpace::Device,
        }
    }
}

/// Which allocation an access touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Alloc {
    /// A distinct allocation: a `groupshared`/`__shared__` array or a `__device__` variable.
    Exact(GlobalId),
    /// What a parameter the source promises apart points to (`noalias`,
    /// `__restrict__`): it meets no other such parameter's memory.
    Apart(u32),
    /// Anything in the space: dynamic shared memory, buffers, pointers of unknown target.
    Any,
}

impl Alloc {
    pub fn overlaps(self, other: Alloc) -> bool {
        match (self, other) {
            (Alloc::Exact(a), Alloc::Exact(b)) => a == b,
            (Alloc::Apart(a), Alloc::Apart(b)) => a == b,
            _ => true,
        }
    }
}

/// One access of one space, as seen from the instruction that makes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Effect {
    pub space: Space,
    pub read: bool,
    pub write: bool,
    pub alloc: Alloc,
}

/// Read and write of everything in both spaces: an opaque call, an unknown caller context.
pub fn top_effects() -> Vec<Effect> {
    SPACES.iter().map(|&space| Effect { space, read: true, write: true, alloc: Alloc::Any }).collect()
}

/// Where a pointer points, as far as tracing its definition tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Target {
    Global(GlobalId),
    Local,
    /// What a parameter of the function points to (its index).
    Param(u32),
    Other,
    /// Already visited on this trace (a phi cycle): adds nothing to the join.
    Neutral,
}

fn join(a: Target, b: Target) -> Target {
    match (a, b) {
        (Target::Neutral, x) | (x, Target::Neutral) => x,
        (x, y) if x == y => x,
        _ => Target::Other,
    }
}

/// Deep pointer chains are rare; past this the target counts as unknown.
const MAX_TRACE: usize = 64;

fn trace_root(f: &Function, root: &Root, seen: &mut Vec<Value>) -> Target {
    match root {
        Root::Global(g) => Target::Global(*g),
        Root::Local(_) => Target::Local,
        Root::Param(i) => Target::Param(*i),
        Root::Ptr(v) => trace(f, *v, seen),
    }
}

fn trace(f: &Function, v: Value, seen: &mut Vec<Value>) -> Target {
    if seen.contains(&v) {
        return Target::Neutral;
    }
    if seen.len() >= MAX_TRACE || v.index() >= f.insts.len() {
        return Target::Other;
    }
    seen.push(v);
    match &f.inst(v).op {
        Op::AddrOf(root, _) => trace_root(f, root, seen),
        Op::PtrAdd(p, _) | Op::Convert(p) => trace(f, *p, seen),
        Op::Select(_, a, b) => {
            let ta = trace(f, *a, seen);
            join(ta, trace(f, *b, seen))
        }
        Op::Phi(incoming) => incoming.iter().fold(Target::Neutral, |acc, &(_, x)| join(acc, trace(f, x, seen))),
        Op::Param(i) => Target::Param(*i),
        _ => Target::Other,
    }
}

/// The spaces a memory reference counts in and the allocation it touches.
/// A pointer traced to a global takes the global's space (a generic pointer
/// into `__shared__` memory is a shared access); a generic pointer parameter
/// of a kernel points to device memory (the host cannot hand out group
/// memory); private and constant memory count in no space.
pub fn classify_ref(module: &Module, f: &Function, m: &MemRef) -> (Vec<Space>, Alloc) {
    let target = trace_root(f, &m.root, &mut Vec::new());
    let global = match target {
        Target::Global(g) => module.globals.get(g.index()),
        _ => None,
    };
    let space = match (target, global) {
        (_, Some(g)) => g.space,
        (Target::Local, _) => MemSpace::Private,
        // A kernel's pointer parameters point to device memory; those of a
        // function analysed without its caller may point anywhere.
        (Target::Param(_), _) if m.space == MemSpace::Unknown && f.entry.as_ref().is_some_and(|e| !e.caller_unknown) => MemSpace::Device,
        _ => m.space,
    };
    let alloc = match (target, global) {
        (Target::Global(id), Some(g)) if matches!(g.kind, GlobalKind::GroupShared | GlobalKind::DeviceVar) => Alloc::Exact(id),
        (Target::Param(i), _) if f.params.get(i as usize).is_some_and(|p| p.noalias) => Alloc::Apart(i),
        _ => Alloc::Any,
    };
    let spaces = match space {
        MemSpace::Shared => vec![Space::Shared],
        MemSpace::Device => vec![Space::Device],
        MemSpace::Unknown => SPACES.to_vec(),
        MemSpace::Private | MemSpace::Constant => Vec::new(),
    };
    (spaces, alloc)
}

/// Decides whether two accesses on opposite sides of a barrier can touch the
/// same cell from different threads. The engine asks only about pairs of
/// loads/stores/atomics of the function whose allocations may overlap and
/// whose kinds form a hazard (one of them writes).
pub trait HazardOracle {
    fn conflicts(&self, f: &Function, earlier: Value, later: Value) -> bool;
}

/// The conservative oracle: two accesses may conflict when they may touch the
/// same allocation. The race analysis's thread-index reasoning refines this.
pub struct SameAllocation<'m> {
    pub module: &'m Module,
}

impl HazardOracle for SameAllocation<'_> {
    fn conflicts(&self, f: &Function, earlier: Value, later: Value) -> bool {
        let get = |v: Value| f.insts.get(v.index()).and_then(|i| i.op.mem_ref());
        match (get(earlier), get(later)) {
            (Some(a), Some(b)) => classify_ref(self.module, f, a).1.overlaps(classify_ref(self.module, f, b).1),
            _ => true,
        }
    }
}

/// Effects of instructions, with callee summaries computed once per callee.
pub struct Effects<'m> {
    module: &'m Module,
    assume_calls_safe: bool,
    /// None while the callee is being summarised (a recursive call counts as opaque).
    memo: RefCell<HashMap<FuncId, Option<Rc<Vec<Effect>>>>>,
}

impl<'m> Effects<'m> {
    pub fn new(module: &'m Module, assume_calls_safe: bool) -> Effects<'m> {
        Effects { module, assume_calls_safe, memo: RefCell::new(HashMap::new()) }
    }

    /// The visible accesses of instruction `v` of `f` (empty for everything but memory ops and calls).
    pub fn of_inst(&self, f: &Function, v: Value) -> Vec<Effect> {
        let (read, write, m) = match &f.inst(v).op {
            Op::Load(m) => (true, false, m),
            Op::Store(m, _) => (false, true, m),
            Op::Atomic(_, m, _) => (true, true, m),
            Op::Call(callee, _) => return self.of_call(callee).as_ref().clone(),
            _ => return Vec::new(),
        };
        let (spaces, alloc) = classify_ref(self.module, f, m);
        spaces.into_iter().map(|space| Effect { space, read, write, alloc }).collect()
    }

    fn opaque(&self) -> Rc<Vec<Effect>> {
        Rc::new(if self.assume_calls_safe { Vec::new() } else { top_effects() })
    }

    fn of_call(&self, callee: &Callee) -> Rc<Vec<Effect>> {
        let id = match callee {
            // Not a call the user can vouch for: what it touches is unknown.
            Callee::Unmodelled(_) => return Rc::new(top_effects()),
            Callee::UnknownValue(_) => return Rc::new(Vec::new()),
            Callee::Func(id) if self.module.functions.get(id.index()).is_some_and(|g| !g.blocks.is_empty()) => *id,
            _ => return self.opaque(),
        };
        if let Some(known) = self.memo.borrow().get(&id) {
            return match known {
                Some(e) => e.clone(),
                None => Rc::new(top_effects()),
            };
        }
        self.memo.borrow_mut().insert(id, None);
        let g = self.module.function(id);
        let mut all: Vec<Effect> = Vec::new();
        for b in g.block_ids() {
            for &v in &g.block(b).insts {
                if v.index() >= g.insts.len() {
                    continue;
                }
                for e in self.of_inst(g, v) {
                    if !all.contains(&e) {
                        all.push(e);
                    }
                }
            }
        }
        let all = Rc::new(all);
        self.memo.borrow_mut().insert(id, Some(all.clone()));
        all
    }
}
