//! Each hazard kind, detected with the exact thread pair and lines, and
//! findings rendered through the shared diagnostic renderers.

mod common;

use common::*;
use lockstep_emu::{RunConfig, Scheduler};
use lockstep_ir::*;

fn rr() -> RunConfig {
    RunConfig::default()
}

fn expect(v: &[(&str, u32, &str)]) -> Vec<(String, u32, String)> {
    v.iter().map(|(r, l, m)| (r.to_string(), *l, m.to_string())).collect()
}

#[test]
fn loop_carried_hazards_of_a_matmul_without_its_second_barrier_name_both_iterations() {
    let (b, [_, load, product, _]) = matmul(false);
    let o = b.run([1, 1, 1], &launch(MATMUL_LAUNCH), &rr());
    let raw = "groupshared-write-then-no-barrier-read";
    let war = "groupshared-read-then-no-barrier-write";
    let m = |s: &str| s.replace("LOAD", &load.to_string()).replace("PROD", &product.to_string());
    let want = [
        (raw, product, m("thread [0,0,0][1,0,0] reads As[0][0] (line PROD) in iteration 1 while thread [0,0,0][0,0,0] wrote it (line LOAD) in iteration 2 with no barrier in between")),
        (war, load, m("thread [0,0,0][1,0,0] writes As[0][1] (line LOAD) in iteration 2 while thread [0,0,0][0,0,0] read it (line PROD) in iteration 1 with no barrier in between")),
        (raw, product, m("thread [0,0,0][0,1,0] reads Bs[0][0] (line PROD) in iteration 1 while thread [0,0,0][0,0,0] wrote it (line LOAD) in iteration 2 with no barrier in between")),
        (war, load, m("thread [0,0,0][0,1,0] writes Bs[1][0] (line LOAD) in iteration 2 while thread [0,0,0][0,0,0] read it (line PROD) in iteration 1 with no barrier in between")),
    ];
    let want: Vec<(String, u32, String)> = want.iter().map(|(r, l, s)| (r.to_string(), *l, s.clone())).collect();
    assert_eq!(b.summary(&o), want);
    // The secondary label points at the other access.
    let d = &o.findings[1];
    assert_eq!(b.db.location(d.labels[0].span).0.line, product);
    assert_eq!(d.labels[0].message, "thread [0,0,0][0,0,0] read it here");
    assert_eq!(d.primary_label, "writes here");
    // Every scheduler finds the missing barrier, and the one with it is clean everywhere.
    for (scheduler, seed) in SCHEDULERS {
        let o = b.run([2, 2, 1], &launch(MATMUL_LAUNCH), &RunConfig { scheduler, seed, ..rr() });
        assert!(o.findings.iter().any(|d| d.rule == war || d.rule == raw), "{scheduler:?} {seed}");
    }
}

/// tile[t] = t; [barrier;] tile[t] = t + 10; out[t] = tile[(t + 3) % 4];
fn neighbour(first_barrier: bool) -> (Built, [u32; 2]) {
    let mut k = Kb::new("neighbour", [4, 1, 1]);
    k.line("groupshared uint tile[4];");
    let tile = k.shared("tile", Type::U32, &[4]);
    let out = k.uav("out", Type::U32, Some(4));
    let t = k.tid();
    if first_barrier {
        k.line("tile[t] = t; GroupMemoryBarrierWithGroupSync();");
        k.store(tile, t, t);
        k.barrier();
    }
    let w = k.line("tile[t] = t + 10;");
    let ten = k.u32c(10);
    let v = k.add(t, ten);
    k.store(tile, t, v);
    let r = k.line("out[t] = tile[(t + 3) % 4];");
    let three = k.u32c(3);
    let four = k.u32c(4);
    let s = k.add(t, three);
    let j = k.bin(BinOp::Rem, s, four);
    let x = k.load(tile, j);
    k.store(out, t, x);
    (Built::new(k), [w, r])
}

#[test]
fn read_after_write_and_write_after_read_between_barriers() {
    let (b, [w, r]) = neighbour(true);
    let o = b.run([1, 1, 1], &Default::default(), &rr());
    assert_eq!(
        b.summary(&o),
        expect(&[
            ("groupshared-write-then-no-barrier-read", r, &format!("thread [0,0,0][1,0,0] reads tile[0] (line {r}) while thread [0,0,0][0,0,0] wrote it (line {w}) with no barrier in between")),
            ("groupshared-read-then-no-barrier-write", w, &format!("thread [0,0,0][3,0,0] writes tile[3] (line {w}) while thread [0,0,0][0,0,0] read it (line {r}) with no barrier in between")),
        ])
    );
    // Threads 2 and 3 repeat the read-after-write pattern.
    assert_eq!(o.findings[0].notes, vec!["seen 2 more times by other threads or iterations".to_string()]);
}

#[test]
fn reads_before_any_barrier_are_first_reads_without_barrier() {
    let (b, [w, r]) = neighbour(false);
    let o = b.run([1, 1, 1], &Default::default(), &rr());
    let first = "groupshared-first-read-without-barrier";
    assert_eq!(
        b.summary(&o),
        expect(&[
            (first, r, &format!("thread [0,0,0][0,0,0] reads tile[3] (line {r}), which no thread has written")),
            (first, r, &format!("thread [0,0,0][1,0,0] reads tile[0] (line {r}) while thread [0,0,0][0,0,0] wrote it (line {w}) with no barrier in between; the cell held no earlier value")),
            ("groupshared-read-then-no-barrier-write", w, &format!("thread [0,0,0][3,0,0] writes tile[3] (line {w}) while thread [0,0,0][0,0,0] read it (line {r}) with no barrier in between")),
        ])
    );
}

#[test]
fn write_write_races_are_reported_once_per_pair_of_instructions() {
    let mut k = Kb::new("waw", [8, 1, 1]);
    k.line("groupshared uint flag;");
    let flag = k.shared("flag", Type::U32, &[]);
    let line = k.line("flag = t;");
    let t = k.tid();
    let z = k.u32c(0);
    k.store(flag, z, t);
    let b = Built::new(k);
    let o = b.run([1, 1, 1], &Default::default(), &RunConfig { scheduler: Scheduler::Reverse, ..rr() });
    assert_eq!(
        b.summary(&o),
        expect(&[("groupshared-write-write-race", line, &format!("thread [0,0,0][6,0,0] writes flag (line {line}) while thread [0,0,0][7,0,0] wrote it (line {line}) with no barrier in between"))])
    );
    assert_eq!(o.findings[0].notes, vec!["seen 6 more times by other threads or iterations".to_string()]);
}

/// out[0] = t (every thread of every group), then after a barrier thread 1 reads it,
/// and every thread atomically counts into out[1].
fn device_kernel() -> (Built, [u32; 3]) {
    let mut k = Kb::new("device", [2, 1, 1]);
    let out = k.uav("out", Type::U32, Some(4));
    let t = k.tid();
    let wl = k.line("out[0] = t;");
    let z = k.u32c(0);
    k.store(out, z, t);
    k.line("DeviceMemoryBarrierWithGroupSync();");
    k.barrier();
    let rl = k.line("if (t == 1) out[2] = out[0];");
    let one = k.u32c(1);
    let c = k.cmp(CmpOp::Eq, t, one);
    k.if_then(c, |k| {
        let z = k.u32c(0);
        let v = k.load(out, z);
        let two = k.u32c(2);
        k.store(out, two, v);
    });
    let al = k.line("InterlockedAdd(out[1], 1);");
    let one = k.u32c(1);
    k.atomic(AtomicOp::Add, out, one, vec![one]);
    (Built::new(k), [wl, rl, al])
}

#[test]
fn device_memory_races_within_and_between_groups() {
    let (b, [wl, rl, _]) = device_kernel();
    let o = b.run([2, 1, 1], &Default::default(), &rr());
    let race = "device-memory-race";
    assert_eq!(
        b.summary(&o),
        expect(&[
            (race, wl, &format!("thread [0,0,0][1,0,0] writes out[0] (line {wl}) while thread [0,0,0][0,0,0] wrote it (line {wl}) with no barrier in between")),
            (race, wl, &format!("thread [1,0,0][0,0,0] writes out[0] (line {wl}) while thread [0,0,0][0,0,0] wrote it (line {wl}) with no device-scope ordering between their groups")),
            (race, wl, &format!("thread [1,0,0][0,0,0] writes out[0] (line {wl}) while thread [0,0,0][1,0,0] read it (line {rl}) with no device-scope ordering between their groups")),
            (race, rl, &format!("thread [1,0,0][1,0,0] reads out[0] (line {rl}) while thread [0,0,0][0,0,0] wrote it (line {wl}) with no device-scope ordering between their groups")),
            (race, rl, &format!("thread [1,0,0][1,0,0] writes out[2] (line {rl}) while thread [0,0,0][1,0,0] wrote it (line {rl}) with no device-scope ordering between their groups")),
        ])
    );
    // Atomics from every group do not race, and they all land.
    assert_eq!(o.buffer("out").unwrap().u32s()[1], 4);
    // One worker runs both groups over the same shadow pages: what group 0 left there is
    // not taken for group 1's own accesses, and the findings are the same.
    for groups in [2, 5] {
        let serial = b.run([groups, 1, 1], &Default::default(), &RunConfig { threads: 1, ..rr() });
        let parallel = b.run([groups, 1, 1], &Default::default(), &RunConfig { threads: 2, ..rr() });
        assert_eq!(b.summary(&serial), b.summary(&parallel));
    }
    let serial = b.run([2, 1, 1], &Default::default(), &RunConfig { threads: 1, ..rr() });
    assert_eq!(b.summary(&serial), b.summary(&o));
    // One group alone: the barrier orders its write and read.
    let one = b.run([2, 1, 1], &Default::default(), &RunConfig { group_filter: Some(vec![[1, 0, 0]]), ..rr() });
    assert_eq!(b.summary(&one).len(), 1, "{:?}", b.summary(&one));
    // Without detection nothing is reported and the result is the same.
    let off = b.run([2, 1, 1], &Default::default(), &RunConfig { detect_races: false, ..rr() });
    assert!(off.findings.is_empty());
    assert_eq!(off.buffer("out").unwrap().u32s()[1], 4);
}

#[test]
fn out_of_bounds_accesses_name_the_buffer_and_cell() {
    let mut k = Kb::new("oob", [4, 1, 1]);
    let input = k.uav("input", Type::U32, Some(4));
    let out = k.uav("out", Type::U32, Some(4));
    let line = k.line("out[t] = input[t + 2];");
    let t = k.tid();
    let two = k.u32c(2);
    let i = k.add(t, two);
    let v = k.load(input, i);
    k.store(out, t, v);
    let b = Built::new(k);
    let o = b.run([1, 1, 1], &launch("[buffers.input]\ndata = [5, 6, 7, 8]\n"), &rr());
    assert_eq!(b.summary(&o), expect(&[("out-of-bounds", line, &format!("thread [0,0,0][2,0,0] reads `input` at cell 4, outside its 4 cells (line {line})"))]));
    assert_eq!(o.findings[0].notes, vec!["seen 1 more times by other threads or iterations".to_string()]);
    // Out-of-bounds loads read zero.
    assert_eq!(o.buffer("out").unwrap().u32s(), vec![7, 8, 0, 0]);
}

#[test]
fn barrier_divergence_counts_threads_and_says_where_the_others_are() {
    let mut k = Kb::new("diverge", [64, 1, 1]);
    let t = k.tid();
    let cl = k.line("if (t < 32) {");
    let n = k.u32c(32);
    let c = k.cmp(CmpOp::Lt, t, n);
    let (then_b, else_b) = (k.block(), k.block());
    k.branch(c, then_b, else_b);
    k.switch_to(then_b);
    let bl = k.line("    GroupMemoryBarrierWithGroupSync(); }");
    k.barrier();
    k.ret();
    k.switch_to(else_b);
    let rl = k.line("return;");
    k.ret();
    let b = Built::new(k);
    let o = b.run([2, 1, 1], &Default::default(), &rr());
    assert_eq!(
        b.summary(&o),
        expect(&[("barrier-in-divergent-cf", bl, "only 32 of 64 threads of group [0,0,0] reached this barrier")])
    );
    let d = &o.findings[0];
    assert_eq!(d.notes, vec![format!("32 threads finished (line {rl}) without reaching it: [0,0,0][32..63,0,0]"), "seen 1 more times".to_string()]);
    assert_eq!(d.primary_label, "32 threads wait here");
    assert_eq!(b.db.location(d.labels[0].span).0.line, rl);
    let _ = cl;
}

#[test]
fn threads_waiting_at_different_barriers_are_divergence_too() {
    let mut k = Kb::new("two", [8, 2, 1]);
    let t = k.tid();
    k.line("if (t % 3 == 0) {");
    let three = k.u32c(3);
    let m = k.bin(BinOp::Rem, t, three);
    let z = k.u32c(0);
    let c = k.cmp(CmpOp::Eq, m, z);
    let (a, b_, join) = (k.block(), k.block(), k.block());
    k.branch(c, a, b_);
    k.switch_to(a);
    let l1 = k.line("    barrier(); } else {");
    k.barrier();
    k.jump(join);
    k.switch_to(b_);
    let l2 = k.line("    barrier(); }");
    k.barrier();
    k.jump(join);
    k.switch_to(join);
    let b = Built::new(k);
    let o = b.run([1, 1, 1], &Default::default(), &rr());
    assert_eq!(b.summary(&o), expect(&[("barrier-in-divergent-cf", l2, "only 10 of 16 threads of group [0,0,0] reached this barrier")]));
    assert_eq!(
        o.findings[0].notes,
        vec![format!("6 threads wait at another barrier (line {l1}) without reaching it: [0,0,0][0,0,0], [0,0,0][3,0,0], [0,0,0][6,0,0], [0,0,0][1,1,0], [0,0,0][4,1,0], [0,0,0][7,1,0]")]
    );
}

#[test]
fn runaway_loops_stop_with_the_thread_and_the_loop() {
    let mut k = Kb::new("spin", [2, 1, 1]);
    k.line("uint i = SV_GroupID.x == 2 ? 1 : 0;");
    let g = k.builtin(Builtin::GroupId(0));
    let two = k.u32c(2);
    let is2 = k.cmp(CmpOp::Eq, g, two);
    let (one, zero) = (k.u32c(1), k.u32c(0));
    let start = k.select(is2, one, zero);
    let ll = k.line("for (; i != 0; i += 2) {}");
    k.for_loop(
        start,
        |k, i| {
            let z = k.u32c(0);
            k.cmp(CmpOp::Ne, i, z)
        },
        |k, i| {
            let two = k.u32c(2);
            k.add(i, two)
        },
        |_, _| {},
    );
    let b = Built::new(k);
    for threads in [1, 2] {
        let o = b.run([4, 1, 1], &Default::default(), &RunConfig { max_steps: 1000, threads, ..rr() });
        assert!(o.aborted);
        assert_eq!(
            b.summary(&o),
            expect(&[("runaway-loop", ll, &format!("thread [2,0,0][0,0,0] ran 1000 steps without finishing; stopped in the loop at line {ll} (the limit is --max-steps 1000)"))]),
            "{threads} workers"
        );
        assert_eq!(o.findings[0].severity, lockstep_diag::Severity::Error);
    }
}

#[test]
fn calls_without_a_body_stop_the_run_with_an_error() {
    let mut k = Kb::new("opaque", [1, 1, 1]);
    let l = k.line("external_fn();");
    k.push(Op::Call(Callee::Opaque("external_fn".into()), vec![]), Type::Void);
    let b = Built::new(k);
    let o = b.run([1, 1, 1], &Default::default(), &rr());
    assert!(o.aborted);
    assert_eq!(b.summary(&o), expect(&[("emulation-error", l, "thread [0,0,0][0,0,0] called `external_fn`, whose body is not available; the run stopped")]));
}

#[test]
fn findings_render_in_the_human_and_json_formats() {
    let (b, [w, r]) = neighbour(true);
    let o = b.run([1, 1, 1], &Default::default(), &rr());
    let human = lockstep_diag::render_human(&b.db, &o.findings, false);
    assert!(human.contains("error[groupshared-write-then-no-barrier-read]"), "{human}");
    assert!(human.contains(&format!("kernel.hlsl:{r}:1")), "{human}");
    let json: serde_json::Value = serde_json::from_str(&lockstep_emu::outcome_json(&b.db, &o)).unwrap();
    assert_eq!(json["diagnostics"][0]["rule"], "groupshared-write-then-no-barrier-read");
    assert_eq!(json["diagnostics"][0]["line"], r);
    assert_eq!(json["diagnostics"][0]["labels"][0]["line"], w);
}

#[test]
fn findings_do_not_depend_on_how_many_cores_ran_the_groups() {
    let (b, _) = device_kernel();
    let runs: Vec<_> = [1, 2, 3, 0]
        .iter()
        .map(|&threads| {
            let o = b.run([9, 1, 1], &Default::default(), &RunConfig { threads, ..rr() });
            (b.summary(&o), o.findings.iter().map(|d| d.notes.clone()).collect::<Vec<_>>())
        })
        .collect();
    assert!(runs.iter().all(|r| r == &runs[0]), "{runs:?}");
    assert_eq!(runs[0].0.len(), 5);
}

#[test]
fn shared_cells_with_initial_values_count_as_written() {
    let mut k = Kb::new("tables", [2, 1, 1]);
    let table = k.shared("table", Type::U32, &[2]);
    k.m.globals[table.index()].init = vec![Const::Int(5), Const::Int(7)];
    let scratch = k.shared("scratch", Type::U32, &[2]);
    let out = k.uav("out", Type::U32, Some(2));
    let t = k.tid();
    let l = k.line("out[t] = table[t] + scratch[t];");
    let a = k.load(table, t);
    let b_ = k.load(scratch, t);
    let s = k.add(a, b_);
    k.store(out, t, s);
    let b = Built::new(k);
    let o = b.run([1, 1, 1], &Default::default(), &rr());
    assert_eq!(
        b.summary(&o),
        expect(&[("groupshared-first-read-without-barrier", l, &format!("thread [0,0,0][0,0,0] reads scratch[0] (line {l}), which no thread has written"))])
    );
    assert_eq!(o.buffer("out").unwrap().u32s(), vec![5, 7]);
}

/// A warp-synchronous tree reduction over 64 threads (two waves of 32):
/// `tile[t] = t; for (s = 16; s > 0; s >>= 1) { [__syncwarp();] if (t % 32 < s) tile[t] += tile[t + s]; }`
fn warp_reduce(syncwarp: bool) -> (Built, u32) {
    let mut k = Kb::new("warp", [64, 1, 1]);
    let tile = k.shared("tile", Type::U32, &[64]);
    let out = k.uav("out", Type::U32, Some(2));
    let t = k.tid();
    k.line("tile[t] = t;");
    k.store(tile, t, t);
    let s0 = k.u32c(16);
    let mut line = 0;
    k.line("for (uint s = 16; s > 0; s >>= 1) {");
    k.for_loop(
        s0,
        |k, s| {
            let z = k.u32c(0);
            k.cmp(CmpOp::Gt, s, z)
        },
        |k, s| {
            let one = k.u32c(1);
            k.bin(BinOp::Shr, s, one)
        },
        |k, s| {
            if syncwarp {
                k.line("    __syncwarp();");
                let bar = Barrier { exec: Scope::Wave, mem: Scope::Wave, spaces: Spaces::ALL, reduce: None };
                k.push(Op::Barrier(bar, None), Type::Void);
            }
            line = k.line("    if (t % 32 < s) tile[t] += tile[t + s];");
            let w = k.u32c(32);
            let lane = k.bin(BinOp::Rem, t, w);
            let c = k.cmp(CmpOp::Lt, lane, s);
            k.if_then(c, |k| {
                let a = k.load(tile, t);
                let ts = k.add(t, s);
                let b = k.load(tile, ts);
                let sum = k.add(a, b);
                k.store(tile, t, sum);
            });
        },
    );
    k.line("__syncwarp(); if (t % 32 == 0) out[t / 32] = tile[t];");
    let bar = Barrier { exec: Scope::Wave, mem: Scope::Wave, spaces: Spaces::ALL, reduce: None };
    k.push(Op::Barrier(bar, None), Type::Void);
    let w = k.u32c(32);
    let lane = k.bin(BinOp::Rem, t, w);
    let z = k.u32c(0);
    let c = k.cmp(CmpOp::Eq, lane, z);
    k.if_then(c, |k| {
        let w = k.u32c(32);
        let i = k.bin(BinOp::Div, t, w);
        let v = k.load(tile, t);
        k.store(out, i, v);
    });
    (Built::new(k), line)
}

#[test]
fn wave_level_barriers_order_the_lanes_of_a_wave() {
    let (b, _) = warp_reduce(true);
    for (scheduler, seed) in SCHEDULERS {
        let o = b.run([1, 1, 1], &Default::default(), &RunConfig { scheduler, seed, ..rr() });
        assert_eq!(b.summary(&o), vec![], "{scheduler:?}");
        assert_eq!(o.buffer("out").unwrap().u32s(), vec![(0..32).sum::<u32>(), (32..64).sum::<u32>()], "{scheduler:?}");
    }
    let (b, line) = warp_reduce(false);
    let o = b.run([1, 1, 1], &Default::default(), &rr());
    assert_eq!(
        b.summary(&o),
        expect(&[
            ("groupshared-first-read-without-barrier", line, &format!("thread [0,0,0][0,0,0] reads tile[16] (line {line}) in iteration 1, which no thread has written")),
            ("groupshared-read-then-no-barrier-write", 2, &format!("thread [0,0,0][1,0,0] writes tile[1] (line 2) while thread [0,0,0][0,0,0] read it (line {line}) with no barrier in between")),
            ("groupshared-read-then-no-barrier-write", line, &format!("thread [0,0,0][1,0,0] writes tile[1] (line {line}) in iteration 1 while thread [0,0,0][0,0,0] read it (line {line}) in iteration 5 with no barrier in between")),
        ])
    );
}

#[test]
fn null_pointers_are_reported_not_followed() {
    let mut k = Kb::new("null", [1, 1, 1]);
    let out = k.uav("out", Type::U32, Some(1));
    let l = k.line("uint* p = 0; out[0] = *p;");
    let z = k.u32c(0);
    let p = k.push(Op::Convert(z), Type::Ptr(MemSpace::Device));
    let m = MemRef { space: MemSpace::Device, root: Root::Ptr(p), index: z };
    let v = k.push(Op::Load(m), Type::U32);
    k.store(out, z, v);
    let b = Built::new(k);
    let o = b.run([1, 1, 1], &Default::default(), &rr());
    assert_eq!(b.summary(&o), expect(&[("out-of-bounds", l, &format!("thread [0,0,0][0,0,0] reads through a null or invalid pointer (line {l})"))]));
}
