//! The rational relaxation of a problem's linear part, decided by
//! Fourier–Motzkin elimination with integer tightening: every derived
//! constraint is divided by the gcd of its coefficients and its constant
//! rounded, which is valid for integer solutions. When the relaxation has no
//! solution, neither has the integer problem.
//!
//! Bounds propagation looks at one constraint at a time: from `x <= y - 1`
//! and `y <= x` it only moves each domain edge by one per round. One
//! elimination step adds the two and sees `0 <= -1` at once. That is what
//! refutes most address questions of double-buffered and strided kernels
//! without enumerating thread pairs.
//!
//! Whatever cannot be represented (huge constants, too many variables or
//! rows) is left out or answered "not refuted": dropping a constraint only
//! enlarges the relaxation, so a refutation stays sound.

use crate::solver::{Lin, Var, INF};

/// More open variables than this: not attempted (rows are fixed-size arrays).
const MAX_VARS: usize = 20;
/// More rows than this after an elimination step: given up.
const MAX_ROWS: usize = 384;

/// What the relaxation says.
#[derive(Debug, PartialEq, Eq)]
pub enum Relaxed {
    Infeasible,
    /// Not refuted; where back-substitution found integer values for every
    /// open variable of the linear constraints, those values.
    Open(Option<Vec<(Var, i128)>>),
}

/// `sum(c[i] * x[i]) + k <= 0` over the open variables; `N` columns, the
/// fewest of 4, 8, 12, 16 or [`MAX_VARS`] that hold them (elimination
/// copies rows by the hundred).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Row<const N: usize> {
    c: [i64; N],
    k: i64,
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a as i64
}

impl<const N: usize> Row<N> {
    /// Divides by the gcd of the coefficients, rounding the constant towards
    /// the tighter side: `g*y + k <= 0` holds for integer `y` iff `y + ceil(k/g) <= 0`.
    /// Only the first `n` coefficients can be non-zero.
    fn normalized(mut self, n: usize) -> Row<N> {
        let c = &mut self.c[..n];
        if c.iter().any(|x| x.abs() == 1) {
            return self;
        }
        let g = c.iter().fold(0, |g, &x| gcd(g, x));
        if g > 1 {
            c.iter_mut().for_each(|x| *x /= g);
            self.k = self.k.div_euclid(g) + i64::from(self.k.rem_euclid(g) != 0);
        }
        self
    }
    fn is_const(&self, n: usize) -> bool {
        self.c[..n].iter().all(|&x| x == 0)
    }
}

/// Decides the relaxation of `eqs == 0`, `les <= 0` and `extra <= 0` under the domains.
pub fn refute(eqs: &[Lin], les: &[Lin], extra: Option<&Lin>, dom: &[(i128, i128)]) -> Relaxed {
    let mut cols: Vec<Var> = Vec::new();
    for l in eqs.iter().chain(les).chain(extra) {
        for &(v, _) in &l.terms {
            if dom[v].0 != dom[v].1 && !cols.contains(&v) {
                cols.push(v);
            }
        }
    }
    cols.sort_unstable();
    match cols.len() {
        0..=4 => refute_in::<4>(eqs, les, extra, dom, &cols),
        5..=8 => refute_in::<8>(eqs, les, extra, dom, &cols),
        9..=12 => refute_in::<12>(eqs, les, extra, dom, &cols),
        13..=16 => refute_in::<16>(eqs, les, extra, dom, &cols),
        17..=MAX_VARS => refute_in::<MAX_VARS>(eqs, les, extra, dom, &cols),
        _ => Relaxed::Open(None),
    }
}

/// [`refute`] over the open variables `cols` (sorted, at most `N`).
fn refute_in<const N: usize>(eqs: &[Lin], les: &[Lin], extra: Option<&Lin>, dom: &[(i128, i128)], cols: &[Var]) -> Relaxed {
    let n = cols.len();
    let mut rows: Vec<Row<N>> = Vec::with_capacity(2 * (eqs.len() + les.len() + n) + 1);
    let mut equalities: Vec<Row<N>> = Vec::with_capacity(eqs.len());
    for e in eqs {
        match convert(e, dom, cols) {
            Converted::Row(r) => equalities.push(r),
            Converted::Const(k) if k != 0 => return Relaxed::Infeasible,
            Converted::Const(_) | Converted::Unrepresentable => {}
        }
    }
    for l in les.iter().chain(extra) {
        match convert(l, dom, cols) {
            Converted::Row(r) => rows.push(r.normalized(n)),
            Converted::Const(k) if k > 0 => return Relaxed::Infeasible,
            Converted::Const(_) | Converted::Unrepresentable => {}
        }
    }
    for (i, &v) in cols.iter().enumerate() {
        let (lo, hi) = dom[v];
        let mut unit = |s: i64, k: i128| {
            if let Ok(k) = i64::try_from(k) {
                let mut c = [0i64; N];
                c[i] = s;
                rows.push(Row { c, k });
            }
        };
        if lo > -INF {
            unit(-1, lo); // -x + lo <= 0
        }
        if hi < INF {
            unit(1, -hi); // x - hi <= 0
        }
    }
    // Equalities first, exactly over the integers: divide by the gcd of the
    // coefficients (no integer solution when it does not divide the
    // constant), then substitute a unit-coefficient variable everywhere.
    // That keeps parities visible: `2a + 1 == 2b` fails here, while
    // eliminating `a` and `b` one inequality at a time can lose it.
    let mut substituted: Vec<(usize, Row<N>)> = Vec::new();
    while let Some(mut e) = equalities.pop() {
        let g = e.c.iter().fold(0, |g, &x| gcd(g, x));
        if g == 0 {
            if e.k != 0 {
                return Relaxed::Infeasible;
            }
            continue;
        }
        if e.k % g != 0 {
            return Relaxed::Infeasible;
        }
        e.c.iter_mut().for_each(|x| *x /= g);
        e.k /= g;
        let Some(col) = (0..n).find(|&i| e.c[i].abs() == 1) else {
            let negated = Row { c: e.c.map(|x| -x), k: -e.k };
            rows.push(e);
            rows.push(negated);
            continue;
        };
        for r in equalities.iter_mut().filter(|r| r.c[col] != 0) {
            let Some(next) = eliminate(r, &e, col, n) else { return Relaxed::Open(None) };
            *r = next;
        }
        for r in rows.iter_mut().filter(|r| r.c[col] != 0) {
            let Some(next) = eliminate(r, &e, col, n) else { return Relaxed::Open(None) };
            *r = next.normalized(n);
        }
        substituted.push((col, e));
    }
    let Some(rows) = tidy(rows, n) else { return Relaxed::Infeasible };

    // Eliminate one column at a time, keeping each stage for back-substitution.
    let mut stages: Vec<(usize, Vec<Row<N>>)> = Vec::new();
    let mut live = vec![true; n];
    let mut rows = rows;
    while let Some(col) = cheapest_column(&rows, &live) {
        live[col] = false;
        let mut next: Vec<Row<N>> = rows.iter().filter(|r| r.c[col] == 0).cloned().collect();
        for p in rows.iter().filter(|r| r.c[col] > 0) {
            for q in rows.iter().filter(|r| r.c[col] < 0) {
                let (a, b) = (p.c[col], -q.c[col]);
                let Some(r) = combine(p, q, a, b, n) else { return Relaxed::Open(None) };
                if r.is_const(n) {
                    if r.k > 0 {
                        return Relaxed::Infeasible;
                    }
                } else {
                    next.push(r);
                }
            }
        }
        let Some(next) = tidy(next, n) else { return Relaxed::Infeasible };
        if next.len() > MAX_ROWS {
            return Relaxed::Open(None);
        }
        stages.push((col, rows));
        rows = next;
    }
    let Some(mut x) = back_substitute(&stages) else { return Relaxed::Open(None) };
    // Substituted variables last, the last substituted first: each one's
    // equality holds only variables still present when it was substituted.
    for (col, e) in substituted.iter().rev() {
        let mut rest: i128 = e.k as i128;
        for (i, &c) in e.c.iter().enumerate() {
            if i != *col {
                rest += c as i128 * x[i] as i128;
            }
        }
        // s*x + rest == 0 with s = ±1.
        let Ok(value) = i64::try_from(-rest * e.c[*col] as i128) else { return Relaxed::Open(None) };
        x[*col] = value;
    }
    Relaxed::Open(Some(cols.iter().copied().zip(x[..n].iter().map(|&v| i128::from(v))).collect()))
}

/// The result of turning a [`Lin`] into a row over the open variables.
enum Converted<const N: usize> {
    Row(Row<N>),
    /// No open variable: the constant.
    Const(i128),
    /// A coefficient or constant beyond 64 bits: left out (which only relaxes).
    Unrepresentable,
}

fn convert<const N: usize>(l: &Lin, dom: &[(i128, i128)], cols: &[Var]) -> Converted<N> {
    let mut c = [0i64; N];
    let mut k = l.k;
    for &(v, x) in &l.terms {
        let (lo, hi) = dom[v];
        if lo == hi {
            k = k.saturating_add(x.saturating_mul(lo));
        } else {
            match i64::try_from(x) {
                Ok(x) => c[cols.binary_search(&v).expect("open variable has a column")] = x,
                Err(_) => return Converted::Unrepresentable,
            }
        }
    }
    if c.iter().all(|&x| x == 0) {
        return Converted::Const(k);
    }
    match i64::try_from(k) {
        Ok(k) => Converted::Row(Row { c, k }),
        Err(_) => Converted::Unrepresentable,
    }
}

/// `r - (a/s) * e` where `e` has the unit coefficient `s` and `r` the coefficient `a` at `col`.
fn eliminate<const N: usize>(r: &Row<N>, e: &Row<N>, col: usize, n: usize) -> Option<Row<N>> {
    let factor = r.c[col].checked_mul(e.c[col])?;
    let mut c = [0i64; N];
    for (out, (&x, &y)) in c[..n].iter_mut().zip(r.c.iter().zip(&e.c)) {
        *out = x.checked_sub(factor.checked_mul(y)?)?;
    }
    Some(Row { c, k: r.k.checked_sub(factor.checked_mul(e.k)?)? })
}

/// `b*p + a*q`, which cancels the column where `p` has `a > 0` and `q` has `-b < 0`.
fn combine<const N: usize>(p: &Row<N>, q: &Row<N>, a: i64, b: i64, n: usize) -> Option<Row<N>> {
    let g = gcd(a, b);
    let (a, b) = (a / g, b / g);
    let mut c = [0i64; N];
    for (out, (&x, &y)) in c[..n].iter_mut().zip(p.c.iter().zip(&q.c)) {
        *out = x.checked_mul(b)?.checked_add(y.checked_mul(a)?)?;
    }
    let k = p.k.checked_mul(b)?.checked_add(q.k.checked_mul(a)?)?;
    Some(Row { c, k }.normalized(n))
}

/// Sorts and merges rows with equal coefficients (the tighter constant wins);
/// None when a constant row is violated.
fn tidy<const N: usize>(mut rows: Vec<Row<N>>, n: usize) -> Option<Vec<Row<N>>> {
    if rows.iter().any(|r| r.is_const(n) && r.k > 0) {
        return None;
    }
    rows.retain(|r| !r.is_const(n));
    // Same coefficients next to each other, the largest (tightest) constant first.
    let tighter_first = |x: &Row<N>, y: &Row<N>| x.c[..n].cmp(&y.c[..n]).then(y.k.cmp(&x.k));
    if N <= 8 {
        rows.sort_unstable_by(tighter_first);
        rows.dedup_by(|later, first| later.c[..n] == first.c[..n]);
        return Some(rows);
    }
    // Wide rows: the order is found on indices, so each row moves once.
    let mut order: Vec<u32> = (0..rows.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| tighter_first(&rows[a as usize], &rows[b as usize]));
    order.dedup_by(|later, first| rows[*later as usize].c[..n] == rows[*first as usize].c[..n]);
    Some(order.into_iter().map(|i| rows[i as usize].clone()).collect())
}

/// The live column to eliminate next: one with only unit coefficients if
/// any (eliminating it loses no integer information, so the gcd tightening of
/// what remains still sees parities and strides), and the fewest new rows.
fn cheapest_column<const N: usize>(rows: &[Row<N>], live: &[bool]) -> Option<usize> {
    (0..live.len())
        .filter(|&c| live[c] && rows.iter().any(|r| r.c[c] != 0))
        .min_by_key(|&c| {
            let (mut pos, mut neg, mut inexact) = (0i64, 0i64, false);
            for r in rows {
                pos += i64::from(r.c[c] > 0);
                neg += i64::from(r.c[c] < 0);
                inexact |= r.c[c].abs() > 1;
            }
            (inexact, pos * neg - pos - neg, c)
        })
}

/// Integer values for the eliminated columns, last eliminated first, each
/// chosen within the bounds its stage's rows give once the later columns are
/// fixed. None where some interval holds no integer.
fn back_substitute<const N: usize>(stages: &[(usize, Vec<Row<N>>)]) -> Option<[i64; N]> {
    let mut x = [0i64; N];
    for (col, rows) in stages.iter().rev() {
        let (mut lo, mut hi) = (i64::MIN, i64::MAX);
        for r in rows.iter().filter(|r| r.c[*col] != 0) {
            // c*x_col + rest <= 0
            let mut rest = r.k as i128;
            for (i, &ci) in r.c.iter().enumerate() {
                if i != *col {
                    rest += ci as i128 * x[i] as i128;
                }
            }
            let c = r.c[*col] as i128;
            if c > 0 {
                hi = hi.min(i64::try_from((-rest).div_euclid(c)).ok()?);
            } else {
                let bound = rest.div_euclid(-c) + i128::from(rest.rem_euclid(-c) != 0);
                lo = lo.max(i64::try_from(bound).ok()?);
            }
        }
        if lo > hi {
            return None;
        }
        x[*col] = if lo > i64::MIN { lo } else if hi < i64::MAX { hi } else { 0 };
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn le(terms: &[(Var, i128)], k: i128) -> Lin {
        Lin { terms: terms.into(), k }
    }

    #[test]
    fn a_difference_cycle_is_refuted_at_once() {
        // x <= y - 1, y <= x over [0, 1000]: bounds propagation needs 1000 rounds.
        let dom = [(0, 1000), (0, 1000)];
        let les = [le(&[(0, 1), (1, -1)], 1), le(&[(0, -1), (1, 1)], 0)];
        assert_eq!(refute(&[], &les, None, &dom), Relaxed::Infeasible);
    }

    #[test]
    fn integer_tightening_refutes_what_rationals_allow() {
        // 2x == 1 has the rational solution 1/2 only.
        let dom = [(-10, 10)];
        assert_eq!(refute(&[le(&[(0, 2)], -1)], &[], None, &dom), Relaxed::Infeasible);
    }

    #[test]
    fn a_feasible_system_gives_a_point_that_satisfies_it() {
        // tA = tB + 1, tA <= 7, tB >= 3.
        let dom = [(0, 255), (0, 255)];
        let eqs = [le(&[(0, 1), (1, -1)], -1)];
        let les = [le(&[(0, 1)], -7), le(&[(1, -1)], 3)];
        let Relaxed::Open(Some(point)) = refute(&eqs, &les, None, &dom) else { panic!("not refuted, with a point") };
        let value = |v: Var| point.iter().find(|p| p.0 == v).unwrap().1;
        assert_eq!(value(0), value(1) + 1);
        assert!(value(0) <= 7 && value(1) >= 3);
    }

    #[test]
    fn fixed_variables_are_constants() {
        // x + y <= 3 with y fixed at 5 and x >= 0.
        let dom = [(0, 10), (5, 5)];
        assert_eq!(refute(&[], &[le(&[(0, 1), (1, 1)], -3)], None, &dom), Relaxed::Infeasible);
    }

    #[test]
    fn an_unbounded_buffer_parity_has_no_integer_value() {
        // 512p + a - b == 256 with a - b in [0, 255]: only p in (0, 1/2] fits,
        // which the rational relaxation allows and integer substitution does not.
        let dom = [(-INF, INF), (0, 255), (0, 255)];
        let eqs = [le(&[(0, 512), (1, 1), (2, -1)], -256)];
        let les = [le(&[(1, -1), (2, 1)], 0)];
        assert_eq!(refute(&eqs, &les, None, &dom), Relaxed::Infeasible);
        // With a - b allowed to reach 256, p = 0 is a solution.
        let wider = [(-INF, INF), (0, 256), (0, 255)];
        assert!(matches!(refute(&eqs, &les, None, &wider), Relaxed::Open(_)));
    }

    #[test]
    fn parity_through_xor_bits_is_refuted() {
        // a = 2h + 1 (odd) and a = 2g (even).
        let dom = [(0, 255), (0, 127), (0, 127)];
        let eqs = [le(&[(0, 1), (1, -2)], -1), le(&[(0, 1), (2, -2)], 0)];
        assert_eq!(refute(&eqs, &[], None, &dom), Relaxed::Infeasible);
    }

}
