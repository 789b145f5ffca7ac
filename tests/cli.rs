//! The `lockstep` binary as a user runs it: exit codes, output formats, rule docs.

use std::process::Command;

fn lockstep(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lockstep")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn exit_status_is_0_clean_1_findings_2_usage() {
    assert_eq!(lockstep(&["check", "examples/histogram_fixed.cu"]).0, 0);
    assert_eq!(lockstep(&["check", "examples/warp_vote.cu"]).0, 1);
    assert_eq!(lockstep(&["check", "no/such/file.cu"]).0, 2);
    assert_eq!(lockstep(&["check", "--group-size", "0,1,1", "examples/"]).0, 2);
    assert_eq!(lockstep(&["frobnicate"]).0, 2);
    assert_eq!(lockstep(&["check", "Cargo.toml"]).0, 2, "unknown extension without --lang");
}

#[test]
fn json_output_has_the_stable_fields() {
    let (code, out, _) = lockstep(&["check", "--format", "json", "examples/reduction_early_return.hlsl"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    let diags = v["diagnostics"].as_array().unwrap();
    let d = diags.iter().find(|d| d["rule"] == "barrier-in-divergent-cf" && d["line"] == 20).expect("the divergent barrier");
    assert_eq!(d["severity"], "error");
    assert_eq!(d["path"], "examples/reduction_early_return.hlsl");
    assert_eq!((d["column"].as_u64(), d["end_line"].as_u64(), d["end_column"].as_u64()), (Some(5), Some(20), Some(11)));
    let labels = d["labels"].as_array().unwrap();
    assert!(labels.iter().any(|l| l["line"] == 17 && l["column"] == 9 && l["message"].as_str().unwrap().contains("condition")));
    assert!(labels.iter().any(|l| l["line"] == 18 && l["message"].as_str().unwrap().contains("return")));
    assert!(d["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("macro `SYNC`")));
}

#[test]
fn directories_are_walked_and_options_apply() {
    let (code, out, _) = lockstep(&["check", "examples"]);
    assert_eq!(code, 1);
    assert!(out.contains("reduction_early_return.hlsl:20:5"), "{out}");
    assert!(out.contains("warp_vote.cu:11:9"), "{out}");
    // A define changes what the preprocessor keeps.
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let f = dir.join("k.kernel");
    std::fs::write(&f, "__global__ void k() {\n#ifdef BUG\n  if (threadIdx.x) __syncthreads();\n#endif\n}\n").unwrap();
    let path = f.to_str().unwrap();
    assert_eq!(lockstep(&["check", "--lang", "cuda", path]).0, 0);
    assert_eq!(lockstep(&["check", "--lang", "cuda", "-D", "BUG", path]).0, 1);
}

#[test]
fn rules_and_explain() {
    let (code, out, _) = lockstep(&["rules"]);
    assert_eq!(code, 0);
    assert!(out.contains("barrier-in-divergent-cf"));
    let (code, out, _) = lockstep(&["explain", "barrier-in-divergent-cf"]);
    assert_eq!(code, 0);
    for section in ["## What it detects", "## Why it matters on a GPU", "Bad", "Good", "## Fix"] {
        assert!(out.contains(section), "missing {section}");
    }
    assert_eq!(lockstep(&["explain", "no-such-rule"]).0, 2);
}

#[test]
fn one_finding_per_defect_with_a_count() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let f = dir.join("k.cu");
    // A float4 read of the neighbour's cell: four components, one defect.
    std::fs::write(
        &f,
        "__global__ void k(float4* out)\n{\n    __shared__ float4 s[256];\n    s[threadIdx.x] = make_float4(threadIdx.x, 1.0f, 2.0f, 3.0f);\n    out[blockIdx.x * 256 + threadIdx.x] = s[(threadIdx.x + 1) % 256];\n}\n",
    )
    .unwrap();
    let (code, out, _) = lockstep(&["check", "--group-size", "256,1,1", "--format", "json", f.to_str().unwrap()]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    let races: Vec<&serde_json::Value> = v["diagnostics"].as_array().unwrap().iter().filter(|d| d["rule"] == "groupshared-write-then-no-barrier-read").collect();
    assert_eq!(races.len(), 1, "{out}");
    assert_eq!(races[0]["count"], 4, "{out}");
    assert!(races[0]["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("3 more element pairs")), "{out}");
}

#[test]
fn shader_files_lockstep_does_not_read_are_counted_as_skipped() {
    let dir = std::env::temp_dir().join(format!("lockstep-skipped-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("k.cl"), "__kernel void k(__global int* a) { a[get_global_id(0)] = 1; }\n").unwrap();
    for name in ["a.frag", "b.frag", "sub/c.spv", "notes.txt"] {
        std::fs::write(dir.join(name), "").unwrap();
    }
    let (code, _, err) = lockstep(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("skipped 3 files lockstep does not read (2 .frag, 1 .spv)"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn glsl_files_are_read_when_they_are_compute_shaders() {
    let dir = std::env::temp_dir().join(format!("lockstep-glsl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let divergent = "layout(local_size_x = 64) in;\nvoid main() {\n  if (gl_LocalInvocationID.x < 3u)\n    barrier();\n}\n";
    std::fs::write(dir.join("a.comp"), divergent).unwrap();
    std::fs::write(dir.join("b.glsl"), divergent).unwrap();
    std::fs::write(dir.join("lighting.glsl"), "vec3 shade(vec3 n) { return n; }\n").unwrap();
    let (code, out, err) = lockstep(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(out.matches("barrier-in-divergent-cf").count(), 2, "{out}");
    assert!(err.contains("skipped 1 file lockstep does not read (1 .glsl)"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn lang_help_and_errors_name_every_language() {
    let (_, help, _) = lockstep(&["check", "--help"]);
    let (_, _, err) = lockstep(&["check", "--lang", "fortran", "x"]);
    for lang in lockstep_lower::Lang::ALL {
        assert!(help.contains(lang.name()), "{help}");
        assert!(err.contains(lang.name()), "{err}");
    }
}

#[test]
fn a_header_without_kernels_is_checked_function_by_function() {
    let (code, out, err) = lockstep(&["check", "tests/fixtures/cuda/header_helpers.cuh"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("analysed as if called from a kernel in another file"), "{out}");
    let summary = format!("{out}{err}");
    assert!(summary.contains("checked 1 file (0 kernels, 3 device functions of files without a kernel), 2 problems"), "{summary}");
}

#[test]
fn a_header_that_includes_helpers_is_checked_for_its_own_functions_only() {
    let dir = std::env::temp_dir().join(format!("lockstep-header-includes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let helpers = std::fs::read_to_string("tests/fixtures/cuda/header_helpers.cuh").unwrap();
    std::fs::write(dir.join("helpers.cuh"), helpers).unwrap();
    let own = "#include \"helpers.cuh\"\n__device__ void own(float* out) {\n  __shared__ float s[64];\n  s[threadIdx.x] = 1.0f;\n  __syncthreads();\n  out[threadIdx.x] = s[63 - threadIdx.x];\n}\n";
    std::fs::write(dir.join("own.cuh"), own).unwrap();
    let (code, out, err) = lockstep(&["check", dir.join("own.cuh").to_str().unwrap()]);
    let summary = format!("{out}{err}");
    assert_eq!(code, 0, "{summary}");
    assert!(summary.contains("checked 1 file (0 kernels, 1 device function of files without a kernel), 0 problems"), "{summary}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn metal_and_cpp_amp_files_are_read_other_cpp_files_are_not() {
    let dir = std::env::temp_dir().join(format!("lockstep-metal-amp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let metal = "kernel void k(device float* out [[buffer(0)]], uint l [[thread_position_in_threadgroup]]) {\n  if (l < 3)\n    threadgroup_barrier(mem_flags::mem_device);\n  out[l] = 1.0f;\n}\n";
    std::fs::write(dir.join("k.metal"), metal).unwrap();
    let amp = "#include <amp.h>\nusing namespace concurrency;\nvoid f(array_view<float, 1> v) {\n  parallel_for_each(v.extent.tile<64>(), [=](tiled_index<64> t) restrict(amp) {\n    if (t.local[0] < 3)\n      t.barrier.wait();\n  });\n}\n";
    std::fs::write(dir.join("amp.cpp"), amp).unwrap();
    std::fs::write(dir.join("host.cpp"), "int main() { return 0; }\n").unwrap();
    let (code, out, err) = lockstep(&["check", dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(out.matches("barrier-in-divergent-cf").count(), 2, "{out}");
    assert!(out.contains("checked 2 files (2 kernels)"), "{out}");
    assert!(!err.contains("does not read"), "{err}");
    let (code, _, err) = lockstep(&["check", dir.join("host.cpp").to_str().unwrap()]);
    assert_eq!(code, 2, "a C++ file without restrict(amp) needs --lang: {err}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn run_binds_a_cpp_amp_kernels_captured_views_by_name() {
    let dir = std::env::temp_dir().join(format!("lockstep-amp-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scale = "#include <amp.h>\nusing namespace concurrency;\nvoid scale(std::vector<float>& vin, std::vector<float>& vout, float factor) {\n  array_view<const float, 1> in(vin.size(), vin);\n  array_view<float, 1> out(vout.size(), vout);\n  parallel_for_each(out.extent, [=](index<1> i) restrict(amp) {\n    out[i] = in[i] * factor;\n  });\n}\n";
    std::fs::write(dir.join("scale.cpp"), scale).unwrap();
    std::fs::write(dir.join("launch.toml"), "[constants]\nfactor = 2.0\n[buffers.in]\nfill = { start = 1, step = 1 }\nlen = 4\n[buffers.out]\nlen = 4\noutput = \"-\"\n").unwrap();
    let args = ["run", "scale.cpp", "--group-size", "4", "--input", "launch.toml"];
    let out = Command::new(env!("CARGO_BIN_EXE_lockstep")).args(args).current_dir(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "out = [2.0, 4.0, 6.0, 8.0]\n");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn messages_name_the_barrier_of_the_files_language() {
    for (dir, barrier) in [("tests/fixtures/glsl", "barrier()"), ("tests/fixtures/metal", "threadgroup_barrier(mem_flags::mem_threadgroup)"), ("tests/fixtures/cuda", "__syncthreads()")] {
        let (_, out, _) = lockstep(&["check", dir]);
        assert!(out.contains(&format!("no {barrier} is between these accesses")), "{dir}: {out}");
        if !dir.ends_with("cuda") {
            assert!(!out.contains("__syncthreads"), "{dir} names CUDA's barrier: {out}");
        }
    }
}

#[test]
fn a_return_that_only_leaves_a_helper_is_not_labelled_as_skipping_the_barrier() {
    let dir = std::env::temp_dir().join(format!("lockstep-helper-return-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = "__device__ int clamp_lane(int x) {\n    if (x > 31)\n        return 31;\n    return x;\n}\n\n__global__ void k(int* out) {\n    __shared__ int s[64];\n    if (threadIdx.x >= 40)\n        return;\n    s[threadIdx.x] = clamp_lane(threadIdx.x);\n    __syncthreads();\n    out[threadIdx.x] = s[63 - threadIdx.x];\n}\n";
    let path = dir.join("k.cu");
    std::fs::write(&path, src).unwrap();
    let (_, out, _) = lockstep(&["check", "--color", "never", path.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).ok();
    assert!(out.contains("barrier-in-divergent-cf"), "{out}");
    assert_eq!(out.matches("threads that take this `return` never reach the barrier").count(), 1, "only the kernel's own return: {out}");
}

#[test]
fn a_barrier_that_fences_other_memory_is_named_in_the_race_it_does_not_order() {
    let (code, out, _) = lockstep(&["check", "--format", "json", "tests/fixtures/metal/execution_barrier.metal"]);
    assert_eq!(code, 1);
    let v: serde_json::Value = serde_json::from_str(&out).expect("one JSON object");
    let d = v["diagnostics"].as_array().unwrap().iter().find(|d| d["rule"] == "groupshared-read-then-no-barrier-write").expect("the WAR is reported");
    assert!(d["message"].as_str().unwrap().starts_with("WAR race on `buf` with no barrier that fences it between"), "{d}");
    assert!(d.to_string().contains("holds the threads, but fences no group-shared memory"), "{d}");
    assert!(v["diagnostics"].as_array().unwrap().iter().all(|d| d["rule"] != "dead-barrier"), "{out}");
}

#[test]
fn a_witness_names_the_parameter_values_it_needs() {
    // The race needs the barrier under `stride > 0` skipped: a replay of the
    // witness must be told a stride that skips it, and a loop that runs past
    // one iteration of the group needs its bound named too.
    let (_, out, _) = lockstep(&["check", "tests/fixtures/cuda/uniform_barrier_skips.cu"]);
    assert!(out.contains("while thread (1,0,0) writes it (line 19), with `stride` = 0"), "{out}");
    let (_, out, _) = lockstep(&["check", "tests/fixtures/cuda/loops.cu"]);
    let n: i64 = out.split("with `n` = ").nth(1).and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next()).and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{out}"));
    assert!(n >= 2, "a second iteration needs `n` past the first thread's index: {out}");
    // A race no parameter decides names none.
    let (_, out, _) = lockstep(&["check", "tests/fixtures/cuda/race_shared.cu"]);
    assert!(out.contains("thread (2,0,0) writes `s[2]` (line 27) while thread (0,0,0) reads it (line 27)\n"), "{out}");
}
