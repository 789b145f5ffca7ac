//! The race analysis on lowered kernels: exact witnesses, loop-carried
//! iterations, and the conflict query of the dead-barrier engine.

use lockstep_analysis::{Cfg, Uniformity};
use lockstep_ir::{Module, Op, Value};
use lockstep_lower::{compile, Lang, Options};
use lockstep_race::{analyze, may_conflict_across, Hazard, Rule};
use lockstep_source::SourceDb;

fn lower(src: &str, lang: Lang) -> (SourceDb, Module) {
    let mut db = SourceDb::new();
    let name = if lang == Lang::Cuda { "k.cu" } else { "k.hlsl" };
    let file = db.add_bytes(std::path::Path::new(name), src.as_bytes());
    let m = compile(&mut db, file, lang, &Options::default()).module;
    (db, m)
}

fn line_of(db: &SourceDb, m: &Module, v: Value) -> u32 {
    let f = &m.functions[m.entries().next().unwrap().index()];
    db.location(f.inst(v).span).0.line
}

const TILED: &str = "groupshared float T[8][8];
StructuredBuffer<float> A : register(t0);
RWStructuredBuffer<float> C : register(u0);
[numthreads(8, 8, 1)]
void main(uint3 g : SV_GroupThreadID, uint3 d : SV_DispatchThreadID) {
    float sum = 0;
    for (uint t = 0; t < 64; t += 8) {
        T[g.y][g.x] = A[d.y * 64 + t + g.x];
        GroupMemoryBarrierWithGroupSync();
        for (uint k = 0; k < 8; k++)
            sum += T[g.y][k];
    }
    if (d.x < 64)
        C[d.y * 64 + d.x] = sum;
}
";

#[test]
fn tiled_loop_war_has_threads_cell_and_iterations() {
    let (db, m) = lower(TILED, Lang::Hlsl);
    let id = m.entries().next().unwrap();
    let f = m.function(id);
    let cfg = Cfg::new(f);
    let uni = Uniformity::analyze(f, &cfg);
    let found = analyze(&m, f, &cfg, &uni);
    assert_eq!(found.len(), 1, "{found:#?}");
    let x = &found[0];
    assert_eq!((x.rule, x.hazard), (Rule::SharedWar, Some(Hazard::War)));
    let e = x.earlier.unwrap();
    assert_eq!((line_of(&db, &m, x.later.inst), line_of(&db, &m, e.inst)), (8, 11));
    assert_eq!((x.later.iteration, e.iteration), (Some(1), Some(0)));
    let w = x.witness.as_ref().unwrap();
    assert!(w.exact);
    // The writer's cell T[y][x] equals the reader's T[y'][k]: same row, the
    // writer's column is the reader's k, and the threads differ.
    let (writer, reader) = (w.threads[0], w.threads[1]);
    assert_eq!(writer[1], reader[1]);
    assert_ne!(writer, reader);
    assert_eq!(w.cell, Some(writer[1] * 8 + writer[0]));
}

fn accesses(m: &Module) -> Vec<Value> {
    let f = m.function(m.entries().next().unwrap());
    f.blocks.iter().flat_map(|b| b.insts.iter().copied()).filter(|&v| matches!(f.inst(v).op, Op::Load(_) | Op::Store(..))).collect()
}

#[test]
fn conflict_query_for_the_dead_barrier_engine() {
    let src = "__global__ void k(float* out) {
    __shared__ float s[256];
    s[threadIdx.x] = 1.0f;
    __syncthreads();
    float own = s[threadIdx.x];
    float next = s[(threadIdx.x + 1) % 256];
    out[blockIdx.x * blockDim.x + threadIdx.x] = own + next;
}
";
    let (_db, m) = lower(src, Lang::Cuda);
    let f = m.function(m.entries().next().unwrap());
    let cfg = Cfg::new(f);
    let acc = accesses(&m);
    // store s[t]; load s[t]; load s[(t+1)%256]; (the global store last)
    let (store, own, next) = (acc[0], acc[1], acc[2]);
    assert!(!may_conflict_across(&m, f, &cfg, store, own, Some([256, 1, 1])));
    assert!(may_conflict_across(&m, f, &cfg, store, next, Some([256, 1, 1])));
    // Without a known size the block may be wider than 256: (t+1)%256 still meets t.
    assert!(may_conflict_across(&m, f, &cfg, store, next, None));
    // Not memory accesses at all: conservatively true.
    assert!(may_conflict_across(&m, f, &cfg, Value(0), own, None));
}

#[test]
fn many_loops_in_one_interval_stay_cheap() {
    // Forty barrier-free loops in a row: interval states must not multiply.
    let mut src = String::from("__global__ void k(float* out, int n) {\n    __shared__ float s[256];\n    float acc = 0.0f;\n");
    for i in 0..40 {
        src.push_str(&format!("    for (int i{i} = 0; i{i} < n; ++i{i}) s[threadIdx.x] = acc + {i}.0f;\n"));
    }
    src.push_str("    __syncthreads();\n    out[blockIdx.x * blockDim.x + threadIdx.x] = s[threadIdx.x ^ 1];\n}\n");
    let (_db, m) = lower(&src, Lang::Cuda);
    let f = m.function(m.entries().next().unwrap());
    let cfg = Cfg::new(f);
    let uni = Uniformity::analyze(f, &cfg);
    let start = std::time::Instant::now();
    let (found, stats) = lockstep_race::analyze_with_stats(&m, f, &cfg, &uni);
    assert!(found.is_empty(), "{found:#?}");
    assert_eq!(stats.accesses, 42);
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
}
