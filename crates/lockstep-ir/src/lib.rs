//! The language-neutral kernel IR.
//!
//! A [`Module`] holds module-level allocations ([`Global`]) and functions.
//! A [`Function`] is a CFG of [`Block`]s in SSA form; every instruction is a
//! [`Value`] (index into `Function::insts`). The IR is scalar: front ends split
//! vectors and structs into scalars, and memory is addressed in scalar cells.

mod cleanup;
mod display;
mod inline;
mod ops;
mod types;
mod verify;

pub use display::function_to_string;
pub use inline::inline_calls;
pub use ops::*;
pub use types::*;
pub use verify::verify;

use lockstep_source::Span;

macro_rules! id {
    ($name:ident) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);
        impl $name {
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }
    };
}
id!(Value);
id!(BlockId);
id!(FuncId);
id!(GlobalId);
id!(LocalId);

/// What kind of module-level allocation a [`Global`] is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GlobalKind {
    /// `groupshared`, `__shared__`, `__local`, `var<workgroup>`.
    GroupShared,
    /// `extern __shared__ T s[]`: all dynamic shared memory is one allocation.
    DynamicShared,
    /// A read-write buffer or texture (UAV, global array).
    Uav,
    /// A read-only buffer or texture (SRV).
    ReadOnly,
    /// A field of a constant buffer, or a `__constant__` variable.
    Constant,
    /// A `__device__` variable.
    DeviceVar,
}

/// Who chooses the value of a constant the file does not fix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenValue {
    /// A value parameter of a template that no instantiation in the file fixes.
    TemplateParameter,
    /// A pipeline constant: a GLSL specialization constant, a WGSL `override`,
    /// fixed when the host creates the pipeline.
    PipelineConstant,
}

/// Where each texel coordinate starts in a texture's cell index:
/// `x + (y << 16) + (z << 28)`.
pub const TEXEL_SHIFTS: [u32; 3] = [0, 16, 28];

/// A module-level allocation, addressed in cells of `elem`.
#[derive(Clone, Debug, PartialEq)]
pub struct Global {
    pub name: String,
    pub kind: GlobalKind,
    pub space: MemSpace,
    pub elem: Type,
    /// Array dimensions as declared (`tile[16][16]` → [16, 16]); empty for scalars.
    pub dims: Vec<u64>,
    /// Cells per array element (4 for `float4`, the field count for structs).
    pub cells_per_elem: u32,
    /// For struct elements, how the source names each cell of one element
    /// (`.pos.x`, `.mass`); empty otherwise.
    pub cell_names: Vec<String>,
    /// Total cells, when known.
    pub len: Option<u64>,
    /// `globallycoherent` / `volatile`: writes are visible device-wide.
    pub coherent: bool,
    /// For a texture, the widest x coordinate a texel can have (the index is
    /// `x + (y << 16) + (z << 28)`, [`TEXEL_SHIFTS`], so x stays below 2^16);
    /// 0 for everything else.
    pub texel_width: u32,
    /// A constant whose value is chosen outside the file (its `init`, if
    /// any, is only the default): a race that needs one particular value of
    /// it is not proven.
    pub open_value: Option<OpenValue>,
    /// Initial cell values (constants, `static const` tables).
    pub init: Vec<Const>,
    pub span: Span,
}

impl Global {
    /// Writes a cell index as the source would: `tile[2][3]`, `pos[5].y`,
    /// `bodies[1].mass`.
    pub fn describe_cell(&self, cell: u64) -> String {
        let per = self.cells_per_elem.max(1) as u64;
        let (mut elem, comp) = (cell / per, cell % per);
        let mut idx = Vec::new();
        for &d in self.dims.iter().rev() {
            if d == 0 {
                idx.push(elem);
                elem = 0;
            } else {
                idx.push(elem % d);
                elem /= d;
            }
        }
        idx.reverse();
        let mut s = self.name.clone();
        if self.dims.is_empty() && elem > 0 {
            s.push_str(&format!("[{elem}]"));
        }
        for i in idx {
            s.push_str(&format!("[{i}]"));
        }
        if let Some(name) = self.cell_names.get(comp as usize) {
            s.push_str(name);
        } else if per > 1 {
            if per <= 4 {
                s.push('.');
                s.push(['x', 'y', 'z', 'w'][comp as usize]);
            } else {
                s.push_str(&format!("+{comp}"));
            }
        }
        s
    }
}

/// A private (per-thread) array of a function.
#[derive(Clone, Debug, PartialEq)]
pub struct Local {
    pub name: String,
    pub elem: Type,
    pub len: u64,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub ty: Type,
    pub span: Span,
    /// The source promises that no other pointer reaches what this one
    /// points to (`__restrict__`, `restrict`, LLVM `noalias`): two buffers
    /// may be one only where neither is promised apart.
    pub noalias: bool,
}

/// Facts about a kernel entry point.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct EntryInfo {
    /// For a kernel template, which version of it this is, in words ("the
    /// instantiation `k<float, 16>`", or the generic one).
    pub template: Option<String>,
    /// Threads per group, when the source says (`[numthreads]`, `__launch_bounds__` gives only a bound).
    pub group_size: Option<[u32; 3]>,
    /// An upper bound on threads per group (`__launch_bounds__`).
    pub max_threads: Option<u32>,
    /// Upper bounds on the group's extent per axis that in-bounds accesses imply.
    pub axis_limits: [Option<u32>; 3],
    /// The extent per axis a flat thread id is written for (`threadIdx.y *
    /// 32 + threadIdx.x`: 32 along x), for race reports only.
    pub axis_widths: [Option<u32>; 3],
    /// Groups per axis a flat global id is written for (`gid.y * 512 +
    /// gid.x` with 512 threads per group: one group along x), for race
    /// reports only.
    pub grid_widths: [Option<u32>; 3],
    /// The wave size the kernel runs with, when the kernel requires one
    /// (`[WaveSize(n)]`) or its language has only one (CUDA's warp).
    pub wave_size: Option<u32>,
    /// The launches of this kernel found in the same file, in text order.
    pub launches: Vec<Launch>,
    /// Threads per group along each axis where it is known: every launch
    /// agrees on it. The full shape also sets `group_size`.
    pub group_extent: [Option<u32>; 3],
    /// Per axis, the kernel parameter (its `Op::Param` index) that every
    /// launch makes the group's extent there (`dim3(32, k)` with `k` passed
    /// on): a thread id there is below that parameter's value.
    pub group_extent_params: [Option<u32>; 3],
    /// Per axis, how every launch computes the group count there from one
    /// kernel parameter (`param` its `Op::Param` index).
    pub grid_count_params: [Option<GroupCount>; 3],
    /// Comparisons of kernel parameters (by `Op::Param` index) that every
    /// launch runs under.
    pub arg_relations: Vec<ArgRelation>,
    /// Groups in the grid along each axis where it is known (`--grid-size`,
    /// or every launch agrees on it).
    pub grid_size: [Option<u32>; 3],
    /// A device function analysed as if a kernel nobody can see called it
    /// (a header with no kernel): its pointer parameters may point into
    /// shared or device memory.
    pub caller_unknown: bool,
    /// The language rejects a kernel whose group barriers its own,
    /// syntactic uniformity rules cannot show uniform (WGSL): thread ids and
    /// values read from group or writable device memory are non-uniform to
    /// those rules, whatever lockstep can prove about them.
    pub barriers_need_language_uniformity: bool,
}

impl EntryInfo {
    /// Threads per group along an axis, where known.
    pub fn threads_along(&self, ax: usize) -> Option<u32> {
        self.group_size.map(|g| g[ax]).or(self.group_extent[ax])
    }

    /// Whether every launch has a single group: no two groups ever run together.
    pub fn single_group(&self) -> bool {
        self.grid_size == [Some(1); 3]
    }

    /// Records the launches and the components they all agree on as facts;
    /// a component that one launch leaves unknown is unknown.
    pub fn set_launches(&mut self, launches: Vec<Launch>) {
        if let Some((first, rest)) = launches.split_first() {
            let agreed = |pick: fn(&Launch) -> [Option<u32>; 3]| {
                std::array::from_fn(|ax| pick(first)[ax].filter(|&n| rest.iter().all(|l| pick(l)[ax] == Some(n))))
            };
            self.group_extent = agreed(|l| l.group);
            self.group_extent_params = agreed(|l| l.group_params);
            self.grid_count_params = std::array::from_fn(|ax| first.grid_params[ax].filter(|&c| rest.iter().all(|l| l.grid_params[ax] == Some(c))));
            self.grid_size = agreed(|l| l.grid);
            self.arg_relations = first.arg_relations.iter().copied().filter(|r| rest.iter().all(|l| l.arg_relations.contains(r))).collect();
        }
        self.launches = launches;
    }
}

/// One launch of a kernel: `k<<<grid, group>>>(…)` or a launch API call.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    /// Threads per group along each axis; `None` where the source does not fix it.
    pub group: [Option<u32>; 3],
    /// Groups along each axis; `None` where the source does not fix it.
    pub grid: [Option<u32>; 3],
    pub span: Span,
    /// For a kernel template, its arguments as written at the launch
    /// (whitespace removed); None for a plain kernel or a name handed on.
    pub template_args: Option<String>,
    /// The template arguments come from the instantiations of host
    /// templates around the launch (`k<T>` in `run<T>`), not its own text.
    pub derived: bool,
    /// Per axis, the kernel argument (by its place in the source's list)
    /// whose value the group's extent is there.
    pub group_params: [Option<u32>; 3],
    /// Per axis, how the group count is computed from a kernel argument (by
    /// its place in the source's list).
    pub grid_params: [Option<GroupCount>; 3],
    /// Comparisons of the kernel's arguments (by their place in the
    /// source's list) that hold where the host launches it (`if (C / H ==
    /// 64) k<<<…>>>(C, H)`).
    pub arg_relations: Vec<ArgRelation>,
}

/// A comparison between kernel parameters and constants: `lhs cmp rhs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgRelation {
    pub lhs: ArgOperand,
    pub cmp: ArgComparison,
    pub rhs: ArgOperand,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgOperand {
    Param(u32),
    Constant(i64),
    /// One parameter divided by another, rounded toward zero.
    Quotient(u32, u32),
}

impl ArgOperand {
    /// The parameters it reads.
    pub fn params(self) -> Vec<u32> {
        match self {
            ArgOperand::Param(p) => vec![p],
            ArgOperand::Constant(_) => Vec::new(),
            ArgOperand::Quotient(a, b) => vec![a, b],
        }
    }

    /// The same operand with its parameters renamed; None where one has no new name.
    pub fn map_params(self, rename: impl Fn(u32) -> Option<u32>) -> Option<ArgOperand> {
        Some(match self {
            ArgOperand::Param(p) => ArgOperand::Param(rename(p)?),
            ArgOperand::Constant(c) => ArgOperand::Constant(c),
            ArgOperand::Quotient(a, b) => ArgOperand::Quotient(rename(a)?, rename(b)?),
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgComparison {
    Equal,
    AtMost,
    Below,
}

/// A group count a launch computes from one kernel argument:
/// `(param + add) / div`, rounded down (`n / 16`, `(n + 15) / 16`, `n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupCount {
    pub param: u32,
    pub add: i64,
    pub div: u32,
}

/// A call site a function body was inlined through.
#[derive(Clone, Debug, PartialEq)]
pub struct InlineSite {
    pub callee: String,
    pub call_span: Span,
    pub parent: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    pub name: String,
    pub params: Vec<Param>,
    pub ret: Type,
    /// Block 0 is the entry.
    pub blocks: Vec<Block>,
    pub insts: Vec<Inst>,
    pub locals: Vec<Local>,
    /// Set for kernel entry points.
    pub entry: Option<EntryInfo>,
    pub span: Span,
    pub inline_sites: Vec<InlineSite>,
}

impl Function {
    /// Whether block `b` is where no valid execution goes: it does nothing
    /// and ends in `Unreachable` (the way out of a `__builtin_assume` whose
    /// condition fails, undefined behaviour).
    pub fn never_entered(&self, b: BlockId) -> bool {
        let block = self.block(b);
        block.insts.is_empty() && matches!(block.term, Terminator::Unreachable)
    }

    pub fn new(name: impl Into<String>, span: Span) -> Function {
        Function {
            name: name.into(),
            params: Vec::new(),
            ret: Type::Void,
            blocks: Vec::new(),
            insts: Vec::new(),
            locals: Vec::new(),
            entry: None,
            span,
            inline_sites: Vec::new(),
        }
    }

    pub fn inst(&self, v: Value) -> &Inst {
        &self.insts[v.index()]
    }
    pub fn inst_mut(&mut self, v: Value) -> &mut Inst {
        &mut self.insts[v.index()]
    }
    pub fn block(&self, b: BlockId) -> &Block {
        &self.blocks[b.index()]
    }
    pub fn block_mut(&mut self, b: BlockId) -> &mut Block {
        &mut self.blocks[b.index()]
    }
    pub fn block_ids(&self) -> impl Iterator<Item = BlockId> {
        (0..self.blocks.len() as u32).map(BlockId)
    }

    /// Appends a new empty block ending in `unreachable`.
    pub fn add_block(&mut self, span: Span) -> BlockId {
        self.blocks.push(Block {
            insts: Vec::new(),
            term: Terminator::Unreachable,
            term_span: span,
            exit: None,
            cond_span: None,
        });
        BlockId(self.blocks.len() as u32 - 1)
    }

    /// Creates an instruction without placing it in a block.
    pub fn add_inst(&mut self, op: Op, ty: Type, span: Span) -> Value {
        self.insts.push(Inst { op, ty, span, name: None, inlined_at: None });
        Value(self.insts.len() as u32 - 1)
    }

    /// Creates an instruction at the end of `block`.
    pub fn push(&mut self, block: BlockId, op: Op, ty: Type, span: Span) -> Value {
        let v = self.add_inst(op, ty, span);
        self.blocks[block.index()].insts.push(v);
        v
    }

    pub fn set_term(&mut self, block: BlockId, term: Terminator, span: Span) {
        let b = &mut self.blocks[block.index()];
        b.term = term;
        b.term_span = span;
    }

    /// Predecessors of every block, in a stable order.
    pub fn predecessors(&self) -> Vec<Vec<BlockId>> {
        let mut preds = vec![Vec::new(); self.blocks.len()];
        for b in self.block_ids() {
            for s in self.block(b).term.successors() {
                if !preds[s.index()].contains(&b) {
                    preds[s.index()].push(b);
                }
            }
        }
        preds
    }

    /// Per instruction, whether an instruction or terminator of a block uses its value.
    pub fn used_values(&self) -> Vec<bool> {
        let mut used = vec![false; self.insts.len()];
        for block in &self.blocks {
            for &v in &block.insts {
                self.insts[v.index()].op.for_each_operand(|o| used[o.index()] = true);
            }
            if let Some(c) = block.term.condition() {
                used[c.index()] = true;
            }
            if let Terminator::Return(Some(v)) = block.term {
                used[v.index()] = true;
            }
        }
        used
    }

    /// The buffers and globals the function reads and never writes (no
    /// store, no atomic); none where a call lockstep does not follow may
    /// write anything.
    pub fn read_only_roots(&self) -> std::collections::HashSet<Root> {
        let (mut read, mut written) = (std::collections::HashSet::new(), std::collections::HashSet::new());
        for inst in &self.insts {
            match &inst.op {
                Op::Load(r) if matches!(r.root, Root::Param(_) | Root::Global(_)) => {
                    read.insert(r.root);
                }
                Op::Store(r, _) | Op::Atomic(_, r, _) => {
                    written.insert(r.root);
                }
                Op::Call(Callee::Opaque(_) | Callee::Unmodelled(_), args) if !args.is_empty() => return Default::default(),
                _ => {}
            }
        }
        read.retain(|r| !written.contains(r));
        read
    }

    /// The block each instruction is placed in (None for unplaced ones).
    pub fn inst_blocks(&self) -> Vec<Option<BlockId>> {
        let mut at = vec![None; self.insts.len()];
        for b in self.block_ids() {
            for &v in &self.block(b).insts {
                at[v.index()] = Some(b);
            }
        }
        at
    }

    /// The constant an instruction computes, if it is a literal.
    #[inline]
    pub fn as_const(&self, v: Value) -> Option<&Const> {
        match &self.inst(v).op {
            Op::Const(c) => Some(c),
            _ => None,
        }
    }

    /// Integer constant value, sign-extended for signed types.
    #[inline]
    pub fn as_int(&self, v: Value) -> Option<i64> {
        match self.as_const(v)? {
            Const::Int(bits) => Some(match self.inst(v).ty {
                Type::I8 => *bits as u8 as i8 as i64,
                Type::U8 => *bits as u8 as i64,
                Type::I16 => *bits as u16 as i16 as i64,
                Type::U16 => *bits as u16 as i64,
                Type::I32 => *bits as u32 as i32 as i64,
                Type::U32 => *bits as u32 as i64,
                _ => *bits as i64,
            }),
            Const::Bool(b) => Some(*b as i64),
            Const::Float(_) => None,
        }
    }

    /// The chain of call sites an instruction was inlined through, innermost first.
    pub fn inline_chain(&self, v: Value) -> Vec<&InlineSite> {
        let mut out = Vec::new();
        let mut next = self.inst(v).inlined_at;
        while let Some(i) = next {
            let site = &self.inline_sites[i as usize];
            out.push(site);
            next = site.parent;
        }
        out
    }
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Module {
    pub globals: Vec<Global>,
    pub functions: Vec<Function>,
    /// True when fence-only barriers are group operations every thread is
    /// meant to execute (HLSL `GroupMemoryBarrier`), false when a fence only
    /// orders the calling thread's own accesses (CUDA `__threadfence`).
    pub collective_fences: bool,
    /// How the source language spells the barrier that orders group memory
    /// for every thread of the group (`__syncthreads()`, `barrier()`), and
    /// one that also orders device memory; messages name them. Empty where
    /// the input has no source language (LLVM IR).
    pub group_barrier: String,
    pub device_barrier: String,
    /// The barrier of one wave (`__syncwarp()`, `subgroupBarrier()`); empty
    /// where the language has none (HLSL, WGSL).
    pub wave_barrier: String,
    /// Group-shared memory starts zeroed, ordered before the kernel's first
    /// access (WGSL's workgroup variables): a read before any write reads 0.
    pub group_memory_zeroed: bool,
}

impl Module {
    pub fn global(&self, g: GlobalId) -> &Global {
        &self.globals[g.index()]
    }
    pub fn function(&self, f: FuncId) -> &Function {
        &self.functions[f.index()]
    }
    pub fn add_global(&mut self, g: Global) -> GlobalId {
        self.globals.push(g);
        GlobalId(self.globals.len() as u32 - 1)
    }
    pub fn add_function(&mut self, f: Function) -> FuncId {
        self.functions.push(f);
        FuncId(self.functions.len() as u32 - 1)
    }
    pub fn find_function(&self, name: &str) -> Option<FuncId> {
        self.functions.iter().position(|f| f.name == name).map(|i| FuncId(i as u32))
    }
    /// Kernel entry points.
    pub fn entries(&self) -> impl Iterator<Item = FuncId> + '_ {
        self.functions.iter().enumerate().filter(|(_, f)| f.entry.is_some()).map(|(i, _)| FuncId(i as u32))
    }
}
