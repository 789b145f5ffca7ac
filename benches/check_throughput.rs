//! `cargo bench --bench check_throughput`: throughput of `lockstep check` on a
//! generated corpus of realistic kernels, side by side with tree-sitter
//! parse-only time on the same input. Prints MB/s, lines/s and the ratio.

use lockstep::check::check_file_with;
use lockstep_checks::CheckOptions;
use lockstep_lower::{Lang, Options};
use std::path::{Path, PathBuf};
use std::time::Instant;

const HLSL_KERNEL: &str = r#"
cbuffer ParamsNUM : register(b0) { uint CountNUM; float ScaleNUM; };
RWStructuredBuffer<float> OutNUM : register(u0);
StructuredBuffer<float> InNUM : register(t0);
groupshared float TileNUM[256];

float WeightNUM(uint i) { return (float)(i & 7) * ScaleNUM; }

[numthreads(256, 1, 1)]
void ReduceNUM(uint3 dtid : SV_DispatchThreadID, uint3 gid : SV_GroupID, uint li : SV_GroupIndex)
{
    float v = dtid.x < CountNUM ? InNUM[dtid.x] * WeightNUM(li) : 0.0;
    TileNUM[li] = v;
    GroupMemoryBarrierWithGroupSync();
    [unroll]
    for (uint s = 128; s > 0; s >>= 1)
    {
        if (li < s)
            TileNUM[li] += TileNUM[li + s];
        GroupMemoryBarrierWithGroupSync();
    }
    if (li == 0)
        OutNUM[gid.x] = TileNUM[0];
}
"#;

const CUDA_KERNEL: &str = r#"
__device__ float clampNUM(float x, float lo, float hi) { return fminf(fmaxf(x, lo), hi); }

__global__ void scanNUM(const float* __restrict__ in, float* out, int n)
{
    __shared__ float buf[2][256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int pout = 0, pin = 1;
    buf[pout][threadIdx.x] = i < n ? clampNUM(in[i], 0.0f, 1.0f) : 0.0f;
    __syncthreads();
    for (int offset = 1; offset < 256; offset *= 2) {
        pout = 1 - pout;
        pin = 1 - pout;
        if (threadIdx.x >= offset)
            buf[pout][threadIdx.x] = buf[pin][threadIdx.x] + buf[pin][threadIdx.x - offset];
        else
            buf[pout][threadIdx.x] = buf[pin][threadIdx.x];
        __syncthreads();
    }
    if (i < n)
        out[i] = buf[pout][threadIdx.x];
}
"#;

/// Writes `files` files of about `bytes_per_file` bytes each, half HLSL, half CUDA.
fn corpus(dir: &Path, files: usize, bytes_per_file: usize) -> (Vec<PathBuf>, usize, usize) {
    std::fs::create_dir_all(dir).unwrap();
    let mut paths = Vec::new();
    let (mut bytes, mut lines) = (0, 0);
    for f in 0..files {
        let (kernel, ext) = if f % 2 == 0 { (HLSL_KERNEL, "hlsl") } else { (CUDA_KERNEL, "cu") };
        let mut text = String::new();
        let mut k = 0;
        while text.len() < bytes_per_file {
            text.push_str(&kernel.replace("NUM", &format!("{f}_{k}")));
            k += 1;
        }
        bytes += text.len();
        lines += text.lines().count();
        let p = dir.join(format!("k{f}.{ext}"));
        std::fs::write(&p, text).unwrap();
        paths.push(p);
    }
    (paths, bytes, lines)
}

fn parallel<T: Send>(paths: &[PathBuf], work: impl Fn(&Path) -> T + Sync) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let out: Vec<std::sync::Mutex<Option<T>>> = paths.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(p) = paths.get(i) else { break };
                *out[i].lock().unwrap() = Some(work(p));
            });
        }
    });
    out.into_iter().map(|m| m.into_inner().unwrap().unwrap()).collect()
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut best = f64::MAX;
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed().as_secs_f64());
        last = Some(r);
    }
    (best, last.unwrap())
}

fn main() {
    let dir = std::env::temp_dir().join("lockstep-bench-corpus");
    let files: usize = std::env::var("BENCH_FILES").ok().and_then(|v| v.parse().ok()).unwrap_or(16);
    let per_file: usize = std::env::var("BENCH_FILE_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(384 << 10);
    let (paths, bytes, lines) = corpus(&dir, files, per_file);
    let mb = bytes as f64 / (1 << 20) as f64;
    println!("corpus: {files} files, {mb:.1} MB, {lines} lines; {} worker threads", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));

    let (parse_s, _) = best_of(3, || {
        parallel(&paths, |p| {
            let text = std::fs::read_to_string(p).unwrap();
            let lang = Lang::from_path(p).unwrap();
            lockstep_syntax::parse(lang.grammar(), &text).map(|t| t.root_node().child_count()).unwrap_or(0)
        })
    });
    let (pp_parse_s, _) = best_of(3, || {
        parallel(&paths, |p| {
            let mut db = lockstep_source::SourceDb::new();
            let file = db.add(p, std::fs::read_to_string(p).unwrap());
            let out = lockstep_preprocess::preprocess(&mut db, file, &Default::default(), &lockstep_preprocess::FsLoader);
            let lang = Lang::from_path(p).unwrap();
            lockstep_syntax::parse(lang.grammar(), &out.text).map(|t| t.root_node().child_count()).unwrap_or(0)
        })
    });
    let check = |checks: CheckOptions| {
        let (s, found) = best_of(3, || {
            parallel(&paths, |p| check_file_with(p, Lang::from_path(p).unwrap(), &Options::default(), checks).unwrap().diagnostics.len())
        });
        (s, found.iter().sum::<usize>())
    };
    let (divergence_s, _) = check(CheckOptions { dead_barriers: None, races: false, ..CheckOptions::default() });
    let (dead_s, _) = check(CheckOptions { races: false, ..CheckOptions::default() });
    let (check_s, found) = check(CheckOptions::default());
    let row = |name: &str, s: f64| println!("{name:<28} {s:>8.3} s {:>9.2} MB/s {:>12.0} lines/s", mb / s, lines as f64 / s);
    row("tree-sitter parse only", parse_s);
    row("preprocess + parse", pp_parse_s);
    row("check: divergence only", divergence_s);
    row("check: + dead barriers", dead_s);
    row("lockstep check (full)", check_s);
    println!("divergence check / parse-only: {:.2}x", divergence_s / parse_s);
    println!("divergence + dead barriers / parse-only: {:.2}x", dead_s / parse_s);
    println!("full check / parse-only: {:.2}x  (diagnostics: {found})", check_s / parse_s);
}
