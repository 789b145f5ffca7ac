//! `lockstep run` end to end: exit codes, outputs, human and JSON findings.

use std::path::Path;
use std::process::{Command, Output};

const REDUCE: &str = r#"RWStructuredBuffer<uint> data : register(u0);
RWStructuredBuffer<uint> sums : register(u1);
groupshared uint tile[64];

[numthreads(64, 1, 1)]
void reduce(uint3 tid : SV_GroupThreadID, uint3 gid : SV_GroupID) {
    tile[tid.x] = data[gid.x * 64 + tid.x];
    GroupMemoryBarrierWithGroupSync();
    for (uint s = 32; s > 0; s >>= 1) {
        if (tid.x < s)
            tile[tid.x] += tile[tid.x + s];
#ifndef BROKEN
        GroupMemoryBarrierWithGroupSync();
#endif
    }
    if (tid.x == 0)
        sums[gid.x] = tile[0];
}
"#;

const LAUNCH: &str = "[buffers.data]\nfill = { start = 1, step = 1 }\nlen = 256\n[buffers.sums]\nlen = 4\noutput = \"-\"\n";

/// A scratch folder with the kernel and its launch, removed when dropped.
fn dir(name: &str) -> tempfile::TempDir {
    let d = tempfile::Builder::new().prefix(&format!("lockstep-emu-cli-{name}-")).tempdir().unwrap();
    std::fs::write(d.path().join("reduce.hlsl"), REDUCE).unwrap();
    std::fs::write(d.path().join("launch.toml"), LAUNCH).unwrap();
    d
}

fn lockstep(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockstep")).current_dir(cwd).args(args).output().expect("lockstep runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn a_correct_kernel_exits_0_and_prints_its_output_buffer() {
    let scratch = dir("ok");
    let d = scratch.path();
    let o = lockstep(d, &["run", "reduce.hlsl", "--groups", "4", "--input", "launch.toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "sums = [2080, 6176, 10272, 14368]\n");
    assert!(text(&o.stderr).contains("ran 4 groups (256 threads"), "{}", text(&o.stderr));
    for s in ["reverse", "random"] {
        let o = lockstep(d, &["run", "reduce.hlsl", "--groups", "4", "--input", "launch.toml", "--scheduler", s, "--seed", "3"]);
        assert_eq!((o.status.code(), text(&o.stdout)), (Some(0), "sums = [2080, 6176, 10272, 14368]\n".to_string()), "{s}");
    }
}

#[test]
fn a_missing_barrier_exits_1_with_the_hazard_in_both_formats() {
    let scratch = dir("broken");
    let d = scratch.path();
    let o = lockstep(d, &["run", "reduce.hlsl", "--groups", "4", "--input", "launch.toml", "-D", "BROKEN"]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(out.starts_with("error[groupshared-read-then-no-barrier-write]: thread [0,0,0][1,0,0] writes tile[1] (line 11) in iteration 1 while thread [0,0,0][0,0,0] read it (line 11) in iteration 6 with no barrier in between\n"), "{out}");
    assert!(out.contains("reduce.hlsl:11:13"), "{out}");
    let o = lockstep(d, &["run", "reduce.hlsl", "--groups", "4", "--input", "launch.toml", "-D", "BROKEN", "--format", "json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&text(&o.stdout)).expect("one JSON document");
    assert_eq!(v["diagnostics"][0]["rule"], "groupshared-read-then-no-barrier-write");
    assert_eq!(v["diagnostics"][0]["line"], 11);
    assert_eq!(v["diagnostics"][0]["labels"][0]["message"], "thread [0,0,0][0,0,0] read it here");
    assert_eq!(v["outputs"]["sums"].as_array().map(|a| a.len()), Some(4));
    // Without race detection only the (wrong) results remain.
    let o = lockstep(d, &["run", "reduce.hlsl", "--groups", "4", "--input", "launch.toml", "-D", "BROKEN", "--no-race-detection"]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn output_files_are_written_next_to_the_launch_file() {
    let scratch = dir("files");
    let d = scratch.path();
    std::fs::write(d.join("launch.toml"), LAUNCH.replace("output = \"-\"", "output = \"sums.bin\"")).unwrap();
    let o = lockstep(d, &["run", "reduce.hlsl", "--groups", "2", "--entry", "reduce", "--input", "launch.toml", "--only-group", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let bytes = std::fs::read(d.join("sums.bin")).unwrap();
    let sums: Vec<u32> = bytes.chunks(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
    assert_eq!(sums, vec![0, 6176, 0, 0], "only group 1 ran");
}

#[test]
fn cuda_runaway_loops_and_divergent_barriers_are_reported() {
    let scratch = dir("cuda");
    let d = scratch.path();
    std::fs::write(
        d.join("k.cu"),
        "__global__ void spin(int* out) {\n    int i = 1;\n    while (i != 0) { i += 2; }\n    out[threadIdx.x] = i;\n}\n\
         __global__ void half(int* out) {\n    if (threadIdx.x < 16) {\n        __syncthreads();\n    }\n    out[threadIdx.x] = 1;\n}\n",
    )
    .unwrap();
    let o = lockstep(d, &["run", "k.cu", "--entry", "spin", "--group-size", "4", "--max-steps", "500", "--zero-fill"]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(out.starts_with("error[runaway-loop]: thread [0,0,0][0,0,0] ran 500 steps without finishing; stopped in the loop at line 3 (the limit is --max-steps 500)"), "{out}");
    let o = lockstep(d, &["run", "k.cu", "--entry", "half", "--group-size", "32"]);
    assert_eq!(o.status.code(), Some(2), "an argument the launch file does not give is refused");
    assert!(text(&o.stderr).contains("to give argument `out`"), "{}", text(&o.stderr));
    let o = lockstep(d, &["run", "k.cu", "--entry", "half", "--group-size", "32", "--zero-fill"]);
    assert_eq!(o.status.code(), Some(1));
    let out = text(&o.stdout);
    assert!(out.starts_with("error[barrier-in-divergent-cf]: only 16 of 32 threads of group [0,0,0] reached this barrier"), "{out}");
    assert!(out.contains("16 threads finished (line 11) without reaching it: [0,0,0][16..31,0,0]"), "{out}");
}

#[test]
fn a_run_that_would_not_fit_in_memory_is_refused_before_it_starts() {
    let scratch = dir("memory");
    let d = scratch.path();
    std::fs::write(d.join("big.toml"), "[buffers.data]\nlen = 268435456\n[buffers.sums]\nlen = 4\n").unwrap();
    let o = lockstep(d, &["run", "reduce.hlsl", "--groups", "4", "--input", "big.toml", "--max-memory", "1G"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.starts_with("error: this run would need about 8."), "{err}");
    assert!(err.contains("device buffers 2.00 GiB, race-detection shadow 6.00 GiB"), "{err}");
    assert!(err.contains("more than the 1.00 GiB allowed (--max-memory)"), "{err}");
    let o = lockstep(d, &["run", "reduce.hlsl", "--groups", "4", "--input", "launch.toml", "--max-memory", "64M"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = lockstep(d, &["run", "reduce.hlsl", "--input", "launch.toml", "--max-memory", "lots"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("`lots` is not a size"), "{}", text(&o.stderr));
}

#[test]
fn usage_and_input_errors_exit_2() {
    let scratch = dir("errors");
    let d = scratch.path();
    let cases: &[(&[&str], &str)] = &[
        (&["run", "missing.hlsl"], "missing.hlsl"),
        (&["run", "reduce.hlsl", "--groups", "4,x"], "`x` is not a non-negative integer"),
        (&["run", "reduce.hlsl", "--entry", "main"], "no kernel named `main` in reduce.hlsl (kernels: reduce)"),
        (&["run", "reduce.hlsl", "--input", "nope.toml"], "cannot read launch file nope.toml"),
        (&["run", "reduce.hlsl", "--wave-size", "48"], "wave size 48 must be a power of two from 1 to 64"),
    ];
    for (args, want) in cases {
        let o = lockstep(d, args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(text(&o.stderr).contains(want), "{args:?}: {}", text(&o.stderr));
    }
    std::fs::write(d.join("bad.toml"), "[buffers.data]\ndata = [1.5]\n").unwrap();
    let o = lockstep(d, &["run", "reduce.hlsl", "--input", "bad.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(text(&o.stderr), "error: launch file: buffer `data` value 0: 1.5 is not an integer, and it holds u32\n");
    std::fs::write(d.join("syntax.toml"), "[buffers.data\n").unwrap();
    let o = lockstep(d, &["run", "reduce.hlsl", "--input", "syntax.toml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).starts_with("error: syntax.toml: malformed launch file: "), "{}", text(&o.stderr));
}

#[test]
fn a_pipeline_constant_without_a_default_must_be_given() {
    let scratch = dir("override");
    let d = scratch.path();
    let kernel = "override step: u32;\n@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n\n@compute @workgroup_size(4)\nfn fill(@builtin(local_invocation_index) i: u32) {\n    out[i] = i * step;\n}\n";
    std::fs::write(d.join("fill.wgsl"), kernel).unwrap();
    std::fs::write(d.join("fill.toml"), "[buffers.out]\nlen = 4\noutput = \"-\"\n").unwrap();
    let o = lockstep(d, &["run", "fill.wgsl", "--input", "fill.toml"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    assert!(text(&o.stderr).contains("does not give pipeline constant `step`"), "{}", text(&o.stderr));
    std::fs::write(d.join("given.toml"), "[constants]\nstep = 3\n[buffers.out]\nlen = 4\noutput = \"-\"\n").unwrap();
    let o = lockstep(d, &["run", "fill.wgsl", "--input", "given.toml"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("out = [0, 3, 6, 9]"), "{}", text(&o.stdout));
}
