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
    /// One builtin (`gl_LocalInvocationIndex`).
    Scalar(Builtin),
    /// A value computed from builtins, as the parameter semantic of that
    /// meaning is (`gl_SubgroupID`: the flat index over the wave width).
    Computed(Semantic),
    /// The invocation's id in the whole dispatch, per axis
    /// `group id * group size + local id` (`gl_GlobalInvocationID`).
    GlobalId,
}

/// What an entry-point parameter semantic means (HLSL `SV_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Semantic {
    DispatchThreadId,
    GroupThreadId,
    GroupId,
    GroupIndex,
    /// Threads per group, per axis (Metal `threads_per_threadgroup`).
    GroupSize,
    /// Groups in the dispatch, per axis (`threadgroups_per_grid`).
    NumGroups,
    /// Threads in the dispatch, per axis (`threads_per_grid`).
    GridSize,
    /// Lane in the wave (`thread_index_in_simdgroup`).
    LaneId,
    /// Lanes per wave (`threads_per_simdgroup`).
    WaveSize,
    /// The wave's index in its group: the flat thread index over the wave
    /// width (`simdgroup_index_in_threadgroup`).
    WaveIndex,
    /// Waves per group, rounded up (`simdgroups_per_threadgroup`).
    WavesPerGroup,
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

/// The matrix product of a language, and which way its matrices are indexed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixProduct {
    /// A function (HLSL `mul(a, b)`); `*` is component-wise, and `m[i]` is row i.
    Function(&'static str),
    /// `*` whenever an operand is a matrix (GLSL, Metal); `m[i]` is column i.
    Operator,
}

/// A function of matrices a dialect names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixFunction {
    Transpose,
    /// The component-wise product (GLSL `matrixCompMult`).
    ComponentProduct,
    /// `outerProduct(c, r)`: the matrix whose element (i, j) is `c[i] * r[j]`.
    Outer,
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
    /// Functions returning a value computed from builtins, as the parameter
    /// semantic of that meaning is (OpenCL `get_sub_group_id()`).
    pub computed_calls: &'static [(&'static str, Semantic)],
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
    /// Inclusive scans: the exclusive scan named (`PrefixSum`, `PrefixProduct`)
    /// combined with the lane's own value.
    pub inclusive_scans: &'static [(&'static str, WaveOp)],
    /// Functions of a ballot's lane mask (`subgroupBallotBitCount`).
    pub ballot_queries: &'static [(&'static str, BallotQuery)],
    /// The 32-bit words a ballot returns (`uint4` in HLSL and GLSL, lanes 32
    /// and up in the second; one in CUDA).
    pub ballot_words: u32,
    /// Wave intrinsics whose first argument is a lane mask to skip (`__shfl_sync(mask, …)`).
    pub wave_mask_first: bool,
    /// Intrinsic functions: integer, float, half, bit and memory-fetch built-ins.
    pub intrinsics: &'static [Intrinsic],
    /// Intrinsics that take small vectors apart or build them (`__low2half`, `__halves2half2`).
    pub vector_intrinsics: &'static [(&'static str, VectorIntrinsic)],
    /// Prefixes of toolkit intrinsic names (`__` in CUDA): a call to an unknown function
    /// with one is an intrinsic lockstep does not model, worth a warning. `""`
    /// in a language whose programs define every function they call that is
    /// not built in (GLSL, HLSL, OpenCL C, Metal): any unknown callee is a
    /// built-in, unless it is spelled like a macro.
    pub intrinsic_prefixes: &'static [&'static str],
    /// Cooperative matrices, which a whole wave or group loads, multiplies
    /// and stores together (GLSL `coopmat<…>`, Metal `simdgroup_float8x8`).
    pub cooperative_matrices: CooperativeMatrices,
    pub sync_objects: &'static [SyncObject],
    /// Whether an unsuffixed float literal is double (C/CUDA) or float (HLSL).
    pub float_literal_is_double: bool,
    /// Global variables without a space qualifier are constants (HLSL `$Globals`).
    pub plain_globals_are_constant: bool,
    /// Global variables without a space qualifier are each invocation's own,
    /// set by their initializers before the entry point runs (GLSL).
    pub plain_globals_are_per_thread: bool,
    /// Program-scope variables of the constant space are fixed by their
    /// initializers (Metal `constant`); in CUDA the host may set `__constant__` memory.
    pub constant_globals_are_fixed: bool,
    /// Fence-only barriers are collective (HLSL) rather than per-thread (CUDA).
    pub collective_fences: bool,
    /// The barrier that orders group memory for the whole group, and one
    /// that orders device memory, as messages should name them.
    pub group_barrier: &'static str,
    pub device_barrier: &'static str,
    /// The barrier of one wave (sub-group), empty where the language has none.
    pub wave_barrier: &'static str,
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
    /// Object-like macros defined before the file is read: the language's
    /// predefined macros, and keywords the C grammar does not know spelled
    /// as ones it does (OpenCL's `__kernel` as `__global__`).
    pub predefined_macros: &'static [(&'static str, &'static str)],
    /// Functions taking an axis and returning a launch-shape value (`get_local_id(d)`).
    pub axis_builtins: &'static [(&'static str, AxisBuiltin)],
    /// Barriers and fences whose arguments are flags deciding what they order
    /// (`barrier(CLK_LOCAL_MEM_FENCE)`); the function decodes the constant arguments.
    pub flag_decoded_barriers: &'static [(&'static str, DecodeBarrier)],
    /// Attribute fixing the group size of an entry point (`reqd_work_group_size`).
    pub group_size_attribute: Option<&'static str>,
    /// Attribute bounding the threads of a group (`[[max_total_threads_per_threadgroup(n)]]`).
    pub max_threads_attribute: Option<&'static str>,
    /// Attributes that fix the wave width (lower case): a number, or one of
    /// the names listed with their widths (Adreno's `"half"` and `"full"`).
    pub wave_size_attributes: &'static [(&'static str, &'static [(&'static str, u32)])],
    /// Whether a space qualifier on a pointer declaration names the space it
    /// points into (OpenCL `__global float* p`) rather than where the pointer lives.
    pub space_qualifies_pointee: bool,
    /// How the language writes the linear-algebra product of matrices and
    /// vectors (None: it has no matrices).
    pub matrix_product: Option<MatrixProduct>,
    /// The language's other functions of matrices, by name.
    pub matrix_functions: &'static [(&'static str, MatrixFunction)],
    /// Functions giving a 32-bit product's high and low halves through two
    /// out-parameters (GLSL `umulExtended(a, b, hi, lo)`), by name.
    pub extended_multiplies: &'static [&'static str],
    /// `bitfieldExtract(value, offset, bits)`: those bits of each component,
    /// sign-extended for a signed value; by name.
    pub bitfield_extract: Option<&'static str>,
    /// Dot products of the four bytes packed in two 32-bit integers, signed
    /// or unsigned as the first operand is (GLSL `dotPacked4x8EXT(a, b)`,
    /// CUDA `__dp4a(a, b, c)`), with how they add an accumulator; by name.
    pub packed_dot_products: &'static [(&'static str, PackedDot)],
    /// Operations on the 8- or 16-bit lanes packed in a 32-bit integer
    /// (CUDA `__vsub4`, `__vcmpne2`), read from the name.
    pub lane_words: Option<fn(&str) -> Option<crate::packed_lanes::LaneWord>>,
    /// `__byte_perm(x, y, s)`: bytes picked from two 32-bit integers; by name.
    pub byte_permute: Option<&'static str>,
    /// C's `memcpy(dst, src, n)`, where the dialect has it; by name.
    pub byte_copy: Option<&'static str>,
    /// Prefixes of functions named for their result type: a value conversion
    /// and a bit reinterpretation (OpenCL `convert_float4(x)`, `as_uint(f)`).
    pub typed_conversions: Option<(&'static str, &'static str)>,
    /// Function templates that read their argument's bits as the type
    /// argument (Metal `as_type<float>(bits)`, C++ `std::bit_cast<float>`).
    pub bit_casts: &'static [&'static str],
    /// Families of N-wide loads and stores through a pointer at `offset * N`,
    /// by name prefix; the name goes on with the width (`vload4`, `vstore_half2`,
    /// `vstore_half_rte`).
    pub vector_memory: &'static [(&'static str, VectorMemory)],
    /// Layout qualifiers of a qualifier-only declaration that give the group
    /// size along x, y and z (GLSL `layout(local_size_x = 64) in;`); the same
    /// names with `_id` make an axis a specialization constant, unknown.
    pub group_size_layout: Option<[&'static str; 3]>,
    /// The layout qualifier that makes a constant a pipeline constant the
    /// host may set (GLSL `layout(constant_id = 0)`).
    pub pipeline_constant_layout: Option<&'static str>,
    /// The attribute that makes a program-scope constant a pipeline constant
    /// the host sets when it builds the pipeline (Metal `[[function_constant(n)]]`).
    pub pipeline_constant_attribute: Option<&'static str>,
    /// Preprocessor directives that say nothing the analyses need (`#version`).
    pub ignored_directives: &'static [&'static str],
    /// Functions reading, writing or atomically updating an image texel:
    /// `imageLoad(image, coordinate)` and friends.
    pub image_functions: &'static [(&'static str, ImageAccess)],
    /// Integer constants named in the source, plain or scoped
    /// (`mem_flags::mem_threadgroup`), for barrier flags.
    pub named_constants: &'static [(&'static str, i64)],
    /// Functions whose last argument is a lambda run as a kernel (C++ AMP's
    /// `parallel_for_each`): each such lambda is an entry point.
    pub lambda_launcher: Option<&'static str>,
    /// Class templates that are integer vectors of their rank (`index<2>`, `extent<2>`).
    pub index_types: &'static [&'static str],
    /// The lambda parameter type of a tiled launch, whose template arguments
    /// are the group size (`tiled_index<16, 16>`).
    pub tiled_index_type: Option<&'static str>,
    /// Class templates of device memory a kernel lambda captures, with their
    /// element type and rank as template arguments (`array_view<float, 2>`).
    pub device_views: &'static [&'static str],
    /// The member of a tiled index that is the group barrier, and its methods
    /// (`t.barrier.wait()`).
    pub member_barriers: Option<(&'static str, &'static [(&'static str, Barrier)])>,
}

/// What an image function does with the texel its coordinate names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageAccess {
    /// `imageLoad(image, coordinate)`.
    Load,
    /// `read_imagef(image, [sampler,] coordinate)`: the coordinate is the last
    /// argument; the texel is read as four channels of this type.
    SampledLoad(Type),
    /// `imageStore(image, coordinate, value)`.
    Store,
    /// `imageAtomicAdd(image, coordinate, value)`; returns the old texel.
    Atomic(AtomicOp),
}

/// Decodes a barrier call's arguments (each a constant, or None) into what it orders.
pub type DecodeBarrier = fn(&[Option<i64>]) -> Barrier;

/// A launch-shape value selected by an axis argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AxisBuiltin {
    LocalId,
    GroupId,
    GroupSize,
    NumGroups,
    /// `group_id * group_size + local_id` (plus a global offset of 0).
    GlobalId,
    /// `num_groups * group_size`.
    GlobalSize,
    /// The launch's global offset, always 0 in lockstep's launches.
    GlobalOffset,
}

/// A family of vector loads or stores (`vloadN(offset, p)`, `vstoreN(v, offset, p)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorMemory {
    pub store: bool,
    /// The memory holds halves converted from and to floats (`vload_half`),
    /// and the width may be left out (one value).
    pub halves: bool,
    /// Offsets count in aligned vectors: three components take four cells
    /// (`vloada_half3`).
    pub aligned: bool,
}

/// One vector load or store: its family and how many components it moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorAccess {
    pub family: VectorMemory,
    pub width: u32,
    /// Cells from one vector to the next.
    pub stride: u32,
}

const fn vector_memory(store: bool, halves: bool, aligned: bool) -> VectorMemory {
    VectorMemory { store, halves, aligned }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryMarker {
    /// `[numthreads(x,y,z)]` attribute.
    NumThreadsAttribute,
    /// `__global__` specifier.
    GlobalSpecifier,
    /// The function of this name (GLSL's `main`).
    FunctionNamed(&'static str),
    /// No function: the lambdas handed to the dialect's `lambda_launcher`.
    LaunchedLambdas,
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
    /// Whether the operand is a NaN (it differs from itself), as the result type.
    IsNan,
    /// True for an infinity of either sign.
    IsInf,
    /// True for a value that is neither an infinity nor a NaN.
    IsFinite,
    /// `mul24(a, b) + c`, wrapping (OpenCL `mad24`).
    MulAdd24,
    /// `select(a, b, c)`: `b` where `c` holds, else `a`, component by component.
    Select(SelectCondition),
    /// An f32 rounded to the nearest-even bfloat16 (8 bits of mantissa), kept
    /// as an f32: lockstep holds bfloat16 values in f32 cells.
    RoundToBf16,
}

/// What makes a `select` pick its second operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelectCondition {
    /// The condition is not zero (Metal's bool vectors).
    NonZero,
    /// A scalar condition not zero; a vector condition's component with its
    /// top bit set (OpenCL C).
    TopBitOfVectors,
}

/// A vector-shaped intrinsic: which components it reads and the element
/// type it converts them to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VectorIntrinsic {
    /// Component `n` of the vector argument (`__high2half(h)` is `h.y`).
    Component(u32, Type),
    /// A vector of every argument's components in order (`__halves2half2(a, b)`).
    Pack(Type),
    /// The scalar argument in each of `n` components (`__half2half2(h)`).
    Splat(Type, u32),
    /// Component `n` of each argument (`__lows2half2(a, b)` is `(a.x, b.x)`).
    Gather(u32, Type),
    /// The integer argument's parts of this many bits, lowest first, each of
    /// the argument's signedness (GLSL `unpack8(x)`: a `u8vec4` of a `uint`).
    Split(u32),
    /// The integer of this many bits whose parts, lowest first, are the
    /// argument's components (GLSL `pack32(u8vec4)`), of their signedness.
    Join(u32),
    /// The two halves (16-bit floats) of a 32-bit integer, low first, as f32s
    /// (GLSL `unpackHalf2x16`).
    UnpackHalves,
    /// Two f32s rounded to halves, the first in the low 16 bits (GLSL `packHalf2x16`).
    PackHalves,
}

/// A question about a ballot's lane mask, answered with bit arithmetic on
/// the mask and the lane's index (no lane exchanges anything).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BallotQuery {
    /// How many lanes the mask has.
    BitCount,
    /// How many lanes below this one it has.
    LowerLanes,
    /// How many lanes up to and including this one it has.
    LowerLanesAndOwn,
    /// Its lowest lane.
    LowestLane,
    /// Its highest lane.
    HighestLane,
    /// Whether it has the lane the second argument names.
    LaneBit,
    /// Whether it has this lane.
    OwnBit,
}

/// The names of a language's cooperative matrices. lockstep does not model
/// them: a matrix is one unknown value, and each function on matrices may
/// read and write any shared or device memory.
#[derive(Clone, Copy, Debug)]
pub struct CooperativeMatrices {
    /// The matrix types (and the types of their layouts).
    pub types: &'static [&'static str],
    /// The functions on them, by name.
    pub functions: &'static [&'static str],
    /// The functions on them, by the start of their names (`coopMat`).
    pub function_prefixes: &'static [&'static str],
}

const NO_COOPERATIVE_MATRICES: CooperativeMatrices = CooperativeMatrices { types: &[], functions: &[], function_prefixes: &[] };

/// A dot product of the four bytes packed in each of two 32-bit integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedDot {
    /// Whether the bytes are signed; None: as the first operand's type is
    /// (`__dp4a(int, int, int)` or its `unsigned` overload).
    pub signed: Option<bool>,
    /// How the third operand, if any, is added.
    pub accumulate: Accumulate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accumulate {
    /// `dotPacked4x8EXT(a, b)`: no accumulator.
    No,
    /// `__dp4a(a, b, c)`: plus `c`, wrapping.
    Wrapping,
    /// `dotPacked4x8AccSatEXT(a, b, c)`: plus `c`, clamped to the result type.
    Saturating,
}

const fn packed_dot(signed: Option<bool>, accumulate: Accumulate) -> PackedDot {
    PackedDot { signed, accumulate }
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
/// A floating-point class test with a `bool` result, component-wise.
const fn class_test(name: &'static str, op: IntrinsicOp) -> Intrinsic {
    Intrinsic { name, op, operands: Operands::CommonFloat, result: Some(Type::Bool) }
}
const fn memory(name: &'static str, op: IntrinsicOp) -> Intrinsic {
    Intrinsic { name, op, operands: Operands::Bits, result: None }
}

const HLSL_INTRINSICS: &[Intrinsic] = &[
    class_test("isnan", IntrinsicOp::IsNan),
    class_test("isinf", IntrinsicOp::IsInf),
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
    float("tanh", MathFn::Tanh),
    float("sinh", MathFn::Sinh),
    float("cosh", MathFn::Cosh),
    float("asin", MathFn::Asin),
    float("acos", MathFn::Acos),
    float("atan", MathFn::Atan),
    float("atan2", MathFn::Atan2),
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
    float("tan", MathFn::Tan),
    fixed("tanhf", MathFn::Tanh, Type::F32, Type::F32),
    float("tanh", MathFn::Tanh),
    fixed("sinhf", MathFn::Sinh, Type::F32, Type::F32),
    float("sinh", MathFn::Sinh),
    fixed("coshf", MathFn::Cosh, Type::F32, Type::F32),
    float("cosh", MathFn::Cosh),
    fixed("asinf", MathFn::Asin, Type::F32, Type::F32),
    float("asin", MathFn::Asin),
    fixed("acosf", MathFn::Acos, Type::F32, Type::F32),
    float("acos", MathFn::Acos),
    fixed("atanf", MathFn::Atan, Type::F32, Type::F32),
    float("atan", MathFn::Atan),
    fixed("atan2f", MathFn::Atan2, Type::F32, Type::F32),
    float("atan2", MathFn::Atan2),
    float("floor", MathFn::Floor),
    fixed("floorf", MathFn::Floor, Type::F32, Type::F32),
    float("ceil", MathFn::Ceil),
    fixed("ceilf", MathFn::Ceil, Type::F32, Type::F32),
    fixed("rintf", MathFn::Round, Type::F32, Type::F32),
    fixed("roundf", MathFn::RoundHalfAway, Type::F32, Type::F32),
    float("round", MathFn::RoundHalfAway),
    fixed("truncf", MathFn::Trunc, Type::F32, Type::F32),
    fixed("expm1f", MathFn::Expm1, Type::F32, Type::F32),
    float("expm1", MathFn::Expm1),
    fixed("log1pf", MathFn::Log1p, Type::F32, Type::F32),
    float("log1p", MathFn::Log1p),
    fixed("erff", MathFn::Erf, Type::F32, Type::F32),
    float("erf", MathFn::Erf),
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
    Intrinsic { name: "__float2bfloat16", op: IntrinsicOp::RoundToBf16, operands: Operands::Fixed(Type::F32), result: Some(Type::F32) },
    Intrinsic { name: "__float2bfloat16_rn", op: IntrinsicOp::RoundToBf16, operands: Operands::Fixed(Type::F32), result: Some(Type::F32) },
    convert("__bfloat162float", Type::F32, Type::F32),
    Intrinsic { name: "__isnanf", op: IntrinsicOp::IsNan, operands: Operands::Fixed(Type::F32), result: Some(Type::I32) },
    Intrinsic { name: "__isnan", op: IntrinsicOp::IsNan, operands: Operands::Fixed(Type::F64), result: Some(Type::I32) },
    class_test("isnan", IntrinsicOp::IsNan),
    Intrinsic { name: "__isinff", op: IntrinsicOp::IsInf, operands: Operands::Fixed(Type::F32), result: Some(Type::I32) },
    Intrinsic { name: "__isinf", op: IntrinsicOp::IsInf, operands: Operands::Fixed(Type::F64), result: Some(Type::I32) },
    class_test("isinf", IntrinsicOp::IsInf),
    class_test("isfinite", IntrinsicOp::IsFinite),
    memory("__ldg", IntrinsicOp::LoadThroughPointer),
    memory("tex1Dfetch", IntrinsicOp::FetchElement),
    memory("__activemask", IntrinsicOp::ActiveLaneMask),
];

/// CUDA's `half2` helpers (`cuda_fp16.h`), exact: the conversions round to
/// nearest even like `__float2half_rn`.
static CUDA_VECTOR_INTRINSICS: &[(&str, VectorIntrinsic)] = &[
    ("__low2half", VectorIntrinsic::Component(0, Type::F16)),
    ("__high2half", VectorIntrinsic::Component(1, Type::F16)),
    ("__low2float", VectorIntrinsic::Component(0, Type::F32)),
    ("__high2float", VectorIntrinsic::Component(1, Type::F32)),
    ("__halves2half2", VectorIntrinsic::Pack(Type::F16)),
    ("__floats2half2_rn", VectorIntrinsic::Pack(Type::F16)),
    ("__half22float2", VectorIntrinsic::Pack(Type::F32)),
    ("__float22half2_rn", VectorIntrinsic::Pack(Type::F16)),
    ("__half2half2", VectorIntrinsic::Splat(Type::F16, 2)),
    ("__float2half2_rn", VectorIntrinsic::Splat(Type::F16, 2)),
    ("__lows2half2", VectorIntrinsic::Gather(0, Type::F16)),
    ("__highs2half2", VectorIntrinsic::Gather(1, Type::F16)),
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
    computed_calls: &[],
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
    inclusive_scans: &[],
    ballot_queries: &[],
    ballot_words: 4,
    wave_mask_first: false,
    intrinsics: HLSL_INTRINSICS,
    vector_intrinsics: &[],
    intrinsic_prefixes: &[""],
    cooperative_matrices: NO_COOPERATIVE_MATRICES,
    sync_objects: &[],
    float_literal_is_double: false,
    plain_globals_are_constant: true,
    plain_globals_are_per_thread: false,
    constant_globals_are_fixed: false,
    collective_fences: true,
    group_barrier: "GroupMemoryBarrierWithGroupSync()",
    device_barrier: "DeviceMemoryBarrierWithGroupSync()",
    wave_barrier: "",
    host_code: false,
    wave_size: None,
    discard_if_negative: Some("clip"),
    modelled_headers: &[],
    predefined_macros: &[],
    axis_builtins: &[],
    flag_decoded_barriers: &[],
    group_size_attribute: None,
    max_threads_attribute: None,
    wave_size_attributes: &[("wavesize", &[])],
    space_qualifies_pointee: false,
    matrix_product: Some(MatrixProduct::Function("mul")),
    matrix_functions: &[("transpose", MatrixFunction::Transpose)],
    extended_multiplies: &[],
    bitfield_extract: None,
    packed_dot_products: &[("dot4add_i8packed", packed_dot(Some(true), Accumulate::Wrapping)), ("dot4add_u8packed", packed_dot(Some(false), Accumulate::Wrapping))],
    lane_words: None,
    byte_permute: None,
    byte_copy: None,
    typed_conversions: None,
    bit_casts: &[],
    vector_memory: &[],
    group_size_layout: None,
    pipeline_constant_layout: None,
    pipeline_constant_attribute: None,
    ignored_directives: &[],
    image_functions: &[],
    named_constants: &[],
    lambda_launcher: None,
    index_types: &[],
    tiled_index_type: None,
    device_views: &[],
    member_barriers: None,
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
    computed_calls: &[],
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
    inclusive_scans: &[],
    ballot_queries: &[],
    ballot_words: 1,
    wave_mask_first: true,
    intrinsics: CUDA_INTRINSICS,
    vector_intrinsics: CUDA_VECTOR_INTRINSICS,
    intrinsic_prefixes: &["__"],
    cooperative_matrices: NO_COOPERATIVE_MATRICES,
    sync_objects: &[
        SyncObject { constructor: "this_thread_block", type_name: "thread_block", exec: Scope::Group },
        SyncObject { constructor: "this_grid", type_name: "grid_group", exec: Scope::Device },
        SyncObject { constructor: "tiled_partition", type_name: "thread_block_tile", exec: Scope::Wave },
        SyncObject { constructor: "coalesced_threads", type_name: "coalesced_group", exec: Scope::Wave },
    ],
    float_literal_is_double: true,
    plain_globals_are_constant: false,
    plain_globals_are_per_thread: false,
    constant_globals_are_fixed: false,
    collective_fences: false,
    group_barrier: "__syncthreads()",
    device_barrier: "__syncthreads()",
    wave_barrier: "__syncwarp()",
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
        "inttypes.h",
        "cinttypes",
        "cstdlib",
        "cassert",
        "cmath",
        "cfloat",
        "climits",
        "cublas_v2.h",
        "cuda_fp8.h",
        "mma.h",
        "cub/cub.cuh",
        "thrust/device_vector.h",
    ],
    // What nvcc defines for every CUDA translation unit it compiles, the
    // alignment attribute, which changes nothing lockstep models, and the
    // printf formats of `<cinttypes>` (host logging splices them between
    // string literals), as the header defines them on 64-bit Linux.
    predefined_macros: &[
        ("__cplusplus", "201703L"),
        ("__CUDACC__", "1"),
        ("__NVCC__", "1"),
        ("__align__(n)", ""),
        ("PRId32", "\"d\""),
        ("PRIi32", "\"i\""),
        ("PRIu32", "\"u\""),
        ("PRIx32", "\"x\""),
        ("PRId64", "\"ld\""),
        ("PRIi64", "\"li\""),
        ("PRIu64", "\"lu\""),
        ("PRIx64", "\"lx\""),
        ("PRIX64", "\"lX\""),
    ],
    axis_builtins: &[],
    flag_decoded_barriers: &[],
    group_size_attribute: None,
    max_threads_attribute: None,
    wave_size_attributes: &[],
    space_qualifies_pointee: false,
    matrix_product: None,
    matrix_functions: &[],
    extended_multiplies: &[],
    bitfield_extract: None,
    packed_dot_products: &[("__dp4a", packed_dot(None, Accumulate::Wrapping))],
    lane_words: Some(crate::packed_lanes::cuda_lane_word),
    byte_permute: Some("__byte_perm"),
    byte_copy: Some("memcpy"),
    typed_conversions: None,
    bit_casts: &["bit_cast"],
    vector_memory: &[],
    group_size_layout: None,
    pipeline_constant_layout: None,
    pipeline_constant_attribute: None,
    ignored_directives: &[],
    image_functions: &[],
    named_constants: &[],
    lambda_launcher: None,
    index_types: &[],
    tiled_index_type: None,
    device_views: &[],
    member_barriers: None,
};

/// OpenCL C's `CLK_*_MEM_FENCE` flag bits.
const CLK_LOCAL_MEM_FENCE: i64 = 1;
const CLK_GLOBAL_MEM_FENCE: i64 = 2;
const CLK_IMAGE_MEM_FENCE: i64 = 4;
/// OpenCL C's `memory_scope` values (as clang numbers them).
const MEMORY_SCOPE_DEVICE: i64 = 2;
const MEMORY_SCOPE_ALL_DEVICES: i64 = 3;

/// The spaces a barrier's flag argument names: group-shared memory for any
/// of `shared` bits, device memory for any of `device` bits; flags lockstep
/// cannot evaluate name every space.
fn flag_spaces(flags: Option<&Option<i64>>, shared: i64, device: i64) -> Spaces {
    match flags {
        Some(Some(flags)) => {
            let mut spaces = Spaces::NONE;
            if flags & shared != 0 {
                spaces = spaces.union(Spaces::SHARED);
            }
            if flags & device != 0 {
                spaces = spaces.union(Spaces::DEVICE);
            }
            spaces
        }
        _ => Spaces::ALL,
    }
}

/// Decodes OpenCL `barrier(flags)` / `work_group_barrier(flags[, scope])` /
/// `mem_fence(flags)` arguments for a call that synchronizes `exec` threads.
/// Flags lockstep cannot evaluate order every space.
fn opencl_fenced(args: &[Option<i64>], exec: Scope, default_mem: Scope) -> Barrier {
    let spaces = flag_spaces(args.first(), CLK_LOCAL_MEM_FENCE, CLK_GLOBAL_MEM_FENCE | CLK_IMAGE_MEM_FENCE);
    let mem = match args.get(1) {
        Some(Some(MEMORY_SCOPE_DEVICE)) => Scope::Device,
        Some(Some(MEMORY_SCOPE_ALL_DEVICES)) => Scope::System,
        _ => default_mem,
    };
    Barrier { exec, mem, spaces, reduce: None }
}

fn opencl_group_barrier(args: &[Option<i64>]) -> Barrier {
    opencl_fenced(args, Scope::Group, Scope::Group)
}

fn opencl_sub_group_barrier(args: &[Option<i64>]) -> Barrier {
    opencl_fenced(args, Scope::Wave, Scope::Wave)
}

fn opencl_mem_fence(args: &[Option<i64>]) -> Barrier {
    opencl_fenced(args, Scope::None, Scope::Group)
}

const OPENCL_INTRINSICS: &[Intrinsic] = &[
    common("min", MathFn::Min),
    common("max", MathFn::Max),
    float("fmin", MathFn::Min),
    float("fmax", MathFn::Max),
    common("abs", MathFn::Abs),
    float("fabs", MathFn::Abs),
    common("clamp", MathFn::Clamp),
    float("sqrt", MathFn::Sqrt),
    float("native_sqrt", MathFn::Sqrt),
    float("rsqrt", MathFn::Rsqrt),
    float("native_rsqrt", MathFn::Rsqrt),
    float("exp", MathFn::Exp),
    float("native_exp", MathFn::Exp),
    float("exp2", MathFn::Exp2),
    float("log", MathFn::Log),
    float("native_log", MathFn::Log),
    float("log2", MathFn::Log2),
    float("pow", MathFn::Pow),
    float("powr", MathFn::Pow),
    float("sin", MathFn::Sin),
    float("native_sin", MathFn::Sin),
    float("cos", MathFn::Cos),
    float("native_cos", MathFn::Cos),
    float("tan", MathFn::Tan),
    float("tanh", MathFn::Tanh),
    float("sinh", MathFn::Sinh),
    float("cosh", MathFn::Cosh),
    float("asin", MathFn::Asin),
    float("acos", MathFn::Acos),
    float("atan", MathFn::Atan),
    float("atan2", MathFn::Atan2),
    float("floor", MathFn::Floor),
    float("ceil", MathFn::Ceil),
    float("trunc", MathFn::Trunc),
    float("round", MathFn::RoundHalfAway),
    float("rint", MathFn::Round),
    float("expm1", MathFn::Expm1),
    float("log1p", MathFn::Log1p),
    float("erf", MathFn::Erf),
    class_test("isfinite", IntrinsicOp::IsFinite),
    float("fma", MathFn::Fma),
    float("mad", MathFn::Fma),
    float("mix", MathFn::Lerp),
    float("sign", MathFn::Sign),
    float("step", MathFn::Step),
    common("popcount", MathFn::PopCount),
    common("clz", MathFn::CountLeadingZeros),
    common("mul_hi", MathFn::MulHi),
    common("mul24", MathFn::Mul24),
    Intrinsic { name: "mad24", op: IntrinsicOp::MulAdd24, operands: Operands::Common, result: None },
    Intrinsic { name: "select", op: IntrinsicOp::Select(SelectCondition::TopBitOfVectors), operands: Operands::Bits, result: None },
    bitcast("as_float", Type::F32),
    bitcast("as_int", Type::I32),
    bitcast("as_uint", Type::U32),
];

pub static OPENCL: Dialect = Dialect {
    name: "opencl",
    barriers: &[],
    flag_barrier: None,
    builtin_vars: &[],
    semantics: &[],
    computed_calls: &[("get_sub_group_id", Semantic::WaveIndex), ("get_num_sub_groups", Semantic::WavesPerGroup), ("get_enqueued_num_sub_groups", Semantic::WavesPerGroup)],
    builtin_calls: &[
        ("get_local_linear_id", Builtin::LocalIndex),
        ("get_sub_group_local_id", Builtin::LaneId),
        ("get_sub_group_size", Builtin::WaveSize),
        ("get_max_sub_group_size", Builtin::WaveSize),
    ],
    // The address-space keywords reach the parser as the CUDA words
    // (`predefined_macros`); these are the spaces those words stand for.
    space_qualifiers: &[
        ("__shared__", MemSpace::Shared),
        ("__device__", MemSpace::Device),
        ("__constant__", MemSpace::Constant),
    ],
    coherent_qualifiers: &["volatile"],
    entry_marker: EntryMarker::GlobalSpecifier,
    // Kernel arguments; one value per texel. An image is writable unless
    // `__read_only` (which reaches the parser as `const`): an image the
    // kernel only reads is never written, so that costs no precision.
    resources: &[
        ResourceType { name: "image1d_t", kind: ResourceKind::Texture { dims: 1 }, writable: true },
        ResourceType { name: "image1d_buffer_t", kind: ResourceKind::Texture { dims: 1 }, writable: true },
        ResourceType { name: "image1d_array_t", kind: ResourceKind::Texture { dims: 2 }, writable: true },
        ResourceType { name: "image2d_t", kind: ResourceKind::Texture { dims: 2 }, writable: true },
        ResourceType { name: "image2d_array_t", kind: ResourceKind::Texture { dims: 3 }, writable: true },
        ResourceType { name: "image3d_t", kind: ResourceKind::Texture { dims: 3 }, writable: true },
        ResourceType { name: "sampler_t", kind: ResourceKind::Handle, writable: false },
    ],
    atomics: &[
        ("atomic_add", AtomicOp::Add),
        ("atomic_sub", AtomicOp::Sub),
        ("atomic_xchg", AtomicOp::Exchange),
        ("atomic_min", AtomicOp::Min),
        ("atomic_max", AtomicOp::Max),
        ("atomic_and", AtomicOp::And),
        ("atomic_or", AtomicOp::Or),
        ("atomic_xor", AtomicOp::Xor),
        ("atomic_inc", AtomicOp::Inc),
        ("atomic_dec", AtomicOp::Dec),
        ("atomic_cmpxchg", AtomicOp::CompareExchange),
        ("atom_add", AtomicOp::Add),
        ("atom_sub", AtomicOp::Sub),
        ("atom_xchg", AtomicOp::Exchange),
        ("atom_min", AtomicOp::Min),
        ("atom_max", AtomicOp::Max),
        ("atom_and", AtomicOp::And),
        ("atom_or", AtomicOp::Or),
        ("atom_xor", AtomicOp::Xor),
        ("atom_inc", AtomicOp::Inc),
        ("atom_dec", AtomicOp::Dec),
        ("atom_cmpxchg", AtomicOp::CompareExchange),
        ("atomic_fetch_add", AtomicOp::Add),
        ("atomic_fetch_sub", AtomicOp::Sub),
        ("atomic_fetch_min", AtomicOp::Min),
        ("atomic_fetch_max", AtomicOp::Max),
        ("atomic_fetch_and", AtomicOp::And),
        ("atomic_fetch_or", AtomicOp::Or),
        ("atomic_fetch_xor", AtomicOp::Xor),
        ("atomic_exchange", AtomicOp::Exchange),
        ("atomic_fetch_add_explicit", AtomicOp::Add),
        ("atomic_fetch_sub_explicit", AtomicOp::Sub),
        ("atomic_fetch_min_explicit", AtomicOp::Min),
        ("atomic_fetch_max_explicit", AtomicOp::Max),
        ("atomic_fetch_and_explicit", AtomicOp::And),
        ("atomic_fetch_or_explicit", AtomicOp::Or),
        ("atomic_fetch_xor_explicit", AtomicOp::Xor),
        ("atomic_exchange_explicit", AtomicOp::Exchange),
    ],
    atomic_dest_is_pointer: true,
    wave_ops: &[
        ("sub_group_reduce_add", WaveOp::Sum),
        ("sub_group_reduce_min", WaveOp::Min),
        ("sub_group_reduce_max", WaveOp::Max),
        ("sub_group_scan_exclusive_add", WaveOp::PrefixSum),
        ("sub_group_broadcast", WaveOp::ReadLane),
        ("sub_group_any", WaveOp::AnyTrue),
        ("sub_group_all", WaveOp::AllTrue),
        ("sub_group_shuffle", WaveOp::Shuffle),
        ("sub_group_shuffle_xor", WaveOp::ShuffleXor),
        ("sub_group_shuffle_up", WaveOp::ShuffleUp),
        ("sub_group_shuffle_down", WaveOp::ShuffleDown),
        ("sub_group_ballot", WaveOp::Ballot),
    ],
    inclusive_scans: &[("sub_group_scan_inclusive_add", WaveOp::PrefixSum)],
    ballot_queries: &[
        ("sub_group_ballot_bit_count", BallotQuery::BitCount),
        ("sub_group_ballot_exclusive_scan", BallotQuery::LowerLanes),
        ("sub_group_ballot_inclusive_scan", BallotQuery::LowerLanesAndOwn),
        ("sub_group_ballot_find_lsb", BallotQuery::LowestLane),
        ("sub_group_ballot_find_msb", BallotQuery::HighestLane),
        ("sub_group_ballot_bit_extract", BallotQuery::LaneBit),
        ("sub_group_inverse_ballot", BallotQuery::OwnBit),
    ],
    ballot_words: 4,
    wave_mask_first: false,
    intrinsics: OPENCL_INTRINSICS,
    vector_intrinsics: &[],
    intrinsic_prefixes: &[""],
    cooperative_matrices: NO_COOPERATIVE_MATRICES,
    sync_objects: &[],
    float_literal_is_double: true,
    plain_globals_are_constant: false,
    plain_globals_are_per_thread: false,
    constant_globals_are_fixed: false,
    collective_fences: false,
    group_barrier: "barrier(CLK_LOCAL_MEM_FENCE)",
    device_barrier: "barrier(CLK_GLOBAL_MEM_FENCE)",
    wave_barrier: "sub_group_barrier(CLK_LOCAL_MEM_FENCE)",
    host_code: false,
    // Sub-group width varies by device.
    wave_size: None,
    discard_if_negative: None,
    modelled_headers: &[],
    predefined_macros: &[
        ("__kernel", "__global__"),
        ("kernel", "__global__"),
        ("__global", "__device__"),
        ("global", "__device__"),
        ("__local", "__shared__"),
        ("local", "__shared__"),
        ("__constant", "__constant__"),
        ("constant", "__constant__"),
        ("__private", ""),
        ("private", ""),
        ("__read_only", "const"),
        ("read_only", "const"),
        ("__write_only", ""),
        ("write_only", ""),
        ("__read_write", ""),
        ("read_write", ""),
        ("__OPENCL_VERSION__", "120"),
        ("__OPENCL_C_VERSION__", "120"),
        ("CL_VERSION_1_0", "100"),
        ("CL_VERSION_1_1", "110"),
        ("CL_VERSION_1_2", "120"),
        ("CL_VERSION_2_0", "200"),
        ("CL_VERSION_3_0", "300"),
        ("__ENDIAN_LITTLE__", "1"),
        ("__IMAGE_SUPPORT__", "1"),
        ("CLK_LOCAL_MEM_FENCE", "1"),
        ("CLK_GLOBAL_MEM_FENCE", "2"),
        ("CLK_IMAGE_MEM_FENCE", "4"),
        ("memory_scope_work_item", "0"),
        ("memory_scope_work_group", "1"),
        ("memory_scope_device", "2"),
        ("memory_scope_all_svm_devices", "3"),
        ("memory_scope_all_devices", "3"),
        ("memory_scope_sub_group", "4"),
        ("memory_order_relaxed", "0"),
        ("memory_order_acquire", "2"),
        ("memory_order_release", "3"),
        ("memory_order_acq_rel", "4"),
        ("memory_order_seq_cst", "5"),
        ("FLT_MAX", "3.402823466e+38f"),
        ("FLT_MIN", "1.175494351e-38f"),
        ("FLT_EPSILON", "1.192092896e-07f"),
        ("MAXFLOAT", "3.402823466e+38f"),
        ("INFINITY", "(1.0f / 0.0f)"),
        ("INT_MAX", "2147483647"),
        ("INT_MIN", "(-2147483647 - 1)"),
        ("UINT_MAX", "0xffffffffu"),
        ("M_PI_F", "3.14159274f"),
        ("NULL", "0"),
    ],
    axis_builtins: &[
        ("get_local_id", AxisBuiltin::LocalId),
        ("get_group_id", AxisBuiltin::GroupId),
        ("get_local_size", AxisBuiltin::GroupSize),
        ("get_enqueued_local_size", AxisBuiltin::GroupSize),
        ("get_num_groups", AxisBuiltin::NumGroups),
        ("get_global_id", AxisBuiltin::GlobalId),
        ("get_global_size", AxisBuiltin::GlobalSize),
        ("get_global_offset", AxisBuiltin::GlobalOffset),
    ],
    flag_decoded_barriers: &[
        ("barrier", opencl_group_barrier),
        ("work_group_barrier", opencl_group_barrier),
        ("sub_group_barrier", opencl_sub_group_barrier),
        ("mem_fence", opencl_mem_fence),
        ("read_mem_fence", opencl_mem_fence),
        ("write_mem_fence", opencl_mem_fence),
        ("atomic_work_item_fence", opencl_mem_fence),
    ],
    group_size_attribute: Some("reqd_work_group_size"),
    max_threads_attribute: None,
    wave_size_attributes: &[("intel_reqd_sub_group_size", &[]), ("qcom_reqd_sub_group_size", &[("half", 64), ("full", 128)])],
    space_qualifies_pointee: true,
    matrix_product: None,
    matrix_functions: &[],
    extended_multiplies: &[],
    bitfield_extract: None,
    packed_dot_products: &[
        ("dot_4x8packed_ss_int", packed_dot(Some(true), Accumulate::No)),
        ("dot_4x8packed_uu_uint", packed_dot(Some(false), Accumulate::No)),
        ("dot_acc_sat_4x8packed_ss_int", packed_dot(Some(true), Accumulate::Saturating)),
        ("dot_acc_sat_4x8packed_uu_uint", packed_dot(Some(false), Accumulate::Saturating)),
    ],
    lane_words: None,
    byte_permute: None,
    byte_copy: None,
    typed_conversions: Some(("convert_", "as_")),
    bit_casts: &[],
    vector_memory: &[
        ("vload", vector_memory(false, false, false)),
        ("vstore", vector_memory(true, false, false)),
        ("vload_half", vector_memory(false, true, false)),
        ("vloada_half", vector_memory(false, true, true)),
        ("vstore_half", vector_memory(true, true, false)),
        ("vstorea_half", vector_memory(true, true, true)),
    ],
    group_size_layout: None,
    pipeline_constant_layout: None,
    pipeline_constant_attribute: None,
    ignored_directives: &[],
    image_functions: &[
        ("read_imagef", ImageAccess::SampledLoad(Type::F32)),
        ("read_imagei", ImageAccess::SampledLoad(Type::I32)),
        ("read_imageui", ImageAccess::SampledLoad(Type::U32)),
        ("read_imageh", ImageAccess::SampledLoad(Type::F16)),
        ("write_imagef", ImageAccess::Store),
        ("write_imagei", ImageAccess::Store),
        ("write_imageui", ImageAccess::Store),
        ("write_imageh", ImageAccess::Store),
    ],
    named_constants: &[],
    lambda_launcher: None,
    index_types: &[],
    tiled_index_type: None,
    device_views: &[],
    member_barriers: None,
};

const GLSL_INTRINSICS: &[Intrinsic] = &[
    class_test("isnan", IntrinsicOp::IsNan),
    class_test("isinf", IntrinsicOp::IsInf),
    common("min", MathFn::Min),
    common("max", MathFn::Max),
    common("abs", MathFn::Abs),
    common("clamp", MathFn::Clamp),
    // GLSL `sign` keeps its operand's type.
    common("sign", MathFn::Sign),
    float("fma", MathFn::Fma),
    float("sqrt", MathFn::Sqrt),
    float("inversesqrt", MathFn::Rsqrt),
    float("exp", MathFn::Exp),
    float("exp2", MathFn::Exp2),
    float("log", MathFn::Log),
    float("log2", MathFn::Log2),
    float("pow", MathFn::Pow),
    float("sin", MathFn::Sin),
    float("cos", MathFn::Cos),
    float("tan", MathFn::Tan),
    float("tanh", MathFn::Tanh),
    float("sinh", MathFn::Sinh),
    float("cosh", MathFn::Cosh),
    float("asin", MathFn::Asin),
    float("acos", MathFn::Acos),
    // `atan(y, x)`, with two arguments, is the two-argument arctangent.
    float("atan", MathFn::Atan),
    float("floor", MathFn::Floor),
    float("ceil", MathFn::Ceil),
    // `round` may break ties either way; lockstep breaks them to even, as `roundEven` must.
    float("round", MathFn::Round),
    float("roundEven", MathFn::Round),
    float("trunc", MathFn::Trunc),
    float("fract", MathFn::Frac),
    float("mix", MathFn::Lerp),
    float("step", MathFn::Step),
    common_to("bitCount", MathFn::PopCount, Type::I32),
    common_to("findLSB", MathFn::FirstBitLow, Type::I32),
    common_to("findMSB", MathFn::FirstBitHigh, Type::I32),
    fixed("bitfieldReverse", MathFn::ReverseBits, Type::U32, Type::U32),
    fixed("floatBitsToUint", MathFn::Bitcast, Type::F32, Type::U32),
    fixed("floatBitsToInt", MathFn::Bitcast, Type::F32, Type::I32),
    fixed("uintBitsToFloat", MathFn::Bitcast, Type::U32, Type::F32),
    fixed("intBitsToFloat", MathFn::Bitcast, Type::I32, Type::F32),
];

/// A fence: orders this invocation's accesses, synchronizes no one.
const fn fence(mem: Scope, spaces: Spaces) -> Barrier {
    bar(Scope::None, mem, spaces)
}

/// The Vulkan memory model's scopes and semantics (GL_KHR_memory_scope_semantics).
const GL_SCOPE_DEVICE: i64 = 1;
const GL_SCOPE_WORKGROUP: i64 = 2;
const GL_SCOPE_SUBGROUP: i64 = 3;
const GL_SCOPE_INVOCATION: i64 = 4;
const GL_SCOPE_QUEUE_FAMILY: i64 = 5;
const GL_STORAGE_SEMANTICS_BUFFER: i64 = 0x40;
const GL_STORAGE_SEMANTICS_SHARED: i64 = 0x100;
const GL_STORAGE_SEMANTICS_IMAGE: i64 = 0x800;
const GL_SEMANTICS_RELAXED: i64 = 0;

fn vulkan_scope(scope: Option<&Option<i64>>) -> Option<Scope> {
    match scope {
        Some(Some(GL_SCOPE_DEVICE | GL_SCOPE_QUEUE_FAMILY)) => Some(Scope::Device),
        Some(Some(GL_SCOPE_WORKGROUP)) => Some(Scope::Group),
        Some(Some(GL_SCOPE_SUBGROUP)) => Some(Scope::Wave),
        Some(Some(GL_SCOPE_INVOCATION)) => Some(Scope::None),
        _ => None,
    }
}

/// The spaces a storage-semantics argument names; relaxed semantics order none,
/// and arguments lockstep cannot evaluate order every space.
fn vulkan_spaces(storage: Option<&Option<i64>>, semantics: Option<&Option<i64>>) -> Spaces {
    if let Some(Some(GL_SEMANTICS_RELAXED)) = semantics {
        return Spaces::NONE;
    }
    flag_spaces(storage, GL_STORAGE_SEMANTICS_SHARED, GL_STORAGE_SEMANTICS_BUFFER | GL_STORAGE_SEMANTICS_IMAGE)
}

/// `controlBarrier(execution, memory, storage, semantics)`: the threads of the
/// execution scope wait for each other (a scope lockstep cannot evaluate is the
/// group's, the widest a compute barrier may name), and the named storage is
/// ordered at the memory scope.
fn glsl_control_barrier(args: &[Option<i64>]) -> Barrier {
    let exec = vulkan_scope(args.first()).unwrap_or(Scope::Group);
    let mem = vulkan_scope(args.get(1)).unwrap_or(Scope::Device);
    Barrier { exec, mem, spaces: vulkan_spaces(args.get(2), args.get(3)), reduce: None }
}

pub static GLSL: Dialect = Dialect {
    name: "glsl",
    barriers: &[
        // In compute shaders `barrier()` also orders shared memory (GLSL 4.60 §8.16);
        // buffers and images need a `memoryBarrier*()` fence as well.
        ("barrier", bar(Scope::Group, Scope::Group, Spaces::SHARED)),
        ("memoryBarrier", fence(Scope::Device, Spaces::ALL)),
        ("memoryBarrierShared", fence(Scope::Group, Spaces::SHARED)),
        ("memoryBarrierBuffer", fence(Scope::Device, Spaces::DEVICE)),
        ("memoryBarrierImage", fence(Scope::Device, Spaces::DEVICE)),
        ("groupMemoryBarrier", fence(Scope::Group, Spaces::ALL)),
        ("subgroupBarrier", bar(Scope::Wave, Scope::Wave, Spaces::ALL)),
        ("subgroupMemoryBarrier", fence(Scope::Wave, Spaces::ALL)),
        ("subgroupMemoryBarrierShared", fence(Scope::Wave, Spaces::SHARED)),
        ("subgroupMemoryBarrierBuffer", fence(Scope::Wave, Spaces::DEVICE)),
        ("subgroupMemoryBarrierImage", fence(Scope::Wave, Spaces::DEVICE)),
    ],
    flag_barrier: None,
    builtin_vars: &[
        ("gl_LocalInvocationID", BuiltinVar::Vec3(Builtin::LocalId)),
        ("gl_WorkGroupID", BuiltinVar::Vec3(Builtin::GroupId)),
        ("gl_WorkGroupSize", BuiltinVar::Vec3(Builtin::GroupSize)),
        ("gl_NumWorkGroups", BuiltinVar::Vec3(Builtin::NumGroups)),
        ("gl_GlobalInvocationID", BuiltinVar::GlobalId),
        ("gl_LocalInvocationIndex", BuiltinVar::Scalar(Builtin::LocalIndex)),
        ("gl_SubgroupInvocationID", BuiltinVar::Scalar(Builtin::LaneId)),
        ("gl_SubgroupSize", BuiltinVar::Scalar(Builtin::WaveSize)),
        ("gl_SubgroupID", BuiltinVar::Computed(Semantic::WaveIndex)),
        ("gl_NumSubgroups", BuiltinVar::Computed(Semantic::WavesPerGroup)),
    ],
    semantics: &[],
    computed_calls: &[],
    builtin_calls: &[],
    space_qualifiers: &[("shared", MemSpace::Shared), ("buffer", MemSpace::Device), ("uniform", MemSpace::Constant)],
    // `volatile` implies `coherent`.
    coherent_qualifiers: &["coherent", "volatile"],
    entry_marker: EntryMarker::FunctionNamed("main"),
    resources: &[
        ResourceType { name: "image1D", kind: ResourceKind::Texture { dims: 1 }, writable: true },
        ResourceType { name: "image2D", kind: ResourceKind::Texture { dims: 2 }, writable: true },
        ResourceType { name: "image3D", kind: ResourceKind::Texture { dims: 3 }, writable: true },
        ResourceType { name: "image2DArray", kind: ResourceKind::Texture { dims: 3 }, writable: true },
        ResourceType { name: "imageBuffer", kind: ResourceKind::Texture { dims: 1 }, writable: true },
        ResourceType { name: "iimage1D", kind: ResourceKind::Texture { dims: 1 }, writable: true },
        ResourceType { name: "iimage2D", kind: ResourceKind::Texture { dims: 2 }, writable: true },
        ResourceType { name: "iimage3D", kind: ResourceKind::Texture { dims: 3 }, writable: true },
        ResourceType { name: "iimageBuffer", kind: ResourceKind::Texture { dims: 1 }, writable: true },
        ResourceType { name: "uimage1D", kind: ResourceKind::Texture { dims: 1 }, writable: true },
        ResourceType { name: "uimage2D", kind: ResourceKind::Texture { dims: 2 }, writable: true },
        ResourceType { name: "uimage3D", kind: ResourceKind::Texture { dims: 3 }, writable: true },
        ResourceType { name: "uimageBuffer", kind: ResourceKind::Texture { dims: 1 }, writable: true },
    ],
    atomics: &[
        ("atomicAdd", AtomicOp::Add),
        ("atomicMin", AtomicOp::Min),
        ("atomicMax", AtomicOp::Max),
        ("atomicAnd", AtomicOp::And),
        ("atomicOr", AtomicOp::Or),
        ("atomicXor", AtomicOp::Xor),
        ("atomicExchange", AtomicOp::Exchange),
        ("atomicCompSwap", AtomicOp::CompareExchange),
    ],
    atomic_dest_is_pointer: false,
    wave_ops: &[
        ("subgroupElect", WaveOp::IsFirstLane),
        ("subgroupBroadcastFirst", WaveOp::ReadFirst),
        ("subgroupBroadcast", WaveOp::ReadLane),
        ("subgroupAll", WaveOp::AllTrue),
        ("subgroupAny", WaveOp::AnyTrue),
        ("subgroupAllEqual", WaveOp::AllEqual),
        ("subgroupBallot", WaveOp::Ballot),
        ("subgroupAdd", WaveOp::Sum),
        ("subgroupMul", WaveOp::Product),
        ("subgroupMin", WaveOp::Min),
        ("subgroupMax", WaveOp::Max),
        ("subgroupAnd", WaveOp::BitAnd),
        ("subgroupOr", WaveOp::BitOr),
        ("subgroupXor", WaveOp::BitXor),
        ("subgroupExclusiveAdd", WaveOp::PrefixSum),
        ("subgroupExclusiveMul", WaveOp::PrefixProduct),
        ("subgroupShuffle", WaveOp::Shuffle),
        ("subgroupShuffleXor", WaveOp::ShuffleXor),
        ("subgroupShuffleUp", WaveOp::ShuffleUp),
        ("subgroupShuffleDown", WaveOp::ShuffleDown),
    ],
    inclusive_scans: &[("subgroupInclusiveAdd", WaveOp::PrefixSum), ("subgroupInclusiveMul", WaveOp::PrefixProduct)],
    ballot_queries: &[
        ("subgroupBallotBitCount", BallotQuery::BitCount),
        ("subgroupBallotExclusiveBitCount", BallotQuery::LowerLanes),
        ("subgroupBallotInclusiveBitCount", BallotQuery::LowerLanesAndOwn),
        ("subgroupBallotFindLSB", BallotQuery::LowestLane),
        ("subgroupBallotFindMSB", BallotQuery::HighestLane),
        ("subgroupBallotBitExtract", BallotQuery::LaneBit),
        ("subgroupInverseBallot", BallotQuery::OwnBit),
    ],
    ballot_words: 4,
    wave_mask_first: false,
    intrinsics: GLSL_INTRINSICS,
    vector_intrinsics: &[
        ("unpack8", VectorIntrinsic::Split(8)),
        ("unpack16", VectorIntrinsic::Split(16)),
        ("unpack32", VectorIntrinsic::Split(32)),
        ("pack16", VectorIntrinsic::Join(16)),
        ("pack32", VectorIntrinsic::Join(32)),
        ("pack64", VectorIntrinsic::Join(64)),
        ("unpackHalf2x16", VectorIntrinsic::UnpackHalves),
        ("packHalf2x16", VectorIntrinsic::PackHalves),
    ],
    intrinsic_prefixes: &[""],
    cooperative_matrices: CooperativeMatrices {
        types: &["coopmat", "tensorLayoutNV", "tensorViewNV"],
        functions: &[
            "createTensorLayoutNV",
            "setTensorLayoutDimensionNV",
            "setTensorLayoutStrideNV",
            "setTensorLayoutBlockSizeNV",
            "setTensorLayoutClampValueNV",
            "sliceTensorLayoutNV",
            "createTensorViewNV",
            "setTensorViewDimensionsNV",
            "setTensorViewStrideNV",
            "setTensorViewClipNV",
        ],
        function_prefixes: &["coopMat"],
    },
    sync_objects: &[],
    float_literal_is_double: false,
    plain_globals_are_constant: false,
    plain_globals_are_per_thread: true,
    constant_globals_are_fixed: false,
    collective_fences: false,
    group_barrier: "barrier()",
    device_barrier: "memoryBarrierBuffer(); barrier()",
    wave_barrier: "subgroupBarrier()",
    host_code: false,
    // Subgroup width varies by device.
    wave_size: None,
    discard_if_negative: None,
    modelled_headers: &[],
    // GLSL's vector and matrix types, spelled as the HLSL names the type reader knows;
    // the Vulkan memory model's scoped qualifiers: device-wide ones are `coherent`,
    // narrower ones promise no device-wide visibility.
    predefined_macros: &[
        ("devicecoherent", "coherent"),
        ("queuefamilycoherent", "coherent"),
        ("workgroupcoherent", ""),
        ("subgroupcoherent", ""),
        ("nonprivate", ""),
        ("vec2", "float2"),
        ("vec3", "float3"),
        ("vec4", "float4"),
        ("dvec2", "double2"),
        ("dvec3", "double3"),
        ("dvec4", "double4"),
        ("ivec2", "int2"),
        ("ivec3", "int3"),
        ("ivec4", "int4"),
        ("uvec2", "uint2"),
        ("uvec3", "uint3"),
        ("uvec4", "uint4"),
        ("u8vec2", "uchar2"),
        ("u8vec3", "uchar3"),
        ("u8vec4", "uchar4"),
        ("i8vec2", "char2"),
        ("i8vec3", "char3"),
        ("i8vec4", "char4"),
        ("u16vec2", "ushort2"),
        ("u16vec3", "ushort3"),
        ("u16vec4", "ushort4"),
        ("i16vec2", "short2"),
        ("i16vec3", "short3"),
        ("i16vec4", "short4"),
        ("f16vec2", "half2"),
        ("f16vec3", "half3"),
        ("f16vec4", "half4"),
        ("i32vec2", "int2"),
        ("i32vec3", "int3"),
        ("i32vec4", "int4"),
        ("u32vec2", "uint2"),
        ("u32vec3", "uint3"),
        ("u32vec4", "uint4"),
        ("f32vec2", "float2"),
        ("f32vec3", "float3"),
        ("f32vec4", "float4"),
        ("f64vec2", "double2"),
        ("f64vec3", "double3"),
        ("f64vec4", "double4"),
        ("i64vec2", "longlong2"),
        ("i64vec3", "longlong3"),
        ("i64vec4", "longlong4"),
        ("u64vec2", "ulonglong2"),
        ("u64vec3", "ulonglong3"),
        ("u64vec4", "ulonglong4"),
        ("bvec2", "bool2"),
        ("bvec3", "bool3"),
        ("bvec4", "bool4"),
        ("mat2", "float2x2"),
        ("mat3", "float3x3"),
        ("mat4", "float4x4"),
        // matCxR: C columns of R rows, `m[i]` a column, as lockstep's `CxR`.
        ("mat2x2", "float2x2"),
        ("mat2x3", "float2x3"),
        ("mat2x4", "float2x4"),
        ("mat3x2", "float3x2"),
        ("mat3x3", "float3x3"),
        ("mat3x4", "float3x4"),
        ("mat4x2", "float4x2"),
        ("mat4x3", "float4x3"),
        ("mat4x4", "float4x4"),
        ("gl_MatrixUseA", "0"),
        ("gl_MatrixUseB", "1"),
        ("gl_MatrixUseAccumulator", "2"),
        ("gl_CooperativeMatrixLayoutRowMajor", "0"),
        ("gl_CooperativeMatrixLayoutColumnMajor", "1"),
        ("gl_CooperativeMatrixClampModeUndefinedNV", "0"),
        ("gl_CooperativeMatrixClampModeConstantNV", "1"),
        ("gl_CooperativeMatrixClampModeClampToEdgeNV", "2"),
        ("gl_CooperativeMatrixClampModeRepeatNV", "3"),
        ("gl_CooperativeMatrixClampModeMirrorRepeatNV", "4"),
        ("gl_ScopeDevice", "1"),
        ("gl_ScopeWorkgroup", "2"),
        ("gl_ScopeSubgroup", "3"),
        ("gl_ScopeInvocation", "4"),
        ("gl_ScopeQueueFamily", "5"),
        ("gl_StorageSemanticsNone", "0x0"),
        ("gl_StorageSemanticsBuffer", "0x40"),
        ("gl_StorageSemanticsShared", "0x100"),
        ("gl_StorageSemanticsImage", "0x800"),
        ("gl_SemanticsRelaxed", "0x0"),
        ("gl_SemanticsAcquire", "0x2"),
        ("gl_SemanticsRelease", "0x4"),
        ("gl_SemanticsAcquireRelease", "0x8"),
        ("gl_SemanticsMakeAvailable", "0x2000"),
        ("gl_SemanticsMakeVisible", "0x4000"),
        ("gl_SemanticsVolatile", "0x8000"),
        ("GL_compute_shader", "1"),
        ("GL_core_profile", "1"),
        ("VULKAN", "100"),
    ],
    axis_builtins: &[],
    flag_decoded_barriers: &[("controlBarrier", glsl_control_barrier)],
    group_size_attribute: None,
    max_threads_attribute: None,
    wave_size_attributes: &[],
    space_qualifies_pointee: false,
    matrix_product: Some(MatrixProduct::Operator),
    matrix_functions: &[("transpose", MatrixFunction::Transpose), ("matrixCompMult", MatrixFunction::ComponentProduct), ("outerProduct", MatrixFunction::Outer)],
    extended_multiplies: &["umulExtended", "imulExtended"],
    bitfield_extract: Some("bitfieldExtract"),
    packed_dot_products: &[("dotPacked4x8EXT", packed_dot(None, Accumulate::No)), ("dotPacked4x8AccSatEXT", packed_dot(None, Accumulate::Saturating))],
    lane_words: None,
    byte_permute: None,
    byte_copy: None,
    typed_conversions: None,
    bit_casts: &[],
    vector_memory: &[],
    group_size_layout: Some(["local_size_x", "local_size_y", "local_size_z"]),
    pipeline_constant_layout: Some("constant_id"),
    pipeline_constant_attribute: None,
    ignored_directives: &["version", "extension", "pragma"],
    image_functions: &[
        ("imageLoad", ImageAccess::Load),
        ("imageStore", ImageAccess::Store),
        ("imageAtomicAdd", ImageAccess::Atomic(AtomicOp::Add)),
        ("imageAtomicMin", ImageAccess::Atomic(AtomicOp::Min)),
        ("imageAtomicMax", ImageAccess::Atomic(AtomicOp::Max)),
        ("imageAtomicAnd", ImageAccess::Atomic(AtomicOp::And)),
        ("imageAtomicOr", ImageAccess::Atomic(AtomicOp::Or)),
        ("imageAtomicXor", ImageAccess::Atomic(AtomicOp::Xor)),
        ("imageAtomicExchange", ImageAccess::Atomic(AtomicOp::Exchange)),
        ("imageAtomicCompSwap", ImageAccess::Atomic(AtomicOp::CompareExchange)),
    ],
    named_constants: &[],
    lambda_launcher: None,
    index_types: &[],
    tiled_index_type: None,
    device_views: &[],
    member_barriers: None,
};

/// Metal's `mem_flags` bits, as lockstep numbers them (`metal_stdlib` is not read).
const MEM_DEVICE: i64 = 1;
const MEM_THREADGROUP: i64 = 2;
const MEM_TEXTURE: i64 = 4;
const MEM_THREADGROUP_IMAGEBLOCK: i64 = 8;
/// Metal's `thread_scope` values, as lockstep numbers them.
const THREAD_SCOPE_SIMDGROUP: i64 = 1;
const THREAD_SCOPE_THREADGROUP: i64 = 2;

/// The spaces a `mem_flags` argument names; flags lockstep cannot evaluate name every space.
fn metal_spaces(flags: Option<&Option<i64>>) -> Spaces {
    flag_spaces(flags, MEM_THREADGROUP | MEM_THREADGROUP_IMAGEBLOCK, MEM_DEVICE | MEM_TEXTURE)
}

fn metal_threadgroup_barrier(args: &[Option<i64>]) -> Barrier {
    bar(Scope::Group, Scope::Group, metal_spaces(args.first()))
}

fn metal_simdgroup_barrier(args: &[Option<i64>]) -> Barrier {
    bar(Scope::Wave, Scope::Wave, metal_spaces(args.first()))
}

/// `atomic_thread_fence(flags, order, scope)`: a fence at the scope named (the device when unknown).
fn metal_thread_fence(args: &[Option<i64>]) -> Barrier {
    let mem = match args.get(2) {
        Some(Some(THREAD_SCOPE_SIMDGROUP)) => Scope::Wave,
        Some(Some(THREAD_SCOPE_THREADGROUP)) => Scope::Group,
        _ => Scope::Device,
    };
    fence(mem, metal_spaces(args.first()))
}

const METAL_INTRINSICS: &[Intrinsic] = &[
    class_test("isnan", IntrinsicOp::IsNan),
    class_test("isinf", IntrinsicOp::IsInf),
    class_test("isfinite", IntrinsicOp::IsFinite),
    Intrinsic { name: "select", op: IntrinsicOp::Select(SelectCondition::NonZero), operands: Operands::Bits, result: None },
    common("min", MathFn::Min),
    common("max", MathFn::Max),
    float("fmin", MathFn::Min),
    float("fmax", MathFn::Max),
    common("abs", MathFn::Abs),
    float("fabs", MathFn::Abs),
    common("clamp", MathFn::Clamp),
    float("saturate", MathFn::Saturate),
    float("sqrt", MathFn::Sqrt),
    float("rsqrt", MathFn::Rsqrt),
    float("exp", MathFn::Exp),
    float("exp2", MathFn::Exp2),
    float("log", MathFn::Log),
    float("log2", MathFn::Log2),
    float("pow", MathFn::Pow),
    float("powr", MathFn::Pow),
    float("sin", MathFn::Sin),
    float("cos", MathFn::Cos),
    float("tan", MathFn::Tan),
    float("tanh", MathFn::Tanh),
    float("sinh", MathFn::Sinh),
    float("cosh", MathFn::Cosh),
    float("asin", MathFn::Asin),
    float("acos", MathFn::Acos),
    float("atan", MathFn::Atan),
    float("atan2", MathFn::Atan2),
    float("floor", MathFn::Floor),
    float("ceil", MathFn::Ceil),
    float("rint", MathFn::Round),
    float("round", MathFn::RoundHalfAway),
    float("trunc", MathFn::Trunc),
    float("fract", MathFn::Frac),
    float("fma", MathFn::Fma),
    float("mix", MathFn::Lerp),
    float("step", MathFn::Step),
    float("sign", MathFn::Sign),
    common("popcount", MathFn::PopCount),
    common("clz", MathFn::CountLeadingZeros),
    common("mulhi", MathFn::MulHi),
    common("reverse_bits", MathFn::ReverseBits),
    memory("simd_active_threads_mask", IntrinsicOp::ActiveLaneMask),
];

pub static METAL: Dialect = Dialect {
    name: "metal",
    barriers: &[],
    flag_barrier: None,
    builtin_vars: &[],
    // Kernel parameter attributes (`uint tid [[thread_position_in_grid]]`).
    semantics: &[
        ("thread_position_in_grid", Semantic::DispatchThreadId),
        ("thread_position_in_threadgroup", Semantic::GroupThreadId),
        ("threadgroup_position_in_grid", Semantic::GroupId),
        ("thread_index_in_threadgroup", Semantic::GroupIndex),
        ("threads_per_threadgroup", Semantic::GroupSize),
        ("dispatch_threads_per_threadgroup", Semantic::GroupSize),
        ("threadgroups_per_grid", Semantic::NumGroups),
        ("threads_per_grid", Semantic::GridSize),
        ("thread_index_in_simdgroup", Semantic::LaneId),
        ("threads_per_simdgroup", Semantic::WaveSize),
        ("thread_execution_width", Semantic::WaveSize),
        ("simdgroup_index_in_threadgroup", Semantic::WaveIndex),
        ("simdgroups_per_threadgroup", Semantic::WavesPerGroup),
    ],
    computed_calls: &[],
    builtin_calls: &[],
    // The address-space keywords reach the parser as the CUDA words
    // (`predefined_macros`); these are the spaces those words stand for.
    space_qualifiers: &[
        ("__shared__", MemSpace::Shared),
        ("__device__", MemSpace::Device),
        ("__constant__", MemSpace::Constant),
    ],
    coherent_qualifiers: &["volatile", "coherent"],
    entry_marker: EntryMarker::GlobalSpecifier,
    resources: &[],
    atomics: &[
        ("atomic_fetch_add_explicit", AtomicOp::Add),
        ("atomic_fetch_sub_explicit", AtomicOp::Sub),
        ("atomic_fetch_min_explicit", AtomicOp::Min),
        ("atomic_fetch_max_explicit", AtomicOp::Max),
        ("atomic_fetch_and_explicit", AtomicOp::And),
        ("atomic_fetch_or_explicit", AtomicOp::Or),
        ("atomic_fetch_xor_explicit", AtomicOp::Xor),
        ("atomic_exchange_explicit", AtomicOp::Exchange),
        ("atomic_load_explicit", AtomicOp::Load),
        // A store is an exchange whose old value nobody reads.
        ("atomic_store_explicit", AtomicOp::Exchange),
    ],
    atomic_dest_is_pointer: true,
    wave_ops: &[
        ("simd_sum", WaveOp::Sum),
        ("simd_product", WaveOp::Product),
        ("simd_min", WaveOp::Min),
        ("simd_max", WaveOp::Max),
        ("simd_and", WaveOp::BitAnd),
        ("simd_or", WaveOp::BitOr),
        ("simd_xor", WaveOp::BitXor),
        ("simd_prefix_exclusive_sum", WaveOp::PrefixSum),
        ("simd_prefix_exclusive_product", WaveOp::PrefixProduct),
        ("simd_broadcast", WaveOp::ReadLane),
        ("simd_broadcast_first", WaveOp::ReadFirst),
        ("simd_shuffle", WaveOp::Shuffle),
        ("simd_shuffle_xor", WaveOp::ShuffleXor),
        ("simd_shuffle_up", WaveOp::ShuffleUp),
        ("simd_shuffle_down", WaveOp::ShuffleDown),
        ("simd_ballot", WaveOp::Ballot),
        ("simd_any", WaveOp::AnyTrue),
        ("simd_all", WaveOp::AllTrue),
        ("simd_is_first", WaveOp::IsFirstLane),
    ],
    inclusive_scans: &[("simd_prefix_inclusive_sum", WaveOp::PrefixSum), ("simd_prefix_inclusive_product", WaveOp::PrefixProduct)],
    ballot_queries: &[],
    ballot_words: 1,
    wave_mask_first: false,
    intrinsics: METAL_INTRINSICS,
    vector_intrinsics: &[],
    // Other SIMD-group and quad-group functions, and atomics lockstep does not model, are worth a note.
    intrinsic_prefixes: &[""],
    cooperative_matrices: CooperativeMatrices {
        types: &["simdgroup_float8x8", "simdgroup_half8x8", "simdgroup_bfloat8x8"],
        functions: &["simdgroup_load", "simdgroup_store", "simdgroup_multiply_accumulate", "simdgroup_multiply", "make_filled_simdgroup_matrix"],
        function_prefixes: &[],
    },
    sync_objects: &[],
    float_literal_is_double: false,
    plain_globals_are_constant: false,
    plain_globals_are_per_thread: false,
    constant_globals_are_fixed: true,
    collective_fences: false,
    group_barrier: "threadgroup_barrier(mem_flags::mem_threadgroup)",
    device_barrier: "threadgroup_barrier(mem_flags::mem_device)",
    wave_barrier: "simdgroup_barrier(mem_flags::mem_threadgroup)",
    host_code: false,
    // The SIMD-group width varies by device.
    wave_size: None,
    discard_if_negative: None,
    modelled_headers: &["metal_stdlib", "metal_atomic", "metal_compute", "metal_math", "metal_simdgroup", "metal_integer", "metal_common"],
    predefined_macros: &[
        ("kernel", "__global__"),
        ("device", "__device__"),
        ("threadgroup", "__shared__"),
        ("constant", "__constant__"),
        ("thread", ""),
        ("atomic_int", "int"),
        ("atomic_uint", "uint"),
        ("atomic_float", "float"),
        ("atomic_bool", "bool"),
        ("memory_order_relaxed", "0"),
        ("memory_order_seq_cst", "5"),
        ("thread_scope_thread", "0"),
        ("thread_scope_simdgroup", "1"),
        ("thread_scope_threadgroup", "2"),
        ("thread_scope_device", "3"),
        ("__METAL_VERSION__", "310"),
        ("FLT_MAX", "3.402823466e+38f"),
        ("FLT_MIN", "1.175494351e-38f"),
        ("FLT_EPSILON", "1.192092896e-07f"),
        ("MAXFLOAT", "3.402823466e+38f"),
        ("HUGE_VALF", "(1.0f / 0.0f)"),
        ("HALF_MAX", "65504.0h"),
        ("MAXHALF", "65504.0h"),
        ("HALF_MIN", "6.103515625e-05h"),
        ("HALF_EPSILON", "9.765625e-04h"),
        ("INFINITY", "(1.0f / 0.0f)"),
        ("NAN", "(0.0f / 0.0f)"),
        ("INT_MAX", "2147483647"),
        ("INT_MIN", "(-2147483647 - 1)"),
        ("UINT_MAX", "0xffffffffu"),
        ("M_PI_F", "3.14159274f"),
        ("M_PI_H", "3.140625h"),
        ("M_E_F", "2.71828175f"),
        ("M_LN2_F", "0.693147182f"),
        ("M_SQRT2_F", "1.41421354f"),
    ],
    axis_builtins: &[],
    flag_decoded_barriers: &[
        ("threadgroup_barrier", metal_threadgroup_barrier),
        ("simdgroup_barrier", metal_simdgroup_barrier),
        ("atomic_thread_fence", metal_thread_fence),
    ],
    group_size_attribute: None,
    max_threads_attribute: Some("max_total_threads_per_threadgroup"),
    wave_size_attributes: &[],
    space_qualifies_pointee: true,
    matrix_product: Some(MatrixProduct::Operator),
    matrix_functions: &[("transpose", MatrixFunction::Transpose)],
    extended_multiplies: &[],
    bitfield_extract: None,
    packed_dot_products: &[],
    lane_words: None,
    byte_permute: None,
    byte_copy: None,
    typed_conversions: None,
    bit_casts: &["as_type"],
    vector_memory: &[],
    group_size_layout: None,
    pipeline_constant_layout: None,
    pipeline_constant_attribute: Some("function_constant"),
    ignored_directives: &[],
    image_functions: &[],
    named_constants: &[
        ("mem_none", 0),
        ("mem_device", MEM_DEVICE),
        ("mem_threadgroup", MEM_THREADGROUP),
        ("mem_texture", MEM_TEXTURE),
        ("mem_threadgroup_imageblock", MEM_THREADGROUP_IMAGEBLOCK),
    ],
    lambda_launcher: None,
    index_types: &[],
    tiled_index_type: None,
    device_views: &[],
    member_barriers: None,
};

pub static CPP_AMP: Dialect = Dialect {
    name: "cpp-amp",
    barriers: &[
        // The `concurrency` fences take the tiled index; they order this thread's accesses only.
        ("all_memory_fence", fence(Scope::Group, Spaces::ALL)),
        ("global_memory_fence", fence(Scope::Group, Spaces::DEVICE)),
        ("tile_static_memory_fence", fence(Scope::Group, Spaces::SHARED)),
    ],
    flag_barrier: None,
    builtin_vars: &[],
    semantics: &[],
    computed_calls: &[],
    builtin_calls: &[],
    // `tile_static` reaches the parser as `__shared__` (`predefined_macros`).
    space_qualifiers: &[("__shared__", MemSpace::Shared)],
    coherent_qualifiers: &[],
    entry_marker: EntryMarker::LaunchedLambdas,
    resources: &[],
    atomics: &[
        ("atomic_fetch_add", AtomicOp::Add),
        ("atomic_fetch_sub", AtomicOp::Sub),
        ("atomic_fetch_min", AtomicOp::Min),
        ("atomic_fetch_max", AtomicOp::Max),
        ("atomic_fetch_and", AtomicOp::And),
        ("atomic_fetch_or", AtomicOp::Or),
        ("atomic_fetch_xor", AtomicOp::Xor),
        ("atomic_exchange", AtomicOp::Exchange),
    ],
    atomic_dest_is_pointer: true,
    wave_ops: &[],
    inclusive_scans: &[],
    ballot_queries: &[],
    ballot_words: 1,
    wave_mask_first: false,
    intrinsics: CUDA_INTRINSICS,
    vector_intrinsics: &[],
    // Atomics lockstep does not model (`atomic_fetch_inc`, `atomic_compare_exchange`) are worth a note.
    intrinsic_prefixes: &["atomic_"],
    cooperative_matrices: NO_COOPERATIVE_MATRICES,
    sync_objects: &[],
    float_literal_is_double: true,
    plain_globals_are_constant: false,
    plain_globals_are_per_thread: false,
    constant_globals_are_fixed: false,
    collective_fences: false,
    group_barrier: "t.barrier.wait()",
    device_barrier: "t.barrier.wait_with_global_memory_fence()",
    wave_barrier: "",
    // Host code surrounds the kernels and declares what they capture: it is parsed, never run.
    host_code: false,
    wave_size: None,
    discard_if_negative: None,
    modelled_headers: &["amp.h", "amp_math.h", "amp_graphics.h", "amp_short_vectors.h"],
    predefined_macros: &[("tile_static", "__shared__"), ("restrict(...)", "")],
    axis_builtins: &[],
    flag_decoded_barriers: &[],
    group_size_attribute: None,
    max_threads_attribute: None,
    wave_size_attributes: &[],
    space_qualifies_pointee: false,
    matrix_product: None,
    matrix_functions: &[],
    extended_multiplies: &[],
    bitfield_extract: None,
    packed_dot_products: &[],
    lane_words: None,
    byte_permute: None,
    byte_copy: None,
    typed_conversions: None,
    bit_casts: &[],
    vector_memory: &[],
    group_size_layout: None,
    pipeline_constant_layout: None,
    pipeline_constant_attribute: None,
    ignored_directives: &[],
    image_functions: &[],
    named_constants: &[],
    lambda_launcher: Some("parallel_for_each"),
    index_types: &["index", "extent"],
    tiled_index_type: Some("tiled_index"),
    device_views: &["array_view", "array"],
    member_barriers: Some((
        "barrier",
        &[
            ("wait", bar(Scope::Group, Scope::Group, Spaces::ALL)),
            ("wait_with_all_memory_fence", bar(Scope::Group, Scope::Group, Spaces::ALL)),
            ("wait_with_global_memory_fence", bar(Scope::Group, Scope::Group, Spaces::DEVICE)),
            ("wait_with_tile_static_memory_fence", bar(Scope::Group, Scope::Group, Spaces::SHARED)),
        ],
    )),
};

impl Dialect {
    pub fn matrix_function(&self, name: &str) -> Option<MatrixFunction> {
        self.matrix_functions.iter().find(|(n, _)| *n == name).map(|&(_, f)| f)
    }

    pub fn vector_intrinsic(&self, name: &str) -> Option<VectorIntrinsic> {
        self.vector_intrinsics.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }

    pub fn axis_builtin(&self, name: &str) -> Option<AxisBuiltin> {
        self.axis_builtins.iter().find(|(n, _)| *n == name).map(|(_, b)| *b)
    }
    pub fn flag_decoded_barrier(&self, name: &str) -> Option<DecodeBarrier> {
        self.flag_decoded_barriers.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
    }
    pub fn image_function(&self, name: &str) -> Option<ImageAccess> {
        self.image_functions.iter().find(|(n, _)| *n == name).map(|(_, a)| *a)
    }
    /// The vector load or store a name calls: a family's prefix, the width
    /// (2, 3, 4, 8 or 16; left out for one half), and for a store of halves
    /// the rounding `_rte`, which is the default. Other roundings are not
    /// modelled (None).
    pub fn vector_memory(&self, name: &str) -> Option<VectorAccess> {
        self.vector_memory.iter().find_map(|&(prefix, family)| {
            let rest = name.strip_prefix(prefix)?;
            let rest = if family.store && family.halves { rest.strip_suffix("_rte").unwrap_or(rest) } else { rest };
            let width = match rest {
                "" if family.halves => 1,
                "2" | "3" | "4" | "8" | "16" => rest.parse().ok()?,
                _ => return None,
            };
            let stride = if family.aligned && width == 3 { 4 } else { width };
            Some(VectorAccess { family, width, stride })
        })
    }
    pub fn named_constant(&self, name: &str) -> Option<i64> {
        self.named_constants.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
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
    pub fn computed_call(&self, name: &str) -> Option<Semantic> {
        self.computed_calls.iter().find(|(n, _)| *n == name).map(|(_, s)| *s)
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
    pub fn inclusive_scan(&self, name: &str) -> Option<WaveOp> {
        self.inclusive_scans.iter().find(|(n, _)| *n == name).map(|(_, w)| *w)
    }

    pub fn ballot_query(&self, name: &str) -> Option<BallotQuery> {
        self.ballot_queries.iter().find(|(n, _)| *n == name).map(|(_, q)| *q)
    }

    pub fn wave_op(&self, name: &str) -> Option<WaveOp> {
        self.wave_ops.iter().find(|(n, _)| *n == name).map(|(_, w)| *w)
    }
    pub fn intrinsic(&self, name: &str) -> Option<Intrinsic> {
        self.intrinsics.iter().find(|i| i.name == name).copied()
    }
    /// True for a name spelled like a toolkit intrinsic (`__foo` in CUDA).
    /// Whether `name` is a function on cooperative matrices.
    pub fn cooperative_matrix_function(&self, name: &str) -> bool {
        let m = &self.cooperative_matrices;
        m.functions.contains(&name) || m.function_prefixes.iter().any(|p| name.starts_with(p))
    }

    pub fn looks_like_intrinsic(&self, name: &str) -> bool {
        self.intrinsic_prefixes.iter().any(|p| name.starts_with(p))
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
