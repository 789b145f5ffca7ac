//! Instructions and terminators.

use crate::types::{Barrier, Builtin, MemSpace, Type};
use crate::{BlockId, FuncId, GlobalId, LocalId, Value};
use lockstep_source::Span;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// Arithmetic negation.
    Neg,
    /// Bitwise complement.
    Not,
    /// Logical not of a bool.
    LNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    /// A division known to leave no remainder (LLVM's `exact`): a byte
    /// offset into memory of wider values, which alignment makes a whole
    /// number of them.
    ExactDiv,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    /// Arithmetic for signed types, logical for unsigned.
    Shr,
    /// Logical and/or of bools (already short-circuited by the front end when needed).
    LAnd,
    LOr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    /// Whether `x op y` holds.
    pub fn holds<T: PartialOrd>(self, x: T, y: T) -> bool {
        match self {
            CmpOp::Eq => x == y,
            CmpOp::Ne => x != y,
            CmpOp::Lt => x < y,
            CmpOp::Le => x <= y,
            CmpOp::Gt => x > y,
            CmpOp::Ge => x >= y,
        }
    }
}

/// Pure math functions the emulator implements and the analyses treat as
/// "result as uniform as the arguments".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MathFn {
    Min,
    Max,
    Abs,
    Clamp,
    Saturate,
    Sqrt,
    Rsqrt,
    Exp,
    Exp2,
    Log,
    Log2,
    Pow,
    Sin,
    Cos,
    Tan,
    Tanh,
    Sinh,
    Cosh,
    Asin,
    Acos,
    Atan,
    /// `atan2(y, x)`: the angle of the point (x, y), its quadrant from the signs.
    Atan2,
    Floor,
    Ceil,
    /// To the nearest integer, halfway cases to the even one.
    Round,
    /// To the nearest integer, halfway cases away from zero (C's `round`).
    RoundHalfAway,
    Trunc,
    Frac,
    /// `exp(x) - 1`, exact near 0.
    Expm1,
    /// `log(1 + x)`, exact near 0.
    Log1p,
    /// The error function.
    Erf,
    Fma,
    Lerp,
    Sign,
    Step,
    /// Number of set bits of the integer operand.
    PopCount,
    /// Index of the highest set bit (for negative signed operands: the highest clear bit); all ones when none.
    FirstBitHigh,
    /// Index of the lowest set bit; all ones when none.
    FirstBitLow,
    /// One plus the index of the lowest set bit; 0 when none.
    FindLowestSet,
    /// Zero bits above the highest set bit, at the operand's width.
    CountLeadingZeros,
    ReverseBits,
    /// The high half of the double-width product of two integers.
    MulHi,
    /// The product of the low 24 bits of two integers (sign-extended for signed types), wrapped.
    Mul24,
    /// `|a - b| + c` on integers.
    SumAbsDiff,
    /// `1 / x`.
    Reciprocal,
    /// An f32 rounded to the nearest-even half; the half's bits in the low 16 bits of the result.
    F32ToF16,
    /// The half in the low 16 bits of the operand, widened to f32.
    F16ToF32,
    /// Reinterpret the bits of the operand as the result type.
    Bitcast,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Add,
    Sub,
    Min,
    Max,
    And,
    Or,
    Xor,
    Exchange,
    /// Operands: compare, value. Returns the old value.
    CompareExchange,
    Inc,
    Dec,
    /// A plain load/store made atomic (e.g. `atomic_load`), value unchanged.
    Load,
}

/// Cross-lane operations of a wave / warp.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WaveOp {
    /// Same result on every active lane.
    ReadFirst,
    ReadLane,
    AllTrue,
    AnyTrue,
    AllEqual,
    Ballot,
    CountBits,
    Sum,
    Product,
    Min,
    Max,
    BitAnd,
    BitOr,
    BitXor,
    /// Differs per lane (true on one lane).
    IsFirstLane,
    PrefixSum,
    PrefixProduct,
    PrefixCountBits,
    Shuffle,
    ShuffleUp,
    ShuffleDown,
    ShuffleXor,
    /// Result is only uniform when all lanes agree; otherwise differs per lane.
    MatchAny,
}

impl WaveOp {
    /// For an exclusive scan, the operation that folds in the lane's own
    /// value to make the inclusive scan.
    pub fn inclusive_step(self) -> Option<BinOp> {
        match self {
            WaveOp::PrefixSum => Some(BinOp::Add),
            WaveOp::PrefixProduct => Some(BinOp::Mul),
            _ => None,
        }
    }

    /// True when every active lane of the wave gets the same result.
    pub fn is_wave_uniform(self) -> bool {
        !matches!(
            self,
            WaveOp::PrefixSum
                | WaveOp::IsFirstLane
                | WaveOp::PrefixProduct
                | WaveOp::PrefixCountBits
                | WaveOp::Shuffle
                | WaveOp::ShuffleUp
                | WaveOp::ShuffleDown
                | WaveOp::ShuffleXor
                | WaveOp::MatchAny
        )
    }
}

/// What a memory operation addresses: an allocation and a cell index in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Root {
    /// A module-level allocation (group-shared array, UAV, cbuffer field, `__device__` variable).
    Global(GlobalId),
    /// A private array of the function.
    Local(LocalId),
    /// The memory a pointer parameter of a kernel points to (parameter index).
    Param(u32),
    /// A pointer value whose target is not known statically.
    Ptr(Value),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemRef {
    pub space: MemSpace,
    pub root: Root,
    /// Cell index relative to the root (u32 or i32/i64 value).
    pub index: Value,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Const {
    Int(u64),
    Float(f64),
    Bool(bool),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Callee {
    Func(FuncId),
    /// A function whose body we do not have; treated conservatively.
    Opaque(String),
    /// A construct the front end could not model (named here): it may read
    /// and write any memory its operands could reach, in every space.
    Unmodelled(String),
    /// A value the front end does not model (named here): unknown, as
    /// uniform as its operands, and touching no memory.
    UnknownValue(String),
    /// A pointer into the memory its operand points into, at a place the
    /// front end cannot tell (a cast it does not model, named here); the
    /// accesses through it are placed anywhere in that memory.
    PointerView(String),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// The i-th parameter of the function.
    Param(u32),
    Const(Const),
    Undef,
    Unary(UnOp, Value),
    Binary(BinOp, Value, Value),
    Cmp(CmpOp, Value, Value),
    /// cond, if-true, if-false.
    Select(Value, Value, Value),
    /// Numeric conversion to the instruction's type.
    Convert(Value),
    Math(MathFn, Vec<Value>),
    Builtin(Builtin),
    Load(MemRef),
    Store(MemRef, Value),
    /// Returns the old value.
    Atomic(AtomicOp, MemRef, Vec<Value>),
    /// Address of cell `index` of a root (a pointer value).
    AddrOf(Root, Value),
    /// Pointer plus a number of cells.
    PtrAdd(Value, Value),
    /// Returns the reduction for `__syncthreads_count/and/or` (the predicate is the operand).
    Barrier(Barrier, Option<Value>),
    Wave(WaveOp, Vec<Value>),
    Call(Callee, Vec<Value>),
    /// One incoming value per predecessor edge.
    Phi(Vec<(BlockId, Value)>),
}

impl Op {
    /// Values this operation reads, in order.
    pub fn operands(&self) -> Vec<Value> {
        let mut out = Vec::new();
        self.for_each_operand(|v| out.push(v));
        out
    }

    pub fn for_each_operand(&self, mut f: impl FnMut(Value)) {
        fn mem(m: &MemRef, f: &mut impl FnMut(Value)) {
            if let Root::Ptr(p) = m.root {
                f(p);
            }
            f(m.index);
        }
        match self {
            Op::Param(_) | Op::Const(_) | Op::Undef | Op::Builtin(_) => {}
            Op::Unary(_, a) | Op::Convert(a) => f(*a),
            Op::Binary(_, a, b) | Op::Cmp(_, a, b) | Op::PtrAdd(a, b) => {
                f(*a);
                f(*b)
            }
            Op::Select(c, a, b) => {
                f(*c);
                f(*a);
                f(*b)
            }
            Op::Math(_, args) | Op::Wave(_, args) | Op::Call(_, args) => args.iter().copied().for_each(f),
            Op::Load(m) => mem(m, &mut f),
            Op::Store(m, v) => {
                mem(m, &mut f);
                f(*v)
            }
            Op::Atomic(_, m, args) => {
                mem(m, &mut f);
                args.iter().copied().for_each(f)
            }
            Op::AddrOf(root, index) => {
                if let Root::Ptr(p) = root {
                    f(*p);
                }
                f(*index)
            }
            Op::Barrier(_, pred) => pred.iter().copied().for_each(f),
            Op::Phi(incoming) => incoming.iter().for_each(|&(_, v)| f(v)),
        }
    }

    /// Rewrites every operand through `f`.
    pub fn map_operands(&mut self, mut f: impl FnMut(Value) -> Value) {
        fn mem(m: &mut MemRef, f: &mut impl FnMut(Value) -> Value) {
            if let Root::Ptr(p) = &mut m.root {
                *p = f(*p);
            }
            m.index = f(m.index);
        }
        match self {
            Op::Param(_) | Op::Const(_) | Op::Undef | Op::Builtin(_) => {}
            Op::Unary(_, a) | Op::Convert(a) => *a = f(*a),
            Op::Binary(_, a, b) | Op::Cmp(_, a, b) | Op::PtrAdd(a, b) => {
                *a = f(*a);
                *b = f(*b)
            }
            Op::Select(c, a, b) => {
                *c = f(*c);
                *a = f(*a);
                *b = f(*b)
            }
            Op::Math(_, args) | Op::Wave(_, args) | Op::Call(_, args) => args.iter_mut().for_each(|a| *a = f(*a)),
            Op::Load(m) => mem(m, &mut f),
            Op::Store(m, v) => {
                mem(m, &mut f);
                *v = f(*v)
            }
            Op::Atomic(_, m, args) => {
                mem(m, &mut f);
                args.iter_mut().for_each(|a| *a = f(*a))
            }
            Op::AddrOf(root, index) => {
                if let Root::Ptr(p) = root {
                    *p = f(*p);
                }
                *index = f(*index)
            }
            Op::Barrier(_, pred) => {
                if let Some(p) = pred {
                    *p = f(*p)
                }
            }
            Op::Phi(incoming) => incoming.iter_mut().for_each(|(_, v)| *v = f(*v)),
        }
    }

    /// The memory reference of a load, store or atomic.
    pub fn mem_ref(&self) -> Option<&MemRef> {
        match self {
            Op::Load(m) | Op::Store(m, _) | Op::Atomic(_, m, _) => Some(m),
            _ => None,
        }
    }

    pub fn is_barrier(&self) -> bool {
        matches!(self, Op::Barrier(..))
    }
}

/// Why a jump leaves the structured flow, for pointing at the statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ExitKind {
    Return,
    Break,
    Continue,
    Discard,
}

impl ExitKind {
    pub fn keyword(self) -> &'static str {
        match self {
            ExitKind::Return => "return",
            ExitKind::Break => "break",
            ExitKind::Continue => "continue",
            ExitKind::Discard => "discard",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Terminator {
    Jump(BlockId),
    Branch { cond: Value, then_to: BlockId, else_to: BlockId },
    Switch { value: Value, cases: Vec<(u64, BlockId)>, default: BlockId },
    Return(Option<Value>),
    /// The thread stops (HLSL `discard`).
    Discard,
    Unreachable,
}

impl Terminator {
    pub fn successors(&self) -> Vec<BlockId> {
        match self {
            Terminator::Jump(b) => vec![*b],
            Terminator::Branch { then_to, else_to, .. } => vec![*then_to, *else_to],
            Terminator::Switch { cases, default, .. } => {
                let mut v: Vec<BlockId> = cases.iter().map(|&(_, b)| b).collect();
                v.push(*default);
                v
            }
            Terminator::Return(_) | Terminator::Discard | Terminator::Unreachable => Vec::new(),
        }
    }

    pub fn map_successors(&mut self, mut f: impl FnMut(BlockId) -> BlockId) {
        match self {
            Terminator::Jump(b) => *b = f(*b),
            Terminator::Branch { then_to, else_to, .. } => {
                *then_to = f(*then_to);
                *else_to = f(*else_to)
            }
            Terminator::Switch { cases, default, .. } => {
                cases.iter_mut().for_each(|(_, b)| *b = f(*b));
                *default = f(*default)
            }
            Terminator::Return(_) | Terminator::Discard | Terminator::Unreachable => {}
        }
    }

    /// The value a branch or switch decides on.
    pub fn condition(&self) -> Option<Value> {
        match self {
            Terminator::Branch { cond, .. } => Some(*cond),
            Terminator::Switch { value, .. } => Some(*value),
            _ => None,
        }
    }

    pub fn map_operands(&mut self, mut f: impl FnMut(Value) -> Value) {
        match self {
            Terminator::Branch { cond, .. } => *cond = f(*cond),
            Terminator::Switch { value, .. } => *value = f(*value),
            Terminator::Return(Some(v)) => *v = f(*v),
            _ => {}
        }
    }
}

/// An instruction: an operation, its result type, where it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    pub op: Op,
    pub ty: Type,
    pub span: Span,
    /// The source variable this value was assigned to, for messages.
    pub name: Option<String>,
    /// The call site this instruction was inlined through (index into `Function::inline_sites`).
    pub inlined_at: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub insts: Vec<Value>,
    pub term: Terminator,
    /// Span of the statement that produced the terminator (`return`, `if`, loop condition).
    pub term_span: Span,
    /// Set when the terminator comes from `return`, `break`, `continue` or `discard`.
    pub exit: Option<ExitKind>,
    /// For branches: the span of the condition expression as written.
    pub cond_span: Option<Span>,
}
