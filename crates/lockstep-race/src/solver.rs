//! A small integer feasibility solver for the address questions the race
//! analysis asks: linear equalities, inequalities and disequalities over
//! bounded variables (thread ids, iteration counts) and unbounded ones
//! (group-uniform symbols), plus functional constraints (`y = a ^ b`,
//! `y = a % b`, …) that are evaluated once their arguments are known.
//!
//! The search enumerates small finite domains with bounds propagation,
//! decides each node's rational relaxation exactly (see [`crate::relax`]),
//! turns functions with a known operand into linear constraints, and
//! finishes with Gaussian elimination over the unbounded rest. Whatever it
//! cannot decide it answers "feasible, not exact": callers treat that as a
//! possible race, so the solver may over-approximate but never misses one.

use crate::congruence;
use crate::relax::{self, Relaxed};
use smallvec::SmallVec;

/// Bounds at or beyond this magnitude mean "unbounded".
pub const INF: i128 = 1 << 100;

pub type Var = usize;

/// The terms of a [`Lin`]: most have one or two, kept inline (the analyses
/// build and drop expressions by the million).
pub type Terms = smallvec::SmallVec<[(Var, i128); 2]>;

/// Each variable's bounds, inclusive.
type Domains = Vec<(i128, i128)>;

/// `sum(coef * var) + k`, terms sorted by variable, no zero coefficients.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Lin {
    pub terms: Terms,
    pub k: i128,
}

fn clamp(x: i128) -> i128 {
    x.clamp(-INF, INF)
}

impl Lin {
    pub fn konst(k: i128) -> Lin {
        Lin { terms: Terms::new(), k }
    }
    pub fn var(v: Var) -> Lin {
        Lin { terms: smallvec::smallvec![(v, 1)], k: 0 }
    }
    pub fn as_const(&self) -> Option<i128> {
        self.terms.is_empty().then_some(self.k)
    }
    pub fn add(&self, o: &Lin) -> Lin {
        self.combine(o, 1)
    }
    /// `self + sign * o`, merging the sorted terms.
    fn combine(&self, o: &Lin, sign: i128) -> Lin {
        let mut terms = Terms::with_capacity(self.terms.len() + o.terms.len());
        let (mut i, mut j) = (0, 0);
        while i < self.terms.len() || j < o.terms.len() {
            let a = self.terms.get(i);
            let b = o.terms.get(j);
            match (a, b) {
                (Some(&(va, ca)), Some(&(vb, cb))) if va == vb => {
                    let c = clamp(ca + sign * cb);
                    if c != 0 {
                        terms.push((va, c));
                    }
                    i += 1;
                    j += 1;
                }
                (Some(&(va, ca)), Some(&(vb, _))) if va < vb => {
                    terms.push((va, ca));
                    i += 1;
                }
                (Some(&(va, ca)), None) => {
                    terms.push((va, ca));
                    i += 1;
                }
                (_, Some(&(vb, cb))) => {
                    terms.push((vb, clamp(sign * cb)));
                    j += 1;
                }
                (None, None) => unreachable!("loop condition"),
            }
        }
        Lin { terms, k: clamp(self.k + sign * o.k) }
    }
    pub fn scale(&self, c: i128) -> Lin {
        if c == 0 {
            return Lin::konst(0);
        }
        Lin { terms: self.terms.iter().map(|&(v, x)| (v, clamp(x.saturating_mul(c)))).collect(), k: clamp(self.k.saturating_mul(c)) }
    }
    pub fn sub(&self, o: &Lin) -> Lin {
        self.combine(o, -1)
    }
    pub fn plus(&self, k: i128) -> Lin {
        Lin { terms: self.terms.clone(), k: clamp(self.k + k) }
    }
    pub fn coef(&self, v: Var) -> i128 {
        self.terms.iter().find(|t| t.0 == v).map_or(0, |t| t.1)
    }
    /// Replaces `v` by `e`.
    fn subst(&self, v: Var, e: &Lin) -> Lin {
        let c = self.coef(v);
        if c == 0 {
            return self.clone();
        }
        let rest = Lin { terms: self.terms.iter().copied().filter(|t| t.0 != v).collect(), k: self.k };
        rest.add(&e.scale(c))
    }
    /// Value under the current domains, when every variable is fixed.
    pub fn eval(&self, dom: &[(i128, i128)]) -> Option<i128> {
        let mut s = self.k;
        for &(v, c) in &self.terms {
            let (lo, hi) = dom[v];
            if lo != hi {
                return None;
            }
            s = clamp(s + c.saturating_mul(lo));
        }
        Some(s)
    }
    /// Smallest and largest value under the domains (±INF when unbounded).
    pub fn range(&self, dom: &[(i128, i128)]) -> (i128, i128) {
        let (mut mn, mut mx) = (self.k, self.k);
        for &(v, c) in &self.terms {
            let (lo, hi) = dom[v];
            let (a, b) = (term(c, lo), term(c, hi));
            mn = clamp(mn + a.min(b));
            mx = clamp(mx + a.max(b));
        }
        (mn, mx)
    }
}

fn term(c: i128, bound: i128) -> i128 {
    if bound <= -INF || bound >= INF {
        if (c > 0) == (bound > 0) {
            INF
        } else {
            -INF
        }
    } else if fits_i64(c) && fits_i64(bound) {
        // The common case: a product of two 64-bit values cannot overflow 128 bits.
        clamp(c * bound)
    } else {
        clamp(c.saturating_mul(bound))
    }
}

fn fits_i64(x: i128) -> bool {
    x == x as i64 as i128
}

fn div_floor(a: i128, b: i128) -> i128 {
    // Unit coefficients are the common case: no 128-bit division.
    match b {
        1 => return a,
        -1 => return -a,
        _ => {}
    }
    if fits_i64(a) && fits_i64(b) && b != -1 {
        return (a as i64).div_euclid(b as i64) as i128 - i128::from(b < 0 && (a as i64).rem_euclid(b as i64) != 0);
    }
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}
fn div_ceil(a: i128, b: i128) -> i128 {
    -div_floor(-a, b)
}

/// Operations of functional constraints, with C semantics on 64-bit values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FnOp {
    Xor,
    And,
    Or,
    Rem,
    Div,
    Shr,
    Shl,
    Mul,
    Min,
    Max,
    /// `a * m^n` (a multiplicative induction variable after `n` steps).
    MulPow(i64),
    /// `a / m^n` (a dividing induction variable after `n` steps).
    DivPow(i64),
}

impl FnOp {
    /// The result, or None where C leaves it undefined or it overflows.
    pub fn eval(self, a: i128, b: i128) -> Option<i128> {
        let (a, b) = (i64::try_from(a).ok()?, i64::try_from(b).ok()?);
        let r = match self {
            FnOp::Xor => a ^ b,
            FnOp::And => a & b,
            FnOp::Or => a | b,
            FnOp::Rem => a.checked_rem(b)?,
            FnOp::Div => a.checked_div(b)?,
            FnOp::Shr => a.checked_shr(u32::try_from(b).ok()?)?,
            FnOp::Shl => a.checked_shl(u32::try_from(b).ok()?)?,
            FnOp::Mul => a.checked_mul(b)?,
            FnOp::Min => a.min(b),
            FnOp::Max => a.max(b),
            FnOp::MulPow(m) => a.checked_mul(m.checked_pow(u32::try_from(b).ok()?)?)?,
            FnOp::DivPow(m) => match m.checked_pow(u32::try_from(b).ok()?) {
                Some(p) => a / p,
                None => 0,
            },
        };
        Some(r as i128)
    }
}

/// `out = op(a, b)`.
#[derive(Clone, Debug)]
pub struct Func {
    pub out: Var,
    pub op: FnOp,
    pub a: Lin,
    pub b: Lin,
}

#[derive(Clone, Debug, Default)]
pub struct Problem {
    /// Domain of each variable.
    pub dom: Vec<(i128, i128)>,
    /// Variables the search branches on first (thread ids: fixing them
    /// usually fixes the rest by propagation).
    pub first: Vec<bool>,
    /// Host values bounds tie to a launch's group count (`16 * groups <= n`).
    pub tied: Vec<Var>,
    /// `lin == 0`.
    pub eqs: Vec<Lin>,
    /// `lin <= 0`.
    pub les: Vec<Lin>,
    /// `lin != 0`.
    pub nes: Vec<Lin>,
    pub funcs: Vec<Func>,
    /// Each entry: at least one of the expressions is non-zero (two threads differ).
    pub distinct: Vec<Vec<Lin>>,
}

/// What one search may spend: branching nodes and, for a question asked
/// under the file's time for race analysis, CPU time (a single search can
/// otherwise run past it by seconds).
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub nodes: u64,
    /// The thread CPU time ([`crate::thread_cpu_time`]) the search stops at.
    pub until: Option<std::time::Duration>,
}

impl From<u64> for Budget {
    fn from(nodes: u64) -> Budget {
        Budget { nodes, until: None }
    }
}

impl Budget {
    /// Takes one node; false when none is left. The clock is read every 64 nodes.
    fn spend(&mut self) -> bool {
        if self.nodes == 0 {
            return false;
        }
        self.nodes -= 1;
        if self.nodes.is_multiple_of(64) && self.until.is_some_and(|d| crate::thread_cpu_time() > d) {
            self.nodes = 0;
        }
        true
    }
}

/// The solver's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// No assignment satisfies the constraints.
    Infeasible,
    /// An assignment (variables left open are `None`); `exact` is false when
    /// some constraint could not be decided and was assumed satisfiable.
    Feasible { values: Vec<Option<i128>>, exact: bool },
}

impl Outcome {
    pub fn is_feasible(&self) -> bool {
        !matches!(self, Outcome::Infeasible)
    }
}

/// Largest domain enumerated value by value: thread ids up to a full group;
/// other variables only when small (iteration counts of geometric loops),
/// the rest is left to elimination at the leaves.
const ENUM_MAX: i128 = 1 << 12;
const ENUM_SMALL: i128 = 65;
/// Assignments [`Problem::complete`] may try before leaving a witness unproven.
const COMPLETION_BUDGET: u32 = 400;
/// Search nodes one question may use before answering conservatively.
pub const DEFAULT_BUDGET: u64 = 40_000;

impl Problem {
    pub fn new_var(&mut self, lo: i128, hi: i128) -> Var {
        self.dom.push((lo.max(-INF), hi.min(INF)));
        self.first.push(false);
        self.dom.len() - 1
    }
    pub fn equal(&mut self, a: &Lin, b: &Lin) {
        self.eqs.push(a.sub(b));
    }
    /// `a <= b`.
    pub fn at_most(&mut self, a: &Lin, b: &Lin) {
        self.les.push(a.sub(b));
    }
    pub fn differ(&mut self, a: &Lin, b: &Lin) {
        self.nes.push(a.sub(b));
    }

    /// Turns a partial assignment into a full one that satisfies every
    /// constraint, checked by evaluation, or None. A small search: open
    /// variables take values near the ends of the bounds that inequalities
    /// give them, and the sizes kernels are written for; function results and
    /// equalities with one open variable follow from what is fixed. It starts
    /// from the search's partial answer, then from its thread ids alone, then
    /// from nothing. Such an assignment proves the witness the search could
    /// only assume.
    pub fn complete(&self, partial: &[Option<i128>]) -> Option<Vec<i128>> {
        // Choose function inputs before results, and variables that bound
        // others (`i < n`: `i` first) before the ones they bound.
        let mut rank = vec![0u8; self.dom.len()];
        self.les.iter().flat_map(|l| &l.terms).for_each(|t| rank[t.0] = 1);
        self.funcs.iter().for_each(|f| rank[f.out] = 2);
        let known = |keep: &dyn Fn(Var) -> bool| -> Vec<Option<i128>> {
            (0..self.dom.len()).map(|v| partial.get(v).copied().flatten().filter(|_| keep(v)).or_else(|| (self.dom[v].0 == self.dom[v].1).then_some(self.dom[v].0))).collect()
        };
        let seeds = [known(&|_| true), known(&|v| self.first[v]), known(&|_| false)];
        let mut budget = COMPLETION_BUDGET;
        seeds.into_iter().find_map(|seed| self.extend(seed, &rank, &self.dom, &mut budget)).or_else(|| {
            // Bounds that tie a host value to a launch's group count (`16 *
            // groups <= n + 15`) rank it after the thread ids, whose choice
            // then decides it. Once more, in the order of first use, from
            // the bounds propagation gives (`n >= 1` where a group exists).
            (!self.tied.is_empty()).then_some(())?;
            let mut dom = self.dom.clone();
            self.propagate(&mut dom).then_some(())?;
            let mut budget = COMPLETION_BUDGET;
            let in_order: Vec<u8> = self.funcs.iter().fold(vec![0u8; self.dom.len()], |mut r, f| {
                r[f.out] = 1;
                r
            });
            self.extend(known(&|_| false), &in_order, &dom, &mut budget)
        })
    }

    fn extend(&self, mut val: Vec<Option<i128>>, rank: &[u8], dom: &[(i128, i128)], budget: &mut u32) -> Option<Vec<i128>> {
        *budget = budget.checked_sub(1)?;
        let eval = |l: &Lin, val: &[Option<i128>]| l.terms.iter().try_fold(l.k, |s, &(v, c)| val[v].map(|x| s.saturating_add(c.saturating_mul(x))));
        // What follows from the values fixed so far.
        let mut changed = true;
        while changed {
            changed = false;
            for f in &self.funcs {
                if let (Some(a), Some(b)) = (eval(&f.a, &val), eval(&f.b, &val)) {
                    let out = f.op.eval(a, b)?;
                    match val[f.out] {
                        None => {
                            val[f.out] = Some(out);
                            changed = true;
                        }
                        Some(x) if x != out => return None,
                        Some(_) => {}
                    }
                }
            }
            for e in &self.eqs {
                let mut open = e.terms.iter().filter(|t| val[t.0].is_none());
                if let (Some(&(v, c)), None) = (open.next(), open.next()) {
                    let rest = e.terms.iter().filter(|t| t.0 != v).try_fold(e.k, |s, &(w, d)| val[w].map(|x| s.saturating_add(d.saturating_mul(x))))?;
                    if rest % c != 0 {
                        return None;
                    }
                    val[v] = Some(-rest / c);
                    changed = true;
                }
            }
        }
        // Prune as soon as a fixed value leaves its domain or breaks a decided constraint.
        let in_domain = val.iter().zip(dom).all(|(x, &(lo, hi))| x.is_none_or(|x| lo <= x && x <= hi));
        let broken = self.eqs.iter().any(|e| eval(e, &val).is_some_and(|x| x != 0))
            || self.les.iter().any(|e| eval(e, &val).is_some_and(|x| x > 0))
            || self.nes.iter().any(|e| eval(e, &val) == Some(0));
        if !in_domain || broken {
            return None;
        }
        let Some(v) = (0..val.len()).filter(|&v| val[v].is_none()).min_by_key(|&v| rank[v]) else {
            let val: Vec<i128> = val.into_iter().collect::<Option<_>>()?;
            return self.holds(&val).then_some(val);
        };
        // The bounds inequalities with no other open variable give `v`.
        let (mut lo, mut hi) = dom[v];
        for l in &self.les {
            let c = l.coef(v);
            if c == 0 {
                continue;
            }
            let Some(rest) = l.terms.iter().filter(|t| t.0 != v).try_fold(l.k, |s, &(w, d)| val[w].map(|x| s.saturating_add(d.saturating_mul(x)))) else { continue };
            if c > 0 {
                hi = hi.min(div_floor(-rest, c));
            } else {
                lo = lo.max(div_ceil(rest, -c));
            }
        }
        if lo > hi {
            return None;
        }
        let base = if lo > -INF { lo } else if hi < INF { hi.min(0) } else { 0 };
        let mut candidates: SmallVec<[i128; 16]> = SmallVec::new();
        for x in [base, base + 1, base + 2, base + 3].into_iter().chain([1, 2, 4, 8, 16, 32, 64, 256, 1024]).chain((hi < INF).then_some(hi)) {
            if lo <= x && x <= hi && !candidates.contains(&x) {
                candidates.push(x);
            }
        }
        candidates.into_iter().find_map(|x| {
            let mut next = val.clone();
            next[v] = Some(x);
            self.extend(next, rank, dom, budget)
        })
    }

    /// Whether a full assignment satisfies every constraint.
    fn holds(&self, val: &[i128]) -> bool {
        let at = |l: &Lin| l.terms.iter().fold(l.k, |s, &(v, c)| s.saturating_add(c.saturating_mul(val[v])));
        val.iter().zip(&self.dom).all(|(&x, &(lo, hi))| lo <= x && x <= hi)
            && self.eqs.iter().all(|e| at(e) == 0)
            && self.les.iter().all(|e| at(e) <= 0)
            && self.nes.iter().all(|e| at(e) != 0)
            && self.distinct.iter().all(|g| g.iter().any(|e| at(e) != 0))
            && self.funcs.iter().all(|f| f.op.eval(at(&f.a), at(&f.b)) == Some(val[f.out]))
    }

    pub fn solve(&self, budget: impl Into<Budget>) -> Outcome {
        let budget = budget.into();
        // Bounds first where the closure's product rules will want to know
        // non-zero factors (they compare two functions).
        let closed = if self.funcs.len() >= 2 {
            let mut p = self.clone();
            if !self.propagate(&mut p.dom) {
                return Outcome::Infeasible;
            }
            let Some(extra) = congruence::close(&p) else { return Outcome::Infeasible };
            p.eqs.extend(extra);
            std::borrow::Cow::Owned(p)
        } else {
            // One function or none implies no equalities; merged variables
            // may still contradict a disequality.
            if congruence::close(self).is_none() {
                return Outcome::Infeasible;
            }
            std::borrow::Cow::Borrowed(self)
        };
        let p = closed.without_monotone();
        let p = p.as_ref().unwrap_or(&closed);
        let mut values: Vec<Option<i128>> = fixed_values(&p.dom);
        let mut exact = true;
        // Independent groups of constraints are solved one at a time, so an
        // unrelated loop counter does not multiply the thread-pair search.
        for part in p.components() {
            let part = part.as_ref().unwrap_or(p);
            let relevant = part.relevant();
            // Two branching orders, each with its own budget: fewest values
            // first, or loop counters first (fixing them makes `a ^ j` and
            // `2^n` evaluable or linear). The first definite answer wins.
            let mut answer = None;
            for counters_first in [false, true] {
                let mut left = budget;
                let r = part.dfs(part.dom.clone(), &relevant, &mut left, counters_first, None);
                match r {
                    Search::None => return Outcome::Infeasible,
                    Search::Found(v, true) => {
                        answer = Some((v, true));
                        break;
                    }
                    Search::Found(v, false) => answer = answer.or(Some((v, false))),
                    Search::Exhausted(dom) => answer = answer.or(Some((fixed_values(&dom), false))),
                }
            }
            let (found, ok) = answer.unwrap_or_else(|| (fixed_values(&part.dom), false));
            exact &= ok;
            for (v, x) in found.into_iter().enumerate() {
                if relevant[v] && x.is_some() {
                    values[v] = x;
                }
            }
        }
        closed.monotone_toward_zero(&mut values);
        Outcome::Feasible { values, exact }
    }

    /// A monotone variable the search fixed at the far end of its domain
    /// (`n` = 4294967295 for `i < n`) moves to the value nearest zero that
    /// the others' values leave it, so that a witness reads as a reader
    /// would pick it (`n` = 65 for a loop of step 64 that must run twice).
    /// Each move keeps every constraint met.
    fn monotone_toward_zero(&self, values: &mut [Option<i128>]) {
        let sign = self.monotone_signs();
        for v in (0..self.dom.len()).filter(|&v| sign[v] == 1 || sign[v] == -1) {
            if values[v].is_none() {
                continue;
            }
            // The range the others' values leave `v`; none where one of
            // its constraints has another variable open.
            let range = self.les.iter().filter(|l| l.coef(v) != 0).try_fold(self.dom[v], |(lo, hi), l| {
                let c = l.coef(v);
                let rest = l.terms.iter().filter(|t| t.0 != v).try_fold(l.k, |s, &(w, d)| values[w].map(|x| s.saturating_add(d.saturating_mul(x))))?;
                Some(if c > 0 { (lo, hi.min(div_floor(-rest, c))) } else { (lo.max(div_ceil(rest, -c)), hi) })
            });
            if let Some((lo, hi)) = range.filter(|(lo, hi)| lo <= hi) {
                values[v] = Some(0.clamp(lo, hi));
            }
        }
    }

    /// [`Problem::solve`], and an answer the search could only assume is
    /// completed and checked into a proven one where possible. A proven
    /// answer is completed too, where the search left variables open, so
    /// that a witness names a value for each (`stride` = 0 where the race
    /// needs the barrier under `stride > 0` skipped).
    pub fn solve_proven(&self, budget: impl Into<Budget>) -> Outcome {
        match self.solve(budget) {
            Outcome::Feasible { values, exact } if !exact || values.iter().any(Option::is_none) => match self.complete(&values) {
                Some(full) => Outcome::Feasible { values: full.into_iter().map(Some).collect(), exact: true },
                None => Outcome::Feasible { values, exact },
            },
            other => other,
        }
    }

    /// Splits the constraints into groups that share no variable; one
    /// `None` when they all share one group.
    fn components(&self) -> Vec<Option<Problem>> {
        let n = self.dom.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        let join = |vars: &[Var], parent: &mut Vec<usize>| {
            for w in vars.windows(2) {
                let (a, b) = (find(parent, w[0]), find(parent, w[1]));
                parent[a] = b;
            }
        };
        let vars_of = |l: &[&Lin]| -> Vec<Var> { l.iter().flat_map(|x| x.terms.iter().map(|t| t.0)).collect() };
        for l in self.eqs.iter().chain(&self.les).chain(&self.nes) {
            join(&vars_of(&[l]), &mut parent);
        }
        for f in &self.funcs {
            let mut v = vars_of(&[&f.a, &f.b]);
            v.push(f.out);
            join(&v, &mut parent);
        }
        for g in &self.distinct {
            join(&vars_of(&g.iter().collect::<Vec<_>>()), &mut parent);
        }
        let vars_used = self.eqs.iter().chain(&self.les).chain(&self.nes).chain(self.distinct.iter().flatten()).flat_map(|l| l.terms.iter().map(|t| t.0));
        let mut all: Vec<usize> = vars_used.chain(self.funcs.iter().map(|f| f.out)).map(|v| find(&mut parent, v)).collect();
        all.sort_unstable();
        all.dedup();
        if all.len() <= 1 {
            return vec![None];
        }
        let mut roots: Vec<usize> = Vec::new();
        let mut parts: Vec<Problem> = Vec::new();
        let empty = |p: &Problem| Problem { dom: p.dom.clone(), first: p.first.clone(), tied: p.tied.clone(), ..Problem::default() };
        let slot = |vars: Vec<Var>, parent: &mut Vec<usize>, roots: &mut Vec<usize>, parts: &mut Vec<Problem>| -> usize {
            // Constant constraints share one part of their own.
            let r = vars.first().map_or(usize::MAX, |&v| find(parent, v));
            match roots.iter().position(|&x| x == r) {
                Some(i) => i,
                None => {
                    roots.push(r);
                    parts.push(empty(self));
                    parts.len() - 1
                }
            }
        };
        for l in &self.eqs {
            let i = slot(vars_of(&[l]), &mut parent, &mut roots, &mut parts);
            parts[i].eqs.push(l.clone());
        }
        for l in &self.les {
            let i = slot(vars_of(&[l]), &mut parent, &mut roots, &mut parts);
            parts[i].les.push(l.clone());
        }
        for l in &self.nes {
            let i = slot(vars_of(&[l]), &mut parent, &mut roots, &mut parts);
            parts[i].nes.push(l.clone());
        }
        for f in &self.funcs {
            let i = slot(vec![f.out], &mut parent, &mut roots, &mut parts);
            parts[i].funcs.push(f.clone());
        }
        for g in &self.distinct {
            let i = slot(vars_of(&g.iter().collect::<Vec<_>>()), &mut parent, &mut roots, &mut parts);
            parts[i].distinct.push(g.clone());
        }
        parts.into_iter().map(Some).collect()
    }

    /// A variable that occurs only in `<=` constraints, always with the same
    /// sign, is best at one end of its domain: fix it there, or drop its
    /// constraints when that end is unbounded (they can always be met).
    /// None when no variable is monotone.
    fn without_monotone(&self) -> Option<Problem> {
        let sign = self.monotone_signs();
        if !sign.iter().any(|&s| s == 1 || s == -1) {
            return None;
        }
        let mut p = self.clone();
        let mut free = vec![false; self.dom.len()];
        for (v, &s) in sign.iter().enumerate() {
            let (lo, hi) = self.dom[v];
            match s {
                1 if lo > -INF => p.dom[v] = (lo, lo),
                -1 if hi < INF => p.dom[v] = (hi, hi),
                1 | -1 => free[v] = true,
                _ => {}
            }
        }
        p.les.retain(|l| !l.terms.iter().any(|t| free[t.0]));
        Some(p)
    }

    /// Per variable, 1 or -1 where it occurs only in `<=` constraints and
    /// always with that sign of coefficient; 0 where it occurs nowhere, 2
    /// otherwise.
    fn monotone_signs(&self) -> Vec<i8> {
        const OTHER: i8 = 2;
        let mut sign = vec![0i8; self.dom.len()];
        let mut other = |l: &Lin| l.terms.iter().for_each(|t| sign[t.0] = OTHER);
        self.eqs.iter().chain(&self.nes).for_each(&mut other);
        self.distinct.iter().flatten().for_each(&mut other);
        for f in &self.funcs {
            other(&f.a);
            other(&f.b);
            other(&Lin::var(f.out));
        }
        for l in &self.les {
            for &(v, c) in &l.terms {
                let s = c.signum() as i8;
                sign[v] = match sign[v] {
                    0 => s,
                    x if x == s => s,
                    _ => OTHER,
                };
            }
        }
        sign
    }

    /// Branching order of the counters-first search: small counters that
    /// feed functions, then thread ids, then the rest.
    fn counter_rank(&self, v: Var) -> u8 {
        let counter = !self.first[v] && self.funcs.iter().any(|f| f.a.coef(v) != 0 || f.b.coef(v) != 0);
        match (counter, self.first[v]) {
            (true, _) => 0,
            (false, true) => 1,
            _ => 2,
        }
    }

    fn relevant(&self) -> Vec<bool> {
        let mut r = vec![false; self.dom.len()];
        let mut mark = |l: &Lin| l.terms.iter().for_each(|t| r[t.0] = true);
        self.eqs.iter().chain(&self.les).chain(&self.nes).for_each(&mut mark);
        for f in &self.funcs {
            mark(&f.a);
            mark(&f.b);
            mark(&Lin::var(f.out));
        }
        self.distinct.iter().flatten().for_each(&mut mark);
        r
    }

    /// `changed`: when `dom` was a fixed point of the propagation of this
    /// problem less the constraints added last, the variables that changed
    /// since and those of the added constraints.
    fn dfs(&self, mut dom: Vec<(i128, i128)>, relevant: &[bool], left: &mut Budget, counters_first: bool, changed: Option<&[Var]>) -> Search {
        if !left.spend() {
            return Search::Exhausted(dom);
        }
        let at_fixed_point = match self.propagate_after(&mut dom, changed) {
            Propagated::Contradiction => return Search::None,
            Propagated::FixedPoint => true,
            Propagated::Unfinished => false,
        };
        // Functions with a known operand become linear: search that problem.
        if let Some((child, child_dom, new_vars)) = self.linearized(&dom) {
            let n = dom.len();
            return child.dfs(child_dom, &child.relevant(), left, counters_first, at_fixed_point.then_some(&new_vars)).truncated(n);
        }
        // The rational relaxation refutes most subproblems outright, and its
        // integer point is often a witness already.
        let mut split = None;
        match relax::refute(&self.eqs, &self.les, None, &dom) {
            Relaxed::Infeasible => return Search::None,
            Relaxed::Open(Some(point)) => {
                let mut d = dom.clone();
                for (v, x) in point {
                    d[v] = (x, x);
                }
                if self.satisfied(&d, &dom, relevant) {
                    return Search::Found(fixed_values(&d), true);
                }
                split = self.violated_disequality(&d);
            }
            Relaxed::Open(None) => {}
        }
        let mut exhausted = None;
        let mut explore = |child: &Problem, d: Vec<(i128, i128)>, left: &mut Budget, changed: Option<&[Var]>| -> Option<Search> {
            match child.dfs(d, relevant, left, counters_first, changed) {
                Search::None => None,
                Search::Exhausted(d) => {
                    exhausted.get_or_insert(d);
                    (left.nodes == 0).then(|| Search::Exhausted(exhausted.clone().expect("just set")))
                }
                found => Some(found),
            }
        };
        // Branch on the smallest finite open domain.
        let pick = (0..dom.len())
            .filter(|&v| {
                let (lo, hi) = dom[v];
                let limit = if self.first[v] { ENUM_MAX } else { ENUM_SMALL };
                relevant[v] && lo < hi && hi - lo < limit && lo > -INF && hi < INF
            })
            .min_by_key(|&v| {
                let size = dom[v].1 - dom[v].0;
                if counters_first {
                    (self.counter_rank(v), size, v)
                } else {
                    // Fewest values first: a two-way split the relaxation can
                    // refute on both sides beats enumerating thread ids.
                    (0, size, v)
                }
            });
        // The relaxation's point fails a disequality: its strict sides, less
        // those the relaxation alone refutes.
        let sides = split.map(|which| {
            let mut sides = self.strict_sides(which);
            let all = sides.len();
            sides.retain(|side| relax::refute(&self.eqs, &self.les, Some(side), &dom) != Relaxed::Infeasible);
            (which, all, sides)
        });
        // A split that refutes no side only doubles the search while a loop
        // counter feeding a function is open: fixing the counter comes first.
        let counter = (0..dom.len()).find(|&v| relevant[v] && dom[v].0 < dom[v].1 && dom[v].1 - dom[v].0 < ENUM_SMALL && self.counter_rank(v) == 0);
        match sides {
            Some((which, all, sides)) if sides.len() < all || counter.is_none() => {
                for side in sides {
                    let vars: SmallVec<[Var; 4]> = side.terms.iter().map(|t| t.0).collect();
                    if let Some(r) = explore(&self.with_side(which, side), dom.clone(), left, at_fixed_point.then_some(&vars)) {
                        return r;
                    }
                }
            }
            _ => {
                let Some(v) = (if sides.is_some() { counter } else { pick }) else { return self.leaf(dom) };
                let (lo, hi) = dom[v];
                for x in lo..=hi {
                    let mut d = dom.clone();
                    d[v] = (x, x);
                    if let Some(r) = explore(self, d, left, at_fixed_point.then_some(std::slice::from_ref(&v))) {
                        return r;
                    }
                }
            }
        }
        match exhausted {
            Some(d) => Search::Exhausted(d),
            None => Search::None,
        }
    }

    /// The problem with every function that has exactly one known operand
    /// replaced by linear constraints, when it is `x * c`, `x << c`, `x / c`,
    /// `x >> c`, `x % c`, `x & (2^k - 1)` or `x ^ 2^k` over a non-negative `x`
    /// (new variables for quotients and bits), its domains and the variables
    /// of its new constraints; None when none is. Exact: the constraints hold
    /// for precisely the values the function produces.
    fn linearized(&self, dom: &[(i128, i128)]) -> Option<(Problem, Domains, Vec<Var>)> {
        if !self.funcs.iter().any(|f| f.a.eval(dom).is_some() || f.b.eval(dom).is_some()) {
            return None;
        }
        let mut p = Problem { funcs: Vec::new(), ..self.clone() };
        let (old_eqs, old_les) = (p.eqs.len(), p.les.len());
        p.dom = dom.to_vec();
        let mut changed = false;
        for f in &self.funcs {
            let (a, b) = (f.a.eval(dom), f.b.eval(dom));
            let (x, c) = match (a, b) {
                (None, Some(c)) => (&f.a, c),
                (Some(c), None) if matches!(f.op, FnOp::Mul | FnOp::And | FnOp::Xor) => (&f.b, c),
                _ => {
                    p.funcs.push(f.clone());
                    continue;
                }
            };
            let out = Lin::var(f.out);
            let nonneg = x.range(dom).0 >= 0;
            let power = |m: i128, n: i128| u32::try_from(n).ok().and_then(|n| m.checked_pow(n)).filter(|&v| v < INF);
            let scaled = match f.op {
                FnOp::Mul => Some(c),
                FnOp::MulPow(m) => power(m as i128, c),
                FnOp::Shl if (0..62).contains(&c) => Some(1 << c),
                // m^n beyond any value: the quotient is 0.
                FnOp::DivPow(m) if c >= 0 && power(m as i128, c).is_none() => Some(0),
                _ => None,
            };
            let divisor = match f.op {
                FnOp::Div if c > 0 => Some(c),
                FnOp::Shr if (0..62).contains(&c) => Some(1 << c),
                FnOp::DivPow(m) => power(m as i128, c),
                _ => None,
            };
            let modulus = match f.op {
                FnOp::Rem if c > 0 => Some(c),
                FnOp::And if c >= 0 && (c + 1) & c == 0 => Some(c + 1),
                _ => None,
            };
            let done = if let Some(factor) = scaled {
                p.equal(&out, &x.scale(factor));
                true
            } else if let (Some(divisor), true) = (divisor, nonneg) {
                p.quotient(x, divisor, &out);
                true
            } else if let (Some(m), true) = (modulus, nonneg) {
                p.remainder(x, m, &out);
                true
            } else if f.op == FnOp::Xor && c > 0 && c & (c - 1) == 0 && c < 1 << 61 && nonneg {
                // x = 2c*high + c*bit + low, and x ^ c flips the bit.
                let high = Lin::var(p.new_var(0, INF));
                let bit = Lin::var(p.new_var(0, 1));
                let low = Lin::var(p.new_var(0, c - 1));
                p.equal(x, &high.scale(2 * c).add(&bit.scale(c)).add(&low));
                p.equal(&out, &x.plus(c).sub(&bit.scale(2 * c)));
                true
            } else {
                false
            };
            if done {
                changed = true;
            } else {
                p.funcs.push(f.clone());
            }
        }
        changed.then(|| {
            let d = p.dom.clone();
            let new_vars = p.eqs[old_eqs..].iter().chain(&p.les[old_les..]).flat_map(|e| e.terms.iter().map(|t| t.0)).collect();
            (p, d, new_vars)
        })
    }

    /// `out = x / c` for `x >= 0`, `c > 0`: `c*out <= x <= c*out + c - 1`.
    fn quotient(&mut self, x: &Lin, c: i128, out: &Lin) {
        self.at_most(&out.scale(c), x);
        self.at_most(x, &out.scale(c).plus(c - 1));
    }

    /// `out = x % c` for `x >= 0`, `c > 0`: `x = c*q + out` with `0 <= out < c`.
    fn remainder(&mut self, x: &Lin, c: i128, out: &Lin) {
        let q = Lin::var(self.new_var(0, INF));
        self.at_most(&Lin::konst(0), out);
        self.at_most(out, &Lin::konst(c - 1));
        self.equal(x, &q.scale(c).add(out));
    }

    /// A disequality (or a whole "threads differ" group) that the point `d` makes zero.
    fn violated_disequality(&self, d: &[(i128, i128)]) -> Option<Disequality> {
        if let Some(i) = self.nes.iter().position(|e| e.eval(d) == Some(0)) {
            return Some(Disequality::Ne(i));
        }
        self.distinct.iter().position(|g| g.iter().all(|e| e.eval(d) == Some(0))).map(Disequality::Distinct)
    }

    /// The strict sides of a disequality: `e <= -1` and `e >= 1` for each of its expressions.
    fn strict_sides(&self, which: Disequality) -> Vec<Lin> {
        let exprs = match which {
            Disequality::Ne(i) => std::slice::from_ref(&self.nes[i]),
            Disequality::Distinct(i) => self.distinct[i].as_slice(),
        };
        exprs.iter().flat_map(|e| [e.plus(1), e.scale(-1).plus(1)]).collect()
    }

    /// The problem with a disequality replaced by one of its strict sides.
    fn with_side(&self, which: Disequality, side: Lin) -> Problem {
        let mut child = self.clone();
        match which {
            Disequality::Ne(i) => {
                child.nes.remove(i);
            }
            Disequality::Distinct(i) => {
                child.distinct.remove(i);
            }
        }
        child.les.push(side);
        child
    }

    /// Whether `d` fixes every relevant variable inside `dom` and meets every constraint.
    fn satisfied(&self, d: &[(i128, i128)], dom: &[(i128, i128)], relevant: &[bool]) -> bool {
        let inside = (0..d.len()).all(|v| !relevant[v] || (d[v].0 == d[v].1 && dom[v].0 <= d[v].0 && d[v].0 <= dom[v].1));
        inside
            && self.eqs.iter().all(|e| e.eval(d) == Some(0))
            && self.les.iter().all(|e| e.eval(d).is_some_and(|x| x <= 0))
            && self.nes.iter().all(|e| e.eval(d).is_some_and(|x| x != 0))
            && self.funcs.iter().all(|f| match (f.a.eval(d), f.b.eval(d)) {
                (Some(a), Some(b)) => f.op.eval(a, b) == Some(d[f.out].0),
                _ => false,
            })
            && self.distinct.iter().all(|g| g.iter().any(|e| e.eval(d).is_some_and(|x| x != 0)))
    }

    /// Bounds propagation towards a fixed point; false on a contradiction.
    fn propagate(&self, dom: &mut [(i128, i128)]) -> bool {
        self.propagate_after(dom, None) != Propagated::Contradiction
    }

    /// [`Problem::propagate`], told which variables changed since `dom` was
    /// last a fixed point of this problem's propagation (`None`: unknown).
    ///
    /// Rounds visit the constraints in order, as plain rounds would, but skip
    /// a constraint when none of its variables changed since it was last
    /// visited: its propagator depends on those domains alone, so the visit
    /// would change nothing. A constraint that changed a domain counts all its
    /// variables as changed.
    fn propagate_after(&self, dom: &mut [(i128, i128)], changed_vars: Option<&[Var]>) -> Propagated {
        // Per variable: the step of its last change; per constraint: the step
        // of its last visit. Steps start at 1, so 0 means "not since".
        let mut changed_at: SmallVec<[u32; 64]> = SmallVec::from_elem(0, dom.len());
        let mut step = 1u32;
        let visit_all = changed_vars.is_none();
        for &v in changed_vars.unwrap_or(&[]) {
            changed_at[v] = step;
        }
        let n_constraints = self.eqs.len() + self.les.len() + self.nes.len() + self.funcs.len() + self.distinct.len();
        let mut visited_at: SmallVec<[u32; 64]> = SmallVec::from_elem(0, n_constraints);
        // Whether constraint `c` over `vars` needs a visit; marks it visited.
        fn due(c: usize, mut vars: impl Iterator<Item = Var>, changed_at: &[u32], visited_at: &mut [u32], step: u32, all: bool) -> bool {
            let due = all || vars.any(|v| changed_at[v] > visited_at[c]);
            if due {
                visited_at[c] = step;
            }
            due
        }
        fn mark(changed_at: &mut [u32], step: &mut u32, vars: impl Iterator<Item = Var>) {
            *step += 1;
            for v in vars {
                changed_at[v] = *step;
            }
        }
        fn terms(l: &Lin) -> impl Iterator<Item = Var> + '_ {
            l.terms.iter().map(|t| t.0)
        }
        // Few rounds: where bounds keep moving one step at a time (`x < y`
        // against `y <= x`) the relaxation decides at once what rounds would
        // only approach.
        for round in 0..4 {
            let all = visit_all && round == 0;
            let mut changed = false;
            let mut c = 0;
            for e in &self.eqs {
                c += 1;
                if !due(c - 1, terms(e), &changed_at, &mut visited_at, step, all) {
                    continue;
                }
                let mut here = match tighten(e, dom, true) {
                    None => return Propagated::Contradiction,
                    Some(c) => c,
                };
                match congruence(e, dom) {
                    None => return Propagated::Contradiction,
                    Some(c) => here |= c,
                }
                if here {
                    changed = true;
                    mark(&mut changed_at, &mut step, terms(e));
                }
            }
            for e in &self.les {
                c += 1;
                if !due(c - 1, terms(e), &changed_at, &mut visited_at, step, all) {
                    continue;
                }
                match tighten(e, dom, false) {
                    None => return Propagated::Contradiction,
                    Some(true) => {
                        changed = true;
                        mark(&mut changed_at, &mut step, terms(e));
                    }
                    Some(false) => {}
                }
            }
            for e in &self.nes {
                c += 1;
                if !due(c - 1, terms(e), &changed_at, &mut visited_at, step, all) {
                    continue;
                }
                match propagate_ne(e, dom) {
                    None => return Propagated::Contradiction,
                    Some(true) => {
                        changed = true;
                        mark(&mut changed_at, &mut step, terms(e));
                    }
                    Some(false) => {}
                }
            }
            for f in &self.funcs {
                c += 1;
                let vars = || terms(&f.a).chain(terms(&f.b)).chain(std::iter::once(f.out));
                if !due(c - 1, vars(), &changed_at, &mut visited_at, step, all) {
                    continue;
                }
                match propagate_func(f, dom) {
                    None => return Propagated::Contradiction,
                    Some(true) => {
                        changed = true;
                        mark(&mut changed_at, &mut step, vars());
                    }
                    Some(false) => {}
                }
            }
            for group in &self.distinct {
                c += 1;
                if !due(c - 1, group.iter().flat_map(terms), &changed_at, &mut visited_at, step, all) {
                    continue;
                }
                if group.iter().all(|l| l.eval(dom) == Some(0)) {
                    return Propagated::Contradiction;
                }
            }
            if !changed {
                return Propagated::FixedPoint;
            }
        }
        Propagated::Unfinished
    }

    /// No small domain is left open: eliminate equalities over the unbounded
    /// rest, then decide what is decidable.
    fn leaf(&self, dom: Vec<(i128, i128)>) -> Search {
        let fix = |l: &Lin| -> Lin {
            let mut out = Lin::konst(l.k);
            for &(v, c) in &l.terms {
                if dom[v].0 == dom[v].1 {
                    out.k = clamp(out.k + c.saturating_mul(dom[v].0));
                } else {
                    out = out.add(&Lin::var(v).scale(c));
                }
            }
            out
        };
        let mut p = Problem {
            dom: dom.clone(),
            first: self.first.clone(),
            tied: self.tied.clone(),
            eqs: self.eqs.iter().map(fix).collect(),
            les: self.les.iter().map(fix).collect(),
            nes: self.nes.iter().map(fix).collect(),
            funcs: Vec::new(),
            distinct: self.distinct.iter().map(|g| g.iter().map(fix).collect()).collect(),
        };
        let mut exact = true;
        for f in &self.funcs {
            if f.a.eval(&dom).is_none() || f.b.eval(&dom).is_none() {
                exact = false;
            }
        }
        // Gaussian elimination on unit coefficients.
        let mut progress = true;
        while progress {
            progress = false;
            for i in 0..p.eqs.len() {
                let mut e = p.eqs[i].clone();
                if e.terms.is_empty() {
                    if e.k != 0 {
                        return Search::None;
                    }
                    continue;
                }
                let g = e.terms.iter().fold(0i128, |g, t| gcd(g, t.1.abs()));
                if g > 1 {
                    if e.k % g != 0 {
                        return Search::None;
                    }
                    e = Lin { terms: e.terms.iter().map(|&(v, c)| (v, c / g)).collect(), k: e.k / g };
                }
                let Some(&(v, c)) = e.terms.iter().find(|t| t.1.abs() == 1) else { continue };
                // v = -(e - c*v) / c
                let rest = e.subst(v, &Lin::konst(0));
                let expr = rest.scale(-c);
                let (lo, hi) = p.dom[v];
                p.eqs.remove(i);
                let sub = |l: &Lin| l.subst(v, &expr);
                p.eqs = p.eqs.iter().map(sub).collect();
                p.les = p.les.iter().map(sub).collect();
                p.nes = p.nes.iter().map(sub).collect();
                p.distinct = p.distinct.iter().map(|g| g.iter().map(sub).collect()).collect();
                if lo > -INF {
                    p.les.push(Lin::konst(lo).sub(&expr));
                }
                if hi < INF {
                    p.les.push(expr.plus(-hi));
                }
                p.dom[v] = (-INF, INF);
                progress = true;
                break;
            }
        }
        let mut d = p.dom.clone();
        if !p.propagate(&mut d) {
            return Search::None;
        }
        // Whatever still has several open variables is assumed satisfiable.
        let open = |l: &Lin| l.eval(&d).is_none();
        if p.eqs.iter().chain(&p.les).chain(&p.nes).any(open) {
            exact = false;
        }
        // A variable only "threads differ" groups mention (a group id one
        // side never uses) can take any value of its domain: pick one that
        // makes its group differ.
        let elsewhere = {
            let mut used = vec![false; d.len()];
            p.eqs.iter().chain(&p.les).chain(&p.nes).flat_map(|l| &l.terms).for_each(|t| used[t.0] = true);
            for f in &self.funcs {
                f.a.terms.iter().chain(&f.b.terms).for_each(|t| used[t.0] = true);
                used[f.out] = true;
            }
            used
        };
        for g in &p.distinct {
            if g.iter().all(|l| l.as_const() == Some(0)) {
                return Search::None;
            }
            if g.iter().any(|l| matches!(l.eval(&d), Some(x) if x != 0)) {
                continue;
            }
            let free = g.iter().find_map(|l| single_open(l, &d).filter(|&(v, _, _)| !elsewhere[v]));
            match free {
                Some((v, c, rest)) => {
                    // c*x + rest != 0: one of two neighbouring values does it.
                    let (lo, hi) = d[v];
                    let start = if lo > -INF { lo } else if hi < INF { hi - 1 } else { 0 };
                    match [start, start + 1].into_iter().find(|&x| x <= hi && c.saturating_mul(x).saturating_add(rest) != 0) {
                        Some(x) => d[v] = (x, x),
                        None => exact = false,
                    }
                }
                None => exact = false,
            }
        }
        let mut values = fixed_values(&dom);
        for (v, x) in values.iter_mut().enumerate() {
            if x.is_none() && d[v].0 == d[v].1 {
                *x = Some(d[v].0);
            }
        }
        Search::Found(values, exact)
    }
}

#[derive(Clone, Copy)]
enum Disequality {
    /// `nes[i]`.
    Ne(usize),
    /// `distinct[i]`.
    Distinct(usize),
}

enum Search {
    Found(Vec<Option<i128>>, bool),
    None,
    /// Out of budget; the domains where the search stopped.
    Exhausted(Vec<(i128, i128)>),
}

impl Search {
    /// Drops the variables a linearized child problem added.
    fn truncated(self, n: usize) -> Search {
        match self {
            Search::Found(mut v, exact) => {
                v.truncate(n);
                Search::Found(v, exact)
            }
            Search::Exhausted(mut d) => {
                d.truncate(n);
                Search::Exhausted(d)
            }
            Search::None => Search::None,
        }
    }
}

fn fixed_values(dom: &[(i128, i128)]) -> Vec<Option<i128>> {
    dom.iter().map(|&(lo, hi)| (lo == hi).then_some(lo)).collect()
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// For `l == value` with exactly one open variable of coefficient ±1... or any
/// coefficient dividing the rest: the variable and its value (Err: no integer
/// solution). None when there is not exactly one open variable.
fn solve_single(l: &Lin, value: i128, dom: &[(i128, i128)]) -> Option<Result<(Var, i128), ()>> {
    let (v, c, rest) = single_open(l, dom)?;
    let need = value - rest;
    Some(if need % c == 0 { Ok((v, need / c)) } else { Err(()) })
}

/// Moves the bounds of the one open unit-coefficient variable of `a` onto
/// the class `a ≡ r (mod m)`; None on an empty domain.
fn residue(a: &Lin, r: i128, m: i128, dom: &mut [(i128, i128)]) -> Option<bool> {
    let Some((v, c, rest)) = single_open(a, dom) else { return Some(false) };
    let (lo, hi) = dom[v];
    if c.abs() != 1 || lo <= -INF || hi >= INF {
        return Some(false);
    }
    // c*v + rest ≡ r  =>  v ≡ (r - rest)*c
    onto_class(dom, v, ((r - rest) * c).rem_euclid(m), m)
}

/// Moves the bounds of `v` onto the residue class `r (mod m)`, `0 <= r < m`.
fn onto_class(dom: &mut [(i128, i128)], v: Var, r: i128, m: i128) -> Option<bool> {
    let (lo, hi) = dom[v];
    narrow(dom, v, lo + (r - lo).rem_euclid(m), hi - (hi - r).rem_euclid(m))
}

/// Sets the domain of `v` to `lo..=hi` (already within it): None when that
/// is empty, otherwise whether anything changed.
fn narrow(dom: &mut [(i128, i128)], v: Var, lo: i128, hi: i128) -> Option<bool> {
    if lo > hi {
        return None;
    }
    let changed = (lo, hi) != dom[v];
    dom[v] = (lo, hi);
    Some(changed)
}

/// What [`Problem::propagate_after`] arrived at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Propagated {
    Contradiction,
    /// A round changed nothing.
    FixedPoint,
    /// The rounds ran out while domains were still moving.
    Unfinished,
}

/// Propagates `e != 0`: `None` on a contradiction, else whether a domain changed.
fn propagate_ne(e: &Lin, dom: &mut [(i128, i128)]) -> Option<bool> {
    let mut changed = false;
        match e.eval(dom) {
            Some(0) => return None,
            Some(_) => {}
            None => {
                // One open variable left: cut the excluded value off a domain edge.
                if let Some((v, c, r)) = single_open(e, dom) {
                    if r % c == 0 {
                        let bad = -r / c;
                        if dom[v].0 == bad {
                            dom[v].0 += 1;
                            changed = true;
                        } else if dom[v].1 == bad {
                            dom[v].1 -= 1;
                            changed = true;
                        }
                        if dom[v].0 > dom[v].1 {
                            return None;
                        }
                    }
                }
            }
        }
    Some(changed)
}

/// Propagates a function's constraint: `None` on a contradiction, else
/// whether a domain changed.
fn propagate_func(f: &Func, dom: &mut [(i128, i128)]) -> Option<bool> {
    let mut changed = false;
        if let (Some(a), Some(b)) = (f.a.eval(dom), f.b.eval(dom)) {
            match f.op.eval(a, b) {
                Some(y) => {
                    let (lo, hi) = dom[f.out];
                    if y < lo || y > hi {
                        return None;
                    }
                    if lo != hi {
                        dom[f.out] = (y, y);
                        changed = true;
                    }
                }
                // Undefined (division by zero, huge shift): that execution traps, no access.
                None => return None,
            }
        } else if let (FnOp::Rem, Some(m), true) = (f.op, f.b.eval(dom), dom[f.out].0 == dom[f.out].1) {
            // y = a % m with y known: a lies in one residue class (a >= 0 here).
            if m > 0 && dom[f.out].0 >= 0 {
                match residue(&f.a, dom[f.out].0, m, dom) {
                    None => return None,
                    Some(c) => changed |= c,
                }
            }
        } else if let (FnOp::MulPow(_) | FnOp::DivPow(_), Some(a), [(n, 1)], 0) = (f.op, f.a.eval(dom), f.b.terms.as_slice(), f.b.k) {
            // y = a * m^n and y = a / m^n are monotone in the step
            // count n: step counts whose y falls outside y's bounds
            // (or traps) come off both ends of n's domain.
            let (lo, hi) = dom[*n];
            if hi - lo <= 64 {
                let (ylo, yhi) = dom[f.out];
                let outside = |k: i128| f.op.eval(a, k).is_none_or(|y| y < ylo || y > yhi);
                let (mut nlo, mut nhi) = (lo, hi);
                while nlo <= nhi && outside(nlo) {
                    nlo += 1;
                }
                while nhi >= nlo && outside(nhi) {
                    nhi -= 1;
                }
                match narrow(dom, *n, nlo, nhi) {
                    None => return None,
                    Some(c) => changed |= c,
                }
            }
        } else if f.op == FnOp::Xor {
            // y = a ^ b is invertible: a = y ^ b.
            let (o, _) = dom[f.out];
            if dom[f.out].0 == dom[f.out].1 {
                for (known, open) in [(&f.b, &f.a), (&f.a, &f.b)] {
                    if let Some(kv) = known.eval(dom) {
                        if let Some(c) = solve_single(open, o ^ kv, dom) {
                            match c {
                                Err(()) => return None,
                                Ok((v, x)) => {
                                    if x < dom[v].0 || x > dom[v].1 {
                                        return None;
                                    }
                                    dom[v] = (x, x);
                                    changed = true;
                                }
                            }
                        }
                    }
                }
            }
        }
    Some(changed)
}

/// In `e == 0`, a unit-coefficient variable is congruent modulo the gcd of
/// the other open coefficients: `256*g + t - 256*g' - t' == 0` pins `t` to
/// `t'` mod 256. Moves its bounds onto that residue class.
fn congruence(e: &Lin, dom: &mut [(i128, i128)]) -> Option<bool> {
    // Only a bounded unit-coefficient variable next to a non-unit one can move.
    let open = |t: &&(Var, i128)| dom[t.0].0 != dom[t.0].1;
    let bounded_unit = e.terms.iter().filter(open).any(|&(v, c)| c.abs() == 1 && dom[v].0 > -INF && dom[v].1 < INF);
    let non_unit = e.terms.iter().filter(open).any(|t| t.1.abs() != 1);
    if !bounded_unit || !non_unit {
        return Some(false);
    }
    let open: Vec<(Var, i128)> = e.terms.iter().copied().filter(|t| dom[t.0].0 != dom[t.0].1).collect();
    let fixed: i128 = e.terms.iter().filter(|t| dom[t.0].0 == dom[t.0].1).fold(e.k, |acc, t| clamp(acc + t.1.saturating_mul(dom[t.0].0)));
    let mut changed = false;
    for &(v, c) in &open {
        if c.abs() != 1 || dom[v].0 <= -INF || dom[v].1 >= INF {
            continue;
        }
        let g = open.iter().filter(|t| t.0 != v).fold(0i128, |g, t| gcd(g, t.1.abs()));
        if g <= 1 || g >= INF {
            continue;
        }
        // c*v + fixed ≡ 0 (mod g)  =>  v ≡ -fixed*c (mod g)
        changed |= onto_class(dom, v, (-fixed * c).rem_euclid(g), g)?;
    }
    Some(changed)
}

/// The one open variable of `l`, its coefficient, and the value of the rest;
/// None unless exactly one variable is open.
fn single_open(l: &Lin, dom: &[(i128, i128)]) -> Option<(Var, i128, i128)> {
    let mut open = None;
    let mut rest = l.k;
    for &(v, c) in &l.terms {
        let (lo, hi) = dom[v];
        if lo == hi {
            rest = clamp(rest + c.saturating_mul(lo));
        } else if open.replace((v, c)).is_some() {
            return None;
        }
    }
    open.map(|(v, c)| (v, c, rest))
}

/// Tightens domains from `e == 0` (or `e <= 0`); None on a contradiction,
/// Some(changed) otherwise.
fn tighten(e: &Lin, dom: &mut [(i128, i128)], equality: bool) -> Option<bool> {
    // Sums of the finite term bounds, and how many terms are unbounded each
    // way: a term that is the only unbounded one is still bounded by the rest.
    let (mut fmin, mut fmax) = (e.k, e.k);
    let (mut nmin, mut nmax) = (0u32, 0u32);
    let mut open = false;
    // Each term's range, kept for the second pass (most constraints are short).
    const KEPT: usize = 8;
    let mut ranges = [(0i128, 0i128); KEPT];
    for (i, &(v, c)) in e.terms.iter().enumerate() {
        open |= dom[v].0 != dom[v].1;
        let (tmin, tmax) = term_range(c, dom[v]);
        if let Some(r) = ranges.get_mut(i) {
            *r = (tmin, tmax);
        }
        if tmin <= -INF {
            nmin += 1;
        } else {
            fmin = clamp(fmin + tmin);
        }
        if tmax >= INF {
            nmax += 1;
        } else {
            fmax = clamp(fmax + tmax);
        }
    }
    if fmin <= -INF {
        nmin = 2;
    }
    if fmax >= INF {
        nmax = 2;
    }
    if (nmin == 0 && fmin > 0) || (equality && nmax == 0 && fmax < 0) {
        return None;
    }
    if !open {
        return Some(false);
    }
    let mut changed = false;
    for (i, &(v, c)) in e.terms.iter().enumerate() {
        let (lo, hi) = dom[v];
        if lo == hi {
            continue;
        }
        let (tmin, tmax) = ranges.get(i).copied().unwrap_or_else(|| term_range(c, (lo, hi)));
        // c*v <= -(smallest value of the other terms)
        let upper = match nmin {
            0 => Some(-(fmin - tmin)),
            1 if tmin <= -INF => Some(-fmin),
            _ => None,
        };
        // c*v >= -(largest value of the other terms), for equalities
        let lower = match nmax {
            _ if !equality => None,
            0 => Some(-(fmax - tmax)),
            1 if tmax >= INF => Some(-fmax),
            _ => None,
        };
        let (mut nlo, mut nhi) = (lo, hi);
        if c > 0 {
            if let Some(u) = upper {
                nhi = nhi.min(div_floor(u, c));
            }
            if let Some(l) = lower {
                nlo = nlo.max(div_ceil(l, c));
            }
        } else {
            if let Some(u) = upper {
                nlo = nlo.max(div_ceil(u, c));
            }
            if let Some(l) = lower {
                nhi = nhi.min(div_floor(l, c));
            }
        }
        changed |= narrow(dom, v, nlo, nhi)?;
    }
    Some(changed)
}

fn term_range(c: i128, (lo, hi): (i128, i128)) -> (i128, i128) {
    let (a, b) = (term(c, lo), term(c, hi));
    (a.min(b), a.max(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floor_and_ceiling_division_round_the_right_way() {
        for a in -20i128..=20 {
            for b in [-7i128, -3, -2, -1, 1, 2, 3, 7, 1 << 70] {
                let exact = a as f64 / b as f64;
                assert_eq!(div_floor(a, b), exact.floor() as i128, "{a} / {b}");
                assert_eq!(div_ceil(a, b), exact.ceil() as i128, "{a} / {b}");
            }
        }
    }

    #[test]
    fn a_bound_only_compared_against_takes_the_value_nearest_zero() {
        // A loop `for (s = 0; s < n; s += 64)` that must reach s = 64, with
        // `n` an unsigned host value: the witness needs n = 65, not the top.
        let mut p = Problem::default();
        let k = p.new_var(0, 1 << 26);
        let n = p.new_var(0, u32::MAX.into());
        let t = p.new_var(0, 63);
        p.equal(&Lin::var(k), &Lin::konst(1));
        p.at_most(&Lin::var(k).scale(64).plus(1), &Lin::var(n));
        p.at_most(&Lin::var(t).plus(1), &Lin::var(n));
        match p.solve_proven(DEFAULT_BUDGET) {
            Outcome::Feasible { values, exact } => {
                assert!(exact);
                assert_eq!(values[n], Some(65));
            }
            other => panic!("{other:?}"),
        }
        // A bound whose constraint has another variable left open stays.
        let mut r = Problem::default();
        let bound = r.new_var(0, INF);
        let open = r.new_var(-INF, INF);
        r.at_most(&Lin::var(open), &Lin::var(bound));
        let mut values = vec![Some(7), None];
        r.monotone_toward_zero(&mut values);
        assert_eq!(values[bound], Some(7));
        values[open] = Some(3);
        r.monotone_toward_zero(&mut values);
        assert_eq!(values[bound], Some(3));
        // Bounded only below it stays at the end nearest zero too.
        let mut q = Problem::default();
        let lo = q.new_var(-100, 100);
        q.at_most(&Lin::var(lo), &Lin::konst(-3));
        match q.solve_proven(DEFAULT_BUDGET) {
            Outcome::Feasible { values, .. } => assert_eq!(values[lo], Some(-3)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tree_reduction_pair_is_infeasible() {
        // tA = tB + s, tA < s, tB < s, tA != tB, t in [0, 63], s free.
        let mut p = Problem::default();
        let ta = p.new_var(0, 63);
        let tb = p.new_var(0, 63);
        let s = p.new_var(-INF, INF);
        p.equal(&Lin::var(ta), &Lin::var(tb).add(&Lin::var(s)));
        p.at_most(&Lin::var(ta).plus(1), &Lin::var(s));
        p.at_most(&Lin::var(tb).plus(1), &Lin::var(s));
        p.distinct.push(vec![Lin::var(ta).sub(&Lin::var(tb))]);
        assert_eq!(p.solve(DEFAULT_BUDGET), Outcome::Infeasible);
    }

    #[test]
    fn neighbour_read_has_an_exact_witness() {
        // tA = tB + 1 with tA, tB in [0, 7].
        let mut p = Problem::default();
        let ta = p.new_var(0, 7);
        let tb = p.new_var(0, 7);
        p.equal(&Lin::var(ta), &Lin::var(tb).plus(1));
        p.distinct.push(vec![Lin::var(ta).sub(&Lin::var(tb))]);
        match p.solve(DEFAULT_BUDGET) {
            Outcome::Feasible { values, exact } => {
                assert!(exact);
                assert_eq!((values[ta], values[tb]), (Some(1), Some(0)));
            }
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn xor_partner_and_guard() {
        // Bitonic step: thread A touches a ^ j only when (a ^ j) > a; B touches b.
        // b == a ^ j and b's partner b ^ j == a > b contradicts A's guard? Only B's
        // own cell is tested here: cell(A) = a ^ j = b with a != b is feasible.
        let mut p = Problem::default();
        let a = p.new_var(0, 15);
        let b = p.new_var(0, 15);
        let j = p.new_var(1, 8);
        let x = p.new_var(0, 15);
        p.funcs.push(Func { out: x, op: FnOp::Xor, a: Lin::var(a), b: Lin::var(j) });
        p.equal(&Lin::var(x), &Lin::var(b));
        p.at_most(&Lin::var(a).plus(1), &Lin::var(x)); // a < a ^ j
        p.at_most(&Lin::var(b).plus(1), &Lin::var(x)); // b < x = b: impossible
        p.distinct.push(vec![Lin::var(a).sub(&Lin::var(b))]);
        assert_eq!(p.solve(DEFAULT_BUDGET), Outcome::Infeasible);
    }

    #[test]
    fn unbounded_groups_are_eliminated() {
        // 64*gA + t = 64*gB + t' with t, t' in [0, 63] and (gA, t) != (gB, t').
        let mut p = Problem::default();
        let ga = p.new_var(0, INF);
        let gb = p.new_var(0, INF);
        let ta = p.new_var(0, 63);
        let tb = p.new_var(0, 63);
        p.equal(&Lin::var(ga).scale(64).add(&Lin::var(ta)), &Lin::var(gb).scale(64).add(&Lin::var(tb)));
        p.distinct.push(vec![Lin::var(ga).sub(&Lin::var(gb)), Lin::var(ta).sub(&Lin::var(tb))]);
        assert_eq!(p.solve(DEFAULT_BUDGET), Outcome::Infeasible);
    }

    #[test]
    fn a_group_id_one_side_never_uses_is_chosen_to_differ() {
        // Group g0 writes cell 128*g0 + t0, every group reads cell t1; the
        // reader's group g1 appears only in "the groups differ".
        let mut p = Problem::default();
        let (g0, t0, t1, g1) = (p.new_var(0, INF), p.new_var(0, 127), p.new_var(0, 127), p.new_var(0, INF));
        p.first[t0] = true;
        p.first[t1] = true;
        p.equal(&Lin::var(g0).scale(128).add(&Lin::var(t0)), &Lin::var(t1));
        p.distinct.push(vec![Lin::var(g0).sub(&Lin::var(g1))]);
        let Outcome::Feasible { values, exact: true } = p.solve(DEFAULT_BUDGET) else { panic!("an exact witness") };
        let (a, b) = (values[g0].unwrap(), values[g1].unwrap());
        assert_ne!(a, b);
        assert_eq!(128 * a + values[t0].unwrap(), values[t1].unwrap());
    }

    #[test]
    fn exhausted_budget_is_conservative() {
        let mut p = Problem::default();
        let a = p.new_var(0, 100);
        let b = p.new_var(0, 100);
        p.first[a] = true;
        p.first[b] = true;
        let y = p.new_var(-INF, INF);
        p.funcs.push(Func { out: y, op: FnOp::Mul, a: Lin::var(a), b: Lin::var(b) });
        p.equal(&Lin::var(y), &Lin::konst(-1));
        assert!(p.solve(50).is_feasible());
        assert_eq!(p.solve(DEFAULT_BUDGET), Outcome::Infeasible);
    }
}
