//! Function bodies: statements, control flow, declarations, and the
//! inlining of helper functions at their call sites.

use crate::dialect::Semantic;
use crate::module::{decl_words, entry_info, function_name, Ctx, GlobalBinding, MAX_NESTING};
use crate::srctype::SrcType;
use crate::ssa::{Ssa, Var};
use crate::template;
use lockstep_diag::{Diagnostic, Severity};
use lockstep_ir::{
    BinOp, BlockId, Builtin, CmpOp, Const, EntryInfo, ExitKind, Function, GlobalKind, InlineSite, Local as IrLocal, LocalId, MemRef,
    MemSpace, Op, Param, Root, Scope, Terminator, Type, Value,
};
use lockstep_source::Span;
use lockstep_syntax::{Node, NodeFields};
use rustc_hash::{FxHashMap, FxHashSet};

/// A typed value split into scalar components.
#[derive(Clone, Debug)]
pub struct RV {
    pub vals: Vec<Value>,
    pub ty: SrcType,
}

/// Something that can be assigned to.
#[derive(Clone, Debug)]
pub enum Place {
    /// SSA variables, one per scalar component.
    Vars { vars: Vec<Var>, ty: SrcType },
    /// Memory cells at `base + offsets[i]`.
    Mem { space: MemSpace, root: Root, base: Value, offsets: Offsets, ty: SrcType },
    /// Element `index` of a cooperative matrix held in `var`: lockstep holds
    /// the matrix as one unknown value, so a read is unknown and a write
    /// leaves the matrix unknown, both touching no memory.
    MatrixElement { var: Var, index: Value, ty: SrcType },
    /// The element of a register vector or matrix that a value computed at
    /// run time selects (`v[i]`, `m[i]`): element k is `vars[k * width..][..width]`;
    /// a read picks among them, a write updates the one `index` names. An
    /// index out of range is undefined behaviour in every dialect; lockstep
    /// then reads the first element and writes none.
    Component { vars: Vec<Var>, width: usize, index: Value, ty: SrcType },
    /// The `index`-th value of type `ty` packed in the bits of the scalar
    /// register variable `var`, from its low bits up (`q8[l]` with `q8 =
    /// (int8_t*)&q32`, as little-endian GPUs lay them out): a read extracts
    /// those bits, a write replaces them.
    Bits { var: Var, index: Value, ty: SrcType },
}

impl Place {
    /// The source type of what the place holds.
    pub fn ty(&self) -> &SrcType {
        match self {
            Place::Vars { ty, .. } | Place::Mem { ty, .. } | Place::Component { ty, .. } | Place::MatrixElement { ty, .. } | Place::Bits { ty, .. } => ty,
        }
    }
}

/// The cell offsets of a memory place. Most places cover cells `0..n` of
/// their type; those are kept as a count, so that naming a large array
/// allocates nothing.
#[derive(Clone, Debug)]
pub enum Offsets {
    /// `0..n`.
    Dense(u32),
    Listed(Vec<u32>),
}

impl Offsets {
    pub fn len(&self) -> usize {
        match self {
            Offsets::Dense(n) => *n as usize,
            Offsets::Listed(v) => v.len(),
        }
    }

    pub fn get(&self, i: usize) -> Option<u32> {
        match self {
            Offsets::Dense(n) => (i < *n as usize).then_some(i as u32),
            Offsets::Listed(v) => v.get(i).copied(),
        }
    }

    pub fn first(&self) -> Option<u32> {
        self.get(0)
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.len()).map(|i| self.get(i).expect("in range"))
    }
}

/// What a name in a function scope stands for.
#[derive(Clone, Debug)]
pub enum Binding {
    Place(Place),
    Sync(Scope, Option<u32>),
    /// A lambda stored in a local (`auto f = [&](float x) {…};`): the index
    /// of its definition in [`FnLowerer::lambdas`]; a call inlines it.
    Lambda(usize),
    /// A pointer parameter handed the address of a variable that lives in
    /// registers (`get_scale_min(j, q, &d, &m)`): `*p`, `p[0]` and `p->f`
    /// are that variable.
    PointsTo(Place),
    /// A pointer to the narrower values packed in the bits of a scalar held
    /// in registers (`int8_t* q8 = (int8_t*)&q32`): `p[i]` is the `i`-th
    /// `lane` of the variable's bits ([`Place::Bits`]).
    Lanes { var: Var, lane: Type },
}

struct LoopTargets {
    break_to: BlockId,
    continue_to: Option<BlockId>,
}

/// An inlined helper being lowered.
struct Frame<'t> {
    /// The definition inlined (overloads share a name, not a body).
    body: usize,
    /// The class whose static member function this is: its other members
    /// are called by their bare names.
    class: Option<Node<'t>>,
    return_to: BlockId,
    ret: Option<(Vec<Var>, SrcType)>,
    /// A lambda with no declared return type: `ret` takes the type of the
    /// first value it returns.
    deduces_return: bool,
    site: u32,
}

/// A captured device view: its extents, row-major. The first is read only
/// where the kernel asks for it (`v.extent`); the others linearize an index.
#[derive(Clone, Debug)]
pub struct DeviceView {
    pub extents: Vec<Option<Value>>,
}

pub struct FnLowerer<'c, 't> {
    pub cx: &'c mut Ctx<'t>,
    pub f: Function,
    pub ssa: Ssa,
    pub cur: BlockId,
    scopes: Vec<FxHashMap<String, Binding>>,
    /// Per scope, the names it binds to integer constants, with their values.
    scope_ints: Vec<FxHashMap<String, i64>>,
    /// Arrays whose lengths are not constants here (`float tmp[ncols][rows]`
    /// in a template whose arguments are unknown): each dimension's length
    /// as a value, outermost first, so that subscripts scale by the real
    /// extents rather than by a length lockstep does not know.
    pub runtime_dims: FxHashMap<Root, Vec<Value>>,
    /// `const`/`constexpr` integers and pointers to functions: the value each
    /// was declared with (read in a loop, the variable would be a phi still
    /// open, and `if constexpr` on it would not be decided).
    pub constant_values: FxHashMap<Var, Value>,
    /// The variables that hold a cooperative matrix (one unknown value each).
    pub matrix_vars: FxHashSet<Var>,
    /// Per scope, the type aliases it declares (`using tile_ab = tile<16, 8>;`)
    /// with the meaning each name had before, restored when it closes.
    type_aliases: Vec<Vec<(String, Option<SrcType>)>>,
    loops: Vec<LoopTargets>,
    frames: Vec<Frame<'t>>,
    pub depth: u32,
    pub group_size: Option<[u32; 3]>,
    /// The object of the member function about to be inlined.
    pub receiver: Option<Place>,
    /// The template arguments of the function about to be inlined, where
    /// they were read before the call (a function value's).
    pub explicit_template_args: Option<Vec<template::TemplateArg>>,
    /// The class definition and bound parameters of the static member
    /// function about to be inlined (`policy<M, T>::reduce`).
    pub class_scope: Option<(Node<'t>, template::Bindings)>,
    /// Captured device views (C++ AMP `array_view`), by name.
    pub views: FxHashMap<String, DeviceView>,
    /// A helper the kernel calls whose definition does not parse (its name
    /// and the call): the kernel is then not checked, as one that does not
    /// parse itself, rather than checked on a guess of what the helper does.
    pub unparsed_callee: Option<(String, Span)>,
    /// The lambdas stored in locals ([`Binding::Lambda`]).
    lambdas: Vec<Node<'t>>,
    /// Names used but never declared, already noted.
    pub unknown_names: FxHashSet<String>,
    /// Each invocation's own globals ([`GlobalBinding::PerThread`]), seen from every scope.
    per_thread: FxHashMap<String, Binding>,
    /// What lockstep knows of the memory behind pointer values ([`crate::view`]).
    pub(crate) pointer_views: crate::view::PointerViews,
    /// Loads that read a call's argument from memory before the callee's
    /// parameters were known: a reference parameter binds the place, and
    /// the load, read by nobody, is made no access ([`Self::unread`]).
    pub(crate) argument_reads: FxHashSet<Value>,
}

impl crate::packed_dot::Emit for FnLowerer<'_, '_> {
    fn emit_op(&mut self, op: Op, ty: Type, span: Span) -> Value {
        self.emit(op, ty, span)
    }
}

impl<'c, 't> FnLowerer<'c, 't> {
    /// Lowers a kernel definition (inlining every helper it calls).
    pub fn lower_kernel(cx: &'c mut Ctx<'t>, def: Node<'t>) -> Option<Function> {
        let info = entry_info(cx, def)?;
        Self::lower_entry(cx, def, info)
    }

    /// Lowers a device function as if a kernel nobody can see called it,
    /// with its pointer parameters pointing into any memory space.
    pub fn lower_with_unknown_caller(cx: &'c mut Ctx<'t>, def: Node<'t>) -> Option<Function> {
        let info = EntryInfo { wave_size: cx.d.wave_size.or(cx.options.wave_size), caller_unknown: true, ..EntryInfo::default() };
        Self::lower_entry(cx, def, info)
    }

    fn lower_entry(cx: &'c mut Ctx<'t>, def: Node<'t>, info: EntryInfo) -> Option<Function> {
        let name = function_name(cx, def)?;
        let mut l = FnLowerer::start(cx, name, info, def);
        l.entry_params(def);
        l.per_thread_globals();
        if let Some(body) = def.field(l.cx.fields.body) {
            l.stmt(body);
        }
        l.finish(def)
    }

    /// A lowerer for the entry point `def`, positioned in its entry block.
    pub(crate) fn start(cx: &'c mut Ctx<'t>, name: String, info: EntryInfo, def: Node<'t>) -> FnLowerer<'c, 't> {
        let span = cx.span(def);
        let mut f = Function::new(name, span);
        f.entry = Some(info.clone());
        let mut l = FnLowerer {
            cx,
            f,
            ssa: Ssa::default(),
            cur: BlockId(0),
            scopes: vec![FxHashMap::default()],
            scope_ints: vec![FxHashMap::default()],
            type_aliases: vec![Vec::new()],
            runtime_dims: FxHashMap::default(),
            constant_values: FxHashMap::default(),
            matrix_vars: FxHashSet::default(),
            loops: Vec::new(),
            frames: Vec::new(),
            depth: 0,
            group_size: info.group_size,
            receiver: None,
            explicit_template_args: None,
            class_scope: None,
            views: FxHashMap::default(),
            unparsed_callee: None,
            lambdas: Vec::new(),
            unknown_names: FxHashSet::default(),
            per_thread: FxHashMap::default(),
            pointer_views: Default::default(),
            argument_reads: FxHashSet::default(),
        };
        let entry = l.new_block(span);
        l.ssa.seal_entry(entry);
        l.cur = entry;
        l
    }

    /// The finished kernel, once its body is lowered; None when it is too large to analyse.
    pub(crate) fn finish(mut self, def: Node<'t>) -> Option<Function> {
        let span = self.cx.span(def);
        let l = &mut self;
        if l.ssa.too_large {
            let name = l.f.name.clone();
            let d = Diagnostic::new("kernel-skipped", Severity::Warning, l.cx.span(def), format!("kernel `{name}` was not checked: it is too large to analyse"))
                .with_primary_label("skipped")
                .with_note(format!(
                    "with its helpers inlined it has over {} operations; lockstep reports nothing for it rather than a partial result",
                    crate::ssa::MAX_KERNEL_OPERATIONS
                ));
            l.cx.diags.push(d);
            return None;
        }
        if let Some((callee, call)) = l.unparsed_callee.take() {
            let name = l.f.name.clone();
            let d = Diagnostic::new("parse-error", Severity::Warning, span, format!("kernel `{name}` was not checked"))
                .with_primary_label(format!("calls `{callee}`, which does not parse"))
                .with_label(call, "called here")
                .with_note("what the helper does is a guess where its syntax could not be read; fix the syntax error (or define the macros it needs) to check this kernel");
            l.cx.diags.push(d);
            return None;
        }
        let end = l.span_end(def);
        l.terminate(Terminator::Return(None), end, None);
        l.ssa.seal_all(&mut l.f);
        l.check_assumed_cells();
        l.note_mixed_views();
        let mut f = std::mem::replace(&mut l.f, Function::new("", span));
        l.ssa.finish(&mut f);
        f.remove_unreachable_blocks();
        // Paths from code after a `return` are gone: the phis they fed may
        // now join one value (a parameter read on both sides of an inlined
        // helper's early returns is that parameter, not a divergent join; a
        // pointer read in a loop is the pointer, which can then be traced).
        crate::ssa::remove_trivial_phis(&mut f);
        let module = &l.cx.module;
        let param_space = if f.entry.as_ref().is_some_and(|e| e.caller_unknown) { MemSpace::Unknown } else { MemSpace::Device };
        f.resolve_pointer_roots(|root| match root {
            Root::Global(g) => Some(module.global(g).space),
            Root::Param(_) => Some(param_space),
            Root::Local(_) => Some(MemSpace::Private),
            Root::Ptr(_) => None,
        });
        f.remove_dead_code();
        Some(f)
    }

    // ----- emission helpers -----

    pub fn span(&self, n: Node) -> Span {
        self.cx.span(n)
    }

    fn span_end(&self, n: Node) -> Span {
        let e = n.end_byte().saturating_sub(1) as u32;
        self.cx.spans.span(e, e + 1)
    }

    pub fn emit(&mut self, op: Op, ty: Type, span: Span) -> Value {
        let v = self.f.push(self.cur, op, ty, span);
        self.f.inst_mut(v).inlined_at = self.frames.last().map(|fr| fr.site);
        v
    }

    pub fn konst(&mut self, ty: Type, c: Const, span: Span) -> Value {
        self.emit(Op::Const(c), ty, span)
    }

    pub fn int(&mut self, ty: Type, v: i64, span: Span) -> Value {
        self.konst(ty, Const::Int(v as u64), span)
    }

    pub fn new_block(&mut self, span: Span) -> BlockId {
        self.ssa.new_block(&mut self.f, span)
    }

    /// Ends the current block; further code goes to a fresh unreachable block.
    /// Code after `return`/`break` adds no edges, so it cannot feed phis.
    pub(crate) fn terminate(&mut self, term: Terminator, span: Span, exit: Option<ExitKind>) {
        self.cur = self.ssa.terminate(&mut self.f, self.cur, term, span, exit);
    }

    pub fn jump(&mut self, to: BlockId, span: Span) {
        self.terminate(Terminator::Jump(to), span, None);
    }

    pub fn branch(&mut self, cond: Value, then_to: BlockId, else_to: BlockId, span: Span, cond_span: Span) {
        let cur = self.cur;
        self.terminate(Terminator::Branch { cond, then_to, else_to }, span, None);
        self.f.block_mut(cur).cond_span = Some(cond_span);
    }

    /// `__builtin_assume(c)`: a branch on `c` whose failing way ends where
    /// no valid execution goes.
    pub(crate) fn assume(&mut self, c: Node<'t>, span: Span) {
        let cond = self.condition(c);
        let holds = self.new_block(span);
        let fails = self.new_block(span);
        let cs = self.span(c);
        self.branch(cond, holds, fails, span, cs);
        self.seal(fails);
        self.enter(fails);
        self.terminate(Terminator::Unreachable, span, None);
        self.seal(holds);
        self.enter(holds);
    }

    pub fn seal(&mut self, b: BlockId) {
        self.ssa.seal(&mut self.f, b);
    }

    pub fn enter(&mut self, b: BlockId) {
        self.cur = b;
    }

    // ----- scopes -----

    pub fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name)).or_else(|| self.per_thread.get(name))
    }

    fn bind(&mut self, name: String, b: Binding) {
        self.scope_ints.last_mut().expect("a scope is always open").remove(&name);
        self.scopes.last_mut().expect("a scope is always open").insert(name.clone(), b);
        self.refresh_local_int(&name);
    }

    /// Binds a name that holds an integer constant, which constant
    /// expressions (array sizes) may then use.
    fn bind_int_constant(&mut self, name: String, value: i64, b: Binding) {
        self.bind(name.clone(), b);
        self.scope_ints.last_mut().expect("a scope is always open").insert(name.clone(), value);
        self.refresh_local_int(&name);
    }

    /// Makes the module context's view of `name` the innermost binding's.
    fn refresh_local_int(&mut self, name: &str) {
        let innermost = self.scopes.iter().rposition(|s| s.contains_key(name));
        match innermost.and_then(|i| self.scope_ints[i].get(name)) {
            Some(&v) => {
                self.cx.local_ints.insert(name.to_string(), v);
            }
            None => {
                self.cx.local_ints.remove(name);
            }
        }
    }

    fn push_scope(&mut self) {
        self.scopes.push(FxHashMap::default());
        self.scope_ints.push(FxHashMap::default());
        self.type_aliases.push(Vec::new());
    }

    fn pop_scope(&mut self) {
        let names: Vec<String> = self.scopes.pop().map(|s| s.into_keys().collect()).unwrap_or_default();
        self.scope_ints.pop();
        for (name, before) in self.type_aliases.pop().unwrap_or_default().into_iter().rev() {
            match before {
                Some(t) => self.cx.typedefs.insert(name, t),
                None => self.cx.typedefs.remove(&name),
            };
        }
        for name in names {
            self.refresh_local_int(&name);
        }
    }

    pub fn new_vars(&mut self, ty: &SrcType, name: &str) -> Vec<Var> {
        let mut types = Vec::new();
        ty.scalar_types(&self.cx.structs, &mut types);
        types.iter().map(|&t| self.ssa.new_var(t, name)).collect()
    }

    pub fn diag(&mut self, rule: &str, n: Node, message: String) {
        let d = Diagnostic::new(rule, Severity::Warning, self.span(n), message);
        self.cx.diags.push(d);
    }

    /// Storage for a thread's own variable: SSA variables, or private memory
    /// for arrays and aggregates.
    fn local_place(&mut self, name: &str, ty: &SrcType, span: Span) -> Place {
        // A struct with an array member lives in memory, like an array, so
        // that an index computed at run time names one element.
        if ty.is_register() && !ty.contains_array(&self.cx.structs) {
            let vars = self.new_vars(ty, name);
            return Place::Vars { vars, ty: ty.clone() };
        }
        let len = ty.cells(&self.cx.structs);
        let local = LocalId(self.f.locals.len() as u32);
        self.f.locals.push(IrLocal { name: name.to_string(), elem: ty.scalar(&self.cx.structs), len, span });
        let zero = self.int(Type::U32, 0, span);
        let offsets = Offsets::Dense(len.min(1 << 16) as u32);
        Place::Mem { space: MemSpace::Private, root: Root::Local(local), base: zero, offsets, ty: ty.clone() }
    }

    /// Each invocation's own globals, set by their initializers before the body runs.
    fn per_thread_globals(&mut self) {
        for (name, ty, init, span) in self.cx.per_thread_globals.clone() {
            let place = self.local_place(&name, &ty, span);
            let value = match init {
                Some(init) => self.initializer(init, &ty),
                None => self.undef_of(&ty, span),
            };
            self.assign(&place, &value, span, Some(&name));
            self.per_thread.insert(name, Binding::Place(place));
        }
    }

    // ----- entry parameters -----

    fn entry_params(&mut self, def: Node<'t>) {
        let Some(params) = def.field(self.cx.fields.declarator).and_then(|d| find_parameter_list(self.cx, d)) else { return };
        let mut c = params.walk();
        let list: Vec<_> = params.named_children(&mut c).filter(|p| self.cx.kind(*p).contains("parameter_declaration")).collect();
        // The IR parameter each source parameter is, where it is one.
        let mut single = vec![None; list.len()];
        for (i, p) in list.into_iter().enumerate() {
            let Some(t) = p.field(self.cx.fields.ty).and_then(|t| self.cx.resolve_type(t)) else {
                // Said once here, not again at each use of the name.
                let name = p.field(self.cx.fields.declarator).and_then(|d| declarator_name(self.cx, d));
                if let (Some(name), Some(ty)) = (name, p.field(self.cx.fields.ty)) {
                    let ty = self.cx.text(ty).trim().to_string();
                    self.diag("unsupported", p, format!("a parameter of type `{ty}` is not modelled: what the kernel reads or writes through `{name}` is unknown"));
                    self.unknown_names.insert(name);
                }
                continue;
            };
            let decl = p.field(self.cx.fields.declarator);
            let pointee_space = if self.f.entry.as_ref().is_some_and(|e| e.caller_unknown) { MemSpace::Unknown } else { MemSpace::Device };
            let (name, ty) = match decl.and_then(|d| self.cx.declarator(d, t.clone(), pointee_space)) {
                Some(x) => x,
                None => (format!("param{i}"), t),
            };
            let span = self.span(p);
            // An image argument (OpenCL): a resource of the kernel's, by the argument's name.
            if let SrcType::Resource { kind, elem, writable } = &ty {
                let writable = *writable && !decl_words(self.cx, p).contains(&"const");
                crate::module::resource_global(self.cx, name, *kind, elem, writable, false, span);
                continue;
            }
            if let Some(shared) = self.shared_pointer_parameter(p, &name, &ty, span) {
                self.bind(name, Binding::Place(shared));
                continue;
            }
            let semantic = semantic_of(self.cx, p).and_then(|s| self.cx.d.semantic(&s));
            let vals: Vec<Value> = match semantic {
                Some(sem) => self.semantic_values(sem, &ty, span),
                None => self.argument_values(&name, &ty, span),
            };
            // `float* __restrict__ out`: the source promises it aliases no other buffer.
            if is_restrict(self.cx, p) {
                for v in &vals {
                    if let Op::Param(idx) = self.f.inst(*v).op {
                        self.f.params[idx as usize].noalias = true;
                    }
                }
            }
            if let (None, [v]) = (semantic, vals.as_slice()) {
                if let Op::Param(idx) = self.f.inst(*v).op {
                    single[i] = Some(idx);
                }
            }
            self.bind_values(name, ty, &vals);
        }
        // Launches name arguments by their place in the source's list.
        if let Some(entry) = self.f.entry.as_mut() {
            entry.group_extent_params = entry.group_extent_params.map(|p| p.and_then(|p| single.get(p as usize).copied().flatten()));
            entry.grid_count_params = entry.grid_count_params.map(|c| c.and_then(|c| Some(lockstep_ir::GroupCount { param: single.get(c.param as usize).copied().flatten()?, ..c })));
            let rename = |p: u32| single.get(p as usize).copied().flatten();
            entry.arg_relations = std::mem::take(&mut entry.arg_relations)
                .into_iter()
                .filter_map(|r| Some(lockstep_ir::ArgRelation { lhs: r.lhs.map_params(rename)?, rhs: r.rhs.map_params(rename)?, ..r }))
                .collect();
        }
    }

    /// The values of a kernel argument: one parameter per cell (aggregate
    /// arguments are uniform, each cell a parameter of the argument's name).
    pub(crate) fn argument_values(&mut self, name: &str, ty: &SrcType, span: Span) -> Vec<Value> {
        let mut types = Vec::new();
        ty.scalar_types(&self.cx.structs, &mut types);
        types
            .iter()
            .map(|&t| {
                let idx = self.f.params.len() as u32;
                self.f.params.push(Param { name: name.to_string(), ty: t, span, noalias: false });
                let v = self.emit(Op::Param(idx), t, span);
                if let SrcType::Pointer(pointee, _) = ty {
                    self.points_into(v, pointee);
                }
                v
            })
            .collect()
    }

    /// Binds `name` to fresh variables of type `ty` holding `vals`.
    pub(crate) fn bind_values(&mut self, name: String, ty: SrcType, vals: &[Value]) {
        let vars = self.new_vars(&ty, &name);
        for (v, x) in vars.iter().zip(vals) {
            self.ssa.write(*v, self.cur, *x);
            self.f.inst_mut(*x).name.get_or_insert_with(|| name.clone());
        }
        self.bind(name, Binding::Place(Place::Vars { vars, ty }));
    }

    /// A kernel parameter pointing into group-shared memory (OpenCL
    /// `__local float* s`): the host sizes it per launch, so it is one
    /// dynamically sized shared allocation per group, which the parameter
    /// points at.
    fn shared_pointer_parameter(&mut self, p: Node<'t>, name: &str, ty: &SrcType, span: Span) -> Option<Place> {
        if !self.cx.d.space_qualifies_pointee {
            return None;
        }
        let SrcType::Pointer(elem, _) = ty else { return None };
        let words = decl_words(self.cx, p);
        if words.iter().find_map(|w| self.cx.d.space_qualifier(w)) != Some(MemSpace::Shared) {
            return None;
        }
        let array = SrcType::Array(elem.clone(), 0);
        let g = self.cx.add_global(name, GlobalKind::DynamicShared, MemSpace::Shared, &array, false, span);
        let zero = self.int(Type::U32, 0, span);
        let pointer = self.emit(Op::AddrOf(Root::Global(g), zero), Type::Ptr(MemSpace::Shared), span);
        self.points_into(pointer, elem);
        let vars = self.new_vars(ty, name);
        self.ssa.write(vars[0], self.cur, pointer);
        Some(Place::Vars { vars, ty: SrcType::Pointer(elem.clone(), MemSpace::Shared) })
    }

    /// A builtin component, folding launch-shape values the source fixes.
    pub fn builtin(&mut self, b: Builtin, span: Span) -> Value {
        match (b, self.group_size) {
            (Builtin::GroupSize(a), Some(gs)) => self.int(Type::U32, gs[a as usize % 3] as i64, span),
            (Builtin::LocalIndex, Some([_, 1, 1])) => self.emit(Op::Builtin(Builtin::LocalId(0)), Type::U32, span),
            (Builtin::LocalIndex, Some([x, y, _])) => {
                let lx = self.emit(Op::Builtin(Builtin::LocalId(0)), Type::U32, span);
                let ly = self.emit(Op::Builtin(Builtin::LocalId(1)), Type::U32, span);
                let lz = self.emit(Op::Builtin(Builtin::LocalId(2)), Type::U32, span);
                let cx = self.int(Type::U32, x as i64, span);
                let cxy = self.int(Type::U32, (x * y) as i64, span);
                let a = self.emit(Op::Binary(BinOp::Mul, ly, cx), Type::U32, span);
                let b2 = self.emit(Op::Binary(BinOp::Mul, lz, cxy), Type::U32, span);
                let s = self.emit(Op::Binary(BinOp::Add, lx, a), Type::U32, span);
                self.emit(Op::Binary(BinOp::Add, s, b2), Type::U32, span)
            }
            (Builtin::LocalId(a), Some(gs)) if gs[a as usize % 3] == 1 => self.int(Type::U32, 0, span),
            _ => self.emit(Op::Builtin(b), Type::U32, span),
        }
    }

    pub(crate) fn semantic_values(&mut self, sem: Semantic, ty: &SrcType, span: Span) -> Vec<Value> {
        let n = ty.cells(&self.cx.structs).clamp(1, 3) as u8;
        (0..n)
            .map(|a| match sem {
                Semantic::GroupThreadId => self.builtin(Builtin::LocalId(a), span),
                Semantic::GroupId => self.builtin(Builtin::GroupId(a), span),
                Semantic::GroupIndex => self.builtin(Builtin::LocalIndex, span),
                Semantic::DispatchThreadId => {
                    let g = self.builtin(Builtin::GroupId(a), span);
                    let s = self.builtin(Builtin::GroupSize(a), span);
                    let l = self.builtin(Builtin::LocalId(a), span);
                    let gs = self.emit(Op::Binary(BinOp::Mul, g, s), Type::U32, span);
                    self.emit(Op::Binary(BinOp::Add, gs, l), Type::U32, span)
                }
                Semantic::GroupSize => self.builtin(Builtin::GroupSize(a), span),
                Semantic::NumGroups => self.builtin(Builtin::NumGroups(a), span),
                Semantic::GridSize => {
                    let n = self.builtin(Builtin::NumGroups(a), span);
                    let s = self.builtin(Builtin::GroupSize(a), span);
                    self.emit(Op::Binary(BinOp::Mul, n, s), Type::U32, span)
                }
                Semantic::LaneId => self.builtin(Builtin::LaneId, span),
                Semantic::WaveSize => self.builtin(Builtin::WaveSize, span),
                Semantic::WaveIndex => {
                    let flat = self.builtin(Builtin::LocalIndex, span);
                    let width = self.builtin(Builtin::WaveSize, span);
                    self.emit(Op::Binary(BinOp::Div, flat, width), Type::U32, span)
                }
                Semantic::WavesPerGroup => {
                    let threads = self.group_thread_count(span);
                    let width = self.builtin(Builtin::WaveSize, span);
                    let one = self.int(Type::U32, 1, span);
                    let last = self.emit(Op::Binary(BinOp::Sub, width, one), Type::U32, span);
                    let padded = self.emit(Op::Binary(BinOp::Add, threads, last), Type::U32, span);
                    self.emit(Op::Binary(BinOp::Div, padded, width), Type::U32, span)
                }
            })
            .collect()
    }

    // ----- statements -----

    pub fn stmt(&mut self, n: Node<'t>) {
        if self.f.insts.len() > crate::ssa::MAX_KERNEL_OPERATIONS {
            self.ssa.too_large = true;
        }
        if self.ssa.too_large {
            return;
        }
        self.depth += 1;
        if self.depth > MAX_NESTING {
            self.depth -= 1;
            let span = self.span(n);
            self.cx.diags.push(
                Diagnostic::new("nesting-too-deep", Severity::Warning, span, "statement nested too deeply; skipped")
                    .with_primary_label("lockstep stops descending here")
                    .with_note(format!("nesting beyond {MAX_NESTING} levels is not analysed")),
            );
            return;
        }
        self.stmt_inner(n);
        self.depth -= 1;
    }

    fn stmt_inner(&mut self, n: Node<'t>) {
        let span = self.span(n);
        match self.cx.kind(n) {
            "compound_statement" | "declaration_list" => {
                self.push_scope();
                let mut c = n.walk();
                for k in n.named_children(&mut c) {
                    self.stmt(k);
                }
                self.pop_scope();
            }
            "expression_statement" => {
                if let Some(e) = n.named_child(0) {
                    if !self.template_declaration_read_as_comparison(e) {
                        self.expr(e);
                    }
                }
            }
            "declaration" => self.declaration(n),
            "if_statement" => self.if_stmt(n),
            // A `while` is a `for` without initializer and update.
            "while_statement" | "for_statement" => self.for_stmt(n),
            "do_statement" => self.do_stmt(n),
            "switch_statement" => self.switch_stmt(n),
            "break_statement" => match self.loops.last().map(|l| l.break_to) {
                Some(t) => self.terminate(Terminator::Jump(t), span, Some(ExitKind::Break)),
                None => self.diag("unsupported", n, "`break` outside a loop or switch".into()),
            },
            "continue_statement" => match self.loops.iter().rev().find_map(|l| l.continue_to) {
                Some(t) => self.terminate(Terminator::Jump(t), span, Some(ExitKind::Continue)),
                None => self.diag("unsupported", n, "`continue` outside a loop".into()),
            },
            "return_statement" => self.return_stmt(n),
            "discard_statement" => self.terminate(Terminator::Discard, span, Some(ExitKind::Discard)),
            "labeled_statement" | "attributed_statement" => {
                let mut c = n.walk();
                let kids: Vec<_> = n.named_children(&mut c).filter(|k| self.cx.kind(*k).ends_with("statement") || self.cx.kind(*k) == "declaration").collect();
                for k in kids {
                    self.stmt(k);
                }
            }
            "goto_statement" => self.diag("unsupported", n, "`goto` is not analysed; control flow after it may be imprecise".into()),
            "comment" | "preproc_call" | "preproc_def" | "preproc_function_def" | "preproc_include" | ";" => {}
            "struct_specifier" | "class_specifier" => {
                self.cx.struct_type(n);
            }
            "enum_specifier" => crate::module::enum_constants(self.cx, n),
            // Read under the template arguments in force, until the scope closes.
            "type_definition" | "alias_declaration" => {
                for (name, ty) in crate::module::type_aliases(self.cx, n) {
                    let before = self.cx.typedefs.insert(name.clone(), ty);
                    self.type_aliases.last_mut().expect("a scope is always open").push((name, before));
                }
            }
            "case_statement" => {
                // Only reached for malformed switches; lower the statements it holds.
                let mut c = n.walk();
                let kids: Vec<_> = n.named_children(&mut c).skip(1).collect();
                for k in kids {
                    self.stmt(k);
                }
            }
            k if k.contains("attribute") => {}
            _ => {
                // Expressions used as statements by some grammars.
                if self.cx.kind(n).ends_with("expression") {
                    self.expr(n);
                }
            }
        }
    }

    fn if_stmt(&mut self, n: Node<'t>) {
        let span = self.span(n);
        let Some(cond_node) = n.field(self.cx.fields.condition) else { return };
        let cond_expr = unwrap_condition(self.cx, cond_node);
        let cond = self.condition(cond_expr);
        let alt = n.field(self.cx.fields.alternative);
        // tree-sitter-cpp wraps the else branch in an `else_clause`.
        let else_body = |l: &Self, alt: Node<'t>| if l.cx.kind(alt) == "else_clause" { alt.named_child(0) } else { Some(alt) };
        // A constant condition (`if constexpr`, a template argument): only
        // the branch taken is lowered; the other may not even be valid for
        // this instantiation.
        if let Some(k) = self.f.as_int(cond) {
            let taken = if k != 0 { n.field(self.cx.fields.consequence) } else { alt.and_then(|a| else_body(self, a)) };
            if let Some(b) = taken {
                self.push_scope();
                self.stmt(b);
                self.pop_scope();
            }
            return;
        }
        let then_b = self.new_block(span);
        let join = self.new_block(span);
        let else_b = if alt.is_some() { self.new_block(span) } else { join };
        let cs = self.span(cond_expr);
        self.branch(cond, then_b, else_b, span, cs);
        self.seal(then_b);
        self.enter(then_b);
        if let Some(c) = n.field(self.cx.fields.consequence) {
            self.stmt(c);
        }
        self.jump(join, span);
        if let Some(alt) = alt {
            self.seal(else_b);
            self.enter(else_b);
            if let Some(b) = else_body(self, alt) {
                self.stmt(b);
            }
            self.jump(join, span);
        }
        self.seal(join);
        self.enter(join);
    }

    /// Lowers a loop's condition (`default` when it has none) and branches to `body` or `exit`.
    fn loop_test(&mut self, n: Node<'t>, body: BlockId, exit: BlockId, default: bool, span: Span) {
        let cond_node = n.field(self.cx.fields.condition).map(|c| unwrap_condition(self.cx, c));
        let cond = match cond_node {
            Some(c) => self.condition(c),
            None => self.konst(Type::Bool, Const::Bool(default), span),
        };
        let cs = cond_node.map(|c| self.span(c)).unwrap_or(span);
        self.branch(cond, body, exit, span, cs);
    }

    /// Lowers a loop body with its `break`/`continue` targets, then jumps to `next`.
    fn loop_body(&mut self, n: Node<'t>, exit: BlockId, continue_to: BlockId, next: BlockId, span: Span) {
        self.loops.push(LoopTargets { break_to: exit, continue_to: Some(continue_to) });
        if let Some(b) = n.field(self.cx.fields.body) {
            self.stmt(b);
        }
        self.loops.pop();
        self.jump(next, span);
    }

    fn for_stmt(&mut self, n: Node<'t>) {
        let span = self.span(n);
        self.push_scope();
        if let Some(init) = n.field(self.cx.fields.initializer) {
            if self.cx.kind(init) == "declaration" {
                self.declaration(init);
            } else {
                self.expr(init);
            }
        }
        let header = self.new_block(span);
        let body = self.new_block(span);
        let latch = self.new_block(span);
        let exit = self.new_block(span);
        self.jump(header, span);
        self.enter(header);
        self.loop_test(n, body, exit, true, span);
        self.seal(body);
        self.enter(body);
        self.loop_body(n, exit, latch, latch, span);
        self.seal(latch);
        self.enter(latch);
        let mut c = n.walk();
        let updates: Vec<_> = n.fields(self.cx.fields.update, &mut c).collect();
        for u in updates {
            self.expr(u);
        }
        self.jump(header, span);
        self.seal(header);
        self.seal(exit);
        self.enter(exit);
        self.pop_scope();
    }

    fn do_stmt(&mut self, n: Node<'t>) {
        let span = self.span(n);
        let body = self.new_block(span);
        let latch = self.new_block(span);
        let exit = self.new_block(span);
        self.jump(body, span);
        self.enter(body);
        self.loop_body(n, exit, latch, latch, span);
        self.seal(latch);
        self.enter(latch);
        self.loop_test(n, body, exit, false, span);
        self.seal(body);
        self.seal(exit);
        self.enter(exit);
    }

    fn switch_stmt(&mut self, n: Node<'t>) {
        let span = self.span(n);
        let Some(cond_node) = n.field(self.cx.fields.condition).map(|c| unwrap_condition(self.cx, c)) else { return };
        let rv = self.expr(cond_node);
        let value = match rv.vals.first() {
            Some(&v) => v,
            None => self.konst(Type::I32, Const::Int(0), span),
        };
        let exit = self.new_block(span);
        let dispatch = self.cur;
        let mut cases = Vec::new();
        let mut default = None;
        let mut case_blocks = Vec::new();
        let body = n.field(self.cx.fields.body);
        let mut items = Vec::new();
        if let Some(body) = body {
            let mut c = body.walk();
            items = body.named_children(&mut c).filter(|x| self.cx.kind(*x) == "case_statement").collect();
        }
        let label = |l: &Self, item: &Node<'t>| item.field(l.cx.fields.value).map(|v| l.cx.const_int(v));
        // On a constant, only the case taken and those it falls into are
        // lowered (when every label is one too).
        let labels_known = items.iter().all(|it| label(self, it) != Some(None));
        if let (Some(k), true) = (self.f.as_int(value), labels_known) {
            let taken = items.iter().position(|it| label(self, it) == Some(Some(k))).or_else(|| items.iter().position(|it| label(self, it).is_none()));
            self.loops.push(LoopTargets { break_to: exit, continue_to: None });
            for &item in items.iter().skip(taken.unwrap_or(items.len())) {
                for s in self.case_body(item) {
                    self.stmt(s);
                }
            }
            self.loops.pop();
            self.jump(exit, span);
            self.seal(exit);
            self.enter(exit);
            return;
        }
        // Labels lockstep cannot evaluate (a name of a header it did not
        // see): where no constant matched, the first of them equal to the
        // value is chosen by selects, and a second switch on its position
        // goes there (a chain of branches would make each case depend on
        // every test before it).
        let mut unknown_labels = Vec::new();
        for item in &items {
            let b = self.new_block(self.span(*item));
            case_blocks.push(b);
            match item.field(self.cx.fields.value) {
                Some(v) => match self.cx.const_int(v) {
                    Some(k) => cases.push((k as u64, b)),
                    None => unknown_labels.push((v, b)),
                },
                None => default = Some(b),
            }
        }
        let default = default.unwrap_or(exit);
        let cs = self.span(cond_node);
        let unmatched = if unknown_labels.is_empty() { default } else { self.new_block(span) };
        self.terminate(Terminator::Switch { value, cases, default: unmatched }, span, None);
        self.f.block_mut(dispatch).cond_span = Some(cs);
        if !unknown_labels.is_empty() {
            self.seal(unmatched);
            self.enter(unmatched);
            let matches: Vec<Value> = unknown_labels
                .iter()
                .map(|&(v, _)| {
                    let label_span = self.span(v);
                    match self.expr(v).vals.first().copied() {
                        Some(label) => {
                            let label = self.convert(label, self.f.inst(value).ty, label_span);
                            self.emit(Op::Cmp(CmpOp::Eq, value, label), Type::Bool, label_span)
                        }
                        None => self.undef(Type::Bool, label_span).vals[0],
                    }
                })
                .collect();
            let mut position = self.int(Type::U32, unknown_labels.len() as i64, span);
            for (i, &m) in matches.iter().enumerate().rev() {
                let this = self.int(Type::U32, i as i64, span);
                position = self.emit(Op::Select(m, this, position), Type::U32, span);
            }
            let targets = unknown_labels.iter().enumerate().map(|(i, &(_, b))| (i as u64, b)).collect();
            self.terminate(Terminator::Switch { value: position, cases: targets, default }, span, None);
            self.f.block_mut(unmatched).cond_span = Some(cs);
        }
        self.loops.push(LoopTargets { break_to: exit, continue_to: None });
        for (i, item) in items.iter().enumerate() {
            let b = case_blocks[i];
            // Fallthrough from the previous case.
            if i > 0 {
                self.jump(b, span);
            }
            self.seal(b);
            self.enter(b);
            for s in self.case_body(*item) {
                self.stmt(s);
            }
        }
        self.loops.pop();
        self.jump(exit, span);
        self.seal(exit);
        self.enter(exit);
    }

    /// The statements of a `case` (or `default`), after its label.
    fn case_body(&self, item: Node<'t>) -> Vec<Node<'t>> {
        let mut c = item.walk();
        let has_value = item.field(self.cx.fields.value).is_some();
        item.named_children(&mut c).skip(has_value as usize).collect()
    }

    fn return_stmt(&mut self, n: Node<'t>) {
        let span = self.span(n);
        let value = n.named_child(0).map(|e| self.expr(e));
        if let (Some(rv), Some(frame)) = (&value, self.frames.last()) {
            if frame.deduces_return && frame.ret.is_none() && rv.ty != SrcType::Void {
                let vars = self.new_vars(&rv.ty, "return value");
                let frame = self.frames.last_mut().expect("a frame");
                frame.ret = Some((vars, rv.ty.clone()));
            }
        }
        match self.frames.last() {
            Some(frame) => {
                let to = frame.return_to;
                if let (Some(rv), Some((vars, ty))) = (value, frame.ret.clone()) {
                    let vals = self.convert_to(&rv, &ty, span);
                    for (v, x) in vars.iter().zip(vals) {
                        self.ssa.write(*v, self.cur, x);
                    }
                }
                self.terminate(Terminator::Jump(to), span, Some(ExitKind::Return));
            }
            None => self.terminate(Terminator::Return(None), span, Some(ExitKind::Return)),
        }
    }

    // ----- declarations -----

    fn declaration(&mut self, n: Node<'t>) {
        let words = decl_words(self.cx, n);
        let space = words.iter().find_map(|w| self.cx.d.space_qualifier(w));
        let is_const = words.contains(&"const") || words.contains(&"constexpr");
        let is_static = words.contains(&"static");
        let coherent = words.iter().any(|w| self.cx.d.coherent_qualifiers.contains(w));
        let mut base = n.field(self.cx.fields.ty).and_then(|t| self.cx.resolve_type(t));
        // Shared memory of a type lockstep does not know is still memory.
        if let (None, Some(MemSpace::Shared), Some(t)) = (&base, space, n.field(self.cx.fields.ty)) {
            crate::module::declares_memory_of_unknown_type(self.cx, n);
            base = Some(crate::module::unknown_element_type(self.cx, t));
        }
        let declares_matrix = !self.cx.d.cooperative_matrices.types.is_empty() && self.declares_cooperative_matrix(n);
        let mut c = n.walk();
        let decls: Vec<_> = n.fields(self.cx.fields.declarator, &mut c).collect();
        for d in decls {
            let init = if self.cx.kind(d) == "init_declarator" { d.field(self.cx.fields.value) } else { None };
            let span = self.span(d);
            // `auto f = [&](float x) {…};`: calls of `f` inline the lambda.
            if let Some(lambda) = init.filter(|&i| self.inlinable_lambda(i)) {
                if let Some(name) = d.field(self.cx.fields.declarator).and_then(|x| declarator_name(self.cx, x)) {
                    self.lambdas.push(lambda);
                    self.bind(name, Binding::Lambda(self.lambdas.len() - 1));
                    continue;
                }
            }
            // `T& r = place;`: the name stands for the place (nothing is read).
            if let (Some(inner), Some(init)) = (d.field(self.cx.fields.declarator).filter(|x| has_reference(self.cx, *x)), init) {
                if let (Some(name), Some(place)) = (declarator_name(self.cx, inner), self.place(init)) {
                    self.bind(name, Binding::Place(place));
                    continue;
                }
            }
            // `index<2> i(a, b);` reads as a function declaration whose parameter
            // types are `a` and `b`: inside a body it constructs a value from them.
            if let (Some(ty @ (SrcType::Scalar(_) | SrcType::Vector(..))), "function_declarator") = (&base, self.cx.kind(d)) {
                if let Some(name) = declarator_name(self.cx, d) {
                    let rv = self.constructed_from_parameter_types(d, ty, span);
                    let vars = self.new_vars(ty, &name);
                    let place = Place::Vars { vars, ty: ty.clone() };
                    self.assign(&place, &rv, span, Some(&name));
                    self.bind(name, Binding::Place(place));
                    continue;
                }
            }
            // `auto` and unknown type names take the initializer's type.
            let declared = base.clone().and_then(|b| self.cx.declarator(d, b, MemSpace::Unknown));
            let (name, ty, init_rv) = match declared {
                Some((name, ty)) => (name, ty, None),
                None => {
                    let Some(init) = init else { continue };
                    let name = declarator_name(self.cx, d).unwrap_or_default();
                    let rv = self.expr(init);
                    (name, rv.ty.clone(), Some(rv))
                }
            };
            // `__global float* rows[4]`: a private array of pointers into that space.
            let (ty, space) = match space.filter(|_| self.cx.d.space_qualifies_pointee).and_then(|sp| pointers_into(&ty, sp)) {
                Some(array) => (array, None),
                None => (ty, space),
            };
            if let (true, Some(sp), SrcType::Pointer(elem, _)) = (self.cx.d.space_qualifies_pointee, space, &ty) {
                // `__global float* p`: a private pointer into that space.
                let pointer = SrcType::Pointer(elem.clone(), sp);
                let vars = self.new_vars(&pointer, &name);
                let place = Place::Vars { vars, ty: pointer };
                let rv = match (init_rv, init) {
                    (Some(rv), _) => Some(rv),
                    (None, Some(init)) => Some(self.expr(init)),
                    (None, None) => None,
                };
                if let Some(rv) = rv {
                    self.assign(&place, &rv, span, Some(&name));
                }
                self.bind(name, Binding::Place(place));
                continue;
            }
            if let Some(sp) = space.filter(|s| *s == MemSpace::Shared || *s == MemSpace::Device || *s == MemSpace::Constant) {
                // `__shared__` inside a kernel: one allocation per group.
                let kind = match sp {
                    MemSpace::Shared if words.contains(&"extern") || matches!(ty, SrcType::Array(_, 0)) => GlobalKind::DynamicShared,
                    MemSpace::Shared => GlobalKind::GroupShared,
                    MemSpace::Constant => GlobalKind::Constant,
                    _ => GlobalKind::DeviceVar,
                };
                let g = self.cx.add_global(&name, kind, sp, &ty, coherent, span);
                let place = self.global_place(g, &ty, sp, span);
                self.note_runtime_dims(&place, d, span);
                self.bind(name, Binding::Place(place));
                continue;
            }
            if let SrcType::SyncObject(scope, width) = ty {
                // The constructor may fix the width the type leaves open (`auto t = tiled_partition<16>(b)`).
                let width = match (width, init_rv.as_ref().map(|rv| &rv.ty)) {
                    (None, Some(SrcType::SyncObject(_, w))) => *w,
                    (None, None) => match init.map(|i| self.expr(i).ty) {
                        Some(SrcType::SyncObject(_, w)) => w,
                        _ => None,
                    },
                    _ => width,
                };
                self.bind(name, Binding::Sync(scope, width));
                continue;
            }
            if let (true, true, SrcType::Scalar(t), Some(init)) = (is_const || is_static, init_rv.is_none(), &ty, init) {
                if t.is_int() {
                    if let Some(v) = self.cx.const_int(init) {
                        let x = self.int(*t, v, span);
                        let vars = self.new_vars(&ty, &name);
                        self.ssa.write(vars[0], self.cur, x);
                        if is_const {
                            self.constant_values.insert(vars[0], x);
                        }
                        self.bind_int_constant(name, v, Binding::Place(Place::Vars { vars, ty }));
                        continue;
                    }
                }
            }
            if let (SrcType::Pointer(elem, _), Some(init)) = (&ty, init) {
                if let Some((var, lane)) = self.register_lanes(init, elem) {
                    self.bind(name, Binding::Lanes { var, lane });
                    continue;
                }
            }
            let place = self.local_place(&name, &ty, span);
            self.note_runtime_dims(&place, d, span);
            if let (Place::Vars { vars, .. }, true) = (&place, declares_matrix) {
                self.matrix_vars.extend(vars.iter().copied());
            }
            let rv = match (init_rv, init) {
                (Some(rv), _) => Some(rv),
                (None, Some(init)) => Some(self.initializer(init, &ty)),
                (None, None) => None,
            };
            if let Some(rv) = rv {
                self.assign(&place, &rv, span, Some(&name));
                // A constant pointer to a function keeps the value it was declared with.
                if let (true, Place::Vars { vars, ty: SrcType::Function }, Some(&v)) = (is_const, &place, rv.vals.first()) {
                    self.constant_values.insert(vars[0], v);
                }
            } else if let Place::Vars { vars, .. } = &place {
                // Declared without a value: an explicit undef keeps reads well defined.
                for v in vars.clone() {
                    let t = self.ssa.var_type(v);
                    let u = self.emit(Op::Undef, t, span);
                    self.ssa.write(v, self.cur, u);
                }
            }
            self.bind(name, Binding::Place(place));
        }
    }

    /// Whether these variables hold one cooperative matrix.
    pub(crate) fn holds_matrix(&self, vars: &[Var]) -> bool {
        matches!(vars, [v] if self.matrix_vars.contains(v))
    }

    /// Whether a declaration's type is a cooperative matrix (`coopmat<…>`).
    fn declares_cooperative_matrix(&self, declaration: Node<'t>) -> bool {
        let Some(ty) = declaration.field(self.cx.fields.ty) else { return false };
        let name = ty.field(self.cx.fields.name).unwrap_or(ty);
        self.cx.d.cooperative_matrices.types.contains(&self.cx.text(name).trim())
    }

    /// Records the dimensions of a declared array whose lengths are not all
    /// constants, as the values its size expressions have here.
    fn note_runtime_dims(&mut self, place: &Place, declarator: Node<'t>, span: Span) {
        let Place::Mem { root, ty: ty @ SrcType::Array(..), .. } = place else { return };
        let (dims, _) = ty.array_dims();
        if !dims.contains(&0) {
            return;
        }
        // `a[4][8]` nests as ((a[4])[8]): the outermost declarator is the innermost dimension.
        let mut sizes = Vec::new();
        let mut n = Some(declarator);
        while let Some(x) = n {
            if self.cx.kind(x) == "array_declarator" {
                sizes.push(x.field(self.cx.fields.size));
            }
            n = x.field(self.cx.fields.declarator);
        }
        sizes.reverse();
        // An unsized array (`extern __shared__ float s[]`) is one allocation of unknown length: nothing to scale.
        if sizes.len() != dims.len() || sizes.iter().any(Option::is_none) {
            return;
        }
        let values = sizes.into_iter().flatten().map(|s| {
            let rv = self.expr(s);
            match rv.vals.first() {
                Some(&v) => self.convert(v, Type::U32, span),
                None => self.emit(Op::Undef, Type::U32, span),
            }
        });
        let values: Vec<Value> = values.collect();
        // A length that is a name lockstep never saw (already noted) stays
        // unknown: scaling by it would only make every index a product the
        // race search must take apart.
        if values.iter().any(|&v| self.depends_on_undef(v)) {
            return;
        }
        self.runtime_dims.insert(*root, values);
    }

    /// Whether `v` is computed from an undefined value (a few steps back).
    fn depends_on_undef(&self, v: Value) -> bool {
        let mut seen = FxHashSet::default();
        let mut stack = vec![(v, 0u8)];
        while let Some((x, depth)) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            let op = &self.f.inst(x).op;
            if matches!(op, Op::Undef) {
                return true;
            }
            if depth < 8 {
                op.for_each_operand(|o| stack.push((o, depth + 1)));
            }
        }
        false
    }

    /// The value `T v(a, b);` constructs when the grammar read it as a function
    /// declaration: each parameter's type is a variable's name.
    fn constructed_from_parameter_types(&mut self, d: Node<'t>, ty: &SrcType, span: Span) -> RV {
        let mut vals = Vec::new();
        if let Some(params) = d.field(self.cx.fields.parameters) {
            let mut c = params.walk();
            let names: Vec<Node<'t>> = params.named_children(&mut c).filter_map(|p| p.field(self.cx.fields.ty)).collect();
            for n in names {
                vals.extend(self.identifier(n, span).vals);
            }
        }
        let vals = self.convert_to(&RV { vals, ty: ty.clone() }, ty, span);
        RV { vals, ty: ty.clone() }
    }

    /// An initializer: a brace list (flattened) or an expression.
    pub(crate) fn initializer(&mut self, n: Node<'t>, ty: &SrcType) -> RV {
        // `S v(a, b)`, `S v{a, b}`, `S v = {a, b}`: the constructor that takes them.
        if let (SrcType::Struct(si), "argument_list" | "initializer_list") = (ty, self.cx.kind(n)) {
            let mut c = n.walk();
            let args: Vec<Node<'t>> = n.named_children(&mut c).filter(|x| self.cx.kind(*x) != "comment").collect();
            let span = self.span(n);
            if let Some(rv) = self.construct(*si, &args, n, span) {
                return rv;
            }
        }
        // `index<2> i(a, b)`: direct initialization of a value, component by component.
        let direct = self.cx.kind(n) == "argument_list" && matches!(ty, SrcType::Scalar(_) | SrcType::Vector(..));
        if self.cx.kind(n) == "initializer_list" || direct {
            let mut vals = Vec::new();
            let mut stack = vec![n];
            let mut leaves = Vec::new();
            while let Some(x) = stack.pop() {
                if self.cx.kind(x) == "initializer_list" || x.id() == n.id() {
                    let mut c = x.walk();
                    let kids: Vec<_> = x.named_children(&mut c).collect();
                    stack.extend(kids.into_iter().rev());
                } else {
                    leaves.push(x);
                }
            }
            for l in leaves {
                let rv = self.expr(l);
                vals.extend(rv.vals);
            }
            let mut types = Vec::new();
            ty.scalar_types(&self.cx.structs, &mut types);
            let span = self.span(n);
            // Missing trailing elements are zero.
            while vals.len() < types.len() && vals.len() < (1 << 16) {
                let t = types[vals.len()];
                let z = if t.is_float() { self.konst(t, Const::Float(0.0), span) } else { self.int(t, 0, span) };
                vals.push(z);
            }
            RV { vals, ty: ty.clone() }
        } else {
            self.expr(n)
        }
    }

    /// The place of a module-level or kernel-level allocation.
    pub fn global_place(&mut self, g: lockstep_ir::GlobalId, ty: &SrcType, space: MemSpace, span: Span) -> Place {
        let zero = self.int(Type::U32, 0, span);
        let cells = ty.cells(&self.cx.structs).min(1 << 16) as u32;
        Place::Mem { space, root: Root::Global(g), base: zero, offsets: Offsets::Dense(cells.max(1)), ty: ty.clone() }
    }

    // ----- inlining -----

    /// Lowers a call to a helper with a body by inlining it here.
    pub fn inline_call(&mut self, def: Node<'t>, name: &str, args: &[(Option<Place>, RV)], call: Node<'t>) -> RV {
        let span = self.span(call);
        let receiver = self.receiver.take();
        let explicit_template_args = self.explicit_template_args.take();
        let class_scope = self.class_scope.take();
        let site = match self.inline_site(name, def.id(), args, call, span) {
            Ok(site) => site,
            Err(opaque) => return opaque,
        };
        if def.has_error() && self.unparsed_callee.is_none() {
            self.unparsed_callee = Some((name.to_string(), span));
        }
        // A function template: its parameters bound for this call, in force
        // for its signature and body, over those of its class.
        let own = template::template_parameters(self.cx, def).map(|params| self.template_bindings(def, params, args, call, explicit_template_args));
        let class = class_scope.as_ref().map(|(class, _)| *class);
        let outer_template = match (class_scope, own) {
            (None, None) => None,
            (class, own) => {
                let mut bindings = class.map(|(_, b)| b).unwrap_or_default();
                bindings.extend(own.unwrap_or_default());
                Some(std::mem::replace(&mut self.cx.template_args, bindings))
            }
        };
        let ret_ty = def.field(self.cx.fields.ty).and_then(|t| self.cx.resolve_type(t)).unwrap_or(SrcType::Void);
        let ret_ty = match def.field(self.cx.fields.declarator) {
            Some(d) if self.cx.kind(d) == "pointer_declarator" => SrcType::Pointer(Box::new(ret_ty), MemSpace::Unknown),
            _ => ret_ty,
        };
        let ret = if ret_ty == SrcType::Void { None } else { Some((self.new_vars(&ret_ty, name), ret_ty.clone())) };
        let return_to = self.new_block(span);
        // Bind parameters in a fresh scope that sees only globals.
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![FxHashMap::default()]);
        let saved_scope_ints = std::mem::replace(&mut self.scope_ints, vec![FxHashMap::default()]);
        let saved_local_ints = std::mem::take(&mut self.cx.local_ints);
        let saved_loops = std::mem::take(&mut self.loops);
        self.frames.push(Frame { body: def.id(), class, return_to, ret: ret.clone(), deduces_return: false, site });
        // A member function sees its object's fields by name.
        if let Some(receiver) = &receiver {
            let (Place::Mem { ty: SrcType::Struct(si), .. } | Place::Vars { ty: SrcType::Struct(si), .. }) = receiver else { unreachable!("receivers are structs") };
            let names = self.cx.structs[*si].member_names(&self.cx.structs);
            for fname in names {
                if let Some(field) = self.sub_place(receiver.clone(), &fname, span) {
                    self.bind(fname, Binding::Place(field));
                }
            }
        }
        let mut shadowed_views = Vec::new();
        let mut shadowed_resources = Vec::new();
        if let Some(params) = def.field(self.cx.fields.declarator).and_then(|d| find_parameter_list(self.cx, d)) {
            let names = self.bind_parameters(params, args);
            // A captured device view handed to a helper is that view under the parameter's name.
            let arg_nodes: Vec<Node<'t>> = call.field(self.cx.fields.arguments).map(|a| {
                let mut c = a.walk();
                a.named_children(&mut c).filter(|x| self.cx.kind(*x) != "comment").collect()
            }).unwrap_or_default();
            for (pname, arg) in names.into_iter().zip(arg_nodes) {
                let Some(pname) = pname else { continue };
                if let Some(view) = self.views.get(self.cx.text(arg)).cloned() {
                    shadowed_views.push((pname.clone(), self.views.insert(pname.clone(), view)));
                }
                // So is a resource (an image handed to a helper).
                if let Some(resource @ GlobalBinding::Resource { .. }) = global_binding(self.cx, self.cx.text(arg)) {
                    shadowed_resources.push((pname.clone(), self.cx.globals.insert(pname, resource)));
                }
            }
        }
        // A constructor sets its members before its body runs.
        if let Some(object) = &receiver {
            let mut c = def.walk();
            let initializers = def.named_children(&mut c).find(|x| self.cx.kind(*x) == "field_initializer_list");
            if let Some(list) = initializers {
                self.member_initializers(object, list);
            }
        }
        if let Some(body) = def.field(self.cx.fields.body) {
            self.stmt(body);
        }
        for (name, before) in shadowed_views.into_iter().rev() {
            match before {
                Some(view) => self.views.insert(name, view),
                None => self.views.remove(&name),
            };
        }
        for (name, before) in shadowed_resources.into_iter().rev() {
            match before {
                Some(binding) => self.cx.globals.insert(name, binding),
                None => self.cx.globals.remove(&name),
            };
        }
        let end = self.span_end(def);
        self.terminate(Terminator::Jump(return_to), end, None);
        if let Some(outer) = outer_template {
            self.cx.template_args = outer;
        }
        self.frames.pop();
        self.scopes = saved_scopes;
        self.scope_ints = saved_scope_ints;
        self.cx.local_ints = saved_local_ints;
        self.loops = saved_loops;
        self.returned(ret, return_to, span)
    }

    /// The inline site of a call to `name` (the definition `body`); where the
    /// call recurses or nests too deep, the opaque call that stands for it instead.
    fn inline_site(&mut self, name: &str, body: usize, args: &[(Option<Place>, RV)], call: Node<'t>, span: Span) -> Result<u32, RV> {
        if self.frames.len() >= 32 || self.frames.iter().any(|f| f.body == body) {
            self.diag("unsupported", call, format!("recursive or deeply nested call to `{name}` is not inlined"));
            return Err(self.opaque_call(name, args.iter().map(|(_, rv)| rv.clone()).collect(), span));
        }
        let site = self.f.inline_sites.len() as u32;
        self.f.inline_sites.push(InlineSite { callee: name.to_string(), call_span: span, parent: self.frames.last().map(|f| f.site) });
        Ok(site)
    }

    /// The class whose static member function is being inlined.
    pub(crate) fn enclosing_class(&self) -> Option<Node<'t>> {
        self.frames.last().and_then(|f| f.class)
    }

    /// Continues after an inlined body at `return_to`, with the value its
    /// returns left in `ret`.
    pub(crate) fn returned(&mut self, ret: Option<(Vec<Var>, SrcType)>, return_to: BlockId, span: Span) -> RV {
        self.seal(return_to);
        self.enter(return_to);
        match ret {
            Some((vars, ty)) => {
                let vals = vars.iter().map(|&v| self.ssa.read(&mut self.f, v, return_to, span)).collect();
                RV { vals, ty }
            }
            None => RV { vals: Vec::new(), ty: SrcType::Void },
        }
    }

    /// Binds an inlined function's parameters to the call's arguments: a
    /// reference (or `out`/`inout`) parameter names the argument's place, an
    /// array parameter the caller's memory, the others a copy of the value.
    /// Returns each parameter's name, in order (None where it declares none).
    fn bind_parameters(&mut self, params: Node<'t>, args: &[(Option<Place>, RV)]) -> Vec<Option<String>> {
        let mut c = params.walk();
        let list: Vec<_> = params.named_children(&mut c).filter(|p| self.cx.kind(*p).contains("parameter_declaration")).collect();
        let mut names = Vec::new();
        for (i, p) in list.into_iter().enumerate() {
            let words = decl_words(self.cx, p);
            let by_ref = words.iter().any(|w| *w == "out" || *w == "inout") || p.field(self.cx.fields.declarator).is_some_and(|d| has_reference(self.cx, d));
            let base = p.field(self.cx.fields.ty).and_then(|t| self.cx.resolve_type(t));
            let declared = base.and_then(|b| p.field(self.cx.fields.declarator).and_then(|d| self.cx.declarator(d, b, MemSpace::Unknown)));
            names.push(declared.as_ref().map(|d| d.0.clone()));
            let Some((pname, pty)) = declared else { continue };
            let pspan = self.span(p);
            let defaulted;
            let (place, rv) = match args.get(i) {
                Some((place, rv)) => (place, rv),
                None => {
                    // Left out by the call: the parameter's default, where it has one.
                    let value = match p.field(self.cx.fields.default_value) {
                        Some(default) => self.expr(default),
                        None => {
                            self.diag("unsupported", p, format!("the call gives no value for parameter `{pname}` (a default lockstep did not read?): its value is unknown"));
                            self.undef_of(&pty, pspan)
                        }
                    };
                    defaulted = (None, value);
                    (&defaulted.0, &defaulted.1)
                }
            };
            match (by_ref, place) {
                (true, Some(pl)) => {
                    self.unread(rv);
                    self.bind(pname, Binding::Place(pl.clone()))
                }
                (false, Some(pl @ Place::Vars { .. })) if is_register_address(rv) => self.bind(pname, Binding::PointsTo(pl.clone())),
                _ if matches!(rv.ty, SrcType::SyncObject(..)) => {
                    if let SrcType::SyncObject(s, w) = rv.ty {
                        self.bind(pname, Binding::Sync(s, w))
                    }
                }
                // Arrays decay to references to the caller's memory.
                (_, Some(pl @ Place::Mem { .. })) if matches!(pty, SrcType::Array(..)) => self.bind(pname, Binding::Place(pl.clone())),
                _ => {
                    let ty = if pty.is_register() { pty } else { rv.ty.clone() };
                    let vars = self.new_vars(&ty, &pname);
                    let place = Place::Vars { vars, ty };
                    self.assign(&place, rv, pspan, Some(&pname));
                    self.bind(pname, Binding::Place(place));
                }
            }
        }
        names
    }

    /// Turns the loads that read an argument bound to a reference parameter
    /// into no access: passing a place by reference reads nothing.
    fn unread(&mut self, rv: &RV) {
        for &v in &rv.vals {
            if self.argument_reads.remove(&v) {
                self.f.inst_mut(v).op = Op::Undef;
            }
        }
    }

    /// The lambda a [`Binding::Lambda`] names.
    pub fn lambda(&self, i: usize) -> Node<'t> {
        self.lambdas[i]
    }

    /// Whether `n` is a lambda a call can inline where it is called, its
    /// body's names meaning what they mean at the call: one that captures
    /// nothing or by reference (`[]`, `[&]`), or by copy (`[=]`, `[x, &y]`)
    /// when nothing it names is assigned after it is made (the copies then
    /// hold what the variables hold at the call) and it is not `mutable`.
    fn inlinable_lambda(&self, n: Node<'t>) -> bool {
        if self.cx.kind(n) != "lambda_expression" {
            return false;
        }
        let mut c = n.walk();
        let Some(captures) = n.children(&mut c).find(|x| self.cx.kind(*x) == "lambda_capture_specifier") else { return false };
        let text: String = self.cx.text(captures).chars().filter(|c| !c.is_whitespace()).collect();
        if matches!(text.as_str(), "[]" | "[&]") {
            return true;
        }
        let plain_list = text.trim_start_matches('[').trim_end_matches(']').split(',').all(|x| {
            let x = x.trim_start_matches('&');
            x == "=" || (!x.is_empty() && x.chars().all(|c| c.is_alphanumeric() || c == '_'))
        });
        let mutable = n.field(self.cx.fields.declarator).is_some_and(|d| self.cx.text(d).split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == "mutable"));
        plain_list && !mutable && !assigned_after(self.cx, n)
    }

    /// Lowers a call to a lambda stored in a local by inlining its body: it
    /// sees the caller's names (it captures by reference), its parameters
    /// are bound in a scope of their own.
    pub fn inline_lambda(&mut self, lambda: Node<'t>, name: &str, args: &[(Option<Place>, RV)], call: Node<'t>) -> RV {
        let span = self.span(call);
        let site = match self.inline_site(name, lambda.id(), args, call, span) {
            Ok(site) => site,
            Err(opaque) => return opaque,
        };
        let declarator = lambda.field(self.cx.fields.declarator);
        let declared_return = declarator.and_then(|d| {
            let mut c = d.walk();
            let trailing = d.named_children(&mut c).find(|x| self.cx.kind(*x) == "trailing_return_type")?;
            let ty = trailing.named_child(0)?;
            self.cx.resolve_type(ty.field(self.cx.fields.ty).unwrap_or(ty))
        });
        let deduces_return = declared_return.is_none();
        let ret = declared_return.filter(|t| *t != SrcType::Void).map(|t| (self.new_vars(&t, name), t));
        let return_to = self.new_block(span);
        self.scopes.push(FxHashMap::default());
        self.scope_ints.push(FxHashMap::default());
        let saved_loops = std::mem::take(&mut self.loops);
        self.frames.push(Frame { body: lambda.id(), class: self.frames.last().and_then(|f| f.class), return_to, ret, deduces_return, site });
        if let Some(params) = declarator.and_then(|d| d.field(self.cx.fields.parameters)) {
            self.bind_parameters(params, args);
        }
        if let Some(body) = lambda.field(self.cx.fields.body) {
            self.stmt(body);
        }
        let end = self.span_end(lambda);
        self.terminate(Terminator::Jump(return_to), end, None);
        let frame = self.frames.pop().expect("the lambda's frame");
        self.scopes.pop();
        self.scope_ints.pop();
        self.loops = saved_loops;
        self.returned(frame.ret, return_to, span)
    }

    /// The bindings of a function template's parameters at one call: the
    /// explicit arguments (`f<T, 4>(x)`, read under the caller's bindings),
    /// then types deduced from arguments whose parameter is declared `T` or
    /// `T*`, then defaults.
    /// `read` holds the explicit arguments when they were read before the
    /// call (a function value's); otherwise the call's own are read here.
    pub(crate) fn template_bindings(&mut self, def: Node<'t>, params: Node<'t>, args: &[(Option<Place>, RV)], call: Node<'t>, read: Option<Vec<template::TemplateArg>>) -> template::Bindings {
        let names = template::parameter_names(self.cx, params);
        let explicit_list = call.field(self.cx.fields.function).filter(|f| self.cx.kind(*f) == "template_function").and_then(|f| f.field(self.cx.fields.arguments));
        let explicit_nodes = explicit_list.map(|l| template::argument_nodes(self.cx, l)).unwrap_or_default();
        let explicit: Vec<template::TemplateArg> = match read {
            Some(read) => read,
            None => explicit_nodes.iter().zip(&names).map(|(&a, (_, is_type))| template::argument(self.cx, *is_type, a)).collect(),
        };
        let mut deduced = template::Bindings::default();
        if let Some(list) = def.field(self.cx.fields.declarator).and_then(|d| find_parameter_list(self.cx, d)) {
            let mut c = list.walk();
            let fparams: Vec<_> = list.named_children(&mut c).filter(|p| self.cx.kind(*p).contains("parameter_declaration")).collect();
            for (p, (_, rv)) in fparams.into_iter().zip(args) {
                let Some(ty_name) = p.field(self.cx.fields.ty).map(|t| self.cx.text(t).trim()) else { continue };
                let Some(position) = names.iter().position(|(n, is_type)| *is_type && n == ty_name) else { continue };
                if position < explicit.len() {
                    continue;
                }
                let pointer = p.field(self.cx.fields.declarator).is_some_and(|d| self.cx.kind(d) == "pointer_declarator");
                let ty = match (&rv.ty, pointer) {
                    (SrcType::Pointer(elem, _), true) => Some((**elem).clone()),
                    (t @ (SrcType::Scalar(_) | SrcType::Vector(..) | SrcType::Struct(_) | SrcType::Function), false) => Some(t.clone()),
                    _ => None,
                };
                if let Some(ty) = ty {
                    deduced.insert(ty_name.to_string(), template::TemplateArg::Type(ty));
                }
            }
        }
        template::bind(self.cx, params, &explicit, &deduced)
    }

    /// A call to a function without a body: conservative, one result per cell.
    pub fn opaque_call(&mut self, name: &str, args: Vec<RV>, span: Span) -> RV {
        let flat: Vec<Value> = args.iter().flat_map(|a| a.vals.iter().copied()).collect();
        let v = self.emit(Op::Call(lockstep_ir::Callee::Opaque(name.to_string()), flat), Type::I32, span);
        RV { vals: vec![v], ty: SrcType::Scalar(Type::I32) }
    }

    /// `cg::thread_block_tile<32> tile = …;` can parse as the comparison
    /// `(cg::thread_block_tile < 32) > (tile = …)`: the grammar does not know
    /// which names are templates, and we do. Declares the variable when the
    /// leftmost name is a type template; false when it is not one.
    fn template_declaration_read_as_comparison(&mut self, e: Node<'t>) -> bool {
        let op = |n: Node<'t>| n.field(self.cx.fields.operator).map(|o| self.cx.text(o));
        if self.cx.kind(e) != "binary_expression" || op(e) != Some(">") {
            return false;
        }
        let (Some(open), Some(rest)) = (e.field(self.cx.fields.left), e.field(self.cx.fields.right)) else { return false };
        if self.cx.kind(open) != "binary_expression" || op(open) != Some("<") {
            return false;
        }
        let (Some(template), Some(argument)) = (open.field(self.cx.fields.left), open.field(self.cx.fields.right)) else { return false };
        let name = self.cx.text(template).rsplit("::").next().unwrap_or_default().trim();
        let ty = if let Some(scope) = self.cx.d.sync_object_type(name) {
            SrcType::SyncObject(scope, self.cx.const_int(argument).map(|w| w.clamp(1, 1024) as u32))
        } else if let Some(&si) = self.cx.struct_names.get(name) {
            SrcType::Struct(si)
        } else {
            return false;
        };
        let (var, init) = match self.cx.kind(rest) {
            "identifier" => (rest, None),
            "assignment_expression" if op(rest) == Some("=") => match rest.field(self.cx.fields.left).filter(|l| self.cx.kind(*l) == "identifier") {
                Some(l) => (l, rest.field(self.cx.fields.right)),
                None => return false,
            },
            _ => return false,
        };
        let name = self.cx.text(var).to_string();
        let span = self.span(e);
        match ty {
            SrcType::SyncObject(scope, width) => {
                let from_init = init.map(|i| self.expr(i).ty);
                let width = match (width, from_init) {
                    (None, Some(SrcType::SyncObject(_, w))) => w,
                    _ => width,
                };
                self.bind(name, Binding::Sync(scope, width));
            }
            ty => {
                let vars = self.new_vars(&ty, &name);
                let place = Place::Vars { vars, ty };
                if let Some(init) = init {
                    let rv = self.expr(init);
                    self.assign(&place, &rv, span, Some(&name));
                }
                self.bind(name, Binding::Place(place));
            }
        }
        true
    }

    /// A construct the lowering cannot model: one `unsupported` note saying
    /// so, and an operation every analysis treats as reading and writing any
    /// memory (never a silently dropped access).
    pub fn unmodelled(&mut self, n: Node, what: String, operands: Vec<Value>, span: Span) -> Value {
        if !self.covered_by_undeclared_note(n) {
            self.diag("unsupported", n, format!("{what} is not modelled; lockstep assumes it may read and write any shared or device memory"));
        }
        self.emit(Op::Call(lockstep_ir::Callee::Unmodelled(what), operands), Type::I32, span)
    }

    /// Whether the file's note on undeclared names covers an access path
    /// (`data_a[i].scales[j]`, `blk.data[i]`): it starts from memory of a
    /// type the file does not declare, or from a name the file declares
    /// nowhere, which this records for the note.
    fn covered_by_undeclared_note(&mut self, n: Node) -> bool {
        let mut x = n;
        for _ in 0..64 {
            let next = match self.cx.kind(x) {
                "identifier" => {
                    let name = self.cx.text(x);
                    let declared = self.lookup(name).is_some()
                        || self.cx.globals.contains_key(name)
                        || self.cx.is_block_array(name)
                        || self.cx.d.builtin_var(name).is_some();
                    if !declared && !self.unknown_names.contains(name) {
                        let at = self.span(x);
                        self.cx.undeclared_name(name, at, crate::module::UndeclaredUse::Value);
                        return true;
                    }
                    return self.cx.unknown_typed.contains(name);
                }
                "field_expression" => {
                    let (Some(arg), Some(field)) = (x.field(self.cx.fields.argument), x.field(self.cx.fields.field)) else { return false };
                    if self.cx.kind(arg) == "identifier" && self.cx.unknown_typed.contains(&format!("{}.{}", self.cx.text(arg), self.cx.text(field))) {
                        return true;
                    }
                    arg
                }
                "subscript_expression" | "pointer_expression" => match x.field(self.cx.fields.argument) {
                    Some(a) => a,
                    None => return false,
                },
                "parenthesized_expression" => match x.named_child(0) {
                    Some(a) => a,
                    None => return false,
                },
                _ => return false,
            };
            x = next;
        }
        false
    }

    /// `clip(x)`: threads with a negative component of `x` stop here.
    pub fn discard_if_negative(&mut self, rv: RV, span: Span) {
        let mut any: Option<Value> = None;
        for v in rv.vals {
            let t = self.f.inst(v).ty;
            let zero = if t.is_float() { self.konst(t, Const::Float(0.0), span) } else { self.int(t, 0, span) };
            let neg = self.emit(Op::Cmp(CmpOp::Lt, v, zero), Type::Bool, span);
            any = Some(match any {
                None => neg,
                Some(a) => self.emit(Op::Binary(BinOp::LOr, a, neg), Type::Bool, span),
            });
        }
        let Some(cond) = any else { return };
        let kill = self.new_block(span);
        let cont = self.new_block(span);
        self.branch(cond, kill, cont, span, span);
        self.seal(kill);
        self.enter(kill);
        self.terminate(Terminator::Discard, span, Some(ExitKind::Discard));
        self.seal(cont);
        self.enter(cont);
    }

    /// Converts a value to bool for branching.
    pub fn emit_bool(&mut self, v: Value, span: Span) -> Value {
        let t = self.f.inst(v).ty;
        if t == Type::Bool {
            return v;
        }
        if let (true, Some(k)) = (t.is_int(), self.f.as_int(v)) {
            return self.konst(Type::Bool, Const::Bool(k != 0), span);
        }
        let zero = if t.is_float() { self.konst(t, Const::Float(0.0), span) } else { self.int(t, 0, span) };
        self.emit(Op::Cmp(CmpOp::Ne, v, zero), Type::Bool, span)
    }

    fn condition(&mut self, n: Node<'t>) -> Value {
        let span = self.span(n);
        let rv = self.expr(n);
        match rv.vals.first() {
            Some(&v) => self.emit_bool(v, span),
            None => self.konst(Type::Bool, Const::Bool(true), span),
        }
    }
}

/// Whether a parameter's declaration says `restrict` (`__restrict__`, `__restrict`).
fn is_restrict(cx: &Ctx, p: Node) -> bool {
    cx.text(p).split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).any(|w| matches!(w, "restrict" | "__restrict__" | "__restrict"))
}

/// The value an argument `&x` (or a pointer parameter bound to it) passes
/// when `x` lives in registers: no address, only the variable, which the
/// callee's [`Binding::PointsTo`] names.
pub fn register_address(pointee: &SrcType) -> RV {
    RV { vals: Vec::new(), ty: SrcType::Pointer(Box::new(pointee.clone()), MemSpace::Private) }
}

fn is_register_address(rv: &RV) -> bool {
    rv.vals.is_empty() && matches!(rv.ty, SrcType::Pointer(_, MemSpace::Private))
}

/// `if (x)`: tree-sitter-cpp wraps conditions in `condition_clause`.
fn unwrap_condition<'t>(cx: &Ctx, n: Node<'t>) -> Node<'t> {
    let mut n = n;
    for _ in 0..8 {
        match cx.kind(n) {
            "condition_clause" => match n.field(cx.fields.value).or_else(|| n.named_child(0)) {
                Some(v) => n = v,
                None => return n,
            },
            "parenthesized_expression" if n.named_child_count() == 1 => n = n.named_child(0).unwrap_or(n),
            _ => return n,
        }
    }
    n
}

/// Whether a name the lambda `n` uses is assigned (`=`, `+=`, `++`, …) in the
/// enclosing function after the lambda.
fn assigned_after<'t>(cx: &Ctx<'t>, n: Node<'t>) -> bool {
    let mut names: FxHashSet<&'t str> = FxHashSet::default();
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if cx.kind(x) == "identifier" {
            names.insert(cx.text(x));
        }
        let mut c = x.walk();
        stack.extend(x.named_children(&mut c));
    }
    let mut scope = n;
    while let Some(p) = scope.parent() {
        scope = p;
        if cx.kind(p) == "function_definition" {
            break;
        }
    }
    let mut stack = vec![scope];
    while let Some(x) = stack.pop() {
        if x.end_byte() <= n.end_byte() {
            continue;
        }
        let target = match cx.kind(x) {
            "assignment_expression" => x.field(cx.fields.left),
            "update_expression" => x.field(cx.fields.argument),
            _ => None,
        };
        if target.is_some_and(|t| names.contains(cx.text(t))) {
            return true;
        }
        let mut c = x.walk();
        stack.extend(x.named_children(&mut c));
    }
    false
}

pub fn find_parameter_list<'t>(cx: &Ctx, mut d: Node<'t>) -> Option<Node<'t>> {
    for _ in 0..32 {
        if cx.kind(d) == "function_declarator" {
            return d.field(cx.fields.parameters);
        }
        d = d.field(cx.fields.declarator).or_else(|| d.named_child(0))?;
    }
    None
}

fn has_reference(cx: &Ctx, d: Node) -> bool {
    cx.kind(d) == "reference_declarator"
}

pub(crate) fn declarator_name<'t>(cx: &Ctx<'t>, d: Node<'t>) -> Option<String> {
    let mut n = d;
    for _ in 0..32 {
        if cx.kind(n) == "identifier" {
            return Some(cx.text(n).to_string());
        }
        n = n.field(cx.fields.declarator).or_else(|| n.named_child(0))?;
    }
    None
}

/// The `: SV_Xxx` semantic of a parameter, if any.
fn semantic_of<'t>(cx: &Ctx<'t>, p: Node<'t>) -> Option<String> {
    let mut c = p.walk();
    for ch in p.named_children(&mut c) {
        if cx.kind(ch) == "semantics" || cx.kind(ch) == "semantic" {
            let text = cx.text(ch).trim_start_matches(':').trim();
            return Some(text.to_string());
        }
    }
    // A C++ attribute on the parameter (Metal `uint tid [[thread_position_in_grid]]`).
    let mut stack = vec![p];
    while let Some(n) = stack.pop() {
        if cx.kind(n) == "attribute" {
            if let Some(name) = n.field(cx.fields.name).map(|x| cx.text(x)).filter(|name| cx.d.semantic(name).is_some()) {
                return Some(name.to_string());
            }
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    // Fall back to the text after the last ':' (grammars differ in how they nest it).
    let text = cx.text(p);
    text.rsplit_once(':').map(|(_, s)| s.trim().to_string()).filter(|s| s.starts_with("SV_") || s.starts_with("sv_"))
}

/// Helper used by expression lowering for a binding of a module-level name.
pub fn global_binding<'t>(cx: &Ctx<'t>, name: &str) -> Option<GlobalBinding> {
    cx.globals.get(name).cloned()
}

pub fn mem_ref(space: MemSpace, root: Root, index: Value) -> MemRef {
    MemRef { space, root, index }
}

/// An array of pointers (of arrays of pointers) with every pointer into `space`;
/// None for any other type.
fn pointers_into(ty: &SrcType, space: MemSpace) -> Option<SrcType> {
    match ty {
        SrcType::Array(elem, n) => match &**elem {
            SrcType::Pointer(to, _) => Some(SrcType::Array(Box::new(SrcType::Pointer(to.clone(), space)), *n)),
            inner @ SrcType::Array(..) => Some(SrcType::Array(Box::new(pointers_into(inner, space)?), *n)),
            _ => None,
        },
        _ => None,
    }
}
