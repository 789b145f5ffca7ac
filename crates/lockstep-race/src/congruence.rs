//! Equalities that the functional constraints imply, found before any search.
//!
//! The solver only reasons about `y = a ^ b` once an operand is known, so a
//! question such as "can `t ^ s` of one thread equal `u ^ s` of another?"
//! would enumerate every value of `s`. Algebra answers it outright: xor with
//! the same value is injective (`t ^ s == u ^ s` gives `t == u`) and cancels
//! (`(t ^ s) ^ s == t`), and equal functions of equal arguments are equal
//! (congruence). [`close`] adds each such consequence as a linear equality,
//! which propagation and the relaxation then use at every search node.

use crate::solver::{FnOp, Func, Lin, Problem, Var};
use rustc_hash::FxHashSet;

/// Rounds of closure; each round looks at every pair of functions once.
const MAX_ROUNDS: usize = 8;

/// Adds to `p.eqs` the equalities its functions imply; false when one of
/// them contradicts a constraint (the problem is infeasible).
pub fn close(p: &mut Problem) -> bool {
    if p.funcs.len() < 2 {
        return true;
    }
    let mut classes = Classes::new(p.dom.len());
    let mut added: FxHashSet<Lin> = FxHashSet::default();
    for _ in 0..MAX_ROUNDS {
        p.eqs.iter().for_each(|e| classes.merge_if_same(e));
        let funcs: Vec<Func> = p.funcs.iter().map(|f| classes.func(f)).collect();
        let mut found = Vec::new();
        for (i, f) in funcs.iter().enumerate() {
            for g in &funcs[i + 1..] {
                consequences(f, g, &mut found);
                consequences(g, f, &mut found);
            }
        }
        let mut changed = false;
        for (x, y) in found {
            let diff = classes.lin(&x).sub(&classes.lin(&y));
            if diff.terms.is_empty() {
                if diff.k != 0 {
                    return false;
                }
                continue;
            }
            let diff = if diff.terms[0].1 < 0 { diff.scale(-1) } else { diff };
            if added.insert(diff.clone()) {
                classes.merge_if_same(&diff);
                p.eqs.push(diff);
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
    !p.nes.iter().any(&mut zero) && !p.distinct.iter().any(|g| g.iter().all(&mut zero))
}

/// Pairs of expressions that `f` and `g` together force to be equal.
fn consequences(f: &Func, g: &Func, out: &mut Vec<(Lin, Lin)>) {
    let (fo, go) = (Lin::var(f.out), Lin::var(g.out));
    let commutes = matches!(f.op, FnOp::Xor | FnOp::And | FnOp::Or | FnOp::Mul);
    if f.op == g.op && ((f.a == g.a && f.b == g.b) || (commutes && f.a == g.b && f.b == g.a)) {
        out.push((fo.clone(), go.clone()));
    }
    if f.op != FnOp::Xor || g.op != FnOp::Xor {
        return;
    }
    // Injective in each operand: equal results and one equal operand.
    if f.out == g.out {
        for (fx, fy) in [(&f.a, &f.b), (&f.b, &f.a)] {
            for (gx, gy) in [(&g.a, &g.b), (&g.b, &g.a)] {
                if fx == gx {
                    out.push((fy.clone(), gy.clone()));
                }
            }
        }
    }
    // Cancellation: f = g.out ^ y where g = x ^ y gives f = x.
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

/// Classes of variables known equal, each named by its smallest member.
struct Classes {
    parent: Vec<Var>,
}

impl Classes {
    fn new(n: usize) -> Classes {
        Classes { parent: (0..n).collect() }
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

    /// `l` with every variable replaced by its class's name.
    fn lin(&mut self, l: &Lin) -> Lin {
        l.terms.iter().fold(Lin::konst(l.k), |acc, &(v, c)| {
            let r = self.find(v);
            acc.add(&Lin::var(r).scale(c))
        })
    }

    fn func(&mut self, f: &Func) -> Func {
        Func { out: self.find(f.out), op: f.op, a: self.lin(&f.a), b: self.lin(&f.b) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn xor(p: &mut Problem, a: Lin, b: Lin) -> Var {
        let out = p.new_var(0, 1 << 20);
        p.funcs.push(Func { out, op: FnOp::Xor, a, b });
        out
    }

    #[test]
    fn equal_partners_mean_equal_threads() {
        let mut p = Problem::default();
        let (t, u, s) = (p.new_var(0, 255), p.new_var(0, 255), p.new_var(1, 128));
        let pt = xor(&mut p, Lin::var(t), Lin::var(s));
        let pu = xor(&mut p, Lin::var(u), Lin::var(s));
        p.equal(&Lin::var(pt), &Lin::var(pu));
        p.distinct.push(vec![Lin::var(t).sub(&Lin::var(u))]);
        assert!(!close(&mut p));
    }

    #[test]
    fn partner_of_partner_is_self() {
        let mut p = Problem::default();
        let (t, u, s) = (p.new_var(0, 255), p.new_var(0, 255), p.new_var(1, 128));
        let pt = xor(&mut p, Lin::var(t), Lin::var(s));
        let pu = xor(&mut p, Lin::var(u), Lin::var(s));
        p.equal(&Lin::var(pt), &Lin::var(u));
        assert!(close(&mut p));
        // pu = (t ^ s) ^ s = t
        assert!(p.eqs.iter().any(|e| *e == Lin::var(t).sub(&Lin::var(pu))));
    }

    #[test]
    fn different_operands_imply_nothing() {
        let mut p = Problem::default();
        let (t, u, s, r) = (p.new_var(0, 255), p.new_var(0, 255), p.new_var(1, 128), p.new_var(1, 128));
        let pt = xor(&mut p, Lin::var(t), Lin::var(s));
        let pu = xor(&mut p, Lin::var(u), Lin::var(r));
        p.equal(&Lin::var(pt), &Lin::var(pu));
        p.distinct.push(vec![Lin::var(t).sub(&Lin::var(u))]);
        let before = p.eqs.len();
        assert!(close(&mut p));
        assert_eq!(p.eqs.len(), before);
    }
}
