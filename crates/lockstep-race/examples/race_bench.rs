//! Cost of the race analysis on a generated corpus:
//! `cargo run --release -p lockstep-race --example race_bench [MEGABYTES]`.
//!
//! Kernels mix shared and global accesses at thread-id indices, guards,
//! barriers and loops, with known (`--group-size 256`) and unknown block
//! sizes. Prints lowering time, analysis time, accesses, and the pairs the
//! solver was asked about against the all-pairs count.

use lockstep_analysis::{Cfg, Uniformity};
use lockstep_lower::{compile, Lang, Options};
use lockstep_source::SourceDb;
use std::time::{Duration, Instant};

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

fn index(r: &mut Rng) -> String {
    match r.below(6) {
        0 => "threadIdx.x".into(),
        1 => format!("threadIdx.x + {}", r.below(4)),
        2 => format!("threadIdx.x ^ {}", 1 + r.below(15)),
        3 => format!("(threadIdx.x + {}) % 256", r.below(256)),
        4 => "threadIdx.x / 2".into(),
        _ => format!("{}", r.below(256)),
    }
}

fn kernel(r: &mut Rng, n: usize) -> String {
    let mut s = format!("__global__ void k{n}(const float* in, float* out, int count)\n{{\n    __shared__ float a[512];\n    __shared__ float b[512];\n    float acc = 0.0f;\n");
    let looped = r.below(2) == 0;
    if looped {
        s.push_str("    for (int it = 0; it < count; ++it) {\n");
    }
    for _ in 0..(8 + r.below(40)) {
        let guard = match r.below(4) {
            0 => format!("if (threadIdx.x < {}) ", 1 + r.below(256)),
            1 => format!("if (threadIdx.x == {}) ", r.below(256)),
            _ => String::new(),
        };
        let arr = if r.below(2) == 0 { "a" } else { "b" };
        let line = match r.below(12) {
            0 | 1 => "__syncthreads();".to_string(),
            2..=5 => format!("{guard}{arr}[{}] = acc + 1.0f;", index(r)),
            6..=9 => format!("{guard}acc += {arr}[{}];", index(r)),
            10 => format!("{guard}out[blockIdx.x * blockDim.x + {}] = acc;", index(r)),
            _ => "acc += in[blockIdx.x * blockDim.x + threadIdx.x];".to_string(),
        };
        s.push_str("        ");
        s.push_str(&line);
        s.push('\n');
    }
    if looped {
        s.push_str("    }\n");
    }
    s.push_str("    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;\n}\n\n");
    s
}

fn main() {
    let megabytes: f64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2.0);
    let mut r = Rng(0x5eed_1234_abcd_ef01);
    let (mut bytes, mut files, mut kernels) = (0usize, 0usize, 0usize);
    let (mut lower, mut analysis) = (Duration::ZERO, Duration::ZERO);
    let (mut accesses, mut all_pairs, mut queries, mut findings, mut intervals) = (0usize, 0usize, 0usize, 0usize, 0usize);
    let mut slowest = Duration::ZERO;
    while (bytes as f64) < megabytes * 1_000_000.0 {
        let mut text = String::new();
        for _ in 0..20 {
            text.push_str(&kernel(&mut r, kernels));
            kernels += 1;
        }
        bytes += text.len();
        let options = Options { group_size: if files % 2 == 0 { Some([256, 1, 1]) } else { None }, ..Options::default() };
        files += 1;
        let mut db = SourceDb::new();
        let file = db.add_bytes(std::path::Path::new(&format!("bench{files}.cu")), text.as_bytes());
        let t = Instant::now();
        let compiled = compile(&mut db, file, Lang::Cuda, &options);
        lower += t.elapsed();
        let m = &compiled.module;
        for id in m.entries() {
            let f = m.function(id);
            let t = Instant::now();
            let cfg = Cfg::new(f);
            let uni = Uniformity::analyze(f, &cfg);
            let (found, stats) = lockstep_race::analyze_with_stats(m, f, &cfg, &uni);
            let took = t.elapsed();
            analysis += took;
            slowest = slowest.max(took);
            findings += found.len();
            accesses += stats.accesses;
            intervals += stats.intervals;
            queries += stats.queries;
            all_pairs += stats.accesses * (stats.accesses + 1) / 2;
        }
    }
    println!("corpus: {:.2} MB, {files} files, {kernels} kernels, {accesses} shared/global accesses, {intervals} intervals", bytes as f64 / 1e6);
    println!("lowering: {lower:.2?}; race analysis (cfg + uniformity + races): {analysis:.2?} ({:.1} us/kernel, slowest kernel {slowest:.2?})", analysis.as_secs_f64() * 1e6 / kernels.max(1) as f64);
    println!(
        "solver queries: {queries} of {all_pairs} access pairs ({:.1}%), {:.1} queries/kernel; {findings} findings",
        100.0 * queries as f64 / all_pairs.max(1) as f64,
        queries as f64 / kernels.max(1) as f64
    );
}
