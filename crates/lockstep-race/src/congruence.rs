//! Equalities that the functional constraints imply, found before any search.
//!
//! The solver only reasons about `y = a ^ b` once an operand is known, so a
//! question such as "can `t ^ s` of one thread equal `u ^ s` of another?"
//! would enumerate every value of `s`. Algebra answers it outright: xor with
//! the same value is injective (`t ^ s == u ^ s` gives `t == u`) and cancels
//! (`(t ^ s) ^ s == t`), and equal functions of equal arguments are equal
//! (congruence). [`close`] adds each such consequence as a linear equality,
//! which propagation and the relaxation then use at every search node.

use crate::relax::{self, Relaxed};
use crate::solver::{FnOp, Func, Lin, Problem, Var};
use rustc_hash::FxHashSet;

/// Rounds of closure; each round looks at every pair of functions once.
const MAX_ROUNDS: usize = 8;

/// The equalities `p`'s functions imply (`p.dom` may be tighter than the
/// problem's own domains: bounds already propagated); None when one of them
/// contradicts a constraint (the problem is infeasible).
pub fn close(p: &Problem) -> Option<Vec<Lin>> {
    // Without two functions only merged variables can matter, and only
    // `c*x - c*y (+ fixed terms) == 0` merges any.
    let merges = |e: &Lin| {
        let fixed = |v: Var| p.dom[v].0 == p.dom[v].1;
        let mut open = e.terms.iter().filter(|t| !fixed(t.0));
        let k = e.terms.iter().filter(|t| fixed(t.0)).fold(e.k, |k, t| k.saturating_add(t.1.saturating_mul(p.dom[t.0].0)));
        matches!((open.next(), open.next(), open.next()), (Some(a), Some(b), None) if a.1 == -b.1 && k == 0)
    };
    if p.funcs.len() < 2 && !p.eqs.iter().any(merges) {
        return Some(Vec::new());
    }
    let mut classes = Classes::new(&p.dom);
    let mut added: FxHashSet<Lin> = FxHashSet::default();
    let mut extra = Vec::new();
    for e in &p.eqs {
        let e = classes.lin(e);
        classes.merge_if_same(&e);
    }
    // Consequences need two functions; the class check below needs none.
    let rounds = if p.funcs.len() < 2 { 0 } else { MAX_ROUNDS };
    for _ in 0..rounds {
        let funcs: Vec<Func> = p.funcs.iter().map(|f| classes.func(f)).collect();
        let mut found = Vec::new();
        let nonzero = |l: &Lin| {
            let (lo, hi) = l.range(&p.dom);
            lo > 0 || hi < 0
        };
        for (i, f) in funcs.iter().enumerate() {
            for g in &funcs[i + 1..] {
                consequences(f, g, &nonzero, &mut found);
                consequences(g, f, &nonzero, &mut found);
            }
        }
        for e in &p.eqs {
            let e = classes.lin(e);
            // Merged functions may leave an equation between two variables.
            classes.merge_if_same(&e);
            common_factor(&e, &funcs, p, &mut found);
        }
        let mut changed = false;
        for (x, y) in found {
            let diff = classes.lin(&x).sub(&classes.lin(&y));
            if diff.terms.is_empty() {
                if diff.k != 0 {
                    return None;
                }
                continue;
            }
            let diff = if diff.terms[0].1 < 0 { diff.scale(-1) } else { diff };
            if added.insert(diff.clone()) {
                classes.merge_if_same(&diff);
                extra.push(diff);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut zero = |l: &Lin| {
        let c = classes.lin(l);
        c.terms.is_empty() && c.k == 0
    };
    let contradiction = p.nes.iter().any(&mut zero) || p.distinct.iter().any(|g| g.iter().all(&mut zero));
    (!contradiction).then_some(extra)
}

/// Pairs of expressions that `f` and `g` together force to be equal.
/// `nonzero` tells which expressions the domains keep away from zero.
fn consequences(f: &Func, g: &Func, nonzero: &dyn Fn(&Lin) -> bool, out: &mut Vec<(Lin, Lin)>) {
    let (fo, go) = (Lin::var(f.out), Lin::var(g.out));
    let commutes = matches!(f.op, FnOp::Xor | FnOp::And | FnOp::Or | FnOp::Mul);
    if f.op == g.op && ((f.a == g.a && f.b == g.b) || (commutes && f.a == g.b && f.b == g.a)) {
        out.push((fo.clone(), go.clone()));
    }
    if f.op == g.op && f.out == g.out {
        // Equal results and one equal operand: the others are equal where the
        // function is injective in them. Products are, by a non-zero factor
        // (an overflowing product traps, none wraps around).
        let operands = |h: &Func| if commutes { vec![(h.a.clone(), h.b.clone()), (h.b.clone(), h.a.clone())] } else { vec![(h.a.clone(), h.b.clone())] };
        for (fx, fy) in operands(f) {
            for (gx, gy) in operands(g) {
                let injective = match f.op {
                    FnOp::Xor => true,
                    FnOp::Mul => nonzero(&fo) || nonzero(&fx),
                    _ => false,
                };
                if fx == gx && injective {
                    out.push((fy.clone(), gy));
                }
            }
        }
        // a * m^n: one step count n gives one a; a non-zero a one n.
        if let FnOp::MulPow(_) = f.op {
            if f.b == g.b {
                out.push((f.a.clone(), g.a.clone()));
            }
            if f.a == g.a && (nonzero(&fo) || nonzero(&f.a)) {
                out.push((f.b.clone(), g.b.clone()));
            }
        }
    }
    // Xor cancels: f = g.out ^ y where g = x ^ y gives f = x.
    if f.op == FnOp::Xor && g.op == FnOp::Xor {
        for (fx, fy) in [(&f.a, &f.b), (&f.b, &f.a)] {
            if *fx == go {
                for (gx, gy) in [(&g.a, &g.b), (&g.b, &g.a)] {
                    if fy == gy {
                        out.push((fo.clone(), gx.clone()));
                    }
                }
            }
        }
    }
}

/// Rows of one stride: where `e` says `c*x*m - c*y*m + rest == 0` with the
/// factor `m` positive and `|rest| < |c|*m` (from the domains, or from the
/// problem's linear constraints), the rows `x` and `y` are equal: else the
/// products alone differ by at least `|c|*m`. So `(r0 - r1)*ld == t1 - t0`
/// with rows narrower than `ld` puts both threads in one row.
fn common_factor(e: &Lin, funcs: &[Func], p: &Problem, out: &mut Vec<(Lin, Lin)>) {
    let products: Vec<&Func> = funcs.iter().filter(|f| f.op == FnOp::Mul && e.coef(f.out) != 0).collect();
    for (i, f) in products.iter().enumerate() {
        for g in &products[i + 1..] {
            let c = e.coef(f.out);
            if e.coef(g.out) != -c {
                continue;
            }
            let rest = e.sub(&Lin::var(f.out).scale(c)).add(&Lin::var(g.out).scale(c));
            let (lo, hi) = rest.range(&p.dom);
            let reach = lo.saturating_neg().max(hi);
            for (m, fx) in [(&f.a, &f.b), (&f.b, &f.a)] {
                for (gm, gx) in [(&g.a, &g.b), (&g.b, &g.a)] {
                    let least = m.range(&p.dom).0;
                    if m != gm || least <= 0 {
                        continue;
                    }
                    // `rest >= |c|*m` and `rest <= -|c|*m` both refuted.
                    let step = m.scale(c.abs());
                    let narrower = || {
                        [step.sub(&rest), rest.add(&step)].iter().all(|side| relax::refute(&p.eqs, &p.les, Some(side), &p.dom) == Relaxed::Infeasible)
                    };
                    if reach < c.abs().saturating_mul(least) || narrower() {
                        // Equal rows of one stride, equal products.
                        out.push((fx.clone(), gx.clone()));
                        out.push((Lin::var(f.out), Lin::var(g.out)));
                    }
                }
            }
        }
    }
}

/// Classes of variables known equal, each named by its smallest member;
/// variables with a one-value domain stand for that value.
struct Classes {
    parent: Vec<Var>,
    fixed: Vec<Option<i128>>,
}

impl Classes {
    fn new(dom: &[(i128, i128)]) -> Classes {
        Classes { parent: (0..dom.len()).collect(), fixed: dom.iter().map(|&(lo, hi)| (lo == hi).then_some(lo)).collect() }
    }

    fn find(&mut self, mut v: Var) -> Var {
        while self.parent[v] != v {
            self.parent[v] = self.parent[self.parent[v]];
            v = self.parent[v];
        }
        v
    }

    /// Records `x == y` when `e` says `c*x - c*y == 0`.
    fn merge_if_same(&mut self, e: &Lin) {
        if let [(x, c), (y, d)] = e.terms[..] {
            if e.k == 0 && c == -d {
                let (x, y) = (self.find(x), self.find(y));
                self.parent[x.max(y)] = x.min(y);
            }
        }
    }

    /// `l` with every variable replaced by its value or its class's name.
    fn lin(&mut self, l: &Lin) -> Lin {
        l.terms.iter().fold(Lin::konst(l.k), |acc, &(v, c)| match self.fixed[v] {
            Some(x) => acc.add(&Lin::konst(c.saturating_mul(x))),
            None => {
                let r = self.find(v);
                acc.add(&Lin::var(r).scale(c))
            }
        })
    }

    fn func(&mut self, f: &Func) -> Func {
        Func { out: self.find(f.out), op: f.op, a: self.lin(&f.a), b: self.lin(&f.b) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn func(p: &mut Problem, op: FnOp, a: Lin, b: Lin) -> Var {
        let out = p.new_var(0, 1 << 20);
        p.funcs.push(Func { out, op, a, b });
        out
    }

    /// Threads t and u and their xor partners t ^ s and u ^ s.
    fn partners() -> (Problem, [Var; 4]) {
        let mut p = Problem::default();
        let (t, u, s) = (p.new_var(0, 255), p.new_var(0, 255), p.new_var(1, 128));
        let pt = func(&mut p, FnOp::Xor, Lin::var(t), Lin::var(s));
        let pu = func(&mut p, FnOp::Xor, Lin::var(u), Lin::var(s));
        (p, [t, u, pt, pu])
    }

    #[test]
    fn equal_partners_mean_equal_threads() {
        let (mut p, [t, u, pt, pu]) = partners();
        p.equal(&Lin::var(pt), &Lin::var(pu));
        p.distinct.push(vec![Lin::var(t).sub(&Lin::var(u))]);
        assert!(close(&p).is_none());
    }

    #[test]
    fn partner_of_partner_is_self() {
        let (mut p, [t, u, pt, pu]) = partners();
        p.equal(&Lin::var(pt), &Lin::var(u));
        // pu = (t ^ s) ^ s = t
        assert!(close(&p).expect("feasible").contains(&Lin::var(t).sub(&Lin::var(pu))));
    }

    fn mul(p: &mut Problem, a: Lin, b: Lin) -> Var {
        func(p, FnOp::Mul, a, b)
    }

    #[test]
    fn products_by_one_nonzero_factor_are_injective() {
        // offset * (2t + 1) == offset * (2u + 1) with a non-zero product.
        let mut p = Problem::default();
        let (t, u, offset) = (p.new_var(0, 63), p.new_var(0, 63), p.new_var(0, 64));
        let odd = |v: Var| Lin::var(v).scale(2).plus(1);
        let x = mul(&mut p, Lin::var(offset), odd(t));
        let y = mul(&mut p, Lin::var(offset), odd(u));
        p.equal(&Lin::var(x), &Lin::var(y));
        p.distinct.push(vec![Lin::var(t).sub(&Lin::var(u))]);
        assert!(close(&p).is_some(), "a zero factor makes any two threads agree");
        p.dom[x] = (1, 1 << 20);
        assert!(close(&p).is_none());
    }

    #[test]
    fn fixed_variables_count_as_their_values() {
        // offset*(2t+2) + m == offset*(2u+1) + n with m and n both fixed at -1.
        let mut p = Problem::default();
        let (t, u, offset) = (p.new_var(0, 63), p.new_var(0, 63), p.new_var(1, 64));
        let (m, n) = (p.new_var(-1, -1), p.new_var(-1, -1));
        let x = mul(&mut p, Lin::var(offset), Lin::var(t).scale(2).plus(2));
        let y = mul(&mut p, Lin::var(offset), Lin::var(u).scale(2).plus(1));
        p.equal(&Lin::var(x).add(&Lin::var(m)), &Lin::var(y).add(&Lin::var(n)));
        p.dom[x] = (1, 1 << 20);
        // x == y, so 2t + 2 == 2u + 1: no integer solution, which the relaxation sees.
        assert!(close(&p).expect("not refuted here").contains(&Lin::var(t).scale(2).sub(&Lin::var(u).scale(2)).plus(1)));
    }

    /// Threads (x0, y0) and (x1, y1) at one cell of rows `ld` apart:
    /// `y0*ld + x0 == ld*y1 + x1` (one product commuted), the threads distinct.
    fn one_cell_of_rows(least_ld: i128, widest_column: i128, columns_below_ld: bool) -> Problem {
        let mut p = Problem::default();
        let ld = p.new_var(least_ld, 1 << 10);
        let [x0, y0, x1, y1] = [0; 4].map(|_| p.new_var(0, widest_column));
        if columns_below_ld {
            p.at_most(&Lin::var(x0), &Lin::var(ld).plus(-1));
            p.at_most(&Lin::var(x1), &Lin::var(ld).plus(-1));
        }
        let a = mul(&mut p, Lin::var(y0), Lin::var(ld));
        let b = mul(&mut p, Lin::var(ld), Lin::var(y1));
        p.equal(&Lin::var(a).add(&Lin::var(x0)), &Lin::var(b).add(&Lin::var(x1)));
        p.distinct.push(vec![Lin::var(x0).sub(&Lin::var(x1)), Lin::var(y0).sub(&Lin::var(y1))]);
        p
    }

    #[test]
    fn rows_of_a_wide_stride_are_one_row() {
        // Columns in [0, 15]: ld >= 16 puts both threads in one row, and
        // then in one column; ld >= 15 does not.
        for (least, decided) in [(16, true), (15, false)] {
            assert_eq!(close(&one_cell_of_rows(least, 15, false)).is_none(), decided, "ld >= {least}");
        }
    }

    #[test]
    fn columns_below_the_stride_keep_rows_apart() {
        // Columns below ld stated as constraints (the domains alone allow any
        // ld >= 1 and wider columns): the relaxation decides it.
        for stated in [true, false] {
            assert_eq!(close(&one_cell_of_rows(1, 1 << 10, stated)).is_none(), stated, "columns below ld stated: {stated}");
        }
    }

    #[test]
    fn different_operands_imply_nothing() {
        let mut p = Problem::default();
        let (t, u, s, r) = (p.new_var(0, 255), p.new_var(0, 255), p.new_var(1, 128), p.new_var(1, 128));
        let pt = func(&mut p, FnOp::Xor, Lin::var(t), Lin::var(s));
        let pu = func(&mut p, FnOp::Xor, Lin::var(u), Lin::var(r));
        p.equal(&Lin::var(pt), &Lin::var(pu));
        p.distinct.push(vec![Lin::var(t).sub(&Lin::var(u))]);
        assert_eq!(close(&p), Some(Vec::new()));
    }
}
