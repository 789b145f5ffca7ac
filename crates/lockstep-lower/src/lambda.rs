//! Kernels written as lambdas (C++ AMP): each lambda handed to the dialect's
//! `lambda_launcher` (`parallel_for_each(e.tile<16, 16>(), [=](tiled_index<16, 16> t)
//! restrict(amp) {…})`) is an entry point. Its parameter is the thread's index;
//! what it captures from the enclosing function are its arguments: device
//! views (`array_view`, `array`) are device buffers indexed row-major over the
//! extents they were constructed with, other values are uniform arguments,
//! and `const` locals with constant values are constants.

use crate::module::{configured_shape, function_name, Ctx, GlobalBinding};
use crate::srctype::{SrcType, StructDef};
use crate::stmt::{global_binding, DeviceView, FnLowerer, Place, RV};
use lockstep_ir::{BinOp, Builtin, EntryInfo, Function, MemSpace, Op, Type, Value};
use lockstep_source::Span;
use lockstep_syntax::{Node, NodeFields};
use rustc_hash::{FxHashMap, FxHashSet};

/// The lambdas launched in a function's body, in text order.
pub fn launched_lambdas<'t>(ctx: &Ctx<'t>, def: Node<'t>) -> Vec<Node<'t>> {
    let Some(launcher) = ctx.d.lambda_launcher else { return Vec::new() };
    let mut found = Vec::new();
    let mut stack: Vec<Node<'t>> = def.field(ctx.fields.body).into_iter().collect();
    while let Some(n) = stack.pop() {
        if ctx.kind(n) == "call_expression" {
            let callee = n.field(ctx.fields.function).map(|f| ctx.text(f).rsplit("::").next().unwrap_or_default().trim());
            let last = n.field(ctx.fields.arguments).and_then(|a| a.named_child(u32::try_from(a.named_child_count().checked_sub(1)?).ok()?));
            if let (Some(true), Some(lambda)) = (callee.map(|c| c == launcher), last.filter(|l| ctx.kind(*l) == "lambda_expression")) {
                found.push(lambda);
                continue;
            }
        }
        let mut c = n.walk();
        let kids: Vec<_> = n.named_children(&mut c).collect();
        stack.extend(kids.into_iter().rev());
    }
    found
}

/// A variable of the enclosing function a kernel lambda may capture.
#[derive(Clone, Copy)]
struct HostVariable<'t> {
    /// Its type node.
    ty: Node<'t>,
    /// Its declarator (with the constructor arguments, if any).
    declarator: Node<'t>,
    is_const: bool,
}

/// The function definition a node is in.
fn enclosing_function<'t>(ctx: &Ctx<'t>, n: Node<'t>) -> Option<Node<'t>> {
    let mut p = n.parent();
    while let Some(x) = p {
        if ctx.kind(x) == "function_definition" {
            return Some(x);
        }
        p = x.parent();
    }
    None
}

/// The name a declarator declares.
fn declared_name<'t>(ctx: &Ctx<'t>, d: Node<'t>) -> Option<&'t str> {
    let mut n = d;
    for _ in 0..32 {
        if matches!(ctx.kind(n), "identifier" | "field_identifier") {
            return Some(ctx.text(n));
        }
        n = n.field(ctx.fields.declarator).or_else(|| n.named_child(0))?;
    }
    None
}

/// The parameters and locals of `host` declared before `lambda`, by name (a later declaration wins).
fn host_variables<'t>(ctx: &Ctx<'t>, host: Node<'t>, lambda: Node<'t>) -> FxHashMap<&'t str, HostVariable<'t>> {
    let mut vars = FxHashMap::default();
    let mut stack = vec![host];
    let mut order = Vec::new();
    while let Some(n) = stack.pop() {
        if n.id() == lambda.id() || n.start_byte() >= lambda.start_byte() {
            continue;
        }
        if matches!(ctx.kind(n), "declaration" | "parameter_declaration") {
            order.push(n);
        }
        let mut c = n.walk();
        let kids: Vec<_> = n.named_children(&mut c).collect();
        stack.extend(kids.into_iter().rev());
    }
    for decl in order {
        let Some(ty) = decl.field(ctx.fields.ty) else { continue };
        let is_const = crate::module::decl_words(ctx, decl).iter().any(|w| *w == "const" || *w == "constexpr");
        let mut c = decl.walk();
        for d in decl.fields(ctx.fields.declarator, &mut c) {
            if let Some(name) = declared_name(ctx, d) {
                vars.insert(name, HostVariable { ty, declarator: d, is_const });
            }
        }
    }
    vars
}

/// Identifier-like names used under `n` (the grammar reads `a(n, n, v)` as a
/// declaration of a function whose parameter types are `n` and `v`).
fn names_under<'t>(ctx: &Ctx<'t>, n: Node<'t>, out: &mut Vec<&'t str>) {
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if matches!(ctx.kind(x), "identifier" | "type_identifier") {
            out.push(ctx.text(x));
        }
        let mut c = x.walk();
        stack.extend(x.named_children(&mut c));
    }
}

/// Names the lambda declares itself (its parameters and locals).
fn names_declared_in<'t>(ctx: &Ctx<'t>, lambda: Node<'t>) -> FxHashSet<&'t str> {
    let mut out = FxHashSet::default();
    let mut stack = vec![lambda];
    while let Some(x) = stack.pop() {
        if matches!(ctx.kind(x), "declaration" | "parameter_declaration") {
            let mut c = x.walk();
            for d in x.fields(ctx.fields.declarator, &mut c) {
                out.extend(declared_name(ctx, d));
            }
        }
        let mut c = x.walk();
        stack.extend(x.named_children(&mut c));
    }
    out
}

/// The template name and argument nodes of a (possibly qualified) template type.
fn template_parts<'t>(ctx: &Ctx<'t>, ty: Node<'t>) -> Option<(&'t str, Vec<Node<'t>>)> {
    let mut t = ty;
    while matches!(ctx.kind(t), "qualified_identifier" | "qualified_type_identifier") {
        t = t.field(ctx.fields.name)?;
    }
    if ctx.kind(t) != "template_type" {
        return None;
    }
    let name = ctx.text(t.field(ctx.fields.name)?).trim();
    let args = t.field(ctx.fields.arguments)?;
    let mut c = args.walk();
    let nodes = args.named_children(&mut c).collect();
    Some((name, nodes))
}

/// The arguments a declarator constructs its variable with: `a(n, n, v)` or `a{…}`.
fn constructor_arguments<'t>(ctx: &Ctx<'t>, d: Node<'t>) -> Vec<Node<'t>> {
    let list = match ctx.kind(d) {
        "init_declarator" => d.field(ctx.fields.value),
        "function_declarator" => d.field(ctx.fields.parameters),
        _ => None,
    };
    let Some(list) = list.filter(|l| matches!(ctx.kind(*l), "argument_list" | "initializer_list" | "parameter_list")) else {
        return Vec::new();
    };
    let mut c = list.walk();
    list.named_children(&mut c).collect()
}

/// The arguments giving a view's extents: the first `rank` of its
/// constructor's, or those of the `extent<N>` it was built from.
fn extent_arguments<'t>(ctx: &Ctx<'t>, h: HostVariable<'t>, rank: usize, host_vars: &FxHashMap<&'t str, HostVariable<'t>>) -> Vec<Node<'t>> {
    let mut args = constructor_arguments(ctx, h.declarator);
    let extent_variable = args.first().and_then(|&a| host_vars.get(ctx.text(a).trim()));
    if let Some(e) = extent_variable.filter(|e| template_parts(ctx, e.ty).is_some_and(|(t, _)| ctx.d.index_types.contains(&t))) {
        args = constructor_arguments(ctx, e.declarator);
    }
    args.truncate(rank);
    args
}

/// A constructor argument's constant value (`a(n, n, v)` reads as parameters of type `n`).
fn constant_argument(ctx: &Ctx, arg: Node) -> Option<i64> {
    match ctx.kind(arg) {
        "parameter_declaration" => ctx.const_int(arg.field(ctx.fields.ty)?),
        _ => ctx.const_int(arg),
    }
}

/// The groups a tiled launch runs, where its domain's extents are constants:
/// `v.extent.tile<…>()` of a view, or `e.tile<…>()` of an `extent<N>`.
fn launch_grid<'t>(ctx: &Ctx<'t>, launch: Node<'t>, group_size: [u32; 3], rank: usize, host_vars: &FxHashMap<&'t str, HostVariable<'t>>) -> Option<[u32; 3]> {
    let h = *host_vars.get(tiled_domain(ctx, launch)?)?;
    let args = match template_parts(ctx, h.ty) {
        Some((t, _)) if ctx.d.index_types.contains(&t) => constructor_arguments(ctx, h.declarator),
        Some((t, _)) if ctx.d.device_views.contains(&t) => extent_arguments(ctx, h, rank, host_vars),
        _ => return None,
    };
    if args.len() < rank {
        return None;
    }
    let mut grid = [1u32; 3];
    for (d, &a) in args.iter().take(rank).enumerate() {
        let extent = u32::try_from(constant_argument(ctx, a)?).ok()?;
        let axis = rank - 1 - d;
        grid[axis] = extent.div_ceil(group_size[axis]).max(1);
    }
    Some(grid)
}

/// The variable a tiled launch's domain is the extent of: `v` in
/// `v.extent.tile<…>()`, `e` in `e.tile<…>()`.
fn tiled_domain<'t>(ctx: &Ctx<'t>, launch: Node<'t>) -> Option<&'t str> {
    let tile_call = launch_domain(ctx, launch)?;
    let mut domain = tile_call.field(ctx.fields.function)?.field(ctx.fields.argument)?;
    if ctx.kind(domain) == "field_expression" && domain.field(ctx.fields.field).is_some_and(|f| ctx.text(f) == "extent") {
        domain = domain.field(ctx.fields.argument)?;
    }
    Some(ctx.text(domain).trim())
}

/// The group size `tile<A, B, C>` gives, x being the last (fastest) dimension.
fn tile_group_size(ctx: &Ctx, dims: &[Node]) -> Option<[u32; 3]> {
    if dims.is_empty() || dims.len() > 3 {
        return None;
    }
    let mut size = [1u32; 3];
    for (d, &n) in dims.iter().enumerate() {
        let v = ctx.const_int(n)?;
        size[dims.len() - 1 - d] = u32::try_from(v).ok()?.max(1);
    }
    Some(size)
}

/// The domain a launch runs over: the argument before the lambda
/// (`parallel_for_each(view, domain, lambda)` names an accelerator view first).
fn launch_domain<'t>(ctx: &Ctx<'t>, launch: Node<'t>) -> Option<Node<'t>> {
    let args = launch.field(ctx.fields.arguments)?;
    args.named_child(u32::try_from(args.named_child_count().checked_sub(2)?).ok()?)
}

/// The `tile<…>` arguments of a launch's domain (`c.extent.tile<16, 16>()`).
fn launch_tile<'t>(ctx: &Ctx<'t>, launch: Node<'t>) -> Option<Vec<Node<'t>>> {
    let domain = launch_domain(ctx, launch)?;
    let mut stack = vec![domain];
    while let Some(n) = stack.pop() {
        if matches!(ctx.kind(n), "template_method" | "template_function") && n.field(ctx.fields.name).is_some_and(|x| ctx.text(x) == "tile") {
            let args = n.field(ctx.fields.arguments)?;
            let mut c = args.walk();
            return Some(args.named_children(&mut c).collect());
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    None
}

/// What the lambda's parameter is: a tiled index of a rank (with the tile's
/// dimensions), or a plain index of a rank.
struct IndexParameter<'t> {
    name: String,
    rank: usize,
    tile: Option<Vec<Node<'t>>>,
}

fn index_parameter<'t>(ctx: &Ctx<'t>, lambda: Node<'t>) -> Option<IndexParameter<'t>> {
    let params = lambda.field(ctx.fields.declarator)?.field(ctx.fields.parameters)?;
    let p = params.named_child(0)?;
    let name = declared_name(ctx, p.field(ctx.fields.declarator)?)?.to_string();
    let (template, args) = template_parts(ctx, p.field(ctx.fields.ty)?)?;
    if Some(template) == ctx.d.tiled_index_type {
        return Some(IndexParameter { name, rank: args.len().clamp(1, 3), tile: Some(args) });
    }
    if ctx.d.index_types.contains(&template) {
        let rank = args.first().and_then(|&a| ctx.const_int(a)).unwrap_or(1).clamp(1, 3) as usize;
        return Some(IndexParameter { name, rank, tile: None });
    }
    None
}

/// The kernel's name: the enclosing function's, numbered from the second lambda it launches.
pub fn kernel_name(ctx: &Ctx, lambda: Node) -> String {
    let Some(host) = enclosing_function(ctx, lambda) else { return "lambda".into() };
    let base = function_name(ctx, host).unwrap_or_else(|| "lambda".into());
    let nth = launched_lambdas(ctx, host).iter().position(|l| l.id() == lambda.id()).unwrap_or(0);
    if nth == 0 {
        base
    } else {
        format!("{base}#{}", nth + 1)
    }
}

/// Lowers one launched lambda to a kernel.
pub fn lower_lambda_kernel<'t>(ctx: &mut Ctx<'t>, lambda: Node<'t>) -> Option<Function> {
    let host = enclosing_function(ctx, lambda)?;
    let launch = lambda.parent()?.parent()?;
    let name = kernel_name(ctx, lambda);
    let span = ctx.span(lambda);
    let Some(index) = index_parameter(ctx, lambda) else {
        ctx.diags.push(
            lockstep_diag::Diagnostic::new("unsupported", lockstep_diag::Severity::Warning, span, format!("kernel `{name}` was not checked"))
                .with_primary_label("its parameter is not an `index<N>` or a `tiled_index<…>`"),
        );
        return None;
    };
    // A lambda in a function template is checked once, its parameters generic.
    if let Some(params) = crate::template::template_parameters(ctx, host) {
        ctx.template_args = crate::template::bind(ctx, params, &[], &Default::default());
    }
    let host_vars = host_variables(ctx, host, lambda);
    // `const` locals with constant values are constants while the kernel is lowered
    // (tile sizes, `tile_static` array bounds).
    let mut shadowed = Vec::new();
    for (&var, h) in &host_vars {
        let init = (ctx.kind(h.declarator) == "init_declarator").then(|| h.declarator.field(ctx.fields.value)).flatten();
        if let (true, Some(v)) = (h.is_const, init.and_then(|i| ctx.const_int(i))) {
            shadowed.push((var.to_string(), ctx.globals.insert(var.to_string(), GlobalBinding::Int(v, Type::I32))));
        }
    }
    let group_size = index.tile.as_ref().and_then(|_| launch_tile(ctx, launch)).and_then(|t| tile_group_size(ctx, &t)).or_else(|| tile_group_size(ctx, index.tile.as_deref()?));
    let mut info = EntryInfo { wave_size: ctx.d.wave_size, group_size, ..EntryInfo::default() };
    if let Some(gs) = group_size {
        info.group_extent = gs.map(Some);
        if let Some(grid) = launch_grid(ctx, launch, gs, index.rank, &host_vars) {
            info.grid_size = grid.map(Some);
        }
    }
    configured_shape(ctx, Some(&name), &mut info);
    // A tiled launch runs exactly its domain's extent, which its tiles divide
    // (C++ AMP refuses a launch they do not): the domain view's extents are the grid's.
    let domain = group_size.filter(|_| index.tile.is_some()).and_then(|gs| Some((tiled_domain(ctx, launch)?, gs)));
    let mut l = FnLowerer::start(ctx, name, info, lambda);
    l.bind_captures(lambda, &host_vars, domain);
    l.bind_index_parameter(&index, span);
    if let Some(body) = lambda.field(l.cx.fields.body) {
        l.stmt(body);
    }
    let f = l.finish(lambda);
    ctx.template_args.clear();
    for (var, previous) in shadowed {
        match previous {
            Some(p) => ctx.globals.insert(var, p),
            None => ctx.globals.remove(&var),
        };
    }
    f
}

impl<'t> FnLowerer<'_, 't> {
    /// Binds what the lambda uses of its enclosing function, as kernel arguments in declaration order.
    fn bind_captures(&mut self, lambda: Node<'t>, host_vars: &FxHashMap<&'t str, HostVariable<'t>>, domain: Option<(&str, [u32; 3])>) {
        let Some(body) = lambda.field(self.cx.fields.body) else { return };
        let mut used = Vec::new();
        names_under(self.cx, body, &mut used);
        let own = names_declared_in(self.cx, lambda);
        let mut captured: Vec<&'t str> = used.into_iter().filter(|n| !own.contains(n) && host_vars.contains_key(n)).collect();
        let used_by_body: FxHashSet<&'t str> = captured.iter().copied().collect();
        // A view's extents may name variables the body does not.
        let mut extent_names = Vec::new();
        for name in &captured {
            let h = host_vars[name];
            if let Some((_, rank)) = self.view_type(h.ty) {
                // The first extent is read only for `v.extent`.
                let skip = if reads_extent(self.cx, body, name) { 0 } else { 1 };
                for arg in extent_arguments(self.cx, h, rank, host_vars).into_iter().skip(skip) {
                    names_under(self.cx, arg, &mut extent_names);
                }
            }
        }
        captured.extend(extent_names.into_iter().filter(|n| host_vars.contains_key(n)));
        let mut seen = FxHashSet::default();
        captured.retain(|n| seen.insert(*n));
        captured.sort_by_key(|n| host_vars[n].declarator.start_byte());
        let mut views = Vec::new();
        for name in captured {
            let h = host_vars[name];
            let span = self.cx.span(h.declarator);
            if let Some((elem, rank)) = self.view_type(h.ty) {
                let pointer = SrcType::Pointer(Box::new(elem), MemSpace::Device);
                let vals = self.argument_values(name, &pointer, span);
                self.bind_values(name.to_string(), pointer, &vals);
                views.push((name, h, rank));
                continue;
            }
            if global_binding(self.cx, name).is_some() {
                // A constant (see `lower_lambda_kernel`).
                continue;
            }
            // Host containers (`std::vector<float>`) never reach the accelerator.
            let host_template = template_parts(self.cx, h.ty).is_some_and(|(t, _)| !self.cx.d.index_types.contains(&t));
            let ty = self.cx.resolve_type(h.ty).filter(|_| !host_template);
            let ty = ty.and_then(|ty| self.cx.declarator(h.declarator, ty, MemSpace::Unknown)).map(|(_, t)| t);
            match ty {
                Some(ty @ (SrcType::Scalar(_) | SrcType::Vector(..) | SrcType::Matrix(..) | SrcType::Struct(_))) => {
                    let vals = self.argument_values(name, &ty, span);
                    self.bind_values(name.to_string(), ty, &vals);
                }
                _ if used_by_body.contains(name) => {
                    let message = format!("the captured `{name}` is not a value or view lockstep models; the kernel's uses of it are unknown values");
                    self.diag("unsupported", h.declarator, message);
                }
                _ => {}
            }
        }
        // Extents are read once every captured scalar they may name is bound.
        for (name, h, rank) in views {
            let shape_read = reads_extent(self.cx, body, name);
            let tiles = domain.filter(|d| d.0 == name).map(|d| d.1);
            let extents = self.view_extents(name, h, rank, shape_read, host_vars, tiles);
            self.views.insert(name.to_string(), DeviceView { extents });
        }
    }

    /// The element type and rank of a device view type (`array_view<const float, 2>`).
    fn view_type(&mut self, ty: Node<'t>) -> Option<(SrcType, usize)> {
        let (template, args) = template_parts(self.cx, ty)?;
        if !self.cx.d.device_views.contains(&template) {
            return None;
        }
        let elem = args.first().and_then(|&a| {
            let inner = if self.cx.kind(a) == "type_descriptor" { a.field(self.cx.fields.ty)? } else { a };
            self.cx.resolve_type(inner)
        })?;
        let rank = args.get(1).map_or(Some(1), |&a| self.cx.const_int(a))?;
        Some((elem, rank.clamp(1, 3) as usize))
    }

    /// A view's extents from its constructor's arguments or the `extent<N>` it
    /// was built from; an extent lockstep cannot read is an argument of its own
    /// (`c.extent[1]`), or for the view a tiled launch runs over (`tiles`,
    /// its group size), the groups along its axis times the tile. The first
    /// is read only when `with_first`: row-major linearization does not need it.
    fn view_extents(&mut self, name: &str, h: HostVariable<'t>, rank: usize, with_first: bool, host_vars: &FxHashMap<&'t str, HostVariable<'t>>, tiles: Option<[u32; 3]>) -> Vec<Option<Value>> {
        let args = extent_arguments(self.cx, h, rank, host_vars);
        let span = self.cx.span(h.declarator);
        (0..rank)
            .map(|d| {
                if d == 0 && !with_first {
                    return None;
                }
                if let Some(value) = args.get(d).and_then(|&a| self.extent_value(a, span)) {
                    // The domain's extent from a host value: its tiles along the axis count the groups.
                    if let (Some(gs), &Op::Param(param)) = (tiles, &self.f.inst(value).op) {
                        let axis = rank - 1 - d;
                        if let Some(entry) = self.f.entry.as_mut() {
                            entry.grid_count_params[axis] = Some(lockstep_ir::GroupCount { param, add: 0, div: gs[axis] });
                        }
                    }
                    return Some(value);
                }
                Some(match tiles {
                    Some(gs) => {
                        let axis = rank - 1 - d;
                        let groups = self.builtin(Builtin::NumGroups(axis as u8), span);
                        let tile = self.int(Type::U32, i64::from(gs[axis]), span);
                        let threads = self.emit(Op::Binary(BinOp::Mul, groups, tile), Type::U32, span);
                        self.convert(threads, Type::I32, span)
                    }
                    None => self.argument_values(&format!("{name}.extent[{d}]"), &SrcType::Scalar(Type::I32), span)[0],
                })
            })
            .collect()
    }

    /// `v.extent` or `v.get_extent()` of a captured view: its extents as an `extent<N>`.
    pub(crate) fn view_shape(&mut self, view: Node<'t>, n: Node<'t>, span: Span) -> Option<RV> {
        if self.cx.kind(view) != "identifier" {
            return None;
        }
        let extents = self.views.get(self.cx.text(view))?.extents.clone();
        let vals: Option<Vec<Value>> = extents.into_iter().collect();
        match vals {
            Some(vals) => Some(RV { ty: SrcType::Vector(Type::I32, vals.len() as u32), vals }),
            None => {
                let v = self.unmodelled(n, format!("the extent of `{}`", self.cx.text(view)), Vec::new(), span);
                Some(self.scalar(v))
            }
        }
    }

    /// One constructor argument as an integer: a constant, a captured variable, or an expression of them.
    fn extent_value(&mut self, arg: Node<'t>, span: Span) -> Option<Value> {
        // In `a(n, n, v)` read as a declaration, each argument is a parameter of type `n`.
        let node = match self.cx.kind(arg) {
            "parameter_declaration" => arg.field(self.cx.fields.ty)?,
            _ => arg,
        };
        if let Some(k) = self.cx.const_int(node) {
            return Some(self.int(Type::I32, k, span));
        }
        // Only what the kernel has: constants and captured variables.
        let mut names = Vec::new();
        names_under(self.cx, node, &mut names);
        if names.iter().any(|n| self.lookup(n).is_none() && !self.cx.globals.contains_key(*n)) {
            return None;
        }
        let rv = match self.cx.kind(node) {
            "type_identifier" => self.identifier(node, span),
            _ => self.expr(node),
        };
        let v = *rv.vals.first()?;
        Some(self.convert(v, Type::I32, span))
    }

    /// Binds the lambda's index parameter: a tiled index (`t.global`, `t.local`,
    /// `t.tile`, `t.tile_origin`, each an `index<N>`) or a plain index (the global position).
    fn bind_index_parameter(&mut self, index: &IndexParameter<'t>, span: Span) {
        let rank = index.rank;
        // Dimension 0 is the slowest: it runs along the last axis used.
        let axis = |d: usize| (rank - 1 - d) as u8;
        let global = |l: &mut Self, d: usize| -> Value {
            let g = l.builtin(Builtin::GroupId(axis(d)), span);
            let s = l.builtin(Builtin::GroupSize(axis(d)), span);
            let origin = l.emit(Op::Binary(BinOp::Mul, g, s), Type::U32, span);
            let local = l.builtin(Builtin::LocalId(axis(d)), span);
            let v = l.emit(Op::Binary(BinOp::Add, origin, local), Type::U32, span);
            l.convert(v, Type::I32, span)
        };
        if index.tile.is_none() {
            let vals: Vec<Value> = (0..rank).map(|d| global(self, d)).collect();
            self.bind_values(index.name.clone(), SrcType::Vector(Type::I32, rank as u32), &vals);
            return;
        }
        let mut vals = Vec::with_capacity(4 * rank);
        vals.extend((0..rank).map(|d| global(self, d)));
        for d in 0..rank {
            let v = self.builtin(Builtin::LocalId(axis(d)), span);
            vals.push(self.convert(v, Type::I32, span));
        }
        for d in 0..rank {
            let v = self.builtin(Builtin::GroupId(axis(d)), span);
            vals.push(self.convert(v, Type::I32, span));
        }
        for d in 0..rank {
            let g = self.builtin(Builtin::GroupId(axis(d)), span);
            let s = self.builtin(Builtin::GroupSize(axis(d)), span);
            let v = self.emit(Op::Binary(BinOp::Mul, g, s), Type::U32, span);
            vals.push(self.convert(v, Type::I32, span));
        }
        let ty = tiled_index_struct(self.cx, rank);
        self.bind_values(index.name.clone(), ty, &vals);
    }

    /// An element of a captured device view: `v[idx]` with an `index<N>`, `v[i][j]`
    /// or `v(i, j)`; None when `view` does not name one.
    pub(crate) fn view_element(&mut self, view: Node<'t>, indices: &[Node<'t>], call: Node<'t>, span: Span) -> Option<Place> {
        if self.cx.kind(view) != "identifier" {
            return None;
        }
        let name = self.cx.text(view);
        let extents: Vec<Value> = self.views.get(name)?.extents.iter().skip(1).flatten().copied().collect();
        let mut components = Vec::new();
        for &i in indices {
            let rv = self.expr(i);
            components.extend(rv.vals);
        }
        if components.len() != extents.len() + 1 {
            // A projection (`v[i]` of a 2-dimensional view) is not modelled.
            let what = format!("indexing the {}-dimensional view `{name}` with {} components", extents.len() + 1, components.len());
            self.unmodelled(call, what, components, span);
            return None;
        }
        let mut linear = self.convert(components[0], Type::I32, span);
        for (&extent, &c) in extents.iter().zip(&components[1..]) {
            let scaled = self.emit(Op::Binary(BinOp::Mul, linear, extent), Type::I32, span);
            let c = self.convert(c, Type::I32, span);
            linear = self.emit(Op::Binary(BinOp::Add, scaled, c), Type::I32, span);
        }
        let pointer = self.identifier(view, span);
        self.pointer_index(pointer, linear, span)
    }
}

/// Whether the kernel body reads `view`'s shape (`view.extent`, `view.get_extent()`).
fn reads_extent(ctx: &Ctx, body: Node, view: &str) -> bool {
    let mut stack = vec![body];
    while let Some(n) = stack.pop() {
        if ctx.kind(n) == "field_expression"
            && n.field(ctx.fields.argument).is_some_and(|a| ctx.text(a) == view)
            && n.field(ctx.fields.field).is_some_and(|f| matches!(ctx.text(f), "extent" | "get_extent"))
        {
            return true;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    false
}

/// The struct a tiled index of `rank` is lowered to: `global`, `local`, `tile`
/// and `tile_origin`, each an `index<rank>`.
pub(crate) fn tiled_index_struct(ctx: &mut Ctx, rank: usize) -> SrcType {
    let name = format!("tiled_index<{rank}>");
    if let Some(&i) = ctx.struct_names.get(&name) {
        return SrcType::Struct(i);
    }
    let index = SrcType::Vector(Type::I32, rank as u32);
    let fields = ["global", "local", "tile", "tile_origin"].iter().map(|f| (f.to_string(), index.clone())).collect();
    ctx.structs.push(StructDef { fields, union: false });
    ctx.struct_names.insert(name, ctx.structs.len() - 1);
    SrcType::Struct(ctx.structs.len() - 1)
}
