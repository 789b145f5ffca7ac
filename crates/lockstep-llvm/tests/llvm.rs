//! `.ll` fixtures through the reader, the engine and the writer: exact
//! removed lines, byte identity of everything else, the dump, every knob,
//! malformed input, and real clang output when clang is installed.

use lockstep_dbe::{Mode, Options};
use lockstep_ir::*;
use lockstep_llvm::*;
use lockstep_source::SourceDb;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> (PathBuf, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/llvm").join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (path, text)
}

fn config(mode: Mode) -> OptConfig {
    OptConfig { options: Options { mode, ..Options::default() }, ..OptConfig::default() }
}

/// Runs `opt` and returns the 1-based `.ll` lines removed, after checking
/// that the output is the input minus exactly those whole lines.
fn removed_lines(name: &str, cfg: &OptConfig) -> (Vec<u32>, OptResult) {
    let (path, text) = fixture(name);
    let mut db = SourceDb::new();
    let r = optimize(&mut db, &path, &text, cfg);
    let lines: Vec<u32> = r.removals.iter().map(|x| db.location(x.span).0.line).collect();
    let expected: String =
        text.split_inclusive('\n').enumerate().filter(|(i, _)| !lines.contains(&(*i as u32 + 1))).map(|(_, l)| l).collect();
    assert_eq!(r.output, expected, "{name}: output is not the input minus the removed lines");
    for l in &lines {
        let line = text.lines().nth(*l as usize - 1).unwrap();
        assert!(line.contains("barrier"), "{name}:{l} removed a line that is no barrier call: {line}");
    }
    (lines, r)
}

#[test]
fn nvptx_seed_scenario_removes_the_two_barriers_after_the_read() {
    for mode in [Mode::Categories, Mode::Precise, Mode::Local] {
        assert_eq!(removed_lines("nvptx_seed.ll", &config(mode)).0, vec![20, 21], "{mode:?}");
    }
}

#[test]
fn dump_names_the_source_line_from_debug_info_and_the_four_flags() {
    let (_, r) = removed_lines("nvptx_seed.ll", &config(Mode::Categories));
    let dump: Vec<String> = r.removals.iter().map(dump_line).collect();
    assert_eq!(
        dump,
        vec![
            " Removed dead synch: [neighb.cu:9] in function _Z6neighbPf\nRead above: 1, Write above: 0, Read below: 0, Write below: 0 (shared 1000, device 0000)",
            " Removed dead synch: [neighb.cu:10] in function _Z6neighbPf\nRead above: 1, Write above: 0, Read below: 0, Write below: 1 (shared 1000, device 0001)",
        ]
    );
}

#[test]
fn without_debug_info_the_dump_names_the_ll_line() {
    let (lines, r) = removed_lines("malformed.ll", &config(Mode::Categories));
    assert_eq!(lines, vec![15, 16]);
    assert!(r.removals[0].location.ends_with("malformed.ll:15"), "{}", r.removals[0].location);
    assert!(dump_line(&r.removals[1])
        .contains("malformed.ll:16] in function fine\nRead above: 0, Write above: 0, Read below: 0, Write below: 0"));
}

#[test]
fn chains_keep_one_barrier_and_reductions_and_named_barriers_stay() {
    let (lines, r) = removed_lines("nvptx_chains.ll", &config(Mode::Categories));
    // five: the first four of five go; moved: the first and third; special: the
    // plain barrier right after the reduction (which also synchronizes).
    assert_eq!(lines, vec![12, 13, 14, 15, 27, 31, 41]);
    assert!(r.skipped.is_empty());
}

#[test]
fn war_and_loop_back_edges_keep_their_barriers() {
    let (lines, _) = removed_lines("nvptx_loops.ll", &config(Mode::Categories));
    // Only @split's barriers, which have nothing around them, go.
    assert_eq!(lines, vec![46, 50]);
}

#[test]
fn amdgpu_and_spir_forms() {
    // The s.barrier after the read and the one after it; the fences stay.
    assert_eq!(removed_lines("amdgpu_seed.ll", &config(Mode::Categories)).0, vec![19, 21]);
    // barrier(LOCAL) after the read orders only local memory, where nothing
    // follows; the private scratch array never counts; barrier(GLOBAL) orders
    // the global write against the global read.
    assert_eq!(removed_lines("spir_seed.ll", &config(Mode::Categories)).0, vec![18]);
}

#[test]
fn calls_are_analysed_and_opaque_ones_are_unsafe_unless_assumed_safe() {
    assert_eq!(removed_lines("calls.ll", &config(Mode::Categories)).0, Vec::<u32>::new());
    let mut cfg = config(Mode::Categories);
    cfg.options.assume_calls_safe = true;
    assert_eq!(removed_lines("calls.ll", &cfg).0, vec![26, 28]);
}

#[test]
fn precise_mode_separates_distinct_shared_arrays_only() {
    assert_eq!(removed_lines("precise.ll", &config(Mode::Precise)).0, vec![13]);
    assert_eq!(removed_lines("precise.ll", &config(Mode::Categories)).0, Vec::<u32>::new());
}

#[test]
fn knobs_restrict_what_is_processed() {
    let mut cfg = config(Mode::Categories);
    cfg.options.inter_block = false;
    // @split's second barrier sits in a block of its own: without inter-block
    // propagation its entry counts as "anything".
    assert_eq!(removed_lines("nvptx_loops.ll", &cfg).0, vec![46]);

    let mut cfg = config(Mode::Categories);
    cfg.max_blocks = Some(1);
    let (lines, r) = removed_lines("nvptx_loops.ll", &cfg);
    assert_eq!(lines, Vec::<u32>::new());
    let names: Vec<&str> = r.skipped.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, vec!["stencil", "split"]);

    let mut cfg = config(Mode::Categories);
    cfg.skip_functions = vec!["five".into(), "moved".into()];
    assert_eq!(removed_lines("nvptx_chains.ll", &cfg).0, vec![41]);

    let mut cfg = config(Mode::Categories);
    cfg.max_functions = Some(1);
    let (lines, r) = removed_lines("nvptx_chains.ll", &cfg);
    assert_eq!(lines, vec![12, 13, 14, 15]);
    assert_eq!(r.skipped.len(), 2);
    assert!(r.skipped.iter().all(|(_, why)| why.contains("--max-functions")));
}

#[test]
fn an_unreadable_function_is_left_alone_and_the_rest_is_processed() {
    let (path, text) = fixture("malformed.ll");
    let mut db = SourceDb::new();
    let ll = read(&mut db, &path, &text);
    let broken = &ll.functions[0];
    assert_eq!(broken.name, "broken");
    assert!(broken.opaque.as_deref().is_some_and(|why| why.contains("frobnicate")), "{:?}", broken.opaque);
    assert!(ll.module.function(broken.id).blocks.is_empty());
    assert!(ll.functions[1].opaque.is_none());
    let (_, r) = removed_lines("malformed.ll", &config(Mode::Categories));
    assert_eq!(r.skipped.len(), 1);
    assert!(r.skipped[0].1.starts_with("not read"));
}

#[test]
fn the_reader_maps_spaces_kernels_barriers_and_debug_lines() {
    let (path, text) = fixture("nvptx_seed.ll");
    let mut db = SourceDb::new();
    let ll = read(&mut db, &path, &text);
    assert_eq!(ll.target, Target::Nvptx);
    let g = &ll.module.globals[0];
    assert_eq!((g.name.as_str(), g.kind.clone(), g.space, g.len), ("tile", GlobalKind::GroupShared, MemSpace::Shared, Some(128)));
    let f = ll.module.function(ll.functions[0].id);
    assert!(f.entry.is_some(), "kernel from !nvvm.annotations");
    assert!(verify(f).is_empty(), "{:?}", verify(f));
    let ops: Vec<&Op> = f.blocks[0].insts.iter().map(|v| &f.inst(*v).op).collect();
    assert!(ops.iter().any(|o| matches!(o, Op::Builtin(Builtin::LocalId(0)))));
    // The store goes through a GEP of @tile folded into the memory reference.
    let store = ops.iter().find_map(|o| match o {
        Op::Store(m, _) if m.space == MemSpace::Shared => Some(*m),
        _ => None,
    });
    assert!(matches!(store, Some(MemRef { root: Root::Global(GlobalId(0)), .. })), "{store:?}");
    let bars: Vec<Value> = f.blocks[0].insts.iter().copied().filter(|v| f.inst(*v).op.is_barrier()).collect();
    assert_eq!(bars.len(), 3);
    assert_eq!(ll.functions[0].debug.get(&bars[1]), Some(&("neighb.cu".to_string(), 9)));
    assert_eq!(db.location(f.inst(bars[0]).span).0.line, 15);

    let (path, text) = fixture("spir_seed.ll");
    let ll = read(&mut db, &path, &text);
    let f = ll.module.function(ll.functions[0].id);
    assert!(f.entry.is_some());
    let spaces: Vec<Spaces> = f
        .insts
        .iter()
        .filter_map(|i| match i.op {
            Op::Barrier(b, _) => Some(b.spaces),
            _ => None,
        })
        .collect();
    assert_eq!(spaces, vec![Spaces::SHARED, Spaces::SHARED, Spaces::DEVICE]);
    assert!(f.insts.iter().any(|i| matches!(i.op, Op::Store(MemRef { space: MemSpace::Private, .. }, _))));
}

#[test]
fn typed_pointer_ir_is_read_too() {
    // Categories: the field write/read pair and the read/other-array write pair both need barriers.
    assert_eq!(removed_lines("nvptx_typed_pointers.ll", &config(Mode::Categories)).0, vec![23]);
    // Precise: the read of `pairs` and the write of `flags` touch different arrays.
    assert_eq!(removed_lines("nvptx_typed_pointers.ll", &config(Mode::Precise)).0, vec![21, 23]);
}

#[test]
fn gep_offsets_are_counted_in_cells() {
    let text = r#"target triple = "nvptx64-nvidia-cuda"
%pair = type { float, [3 x i32] }
@g = internal addrspace(3) global [8 x %pair] undef
@w = internal addrspace(3) global [16 x i32] undef
define void @f(i64 %i) {
  %a = getelementptr inbounds [8 x %pair], ptr addrspace(3) @g, i64 0, i64 5, i32 1, i64 2
  store i32 0, ptr addrspace(3) %a
  %b = getelementptr inbounds i8, ptr addrspace(3) @w, i64 12
  store i32 0, ptr addrspace(3) %b
  %c = getelementptr inbounds [8 x %pair], ptr addrspace(3) @g, i64 0, i64 %i
  store i32 0, ptr addrspace(3) %c
  ret void
}
"#;
    let ll = read(&mut SourceDb::new(), Path::new("gep.ll"), text);
    let f = ll.module.function(ll.functions[0].id);
    assert!(ll.functions[0].opaque.is_none(), "{:?}", ll.functions[0].opaque);
    let stores: Vec<MemRef> = f.blocks[0]
        .insts
        .iter()
        .filter_map(|v| match f.inst(*v).op {
            Op::Store(m, _) => Some(m),
            _ => None,
        })
        .collect();
    // pair 5 starts at cell 20; field 1 at +1; element 2 of it at +2.
    assert_eq!(stores[0].root, Root::Global(GlobalId(0)));
    assert_eq!(f.as_int(stores[0].index), Some(23));
    // A byte offset over an i32 array: 12 bytes are 3 cells (exactly: the store is aligned).
    assert_eq!(stores[1].root, Root::Global(GlobalId(1)));
    let Op::Binary(BinOp::ExactDiv, bytes, size) = f.inst(stores[1].index).op else { panic!("{:?}", f.inst(stores[1].index).op) };
    assert_eq!((f.as_int(bytes), f.as_int(size)), (Some(12), Some(4)));
    // A variable index is scaled by the 4 cells of a pair.
    let Op::Binary(BinOp::Mul, i, stride) = f.inst(stores[2].index).op else { panic!("{:?}", f.inst(stores[2].index).op) };
    assert_eq!((f.inst(i).op.clone(), f.as_int(stride)), (Op::Param(0), Some(4)));
}

/// A small deterministic generator for the mutation test.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

#[test]
fn mutated_input_never_panics_and_only_barrier_lines_go() {
    const JUNK: &[&str] =
        &["(", ")", "[", "]", "{", "}", "<", ">", ",", "%", "@", "!", "\"", "=", "x", "-7", "label", "ptr", "call", "\n", "é", ":"];
    let names = [
        "nvptx_seed.ll",
        "nvptx_chains.ll",
        "nvptx_loops.ll",
        "amdgpu_seed.ll",
        "spir_seed.ll",
        "calls.ll",
        "precise.ll",
        "nvptx_typed_pointers.ll",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for name in names {
        let (path, text) = fixture(name);
        for _ in 0..150 {
            let mut t: Vec<char> = text.chars().collect();
            for _ in 0..1 + rng.below(4) {
                let at = rng.below(t.len());
                match rng.below(3) {
                    0 => {
                        let n = rng.below(40).min(t.len() - at);
                        t.drain(at..at + n);
                    }
                    1 => t.splice(at..at, JUNK[rng.below(JUNK.len())].chars()).for_each(drop),
                    _ => t.truncate(at),
                }
                if t.is_empty() {
                    break;
                }
            }
            let mutated: String = t.into_iter().collect();
            let mut db = SourceDb::new();
            for mode in [Mode::Local, Mode::Categories, Mode::Precise] {
                let r = optimize(&mut db, &path, &mutated, &config(mode));
                // The output is the input minus whole lines that call a barrier.
                let mut out = r.output.split_inclusive('\n').peekable();
                for line in mutated.split_inclusive('\n') {
                    if out.peek() == Some(&line) {
                        out.next();
                    } else {
                        assert!(line.contains("barrier"), "removed a non-barrier line: {line:?}");
                    }
                }
                assert!(out.next().is_none());
            }
        }
    }
}

const CUDA_KERNEL: &str = r#"
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

// The seed scenario, and five barriers between a write and a read.
__global__ void neighbours(float *out) {
  __shared__ float tile[256];
  unsigned t = __nvvm_read_ptx_sreg_tid_x();
  tile[t] = (float)t;
  __syncthreads();
  float v = tile[t ^ 1];
  __syncthreads();
  __syncthreads();
  out[t] = v;
}

__global__ void five(int *out) {
  __shared__ int buf[128];
  unsigned t = __nvvm_read_ptx_sreg_tid_x();
  buf[t] = (int)t;
  __syncthreads();
  __syncthreads();
  __syncthreads();
  __syncthreads();
  __syncthreads();
  out[t] = buf[(t + 1) % 128];
}
"#;

fn find_clang() -> Option<String> {
    ["clang-19", "clang"]
        .into_iter()
        .find(|c| std::process::Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()))
        .map(String::from)
}

/// Compiles `source` (saved as `file` in a scratch directory) with clang and
/// the given arguments; None, with a skip message, when clang is missing or
/// cannot compile for the target here.
fn clang_ir(file: &str, source: &str, args: &[&str]) -> Option<String> {
    let Some(clang) = find_clang() else {
        eprintln!("skipped: neither clang-19 nor clang is on PATH");
        return None;
    };
    let dir = std::env::temp_dir().join(format!("lockstep-llvm-clang-{}-{file}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(file), source).unwrap();
    let out =
        std::process::Command::new(&clang).args(args).args(["-S", "-emit-llvm", "-g", "-o", "-", file]).current_dir(&dir).output().unwrap();
    std::fs::remove_dir_all(&dir).ok();
    if !out.status.success() {
        eprintln!("skipped: {clang} cannot compile {file} here: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    Some(String::from_utf8(out.stdout).unwrap())
}

const CUDA: &[&str] = &["-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", "--cuda-gpu-arch=sm_80"];

/// Runs `opt` in categories mode; returns the removals' `file:line`s after
/// checking that every function was read and only barrier lines went.
fn removed_locations(text: &str) -> Vec<String> {
    let path = Path::new("clang-output.ll");
    let ll = read(&mut SourceDb::new(), path, text);
    let opaque: Vec<_> = ll.functions.iter().filter_map(|f| f.opaque.as_ref().map(|why| (&f.name, why))).collect();
    assert!(opaque.is_empty(), "{opaque:?}\n{text}");
    for f in &ll.module.functions {
        assert!(verify(f).is_empty(), "{}: {:?}", f.name, verify(f));
    }
    let r = optimize(&mut SourceDb::new(), path, text, &config(Mode::Categories));
    assert_eq!(text.lines().count() - r.output.lines().count(), r.removals.len());
    r.removals.iter().map(|x| x.location.clone()).collect()
}

#[test]
fn real_clang_output_for_a_cuda_kernel() {
    let Some(text) = clang_ir("kernels.cu", CUDA_KERNEL, &[CUDA, &["-O1"]].concat()) else { return };
    // Source lines of the removed __syncthreads: 12 and 13 in `neighbours`, four of five in `five`.
    assert_eq!(
        removed_locations(&text),
        vec!["kernels.cu:12", "kernels.cu:13", "kernels.cu:21", "kernels.cu:22", "kernels.cu:23", "kernels.cu:24"]
    );
}

const CUDA_REDUCTION: &str = r#"
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __device__ __attribute__((device))
extern __shared__ float scratch[];
__device__ __attribute__((noinline)) void bump(float *s, unsigned t) { s[t] += 1.0f; }
__global__ void reduce(const float *in, float *out, int n) {
  __shared__ float part[256];
  unsigned t = __nvvm_read_ptx_sreg_tid_x();
  float acc = 0;
  for (int i = __nvvm_read_ptx_sreg_ctaid_x() * 256 + t; i < n; i += 65536) acc += in[i];
  part[t] = acc;
  scratch[t] = acc;
  __syncthreads();
  for (unsigned s = 128; s > 0; s >>= 1) {
    if (t < s) part[t] += part[t + s];
    __syncthreads();
  }
  bump(scratch, t);
  int c = __nvvm_bar0_popc(part[0] > 0);
  switch (t & 3) { case 0: part[t] = 1; break; case 1: part[t] = 2; break; default: break; }
  __syncthreads();
  if (t == 0) __nvvm_atom_add_gen_f(out, part[0] + c);
  __nvvm_membar_gl();
  __syncthreads();
}
"#;

#[test]
fn real_clang_output_with_loops_calls_and_reductions_at_every_level() {
    for level in ["-O0", "-O1", "-O3"] {
        let Some(text) = clang_ir("reduce.cu", CUDA_REDUCTION, &[CUDA, &[level]].concat()) else { return };
        // Only the barrier at the very end orders nothing; the loop's barrier
        // orders the next iteration's reads and writes.
        assert_eq!(removed_locations(&text), vec!["reduce.cu:25"], "{level}");
    }
}

const HIP_KERNEL: &str = r#"
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define SYNC() do { __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup"); __builtin_amdgcn_s_barrier(); __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup"); } while (0)
__global__ void neighbours(float *out) {
  __shared__ float tile[256];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  tile[t] = (float)t;
  SYNC();
  float v = tile[t ^ 1];
  SYNC();
  SYNC();
  out[t] = v;
}
"#;

#[test]
fn real_clang_output_for_amdgpu() {
    let args = ["-x", "hip", "--cuda-device-only", "-nogpuinc", "-nogpulib", "--offload-arch=gfx90a", "-O1"];
    let Some(text) = clang_ir("kernels.hip", HIP_KERNEL, &args) else { return };
    assert_eq!(removed_locations(&text), vec!["kernels.hip:11", "kernels.hip:12"]);
}

const OPENCL_KERNEL: &str = r#"
__kernel void neighbours(__global float *out) {
  __local float tile[256];
  size_t t = get_local_id(0);
  tile[t] = (float)t;
  barrier(CLK_LOCAL_MEM_FENCE);
  float v = tile[t ^ 1];
  barrier(CLK_LOCAL_MEM_FENCE);
  barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  out[get_global_id(0)] = v;
}
"#;

#[test]
fn real_clang_output_for_spir() {
    let args = ["-x", "cl", "-cl-std=CL1.2", "-target", "spir64", "-O1"];
    let Some(text) = clang_ir("kernels.cl", OPENCL_KERNEL, &args) else { return };
    assert_eq!(removed_locations(&text), vec!["kernels.cl:8", "kernels.cl:9"]);
}

#[test]
fn noalias_parameters_are_promised_apart_in_precise_mode() {
    assert_eq!(removed_lines("noalias.ll", &config(Mode::Precise)).0, vec![10]);
}
