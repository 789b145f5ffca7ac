//! C++ features real kernels use, checked by running them: overloads chosen
//! by argument types, and templates instantiated with their arguments.

use lockstep_emu::{run, Launch, RunConfig};
use lockstep_lower::{compile, Lang, Options};
use lockstep_source::SourceDb;

fn run_kernel(lang: Lang, text: &str, entry: &str, launch: &str, groups: [u32; 3], group_size: Option<[u32; 3]>) -> lockstep_emu::RunOutcome {
    let mut db = SourceDb::new();
    let file = db.add("kernel", text);
    let c = compile(&mut db, file, lang, &Options::default());
    assert!(!c.has_errors, "{:?}", c.diagnostics);
    let f = c.module.find_function(entry).unwrap_or_else(|| panic!("no kernel `{entry}`"));
    let l = Launch::parse(launch, std::path::Path::new(".")).unwrap();
    let out = run(&db, &c.module, f, &l, &RunConfig { groups, group_size, ..RunConfig::default() }).unwrap();
    assert!(out.findings.is_empty(), "{:?}", out.findings.iter().map(|d| &d.message).collect::<Vec<_>>());
    out
}

/// A bitonic sort of 64-bit keys held as (low, high) pairs. The 32-bit
/// compare comes first in the file: taking the first overload by name would
/// sort by the low word alone.
const BITONIC_OVERLOADS_HLSL: &str = r#"RWStructuredBuffer<uint2> Keys : register(u0);
groupshared uint2 Shared[64];

bool ShouldSwap(uint a, uint b) { return a > b; }
bool ShouldSwap(uint2 a, uint2 b) { return a.y > b.y || (a.y == b.y && a.x > b.x); }

[numthreads(64, 1, 1)]
void sort(uint gi : SV_GroupIndex)
{
    Shared[gi] = Keys[gi];
    GroupMemoryBarrierWithGroupSync();
    for (uint k = 2; k <= 64; k <<= 1) {
        for (uint j = k >> 1; j > 0; j >>= 1) {
            uint partner = gi ^ j;
            uint2 mine = Shared[gi];
            uint2 other = Shared[partner];
            bool ascending = (gi & k) == 0;
            bool lower = gi < partner;
            bool swap = lower == ascending ? ShouldSwap(mine, other) : ShouldSwap(other, mine);
            GroupMemoryBarrierWithGroupSync();
            if (swap)
                Shared[gi] = other;
            GroupMemoryBarrierWithGroupSync();
        }
    }
    Keys[gi] = Shared[gi];
}
"#;

#[test]
fn overloads_are_chosen_by_argument_types() {
    // Keys whose high words order them differently from their low words.
    let keys: Vec<(u32, u32)> = (0..64u32).map(|i| ((i * 37) % 64, (i * 11 + 5) % 7)).collect();
    let values: Vec<String> = keys.iter().flat_map(|&(lo, hi)| [lo.to_string(), hi.to_string()]).collect();
    let launch = format!("[buffers.Keys]\ndata = [{}]\n", values.join(", "));
    let out = run_kernel(Lang::Hlsl, BITONIC_OVERLOADS_HLSL, "sort", &launch, [1, 1, 1], None);
    let got: Vec<(u32, u32)> = out.buffer("Keys").unwrap().u32s().chunks(2).map(|c| (c[0], c[1])).collect();
    let mut want = keys;
    want.sort_by_key(|&(lo, hi)| ((hi as u64) << 32) | lo as u64);
    assert_eq!(got, want);
}

const TEMPLATED_REDUCTION_CUDA: &str = r#"
template <typename T>
__device__ T square(T v) { return v * v; }

template <typename T, int BLOCK_SIZE>
__global__ void sum_of_squares(const T* in, T* out)
{
    __shared__ T partial[BLOCK_SIZE];
    unsigned tid = threadIdx.x;
    partial[tid] = square(in[blockIdx.x * BLOCK_SIZE + tid]);
    __syncthreads();
    for (unsigned stride = BLOCK_SIZE / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            partial[tid] += partial[tid + stride];
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = partial[0];
}
template __global__ void sum_of_squares<int, 32>(const int*, int*);
template __global__ void sum_of_squares<int, 64>(const int*, int*);
"#;

#[test]
fn template_instantiations_run_with_their_arguments() {
    for block in [32u32, 64] {
        let entry = format!("sum_of_squares<int, {block}>");
        let launch = format!("[buffers.in]\nfill = {{ start = 1, step = 1 }}\nlen = {}\n[buffers.out]\nlen = 2\n", 2 * block);
        let out = run_kernel(Lang::Cuda, TEMPLATED_REDUCTION_CUDA, &entry, &launch, [2, 1, 1], Some([block, 1, 1]));
        let want: Vec<i32> = (0..2).map(|g| (g * block + 1..=g * block + block).map(|v| (v * v) as i32).sum()).collect();
        assert_eq!(out.buffer("out").unwrap().i32s(), want, "{entry}");
    }
}

/// Constants read from class templates (a recursive primary template and
/// specializations chosen by an enum argument, `std::is_same`), an enum
/// parameter, and a helper chosen through a pointer to a function by `if
/// constexpr` and by a `switch` on a template argument.
const CLASS_CONSTANTS_AND_FUNCTION_VALUES_CUDA: &str = r#"
template <int n> struct pow2 { static constexpr int value = 2*pow2<(n + 1)/2>::value; };
template <>      struct pow2<1> { static constexpr int value = 1; };
template <int n> struct fib { static constexpr int value = fib<n - 1>::value + fib<n - 2>::value; };
template <>      struct fib<1> { static constexpr int value = 1; };
template <>      struct fib<0> { static constexpr int value = 0; };

enum qtype { Q4 = 2, Q8 = 8 };
template <qtype t> struct traits;
template <> struct traits<Q4> { static constexpr int qk = 32; };
template <> struct traits<Q8> { static constexpr int qk = 64; };

enum table { GENERIC, TURING };
static constexpr __device__ int warps(table id, int n) { return id == GENERIC ? n : 2 * n; }

typedef int (*combine_t)(int a, int b);
__device__ int add(int a, int b) { return a + b; }
__device__ int mul(int a, int b) { return a * b; }

template <qtype t>
__device__ combine_t combine_for() {
    if constexpr (t == Q4) {
        return add;
    } else {
        return &mul;
    }
}

__device__ combine_t combine_by(qtype t) {
    switch (t) {
        case Q4: return add;
        default: return mul;
    }
}

template <typename T>
__device__ int kind_of() { return std::is_same_v<T, int> ? 1 : std::is_same<T, float>::value ? 2 : 0; }

template <typename T> struct lanes { static constexpr int value = 1; };
template <> struct lanes<float4> { static constexpr int value = 4; };

template <int N, qtype t>
__global__ void constants(int* out)
{
    constexpr combine_t first = combine_for<t>();
    const combine_t second = combine_by(Q4);
    const int i = threadIdx.x;
    out[i] = (first != nullptr ? first(i, pow2<N>::value) : -100000) + second(traits<t>::qk, warps(TURING, 3)) + 1000 * kind_of<float>() + 100000 * lanes<float4>::value + 1000000 * lanes<int>::value + 10000000 * fib<10>::value;
}
template __global__ void constants<5, Q8>(int*);
template __global__ void constants<5, Q4>(int*);
"#;

#[test]
fn class_constants_enum_parameters_and_function_values_compute_as_cpp() {
    for (entry, first) in [("constants<5, Q8>", (|i: i32| i * 8) as fn(i32) -> i32), ("constants<5, Q4>", |i: i32| i + 8)] {
        let qk = if entry.contains("Q8") { 64 } else { 32 };
        let out = run_kernel(Lang::Cuda, CLASS_CONSTANTS_AND_FUNCTION_VALUES_CUDA, entry, "[buffers.out]\nlen = 4\n", [1, 1, 1], Some([4, 1, 1]));
        let want: Vec<i32> = (0..4).map(|i| first(i) + qk + 6 + 2000 + 400000 + 1000000 + 10000000 * 55).collect();
        assert_eq!(out.buffer("out").unwrap().i32s(), want, "{entry}");
    }
}
