//! Computed outputs of hand-built kernels against Rust references, under every scheduler.

mod common;

use common::*;
use lockstep_emu::{trace_values, RunConfig, Scheduler};
use lockstep_ir::*;

/// Tree reduction of 64 u32 per group into `output[group]`.
fn reduction() -> Built {
    let mut k = Kb::new("reduce", [64, 1, 1]);
    k.line("groupshared uint tile[64];");
    let tile = k.shared("tile", Type::U32, &[64]);
    let input = k.uav("input", Type::U32, None);
    let output = k.uav("output", Type::U32, None);
    k.line("uint t = SV_GroupIndex; uint g = SV_GroupID.x;");
    let t = k.tid();
    let g = k.builtin(Builtin::GroupId(0));
    k.line("tile[t] = input[g * 64 + t];");
    let c64 = k.u32c(64);
    let base = k.mul(g, c64);
    let idx = k.add(base, t);
    let v = k.load(input, idx);
    k.store(tile, t, v);
    k.line("GroupMemoryBarrierWithGroupSync();");
    k.barrier();
    k.line("for (uint s = 32; s > 0; s >>= 1) {");
    let s0 = k.u32c(32);
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
            k.line("    if (t < s) tile[t] += tile[t + s];");
            let c = k.cmp(CmpOp::Lt, t, s);
            k.if_then(c, |k| {
                let a = k.load(tile, t);
                let ts = k.add(t, s);
                let b = k.load(tile, ts);
                let sum = k.add(a, b);
                k.store(tile, t, sum);
            });
            k.line("    GroupMemoryBarrierWithGroupSync();");
            k.barrier();
        },
    );
    k.line("if (t == 0) output[g] = tile[0];");
    let z = k.u32c(0);
    let c = k.cmp(CmpOp::Eq, t, z);
    k.if_then(c, |k| {
        let z = k.u32c(0);
        let r = k.load(tile, z);
        k.store(output, g, r);
    });
    Built::new(k)
}

#[test]
fn reduction_matches_the_rust_sum_under_every_scheduler() {
    let b = reduction();
    let l = launch("[buffers.input]\nfill = { start = 3, step = 7 }\nlen = 256\n[buffers.output]\nlen = 4\n");
    let input: Vec<u32> = (0..256u32).map(|i| 3 + 7 * i).collect();
    let expected: Vec<u32> = input.chunks(64).map(|c| c.iter().sum()).collect();
    for (scheduler, seed) in SCHEDULERS {
        let o = b.run([4, 1, 1], &l, &RunConfig { scheduler, seed, ..RunConfig::default() });
        assert_eq!(b.summary(&o), vec![], "{scheduler:?}");
        assert_eq!(o.buffer("output").unwrap().u32s(), expected, "{scheduler:?}");
        assert_eq!(o.stats.groups, 4);
        assert_eq!(o.stats.threads, 256);
    }
}

/// Hillis–Steele inclusive scan of 64 u32 per group.
fn scan() -> Built {
    let mut k = Kb::new("scan", [64, 1, 1]);
    k.line("groupshared uint tile[64];");
    let tile = k.shared("tile", Type::U32, &[64]);
    let input = k.uav("input", Type::U32, None);
    let output = k.uav("output", Type::U32, None);
    k.line("uint t = SV_GroupIndex; uint i = SV_GroupID.x * 64 + t;");
    let t = k.tid();
    let g = k.builtin(Builtin::GroupId(0));
    let c64 = k.u32c(64);
    let base = k.mul(g, c64);
    let i = k.add(base, t);
    k.line("tile[t] = input[i];");
    let v = k.load(input, i);
    k.store(tile, t, v);
    k.line("GroupMemoryBarrierWithGroupSync();");
    k.barrier();
    k.line("for (uint off = 1; off < 64; off <<= 1) {");
    let one = k.u32c(1);
    k.for_loop(
        one,
        |k, off| {
            let n = k.u32c(64);
            k.cmp(CmpOp::Lt, off, n)
        },
        |k, off| {
            let one = k.u32c(1);
            k.bin(BinOp::Shl, off, one)
        },
        |k, off| {
            k.line("    uint x = t >= off ? tile[t - off] : 0;");
            let c = k.cmp(CmpOp::Ge, t, off);
            let d = k.bin(BinOp::Sub, t, off);
            let j = k.select(c, d, t);
            let y = k.load(tile, j);
            let z = k.u32c(0);
            let x = k.select(c, y, z);
            k.line("    GroupMemoryBarrierWithGroupSync();");
            k.barrier();
            k.line("    tile[t] += x;");
            let a = k.load(tile, t);
            let s = k.add(a, x);
            k.store(tile, t, s);
            k.line("    GroupMemoryBarrierWithGroupSync();");
            k.barrier();
        },
    );
    k.line("output[i] = tile[t];");
    let r = k.load(tile, t);
    k.store(output, i, r);
    Built::new(k)
}

#[test]
fn scan_matches_the_rust_prefix_sums_under_every_scheduler() {
    let b = scan();
    let l = launch("[buffers.input]\nfill = { start = 1, step = 3 }\n");
    let input: Vec<u32> = (0..128u32).map(|i| 1 + 3 * i).collect();
    let expected: Vec<u32> = input
        .chunks(64)
        .flat_map(|c| c.iter().scan(0u32, |acc, &x| {
            *acc += x;
            Some(*acc)
        }).collect::<Vec<_>>())
        .collect();
    for (scheduler, seed) in SCHEDULERS {
        let o = b.run([2, 1, 1], &l, &RunConfig { scheduler, seed, ..RunConfig::default() });
        assert_eq!(b.summary(&o), vec![], "{scheduler:?}");
        // Unsized buffers default to one cell per thread of the dispatch.
        assert_eq!(o.buffer("output").unwrap().u32s(), expected, "{scheduler:?}");
    }
}

#[test]
fn tiled_matmul_matches_the_rust_product_under_every_scheduler() {
    let (b, _) = matmul(true);
    let l = launch(MATMUL_LAUNCH);
    let n = N as usize;
    let av: Vec<f32> = (0..n * n).map(|i| 0.5 + 0.25 * i as f32).collect();
    let bv: Vec<f32> = (0..n * n).map(|i| 1.0 - 0.125 * i as f32).collect();
    let mut expected = vec![0f32; n * n];
    for r in 0..n {
        for c in 0..n {
            let mut acc = 0f32;
            for k in 0..n {
                acc += av[r * n + k] * bv[k * n + c];
            }
            expected[r * n + c] = acc;
        }
    }
    for (scheduler, seed) in SCHEDULERS {
        let o = b.run([4, 4, 1], &l, &RunConfig { scheduler, seed, ..RunConfig::default() });
        assert_eq!(b.summary(&o), vec![], "{scheduler:?}");
        assert_eq!(o.buffer("C").unwrap().f32s(), expected, "{scheduler:?}");
    }
}

#[test]
fn shared_atomics_count_every_thread_without_races() {
    let mut k = Kb::new("count", [64, 1, 1]);
    k.line("groupshared uint n;");
    let counter = k.shared("n", Type::U32, &[]);
    let out = k.uav("out", Type::U32, Some(2));
    k.line("if (t == 0) n = 0;");
    let t = k.tid();
    let z = k.u32c(0);
    let c = k.cmp(CmpOp::Eq, t, z);
    k.if_then(c, |k| {
        let z = k.u32c(0);
        k.store(counter, z, z);
    });
    k.line("barrier();");
    k.barrier();
    k.line("InterlockedAdd(n, 1, old);");
    let z = k.u32c(0);
    let one = k.u32c(1);
    let old = k.atomic(AtomicOp::Add, counter, z, vec![one]);
    k.line("barrier();");
    k.barrier();
    k.line("if (t == 0) out[0] = n; if (old == 0) out[1] = t;");
    let z = k.u32c(0);
    let c = k.cmp(CmpOp::Eq, t, z);
    k.if_then(c, |k| {
        let z = k.u32c(0);
        let v = k.load(counter, z);
        k.store(out, z, v);
    });
    let c = k.cmp(CmpOp::Eq, old, z);
    k.if_then(c, |k| {
        let one = k.u32c(1);
        k.store(out, one, t);
    });
    let b = Built::new(k);
    for (scheduler, seed) in SCHEDULERS {
        let o = b.run([1, 1, 1], &Default::default(), &RunConfig { scheduler, seed, ..RunConfig::default() });
        assert_eq!(b.summary(&o), vec![], "{scheduler:?}");
        assert_eq!(o.buffer("out").unwrap().u32s()[0], 64, "{scheduler:?}");
    }
}

#[test]
fn wave_operations_work_per_wave_among_active_lanes() {
    let mut k = Kb::new("waves", [64, 1, 1]);
    let sum = k.uav("sum", Type::U32, Some(64));
    let prefix = k.uav("prefix", Type::U32, Some(64));
    let ballot = k.uav("ballot", Type::U32, Some(64));
    let odd_sum = k.uav("odd_sum", Type::U32, Some(64));
    k.line("uint t = SV_GroupIndex;");
    let t = k.tid();
    k.line("sum[t] = WaveActiveSum(t); prefix[t] = WavePrefixSum(t);");
    let s = k.wave(WaveOp::Sum, vec![t], Type::U32);
    k.store(sum, t, s);
    let p = k.wave(WaveOp::PrefixSum, vec![t], Type::U32);
    k.store(prefix, t, p);
    k.line("ballot[t] = WaveActiveBallot(t % 3 == 0).x;");
    let three = k.u32c(3);
    let m = k.bin(BinOp::Rem, t, three);
    let z = k.u32c(0);
    let c = k.cmp(CmpOp::Eq, m, z);
    let bal = k.wave(WaveOp::Ballot, vec![c], Type::U32);
    k.store(ballot, t, bal);
    k.line("if (t & 1) odd_sum[t] = WaveActiveSum(t);");
    let one = k.u32c(1);
    let odd = k.bin(BinOp::And, t, one);
    let c = k.cmp(CmpOp::Ne, odd, z);
    k.if_then(c, |k| {
        let s = k.wave(WaveOp::Sum, vec![t], Type::U32);
        k.store(odd_sum, t, s);
    });
    let b = Built::new(k);
    for wave in [32u32, 64] {
        for (scheduler, seed) in SCHEDULERS {
            let o = b.run([1, 1, 1], &Default::default(), &RunConfig { scheduler, seed, wave_size: Some(wave), ..RunConfig::default() });
            assert_eq!(b.summary(&o), vec![]);
            let w = wave as usize;
            let lanes = |t: usize| (t / w * w)..(t / w * w + w);
            let sums: Vec<u32> = (0..64).map(|t| lanes(t).map(|u| u as u32).sum()).collect();
            assert_eq!(o.buffer("sum").unwrap().u32s(), sums, "wave {wave}");
            let prefixes: Vec<u32> = (0..64).map(|t| (t / w * w..t).map(|u| u as u32).sum()).collect();
            assert_eq!(o.buffer("prefix").unwrap().u32s(), prefixes, "wave {wave}");
            let ballots: Vec<u32> =
                (0..64).map(|t| lanes(t).filter(|u| u % 3 == 0).fold(0u64, |m, u| m | 1 << (u % w)) as u32).collect();
            assert_eq!(o.buffer("ballot").unwrap().u32s(), ballots, "wave {wave}");
            let odd: Vec<u32> = (0..64).map(|t| if t % 2 == 1 { lanes(t).filter(|u| u % 2 == 1).map(|u| u as u32).sum() } else { 0 }).collect();
            assert_eq!(o.buffer("odd_sum").unwrap().u32s(), odd, "wave {wave}");
        }
    }
}

#[test]
fn barrier_count_reduces_the_predicate_over_the_group() {
    let mut k = Kb::new("count", [48, 1, 1]);
    let out = k.uav("out", Type::U32, Some(48));
    k.line("out[t] = __syncthreads_count(t % 4 == 1);");
    let t = k.tid();
    let four = k.u32c(4);
    let m = k.bin(BinOp::Rem, t, four);
    let one = k.u32c(1);
    let c = k.cmp(CmpOp::Eq, m, one);
    let bar = Barrier { reduce: Some(BarrierReduce::Count), ..group_barrier() };
    let n = k.push(Op::Barrier(bar, Some(c)), Type::U32);
    k.store(out, t, n);
    let b = Built::new(k);
    let o = b.run([1, 1, 1], &Default::default(), &RunConfig::default());
    assert_eq!(o.buffer("out").unwrap().u32s(), vec![12; 48]);
}

#[test]
fn trace_values_gives_each_threads_last_values() {
    let mut k = Kb::new("trace", [4, 1, 1]);
    k.line("uint t = SV_GroupIndex; uint s = 0; for (uint i = 0; i < t; i++) s += i * 10;");
    let t = k.tid();
    let zero = k.u32c(0);
    let acc = k.local("s", Type::U32, 1);
    k.store_local(acc, zero, zero);
    let mut seen = (Value(0), Value(0));
    k.for_loop(
        zero,
        |k, i| k.cmp(CmpOp::Lt, i, t),
        |k, i| {
            let one = k.u32c(1);
            k.add(i, one)
        },
        |k, i| {
            let ten = k.u32c(10);
            let p = k.mul(i, ten);
            let z = k.u32c(0);
            let cur = k.load_local(acc, z);
            let s = k.add(cur, p);
            k.store_local(acc, z, s);
            seen = (i, s);
        },
    );
    let (i, s) = seen;
    let b = Built::new(k);
    let tr = trace_values(&b.m, b.f, &Default::default(), &RunConfig::default()).unwrap();
    assert_eq!(tr.len(), 4);
    // The loop variable's last value is the one that failed the test.
    assert_eq!(tr.iter().map(|th| th[i.index()]).collect::<Vec<_>>(), vec![Some(0), Some(1), Some(2), Some(3)]);
    // Thread 0 never ran the body.
    assert_eq!(tr.iter().map(|th| th[s.index()]).collect::<Vec<_>>(), vec![None, Some(0), Some(10), Some(30)]);
    assert_eq!(tr[2][t.index()], Some(2));
}

#[test]
fn a_fixed_seed_gives_the_same_run_and_seeds_change_the_interleaving() {
    // Racy kernel: every thread increments a shared cell non-atomically.
    let mut k = Kb::new("racy", [16, 1, 1]);
    let cell = k.shared("c", Type::U32, &[]);
    let out = k.uav("out", Type::U32, Some(1));
    k.line("if (t == 0) c = 0;");
    let t = k.tid();
    let z = k.u32c(0);
    let c0 = k.cmp(CmpOp::Eq, t, z);
    k.if_then(c0, |k| {
        let z = k.u32c(0);
        k.store(cell, z, z);
    });
    k.line("barrier();");
    k.barrier();
    k.line("uint v = c;");
    let v = k.load(cell, z);
    k.line("uint w = v + 1; uint w2 = w * 1; uint w3 = w2 + 0;");
    let one = k.u32c(1);
    let w = k.add(v, one);
    let w2 = k.mul(w, one);
    let w3 = k.add(w2, z);
    k.line("c = w3;");
    k.store(cell, z, w3);
    k.line("barrier(); if (t == 0) out[0] = c;");
    k.barrier();
    k.if_then(c0, |k| {
        let z = k.u32c(0);
        let r = k.load(cell, z);
        k.store(out, z, r);
    });
    let b = Built::new(k);
    let rr = b.run([1, 1, 1], &Default::default(), &RunConfig::default());
    assert_eq!(rr.buffer("out").unwrap().u32s(), vec![16], "run-to-barrier order serialises the increments");
    type Run = (Vec<u32>, Vec<(String, u32, String)>);
    let results: Vec<Run> = (0..6)
        .map(|seed| {
            let o = b.run([1, 1, 1], &Default::default(), &RunConfig { scheduler: Scheduler::Random, seed, ..RunConfig::default() });
            (o.buffer("out").unwrap().u32s(), b.summary(&o))
        })
        .collect();
    for seed in 0..6 {
        let again = b.run([1, 1, 1], &Default::default(), &RunConfig { scheduler: Scheduler::Random, seed, ..RunConfig::default() });
        assert_eq!((again.buffer("out").unwrap().u32s(), b.summary(&again)), results[seed as usize], "seed {seed}");
    }
    assert!(results.iter().any(|r| r.0 != vec![16]), "some seed loses an update: {:?}", results.iter().map(|r| r.0[0]).collect::<Vec<_>>());
    assert!(results.iter().all(|r| !r.1.is_empty()), "the race is reported under every seed");
}

#[test]
fn lane_reads_shuffles_votes_and_matches() {
    let mut k = Kb::new("lanes", [64, 1, 1]);
    let names = ["read5", "xor1", "all40", "match4", "first_odd", "prefix_bits", "down3"];
    let bufs: Vec<GlobalId> = names.iter().map(|n| k.uav(n, Type::U32, Some(64))).collect();
    k.line("lane ops");
    let t = k.tid();
    let t10 = {
        let ten = k.u32c(10);
        k.mul(t, ten)
    };
    let five = k.u32c(5);
    let v = k.wave(WaveOp::ReadLane, vec![t10, five], Type::U32);
    k.store(bufs[0], t, v);
    let one = k.u32c(1);
    let v = k.wave(WaveOp::ShuffleXor, vec![t10, one], Type::U32);
    k.store(bufs[1], t, v);
    let forty = k.u32c(40);
    let c = k.cmp(CmpOp::Lt, t, forty);
    let v = k.wave(WaveOp::AllTrue, vec![c], Type::Bool);
    let v = k.push(Op::Convert(v), Type::U32);
    k.store(bufs[2], t, v);
    let four = k.u32c(4);
    let m = k.bin(BinOp::Rem, t, four);
    let v = k.wave(WaveOp::MatchAny, vec![m], Type::U32);
    k.store(bufs[3], t, v);
    let odd = k.bin(BinOp::And, t, one);
    let z = k.u32c(0);
    let is_odd = k.cmp(CmpOp::Ne, odd, z);
    let b3 = bufs[4];
    k.if_then(is_odd, |k| {
        let f = k.wave(WaveOp::IsFirstLane, vec![], Type::Bool);
        let f = k.push(Op::Convert(f), Type::U32);
        k.store(b3, t, f);
    });
    let three = k.u32c(3);
    let m3 = k.bin(BinOp::Rem, t, three);
    let c3 = k.cmp(CmpOp::Eq, m3, z);
    let v = k.wave(WaveOp::PrefixCountBits, vec![c3], Type::U32);
    k.store(bufs[5], t, v);
    let v = k.wave(WaveOp::ShuffleDown, vec![t10, three], Type::U32);
    k.store(bufs[6], t, v);
    let b = Built::new(k);
    let o = b.run([1, 1, 1], &Default::default(), &RunConfig::default());
    assert_eq!(b.summary(&o), vec![]);
    let get = |n: &str| o.buffer(n).unwrap().u32s();
    let base = |t: u32| t / 32 * 32;
    assert_eq!(get("read5"), (0..64).map(|t| (base(t) + 5) * 10).collect::<Vec<_>>());
    assert_eq!(get("xor1"), (0..64).map(|t| (t ^ 1) * 10).collect::<Vec<_>>());
    assert_eq!(get("all40"), (0..64).map(|t| (t < 32) as u32).collect::<Vec<_>>());
    assert_eq!(get("match4"), (0..64).map(|t| (0..32).filter(|l| l % 4 == t % 4).fold(0u32, |m, l| m | 1 << l)).collect::<Vec<_>>());
    assert_eq!(get("first_odd"), (0..64).map(|t| (t % 32 == 1) as u32).collect::<Vec<_>>());
    assert_eq!(get("prefix_bits"), (0..64).map(|t| (base(t)..t).filter(|u| u % 3 == 0).count() as u32).collect::<Vec<_>>());
    assert_eq!(get("down3"), (0..64).map(|t| if t % 32 + 3 < 32 { (t + 3) * 10 } else { t * 10 }).collect::<Vec<_>>());
}
