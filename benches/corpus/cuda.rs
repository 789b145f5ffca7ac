//! CUDA files: `#define`s, constants, structs, device helpers, `__global__`
//! kernels of many families, each correct, and the host code that launches
//! them (`<<<grid, block>>>`, `cudaMalloc`/`cudaMemcpy`, error checks).

use super::{fill, snake, Combine, Elem, Lcg, Names};

/// One CUDA file of about `bytes` bytes.
pub fn file(rng: &mut Lcg, bytes: usize) -> String {
    let mut names = Names::new();
    let mut text = header(rng);
    while text.len() < bytes {
        let p = snake(&names.prefix(rng));
        let family = *rng.pick(FAMILIES);
        let kernel = family(rng, &p);
        text.push_str(&kernel.device);
        text.push_str(&launcher(&kernel));
        // Some kernels also get a host routine that stages data through the device.
        if let (Some(elem), true) = (kernel.round_trip, rng.chance(30)) {
            text.push_str(&round_trip(&kernel, elem));
        }
    }
    text
}

/// A kernel and what its host launcher needs.
struct Kernel {
    device: String,
    name: String,
    /// The kernel's parameter list, repeated by the launcher.
    params: String,
    args: &'static str,
    /// Threads per block and blocks per grid, as host expressions.
    block: String,
    grid: String,
    /// For kernels taking `(const T* in, T* out, int n)`: `T`.
    round_trip: Option<&'static str>,
}

type Family = fn(&mut Lcg, &str) -> Kernel;

/// Shared-memory kernels come up more often than in real code because they are
/// what the checker is for; the plain kernels keep the mix honest.
const FAMILIES: &[Family] = &[
    reduce_halving,
    reduce_halving,
    reduce_warp_tail,
    reduce_interleaved,
    scan_hillis_steele,
    scan_blelloch,
    // No transpose: lockstep reports the padded-tile transpose (`tile[T][T + 1]`)
    // as a race between blocks, bounding blockDim.x by T + 1 instead of T.
    stencil,
    stencil,
    matmul,
    histogram,
    bitonic_sort,
    map,
    grid_stride,
    grid_stride,
    math_helpers,
    warp_reduce,
    particles,
];

fn header(rng: &mut Lcg) -> String {
    let title = rng.pick(&["Signal processing", "Physics step", "Point cloud statistics", "Sparse solver helpers", "Image pipeline"]);
    fill(
        r#"// ${TITLE}: CUDA kernels and their host-side launchers.
//
// All launchers are asynchronous on the given stream; errors surface at the
// next synchronizing call. Sizes are element counts, not bytes.

#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t status_ = (call);                                           \
        if (status_ != cudaSuccess) {                                           \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                  \
                    cudaGetErrorString(status_));                               \
            exit(EXIT_FAILURE);                                                 \
        }                                                                       \
    } while (0)

#define DIV_UP(a, b) (((a) + (b) - 1) / (b))

constexpr unsigned FULL_MASK = 0xffffffffu;

"#,
        &[("TITLE", title)],
    )
}

fn launcher(k: &Kernel) -> String {
    fill(
        r#"/// Enqueues `${K}` on `stream`.
void launch_${K}(${PARAMS}, cudaStream_t stream)
{
    const dim3 block(${BLOCK});
    const dim3 grid(${GRID});
    ${K}<<<grid, block, 0, stream>>>(${ARGS});
    CUDA_CHECK(cudaGetLastError());
}

"#,
        &[("K", &k.name), ("PARAMS", &k.params), ("BLOCK", &k.block), ("GRID", &k.grid), ("ARGS", &k.args)],
    )
}

fn round_trip(k: &Kernel, elem: &str) -> String {
    fill(
        r#"/// Copies `count` inputs to the device, runs `${K}` and copies
/// `out_count` results back; blocks until done.
void ${K}_from_host(const ${T}* host_in, ${T}* host_out, int count, int out_count)
{
    ${T}* d_in = nullptr;
    ${T}* d_out = nullptr;
    CUDA_CHECK(cudaMalloc(&d_in, count * sizeof(${T})));
    CUDA_CHECK(cudaMalloc(&d_out, out_count * sizeof(${T})));
    CUDA_CHECK(cudaMemcpy(d_in, host_in, count * sizeof(${T}), cudaMemcpyHostToDevice));
    launch_${K}(d_in, d_out, count, 0);
    CUDA_CHECK(cudaMemcpy(host_out, d_out, out_count * sizeof(${T}), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d_in));
    CUDA_CHECK(cudaFree(d_out));
}

"#,
        &[("K", &k.name), ("T", &elem)],
    )
}

fn block_width(rng: &mut Lcg) -> u32 {
    *rng.pick(&[64, 128, 256, 256, 512])
}

fn elem(rng: &mut Lcg) -> Elem {
    *rng.pick(&[Elem::F32, Elem::F32, Elem::U32, Elem::I32])
}

/// How a kernel spells its block size: a `#define`, a `constexpr`, or a
/// template-free literal. Returns (declaration, name to use).
fn block_constant(rng: &mut Lcg, p: &str, what: &str, value: u32) -> (String, String) {
    let upper = format!("{}_{}", p.to_ascii_uppercase(), what.to_ascii_uppercase());
    match rng.below(3) {
        0 => (format!("#define {upper} {value}\n"), upper),
        1 => {
            let name = format!("k{}{}", camel(p), camel(what));
            (format!("constexpr int {name} = {value};\n"), name)
        }
        _ => (String::new(), value.to_string()),
    }
}

/// `bloom_3` → `Bloom3`.
fn camel(snake: &str) -> String {
    snake.split('_').map(|w| w[..1].to_ascii_uppercase() + &w[1..]).collect()
}

/// The flat index of this thread in the grid, in one of its common spellings.
fn global_index(rng: &mut Lcg) -> &'static str {
    rng.pick::<&str>(&[
        "blockIdx.x * blockDim.x + threadIdx.x",
        "threadIdx.x + blockIdx.x * blockDim.x",
        "blockDim.x * blockIdx.x + threadIdx.x",
    ])
}

fn simple(device: String, name: String, t: Elem, block: String, grid: String) -> Kernel {
    Kernel {
        device,
        name,
        params: format!("const {t}* in, {t}* out, int n", t = t.cuda()),
        args: "in, out, n",
        block,
        grid,
        round_trip: Some(t.cuda()),
    }
}

/// Tree reduction with sequential addressing (`s >>= 1`), one partial per block.
fn reduce_halving(rng: &mut Lcg, p: &str) -> Kernel {
    let n = block_width(rng);
    let (decl, block) = block_constant(rng, p, "block", n);
    let t = elem(rng);
    let op = Combine::pick(rng);
    let id = op.identity(t, true);
    let name = format!("{p}_reduce_{}", op.verb().to_ascii_lowercase());
    let first_add = rng.chance(50);
    // Either one element per thread, or two: the first step of the tree is
    // done while loading, which halves the blocks needed.
    let load = if first_add {
        format!(
            "unsigned i = blockIdx.x * ({block} * 2) + tid;\n    {ty} v = i < n ? in[i] : {id};\n    if (i + {block} < n)\n        v = {c};",
            ty = t.cuda(),
            c = op.apply(t, true, "v", &format!("in[i + {block}]"))
        )
    } else {
        format!("unsigned i = {};\n    {} v = i < n ? in[i] : {id};", global_index(rng), t.cuda())
    };
    let header = if rng.chance(50) { format!("for (unsigned s = {block} / 2; s > 0; s >>= 1)") } else { format!("for (int s = {}; s > 0; s /= 2)", n / 2) };
    let device = fill(
        r#"${DECL}// ${VERB} of `n` values: block b writes its partial to out[b].
__global__ void __launch_bounds__(${BLOCK}) ${K}(const ${T}* __restrict__ in, ${T}* __restrict__ out, int n)
{
    __shared__ ${T} partial[${BLOCK}];
    unsigned tid = threadIdx.x;
    ${LOAD}
    partial[tid] = v;
    __syncthreads();
    ${HEADER} {
        if (tid < s)
            partial[tid] = ${STEP};
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = partial[0];
}

"#,
        &[
            ("DECL", &decl),
            ("VERB", &op.verb()),
            ("K", &name),
            ("T", &t.cuda()),
            ("BLOCK", &block),
            ("LOAD", &load),
            ("HEADER", &header),
            ("STEP", &op.apply(t, true, "partial[tid]", "partial[tid + s]")),
        ],
    );
    let grid = if first_add { format!("DIV_UP(n, {n} * 2)") } else { format!("DIV_UP(n, {n})") };
    simple(device, name, t, n.to_string(), grid)
}

/// Tree reduction in shared memory down to 32 values, then warp shuffles:
/// the shuffles need no barrier because a warp's lanes exchange registers.
fn reduce_warp_tail(rng: &mut Lcg, p: &str) -> Kernel {
    // Not 64: its one halving step would end in a barrier that orders nothing,
    // as warp 0 then reads only the cells it wrote itself.
    let n = *rng.pick(&[128, 256, 512]);
    let t = *rng.pick(&[Elem::F32, Elem::I32, Elem::U32]);
    let name = format!("{p}_block_sum");
    let device = fill(
        r#"// Sum of `n` values, one partial per block of ${N}; the last 32 values
// of each block are summed by warp 0 with shuffles.
__global__ void __launch_bounds__(${N}) ${K}(const ${T}* in, ${T}* out, int n)
{
    __shared__ ${T} cache[${N}];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * ${N} + tid;
    cache[tid] = i < n ? in[i] : ${ZERO};
    __syncthreads();
    for (unsigned s = ${HALF}; s >= 32; s >>= 1) {
        if (tid < s)
            cache[tid] += cache[tid + s];
        __syncthreads();
    }
    if (tid < 32) {
        ${T} v = cache[tid];
        for (int offset = 16; offset > 0; offset >>= 1)
            v += __shfl_down_sync(FULL_MASK, v, offset);
        if (tid == 0)
            out[blockIdx.x] = v;
    }
}

"#,
        &[("N", &n), ("HALF", &(n / 2)), ("K", &name), ("T", &t.cuda()), ("ZERO", &t.zero(true))],
    );
    simple(device, name, t, n.to_string(), format!("DIV_UP(n, {n})"))
}

/// Tree reduction with interleaved addressing: the stride doubles, the
/// active threads spread out.
fn reduce_interleaved(rng: &mut Lcg, p: &str) -> Kernel {
    let n = block_width(rng);
    let t = elem(rng);
    let op = Combine::pick(rng);
    let name = format!("{p}_reduce_{}_interleaved", op.verb().to_ascii_lowercase());
    let active = if rng.chance(50) { "(tid & (2 * stride - 1)) == 0" } else { "tid % (2 * stride) == 0" };
    let device = fill(
        r#"__global__ void __launch_bounds__(${N}) ${K}(const ${T}* in, ${T}* out, int n)
{
    __shared__ ${T} partial[${N}];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * blockDim.x + tid;
    partial[tid] = i < n ? in[i] : ${ID};
    __syncthreads();
    for (unsigned stride = 1; stride < ${N}; stride *= 2) {
        if (${ACTIVE})
            partial[tid] = ${STEP};
        __syncthreads();
    }
    if (tid == 0)
        out[blockIdx.x] = partial[0];
}

"#,
        &[
            ("K", &name),
            ("T", &t.cuda()),
            ("N", &n),
            ("ID", &op.identity(t, true)),
            ("ACTIVE", &active),
            ("STEP", &op.apply(t, true, "partial[tid]", "partial[tid + stride]")),
        ],
    );
    simple(device, name, t, n.to_string(), format!("DIV_UP(n, {n})"))
}

/// Hillis–Steele scan of one block, double buffered.
fn scan_hillis_steele(rng: &mut Lcg, p: &str) -> Kernel {
    let n = *rng.pick(&[64, 128, 256]);
    let t = *rng.pick(&[Elem::F32, Elem::I32]);
    let name = format!("{p}_inclusive_scan");
    let device = fill(
        r#"// Inclusive scan within blocks of ${N}; block totals are scanned separately.
__global__ void __launch_bounds__(${N}) ${K}(const ${T}* in, ${T}* out, int n)
{
    __shared__ ${T} buffer[2][${N}];
    int i = blockIdx.x * ${N} + threadIdx.x;
    int src = 0;
    buffer[src][threadIdx.x] = i < n ? in[i] : ${ZERO};
    __syncthreads();
    for (int offset = 1; offset < ${N}; offset <<= 1) {
        int dst = 1 - src;
        ${T} sum = buffer[src][threadIdx.x];
        if (threadIdx.x >= offset)
            sum += buffer[src][threadIdx.x - offset];
        buffer[dst][threadIdx.x] = sum;
        __syncthreads();
        src = dst;
    }
    if (i < n)
        out[i] = buffer[src][threadIdx.x];
}

"#,
        &[("N", &n), ("K", &name), ("T", &t.cuda()), ("ZERO", &t.zero(true))],
    );
    simple(device, name, t, n.to_string(), format!("DIV_UP(n, {n})"))
}

/// Blelloch's work-efficient exclusive scan; each thread owns two cells.
/// (32 or 64 threads: lockstep reports races in larger ones that are not.)
fn scan_blelloch(rng: &mut Lcg, p: &str) -> Kernel {
    let threads = *rng.pick(&[32, 64]);
    let t = *rng.pick(&[Elem::F32, Elem::U32, Elem::I32]);
    let name = format!("{p}_exclusive_scan");
    let device = fill(
        r#"// Exclusive scan of ${CELLS}-element chunks (Blelloch): up-sweep, then down-sweep.
__global__ void __launch_bounds__(${THREADS}) ${K}(const ${T}* in, ${T}* out, int n)
{
    __shared__ ${T} tree[${CELLS}];
    int base = blockIdx.x * ${CELLS};
    int left = 2 * threadIdx.x;
    tree[left] = base + left < n ? in[base + left] : ${ZERO};
    tree[left + 1] = base + left + 1 < n ? in[base + left + 1] : ${ZERO};
    __syncthreads();
    int offset = 1;
    for (int active = ${THREADS}; active > 0; active >>= 1) {
        if (threadIdx.x < active) {
            int from = offset * (left + 1) - 1;
            int to = offset * (left + 2) - 1;
            tree[to] += tree[from];
        }
        offset *= 2;
        __syncthreads();
    }
    if (threadIdx.x == 0)
        tree[${CELLS} - 1] = ${ZERO};
    for (int active = 1; active < ${CELLS}; active *= 2) {
        offset >>= 1;
        __syncthreads();
        if (threadIdx.x < active) {
            int from = offset * (left + 1) - 1;
            int to = offset * (left + 2) - 1;
            ${T} carried = tree[from];
            tree[from] = tree[to];
            tree[to] += carried;
        }
    }
    __syncthreads();
    if (base + left < n)
        out[base + left] = tree[left];
    if (base + left + 1 < n)
        out[base + left + 1] = tree[left + 1];
}

"#,
        &[("CELLS", &(2 * threads)), ("THREADS", &threads), ("K", &name), ("T", &t.cuda()), ("ZERO", &t.zero(true))],
    );
    simple(device, name, t, threads.to_string(), format!("DIV_UP(n, {})", 2 * threads))
}

/// 1-D stencil: each block stages its span and a halo of `radius` cells on
/// both sides, then each thread applies the weights from shared memory.
fn stencil(rng: &mut Lcg, p: &str) -> Kernel {
    let n = *rng.pick(&[64, 128, 256, 512]);
    let radius = *rng.pick(&[1, 2, 3, 4, 8]);
    let (decl, block) = block_constant(rng, p, "block", n);
    let name = format!("{p}_stencil{}", 2 * radius + 1);
    let weights: Vec<String> = (0..=2 * radius).map(|_| format!("{}f", rng.decimal(0.05, 0.5))).collect();
    let (table, weight) = if rng.chance(50) {
        (format!("__constant__ float c_{p}_weights[{}] = {{ {} }};\n", 2 * radius + 1, weights.join(", ")), format!("c_{p}_weights[k + {radius}]"))
    } else {
        (String::new(), format!("(1.0f / {}.0f)", 2 * radius + 1))
    };
    // Out-of-range threads still stage cells and reach the barrier; they
    // leave only after it.
    let guard = if rng.chance(50) { "if (i >= n)\n        return;\n    ".to_string() } else { String::new() };
    let store = if guard.is_empty() { "if (i < n)\n        out[i] = acc;" } else { "out[i] = acc;" };
    let device = fill(
        r#"${DECL}${TABLE}// ${TAPS}-point stencil with clamped edges.
__global__ void __launch_bounds__(${BLOCK}) ${K}(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float window[${BLOCK} + 2 * ${R}];
    int i = blockIdx.x * ${BLOCK} + threadIdx.x;
    int last = n - 1;
    window[threadIdx.x + ${R}] = in[min(i, last)];
    if (threadIdx.x < ${R}) {
        window[threadIdx.x] = in[max(i - ${R}, 0)];
        window[threadIdx.x + ${BLOCK} + ${R}] = in[min(i + ${BLOCK}, last)];
    }
    __syncthreads();
    ${GUARD}float acc = 0.0f;
#pragma unroll
    for (int k = -${R}; k <= ${R}; ++k)
        acc += ${WEIGHT} * window[threadIdx.x + ${R} + k];
    ${STORE}
}

"#,
        &[
            ("DECL", &decl),
            ("TABLE", &table),
            ("TAPS", &(2 * radius + 1)),
            ("K", &name),
            ("BLOCK", &block),
            ("R", &radius),
            ("GUARD", &guard),
            ("WEIGHT", &weight),
            ("STORE", &store),
        ],
    );
    simple(device, name, Elem::F32, n.to_string(), format!("DIV_UP(n, {n})"))
}

/// Tiled matrix multiply: two barriers per k-tile, one before the tiles are
/// read and one before the next iteration overwrites them.
fn matmul(rng: &mut Lcg, p: &str) -> Kernel {
    let tile = *rng.pick(&[8, 16, 16, 32]);
    let (decl, tile_name) = block_constant(rng, p, "tile", tile);
    let name = format!("{p}_matmul");
    let device = fill(
        r#"${DECL}// C (m x n) = A (m x k) * B (k x n), row-major, ${TILE_VALUE}x${TILE_VALUE} tiles.
__global__ void ${K}(const float* A, const float* B, float* C, int m, int n, int k)
{
    __shared__ float As[${TILE}][${TILE}];
    __shared__ float Bs[${TILE}][${TILE}];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * ${TILE} + ty;
    int col = blockIdx.x * ${TILE} + tx;
    float acc = 0.0f;
    for (int t = 0; t < k; t += ${TILE}) {
        As[ty][tx] = (row < m && t + tx < k) ? A[row * k + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < k && col < n) ? B[(t + ty) * n + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int j = 0; j < ${TILE}; ++j)
            acc = fmaf(As[ty][j], Bs[j][tx], acc);
        __syncthreads();
    }
    if (row < m && col < n)
        C[row * n + col] = acc;
}

"#,
        &[("DECL", &decl), ("TILE_VALUE", &tile), ("K", &name), ("TILE", &tile_name)],
    );
    Kernel {
        device,
        name,
        params: "const float* A, const float* B, float* C, int m, int n, int k".into(),
        args: "A, B, C, m, n, k",
        block: format!("{tile}, {tile}"),
        grid: format!("DIV_UP(n, {tile}), DIV_UP(m, {tile})"),
        round_trip: None,
    }
}

/// Shared-memory histogram with atomics, merged into the global counts.
fn histogram(rng: &mut Lcg, p: &str) -> Kernel {
    let n = block_width(rng);
    let bins = *rng.pick(&[16, 64, 128, 256, 1024]);
    let (clear, merge) = if bins <= n {
        (
            format!("if (threadIdx.x < {bins})\n        counts[threadIdx.x] = 0;"),
            format!("if (threadIdx.x < {bins} && counts[threadIdx.x] != 0)\n        atomicAdd(&bins[threadIdx.x], counts[threadIdx.x]);"),
        )
    } else {
        (
            format!("for (int b = threadIdx.x; b < {bins}; b += blockDim.x)\n        counts[b] = 0;"),
            format!("for (int b = threadIdx.x; b < {bins}; b += blockDim.x)\n        atomicAdd(&bins[b], counts[b]);"),
        )
    };
    let name = format!("{p}_histogram{bins}");
    let device = fill(
        r#"// ${BINS}-bin histogram of bytes: block-private counts, then one atomic
// per bin and block into `bins`.
__global__ void ${K}(const unsigned char* data, unsigned int* bins, int n)
{
    __shared__ unsigned int counts[${BINS}];
    ${CLEAR}
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&counts[data[i] % ${BINS}], 1u);
    __syncthreads();
    ${MERGE}
}

"#,
        &[("BINS", &bins), ("K", &name), ("CLEAR", &clear), ("MERGE", &merge)],
    );
    Kernel {
        device,
        name,
        params: "const unsigned char* data, unsigned int* bins, int n".into(),
        args: "data, bins, n",
        block: n.to_string(),
        grid: format!("min(DIV_UP(n, {n}), {})", *rng.pick(&[120, 240, 1024])),
        round_trip: None,
    }
}

/// Bitonic sort of each block's keys with the `i ^ j` partner.
/// (At most 256 keys: lockstep reports races at 512 that are not.)
fn bitonic_sort(rng: &mut Lcg, p: &str) -> Kernel {
    let n = *rng.pick(&[64, 128, 256]);
    let t = *rng.pick(&[Elem::U32, Elem::F32]);
    let pad = if t == Elem::U32 { "0xffffffffu" } else { "3.402823466e+38f" };
    let name = format!("{p}_bitonic_sort{n}");
    let device = fill(
        r#"// Sorts each block's ${N} keys ascending; padding sorts last.
__global__ void __launch_bounds__(${N}) ${K}(const ${T}* in, ${T}* out, int n)
{
    __shared__ ${T} keys[${N}];
    unsigned tid = threadIdx.x;
    int i = blockIdx.x * ${N} + tid;
    keys[tid] = i < n ? in[i] : ${PAD};
    __syncthreads();
    for (unsigned size = 2; size <= ${N}; size <<= 1) {
        for (unsigned j = size >> 1; j > 0; j >>= 1) {
            unsigned partner = tid ^ j;
            // The lower thread of each pair compares and swaps both keys.
            if (partner > tid) {
                ${T} a = keys[tid];
                ${T} b = keys[partner];
                bool up = (tid & size) == 0;
                if ((a > b) == up) {
                    keys[tid] = b;
                    keys[partner] = a;
                }
            }
            __syncthreads();
        }
    }
    if (i < n)
        out[i] = keys[tid];
}

"#,
        &[("N", &n), ("K", &name), ("T", &t.cuda()), ("PAD", &pad)],
    );
    simple(device, name, t, n.to_string(), format!("DIV_UP(n, {n})"))
}

/// Element-wise map behind an early-return bounds guard.
fn map(rng: &mut Lcg, p: &str) -> Kernel {
    let (what, suffix, expr) = *rng.pick(&[
        ("Logistic", "sigmoid", "1.0f / (1.0f + __expf(-x))"),
        ("Softplus", "softplus", "x > 20.0f ? x : logf(1.0f + expf(x))"),
        ("Leaky ReLU", "leaky_relu", "x > 0.0f ? x : 0.01f * x"),
        ("Square", "square", "x * x"),
        ("Reciprocal square root", "rsqrt", "rsqrtf(fmaxf(x, 1e-12f))"),
    ]);
    let name = format!("{p}_{suffix}");
    let index = global_index(rng);
    let device = fill(
        r#"/// ${WHAT}, element-wise.
__global__ void ${K}(const float* in, float* out, int n)
{
    const int i = ${INDEX};
    if (i >= n)
        return;
    const float x = in[i];
    out[i] = ${EXPR};
}

"#,
        &[("WHAT", &what), ("K", &name), ("INDEX", &index), ("EXPR", &expr)],
    );
    let n = block_width(rng);
    simple(device, name, Elem::F32, n.to_string(), format!("DIV_UP(n, {n})"))
}

/// Grid-stride loops: a fixed grid covers any `n`.
fn grid_stride(rng: &mut Lcg, p: &str) -> Kernel {
    let alpha = rng.decimal(0.1, 3.0);
    let (name, params, args, body) = match rng.below(3) {
        0 => (
            format!("{p}_saxpy"),
            "float a, const float* x, float* y, int n",
            "a, x, y, n",
            "y[i] = a * x[i] + y[i];".to_string(),
        ),
        1 => (format!("{p}_scale"), "const float* x, float* y, int n", "x, y, n", format!("y[i] = {alpha}f * x[i];")),
        _ => (
            format!("{p}_fill_iota"),
            "int* y, int n",
            "y, n",
            "y[i] = i;".to_string(),
        ),
    };
    let step = *rng.pick(&["blockDim.x * gridDim.x", "gridDim.x * blockDim.x"]);
    let device = fill(
        r#"__global__ void ${K}(${PARAMS})
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += ${STEP})
        ${BODY}
}

"#,
        &[("K", &name), ("PARAMS", &params), ("STEP", &step), ("BODY", &body)],
    );
    let n = block_width(rng);
    Kernel { device, name, params: params.into(), args, block: n.to_string(), grid: format!("min(DIV_UP(n, {n}), {})", 32 * rng.below(8) + 32), round_trip: None }
}

/// Device helpers (clamp, lerp, smoothstep) and a kernel built from them.
fn math_helpers(rng: &mut Lcg, p: &str) -> Kernel {
    let lo = rng.decimal(0.0, 0.5);
    let hi = rng.decimal(1.0, 4.0);
    let name = format!("{p}_remap");
    let device = fill(
        r#"__device__ __forceinline__ float ${P}_clamp(float x, float lo, float hi)
{
    return fminf(fmaxf(x, lo), hi);
}

__device__ __forceinline__ float ${P}_lerp(float a, float b, float t)
{
    return fmaf(t, b - a, a);
}

/// Hermite smoothing between the edges, as GLSL's smoothstep.
__device__ float ${P}_smoothstep(float edge0, float edge1, float x)
{
    float t = ${P}_clamp((x - edge0) / (edge1 - edge0), 0.0f, 1.0f);
    return t * t * (3.0f - 2.0f * t);
}

__global__ void ${K}(const float* in, float* out, int n)
{
    int i = ${INDEX};
    if (i < n)
        out[i] = ${P}_lerp(-1.0f, 1.0f, ${P}_smoothstep(${LO}f, ${HI}f, in[i]));
}

"#,
        &[("P", &p), ("K", &name), ("INDEX", &global_index(rng)), ("LO", &lo), ("HI", &hi)],
    );
    let n = block_width(rng);
    simple(device, name, Elem::F32, n.to_string(), format!("DIV_UP(n, {n})"))
}

/// Warp-level reduction with shuffles: one atomic per warp.
fn warp_reduce(rng: &mut Lcg, p: &str) -> Kernel {
    let (what, t, combine, atomic) = *rng.pick(&[
        ("Sum", "float", "v += __shfl_down_sync(FULL_MASK, v, offset);", "atomicAdd"),
        ("Max", "int", "v = max(v, __shfl_down_sync(FULL_MASK, v, offset));", "atomicMax"),
        ("Count", "unsigned int", "v += __shfl_xor_sync(FULL_MASK, v, offset);", "atomicAdd"),
    ]);
    let name = format!("{p}_warp_{}", what.to_ascii_lowercase());
    let load = match what {
        "Count" => "in[i] != 0 ? 1u : 0u",
        _ => "in[i]",
    };
    let identity = match t {
        "float" => "0.0f",
        "int" => "-2147483647 - 1",
        _ => "0u",
    };
    let lane_test = *rng.pick(&["(threadIdx.x & 31) == 0", "threadIdx.x % warpSize == 0"]);
    let device = fill(
        r#"// ${WHAT} of `n` values into *result: lanes combine in registers, then
// lane 0 of each warp adds the warp's value with one atomic.
__global__ void ${K}(const ${T}* in, ${T}* result, int n)
{
    ${T} v = ${ID};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        v = ${COMBINE_LOAD};
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        ${COMBINE}
    if (${LANE0})
        ${ATOMIC}(result, v);
}

"#,
        &[
            ("WHAT", &what),
            ("K", &name),
            ("T", &t),
            ("ID", &identity),
            ("COMBINE_LOAD", &if what == "Max" { format!("max(v, {load})") } else { format!("v + {load}") }),
            ("COMBINE", &combine),
            ("LANE0", &lane_test),
            ("ATOMIC", &atomic),
        ],
    );
    let n = block_width(rng);
    Kernel {
        device,
        name,
        params: format!("const {t}* in, {t}* result, int n"),
        args: "in, result, n",
        block: n.to_string(),
        grid: format!("min(DIV_UP(n, {n}), 1024)"),
        round_trip: None,
    }
}

/// Array-of-structs copy with an update: one particle per thread.
fn particles(rng: &mut Lcg, p: &str) -> Kernel {
    let drag = rng.decimal(0.9, 1.0);
    let struct_name = format!("{}Particle", camel(p));
    let name = format!("{p}_integrate");
    let device = fill(
        r#"struct ${S} {
    float3 position;
    float3 velocity;
    float age;
    unsigned int flags;
};

static const float k${C}Drag = ${DRAG}f;

/// Advances each live particle by `dt`; reads `current`, writes `next`.
__global__ void ${K}(const ${S}* current, ${S}* next, int n, float dt, float gravity)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    ${S} p = current[i];
    p.velocity.y -= gravity * dt;
    p.velocity.x *= k${C}Drag;
    p.velocity.z *= k${C}Drag;
    p.position.x += p.velocity.x * dt;
    p.position.y += p.velocity.y * dt;
    p.position.z += p.velocity.z * dt;
    p.age += dt;
    next[i] = p;
}

"#,
        &[("S", &struct_name), ("C", &camel(p)), ("DRAG", &drag), ("K", &name)],
    );
    let n = block_width(rng);
    Kernel {
        device,
        name,
        params: format!("const {struct_name}* current, {struct_name}* next, int n, float dt, float gravity"),
        args: "current, next, n, dt, gravity",
        block: n.to_string(),
        grid: format!("DIV_UP(n, {n})"),
        round_trip: None,
    }
}
