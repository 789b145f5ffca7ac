//! Pointers to functions as values: `vec_dot_t f = get_vec_dot<type>();
//! f(x, y)`. Naming a function (`f`, `f<D, 32>`, `&f`) makes a value of type
//! [`SrcType::Function`] that holds the index of a [`FunctionValue`]; it
//! travels through locals, parameters, struct members and returns like any
//! other value. A call through it inlines the function it names when that
//! is one constant (the usual `constexpr` choice by template argument);
//! otherwise lockstep says so and assumes the call may touch any memory.

use crate::expr::callee_name;
use crate::srctype::SrcType;
use crate::stmt::{Binding, FnLowerer, RV};
use crate::template::{self, TemplateArg};
use lockstep_ir::Type;
use lockstep_source::Span;
use lockstep_syntax::{Node, NodeFields};

/// A function named as a value, with the template arguments it was named
/// with (read where it was named).
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionValue {
    pub name: String,
    pub template_args: Option<Vec<TemplateArg>>,
}

impl<'c, 't> FnLowerer<'c, 't> {
    /// The value of a function named in an expression (`f`, `f<D, 32>`,
    /// `ns::f`), or None when the name is not a function's.
    pub(crate) fn function_value(&mut self, n: Node<'t>, span: Span) -> Option<RV> {
        let (name_node, list) = match self.cx.kind(n) {
            "template_function" => (n.field(self.cx.fields.name)?, n.field(self.cx.fields.arguments)),
            "identifier" | "qualified_identifier" => (n, None),
            _ => return None,
        };
        let name = callee_name(self.cx.text(name_node));
        if self.lookup(&name).is_some() {
            return None;
        }
        let def = *self.cx.funcs.get(&name)?.first()?;
        let template_args = list.map(|list| {
            let params = template::template_parameters(self.cx, def).map(|p| template::parameter_names(self.cx, p)).unwrap_or_default();
            let written = template::argument_nodes(self.cx, list);
            written.into_iter().zip(params).map(|(a, (_, is_type))| template::argument(self.cx, is_type, a)).collect()
        });
        let value = FunctionValue { name, template_args };
        let index = match self.cx.function_values.iter().position(|v| *v == value) {
            Some(i) => i,
            None => {
                self.cx.function_values.push(value);
                self.cx.function_values.len() - 1
            }
        };
        let v = self.int(Type::I32, index as i64, span);
        Some(RV { vals: vec![v], ty: SrcType::Function })
    }

    /// The function value a call's callee evaluates to, when the callee is a
    /// variable or member holding one (`f(x)`, `(*f)(x)`, `funcs.load(x)`);
    /// None for a callee that names a function or anything else.
    pub(crate) fn called_function_value(&mut self, callee: Node<'t>) -> Option<RV> {
        let mut n = callee;
        while matches!(self.cx.kind(n), "parenthesized_expression" | "pointer_expression") && n.named_child_count() == 1 {
            n = n.named_child(0)?;
        }
        let holds_function = match self.cx.kind(n) {
            "identifier" => matches!(self.lookup(self.cx.text(n)), Some(Binding::Place(p)) if p.ty() == &SrcType::Function),
            "field_expression" => {
                let obj = n.field(self.cx.fields.argument)?;
                let field = n.field(self.cx.fields.field)?;
                let Some(Binding::Place(p)) = (self.cx.kind(obj) == "identifier").then(|| self.lookup(self.cx.text(obj))).flatten() else { return None };
                let SrcType::Struct(si) = p.ty() else { return None };
                matches!(self.cx.structs[*si].member(&self.cx.structs, self.cx.text(field)), Some((_, SrcType::Function)))
            }
            _ => false,
        };
        if !holds_function {
            return None;
        }
        Some(self.expr(n))
    }

    /// A call through a function value: the function it names, inlined,
    /// when that is one constant; otherwise a call that may touch anything.
    pub(crate) fn call_function_value(&mut self, callee: RV, args: &[Node<'t>], call: Node<'t>, span: Span) -> RV {
        let named = callee.vals.first().and_then(|&v| self.f.as_int(v)).and_then(|i| self.cx.function_values.get(usize::try_from(i).ok()?).cloned());
        let target = named.and_then(|value| {
            let defs = self.cx.funcs.get(&value.name)?.clone();
            (!defs.is_empty()).then_some((value, defs))
        });
        let Some((value, defs)) = target else {
            let lowered: Vec<_> = args.iter().flat_map(|&a| self.expr(a).vals).collect();
            let what = format!("the call through `{}`, a function pointer whose target lockstep cannot tell,", self.cx.text(call.field(self.cx.fields.function).unwrap_or(call)));
            let v = self.unmodelled(call, what, lowered, span);
            return self.scalar(v);
        };
        let lowered = self.arguments(args, span);
        let def = self.choose_overload(&defs, &lowered);
        self.explicit_template_args = value.template_args;
        self.inline_call(def, &value.name, &lowered, call)
    }
}
