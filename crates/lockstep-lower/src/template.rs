//! Templates: binding a template's parameters to the arguments of one
//! instantiation, or leaving them generic when no instantiation is in sight.
//!
//! A binding is in force while the template's body is lowered: type names
//! resolve to the bound type, value names to the bound constant. A type
//! parameter with no argument is an opaque scalar (its memory is still
//! memory, one cell per element); a value parameter with no argument is an
//! unknown constant, the same for every thread (never zero).

use crate::module::Ctx;
use crate::srctype::SrcType;
use lockstep_ir::{GlobalId, GlobalKind, MemSpace, Type};
use lockstep_syntax::{Node, NodeFields};
use rustc_hash::FxHashMap;

/// What a template parameter stands for in one instantiation.
#[derive(Clone, Debug, PartialEq)]
pub enum TemplateArg {
    Type(SrcType),
    /// A type parameter with no argument lockstep can read: its values are
    /// opaque scalars ([`GENERIC_TYPE`]), and no question about which type
    /// it is (`std::is_same`) has an answer.
    OpaqueType,
    Int(i64),
    /// A value argument that is not a constant expression.
    Unknown,
    /// A value parameter with no known argument: an unknown constant, the
    /// same for every thread, read from a constant cell of its own (so every
    /// use is the same value).
    Constant(GlobalId),
    /// A value argument that names a function of the file (`dequantize_f16`
    /// for a `void (*deq)(…)` parameter): a call through the parameter calls it.
    Function(String),
}

/// The scalar a type parameter stands for when nothing binds it.
pub const GENERIC_TYPE: SrcType = SrcType::Scalar(Type::F32);

pub type Bindings = FxHashMap<String, TemplateArg>;

/// The parameter list of a definition nested in a `template <…>` declaration.
pub fn template_parameters<'t>(ctx: &Ctx<'t>, def: Node<'t>) -> Option<Node<'t>> {
    let parent = def.parent()?;
    if ctx.kind(parent) != "template_declaration" {
        return None;
    }
    parent.field(ctx.fields.parameters)
}

/// The names of a template's parameters, in order, and whether each names a type.
pub fn parameter_names<'t>(ctx: &Ctx<'t>, params: Node<'t>) -> Vec<(String, bool)> {
    let mut c = params.walk();
    params.named_children(&mut c).filter_map(|p| parameter(ctx, p).map(|(name, is_type, _)| (name, is_type))).collect()
}

/// A parameter's name, whether it is a type, and its default.
fn parameter<'t>(ctx: &Ctx<'t>, p: Node<'t>) -> Option<(String, bool, Option<Node<'t>>)> {
    match ctx.kind(p) {
        "type_parameter_declaration" | "variadic_type_parameter_declaration" => {
            let mut c = p.walk();
            let name = p.named_children(&mut c).filter(|x| ctx.kind(*x) == "type_identifier").last()?;
            Some((ctx.text(name).to_string(), true, None))
        }
        "optional_type_parameter_declaration" => {
            let name = p.field(ctx.fields.name)?;
            Some((ctx.text(name).to_string(), true, p.field(ctx.fields.default_type)))
        }
        "parameter_declaration" | "variadic_parameter_declaration" | "optional_parameter_declaration" => {
            let mut d = p.field(ctx.fields.declarator)?;
            for _ in 0..8 {
                if ctx.kind(d) == "identifier" {
                    break;
                }
                d = d.field(ctx.fields.declarator).or_else(|| d.named_child(0))?;
            }
            let default = if ctx.kind(p) == "optional_parameter_declaration" { p.field(ctx.fields.default_value) } else { None };
            Some((ctx.text(d).to_string(), false, default))
        }
        _ => None,
    }
}

/// The arguments of a template argument list (`<float, 16>`).
pub fn argument_nodes<'t>(ctx: &Ctx<'t>, list: Node<'t>) -> Vec<Node<'t>> {
    let mut c = list.walk();
    list.named_children(&mut c).filter(|x| ctx.kind(*x) != "comment").collect()
}

/// One argument, read under the bindings in force where it is written.
pub fn argument<'t>(ctx: &mut Ctx<'t>, is_type: bool, arg: Node<'t>) -> TemplateArg {
    if is_type {
        return type_argument(ctx, arg).map_or(TemplateArg::OpaqueType, TemplateArg::Type);
    }
    match ctx.const_int(arg) {
        Some(v) => TemplateArg::Int(v),
        None => function_argument(ctx, ctx.text(arg)),
    }
}

/// A value argument written as a function's name (`f`, `&f`, `ns::f`): that
/// function when the file defines it or a function parameter of the
/// enclosing template is bound to it, else unknown.
fn function_argument(ctx: &Ctx, written: &str) -> TemplateArg {
    let name = written.trim().trim_start_matches('&').trim();
    // `f<float, half>`: the function template, its arguments deduced (or generic) at the call.
    let name = name.split('<').next().unwrap_or(name).trim();
    let name = name.rsplit("::").next().unwrap_or(name);
    match (ctx.funcs.get(name), ctx.template_args.get(name)) {
        (Some(defs), _) if !defs.is_empty() => TemplateArg::Function(name.to_string()),
        // The enclosing template's own function parameter, handed on.
        (_, Some(bound @ TemplateArg::Function(_))) => bound.clone(),
        _ => TemplateArg::Unknown,
    }
}

fn type_argument<'t>(ctx: &mut Ctx<'t>, arg: Node<'t>) -> Option<SrcType> {
    if ctx.kind(arg) != "type_descriptor" {
        return ctx.resolve_type(arg);
    }
    let base = ctx.resolve_type(arg.field(ctx.fields.ty)?)?;
    // `T*` as an argument: the declarator says pointer.
    let pointer = arg.field(ctx.fields.declarator).is_some_and(|d| ctx.text(d).trim_start().starts_with('*'));
    Some(if pointer { SrcType::Pointer(Box::new(base), MemSpace::Unknown) } else { base })
}

/// Binds a template's parameters: explicit arguments first (already read
/// under the caller's bindings), then deduced ones, then defaults (read under
/// the parameters bound so far), and generic for the rest.
pub fn bind<'t>(ctx: &mut Ctx<'t>, params: Node<'t>, explicit: &[TemplateArg], deduced: &Bindings) -> Bindings {
    let mut c = params.walk();
    let list: Vec<Node<'t>> = params.named_children(&mut c).collect();
    let outer = std::mem::take(&mut ctx.template_args);
    let mut position = 0;
    for p in list {
        let Some((name, is_type, default)) = parameter(ctx, p) else { continue };
        let bound = match explicit.get(position) {
            Some(arg) => arg.clone(),
            None => match (deduced.get(&name), default) {
                (Some(arg), _) => arg.clone(),
                (None, Some(d)) => argument(ctx, is_type, d),
                (None, None) if is_type => TemplateArg::OpaqueType,
                (None, None) => TemplateArg::Unknown,
            },
        };
        let bound = match bound {
            TemplateArg::Unknown => {
                let span = ctx.span(p);
                let value = ctx.add_global(&name, GlobalKind::Constant, MemSpace::Constant, &SrcType::Scalar(Type::I32), false, span);
                ctx.module.globals[value.index()].open_value = Some(lockstep_ir::OpenValue::TemplateParameter);
                TemplateArg::Constant(value)
            }
            other => other,
        };
        position += 1;
        ctx.template_args.insert(name, bound);
    }
    std::mem::replace(&mut ctx.template_args, outer)
}

/// Template arguments as written, with whitespace removed, to compare two
/// spellings of one instantiation.
pub fn normalized(written: &str) -> String {
    written.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The arguments of a written list (`float,16`), split at top-level commas.
pub fn split_arguments(written: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in written.char_indices() {
        match c {
            '<' | '(' | '[' | '{' => depth += 1,
            '>' | ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(written[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(written[start..].trim().to_string());
    out
}

/// One argument known only by its text (a launch in host code, which is
/// not parsed): a type by its name, a value when it is a literal, `true`,
/// `false`, a named integer constant or a function; anything else unknown.
pub fn argument_text(ctx: &Ctx, is_type: bool, written: &str) -> TemplateArg {
    let written = written.trim();
    if is_type {
        let (name, pointer) = match written.strip_suffix('*') {
            Some(base) => (base.trim(), true),
            None => (written, false),
        };
        let name = name.strip_prefix("const ").unwrap_or(name).trim();
        return match ctx.type_named(name) {
            Some(t) if pointer => TemplateArg::Type(SrcType::Pointer(Box::new(t), MemSpace::Unknown)),
            Some(t) => TemplateArg::Type(t),
            None => TemplateArg::OpaqueType,
        };
    }
    match written {
        "true" => TemplateArg::Int(1),
        "false" => TemplateArg::Int(0),
        _ => match crate::module::parse_int_literal(written) {
            Some((v, _)) => TemplateArg::Int(v as i64),
            None => match ctx.globals.get(written) {
                Some(crate::module::GlobalBinding::Int(v, _)) => TemplateArg::Int(*v),
                _ => function_argument(ctx, written),
            },
        },
    }
}
