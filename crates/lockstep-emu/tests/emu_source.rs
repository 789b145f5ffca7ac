//! Kernels written in HLSL and CUDA, compiled by lockstep-lower and run.

use lockstep_emu::{run, Launch, RunConfig, RunOutcome, Scheduler};
use lockstep_lower::{compile, Lang, Options};
use lockstep_source::SourceDb;

struct Src {
    db: SourceDb,
    module: lockstep_ir::Module,
}

fn compile_src(name: &str, lang: Lang, text: &str) -> Src {
    let mut db = SourceDb::new();
    let file = db.add(name, text);
    let c = compile(&mut db, file, lang, &Options::default());
    assert!(!c.has_errors, "{:?}", c.diagnostics);
    Src { db, module: c.module }
}

impl Src {
    fn run(&self, entry: &str, launch: &str, config: RunConfig) -> RunOutcome {
        let f = self.module.find_function(entry).expect("entry exists");
        let l = Launch::parse(launch, std::path::Path::new(".")).unwrap();
        run(&self.db, &self.module, f, &l, &config).unwrap()
    }
    fn summary(&self, o: &RunOutcome) -> Vec<(String, u32, String)> {
        o.findings.iter().map(|d| (d.rule.clone(), self.db.location(d.span).0.line, d.message.clone())).collect()
    }
}

const REDUCE_HLSL: &str = r#"RWStructuredBuffer<uint> data : register(u0);
RWStructuredBuffer<uint> sums : register(u1);
groupshared uint tile[64];

[numthreads(64, 1, 1)]
void reduce(uint3 tid : SV_GroupThreadID, uint3 gid : SV_GroupID) {
    tile[tid.x] = data[gid.x * 64 + tid.x];
    GroupMemoryBarrierWithGroupSync();
    for (uint s = 32; s > 0; s >>= 1) {
        if (tid.x < s)
            tile[tid.x] += tile[tid.x + s];
        GroupMemoryBarrierWithGroupSync();
    }
    if (tid.x == 0)
        sums[gid.x] = tile[0];
}
"#;

#[test]
fn hlsl_reduction_sums_each_group() {
    let s = compile_src("reduce.hlsl", Lang::Hlsl, REDUCE_HLSL);
    for scheduler in [Scheduler::RoundRobin, Scheduler::Reverse, Scheduler::Random] {
        let o = s.run("reduce", "[buffers.data]\nfill = { start = 1, step = 1 }\nlen = 256\n[buffers.sums]\nlen = 4\n", RunConfig { groups: [4, 1, 1], scheduler, seed: 7, ..RunConfig::default() });
        assert_eq!(s.summary(&o), vec![]);
        let want: Vec<u32> = (0..4u32).map(|g| (g * 64 + 1..=g * 64 + 64).sum()).collect();
        assert_eq!(o.buffer("sums").unwrap().u32s(), want);
    }
}

#[test]
fn hlsl_reduction_without_its_loop_barrier_races_across_iterations() {
    let src = REDUCE_HLSL.replacen("        GroupMemoryBarrierWithGroupSync();\n", "", 1);
    let s = compile_src("reduce.hlsl", Lang::Hlsl, &src);
    let o = s.run("reduce", "", RunConfig::default());
    assert_eq!(
        s.summary(&o),
        vec![(
            "groupshared-read-then-no-barrier-write".to_string(),
            11,
            "thread [0,0,0][1,0,0] writes tile[1] (line 11) in iteration 1 while thread [0,0,0][0,0,0] read it (line 11) in iteration 6 with no barrier in between".to_string()
        )]
    );
}

const TRANSPOSE_CU: &str = r#"#define TILE 8
__global__ void transpose(const float* in, float* out, int n) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    SYNC
    int tx = blockIdx.y * TILE + threadIdx.x;
    int ty = blockIdx.x * TILE + threadIdx.y;
    out[ty * n + tx] = tile[threadIdx.x][threadIdx.y];
}
"#;

#[test]
fn cuda_transpose_is_correct_with_its_barrier_and_racy_without() {
    let good = compile_src("t.cu", Lang::Cuda, &TRANSPOSE_CU.replace("SYNC", "__syncthreads();"));
    let launch = "[constants]\nn = 16\n[buffers.in]\nfill = { start = 0, step = 1 }\nlen = 256\n[buffers.out]\nlen = 256\n";
    let cfg = RunConfig { groups: [2, 2, 1], group_size: Some([8, 8, 1]), ..RunConfig::default() };
    let o = good.run("transpose", launch, cfg.clone());
    assert_eq!(good.summary(&o), vec![]);
    let want: Vec<f32> = (0..256).map(|i| ((i % 16) * 16 + i / 16) as f32).collect();
    assert_eq!(o.buffer("out").unwrap().f32s(), want);
    assert_eq!(o.buffer("in").unwrap().types, vec![lockstep_ir::Type::F32]);

    let bad = compile_src("t.cu", Lang::Cuda, &TRANSPOSE_CU.replace("SYNC", ""));
    let o = bad.run("transpose", launch, cfg);
    let first = "groupshared-first-read-without-barrier".to_string();
    assert_eq!(
        bad.summary(&o),
        vec![
            (first.clone(), 10, "thread [0,0,0][1,0,0] reads tile[1][0] (line 10), which no thread has written".to_string()),
            (
                "groupshared-read-then-no-barrier-write".to_string(),
                6,
                "thread [0,0,0][0,1,0] writes tile[1][0] (line 6) while thread [0,0,0][1,0,0] read it (line 10) with no barrier in between".to_string()
            ),
            (
                first,
                10,
                "thread [0,0,0][0,1,0] reads tile[0][1] (line 10) while thread [0,0,0][1,0,0] wrote it (line 6) with no barrier in between; the cell held no earlier value".to_string()
            ),
        ]
    );
}

#[test]
fn hlsl_vectors_swizzles_and_structs() {
    let s = compile_src(
        "v.hlsl",
        Lang::Hlsl,
        r#"struct P { float4 pos; uint id; };
RWStructuredBuffer<P> parts : register(u0);
RWStructuredBuffer<float> result : register(u1);
groupshared float4 shared_pos[4];

[numthreads(4, 1, 1)]
void main(uint3 tid : SV_GroupThreadID) {
    P p = parts[tid.x];
    shared_pos[tid.x] = p.pos.wzyx * 2.0;
    GroupMemoryBarrierWithGroupSync();
    float4 q = shared_pos[(tid.x + 1) % 4];
    result[tid.x] = q.x + q.y * 10.0 + (float)p.id * 1000.0;
    parts[tid.x].id = p.id + 1;
    shared_pos[tid.x].y = 0.0;
}
"#,
    );
    let o = s.run("main", "[buffers.parts]\nfill = { start = 0, step = 1 }\nlen = 20\n", RunConfig::default());
    // The struct's `id` field is a u32 cell among f32 ones: the fill and the output respect that.
    let parts = o.buffer("parts").unwrap();
    assert_eq!(parts.types, vec![lockstep_ir::Type::F32, lockstep_ir::Type::F32, lockstep_ir::Type::F32, lockstep_ir::Type::F32, lockstep_ir::Type::U32]);
    assert_eq!(parts.u32s().iter().skip(4).step_by(5).copied().collect::<Vec<_>>(), vec![5, 10, 15, 20]);
    assert!(parts.to_toml_line().starts_with("parts = [0.0, 1.0, 2.0, 3.0, 5, 5.0,"), "{}", parts.to_toml_line());
    // Round-robin: each thread reads its neighbour's tile before the neighbour zeroes `.y`, except the last.
    assert_eq!(o.buffer("result").unwrap().f32s(), vec![4156.0, 9266.0, 14376.0, 19006.0]);
    assert_eq!(
        s.summary(&o),
        vec![
            (
                "groupshared-read-then-no-barrier-write".to_string(),
                14,
                "thread [0,0,0][1,0,0] writes shared_pos[1].y (line 14) while thread [0,0,0][0,0,0] read it (line 11) with no barrier in between".to_string()
            ),
            (
                "groupshared-write-then-no-barrier-read".to_string(),
                11,
                "thread [0,0,0][3,0,0] reads shared_pos[0].y (line 11) while thread [0,0,0][0,0,0] wrote it (line 14) with no barrier in between".to_string()
            ),
        ]
    );
}

#[test]
fn hlsl_control_flow_helpers_and_integer_semantics_match_rust() {
    let s = compile_src(
        "cf.hlsl",
        Lang::Hlsl,
        r#"RWStructuredBuffer<int> result : register(u0);

int collatz_steps(uint n) {
    int steps = 0;
    while (n != 1) {
        if (steps > 200) break;
        n = (n & 1) ? 3 * n + 1 : n >> 1;
        steps++;
    }
    return steps;
}

[numthreads(32, 1, 1)]
void main(uint3 tid : SV_DispatchThreadID) {
    int acc = 0;
    for (int i = 0; i < 10; i++) {
        if (i == (int)(tid.x % 7)) continue;
        switch (i % 3) {
            case 0: acc += i; break;
            case 1: acc -= 2 * i; break;
            default: acc ^= i;
        }
    }
    int q = (acc - 17) / 4;
    int r = (acc - 17) % 4;
    result[tid.x] = collatz_steps(tid.x + 1) * 1000 + q * 10 + r;
}
"#,
    );
    let o = s.run("main", "[buffers.result]\nlen = 64\n", RunConfig { groups: [2, 1, 1], ..RunConfig::default() });
    assert_eq!(s.summary(&o), vec![]);
    let collatz = |mut n: u32| {
        let mut steps = 0i32;
        while n != 1 {
            if steps > 200 {
                break;
            }
            n = if n & 1 == 1 { 3 * n + 1 } else { n >> 1 };
            steps += 1;
        }
        steps
    };
    let want: Vec<i32> = (0..64u32)
        .map(|t| {
            let mut acc = 0i32;
            for i in 0..10i32 {
                if i == (t % 7) as i32 {
                    continue;
                }
                match i % 3 {
                    0 => acc += i,
                    1 => acc -= 2 * i,
                    _ => acc ^= i,
                }
            }
            // HLSL, like Rust, truncates signed division toward zero.
            collatz(t + 1) * 1000 + (acc - 17) / 4 * 10 + (acc - 17) % 4
        })
        .collect();
    assert_eq!(o.buffer("result").unwrap().i32s(), want);
}

#[test]
fn hlsl_and_cuda_atomics_count_across_groups_without_races() {
    let h = compile_src(
        "hist.hlsl",
        Lang::Hlsl,
        r#"RWStructuredBuffer<uint> values : register(u0);
RWStructuredBuffer<uint> hist : register(u1);
RWStructuredBuffer<uint> firsts : register(u2);

[numthreads(32, 1, 1)]
void main(uint3 id : SV_DispatchThreadID) {
    uint old;
    InterlockedAdd(hist[values[id.x] % 8], 1, old);
    uint prev;
    InterlockedCompareExchange(firsts[values[id.x] % 8], 0, id.x + 1, prev);
}
"#,
    );
    let o = h.run("main", "[buffers.values]\nfill = { start = 3, step = 5 }\nlen = 128\n[buffers.hist]\nlen = 8\n[buffers.firsts]\nlen = 8\n", RunConfig { groups: [4, 1, 1], threads: 1, ..RunConfig::default() });
    assert_eq!(h.summary(&o), vec![]);
    let mut want = [0u32; 8];
    let mut first = [0u32; 8];
    for i in 0..128u32 {
        let b = ((3 + 5 * i) % 8) as usize;
        want[b] += 1;
        if first[b] == 0 {
            first[b] = i + 1;
        }
    }
    assert_eq!(o.buffer("hist").unwrap().u32s(), want.to_vec());
    // One worker runs the groups in order, so the first thread of each bin wins.
    assert_eq!(o.buffer("firsts").unwrap().u32s(), first.to_vec());

    let c = compile_src(
        "count.cu",
        Lang::Cuda,
        r#"__global__ void count(const int* v, int* total, int* slots) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (v[i] % 3 == 0) {
        int at = atomicAdd(total, 1);
        slots[at] = i;
    }
}
"#,
    );
    let o = c.run("count", "[buffers.v]\nfill = { start = 0, step = 1 }\nlen = 64\n[buffers.total]\nlen = 1\n[buffers.slots]\nlen = 64\n", RunConfig { groups: [2, 1, 1], group_size: Some([32, 1, 1]), ..RunConfig::default() });
    assert_eq!(c.summary(&o), vec![]);
    assert_eq!(o.buffer("total").unwrap().i32s(), vec![22]);
    let mut slots: Vec<i32> = o.buffer("slots").unwrap().i32s()[..22].to_vec();
    slots.sort();
    assert_eq!(slots, (0..64).filter(|i| i % 3 == 0).collect::<Vec<i32>>());
}

#[test]
fn findings_in_helpers_and_macros_name_the_call_site_and_the_macro() {
    let s = compile_src(
        "h.hlsl",
        Lang::Hlsl,
        r#"RWStructuredBuffer<uint> result : register(u0);
groupshared uint tile[8];
#define PUBLISH(i, v) tile[i] = v

void publish(uint i, uint v) {
    PUBLISH(i, v);
}

[numthreads(8, 1, 1)]
void main(uint3 t : SV_GroupThreadID) {
    publish(0, t.x);
    GroupMemoryBarrierWithGroupSync();
    result[t.x] = tile[0];
}
"#,
    );
    let o = s.run("main", "", RunConfig::default());
    assert_eq!(
        s.summary(&o),
        vec![(
            "groupshared-write-write-race".to_string(),
            6,
            "thread [0,0,0][1,0,0] writes tile[0] (line 6) while thread [0,0,0][0,0,0] wrote it (line 6) with no barrier in between".to_string()
        )]
    );
    let notes = &o.findings[0].notes;
    assert_eq!(notes[0], "seen 6 more times by other threads or iterations");
    assert_eq!(notes[1], "this is in `publish`, called at line 11");
    assert!(notes[2].starts_with("this comes from an expansion of macro `PUBLISH` (defined at h.hlsl:3)"), "{notes:?}");
}
