//! Property: over random structured kernels, the uniformity analysis never
//! calls a value uniform (at wave, group or grid scope) when brute-force
//! evaluation over every thread shows it differs within that scope.
//!
//! Kernels are generated as a small AST, printed as CUDA (so the whole
//! pipeline, lowering included, is tested) and evaluated directly here.
//! `probe[K] = e;` statements mark the values compared; a probe executed
//! inside loops is compared per iteration (threads agree only when they
//! execute the same dynamic instance). A private two-element array, written
//! and read at constant or computed indices, checks what the analysis
//! concludes from stores to private memory.

use lockstep_analysis::{Cfg, Level, Uniformity};
use lockstep_ir::{Op, Root};
use lockstep_lower::{lower_tree, FileSpans, Lang, Options};
use std::collections::HashMap;

const GROUP: u32 = 64;
const GROUPS: u32 = 2;
const WAVE: u32 = 32;
const VARS: usize = 4;

#[derive(Clone, Debug)]
enum Expr {
    Tid,
    Bid,
    Param(u8),
    Lit(u32),
    Var(usize),
    /// `arr[index]`, the index a constant or `v & 1`.
    Elem(Box<Expr>),
    Bin(&'static str, Box<Expr>, Box<Expr>),
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
}

#[derive(Clone, Debug)]
enum Stmt {
    Assign(usize, Expr),
    /// `arr[index] = e`.
    Store(Expr, Expr),
    If(Expr, Vec<Stmt>, Vec<Stmt>),
    /// `for (i = 0; i < n; i++)`, the counter stored into a variable each iteration.
    Loop(u32, usize, Vec<Stmt>),
    BreakIf(Expr),
    Probe(usize, Expr),
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

struct Gen {
    rng: Rng,
    probes: usize,
}

impl Gen {
    fn expr(&mut self, depth: u32) -> Expr {
        if depth == 0 || self.rng.below(3) == 0 {
            return match self.rng.below(7) {
                0 => Expr::Tid,
                1 => Expr::Bid,
                2 => Expr::Param(self.rng.below(2) as u8),
                3 => Expr::Lit(self.rng.below(70) as u32),
                4 => Expr::Elem(Box::new(self.index())),
                _ => Expr::Var(self.rng.below(VARS as u64) as usize),
            };
        }
        if self.rng.below(8) == 0 {
            return Expr::Select(Box::new(self.cond(depth - 1)), Box::new(self.expr(depth - 1)), Box::new(self.expr(depth - 1)));
        }
        const OPS: [&str; 8] = ["+", "-", "*", "&", "^", ">>", "/", "%"];
        let op = OPS[self.rng.below(OPS.len() as u64) as usize];
        let lhs = self.expr(depth - 1);
        let rhs = match op {
            // Constant, non-zero divisors and small shifts keep evaluation defined.
            "/" | "%" => Expr::Lit([1, 2, 3, 16, 32, 64][self.rng.below(6) as usize]),
            ">>" => Expr::Lit(self.rng.below(8) as u32),
            _ => self.expr(depth - 1),
        };
        Expr::Bin(op, Box::new(lhs), Box::new(rhs))
    }

    fn index(&mut self) -> Expr {
        match self.rng.below(3) {
            0 => Expr::Bin("&", Box::new(Expr::Var(self.rng.below(VARS as u64) as usize)), Box::new(Expr::Lit(1))),
            k => Expr::Lit(k as u32 - 1),
        }
    }

    fn cond(&mut self, depth: u32) -> Expr {
        let op = ["<", "==", "!="][self.rng.below(3) as usize];
        Expr::Bin(op, Box::new(self.expr(depth)), Box::new(self.expr(depth)))
    }

    fn block(&mut self, depth: u32, in_loop: bool) -> Vec<Stmt> {
        let n = 1 + self.rng.below(4);
        (0..n).map(|_| self.stmt(depth, in_loop)).collect()
    }

    fn stmt(&mut self, depth: u32, in_loop: bool) -> Stmt {
        match self.rng.below(10) {
            0..=2 => Stmt::Assign(self.rng.below(VARS as u64) as usize, self.expr(2)),
            3 => Stmt::Store(self.index(), self.expr(2)),
            4 | 5 if depth > 0 => Stmt::If(self.cond(2), self.block(depth - 1, in_loop), if self.rng.below(2) == 0 { self.block(depth - 1, in_loop) } else { Vec::new() }),
            6 if depth > 0 => Stmt::Loop(1 + self.rng.below(3) as u32, self.rng.below(VARS as u64) as usize, self.block(depth - 1, true)),
            7 if in_loop => Stmt::BreakIf(self.cond(1)),
            _ => {
                self.probes += 1;
                Stmt::Probe(self.probes - 1, self.expr(2))
            }
        }
    }
}

fn print_expr(e: &Expr) -> String {
    match e {
        Expr::Tid => "threadIdx.x".into(),
        Expr::Bid => "blockIdx.x".into(),
        Expr::Param(p) => format!("p{p}"),
        Expr::Lit(v) => format!("{v}u"),
        Expr::Var(v) => format!("v{v}"),
        Expr::Elem(i) => format!("arr[{}]", print_expr(i)),
        Expr::Bin(op, a, b) => {
            let inner = format!("({} {op} {})", print_expr(a), print_expr(b));
            if matches!(*op, "<" | "==" | "!=") {
                format!("((unsigned)({inner}))")
            } else {
                inner
            }
        }
        Expr::Select(c, a, b) => format!("({} ? {} : {})", print_expr(c), print_expr(a), print_expr(b)),
    }
}

fn print_block(stmts: &[Stmt], indent: usize, loop_depth: usize, out: &mut String) {
    let pad = "    ".repeat(indent);
    for s in stmts {
        match s {
            Stmt::Assign(v, e) => out.push_str(&format!("{pad}v{v} = {};\n", print_expr(e))),
            Stmt::Store(i, e) => out.push_str(&format!("{pad}arr[{}] = {};\n", print_expr(i), print_expr(e))),
            Stmt::If(c, t, e) => {
                out.push_str(&format!("{pad}if ({}) {{\n", print_expr(c)));
                print_block(t, indent + 1, loop_depth, out);
                out.push_str(&format!("{pad}}} else {{\n"));
                print_block(e, indent + 1, loop_depth, out);
                out.push_str(&format!("{pad}}}\n"));
            }
            Stmt::Loop(n, v, body) => {
                let i = format!("i{loop_depth}");
                out.push_str(&format!("{pad}for (unsigned {i} = 0; {i} < {n}u; {i}++) {{\n{pad}    v{v} = {i};\n"));
                print_block(body, indent + 1, loop_depth + 1, out);
                out.push_str(&format!("{pad}}}\n"));
            }
            Stmt::BreakIf(c) => out.push_str(&format!("{pad}if ({}) break;\n", print_expr(c))),
            Stmt::Probe(k, e) => out.push_str(&format!("{pad}probe[{k}] = {};\n", print_expr(e))),
        }
    }
}

/// One thread's evaluation; returns whether a `break` fired.
struct Thread {
    tid: u32,
    bid: u32,
    params: [u32; 2],
    vars: [u32; VARS],
    arr: [u32; 2],
    iters: Vec<u32>,
    /// (probe, loop iterations) → value
    seen: HashMap<(usize, Vec<u32>), u32>,
}

impl Thread {
    fn eval(&self, e: &Expr) -> u32 {
        match e {
            Expr::Tid => self.tid,
            Expr::Bid => self.bid,
            Expr::Param(p) => self.params[*p as usize],
            Expr::Lit(v) => *v,
            Expr::Var(v) => self.vars[*v],
            Expr::Elem(i) => self.arr[self.eval(i) as usize % 2],
            Expr::Select(c, a, b) => {
                if self.eval(c) != 0 {
                    self.eval(a)
                } else {
                    self.eval(b)
                }
            }
            Expr::Bin(op, a, b) => {
                let (x, y) = (self.eval(a), self.eval(b));
                match *op {
                    "+" => x.wrapping_add(y),
                    "-" => x.wrapping_sub(y),
                    "*" => x.wrapping_mul(y),
                    "&" => x & y,
                    "^" => x ^ y,
                    ">>" => x >> (y & 31),
                    "/" => x / y,
                    "%" => x % y,
                    "<" => (x < y) as u32,
                    "==" => (x == y) as u32,
                    "!=" => (x != y) as u32,
                    _ => unreachable!(),
                }
            }
        }
    }

    fn run(&mut self, stmts: &[Stmt]) -> bool {
        for s in stmts {
            match s {
                Stmt::Assign(v, e) => self.vars[*v] = self.eval(e),
                Stmt::Store(i, e) => {
                    let (i, x) = (self.eval(i) as usize % 2, self.eval(e));
                    self.arr[i] = x;
                }
                Stmt::If(c, t, e) => {
                    let taken = if self.eval(c) != 0 { t } else { e };
                    if self.run(taken) {
                        return true;
                    }
                }
                Stmt::Loop(n, v, body) => {
                    self.iters.push(0);
                    for i in 0..*n {
                        *self.iters.last_mut().unwrap() = i;
                        self.vars[*v] = i;
                        if self.run(body) {
                            break;
                        }
                    }
                    self.iters.pop();
                }
                Stmt::BreakIf(c) => {
                    if self.eval(c) != 0 {
                        return true;
                    }
                }
                Stmt::Probe(k, e) => {
                    let v = self.eval(e);
                    self.seen.insert((*k, self.iters.clone()), v);
                }
            }
        }
        false
    }
}

/// The analysis's level for each probe (by its index).
fn analysed_levels(src: &str) -> HashMap<usize, Level> {
    let tree = lockstep_syntax::parse(lockstep_syntax::Grammar::Cuda, src).expect("parses");
    assert!(!tree.root_node().has_error(), "generated kernel does not parse:\n{src}");
    let out = lower_tree(src, &tree, Lang::Cuda, &FileSpans(lockstep_source::FileId(0)), &Options::default());
    let f = &out.module.functions[0];
    let cfg = Cfg::new(f);
    let u = Uniformity::analyze(f, &cfg);
    let mut levels = HashMap::new();
    for b in f.block_ids() {
        for &v in &f.block(b).insts {
            if let Op::Store(m, x) = &f.inst(v).op {
                if let (Root::Param(0), Some(k)) = (m.root, f.as_int(m.index)) {
                    let level = u.level_at(&cfg, *x, b);
                    let e = levels.entry(k as usize).or_insert(level);
                    *e = (*e).min(level);
                }
            }
        }
    }
    levels
}

#[test]
fn uniformity_is_never_wrong_about_uniform_values() {
    let cases: u64 = std::env::var("UNIFORMITY_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1000);
    let mut checked = 0usize;
    let mut uniform_claims = 0usize;
    for seed in 1..=cases {
        let mut g = Gen { rng: Rng(seed.wrapping_mul(0x9e3779b97f4a7c15) | 1), probes: 0 };
        let mut body = g.block(3, false);
        body.push(Stmt::Probe(g.probes, Expr::Var(0)));
        let mut src = String::from("__global__ void k(unsigned* probe, unsigned p0, unsigned p1) {\n");
        for v in 0..VARS {
            src.push_str(&format!("    unsigned v{v} = {}u;\n", v * 7));
        }
        src.push_str("    unsigned arr[2] = {3u, 9u};\n");
        print_block(&body, 1, 0, &mut src);
        src.push_str("}\n");
        let levels = analysed_levels(&src);

        // Brute force: every thread of every group.
        let mut runs = Vec::new();
        for bid in 0..GROUPS {
            for tid in 0..GROUP {
                let mut t = Thread { tid, bid, params: [5, 40], vars: [0, 7, 14, 21], arr: [3, 9], iters: Vec::new(), seen: HashMap::new() };
                t.run(&body);
                runs.push(t);
            }
        }
        for (&probe, &level) in &levels {
            // Threads that must agree under the claimed level.
            let scope_of = |t: &Thread| -> (u32, u32) {
                match level {
                    Level::Thread => (t.bid, 1000 + t.tid),
                    Level::Wave => (t.bid, t.tid / WAVE),
                    Level::Group => (t.bid, 0),
                    Level::Grid => (0, 0),
                }
            };
            if level > Level::Thread {
                uniform_claims += 1;
            }
            // Per (scope, loop iterations): the first value seen, and the thread (group, id) that saw it.
            type Instance = ((u32, u32), Vec<u32>);
            let mut first: HashMap<Instance, (u32, u32, u32)> = HashMap::new();
            for t in &runs {
                for ((k, iters), &v) in &t.seen {
                    if *k != probe {
                        continue;
                    }
                    let key = (scope_of(t), iters.clone());
                    match first.get(&key) {
                        None => {
                            first.insert(key, (v, t.bid, t.tid));
                        }
                        Some(&(w, b0, t0)) => assert_eq!(
                            v, w,
                            "seed {seed}: probe {probe} claimed {level:?}-uniform, but thread [{b0}][{t0}] got {w} and thread [{}][{}] got {v} (iterations {iters:?})\n{src}",
                            t.bid, t.tid
                        ),
                    }
                }
            }
            checked += 1;
        }
    }
    assert!(checked > cases as usize, "too few probes checked: {checked}");
    assert!(uniform_claims > checked / 10, "the generator should produce uniform values too ({uniform_claims} of {checked})");
}
