//! Pointers to functions as values: `vec_dot_t f = get_vec_dot<type>();
//! f(x, y)`. Naming a function (`f`, `f<D, 32>`, `&f`) makes a value of type
//! [`SrcType::Function`] that holds one more than the index of a
//! [`FunctionValue`] (0 is the null pointer); it
//! travels through locals, parameters, struct members and returns like any
//! other value. A call through it inlines the function it names when that
//! is one constant (the usual `constexpr` choice by template argument);
//! otherwise lockstep says so and assumes the call may touch any memory.

use crate::expr::callee_name;
use crate::srctype::SrcType;
use crate::ssa::Var;
use crate::stmt::{Binding, FnLowerer, Place, RV};
use crate::template::{self, TemplateArg};
use lockstep_ir::{BlockId, Op, Terminator, Type};
use rustc_hash::FxHashSet;
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
        // 0 stays the null pointer (`if (f != nullptr)`).
        let v = self.int(Type::I32, index as i64 + 1, span);
        Some(RV { vals: vec![v], ty: SrcType::Function })
    }

    /// The function a function value's integer names (None for null or anything else).
    fn named_function(&self, id: i64) -> Option<FunctionValue> {
        self.cx.function_values.get(usize::try_from(id.checked_sub(1)?).ok()?).cloned()
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
            "identifier" => match self.lookup(self.cx.text(n)) {
                Some(Binding::Place(Place::Vars { vars, ty: SrcType::Function })) => {
                    if let Some(&v) = self.constant_values.get(&vars[0]) {
                        return Some(RV { vals: vec![v], ty: SrcType::Function });
                    }
                    true
                }
                Some(Binding::Place(p)) => p.ty() == &SrcType::Function,
                _ => false,
            },
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
        let named = callee.vals.first().and_then(|&v| self.f.as_int(v)).and_then(|i| self.named_function(i));
        let target = named.and_then(|value| {
            let defs = self.cx.funcs.get(&value.name)?.clone();
            (!defs.is_empty()).then_some((value, defs))
        });
        let Some((value, defs)) = target else {
            if let Some(rv) = self.dispatch(&callee, args, call, span) {
                return rv;
            }
            let lowered: Vec<_> = args.iter().flat_map(|&a| self.expr(a).vals).collect();
            let what = format!("the call through `{}`, a function pointer whose target lockstep cannot tell,", self.cx.text(call.field(self.cx.fields.function).unwrap_or(call)));
            let v = self.unmodelled(call, what, lowered, span);
            return self.scalar(v);
        };
        let lowered = self.arguments(args, span);
        self.inline_function_value(value, &defs, &lowered, call)
    }

    fn inline_function_value(&mut self, value: FunctionValue, defs: &[Node<'t>], args: &[(Option<Place>, RV)], call: Node<'t>) -> RV {
        let def = self.choose_overload(defs, args);
        self.explicit_template_args = value.template_args;
        self.inline_call(def, &value.name, args, call)
    }

    /// A call through a pointer that is one of a few functions (chosen by a
    /// template argument lockstep does not know): a switch on the pointer,
    /// each case the call of one of them. None where the pointer can be
    /// anything else, or more than [`MAX_DISPATCH`] functions.
    fn dispatch(&mut self, callee: &RV, args: &[Node<'t>], call: Node<'t>, span: Span) -> Option<RV> {
        let &v = callee.vals.first()?;
        let mut candidates: Vec<(u64, FunctionValue, Vec<Node<'t>>)> = Vec::new();
        let mut seen = FxHashSet::default();
        let mut stack = vec![v];
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            match &self.f.inst(x).op {
                // A phi still open may gain other values.
                Op::Phi(_) if self.ssa.is_open_phi(x) => return None,
                Op::Phi(incoming) => stack.extend(incoming.iter().map(|&(_, y)| y)),
                _ => {
                    let id = u64::try_from(self.f.as_int(x)?).ok()?;
                    // A call through the null pointer is no execution of a valid program.
                    if id == 0 {
                        continue;
                    }
                    if candidates.iter().any(|(i, ..)| *i == id) {
                        continue;
                    }
                    let value = self.named_function(i64::try_from(id).ok()?)?;
                    let defs = self.cx.funcs.get(&value.name).filter(|d| !d.is_empty())?.clone();
                    candidates.push((id, value, defs));
                    if candidates.len() > MAX_DISPATCH {
                        return None;
                    }
                }
            }
        }
        let lowered = self.arguments(args, span);
        let exit = self.new_block(span);
        let blocks: Vec<BlockId> = candidates.iter().map(|_| self.new_block(span)).collect();
        let cases = candidates.iter().map(|(id, ..)| *id).zip(blocks.iter().copied()).collect();
        self.terminate(Terminator::Switch { value: v, cases, default: exit }, span, None);
        let mut result: Option<(Vec<Var>, SrcType)> = None;
        for ((_, value, defs), b) in candidates.into_iter().zip(blocks) {
            self.seal(b);
            self.enter(b);
            let rv = self.inline_function_value(value, &defs, &lowered, call);
            if rv.ty != SrcType::Void {
                let (vars, ty) = result.get_or_insert_with(|| (self.new_vars(&rv.ty, "result"), rv.ty.clone())).clone();
                self.assign(&Place::Vars { vars, ty }, &rv, span, None);
            }
            self.jump(exit, span);
        }
        Some(self.returned(result, exit, span))
    }
}

/// The most functions a call through a pointer is dispatched over.
const MAX_DISPATCH: usize = 4;
