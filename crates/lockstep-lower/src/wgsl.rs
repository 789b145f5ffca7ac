//! The WGSL front end: naga parses and validates the source, and its IR is
//! lowered here to the kernel IR. Every compute entry point becomes one flat
//! function, helpers inlined at their call sites like the C-family lowering
//! does; values are split into scalar cells, function variables become SSA
//! variables (or private memory when they hold arrays or matrices).

use crate::module::KernelSink;
use crate::ssa::{Ssa, Var};
use crate::{Compiled, Options, SpanMap};
use lockstep_diag::{Diagnostic, Severity};
use lockstep_ir::{
    AtomicOp, Barrier, BinOp, BlockId, Builtin, Callee, CmpOp, Const, EntryInfo, ExitKind, Function, Global, GlobalId, GlobalKind,
    InlineSite, Local, LocalId, MathFn, MemRef, MemSpace, Module, Op, Param, Root, Scope, Spaces, Terminator, Type, UnOp, Value, WaveOp,
};
use lockstep_source::{FileId, SourceDb, Span};
use naga::valid::{Capabilities, FunctionInfo, ModuleInfo, ValidationFlags, Validator};
use naga::{Handle, TypeInner};
use rustc_hash::FxHashMap;

/// Parses, validates and lowers one WGSL file; each kernel goes to `sink`,
/// or into the returned module when there is none.
///
/// `text` is what naga parses: the file itself, or the file after the C
/// preprocessor (WGSL has no `#`; projects such as ggml generate their shader
/// variants with `#ifdef`/`#define`/`#include`). `map` places its offsets.
pub fn compile(
    db: &SourceDb,
    file: FileId,
    text: &str,
    map: &dyn SpanMap,
    options: &Options,
    sink: Option<&mut KernelSink>,
) -> Compiled {
    let to_span = |s: naga::Span| span_of(map, s).unwrap_or(Span::new(file, 0, 0));
    let text = &*without_subgroups_extension(text);
    let parsed = match naga::front::wgsl::parse_str(text) {
        Ok(m) => m,
        Err(e) => {
            let (span, label) = e.labels().next().map(|(s, l)| (to_span(s), l.to_string())).unwrap_or((Span::new(file, 0, 0), String::new()));
            let mut d = Diagnostic::new("parse-error", Severity::Error, span, e.message().to_string());
            if !label.is_empty() {
                d = d.with_primary_label(label);
            }
            for note in e.notes() {
                d = d.with_note(note.to_string());
            }
            return Compiled { module: Module::default(), diagnostics: vec![d], has_errors: true };
        }
    };
    let info = match Validator::new(ValidationFlags::all(), Capabilities::all()).validate(&parsed) {
        Ok(info) => info,
        Err(e) => {
            let span = e.spans().next().map(|(s, _)| to_span(*s)).unwrap_or(Span::new(file, 0, 0));
            let mut message = e.as_inner().to_string();
            let mut source = std::error::Error::source(e.as_inner());
            while let Some(inner) = source {
                message.push_str(": ");
                message.push_str(&inner.to_string());
                source = inner.source();
            }
            let d = Diagnostic::new("parse-error", Severity::Error, span, format!("invalid WGSL: {message}"))
                .with_note("naga's validator rejects this shader, so WebGPU would not create a pipeline from it; nothing was checked");
            return Compiled { module: Module::default(), diagnostics: vec![d], has_errors: true };
        }
    };
    let mut module = Module {
        group_barrier: "workgroupBarrier()".into(),
        device_barrier: "storageBarrier()".into(),
        group_memory_zeroed: true,
        ..Module::default()
    };
    let globals = parsed.global_variables.iter().map(|(h, g)| lower_global(&parsed, &mut module, to_span, h, g)).collect::<Vec<_>>();
    let overrides = parsed.overrides.iter().map(|(h, o)| lower_override(&parsed, &mut module, to_span, h, o)).collect::<Vec<_>>();
    let mut diagnostics = Vec::new();
    let mut kernels = Vec::new();
    for (index, ep) in parsed.entry_points.iter().enumerate() {
        if ep.stage != naga::ShaderStage::Compute {
            continue;
        }
        let cx = Cx { m: &parsed, info: &info, text, map, globals: &globals, overrides: &overrides };
        // naga keeps no span for an entry point: its `fn name` in the text stands for it.
        let at = text.find(&format!("fn {}", ep.name)).unwrap_or(0) as u32;
        let span = map.span(at, at + 3 + ep.name.len() as u32);
        let (f, mut diags) = KernelLowerer::lower(cx, ep, info.get_entry_point(index), options, span);
        diagnostics.append(&mut diags);
        kernels.push(f);
    }
    match sink {
        Some(sink) => kernels.into_iter().for_each(|f| sink(db, &module, f)),
        None => module.functions = kernels,
    }
    Compiled { module, diagnostics, has_errors: false }
}

/// naga accepts subgroup operations without WGSL's `enable subgroups;` and
/// rejects the directive itself (its support is not spec-complete); the
/// extension only permits what naga already reads, so it is dropped from
/// `enable` lists, keeping every byte offset.
fn without_subgroups_extension(text: &str) -> std::borrow::Cow<'_, str> {
    let mut out = std::borrow::Cow::Borrowed(text);
    let mut from = 0;
    while let Some(at) = text[from..].find("enable").map(|i| i + from) {
        from = at + "enable".len();
        let word_start = at == 0 || !text[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_');
        let Some(end) = text[from..].find(';').map(|i| i + from) else { break };
        let items: Vec<&str> = text[from..end].split(',').map(str::trim).collect();
        if !word_start || !text[from..].starts_with(char::is_whitespace) || !items.contains(&"subgroups") {
            continue;
        }
        let kept: Vec<&str> = items.into_iter().filter(|&i| i != "subgroups" && !i.is_empty()).collect();
        let directive = if kept.is_empty() { String::new() } else { format!("enable {};", kept.join(", ")) };
        let replaced = format!("{directive:<width$}", width = end + 1 - at);
        out.to_mut().replace_range(at..=end, &replaced);
        from = end;
    }
    out
}

fn span_of(map: &dyn SpanMap, s: naga::Span) -> Option<Span> {
    s.to_range().map(|r| map.span(r.start as u32, r.end as u32))
}

/// Where a naga global lives for lockstep.
#[derive(Clone, Copy)]
enum GlobalSlot {
    /// Shared, device or constant memory.
    Memory(GlobalId, MemSpace),
    /// `var<private>`: per-thread, kept like a function variable.
    Private,
    /// Textures, samplers and other handles: no cells lockstep tracks.
    Handle,
}

fn lower_global(
    m: &naga::Module,
    module: &mut Module,
    to_span: impl Fn(naga::Span) -> Span,
    h: Handle<naga::GlobalVariable>,
    g: &naga::GlobalVariable,
) -> GlobalSlot {
    use naga::AddressSpace as A;
    let (kind, space) = match g.space {
        A::WorkGroup => (GlobalKind::GroupShared, MemSpace::Shared),
        A::Storage { access } if access.contains(naga::StorageAccess::STORE) => (GlobalKind::Uav, MemSpace::Device),
        A::Storage { .. } => (GlobalKind::ReadOnly, MemSpace::Constant),
        A::Uniform | A::Immediate => (GlobalKind::Constant, MemSpace::Constant),
        A::Private | A::Function => return GlobalSlot::Private,
        _ => return GlobalSlot::Handle,
    };
    let mut dims = Vec::new();
    let mut inner = &m.types[g.ty].inner;
    while let TypeInner::Array { base, size, .. } = inner {
        dims.push(match size {
            naga::ArraySize::Constant(n) => n.get() as u64,
            _ => 0,
        });
        inner = &m.types[*base].inner;
    }
    // A struct ending in a runtime-sized array is addressed cell by cell.
    if dims.is_empty() && has_runtime_array(m, inner) {
        dims.push(0);
    }
    let per = if dims == [0] && matches!(inner, TypeInner::Struct { .. }) { 1 } else { cells(m, inner) };
    let mut types = Vec::new();
    scalar_types(m, inner, &mut types);
    let len = (!dims.contains(&0)).then(|| dims.iter().product::<u64>() * per as u64);
    let id = module.add_global(Global {
        name: g.name.clone().unwrap_or_else(|| "global".into()),
        kind,
        space,
        elem: types.first().copied().unwrap_or(Type::U32),
        dims,
        cells_per_elem: per,
        cell_names: Vec::new(),
        len,
        coherent: false,
        texel_width: 0,
        open_value: None,
        init: Vec::new(),
        span: to_span(m.global_variables.get_span(h)),
    });
    GlobalSlot::Memory(id, space)
}

/// An `override` constant: constant memory whose value the host chooses when
/// it creates the pipeline (its initializer is only the default, which `run` uses).
fn lower_override(
    m: &naga::Module,
    module: &mut Module,
    to_span: impl Fn(naga::Span) -> Span,
    h: Handle<naga::Override>,
    o: &naga::Override,
) -> (GlobalId, Type) {
    let mut types = Vec::new();
    scalar_types(m, &m.types[o.ty].inner, &mut types);
    let ty = types.first().copied().unwrap_or(Type::U32);
    let default = o.init.and_then(|e| match m.global_expressions[e] {
        naga::Expression::Literal(lit) => Some(literal_const(lit).1),
        _ => None,
    });
    let global = module.add_global(Global {
        name: o.name.clone().unwrap_or_else(|| "override".into()),
        kind: GlobalKind::Constant,
        space: MemSpace::Constant,
        elem: ty,
        dims: Vec::new(),
        cells_per_elem: 1,
        cell_names: Vec::new(),
        len: Some(1),
        coherent: false,
        texel_width: 0,
        open_value: Some(lockstep_ir::OpenValue::PipelineConstant),
        init: default.into_iter().collect(),
        span: to_span(m.overrides.get_span(h)),
    });
    (global, ty)
}

/// A literal's type and value.
fn literal_const(lit: naga::Literal) -> (Type, Const) {
    use naga::Literal as L;
    match lit {
        L::F64(x) => (Type::F64, Const::Float(x)),
        L::F32(x) => (Type::F32, Const::Float(x as f64)),
        L::F16(x) => (Type::F16, Const::Float(f64::from(x))),
        L::AbstractFloat(x) => (Type::F32, Const::Float(x)),
        L::U16(x) => (Type::U32, Const::Int(x as u64)),
        L::I16(x) => (Type::I32, Const::Int(x as i64 as u64)),
        L::U32(x) => (Type::U32, Const::Int(x as u64)),
        L::I32(x) => (Type::I32, Const::Int(x as i64 as u64)),
        L::U64(x) => (Type::U64, Const::Int(x)),
        L::I64(x) | L::AbstractInt(x) => (Type::I64, Const::Int(x as u64)),
        L::Bool(b) => (Type::Bool, Const::Bool(b)),
    }
}

fn has_runtime_array(m: &naga::Module, inner: &TypeInner) -> bool {
    match inner {
        TypeInner::Array { size: naga::ArraySize::Dynamic, .. } => true,
        TypeInner::Struct { members, .. } => members.iter().any(|mb| has_runtime_array(m, &m.types[mb.ty].inner)),
        _ => false,
    }
}

/// Scalar cells a value of this type takes; a runtime-sized array counts one element.
fn cells(m: &naga::Module, inner: &TypeInner) -> u32 {
    match inner {
        TypeInner::Vector { size, .. } => *size as u32,
        TypeInner::Matrix { columns, rows, .. } => *columns as u32 * *rows as u32,
        TypeInner::Array { base, size, .. } => {
            let n = match size {
                naga::ArraySize::Constant(n) => n.get(),
                _ => 1,
            };
            n * cells(m, &m.types[*base].inner)
        }
        TypeInner::Struct { members, .. } => members.iter().map(|mb| cells(m, &m.types[mb.ty].inner)).sum(),
        TypeInner::Pointer { .. } | TypeInner::ValuePointer { .. } => 1,
        _ => 1,
    }
}

fn scalar_type(s: naga::Scalar) -> Type {
    use naga::ScalarKind as K;
    match (s.kind, s.width) {
        (K::Bool, _) => Type::Bool,
        (K::Sint, 8) => Type::I64,
        (K::Uint, 8) => Type::U64,
        (K::Sint | K::AbstractInt, _) => Type::I32,
        (K::Uint, _) => Type::U32,
        (K::Float, 2) => Type::F16,
        (K::Float, 8) => Type::F64,
        (K::Float | K::AbstractFloat, _) => Type::F32,
    }
}

/// The type of each scalar cell of a value, in cell order.
fn scalar_types(m: &naga::Module, inner: &TypeInner, out: &mut Vec<Type>) {
    match inner {
        TypeInner::Scalar(s) | TypeInner::Atomic(s) => out.push(scalar_type(*s)),
        TypeInner::Vector { size, scalar } => out.extend(std::iter::repeat_n(scalar_type(*scalar), *size as usize)),
        TypeInner::Matrix { columns, rows, scalar } => out.extend(std::iter::repeat_n(scalar_type(*scalar), *columns as usize * *rows as usize)),
        TypeInner::Array { base, size, .. } => {
            let n = match size {
                naga::ArraySize::Constant(n) => n.get() as usize,
                _ => 1,
            };
            let mut one = Vec::new();
            scalar_types(m, &m.types[*base].inner, &mut one);
            for _ in 0..n {
                out.extend_from_slice(&one);
            }
        }
        TypeInner::Struct { members, .. } => members.iter().for_each(|mb| scalar_types(m, &m.types[mb.ty].inner, out)),
        _ => out.push(Type::U32),
    }
}

/// Shared, read-only facts while lowering the kernels of one module.
#[derive(Clone, Copy)]
struct Cx<'m> {
    m: &'m naga::Module,
    info: &'m ModuleInfo,
    /// The text naga parsed, and where its offsets are in the sources.
    text: &'m str,
    map: &'m dyn SpanMap,
    globals: &'m [GlobalSlot],
    /// Per override, the constant holding its value, and the value's type.
    overrides: &'m [(GlobalId, Type)],
}

/// A lowered naga expression: scalar cells, or a pointer.
#[derive(Clone)]
enum Val {
    Scalars(Vec<Value>),
    Ptr(Ptr),
}

/// A pointer: cell `offset` of memory or of a variable's SSA cells.
#[derive(Clone)]
struct Ptr {
    place: Place,
    offset: Value,
}

#[derive(Clone)]
enum Place {
    Mem { space: MemSpace, root: Root },
    Vars(Vec<Var>),
}

/// What one pointee of a pointer type is made of.
struct Pointee {
    types: Vec<Type>,
    atomic: bool,
}

/// A function being inlined (the kernel itself at the bottom).
struct Frame<'m> {
    fun: &'m naga::Function,
    info: &'m FunctionInfo,
    args: Vec<Val>,
    values: FxHashMap<Handle<naga::Expression>, Val>,
    locals: Vec<Place>,
    /// Where `return` goes in an inlined helper, and the variables of its result.
    return_to: Option<(BlockId, Vec<Var>)>,
    /// Innermost last: where `break` goes, and `continue` in loops.
    targets: Vec<(BlockId, Option<BlockId>)>,
    site: Option<u32>,
}

struct KernelLowerer<'m> {
    cx: Cx<'m>,
    f: Function,
    ssa: Ssa,
    cur: BlockId,
    /// Blocks holding code after a `return`, `break` or `continue`.
    frames: Vec<Frame<'m>>,
    private: FxHashMap<Handle<naga::GlobalVariable>, Place>,
    /// Parameters standing for values fixed only when the pipeline is made (array lengths).
    uniform_params: FxHashMap<String, u32>,
    /// Per axis, the override the workgroup size names there.
    extent_overrides: [Option<Handle<naga::Override>>; 3],
    group_size: Option<[u32; 3]>,
    /// The statement being lowered, for expressions naga keeps no span for.
    stmt_span: Span,
    /// The same statement's range in the parsed text.
    stmt_range: naga::Span,
    diags: Vec<Diagnostic>,
}

impl crate::packed_dot::Emit for KernelLowerer<'_> {
    fn emit_op(&mut self, op: Op, ty: Type, span: Span) -> Value {
        self.emit(op, ty, span)
    }
}

impl<'m> KernelLowerer<'m> {
    fn lower(cx: Cx<'m>, ep: &'m naga::EntryPoint, info: &'m FunctionInfo, options: &Options, span: Span) -> (Function, Vec<Diagnostic>) {
        let mut entry = EntryInfo { barriers_need_language_uniformity: true, ..EntryInfo::default() };
        // An axis sized by an override constant is unknown until the pipeline is created.
        let overridden = ep.workgroup_size_overrides.unwrap_or_default();
        entry.group_extent = std::array::from_fn(|ax| overridden[ax].is_none().then_some(ep.workgroup_size[ax]));
        if overridden.iter().all(Option::is_none) {
            entry.group_size = Some(ep.workgroup_size);
        }
        if let Some(gs) = options.group_size {
            entry.group_size = Some(gs);
            entry.group_extent = gs.map(Some);
        }
        if let Some(grid) = options.grid_size {
            entry.grid_size = grid.map(Some);
        }
        let group_size = entry.group_size;
        let mut f = Function::new(ep.name.clone(), span);
        f.entry = Some(entry);
        let mut l = KernelLowerer {
            cx,
            f,
            ssa: Ssa::default(),
            cur: BlockId(0),
            frames: Vec::new(),
            private: FxHashMap::default(),
            uniform_params: FxHashMap::default(),
            extent_overrides: overridden.map(|e| match e.map(|e| &cx.m.global_expressions[e]) {
                Some(naga::Expression::Override(o)) => Some(*o),
                _ => None,
            }),
            group_size,
            stmt_span: span,
            stmt_range: naga::Span::UNDEFINED,
            diags: Vec::new(),
        };
        let entry_block = l.new_block(span);
        l.ssa.seal_entry(entry_block);
        l.cur = entry_block;
        for (h, g) in cx.m.global_variables.iter() {
            if matches!(cx.globals[h.index()], GlobalSlot::Private) {
                let place = l.variable(g.name.as_deref().unwrap_or("private"), g.ty, span);
                l.initialize(&place, g.ty, g.init.map(Init::Global), span);
                l.private.insert(h, place);
            }
        }
        let args = ep.function.arguments.iter().map(|a| l.entry_argument(a, span)).collect();
        l.call_frame(&ep.function, info, args, None, None);
        l.block(&ep.function.body);
        l.frames.pop();
        l.terminate(Terminator::Return(None), span, None);
        let mut f = std::mem::replace(&mut l.f, Function::new("", span));
        l.ssa.finish(&mut f);
        f.remove_unreachable_blocks();
        crate::ssa::remove_trivial_phis(&mut f);
        f.remove_dead_code();
        (f, l.diags)
    }

    // ----- emission -----

    fn emit(&mut self, op: Op, ty: Type, span: Span) -> Value {
        let v = self.f.push(self.cur, op, ty, span);
        self.f.inst_mut(v).inlined_at = self.frames.last().and_then(|fr| fr.site);
        v
    }

    fn int(&mut self, ty: Type, v: i64, span: Span) -> Value {
        self.emit(Op::Const(Const::Int(v as u64)), ty, span)
    }

    fn zero(&mut self, ty: Type, span: Span) -> Value {
        let c = match ty {
            Type::Bool => Const::Bool(false),
            t if t.is_float() => Const::Float(0.0),
            _ => Const::Int(0),
        };
        self.emit(Op::Const(c), ty, span)
    }

    /// `a + b` on cell offsets, folded when both are constants.
    fn add(&mut self, a: Value, b: Value, span: Span) -> Value {
        match (self.f.as_int(a), self.f.as_int(b)) {
            (Some(0), _) => b,
            (_, Some(0)) => a,
            (Some(x), Some(y)) => self.int(Type::U32, x + y, span),
            _ => self.emit(Op::Binary(BinOp::Add, a, b), Type::U32, span),
        }
    }

    fn scaled(&mut self, index: Value, stride: u32, span: Span) -> Value {
        let index = if self.f.inst(index).ty == Type::U32 { index } else { self.emit(Op::Convert(index), Type::U32, span) };
        match self.f.as_int(index) {
            Some(i) => self.int(Type::U32, i * stride as i64, span),
            None if stride == 1 => index,
            None => {
                let s = self.int(Type::U32, stride as i64, span);
                self.emit(Op::Binary(BinOp::Mul, index, s), Type::U32, span)
            }
        }
    }

    /// naga's span of a call statement covers the function's name; a barrier
    /// is reported (and removed by `--fix`) as the whole call, `()` included.
    fn call_statement_span(&self) -> Span {
        let Some(range) = self.stmt_range.to_range() else { return self.stmt_span };
        let rest = &self.cx.text[range.end..];
        match rest.trim_start().starts_with('(').then(|| rest.find(')')).flatten() {
            Some(close) => self.cx.map.span(range.start as u32, (range.end + close + 1) as u32),
            None => self.stmt_span,
        }
    }

    fn new_block(&mut self, span: Span) -> BlockId {
        self.ssa.new_block(&mut self.f, span)
    }

    /// Ends the current block; code after it goes to a fresh unreachable block.
    fn terminate(&mut self, term: Terminator, span: Span, exit: Option<ExitKind>) {
        self.cur = self.ssa.terminate(&mut self.f, self.cur, term, span, exit);
    }

    fn jump(&mut self, to: BlockId, span: Span) {
        self.terminate(Terminator::Jump(to), span, None);
    }

    fn enter(&mut self, b: BlockId) {
        self.ssa.seal(&mut self.f, b);
        self.cur = b;
    }

    fn frame(&self) -> &Frame<'m> {
        self.frames.last().expect("a function is being lowered")
    }

    fn frame_mut(&mut self) -> &mut Frame<'m> {
        self.frames.last_mut().expect("a function is being lowered")
    }

    fn expr_span(&self, h: Handle<naga::Expression>) -> Span {
        span_of(self.cx.map, self.frame().fun.expressions.get_span(h)).unwrap_or(self.stmt_span)
    }

    fn expr_type(&self, h: Handle<naga::Expression>) -> &'m TypeInner {
        let info: &'m FunctionInfo = self.frame().info;
        info[h].ty.inner_with(&self.cx.m.types)
    }

    fn cell_types(&self, inner: &TypeInner) -> Vec<Type> {
        let mut out = Vec::new();
        scalar_types(self.cx.m, inner, &mut out);
        out
    }

    fn pointee(&self, pointer: Handle<naga::Expression>) -> Pointee {
        let m = self.cx.m;
        match self.expr_type(pointer) {
            TypeInner::Pointer { base, .. } => {
                let inner = &m.types[*base].inner;
                Pointee { types: self.cell_types(inner), atomic: matches!(inner, TypeInner::Atomic(_)) }
            }
            TypeInner::ValuePointer { size, scalar, .. } => {
                Pointee { types: vec![scalar_type(*scalar); size.map_or(1, |s| s as usize)], atomic: false }
            }
            _ => Pointee { types: Vec::new(), atomic: false },
        }
    }

    /// A construct lockstep does not model: one `unsupported` note and an
    /// operation every analysis treats as reading and writing any memory.
    fn unmodelled(&mut self, what: &str, operands: Vec<Value>, result: &[Type], span: Span) -> Val {
        let d = Diagnostic::new(
            "unsupported",
            Severity::Warning,
            span,
            format!("{what} is not modelled; lockstep assumes it may read and write any shared or device memory"),
        );
        self.diags.push(d);
        let call = self.emit(Op::Call(Callee::Unmodelled(what.to_string()), operands), Type::I32, span);
        let vals = result
            .iter()
            .map(|&t| match t {
                Type::I32 => call,
                Type::Bool => {
                    let zero = self.int(Type::I32, 0, span);
                    self.emit(Op::Cmp(CmpOp::Ne, call, zero), Type::Bool, span)
                }
                t => self.emit(Op::Convert(call), t, span),
            })
            .collect();
        Val::Scalars(vals)
    }

    /// A value fixed for the whole dispatch but unknown to lockstep.
    fn uniform_param(&mut self, name: String, span: Span) -> Value {
        let index = match self.uniform_params.get(&name) {
            Some(&i) => i,
            None => {
                let i = self.f.params.len() as u32;
                self.f.params.push(Param { name: name.clone(), ty: Type::U32, span, noalias: false });
                self.uniform_params.insert(name, i);
                i
            }
        };
        self.emit(Op::Param(index), Type::U32, span)
    }

    // ----- variables -----

    /// Storage for a variable: SSA cells, or private memory when it holds
    /// arrays or matrices (indexed by values lockstep may not know).
    fn variable(&mut self, name: &str, ty: Handle<naga::Type>, span: Span) -> Place {
        let inner = &self.cx.m.types[ty].inner;
        let types = self.cell_types(inner);
        if contains_array_or_matrix(self.cx.m, inner) {
            self.f.locals.push(Local { name: name.to_string(), elem: types.first().copied().unwrap_or(Type::U32), len: types.len() as u64, span });
            Place::Mem { space: MemSpace::Private, root: Root::Local(LocalId(self.f.locals.len() as u32 - 1)) }
        } else {
            Place::Vars(types.iter().map(|&t| self.ssa.new_var(t, name)).collect())
        }
    }

    /// WGSL variables start as their initializer, or zero.
    fn initialize(&mut self, place: &Place, ty: Handle<naga::Type>, init: Option<Init>, span: Span) {
        let types = self.cell_types(&self.cx.m.types[ty].inner);
        let vals = match init {
            Some(Init::Global(h)) => self.const_scalars(h, span),
            Some(Init::Local(h)) => self.scalars(h),
            None => types.iter().map(|&t| self.zero(t, span)).collect(),
        };
        let offset = self.int(Type::U32, 0, span);
        self.write(&Ptr { place: place.clone(), offset }, &types, false, &vals, span);
    }

    fn entry_argument(&mut self, arg: &naga::FunctionArgument, span: Span) -> Val {
        let mut vals = Vec::new();
        self.bound_values(arg.binding.as_ref(), arg.ty, span, &mut vals);
        Val::Scalars(vals)
    }

    fn bound_values(&mut self, binding: Option<&naga::Binding>, ty: Handle<naga::Type>, span: Span, out: &mut Vec<Value>) {
        let inner = &self.cx.m.types[ty].inner;
        if let TypeInner::Struct { members, .. } = inner {
            for mb in members {
                self.bound_values(mb.binding.as_ref(), mb.ty, span, out);
            }
            return;
        }
        let n = cells(self.cx.m, inner) as u8;
        use naga::BuiltIn as B;
        let per_axis = |b: fn(u8) -> Builtin| Some((0..n).map(b).collect::<Vec<_>>());
        let builtins = match binding {
            Some(naga::Binding::BuiltIn(B::LocalInvocationId)) => per_axis(Builtin::LocalId),
            Some(naga::Binding::BuiltIn(B::WorkGroupId)) => per_axis(Builtin::GroupId),
            Some(naga::Binding::BuiltIn(B::NumWorkGroups)) => per_axis(Builtin::NumGroups),
            Some(naga::Binding::BuiltIn(B::WorkGroupSize)) => per_axis(Builtin::GroupSize),
            Some(naga::Binding::BuiltIn(B::LocalInvocationIndex)) => Some(vec![Builtin::LocalIndex]),
            Some(naga::Binding::BuiltIn(B::SubgroupInvocationId)) => Some(vec![Builtin::LaneId]),
            Some(naga::Binding::BuiltIn(B::SubgroupSize)) => Some(vec![Builtin::WaveSize]),
            Some(naga::Binding::BuiltIn(B::SubgroupId)) => {
                let flat = self.builtin(Builtin::LocalIndex, span);
                let width = self.builtin(Builtin::WaveSize, span);
                out.push(self.emit(Op::Binary(BinOp::Div, flat, width), Type::U32, span));
                return;
            }
            Some(naga::Binding::BuiltIn(B::NumSubgroups)) => {
                let threads = [0, 1, 2].map(|a| self.builtin(Builtin::GroupSize(a), span));
                let xy = self.emit(Op::Binary(BinOp::Mul, threads[0], threads[1]), Type::U32, span);
                let all = self.emit(Op::Binary(BinOp::Mul, xy, threads[2]), Type::U32, span);
                let width = self.builtin(Builtin::WaveSize, span);
                let one = self.int(Type::U32, 1, span);
                let last = self.emit(Op::Binary(BinOp::Sub, width, one), Type::U32, span);
                let padded = self.emit(Op::Binary(BinOp::Add, all, last), Type::U32, span);
                out.push(self.emit(Op::Binary(BinOp::Div, padded, width), Type::U32, span));
                return;
            }
            Some(naga::Binding::BuiltIn(B::GlobalInvocationId)) => {
                for a in 0..n {
                    let group = self.builtin(Builtin::GroupId(a), span);
                    let size = self.builtin(Builtin::GroupSize(a), span);
                    let local = self.builtin(Builtin::LocalId(a), span);
                    let base = self.emit(Op::Binary(BinOp::Mul, group, size), Type::U32, span);
                    out.push(self.emit(Op::Binary(BinOp::Add, base, local), Type::U32, span));
                }
                return;
            }
            _ => None,
        };
        match builtins {
            Some(list) => list.into_iter().for_each(|b| out.push(self.builtin(b, span))),
            None => {
                let what = match binding {
                    Some(naga::Binding::BuiltIn(b)) => format!("the built-in input `{b:?}`"),
                    Some(naga::Binding::Location { location, .. }) => format!("the entry-point input at location {location}"),
                    None => "an entry-point input without a binding".to_string(),
                };
                let types = self.cell_types(inner);
                let Val::Scalars(vals) = self.unmodelled(&what, Vec::new(), &types, span) else { unreachable!("scalars") };
                out.extend(vals);
            }
        }
    }

    /// A builtin component, folding launch-shape values the source fixes.
    fn builtin(&mut self, b: Builtin, span: Span) -> Value {
        match (b, self.group_size) {
            (Builtin::GroupSize(a), Some(gs)) => self.int(Type::U32, gs[a as usize] as i64, span),
            (Builtin::LocalIndex, Some([x, y, _])) => {
                let lx = self.builtin(Builtin::LocalId(0), span);
                let ly = self.builtin(Builtin::LocalId(1), span);
                let lz = self.builtin(Builtin::LocalId(2), span);
                let y_stride = self.scaled(ly, x, span);
                let z_stride = self.scaled(lz, x * y, span);
                let s = self.add(lx, y_stride, span);
                self.add(s, z_stride, span)
            }
            (Builtin::LocalId(a), Some(gs)) if gs[a as usize] == 1 => self.int(Type::U32, 0, span),
            _ => self.emit(Op::Builtin(b), Type::U32, span),
        }
    }

    // ----- functions -----

    fn call_frame(&mut self, fun: &'m naga::Function, info: &'m FunctionInfo, args: Vec<Val>, return_to: Option<(BlockId, Vec<Var>)>, site: Option<u32>) {
        self.frames.push(Frame { fun, info, args, values: FxHashMap::default(), locals: Vec::new(), return_to, targets: Vec::new(), site });
        for (h, local) in fun.local_variables.iter() {
            let span = span_of(self.cx.map, fun.local_variables.get_span(h)).unwrap_or(self.stmt_span);
            // naga's own variables (the value of a short-circuit `a && b`)
            // are named by the expression they hold.
            let range = fun.local_variables.get_span(h).to_range();
            let text = range.and_then(|r| self.cx.text.get(r)).map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "));
            let name = local.name.clone().or(text.filter(|t| !t.is_empty() && t.len() <= 60)).unwrap_or_else(|| "var".into());
            let place = self.variable(&name, local.ty, span);
            self.initialize(&place, local.ty, local.init.map(Init::Local), span);
            self.frame_mut().locals.push(place);
        }
    }

    fn call(&mut self, function: Handle<naga::Function>, arguments: &[Handle<naga::Expression>], result: Option<Handle<naga::Expression>>, span: Span) {
        let fun = &self.cx.m.functions[function];
        let args = arguments.iter().map(|&a| self.eval(a)).collect();
        let ret_types = fun.result.as_ref().map(|r| self.cell_types(&self.cx.m.types[r.ty].inner)).unwrap_or_default();
        let name = fun.name.clone().unwrap_or_else(|| "function".into());
        let ret_vars: Vec<Var> = ret_types.iter().map(|&t| self.ssa.new_var(t, &name)).collect();
        let parent = self.frame().site;
        self.f.inline_sites.push(InlineSite { callee: name, call_span: span, parent });
        let site = Some(self.f.inline_sites.len() as u32 - 1);
        let after = self.new_block(span);
        self.call_frame(fun, &self.cx.info[function], args, Some((after, ret_vars.clone())), site);
        self.block(&fun.body);
        self.frames.pop();
        self.jump(after, span);
        self.enter(after);
        if let Some(r) = result {
            let vals = ret_vars.iter().map(|&v| self.ssa.read(&mut self.f, v, self.cur, span)).collect();
            self.frame_mut().values.insert(r, Val::Scalars(vals));
        }
    }

    // ----- statements -----

    fn block(&mut self, block: &'m naga::Block) {
        for (s, span) in block.span_iter() {
            self.stmt_span = span_of(self.cx.map, *span).unwrap_or(self.stmt_span);
            self.stmt_range = *span;
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &'m naga::Statement) {
        use naga::Statement as S;
        let span = self.stmt_span;
        match s {
            S::Emit(range) => {
                for h in range.clone() {
                    let v = self.compute(h);
                    self.frame_mut().values.insert(h, v);
                }
            }
            S::Block(b) => self.block(b),
            S::If { condition, accept, reject } => {
                let cond = self.scalars(*condition)[0];
                let cond_span = self.expr_span(*condition);
                let (then_to, else_to, join) = (self.new_block(span), self.new_block(span), self.new_block(span));
                let at = self.cur;
                self.terminate(Terminator::Branch { cond, then_to, else_to }, span, None);
                self.f.block_mut(at).cond_span = Some(cond_span);
                for (to, body) in [(then_to, accept), (else_to, reject)] {
                    self.enter(to);
                    self.block(body);
                    self.jump(join, span);
                }
                self.enter(join);
            }
            S::Switch { selector, cases } => self.switch(*selector, cases, span),
            S::Loop { body, continuing, break_if } => {
                let (header, next, exit) = (self.new_block(span), self.new_block(span), self.new_block(span));
                self.jump(header, span);
                self.cur = header;
                self.frame_mut().targets.push((exit, Some(next)));
                self.block(body);
                self.frame_mut().targets.pop();
                self.jump(next, span);
                self.enter(next);
                // `break` is not allowed in a continuing block; its own `break if` leaves.
                self.frame_mut().targets.push((exit, None));
                self.block(continuing);
                self.frame_mut().targets.pop();
                match break_if {
                    Some(c) => {
                        let cond = self.scalars(*c)[0];
                        let cond_span = self.expr_span(*c);
                        let at = self.cur;
                        self.terminate(Terminator::Branch { cond, then_to: exit, else_to: header }, span, None);
                        self.f.block_mut(at).cond_span = Some(cond_span);
                    }
                    None => self.jump(header, span),
                }
                self.ssa.seal(&mut self.f, header);
                self.enter(exit);
            }
            S::Break => {
                let to = self.frame().targets.last().map(|t| t.0).expect("break inside a loop or switch");
                self.terminate(Terminator::Jump(to), span, Some(ExitKind::Break));
            }
            S::Continue => {
                let to = self.frame().targets.iter().rev().find_map(|t| t.1).expect("continue inside a loop");
                self.terminate(Terminator::Jump(to), span, Some(ExitKind::Continue));
            }
            S::Return { value } => {
                let vals = value.map(|v| self.scalars(v)).unwrap_or_default();
                match self.frame().return_to.clone() {
                    Some((to, vars)) => {
                        for (var, x) in vars.iter().zip(vals) {
                            self.ssa.write(*var, self.cur, x);
                        }
                        self.terminate(Terminator::Jump(to), span, Some(ExitKind::Return));
                    }
                    None => self.terminate(Terminator::Return(None), span, Some(ExitKind::Return)),
                }
            }
            S::Kill => self.terminate(Terminator::Discard, span, Some(ExitKind::Discard)),
            S::ControlBarrier(flags) => {
                self.emit(Op::Barrier(barrier(*flags, true), None), Type::Void, self.call_statement_span());
            }
            S::MemoryBarrier(flags) => {
                self.emit(Op::Barrier(barrier(*flags, false), None), Type::Void, self.call_statement_span());
            }
            S::Store { pointer, value } => {
                let Pointee { types, atomic } = self.pointee(*pointer);
                let vals = self.scalars(*value);
                if let Some(ptr) = self.pointer(*pointer, span) {
                    self.write(&ptr, &types, atomic, &vals, span);
                }
            }
            S::Atomic { pointer, fun, value, result } => self.atomic(*pointer, fun, *value, *result, span),
            S::WorkGroupUniformLoad { pointer, result } => {
                // A workgroup barrier before and after the load makes every thread read the same value.
                let wg = barrier(naga::Barrier::WORK_GROUP, true);
                self.emit(Op::Barrier(wg, None), Type::Void, span);
                let Pointee { types, atomic } = self.pointee(*pointer);
                let vals = match self.pointer(*pointer, span) {
                    Some(ptr) => self.read(&ptr, &types, atomic, span),
                    None => Vec::new(),
                };
                self.emit(Op::Barrier(wg, None), Type::Void, span);
                self.frame_mut().values.insert(*result, Val::Scalars(vals));
            }
            S::Call { function, arguments, result } => self.call(*function, arguments, *result, span),
            S::SubgroupCollectiveOperation { op, collective_op, argument, result } => {
                let wave = subgroup_op(*op, *collective_op);
                let args = self.scalars(*argument);
                let inclusive = (*collective_op == naga::CollectiveOperation::InclusiveScan).then(|| wave.inclusive_step()).flatten();
                let vals = args
                    .iter()
                    .map(|&a| {
                        let ty = self.f.inst(a).ty;
                        let exclusive = self.emit(Op::Wave(wave, vec![a]), ty, span);
                        match inclusive {
                            Some(step) => self.emit(Op::Binary(step, exclusive, a), ty, span),
                            None => exclusive,
                        }
                    })
                    .collect();
                self.frame_mut().values.insert(*result, Val::Scalars(vals));
            }
            S::SubgroupGather { mode, argument, result } => self.gather(mode, *argument, *result, span),
            other => {
                let what = statement_name(other);
                let result = statement_result(other);
                let types = result.map(|r| self.result_types(r)).unwrap_or_default();
                let v = self.unmodelled(&what, Vec::new(), &types, span);
                if let Some(r) = result {
                    self.frame_mut().values.insert(r, v);
                }
            }
        }
    }

    fn switch(&mut self, selector: Handle<naga::Expression>, cases: &'m [naga::SwitchCase], span: Span) {
        let value = self.scalars(selector)[0];
        let exit = self.new_block(span);
        let bodies: Vec<BlockId> = cases.iter().map(|_| self.new_block(span)).collect();
        let mut table = Vec::new();
        let mut default = exit;
        for (case, &b) in cases.iter().zip(&bodies) {
            match case.value {
                naga::SwitchValue::I32(v) => table.push((v as i64 as u64, b)),
                naga::SwitchValue::U32(v) => table.push((v as u64, b)),
                naga::SwitchValue::Default => default = b,
            }
        }
        let at = self.cur;
        self.terminate(Terminator::Switch { value, cases: table, default }, span, None);
        self.f.block_mut(at).cond_span = Some(self.expr_span(selector));
        self.frame_mut().targets.push((exit, None));
        for (i, case) in cases.iter().enumerate() {
            self.enter(bodies[i]);
            self.block(&case.body);
            let next = if case.fall_through { bodies.get(i + 1).copied().unwrap_or(exit) } else { exit };
            self.jump(next, span);
        }
        self.frame_mut().targets.pop();
        self.enter(exit);
    }

    fn atomic(
        &mut self,
        pointer: Handle<naga::Expression>,
        fun: &naga::AtomicFunction,
        value: Handle<naga::Expression>,
        result: Option<Handle<naga::Expression>>,
        span: Span,
    ) {
        use naga::AtomicFunction as F;
        let v = self.scalars(value)[0];
        let ty = self.f.inst(v).ty;
        let (op, operands, compare) = match fun {
            F::Add => (AtomicOp::Add, vec![v], None),
            F::Subtract => (AtomicOp::Sub, vec![v], None),
            F::And => (AtomicOp::And, vec![v], None),
            F::ExclusiveOr => (AtomicOp::Xor, vec![v], None),
            F::InclusiveOr => (AtomicOp::Or, vec![v], None),
            F::Min => (AtomicOp::Min, vec![v], None),
            F::Max => (AtomicOp::Max, vec![v], None),
            F::Exchange { compare: None } => (AtomicOp::Exchange, vec![v], None),
            F::Exchange { compare: Some(c) } => {
                let c = self.scalars(*c)[0];
                (AtomicOp::CompareExchange, vec![c, v], Some(c))
            }
        };
        let Some(Ptr { place: Place::Mem { space, root }, offset }) = self.pointer(pointer, span) else {
            let v = self.unmodelled("an atomic on a function variable", vec![v], &[ty, Type::Bool], span);
            if let Some(r) = result {
                self.frame_mut().values.insert(r, v);
            }
            return;
        };
        let old = self.emit(Op::Atomic(op, MemRef { space, root, index: offset }, operands), ty, span);
        let mut vals = vec![old];
        // `atomicCompareExchangeWeak` also returns whether it exchanged.
        if let Some(c) = compare {
            vals.push(self.emit(Op::Cmp(CmpOp::Eq, old, c), Type::Bool, span));
        }
        if let Some(r) = result {
            self.frame_mut().values.insert(r, Val::Scalars(vals));
        }
    }

    fn gather(&mut self, mode: &naga::GatherMode, argument: Handle<naga::Expression>, result: Handle<naga::Expression>, span: Span) {
        use naga::GatherMode as G;
        let (op, lane) = match mode {
            G::QuadSwap(_) => {
                let types = self.result_types(result);
                let v = self.unmodelled("`quadSwap`", Vec::new(), &types, span);
                self.frame_mut().values.insert(result, v);
                return;
            }
            G::BroadcastFirst => (WaveOp::ReadFirst, None),
            G::Broadcast(l) | G::QuadBroadcast(l) => (WaveOp::ReadLane, Some(*l)),
            G::Shuffle(l) => (WaveOp::Shuffle, Some(*l)),
            G::ShuffleDown(l) => (WaveOp::ShuffleDown, Some(*l)),
            G::ShuffleUp(l) => (WaveOp::ShuffleUp, Some(*l)),
            G::ShuffleXor(l) => (WaveOp::ShuffleXor, Some(*l)),
        };
        let lane = lane.map(|l| self.scalars(l)[0]);
        let vals = self
            .scalars(argument)
            .into_iter()
            .map(|a| {
                let args = std::iter::once(a).chain(lane).collect();
                self.emit(Op::Wave(op, args), self.f.inst(a).ty, span)
            })
            .collect();
        self.frame_mut().values.insert(result, Val::Scalars(vals));
    }

    // ----- memory -----

    fn pointer(&mut self, h: Handle<naga::Expression>, span: Span) -> Option<Ptr> {
        match self.eval(h) {
            Val::Ptr(p) => Some(p),
            Val::Scalars(_) => {
                self.unmodelled("a pointer to a texture or sampler", Vec::new(), &[], span);
                None
            }
        }
    }

    fn read(&mut self, ptr: &Ptr, types: &[Type], atomic: bool, span: Span) -> Vec<Value> {
        let mut out = Vec::with_capacity(types.len());
        for (i, &ty) in types.iter().enumerate() {
            let k = self.int(Type::U32, i as i64, span);
            let offset = self.add(ptr.offset, k, span);
            out.push(match &ptr.place {
                Place::Mem { space, root } => {
                    let m = MemRef { space: *space, root: *root, index: offset };
                    if atomic {
                        self.emit(Op::Atomic(AtomicOp::Load, m, Vec::new()), ty, span)
                    } else {
                        self.emit(Op::Load(m), ty, span)
                    }
                }
                Place::Vars(vars) => self.read_var(vars, offset, span),
            });
        }
        out
    }

    /// A variable's cell at `offset`; a select over the cells when the offset is not constant.
    fn read_var(&mut self, vars: &[Var], offset: Value, span: Span) -> Value {
        if let Some(k) = self.f.as_int(offset) {
            return self.ssa.read(&mut self.f, vars[k as usize], self.cur, span);
        }
        let mut acc = self.ssa.read(&mut self.f, vars[0], self.cur, span);
        for (k, &var) in vars.iter().enumerate().skip(1) {
            let here = self.ssa.read(&mut self.f, var, self.cur, span);
            let kv = self.int(Type::U32, k as i64, span);
            let hit = self.emit(Op::Cmp(CmpOp::Eq, offset, kv), Type::Bool, span);
            acc = self.emit(Op::Select(hit, here, acc), self.ssa.var_type(var), span);
        }
        acc
    }

    fn write(&mut self, ptr: &Ptr, types: &[Type], atomic: bool, vals: &[Value], span: Span) {
        for (i, (&ty, &v)) in types.iter().zip(vals).enumerate() {
            let k = self.int(Type::U32, i as i64, span);
            let offset = self.add(ptr.offset, k, span);
            match &ptr.place {
                Place::Mem { space, root } => {
                    let m = MemRef { space: *space, root: *root, index: offset };
                    if atomic {
                        self.emit(Op::Atomic(AtomicOp::Exchange, m, vec![v]), ty, span);
                    } else {
                        self.emit(Op::Store(m, v), Type::Void, span);
                    }
                }
                Place::Vars(vars) => match self.f.as_int(offset) {
                    Some(k) => self.ssa.write(vars[k as usize], self.cur, v),
                    None => {
                        for (k, &var) in vars.iter().enumerate() {
                            let old = self.ssa.read(&mut self.f, var, self.cur, span);
                            let kv = self.int(Type::U32, k as i64, span);
                            let hit = self.emit(Op::Cmp(CmpOp::Eq, offset, kv), Type::Bool, span);
                            let new = self.emit(Op::Select(hit, v, old), self.ssa.var_type(var), span);
                            self.ssa.write(var, self.cur, new);
                        }
                    }
                },
            }
        }
    }

    // ----- expressions -----

    fn scalars(&mut self, h: Handle<naga::Expression>) -> Vec<Value> {
        match self.eval(h) {
            Val::Scalars(v) => v,
            Val::Ptr(_) => Vec::new(),
        }
    }

    /// An expression's value: the one its `Emit` (or its statement) computed,
    /// or, for expressions naga never emits (constants, arguments, variables),
    /// computed here at the use.
    fn eval(&mut self, h: Handle<naga::Expression>) -> Val {
        match self.frame().values.get(&h) {
            Some(v) => v.clone(),
            None => self.compute(h),
        }
    }

    fn compute(&mut self, h: Handle<naga::Expression>) -> Val {
        use naga::Expression as E;
        let fun = self.frame().fun;
        let span = self.expr_span(h);
        let m = self.cx.m;
        let scalars = match &fun.expressions[h] {
            E::Literal(lit) => vec![self.literal(*lit, span)],
            E::Constant(c) => self.const_scalars(m.constants[*c].init, span),
            E::Override(o) => vec![self.override_value(*o, span)],
            E::ZeroValue(ty) => {
                let types = self.cell_types(&m.types[*ty].inner);
                types.iter().map(|&t| self.zero(t, span)).collect()
            }
            E::Compose { components, .. } => components.iter().flat_map(|&c| self.scalars(c)).collect(),
            E::Splat { size, value } => {
                let v = self.scalars(*value)[0];
                vec![v; *size as usize]
            }
            E::Swizzle { size, vector, pattern } => {
                let v = self.scalars(*vector);
                pattern[..*size as usize].iter().map(|&c| v[c as usize]).collect()
            }
            E::Access { base, index } => return self.access(h, *base, *index, span),
            E::AccessIndex { base, index } => return self.access_index(h, *base, *index, span),
            E::FunctionArgument(i) => return self.frame().args[*i as usize].clone(),
            E::GlobalVariable(g) => {
                return match self.cx.globals[g.index()] {
                    GlobalSlot::Memory(id, space) => {
                        let offset = self.int(Type::U32, 0, span);
                        Val::Ptr(Ptr { place: Place::Mem { space, root: Root::Global(id) }, offset })
                    }
                    GlobalSlot::Private => {
                        let offset = self.int(Type::U32, 0, span);
                        Val::Ptr(Ptr { place: self.private[g].clone(), offset })
                    }
                    GlobalSlot::Handle => Val::Scalars(Vec::new()),
                };
            }
            E::LocalVariable(l) => {
                let offset = self.int(Type::U32, 0, span);
                return Val::Ptr(Ptr { place: self.frame().locals[l.index()].clone(), offset });
            }
            E::Load { pointer } => {
                let Pointee { types, atomic } = self.pointee(*pointer);
                match self.pointer(*pointer, span) {
                    Some(ptr) => self.read(&ptr, &types, atomic, span),
                    None => Vec::new(),
                }
            }
            E::Unary { op, expr } => {
                let vals = self.scalars(*expr);
                vals.into_iter()
                    .map(|v| {
                        let ty = self.f.inst(v).ty;
                        let op = match op {
                            naga::UnaryOperator::Negate => UnOp::Neg,
                            naga::UnaryOperator::BitwiseNot if ty != Type::Bool => UnOp::Not,
                            _ => UnOp::LNot,
                        };
                        self.emit(Op::Unary(op, v), ty, span)
                    })
                    .collect()
            }
            E::Binary { op, left, right } => return self.binary(h, *op, *left, *right, span),
            E::Select { condition, accept, reject } => {
                let (c, a, b) = (self.scalars(*condition), self.scalars(*accept), self.scalars(*reject));
                (0..a.len()).map(|i| self.emit(Op::Select(c[i.min(c.len() - 1)], a[i], b[i]), self.f.inst(a[i]).ty, span)).collect()
            }
            E::Relational { fun: rel @ (naga::RelationalFunction::All | naga::RelationalFunction::Any), argument } => {
                let op = if *rel == naga::RelationalFunction::All { BinOp::LAnd } else { BinOp::LOr };
                let vals = self.scalars(*argument);
                let mut acc = vals[0];
                for &v in &vals[1..] {
                    acc = self.emit(Op::Binary(op, acc, v), Type::Bool, span);
                }
                vec![acc]
            }
            E::Math { fun: math, arg, arg1, arg2, arg3 } => {
                let args: Vec<Vec<Value>> = [Some(*arg), *arg1, *arg2, *arg3].into_iter().flatten().map(|a| self.scalars(a)).collect();
                return self.math(*math, args, &self.result_types(h), span);
            }
            E::As { expr, convert, .. } => {
                let vals = self.scalars(*expr);
                let types = self.result_types(h);
                let op = |v| if convert.is_some() { Op::Convert(v) } else { Op::Math(MathFn::Bitcast, vec![v]) };
                vals.iter().zip(types).map(|(&v, t)| self.emit(op(v), t, span)).collect()
            }
            E::ArrayLength(pointer) => {
                let name = match &fun.expressions[*pointer] {
                    E::AccessIndex { base, .. } | E::Access { base, .. } => expression_name(m, fun, *base),
                    _ => expression_name(m, fun, *pointer),
                };
                vec![self.uniform_param(format!("arrayLength(&{name})"), span)]
            }
            // Results of statements that have not run: code lockstep never reaches.
            E::CallResult(_)
            | E::AtomicResult { .. }
            | E::WorkGroupUniformLoadResult { .. }
            | E::SubgroupOperationResult { .. }
            | E::SubgroupBallotResult
            | E::RayQueryProceedResult => self.result_types(h).iter().map(|&t| self.emit(Op::Undef, t, span)).collect(),
            other => {
                let what = expression_kind(other);
                return self.unmodelled(&what, Vec::new(), &self.result_types(h), span);
            }
        };
        Val::Scalars(scalars)
    }

    fn result_types(&self, h: Handle<naga::Expression>) -> Vec<Type> {
        self.cell_types(self.expr_type(h))
    }

    fn literal(&mut self, lit: naga::Literal, span: Span) -> Value {
        let (ty, c) = literal_const(lit);
        self.emit(Op::Const(c), ty, span)
    }

    /// An override's value: the group's extent where the workgroup size
    /// names it, otherwise a load of its constant, whose value is open.
    fn override_value(&mut self, o: Handle<naga::Override>, span: Span) -> Value {
        if let Some(axis) = self.extent_overrides.iter().position(|&x| x == Some(o)) {
            return self.builtin(Builtin::GroupSize(axis as u8), span);
        }
        let (global, ty) = self.cx.overrides[o.index()];
        let zero = self.int(Type::U32, 0, span);
        self.emit(Op::Load(MemRef { space: MemSpace::Constant, root: Root::Global(global), index: zero }), ty, span)
    }

    /// The cells of a module-scope constant expression.
    fn const_scalars(&mut self, h: Handle<naga::Expression>, span: Span) -> Vec<Value> {
        use naga::Expression as E;
        let m = self.cx.m;
        match &m.global_expressions[h] {
            E::Literal(lit) => vec![self.literal(*lit, span)],
            E::Constant(c) => self.const_scalars(m.constants[*c].init, span),
            E::ZeroValue(ty) => {
                let types = self.cell_types(&m.types[*ty].inner);
                types.iter().map(|&t| self.zero(t, span)).collect()
            }
            E::Compose { components, .. } => components.iter().flat_map(|&c| self.const_scalars(c, span)).collect(),
            E::Splat { size, value } => {
                let v = self.const_scalars(*value, span)[0];
                vec![v; *size as usize]
            }
            E::Override(o) => vec![self.override_value(*o, span)],
            other => {
                let what = expression_kind(other);
                let Val::Scalars(v) = self.unmodelled(&what, Vec::new(), &[Type::U32], span) else { unreachable!("scalars") };
                v
            }
        }
    }

    /// `base[index]` with a run-time index.
    fn access(&mut self, h: Handle<naga::Expression>, base: Handle<naga::Expression>, index: Handle<naga::Expression>, span: Span) -> Val {
        let i = self.scalars(index)[0];
        match self.eval(base) {
            Val::Ptr(p) => {
                let stride = self.pointee(h).types.len().max(1) as u32;
                let step = self.scaled(i, stride, span);
                let offset = self.add(p.offset, step, span);
                Val::Ptr(Ptr { place: p.place, offset })
            }
            Val::Scalars(vals) => {
                let per = cells(self.cx.m, self.expr_type(h)).max(1) as usize;
                let i = self.scaled(i, 1, span);
                let mut out: Vec<Value> = vals[..per].to_vec();
                for (k, chunk) in vals.chunks(per).enumerate().skip(1) {
                    let kv = self.int(Type::U32, k as i64, span);
                    let hit = self.emit(Op::Cmp(CmpOp::Eq, i, kv), Type::Bool, span);
                    for (o, &c) in out.iter_mut().zip(chunk) {
                        *o = self.emit(Op::Select(hit, c, *o), self.f.inst(c).ty, span);
                    }
                }
                Val::Scalars(out)
            }
        }
    }

    /// `base.member` or `base[k]` with a constant `k`.
    fn access_index(&mut self, h: Handle<naga::Expression>, base: Handle<naga::Expression>, index: u32, span: Span) -> Val {
        let m = self.cx.m;
        let base_ty = match self.expr_type(base) {
            TypeInner::Pointer { base, .. } => &m.types[*base].inner,
            t => t,
        };
        // A value pointer points to a vector, whose components are one cell each.
        let start = match base_ty {
            TypeInner::Struct { members, .. } => members[..index as usize].iter().map(|mb| cells(m, &m.types[mb.ty].inner)).sum(),
            TypeInner::Array { base, .. } => index * cells(m, &m.types[*base].inner),
            TypeInner::Matrix { rows, .. } => index * *rows as u32,
            _ => index,
        };
        match self.eval(base) {
            Val::Ptr(p) => {
                let k = self.int(Type::U32, start as i64, span);
                let offset = self.add(p.offset, k, span);
                Val::Ptr(Ptr { place: p.place, offset })
            }
            Val::Scalars(vals) => {
                let n = cells(m, self.expr_type(h)) as usize;
                Val::Scalars(vals[start as usize..start as usize + n].to_vec())
            }
        }
    }

    fn binary(&mut self, h: Handle<naga::Expression>, op: naga::BinaryOperator, left: Handle<naga::Expression>, right: Handle<naga::Expression>, span: Span) -> Val {
        use naga::BinaryOperator as B;
        let is_matrix = |t: &TypeInner| matches!(t, TypeInner::Matrix { .. });
        if op == B::Multiply && (is_matrix(self.expr_type(left)) || is_matrix(self.expr_type(right))) {
            let operands = [left, right].iter().flat_map(|&x| self.scalars(x)).collect();
            return self.unmodelled("matrix multiplication", operands, &self.cell_types(self.expr_type(h)), span);
        }
        let (a, b) = (self.scalars(left), self.scalars(right));
        let n = a.len().max(b.len());
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let (x, y) = (a[i.min(a.len() - 1)], b[i.min(b.len() - 1)]);
            let ty = self.f.inst(x).ty;
            let cmp = |c| Some(Op::Cmp(c, x, y));
            let compare = match op {
                B::Equal => cmp(CmpOp::Eq),
                B::NotEqual => cmp(CmpOp::Ne),
                B::Less => cmp(CmpOp::Lt),
                B::LessEqual => cmp(CmpOp::Le),
                B::Greater => cmp(CmpOp::Gt),
                B::GreaterEqual => cmp(CmpOp::Ge),
                B::ExclusiveOr if ty == Type::Bool => cmp(CmpOp::Ne),
                _ => None,
            };
            if let Some(compare) = compare {
                out.push(self.emit(compare, Type::Bool, span));
                continue;
            }
            let bin = match op {
                B::Add => BinOp::Add,
                B::Subtract => BinOp::Sub,
                B::Multiply => BinOp::Mul,
                B::Divide => BinOp::Div,
                B::Modulo => BinOp::Rem,
                B::And if ty == Type::Bool => BinOp::LAnd,
                B::InclusiveOr if ty == Type::Bool => BinOp::LOr,
                B::And => BinOp::And,
                B::InclusiveOr => BinOp::Or,
                B::ExclusiveOr => BinOp::Xor,
                B::LogicalAnd => BinOp::LAnd,
                B::LogicalOr => BinOp::LOr,
                B::ShiftLeft => BinOp::Shl,
                _ => BinOp::Shr,
            };
            // Shift amounts are u32 in WGSL; the IR wants both operands of one type.
            let y = if self.f.inst(y).ty != ty { self.emit(Op::Convert(y), ty, span) } else { y };
            out.push(self.emit(Op::Binary(bin, x, y), ty, span));
        }
        Val::Scalars(out)
    }

    fn math(&mut self, fun: naga::MathFunction, args: Vec<Vec<Value>>, result: &[Type], span: Span) -> Val {
        use naga::MathFunction as M;
        let elementwise = match fun {
            M::Abs => Some(MathFn::Abs),
            M::Min => Some(MathFn::Min),
            M::Max => Some(MathFn::Max),
            M::Clamp => Some(MathFn::Clamp),
            M::Saturate => Some(MathFn::Saturate),
            M::Cos => Some(MathFn::Cos),
            M::Sin => Some(MathFn::Sin),
            M::Tan => Some(MathFn::Tan),
            M::Tanh => Some(MathFn::Tanh),
            M::Sinh => Some(MathFn::Sinh),
            M::Cosh => Some(MathFn::Cosh),
            M::Asin => Some(MathFn::Asin),
            M::Acos => Some(MathFn::Acos),
            M::Atan => Some(MathFn::Atan),
            M::Atan2 => Some(MathFn::Atan2),
            M::Ceil => Some(MathFn::Ceil),
            M::Floor => Some(MathFn::Floor),
            M::Round => Some(MathFn::Round),
            M::Fract => Some(MathFn::Frac),
            M::Trunc => Some(MathFn::Trunc),
            M::Exp => Some(MathFn::Exp),
            M::Exp2 => Some(MathFn::Exp2),
            M::Log => Some(MathFn::Log),
            M::Log2 => Some(MathFn::Log2),
            M::Pow => Some(MathFn::Pow),
            M::Sign => Some(MathFn::Sign),
            M::Fma => Some(MathFn::Fma),
            M::Mix => Some(MathFn::Lerp),
            M::Step => Some(MathFn::Step),
            M::Sqrt => Some(MathFn::Sqrt),
            M::InverseSqrt => Some(MathFn::Rsqrt),
            M::CountOneBits => Some(MathFn::PopCount),
            M::CountLeadingZeros => Some(MathFn::CountLeadingZeros),
            M::ReverseBits => Some(MathFn::ReverseBits),
            M::FirstLeadingBit => Some(MathFn::FirstBitHigh),
            M::FirstTrailingBit => Some(MathFn::FirstBitLow),
            _ => None,
        };
        if let Some(mf) = elementwise {
            let out = (0..result.len())
                .map(|i| {
                    let operands = args.iter().map(|a| a[i.min(a.len() - 1)]).collect();
                    self.emit(Op::Math(mf, operands), result[i], span)
                })
                .collect();
            return Val::Scalars(out);
        }
        if fun == M::Dot {
            let ty = result[0];
            let mut acc: Option<Value> = None;
            for (&x, &y) in args[0].iter().zip(&args[1]) {
                let p = self.emit(Op::Binary(BinOp::Mul, x, y), ty, span);
                acc = Some(match acc {
                    Some(a) => self.emit(Op::Binary(BinOp::Add, a, p), ty, span),
                    None => p,
                });
            }
            return Val::Scalars(acc.into_iter().collect());
        }
        if let (M::Dot4I8Packed | M::Dot4U8Packed, [a, b]) = (fun, args.as_slice()) {
            if let (Some(&a), Some(&b)) = (a.first(), b.first()) {
                let dot = crate::packed_dot::packed_dot(self, a, b, fun == M::Dot4I8Packed, None, span);
                return Val::Scalars(vec![dot]);
            }
        }
        if let Some(packed) = self.pack(fun, &args, span) {
            return Val::Scalars(packed);
        }
        let operands = args.into_iter().flatten().collect();
        self.unmodelled(&format!("the WGSL function `{}`", format!("{fun:?}").to_ascii_lowercase()), operands, result, span)
    }

    /// The packing built-ins: two halves or four bytes in one `u32`, and back.
    fn pack(&mut self, fun: naga::MathFunction, args: &[Vec<Value>], span: Span) -> Option<Vec<Value>> {
        use naga::MathFunction as M;
        let arg = args.first()?;
        let u = Type::U32;
        let shifted = |l: &mut Self, x: Value, bits: i64, op: BinOp, ty: Type| {
            if bits == 0 {
                return x;
            }
            let k = l.int(ty, bits, span);
            l.emit(Op::Binary(op, x, k), ty, span)
        };
        let join = |l: &mut Self, parts: Vec<Value>, width: i64| {
            let mut joined: Option<Value> = None;
            for (i, p) in parts.into_iter().enumerate() {
                let p = shifted(l, p, i as i64 * width, BinOp::Shl, u);
                joined = Some(match joined {
                    Some(j) => l.emit(Op::Binary(BinOp::Or, j, p), u, span),
                    None => p,
                });
            }
            joined
        };
        match fun {
            M::Unpack2x16float => {
                let x = *arg.first()?;
                Some((0..2).map(|i| {
                    // F16ToF32 reads the operand's low 16 bits.
                    let h = shifted(self, x, 16 * i, BinOp::Shr, u);
                    self.emit(Op::Math(MathFn::F16ToF32, vec![h]), Type::F32, span)
                }).collect())
            }
            M::Pack2x16float if arg.len() == 2 => {
                let halves = arg.iter().map(|&c| self.emit(Op::Math(MathFn::F32ToF16, vec![c]), u, span)).collect();
                Some(vec![join(self, halves, 16)?])
            }
            M::Pack4xI8 | M::Pack4xU8 | M::Pack4xI8Clamp | M::Pack4xU8Clamp if arg.len() == 4 => {
                let (lo, hi) = match fun {
                    M::Pack4xI8Clamp => (Some(-128), 127),
                    M::Pack4xU8Clamp => (Some(0), 255),
                    _ => (None, 0),
                };
                let bytes = arg
                    .iter()
                    .map(|&c| {
                        let ty = self.f.inst(c).ty;
                        let c = match lo {
                            Some(lo) => {
                                let (lo, hi) = (self.int(ty, lo, span), self.int(ty, hi, span));
                                self.emit(Op::Math(MathFn::Clamp, vec![c, lo, hi]), ty, span)
                            }
                            None => c,
                        };
                        let c = if ty == u { c } else { self.emit(Op::Convert(c), u, span) };
                        let mask = self.int(u, 0xff, span);
                        self.emit(Op::Binary(BinOp::And, c, mask), u, span)
                    })
                    .collect();
                Some(vec![join(self, bytes, 8)?])
            }
            M::Unpack4xU8 => {
                let x = *arg.first()?;
                Some((0..4).map(|i| {
                    let b = shifted(self, x, 8 * i, BinOp::Shr, u);
                    let mask = self.int(u, 0xff, span);
                    self.emit(Op::Binary(BinOp::And, b, mask), u, span)
                }).collect())
            }
            M::Unpack4xI8 => {
                let x = *arg.first()?;
                let signed = self.emit(Op::Convert(x), Type::I32, span);
                // Each byte moved to the top, then down: the signed shift extends its sign.
                Some((0..4).map(|i| {
                    let top = shifted(self, signed, 24 - 8 * i, BinOp::Shl, Type::I32);
                    shifted(self, top, 24, BinOp::Shr, Type::I32)
                }).collect())
            }
            _ => None,
        }
    }
}

/// How a variable is initialized: a module-scope or a function-scope constant expression.
#[derive(Clone, Copy)]
enum Init {
    Global(Handle<naga::Expression>),
    Local(Handle<naga::Expression>),
}

fn contains_array_or_matrix(m: &naga::Module, inner: &TypeInner) -> bool {
    match inner {
        TypeInner::Array { .. } | TypeInner::Matrix { .. } => true,
        TypeInner::Struct { members, .. } => members.iter().any(|mb| contains_array_or_matrix(m, &m.types[mb.ty].inner)),
        _ => false,
    }
}

/// What a WGSL barrier builtin orders: `workgroupBarrier` the workgroup's
/// memory, `storageBarrier` and `textureBarrier` device memory only, each
/// among the threads of one workgroup.
fn barrier(flags: naga::Barrier, control: bool) -> Barrier {
    let wave_only = flags == naga::Barrier::SUB_GROUP;
    let mut spaces = Spaces::NONE;
    if flags.contains(naga::Barrier::WORK_GROUP) {
        spaces = spaces.union(Spaces::SHARED);
    }
    if flags.intersects(naga::Barrier::STORAGE | naga::Barrier::TEXTURE) {
        spaces = spaces.union(Spaces::DEVICE);
    }
    if wave_only {
        spaces = Spaces::ALL;
    }
    let scope = if wave_only { Scope::Wave } else { Scope::Group };
    Barrier { exec: if control { scope } else { Scope::None }, mem: scope, spaces, reduce: None }
}

fn subgroup_op(op: naga::SubgroupOperation, collective: naga::CollectiveOperation) -> WaveOp {
    use naga::SubgroupOperation as S;
    match (collective, op) {
        (naga::CollectiveOperation::Reduce, S::All) => WaveOp::AllTrue,
        (naga::CollectiveOperation::Reduce, S::Any) => WaveOp::AnyTrue,
        (naga::CollectiveOperation::Reduce, S::Add) => WaveOp::Sum,
        (naga::CollectiveOperation::Reduce, S::Mul) => WaveOp::Product,
        (naga::CollectiveOperation::Reduce, S::Min) => WaveOp::Min,
        (naga::CollectiveOperation::Reduce, S::Max) => WaveOp::Max,
        (naga::CollectiveOperation::Reduce, S::And) => WaveOp::BitAnd,
        (naga::CollectiveOperation::Reduce, S::Or) => WaveOp::BitOr,
        (naga::CollectiveOperation::Reduce, S::Xor) => WaveOp::BitXor,
        (_, S::Mul) => WaveOp::PrefixProduct,
        _ => WaveOp::PrefixSum,
    }
}

/// The name of the global an expression points into, for messages.
fn expression_name(m: &naga::Module, fun: &naga::Function, h: Handle<naga::Expression>) -> String {
    match &fun.expressions[h] {
        naga::Expression::GlobalVariable(g) => m.global_variables[*g].name.clone().unwrap_or_default(),
        _ => "buffer".into(),
    }
}

/// A naga expression or statement lockstep does not model, as WGSL names it.
fn wgsl_name(kind: &str) -> String {
    let name = match kind {
        "ImageStore" => "`textureStore`",
        "ImageLoad" => "`textureLoad`",
        "ImageSample" => "`textureSample`",
        "ImageQuery" => "a texture query (`textureDimensions`, …)",
        "ImageAtomic" => "a texture atomic",
        "Derivative" => "a derivative (`dpdx`, …)",
        "SubgroupBallot" => "`subgroupBallot`",
        "RayQuery" | "RayQueryGetIntersection" | "RayQueryVertexPositions" => "a ray query",
        other => return format!("the WGSL construct naga calls `{other}`"),
    };
    name.to_string()
}

fn expression_kind(e: &naga::Expression) -> String {
    let debug = format!("{e:?}");
    wgsl_name(debug.split(|c: char| !c.is_alphanumeric()).next().unwrap_or("expression"))
}

fn statement_name(s: &naga::Statement) -> String {
    let debug = format!("{s:?}");
    wgsl_name(debug.split(|c: char| !c.is_alphanumeric()).next().unwrap_or("statement"))
}

/// The expression a statement lockstep does not model defines, if any.
fn statement_result(s: &naga::Statement) -> Option<Handle<naga::Expression>> {
    use naga::Statement as S;
    match s {
        S::SubgroupBallot { result, .. } => Some(*result),
        S::RayQuery { fun: naga::RayQueryFunction::Proceed { result }, .. } => Some(*result),
        _ => None,
    }
}
