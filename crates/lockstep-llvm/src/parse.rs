//! The reader: module-level entities first (target, named types, globals,
//! kernels, debug metadata), then each function body into the kernel IR.
//! A body that cannot be read leaves its function without blocks ("opaque"):
//! calls to it count as opaque and none of its barriers is touched.

use crate::lexer::{strip_comment, tokenize, Tok};
use crate::meta::DebugInfo;
use crate::types::{Cursor, LType, PResult, Target, TypeTable};
use lockstep_ir::*;
use lockstep_source::{FileId, SourceDb, Span};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// A read `.ll` file.
pub struct LlvmModule {
    pub module: Module,
    pub file: FileId,
    pub target: Target,
    /// Every `define`, in file order (the same order as `module.functions`).
    pub functions: Vec<LlvmFunction>,
}

pub struct LlvmFunction {
    pub name: String,
    pub id: FuncId,
    /// Why the body could not be read; such a function is left alone.
    pub opaque: Option<String>,
    /// Named or partial barriers (`barrier.sync` with a nonzero id or a thread
    /// count, `bar.arrive`): never removed, never trusted as sync points.
    pub untrusted: Vec<Value>,
    /// `!dbg` location (file name, line) of each instruction that has one.
    pub debug: HashMap<Value, (String, u32)>,
}

/// One line of the file: its span (without the line break) and its code (comment removed).
struct Line<'a> {
    span: Span,
    code: &'a str,
}

fn lines(file: FileId, text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut start = 0usize;
    for piece in text.split_inclusive('\n') {
        let body = piece.trim_end_matches(['\n', '\r']);
        out.push(Line { span: Span::new(file, start as u32, (start + body.len()) as u32), code: strip_comment(body).trim() });
        start += piece.len();
    }
    out
}

struct ModCtx {
    target: Target,
    named: TypeTable,
    /// Global variables: id and the byte size of their scalar element.
    globals: HashMap<String, (GlobalId, u64)>,
    functions: HashMap<String, FuncId>,
}

/// Registers `text` under `path` in `db` and reads it. Never fails: what cannot
/// be read is skipped (module level) or makes its function opaque.
pub fn read(db: &mut SourceDb, path: &Path, text: &str) -> LlvmModule {
    let file = db.add(path.to_path_buf(), text);
    let lines = lines(file, text);
    let mut debug = DebugInfo::default();
    let mut triple = String::new();
    let mut kernels: HashSet<String> = HashSet::new();
    let mut named = TypeTable::new();
    let mut global_lines = Vec::new();
    // (header tokens, first body line, end line (the `}`)).
    let mut defines: Vec<(Vec<Tok>, usize, usize)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let code = lines[i].code;
        if let Some(rest) = code.strip_prefix("target triple") {
            triple = rest.trim().trim_start_matches('=').trim().trim_matches('"').to_string();
        } else if code.starts_with('!') {
            debug.add_line(code);
            // `!{ptr @k, !"kernel", i32 1}` in `!nvvm.annotations`.
            if code.contains("!\"kernel\"") {
                if let Some(Tok::Global(g)) = tokenize(code).unwrap_or_default().into_iter().find(|t| matches!(t, Tok::Global(_))) {
                    kernels.insert(g);
                }
            }
        } else if code.starts_with('%') && code.contains("= type") {
            if let Some(toks) = tokenize(code) {
                let mut c = Cursor::new(&toks);
                if let (Some(Tok::Local(n)), true, true) = (c.next(), c.eat_punct('='), c.eat_ident("type")) {
                    if let Ok(t) = c.ty() {
                        named.insert(n.clone(), t);
                    }
                }
            }
        } else if code.starts_with('@') {
            global_lines.push(code);
        } else if code.starts_with("define") {
            // The header runs to the `{`; the body to a line that is just `}`.
            let mut header = String::new();
            while i < lines.len() {
                header.push_str(lines[i].code);
                header.push(' ');
                if lines[i].code.ends_with('{') {
                    break;
                }
                i += 1;
            }
            let body = i + 1;
            let mut end = body;
            while end < lines.len() && lines[end].code != "}" {
                end += 1;
            }
            defines.push((tokenize(header.trim_end().trim_end_matches('{')).unwrap_or_default(), body, end));
            i = end;
        }
        i += 1;
    }
    let target = Target::from_triple(&triple);
    let mut module = Module::default();
    let mut ctx = ModCtx { target, named, globals: HashMap::new(), functions: HashMap::new() };
    for code in global_lines {
        add_global(&mut module, &mut ctx, code, file);
    }
    let mut headers = Vec::new();
    for (toks, body, end) in &defines {
        let name = toks.iter().find_map(|t| match t {
            Tok::Global(n) => Some(n.clone()),
            _ => None,
        });
        let name = name.unwrap_or_else(|| format!("<unnamed define at line {}>", body));
        let span = lines.get(body.saturating_sub(1)).map(|l| l.span).unwrap_or(Span::new(file, 0, 0));
        let mut f = Function::new(name.clone(), span);
        let is_kernel = toks.iter().any(|t| matches!(t, Tok::Ident(s) if s == "ptx_kernel" || s == "amdgpu_kernel" || s == "spir_kernel"));
        if is_kernel || kernels.contains(&name) {
            f.entry = Some(EntryInfo::default());
        }
        let id = module.add_function(f);
        ctx.functions.insert(name.clone(), id);
        headers.push((name, id, toks, *body, *end));
    }
    let mut functions = Vec::new();
    for (name, id, toks, body, end) in headers {
        let proto = module.function(id).clone();
        let mut fp = FnParser::new(&ctx, proto);
        let outcome = fp.params(toks).and_then(|_| fp.body(&lines[body.min(lines.len())..end.min(lines.len())]));
        let (opaque, untrusted, dbg) = match outcome {
            Ok(()) => {
                let dbg = fp.dbg.iter().filter_map(|(v, id)| Some((*v, debug.location(id)?))).collect();
                let untrusted = std::mem::take(&mut fp.untrusted);
                module.functions[id.index()] = fp.f;
                (None, untrusted, dbg)
            }
            Err(e) => (Some(e), Vec::new(), HashMap::new()),
        };
        functions.push(LlvmFunction { name, id, opaque, untrusted, debug: dbg });
    }
    LlvmModule { module, file, target, functions }
}

/// `@name = [linkage ...] [addrspace(N)] global|constant TYPE ...`.
fn add_global(module: &mut Module, ctx: &mut ModCtx, code: &str, file: FileId) {
    let Some(toks) = tokenize(code) else { return };
    let mut c = Cursor::new(&toks);
    let (Some(Tok::Global(name)), true) = (c.next(), c.eat_punct('=')) else { return };
    let mut addrspace = 0;
    let mut external = false;
    let is_constant = loop {
        match c.peek() {
            Some(Tok::Ident(k)) if k == "addrspace" => match c.addrspace() {
                Ok(Some(a)) => addrspace = a,
                _ => return,
            },
            Some(Tok::Ident(k)) if k == "global" || k == "constant" => {
                c.pos += 1;
                break k == "constant";
            }
            Some(Tok::Ident(k)) => {
                external |= k == "external" || k == "extern_weak";
                c.pos += 1;
            }
            // Aliases, ifuncs and anything else are not allocations.
            _ => return,
        }
    };
    let Ok(ty) = c.ty() else { return };
    let mut space = ctx.target.space(addrspace);
    if space == MemSpace::Unknown {
        // A global outside any numbered space lives in device memory.
        space = MemSpace::Device;
    }
    if is_constant {
        space = MemSpace::Constant;
    }
    let dims = ty.dims();
    let kind = match space {
        // `extern __shared__` arrays are the one dynamic allocation.
        MemSpace::Shared if external || dims.first() == Some(&0) => GlobalKind::DynamicShared,
        MemSpace::Shared => GlobalKind::GroupShared,
        MemSpace::Constant => GlobalKind::Constant,
        _ => GlobalKind::DeviceVar,
    };
    let span = Span::new(file, 0, 0);
    let cells = ty.cells(&ctx.named);
    let id = module.add_global(Global {
        name: name.clone(),
        kind,
        space,
        elem: ty.ir(ctx.target),
        dims,
        cells_per_elem: 1,
        cell_names: Vec::new(),
        len: Some(cells),
        coherent: false,
        texel_width: 0,
        open_value: None,
        init: Vec::new(),
        span,
    });
    ctx.globals.insert(name.clone(), (id, ty.scalar().bytes(&ctx.named)));
}

/// Intrinsics and library calls that compute without touching memory.
const PURE_PREFIXES: &[&str] = &[
    "llvm.fabs.",
    "llvm.sqrt.",
    "llvm.fma.",
    "llvm.fmuladd.",
    "llvm.smax.",
    "llvm.smin.",
    "llvm.umax.",
    "llvm.umin.",
    "llvm.maxnum.",
    "llvm.minnum.",
    "llvm.maximum.",
    "llvm.minimum.",
    "llvm.ctpop.",
    "llvm.ctlz.",
    "llvm.cttz.",
    "llvm.floor.",
    "llvm.ceil.",
    "llvm.trunc.",
    "llvm.round.",
    "llvm.rint.",
    "llvm.nearbyint.",
    "llvm.roundeven.",
    "llvm.exp.",
    "llvm.exp2.",
    "llvm.log.",
    "llvm.log2.",
    "llvm.log10.",
    "llvm.sin.",
    "llvm.cos.",
    "llvm.pow.",
    "llvm.powi.",
    "llvm.abs.",
    "llvm.copysign.",
    "llvm.bswap.",
    "llvm.bitreverse.",
    "llvm.fshl.",
    "llvm.fshr.",
    "llvm.sadd.",
    "llvm.uadd.",
    "llvm.ssub.",
    "llvm.usub.",
    "llvm.smul.",
    "llvm.umul.",
    "llvm.expect.",
    "llvm.nvvm.fabs",
    "llvm.nvvm.fmin",
    "llvm.nvvm.fmax",
    "llvm.nvvm.rsqrt",
    "llvm.nvvm.sqrt",
    "llvm.nvvm.rcp",
    "llvm.nvvm.ex2",
    "llvm.nvvm.lg2",
    "llvm.nvvm.sin",
    "llvm.nvvm.cos",
    "llvm.nvvm.mul",
    "llvm.nvvm.div",
    "llvm.nvvm.saturate",
    "llvm.nvvm.shfl.",
    "llvm.nvvm.vote.",
    "llvm.nvvm.activemask",
    "llvm.nvvm.prmt",
    "llvm.amdgcn.readfirstlane",
    "llvm.amdgcn.readlane",
    "llvm.amdgcn.mbcnt",
    "llvm.amdgcn.ds.bpermute",
    "llvm.amdgcn.ds.swizzle",
    "llvm.amdgcn.update.dpp",
    "llvm.amdgcn.mov.dpp",
];

/// Calls with no effect at all (debug info, lifetime and optimizer hints).
const NO_EFFECT_PREFIXES: &[&str] = &[
    "llvm.dbg.",
    "llvm.lifetime.",
    "llvm.assume",
    "llvm.experimental.noalias.scope.decl",
    "llvm.invariant.",
    "llvm.donothing",
    "llvm.var.annotation",
    "llvm.sideeffect",
];

fn math_fn(name: &str) -> Option<MathFn> {
    let stem = name.strip_prefix("llvm.")?.split('.').next()?;
    Some(match stem {
        "fabs" | "abs" => MathFn::Abs,
        "sqrt" => MathFn::Sqrt,
        "fma" | "fmuladd" => MathFn::Fma,
        "smax" | "umax" | "maxnum" | "maximum" => MathFn::Max,
        "smin" | "umin" | "minnum" | "minimum" => MathFn::Min,
        "ctpop" => MathFn::PopCount,
        "floor" => MathFn::Floor,
        "ceil" => MathFn::Ceil,
        "trunc" => MathFn::Trunc,
        "round" | "rint" | "nearbyint" | "roundeven" => MathFn::Round,
        "exp" => MathFn::Exp,
        "exp2" => MathFn::Exp2,
        "log" => MathFn::Log,
        "log2" => MathFn::Log2,
        "sin" => MathFn::Sin,
        "cos" => MathFn::Cos,
        "tan" => MathFn::Tan,
        "tanh" => MathFn::Tanh,
        "sinh" => MathFn::Sinh,
        "cosh" => MathFn::Cosh,
        "asin" => MathFn::Asin,
        "acos" => MathFn::Acos,
        "atan" => MathFn::Atan,
        "atan2" => MathFn::Atan2,
        "pow" => MathFn::Pow,
        "bitreverse" => MathFn::ReverseBits,
        _ => return None,
    })
}

const SYNC: Barrier = Barrier { exec: Scope::Group, mem: Scope::Group, spaces: Spaces::ALL, reduce: None };

/// What a call to a thread-id or barrier function stands for.
enum Special {
    Builtin(Builtin),
    /// `get_global_id(axis)`: group id × group size + local id.
    GlobalId(u8),
    Barrier(Barrier),
    /// A barrier the engine may not touch nor trust.
    Untrusted(Barrier),
}

fn axis(s: &str) -> Option<u8> {
    match s {
        "x" => Some(0),
        "y" => Some(1),
        "z" => Some(2),
        _ => None,
    }
}

/// `consts` holds the integer value of each argument when it is a literal.
fn special(name: &str, consts: &[Option<i64>]) -> Option<Special> {
    let arg_axis = || consts.first().copied().flatten().and_then(|a| u8::try_from(a).ok()).filter(|a| *a < 3);
    if let Some(rest) = name.strip_prefix("llvm.nvvm.read.ptx.sreg.") {
        let (reg, ax) = rest.split_once('.').unwrap_or((rest, ""));
        let ax = axis(ax);
        return Some(Special::Builtin(match (reg, ax) {
            ("tid", Some(a)) => Builtin::LocalId(a),
            ("ntid", Some(a)) => Builtin::GroupSize(a),
            ("ctaid", Some(a)) => Builtin::GroupId(a),
            ("nctaid", Some(a)) => Builtin::NumGroups(a),
            ("laneid", None) => Builtin::LaneId,
            ("warpsize", None) => Builtin::WaveSize,
            _ => return None,
        }));
    }
    if let Some(ax) = name.strip_prefix("llvm.amdgcn.workitem.id.").and_then(axis) {
        return Some(Special::Builtin(Builtin::LocalId(ax)));
    }
    if let Some(ax) = name.strip_prefix("llvm.amdgcn.workgroup.id.").and_then(axis) {
        return Some(Special::Builtin(Builtin::GroupId(ax)));
    }
    let fence = |mem| Barrier { exec: Scope::None, mem, spaces: Spaces::ALL, reduce: None };
    Some(match name {
        "_Z12get_local_idj" => Special::Builtin(Builtin::LocalId(arg_axis()?)),
        "_Z12get_group_idj" => Special::Builtin(Builtin::GroupId(arg_axis()?)),
        "_Z14get_local_sizej" => Special::Builtin(Builtin::GroupSize(arg_axis()?)),
        "_Z14get_num_groupsj" => Special::Builtin(Builtin::NumGroups(arg_axis()?)),
        "_Z13get_global_idj" => Special::GlobalId(arg_axis()?),
        "llvm.nvvm.barrier0" | "llvm.amdgcn.s.barrier" => Special::Barrier(SYNC),
        "llvm.nvvm.barrier0.popc" => Special::Barrier(Barrier { reduce: Some(BarrierReduce::Count), ..SYNC }),
        "llvm.nvvm.barrier0.and" => Special::Barrier(Barrier { reduce: Some(BarrierReduce::And), ..SYNC }),
        "llvm.nvvm.barrier0.or" => Special::Barrier(Barrier { reduce: Some(BarrierReduce::Or), ..SYNC }),
        // OpenCL `barrier(flags)`: 1 = local memory, 2 = global memory.
        "_Z7barrierj" | "_Z18work_group_barrierj" | "_Z18work_group_barrierj12memory_scope" => {
            let spaces = match consts.first().copied().flatten() {
                Some(flags) => {
                    let mut s = Spaces::NONE;
                    if flags & 1 != 0 {
                        s = s.union(Spaces::SHARED);
                    }
                    if flags & 6 != 0 {
                        s = s.union(Spaces::DEVICE);
                    }
                    s
                }
                None => Spaces::ALL,
            };
            Special::Barrier(Barrier { spaces, ..SYNC })
        }
        "_Z22__spirv_ControlBarrierjjj" | "_Z22__spirv_ControlBarrieriii" => Special::Barrier(SYNC),
        "llvm.nvvm.bar.warp.sync" | "llvm.nvvm.barrier.warp.sync" => {
            Special::Barrier(Barrier { exec: Scope::Wave, mem: Scope::Wave, ..SYNC })
        }
        "llvm.nvvm.membar.cta" | "llvm.nvvm.fence.sc.cta" => Special::Barrier(fence(Scope::Group)),
        "llvm.nvvm.membar.gl" => Special::Barrier(fence(Scope::Device)),
        "llvm.nvvm.membar.sys" => Special::Barrier(fence(Scope::System)),
        "_Z9mem_fencej" => Special::Barrier(fence(Scope::Group)),
        _ => {
            // `barrier.sync(0)` is `__syncthreads`; another id or a thread count is a named or partial barrier.
            let numbered = ["llvm.nvvm.barrier.sync", "llvm.nvvm.bar.sync", "llvm.nvvm.barrier.n", "llvm.nvvm.barrier.cta.sync"];
            let partial = ["llvm.nvvm.barrier", "llvm.nvvm.bar.arrive", "llvm.nvvm.barrier.arrive", "llvm.nvvm.barrier.cta.arrive"];
            let family = |p: &&str| name == *p || name.strip_prefix(*p).is_some_and(|rest| rest.starts_with('.'));
            let counted = name.contains(".cnt") || name.contains(".count");
            if numbered.iter().any(family) && !counted && consts.len() == 1 && consts[0] == Some(0) {
                Special::Barrier(SYNC)
            } else if numbered.iter().chain(partial.iter()).any(family) || name.starts_with("llvm.amdgcn.s.barrier.") {
                Special::Untrusted(SYNC)
            } else if name.starts_with("llvm.nvvm.fence.") || name.starts_with("llvm.nvvm.membar") {
                Special::Barrier(fence(Scope::System))
            } else {
                return None;
            }
        }
    })
}

struct FnParser<'c> {
    ctx: &'c ModCtx,
    f: Function,
    values: HashMap<String, Value>,
    labels: HashMap<String, BlockId>,
    cur: BlockId,
    span: Span,
    zero: Option<Value>,
    untrusted: Vec<Value>,
    dbg: Vec<(Value, String)>,
    /// Next number for unnamed parameters.
    unnamed: u32,
}

/// A logical line of a body: an instruction (a `switch` may span lines) or a label.
struct Stmt {
    span: Span,
    toks: Vec<Tok>,
}

fn label_of(toks: &[Tok]) -> Option<String> {
    match toks {
        [Tok::Ident(n), Tok::Punct(':')] | [Tok::Str(n), Tok::Punct(':')] => Some(n.clone()),
        [Tok::Int(n), Tok::Punct(':')] => Some(n.to_string()),
        _ => None,
    }
}

impl<'c> FnParser<'c> {
    fn new(ctx: &'c ModCtx, mut f: Function) -> FnParser<'c> {
        let span = f.span;
        let entry = f.add_block(span);
        FnParser {
            ctx,
            f,
            values: HashMap::new(),
            labels: HashMap::new(),
            cur: entry,
            span,
            zero: None,
            untrusted: Vec::new(),
            dbg: Vec::new(),
            unnamed: 0,
        }
    }

    fn lt(&self, t: &LType) -> Type {
        t.ir(self.ctx.target)
    }

    fn emit(&mut self, op: Op, ty: Type) -> Value {
        self.f.push(self.cur, op, ty, self.span)
    }

    fn int_const(&mut self, k: i64) -> Value {
        self.emit(Op::Const(Const::Int(k as u64)), Type::I64)
    }

    /// A shared zero index (placed in the entry block, which dominates every use).
    fn zero(&mut self) -> Value {
        if let Some(z) = self.zero {
            return z;
        }
        let z = self.f.push(BlockId(0), Op::Const(Const::Int(0)), Type::I64, self.span);
        self.zero = Some(z);
        z
    }

    /// `define ... RetTy @name(T %a, T %b, ...)`.
    fn params(&mut self, toks: &[Tok]) -> PResult<()> {
        let start = toks.iter().position(|t| matches!(t, Tok::Global(_))).ok_or("no function name")?;
        let mut c = Cursor::new(&toks[start + 1..]);
        c.expect_punct('(')?;
        let mut index = 0u32;
        while !c.eat_punct(')') {
            if c.eat_punct(',') {
                continue;
            }
            if c.peek() == Some(&Tok::Ellipsis) {
                c.pos += 1;
                continue;
            }
            let ty = c.ty()?;
            let mut noalias = false;
            let name = loop {
                match c.peek() {
                    Some(Tok::Local(n)) => {
                        c.pos += 1;
                        break n.clone();
                    }
                    Some(Tok::Punct(',' | ')')) | None => {
                        self.unnamed += 1;
                        break (self.unnamed - 1).to_string();
                    }
                    Some(Tok::Ident(a)) if a == "noalias" => {
                        noalias = true;
                        c.pos += 1;
                    }
                    _ => skip_attr(&mut c)?,
                }
            };
            let irty = self.lt(&ty);
            let v = self.emit(Op::Param(index), irty);
            self.f.params.push(Param { name: name.clone(), ty: irty, span: self.span, noalias });
            self.values.insert(name, v);
            index += 1;
        }
        Ok(())
    }

    fn body(&mut self, lines: &[Line]) -> PResult<()> {
        // Logical lines: a `switch` continues while its `[` is open.
        let mut stmts: Vec<Stmt> = Vec::new();
        let mut open = 0i32;
        for line in lines {
            // Debug records (`#dbg_value(...)`) describe variables only.
            if line.code.is_empty() || line.code.starts_with("#dbg_") {
                continue;
            }
            let toks = tokenize(line.code).ok_or_else(|| format!("unreadable characters in `{}`", line.code))?;
            let depth: i32 = toks.iter().map(|t| matches!(t, Tok::Punct('[')) as i32 - matches!(t, Tok::Punct(']')) as i32).sum();
            if open > 0 {
                let last = stmts.last_mut().expect("an open bracket has a statement");
                last.toks.extend(toks);
                last.span = last.span.to(line.span);
            } else {
                stmts.push(Stmt { span: line.span, toks });
            }
            open += depth;
        }
        // An unlabeled entry block takes the next number after the parameters
        // (`define void @f(ptr %0, i32 %1)` starts with block `%2`).
        if stmts.first().is_none_or(|s| label_of(&s.toks).is_none()) {
            let next = self.f.params.iter().filter_map(|p| p.name.parse::<u64>().ok()).map(|n| n + 1).max().unwrap_or(0);
            self.labels.insert(next.to_string(), BlockId(0));
        }
        // Blocks and value names first: phis and branches refer forward.
        for (i, s) in stmts.iter().enumerate() {
            if let Some(l) = label_of(&s.toks) {
                let b = if i == 0 { BlockId(0) } else { self.f.add_block(s.span) };
                self.labels.insert(l, b);
            } else if let [Tok::Local(n), Tok::Punct('='), ..] = s.toks.as_slice() {
                let v = self.f.add_inst(Op::Undef, Type::Void, s.span);
                if self.values.insert(n.clone(), v).is_some() {
                    return Err(format!("%{n} defined twice"));
                }
            }
        }
        for s in &stmts {
            self.span = s.span;
            if let Some(l) = label_of(&s.toks) {
                self.cur = self.labels[&l];
                continue;
            }
            self.inst(&s.toks).map_err(|e| format!("{e} in `{}`", describe(&s.toks)))?;
        }
        Ok(())
    }

    fn label(&self, c: &mut Cursor) -> PResult<BlockId> {
        if !c.eat_ident("label") {
            return Err("expected `label`".into());
        }
        match c.next() {
            Some(Tok::Local(n)) => self.labels.get(n).copied().ok_or_else(|| format!("unknown label %{n}")),
            t => Err(format!("expected a label, found {t:?}")),
        }
    }

    /// Places the instruction defining `def` (or a fresh one) in the current block.
    fn define(&mut self, def: Option<Value>, op: Op, ty: Type) -> Value {
        match def {
            Some(v) => {
                let inst = self.f.inst_mut(v);
                inst.op = op;
                inst.ty = ty;
                inst.span = self.span;
                self.f.blocks[self.cur.index()].insts.push(v);
                v
            }
            None => self.emit(op, ty),
        }
    }

    fn inst(&mut self, toks: &[Tok]) -> PResult<()> {
        let (def, rest) = match toks {
            [Tok::Local(n), Tok::Punct('='), rest @ ..] => (Some(self.values[n]), rest),
            _ => (None, toks),
        };
        // Trailing attachments: `, !dbg !12, !tbaa !3`.
        let mut end = rest.len();
        let mut depth = 0i32;
        for (i, t) in rest.iter().enumerate() {
            match t {
                Tok::Punct('(' | '[' | '{' | '<') => depth += 1,
                Tok::Punct(')' | ']' | '}' | '>') => depth -= 1,
                Tok::Punct(',') if depth == 0 && matches!(rest.get(i + 1), Some(Tok::Meta(_))) => {
                    end = end.min(i);
                }
                _ => {}
            }
        }
        let dbg = rest[end..].windows(2).find_map(|w| match w {
            [Tok::Meta(k), Tok::Meta(id)] if k == "dbg" => Some(id.clone()),
            _ => None,
        });
        let mut c = Cursor::new(&rest[..end]);
        let first_new = self.f.insts.len();
        let made = self.op(&mut c, def)?;
        if let Some(id) = dbg {
            // Every IR instruction made from this line carries its location.
            let made_now = (first_new..self.f.insts.len()).map(|i| Value(i as u32)).chain(made);
            for v in made_now {
                self.dbg.push((v, id.clone()));
            }
        }
        Ok(())
    }

    /// Parses one instruction; returns the placed `def` value, if any.
    fn op(&mut self, c: &mut Cursor, def: Option<Value>) -> PResult<Option<Value>> {
        let opcode = c.ident()?.to_string();
        let placed = |v: Value| Some(v);
        match opcode.as_str() {
            "ret" => {
                let term = if c.eat_ident("void") {
                    Terminator::Return(None)
                } else {
                    let (_, v) = self.typed(c)?;
                    Terminator::Return(Some(v))
                };
                self.f.set_term(self.cur, term, self.span);
                Ok(None)
            }
            "br" => {
                let term = if c.is_ident("label") {
                    Terminator::Jump(self.label(c)?)
                } else {
                    let (_, cond) = self.typed(c)?;
                    c.expect_punct(',')?;
                    let then_to = self.label(c)?;
                    c.expect_punct(',')?;
                    Terminator::Branch { cond, then_to, else_to: self.label(c)? }
                };
                self.f.set_term(self.cur, term, self.span);
                Ok(None)
            }
            "switch" => {
                let (_, value) = self.typed(c)?;
                c.expect_punct(',')?;
                let default = self.label(c)?;
                c.expect_punct('[')?;
                let mut cases = Vec::new();
                while !c.eat_punct(']') {
                    c.ty()?;
                    let k = c.int()?;
                    c.expect_punct(',')?;
                    cases.push((k as u64, self.label(c)?));
                }
                self.f.set_term(self.cur, Terminator::Switch { value, cases, default }, self.span);
                Ok(None)
            }
            "unreachable" => {
                self.f.set_term(self.cur, Terminator::Unreachable, self.span);
                Ok(None)
            }
            "add" | "sub" | "mul" | "udiv" | "sdiv" | "urem" | "srem" | "and" | "or" | "xor" | "shl" | "lshr" | "ashr" | "fadd"
            | "fsub" | "fmul" | "fdiv" | "frem" => {
                skip_flags(c);
                let (t, a) = self.typed(c)?;
                c.expect_punct(',')?;
                let b = self.value(c, &t)?;
                let op = match opcode.trim_start_matches('f') {
                    "add" => BinOp::Add,
                    "sub" => BinOp::Sub,
                    "mul" => BinOp::Mul,
                    "udiv" | "sdiv" | "div" => BinOp::Div,
                    "urem" | "srem" | "rem" => BinOp::Rem,
                    "and" => BinOp::And,
                    "or" => BinOp::Or,
                    "xor" => BinOp::Xor,
                    "shl" => BinOp::Shl,
                    _ => BinOp::Shr,
                };
                let ty = self.lt(&t);
                Ok(placed(self.define(def, Op::Binary(op, a, b), ty)))
            }
            "fneg" => {
                skip_flags(c);
                let (t, a) = self.typed(c)?;
                let ty = self.lt(&t);
                Ok(placed(self.define(def, Op::Unary(UnOp::Neg, a), ty)))
            }
            "icmp" | "fcmp" => {
                skip_flags(c);
                let pred = c.ident()?.to_string();
                let (t, a) = self.typed(c)?;
                c.expect_punct(',')?;
                let b = self.value(c, &t)?;
                let op = match pred.trim_start_matches(['o', 'u', 's']) {
                    "eq" => CmpOp::Eq,
                    "ne" | "ne_" => CmpOp::Ne,
                    "gt" => CmpOp::Gt,
                    "ge" => CmpOp::Ge,
                    "lt" => CmpOp::Lt,
                    "le" => CmpOp::Le,
                    // `true`, `false`, `ord`, `uno`: only the operands matter to the engine.
                    _ => CmpOp::Ne,
                };
                Ok(placed(self.define(def, Op::Cmp(op, a, b), Type::Bool)))
            }
            "select" => {
                skip_flags(c);
                let (_, cond) = self.typed(c)?;
                c.expect_punct(',')?;
                let (t, a) = self.typed(c)?;
                c.expect_punct(',')?;
                let (_, b) = self.typed(c)?;
                let ty = self.lt(&t);
                Ok(placed(self.define(def, Op::Select(cond, a, b), ty)))
            }
            "trunc" | "zext" | "sext" | "fptrunc" | "fpext" | "fptoui" | "fptosi" | "uitofp" | "sitofp" | "bitcast" | "ptrtoint"
            | "inttoptr" | "addrspacecast" | "freeze" => {
                skip_flags(c);
                let (_, v) = self.typed(c)?;
                let to = if c.eat_ident("to") { c.ty()? } else { LType::Void };
                let ty = if opcode == "freeze" { self.f.inst(v).ty } else { self.lt(&to) };
                Ok(placed(self.define(def, Op::Convert(v), ty)))
            }
            "getelementptr" => {
                let (op, ty) = self.gep(c)?;
                Ok(placed(self.define(def, op, ty)))
            }
            "alloca" => {
                c.eat_ident("inalloca");
                let t = c.ty()?;
                let name = def.map(|v| v.to_string()).unwrap_or_default();
                let len = t.cells(&self.ctx.named);
                self.f.locals.push(Local { name, elem: self.lt(&t), len, span: self.span });
                let local = LocalId(self.f.locals.len() as u32 - 1);
                let zero = self.zero();
                Ok(placed(self.define(def, Op::AddrOf(Root::Local(local), zero), Type::Ptr(MemSpace::Private))))
            }
            "load" => {
                c.eat_ident("atomic");
                c.eat_ident("volatile");
                let t = c.ty()?;
                c.expect_punct(',')?;
                let m = self.mem_operand(c)?;
                let ty = self.lt(&t);
                Ok(placed(self.define(def, Op::Load(m), ty)))
            }
            "store" => {
                c.eat_ident("atomic");
                c.eat_ident("volatile");
                let (_, v) = self.typed(c)?;
                c.expect_punct(',')?;
                let m = self.mem_operand(c)?;
                Ok(placed(self.define(def, Op::Store(m, v), Type::Void)))
            }
            "atomicrmw" => {
                c.eat_ident("volatile");
                let kind = c.ident()?.to_string();
                let m = self.mem_operand(c)?;
                c.expect_punct(',')?;
                let (t, v) = self.typed(c)?;
                let op = match kind.as_str() {
                    "xchg" => AtomicOp::Exchange,
                    "add" | "fadd" => AtomicOp::Add,
                    "sub" | "fsub" => AtomicOp::Sub,
                    "and" | "nand" => AtomicOp::And,
                    "or" => AtomicOp::Or,
                    "xor" => AtomicOp::Xor,
                    "max" | "umax" | "fmax" => AtomicOp::Max,
                    "min" | "umin" | "fmin" => AtomicOp::Min,
                    "uinc_wrap" => AtomicOp::Inc,
                    "udec_wrap" => AtomicOp::Dec,
                    _ => AtomicOp::Exchange,
                };
                let ty = self.lt(&t);
                Ok(placed(self.define(def, Op::Atomic(op, m, vec![v]), ty)))
            }
            "cmpxchg" => {
                c.eat_ident("weak");
                c.eat_ident("volatile");
                let m = self.mem_operand(c)?;
                c.expect_punct(',')?;
                let (t, cmp) = self.typed(c)?;
                c.expect_punct(',')?;
                let (_, new) = self.typed(c)?;
                let ty = self.lt(&t);
                Ok(placed(self.define(def, Op::Atomic(AtomicOp::CompareExchange, m, vec![cmp, new]), ty)))
            }
            "fence" => {
                let mem = if c.eat_ident("syncscope") {
                    c.expect_punct('(')?;
                    let s = match c.next() {
                        Some(Tok::Str(s)) => s.clone(),
                        _ => String::new(),
                    };
                    c.expect_punct(')')?;
                    match s.as_str() {
                        "singlethread" => Scope::None,
                        "wavefront" | "warp" | "subgroup" => Scope::Wave,
                        "workgroup" | "cta" | "block" | "cluster" => Scope::Group,
                        "agent" | "device" | "gpu" => Scope::Device,
                        _ => Scope::System,
                    }
                } else {
                    Scope::System
                };
                let bar = Barrier { exec: Scope::None, mem, spaces: Spaces::ALL, reduce: None };
                Ok(placed(self.define(def, Op::Barrier(bar, None), Type::Void)))
            }
            "phi" => {
                skip_flags(c);
                let t = c.ty()?;
                let mut incoming = Vec::new();
                while c.eat_punct('[') {
                    let v = self.value(c, &t)?;
                    c.expect_punct(',')?;
                    let b = match c.next() {
                        Some(Tok::Local(n)) => self.labels.get(n).copied().ok_or_else(|| format!("unknown label %{n}"))?,
                        t => return Err(format!("expected a block, found {t:?}")),
                    };
                    c.expect_punct(']')?;
                    incoming.push((b, v));
                    c.eat_punct(',');
                }
                let ty = self.lt(&t);
                Ok(placed(self.define(def, Op::Phi(incoming), ty)))
            }
            "call" | "tail" | "musttail" | "notail" => {
                if opcode != "call" && !c.eat_ident("call") {
                    return Err("expected `call`".into());
                }
                self.call(c, def)
            }
            "extractvalue" | "insertvalue" | "extractelement" | "insertelement" | "shufflevector" => {
                // Register shuffles: no memory, and the engine needs no value.
                let t = c.ty()?;
                let ty = if opcode == "extractvalue" || opcode == "extractelement" { Type::I64 } else { self.lt(&t) };
                Ok(placed(self.define(def, Op::Undef, ty)))
            }
            "invoke" | "callbr" | "indirectbr" | "resume" | "landingpad" | "catchswitch" | "catchret" | "cleanupret" | "catchpad"
            | "cleanuppad" => Err(format!("`{opcode}` is not supported")),
            _ => {
                // Unknown: assume it reads and writes memory anywhere.
                let p = self.emit(Op::Undef, Type::Ptr(MemSpace::Unknown));
                let zero = self.zero();
                let m = MemRef { space: MemSpace::Unknown, root: Root::Ptr(p), index: zero };
                Ok(placed(self.define(def, Op::Atomic(AtomicOp::Exchange, m, vec![zero]), Type::I64)))
            }
        }
    }

    /// `T v` (with parameter attributes between them, as in call arguments).
    fn typed(&mut self, c: &mut Cursor) -> PResult<(LType, Value)> {
        let t = c.ty()?;
        while matches!(c.peek(), Some(Tok::Ident(s)) if !is_value_keyword(s)) {
            skip_attr(c)?;
        }
        let v = self.value(c, &t)?;
        Ok((t, v))
    }

    fn value(&mut self, c: &mut Cursor, t: &LType) -> PResult<Value> {
        let ty = self.lt(t);
        match c.next() {
            Some(Tok::Local(n)) => self.values.get(n).copied().ok_or_else(|| format!("unknown value %{n}")),
            Some(Tok::Global(n)) => Ok(match self.ctx.globals.get(n) {
                Some(&(g, _)) => {
                    let zero = self.zero();
                    self.emit(Op::AddrOf(Root::Global(g), zero), ty)
                }
                // A function's address.
                None => self.emit(Op::Undef, ty),
            }),
            Some(Tok::Int(k)) => Ok(if ty == Type::Bool {
                self.emit(Op::Const(Const::Bool(*k != 0)), ty)
            } else if ty.is_float() {
                self.emit(Op::Const(Const::Float(*k as f64)), ty)
            } else {
                self.emit(Op::Const(Const::Int(*k as u64)), ty)
            }),
            Some(Tok::Float(x)) => Ok(self.emit(Op::Const(Const::Float(*x)), ty)),
            Some(Tok::Ident(k)) => match k.as_str() {
                "true" | "false" => Ok(self.emit(Op::Const(Const::Bool(k == "true")), Type::Bool)),
                "null" | "zeroinitializer" => Ok(self.emit(Op::Const(Const::Int(0)), ty)),
                "undef" | "poison" | "none" => Ok(self.emit(Op::Undef, ty)),
                "getelementptr" => {
                    skip_flags(c);
                    c.expect_punct('(')?;
                    let (op, ty) = self.gep(c)?;
                    c.expect_punct(')')?;
                    Ok(self.emit(op, ty))
                }
                "addrspacecast" | "bitcast" | "ptrtoint" | "inttoptr" | "trunc" | "zext" | "sext" => {
                    c.expect_punct('(')?;
                    let (_, v) = self.typed(c)?;
                    if !c.eat_ident("to") {
                        return Err("expected `to` in a constant cast".into());
                    }
                    let to = c.ty()?;
                    c.expect_punct(')')?;
                    let ty = self.lt(&to);
                    Ok(self.emit(Op::Convert(v), ty))
                }
                "blockaddress" | "dso_local_equivalent" | "no_cfi" | "splat" => {
                    if c.is_punct('(') {
                        c.skip_group()?;
                    } else {
                        c.next();
                    }
                    Ok(self.emit(Op::Undef, ty))
                }
                k => Err(format!("unknown value `{k}`")),
            },
            Some(Tok::Punct(open @ ('<' | '[' | '{'))) => {
                // Aggregate constants: only their type matters here.
                c.pos -= 1;
                if *open == '<' && c.peek_at(1) == Some(&Tok::Punct('{')) {
                    c.pos += 1;
                }
                c.skip_group()?;
                if *open == '<' && c.is_punct('>') {
                    c.pos += 1;
                }
                Ok(self.emit(Op::Undef, ty))
            }
            Some(Tok::Str(_)) => Ok(self.emit(Op::Undef, ty)),
            t => Err(format!("expected a value, found {t:?}")),
        }
    }

    /// The pointer operand of a memory instruction, folded into a root and index where possible.
    fn mem_operand(&mut self, c: &mut Cursor) -> PResult<MemRef> {
        let (t, p) = self.typed(c)?;
        let space = match t {
            LType::Ptr(a) => self.ctx.target.space(a),
            _ => MemSpace::Unknown,
        };
        if let Op::AddrOf(root, index) = self.f.inst(p).op {
            return Ok(MemRef { space, root, index });
        }
        let zero = self.zero();
        Ok(MemRef { space, root: Root::Ptr(p), index: zero })
    }

    /// The byte size of the scalar element of the global a pointer is traced to.
    fn pointee_bytes(&self, mut p: Value) -> Option<u64> {
        for _ in 0..64 {
            match &self.f.inst(p).op {
                Op::AddrOf(Root::Global(g), _) => {
                    return self.ctx.globals.values().find(|(id, _)| id == g).map(|&(_, b)| b);
                }
                Op::PtrAdd(q, _) | Op::Convert(q) => p = *q,
                _ => return None,
            }
        }
        None
    }

    /// `getelementptr [flags] T, ptr base, idx...` as an address in cells.
    fn gep(&mut self, c: &mut Cursor) -> PResult<(Op, Type)> {
        skip_flags(c);
        let src = c.ty()?;
        c.expect_punct(',')?;
        let (bt, base) = self.typed(c)?;
        let mut indices = Vec::new();
        while c.eat_punct(',') {
            skip_flags(c);
            indices.push(self.typed(c)?);
        }
        // Offset in cells: a constant part and variable terms.
        let mut konst: i128 = 0;
        let mut terms: Vec<(Value, u64)> = Vec::new();
        let mut cur = src.clone();
        for (i, (_, v)) in indices.iter().enumerate() {
            let k = self.f.as_int(*v).map(|k| k as i128);
            let (next, stride, fixed) = if i == 0 {
                (cur.clone(), cur.cells(&self.ctx.named), 0)
            } else {
                match cur.step(k, &self.ctx.named) {
                    Some((field, before)) if matches!(cur, LType::Struct(_) | LType::Named(_)) => (field, 0, before),
                    Some((elem, _)) => {
                        let s = elem.cells(&self.ctx.named);
                        (elem, s, 0)
                    }
                    None => (LType::Void, 1, 0),
                }
            };
            konst += fixed as i128;
            match k {
                Some(k) => konst += k * stride as i128,
                None if stride > 0 => terms.push((*v, stride)),
                None => {}
            }
            cur = next;
        }
        let mut offset = if konst != 0 || terms.is_empty() { Some(self.int_const(konst as i64)) } else { None };
        for (v, stride) in terms {
            let scaled = if stride == 1 {
                v
            } else {
                let s = self.int_const(stride as i64);
                self.emit(Op::Binary(BinOp::Mul, v, s), Type::I64)
            };
            offset = Some(match offset {
                Some(o) => self.emit(Op::Binary(BinOp::Add, o, scaled), Type::I64),
                None => scaled,
            });
        }
        let mut offset = offset.expect("offset has a constant or a term");
        // Byte-addressed GEPs (`getelementptr i8, ...`) over a known array of
        // wider cells: the accesses they feed are aligned, so the division is exact.
        if src == LType::Int(8) {
            if let Some(size) = self.pointee_bytes(base).filter(|&s| s > 1) {
                let s = self.int_const(size as i64);
                offset = self.emit(Op::Binary(BinOp::ExactDiv, offset, s), Type::I64);
            }
        }
        let ty = self.lt(&bt);
        Ok(match self.f.inst(base).op {
            Op::AddrOf(root, index) if self.f.as_int(index) == Some(0) => (Op::AddrOf(root, offset), ty),
            _ => (Op::PtrAdd(base, offset), ty),
        })
    }

    fn call(&mut self, c: &mut Cursor, def: Option<Value>) -> PResult<Option<Value>> {
        // Return attributes and type, up to the callee.
        let mut ret = LType::Void;
        let callee = loop {
            match c.peek() {
                Some(Tok::Global(n)) => {
                    c.pos += 1;
                    break Some(n.clone());
                }
                Some(Tok::Local(_)) if c.peek_at(1) == Some(&Tok::Punct('(')) => {
                    c.pos += 1;
                    break None;
                }
                Some(Tok::Ident(s)) if s == "asm" => {
                    // Inline assembly may do anything.
                    let p = self.emit(Op::Undef, Type::Ptr(MemSpace::Unknown));
                    let zero = self.zero();
                    let m = MemRef { space: MemSpace::Unknown, root: Root::Ptr(p), index: zero };
                    let ty = self.lt(&ret);
                    return Ok(Some(self.define(def, Op::Atomic(AtomicOp::Exchange, m, vec![zero]), ty)));
                }
                Some(Tok::Punct('(')) => c.skip_group()?,
                Some(_) if c.is_type_start() => ret = c.ty()?,
                Some(_) => skip_attr(c)?,
                None => return Err("call without a callee".into()),
            }
        };
        let ty = self.lt(&ret);
        let name = callee.unwrap_or_default();
        if NO_EFFECT_PREFIXES.iter().any(|p| name.starts_with(p)) {
            return Ok(def.map(|d| self.define(Some(d), Op::Undef, ty)));
        }
        // Arguments.
        c.expect_punct('(')?;
        let mut args = Vec::new();
        while !c.eat_punct(')') {
            if c.eat_punct(',') {
                continue;
            }
            let t = c.ty()?;
            if t == LType::Metadata {
                while !c.is_punct(',') && !c.is_punct(')') && !c.at_end() {
                    if c.is_punct('(') || c.is_punct('{') {
                        c.skip_group()?;
                    } else {
                        c.pos += 1;
                    }
                }
                continue;
            }
            while matches!(c.peek(), Some(Tok::Ident(s)) if !is_value_keyword(s)) {
                skip_attr(c)?;
            }
            args.push(self.value(c, &t)?);
        }
        let consts: Vec<Option<i64>> = args.iter().map(|&a| self.f.as_int(a)).collect();
        if name.is_empty() {
            return Ok(Some(self.define(def, Op::Call(Callee::Opaque("<indirect call>".into()), args), ty)));
        }
        match special(&name, &consts) {
            Some(Special::Builtin(b)) => return Ok(Some(self.define(def, Op::Builtin(b), ty))),
            Some(Special::GlobalId(a)) => {
                let g = self.emit(Op::Builtin(Builtin::GroupId(a)), Type::U32);
                let s = self.emit(Op::Builtin(Builtin::GroupSize(a)), Type::U32);
                let l = self.emit(Op::Builtin(Builtin::LocalId(a)), Type::U32);
                let gs = self.emit(Op::Binary(BinOp::Mul, g, s), Type::U32);
                return Ok(Some(self.define(def, Op::Binary(BinOp::Add, gs, l), ty)));
            }
            Some(Special::Barrier(bar)) => {
                let pred = if bar.reduce.is_some() { args.first().copied() } else { None };
                return Ok(Some(self.define(def, Op::Barrier(bar, pred), ty)));
            }
            Some(Special::Untrusted(bar)) => {
                let v = self.define(def, Op::Barrier(bar, None), ty);
                self.untrusted.push(v);
                return Ok(Some(v));
            }
            None => {}
        }
        let base = name.split('.').take(3).collect::<Vec<_>>().join(".");
        if base == "llvm.memcpy" || base == "llvm.memmove" || base == "llvm.memset" {
            let ptr_ref = |p: &mut Self, v: Value| {
                let space = match p.f.inst(v).ty {
                    Type::Ptr(s) => s,
                    _ => MemSpace::Unknown,
                };
                let zero = p.zero();
                MemRef { space, root: Root::Ptr(v), index: zero }
            };
            let (Some(&dst), Some(&src)) = (args.first(), args.get(1)) else { return Err("short memory intrinsic".into()) };
            if base != "llvm.memset" {
                let m = ptr_ref(self, src);
                self.emit(Op::Load(m), Type::I64);
            }
            let m = ptr_ref(self, dst);
            return Ok(Some(self.define(def, Op::Store(m, src), Type::Void)));
        }
        if PURE_PREFIXES.iter().any(|p| name.starts_with(p)) {
            let op = match math_fn(&name) {
                Some(m) => Op::Math(m, args),
                None => Op::Undef,
            };
            return Ok(Some(self.define(def, op, ty)));
        }
        let callee = match self.ctx.functions.get(&name) {
            Some(&id) => Callee::Func(id),
            None => Callee::Opaque(name),
        };
        Ok(Some(self.define(def, Op::Call(callee, args), ty)))
    }
}

fn is_value_keyword(s: &str) -> bool {
    matches!(
        s,
        "true"
            | "false"
            | "null"
            | "undef"
            | "poison"
            | "zeroinitializer"
            | "none"
            | "getelementptr"
            | "addrspacecast"
            | "bitcast"
            | "ptrtoint"
            | "inttoptr"
            | "trunc"
            | "zext"
            | "sext"
            | "blockaddress"
            | "dso_local_equivalent"
            | "no_cfi"
            | "splat"
    )
}

/// Skips one attribute: `noundef`, `align 4`, `range(i32 0, 8)`, `#0`, `addrspace(1)`.
fn skip_attr(c: &mut Cursor) -> PResult<()> {
    match c.next() {
        Some(Tok::Ident(s)) => {
            if c.is_punct('(') {
                c.skip_group()?;
            } else if matches!(s.as_str(), "align" | "dereferenceable" | "dereferenceable_or_null" | "alignstack")
                && matches!(c.peek(), Some(Tok::Int(_)))
            {
                c.pos += 1;
            }
            Ok(())
        }
        Some(Tok::Attr(_)) | Some(Tok::Str(_)) => Ok(()),
        t => Err(format!("unexpected {t:?}")),
    }
}

/// Skips instruction flags and fast-math flags (`nuw`, `nsw`, `exact`, `fast`, `inbounds`, ...).
fn skip_flags(c: &mut Cursor) {
    const FLAGS: &[&str] = &[
        "nuw", "nsw", "exact", "disjoint", "nneg", "samesign", "inbounds", "nusw", "fast", "nnan", "ninf", "nsz", "arcp", "contract",
        "afn", "reassoc",
    ];
    loop {
        match c.peek() {
            Some(Tok::Ident(s)) if FLAGS.contains(&s.as_str()) => c.pos += 1,
            Some(Tok::Ident(s)) if s == "inrange" && c.peek_at(1) == Some(&Tok::Punct('(')) => {
                c.pos += 1;
                let _ = c.skip_group();
            }
            _ => return,
        }
    }
}

fn describe(toks: &[Tok]) -> String {
    let text: Vec<String> = toks
        .iter()
        .take(6)
        .map(|t| match t {
            Tok::Local(n) => format!("%{n}"),
            Tok::Global(n) => format!("@{n}"),
            Tok::Ident(s) => s.clone(),
            Tok::Punct(c) => c.to_string(),
            t => format!("{t:?}"),
        })
        .collect();
    text.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &str, consts: &[Option<i64>]) -> &'static str {
        match special(name, consts) {
            Some(Special::Barrier(b)) if b.reduce.is_some() => "reduce",
            Some(Special::Barrier(b)) if b.exec == Scope::Group => "sync",
            Some(Special::Barrier(b)) if b.exec == Scope::Wave => "wave",
            Some(Special::Barrier(_)) => "fence",
            Some(Special::Untrusted(_)) => "untrusted",
            Some(Special::Builtin(_)) | Some(Special::GlobalId(_)) => "id",
            None => "none",
        }
    }

    #[test]
    fn barrier_intrinsics_are_told_apart() {
        assert_eq!(kind("llvm.nvvm.barrier0", &[]), "sync");
        assert_eq!(kind("llvm.nvvm.barrier.sync", &[Some(0)]), "sync");
        assert_eq!(kind("llvm.nvvm.barrier.cta.sync.aligned.all", &[Some(0)]), "sync");
        assert_eq!(kind("llvm.nvvm.barrier.sync", &[Some(1)]), "untrusted");
        assert_eq!(kind("llvm.nvvm.barrier.sync", &[None]), "untrusted");
        assert_eq!(kind("llvm.nvvm.barrier.sync.cnt", &[Some(0), Some(64)]), "untrusted");
        assert_eq!(kind("llvm.nvvm.barrier.cta.sync.aligned.count", &[Some(0), Some(64)]), "untrusted");
        assert_eq!(kind("llvm.nvvm.bar.arrive", &[Some(0), Some(64)]), "untrusted");
        assert_eq!(kind("llvm.amdgcn.s.barrier", &[]), "sync");
        assert_eq!(kind("llvm.amdgcn.s.barrier.signal", &[Some(-1)]), "untrusted");
        assert_eq!(kind("llvm.nvvm.barrier0.popc", &[None]), "reduce");
        assert_eq!(kind("llvm.nvvm.bar.warp.sync", &[Some(-1)]), "wave");
        assert_eq!(kind("llvm.nvvm.membar.gl", &[]), "fence");
        assert_eq!(kind("llvm.nvvm.fence.proxy.tensormap", &[]), "fence");
        assert_eq!(kind("_Z7barrierj", &[Some(3)]), "sync");
        assert_eq!(kind("_Z12get_local_idj", &[Some(1)]), "id");
        assert_eq!(kind("_Z12get_local_idj", &[None]), "none");
        assert_eq!(kind("llvm.nvvm.barrier0x", &[]), "none");
    }
}
