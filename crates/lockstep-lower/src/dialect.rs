//! Per-language tables: everything language-specific the lowering needs.
//! The lowering itself is shared; a new C-family dialect is a new table.

use lockstep_ir::{AtomicOp, Barrier, BarrierReduce, BinOp, Builtin, MathFn, MemSpace, Scope, Spaces, Type, WaveOp};

/// How a name used as a variable maps to thread identity.
#[derive(Clone, Copy, Debug)]
pub enum BuiltinVar {
    /// A 3-component vector of builtins (`threadIdx`).
    Vec3(fn(u8) -> Builtin),
    /// A constant (`warpSize` on NVIDIA hardware).
    Const(u32),
}

/// What an entry-point parameter semantic means (HLSL `SV_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Semantic {
    DispatchThreadId,
    GroupThreadId,
    GroupId,
    GroupIndex,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResourceKind {
    /// Indexable buffer (`RWStructuredBuffer<T>`, `Buffer<T>`).
    Buffer,
    /// Byte-addressed buffer (`RWByteAddressBuffer`).
    ByteAddress,
    /// Texture with integer coordinates.
    Texture { dims: u8 },
    /// `ConstantBuffer<T>`.
    ConstantBuffer,
    /// Samplers and other handles that hold no data.
    Handle,
}

#[derive(Clone, Copy, Debug)]
pub struct ResourceType {
    pub name: &'static str,
    pub kind: ResourceKind,
    pub writable: bool,
}

/// Cooperative-groups style objects whose `.sync()` is a barrier.
#[derive(Clone, Copy, Debug)]
pub struct SyncObject {
    /// The function returning the object (`this_thread_block`).
    pub constructor: &'static str,
    pub exec: Scope,
}

pub struct Dialect {
    pub name: &'static str,
    /// Barrier and fence intrinsics by name.
    pub barriers: &'static [(&'static str, Barrier)],
    /// Barrier with flags arguments (SM 6.8 `Barrier(memory, semantics)`).
    pub flag_barrier: Option<&'static str>,
    pub builtin_vars: &'static [(&'static str, BuiltinVar)],
    pub semantics: &'static [(&'static str, Semantic)],
    /// Functions returning a thread builtin (`WaveGetLaneIndex`).
    pub builtin_calls: &'static [(&'static str, Builtin)],
    /// Declaration qualifiers that put a variable into a memory space.
    pub space_qualifiers: &'static [(&'static str, MemSpace)],
    /// Qualifier that makes device writes coherent (`globallycoherent`).
    pub coherent_qualifiers: &'static [&'static str],
    /// Attribute / specifier marking a kernel entry point.
    pub entry_marker: EntryMarker,
    pub resources: &'static [ResourceType],
    /// Atomic functions: name, op, whether the destination is a pointer (CUDA) or an lvalue (HLSL).
    pub atomics: &'static [(&'static str, AtomicOp)],
    pub atomic_dest_is_pointer: bool,
    pub wave_ops: &'static [(&'static str, WaveOp)],
    /// Wave intrinsics whose first argument is a lane mask to skip (`__shfl_sync(mask, …)`).
    pub wave_mask_first: bool,
    /// Intrinsic functions: integer, float, half, bit and memory-fetch built-ins.
    pub intrinsics: &'static [Intrinsic],
    /// Prefixes of toolkit intrinsic names (`__` in CUDA): a call to an unknown function
    /// with one is an intrinsic lockstep does not model, worth a warning.
    pub intrinsic_prefixes: &'static [&'static str],
    pub sync_objects: &'static [SyncObject],
    /// Whether an unsuffixed float literal is double (C/CUDA) or float (HLSL).
    pub float_literal_is_double: bool,
    /// Global variables without a space qualifier are constants (HLSL `$Globals`).
    pub plain_globals_are_constant: bool,
    /// Fence-only barriers are collective (HLSL) rather than per-thread (CUDA).
    pub collective_fences: bool,
    /// Files mix host functions with device code (CUDA): the bodies of
    /// host-only functions are skipped when parsing.
    pub host_code: bool,
    /// A function that ends the thread when any component of its argument is negative (`clip`).
    pub discard_if_negative: Option<&'static str>,
    /// Toolkit and system headers whose declarations the dialect table already
    /// models; a missing `<…>` include of one of these is not worth a warning.
    pub modelled_headers: &'static [&'static str],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryMarker {
    /// `[numthreads(x,y,z)]` attribute.
    NumThreadsAttribute,
    /// `__global__` specifier.
    GlobalSpecifier,
}

const fn bar(exec: Scope, mem: Scope, spaces: Spaces) -> Barrier {
    Barrier { exec, mem, spaces, reduce: None }
}

const fn reduce(r: BarrierReduce) -> Barrier {
    Barrier { exec: Scope::Group, mem: Scope::Group, spaces: Spaces::ALL, reduce: Some(r) }
}

/// How an intrinsic's arguments are converted before the operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operands {
    /// To the arguments' common arithmetic type (`min(int, int)` stays integer).
    Common,
    /// To their common type, promoted to f32 when that is an integer (`sqrt(int)`).
    CommonFloat,
    /// To this type, as a call to a function with that parameter type converts.
    Fixed(Type),
    /// Kept as they are: the operation reads the argument's bits (`asuint`).
    Bits,
}

/// The IR an intrinsic lowers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntrinsicOp {
    Math(MathFn),
    /// A plain arithmetic operator (`__fadd_rn` is `a + b` rounded to nearest even).
    Binary(BinOp),
    /// A numeric conversion to the result type, rounding to nearest even.
    Convert,
    /// Rounds with the given function (`Floor`, `Ceil`, `Round`, `Trunc`), then converts to the result type.
    RoundThenConvert(MathFn),
    /// A load through the pointer argument (`__ldg`).
    LoadThroughPointer,
    /// Element `index` of the first argument's memory (`tex1Dfetch(texture, index)`).
    FetchElement,
    /// The mask of the wave's active lanes: a ballot of `true`, uniform per wave.
    ActiveLaneMask,
}

/// One intrinsic function: its name, the IR it becomes and its types.
#[derive(Clone, Copy, Debug)]
pub struct Intrinsic {
    pub name: &'static str,
    pub op: IntrinsicOp,
    pub operands: Operands,
    /// The result type; `None` when it is the type of the converted operands.
    pub result: Option<Type>,
}

const fn common(name: &'static str, f: MathFn) -> Intrinsic {
    Intrinsic { name, op: IntrinsicOp::Math(f), operands: Operands::Common, result: None }
}
const fn float(name: &'static str, f: MathFn) -> Intrinsic {
    Intrinsic { name, op: IntrinsicOp::Math(f), operands: Operands::CommonFloat, result: None }
}
const fn fixed(name: &'static str, f: MathFn, operand: Type, result: Type) -> Intrinsic {
    Intrinsic { name, op: IntrinsicOp::Math(f), operands: Operands::Fixed(operand), result: Some(result) }
}
const fn common_to(name: &'static str, f: MathFn, result: Type) -> Intrinsic {
    Intrinsic { name, op: IntrinsicOp::Math(f), operands: Operands::Common, result: Some(result) }
}
const fn bitcast(name: &'static str, result: Type) -> Intrinsic {
    Intrinsic { name, op: IntrinsicOp::Math(MathFn::Bitcast), operands: Operands::Bits, result: Some(result) }
}
const fn binary(name: &'static str, op: BinOp, ty: Type) -> Intrinsic {
    Intrinsic { name, op: IntrinsicOp::Binary(op), operands: Operands::Fixed(ty), result: None }
}
const fn round_to(name: &'static str, rounding: MathFn, result: Type) -> Intrinsic {
    Intrinsic { name, op: IntrinsicOp::RoundThenConvert(rounding), operands: Operands::Fixed(Type::F32), result: Some(result) }
}
const fn convert(name: &'static str, operand: Type, result: Type) -> Intrinsic {
    Intrinsic { name, op: IntrinsicOp::Convert, operands: Operands::Fixed(operand), result: Some(result) }
}
const fn memory(name: &'static str, op: IntrinsicOp) -> Intrinsic {
    Intrinsic { name, op, operands: Operands::Bits, result: None }
}

const HLSL_INTRINSICS: &[Intrinsic] = &[
    common("min", MathFn::Min),
    common("max", MathFn::Max),
    common("abs", MathFn::Abs),
    common("clamp", MathFn::Clamp),
    // HLSL `sign` returns an int whatever its operand.
    common_to("sign", MathFn::Sign, Type::I32),
    // `mad` of integers is an integer multiply-add.
    common("mad", MathFn::Fma),
    float("fma", MathFn::Fma),
    float("saturate", MathFn::Saturate),
    float("rcp", MathFn::Reciprocal),
    float("sqrt", MathFn::Sqrt),
    float("rsqrt", MathFn::Rsqrt),
    float("exp", MathFn::Exp),
    float("exp2", MathFn::Exp2),
    float("log", MathFn::Log),
    float("log2", MathFn::Log2),
    float("pow", MathFn::Pow),
    float("sin", MathFn::Sin),
    float("cos", MathFn::Cos),
    float("tan", MathFn::Tan),
    float("floor", MathFn::Floor),
    float("ceil", MathFn::Ceil),
    float("round", MathFn::Round),
    float("trunc", MathFn::Trunc),
    float("frac", MathFn::Frac),
    float("lerp", MathFn::Lerp),
    float("step", MathFn::Step),
    common_to("countbits", MathFn::PopCount, Type::U32),
    common_to("firstbithigh", MathFn::FirstBitHigh, Type::U32),
    common_to("firstbitlow", MathFn::FirstBitLow, Type::U32),
    fixed("reversebits", MathFn::ReverseBits, Type::U32, Type::U32),
    bitcast("asuint", Type::U32),
    bitcast("asint", Type::I32),
    bitcast("asfloat", Type::F32),
    fixed("f32tof16", MathFn::F32ToF16, Type::F32, Type::U32),
    fixed("f16tof32", MathFn::F16ToF32, Type::U32, Type::F32),
];

const CUDA_INTRINSICS: &[Intrinsic] = &[
    common("min", MathFn::Min),
    common("max", MathFn::Max),
    fixed("umin", MathFn::Min, Type::U32, Type::U32),
    fixed("umax", MathFn::Max, Type::U32, Type::U32),
    fixed("llmin", MathFn::Min, Type::I64, Type::I64),
    fixed("llmax", MathFn::Max, Type::I64, Type::I64),
    fixed("ullmin", MathFn::Min, Type::U64, Type::U64),
    fixed("ullmax", MathFn::Max, Type::U64, Type::U64),
    common("abs", MathFn::Abs),
    fixed("fminf", MathFn::Min, Type::F32, Type::F32),
    fixed("fmaxf", MathFn::Max, Type::F32, Type::F32),
    float("fmin", MathFn::Min),
    float("fmax", MathFn::Max),
    fixed("fabsf", MathFn::Abs, Type::F32, Type::F32),
    float("fabs", MathFn::Abs),
    float("sqrt", MathFn::Sqrt),
    fixed("sqrtf", MathFn::Sqrt, Type::F32, Type::F32),
    fixed("rsqrtf", MathFn::Rsqrt, Type::F32, Type::F32),
    float("rsqrt", MathFn::Rsqrt),
    float("exp", MathFn::Exp),
    fixed("expf", MathFn::Exp, Type::F32, Type::F32),
    fixed("__expf", MathFn::Exp, Type::F32, Type::F32),
    fixed("exp2f", MathFn::Exp2, Type::F32, Type::F32),
    float("log", MathFn::Log),
    fixed("logf", MathFn::Log, Type::F32, Type::F32),
    fixed("__logf", MathFn::Log, Type::F32, Type::F32),
    fixed("log2f", MathFn::Log2, Type::F32, Type::F32),
    float("pow", MathFn::Pow),
    fixed("powf", MathFn::Pow, Type::F32, Type::F32),
    float("sin", MathFn::Sin),
    fixed("sinf", MathFn::Sin, Type::F32, Type::F32),
    fixed("__sinf", MathFn::Sin, Type::F32, Type::F32),
    float("cos", MathFn::Cos),
    fixed("cosf", MathFn::Cos, Type::F32, Type::F32),
    fixed("__cosf", MathFn::Cos, Type::F32, Type::F32),
    fixed("tanf", MathFn::Tan, Type::F32, Type::F32),
    float("floor", MathFn::Floor),
    fixed("floorf", MathFn::Floor, Type::F32, Type::F32),
    float("ceil", MathFn::Ceil),
    fixed("ceilf", MathFn::Ceil, Type::F32, Type::F32),
    fixed("rintf", MathFn::Round, Type::F32, Type::F32),
    fixed("truncf", MathFn::Trunc, Type::F32, Type::F32),
    float("fma", MathFn::Fma),
    fixed("fmaf", MathFn::Fma, Type::F32, Type::F32),
    fixed("__fmaf_rn", MathFn::Fma, Type::F32, Type::F32),
    fixed("__saturatef", MathFn::Saturate, Type::F32, Type::F32),
    fixed("__frcp_rn", MathFn::Reciprocal, Type::F32, Type::F32),
    fixed("__fsqrt_rn", MathFn::Sqrt, Type::F32, Type::F32),
    binary("__fadd_rn", BinOp::Add, Type::F32),
    binary("__fsub_rn", BinOp::Sub, Type::F32),
    binary("__fmul_rn", BinOp::Mul, Type::F32),
    binary("__fdiv_rn", BinOp::Div, Type::F32),
    // The hardware's approximate division; modelled as the correctly rounded quotient.
    binary("__fdividef", BinOp::Div, Type::F32),
    binary("__dadd_rn", BinOp::Add, Type::F64),
    binary("__dmul_rn", BinOp::Mul, Type::F64),
    fixed("__popc", MathFn::PopCount, Type::U32, Type::I32),
    fixed("__popcll", MathFn::PopCount, Type::U64, Type::I32),
    fixed("__clz", MathFn::CountLeadingZeros, Type::I32, Type::I32),
    fixed("__clzll", MathFn::CountLeadingZeros, Type::I64, Type::I32),
    fixed("__ffs", MathFn::FindLowestSet, Type::I32, Type::I32),
    fixed("__ffsll", MathFn::FindLowestSet, Type::I64, Type::I32),
    fixed("__brev", MathFn::ReverseBits, Type::U32, Type::U32),
    fixed("__brevll", MathFn::ReverseBits, Type::U64, Type::U64),
    fixed("__umulhi", MathFn::MulHi, Type::U32, Type::U32),
    fixed("__mulhi", MathFn::MulHi, Type::I32, Type::I32),
    fixed("__umul64hi", MathFn::MulHi, Type::U64, Type::U64),
    fixed("__mul64hi", MathFn::MulHi, Type::I64, Type::I64),
    fixed("__umul24", MathFn::Mul24, Type::U32, Type::U32),
    fixed("__mul24", MathFn::Mul24, Type::I32, Type::I32),
    fixed("__usad", MathFn::SumAbsDiff, Type::U32, Type::U32),
    // `__sad(int, int, unsigned)`: the third operand keeps its bits through the i32 conversion.
    fixed("__sad", MathFn::SumAbsDiff, Type::I32, Type::U32),
    round_to("__float2int_rn", MathFn::Round, Type::I32),
    round_to("__float2int_rz", MathFn::Trunc, Type::I32),
    round_to("__float2int_rd", MathFn::Floor, Type::I32),
    round_to("__float2int_ru", MathFn::Ceil, Type::I32),
    round_to("__float2uint_rn", MathFn::Round, Type::U32),
    round_to("__float2uint_rz", MathFn::Trunc, Type::U32),
    convert("__int2float_rn", Type::I32, Type::F32),
    convert("__uint2float_rn", Type::U32, Type::F32),
    fixed("__float_as_int", MathFn::Bitcast, Type::F32, Type::I32),
    fixed("__float_as_uint", MathFn::Bitcast, Type::F32, Type::U32),
    fixed("__int_as_float", MathFn::Bitcast, Type::I32, Type::F32),
    fixed("__uint_as_float", MathFn::Bitcast, Type::U32, Type::F32),
    fixed("__double_as_longlong", MathFn::Bitcast, Type::F64, Type::I64),
    fixed("__longlong_as_double", MathFn::Bitcast, Type::I64, Type::F64),
    fixed("__float2half", MathFn::F32ToF16, Type::F32, Type::F16),
    fixed("__float2half_rn", MathFn::F32ToF16, Type::F32, Type::F16),
    fixed("__half2float", MathFn::F16ToF32, Type::F16, Type::F32),
    memory("__ldg", IntrinsicOp::LoadThroughPointer),
    memory("tex1Dfetch", IntrinsicOp::FetchElement),
    memory("__activemask", IntrinsicOp::ActiveLaneMask),
];

pub static HLSL: Dialect = Dialect {
    name: "hlsl",
    barriers: &[
        ("GroupMemoryBarrier", bar(Scope::None, Scope::Group, Spaces::SHARED)),
        ("GroupMemoryBarrierWithGroupSync", bar(Scope::Group, Scope::Group, Spaces::SHARED)),
        ("DeviceMemoryBarrier", bar(Scope::None, Scope::Device, Spaces::DEVICE)),
        ("DeviceMemoryBarrierWithGroupSync", bar(Scope::Group, Scope::Device, Spaces::DEVICE)),
        ("AllMemoryBarrier", bar(Scope::None, Scope::Device, Spaces::ALL)),
        ("AllMemoryBarrierWithGroupSync", bar(Scope::Group, Scope::Device, Spaces::ALL)),
    ],
    flag_barrier: Some("Barrier"),
    builtin_vars: &[],
    semantics: &[
        ("SV_DispatchThreadID", Semantic::DispatchThreadId),
        ("SV_GroupThreadID", Semantic::GroupThreadId),
        ("SV_GroupID", Semantic::GroupId),
        ("SV_GroupIndex", Semantic::GroupIndex),
    ],
    builtin_calls: &[("WaveGetLaneIndex", Builtin::LaneId), ("WaveGetLaneCount", Builtin::WaveSize)],
    space_qualifiers: &[("groupshared", MemSpace::Shared)],
    coherent_qualifiers: &["globallycoherent"],
    entry_marker: EntryMarker::NumThreadsAttribute,
    resources: &[
        ResourceType { name: "RWStructuredBuffer", kind: ResourceKind::Buffer, writable: true },
        ResourceType { name: "RWBuffer", kind: ResourceKind::Buffer, writable: true },
        ResourceType { name: "AppendStructuredBuffer", kind: ResourceKind::Buffer, writable: true },
        ResourceType { name: "ConsumeStructuredBuffer", kind: ResourceKind::Buffer, writable: true },
        ResourceType { name: "RasterizerOrderedBuffer", kind: ResourceKind::Buffer, writable: true },
        ResourceType { name: "RasterizerOrderedStructuredBuffer", kind: ResourceKind::Buffer, writable: true },
        ResourceType { name: "StructuredBuffer", kind: ResourceKind::Buffer, writable: false },
        ResourceType { name: "Buffer", kind: ResourceKind::Buffer, writable: false },
        ResourceType { name: "RWByteAddressBuffer", kind: ResourceKind::ByteAddress, writable: true },
        ResourceType { name: "ByteAddressBuffer", kind: ResourceKind::ByteAddress, writable: false },
        ResourceType { name: "RWTexture1D", kind: ResourceKind::Texture { dims: 1 }, writable: true },
        ResourceType { name: "RWTexture2D", kind: ResourceKind::Texture { dims: 2 }, writable: true },
        ResourceType { name: "RWTexture3D", kind: ResourceKind::Texture { dims: 3 }, writable: true },
        ResourceType { name: "RWTexture2DArray", kind: ResourceKind::Texture { dims: 3 }, writable: true },
        ResourceType { name: "Texture1D", kind: ResourceKind::Texture { dims: 1 }, writable: false },
        ResourceType { name: "Texture2D", kind: ResourceKind::Texture { dims: 2 }, writable: false },
        ResourceType { name: "Texture3D", kind: ResourceKind::Texture { dims: 3 }, writable: false },
        ResourceType { name: "Texture2DArray", kind: ResourceKind::Texture { dims: 3 }, writable: false },
        ResourceType { name: "TextureCube", kind: ResourceKind::Texture { dims: 3 }, writable: false },
        ResourceType { name: "ConstantBuffer", kind: ResourceKind::ConstantBuffer, writable: false },
        ResourceType { name: "SamplerState", kind: ResourceKind::Handle, writable: false },
        ResourceType { name: "SamplerComparisonState", kind: ResourceKind::Handle, writable: false },
    ],
    atomics: &[
        ("InterlockedAdd", AtomicOp::Add),
        ("InterlockedMin", AtomicOp::Min),
        ("InterlockedMax", AtomicOp::Max),
        ("InterlockedAnd", AtomicOp::And),
        ("InterlockedOr", AtomicOp::Or),
        ("InterlockedXor", AtomicOp::Xor),
        ("InterlockedExchange", AtomicOp::Exchange),
        ("InterlockedCompareExchange", AtomicOp::CompareExchange),
        ("InterlockedCompareStore", AtomicOp::CompareExchange),
    ],
    atomic_dest_is_pointer: false,
    wave_ops: &[
        ("WaveReadLaneFirst", WaveOp::ReadFirst),
        ("WaveReadLaneAt", WaveOp::ReadLane),
        ("WaveActiveAllTrue", WaveOp::AllTrue),
        ("WaveActiveAnyTrue", WaveOp::AnyTrue),
        ("WaveActiveAllEqual", WaveOp::AllEqual),
        ("WaveActiveBallot", WaveOp::Ballot),
        ("WaveActiveCountBits", WaveOp::CountBits),
        ("WaveActiveSum", WaveOp::Sum),
        ("WaveActiveProduct", WaveOp::Product),
        ("WaveActiveMin", WaveOp::Min),
        ("WaveActiveMax", WaveOp::Max),
        ("WaveActiveBitAnd", WaveOp::BitAnd),
        ("WaveActiveBitOr", WaveOp::BitOr),
        ("WaveActiveBitXor", WaveOp::BitXor),
        ("WaveIsFirstLane", WaveOp::IsFirstLane),
        ("WavePrefixSum", WaveOp::PrefixSum),
        ("WavePrefixProduct", WaveOp::PrefixProduct),
        ("WavePrefixCountBits", WaveOp::PrefixCountBits),
        ("WaveMatch", WaveOp::MatchAny),
        ("QuadReadAcrossX", WaveOp::Shuffle),
        ("QuadReadAcrossY", WaveOp::Shuffle),
        ("QuadReadAcrossDiagonal", WaveOp::Shuffle),
        ("QuadReadLaneAt", WaveOp::Shuffle),
    ],
    wave_mask_first: false,
    intrinsics: HLSL_INTRINSICS,
    intrinsic_prefixes: &[],
    sync_objects: &[],
    float_literal_is_double: false,
    plain_globals_are_constant: true,
    collective_fences: true,
    host_code: false,
    discard_if_negative: Some("clip"),
    modelled_headers: &[],
};

pub static CUDA: Dialect = Dialect {
    name: "cuda",
    barriers: &[
        ("__syncthreads", bar(Scope::Group, Scope::Group, Spaces::ALL)),
        ("__syncthreads_count", reduce(BarrierReduce::Count)),
        ("__syncthreads_and", reduce(BarrierReduce::And)),
        ("__syncthreads_or", reduce(BarrierReduce::Or)),
        ("__syncwarp", bar(Scope::Wave, Scope::Wave, Spaces::ALL)),
        ("__threadfence_block", bar(Scope::None, Scope::Group, Spaces::ALL)),
        ("__threadfence", bar(Scope::None, Scope::Device, Spaces::ALL)),
        ("__threadfence_system", bar(Scope::None, Scope::System, Spaces::ALL)),
        ("__barrier_sync", bar(Scope::Group, Scope::Group, Spaces::ALL)),
    ],
    flag_barrier: None,
    builtin_vars: &[
        ("threadIdx", BuiltinVar::Vec3(Builtin::LocalId)),
        ("blockIdx", BuiltinVar::Vec3(Builtin::GroupId)),
        ("blockDim", BuiltinVar::Vec3(Builtin::GroupSize)),
        ("gridDim", BuiltinVar::Vec3(Builtin::NumGroups)),
        ("warpSize", BuiltinVar::Const(32)),
    ],
    semantics: &[],
    builtin_calls: &[("__lane_id", Builtin::LaneId)],
    space_qualifiers: &[
        ("__shared__", MemSpace::Shared),
        ("__device__", MemSpace::Device),
        ("__constant__", MemSpace::Constant),
        ("__managed__", MemSpace::Device),
    ],
    coherent_qualifiers: &["volatile"],
    entry_marker: EntryMarker::GlobalSpecifier,
    resources: &[],
    atomics: &[
        ("atomicAdd", AtomicOp::Add),
        ("atomicSub", AtomicOp::Sub),
        ("atomicMin", AtomicOp::Min),
        ("atomicMax", AtomicOp::Max),
        ("atomicAnd", AtomicOp::And),
        ("atomicOr", AtomicOp::Or),
        ("atomicXor", AtomicOp::Xor),
        ("atomicExch", AtomicOp::Exchange),
        ("atomicCAS", AtomicOp::CompareExchange),
        ("atomicInc", AtomicOp::Inc),
        ("atomicDec", AtomicOp::Dec),
        ("atomicAdd_block", AtomicOp::Add),
        ("atomicAdd_system", AtomicOp::Add),
    ],
    atomic_dest_is_pointer: true,
    wave_ops: &[
        ("__all_sync", WaveOp::AllTrue),
        ("__any_sync", WaveOp::AnyTrue),
        ("__ballot_sync", WaveOp::Ballot),
        ("__shfl_sync", WaveOp::Shuffle),
        ("__shfl_up_sync", WaveOp::ShuffleUp),
        ("__shfl_down_sync", WaveOp::ShuffleDown),
        ("__shfl_xor_sync", WaveOp::ShuffleXor),
        ("__reduce_add_sync", WaveOp::Sum),
        ("__reduce_min_sync", WaveOp::Min),
        ("__reduce_max_sync", WaveOp::Max),
        ("__reduce_and_sync", WaveOp::BitAnd),
        ("__reduce_or_sync", WaveOp::BitOr),
        ("__reduce_xor_sync", WaveOp::BitXor),
        ("__match_any_sync", WaveOp::MatchAny),
    ],
    wave_mask_first: true,
    intrinsics: CUDA_INTRINSICS,
    intrinsic_prefixes: &["__"],
    sync_objects: &[
        SyncObject { constructor: "this_thread_block", exec: Scope::Group },
        SyncObject { constructor: "this_grid", exec: Scope::Device },
        SyncObject { constructor: "tiled_partition", exec: Scope::Wave },
        SyncObject { constructor: "coalesced_threads", exec: Scope::Wave },
    ],
    float_literal_is_double: true,
    plain_globals_are_constant: false,
    collective_fences: false,
    host_code: true,
    discard_if_negative: None,
    modelled_headers: &[
        "cuda.h",
        "cuda_runtime.h",
        "cuda_runtime_api.h",
        "device_launch_parameters.h",
        "cooperative_groups.h",
        "cooperative_groups/reduce.h",
        "cooperative_groups/memcpy_async.h",
        "cuda_fp16.h",
        "cuda_bf16.h",
        "math_constants.h",
        "sm_60_atomic_functions.h",
        "stdio.h",
        "stdint.h",
        "stdlib.h",
        "assert.h",
        "math.h",
        "cstdio",
        "cstdint",
        "cstdlib",
        "cassert",
        "cmath",
        "cfloat",
        "climits",
    ],
};

impl Dialect {
    pub fn barrier(&self, name: &str) -> Option<Barrier> {
        self.barriers.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
    }
    pub fn builtin_var(&self, name: &str) -> Option<BuiltinVar> {
        self.builtin_vars.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
    }
    pub fn semantic(&self, name: &str) -> Option<Semantic> {
        self.semantics.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, s)| *s)
    }
    pub fn builtin_call(&self, name: &str) -> Option<Builtin> {
        self.builtin_calls.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
    }
    pub fn space_qualifier(&self, word: &str) -> Option<MemSpace> {
        self.space_qualifiers.iter().find(|(n, _)| *n == word).map(|(_, s)| *s)
    }
    pub fn resource(&self, name: &str) -> Option<ResourceType> {
        self.resources.iter().find(|r| r.name == name).copied()
    }
    pub fn atomic(&self, name: &str) -> Option<AtomicOp> {
        self.atomics.iter().find(|(n, _)| *n == name).map(|(_, a)| *a)
    }
    pub fn wave_op(&self, name: &str) -> Option<WaveOp> {
        self.wave_ops.iter().find(|(n, _)| *n == name).map(|(_, w)| *w)
    }
    pub fn intrinsic(&self, name: &str) -> Option<Intrinsic> {
        self.intrinsics.iter().find(|i| i.name == name).copied()
    }
    /// True for a name spelled like a toolkit intrinsic (`__foo` in CUDA).
    pub fn looks_like_intrinsic(&self, name: &str) -> bool {
        self.intrinsic_prefixes.iter().any(|p| name.starts_with(p))
    }
    pub fn sync_object(&self, constructor: &str) -> Option<Scope> {
        self.sync_objects.iter().find(|s| s.constructor == constructor).map(|s| s.exec)
    }
}

/// Decodes the SM 6.8 `Barrier(MemoryTypeFlags, SemanticFlags)` arguments.
pub fn flag_barrier(memory_flags: u64, semantic_flags: u64) -> Barrier {
    const UAV_MEMORY: u64 = 0x1;
    const GROUP_SHARED_MEMORY: u64 = 0x2;
    const NODE_MEMORY: u64 = 0x4 | 0x8;
    const GROUP_SYNC: u64 = 0x1;
    const GROUP_SCOPE: u64 = 0x2;
    const DEVICE_SCOPE: u64 = 0x4;
    let mut spaces = Spaces::NONE;
    if memory_flags & (UAV_MEMORY | NODE_MEMORY) != 0 {
        spaces = spaces.union(Spaces::DEVICE);
    }
    if memory_flags & GROUP_SHARED_MEMORY != 0 {
        spaces = spaces.union(Spaces::SHARED);
    }
    let exec = if semantic_flags & GROUP_SYNC != 0 { Scope::Group } else { Scope::None };
    let mem = if semantic_flags & DEVICE_SCOPE != 0 {
        Scope::Device
    } else if semantic_flags & GROUP_SCOPE != 0 || memory_flags & GROUP_SHARED_MEMORY != 0 {
        Scope::Group
    } else {
        Scope::Device
    };
    Barrier { exec, mem, spaces, reduce: None }
}

/// Named constants of the SM 6.8 barrier flags.
pub const BARRIER_FLAG_NAMES: &[(&str, u64)] = &[
    ("UAV_MEMORY", 0x1),
    ("GROUP_SHARED_MEMORY", 0x2),
    ("NODE_INPUT_MEMORY", 0x4),
    ("NODE_OUTPUT_MEMORY", 0x8),
    ("ALL_MEMORY", 0xF),
    ("GROUP_SYNC", 0x1),
    ("GROUP_SCOPE", 0x2),
    ("DEVICE_SCOPE", 0x4),
];
