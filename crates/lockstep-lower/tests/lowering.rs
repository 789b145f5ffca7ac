//! The lowering's contract with the analyses: barriers, builtins, memory
//! spaces and launch shapes come out exactly as the dialect tables say.

use lockstep_ir::{AtomicOp, Barrier, BarrierReduce, Builtin, GlobalKind, MemSpace, Module, Op, Root, Scope, Spaces};
use lockstep_lower::{lower_tree, FileSpans, Lang, Options};
use lockstep_source::FileId;

fn lower(lang: Lang, src: &str, options: &Options) -> Module {
    let tree = lockstep_syntax::parse(lang.grammar().expect("a tree-sitter language"), src).unwrap();
    assert!(!tree.root_node().has_error(), "test source must parse:\n{src}");
    let out = lower_tree(src, &tree, lang, &FileSpans(FileId(0)), options);
    for f in &out.module.functions {
        assert!(lockstep_ir::verify(f).is_empty(), "{:?}", lockstep_ir::verify(f));
    }
    out.module
}

fn barriers(m: &Module) -> Vec<Barrier> {
    m.functions[0].insts.iter().filter_map(|i| if let Op::Barrier(b, _) = i.op { Some(b) } else { None }).collect()
}

fn bar(exec: Scope, mem: Scope, spaces: Spaces) -> Barrier {
    Barrier { exec, mem, spaces, reduce: None }
}

#[test]
fn hlsl_barriers_are_exact() {
    let m = lower(
        Lang::Hlsl,
        "[numthreads(8,1,1)] void k() {\n GroupMemoryBarrier(); GroupMemoryBarrierWithGroupSync();\n DeviceMemoryBarrier(); DeviceMemoryBarrierWithGroupSync();\n AllMemoryBarrier(); AllMemoryBarrierWithGroupSync();\n Barrier(UAV_MEMORY, DEVICE_SCOPE);\n Barrier(GROUP_SHARED_MEMORY, GROUP_SCOPE | GROUP_SYNC);\n Barrier(ALL_MEMORY, DEVICE_SCOPE | GROUP_SYNC);\n}\n",
        &Options::default(),
    );
    assert_eq!(
        barriers(&m),
        vec![
            bar(Scope::None, Scope::Group, Spaces::SHARED),
            bar(Scope::Group, Scope::Group, Spaces::SHARED),
            bar(Scope::None, Scope::Device, Spaces::DEVICE),
            bar(Scope::Group, Scope::Device, Spaces::DEVICE),
            bar(Scope::None, Scope::Device, Spaces::ALL),
            bar(Scope::Group, Scope::Device, Spaces::ALL),
            bar(Scope::None, Scope::Device, Spaces::DEVICE),
            bar(Scope::Group, Scope::Group, Spaces::SHARED),
            bar(Scope::Group, Scope::Device, Spaces::ALL),
        ]
    );
    assert!(m.collective_fences);
}

#[test]
fn cuda_barriers_are_exact() {
    let m = lower(
        Lang::Cuda,
        "__global__ void k(int p) {\n __syncthreads(); int c = __syncthreads_count(p > 0); int a = __syncthreads_and(p); int o = __syncthreads_or(p);\n __syncwarp(); __threadfence_block(); __threadfence(); __threadfence_system();\n cooperative_groups::this_thread_block().sync();\n auto g = cooperative_groups::this_grid(); g.sync();\n}\n",
        &Options::default(),
    );
    let red = |r| Barrier { exec: Scope::Group, mem: Scope::Group, spaces: Spaces::ALL, reduce: Some(r) };
    assert_eq!(
        barriers(&m),
        vec![
            bar(Scope::Group, Scope::Group, Spaces::ALL),
            red(BarrierReduce::Count),
            red(BarrierReduce::And),
            red(BarrierReduce::Or),
            bar(Scope::Wave, Scope::Wave, Spaces::ALL),
            bar(Scope::None, Scope::Group, Spaces::ALL),
            bar(Scope::None, Scope::Device, Spaces::ALL),
            bar(Scope::None, Scope::System, Spaces::ALL),
            bar(Scope::Group, Scope::Group, Spaces::ALL),
            bar(Scope::Device, Scope::Device, Spaces::ALL),
        ]
    );
    assert!(!m.collective_fences);
}

fn builtins(m: &Module) -> Vec<Builtin> {
    let mut v: Vec<Builtin> = m.functions[0].insts.iter().filter_map(|i| if let Op::Builtin(b) = i.op { Some(b) } else { None }).collect();
    v.dedup();
    v
}

#[test]
fn thread_identity_builtins() {
    let m = lower(
        Lang::Cuda,
        "__global__ void k(unsigned* o) { o[0] = threadIdx.y + blockIdx.z + blockDim.x + gridDim.y + warpSize; }\n",
        &Options::default(),
    );
    assert_eq!(builtins(&m), vec![Builtin::LocalId(1), Builtin::GroupId(2), Builtin::GroupSize(0), Builtin::NumGroups(1)]);
    // warpSize is 32 on every NVIDIA GPU: a constant.
    assert!(m.functions[0].insts.iter().any(|i| matches!(i.op, Op::Const(lockstep_ir::Const::Int(32)))));

    let m = lower(
        Lang::Hlsl,
        "RWStructuredBuffer<uint> o;\n[numthreads(4,2,1)] void k(uint3 g : SV_GroupID, uint3 t : SV_GroupThreadID, uint i : SV_GroupIndex, uint3 d : SV_DispatchThreadID) {\n o[0] = g.x + t.y + i + d.x + WaveGetLaneIndex();\n}\n",
        &Options::default(),
    );
    let b = builtins(&m);
    for expected in [Builtin::GroupId(0), Builtin::LocalId(1), Builtin::LocalId(0), Builtin::LaneId] {
        assert!(b.contains(&expected), "{expected:?} missing from {b:?}");
    }
    // [numthreads] fixes the group size: SV_GroupIndex is computed from the local ids, no size builtin is left.
    assert!(!b.iter().any(|x| matches!(x, Builtin::GroupSize(_) | Builtin::LocalIndex)), "{b:?}");
}

#[test]
fn group_sizes_from_source_and_command_line() {
    let m = lower(Lang::Hlsl, "[numthreads(16, 8, 2)] void k() {}\n", &Options::default());
    assert_eq!(m.functions[0].entry.as_ref().unwrap().group_size, Some([16, 8, 2]));
    let m = lower(Lang::Cuda, "__global__ void __launch_bounds__(256) k() {}\n", &Options::default());
    let e = m.functions[0].entry.as_ref().unwrap();
    assert_eq!((e.group_size, e.max_threads), (None, Some(256)));
    let forced = Options { group_size: Some([64, 1, 1]), ..Options::default() };
    let m = lower(Lang::Cuda, "__global__ void k(int* o) { o[threadIdx.x] = blockDim.x; }\n", &forced);
    assert_eq!(m.functions[0].entry.as_ref().unwrap().group_size, Some([64, 1, 1]));
    // blockDim folds to the known size.
    assert!(!builtins(&m).iter().any(|b| matches!(b, Builtin::GroupSize(_))));
}

#[test]
fn memory_spaces_allocations_and_qualifiers() {
    let m = lower(
        Lang::Hlsl,
        "cbuffer C : register(b0) { uint N; float4 Color; };\ngloballycoherent RWStructuredBuffer<uint> Flags : register(u1);\nRWByteAddressBuffer Raw : register(u2);\nStructuredBuffer<float2> In : register(t0);\ngroupshared float Tile[4][8];\n[numthreads(8,1,1)] void k(uint i : SV_GroupIndex) {\n Tile[1][i] = In[i].y + Color.z;\n uint old; InterlockedAdd(Flags[N], 1, old);\n Raw.Store(i * 4, old);\n}\n",
        &Options::default(),
    );
    let g = |name: &str| m.globals.iter().position(|g| g.name == name).unwrap();
    assert_eq!(m.globals[g("Tile")].kind, GlobalKind::GroupShared);
    assert_eq!(m.globals[g("Tile")].dims, vec![4, 8]);
    assert!(m.globals[g("Flags")].coherent);
    assert_eq!(m.globals[g("Flags")].kind, GlobalKind::Uav);
    assert_eq!(m.globals[g("Color")].space, MemSpace::Constant);
    assert_eq!(m.globals[g("In")].cells_per_elem, 2);
    let f = &m.functions[0];
    let accesses: Vec<(String, MemSpace, bool)> = f
        .insts
        .iter()
        .filter_map(|i| {
            let r = i.op.mem_ref()?;
            let Root::Global(gid) = r.root else { return None };
            Some((m.globals[gid.index()].name.clone(), r.space, matches!(i.op, Op::Store(..))))
        })
        .collect();
    assert!(accesses.contains(&("Tile".into(), MemSpace::Shared, true)), "{accesses:?}");
    assert!(accesses.contains(&("In".into(), MemSpace::Constant, false)), "{accesses:?}");
    assert!(accesses.contains(&("Raw".into(), MemSpace::Device, true)), "{accesses:?}");
    assert!(f.insts.iter().any(|i| matches!(&i.op, Op::Atomic(AtomicOp::Add, r, _) if r.space == MemSpace::Device)));
    // Tile[1][i]: the index is 8 + i.
    let store = f.insts.iter().find_map(|i| match &i.op {
        Op::Store(r, _) if matches!(r.root, Root::Global(x) if x.index() == g("Tile")) => Some(r.index),
        _ => None,
    });
    let Some(idx) = store else { panic!("no store to Tile") };
    match f.inst(idx).op {
        Op::Binary(lockstep_ir::BinOp::Add, a, b) => assert_eq!(f.as_int(a).or(f.as_int(b)), Some(8)),
        ref other => panic!("unexpected index {other:?}"),
    }
}

#[test]
fn cuda_pointers_resolve_to_their_allocation() {
    let m = lower(
        Lang::Cuda,
        "__global__ void k(float* out, int n) {\n __shared__ float s[64];\n extern __shared__ float dyn[];\n float* p = &s[4];\n p[threadIdx.x] = 1.0f;\n for (int i = 0; i < n; ++i) out[i] = *p + dyn[i];\n}\n",
        &Options::default(),
    );
    let f = &m.functions[0];
    let roots: Vec<(Root, MemSpace)> = f.insts.iter().filter_map(|i| i.op.mem_ref().map(|r| (r.root, r.space))).collect();
    assert!(roots.iter().all(|(r, _)| !matches!(r, Root::Ptr(_))), "every access resolved: {roots:?}");
    assert!(roots.contains(&(Root::Param(0), MemSpace::Device)));
    let dyn_id = m.globals.iter().position(|g| g.name == "dyn").unwrap();
    assert_eq!(m.globals[dyn_id].kind, GlobalKind::DynamicShared);
}

#[test]
fn arrays_passed_to_helpers_decay_to_pointers_into_them() {
    let m = lower(
        Lang::Cuda,
        "__device__ float get(float* t, int i) { t[i] = 1.0f; return t[i + 1]; }\n__global__ void k(float* out) {\n __shared__ float tile[64];\n out[threadIdx.x] = get(tile, threadIdx.x);\n}\n",
        &Options::default(),
    );
    let f = &m.functions[0];
    let tile = m.globals.iter().position(|g| g.name == "tile").unwrap();
    let tile_accesses = f
        .insts
        .iter()
        .filter(|i| matches!(i.op.mem_ref(), Some(r) if r.root == Root::Global(lockstep_ir::GlobalId(tile as u32)) && r.space == MemSpace::Shared))
        .count();
    assert_eq!(tile_accesses, 2, "{}", lockstep_ir::function_to_string(&m, f));
}

#[test]
fn struct_cells_are_named_as_the_source_names_them() {
    let m = lower(
        Lang::Hlsl,
        "struct Pose { float3 position; float2x2 frame; };\nstruct Particle { Pose pose; uint hist[2]; float mass; };\ngroupshared Particle Parts[16];\nRWStructuredBuffer<Particle> Out : register(u0);\ngroupshared float4 Colors[8];\n[numthreads(16,1,1)] void k(uint i : SV_GroupIndex) {\n Parts[i].mass = 1.0;\n Out[i] = Parts[i];\n Colors[i % 8] = float4(0, 0, 0, 1);\n}\n",
        &Options::default(),
    );
    let g = |name: &str| m.globals.iter().find(|g| g.name == name).unwrap();
    let names = [".pose.position.x", ".pose.position.y", ".pose.position.z", ".pose.frame._m00", ".pose.frame._m01", ".pose.frame._m10", ".pose.frame._m11", ".hist[0]", ".hist[1]", ".mass"];
    for buffer in ["Parts", "Out"] {
        assert_eq!(g(buffer).cell_names, names, "{buffer}");
        assert_eq!(g(buffer).cells_per_elem as usize, names.len());
    }
    assert_eq!(g("Parts").describe_cell(2 * 10 + 9), "Parts[2].mass");
    assert_eq!(g("Parts").describe_cell(7), "Parts[0].hist[0]");
    // Vectors keep their components.
    assert!(g("Colors").cell_names.is_empty());
    assert_eq!(g("Colors").describe_cell(4 * 3 + 3), "Colors[3].w");
}

#[test]
fn launches_in_host_code_reach_the_kernels_through_preprocessing_and_the_host_cut() {
    let src = "#define ROWS 4\n__global__ void k(float* p) { p[threadIdx.x] = 0; }\n__global__ void free_k(float* p) { p[0] = 1; }\nvoid host(float* p, int n) {\n  dim3 block(32, ROWS);\n  k<<<1, block>>>(p);\n  k<<<(n + 31) / 32, block>>>(p);\n}\n";
    let mut db = lockstep_source::SourceDb::new();
    let file = db.add("launch.cu", src);
    let out = lockstep_lower::compile(&mut db, file, Lang::Cuda, &Options::default());
    let k = out.module.functions.iter().find(|f| f.name == "k").and_then(|f| f.entry.as_ref()).unwrap();
    assert_eq!(k.launches.len(), 2);
    let (lo, hi) = (k.launches[0].span.lo as usize, k.launches[0].span.hi as usize);
    assert_eq!(&src[lo..hi], "k<<<1, block>>>(p)");
    // Both launches give the block; they disagree on the grid's x, agree on its y and z.
    assert_eq!((k.group_size, k.grid_size), (Some([32, 4, 1]), [None, Some(1), Some(1)]));
    let unlaunched = out.module.functions.iter().find(|f| f.name == "free_k").and_then(|f| f.entry.as_ref()).unwrap();
    assert_eq!((unlaunched.launches.len(), unlaunched.group_size, unlaunched.grid_size), (0, None, [None; 3]));
    let forced = Options { grid_size: Some([1, 1, 1]), ..Options::default() };
    let out = lockstep_lower::compile(&mut db, file, Lang::Cuda, &forced);
    assert!(out.module.functions.iter().all(|f| f.entry.as_ref().unwrap().single_group()));
}

/// Preprocesses and lowers, as `check` does (the predefined macros spell Metal's and C++ AMP's keywords).
fn compile_source(lang: Lang, name: &str, src: &str) -> Module {
    let mut db = lockstep_source::SourceDb::new();
    let file = db.add(name, src);
    let c = lockstep_lower::compile(&mut db, file, lang, &Options::default());
    assert!(!c.has_errors && c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    for f in &c.module.functions {
        assert!(lockstep_ir::verify(f).is_empty(), "{:?}", lockstep_ir::verify(f));
    }
    c.module
}

#[test]
fn metal_barriers_decode_their_mem_flags() {
    let m = compile_source(
        Lang::Metal,
        "k.metal",
        "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device uint* o [[buffer(0)]]) {\n threadgroup_barrier(mem_flags::mem_threadgroup);\n threadgroup_barrier(mem_flags::mem_device);\n threadgroup_barrier(mem_flags::mem_threadgroup | mem_flags::mem_texture);\n threadgroup_barrier(mem_flags::mem_none);\n simdgroup_barrier(mem_flags::mem_threadgroup);\n atomic_thread_fence(mem_flags::mem_device, memory_order_relaxed, thread_scope_device);\n atomic_thread_fence(mem_flags::mem_threadgroup, memory_order_relaxed, thread_scope_threadgroup);\n}\n",
    );
    assert_eq!(
        barriers(&m),
        vec![
            bar(Scope::Group, Scope::Group, Spaces::SHARED),
            bar(Scope::Group, Scope::Group, Spaces::DEVICE),
            bar(Scope::Group, Scope::Group, Spaces::ALL),
            bar(Scope::Group, Scope::Group, Spaces::NONE),
            bar(Scope::Wave, Scope::Wave, Spaces::SHARED),
            bar(Scope::None, Scope::Device, Spaces::DEVICE),
            bar(Scope::None, Scope::Group, Spaces::SHARED),
        ]
    );
}

#[test]
fn metal_parameter_attributes_are_thread_identity_and_launch_facts() {
    let m = compile_source(
        Lang::Metal,
        "k.metal",
        "[[max_total_threads_per_threadgroup(256)]]\nkernel void k(device uint* o [[buffer(0)]], uint2 t [[thread_position_in_threadgroup]], uint g [[threadgroup_position_in_grid]],\n uint lane [[thread_index_in_simdgroup]], uint width [[threads_per_simdgroup]], uint3 n [[threadgroups_per_grid]]) {\n o[0] = t.y + g + lane + width + n.z;\n}\n",
    );
    let b = builtins(&m);
    for expected in [Builtin::LocalId(1), Builtin::GroupId(0), Builtin::LaneId, Builtin::WaveSize, Builtin::NumGroups(2)] {
        assert!(b.contains(&expected), "{expected:?} missing from {b:?}");
    }
    let e = m.functions[0].entry.as_ref().unwrap();
    assert_eq!((e.max_threads, e.group_size, e.wave_size), (Some(256), None, None), "the SIMD-group width is the device's");
    assert_eq!(m.functions[0].params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["o"]);
}

#[test]
fn cpp_amp_lambdas_are_kernels_with_their_tiles_barriers_and_captures() {
    let src = "#include <amp.h>\nusing namespace concurrency;\nvoid f(std::vector<float>& data, int scale) {\n const int rows = 64;\n array_view<float, 2> v(rows, 32, data);\n parallel_for_each(v.extent.tile<4, 8>(), [=](tiled_index<4, 8> t) restrict(amp) {\n  t.barrier.wait();\n  t.barrier.wait_with_global_memory_fence();\n  t.barrier.wait_with_tile_static_memory_fence();\n  all_memory_fence(t);\n  v[t.global] = (float)scale;\n });\n parallel_for_each(v.extent, [=](index<2> i) restrict(amp) { v[i] = 0.0f; });\n}\n";
    let m = compile_source(Lang::CppAmp, "k.cpp", src);
    assert_eq!(m.functions.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(), ["f", "f#2"]);
    assert_eq!(
        barriers(&m),
        vec![
            bar(Scope::Group, Scope::Group, Spaces::ALL),
            bar(Scope::Group, Scope::Group, Spaces::DEVICE),
            bar(Scope::Group, Scope::Group, Spaces::SHARED),
            bar(Scope::None, Scope::Group, Spaces::ALL),
        ]
    );
    // tile<4, 8>: 8 threads along x (the last dimension), 4 along y; 64 x 32 elements are 4 x 16 tiles.
    let e = m.functions[0].entry.as_ref().unwrap();
    assert_eq!((e.group_size, e.grid_size), (Some([8, 4, 1]), [Some(4), Some(16), Some(1)]));
    // Captured views and values are arguments in declaration order; `rows` is a constant, `data` host memory.
    assert_eq!(m.functions[0].params.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["scale", "v"]);
    // Without tiles the group size is the runtime's.
    assert_eq!(m.functions[1].entry.as_ref().unwrap().group_size, None);
    assert!(!m.functions[1].insts.iter().any(|i| matches!(i.op, Op::Barrier(..))));
}

#[test]
fn glsl_control_barriers_decode_their_scopes_and_semantics() {
    // (execution, memory, storage, semantics) as the Vulkan memory model numbers them.
    let m = compile_source(
        Lang::Glsl,
        "k.comp",
        "#version 450\nlayout(local_size_x = 64) in;\nuniform int n;\nvoid main() {\n controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);\n controlBarrier(gl_ScopeSubgroup, gl_ScopeSubgroup, gl_StorageSemanticsShared | gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);\n controlBarrier(gl_ScopeWorkgroup, gl_ScopeDevice, gl_StorageSemanticsBuffer, gl_SemanticsAcquireRelease);\n controlBarrier(gl_ScopeWorkgroup, gl_ScopeWorkgroup, gl_StorageSemanticsShared, gl_SemanticsRelaxed);\n controlBarrier(n, n, n, n);\n}\n",
    );
    assert_eq!(
        barriers(&m),
        vec![
            bar(Scope::Group, Scope::Group, Spaces::SHARED),
            bar(Scope::Wave, Scope::Wave, Spaces::ALL),
            bar(Scope::Group, Scope::Device, Spaces::DEVICE),
            bar(Scope::Group, Scope::Group, Spaces::NONE),
            // Arguments lockstep cannot evaluate: the widest barrier a compute shader has.
            bar(Scope::Group, Scope::Device, Spaces::ALL),
        ]
    );
}

#[test]
fn sub_group_width_attributes_fix_the_width_only_to_one_hardware_has() {
    let kernel = |attribute: &str| {
        let src = format!("kernel __attribute__(({attribute})) void k(global uint* o) {{ o[get_global_id(0)] = get_sub_group_local_id(); }}\n");
        let m = compile_source(Lang::OpenCl, "k.cl", &src);
        m.functions[0].entry.as_ref().unwrap().wave_size
    };
    assert_eq!(kernel("intel_reqd_sub_group_size(16)"), Some(16));
    assert_eq!(kernel("qcom_reqd_sub_group_size(\"half\")"), Some(64));
    assert_eq!(kernel("qcom_reqd_sub_group_size(\"full\")"), Some(128));
    // A width the compiler would reject leaves it the device's.
    for bad in ["intel_reqd_sub_group_size(-1)", "intel_reqd_sub_group_size(24)", "intel_reqd_sub_group_size(99999999999)", "qcom_reqd_sub_group_size(\"quarter\")", "qcom_reqd_sub_group_size()"] {
        assert_eq!(kernel(bad), None, "{bad}");
    }
}

#[test]
fn short_circuit_values_carry_no_empty_name() {
    let m = lower(
        Lang::Cuda,
        "__global__ void k(const bool* m, float* out, int w) {\n bool inside = threadIdx.x < w;\n if (m != nullptr && inside && !m[0]) return;\n out[threadIdx.x] = 1.0f;\n}\n",
        &Options::default(),
    );
    let f = &m.functions[0];
    assert!(f.insts.iter().any(|i| matches!(i.op, Op::Phi(_))), "the `&&` chain joins its values in a phi");
    assert!(f.insts.iter().all(|i| i.name.as_deref() != Some("")), "an unnamed temporary is shown by its source text, not as ``");
    assert!(f.insts.iter().any(|i| i.name.as_deref() == Some("inside")));
}
