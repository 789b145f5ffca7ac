//! Launch files bound to kernels: constants, buffer sources, pointer
//! arguments, and clear errors for files that do not fit.

mod common;

use common::*;
use lockstep_emu::{run, Launch, RunConfig, RunError};
use lockstep_ir::*;
use lockstep_source::Span;

/// out[t] = input[t] * scale + bias (cbuffer fields `scale`, `bias`).
fn saxpy() -> Built {
    let mut k = Kb::new("saxpy", [4, 1, 1]);
    let input = k.uav("input", Type::F32, None);
    let out = k.uav("out", Type::F32, None);
    let scale = k.cbuf("scale", Type::F32);
    let bias = k.cbuf("bias", Type::U32);
    k.line("out[t] = input[t] * scale + bias;");
    let t = k.builtin(Builtin::GroupId(0));
    let four = k.u32c(4);
    let g = k.mul(t, four);
    let l = k.tid();
    let i = k.add(g, l);
    let x = k.load(input, i);
    let z = k.u32c(0);
    let s = k.load(scale, z);
    let bb = k.load(bias, z);
    let bf = k.push(Op::Convert(bb), Type::F32);
    let p = k.mul(x, s);
    let r = k.add(p, bf);
    k.store(out, i, r);
    Built::new(k)
}

fn err(b: &Built, text: &str) -> String {
    let l = Launch::parse(text, std::path::Path::new(".")).unwrap();
    match run(&b.db, &b.m, b.f, &l, &RunConfig::default()) {
        Err(RunError::Launch(m)) => m,
        other => panic!("expected a launch error, got {other:?}"),
    }
}

#[test]
fn constants_and_fills_reach_the_kernel() {
    let b = saxpy();
    let o = b.run([2, 1, 1], &launch("[constants]\nscale = 2.5\nbias = 3\n[buffers.input]\nfill = { start = 1, step = 1 }\n"), &RunConfig::default());
    assert!(o.findings.is_empty());
    let want: Vec<f32> = (1..=8).map(|i| i as f32 * 2.5 + 3.0).collect();
    assert_eq!(o.buffer("out").unwrap().f32s(), want);
    // Unspecified inputs are zero.
    let o = b.run([1, 1, 1], &Launch::default(), &RunConfig::default());
    assert_eq!(o.buffer("out").unwrap().f32s(), vec![0.0; 4]);
}

#[test]
fn binary_files_round_trip() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path();
    let data: Vec<u8> = [1.0f32, 2.0, 3.0, 4.0].iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(dir.join("in.bin"), &data).unwrap();
    std::fs::write(dir.join("launch.toml"), "[constants]\nscale = 1\n[buffers.input]\nfile = \"in.bin\"\n[buffers.out]\noutput = \"out.bin\"\nlen = 4\n").unwrap();
    let l = Launch::from_file(&dir.join("launch.toml")).unwrap();
    let b = saxpy();
    let o = b.run([1, 1, 1], &l, &RunConfig::default());
    let out = o.buffer("out").unwrap();
    assert_eq!(out.output, Some(lockstep_emu::Output::File(dir.join("out.bin"))));
    assert_eq!(out.to_bytes(), data);
    assert_eq!(out.to_toml_line(), "out = [1.0, 2.0, 3.0, 4.0]");
    // A file whose size is not whole cells.
    std::fs::write(dir.join("odd.bin"), [0u8; 6]).unwrap();
    let l = Launch::parse("[buffers.input]\nfile = \"odd.bin\"\n", dir).unwrap();
    let e = match run(&b.db, &b.m, b.f, &l, &RunConfig::default()) {
        Err(RunError::Launch(m)) => m,
        other => panic!("{other:?}"),
    };
    assert_eq!(e, format!("buffer `input`: {} has 6 bytes, which do not end on a whole 4-byte cell", dir.join("odd.bin").display()));
}

#[test]
fn launch_files_that_do_not_fit_the_kernel_are_refused_clearly() {
    let b = saxpy();
    assert_eq!(err(&b, "[buffers.inptu]\ndata = [1]\n"), "the launch file gives buffer `inptu`, but the kernel has no buffer of that name (buffers: input, out)");
    assert_eq!(err(&b, "[constants]\nscal = 1\n"), "the launch file gives constant `scal`, but the kernel has no constant or scalar argument of that name (constants: scale, bias)");
    assert_eq!(err(&b, "[constants]\nbias = 1.5\n"), "constant `bias` value 0: 1.5 is not an integer, and it holds u32");
    assert_eq!(err(&b, "[constants]\nbias = -2\n"), "constant `bias` value 0: -2 does not fit, and it holds u32");
    assert_eq!(err(&b, "[constants]\nscale = [1, 2]\n"), "constant `scale` has 1 cells, but 2 values were given");
    assert_eq!(err(&b, "[buffers.input]\ndata = [1, true]\n"), "buffer `input` value 1: true is a boolean, and it holds f32");
    assert_eq!(err(&b, "[buffers.input]\ntype = \"u32\"\n"), "buffer `input` holds f32, but the launch file says `type = \"u32\"`");
    assert_eq!(err(&b, "[buffers.input]\nlen = 4000000000\n"), "buffer `input` would have 4000000000 cells; the emulator allows at most 268435456 (give a smaller `len`)");
}

#[test]
fn dispatch_settings_are_checked() {
    let mut k = Kb::new("k", [1, 1, 1]);
    k.f.entry = Some(EntryInfo::default());
    k.line("return;");
    let b = Built::new(k);
    let e = |c: RunConfig| run(&b.db, &b.m, b.f, &Launch::default(), &c).unwrap_err().to_string();
    assert_eq!(e(RunConfig::default()), "`k` does not declare its group size: give one (--group-size X,Y,Z)");
    let sized = RunConfig { group_size: Some([4, 1, 1]), ..RunConfig::default() };
    assert_eq!(e(RunConfig { wave_size: Some(48), ..sized.clone() }), "wave size 48 must be a power of two from 1 to 64");
    assert_eq!(e(RunConfig { group_filter: Some(vec![[1, 0, 0]]), ..sized.clone() }), "group [1, 0, 0] is outside the dispatch of [1, 1, 1] groups");
    assert_eq!(e(RunConfig { groups: [0, 1, 1], ..sized.clone() }), "group count [0, 1, 1] must be at least 1 on every axis");
    assert_eq!(e(RunConfig { groups: [65536, 65536, 2], ..sized.clone() }), "8589934592 groups are more than the emulator can number (at most 4294967295)");
    assert!(run(&b.db, &b.m, b.f, &Launch::default(), &sized).unwrap().findings.is_empty());
}

/// CUDA style: `kernel(float* data, unsigned n, float k) { i = blockIdx.x*blockDim.x+threadIdx.x; if (i < n) data[i] *= k; }`
#[test]
fn kernel_arguments_bind_by_name_with_pointer_element_types_from_their_uses() {
    let mut k = Kb::new("scale", [8, 1, 1]);
    let sp = Span::new(FILE, 0, 0);
    k.f.params = vec![
        Param { name: "data".into(), ty: Type::Ptr(MemSpace::Device), span: sp, noalias: false },
        Param { name: "n".into(), ty: Type::U32, span: sp, noalias: false },
        Param { name: "k".into(), ty: Type::F32, span: sp, noalias: false },
    ];
    let line = k.line("if (i < n) data[i] *= k;");
    let p = k.push(Op::Param(0), Type::Ptr(MemSpace::Device));
    let n = k.push(Op::Param(1), Type::U32);
    let kk = k.push(Op::Param(2), Type::F32);
    let g = k.builtin(Builtin::GroupId(0));
    let d = k.builtin(Builtin::GroupSize(0));
    let l = k.builtin(Builtin::LocalId(0));
    let gd = k.mul(g, d);
    let i = k.add(gd, l);
    let c = k.cmp(CmpOp::Lt, i, n);
    k.if_then(c, |k| {
        // Through a derived pointer, as `float* q = data + i; *q *= k;` would be.
        let q = k.push(Op::PtrAdd(p, i), Type::Ptr(MemSpace::Device));
        let z = k.u32c(0);
        let m = MemRef { space: MemSpace::Device, root: Root::Ptr(q), index: z };
        let x = k.push(Op::Load(m), Type::F32);
        let y = k.mul(x, kk);
        k.push(Op::Store(m, y), Type::Void);
    });
    let b = Built::new(k);
    let o = b.run([2, 1, 1], &launch("[constants]\nn = 12\nk = 0.5\n[buffers.data]\nfill = { start = 2, step = 2 }\nlen = 16\n"), &RunConfig::default());
    assert!(o.findings.is_empty(), "{:?}", b.summary(&o));
    let data = o.buffer("data").unwrap();
    assert_eq!(data.types, vec![Type::F32]);
    let want: Vec<f32> = (0..16).map(|i| if i < 12 { (2 + 2 * i) as f32 * 0.5 } else { (2 + 2 * i) as f32 }).collect();
    assert_eq!(data.f32s(), want);
    // Past the end of a pointer argument's buffer.
    let o = b.run([2, 1, 1], &launch("[constants]\nn = 16\n[buffers.data]\nlen = 12\n"), &RunConfig::default());
    let oob = |verb: &str| ("out-of-bounds".to_string(), line, format!("thread [1,0,0][4,0,0] {verb} `data` at cell 12, outside its 12 cells (line {line})"));
    assert_eq!(b.summary(&o), vec![oob("reads"), oob("writes")]);
}
