//! Scaling of dead-barrier elimination on generated kernels: the seeds'
//! full restart after each removal against the incremental worklist engine.
//! Run with `cargo bench -p lockstep-dbe --bench scaling`.

use lockstep_dbe::{synth, Engine, Mode, Options, SameAllocation};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Runs `f` until at least `budget` has passed (and at least once); returns the mean time.
fn time<R>(budget: Duration, mut f: impl FnMut() -> R) -> (Duration, R) {
    let start = Instant::now();
    let mut runs = 0u32;
    let mut last;
    loop {
        last = f();
        runs += 1;
        if start.elapsed() >= budget {
            break;
        }
    }
    (start.elapsed() / runs, last)
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1e3)
}

fn main() {
    let sizes = [10usize, 100, 1_000, 10_000];
    for mode in [Mode::Categories, Mode::Precise] {
        println!("mode {mode:?}");
        println!(
            "{:>9} {:>7} {:>8} {:>8} {:>13} {:>13} {:>9} {:>14}",
            "barriers", "blocks", "insts", "removed", "restart ms", "worklist ms", "ratio", "worklist us/b"
        );
        for &n in &sizes {
            let (m, f) = synth::kernel(n, 42);
            let engine = Engine::new(&m, Options { mode, ..Options::default() });
            let oracle = SameAllocation { module: &m };
            let none = HashSet::new();
            let (fast, fast_result) = time(Duration::from_millis(300), || engine.run(&f, &oracle, &none));
            let (slow, slow_result) = time(Duration::from_millis(300), || engine.run_restart(&f, &oracle, &none));
            // Verdicts and flags; only the worklist names the hazard a kept barrier orders.
            let decisions = |r: &lockstep_dbe::FunctionResult| r.barriers.iter().map(|b| (b.value, b.verdict, b.flags)).collect::<Vec<_>>();
            assert_eq!(decisions(&fast_result), decisions(&slow_result), "the two algorithms disagree at {n} barriers");
            println!(
                "{:>9} {:>7} {:>8} {:>8} {:>13} {:>13} {:>8.1}x {:>14.2}",
                fast_result.barriers.len(),
                f.blocks.len(),
                f.insts.len(),
                fast_result.removed().len(),
                ms(slow),
                ms(fast),
                slow.as_secs_f64() / fast.as_secs_f64(),
                fast.as_secs_f64() * 1e6 / fast_result.barriers.len() as f64
            );
        }
        // Larger kernels for the worklist engine alone (the restart would take hours).
        for n in [20_000usize, 40_000] {
            let (m, f) = synth::kernel(n, 42);
            let engine = Engine::new(&m, Options { mode, ..Options::default() });
            let oracle = SameAllocation { module: &m };
            let (fast, result) = time(Duration::from_millis(300), || engine.run(&f, &oracle, &HashSet::new()));
            println!(
                "{:>9} {:>7} {:>8} {:>8} {:>13} {:>13} {:>9} {:>14.2}",
                result.barriers.len(),
                f.blocks.len(),
                f.insts.len(),
                result.removed().len(),
                "-",
                ms(fast),
                "-",
                fast.as_secs_f64() * 1e6 / result.barriers.len() as f64
            );
        }
    }
}
