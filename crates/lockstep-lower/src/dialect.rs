//! Per-language tables: everything language-specific the lowering needs.
//! The lowering itself is shared; a new C-family dialect is a new table.

use lockstep_ir::{AtomicOp, Barrier, BarrierReduce, Builtin, MathFn, MemSpace, Scope, Spaces, WaveOp};

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
    /// The object's type (`thread_block`), for declarations and parameters.
    pub type_name: &'static str,
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
    pub math: &'static [(&'static str, MathFn)],
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
    /// The wave width every device running the language has (CUDA's warp of
    /// 32); None where it varies by device and a kernel may require one.
    pub wave_size: Option<u32>,
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

const MATH_COMMON: &[(&str, MathFn)] = &[
    ("min", MathFn::Min),
    ("max", MathFn::Max),
    ("abs", MathFn::Abs),
    ("clamp", MathFn::Clamp),
    ("saturate", MathFn::Saturate),
    ("sqrt", MathFn::Sqrt),
    ("rsqrt", MathFn::Rsqrt),
    ("exp", MathFn::Exp),
    ("exp2", MathFn::Exp2),
    ("log", MathFn::Log),
    ("log2", MathFn::Log2),
    ("pow", MathFn::Pow),
    ("sin", MathFn::Sin),
    ("cos", MathFn::Cos),
    ("tan", MathFn::Tan),
    ("floor", MathFn::Floor),
    ("ceil", MathFn::Ceil),
    ("round", MathFn::Round),
    ("trunc", MathFn::Trunc),
    ("frac", MathFn::Frac),
    ("fma", MathFn::Fma),
    ("mad", MathFn::Fma),
    ("lerp", MathFn::Lerp),
    ("sign", MathFn::Sign),
    ("step", MathFn::Step),
    ("countbits", MathFn::CountBits),
    ("firstbithigh", MathFn::FirstBitHigh),
    ("firstbitlow", MathFn::FirstBitLow),
    ("reversebits", MathFn::ReverseBits),
    ("asuint", MathFn::Bitcast),
    ("asint", MathFn::Bitcast),
    ("asfloat", MathFn::Bitcast),
    // CUDA spellings
    ("fminf", MathFn::Min),
    ("fmaxf", MathFn::Max),
    ("fabsf", MathFn::Abs),
    ("fabs", MathFn::Abs),
    ("sqrtf", MathFn::Sqrt),
    ("rsqrtf", MathFn::Rsqrt),
    ("expf", MathFn::Exp),
    ("__expf", MathFn::Exp),
    ("exp2f", MathFn::Exp2),
    ("logf", MathFn::Log),
    ("__logf", MathFn::Log),
    ("log2f", MathFn::Log2),
    ("powf", MathFn::Pow),
    ("sinf", MathFn::Sin),
    ("__sinf", MathFn::Sin),
    ("cosf", MathFn::Cos),
    ("__cosf", MathFn::Cos),
    ("tanf", MathFn::Tan),
    ("floorf", MathFn::Floor),
    ("ceilf", MathFn::Ceil),
    ("roundf", MathFn::Round),
    ("truncf", MathFn::Trunc),
    ("fmaf", MathFn::Fma),
    ("__popc", MathFn::CountBits),
    ("__popcll", MathFn::CountBits),
    ("__brev", MathFn::ReverseBits),
    ("__float_as_int", MathFn::Bitcast),
    ("__float_as_uint", MathFn::Bitcast),
    ("__int_as_float", MathFn::Bitcast),
    ("__uint_as_float", MathFn::Bitcast),
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
    math: MATH_COMMON,
    sync_objects: &[],
    float_literal_is_double: false,
    plain_globals_are_constant: true,
    collective_fences: true,
    host_code: false,
    wave_size: None,
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
    math: MATH_COMMON,
    sync_objects: &[
        SyncObject { constructor: "this_thread_block", type_name: "thread_block", exec: Scope::Group },
        SyncObject { constructor: "this_grid", type_name: "grid_group", exec: Scope::Device },
        SyncObject { constructor: "tiled_partition", type_name: "thread_block_tile", exec: Scope::Wave },
        SyncObject { constructor: "coalesced_threads", type_name: "coalesced_group", exec: Scope::Wave },
    ],
    float_literal_is_double: true,
    plain_globals_are_constant: false,
    collective_fences: false,
    host_code: true,
    wave_size: Some(32),
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
    pub fn math(&self, name: &str) -> Option<MathFn> {
        self.math.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
    }
    pub fn sync_object(&self, constructor: &str) -> Option<Scope> {
        self.sync_objects.iter().find(|s| s.constructor == constructor).map(|s| s.exec)
    }

    /// The scope of a synchronization object's type (`thread_block`).
    pub fn sync_object_type(&self, type_name: &str) -> Option<Scope> {
        self.sync_objects.iter().find(|s| s.type_name == type_name).map(|s| s.exec)
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
