//! Textual dump of the IR, for tests and `--dump-ir`.

use crate::*;
use std::fmt::{self, Write};

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.0)
    }
}

impl fmt::Display for BlockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bb{}", self.0)
    }
}

fn root(m: &Module, r: &Root) -> String {
    match r {
        Root::Global(g) => format!("@{}", m.global(*g).name),
        Root::Local(l) => format!("local{}", l.0),
        Root::Param(p) => format!("param{p}"),
        Root::Ptr(v) => format!("*{v}"),
    }
}

fn mem(m: &Module, r: &MemRef) -> String {
    format!("{} {}[{}]", r.space, root(m, &r.root), r.index)
}

fn list(vs: &[Value]) -> String {
    vs.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
}

fn op(m: &Module, o: &Op) -> String {
    match o {
        Op::Param(i) => format!("param {i}"),
        Op::Const(Const::Int(i)) => format!("const {i}"),
        Op::Const(Const::Float(x)) => format!("const {x:?}"),
        Op::Const(Const::Bool(b)) => format!("const {b}"),
        Op::Undef => "undef".into(),
        Op::Unary(u, a) => format!("{u:?} {a}").to_lowercase(),
        Op::Binary(b, x, y) => format!("{} {x}, {y}", format!("{b:?}").to_lowercase()),
        Op::Cmp(c, x, y) => format!("cmp {} {x}, {y}", format!("{c:?}").to_lowercase()),
        Op::Select(c, x, y) => format!("select {c}, {x}, {y}"),
        Op::Convert(a) => format!("convert {a}"),
        Op::Math(f, args) => format!("{} {}", format!("{f:?}").to_lowercase(), list(args)),
        Op::Builtin(b) => format!("builtin {b}"),
        Op::Load(r) => format!("load {}", mem(m, r)),
        Op::Store(r, v) => format!("store {}, {v}", mem(m, r)),
        Op::Atomic(a, r, args) => format!("atomic {} {}, {}", format!("{a:?}").to_lowercase(), mem(m, r), list(args)),
        Op::AddrOf(r, i) => format!("addr {}[{i}]", root(m, r)),
        Op::PtrAdd(p, i) => format!("ptradd {p}, {i}"),
        Op::Barrier(b, pred) => {
            let mut s = format!("barrier exec={} mem={} spaces={}", b.exec, b.mem, b.spaces);
            if let (Some(r), Some(p)) = (b.reduce, pred) {
                let _ = write!(s, " reduce={r:?}({p})");
            }
            s
        }
        Op::Wave(w, args) => format!("wave {} {}", format!("{w:?}").to_lowercase(), list(args)),
        Op::Call(Callee::Func(f), args) => format!("call {}({})", m.function(*f).name, list(args)),
        Op::Call(Callee::Opaque(n), args) => format!("call opaque {n}({})", list(args)),
        Op::Call(Callee::Unmodelled(n), args) => format!("unmodelled {n}({})", list(args)),
        Op::Call(Callee::UnknownValue(n), args) => format!("unknown value {n}({})", list(args)),
        Op::Call(Callee::PointerView(n), args) => format!("pointer view {n}({})", list(args)),
        Op::Phi(inc) => {
            let parts: Vec<String> = inc.iter().map(|(b, v)| format!("[{b}: {v}]")).collect();
            format!("phi {}", parts.join(", "))
        }
    }
}

/// Prints one function.
pub fn function_to_string(m: &Module, f: &Function) -> String {
    let mut s = String::new();
    let params: Vec<String> = f.params.iter().map(|p| format!("{}: {}", p.name, p.ty)).collect();
    let _ = write!(s, "fn {}({}) -> {}", f.name, params.join(", "), f.ret);
    if let Some(e) = &f.entry {
        let _ = write!(s, " kernel");
        if let Some([x, y, z]) = e.group_size {
            let _ = write!(s, " group_size=({x},{y},{z})");
        }
    }
    s.push('\n');
    for (i, l) in f.locals.iter().enumerate() {
        let _ = writeln!(s, "  local{i} {}: [{}; {}]", l.name, l.elem, l.len);
    }
    for b in f.block_ids() {
        let block = f.block(b);
        let _ = writeln!(s, "{b}:");
        for &v in &block.insts {
            let inst = f.inst(v);
            let name = inst.name.as_deref().map(|n| format!(" ; {n}")).unwrap_or_default();
            if inst.ty == Type::Void {
                let _ = writeln!(s, "  {}{name}", op(m, &inst.op));
            } else {
                let _ = writeln!(s, "  {v}: {} = {}{name}", inst.ty, op(m, &inst.op));
            }
        }
        let t = match &block.term {
            Terminator::Jump(t) => format!("jump {t}"),
            Terminator::Branch { cond, then_to, else_to } => format!("branch {cond}, {then_to}, {else_to}"),
            Terminator::Switch { value, cases, default } => {
                let c: Vec<String> = cases.iter().map(|(k, b)| format!("{k}: {b}")).collect();
                format!("switch {value} [{}] default {default}", c.join(", "))
            }
            Terminator::Return(Some(v)) => format!("return {v}"),
            Terminator::Return(None) => "return".into(),
            Terminator::Discard => "discard".into(),
            Terminator::Unreachable => "unreachable".into(),
        };
        let exit = block.exit.map(|e| format!(" ; {}", e.keyword())).unwrap_or_default();
        let _ = writeln!(s, "  {t}{exit}");
    }
    s
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for g in &self.globals {
            writeln!(
                f,
                "global @{}: {:?} {} {} dims={:?} cells/elem={}{}",
                g.name,
                g.kind,
                g.space,
                g.elem,
                g.dims,
                g.cells_per_elem,
                if g.coherent { " coherent" } else { "" }
            )?;
        }
        for func in &self.functions {
            f.write_str(&function_to_string(self, func))?;
        }
        Ok(())
    }
}
