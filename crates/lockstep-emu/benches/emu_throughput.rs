//! Emulator throughput: 65 536 threads (256 groups of 256) × 16 iterations,
//! each iteration separated by barriers, with and without race detection.
//! The same kernel in OpenCL C is bench/oclgrind/stencil.cl.
//!
//! ```text
//! cargo bench -p lockstep-emu --bench emu_throughput [-- --workers N]
//! ```
//!
//! Kernel (per thread; `lid` local id, `gid` global id):
//! ```c
//! float acc = in[gid];
//! for (uint it = 0; it < 16; it++) {
//!     tile[lid] = acc;
//!     barrier();
//!     acc = acc * 0.5f + tile[(lid + 1) & 255];
//!     barrier();
//! }
//! out[gid] = acc;
//! ```

use lockstep_emu::{run, Launch, RunConfig};
use lockstep_ir::*;
use lockstep_source::{FileId, SourceDb, Span};
use std::time::Instant;

const GROUP: u32 = 256;
const GROUPS: u32 = 256;
const ITERS: u32 = 16;

fn kernel() -> (Module, FuncId) {
    let sp = Span::new(FileId(0), 0, 0);
    let mut m = Module::default();
    let global = |name: &str, kind, space, len| Global {
        name: name.into(),
        kind,
        space,
        elem: Type::F32,
        dims: vec![len],
        cells_per_elem: 1,
        cell_names: Vec::new(),
        len: Some(len),
        coherent: false,
        texel_width: 0,
        open_value: None,
        init: vec![],
        span: sp,
    };
    let tile = m.add_global(global("tile", GlobalKind::GroupShared, MemSpace::Shared, GROUP as u64));
    let input = m.add_global(global("in", GlobalKind::Uav, MemSpace::Device, (GROUP * GROUPS) as u64));
    let output = m.add_global(global("out", GlobalKind::Uav, MemSpace::Device, (GROUP * GROUPS) as u64));
    let mem = |g: GlobalId, space, index| MemRef { space, root: Root::Global(g), index };
    let bar = Barrier { exec: Scope::Group, mem: Scope::Group, spaces: Spaces::SHARED, reduce: None };

    let mut f = Function::new("stencil", sp);
    f.entry = Some(EntryInfo { group_size: Some([GROUP, 1, 1]), ..EntryInfo::default() });
    let (entry, header, body, exit) = (f.add_block(sp), f.add_block(sp), f.add_block(sp), f.add_block(sp));
    let c = |f: &mut Function, b, v: u64| f.push(b, Op::Const(Const::Int(v)), Type::U32, sp);
    let lid = f.push(entry, Op::Builtin(Builtin::LocalId(0)), Type::U32, sp);
    let grp = f.push(entry, Op::Builtin(Builtin::GroupId(0)), Type::U32, sp);
    let size = c(&mut f, entry, GROUP as u64);
    let base = f.push(entry, Op::Binary(BinOp::Mul, grp, size), Type::U32, sp);
    let gid = f.push(entry, Op::Binary(BinOp::Add, base, lid), Type::U32, sp);
    let acc0 = f.push(entry, Op::Load(mem(input, MemSpace::Device, gid)), Type::F32, sp);
    let zero = c(&mut f, entry, 0);
    f.set_term(entry, Terminator::Jump(header), sp);

    let it = f.push(header, Op::Phi(vec![]), Type::U32, sp);
    let acc = f.push(header, Op::Phi(vec![]), Type::F32, sp);
    let n = c(&mut f, header, ITERS as u64);
    let go = f.push(header, Op::Cmp(CmpOp::Lt, it, n), Type::Bool, sp);
    f.set_term(header, Terminator::Branch { cond: go, then_to: body, else_to: exit }, sp);

    f.push(body, Op::Store(mem(tile, MemSpace::Shared, lid), acc), Type::Void, sp);
    f.push(body, Op::Barrier(bar, None), Type::Void, sp);
    let one = c(&mut f, body, 1);
    let mask = c(&mut f, body, (GROUP - 1) as u64);
    let l1 = f.push(body, Op::Binary(BinOp::Add, lid, one), Type::U32, sp);
    let j = f.push(body, Op::Binary(BinOp::And, l1, mask), Type::U32, sp);
    let nb = f.push(body, Op::Load(mem(tile, MemSpace::Shared, j)), Type::F32, sp);
    let half = f.push(body, Op::Const(Const::Float(0.5)), Type::F32, sp);
    let scaled = f.push(body, Op::Binary(BinOp::Mul, acc, half), Type::F32, sp);
    let next = f.push(body, Op::Binary(BinOp::Add, scaled, nb), Type::F32, sp);
    f.push(body, Op::Barrier(bar, None), Type::Void, sp);
    let it1 = f.push(body, Op::Binary(BinOp::Add, it, one), Type::U32, sp);
    f.set_term(body, Terminator::Jump(header), sp);
    f.inst_mut(it).op = Op::Phi(vec![(entry, zero), (body, it1)]);
    f.inst_mut(acc).op = Op::Phi(vec![(entry, acc0), (body, next)]);

    f.push(exit, Op::Store(mem(output, MemSpace::Device, gid), acc), Type::Void, sp);
    f.set_term(exit, Terminator::Return(None), sp);
    assert!(verify(&f).is_empty(), "{:?}", verify(&f));
    let id = m.add_function(f);
    (m, id)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let workers = args.iter().position(|a| a == "--workers").and_then(|i| args.get(i + 1)).and_then(|w| w.parse().ok()).unwrap_or(0);
    let (m, f) = kernel();
    let mut db = SourceDb::new();
    db.add("stencil.hlsl", "");
    let launch = Launch::parse("[buffers.in]\nfill = { start = 0, step = 1 }\n", std::path::Path::new(".")).expect("launch parses");
    let threads = (GROUP * GROUPS) as f64;
    println!("emulator: {} threads x {ITERS} barrier-separated iterations, workers = {}", GROUP * GROUPS, if workers == 0 { "all cores".to_string() } else { workers.to_string() });
    let mut reference: Option<Vec<u64>> = None;
    for detect_races in [true, false] {
        let config = RunConfig { groups: [GROUPS, 1, 1], detect_races, threads: workers, ..RunConfig::default() };
        let (mut best, mut best_cpu) = (f64::MAX, f64::MAX);
        let mut instructions = 0;
        for _ in 0..3 {
            let (start, cpu0) = (Instant::now(), cpu_seconds());
            let o = run(&db, &m, f, &launch, &config).expect("bench kernel runs");
            best = best.min(start.elapsed().as_secs_f64());
            if let (Some(a), Some(b)) = (cpu0, cpu_seconds()) {
                best_cpu = best_cpu.min(b - a);
            }
            instructions = o.stats.thread_instructions;
            assert!(o.findings.is_empty(), "the bench kernel is race-free");
            let out = o.buffer("out").expect("out buffer").cells.clone();
            match &reference {
                Some(r) => assert_eq!(r, &out, "same results with and without detection"),
                None => reference = Some(out),
            }
        }
        let per_cpu = if best_cpu < f64::MAX && best_cpu > 0.0 {
            format!(", {:.1} M per CPU-second ({best_cpu:.2} CPU-s)", instructions as f64 / best_cpu / 1e6)
        } else {
            String::new()
        };
        println!(
            "race detection {:>3}: {:.3} s, {} thread-instructions, {:.1} M thread-instructions/s{per_cpu}, {:.2} M thread-iterations/s",
            if detect_races { "on" } else { "off" },
            best,
            instructions,
            instructions as f64 / best / 1e6,
            threads * ITERS as f64 / best / 1e6
        );
    }
}

/// User + system CPU time of this process so far (Linux; clock ticks of 1/100 s).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest: Vec<&str> = stat.rsplit_once(") ")?.1.split(' ').collect();
    let ticks: u64 = rest.get(11)?.parse::<u64>().ok()? + rest.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}
