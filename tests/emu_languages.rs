//! Each front end's kernels run on the emulator through the one IR: a
//! reduction per language with its exact result. (Kept outside the emulator
//! crate: a new language changes no emulator code, tests included.)

use lockstep_emu::{run, Launch, RunConfig, RunOutcome, Scheduler};
use lockstep_lower::{compile, Lang, Options};
use lockstep_source::SourceDb;

fn compile_and_run(name: &str, lang: Lang, text: &str, entry: &str, launch: &str, config: RunConfig) -> (SourceDb, RunOutcome) {
    let mut db = SourceDb::new();
    let file = db.add(name, text);
    let c = compile(&mut db, file, lang, &Options::default());
    assert!(!c.has_errors, "{:?}", c.diagnostics);
    let f = c.module.find_function(entry).expect("entry exists");
    let l = Launch::parse(launch, std::path::Path::new(".")).unwrap();
    let outcome = run(&db, &c.module, f, &l, &config).unwrap();
    (db, outcome)
}

/// Compiling `text` notes nothing: every construct in it is modelled.
fn assert_fully_modelled(name: &str, lang: Lang, text: &str) {
    let mut db = SourceDb::new();
    let file = db.add(name, text);
    let c = compile(&mut db, file, lang, &Options::default());
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
}

/// The findings as `rule:line`.
fn findings(db: &SourceDb, o: &RunOutcome) -> Vec<String> {
    o.findings.iter().map(|d| format!("{}:{}", d.rule, db.location(d.span).0.line)).collect()
}

const REDUCE_OPENCL: &str = r#"__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void reduce(__global const uint* data, __global uint* sums, __global uint* total)
{
    __local uint tile[64];
    uint lid = get_local_id(0);
    tile[lid] = data[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s)
            tile[lid] += tile[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        sums[get_group_id(0)] = tile[0];
        atomic_add(total, tile[0]);
    }
}
"#;

const REDUCE_LAUNCH: &str = "[buffers.data]\nfill = { start = 1, step = 1 }\nlen = 256\n[buffers.sums]\nlen = 4\n[buffers.total]\nlen = 1\n";

#[test]
fn opencl_reduction_sums_each_group() {
    for scheduler in [Scheduler::RoundRobin, Scheduler::Reverse, Scheduler::Random] {
        let config = RunConfig { groups: [4, 1, 1], scheduler, seed: 7, ..RunConfig::default() };
        let (db, o) = compile_and_run("reduce.cl", Lang::OpenCl, REDUCE_OPENCL, "reduce", REDUCE_LAUNCH, config);
        assert_eq!(findings(&db, &o), Vec::<String>::new());
        let want: Vec<u32> = (0..4u32).map(|g| (g * 64 + 1..=g * 64 + 64).sum()).collect();
        assert_eq!(o.buffer("sums").unwrap().u32s(), want);
        assert_eq!(o.buffer("total").unwrap().u32s(), vec![(1..=256u32).sum::<u32>()]);
    }
}

#[test]
fn opencl_fence_in_place_of_the_first_barrier_races_at_run_time() {
    let src = REDUCE_OPENCL.replacen("barrier(CLK_LOCAL_MEM_FENCE);", "mem_fence(CLK_LOCAL_MEM_FENCE);", 1);
    let config = RunConfig { groups: [1, 1, 1], ..RunConfig::default() };
    let (db, o) = compile_and_run("reduce.cl", Lang::OpenCl, &src, "reduce", REDUCE_LAUNCH, config);
    let found = findings(&db, &o);
    assert!(found.iter().any(|f| f.starts_with("groupshared-") && f.ends_with(":10")), "{found:?}");
}

const REDUCE_GLSL: &str = r#"#version 450
layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer Data { uint data[]; };
layout(std430, binding = 1) buffer Sums { uint sums[]; };
layout(std430, binding = 2) buffer Total { uint total; } result;
shared uint tile[64];

void main()
{
    uint lid = gl_LocalInvocationID.x;
    tile[lid] = data[gl_GlobalInvocationID.x];
    barrier();
    for (uint s = gl_WorkGroupSize.x / 2u; s > 0u; s >>= 1u) {
        if (lid < s)
            tile[lid] += tile[lid + s];
        barrier();
    }
    if (subgroupElect() && lid == 0u) {
        sums[gl_WorkGroupID.x] = tile[0];
        atomicAdd(result.total, tile[0]);
    }
}
"#;

const REDUCE_GLSL_LAUNCH: &str = "[buffers.data]\nfill = { start = 1, step = 1 }\nlen = 256\n[buffers.sums]\nlen = 4\n[buffers.\"result.total\"]\nlen = 1\n";

#[test]
fn glsl_reduction_sums_each_group() {
    for scheduler in [Scheduler::RoundRobin, Scheduler::Reverse, Scheduler::Random] {
        let config = RunConfig { groups: [4, 1, 1], scheduler, seed: 7, ..RunConfig::default() };
        let (db, o) = compile_and_run("reduce.comp", Lang::Glsl, REDUCE_GLSL, "main", REDUCE_GLSL_LAUNCH, config);
        assert_eq!(findings(&db, &o), Vec::<String>::new());
        let want: Vec<u32> = (0..4u32).map(|g| (g * 64 + 1..=g * 64 + 64).sum()).collect();
        assert_eq!(o.buffer("sums").unwrap().u32s(), want);
        assert_eq!(o.buffer("result.total").unwrap().u32s(), vec![(1..=256u32).sum::<u32>()]);
    }
}

#[test]
fn glsl_shared_fence_in_place_of_the_first_barrier_races_at_run_time() {
    let src = REDUCE_GLSL.replacen("barrier();", "memoryBarrierShared();", 1);
    let config = RunConfig { groups: [1, 1, 1], ..RunConfig::default() };
    let (db, o) = compile_and_run("reduce.comp", Lang::Glsl, &src, "main", REDUCE_GLSL_LAUNCH, config);
    let found = findings(&db, &o);
    assert!(found.iter().any(|f| f.starts_with("groupshared-") && f.ends_with(":15")), "{found:?}");
}

const REDUCE_WGSL: &str = r#"var<workgroup> tile: array<u32, 64>;
@group(0) @binding(0) var<storage, read> data: array<u32>;
@group(0) @binding(1) var<storage, read_write> sums: array<u32>;
@group(0) @binding(2) var<storage, read_write> total: atomic<u32>;

fn halve(s: u32) -> u32 {
    return s >> 1u;
}

@compute @workgroup_size(64)
fn reduce(@builtin(local_invocation_index) lid: u32, @builtin(global_invocation_id) gid: vec3<u32>,
          @builtin(workgroup_id) wg: vec3<u32>) {
    tile[lid] = data[gid.x];
    workgroupBarrier();
    for (var s = 32u; s > 0u; s = halve(s)) {
        if (lid < s) {
            tile[lid] += tile[lid + s];
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        sums[wg.x] = tile[0];
        atomicAdd(&total, tile[0]);
    }
}
"#;

#[test]
fn wgsl_reduction_sums_each_group() {
    for scheduler in [Scheduler::RoundRobin, Scheduler::Reverse, Scheduler::Random] {
        let config = RunConfig { groups: [4, 1, 1], scheduler, seed: 7, ..RunConfig::default() };
        let (db, o) = compile_and_run("reduce.wgsl", Lang::Wgsl, REDUCE_WGSL, "reduce", REDUCE_LAUNCH, config);
        assert_eq!(findings(&db, &o), Vec::<String>::new());
        let want: Vec<u32> = (0..4u32).map(|g| (g * 64 + 1..=g * 64 + 64).sum()).collect();
        assert_eq!(o.buffer("sums").unwrap().u32s(), want);
        assert_eq!(o.buffer("total").unwrap().u32s(), vec![(1..=256u32).sum::<u32>()]);
    }
}

#[test]
fn wgsl_storage_barrier_in_place_of_the_first_barrier_races_at_run_time() {
    let src = REDUCE_WGSL.replacen("workgroupBarrier();", "storageBarrier();", 1);
    let config = RunConfig { groups: [1, 1, 1], ..RunConfig::default() };
    let (db, o) = compile_and_run("reduce.wgsl", Lang::Wgsl, &src, "reduce", REDUCE_LAUNCH, config);
    let found = findings(&db, &o);
    assert!(found.iter().any(|f| f.starts_with("groupshared-") && f.ends_with(":17")), "{found:?}");
}

/// A workgroup counter reset by one invocation and counted up by all; the
/// barrier between the reset and the counting is what `BARRIER` stands for.
/// Workgroup memory starts zeroed in WGSL: counting first reads no garbage.
const COUNTER_WGSL: &str = r#"@group(0) @binding(0) var<storage, read> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> counts: array<u32>;
var<workgroup> count: atomic<u32>;
var<workgroup> lock: atomic<u32>;

@compute @workgroup_size(64)
fn count_keys(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) li: u32, @builtin(workgroup_id) wg: vec3<u32>) {
    if li == 0u {
        atomicStore(&count, 0u);
        atomicStore(&lock, 0u);
    }
    BARRIER
    if keys[gid.x] != 0u {
        atomicAdd(&count, 1u);
    }
    let won = atomicCompareExchangeWeak(&lock, 0u, 1u).exchanged;
    if won {
        atomicStore(&lock, 0u);
    }
    workgroupBarrier();
    if li == 0u {
        counts[wg.x] = atomicLoad(&count);
    }
}
"#;

#[test]
fn an_atomic_reset_unordered_with_atomic_updates_races_at_run_time() {
    let launch = "[buffers.keys]\nfill = { start = 0, step = 1 }\nlen = 128\n[buffers.counts]\nlen = 2\n";
    for scheduler in [Scheduler::RoundRobin, Scheduler::Reverse] {
        let config = RunConfig { groups: [2, 1, 1], scheduler, ..RunConfig::default() };
        let fixed = COUNTER_WGSL.replace("BARRIER", "workgroupBarrier();");
        let (db, o) = compile_and_run("count.wgsl", Lang::Wgsl, &fixed, "count_keys", launch, config.clone());
        // The lock's release meets other invocations' compare-exchanges: a protocol, not a race.
        assert_eq!(findings(&db, &o), Vec::<String>::new());
        assert_eq!(o.buffer("counts").unwrap().u32s(), vec![63, 64]);
        let (db, o) = compile_and_run("count.wgsl", Lang::Wgsl, &COUNTER_WGSL.replace("BARRIER", ""), "count_keys", launch, config);
        // The later of the two in the schedule is the one reported: the count or the reset.
        let found = findings(&db, &o);
        assert!(found == ["groupshared-write-write-race:14"] || found == ["groupshared-write-write-race:9"], "{scheduler:?}: {found:?}");
    }
}

/// A template (`#define`), `enable subgroups;`, and each invocation's
/// subgroup id, count and lane; 48 invocations in subgroups of 16.
const SUBGROUP_IDS_WGSL: &str = r#"enable subgroups;
#define THREADS 48
@group(0) @binding(0) var<storage, read_write> ids: array<u32>;

@compute @workgroup_size(THREADS)
fn ids_of(@builtin(local_invocation_index) i: u32, @builtin(subgroup_id) sg: u32,
          @builtin(num_subgroups) n: u32, @builtin(subgroup_invocation_id) lane: u32) {
    let both = sg < 2u && lane != 3u;
    ids[i] = select(0u, 10000u, both) + sg * 1000u + n * 100u + lane;
}
"#;

#[test]
fn wgsl_templates_and_subgroup_ids_compute_exactly() {
    let config = RunConfig { groups: [1, 1, 1], wave_size: Some(16), ..RunConfig::default() };
    let (db, o) = compile_and_run("ids.wgsl", Lang::Wgsl, SUBGROUP_IDS_WGSL, "ids_of", "[buffers.ids]\nlen = 48\n", config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let want: Vec<u32> = (0..48u32).map(|i| if i / 16 < 2 && i % 16 != 3 { 10000 } else { 0 } + (i / 16) * 1000 + 300 + i % 16).collect();
    assert_eq!(o.buffer("ids").unwrap().u32s(), want);
}

const REDUCE_METAL: &str = r#"#include <metal_stdlib>
using namespace metal;

kernel void reduce(device const uint* data [[buffer(0)]],
                   device uint* sums [[buffer(1)]],
                   device atomic_uint* total [[buffer(2)]],
                   threadgroup uint* tile [[threadgroup(0)]],
                   uint lid [[thread_position_in_threadgroup]],
                   uint size [[threads_per_threadgroup]],
                   uint group [[threadgroup_position_in_grid]],
                   uint gid [[thread_position_in_grid]])
{
    tile[lid] = data[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = size / 2; s > 0; s >>= 1) {
        if (lid < s)
            tile[lid] += tile[lid + s];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    uint lane_sum = simd_sum(lid < 1 ? tile[0] : 0u);
    if (lid == 0) {
        sums[group] = lane_sum;
        atomic_fetch_add_explicit(total, tile[0], memory_order_relaxed);
    }
}
"#;

/// Metal binds each `[[buffer(n)]]` and `[[threadgroup(n)]]` parameter by its name.
const REDUCE_METAL_LAUNCH: &str = "[buffers.data]\nfill = { start = 1, step = 1 }\nlen = 256\n[buffers.sums]\nlen = 4\n[buffers.total]\nlen = 1\n[buffers.tile]\nlen = 64\n";

#[test]
fn metal_reduction_sums_each_group() {
    for scheduler in [Scheduler::RoundRobin, Scheduler::Reverse, Scheduler::Random] {
        let config = RunConfig { groups: [4, 1, 1], group_size: Some([64, 1, 1]), scheduler, seed: 7, ..RunConfig::default() };
        let (db, o) = compile_and_run("reduce.metal", Lang::Metal, REDUCE_METAL, "reduce", REDUCE_METAL_LAUNCH, config);
        assert_eq!(findings(&db, &o), Vec::<String>::new());
        let want: Vec<u32> = (0..4u32).map(|g| (g * 64 + 1..=g * 64 + 64).sum()).collect();
        assert_eq!(o.buffer("sums").unwrap().u32s(), want);
        assert_eq!(o.buffer("total").unwrap().u32s(), vec![(1..=256u32).sum::<u32>()]);
    }
}

#[test]
fn metal_device_flag_in_place_of_the_first_barrier_races_at_run_time() {
    let src = REDUCE_METAL.replacen("threadgroup_barrier(mem_flags::mem_threadgroup);", "threadgroup_barrier(mem_flags::mem_device);", 1);
    let config = RunConfig { groups: [1, 1, 1], group_size: Some([64, 1, 1]), ..RunConfig::default() };
    let (db, o) = compile_and_run("reduce.metal", Lang::Metal, &src, "reduce", REDUCE_METAL_LAUNCH, config);
    let found = findings(&db, &o);
    assert!(found.iter().any(|f| f.starts_with("groupshared-") && f.ends_with(":17")), "{found:?}");
}

/// A tiled C++ AMP matrix multiply: the lambda is the kernel, the views it
/// captures are its buffers and `n` its argument.
const MATMUL_AMP: &str = r#"#include <amp.h>
#include <vector>
using namespace concurrency;

static const int TS = 4;

void multiply(const std::vector<float>& va, const std::vector<float>& vb, std::vector<float>& vc, int n)
{
    array_view<const float, 2> a(n, n, va);
    array_view<const float, 2> b(n, n, vb);
    array_view<float, 2> c(n, n, vc);
    c.discard_data();
    parallel_for_each(c.extent.tile<TS, TS>(), [=](tiled_index<TS, TS> t) restrict(amp) {
        int row = t.local[0];
        int col = t.local[1];
        float sum = 0.0f;
        for (int k0 = 0; k0 < n; k0 += TS) {
            tile_static float ta[TS][TS];
            tile_static float tb[TS][TS];
            ta[row][col] = a(t.global[0], k0 + col);
            tb[row][col] = b[index<2>(k0 + row, t.global[1])];
            t.barrier.wait();
            for (int k = 0; k < TS; k++)
                sum += ta[row][k] * tb[k][col];
            t.barrier.wait();
        }
        c[t.global] = sum;
    });
    c.synchronize();
}
"#;

const MATMUL_AMP_LAUNCH: &str = "[constants]\nn = 8\n[buffers.a]\nfill = { start = 1, step = 1 }\nlen = 64\n[buffers.b]\nfill = { start = 0, step = 1 }\nlen = 64\n[buffers.c]\nlen = 64\n";

#[test]
fn cpp_amp_tiled_matmul_multiplies() {
    let a: Vec<f32> = (1..=64).map(|v| v as f32).collect();
    let b: Vec<f32> = (0..64).map(|v| v as f32).collect();
    let want: Vec<f32> = (0..64).map(|cell| (0..8).map(|k| a[cell / 8 * 8 + k] * b[k * 8 + cell % 8]).sum()).collect();
    for scheduler in [Scheduler::RoundRobin, Scheduler::Reverse, Scheduler::Random] {
        let config = RunConfig { groups: [2, 2, 1], scheduler, seed: 7, ..RunConfig::default() };
        let (db, o) = compile_and_run("matmul.cpp", Lang::CppAmp, MATMUL_AMP, "multiply", MATMUL_AMP_LAUNCH, config);
        assert_eq!(findings(&db, &o), Vec::<String>::new());
        assert_eq!(o.buffer("c").unwrap().f32s(), want);
    }
}

/// Seed 003's scenario: without the second wait, a thread overwrites the
/// tiles of the next iteration while another thread of its tile still reads
/// the previous ones.
#[test]
fn cpp_amp_matmul_without_the_second_wait_reports_the_loop_carried_war_at_run_time() {
    let at = MATMUL_AMP.rfind("t.barrier.wait();").unwrap();
    let src = format!("{}// no wait here{}", &MATMUL_AMP[..at], &MATMUL_AMP[at + "t.barrier.wait();".len()..]);
    let config = RunConfig { groups: [2, 2, 1], ..RunConfig::default() };
    let (db, o) = compile_and_run("matmul.cpp", Lang::CppAmp, &src, "multiply", MATMUL_AMP_LAUNCH, config);
    let war = o.findings.iter().find(|d| d.rule == "groupshared-read-then-no-barrier-write").expect("a write-after-read hazard");
    assert_eq!(db.location(war.span).0.line, 20, "the write of the next iteration: {}", war.message);
    let label_lines: Vec<u32> = war.labels.iter().map(|l| db.location(l.span).0.line).collect();
    assert!(label_lines.contains(&24), "the read of the previous iteration: {label_lines:?}");
    assert!(war.message.contains("[0,0,0][0,0,0]"), "{}", war.message);
    assert!(war.message.contains("iteration"), "{}", war.message);
}

/// A Metal scan across SIMD-groups: `constant` tables and helpers, `metal::`
/// names, SIMD-group prefix sums; the result does not depend on the SIMD-group width.
const SCAN_METAL: &str = r#"#include <metal_stdlib>
using namespace metal;

constant uint kScale[2] = {1u, 2u};
constant uint kMaxSimdgroups = 8;

static inline uint load_or_zero(device const uint* p, uint i, uint n) { return i < n ? p[i] : 0u; }

kernel void scan(device const uint* in [[buffer(0)]],
                 device uint* out [[buffer(1)]],
                 constant uint& n [[buffer(2)]],
                 uint gid [[thread_position_in_grid]],
                 uint lane [[thread_index_in_simdgroup]],
                 uint simd [[simdgroup_index_in_threadgroup]])
{
    threadgroup uint partial[kMaxSimdgroups];
    uint v = load_or_zero(in, gid, n) * kScale[1];
    uint prefix = metal::simd_prefix_exclusive_sum(v);
    uint total = simd_sum(v);
    if (lane == 0)
        partial[simd] = total;
    metal::threadgroup_barrier(metal::mem_flags::mem_threadgroup);
    uint base = 0;
    for (uint s = 0; s < simd; ++s)
        base += partial[s];
    if (gid < n)
        out[gid] = base + prefix;
}
"#;

#[test]
fn metal_simd_scan_is_exact_for_any_simdgroup_width() {
    let launch = "[constants]\nn = 128\n[buffers.in]\nfill = 1\nlen = 128\n[buffers.out]\nlen = 128\n";
    for wave_size in [16, 32] {
        let config = RunConfig { group_size: Some([128, 1, 1]), wave_size: Some(wave_size), ..RunConfig::default() };
        let (db, o) = compile_and_run("scan.metal", Lang::Metal, SCAN_METAL, "scan", launch, config);
        assert_eq!(findings(&db, &o), Vec::<String>::new());
        assert_eq!(o.buffer("out").unwrap().u32s(), (0..128u32).map(|i| 2 * i).collect::<Vec<_>>(), "SIMD-groups of {wave_size}");
    }
}

/// OpenCL's wide vectors (`float16`, `float8`, a vendor's `float32`),
/// numbered swizzles written and read (`.sf`, `.s0123`, `.hi`, `.lo`, and
/// halves of halves) and vector literals `(float4)(…)`.
const WIDE_VECTORS_OPENCL: &str = r#"
__kernel void wide(__global const float* x, __global float* out)
{
    float16 yl;
    yl.s0 = x[get_global_id(0)];
    yl.s1 = 2.0f;
    yl.sf = yl.s0 + yl.s1;
    float8 r;
    r.s0123 = (float4)(1.0f, 2.0f, 3.0f, 4.0f);
    r.hi = r.lo;
    float32 acc = (float32)(0.5f);
    acc.lo.hi += r;
    acc.hi.hi = acc.lo.hi;
    out[get_global_id(0)] = yl.sf * 10.0f + r.s7 + acc.hi.hi.s7 + acc.hi.lo.s7;
}
"#;

#[test]
fn opencl_wide_vectors_and_vector_literals_compute_exactly() {
    let config = RunConfig { groups: [1, 1, 1], group_size: Some([4, 1, 1]), ..RunConfig::default() };
    let launch = "[buffers.x]\ndata = [1.0, 2.0, 3.0, 4.0]\n[buffers.out]\nlen = 4\n";
    let (db, o) = compile_and_run("wide.cl", Lang::OpenCl, WIDE_VECTORS_OPENCL, "wide", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let want: Vec<u32> = [39.0f32, 49.0, 59.0, 69.0].iter().map(|v| v.to_bits()).collect();
    assert_eq!(o.buffer("out").unwrap().u32s(), want);
}

const SCALED_WGSL: &str = r#"override factor: u32 = 3u;
override shift: u32 = 0u;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;

@compute @workgroup_size(8)
fn scale(@builtin(local_invocation_index) lid: u32) {
    out[lid + shift] = lid * factor;
}
"#;

const SCALED_GLSL: &str = r#"#version 450
layout(constant_id = 0) const uint FACTOR = 3;
layout(constant_id = 1) const uint SHIFT = 0;
layout(local_size_x = 8) in;
layout(std430, binding = 0) buffer Out { uint values[]; };

void main()
{
    uint lid = gl_LocalInvocationID.x;
    values[lid + SHIFT] = lid * FACTOR;
}
"#;

#[test]
fn pipeline_constants_take_their_defaults_or_the_launch_files_values() {
    for (name, lang, text, entry, buffer, factor, shift) in [
        ("scale.wgsl", Lang::Wgsl, SCALED_WGSL, "scale", "out", "factor", "shift"),
        ("scale.comp", Lang::Glsl, SCALED_GLSL, "main", "values", "FACTOR", "SHIFT"),
    ] {
        let defaults = format!("[buffers.{buffer}]\nlen = 16\n");
        let (db, o) = compile_and_run(name, lang, text, entry, &defaults, RunConfig::default());
        assert_eq!(findings(&db, &o), Vec::<String>::new());
        assert_eq!(o.buffer(buffer).unwrap().u32s()[..8], (0..8u32).map(|i| 3 * i).collect::<Vec<_>>()[..], "{name}");
        let chosen = format!("[constants]\n{factor} = 5\n{shift} = 4\n{defaults}");
        let (db, o) = compile_and_run(name, lang, text, entry, &chosen, RunConfig::default());
        assert_eq!(findings(&db, &o), Vec::<String>::new());
        assert_eq!(o.buffer(buffer).unwrap().u32s()[4..12], (0..8u32).map(|i| 5 * i).collect::<Vec<_>>()[..], "{name}");
    }
}

const LAMBDAS_CUDA: &str = r#"__global__ void scaled(const float* in, float* out, float s)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    auto twice = [](float x) -> float { return 2.0f * x; };
    auto shifted = [&](float x) { return x + s; };
    out[i] = shifted(twice(in[i]));
}
"#;

#[test]
fn cuda_local_lambdas_run_inlined() {
    let launch = "[constants]\ns = 1.0\n[buffers.in]\nfill = { start = 0, step = 1 }\nlen = 8\n[buffers.out]\nlen = 8\n";
    let config = RunConfig { group_size: Some([8, 1, 1]), ..RunConfig::default() };
    let (db, o) = compile_and_run("scaled.cu", Lang::Cuda, LAMBDAS_CUDA, "scaled", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    assert_eq!(o.buffer("out").unwrap().f32s(), (0..8).map(|i| 2.0 * i as f32 + 1.0).collect::<Vec<f32>>());
}

const PER_INVOCATION_GLSL: &str = r#"#version 450
layout(local_size_x = 8) in;
layout(std430, binding = 0) buffer Out { uint values[]; };
uint tid = gl_LocalInvocationID.x;
uint twice() { return 2u * tid; }
void main()
{
    tid += gl_WorkGroupID.x * 8u;
    values[tid] = twice();
}
"#;

#[test]
fn glsl_globals_are_each_invocations_own() {
    let config = RunConfig { groups: [2, 1, 1], ..RunConfig::default() };
    let (db, o) = compile_and_run("per.comp", Lang::Glsl, PER_INVOCATION_GLSL, "main", "[buffers.values]\nlen = 16\n", config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    assert_eq!(o.buffer("values").unwrap().u32s(), (0..16u32).map(|i| 2 * i).collect::<Vec<_>>());
}

const LIMITS_CUDA: &str = r#"enum pool_op { POOL_MAX, POOL_AVG };
__global__ void pool(const float* in, float* out, enum pool_op op)
{
    float m = op == POOL_MAX ? -FLT_MAX : 0.0f;
    for (int i = 0; i < 4; i++) {
        m = op == POOL_MAX ? fmaxf(m, in[threadIdx.x * 4 + i]) : m + in[threadIdx.x * 4 + i] / 4.0f;
    }
    out[threadIdx.x] = m < INFINITY ? m : 0.0f;
}
"#;

#[test]
fn cuda_float_limits_and_enum_arguments_compute() {
    for (op, want) in [(0, [3.0f32, 7.0]), (1, [1.5, 5.5])] {
        let launch = format!("[constants]\nop = {op}\n[buffers.in]\nfill = {{ start = 0, step = 1 }}\nlen = 8\n[buffers.out]\nlen = 2\n");
        let config = RunConfig { group_size: Some([2, 1, 1]), ..RunConfig::default() };
        let (db, o) = compile_and_run("pool.cu", Lang::Cuda, LIMITS_CUDA, "pool", &launch, config);
        assert_eq!(findings(&db, &o), Vec::<String>::new());
        assert_eq!(o.buffer("out").unwrap().f32s(), want.to_vec());
    }
}

#[test]
fn cuda_integer_limits_compute() {
    let kernel = "__global__ void clamp_up(int* o) { o[threadIdx.x] = min(o[threadIdx.x], INT_MAX - 1) + (UINT_MAX > 0u ? 1 : 0) + (INT_MIN < 0 ? 0 : 7); }\n";
    let config = RunConfig { group_size: Some([2, 1, 1]), ..RunConfig::default() };
    let (db, o) = compile_and_run("clamp.cu", Lang::Cuda, kernel, "clamp_up", "[buffers.o]\ndata = [5, 2147483647]\n", config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    assert_eq!(o.buffer("o").unwrap().i32s(), vec![6, i32::MAX]);
}

/// A typedef names its type even when the name reads as a vector width.
#[test]
fn a_typedef_named_like_a_vector_is_its_scalar() {
    let kernel = "typedef float float32;\n__global__ void scale(float32* o) { float32 k = 2.0f; o[threadIdx.x] = o[threadIdx.x] * k; }\n";
    let config = RunConfig { group_size: Some([2, 1, 1]), ..RunConfig::default() };
    let (db, o) = compile_and_run("typedef.cu", Lang::Cuda, kernel, "scale", "[buffers.o]\ndata = [1.5, 3.0]\n", config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    assert_eq!(o.buffer("o").unwrap().f32s(), vec![3.0, 6.0]);
}

const IMAGE_REVERSE_OPENCL: &str = r#"void put(__write_only image1d_buffer_t out, int i, float4 v)
{
    write_imagef(out, i, v);
}

__kernel void reverse(__read_only image1d_buffer_t src, __write_only image1d_buffer_t dst)
{
    int i = get_global_id(0);
    put(dst, (int)get_global_size(0) - 1 - i, read_imagef(src, i));
}
"#;

#[test]
fn opencl_images_are_read_and_written_by_texel() {
    let config = RunConfig { groups: [2, 1, 1], group_size: Some([4, 1, 1]), ..RunConfig::default() };
    let launch = "[buffers.src]\ndata = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]\n[buffers.dst]\nlen = 8\n";
    let (db, o) = compile_and_run("reverse.cl", Lang::OpenCl, IMAGE_REVERSE_OPENCL, "reverse", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    assert_eq!(o.buffer("dst").unwrap().f32s(), vec![8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]);
}

/// `read_imageui`/`read_imageh` give the texel in four channels of their
/// types, so that a reinterpretation of one channel has the right size.
const IMAGE_CHANNELS_OPENCL: &str = r#"__kernel void channels(__read_only image1d_buffer_t src, __global uint* out)
{
    int i = get_global_id(0);
    uint4 u = read_imageui(src, i);
    half4 h = read_imageh(src, i);
    out[i] = u.y + as_ushort(h.x);
}
"#;

#[test]
fn opencl_image_reads_have_their_functions_channel_types() {
    let config = RunConfig { groups: [1, 1, 1], group_size: Some([2, 1, 1]), ..RunConfig::default() };
    let launch = "[buffers.src]\ndata = [1.0, 2.0]\n[buffers.out]\nlen = 2\n";
    let (db, o) = compile_and_run("channels.cl", Lang::OpenCl, IMAGE_CHANNELS_OPENCL, "channels", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    // 1.0 and 2.0 as halves are 0x3C00 and 0x4000.
    assert_eq!(o.buffer("out").unwrap().u32s(), vec![1 + 0x3C00, 2 + 0x4000]);
}

const OUT_PARAMETERS_OPENCL: &str = r#"void split(uint v, uint* hi, uint* lo, uint2* both)
{
    *hi = v >> 4;
    lo[0] = v & 15;
    both->x = *hi;
    both->y = lo[0];
}

__kernel void nibbles(__global const uint* in, __global uint* out)
{
    uint h, l;
    uint2 b;
    split(in[get_global_id(0)], &h, &l, &b);
    out[get_global_id(0)] = h * 100 + l + 10000 * (b.x * 16 + b.y);
}
"#;

#[test]
fn opencl_helpers_write_through_pointers_to_locals() {
    let config = RunConfig { groups: [1, 1, 1], group_size: Some([4, 1, 1]), ..RunConfig::default() };
    let launch = "[buffers.in]\ndata = [18, 52, 171, 255]\n[buffers.out]\nlen = 4\n";
    let (db, o) = compile_and_run("nibbles.cl", Lang::OpenCl, OUT_PARAMETERS_OPENCL, "nibbles", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let want: Vec<u32> = [18u32, 52, 171, 255].iter().map(|&v| (v >> 4) * 100 + (v & 15) + 10000 * v).collect();
    assert_eq!(o.buffer("out").unwrap().u32s(), want);
}

/// Narrow integers wrap at their width, and a `half` view reached through a
/// byte offset (ggml's way of addressing tensors) reads the value the bytes
/// start at.
#[test]
fn opencl_bytes_wrap_and_byte_offsets_reach_their_value() {
    let src = r#"__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void bytes(__global const uchar* small, __global const half* vals, ulong offset, __global uint* out)
{
    uint i = get_global_id(0);
    uchar x = small[i];
    x += 200;
    __global const half* v = (__global const half*)((__global const char*)vals + offset);
    out[i] = x + (uint)v[i];
}
"#;
    let launch = "[constants]\noffset = 8\n[buffers.small]\nfill = { start = 0, step = 1 }\nlen = 64\n[buffers.vals]\nfill = { start = 0, step = 1 }\nlen = 128\n[buffers.out]\nlen = 64\n";
    let config = RunConfig { groups: [1, 1, 1], ..RunConfig::default() };
    let (db, o) = compile_and_run("bytes.cl", Lang::OpenCl, src, "bytes", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let want: Vec<u32> = (0..64u32).map(|i| (i + 200) % 256 + i + 4).collect();
    assert_eq!(o.buffer("out").unwrap().u32s(), want);
}

/// GLSL's array types and constructors, `const in` parameters, and vector
/// components chosen at run time, read and written, in registers and in a
/// buffer.
const GLSL_ARRAYS_AND_COMPONENTS: &str = r#"#version 450
layout(local_size_x = 16) in;
layout(std430, binding = 0) buffer Vecs { uvec4 vecs[]; };
layout(std430, binding = 1) buffer Out { uint values[]; };

uint pick(const in uvec4 v, in const uint k) { return v[k]; }

void main()
{
    uint t = gl_LocalInvocationID.x;
    const uint[4] weights = uint[4](1u, 10u, 100u, 1000u);
    uvec2[2] pairs = uvec2[2](uvec2(t, 2u * t), uvec2(3u * t, 4u * t));
    uvec4 v = uvec4(weights[0], weights[1], weights[2], weights[3]);
    v[t % 4u] = t;
    uint sum = 0u;
    for (uint c = 0u; c < 4u; c++) {
        sum += v[c];
    }
    vecs[t][(t + 1u) % 4u] = sum;
    values[t] = pick(vecs[t], (t + 1u) % 4u) + pairs[t % 2u][1] + vecs[t][t % 4u];
}
"#;

#[test]
fn glsl_array_types_and_run_time_components_compute_exactly() {
    let config = RunConfig { groups: [1, 1, 1], ..RunConfig::default() };
    let launch = "[buffers.vecs]\nlen = 64\nfill = { start = 5, step = 0 }\n[buffers.values]\nlen = 16\n";
    let (db, o) = compile_and_run("arrays.comp", Lang::Glsl, GLSL_ARRAYS_AND_COMPONENTS, "main", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let want: Vec<u32> = (0..16u32)
        .map(|t| {
            let mut v = [1u32, 10, 100, 1000];
            v[(t % 4) as usize] = t;
            let sum: u32 = v.iter().sum();
            let pair = if t % 2 == 0 { 2 * t } else { 4 * t };
            sum + pair + 5
        })
        .collect();
    assert_eq!(o.buffer("values").unwrap().u32s(), want);
}

/// `m[i]` is the i-th run of a matrix's constructor arguments in every
/// dialect (a GLSL column, an HLSL row), read and written with `i` a
/// constant or a value of the thread.
const MATRIX_GLSL: &str = r#"#version 450
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer Out { float values[]; };
void main()
{
    uint t = gl_LocalInvocationID.x;
    mat2x3 m = mat2x3(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
    vec3 second = m[1];
    m[t % 2u][2] = 10.0 * float(t);
    m[1 - t % 2u].yx = vec2(7.0, 8.0);
    values[t] = second.z * 1000.0 + m[t % 2u][2] * 100.0 + m[1u - t % 2u].x * 10.0 + m[0][1];
}
"#;

const MATRIX_HLSL: &str = r#"RWStructuredBuffer<float> values : register(u0);
[numthreads(4, 1, 1)]
void main(uint t : SV_GroupIndex)
{
    float2x3 m = float2x3(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
    float3 second = m[1];
    m[t % 2u][2] = 10.0 * float(t);
    m[1 - t % 2u].yx = float2(7.0, 8.0);
    values[t] = second.z * 1000.0 + m[t % 2u][2] * 100.0 + m[1u - t % 2u].x * 10.0 + m[0][1];
}
"#;

#[test]
fn matrix_subscripts_pick_a_run_of_cells_in_every_dialect() {
    let want: Vec<f32> = (0..4u32)
        .map(|t| {
            let mut m = [[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
            let second = m[1];
            m[(t % 2) as usize][2] = 10.0 * t as f32;
            let other = (1 - t % 2) as usize;
            m[other][1] = 7.0;
            m[other][0] = 8.0;
            second[2] * 1000.0 + m[(t % 2) as usize][2] * 100.0 + m[other][0] * 10.0 + m[0][1]
        })
        .collect();
    for (name, lang, src) in [("m.comp", Lang::Glsl, MATRIX_GLSL), ("m.hlsl", Lang::Hlsl, MATRIX_HLSL)] {
        let config = RunConfig { groups: [1, 1, 1], ..RunConfig::default() };
        let (db, o) = compile_and_run(name, lang, src, "main", "[buffers.values]\nlen = 4\ntype = \"f32\"\n", config);
        assert_eq!(findings(&db, &o), Vec::<String>::new(), "{name}");
        assert_eq!(o.buffer("values").unwrap().f32s(), want, "{name}");
    }
}

/// Each element of an array of interface blocks is its own buffer, named in
/// the launch file as `bufs[i].member`.
const BLOCK_ARRAY_GLSL: &str = r#"#version 450
layout(local_size_x = 4) in;
layout(std430, binding = 0) buffer Data { uint data[]; } bufs[2];
void main()
{
    uint t = gl_LocalInvocationID.x;
    bufs[0].data[t] = t;
    bufs[1].data[t] = 10u * t + bufs[0].data[t];
}
"#;

#[test]
fn glsl_block_arrays_are_one_buffer_per_element() {
    let config = RunConfig { groups: [1, 1, 1], ..RunConfig::default() };
    let launch = "[buffers.\"bufs[0].data\"]\nlen = 4\n[buffers.\"bufs[1].data\"]\nlen = 4\n";
    let (db, o) = compile_and_run("blocks.comp", Lang::Glsl, BLOCK_ARRAY_GLSL, "main", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    assert_eq!(o.buffer("bufs[0].data").unwrap().u32s(), vec![0, 1, 2, 3]);
    assert_eq!(o.buffer("bufs[1].data").unwrap().u32s(), vec![0, 11, 22, 33]);
}

/// The linear-algebra product: GLSL's and Metal's `*` with a matrix operand,
/// HLSL's `mul`; each language's constructor fills its matrix in its own
/// order (columns in GLSL and Metal, rows in HLSL), so one product is written
/// with transposed arguments.
const PRODUCT_GLSL: &str = r#"#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Out { float values[]; };
void main()
{
    mat2x3 m = mat2x3(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
    vec2 v = vec2(1.0, 10.0);
    vec3 mv = m * v;
    vec2 um = vec3(1.0, 1.0, 1.0) * m;
    mat3x2 t = mat3x2(1.0, 0.0, 0.0, 1.0, 1.0, 1.0);
    mat3 p = m * t;
    values[0] = mv.x; values[1] = mv.y; values[2] = mv.z;
    values[3] = um.x; values[4] = um.y;
    values[5] = p[2][0]; values[6] = p[2][2];
}
"#;

const PRODUCT_METAL: &str = r#"#include <metal_stdlib>
using namespace metal;

kernel void product(device float* values [[buffer(0)]])
{
    float2x3 m = float2x3(float3(1.0, 2.0, 3.0), float3(4.0, 5.0, 6.0));
    float2 v = float2(1.0, 10.0);
    float3 mv = m * v;
    float2 um = float3(1.0, 1.0, 1.0) * m;
    float3x2 t = float3x2(float2(1.0, 0.0), float2(0.0, 1.0), float2(1.0, 1.0));
    float3x3 p = m * t;
    values[0] = mv.x; values[1] = mv.y; values[2] = mv.z;
    values[3] = um.x; values[4] = um.y;
    values[5] = p[2][0]; values[6] = p[2][2];
}
"#;

const PRODUCT_HLSL: &str = r#"RWStructuredBuffer<float> values : register(u0);
[numthreads(1, 1, 1)]
void main()
{
    float3x2 m = float3x2(1.0, 4.0, 2.0, 5.0, 3.0, 6.0);
    float2 v = float2(1.0, 10.0);
    float3 mv = mul(m, v);
    float2 um = mul(float3(1.0, 1.0, 1.0), m);
    float2x3 t = float2x3(1.0, 0.0, 1.0, 0.0, 1.0, 1.0);
    float3x3 p = mul(m, t);
    values[0] = mv.x; values[1] = mv.y; values[2] = mv.z;
    values[3] = um.x; values[4] = um.y;
    values[5] = p[0][2]; values[6] = p[2][2];
}
"#;

#[test]
fn matrix_products_are_linear_algebra_in_every_dialect() {
    // m: 3 rows, 2 columns [[1, 4], [2, 5], [3, 6]]; t: 2 rows, 3 columns [[1, 0, 1], [0, 1, 1]].
    let m = [[1.0f32, 4.0], [2.0, 5.0], [3.0, 6.0]];
    let t = [[1.0f32, 0.0, 1.0], [0.0, 1.0, 1.0]];
    let mv: Vec<f32> = m.iter().map(|row| row[0] + 10.0 * row[1]).collect();
    let um: Vec<f32> = (0..2).map(|c| m.iter().map(|row| row[c]).sum()).collect();
    let p = |r: usize, c: usize| m[r][0] * t[0][c] + m[r][1] * t[1][c];
    let want = vec![mv[0], mv[1], mv[2], um[0], um[1], p(0, 2), p(2, 2)];
    for (name, lang, src, entry) in [
        ("p.comp", Lang::Glsl, PRODUCT_GLSL, "main"),
        ("p.metal", Lang::Metal, PRODUCT_METAL, "product"),
        ("p.hlsl", Lang::Hlsl, PRODUCT_HLSL, "main"),
    ] {
        let config = RunConfig { groups: [1, 1, 1], group_size: Some([1, 1, 1]), ..RunConfig::default() };
        let (db, o) = compile_and_run(name, lang, src, entry, "[buffers.values]\nlen = 7\ntype = \"f32\"\n", config);
        assert_eq!(findings(&db, &o), Vec::<String>::new(), "{name}");
        assert_eq!(o.buffer("values").unwrap().f32s(), want, "{name}");
    }
}

/// The Metal standard library's constants, which real kernels use as if
/// they were keywords (`-MAXHALF` as a mask's minus infinity).
const CONSTANTS_METAL: &str = r#"#include <metal_stdlib>
using namespace metal;

kernel void constants(device float* values [[buffer(0)]])
{
    values[0] = -MAXHALF;
    values[1] = M_PI_F;
    values[2] = float(M_PI_H);
    values[3] = HALF_EPSILON;
    values[4] = FLT_EPSILON;
    values[5] = float(INT_MIN);
    values[6] = isnan(NAN) ? 1.0f : 0.0f;
    values[7] = MAXFLOAT;
}
"#;

#[test]
fn metal_standard_constants_have_their_values() {
    let config = RunConfig { groups: [1, 1, 1], group_size: Some([1, 1, 1]), ..RunConfig::default() };
    let (db, o) = compile_and_run("c.metal", Lang::Metal, CONSTANTS_METAL, "constants", "[buffers.values]\nlen = 8\ntype = \"f32\"\n", config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let want = vec![-65504.0, std::f32::consts::PI, 3.140625, 1.0 / 1024.0, f32::EPSILON, -2147483648.0, 1.0, f32::MAX];
    assert_eq!(o.buffer("values").unwrap().f32s(), want);
}

/// GLSL's `unpack8`/`unpack16` take an integer apart, lowest part first, in
/// the argument's signedness; `pack16`/`pack32` build one.
const PACKING_GLSL: &str = r#"#version 450
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Data { uint data[]; };
void main() {
    uint x = 0x80FF1234u;
    u8vec4 b = unpack8(x);
    i8vec4 s = unpack8(int(x));
    u16vec2 h = unpack16(x);
    data[0] = uint(b.x); data[1] = uint(b.w); data[2] = uint(int(s.w) + 1000);
    data[3] = uint(h.y); data[4] = pack32(b); data[5] = pack32(u16vec2(h.y, h.x));
    data[6] = uint(pack16(u8vec2(1u, 2u)));
}
"#;

#[test]
fn glsl_packing_functions_compute_exactly() {
    let config = RunConfig { groups: [1, 1, 1], ..RunConfig::default() };
    let (db, o) = compile_and_run("pack.comp", Lang::Glsl, PACKING_GLSL, "main", "[buffers.data]\nlen = 7\n", config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let x = 0x80FF_1234u32;
    let want = vec![x & 0xFF, x >> 24, ((x >> 24) as u8 as i8 as i32 + 1000) as u32, x >> 16, x, x.rotate_left(16), 0x0201];
    assert_eq!(o.buffer("data").unwrap().u32s(), want);
}

/// C's grammar reads `-5` after `=`, `(` or `,` as one literal; it is -5 (it
/// was 0), in every C-family language.
const NEGATIVE_LITERALS_CUDA: &str = r#"__global__ void k(int* out, unsigned* bits)
{
    int m = -5;
    out[0] = m;
    out[1] = (-3) * 4;
    out[2] = -0x10 + 1;
    out[3] = m < -4 ? 1 : 2;
    bits[0] = (unsigned)m;
    bits[1] = -1u;
}
"#;

#[test]
fn negative_literals_are_negative() {
    let config = RunConfig { group_size: Some([1, 1, 1]), ..RunConfig::default() };
    let (db, o) = compile_and_run("neg.cu", Lang::Cuda, NEGATIVE_LITERALS_CUDA, "k", "[buffers.out]\nlen = 4\n[buffers.bits]\nlen = 2\n", config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    assert_eq!(o.buffer("out").unwrap().u32s(), [-5i32, -12, -15, 1].map(|x| x as u32).to_vec());
    assert_eq!(o.buffer("bits").unwrap().u32s(), vec![(-5i32) as u32, u32::MAX]);
}

/// GLSL's `transpose`, `matrixCompMult`, `outerProduct` and `umulExtended`
/// (whose results come back through out-parameters).
const MATRIX_FUNCTIONS_GLSL: &str = r#"#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Data { float data[]; };
layout(std430, binding = 1) buffer Bits { uint bits[]; };
void main() {
    mat2x3 m = mat2x3(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
    mat3x2 t = transpose(m);
    mat2x3 c = matrixCompMult(m, m);
    mat2x3 o = outerProduct(vec3(1.0, 2.0, 3.0), vec2(10.0, 100.0));
    data[0] = t[2][1]; data[1] = c[1][2]; data[2] = o[1][2];
    uint hi, lo;
    umulExtended(0x80000001u, 0x10u, hi, lo);
    int shi, slo;
    imulExtended(-3, 0x40000000, shi, slo);
    bits[0] = hi; bits[1] = lo; bits[2] = uint(shi); bits[3] = uint(slo);
}
"#;

#[test]
fn glsl_matrix_functions_and_extended_multiply_compute_exactly() {
    let config = RunConfig { groups: [1, 1, 1], ..RunConfig::default() };
    let launch = "[buffers.data]\nlen = 3\ntype = \"f32\"\n[buffers.bits]\nlen = 4\n";
    let (db, o) = compile_and_run("mf.comp", Lang::Glsl, MATRIX_FUNCTIONS_GLSL, "main", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    // m's columns are (1, 2, 3) and (4, 5, 6): t[2] is m's row 2, (3, 6).
    assert_eq!(o.buffer("data").unwrap().f32s(), vec![6.0, 36.0, 300.0]);
    let (p, q) = (0x8000_0001u64 * 0x10, -3i64 * 0x4000_0000);
    assert_eq!(o.buffer("bits").unwrap().u32s(), vec![(p >> 32) as u32, p as u32, (q >> 32) as u32, q as u32]);
}

/// GLSL's `bitfieldExtract`, sign-extending a signed value, 0 for no bits.
const BITFIELD_GLSL: &str = r#"#version 450
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Bits { uint bits[]; };
void main() {
    uint x = 0xF0F01234u;
    int s = int(0x8000F000u);
    bits[0] = bitfieldExtract(x, 4, 8);
    bits[1] = bitfieldExtract(x, 28, 4);
    bits[2] = uint(bitfieldExtract(s, 12, 4));
    bits[3] = uint(bitfieldExtract(s, 28, 4));
    bits[4] = bitfieldExtract(x, 0, 32);
    bits[5] = bitfieldExtract(x, 3, 0);
    uvec2 v = bitfieldExtract(uvec2(x, 0xFFu), 0, 4);
    bits[6] = v.x + 16u * v.y;
    uint16_t h = uint16_t(0xA5C3u);
    bits[7] = uint(bitfieldExtract(h, 12, 4));
    int16_t sh = int16_t(-20);
    bits[8] = uint(int(bitfieldExtract(sh, 2, 4)));
    uint64_t w = 0x0123456789ABCDEFul;
    bits[9] = uint(bitfieldExtract(w, 36, 12));
}
"#;

#[test]
fn glsl_bitfield_extract_computes_exactly() {
    let config = RunConfig { groups: [1, 1, 1], ..RunConfig::default() };
    let (db, o) = compile_and_run("bf.comp", Lang::Glsl, BITFIELD_GLSL, "main", "[buffers.bits]\nlen = 10\n", config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let x = 0xF0F0_1234u32;
    // 16-bit values too: -20 is 0b1110_1100, bits 2..6 are 0b1011 = -5 signed.
    let want = vec![(x >> 4) & 0xFF, x >> 28, u32::MAX, (-8i32) as u32, x, 0, 4 + 16 * 15, 0xA, (-5i32) as u32, 0x456];
    assert_eq!(o.buffer("bits").unwrap().u32s(), want);
}

/// OpenCL's `convert_T` converts values (toward zero, as C does) and `as_T`
/// reinterprets bits, across component sizes too; they were opaque calls.
const CONVERSIONS_OPENCL: &str = r#"__kernel __attribute__((reqd_work_group_size(1, 1, 1)))
void k(__global uint* out, __global float* f)
{
    float4 v = convert_float4((int4)(1, -2, 3, 4));
    out[0] = as_uint(v.y);
    ushort2 h = as_ushort2(0x12345678u);
    out[1] = h.x; out[2] = h.y;
    out[3] = as_uint((ushort2)(0x5678, 0x1234));
    out[4] = convert_uint(f[0]);
    out[5] = (uint)convert_int_rtz(-2.7f);
    uchar4 b = as_uchar4(0x01020304u);
    out[6] = b.x + 10 * b.w;
    out[7] = as_ushort(convert_half_rte(f[0]));
}
"#;

#[test]
fn opencl_conversions_and_reinterpretations_compute_exactly() {
    let config = RunConfig { groups: [1, 1, 1], ..RunConfig::default() };
    let launch = "[buffers.out]\nlen = 8\n[buffers.f]\nlen = 1\ntype = \"f32\"\nfill = 7.9\n";
    let (db, o) = compile_and_run("conv.cl", Lang::OpenCl, CONVERSIONS_OPENCL, "k", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    // 7.9 as a half: 7.8984375 (0x47e6) lies nearer than 7.90234375.
    let want = vec![(-2.0f32).to_bits(), 0x5678, 0x1234, 0x1234_5678, 7, (-2i32) as u32, 4 + 10, 0x47e6];
    assert_eq!(o.buffer("out").unwrap().u32s(), want);
}

/// OpenCL's `get_sub_group_id()` and `get_num_sub_groups()` follow the wave
/// width (they were opaque calls).
const SUB_GROUPS_OPENCL: &str = r#"__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void k(__global uint* out)
{
    uint lid = get_local_id(0);
    out[lid] = get_sub_group_id() * 100 + get_sub_group_local_id() + 10000 * get_num_sub_groups();
}
"#;

#[test]
fn opencl_sub_group_ids_follow_the_wave_width() {
    for wave in [16u32, 32] {
        let config = RunConfig { groups: [1, 1, 1], wave_size: Some(wave), ..RunConfig::default() };
        let (db, o) = compile_and_run("sg.cl", Lang::OpenCl, SUB_GROUPS_OPENCL, "k", "[buffers.out]\nlen = 64\n", config);
        assert_eq!(findings(&db, &o), Vec::<String>::new());
        let want: Vec<u32> = (0..64).map(|l| (l / wave) * 100 + l % wave + 10000 * (64 / wave)).collect();
        assert_eq!(o.buffer("out").unwrap().u32s(), want, "wave {wave}");
    }
}

/// An overload that calls another of the same name: a call, not recursion.
const OVERLOADS_CALLING_OVERLOADS_GLSL: &str = r#"#version 450
layout(local_size_x = 8) in;
layout(std430, binding = 0) buffer Floats { vec4 floats[]; };

float widened(uint u) { return uintBitsToFloat(u << 16); }
vec4 widened(uvec4 u) { return vec4(widened(u.x), widened(u.y), widened(u.z), widened(u.w)); }

void main()
{
    uint t = gl_LocalInvocationID.x;
    floats[t] = widened(uvec4(0x3f80u + t, 0x4000u, 0xbf80u, 0x4040u));
}
"#;

#[test]
fn overloads_calling_overloads_are_inlined() {
    let config = RunConfig { groups: [1, 1, 1], ..RunConfig::default() };
    let launch = "[buffers.floats]\nlen = 32\ntype = \"f32\"\n";
    let (db, o) = compile_and_run("o.comp", Lang::Glsl, OVERLOADS_CALLING_OVERLOADS_GLSL, "main", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let want: Vec<f32> = (0..8u32).flat_map(|t| [f32::from_bits((0x3f80 + t) << 16), 2.0, -1.0, 3.0]).collect();
    assert_eq!(o.buffer("floats").unwrap().f32s(), want);
}

/// A struct with an array member, a local and an invocation's own global,
/// indexed at run time (the array lives in the invocation's memory).
const STRUCT_ARRAYS_GLSL: &str = r#"#version 450
layout(local_size_x = 16) in;
layout(std430, binding = 0) buffer Ints { int ints[]; };
struct cache_t { int qs[8]; int total; };
cache_t cache;

void fill(uint t) {
    for (uint i = 0u; i < 8u; i++) {
        cache.qs[i] = int(t * 10u + i);
    }
    cache.total = 0;
}

void main()
{
    uint t = gl_LocalInvocationID.x;
    fill(t);
    cache_t copy = cache;
    for (uint i = 0u; i < t; i++) {
        copy.total += copy.qs[(i * 3u) % 8u];
    }
    copy.qs[t % 8u] = -1;
    ints[t * 2u] = copy.total;
    ints[t * 2u + 1u] = copy.qs[t % 8u] + cache.qs[t % 8u];
}
"#;

#[test]
fn struct_array_members_are_indexed_at_run_time() {
    let config = RunConfig { groups: [1, 1, 1], ..RunConfig::default() };
    let (db, o) = compile_and_run("s.comp", Lang::Glsl, STRUCT_ARRAYS_GLSL, "main", "[buffers.ints]\nlen = 32\n", config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let want: Vec<i32> = (0..16i32).flat_map(|t| [(0..t).map(|i| t * 10 + (i * 3) % 8).sum(), -1 + t * 10 + t % 8]).collect();
    assert_eq!(o.buffer("ints").unwrap().i32s(), want);
}

/// Questions about a ballot's mask, in GLSL and OpenCL C: the lanes whose
/// id is a multiple of 3 vote; 128 invocations in waves of 64 (the second
/// word of the mask) and of 16.
const BALLOT_QUERIES_GLSL: &str = r#"#version 450
#extension GL_KHR_shader_subgroup_ballot : enable
layout(local_size_x = 128) in;
layout(std430, binding = 0) buffer Ints { uint ints[]; };

void main()
{
    uint t = gl_LocalInvocationID.x;
    uvec4 b = subgroupBallot(gl_SubgroupInvocationID % 3u == 0u);
    ints[t * 8u] = subgroupBallotBitCount(b);
    ints[t * 8u + 1u] = subgroupBallotExclusiveBitCount(b);
    ints[t * 8u + 2u] = subgroupBallotInclusiveBitCount(b);
    ints[t * 8u + 3u] = subgroupBallotFindLSB(b);
    ints[t * 8u + 4u] = subgroupBallotFindMSB(b);
    ints[t * 8u + 5u] = uint(subgroupBallotBitExtract(b, 33u)) + 2u * uint(subgroupBallotBitExtract(b, 3u));
    ints[t * 8u + 6u] = uint(subgroupInverseBallot(b));
    ints[t * 8u + 7u] = b.y;
}
"#;

const BALLOT_QUERIES_OPENCL: &str = r#"__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void k(__global uint* ints)
{
    uint t = get_local_id(0);
    uint4 b = sub_group_ballot(get_sub_group_local_id() % 3 == 0);
    ints[t * 8] = sub_group_ballot_bit_count(b);
    ints[t * 8 + 1] = sub_group_ballot_exclusive_scan(b);
    ints[t * 8 + 2] = sub_group_ballot_inclusive_scan(b);
    ints[t * 8 + 3] = sub_group_ballot_find_lsb(b);
    ints[t * 8 + 4] = sub_group_ballot_find_msb(b);
    ints[t * 8 + 5] = sub_group_ballot_bit_extract(b, 33) + 2 * sub_group_ballot_bit_extract(b, 3);
    ints[t * 8 + 6] = sub_group_inverse_ballot(b);
    ints[t * 8 + 7] = b.y;
}
"#;

#[test]
fn ballot_queries_count_and_find_the_voting_lanes() {
    for (file, lang, source, entry) in [("b.comp", Lang::Glsl, BALLOT_QUERIES_GLSL, "main"), ("b.cl", Lang::OpenCl, BALLOT_QUERIES_OPENCL, "k")] {
        for wave in [16u32, 64] {
            let config = RunConfig { groups: [1, 1, 1], wave_size: Some(wave), ..RunConfig::default() };
            let (db, o) = compile_and_run(file, lang, source, entry, "[buffers.ints]\nlen = 1024\n", config);
            assert_eq!(findings(&db, &o), Vec::<String>::new(), "{file}");
            let want: Vec<u32> = (0..128u32)
                .flat_map(|t| {
                    let lane = t % wave;
                    let votes: Vec<u32> = (0..wave).filter(|l| l % 3 == 0).collect();
                    let below = votes.iter().filter(|&&l| l < lane).count() as u32;
                    let own = u32::from(lane % 3 == 0);
                    let has = |l: u32| u32::from(votes.contains(&l));
                    let high_word = votes.iter().filter(|&&l| l >= 32).fold(0u32, |m, &l| m | 1 << (l - 32));
                    [votes.len() as u32, below, below + own, 0, *votes.last().unwrap(), has(33) + 2 * has(3), own, high_word]
                })
                .collect();
            assert_eq!(o.buffer("ints").unwrap().u32s(), want, "{file}, waves of {wave}");
        }
    }
}

/// GLSL's inclusive scans, half packing, class tests, the two-argument
/// `atan` and `tanh`, and a subgroup-scope `controlBarrier` ordering one
/// subgroup's exchange; 16 invocations in subgroups of 8.
const GLSL_BUILTINS: &str = r#"#version 450
#extension GL_KHR_shader_subgroup_arithmetic : enable
#extension GL_KHR_memory_scope_semantics : enable
layout(local_size_x = 16) in;
layout(std430, binding = 0) buffer Ints { uint ints[]; };
layout(std430, binding = 1) buffer Floats { float floats[]; };
shared uint lanes[16];

void main()
{
    uint t = gl_LocalInvocationID.x;
    uint inclusive = subgroupInclusiveAdd(t + 1u);
    uint exclusive = subgroupExclusiveAdd(t + 1u);
    uint packed = packHalf2x16(vec2(float(t) + 0.5, -2.0 * float(t)));
    vec2 back = unpackHalf2x16(packed);
    float special = uintBitsToFloat(t % 3u == 0u ? 0x7f800000u : (t % 3u == 1u ? 0x7fc00000u : 0x3f800000u));
    lanes[t] = t * t;
    controlBarrier(gl_ScopeSubgroup, gl_ScopeSubgroup, gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
    uint neighbour = lanes[(t & ~7u) | ((t + 1u) & 7u)];
    ints[t * 4u] = inclusive * 1000u + exclusive;
    ints[t * 4u + 1u] = packed;
    ints[t * 4u + 2u] = uint(isinf(special)) + 2u * uint(isnan(special));
    ints[t * 4u + 3u] = neighbour;
    floats[t * 4u] = back.x;
    floats[t * 4u + 1u] = back.y;
    floats[t * 4u + 2u] = atan(float(t) - 8.0, -2.0);
    floats[t * 4u + 3u] = tanh(float(t) / 4.0 - 2.0);
}
"#;

#[test]
fn glsl_scans_half_packing_and_scoped_barriers_compute_exactly() {
    let config = RunConfig { groups: [1, 1, 1], wave_size: Some(8), ..RunConfig::default() };
    let launch = "[buffers.ints]\nlen = 64\n[buffers.floats]\nlen = 64\ntype = \"f32\"\n";
    let (db, o) = compile_and_run("builtins.comp", Lang::Glsl, GLSL_BUILTINS, "main", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    // The bits of a half that holds `x` exactly (a normal number or a zero).
    let half = |x: f32| {
        let b = x.to_bits();
        let sign = (b >> 16) & 0x8000;
        if x == 0.0 {
            return sign;
        }
        sign | ((((b >> 23) & 0xff) + 15 - 127) << 10) | ((b & 0x7f_ffff) >> 13)
    };
    let ints: Vec<u32> = (0..16u32)
        .flat_map(|t| {
            let base = t - t % 8;
            let exclusive: u32 = (base..t).map(|j| j + 1).sum();
            let special = [1, 2, 0][(t % 3) as usize];
            let neighbour = (t & !7) | ((t + 1) & 7);
            [(exclusive + t + 1) * 1000 + exclusive, half(t as f32 + 0.5) | half(-2.0 * t as f32) << 16, special, neighbour * neighbour]
        })
        .collect();
    assert_eq!(o.buffer("ints").unwrap().u32s(), ints);
    let floats = o.buffer("floats").unwrap().f32s();
    for t in 0..16usize {
        let x = t as f32;
        assert_eq!(floats[t * 4], x + 0.5, "unpacked low half of {t}");
        assert_eq!(floats[t * 4 + 1], -2.0 * x, "unpacked high half of {t}");
        assert!((floats[t * 4 + 2] - (x - 8.0).atan2(-2.0)).abs() < 1e-5, "atan of {t}");
        assert!((floats[t * 4 + 3] - (x / 4.0 - 2.0).tanh()).abs() < 1e-5, "tanh of {t}");
    }
}

/// WGSL's inclusive scan (it had been computed as the exclusive one), and
/// its packing built-ins; 16 invocations in subgroups of 8.
const WGSL_PACKING: &str = r#"enable subgroups;
@group(0) @binding(0) var<storage, read_write> ints: array<u32>;
@group(0) @binding(1) var<storage, read_write> floats: array<f32>;

@compute @workgroup_size(16)
fn k(@builtin(local_invocation_index) t: u32) {
    let s = i32(t) - 8;
    ints[t * 4u] = subgroupInclusiveAdd(t + 1u) * 1000u + subgroupExclusiveAdd(t + 1u);
    let bytes = pack4xI8(vec4<i32>(s, -s, s * 20, 3));
    ints[t * 4u + 1u] = bytes;
    let back = unpack4xI8(bytes);
    ints[t * 4u + 2u] = bitcast<u32>(back.x * 1000 + back.y * 100 + back.z) + pack4xU8Clamp(vec4<u32>(t, t * 40u, 7u, 300u));
    ints[t * 4u + 3u] = pack2x16float(vec2<f32>(f32(t) + 0.5, -2.0));
    let halves = unpack2x16float(ints[t * 4u + 3u]);
    floats[t * 2u] = halves.x + halves.y;
    floats[t * 2u + 1u] = atan2(f32(s), 2.0) + tanh(f32(s) / 4.0);
}
"#;

#[test]
fn wgsl_inclusive_scans_and_packing_compute_exactly() {
    let config = RunConfig { groups: [1, 1, 1], wave_size: Some(8), ..RunConfig::default() };
    let launch = "[buffers.ints]\nlen = 64\n[buffers.floats]\nlen = 32\ntype = \"f32\"\n";
    let (db, o) = compile_and_run("packing.wgsl", Lang::Wgsl, WGSL_PACKING, "k", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let ints = o.buffer("ints").unwrap().u32s();
    let floats = o.buffer("floats").unwrap().f32s();
    for t in 0..16u32 {
        let s = t as i32 - 8;
        let exclusive: u32 = (t - t % 8..t).map(|j| j + 1).sum();
        assert_eq!(ints[t as usize * 4], (exclusive + t + 1) * 1000 + exclusive, "scans of {t}");
        let byte = |v: i32| (v as u32) & 0xff;
        let bytes = byte(s) | byte(-s) << 8 | byte(s * 20) << 16 | byte(3) << 24;
        assert_eq!(ints[t as usize * 4 + 1], bytes, "pack4xI8 of {t}");
        let sign_extended = |v: i32| v as i8 as i32;
        let clamped = t.min(255) | (t * 40).min(255) << 8 | 7 << 16 | 255 << 24;
        let unpacked = (s * 1000 + sign_extended(-s) * 100 + sign_extended(s * 20)) as u32;
        assert_eq!(ints[t as usize * 4 + 2], unpacked.wrapping_add(clamped), "unpack4xI8, pack4xU8Clamp of {t}");
        assert_eq!(floats[t as usize * 2], t as f32 + 0.5 - 2.0, "pack2x16float and back, {t}");
        let want = (s as f32).atan2(2.0) + (s as f32 / 4.0).tanh();
        assert!((floats[t as usize * 2 + 1] - want).abs() < 1e-5, "atan2 + tanh of {t}");
    }
}

/// Metal's inclusive prefix sum over a SIMD-group of 8.
const METAL_INCLUSIVE: &str = r#"#include <metal_stdlib>
using namespace metal;
kernel void k(device uint* out [[buffer(0)]], uint lid [[thread_position_in_threadgroup]])
{
    out[lid] = simd_prefix_inclusive_sum(lid + 1) * 1000 + simd_prefix_exclusive_sum(lid + 1);
}
"#;

#[test]
fn metal_inclusive_prefix_sums_add_the_lane_s_own_value() {
    let config = RunConfig { groups: [1, 1, 1], group_size: Some([16, 1, 1]), wave_size: Some(8), ..RunConfig::default() };
    let (db, o) = compile_and_run("scan.metal", Lang::Metal, METAL_INCLUSIVE, "k", "[buffers.out]\nlen = 16\n", config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let want: Vec<u32> = (0..16u32)
        .map(|t| {
            let exclusive: u32 = (t - t % 8..t).map(|j| j + 1).sum();
            (exclusive + t + 1) * 1000 + exclusive
        })
        .collect();
    assert_eq!(o.buffer("out").unwrap().u32s(), want);
}

/// Dot products of packed bytes: CUDA's `__dp4a` (signed or unsigned by its
/// overload, wrapping), GLSL's `dotPacked4x8EXT` and its saturating form,
/// HLSL's `dot4add_i8packed`/`dot4add_u8packed` (signedness by name), WGSL's
/// `dot4I8Packed`/`dot4U8Packed`. GLSL's
/// sized vector names (`i32vec2`) are its vectors.
const PACKED_DOT_CUDA: &str = r#"
__global__ void dots(int* o)
{
    int a = 0x7F80FF02;                   // bytes 2, -1, -128, 127
    int b = 0x02030405;                   // bytes 5, 4, 3, 2
    o[0] = __dp4a(a, b, 1000);
    o[1] = (int)__dp4a((unsigned)a, (unsigned)b, 1000u);
}
"#;

const PACKED_DOT_GLSL: &str = r#"#version 450
#extension GL_EXT_integer_dot_product : require
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer O { int o[]; };
void main() {
    i32vec2 v = i32vec2(0x7F80FF02, 0x02030405);
    int a = v.x;
    int b = v.y;
    o[0] = dotPacked4x8EXT(a, b) + 1000;
    o[1] = int(dotPacked4x8EXT(uint(a), uint(b)) + 1000u);
    o[2] = dotPacked4x8AccSatEXT(0x7F7F7F7F, 0x7F7F7F7F, 2147483600);
}
"#;

const PACKED_DOT_HLSL: &str = r#"RWStructuredBuffer<int> o : register(u0);
[numthreads(1, 1, 1)]
void main()
{
    uint a = 0x7F80FF02;
    uint b = 0x02030405;
    o[0] = dot4add_i8packed(a, b, 1000);
    o[1] = (int)dot4add_u8packed(a, b, 1000u);
}
"#;

const PACKED_DOT_WGSL: &str = r#"@group(0) @binding(0) var<storage, read_write> o: array<i32>;

@compute @workgroup_size(1)
fn main() {
    let a = 0x7F80FF02u;
    let b = 0x02030405u;
    o[0] = dot4I8Packed(a, b) + 1000;
    o[1] = i32(dot4U8Packed(a, b) + 1000u);
}
"#;

#[test]
fn packed_byte_dot_products_compute_exactly() {
    let a: [i8; 4] = [2, -1, -128, 127];
    let b: [i8; 4] = [5, 4, 3, 2];
    let signed: i32 = a.iter().zip(&b).map(|(&x, &y)| i32::from(x) * i32::from(y)).sum::<i32>() + 1000;
    let unsigned: i32 = a.iter().zip(&b).map(|(&x, &y)| i32::from(x as u8) * i32::from(y as u8)).sum::<i32>() + 1000;
    for (name, lang, src, entry, saturated) in [
        ("d.cu", Lang::Cuda, PACKED_DOT_CUDA, "dots", None),
        ("d.comp", Lang::Glsl, PACKED_DOT_GLSL, "main", Some(i32::MAX)),
        ("d.hlsl", Lang::Hlsl, PACKED_DOT_HLSL, "main", None),
        ("d.wgsl", Lang::Wgsl, PACKED_DOT_WGSL, "main", None),
    ] {
        let config = RunConfig { groups: [1, 1, 1], group_size: Some([1, 1, 1]), ..RunConfig::default() };
        let len = 2 + usize::from(saturated.is_some());
        let (db, o) = compile_and_run(name, lang, src, entry, &format!("[buffers.o]\nlen = {len}\ntype = \"i32\"\n"), config);
        assert_eq!(findings(&db, &o), Vec::<String>::new(), "{name}");
        let mut want = vec![signed, unsigned];
        want.extend(saturated);
        assert_eq!(o.buffer("o").unwrap().i32s(), want, "{name}");
    }
}

/// `sizeof` is the type's size in bytes (it was 4 for every type), of a
/// variable by its declared type, and a template argument too.
const SIZES_CUDA: &str = r#"
#include <cuda_fp16.h>
struct block_q { half d; unsigned char qs[16]; };
template <int n> __device__ int bytes() { return n; }
__global__ void sizes(int* o)
{
    float wire[4];
    o[0] = sizeof(half);
    o[1] = sizeof(double);
    o[2] = sizeof(block_q);
    o[3] = sizeof(float4);
    o[4] = sizeof(wire);
    o[5] = bytes<sizeof(half2)>();
    o[6] = sizeof(__nv_bfloat162);
}
"#;

#[test]
fn sizeof_gives_each_type_its_size() {
    let config = RunConfig { groups: [1, 1, 1], group_size: Some([1, 1, 1]), ..RunConfig::default() };
    let (db, o) = compile_and_run("sizes.cu", Lang::Cuda, SIZES_CUDA, "sizes", "[buffers.o]\nlen = 7\ntype = \"i32\"\n", config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    assert_eq!(o.buffer("o").unwrap().i32s(), vec![2, 8, 18, 16, 16, 4, 4]);
}

/// `((float*)&v)[i]` and `*(float*)&v` on a vector held in registers are
/// its components (ggml's convolutions fill a `float4` so); they were the
/// address of a register variable, not modelled.
const REGISTER_VIEW_OPENCL: &str = r#"__kernel void fill(__global const float* src, __global float* out)
{
    float4 val = (float4)(0.0f);
    for (int v = 0; v < 4; ++v) {
        ((float*)&val)[v] = src[v] * 2.0f;
    }
    out[get_global_id(0)] = val.w + *(float*)&val;
}
"#;

#[test]
fn a_vector_through_a_pointer_to_its_components_is_its_components() {
    let config = RunConfig { groups: [1, 1, 1], group_size: Some([1, 1, 1]), ..RunConfig::default() };
    let launch = "[buffers.src]\ndata = [1.0, 2.0, 3.0, 4.0]\n[buffers.out]\nlen = 1\ntype = \"f32\"\n";
    let (db, o) = compile_and_run("fill.cl", Lang::OpenCl, REGISTER_VIEW_OPENCL, "fill", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    assert_eq!(o.buffer("out").unwrap().f32s(), vec![8.0 + 2.0]);
}

/// `memcpy` between two variables in registers of the copied size is a bit
/// cast (CUDA code type-puns so); it was the address of a register variable.
const REGISTER_MEMCPY_CUDA: &str = r#"
__global__ void pun(unsigned* o)
{
    unsigned bits = 0x3F800000u + threadIdx.x;
    float f;
    memcpy(&f, &bits, sizeof(float));
    unsigned back;
    memcpy(&back, &f, 4);
    o[0] = f == 1.0f ? back : 0u;
}
"#;

#[test]
fn memcpy_between_registers_is_a_bit_cast() {
    let config = RunConfig { groups: [1, 1, 1], group_size: Some([1, 1, 1]), ..RunConfig::default() };
    let (db, o) = compile_and_run("pun.cu", Lang::Cuda, REGISTER_MEMCPY_CUDA, "pun", "[buffers.o]\nlen = 1\n", config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    assert_eq!(o.buffer("o").unwrap().u32s(), vec![0x3F80_0000]);
}

/// Constructors run: their member initializers (a parameter named like its
/// member is the parameter), then their body, wherever a struct is made —
/// `return S(a, b)`, `S v(a, b)`, `S v{a, b}`, `S{a, b}`, a member's own
/// initializer — and a function pointer kept in a member is the function it
/// names (ggml's mmq picks its tile loaders so). `S(a, b)` was an unknown
/// call, silently.
const CONSTRUCTORS_CUDA: &str = r#"
typedef int (*scale_t)(int);
__device__ int twice(int x) { return 2 * x; }
__device__ int thrice(int x) { return 3 * x; }

struct range {
    int lo, len, hi;
    __device__ range(int lo, int len) : lo(lo), len(len) { hi = lo + len; }
};
struct pick {
    int id; scale_t scale;
    constexpr __device__ pick(scale_t scale, int id) : id(id), scale(scale) {}
};
struct pair_of_ranges {
    range a; range b;
    __device__ pair_of_ranges(int x) : a(x, 1), b{x + 10, 2} {}
};
static constexpr __device__ pick choose(int kind) {
    if (kind == 0) { return pick(twice, 7); }
    return pick(thrice, 9);
}

__global__ void make(int* o)
{
    range r(5, 3);
    range s{1, 2};
    range t = range(10, 20);
    pair_of_ranges p(4);
    constexpr scale_t f = choose(1).scale;
    o[0] = r.hi;
    o[1] = s.hi;
    o[2] = t.hi;
    o[3] = p.a.hi + p.b.hi;
    o[4] = f(5) + choose(0).id;
}
"#;

#[test]
fn constructors_run_their_member_initializers_and_body() {
    let config = RunConfig { groups: [1, 1, 1], group_size: Some([1, 1, 1]), ..RunConfig::default() };
    let (db, o) = compile_and_run("ctors.cu", Lang::Cuda, CONSTRUCTORS_CUDA, "make", "[buffers.o]\nlen = 5\ntype = \"i32\"\n", config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    assert_eq!(o.buffer("o").unwrap().i32s(), vec![8, 3, 30, 5 + 16, 15 + 7]);
}

/// `kind == (a) && width == (b)`, as a macro writes its arguments, parses
/// as a cast of `&&width` (the address of a label); it is read as written.
/// It was the address of a register variable, and the comparison unknown.
const PARENTHESIZED_VALUES_CUDA: &str = r#"
#define IS(kind_, width_) (kind == (kind_) && width == (width_))
enum kind_t { PLAIN, PADDED };
__device__ int stride_of(kind_t kind, int width)
{
    if (IS(PADDED, 32)) {
        return 33;
    }
    return 32;
}

__global__ void strides(int* o)
{
    o[0] = stride_of(PADDED, 32);
    o[1] = stride_of(PLAIN, 32);
    o[2] = stride_of(PADDED, 16);
}
"#;

#[test]
fn values_in_parentheses_before_a_logical_and_are_values() {
    let config = RunConfig { groups: [1, 1, 1], group_size: Some([1, 1, 1]), ..RunConfig::default() };
    let (db, o) = compile_and_run("strides.cu", Lang::Cuda, PARENTHESIZED_VALUES_CUDA, "strides", "[buffers.o]\nlen = 3\ntype = \"i32\"\n", config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    assert_eq!(o.buffer("o").unwrap().i32s(), vec![33, 32, 32]);
}

/// OpenCL's half loads and stores widen to and round from floats;
/// `vloada_half3`/`vstorea_half3` step by four halves; `vload8` reads eight.
const HALVES_OPENCL: &str = r#"__kernel void halves(__global const half* h, __global half* hout, __global const float* x, __global float* out)
{
    uint i = get_global_id(0);
    float a = vload_half(i, h);
    float4 b = vload_half4(i, h);
    float3 c = vloada_half3(i, h);
    vstore_half(a * 2.0f + 0.5f, i, hout);
    vstorea_half3_rte(c + 1.0f, i, hout + 8);
    float8 w = vload8(i, x);
    vstore2(w.s01 + w.s67, i, out + 16);
    out[i] = a + b.y * 10.0f + b.w * 100.0f + c.z * 1000.0f + w.s3;
}
"#;

#[test]
fn opencl_half_and_wide_vector_loads_and_stores_move_the_right_cells() {
    let config = RunConfig { groups: [1, 1, 1], group_size: Some([4, 1, 1]), ..RunConfig::default() };
    let launch = "[buffers.h]\nlen = 16\ntype = \"f16\"\nfill = { start = 0, step = 1 }\n[buffers.hout]\nlen = 24\ntype = \"f16\"\n[buffers.x]\nlen = 32\ntype = \"f32\"\nfill = { start = 0, step = 1 }\n[buffers.out]\nlen = 24\ntype = \"f32\"\n";
    let (db, o) = compile_and_run("halves.cl", Lang::OpenCl, HALVES_OPENCL, "halves", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let out = o.buffer("out").unwrap().f32s();
    for i in 0..4usize {
        let f = i as f32;
        let want = f + (4.0 * f + 1.0) * 10.0 + (4.0 * f + 3.0) * 100.0 + (4.0 * f + 2.0) * 1000.0 + (8.0 * f + 3.0);
        assert_eq!(out[i], want, "out[{i}]");
        assert_eq!(out[16 + 2 * i], (8 * i) as f32 + (8 * i + 6) as f32, "vstore2 x of {i}");
        assert_eq!(out[17 + 2 * i], (8 * i + 1) as f32 + (8 * i + 7) as f32, "vstore2 y of {i}");
    }
    // The halves written, as bits: 0.5 + 2i (the low mantissa bits of small
    // integers and halves are exact), then four untouched cells, then
    // `h[4i..4i+3] + 1` in three of every four.
    let half_bits = |x: f32| -> u32 {
        if x == 0.0 {
            return 0;
        }
        let e = x.log2().floor() as i32;
        ((e + 15) as u32) << 10 | ((x / 2f32.powi(e) - 1.0) * 1024.0) as u32
    };
    let want: Vec<u32> =
        (0..4).map(|i| half_bits(i as f32 * 2.0 + 0.5)).chain([0; 4]).chain((0..16).map(|k| if k % 4 == 3 { 0 } else { half_bits(k as f32 + 1.0) })).collect();
    assert_eq!(&o.buffer("hout").unwrap().u32s()[..24], want.as_slice());
}

/// A matrix's element chosen by two indices computed at run time, written
/// through a reference parameter (ggml's `dequantize_*` filling a
/// `thread float4x4 &`) and read back.
const MATRIX_ELEMENTS_METAL: &str = r#"#include <metal_stdlib>
using namespace metal;
void fill(device const float* src, thread float4x4 & reg) {
    for (int i = 0; i < 16; ++i) {
        reg[i/4][i%4] = src[i] * 2.0f;
    }
}
kernel void elements(device const float* src [[buffer(0)]], device float* out [[buffer(1)]], uint t [[thread_position_in_grid]]) {
    float4x4 m;
    fill(src, m);
    m[t % 4][(t / 4) % 4] += 0.5f;
    out[t] = m[t % 4][(t / 4) % 4] + m[3][3];
}
"#;

#[test]
fn metal_matrix_elements_at_run_time_indices_compute_exactly() {
    let config = RunConfig { groups: [1, 1, 1], group_size: Some([16, 1, 1]), ..RunConfig::default() };
    let launch = "[buffers.src]\nlen = 16\ntype = \"f32\"\nfill = { start = 0, step = 1 }\n[buffers.out]\nlen = 16\ntype = \"f32\"\n";
    let (db, o) = compile_and_run("elements.metal", Lang::Metal, MATRIX_ELEMENTS_METAL, "elements", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let want: Vec<f32> = (0..16usize).map(|t| ((t % 4) * 4 + (t / 4) % 4) as f32 * 2.0 + 0.5 + if t == 15 { 30.5 } else { 30.0 }).collect();
    assert_eq!(o.buffer("out").unwrap().f32s(), want);
}

/// Metal's `as_type<T>(v)` reads the same bits as a `T` (ggml's
/// `e8m0_to_fp32` builds a float from its exponent bits).
const AS_TYPE_METAL: &str = r#"#include <metal_stdlib>
using namespace metal;
kernel void bits(device const uint* e [[buffer(0)]], device float* out [[buffer(1)]], device uint* back [[buffer(2)]], uint t [[thread_position_in_grid]]) {
    uint b = e[t] << 23;
    out[t] = as_type<float>(b);
    back[t] = as_type<uint>(out[t] * 2.0f);
}
"#;

#[test]
fn metal_as_type_reinterprets_bits() {
    let config = RunConfig { groups: [1, 1, 1], group_size: Some([8, 1, 1]), ..RunConfig::default() };
    let launch = "[buffers.e]\nlen = 8\nfill = { start = 120, step = 1 }\n[buffers.out]\nlen = 8\ntype = \"f32\"\n[buffers.back]\nlen = 8\n";
    let (db, o) = compile_and_run("bits.metal", Lang::Metal, AS_TYPE_METAL, "bits", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let floats: Vec<f32> = (120u32..128).map(|e| f32::from_bits(e << 23)).collect();
    assert_eq!(o.buffer("out").unwrap().f32s(), floats);
    assert_eq!(o.buffer("back").unwrap().u32s(), floats.iter().map(|f| (f * 2.0).to_bits()).collect::<Vec<_>>());
}

/// Explicit specializations of function templates, chosen by written and
/// deduced arguments; static members of class templates, chosen by
/// partial and full specializations and calling their class's other members.
const SPECIALIZATIONS_CUDA: &str = r#"
template <typename T> __device__ T twice(T x) { return x + x; }
template <> __device__ float twice<float>(float x) { return x * 3.0f; }
template <int op> __device__ int cmp(int a, int b) { return a - b; }
template <> __device__ int cmp<3>(int a, int b) { return a * b; }

enum class method_kind { MAX, SUM };
template <method_kind m, typename T> struct policy;
template <typename T> struct policy<method_kind::SUM, T> {
    static __device__ T combine(T a, T b) { return a + b; }
    static __device__ T identity() { return T(0); }
    static __device__ T fold(const T *s, int n) {
        T acc = identity();
        for (int i = 0; i < n; ++i) acc = combine(acc, s[i]);
        return acc;
    }
};
template <typename T> struct policy<method_kind::MAX, T> {
    static __device__ T combine(T a, T b) { return a > b ? a : b; }
    static __device__ T identity() { return T(-1000); }
    static __device__ T fold(const T *s, int n) {
        T acc = identity();
        for (int i = 0; i < n; ++i) acc = combine(acc, s[i]);
        return acc;
    }
};
template <int N> struct scaled { static __device__ int apply(int x) { return x * N; } };
template <> struct scaled<0> { static __device__ int apply(int x) { return -x; } };

template <method_kind m, typename T>
__device__ T reduce(T v, T *s) {
    s[threadIdx.x] = v;
    __syncthreads();
    T r = policy<m, T>::fold(s, 4);
    __syncthreads();
    return r;
}

__global__ void k(int *out, float *fout) {
    __shared__ int s[4];
    int t = threadIdx.x;
    int a = reduce<method_kind::SUM>(t + 1, s);
    int b = reduce<method_kind::MAX>(t * 3, s);
    out[t] = a * 100 + b + scaled<2>::apply(1000) + scaled<0>::apply(10000) + cmp<3>(t, 2) + cmp<1>(t, 2) + twice(t);
    fout[t] = twice((float)t);
}
"#;

#[test]
fn specializations_are_chosen_by_their_arguments() {
    let config = RunConfig { groups: [1, 1, 1], group_size: Some([4, 1, 1]), ..RunConfig::default() };
    let launch = "[buffers.out]\nlen = 4\n[buffers.fout]\nlen = 4\ntype = \"f32\"\n";
    let (db, o) = compile_and_run("spec.cu", Lang::Cuda, SPECIALIZATIONS_CUDA, "k", launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    // 10 summed, 9 the largest, 2000 and -10000 from `scaled`, then 2t + (t - 2) + 2t.
    let want: Vec<i32> = (0..4).map(|t| 1000 + 9 + 2000 - 10000 + 5 * t - 2).collect();
    assert_eq!(o.buffer("out").unwrap().i32s(), want);
    assert_eq!(o.buffer("fout").unwrap().f32s(), vec![0.0, 3.0, 6.0, 9.0]);
}

/// Pointers to the bytes or halves of a scalar in registers (`(int8_t*)&q32`)
/// read and write those bits: packing, a byte-wise dot product, and the high
/// half of a float replaced.
const REGISTER_LANES_CUDA: &str = r#"
__device__ int dot4(const int a, const int b, int c) {
    const signed char* a8 = (const signed char*)&a;
    const signed char* b8 = (const signed char*)&b;
    return c + a8[0] * b8[0] + a8[1] * b8[1] + a8[2] * b8[2] + a8[3] * b8[3];
}
__global__ void pack(const float* vals, const int* x, int* out) {
    int q32 = 0;
    signed char* q8 = (signed char*)&q32;
    for (int l = 0; l < 4; ++l)
        q8[l] = (signed char)(vals[threadIdx.x * 4 + l]);
    float f = vals[threadIdx.x];
    unsigned short* h = (unsigned short*)&f;
    h[1] = 0x3f80;
    out[threadIdx.x * 3 + 0] = q32;
    out[threadIdx.x * 3 + 1] = dot4(x[threadIdx.x], q32, 7);
    out[threadIdx.x * 3 + 2] = __float_as_int(f) + *h;
}
"#;

#[test]
fn cuda_byte_views_of_registers_are_exact() {
    assert_fully_modelled("pack.cu", Lang::Cuda, REGISTER_LANES_CUDA);
    let vals = [1.0f32, -2.0, 3.0, 127.0, -128.0, 5.0, 6.0, 7.5];
    let x = [0x0102_0304i32, -1];
    let launch = format!("[buffers.vals]\ndata = {vals:?}\n[buffers.x]\ndata = {x:?}\n[buffers.out]\nlen = 6\n");
    let config = RunConfig { group_size: Some([2, 1, 1]), ..RunConfig::default() };
    let (db, o) = compile_and_run("pack.cu", Lang::Cuda, REGISTER_LANES_CUDA, "pack", &launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let want: Vec<i32> = (0..2)
        .flat_map(|t| {
            let bytes: Vec<i8> = vals[t * 4..t * 4 + 4].iter().map(|&v| v as i8).collect();
            let q32 = i32::from_le_bytes(bytes.iter().map(|&b| b as u8).collect::<Vec<_>>().try_into().unwrap());
            let dot = 7 + x[t].to_le_bytes().iter().zip(&bytes).map(|(&a, &b)| i32::from(a as i8) * i32::from(b)).sum::<i32>();
            let f = (vals[t].to_bits() & 0xffff) | (0x3f80 << 16);
            [q32, dot, (f as i32).wrapping_add((f & 0xffff) as i32)]
        })
        .collect();
    assert_eq!(o.buffer("out").unwrap().i32s(), want);
}

/// `memcpy` between a scalar in registers and memory copies value by value
/// in the memory's type: a float's bits, two words into one 64-bit value,
/// and a register back out.
const MEMCPY_CUDA: &str = r#"
__global__ void copy(const float* vals, const unsigned* words, unsigned* out, unsigned long long* wide) {
    unsigned t = threadIdx.x;
    unsigned bits;
    memcpy(&bits, &vals[t], sizeof(bits));
    out[t * 2] = bits;
    unsigned long long w;
    memcpy(&w, &words[t * 2], 8);
    wide[t] = w;
    unsigned back = bits ^ 1u;
    memcpy(&out[t * 2 + 1], &back, 4);
}
"#;

#[test]
fn cuda_memcpy_between_registers_and_memory_is_exact() {
    assert_fully_modelled("copy.cu", Lang::Cuda, MEMCPY_CUDA);
    let vals = [1.5f32, -0.25];
    let words = [0x1122_3344u32, 0x5566_7788, 0xdead_beef, 7];
    let launch = format!("[buffers.vals]\ndata = {vals:?}\n[buffers.words]\ndata = {words:?}\n[buffers.out]\nlen = 4\n[buffers.wide]\ntype = \"u64\"\nlen = 2\n");
    let config = RunConfig { group_size: Some([2, 1, 1]), ..RunConfig::default() };
    let (db, o) = compile_and_run("copy.cu", Lang::Cuda, MEMCPY_CUDA, "copy", &launch, config);
    assert_eq!(findings(&db, &o), Vec::<String>::new());
    let out: Vec<u32> = vals.iter().flat_map(|v| [v.to_bits(), v.to_bits() ^ 1]).collect();
    assert_eq!(o.buffer("out").unwrap().u32s(), out);
    let wide: Vec<u64> = (0..2).map(|t| u64::from(words[t * 2]) | (u64::from(words[t * 2 + 1]) << 32)).collect();
    assert_eq!(o.buffer("wide").unwrap().cells, wide);
}
