//! Module-level lowering: types, globals, cbuffers, resources, and kernels.

use crate::dialect::{Dialect, EntryMarker, ResourceKind, BARRIER_FLAG_NAMES};
use crate::srctype::{parse_numeric, SrcType, StructDef};
use crate::stmt::{declarator_name, FnLowerer};
use crate::template::{self, Bindings, TemplateArg};
use crate::{Compiled, Lang, Options, SpanMap};
use lockstep_diag::{Diagnostic, Severity};
use lockstep_ir::{Const, EntryInfo, Global, GlobalId, GlobalKind, MemSpace, Module, Type};
use lockstep_source::Span;
use lockstep_syntax::{Fields, Node, NodeFields, Syntax, Tree};
use rustc_hash::{FxHashMap, FxHashSet};
use std::borrow::Cow;

/// What a module-level name stands for.
#[derive(Clone, Debug)]
pub enum GlobalBinding {
    /// Memory: a group-shared array, a device variable, a cbuffer field.
    Mem { global: GlobalId, ty: SrcType },
    /// An HLSL resource (UAV, SRV, texture, `ConstantBuffer<T>`).
    Resource { global: GlobalId, kind: ResourceKind, elem: SrcType, writable: bool },
    /// A compile-time integer constant (`static const uint N = 64;`, enumerators).
    Int(i64, Type),
    /// A variable each invocation has its own of, set by its initializer
    /// before the entry point runs (a GLSL global without a qualifier; its
    /// declaration is in [`Ctx::per_thread_globals`]).
    PerThread,
    /// A pipeline constant that the group size names (GLSL `local_size_x_id`):
    /// the group's extent on `axis`; `default` only sizes arrays.
    GroupExtent { axis: u8, default: Option<i64> },
}

/// A static constant of one instantiation: the class definition (node id),
/// the member, and the value arguments it is read with.
type StaticKey = (usize, String, Vec<(String, i64)>);

/// Static constants read per file at most; past this they are unknown (a
/// class template recursing on an ever-growing argument).
const MAX_STATIC_VALUES: usize = 10_000;

/// The longest source excerpt a message quotes.
const EXCERPT_CHARS: usize = 80;

/// The note on undeclared names labels the first use of at most this many
/// of them besides the first (its message counts the rest).
const MAX_UNDECLARED_LABELS: usize = 16;

/// Nesting deeper than this is skipped with a diagnostic instead of recursing.
pub const MAX_NESTING: u32 = 400;

pub struct Ctx<'t> {
    pub src: &'t str,
    pub spans: &'t dyn SpanMap,
    pub d: &'static Dialect,
    syntax: &'static Syntax,
    /// The grammar's field ids.
    pub fields: Fields,
    pub module: Module,
    pub diags: Vec<Diagnostic>,
    pub structs: Vec<StructDef>,
    pub struct_names: FxHashMap<String, usize>,
    pub typedefs: FxHashMap<String, SrcType>,
    pub globals: FxHashMap<String, GlobalBinding>,
    /// Function definitions by name, for inlining at call sites.
    pub funcs: FxHashMap<String, Vec<Node<'t>>>,
    /// Member functions with bodies, by struct and name.
    pub methods: FxHashMap<(usize, String), Vec<Node<'t>>>,
    /// Class template instances laid out with their arguments, by the
    /// definition and arguments that chose them: the struct, and the
    /// definition and bindings its member functions run with.
    class_instances: FxHashMap<(usize, String), usize>,
    pub instance_bindings: FxHashMap<usize, (Node<'t>, Bindings)>,
    /// The argument lists (normalized) the kernel instantiation being
    /// lowered stands for: its launches are the ones written with them.
    pub instance_written: Vec<String>,
    /// The template parameters of the code being lowered, bound.
    pub template_args: Bindings,
    /// Integer constants declared in the function scopes in view
    /// (`constexpr int BK = 64;`): array sizes and other constant
    /// expressions use them. Kept by the function lowerer.
    pub local_ints: FxHashMap<String, i64>,
    /// Explicit instantiations (`template __global__ void k<float, 16>(…);`)
    /// by template name: their argument lists.
    pub instantiations: FxHashMap<String, Vec<Node<'t>>>,
    pub options: &'t Options,
    /// The kernels' launches found in the file's host code.
    pub launches: &'t LaunchTable,
    /// While an array's length is evaluated: pipeline constants take their defaults.
    sizing_array: std::cell::Cell<bool>,
    /// Static constants already read, by class definition, member and
    /// argument values (None while one is being read, which cuts cycles):
    /// recursive class templates (`fib<n-1>::value + fib<n-2>::value`)
    /// read each instantiation once.
    static_values: std::cell::RefCell<FxHashMap<StaticKey, Option<i64>>>,
    /// Per-invocation globals ([`GlobalBinding::PerThread`]): name, type,
    /// initializer and place in the source.
    pub per_thread_globals: Vec<(String, SrcType, Option<Node<'t>>, Span)>,
    /// Class definitions by name, for their static constant members: a
    /// class template's primary definition and its specializations.
    pub classes: FxHashMap<String, Vec<Node<'t>>>,
    /// Explicit specializations of function templates (`template <> float
    /// f<float>(float)`), by the template's name.
    pub function_specializations: FxHashMap<String, Vec<Node<'t>>>,
    /// The functions named as values ([`SrcType::Function`] values index it).
    pub function_values: Vec<crate::function_value::FunctionValue>,
    /// Names used but declared nowhere in the file, with their first use
    /// and whether they name a type: one note for the file names them all
    /// ([`Ctx::undeclared_note`]).
    undeclared: Vec<(String, Span, UndeclaredUse)>,
    /// The names in `undeclared`, for the check at each use.
    undeclared_seen: FxHashSet<String>,
    /// Memory declared with a type the file declares nowhere, by the name
    /// its accesses start from: the note on the type covers them.
    pub unknown_typed: FxHashSet<String>,
    /// Names of arrays of interface blocks (`bufs` of `buffer B { … } bufs[4];`).
    block_arrays: FxHashSet<String>,
}

/// A class template's argument, as specializations are chosen by it.
#[derive(Clone, Debug, PartialEq)]
pub enum ClassArgument {
    Value(i64),
    Type(SrcType),
}

impl ClassArgument {
    pub fn template_arg(self) -> TemplateArg {
        match self {
            ClassArgument::Value(v) => TemplateArg::Int(v),
            ClassArgument::Type(t) => TemplateArg::Type(t),
        }
    }
}

/// Which definition of a class template its arguments chose, and how its
/// parameters are bound.
pub enum ClassChoice {
    /// The primary template: its arguments in order (None: one lockstep
    /// cannot tell, left generic).
    Primary(Vec<Option<ClassArgument>>),
    /// A specialization: its own parameters, bound by matching its pattern.
    Specialization(FxHashMap<String, ClassArgument>),
}

/// A comparison of a launch's arguments, its operands named by argument position.
fn arg_relation(r: &lockstep_syntax::ArgRelation) -> lockstep_ir::ArgRelation {
    use lockstep_ir::{ArgComparison, ArgOperand};
    use lockstep_syntax::{Comparison, Operand};
    let operand = |o: Operand| match o {
        Operand::Argument(a) => ArgOperand::Param(a),
        Operand::Constant(c) => ArgOperand::Constant(c),
        Operand::Quotient(a, b) => ArgOperand::Quotient(a, b),
    };
    let cmp = match r.cmp {
        Comparison::Equal => ArgComparison::Equal,
        Comparison::AtMost => ArgComparison::AtMost,
        Comparison::Below => ArgComparison::Below,
    };
    lockstep_ir::ArgRelation { lhs: operand(r.lhs), cmp, rhs: operand(r.rhs) }
}

/// Launches by kernel name.
pub type LaunchTable = FxHashMap<String, Vec<lockstep_ir::Launch>>;

/// The launches in a file's host code; only dialects with host code have any.
/// `text` is the preprocessed text before host bodies are cut, `spans` its map.
pub fn launch_table(lang: Lang, text: &str, spans: &dyn SpanMap) -> LaunchTable {
    let mut table = LaunchTable::default();
    if lang.c_family().0.host_code {
        for l in lockstep_syntax::kernel_launches(text) {
            let span = spans.span(l.range.start as u32, l.range.end as u32);
            let launch = |template_args, derived| lockstep_ir::Launch { group: l.group, grid: l.grid, span, template_args, derived, group_params: l.group_args, grid_params: l.grid_args.map(|c| c.map(|c| lockstep_ir::GroupCount { param: c.arg, add: c.add, div: c.div })), arg_relations: l.arg_relations.iter().map(arg_relation).collect() };
            let written = l.template_args.as_deref().map(template::normalized);
            let entry = table.entry(l.kernel).or_default();
            // One launch per argument list it stands for (the host templates around it instantiated).
            match l.instances.as_slice() {
                [] => entry.push(launch(written, false)),
                lists => entry.extend(lists.iter().map(|args| {
                    let args = template::normalized(args);
                    let derived = written.as_ref() != Some(&args);
                    launch(Some(args), derived)
                })),
            }
        }
    }
    table
}

impl<'t> Ctx<'t> {
    /// The node's kind ([`Node::kind`], from the grammar's table).
    pub fn kind(&self, n: Node) -> &'static str {
        self.syntax.kind(n)
    }

    pub fn text(&self, n: Node) -> &'t str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    /// A node's text for a message: on one line, and cut after
    /// [`EXCERPT_CHARS`] characters (a 100 000-element initializer is not quoted whole).
    pub fn excerpt(&self, n: Node) -> String {
        let words = self.text(n).split_whitespace().collect::<Vec<_>>().join(" ");
        match words.char_indices().nth(EXCERPT_CHARS) {
            Some((cut, _)) => format!("{}…", &words[..cut]),
            None => words,
        }
    }

    pub fn span(&self, n: Node) -> Span {
        self.spans.span(n.start_byte() as u32, n.end_byte() as u32)
    }

    /// Records a use of a name the file declares nowhere (a macro of the
    /// build or of a header lockstep did not see).
    pub fn undeclared_name(&mut self, name: &str, span: Span, used_as: UndeclaredUse) {
        if self.undeclared_seen.insert(name.to_string()) {
            self.undeclared.push((name.to_string(), span, used_as));
        }
    }

    /// One note for all the undeclared names: they usually share one cause
    /// (the build's `-D` options, a missing header), and each is unknown
    /// wherever it is used.
    fn undeclared_note(&self) -> Option<Diagnostic> {
        let ((first, span, _), rest) = self.undeclared.split_first()?;
        let quoted = |n: &str| format!("`{n}`");
        let (names, verb) = match rest.len() {
            0 => (quoted(first), "is"),
            1 => (format!("{} and {}", quoted(first), quoted(&rest[0].0)), "are"),
            2..=3 => {
                let mut all: Vec<String> = self.undeclared.iter().map(|(n, ..)| quoted(n)).collect();
                let last = all.pop().unwrap_or_default();
                (format!("{} and {last}", all.join(", ")), "are")
            }
            n => (format!("{}, {} and {} more", quoted(first), quoted(&rest[0].0), n - 1), "are"),
        };
        let values = if rest.is_empty() { "its value is" } else { "their values are" };
        let used_as = |u: UndeclaredUse| self.undeclared.iter().any(|(.., used)| *used == u);
        let mut types = String::new();
        if used_as(UndeclaredUse::Type) {
            types.push_str("; memory of an unknown type is taken to hold one value per element, and an access to its members touches any memory");
        }
        if used_as(UndeclaredUse::Callee) {
            types.push_str("; a call of one returns an unknown value and may read and write any memory its arguments point to");
        }
        let mut d = Diagnostic::new(
            "unsupported",
            Severity::Warning,
            *span,
            format!("{names} {verb} not declared in this file (macros of the build or of a header lockstep did not see?): {values} unknown wherever used{types}"),
        )
        .with_primary_label(format!("`{first}` is first used here"))
        .with_note("define them with `-D NAME=VALUE` (or in the configuration) to analyse the code as the build compiles it");
        for (name, at, _) in rest.iter().take(MAX_UNDECLARED_LABELS) {
            d = d.with_label(*at, format!("`{name}` is first used here"));
        }
        Some(d)
    }

    pub fn warn(&mut self, rule: &str, n: Node, message: String) {
        let d = Diagnostic::new(rule, Severity::Warning, self.span(n), message);
        self.diags.push(d);
    }

    /// Evaluates an integer constant expression (array sizes, `[numthreads]`, case labels).
    pub fn const_int(&self, n: Node) -> Option<i64> {
        self.const_int_depth(n, 0, None)
    }

    /// An array's length: a constant expression in which pipeline constants
    /// take their defaults (the host may choose others; only the emulator
    /// and the reports' in-bounds assumptions use lengths).
    pub fn array_length(&self, n: Node) -> Option<i64> {
        self.sizing_array.set(true);
        let length = self.const_int_depth(n, 0, None);
        self.sizing_array.set(false);
        length
    }

    /// `class_args`: inside a class's member (a static member's
    /// initializer), the class's template arguments, which replace the
    /// bindings and locals of the code being lowered.
    fn const_int_depth(&self, n: Node, depth: u32, class_args: Option<&Bindings>) -> Option<i64> {
        if depth > MAX_NESTING {
            return None;
        }
        let sub = |c: Node| self.const_int_depth(c, depth + 1, class_args);
        let template_args = class_args.unwrap_or(&self.template_args);
        match self.kind(n) {
            "number_literal" => parse_int_literal(self.text(n)).map(|(v, _)| v as i64),
            "char_literal" => self.text(n).trim_matches('\'').chars().next().map(|c| c as i64),
            "true" => Some(1),
            "false" => Some(0),
            "identifier" | "type_identifier" => match self.globals.get(self.text(n)) {
                _ if template_args.contains_key(self.text(n)) => match template_args.get(self.text(n)) {
                    Some(TemplateArg::Int(v)) => Some(*v),
                    _ => None,
                },
                _ if class_args.is_none() && self.local_ints.contains_key(self.text(n)) => self.local_ints.get(self.text(n)).copied(),
                Some(GlobalBinding::Int(v, _)) => Some(*v),
                Some(GlobalBinding::GroupExtent { default, .. }) if self.sizing_array.get() => *default,
                Some(GlobalBinding::Mem { global, .. })
                    if self.sizing_array.get() && self.module.global(*global).open_value == Some(lockstep_ir::OpenValue::PipelineConstant) =>
                {
                    self.module.global(*global).init.first().and_then(|c| match c {
                        lockstep_ir::Const::Int(v) => Some(*v as i64),
                        _ => None,
                    })
                }
                Some(_) => None,
                _ => BARRIER_FLAG_NAMES
                    .iter()
                    .find(|(name, _)| *name == self.text(n))
                    .map(|(_, v)| *v as i64)
                    .or_else(|| self.d.named_constant(self.text(n))),
            },
            // `pow2<N>::value`, `traits<T>::qk`: a class's static constant;
            // `mem_flags::mem_threadgroup`: the dialect's scoped constants.
            "qualified_identifier" => match (n.field(self.fields.scope), n.field(self.fields.name)) {
                (Some(scope), Some(name)) if self.class_name(scope) == "is_same" && self.text(name) == "value" => self.same_types(scope),
                (Some(scope), Some(name)) if self.classes.contains_key(self.class_name(scope)) => self.static_member(scope, self.text(name), depth + 1, class_args),
                (_, name) => name.and_then(sub),
            },
            "parenthesized_expression" | "condition_clause" => n.named_child(0).and_then(sub),
            // A template argument the grammar read as a type (`tile<TS, TS>`).
            "type_descriptor" => n.field(self.fields.ty).and_then(sub),
            "cast_expression" => n.field(self.fields.value).and_then(sub),
            "unary_expression" => {
                let v = sub(n.field(self.fields.argument)?)?;
                match self.text(n.field(self.fields.operator)?) {
                    "-" => Some(v.wrapping_neg()),
                    "+" => Some(v),
                    "~" => Some(!v),
                    "!" => Some((v == 0) as i64),
                    _ => None,
                }
            }
            "binary_expression" => {
                let a = sub(n.field(self.fields.left)?)?;
                let b = sub(n.field(self.fields.right)?)?;
                Some(match self.text(n.field(self.fields.operator)?) {
                    "+" => a.wrapping_add(b),
                    "-" => a.wrapping_sub(b),
                    "*" => a.wrapping_mul(b),
                    "/" => a.checked_div(b)?,
                    "%" => a.checked_rem(b)?,
                    "<<" => a.checked_shl(b as u32)?,
                    ">>" => a.checked_shr(b as u32)?,
                    "&" => a & b,
                    "|" => a | b,
                    "^" => a ^ b,
                    "&&" => (a != 0 && b != 0) as i64,
                    "||" => (a != 0 || b != 0) as i64,
                    "==" => (a == b) as i64,
                    "!=" => (a != b) as i64,
                    "<" => (a < b) as i64,
                    "<=" => (a <= b) as i64,
                    ">" => (a > b) as i64,
                    ">=" => (a >= b) as i64,
                    _ => return None,
                })
            }
            "conditional_expression" => {
                let c = sub(n.field(self.fields.condition)?)?;
                sub(n.child_by_field_name(if c != 0 { "consequence" } else { "alternative" })?)
            }
            "template_function" if self.class_name(n) == "is_same_v" => self.same_types(n),
            "sizeof_expression" => self.size_of_type(n),
            // `ggml_cuda_get_physical_warp_size()`: a function without
            // parameters whose body returns a constant.
            "call_expression" => {
                let args = n.field(self.fields.arguments)?;
                if args.named_child_count() != 0 {
                    return None;
                }
                let callee = self.text(n.field(self.fields.function)?);
                let [def] = self.funcs.get(callee.trim())?.as_slice() else { return None };
                let body = def.field(self.fields.body)?;
                let mut c = body.walk();
                let statements: Vec<Node> = body.named_children(&mut c).filter(|x| self.kind(*x) != "comment").collect();
                match statements.as_slice() {
                    [ret] if self.kind(*ret) == "return_statement" => sub(ret.named_child(0)?),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The class a scope or class name names (`traits` in `traits<T>::qk`).
    pub fn class_name(&self, n: Node) -> &'t str {
        let name = match self.kind(n) {
            "template_type" | "template_function" => n.field(self.fields.name).unwrap_or(n),
            _ => n,
        };
        self.text(name).trim()
    }

    /// `std::is_same<A, B>::value` and `std::is_same_v<A, B>`: 1 when both
    /// name one type, 0 when they name two; None when either is unknown.
    fn same_types(&self, n: Node) -> Option<i64> {
        let list = n.field(self.fields.arguments)?;
        let [a, b] = template::argument_nodes(self, list)[..] else { return None };
        let (a, b) = (self.text(a).trim(), self.text(b).trim());
        if [a, b].iter().any(|t| self.template_args.get(*t) == Some(&TemplateArg::OpaqueType)) {
            return None;
        }
        Some((self.type_named(a)? == self.type_named(b)?) as i64)
    }

    /// A class template's argument as a value, or as the type it names.
    fn class_argument(&self, a: Node, value: Option<i64>) -> Option<ClassArgument> {
        if let Some(v) = value {
            return Some(ClassArgument::Value(v));
        }
        let text = self.text(a).trim();
        if self.template_args.get(text) == Some(&TemplateArg::OpaqueType) {
            return None;
        }
        self.type_named(text).map(ClassArgument::Type)
    }

    /// The definition of a class a scope names (`policy<M, T>` in
    /// `policy<M, T>::reduce`) for its arguments: the specialization they
    /// choose, else the primary template. None where which one holds is
    /// unknown (an argument lockstep cannot tell, a pattern it does not
    /// match).
    pub fn class_definition(&self, scope: Node<'t>, depth: u32, class_args: Option<&Bindings>) -> Option<(Node<'t>, ClassChoice)> {
        let defs = self.classes.get(self.class_name(scope))?;
        let written: Vec<Node> = match (self.kind(scope), scope.field(self.fields.arguments)) {
            ("template_type", Some(list)) => template::argument_nodes(self, list),
            _ => Vec::new(),
        };
        // Each argument as a value or a type (None: lockstep cannot tell).
        let keys: Vec<Option<ClassArgument>> = written.iter().map(|&a| self.class_argument(a, self.const_int_depth(a, depth + 1, class_args))).collect();
        // The most specialized definition whose pattern the arguments match
        // (the fewest parameters of its own); a pattern an unknown argument
        // may or may not match leaves the choice unknown.
        let mut best: Option<(usize, Node<'t>, FxHashMap<String, ClassArgument>)> = None;
        for d in defs.iter().copied() {
            let Some(list) = d.field(self.fields.name).filter(|x| self.kind(*x) == "template_type").and_then(|x| x.field(self.fields.arguments)) else { continue };
            let pattern = template::argument_nodes(self, list);
            if pattern.len() != keys.len() {
                continue;
            }
            let own_params: Vec<String> = template::template_parameters(self, d).map(|p| template::parameter_names(self, p).into_iter().map(|(n, _)| n).collect()).unwrap_or_default();
            let mut matched = FxHashMap::default();
            let mut matches = true;
            for (&a, key) in pattern.iter().zip(&keys) {
                let text = self.text(a).trim();
                if own_params.iter().any(|p| p == text) {
                    let key = key.clone()?;
                    if matched.get(text).is_some_and(|earlier| *earlier != key) {
                        matches = false;
                        break;
                    }
                    matched.insert(text.to_string(), key);
                    continue;
                }
                let theirs = self.class_argument(a, self.const_int_depth(a, depth + 1, Some(&Bindings::default())));
                match (key, theirs) {
                    (Some(k), Some(t)) if *k != t => {
                        matches = false;
                        break;
                    }
                    (Some(_), Some(_)) => {}
                    _ => return None,
                }
            }
            if !matches {
                continue;
            }
            match &best {
                Some((fewest, ..)) if *fewest < own_params.len() => {}
                Some((fewest, ..)) if *fewest == own_params.len() => return None,
                _ => best = Some((own_params.len(), d, matched)),
            }
        }
        if let Some((_, d, matched)) = best {
            return Some((d, ClassChoice::Specialization(matched)));
        }
        let primary = defs.iter().copied().find(|d| d.field(self.fields.name).is_some_and(|x| self.kind(x) != "template_type"))?;
        Some((primary, ClassChoice::Primary(keys)))
    }

    /// A static constant member of a class (`pow2<N>::value`): read in the
    /// definition the arguments choose, with its value parameters bound.
    fn static_member(&self, scope: Node<'t>, member: &str, depth: u32, class_args: Option<&Bindings>) -> Option<i64> {
        let (def, choice) = self.class_definition(scope, depth, class_args)?;
        let mut bindings = Bindings::default();
        match choice {
            ClassChoice::Primary(keys) => {
                if let Some(params) = template::template_parameters(self, def) {
                    for ((name, _), key) in template::parameter_names(self, params).into_iter().zip(keys) {
                        if let Some(ClassArgument::Value(v)) = key {
                            bindings.insert(name, TemplateArg::Int(v));
                        }
                    }
                }
            }
            ClassChoice::Specialization(matched) => {
                for (name, key) in matched {
                    if let ClassArgument::Value(v) = key {
                        bindings.insert(name, TemplateArg::Int(v));
                    }
                }
            }
        }
        let init = self.member_initializer(def, member)?;
        let mut args: Vec<(String, i64)> = bindings.iter().filter_map(|(k, v)| if let TemplateArg::Int(x) = v { Some((k.clone(), *x)) } else { None }).collect();
        args.sort_unstable();
        let key = (def.id(), member.to_string(), args);
        if let Some(known) = self.static_values.borrow().get(&key) {
            return *known;
        }
        if self.static_values.borrow().len() >= MAX_STATIC_VALUES {
            return None;
        }
        self.static_values.borrow_mut().insert(key.clone(), None);
        let value = self.const_int_depth(init, depth + 1, Some(&bindings));
        self.static_values.borrow_mut().insert(key, value);
        value
    }

    /// The member functions named `name` a class definition defines in its body.
    pub fn class_methods(&self, def: Node<'t>, name: &str) -> Vec<Node<'t>> {
        let Some(body) = def.field(self.fields.body) else { return Vec::new() };
        let mut c = body.walk();
        let members: Vec<Node<'t>> = body.named_children(&mut c).collect();
        members
            .into_iter()
            .filter_map(|m| match self.kind(m) {
                "function_definition" => Some(m),
                "template_declaration" => {
                    let mut c = m.walk();
                    let found = m.named_children(&mut c).find(|x| self.kind(*x) == "function_definition");
                    found
                }
                _ => None,
            })
            .filter(|f| f.field(self.fields.body).is_some() && function_name(self, *f).as_deref() == Some(name))
            .collect()
    }

    /// The initializer of the static member `member` in a class definition.
    fn member_initializer(&self, def: Node<'t>, member: &str) -> Option<Node<'t>> {
        let body = def.field(self.fields.body)?;
        let mut c = body.walk();
        let found = body.named_children(&mut c).find_map(|fd| {
            if !matches!(self.kind(fd), "field_declaration" | "declaration") {
                return None;
            }
            let mut cc = fd.walk();
            let declarators: Vec<Node> = fd.fields(self.fields.declarator, &mut cc).collect();
            declarators.into_iter().find_map(|d| {
                let init = d.field(self.fields.value).or_else(|| fd.field(self.fields.default_value))?;
                let name = d.field(self.fields.declarator).unwrap_or(d);
                (self.text(name).trim() == member).then_some(init)
            })
        });
        found
    }

    /// Whether some definition of the class a scope names (`traits<T>` in
    /// `traits<T>::qk`) declares the static constant `member`.
    /// Whether `name` is an array of interface blocks.
    pub fn is_block_array(&self, name: &str) -> bool {
        self.block_arrays.contains(name)
    }

    pub fn declares_static_member(&self, scope: Node<'t>, member: &str) -> bool {
        self.classes.get(self.class_name(scope)).is_some_and(|defs| defs.iter().any(|&d| self.member_initializer(d, member).is_some()))
    }

    /// The type a name stands for: a bound template parameter, a
    /// synchronization object, a numeric type, a typedef, a struct, a resource.
    /// The expression inside any parentheses around `n`.
    pub fn without_parens(&self, n: Node<'t>) -> Node<'t> {
        let mut n = n;
        while let (true, Some(inner)) = (self.kind(n) == "parenthesized_expression", n.named_child(0)) {
            n = inner;
        }
        n
    }

    /// `sizeof(T)` (or `sizeof x` where `x` names a type), in bytes, where
    /// the languages agree on the layout; None for anything else (a
    /// variable's size is the lowering's to tell).
    pub fn size_of_type(&self, n: Node<'t>) -> Option<i64> {
        let operand = match (n.field(self.fields.ty), n.field(self.fields.value)) {
            (Some(t), _) => t,
            (None, Some(v)) => self.without_parens(v),
            _ => return None,
        };
        let text = self.text(operand).trim().trim_start_matches("const ").trim();
        // Held in f32 cells, 16 bits in memory.
        let bf16 = ["__nv_bfloat16", "nv_bfloat16", "__bf16", "bfloat", "bfloat16_t"];
        if let Some(n) = bf16.iter().find_map(|b| text.strip_prefix(b)) {
            return match n {
                "" => Some(2),
                lanes => lanes.parse::<i64>().ok().filter(|l| matches!(l, 2 | 4)).map(|l| 2 * l),
            };
        }
        let named = match self.kind(operand) {
            // `sizeof(float)`; not `sizeof(float*)`, whose declarator makes a pointer.
            "type_descriptor" if operand.field(self.fields.declarator).is_none() => operand.field(self.fields.ty)?,
            "identifier" | "type_identifier" | "primitive_type" | "sized_type_specifier" => operand,
            _ => return None,
        };
        if !matches!(self.kind(named), "identifier" | "type_identifier" | "primitive_type" | "sized_type_specifier" | "qualified_identifier") {
            return None;
        }
        let name = self.text(named).trim();
        let name = name.rsplit("::").next().unwrap_or(name);
        // A type parameter analysed generically has no size.
        if matches!(self.template_args.get(name), Some(TemplateArg::OpaqueType)) {
            return None;
        }
        let ty = self.type_named(name)?;
        crate::view::size_and_align(&ty, &self.structs).map(|(size, _)| i64::from(size))
    }

    pub fn type_named(&self, text: &str) -> Option<SrcType> {
        match self.template_args.get(text) {
            Some(TemplateArg::Type(t)) => return Some(t.clone()),
            Some(TemplateArg::OpaqueType) => return Some(template::GENERIC_TYPE),
            _ => {}
        }
        if let Some(scope) = self.d.sync_object_type(text) {
            return Some(SrcType::SyncObject(scope, None));
        }
        let normalized = text.split_whitespace().collect::<Vec<_>>().join(" ");
        // A typedef of the file names its type even where the name looks
        // like a vector (`typedef float float32;`).
        if let Some(t) = self.typedefs.get(&normalized) {
            return Some(t.clone());
        }
        if let Some(t) = parse_numeric(&normalized) {
            return Some(t);
        }
        if let Some(&i) = self.struct_names.get(&normalized) {
            return Some(SrcType::Struct(i));
        }
        if let Some(r) = self.d.resource(&normalized) {
            return Some(resource_type(r.kind, SrcType::Scalar(Type::F32), r.writable));
        }
        // Not modelled: a whole matrix is one value, unknown wherever a
        // function on matrices (which is noted) gave it.
        if self.d.cooperative_matrices.types.contains(&normalized.as_str()) {
            return Some(SrcType::Scalar(Type::F32));
        }
        None
    }

    /// Resolves a type node (with its qualifiers seen by the caller).
    pub fn resolve_type(&mut self, n: Node<'t>) -> Option<SrcType> {
        let text = self.text(n).trim();
        match self.kind(n) {
            "primitive_type" | "sized_type_specifier" | "type_identifier" | "identifier" => self.type_named(text),
            "struct_specifier" | "class_specifier" | "union_specifier" => self.struct_type(n),
            // GLSL's `coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>`.
            "parameterized_type" => self.type_named(self.text(n.field(self.fields.name)?)),
            // `enum ggml_op_pool op`: an enumeration's values are integers.
            "enum_specifier" => Some(SrcType::Scalar(Type::I32)),
            // GLSL's `uint[4]`: an array sized at its type.
            "array_type" => {
                let elem = self.resolve_type(n.field(self.fields.element)?)?;
                let len = n.field(self.fields.size).and_then(|s| self.const_int(s)).unwrap_or(0).max(0);
                Some(SrcType::Array(Box::new(elem), len as u64))
            }
            "qualified_identifier" | "qualified_type_identifier" => {
                let name = n.field(self.fields.name)?;
                self.resolve_type(name)
            }
            "template_type" => {
                let name = self.text(n.field(self.fields.name)?).trim().to_string();
                let args = n.field(self.fields.arguments);
                let elem = args
                    .and_then(|a| {
                        let mut c = a.walk();
                        let first = a.named_children(&mut c).next();
                        first
                    })
                    .and_then(|t| self.type_of_argument(t))
                    .unwrap_or(SrcType::Scalar(Type::F32));
                if let Some(r) = self.d.resource(&name) {
                    return Some(resource_type(r.kind, elem, r.writable));
                }
                match name.as_str() {
                    "vector" => {
                        let k = args.and_then(|a| a.named_child(1)).and_then(|c| self.const_int(c)).unwrap_or(4);
                        Some(SrcType::Vector(elem.scalar(&self.structs), k.clamp(1, 4) as u32))
                    }
                    "matrix" => {
                        let r = args.and_then(|a| a.named_child(1)).and_then(|c| self.const_int(c)).unwrap_or(4);
                        let c = args.and_then(|a| a.named_child(2)).and_then(|c| self.const_int(c)).unwrap_or(4);
                        Some(SrcType::Matrix(elem.scalar(&self.structs), r.clamp(1, 4) as u32, c.clamp(1, 4) as u32))
                    }
                    _ if self.d.sync_object_type(&name).is_some() => {
                        let width = args.and_then(|a| a.named_child(0)).and_then(|c| self.const_int(c)).map(|w| w.clamp(1, 1024) as u32);
                        Some(SrcType::SyncObject(self.d.sync_object_type(&name)?, width))
                    }
                    // A class template: laid out with its arguments where they are known, else generically.
                    _ if self.struct_names.contains_key(&name) => Some(SrcType::Struct(self.class_instance(n).unwrap_or(self.struct_names[&name]))),
                    // `tiled_index<16, 16>` (a helper's parameter): what the kernel's index parameter is.
                    _ if self.d.tiled_index_type == Some(name.as_str()) => {
                        let rank = args.map_or(1, |a| a.named_child_count()).clamp(1, 3);
                        Some(crate::lambda::tiled_index_struct(self, rank))
                    }
                    // `index<2>`: an integer vector of its rank.
                    _ if self.d.index_types.contains(&name.as_str()) => {
                        let rank = args.and_then(|a| a.named_child(0)).and_then(|r| self.const_int(r)).unwrap_or(1);
                        Some(SrcType::Vector(Type::I32, rank.clamp(1, 4) as u32))
                    }
                    _ => Some(elem),
                }
            }
            "type_descriptor" => {
                let t = n.field(self.fields.ty)?;
                let base = self.resolve_type(t)?;
                let mut pointer = false;
                let mut c = n.walk();
                for ch in n.children(&mut c) {
                    if self.kind(ch) == "abstract_pointer_declarator" {
                        pointer = true;
                    }
                }
                Some(if pointer { SrcType::Pointer(Box::new(base), MemSpace::Unknown) } else { base })
            }
            _ => {
                // HLSL forks may wrap types; try the last named child.
                let mut c = n.walk();
                let last = n.named_children(&mut c).last();
                last.and_then(|l| if l.id() != n.id() { self.resolve_type(l) } else { None })
            }
        }
    }

    fn type_of_argument(&mut self, t: Node<'t>) -> Option<SrcType> {
        match self.kind(t) {
            "type_descriptor" => {
                let inner = t.field(self.fields.ty)?;
                self.resolve_type(inner)
            }
            _ => self.resolve_type(t),
        }
    }

    /// The struct a class template's arguments lay out (`Stage<float, 256>`):
    /// the definition they choose, its parameters bound, each instance laid
    /// out once. None where the choice is unknown or no argument is known.
    fn class_instance(&mut self, written: Node<'t>) -> Option<usize> {
        let (def, choice) = self.class_definition(written, 0, None)?;
        let params = template::template_parameters(self, def)?;
        let key = match &choice {
            ClassChoice::Primary(keys) if keys.iter().any(Option::is_some) => format!("{keys:?}"),
            ClassChoice::Specialization(matched) => {
                let mut pairs: Vec<_> = matched.iter().collect();
                pairs.sort_by(|a, b| a.0.cmp(b.0));
                format!("{pairs:?}")
            }
            ClassChoice::Primary(_) => return None,
        };
        if let Some(&idx) = self.class_instances.get(&(def.id(), key.clone())) {
            return Some(idx);
        }
        let bindings = self.class_bindings(params, choice);
        let outer = std::mem::replace(&mut self.template_args, bindings.clone());
        let name = def.field(self.fields.name).map(|x| self.class_name(x).to_string());
        let generic = name.as_ref().and_then(|nm| self.struct_names.get(nm).copied());
        let laid_out = self.struct_type(def);
        self.template_args = outer;
        // The plain name keeps naming the generic layout.
        if let (Some(nm), Some(generic)) = (name, generic) {
            self.struct_names.insert(nm, generic);
        }
        let Some(SrcType::Struct(idx)) = laid_out else { return None };
        self.class_instances.insert((def.id(), key), idx);
        self.instance_bindings.insert(idx, (def, bindings));
        Some(idx)
    }

    /// A class template's parameters bound as the definition its arguments chose says.
    pub fn class_bindings(&mut self, params: Node<'t>, choice: ClassChoice) -> Bindings {
        match choice {
            ClassChoice::Primary(keys) => {
                let kinds = template::parameter_names(self, params);
                let explicit: Vec<TemplateArg> = keys
                    .into_iter()
                    .zip(kinds)
                    .map(|(key, (_, is_type))| match key {
                        Some(key) => key.template_arg(),
                        None if is_type => TemplateArg::OpaqueType,
                        None => TemplateArg::Unknown,
                    })
                    .collect();
                template::bind(self, params, &explicit, &Default::default())
            }
            ClassChoice::Specialization(matched) => {
                let deduced = matched.into_iter().map(|(name, key)| (name, key.template_arg())).collect();
                template::bind(self, params, &[], &deduced)
            }
        }
    }

    /// Registers a struct definition (or finds a named one).
    pub fn struct_type(&mut self, n: Node<'t>) -> Option<SrcType> {
        let name = n.field(self.fields.name).map(|x| self.text(x).to_string());
        let Some(body) = n.field(self.fields.body) else {
            return name.and_then(|nm| self.struct_names.get(&nm).map(|&i| SrcType::Struct(i)));
        };
        let mut fields = Vec::new();
        let mut methods = Vec::new();
        let mut c = body.walk();
        for fd in body.named_children(&mut c) {
            let def = match self.kind(fd) {
                "template_declaration" => {
                    let mut cc = fd.walk();
                    let found = fd.named_children(&mut cc).find(|x| self.kind(*x) == "function_definition");
                    found
                }
                "function_definition" => Some(fd),
                _ => None,
            };
            if let Some(def) = def.filter(|d| d.field(self.fields.body).is_some()) {
                if let Some(name) = function_name(self, def) {
                    methods.push((name, def));
                }
                continue;
            }
            if self.kind(fd) != "field_declaration" {
                continue;
            }
            let Some(tn) = fd.field(self.fields.ty) else { continue };
            let Some(base) = self.resolve_type(tn) else { continue };
            let mut cc = fd.walk();
            let declarators: Vec<Node<'t>> = fd.fields(self.fields.declarator, &mut cc).collect();
            // `union { float d4[4]; half2 ds4[4]; };`: its members are the outer one's.
            if declarators.is_empty() && matches!(base, SrcType::Struct(_)) && tn.field(self.fields.name).is_none() {
                fields.push((String::new(), base.clone()));
            }
            for decl in declarators {
                if let Some((fname, ty)) = self.declarator(decl, base.clone(), MemSpace::Unknown) {
                    fields.push((fname, ty));
                }
            }
        }
        let union = self.kind(n) == "union_specifier";
        if union {
            self.note_union_views(n, &fields);
        }
        let idx = self.structs.len();
        let nm = name.unwrap_or_else(|| format!("<anon{idx}>"));
        self.structs.push(StructDef { fields, union });
        for (name, def) in methods {
            self.methods.entry((idx, name)).or_default().push(def);
        }
        self.struct_names.insert(nm, idx);
        Some(SrcType::Struct(idx))
    }

    /// Cells are scalars, not bytes: members of a union whose scalars differ
    /// in size (`float d4[4]` over `half d2s6[8]`) put one byte at different
    /// cells, so accesses through two such members are compared wrongly.
    fn note_union_views(&mut self, n: Node<'t>, fields: &[(String, SrcType)]) {
        let scalar_bits = |ty: &SrcType, structs: &[StructDef]| {
            let mut types = Vec::new();
            ty.scalar_types(structs, &mut types);
            let mut bits: Vec<u32> = types.iter().map(|t| t.bits()).collect();
            bits.sort_unstable();
            bits.dedup();
            bits
        };
        let mut sizes: Vec<u32> = fields.iter().flat_map(|(_, t)| scalar_bits(t, &self.structs)).collect();
        sizes.sort_unstable();
        sizes.dedup();
        if sizes.len() > 1 {
            let list = sizes.iter().map(|b| format!("{b}-bit")).collect::<Vec<_>>().join(", ");
            self.warn(
                "unsupported",
                n,
                format!("the members of this union view its memory as values of different sizes ({list}); lockstep places each member's values one per cell, so it compares accesses through two different members as if they were laid out alike"),
            );
        }
    }

    /// Applies a declarator (pointer / array / reference / init) to a base type;
    /// returns the declared name and its full type.
    pub fn declarator(&mut self, n: Node<'t>, base: SrcType, ptr_space: MemSpace) -> Option<(String, SrcType)> {
        let mut node = n;
        let mut ty = base;
        let mut array_dims = Vec::new();
        for _ in 0..MAX_NESTING {
            match self.kind(node) {
                "identifier" | "field_identifier" | "type_identifier" => {
                    // `a[4][8]` nests as ((a[4])[8]): the outermost declarator is the innermost dimension.
                    for d in array_dims {
                        ty = SrcType::Array(Box::new(ty), d);
                    }
                    return Some((self.text(node).to_string(), ty));
                }
                "init_declarator" | "attributed_declarator" | "parenthesized_declarator" => {
                    node = node.field(self.fields.declarator).or_else(|| node.named_child(0))?;
                }
                "pointer_declarator" => {
                    ty = SrcType::Pointer(Box::new(ty), ptr_space);
                    node = node.field(self.fields.declarator)?;
                }
                "reference_declarator" => {
                    node = node.named_child((node.named_child_count() as u32).checked_sub(1)?)?;
                }
                "array_declarator" => {
                    let size = node.field(self.fields.size).and_then(|s| self.array_length(s)).map(|v| v.max(0) as u64).unwrap_or(0);
                    array_dims.push(size);
                    node = node.field(self.fields.declarator)?;
                }
                // `(*name)(params)` declares a pointer to a function; `name(params)` a function.
                "function_declarator" => {
                    let mut inner = node.field(self.fields.declarator)?;
                    while self.kind(inner) == "parenthesized_declarator" {
                        inner = inner.named_child(0)?;
                    }
                    if self.kind(inner) != "pointer_declarator" {
                        return None;
                    }
                    ty = SrcType::Function;
                    node = inner.field(self.fields.declarator)?;
                }
                _ => {
                    node = node.field(self.fields.declarator).or_else(|| node.named_child(0))?;
                }
            }
        }
        None
    }

    pub fn add_global(&mut self, name: &str, kind: GlobalKind, space: MemSpace, ty: &SrcType, coherent: bool, span: Span) -> GlobalId {
        let (dims, elem) = ty.array_dims();
        let cells_per_elem = elem.cells(&self.structs).max(1) as u32;
        let len = if dims.contains(&0) { None } else { Some(ty.cells(&self.structs)) };
        let g = Global {
            name: name.to_string(),
            kind,
            space,
            elem: ty.scalar(&self.structs),
            dims,
            cells_per_elem,
            cell_names: elem.struct_cell_names(&self.structs),
            len,
            coherent,
            texel_width: 0,
            open_value: None,
            init: Vec::new(),
            span,
        };
        self.module.add_global(g)
    }
}

pub fn resource_type(kind: ResourceKind, elem: SrcType, writable: bool) -> SrcType {
    SrcType::Resource { kind, elem: Box::new(elem), writable }
}

/// Parses an integer literal with C suffixes; returns the value and whether it is unsigned.
pub fn parse_int_literal(text: &str) -> Option<(u64, bool)> {
    // C's grammar reads `-5` after `=` or `(` as one literal: the value is
    // the magnitude's negation (64-bit two's complement), as `-(5)` would be.
    let text = text.trim();
    if let Some(magnitude) = text.strip_prefix('-') {
        return parse_int_literal(magnitude.trim_start()).map(|(v, unsigned)| (v.wrapping_neg(), unsigned));
    }
    let text = text.strip_prefix('+').map_or(text, str::trim_start);
    let lower = ascii_lowercase_without_separators(text);
    let unsigned = lower.contains('u');
    let digits = lower.trim_end_matches(['u', 'l']);
    let v = if let Some(h) = digits.strip_prefix("0x") {
        u64::from_str_radix(h, 16).ok()?
    } else if let Some(b) = digits.strip_prefix("0b") {
        u64::from_str_radix(b, 2).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') && digits.chars().all(|c| c.is_ascii_digit()) {
        u64::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse().ok()?
    };
    Some((v, unsigned))
}

/// `text` in ASCII lower case without `'` digit separators, borrowed when it already is.
pub fn ascii_lowercase_without_separators(text: &str) -> Cow<'_, str> {
    if text.bytes().any(|b| b == b'\'' || b.is_ascii_uppercase()) {
        Cow::Owned(text.replace('\'', "").to_ascii_lowercase())
    } else {
        Cow::Borrowed(text)
    }
}

/// Collects declaration words: qualifiers and specifiers before the type.
pub fn decl_words<'t>(ctx: &Ctx<'t>, n: Node<'t>) -> Vec<&'t str> {
    let mut words = Vec::new();
    let mut c = n.walk();
    let mut more = c.goto_first_child();
    while more {
        // Children in a field (the type, the declarators) are not words.
        if c.field_id().is_none() {
            let ch = c.node();
            match ctx.kind(ch) {
                "type_qualifier" | "storage_class_specifier" | "qualifiers" | "virtual_function_specifier" => {
                    words.extend(ctx.text(ch).split_whitespace())
                }
                k if !ch.is_named() || k.starts_with("__") => words.push(ctx.text(ch)),
                _ => {}
            }
        }
        more = c.goto_next_sibling();
    }
    words
}

/// What to do with each kernel as soon as it is lowered.
/// It also gets the source database, for messages that quote the source.
pub type KernelSink<'a> = dyn FnMut(&lockstep_source::SourceDb, &Module, lockstep_ir::Function) + Send + 'a;

/// Lowers a parsed file: every kernel entry point becomes one flat function,
/// kept in the returned module.
/// The launches are read from `text`, so host bodies must still be in it.
pub fn lower_tree(text: &str, tree: &Tree, lang: Lang, spans: &dyn SpanMap, options: &Options) -> Compiled {
    let launches = launch_table(lang, text, spans);
    lower_tree_with_launches(text, tree, lang, spans, options, &launches)
}

/// [`lower_tree`] with launches read before host bodies were cut from `text`.
pub fn lower_tree_with_launches(text: &str, tree: &Tree, lang: Lang, spans: &dyn SpanMap, options: &Options, launches: &LaunchTable) -> Compiled {
    let mut kernels = Vec::new();
    let db = lockstep_source::SourceDb::new();
    let mut compiled = lower_tree_streaming(text, tree, lang, spans, options, launches, &db, None, &mut |_, _, f| kernels.push(f));
    compiled.module.functions = kernels;
    compiled
}

/// Lowers a parsed file, handing each kernel to `sink` as soon as it is
/// lowered instead of keeping them all (large files stay small in memory).
/// The returned module holds the globals but no functions.
#[allow(clippy::too_many_arguments)]
pub fn lower_tree_streaming(
    text: &str,
    tree: &Tree,
    lang: Lang,
    spans: &dyn SpanMap,
    options: &Options,
    launches: &LaunchTable,
    db: &lockstep_source::SourceDb,
    main_file: Option<lockstep_source::FileId>,
    sink: &mut KernelSink,
) -> Compiled {
    let (dialect, grammar) = lang.c_family();
    let syntax = lockstep_syntax::syntax(grammar);
    let mut ctx = Ctx {
        src: text,
        spans,
        d: dialect,
        syntax,
        fields: syntax.fields,
        module: Module::default(),
        diags: Vec::new(),
        structs: Vec::new(),
        struct_names: FxHashMap::default(),
        typedefs: FxHashMap::default(),
        function_values: Vec::new(),
        undeclared: Vec::new(),
        undeclared_seen: FxHashSet::default(),
        unknown_typed: FxHashSet::default(),
        block_arrays: FxHashSet::default(),
        classes: FxHashMap::default(),
        function_specializations: FxHashMap::default(),
        globals: FxHashMap::default(),
        funcs: FxHashMap::default(),
        methods: FxHashMap::default(),
        class_instances: FxHashMap::default(),
        instance_bindings: FxHashMap::default(),
        instance_written: Vec::new(),
        template_args: Bindings::default(),
        local_ints: FxHashMap::default(),
        instantiations: FxHashMap::default(),
        options,
        launches,
        sizing_array: std::cell::Cell::new(false),
        static_values: Default::default(),
        per_thread_globals: Vec::new(),
    };
    ctx.module.collective_fences = ctx.d.collective_fences;
    ctx.module.group_barrier = ctx.d.group_barrier.to_string();
    ctx.module.device_barrier = ctx.d.device_barrier.to_string();
    ctx.module.wave_barrier = ctx.d.wave_barrier.to_string();
    let root = tree.root_node();
    let has_errors = report_syntax_errors(&mut ctx, root);
    let mut kernels = Vec::new();
    collect_items(&mut ctx, root, &mut kernels, 0);
    if kernels.is_empty() {
        lower_device_functions_of_a_header(&mut ctx, db, main_file, sink);
    }
    // The checked file's own kernels first, then those of its headers: a
    // file's time for checking goes to the kernels it is checked for.
    if let Some(main) = main_file {
        kernels.sort_by_key(|&k| ctx.span(k).file != main);
    }
    for k in kernels {
        if k.has_error() {
            let name = match ctx.kind(k) {
                "lambda_expression" => crate::lambda::kernel_name(&ctx, k),
                _ => function_name(&ctx, k).unwrap_or_default(),
            };
            let span = ctx.span(k);
            ctx.diags.push(
                Diagnostic::new("parse-error", Severity::Warning, span, format!("kernel `{name}` was not checked"))
                    .with_primary_label("this function does not parse")
                    .with_note("lockstep checks the other functions of the file; fix the syntax error to check this one"),
            );
            continue;
        }
        if ctx.kind(k) == "lambda_expression" {
            if let Some(f) = crate::lambda::lower_lambda_kernel(&mut ctx, k) {
                sink(db, &ctx.module, f);
            }
            continue;
        }
        let Some(params) = template::template_parameters(&ctx, k) else {
            if let Some(f) = FnLowerer::lower_kernel(&mut ctx, k) {
                sink(db, &ctx.module, f);
            }
            continue;
        };
        // A kernel template: each explicit instantiation and each
        // instantiation its launches name, or once generically.
        let name = function_name(&ctx, k).unwrap_or_default();
        let kinds: Vec<bool> = template::parameter_names(&ctx, params).into_iter().map(|(_, is_type)| is_type).collect();
        // (arguments, as written, whether host templates' instantiations gave them)
        let mut instances: Vec<(Vec<TemplateArg>, String, bool)> = Vec::new();
        for list in ctx.instantiations.get(&name).cloned().unwrap_or_default() {
            let nodes = template::argument_nodes(&ctx, list);
            let args = nodes.iter().zip(&kinds).map(|(&a, &is_type)| template::argument(&mut ctx, is_type, a)).collect();
            let written: Vec<&str> = nodes.iter().map(|&a| ctx.text(a)).collect();
            instances.push((args, template::normalized(&written.join(",")), false));
        }
        for (written, derived) in ctx.launches.get(&name).into_iter().flatten().filter_map(|l| l.template_args.clone().map(|w| (w, l.derived))) {
            let args = template::split_arguments(&written).iter().zip(&kinds).map(|(a, &is_type)| template::argument_text(&ctx, is_type, a)).collect();
            instances.push((args, written, derived));
        }
        let mut seen = std::collections::HashSet::new();
        instances.retain(|(_, written, _)| seen.insert(written.clone()));
        let instances = merged_instances(instances);
        let generic = instances.is_empty().then(|| (Vec::new(), None, Vec::new()));
        for (explicit, written, stands_for) in instances.into_iter().map(|(args, written, all)| (args, Some(written), all)).chain(generic) {
            let label = written.map(|w: String| format!("{name}<{}>", w.replace(',', ", ")));
            ctx.template_args = template::bind(&mut ctx, params, &explicit, &Bindings::default());
            ctx.instance_written = stands_for;
            let lowered = FnLowerer::lower_kernel(&mut ctx, k);
            ctx.template_args.clear();
            ctx.instance_written.clear();
            if let Some(mut f) = lowered {
                let version = match label {
                    Some(label) => {
                        let words = format!("the instantiation `{label}`");
                        f.name = label;
                        words
                    }
                    None => format!("`{name}` with its template parameters unknown (no instantiation in this file)"),
                };
                if let Some(entry) = f.entry.as_mut() {
                    entry.template = Some(version);
                }
                sink(db, &ctx.module, f);
            }
        }
    }
    if let Some(note) = ctx.undeclared_note() {
        ctx.diags.push(note);
    }
    Compiled { module: ctx.module, diagnostics: ctx.diags, has_errors }
}

/// Distinct instantiations of one kernel template that host templates'
/// instantiations give (not written at a launch) lowered each, at most.
const MAX_DERIVED_INSTANCES: usize = 8;

/// The versions of a kernel template to lower: (arguments, label, the
/// argument lists it stands for). Those written in the file are lowered
/// each; past [`MAX_DERIVED_INSTANCES`] derived ones, one version stands for
/// all of those: each argument where they agree, unknown (generic) where
/// they differ.
fn merged_instances(instances: Vec<(Vec<TemplateArg>, String, bool)>) -> Vec<(Vec<TemplateArg>, String, Vec<String>)> {
    let (derived, written): (Vec<_>, Vec<_>) = instances.into_iter().partition(|i| i.2);
    let each = |list: Vec<(Vec<TemplateArg>, String, bool)>| list.into_iter().map(|(args, w, _)| (args, w.clone(), vec![w]));
    let mut out: Vec<_> = each(written).collect();
    if derived.len() <= MAX_DERIVED_INSTANCES {
        out.extend(each(derived));
    } else {
        out.push(merged(derived.into_iter().map(|(args, w, _)| (args, w)).collect()));
    }
    out
}

/// One version standing for several instantiations of a kernel template.
fn merged(instances: Vec<(Vec<TemplateArg>, String)>) -> (Vec<TemplateArg>, String, Vec<String>) {
    let lists: Vec<Vec<String>> = instances.iter().map(|(_, w)| template::split_arguments(w)).collect();
    let width = instances.iter().map(|(args, _)| args.len()).max().unwrap_or(0);
    let mut args = Vec::new();
    let mut label = Vec::new();
    for i in 0..width {
        let first = instances[0].0.get(i);
        let agreed = first.filter(|a| instances.iter().all(|(other, _)| other.get(i) == Some(a)));
        let differing = match first {
            Some(TemplateArg::Type(_) | TemplateArg::OpaqueType) => TemplateArg::OpaqueType,
            _ => TemplateArg::Unknown,
        };
        args.push(agreed.cloned().unwrap_or(differing));
        label.push(match (agreed, lists[0].get(i)) {
            (Some(_), Some(written)) => written.clone(),
            _ => "…".to_string(),
        });
    }
    (args, label.join(","), instances.into_iter().map(|(_, w)| w).collect())
}

/// A file with no kernel (a header of helpers): each device function that
/// synchronizes or touches group memory is analysed as if a kernel nobody
/// can see called it, so the barrier code that lives in headers is checked.
/// Only the checked file's own functions: those of the headers it includes
/// are checked with those headers, not once more per includer.
fn lower_device_functions_of_a_header<'t>(ctx: &mut Ctx<'t>, db: &lockstep_source::SourceDb, main_file: Option<lockstep_source::FileId>, sink: &mut KernelSink) {
    let own = |ctx: &Ctx<'t>, def: Node<'t>| main_file.is_none_or(|main| ctx.span(def).file == main);
    let mut defs: Vec<Node<'t>> = ctx
        .funcs
        .values()
        .chain(ctx.function_specializations.values())
        .flatten()
        .copied()
        .filter(|&def| own(ctx, def) && is_device_function(ctx, def) && synchronizes_or_shares(ctx, def))
        .collect();
    defs.sort_by_key(|d| d.start_byte());
    for def in defs {
        if def.has_error() {
            continue;
        }
        let name = function_name(ctx, def).unwrap_or_default();
        let params = template::template_parameters(ctx, def);
        if let Some(params) = params {
            ctx.template_args = template::bind(ctx, params, &[], &Bindings::default());
        }
        let lowered = FnLowerer::lower_with_unknown_caller(ctx, def);
        ctx.template_args.clear();
        if let Some(mut f) = lowered {
            if let Some(entry) = f.entry.as_mut() {
                let generic = if params.is_some() { ", with its template parameters unknown" } else { "" };
                entry.template = Some(format!("`{name}`, analysed as if called from a kernel in another file (this file has none){generic}"));
            }
            sink(db, &ctx.module, f);
        }
    }
}

/// Whether a definition is marked as device code (`__device__`).
fn is_device_function<'t>(ctx: &Ctx<'t>, def: Node<'t>) -> bool {
    let mut c = def.walk();
    let marked = def.children(&mut c).any(|ch| ctx.text(ch) == "__device__");
    marked
}

/// Whether a function body names a barrier, a group-shared declaration or a
/// synchronization object.
fn synchronizes_or_shares<'t>(ctx: &Ctx<'t>, def: Node<'t>) -> bool {
    let Some(body) = def.field(ctx.fields.body) else { return false };
    let text = ctx.text(body);
    ctx.d.barriers.iter().any(|(name, _)| text.contains(name))
        || ctx.d.space_qualifiers.iter().any(|(q, space)| *space == MemSpace::Shared && text.contains(q))
        || ctx.d.sync_objects.iter().any(|o| text.contains(o.type_name))
}

/// Reports ERROR and MISSING nodes (walking iteratively: trees can be very deep).
fn report_syntax_errors(ctx: &mut Ctx, root: Node) -> bool {
    if !root.has_error() {
        return false;
    }
    const MAX_REPORTED: usize = 20;
    const MAX_LABELLED_USES: usize = 8;
    let mut found = 0usize;
    // Where the last reported error ended: the parser's recovery often leaves
    // several on one line, which is one mistake to fix.
    let mut last_end: Option<usize> = None;
    // Each macro the file uses undefined, with its first syntax error: one
    // finding for all of its uses.
    let mut undefined_macros: Vec<(&str, usize)> = Vec::new();
    let mut cursor = root.walk();
    'walk: loop {
        let n = cursor.node();
        let descend = n.has_error() && !(n.is_error() || n.is_missing());
        let same_line = last_end.is_some_and(|end| n.start_byte() >= end && !ctx.src.get(end..n.start_byte()).unwrap_or("\n").contains('\n'));
        if (n.is_error() || n.is_missing()) && !same_line {
            last_end = Some(n.end_byte());
            let mut sp = ctx.span(n);
            sp.hi = sp.hi.min(sp.lo + 200);
            let undefined_macro = n.is_error().then(|| unexpanded_macro_call(ctx.text(n))).flatten();
            let first_use = undefined_macro.and_then(|name| undefined_macros.iter().find(|m| m.0 == name)).map(|m| m.1);
            if let Some(at) = first_use {
                let d = &mut ctx.diags[at];
                if d.labels.len() < MAX_LABELLED_USES {
                    d.labels.push(lockstep_diag::Label { span: sp, message: "the same macro again".into() });
                }
                d.occurrences += 1;
            } else {
                found += 1;
            }
            if first_use.is_none() && found <= MAX_REPORTED {
                let (msg, label) = if n.is_missing() {
                    (format!("syntax error: expected `{}`", ctx.kind(n)), "missing here")
                } else {
                    ("syntax error".to_string(), "lockstep could not parse this")
                };
                let mut d = Diagnostic::new("parse-error", Severity::Error, sp, msg).with_primary_label(label);
                if let Some(name) = undefined_macro {
                    d.notes.push(format!(
                        "`{name}(…)` reads like a macro this file does not define (one of the build, or of a file that includes this one?); define it with `-D` to check the code as it is compiled"
                    ));
                    undefined_macros.push((name, ctx.diags.len()));
                }
                ctx.diags.push(d);
            }
        }
        if descend && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    if found > MAX_REPORTED {
        if let Some(last) = ctx.diags.last_mut() {
            last.notes.push(format!("{} more syntax errors in this file were not listed", found - MAX_REPORTED));
        }
    }
    true
}

/// The name a syntax error starts with when it is called like a macro and
/// spelled like one (`FOR_UNROLL (short i = 0; i < n; ++i)`): after
/// preprocessing, such a name is a macro nobody defined.
fn unexpanded_macro_call(text: &str) -> Option<&str> {
    let text = text.trim_start();
    let end = text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(text.len());
    let name = &text[..end];
    let macro_like = name.len() > 1 && name.starts_with(|c: char| c.is_ascii_uppercase()) && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    (macro_like && text[end..].trim_start().starts_with('(')).then_some(name)
}

pub fn function_name<'t>(ctx: &Ctx<'t>, def: Node<'t>) -> Option<String> {
    let mut d = def.field(ctx.fields.declarator)?;
    for _ in 0..32 {
        match ctx.kind(d) {
            "function_declarator" => {
                let name = d.field(ctx.fields.declarator)?;
                let name = if ctx.kind(name) == "qualified_identifier" { name.field(ctx.fields.name).unwrap_or(name) } else { name };
                return Some(ctx.text(name).to_string());
            }
            _ => d = d.field(ctx.fields.declarator).or_else(|| d.named_child(0))?,
        }
    }
    None
}

/// Whether a function definition is a kernel entry point; returns its launch facts.
pub fn entry_info<'t>(ctx: &Ctx<'t>, def: Node<'t>) -> Option<EntryInfo> {
    let mut info = EntryInfo { wave_size: ctx.d.wave_size, ..EntryInfo::default() };
    let mut is_entry = false;
    let mut c = def.walk();
    for ch in def.children(&mut c) {
        let text = ctx.text(ch);
        match ctx.d.entry_marker {
            EntryMarker::GlobalSpecifier => {
                if text == "__global__" {
                    is_entry = true;
                }
                if ctx.kind(ch) == "launch_bounds" {
                    let mut cc = ch.walk();
                    let first = ch.named_children(&mut cc).find(|x| ctx.kind(*x) != "__launch_bounds__");
                    info.max_threads = first.and_then(|x| ctx.const_int(x)).map(|v| v as u32);
                }
                let launch_attribute = ctx.d.group_size_attribute.is_some() || ctx.d.max_threads_attribute.is_some() || !ctx.d.wave_size_attributes.is_empty();
                if launch_attribute && matches!(ctx.kind(ch), "attribute_specifier" | "attribute_declaration") {
                    attribute_facts(ctx, ch, &mut info, &mut is_entry);
                }
            }
            EntryMarker::NumThreadsAttribute => {
                if ctx.kind(ch).contains("attribute") {
                    attribute_facts(ctx, ch, &mut info, &mut is_entry);
                }
            }
            EntryMarker::FunctionNamed(_) | EntryMarker::LaunchedLambdas => {}
        }
    }
    if let EntryMarker::FunctionNamed(entry) = ctx.d.entry_marker {
        is_entry = function_name(ctx, def).is_some_and(|name| name == entry);
        if is_entry {
            layout_group_size(ctx, def, &mut info);
        }
    }
    if !is_entry {
        return None;
    }
    let name = function_name(ctx, def);
    if let Some(launches) = name.as_ref().and_then(|name| ctx.launches.get(name)) {
        // An instantiation runs with the launches written for it, and with
        // those that hand the kernel on (they may launch any version).
        let mine = launches.iter().filter(|l| l.template_args.as_ref().is_none_or(|args| ctx.instance_written.contains(args))).cloned().collect();
        info.set_launches(mine);
        if let (None, [Some(x), Some(y), Some(z)]) = (info.group_size, info.group_extent) {
            info.group_size = Some([x, y, z]);
        }
    }
    configured_shape(ctx, name.as_deref(), &mut info);
    Some(info)
}

/// Applies the launch shape the configuration and the command line give the kernel `name`.
pub fn configured_shape(ctx: &Ctx, name: Option<&str>, info: &mut EntryInfo) {
    if info.wave_size.is_none() {
        info.wave_size = ctx.options.wave_size;
    }
    let configured = name.and_then(|name| ctx.options.kernels.get(name));
    if let Some(gs) = configured.and_then(|k| k.group_size) {
        info.group_size = Some(gs);
        info.group_extent = gs.map(Some);
        info.group_extent_params = [None; 3];
    }
    if let Some(grid) = configured.and_then(|k| k.grid_size) {
        info.grid_size = grid.map(Some);
        info.grid_count_params = [None; 3];
    }
    if let Some(gs) = ctx.options.group_size {
        info.group_size = Some(gs);
        info.group_extent = gs.map(Some);
        info.group_extent_params = [None; 3];
    }
    if let Some(grid) = ctx.options.grid_size {
        info.grid_size = grid.map(Some);
        info.grid_count_params = [None; 3];
    }
}

/// The group size that `layout(local_size_x = 64, …) in;` declarations at
/// file level give: an axis not named is 1 thread wide, one given by a
/// specialization constant (`local_size_x_id = 0`) is unknown.
fn layout_group_size<'t>(ctx: &Ctx<'t>, def: Node<'t>, info: &mut EntryInfo) {
    let Some(axes) = ctx.d.group_size_layout else { return };
    let mut extent = [Some(1u32); 3];
    let mut declared = false;
    for (key, value) in file_layout_qualifiers(ctx, def) {
        for (axis, name) in axes.iter().enumerate() {
            if key == *name {
                extent[axis] = value.map(|v| v.max(1) as u32);
                declared = true;
            } else if key.strip_prefix(name) == Some("_id") {
                extent[axis] = None;
                declared = true;
            }
        }
    }
    if declared {
        info.group_extent = extent;
        if let [Some(x), Some(y), Some(z)] = extent {
            info.group_size = Some([x, y, z]);
        }
    }
}

/// The `key = value` qualifiers of the `layout(…)` lists under `n`, each
/// value as a constant where it is one.
fn layout_qualifiers<'t>(ctx: &Ctx<'t>, n: Node<'t>) -> Vec<(&'t str, Option<i64>)> {
    let mut out = Vec::new();
    let mut stack = vec![n];
    while let Some(n) = stack.pop() {
        if ctx.kind(n) != "qualifier" {
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
            continue;
        }
        if let Some(key) = n.named_child(0).map(|k| ctx.text(k)) {
            out.push((key, n.named_child(1).and_then(|v| ctx.const_int(v))));
        }
    }
    out
}

/// The qualifiers of the file's own `layout(…) in;` declarations, from any
/// node of the file.
fn file_layout_qualifiers<'t>(ctx: &Ctx<'t>, any: Node<'t>) -> Vec<(&'t str, Option<i64>)> {
    let mut root = any;
    while let Some(parent) = root.parent() {
        root = parent;
    }
    let mut c = root.walk();
    let items: Vec<Node<'t>> = root.named_children(&mut c).filter(|n| ctx.kind(*n) == "qualifier_declaration").collect();
    items.into_iter().flat_map(|item| layout_qualifiers(ctx, item)).collect()
}

fn attribute_facts<'t>(ctx: &Ctx<'t>, attr: Node<'t>, info: &mut EntryInfo, is_entry: &mut bool) {
    // Attributes look like `[name(args)]`; find the call-shaped child.
    let mut stack = vec![attr];
    while let Some(n) = stack.pop() {
        if ctx.kind(n) == "call_expression" || (ctx.kind(n).contains("attribute") && n.field(ctx.fields.name).is_some()) {
            let name = n.field(ctx.fields.function).or_else(|| n.field(ctx.fields.name)).or_else(|| n.named_child(0));
            let Some(name) = name else { continue };
            let lname = ctx.text(name).to_ascii_lowercase();
            let args = n.field(ctx.fields.arguments).or_else(|| n.named_child(1));
            let vals: Vec<i64> = args
                .map(|a| {
                    let mut c = a.walk();
                    a.named_children(&mut c).filter_map(|x| ctx.const_int(x)).collect()
                })
                .unwrap_or_default();
            let fixes_group_size = ctx.d.group_size_attribute.is_some_and(|a| a == lname);
            if lname == "numthreads" || fixes_group_size {
                *is_entry |= lname == "numthreads";
                if vals.len() == 3 {
                    info.group_size = Some([vals[0].max(1) as u32, vals[1].max(1) as u32, vals[2].max(1) as u32]);
                }
            } else if ctx.d.max_threads_attribute.is_some_and(|a| a == lname) {
                info.max_threads = vals.first().map(|v| (*v).clamp(1, u32::MAX as i64) as u32);
            } else if let Some((_, named)) = ctx.d.wave_size_attributes.iter().find(|(a, _)| *a == lname) {
                // `[WaveSize(32)]`, `intel_reqd_sub_group_size(16)`, `qcom_reqd_sub_group_size("half")`.
                let word = args.map(|a| ctx.text(a).trim_matches(|c: char| c == '(' || c == ')' || c == '"' || c.is_whitespace()));
                let width = vals.first().map(|&v| v.clamp(0, u32::MAX as i64) as u32).or_else(|| named.iter().find(|(n, _)| Some(*n) == word).map(|(_, w)| *w));
                // A width no hardware has (the compiler rejects it) leaves the width open.
                info.wave_size = width.filter(|&w| w.is_power_of_two() && w <= 128).or(info.wave_size);
            }
            continue;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
}

/// Walks top-level items: registers types, globals and functions; returns kernels.
fn collect_items<'t>(ctx: &mut Ctx<'t>, n: Node<'t>, kernels: &mut Vec<Node<'t>>, depth: u32) {
    if depth > 64 {
        return;
    }
    let mut c = n.walk();
    let children: Vec<Node<'t>> = n.named_children(&mut c).collect();
    for item in children {
        match ctx.kind(item) {
            "function_definition" => {
                if item.field(ctx.fields.body).is_none() {
                    continue;
                }
                kernels.extend(crate::lambda::launched_lambdas(ctx, item));
                if let Some(name) = function_name(ctx, item) {
                    if entry_info(ctx, item).is_some() {
                        kernels.push(item);
                    }
                    match name.split_once('<') {
                        Some((template, _)) => ctx.function_specializations.entry(template.trim().to_string()).or_default().push(item),
                        None => ctx.funcs.entry(name).or_default().push(item),
                    }
                }
            }
            "template_instantiation" => {
                let mut d = item.field(ctx.fields.declarator);
                while let Some(x) = d.filter(|x| ctx.kind(*x) != "template_function") {
                    d = x.field(ctx.fields.declarator);
                }
                if let Some(tf) = d {
                    if let (Some(name), Some(args)) = (tf.field(ctx.fields.name), tf.field(ctx.fields.arguments)) {
                        let name = ctx.text(name).rsplit("::").next().unwrap_or_default().to_string();
                        ctx.instantiations.entry(name).or_default().push(args);
                    }
                }
            }
            "template_declaration" | "linkage_specification" | "namespace_definition" | "declaration_list" | "preproc_if"
            | "preproc_ifdef" | "preproc_else" | "export_declaration" => collect_items(ctx, item, kernels, depth + 1),
            "declaration" => global_declaration(ctx, item),
            "struct_specifier" | "class_specifier" => {
                // A class template's layout is read with its parameters generic.
                let params = template::template_parameters(ctx, item);
                if let Some(params) = params {
                    ctx.template_args = template::bind(ctx, params, &[], &Bindings::default());
                }
                ctx.struct_type(item);
                ctx.template_args.clear();
                if let Some(name) = item.field(ctx.fields.name) {
                    let class = ctx.class_name(name).to_string();
                    ctx.classes.entry(class).or_default().push(item);
                }
            }
            "type_definition" | "alias_declaration" => {
                for (name, ty) in type_aliases(ctx, item) {
                    ctx.typedefs.insert(name, ty);
                }
            }
            "enum_specifier" => enum_constants(ctx, item),
            k if k.contains("cbuffer") || k.contains("tbuffer") => cbuffer(ctx, item),
            // Read where the entry point is (`layout_group_size`).
            "expression_statement" | "qualifier_declaration" => {}
            _ => {
                // Forks may wrap items (e.g. attributes + declaration); look inside.
                if item.named_child_count() > 0 && !item.is_error() && ctx.kind(item) != "comment" {
                    collect_items(ctx, item, kernels, depth + 1);
                }
            }
        }
    }
}

/// The names a `typedef` or `using name = type;` declares, with their types.
pub fn type_aliases<'t>(ctx: &mut Ctx<'t>, n: Node<'t>) -> Vec<(String, SrcType)> {
    let Some(t) = n.field(ctx.fields.ty).and_then(|t| ctx.resolve_type(t)) else { return Vec::new() };
    if ctx.kind(n) == "alias_declaration" {
        return n.field(ctx.fields.name).map(|name| (ctx.text(name).to_string(), t)).into_iter().collect();
    }
    let mut c = n.walk();
    let decls: Vec<_> = n.fields(ctx.fields.declarator, &mut c).collect();
    decls.into_iter().filter_map(|d| ctx.declarator(d, t.clone(), MemSpace::Unknown)).collect()
}

pub(crate) fn enum_constants<'t>(ctx: &mut Ctx<'t>, n: Node<'t>) {
    // Its name is a type whose values are integers.
    if let Some(name) = n.field(ctx.fields.name) {
        ctx.typedefs.insert(ctx.text(name).to_string(), SrcType::Scalar(Type::I32));
    }
    let Some(body) = n.field(ctx.fields.body) else { return };
    let mut next = 0i64;
    let mut c = body.walk();
    for e in body.named_children(&mut c) {
        if ctx.kind(e) != "enumerator" {
            continue;
        }
        let Some(name) = e.field(ctx.fields.name) else { continue };
        if let Some(v) = e.field(ctx.fields.value).and_then(|v| ctx.const_int(v)) {
            next = v;
        }
        ctx.globals.insert(ctx.text(name).to_string(), GlobalBinding::Int(next, Type::I32));
        next += 1;
    }
}

fn cbuffer<'t>(ctx: &mut Ctx<'t>, n: Node<'t>) {
    let body = n.field(ctx.fields.body).or_else(|| {
        let mut c = n.walk();
        let found = n.named_children(&mut c).find(|x| ctx.kind(*x) == "field_declaration_list");
        found
    });
    let Some(body) = body else { return };
    let mut c = body.walk();
    for fd in body.named_children(&mut c) {
        if ctx.kind(fd) != "field_declaration" && ctx.kind(fd) != "declaration" {
            continue;
        }
        let Some(t) = fd.field(ctx.fields.ty).and_then(|t| ctx.resolve_type(t)) else { continue };
        let mut cc = fd.walk();
        let decls: Vec<_> = fd.fields(ctx.fields.declarator, &mut cc).collect();
        for d in decls {
            if let Some((name, ty)) = ctx.declarator(d, t.clone(), MemSpace::Constant) {
                let span = ctx.span(d);
                let g = ctx.add_global(&name, GlobalKind::Constant, MemSpace::Constant, &ty, false, span);
                ctx.globals.insert(name, GlobalBinding::Mem { global: g, ty });
            }
        }
    }
}

/// The widest texture a Direct3D 12 device allows along x; a texel
/// coordinate beyond it addresses no texel (the access is dropped).
const MAX_TEXTURE_WIDTH: u32 = 16384;

/// A module-level `declaration`: shared/device memory, resources, constants.
fn global_declaration<'t>(ctx: &mut Ctx<'t>, n: Node<'t>) {
    let mut c = n.walk();
    let block = n.named_children(&mut c).find(|x| ctx.kind(*x) == "field_declaration_list");
    if let Some(block) = block {
        return interface_block(ctx, n, block);
    }
    let Some(type_node) = n.field(ctx.fields.ty) else { return };
    let words = decl_words(ctx, n);
    let is_static = words.contains(&"static");
    let is_const = words.contains(&"const") || words.contains(&"constexpr");
    let is_extern = words.contains(&"extern");
    let space = words.iter().find_map(|w| ctx.d.space_qualifier(w));
    let coherent = words.iter().any(|w| ctx.d.coherent_qualifiers.contains(w));
    let base = match ctx.resolve_type(type_node) {
        Some(base) => base,
        // Memory of a type lockstep does not know is still memory: its
        // accesses are placed, one cell per element.
        None if space.is_some() => {
            declares_memory_of_unknown_type(ctx, n);
            unknown_element_type(ctx, type_node)
        }
        None => return,
    };
    let mut c = n.walk();
    let decls: Vec<_> = n.fields(ctx.fields.declarator, &mut c).collect();
    for d in decls {
        let Some((name, ty)) = ctx.declarator(d, base.clone(), MemSpace::Unknown) else { continue };
        let span = ctx.span(d);
        let init = if ctx.kind(d) == "init_declarator" { d.field(ctx.fields.value) } else { None };
        if let SrcType::Resource { kind, elem, writable } = &ty {
            resource_global(ctx, name, *kind, elem, *writable, coherent, span);
            continue;
        }
        if let (Some(id), Some(init), SrcType::Scalar(t)) = (pipeline_constant_id(ctx, n), init, &ty) {
            pipeline_constant(ctx, name, id, init, *t, span);
            continue;
        }
        let fixed_constant = space == Some(MemSpace::Constant) && ctx.d.constant_globals_are_fixed;
        // `constant uint TILE = 16;` in Metal: an integer constant, folded like `const int`.
        if let (true, Some(init), SrcType::Scalar(t)) = (fixed_constant, init, &ty) {
            if let Some(v) = ctx.const_int(init).filter(|_| t.is_int()) {
                ctx.globals.insert(name, GlobalBinding::Int(v, *t));
                continue;
            }
        }
        // `const __device__` tables cannot be written: constant memory, with their values.
        if let Some(sp) = space.filter(|&s| !(is_const && s == MemSpace::Device)) {
            let kind = match sp {
                MemSpace::Shared if is_extern || matches!(ty, SrcType::Array(_, 0)) => GlobalKind::DynamicShared,
                MemSpace::Shared => GlobalKind::GroupShared,
                MemSpace::Constant => GlobalKind::Constant,
                _ => GlobalKind::DeviceVar,
            };
            let g = ctx.add_global(&name, kind, sp, &ty, coherent, span);
            if let (true, Some(init)) = (fixed_constant, init) {
                let mut vals = Vec::new();
                constant_initializer(ctx, init, &mut vals);
                ctx.module.globals[g.index()].init = vals;
            }
            if ctx.d.pipeline_constant_attribute.is_some_and(|a| has_attribute(ctx, n, a)) {
                ctx.module.globals[g.index()].open_value = Some(lockstep_ir::OpenValue::PipelineConstant);
            }
            ctx.globals.insert(name, GlobalBinding::Mem { global: g, ty });
            continue;
        }
        // Integer constants are folded; other constants/globals become constant memory.
        if let (Some(init), SrcType::Scalar(t)) = (init, &ty) {
            if (is_const || is_static) && t.is_int() {
                if let Some(v) = ctx.const_int(init) {
                    ctx.globals.insert(name, GlobalBinding::Int(v, *t));
                    continue;
                }
            }
        }
        // A GLSL global: each invocation's own, initialized before `main`
        // (`uint tid = gl_LocalInvocationID.x;`); `const` tables stay constant memory.
        if ctx.d.plain_globals_are_per_thread && space.is_none() && !(is_const && matches!(ty, SrcType::Array(..))) {
            ctx.globals.insert(name.clone(), GlobalBinding::PerThread);
            ctx.per_thread_globals.push((name, ty, init, span));
            continue;
        }
        if is_static && !is_const && ctx.d.plain_globals_are_constant {
            // A static mutable global is per-thread private state in HLSL; rare in kernels.
            ctx.warn("unsupported", d, format!("static global `{name}` is treated as constant"));
        }
        if ctx.d.plain_globals_are_constant || is_const || is_static {
            let g = ctx.add_global(&name, GlobalKind::Constant, MemSpace::Constant, &ty, false, span);
            if let Some(init) = init {
                let mut vals = Vec::new();
                constant_initializer(ctx, init, &mut vals);
                ctx.module.globals[g.index()].init = vals;
            }
            ctx.globals.insert(name, GlobalBinding::Mem { global: g, ty });
        } else {
            // CUDA host-side globals are not visible to kernels; record them as device memory.
            let g = ctx.add_global(&name, GlobalKind::DeviceVar, MemSpace::Device, &ty, coherent, span);
            ctx.globals.insert(name, GlobalBinding::Mem { global: g, ty });
        }
    }
}

/// How a name the file declares nowhere is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UndeclaredUse {
    Value,
    Type,
    /// Called as a function (a function-like macro, or a function of a header lockstep did not see).
    Callee,
}

/// Memory declared with a type lockstep does not know is still memory, one
/// value per element; the type joins the file's note on undeclared names.
pub fn unknown_element_type<'t>(ctx: &mut Ctx<'t>, type_node: Node<'t>) -> SrcType {
    let name = ctx.text(type_node).trim().to_string();
    let span = ctx.span(type_node);
    ctx.undeclared_name(&name, span, UndeclaredUse::Type);
    SrcType::Scalar(Type::F32)
}

/// Records the names a declaration of memory of an unknown type declares:
/// accesses through them are covered by the file's note on the type.
pub fn declares_memory_of_unknown_type<'t>(ctx: &mut Ctx<'t>, declaration: Node<'t>) {
    let mut c = declaration.walk();
    for d in declaration.fields(ctx.fields.declarator, &mut c) {
        if let Some(name) = declarator_name(ctx, d) {
            ctx.unknown_typed.insert(name);
        }
    }
}

/// Whether a C++ attribute named `name` is on the declaration (`[[function_constant(3)]]`).
fn has_attribute<'t>(ctx: &Ctx<'t>, declaration: Node<'t>, name: &str) -> bool {
    let mut stack = vec![declaration];
    while let Some(n) = stack.pop() {
        if ctx.kind(n) == "attribute" && n.field(ctx.fields.name).is_some_and(|x| ctx.text(x) == name) {
            return true;
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c).filter(|x| !ctx.kind(*x).contains("initializer")));
    }
    false
}

/// The pipeline constant id a declaration's layout gives it (GLSL
/// `layout(constant_id = 3) const uint N = 64;`).
fn pipeline_constant_id<'t>(ctx: &Ctx<'t>, n: Node<'t>) -> Option<i64> {
    let key = ctx.d.pipeline_constant_layout?;
    let mut c = n.walk();
    let layout = n.named_children(&mut c).find(|x| ctx.kind(*x) == "layout_specification")?;
    layout_qualifiers(ctx, layout).into_iter().find(|q| q.0 == key)?.1
}

/// A specialization constant: the host may replace its initializer when it
/// creates the pipeline. Where `local_size_x_id` (y, z) names it, it is the
/// group's extent; otherwise constant memory whose value is open (the
/// initializer is the default `run` uses).
fn pipeline_constant<'t>(ctx: &mut Ctx<'t>, name: String, id: i64, init: Node<'t>, t: Type, span: Span) {
    let default = ctx.const_int(init);
    // The axis whose extent a `local_size_x_id`-style qualifier gives by this id.
    let axes = ctx.d.group_size_layout.unwrap_or_default();
    let qualifiers = file_layout_qualifiers(ctx, init);
    let axis = axes.iter().position(|name| qualifiers.iter().any(|&(key, value)| key.strip_prefix(name) == Some("_id") && value == Some(id)));
    if let Some(axis) = axis {
        ctx.globals.insert(name, GlobalBinding::GroupExtent { axis: axis as u8, default });
        return;
    }
    let g = ctx.add_global(&name, GlobalKind::Constant, MemSpace::Constant, &SrcType::Scalar(t), false, span);
    let init = match (default, t) {
        (Some(v), Type::Bool) => vec![lockstep_ir::Const::Bool(v != 0)],
        (Some(v), _) if t.is_int() => vec![lockstep_ir::Const::Int(v as u64)],
        _ => {
            let mut vals = Vec::new();
            constant_initializer(ctx, init, &mut vals);
            vals
        }
    };
    let global = &mut ctx.module.globals[g.index()];
    global.open_value = Some(lockstep_ir::OpenValue::PipelineConstant);
    global.init = init;
    ctx.globals.insert(name, GlobalBinding::Mem { global: g, ty: SrcType::Scalar(t) });
}

/// The most elements of an array of interface blocks laid out one allocation each.
const MAX_BLOCK_ARRAY: i64 = 64;

/// A GLSL interface block, `buffer B { float data[]; } inst;`: each member
/// is one allocation in the block's space (its qualifier: `buffer`, `uniform`,
/// `shared`), named `data` when the block has no instance name and
/// `inst.data` when it has one.
fn interface_block<'t>(ctx: &mut Ctx<'t>, n: Node<'t>, block: Node<'t>) {
    let words = decl_words(ctx, n);
    let Some(space) = words.iter().find_map(|w| ctx.d.space_qualifier(w)) else {
        ctx.warn("unsupported", n, "an interface block without `buffer`, `uniform` or `shared`".into());
        return;
    };
    let coherent = words.iter().any(|w| ctx.d.coherent_qualifiers.contains(w));
    let mut c = n.walk();
    let after_block: Vec<Node<'t>> = n.named_children(&mut c).skip_while(|x| x.id() != block.id()).skip(1).collect();
    // An array of blocks (`buffer B { … } bufs[4];`) binds one buffer per
    // element: each is its own allocation, `bufs[2].data`.
    let instances: Vec<Option<String>> = match after_block.as_slice() {
        [] => vec![None],
        [name] if ctx.kind(*name) == "identifier" => vec![Some(ctx.text(*name).to_string())],
        [array] if ctx.kind(*array) == "array_declarator" => {
            let name = array.field(ctx.fields.declarator).filter(|d| ctx.kind(*d) == "identifier").map(|d| ctx.text(d).to_string());
            let len = array.field(ctx.fields.size).and_then(|size| ctx.const_int(size)).filter(|len| (1..=MAX_BLOCK_ARRAY).contains(len));
            // Declared either way: its uses are noted as accesses, not as unknown names.
            if let Some(name) = &name {
                ctx.block_arrays.insert(name.clone());
            }
            match (name, len) {
                (Some(name), Some(len)) => (0..len).map(|i| Some(format!("{name}[{i}]"))).collect(),
                _ => {
                    ctx.warn("unsupported", *array, format!("an array of interface blocks without a constant length of at most {MAX_BLOCK_ARRAY}"));
                    return;
                }
            }
        }
        [other, ..] => {
            ctx.warn("unsupported", *other, "an interface block declared with more than an instance name".into());
            return;
        }
    };
    let kind = match space {
        MemSpace::Shared => GlobalKind::GroupShared,
        MemSpace::Constant => GlobalKind::Constant,
        _ => GlobalKind::Uav,
    };
    let mut c = block.walk();
    let members: Vec<Node<'t>> = block.named_children(&mut c).filter(|m| ctx.kind(*m) == "field_declaration").collect();
    for member in members {
        let Some(type_node) = member.field(ctx.fields.ty) else { continue };
        // A member of a type lockstep does not know is still memory, one value per element.
        let resolved = ctx.resolve_type(type_node);
        let t = resolved.clone().unwrap_or_else(|| unknown_element_type(ctx, type_node));
        let mut cc = member.walk();
        let decls: Vec<_> = member.fields(ctx.fields.declarator, &mut cc).collect();
        for d in decls {
            let Some((member, ty)) = ctx.declarator(d, t.clone(), MemSpace::Unknown) else { continue };
            for instance in &instances {
                let name = match instance {
                    Some(instance) => format!("{instance}.{member}"),
                    None => member.clone(),
                };
                if resolved.is_none() {
                    ctx.unknown_typed.insert(name.clone());
                }
                let span = ctx.span(d);
                let g = ctx.add_global(&name, kind.clone(), space, &ty, coherent, span);
                ctx.globals.insert(name, GlobalBinding::Mem { global: g, ty: ty.clone() });
            }
        }
    }
}

fn constant_initializer<'t>(ctx: &Ctx<'t>, n: Node<'t>, out: &mut Vec<Const>) {
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if ctx.kind(x) == "initializer_list" {
            let mut c = x.walk();
            let kids: Vec<_> = x.named_children(&mut c).collect();
            stack.extend(kids.into_iter().rev());
        } else if let Some(v) = ctx.const_int(x) {
            out.push(Const::Int(v as u64));
        } else if let Ok(f) = ctx.text(x).trim_end_matches(['f', 'F', 'h', 'H']).parse::<f64>() {
            out.push(Const::Float(f));
        } else {
            out.push(Const::Int(0));
        }
    }
}

/// A resource's allocation, bound to `name` ([`GlobalBinding::Resource`]).
/// Kernels of one file whose images share a name (and writability) share
/// the allocation, as a launch names it.
pub(crate) fn resource_global(ctx: &mut Ctx, name: String, kind: ResourceKind, elem: &SrcType, writable: bool, coherent: bool, span: Span) {
    if let Some(&GlobalBinding::Resource { global, kind: ResourceKind::Texture { .. }, writable: w, .. }) = ctx.globals.get(&name) {
        if matches!(kind, ResourceKind::Texture { .. }) && w == writable {
            ctx.globals.insert(name, GlobalBinding::Resource { global, kind, elem: elem.clone(), writable });
            return;
        }
    }
    let g = ctx.add_global(&name, resource_kind(kind, writable), resource_space(kind, writable), elem, coherent, span);
    ctx.module.globals[g.index()].len = None;
    if let ResourceKind::Texture { .. } = kind {
        ctx.module.globals[g.index()].texel_width = MAX_TEXTURE_WIDTH;
    }
    ctx.globals.insert(name, GlobalBinding::Resource { global: g, kind, elem: elem.clone(), writable });
}

fn resource_kind(kind: ResourceKind, writable: bool) -> GlobalKind {
    match kind {
        ResourceKind::ConstantBuffer => GlobalKind::Constant,
        _ if writable => GlobalKind::Uav,
        _ => GlobalKind::ReadOnly,
    }
}

fn resource_space(kind: ResourceKind, writable: bool) -> MemSpace {
    match kind {
        ResourceKind::ConstantBuffer => MemSpace::Constant,
        _ if writable => MemSpace::Device,
        _ => MemSpace::Constant,
    }
}
