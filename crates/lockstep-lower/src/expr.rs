//! Expressions: values, places (assignable locations), calls and intrinsics.

use crate::dialect::{flag_barrier, AxisBuiltin, BallotQuery, BuiltinVar, ImageAccess, Intrinsic, IntrinsicOp, MatrixFunction, MatrixProduct, Operands, ResourceKind, SelectCondition, VectorAccess, VectorIntrinsic};
use crate::module::{parse_int_literal, Ctx, GlobalBinding, MAX_NESTING};
use crate::srctype::{parse_numeric, SrcType};
use crate::ssa::Var;
use crate::template::TemplateArg;
use crate::view::View;
use crate::stmt::{global_binding, mem_ref, Binding, FnLowerer, Offsets, Place, RV};
use lockstep_diag::{Diagnostic, Severity};
use lockstep_ir::{AtomicOp, BinOp, Builtin, Callee, CmpOp, Const, MathFn, MemSpace, Op, Root, Scope, Type, UnOp, Value, WaveOp};
use lockstep_source::Span;
use lockstep_syntax::{Node, NodeFields};
use std::borrow::Cow;

/// The type C computes an operand of an arithmetic operation in: booleans
/// and integers narrower than 32 bits are promoted to `int`.
fn promoted(t: Type) -> Type {
    if t == Type::Bool || t.is_narrow_int() {
        Type::I32
    } else {
        t
    }
}

/// The common type of a binary arithmetic operation (usual arithmetic conversions, simplified).
fn arith_type(a: Type, b: Type) -> Type {
    let (a, b) = (promoted(a), promoted(b));
    let rank = |t: Type| match t {
        Type::F64 => 9,
        Type::F32 => 8,
        Type::F16 => 7,
        Type::U64 => 6,
        Type::I64 => 5,
        Type::U32 => 4,
        Type::Ptr(_) => 10,
        _ => 3,
    };
    if rank(a) >= rank(b) {
        a
    } else {
        b
    }
}

const SWIZZLE_SETS: [&str; 3] = ["xyzw", "rgba", "stpq"];

fn swizzle(field: &str, width: u32) -> Option<Vec<u32>> {
    let width = width.max(1);
    // OpenCL C: `.s0123` by number, `.lo`/`.hi` halves, `.even`/`.odd` lanes.
    let half = width.div_ceil(2);
    let numbered: Option<Vec<u32>> = match field {
        "lo" => Some((0..half).collect()),
        "hi" => Some((half..width.max(2)).collect()),
        "even" => Some((0..width).step_by(2).collect()),
        "odd" => Some((1..width.max(2)).step_by(2).collect()),
        _ => field.strip_prefix(['s', 'S']).and_then(|digits| digits.chars().map(|c| c.to_digit(16)).collect()),
    };
    if let Some(idx) = numbered.filter(|idx| !idx.is_empty() && idx.len() <= 16 && idx.iter().all(|&i| i < width)) {
        return Some(idx);
    }
    for set in SWIZZLE_SETS {
        let idx: Option<Vec<u32>> = field.chars().map(|c| set.find(c).map(|i| i as u32)).collect();
        if let Some(idx) = idx {
            if !idx.is_empty() && idx.len() <= 4 && idx.iter().all(|&i| i < width.max(1)) {
                return Some(idx);
            }
        }
    }
    None
}

/// What an element of a cooperative matrix is called where its unknown value shows.
const MATRIX_ELEMENT: &str = "an element of a cooperative matrix";

impl<'c, 't> FnLowerer<'c, 't> {
    pub fn undef(&mut self, ty: Type, span: Span) -> RV {
        let v = self.emit(Op::Undef, ty, span);
        RV { vals: vec![v], ty: SrcType::Scalar(ty) }
    }

    /// A value of type `ty` nothing defines, one undef per cell.
    pub(crate) fn undef_of(&mut self, ty: &SrcType, span: Span) -> RV {
        let mut types = Vec::new();
        ty.scalar_types(&self.cx.structs, &mut types);
        let vals = types.iter().map(|&t| self.emit(Op::Undef, t, span)).collect();
        RV { vals, ty: ty.clone() }
    }

    pub(crate) fn scalar(&self, v: Value) -> RV {
        RV { vals: vec![v], ty: SrcType::Scalar(self.f.inst(v).ty) }
    }

    pub fn convert(&mut self, v: Value, to: Type, span: Span) -> Value {
        let from = self.f.inst(v).ty;
        if from == to || matches!((from, to), (Type::Ptr(_), Type::Ptr(_))) {
            return v;
        }
        if to == Type::Bool {
            return self.emit_bool(v, span);
        }
        // Fold literal conversions so constants stay constants for the analyses.
        if let Some(c) = self.f.as_const(v).cloned() {
            let folded = match (c, to.is_float()) {
                (Const::Int(_), false) | (Const::Bool(_), false) => self.f.as_int(v).map(|i| Const::Int(i as u64)),
                (Const::Int(_), true) => self.f.as_int(v).map(|i| Const::Float(i as f64)),
                (Const::Float(x), true) => Some(Const::Float(x)),
                (Const::Float(x), false) => Some(Const::Int(x as i64 as u64)),
                (Const::Bool(b), true) => Some(Const::Float(b as u8 as f64)),
            };
            // A narrow integer keeps the low bits (`(uchar)300` is 44).
            let folded = match folded {
                Some(Const::Int(bits)) if to.is_narrow_int() => Some(Const::Int(bits & ((1 << to.bits()) - 1))),
                other => other,
            };
            if let Some(c) = folded {
                return self.konst(to, c, span);
            }
        }
        self.emit(Op::Convert(v), to, span)
    }

    /// Converts every component of `rv` to the layout of `ty` (broadcasting scalars).
    pub fn convert_to(&mut self, rv: &RV, ty: &SrcType, span: Span) -> Vec<Value> {
        let mut types = Vec::new();
        ty.scalar_types(&self.cx.structs, &mut types);
        if matches!(ty, SrcType::Pointer(..)) || matches!(rv.ty, SrcType::Pointer(..)) {
            return rv.vals.clone();
        }
        let n = types.len();
        let mut out = Vec::with_capacity(n);
        for (i, &t) in types.iter().enumerate() {
            let src = if rv.vals.len() == 1 { rv.vals.first() } else { rv.vals.get(i) };
            let v = match src {
                Some(&v) => self.convert(v, t, span),
                None => self.emit(Op::Undef, t, span),
            };
            out.push(v);
        }
        out
    }

    pub fn assign(&mut self, place: &Place, rv: &RV, span: Span, name: Option<&str>) {
        let ty = place.ty().clone();
        let vals = self.convert_to(rv, &ty, span);
        match place {
            Place::MatrixElement { var, index, .. } => {
                let old = self.ssa.read(&mut self.f, *var, self.cur, span);
                let operands = [old, *index].into_iter().chain(vals).collect();
                let t = self.f.inst(old).ty;
                let new = self.emit(Op::Call(Callee::UnknownValue(MATRIX_ELEMENT.into()), operands), t, span);
                self.ssa.write(*var, self.cur, new);
            }
            Place::Component { vars, width, index, .. } => {
                for (k, element) in vars.chunks(*width).enumerate() {
                    let chosen = self.is_component(*index, k, span);
                    for (&v, &x) in element.iter().zip(&vals) {
                        let old = self.ssa.read(&mut self.f, v, self.cur, span);
                        let t = self.f.inst(old).ty;
                        let new = self.emit(Op::Select(chosen, x, old), t, span);
                        self.ssa.write(v, self.cur, new);
                    }
                }
            }
            Place::Bits { var, index, ty } => {
                if let Some(&x) = vals.first() {
                    self.write_bits(*var, *index, ty.scalar(&self.cx.structs), x, span);
                }
            }
            Place::Vars { vars, .. } => {
                for (v, x) in vars.iter().zip(vals) {
                    self.ssa.write(*v, self.cur, x);
                    if let Some(n) = name {
                        self.f.inst_mut(x).name.get_or_insert_with(|| n.to_string());
                    }
                }
            }
            Place::Mem { space, root, base, offsets, .. } => {
                for (off, x) in offsets.iter().zip(vals) {
                    let idx = self.offset(*base, off, span);
                    self.emit(Op::Store(mem_ref(*space, *root, idx), x), Type::Void, span);
                }
            }
        }
    }

    /// An array in memory used as a value: a pointer to its first element
    /// (past its offset in the struct that holds it); None for anything else.
    fn decayed(&mut self, p: &Place, span: Span) -> Option<RV> {
        let Place::Mem { space, root, base, offsets, ty: SrcType::Array(elem, _) } = p else { return None };
        let first = self.offset(*base, offsets.first().unwrap_or(0), span);
        let ptr = self.emit(Op::AddrOf(*root, first), Type::Ptr(*space), span);
        self.points_into(ptr, elem);
        Some(RV { vals: vec![ptr], ty: SrcType::Pointer(elem.clone(), *space) })
    }

    fn offset(&mut self, base: Value, off: u32, span: Span) -> Value {
        if off == 0 {
            return base;
        }
        let t = self.f.inst(base).ty;
        if let Some(b) = self.f.as_int(base) {
            return self.int(t, b + off as i64, span);
        }
        let k = self.int(t, off as i64, span);
        self.emit(Op::Binary(BinOp::Add, base, k), t, span)
    }

    /// Whether a run-time element index is `k` (a boolean value).
    fn is_component(&mut self, index: Value, k: usize, span: Span) -> Value {
        let t = self.f.inst(index).ty;
        let k = self.int(t, k as i64, span);
        self.emit(Op::Cmp(CmpOp::Eq, index, k), Type::Bool, span)
    }

    pub fn read_place(&mut self, place: &Place, span: Span) -> RV {
        match place {
            Place::MatrixElement { var, index, ty } => {
                // Each thread holds its own elements: the value varies with the lane.
                let matrix = self.ssa.read(&mut self.f, *var, self.cur, span);
                let lane = self.builtin(Builtin::LaneId, span);
                let t = ty.scalar(&self.cx.structs);
                let v = self.emit(Op::Call(Callee::UnknownValue(MATRIX_ELEMENT.into()), vec![matrix, *index, lane]), t, span);
                RV { vals: vec![v], ty: ty.clone() }
            }
            Place::Component { vars, width, index, ty } => {
                let mut chosen: Vec<Value> = Vec::with_capacity(*width);
                for (k, element) in vars.chunks(*width).enumerate() {
                    let xs: Vec<Value> = element.iter().map(|&v| self.ssa.read(&mut self.f, v, self.cur, span)).collect();
                    if k == 0 {
                        chosen = xs;
                        continue;
                    }
                    let is_k = self.is_component(*index, k, span);
                    for (c, x) in chosen.iter_mut().zip(xs) {
                        let t = self.f.inst(x).ty;
                        *c = self.emit(Op::Select(is_k, x, *c), t, span);
                    }
                }
                RV { vals: chosen, ty: ty.clone() }
            }
            Place::Vars { vars, ty } => {
                let vals = vars.iter().map(|&v| self.ssa.read(&mut self.f, v, self.cur, span)).collect();
                RV { vals, ty: ty.clone() }
            }
            Place::Bits { var, index, ty } => {
                let v = self.read_bits(*var, *index, ty.scalar(&self.cx.structs), span);
                RV { vals: vec![v], ty: ty.clone() }
            }
            Place::Mem { space, root, base, offsets, ty } => {
                let mut types = Vec::new();
                ty.scalar_types(&self.cx.structs, &mut types);
                let mut vals = Vec::with_capacity(offsets.len());
                for (i, off) in offsets.iter().enumerate() {
                    let idx = self.offset(*base, off, span);
                    let t = types.get(i).copied().unwrap_or(Type::F32);
                    vals.push(self.emit(Op::Load(mem_ref(*space, *root, idx)), t, span));
                }
                RV { vals, ty: ty.clone() }
            }
        }
    }

    // ----- expressions -----

    pub fn expr(&mut self, n: Node<'t>) -> RV {
        self.depth += 1;
        let span = self.span(n);
        let rv = if self.depth > MAX_NESTING {
            if self.depth == MAX_NESTING + 1 {
                self.cx.diags.push(
                    Diagnostic::new("nesting-too-deep", Severity::Warning, span, "expression nested too deeply; skipped")
                        .with_primary_label("lockstep stops descending here")
                        .with_note(format!("nesting beyond {MAX_NESTING} levels is not analysed")),
                );
            }
            self.undef(Type::I32, span)
        } else {
            self.expr_inner(n, span)
        };
        self.depth -= 1;
        rv
    }

    fn expr_inner(&mut self, n: Node<'t>, span: Span) -> RV {
        match self.cx.kind(n) {
            "number_literal" => self.number(n, span),
            "user_defined_literal" => self.suffixed_number(n, span),
            "true" => RV { vals: vec![self.konst(Type::Bool, Const::Bool(true), span)], ty: SrcType::Scalar(Type::Bool) },
            "false" => RV { vals: vec![self.konst(Type::Bool, Const::Bool(false), span)], ty: SrcType::Scalar(Type::Bool) },
            "char_literal" => {
                let c = self.cx.text(n).trim_matches('\'').chars().next().unwrap_or('\0');
                let v = self.int(Type::I32, c as i64, span);
                self.scalar(v)
            }
            "null" | "nullptr" => {
                let v = self.int(Type::I32, 0, span);
                self.scalar(v)
            }
            "string_literal" | "concatenated_string" => self.undef(Type::I32, span),
            "parenthesized_expression" => match n.named_child(0) {
                Some(e) => self.expr(e),
                None => self.undef(Type::I32, span),
            },
            "comma_expression" => {
                if let Some(l) = n.field(self.cx.fields.left) {
                    self.expr(l);
                }
                match n.field(self.cx.fields.right) {
                    Some(r) => self.expr(r),
                    None => self.undef(Type::I32, span),
                }
            }
            "identifier" => self.identifier(n, span),
            "qualified_identifier" => {
                // A class's static constant (`traits<T>::qk`, `std::is_same<T, U>::value`);
                // one that depends on a template argument lockstep does not
                // know is a constant it does not know either.
                if let Some(v) = self.cx.const_int(n) {
                    let v = self.int(Type::I32, v, span);
                    return self.scalar(v);
                }
                let member = n.field(self.cx.fields.name).map_or("", |m| self.cx.text(m));
                if n.field(self.cx.fields.scope).is_some_and(|s| self.cx.declares_static_member(s, member) || self.cx.class_name(s) == "is_same") {
                    return match self.cx.const_int(n) {
                        Some(v) => {
                            let v = self.int(Type::I32, v, span);
                            self.scalar(v)
                        }
                        None => self.undef(Type::I32, span),
                    };
                }
                match n.field(self.cx.fields.name) {
                    Some(name) => self.expr(name),
                    None => self.undef(Type::I32, span),
                }
            }
            "field_expression" => self.field_expr(n, span),
            "template_function" => match (self.cx.const_int(n), self.function_value(n, span)) {
                (Some(v), _) => {
                    let v = self.int(Type::I32, v, span);
                    self.scalar(v)
                }
                (None, Some(rv)) => rv,
                (None, None) => self.undef(Type::I32, span),
            },
            "subscript_expression" | "pointer_expression" => {
                if self.cx.kind(n) == "pointer_expression" && self.cx.text(n).trim_start().starts_with('&') {
                    return self.address_of(n, span);
                }
                match self.place(n) {
                    Some(p) => self.read_place(&p, span),
                    // Memory lockstep cannot place: the read may touch any of it.
                    None => {
                        let what = format!("the read of `{}`", self.cx.excerpt(n));
                        let v = self.unmodelled(n, what, Vec::new(), span);
                        RV { vals: vec![v], ty: SrcType::Scalar(Type::I32) }
                    }
                }
            }
            "assignment_expression" => self.assignment(n, span),
            "update_expression" => self.update(n, span),
            "unary_expression" => self.unary(n, span),
            "binary_expression" => self.binary(n, span),
            "conditional_expression" => self.conditional(n, span),
            "cast_expression" => {
                let ty = n.field(self.cx.fields.ty).and_then(|t| self.cx.resolve_type(t));
                let Some(v) = n.field(self.cx.fields.value) else { return self.undef(Type::I32, span) };
                self.cast(ty, v, span)
            }
            "sizeof_expression" => match self.cx.size_of_type(n).or_else(|| self.size_of_variable(n)) {
                Some(bytes) => {
                    let v = self.int(Type::U32, bytes, span);
                    self.scalar(v)
                }
                None => {
                    let what = self.cx.text(n).to_string();
                    let message = if what.starts_with("sizeof...") {
                        format!("`{what}`, the length of a parameter pack, is not modelled; its value is unknown")
                    } else {
                        format!("`{what}` is not a size lockstep knows (a type parameter analysed generically, a type whose layout differs between languages, or one it does not lay out); its value is unknown")
                    };
                    self.diag("unsupported", n, message);
                    self.undef(Type::U32, span)
                }
            },
            "call_expression" => self.call(n, span),
            "initializer_list" => {
                let mut vals = Vec::new();
                let mut c = n.walk();
                let kids: Vec<_> = n.named_children(&mut c).collect();
                for k in kids {
                    vals.extend(self.expr(k).vals);
                }
                let t = vals.first().map(|&v| self.f.inst(v).ty).unwrap_or(Type::I32);
                let len = vals.len() as u32;
                RV { vals, ty: if len == 1 { SrcType::Scalar(t) } else { SrcType::Vector(t, len.min(4)) } }
            }
            "compound_literal_expression" => {
                let ty = n.field(self.cx.fields.ty).and_then(|t| self.cx.resolve_type(t));
                match (ty, n.field(self.cx.fields.value)) {
                    (Some(ty @ SrcType::Struct(_)), Some(v)) => self.initializer(v, &ty),
                    (Some(ty), Some(v)) => {
                        let rv = self.expr(v);
                        let vals = self.convert_to(&rv, &ty, span);
                        RV { vals, ty }
                    }
                    _ => self.undef(Type::I32, span),
                }
            }
            "lambda_expression" | "new_expression" | "delete_expression" | "throw_expression" => {
                let what = format!("a {}", self.cx.kind(n).replace('_', " "));
                let v = self.unmodelled(n, what, Vec::new(), span);
                RV { vals: vec![v], ty: SrcType::Scalar(Type::I32) }
            }
            _ => {
                // Unknown shapes (grammar forks, error recovery): evaluate children for their effects.
                let mut c = n.walk();
                let kids: Vec<_> = n.named_children(&mut c).collect();
                let mut last = None;
                for k in kids {
                    last = Some(self.expr(k));
                }
                last.unwrap_or_else(|| self.undef(Type::I32, span))
            }
        }
    }

    /// A value converted to `ty`. An array is not read: it decays to a
    /// pointer to its first element. A pointer keeps its memory and offset,
    /// unless the cast changes the size of the elements it counts in
    /// (`*(int4 *) &tile_of_half2[r][c] = v`): lockstep does not model
    /// memory through such a view, so the result points somewhere unknown
    /// in the same memory space.
    fn cast(&mut self, ty: Option<SrcType>, v: Node<'t>, span: Span) -> RV {
        let rv = match self.place(v) {
            Some(p) => self.decayed(&p, span).unwrap_or_else(|| self.read_place(&p, span)),
            None => self.expr(v),
        };
        self.converted(ty, rv, v, span)
    }

    /// `rv`, the value of `v`, converted to `ty` (see [`Self::cast`]).
    fn converted(&mut self, ty: Option<SrcType>, rv: RV, v: Node<'t>, span: Span) -> RV {
        match ty {
            Some(ty @ (SrcType::Scalar(_) | SrcType::Vector(..) | SrcType::Matrix(..))) => {
                let vals = self.convert_to(&rv, &ty, span);
                RV { vals, ty }
            }
            Some(SrcType::Pointer(elem, _)) => {
                let space = pointer_space(&rv.ty);
                let cell_bits = |t: &SrcType| match t {
                    SrcType::Scalar(t) | SrcType::Vector(t, _) if !matches!(t, Type::Ptr(_) | Type::Void) => Some(t.bits()),
                    _ => None,
                };
                let from = match &rv.ty {
                    SrcType::Pointer(e, _) => cell_bits(e),
                    _ => None,
                };
                if let (Some(&ptr), SrcType::Pointer(from_elem, _)) = (rv.vals.first(), &rv.ty) {
                    match self.view_at(ptr, &elem, span) {
                        Some(View::Bytes(_)) => {
                            self.start_byte_view(ptr, from_elem, span);
                            return RV { ty: SrcType::Pointer(elem, space), vals: rv.vals };
                        }
                        // Noted where the view is accessed or stepped through.
                        Some(View::Cells { .. } | View::Unplaced) => return RV { ty: SrcType::Pointer(elem, space), vals: rv.vals },
                        None => {}
                    }
                }
                match (from, cell_bits(&elem), rv.vals.first()) {
                    (Some(a), Some(b), Some(&ptr)) if a != b && !self.reaches_opaque_view(ptr) => {
                        self.diag(
                            "unsupported",
                            v,
                            "a cast between pointers to elements of different sizes is not modelled; accesses through it may touch any element of the memory it points into".to_string(),
                        );
                        let view = self.emit(Op::Call(lockstep_ir::Callee::PointerView(crate::view::POINTER_VIEW.into()), vec![ptr]), Type::Ptr(space), span);
                        RV { ty: SrcType::Pointer(elem, space), vals: vec![view] }
                    }
                    _ => RV { ty: SrcType::Pointer(elem, space), vals: rv.vals },
                }
            }
            _ => rv,
        }
    }

    /// An f32 rounded to the nearest-even bfloat16, as an f32: the upper 16
    /// bits after adding half of the dropped part (ties to even); a NaN stays.
    fn rounded_to_bf16(&mut self, x: Value, span: Span) -> Value {
        let bits = self.emit(Op::Math(MathFn::Bitcast, vec![x]), Type::U32, span);
        let sixteen = self.int(Type::U32, 16, span);
        let one = self.int(Type::U32, 1, span);
        let upper = self.emit(Op::Binary(BinOp::Shr, bits, sixteen), Type::U32, span);
        let lowest_kept = self.emit(Op::Binary(BinOp::And, upper, one), Type::U32, span);
        let half = self.int(Type::U32, 0x7fff, span);
        let bias = self.emit(Op::Binary(BinOp::Add, half, lowest_kept), Type::U32, span);
        let biased = self.emit(Op::Binary(BinOp::Add, bits, bias), Type::U32, span);
        let mask = self.int(Type::U32, 0xffff_0000, span);
        let kept = self.emit(Op::Binary(BinOp::And, biased, mask), Type::U32, span);
        let rounded = self.emit(Op::Math(MathFn::Bitcast, vec![kept]), Type::F32, span);
        let nan = self.emit(Op::Cmp(CmpOp::Ne, x, x), Type::Bool, span);
        self.emit(Op::Select(nan, x, rounded), Type::F32, span)
    }

    /// A number with a suffix the C++ grammar reads as a user-defined
    /// literal: a half (`1.0h` in Metal, `1.0hf` in GLSL) is a number, any
    /// other suffix calls an operator lockstep does not model.
    fn suffixed_number(&mut self, n: Node<'t>, span: Span) -> RV {
        let text = self.cx.text(n).trim();
        let mut c = n.walk();
        let suffix = n.named_children(&mut c).find(|k| self.cx.kind(*k) == "literal_suffix").map_or("", |k| self.cx.text(k));
        if matches!(suffix.to_ascii_lowercase().as_str(), "h" | "hf") && suffix.len() < text.len() {
            return self.number(n, span);
        }
        self.diag("unsupported", n, format!("the literal `{text}` calls a literal operator, which lockstep does not model; its value is unknown"));
        self.undef(Type::I32, span)
    }

    fn number(&mut self, n: Node<'t>, span: Span) -> RV {
        let text = self.cx.text(n).trim();
        let lower: Cow<str> = if text.bytes().any(|b| b.is_ascii_uppercase()) { text.to_ascii_lowercase().into() } else { text.into() };
        let is_hex = lower.starts_with("0x");
        let is_float = !is_hex && (lower.contains('.') || lower.contains('e') || lower.ends_with('f') || lower.ends_with('h'));
        if is_float {
            let digits = lower.trim_end_matches(['f', 'h', 'l']);
            let Ok(x) = digits.parse::<f64>() else {
                self.diag("unsupported", n, format!("the number `{text}` is not one lockstep reads; its value is unknown"));
                return self.undef(Type::F32, span);
            };
            let t = if lower.ends_with('h') || lower.ends_with("hf") {
                Type::F16
            } else if lower.ends_with("lf") {
                Type::F64
            } else if lower.ends_with('f') {
                Type::F32
            } else if lower.ends_with('l') || self.cx.d.float_literal_is_double {
                Type::F64
            } else {
                Type::F32
            };
            let v = self.konst(t, Const::Float(x), span);
            return self.scalar(v);
        }
        let Some((value, unsigned)) = parse_int_literal(text) else {
            self.diag("unsupported", n, format!("the number `{text}` is not one lockstep reads; its value is unknown"));
            return self.undef(Type::I32, span);
        };
        // The literal's type comes from its magnitude (`-5` is `-(5)`, an int).
        let magnitude = if text.starts_with('-') { value.wrapping_neg() } else { value };
        let long = lower.trim_end_matches('u').ends_with("ll") || magnitude > u32::MAX as u64;
        let t = match (unsigned, long) {
            (true, true) => Type::U64,
            (false, true) => Type::I64,
            (true, false) => Type::U32,
            (false, false) if magnitude > i32::MAX as u64 => Type::U32,
            _ => Type::I32,
        };
        let v = self.konst(t, Const::Int(value), span);
        self.scalar(v)
    }

    pub(crate) fn identifier(&mut self, n: Node<'t>, span: Span) -> RV {
        let name = self.cx.text(n);
        if let Some(b) = self.lookup(name).cloned() {
            return match b {
                // An array used as a value decays to a pointer to its first element.
                Binding::Place(p @ Place::Mem { space, .. }) if space != MemSpace::Private => self.decayed(&p, span).unwrap_or_else(|| self.read_place(&p, span)),
                // A constant keeps the value it was declared with.
                Binding::Place(Place::Vars { vars, ty }) if vars.len() == 1 && self.constant_values.contains_key(&vars[0]) => RV { vals: vec![self.constant_values[&vars[0]]], ty },
                Binding::Place(p) => self.read_place(&p, span),
                Binding::Sync(s, w) => RV { vals: Vec::new(), ty: SrcType::SyncObject(s, w) },
                // Handed on as a value, the lambda runs where lockstep does not follow it.
                Binding::Lambda(_) => {
                    let v = self.unmodelled(n, "a lambda passed on as a value".to_string(), Vec::new(), span);
                    RV { vals: vec![v], ty: SrcType::Scalar(Type::I32) }
                }
                // Pointer arithmetic or a comparison on the address of a register variable.
                Binding::PointsTo(_) | Binding::Lanes { .. } => {
                    let v = self.unmodelled(n, format!("the address of a variable used as a value (`{name}`)"), Vec::new(), span);
                    RV { vals: vec![v], ty: SrcType::Scalar(Type::I32) }
                }
            };
        }
        if let Some(bv) = self.cx.d.builtin_var(name) {
            return match bv {
                BuiltinVar::Const(k) => {
                    let v = self.int(Type::U32, k as i64, span);
                    self.scalar(v)
                }
                BuiltinVar::Scalar(b) => {
                    let v = self.builtin(b, span);
                    self.scalar(v)
                }
                BuiltinVar::Computed(sem) => {
                    let ty = SrcType::Scalar(Type::U32);
                    let vals = self.semantic_values(sem, &ty, span);
                    RV { vals, ty }
                }
                BuiltinVar::Vec3(_) | BuiltinVar::GlobalId => {
                    let vals = (0..3).map(|a| self.builtin_var_axis(bv, a, span)).collect();
                    RV { vals, ty: SrcType::Vector(Type::U32, 3) }
                }
            };
        }
        match self.cx.template_args.get(name) {
            Some(&TemplateArg::Int(v)) => {
                let x = self.int(Type::I32, v, span);
                return self.scalar(x);
            }
            Some(&TemplateArg::Constant(g)) => {
                let p = self.global_place(g, &SrcType::Scalar(Type::I32), MemSpace::Constant, span);
                return self.read_place(&p, span);
            }
            _ => {}
        }
        match global_binding(self.cx, name) {
            Some(GlobalBinding::Int(v, t)) => {
                let x = self.int(t, v, span);
                self.scalar(x)
            }
            Some(GlobalBinding::Mem { global, ty }) => {
                let space = self.cx.module.global(global).space;
                let p = self.global_place(global, &ty, space, span);
                if let SrcType::Array(elem, _) = &ty {
                    // Arrays used as values decay to a pointer to their first element.
                    let zero = self.int(Type::U32, 0, span);
                    let ptr = self.emit(Op::AddrOf(Root::Global(global), zero), Type::Ptr(space), span);
                    return RV { vals: vec![ptr], ty: SrcType::Pointer(elem.clone(), space) };
                }
                self.read_place(&p, span)
            }
            Some(GlobalBinding::Resource { .. }) => RV { vals: Vec::new(), ty: SrcType::Void },
            Some(GlobalBinding::GroupExtent { axis, .. }) => {
                let x = self.builtin(lockstep_ir::Builtin::GroupSize(axis), span);
                self.scalar(x)
            }
            // Every lowered entry binds these; seen only where no entry runs them.
            Some(GlobalBinding::PerThread) => {
                let v = self.unmodelled(n, format!("the per-invocation global `{name}` outside an entry point"), Vec::new(), span);
                self.scalar(v)
            }
            None => {
                if let Some((_, v)) = crate::dialect::BARRIER_FLAG_NAMES.iter().find(|(n2, _)| *n2 == name) {
                    let x = self.int(Type::U32, *v as i64, span);
                    return self.scalar(x);
                }
                // The C library's limits (`<cfloat>`, `<cmath>`, `<climits>`).
                if let Some(x) = float_constant(name) {
                    let v = self.konst(Type::F32, Const::Float(x), span);
                    return self.scalar(v);
                }
                if let Some((t, x)) = int_constant(name) {
                    let v = self.int(t, x, span);
                    return self.scalar(v);
                }
                // A function named as a value: a pointer to it.
                if let Some(rv) = self.function_value(n, span) {
                    return rv;
                }
                // Unknown names (e.g. a macro from a missing include) are opaque,
                // uniform values; said once for the file.
                if !self.unknown_names.contains(name) {
                    let at = self.span(n);
                    self.cx.undeclared_name(name, at, crate::module::UndeclaredUse::Value);
                }
                self.undef(Type::I32, span)
            }
        }
    }

    fn field_expr(&mut self, n: Node<'t>, span: Span) -> RV {
        let Some(arg) = n.field(self.cx.fields.argument) else { return self.undef(Type::I32, span) };
        let Some(field) = n.field(self.cx.fields.field) else { return self.undef(Type::I32, span) };
        let fname = self.cx.text(field);
        if fname == "extent" && self.is_view(arg) {
            if let Some(rv) = self.view_shape(arg, n, span) {
                return rv;
            }
        }
        // threadIdx.x and friends.
        if self.cx.kind(arg) == "identifier" && self.lookup(self.cx.text(arg)).is_none() {
            if let Some(bv @ (BuiltinVar::Vec3(_) | BuiltinVar::GlobalId)) = self.cx.d.builtin_var(self.cx.text(arg)) {
                if let Some(idx) = swizzle(fname, 3) {
                    let vals: Vec<Value> = idx.iter().map(|&a| self.builtin_var_axis(bv, a as u8, span)).collect();
                    let len = vals.len() as u32;
                    return RV { vals, ty: if len == 1 { SrcType::Scalar(Type::U32) } else { SrcType::Vector(Type::U32, len) } };
                }
            }
        }
        match self.place(n) {
            Some(p) => self.decayed(&p, span).unwrap_or_else(|| self.read_place(&p, span)),
            None => {
                if self.block_array_element(arg).is_some() {
                    let what = format!("the read of `{}` (a buffer of the array of blocks `{}` lockstep did not lay out, or chose by a run-time index)", self.cx.excerpt(n), self.cx.excerpt(arg));
                    let v = self.unmodelled(n, what, Vec::new(), span);
                    return RV { vals: vec![v], ty: SrcType::Scalar(Type::I32) };
                }
                if let Some(Place::Mem { ty: SrcType::Struct(_), .. }) = self.place(arg) {
                    // Never read the whole struct for a member it does not have.
                    self.diag("unsupported", n, format!("lockstep does not know a member `{fname}` of this struct; its value is treated as unknown"));
                    return self.opaque_call(fname, Vec::new(), span);
                }
                // A field of a value (e.g. a call result): select components.
                let rv = self.expr(arg);
                self.select_field(rv, fname, span)
            }
        }
    }

    /// A synchronizing barrier right after fences (`memoryBarrierBuffer();
    /// barrier();`, `DeviceMemoryBarrier(); GroupMemoryBarrierWithGroupSync();`)
    /// also orders what the fences order: their writes are visible before
    /// the others pass the barrier.
    fn with_preceding_fences(&self, mut b: lockstep_ir::Barrier) -> lockstep_ir::Barrier {
        if b.exec == Scope::None {
            return b;
        }
        for &v in self.f.block(self.cur).insts.iter().rev() {
            match self.f.inst(v).op {
                Op::Barrier(fence, _) if fence.exec == Scope::None => {
                    b.spaces = b.spaces.union(fence.spaces);
                    b.mem = b.mem.max(fence.mem);
                }
                // Constants the call's arguments needed; anything else ends the run of fences.
                Op::Const(_) => {}
                _ => break,
            }
        }
        b
    }

    /// Component `axis` of a three-component builtin variable.
    fn builtin_var_axis(&mut self, bv: BuiltinVar, axis: u8, span: Span) -> Value {
        match bv {
            BuiltinVar::Vec3(make) => self.builtin(make(axis), span),
            _ => self.axis_builtin(AxisBuiltin::GlobalId, axis as i64, span),
        }
    }

    fn select_field(&mut self, rv: RV, fname: &str, span: Span) -> RV {
        let width = rv.vals.len() as u32;
        if let SrcType::Struct(si) = &rv.ty {
            if let Some((offs, fty)) = self.field_layout(*si, fname) {
                let vals = offs.iter().filter_map(|&o| rv.vals.get(o as usize).copied()).collect();
                return RV { vals, ty: fty };
            }
        }
        match swizzle(fname, width) {
            Some(idx) => {
                let vals: Vec<Value> = idx.iter().filter_map(|&i| rv.vals.get(i as usize).copied()).collect();
                let t = rv.ty.scalar(&self.cx.structs);
                let len = vals.len() as u32;
                RV { vals, ty: if len == 1 { SrcType::Scalar(t) } else { SrcType::Vector(t, len) } }
            }
            None => self.undef(Type::I32, span),
        }
    }

    /// Cell offsets and type of a struct field.
    fn field_layout(&self, si: usize, fname: &str) -> Option<(Vec<u32>, SrcType)> {
        let (at, ty) = self.cx.structs.get(si)?.member(&self.cx.structs, fname)?;
        let cells = ty.cells(&self.cx.structs);
        Some(((at..at + cells).map(|c| c as u32).collect(), ty))
    }

    /// The assignable location an expression denotes, if any.
    pub fn place(&mut self, n: Node<'t>) -> Option<Place> {
        let span = self.span(n);
        self.depth += 1;
        if self.depth > MAX_NESTING {
            self.depth -= 1;
            return None;
        }
        let p = self.place_inner(n, span);
        self.depth -= 1;
        p
    }

    fn place_inner(&mut self, n: Node<'t>, span: Span) -> Option<Place> {
        match self.cx.kind(n) {
            "parenthesized_expression" => self.place(n.named_child(0)?),
            "identifier" => {
                let name = self.cx.text(n);
                if let Some(Binding::Place(p)) = self.lookup(name).cloned() {
                    return Some(p);
                }
                match global_binding(self.cx, name)? {
                    GlobalBinding::Mem { global, ty } => {
                        let space = self.cx.module.global(global).space;
                        Some(self.global_place(global, &ty, space, span))
                    }
                    _ => None,
                }
            }
            "qualified_identifier" => self.place(n.field(self.cx.fields.name)?),
            "field_expression" => {
                let arg = n.field(self.cx.fields.argument)?;
                let fname = self.cx.text(n.field(self.cx.fields.field)?);
                let arrow = n.field(self.cx.fields.operator).map(|o| self.cx.text(o) == "->").unwrap_or(false);
                // ConstantBuffer<T> cb; cb.field
                if let Some(GlobalBinding::Resource { global, kind: ResourceKind::ConstantBuffer, elem, .. }) =
                    (self.cx.kind(arg) == "identifier").then(|| global_binding(self.cx, self.cx.text(arg))).flatten()
                {
                    let space = MemSpace::Constant;
                    let base = self.global_place(global, &elem, space, span);
                    return self.sub_place(base, fname, span);
                }
                // A member of a GLSL interface block with an instance name: `buf.data`.
                if self.cx.kind(arg) == "identifier" && self.lookup(self.cx.text(arg)).is_none() {
                    if let Some(GlobalBinding::Mem { global, ty }) = global_binding(self.cx, &format!("{}.{fname}", self.cx.text(arg))) {
                        let space = self.cx.module.global(global).space;
                        return Some(self.global_place(global, &ty, space, span));
                    }
                }
                // One of an array of blocks: `bufs[2].data`. Which buffer a
                // run-time index picks is not modelled (the access is noted).
                if let Some(block) = self.block_array_element(arg) {
                    let GlobalBinding::Mem { global, ty } = global_binding(self.cx, &format!("{}.{fname}", block?))? else { return None };
                    let space = self.cx.module.global(global).space;
                    return Some(self.global_place(global, &ty, space, span));
                }
                let base = match (arrow, self.pointee_variable(arg)) {
                    (true, Some(variable)) => variable,
                    (true, None) => self.deref(arg, span)?,
                    (false, _) => self.place(arg)?,
                };
                self.sub_place(base, fname, span)
            }
            "subscript_expression" => {
                let arg = n.field(self.cx.fields.argument)?;
                let index_node = n.field(self.cx.fields.index).or_else(|| {
                    let idx = n.field(self.cx.fields.indices)?;
                    idx.named_child(0)
                })?;
                if !self.views.is_empty() {
                    // `v[i][j]` on a captured view: every index at once.
                    let (mut view, mut indices) = (arg, vec![index_node]);
                    while self.cx.kind(view) == "subscript_expression" {
                        let inner = view.field(self.cx.fields.index).or_else(|| view.field(self.cx.fields.indices)?.named_child(0))?;
                        indices.insert(0, inner);
                        view = view.field(self.cx.fields.argument)?;
                    }
                    if self.is_view(view) {
                        return self.view_element(view, &indices, n, span);
                    }
                }
                if let Some(variable) = self.pointee_variable(arg) {
                    return (self.cx.const_int(index_node) == Some(0)).then_some(variable);
                }
                if let Some((var, lane)) = self.lanes_of(arg) {
                    let idx = self.expr(index_node);
                    let index = *idx.vals.first()?;
                    return Some(Place::Bits { var, index, ty: SrcType::Scalar(lane) });
                }
                if let Some(values) = self.register_view(arg) {
                    let idx = self.expr(index_node);
                    let idx = self.index_value(*idx.vals.first()?, span);
                    return self.index_place(values, idx, span);
                }
                // Resources: buf[i], tex[uint2(x, y)].
                if self.cx.kind(arg) == "identifier" && self.lookup(self.cx.text(arg)).is_none() {
                    if let Some(GlobalBinding::Resource { global, kind, elem, writable }) = global_binding(self.cx, self.cx.text(arg)) {
                        let idx = self.expr(index_node);
                        return Some(self.resource_element(global, kind, &elem, writable, &idx, span));
                    }
                }
                let idx_rv = self.expr(index_node);
                let idx = match idx_rv.vals.first() {
                    Some(&v) => self.index_value(v, span),
                    None => self.int(Type::U32, 0, span),
                };
                let base = match self.place(arg) {
                    // A pointer held in a register or in memory (`rows[o][i]`
                    // with `float* rows[4]`): index what it points to.
                    Some(p @ (Place::Vars { ty: SrcType::Pointer(..), .. } | Place::Mem { ty: SrcType::Pointer(..), .. })) => {
                        let prv = self.read_place(&p, span);
                        return self.pointer_index(prv, idx, span);
                    }
                    Some(p) => p,
                    // A member of a block of an array lockstep did not lay
                    // out, or that a run-time index picks: the access is noted whole.
                    None if self.cx.kind(arg) == "field_expression" && arg.field(self.cx.fields.argument).is_some_and(|a| self.block_array_element(a).is_some()) => return None,
                    None => {
                        let rv = self.expr(arg);
                        if let (SrcType::Vector(t, _), Some(k)) = (&rv.ty, self.f.as_int(idx)) {
                            // A component of a vector value (`v.get_extent()[1]`).
                            let component = *rv.vals.get(usize::try_from(k).ok()?)?;
                            let ty = SrcType::Scalar(*t);
                            let vars = self.new_vars(&ty, "component");
                            self.ssa.write(vars[0], self.cur, component);
                            return Some(Place::Vars { vars, ty });
                        }
                        return self.pointer_index(rv, idx, span);
                    }
                };
                self.index_place(base, idx, span)
            }
            // `v(i, j)` on a captured view.
            "call_expression" => {
                let view = n.field(self.cx.fields.function).filter(|&f| self.is_view(f))?;
                let args = n.field(self.cx.fields.arguments)?;
                let mut c = args.walk();
                let indices: Vec<Node<'t>> = args.named_children(&mut c).collect();
                self.view_element(view, &indices, n, span)
            }
            "pointer_expression" => {
                let arg = n.field(self.cx.fields.argument)?;
                if self.cx.text(n).trim_start().starts_with('*') {
                    if let Some(variable) = self.pointee_variable(arg) {
                        return Some(variable);
                    }
                    if let Some((var, lane)) = self.lanes_of(arg) {
                        let index = self.int(Type::U32, 0, span);
                        return Some(Place::Bits { var, index, ty: SrcType::Scalar(lane) });
                    }
                    if let Some(values) = self.register_view(arg) {
                        let zero = self.int(Type::U32, 0, span);
                        return self.index_place(values, zero, span);
                    }
                    self.deref(arg, span)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    /// `bufs[2]` naming an element of an array of interface blocks (its
    /// members are bound as `bufs[2].member` when the array was laid out):
    /// Some(None) when the index is not a constant, None for anything else.
    fn block_array_element(&mut self, n: Node<'t>) -> Option<Option<String>> {
        if self.cx.kind(n) != "subscript_expression" {
            return None;
        }
        let array = n.field(self.cx.fields.argument).filter(|a| self.cx.kind(*a) == "identifier")?;
        let name = self.cx.text(array);
        if self.lookup(name).is_some() || !self.cx.is_block_array(name) {
            return None;
        }
        let k = n.field(self.cx.fields.index).and_then(|index| self.cx.const_int(index));
        Some(k.map(|k| format!("{name}[{k}]")))
    }

    /// The register variable an argument points to: `&x` with `x` in
    /// registers, or a pointer parameter bound to one ([`Binding::PointsTo`]).
    fn register_pointee(&mut self, n: Node<'t>) -> Option<Place> {
        match self.cx.kind(n) {
            "identifier" => match self.lookup(self.cx.text(n)) {
                Some(Binding::PointsTo(p)) => Some(p.clone()),
                _ => None,
            },
            "pointer_expression" if self.cx.text(n).trim_start().starts_with('&') => {
                let arg = n.field(self.cx.fields.argument)?;
                // Only a plain variable: `&a[i]` of a register array is not one place.
                if !matches!(self.cx.kind(arg), "identifier" | "field_expression") {
                    return None;
                }
                match self.place(arg)? {
                    p @ Place::Vars { .. } => Some(p),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// `(T*)&x` or `&x` where `x` is one scalar in registers whose width is
    /// a multiple of `T`'s (`(int8_t*)&q32`, `(half*)&f`): the variable and
    /// the scalar type its bits are read as.
    pub(crate) fn register_lanes(&mut self, init: Node<'t>, elem: &SrcType) -> Option<(Var, Type)> {
        let SrcType::Scalar(lane) = *elem else { return None };
        let n = self.cx.without_parens(init);
        let address = match self.cx.kind(n) {
            "cast_expression" => self.cx.without_parens(n.field(self.cx.fields.value)?),
            _ => n,
        };
        if self.cx.kind(address) != "pointer_expression" {
            return None;
        }
        let Place::Vars { vars, ty: SrcType::Scalar(whole) } = self.register_pointee(address)? else { return None };
        let scalar = |t: Type| t.is_int() || t.is_float();
        let fits = scalar(lane) && scalar(whole) && lane.bits() <= whole.bits() && whole.bits() % lane.bits() == 0;
        (fits && vars.len() == 1).then_some((vars[0], lane))
    }

    /// Each argument's value, where every one is one integer.
    fn integer_operands(&mut self, args: &[Node<'t>]) -> Option<Vec<Value>> {
        let operands: Vec<Value> = args.iter().filter_map(|&a| self.expr(a).vals.first().copied()).collect();
        (operands.len() == args.len() && operands.iter().all(|&v| self.f.inst(v).ty.is_int())).then_some(operands)
    }

    /// `memcpy(dst, src, n)` with `n` a constant, each side a scalar in
    /// registers (`&qh`) or memory of one scalar type (`x[ib].qh`): the
    /// bytes copied value by value, in the memory side's scalar type (bytes
    /// when both are registers). None for any other copy, which stays a
    /// call lockstep does not model.
    fn byte_copy(&mut self, dst: Node<'t>, src: Node<'t>, n: Node<'t>, span: Span) -> Option<RV> {
        let count = self.expr(n);
        let bytes = u32::try_from(self.f.as_int(*count.vals.first()?)?).ok().filter(|&b| b > 0 && b <= 64)?;
        enum Side {
            Register(Var, Type),
            Memory(RV, Type),
        }
        let side = |l: &mut Self, a: Node<'t>| -> Option<Side> {
            if let Some(Place::Vars { vars, ty: SrcType::Scalar(t) }) = l.register_pointee(a) {
                return (vars.len() == 1).then(|| Side::Register(vars[0], t));
            }
            let rv = l.expr(a);
            let SrcType::Pointer(elem, _) = &rv.ty else { return None };
            // A pointer to an array (`&x.qh` of `uint8_t qh[4]`) copies its elements.
            let elem = match &**elem {
                SrcType::Array(e, _) => &**e,
                e => e,
            };
            match *elem {
                SrcType::Scalar(t) if t.is_int() || t.is_float() => Some(Side::Memory(rv.clone(), t)),
                _ => None,
            }
        };
        let (to, from) = (side(self, dst)?, side(self, src)?);
        let lane = match (&to, &from) {
            (Side::Memory(_, t), _) | (_, Side::Memory(_, t)) => *t,
            _ => Type::U8,
        };
        let lane_bytes = lane.bits() / 8;
        if lane_bytes == 0 || bytes % lane_bytes != 0 {
            return None;
        }
        for side in [&to, &from] {
            match side {
                Side::Register(_, t) if t.bits() / 8 < bytes || t.bits() % lane.bits() != 0 => return None,
                Side::Memory(_, t) if *t != lane => return None,
                _ => {}
            }
        }
        let place = |l: &mut Self, side: &Side, k: u32| -> Option<Place> {
            let k = l.int(Type::U32, i64::from(k), span);
            match side {
                Side::Register(var, _) => Some(Place::Bits { var: *var, index: k, ty: SrcType::Scalar(lane) }),
                Side::Memory(rv, _) => l.pointer_index(rv.clone(), k, span),
            }
        };
        for k in 0..bytes / lane_bytes {
            let (from_place, to_place) = (place(self, &from, k)?, place(self, &to, k)?);
            let value = self.read_place(&from_place, span);
            self.assign(&to_place, &value, span, None);
        }
        Some(RV { vals: Vec::new(), ty: SrcType::Void })
    }

    /// `var`'s bits as an unsigned integer of its width, and `lane`'s
    /// offset `index` lanes up in them.
    fn bits_and_shift(&mut self, var: Var, index: Value, lane: Type, span: Span) -> (Value, Value, Type) {
        let whole = self.ssa.read(&mut self.f, var, self.cur, span);
        let whole_ty = self.f.inst(whole).ty;
        let bits_ty = unsigned_of(whole_ty);
        let raw = if whole_ty.is_float() { self.emit(Op::Math(MathFn::Bitcast, vec![whole]), bits_ty, span) } else { self.convert(whole, bits_ty, span) };
        let index = self.convert(index, bits_ty, span);
        let width = self.int(bits_ty, i64::from(lane.bits()), span);
        let shift = self.fold_or_emit(BinOp::Mul, index, width, bits_ty, span);
        (raw, shift, bits_ty)
    }

    fn read_bits(&mut self, var: Var, index: Value, lane: Type, span: Span) -> Value {
        let (raw, shift, bits_ty) = self.bits_and_shift(var, index, lane, span);
        let shifted = self.fold_or_emit(BinOp::Shr, raw, shift, bits_ty, span);
        if lane.is_float() {
            let low = self.convert(shifted, unsigned_of(lane), span);
            self.emit(Op::Math(MathFn::Bitcast, vec![low]), lane, span)
        } else {
            self.convert(shifted, lane, span)
        }
    }

    fn write_bits(&mut self, var: Var, index: Value, lane: Type, value: Value, span: Span) {
        let (raw, shift, bits_ty) = self.bits_and_shift(var, index, lane, span);
        let lane_bits_ty = unsigned_of(lane);
        let low = if lane.is_float() { self.emit(Op::Math(MathFn::Bitcast, vec![value]), lane_bits_ty, span) } else { self.convert(value, lane_bits_ty, span) };
        let low = self.convert(low, bits_ty, span);
        let placed = self.fold_or_emit(BinOp::Shl, low, shift, bits_ty, span);
        let ones = if lane.bits() >= 64 { u64::MAX } else { (1u64 << lane.bits()) - 1 };
        let ones = self.int(bits_ty, ones as i64, span);
        let mask = self.fold_or_emit(BinOp::Shl, ones, shift, bits_ty, span);
        let all = self.int(bits_ty, -1, span);
        let keep = self.fold_or_emit(BinOp::Xor, mask, all, bits_ty, span);
        let kept = self.fold_or_emit(BinOp::And, raw, keep, bits_ty, span);
        let combined = self.fold_or_emit(BinOp::Or, kept, placed, bits_ty, span);
        let whole_ty = self.ssa.var_type(var);
        let back = if whole_ty.is_float() { self.emit(Op::Math(MathFn::Bitcast, vec![combined]), whole_ty, span) } else { self.convert(combined, whole_ty, span) };
        self.ssa.write(var, self.cur, back);
    }

    /// The variable and lane type a pointer named by `pointer` reads the bits of ([`Binding::Lanes`]).
    fn lanes_of(&self, pointer: Node<'t>) -> Option<(Var, Type)> {
        match self.lookup(self.cx.text(pointer)) {
            Some(&Binding::Lanes { var, lane }) if self.cx.kind(pointer) == "identifier" => Some((var, lane)),
            _ => None,
        }
    }

    /// The variable `*p`, `p[0]` or `p->f` reaches when `p` is bound to one ([`Binding::PointsTo`]).
    fn pointee_variable(&self, pointer: Node<'t>) -> Option<Place> {
        match self.lookup(self.cx.text(pointer)) {
            Some(Binding::PointsTo(p)) if self.cx.kind(pointer) == "identifier" => Some(p.clone()),
            _ => None,
        }
    }

    /// `(float*)&v` for a variable `v` held in registers whose values are
    /// all of the pointer's element type (a `float4`, a `float`): `v`'s
    /// values as a vector, for `((float*)&v)[i]` and `*(float*)&v`.
    fn register_view(&mut self, pointer: Node<'t>) -> Option<Place> {
        let n = self.cx.without_parens(pointer);
        if self.cx.kind(n) != "cast_expression" {
            return None;
        }
        let SrcType::Pointer(elem, _) = self.cx.resolve_type(n.field(self.cx.fields.ty)?)? else { return None };
        let SrcType::Scalar(t) = *elem else { return None };
        let Place::Vars { vars, ty } = self.register_pointee(self.cx.without_parens(n.field(self.cx.fields.value)?))? else { return None };
        let mut types = Vec::new();
        ty.scalar_types(&self.cx.structs, &mut types);
        if types.is_empty() || types.len() > 16 || types.iter().any(|&x| x != t) {
            return None;
        }
        let ty = if vars.len() == 1 { SrcType::Scalar(t) } else { SrcType::Vector(t, vars.len() as u32) };
        Some(Place::Vars { vars, ty })
    }

    /// `memcpy(&a, &b, n)` where `a` and `b` are variables in registers of
    /// `n` bytes each: `a` takes `b`'s bits. None for any other copy.
    fn register_copy(&mut self, dst: Node<'t>, src: Node<'t>, bytes: Node<'t>, span: Span) -> Option<RV> {
        let to = self.register_pointee(self.cx.without_parens(dst))?;
        let from = self.register_pointee(self.cx.without_parens(src))?;
        let n = self.cx.const_int(bytes)?;
        let size = |this: &Self, p: &Place| crate::view::size_and_align(p.ty(), &this.cx.structs).map(|(s, _)| i64::from(s));
        if size(self, &to) != Some(n) || size(self, &from) != Some(n) {
            return None;
        }
        let value = self.read_place(&from, span);
        let bits = self.reinterpret(&value, to.ty(), span)?;
        self.assign(&to, &bits, span, None);
        Some(RV { vals: Vec::new(), ty: SrcType::Void })
    }

    /// Whether `n` names a captured device view (C++ AMP `array_view`).
    fn is_view(&self, n: Node<'t>) -> bool {
        self.cx.kind(n) == "identifier" && self.views.contains_key(self.cx.text(n))
    }

    /// `p[i]` on a pointer value.
    pub(crate) fn pointer_index(&mut self, prv: RV, idx: Value, span: Span) -> Option<Place> {
        let SrcType::Pointer(elem, sp) = prv.ty else { return None };
        let p = *prv.vals.first()?;
        Some(self.pointer_place(p, &elem, sp, Some(idx), span))
    }

    fn index_value(&mut self, v: Value, span: Span) -> Value {
        match self.f.inst(v).ty {
            Type::I32 | Type::U32 => v,
            Type::I64 | Type::U64 => self.convert(v, Type::I32, span),
            _ => self.convert(v, Type::U32, span),
        }
    }

    /// The cells one element of `elem` spans, as a value, when `elem` is an
    /// array of a declaration whose lengths are not constants ([`FnLowerer::runtime_dims`]).
    fn runtime_stride(&mut self, root: Root, elem: &SrcType, span: Span) -> Option<Value> {
        let (inner, scalar) = elem.array_dims();
        if inner.is_empty() || !inner.contains(&0) {
            return None;
        }
        let dims = self.runtime_dims.get(&root)?;
        let lengths: Vec<Value> = dims.get(dims.len().checked_sub(inner.len())?..)?.to_vec();
        let cells = scalar.cells(&self.cx.structs).max(1);
        let mut stride = self.int(Type::U32, cells as i64, span);
        for length in lengths {
            stride = self.fold_or_emit(BinOp::Mul, stride, length, Type::U32, span);
        }
        Some(stride)
    }

    fn index_place(&mut self, base: Place, idx: Value, span: Span) -> Option<Place> {
        match base {
            Place::Mem { space, root, base, offsets, ty: SrcType::Array(elem, _) } => {
                // An array member of a struct starts at its member's offset.
                let base = self.offset(base, offsets.first().unwrap_or(0), span);
                let cells = elem.cells(&self.cx.structs).max(1);
                let t = self.f.inst(idx).ty;
                let scaled = if let Some(stride) = self.runtime_stride(root, &elem, span) {
                    let idx = self.convert(idx, Type::U32, span);
                    self.fold_or_emit(BinOp::Mul, idx, stride, Type::U32, span)
                } else if cells == 1 {
                    idx
                } else if let Some(i) = self.f.as_int(idx) {
                    self.int(t, i * cells as i64, span)
                } else {
                    let k = self.int(t, cells as i64, span);
                    self.emit(Op::Binary(BinOp::Mul, idx, k), t, span)
                };
                let idx = self.add_index(base, scaled, span);
                let offsets = Offsets::Dense(cells.min(1 << 16) as u32);
                Some(Place::Mem { space, root, base: idx, offsets, ty: *elem })
            }
            Place::Mem { space, root, base, offsets, ty: ty @ (SrcType::Vector(..) | SrcType::Matrix(..)) } => {
                let (width, element) = element_of(&ty)?;
                if let Some(k) = self.f.as_int(idx) {
                    let k = usize::try_from(k).ok()?;
                    let cells = (k * width..(k + 1) * width).map(|c| offsets.get(c)).collect::<Option<Vec<u32>>>()?;
                    return Some(Place::Mem { space, root, base, offsets: Offsets::Listed(cells), ty: element });
                }
                // v[i] with i known at run time: the cells must be consecutive
                // (not a swizzle such as `v.zx`).
                let first = offsets.first()?;
                if !offsets.iter().enumerate().all(|(k, off)| off == first + k as u32) {
                    return None;
                }
                let start = self.offset(base, first, span);
                let t = self.f.inst(idx).ty;
                let scaled = if width == 1 {
                    idx
                } else {
                    let w = self.int(t, width as i64, span);
                    self.emit(Op::Binary(BinOp::Mul, idx, w), t, span)
                };
                let base = self.add_index(start, scaled, span);
                Some(Place::Mem { space, root, base, offsets: Offsets::Dense(width as u32), ty: element })
            }
            Place::Vars { vars, ty } if self.holds_matrix(&vars) => {
                Some(Place::MatrixElement { var: vars[0], index: idx, ty: SrcType::Scalar(ty.scalar(&self.cx.structs)) })
            }
            Place::Vars { vars, ty } => {
                let (width, element) = match element_of(&ty) {
                    Some(e) => e,
                    // A scalar's only element (`x[0]`).
                    None => (1, SrcType::Scalar(ty.scalar(&self.cx.structs))),
                };
                match self.f.as_int(idx) {
                    Some(k) => {
                        let k = usize::try_from(k).ok()?;
                        let vars = vars.get(k * width..(k + 1) * width)?.to_vec();
                        Some(Place::Vars { vars, ty: element })
                    }
                    None if matches!(ty, SrcType::Vector(..) | SrcType::Matrix(..)) => Some(Place::Component { vars, width, index: idx, ty: element }),
                    None => None,
                }
            }
            // `m[i][1]`: component 1 of whichever column `i` picks;
            // `m[i][j]`: component `i * width + j` of them all.
            Place::Component { vars, width, index, ty } => {
                let scalar = SrcType::Scalar(ty.scalar(&self.cx.structs));
                let Some(k) = self.f.as_int(idx) else {
                    let t = self.f.inst(index).ty;
                    let w = self.int(t, width as i64, span);
                    let row = self.emit(Op::Binary(BinOp::Mul, index, w), t, span);
                    let flat = self.add_index(row, idx, span);
                    return Some(Place::Component { vars, width: 1, index: flat, ty: scalar });
                };
                let k = usize::try_from(k).ok().filter(|&k| k < width)?;
                let picked = vars.chunks(width).map(|element| element[k]).collect();
                Some(Place::Component { vars: picked, width: 1, index, ty: scalar })
            }
            // An element of a matrix's element, or of a packed value: not a construct of any language.
            Place::MatrixElement { .. } | Place::Bits { .. } => None,
            Place::Mem { space, root, base, ty, .. } => {
                // Indexing a non-array in memory (a pointer's pointee): element stride.
                let cells = ty.cells(&self.cx.structs).max(1);
                let t = self.f.inst(idx).ty;
                let k = self.int(t, cells as i64, span);
                let scaled = if cells == 1 { idx } else { self.emit(Op::Binary(BinOp::Mul, idx, k), t, span) };
                let idx = self.add_index(base, scaled, span);
                let offsets = Offsets::Dense(cells.min(1 << 16) as u32);
                Some(Place::Mem { space, root, base: idx, offsets, ty })
            }
        }
    }

    pub(crate) fn add_index(&mut self, base: Value, add: Value, span: Span) -> Value {
        if self.f.as_int(base) == Some(0) {
            return add;
        }
        let t = self.f.inst(base).ty;
        let add = self.convert(add, t, span);
        if self.f.as_int(add) == Some(0) {
            return base;
        }
        self.emit(Op::Binary(BinOp::Add, base, add), t, span)
    }

    pub fn sub_place(&mut self, base: Place, fname: &str, span: Span) -> Option<Place> {
        let _ = span;
        match base {
            // `m[i].yx`: those components of whichever column `i` picks.
            Place::Component { vars, width, index, ty } => {
                let picks = swizzle(fname, width as u32)?;
                let picked = vars.chunks(width).flat_map(|element| picks.iter().map(|&p| element[p as usize])).collect();
                let t = ty.scalar(&self.cx.structs);
                let ty = if picks.len() == 1 { SrcType::Scalar(t) } else { SrcType::Vector(t, picks.len() as u32) };
                Some(Place::Component { vars: picked, width: picks.len(), index, ty })
            }
            Place::MatrixElement { .. } | Place::Bits { .. } => None,
            Place::Vars { vars, ty } => {
                if let SrcType::Struct(si) = ty {
                    let (offs, fty) = self.field_layout(si, fname)?;
                    return Some(Place::Vars { vars: offs.iter().filter_map(|&o| vars.get(o as usize).copied()).collect(), ty: fty });
                }
                let idx = swizzle(fname, vars.len() as u32)?;
                let t = ty.scalar(&self.cx.structs);
                let sel: Vec<_> = idx.iter().filter_map(|&i| vars.get(i as usize).copied()).collect();
                let len = sel.len() as u32;
                Some(Place::Vars { vars: sel, ty: if len == 1 { SrcType::Scalar(t) } else { SrcType::Vector(t, len) } })
            }
            Place::Mem { space, root, base, offsets, ty } => {
                if let SrcType::Struct(si) = ty {
                    let (offs, fty) = self.field_layout(si, fname)?;
                    let sel = offs.iter().filter_map(|&o| offsets.get(o as usize)).collect();
                    return Some(Place::Mem { space, root, base, offsets: Offsets::Listed(sel), ty: fty });
                }
                let idx = swizzle(fname, offsets.len() as u32)?;
                let t = ty.scalar(&self.cx.structs);
                let sel: Vec<_> = idx.iter().filter_map(|&i| offsets.get(i as usize)).collect();
                let len = sel.len() as u32;
                Some(Place::Mem { space, root, base, offsets: Offsets::Listed(sel), ty: if len == 1 { SrcType::Scalar(t) } else { SrcType::Vector(t, len) } })
            }
        }
    }

    /// `sizeof(x)` / `sizeof x` of a variable, by its declared type.
    fn size_of_variable(&self, n: Node<'t>) -> Option<i64> {
        let v = n.field(self.cx.fields.value).or_else(|| n.field(self.cx.fields.ty)?.field(self.cx.fields.ty))?;
        let ty = match self.lookup(self.cx.text(self.cx.without_parens(v)).trim())? {
            Binding::Place(p) => p.ty(),
            _ => return None,
        };
        crate::view::size_and_align(ty, &self.cx.structs).map(|(size, _)| i64::from(size))
    }

    /// `*p` / `p->`: the memory a pointer expression points at.
    fn deref(&mut self, ptr: Node<'t>, span: Span) -> Option<Place> {
        let rv = self.expr(ptr);
        let SrcType::Pointer(elem, sp) = rv.ty.clone() else { return None };
        let p = *rv.vals.first()?;
        Some(self.pointer_place(p, &elem, sp, None, span))
    }

    /// Resolves a pointer value to a root and a cell index where the chain of
    /// address computations allows; otherwise addresses through the pointer.
    fn pointer_place(&mut self, p: Value, elem: &SrcType, sp: MemSpace, index: Option<Value>, span: Span) -> Place {
        let (cells, offsets, wide) = match self.view_at(p, elem, span) {
            Some(View::Cells { stride, offsets, wide }) => (stride, offsets, Some(wide)),
            Some(View::Bytes(_)) => {
                let view = self.part_of_cell_view(p, elem, span);
                return self.pointer_place(view, elem, sp, index, span);
            }
            Some(View::Unplaced) => {
                let view = self.unplaced_view(p, elem, span);
                return self.pointer_place(view, elem, sp, index, span);
            }
            None => {
                let cells = elem.cells(&self.cx.structs).max(1);
                (cells, Offsets::Dense(cells.min(1 << 16) as u32), None)
            }
        };
        let (root, mut base) = self.resolve_pointer(p, span);
        if let Some(wide) = wide {
            self.record_view(root, elem, wide, span);
        }
        if let Some(i) = index {
            let t = self.f.inst(i).ty;
            let scaled = if cells == 1 {
                i
            } else {
                let k = self.int(t, cells as i64, span);
                self.emit(Op::Binary(BinOp::Mul, i, k), t, span)
            };
            base = self.add_index(base, scaled, span);
        }
        let space = match root {
            Root::Global(g) => self.cx.module.global(g).space,
            Root::Param(_) => MemSpace::Device,
            Root::Local(_) => MemSpace::Private,
            Root::Ptr(_) => sp,
        };
        Place::Mem { space, root, base, offsets, ty: elem.clone() }
    }

    fn resolve_pointer(&mut self, p: Value, span: Span) -> (Root, Value) {
        let mut v = p;
        let mut adds = Vec::new();
        for _ in 0..64 {
            match self.f.inst(v).op.clone() {
                Op::AddrOf(root, idx) => {
                    let mut i = idx;
                    for a in adds.into_iter().rev() {
                        i = self.add_index(i, a, span);
                    }
                    return (root, i);
                }
                Op::PtrAdd(q, k) => {
                    adds.push(k);
                    v = q;
                }
                Op::Param(i) if matches!(self.f.inst(v).ty, Type::Ptr(_)) => {
                    let mut idx = self.int(Type::I32, 0, span);
                    for a in adds.into_iter().rev() {
                        idx = self.add_index(idx, a, span);
                    }
                    return (Root::Param(i), idx);
                }
                Op::Convert(q) => v = q,
                _ => break,
            }
        }
        let mut idx = self.int(Type::I32, 0, span);
        for a in adds.into_iter().rev() {
            idx = self.add_index(idx, a, span);
        }
        (Root::Ptr(v), idx)
    }

    fn address_of(&mut self, n: Node<'t>, span: Span) -> RV {
        let Some(arg) = n.field(self.cx.fields.argument) else { return self.undef(Type::I32, span) };
        if let Some(function) = self.function_value(arg, span) {
            return function;
        }
        match self.place(arg) {
            Some(Place::Mem { space, root, base, offsets, ty }) => {
                let idx = self.offset(base, offsets.first().unwrap_or(0), span);
                let v = self.emit(Op::AddrOf(root, idx), Type::Ptr(space), span);
                self.points_into(v, &ty);
                RV { vals: vec![v], ty: SrcType::Pointer(Box::new(ty), space) }
            }
            _ => {
                self.diag("unsupported", n, "address of a register variable is not modelled".into());
                self.undef(Type::I32, span)
            }
        }
    }

    fn assignment(&mut self, n: Node<'t>, span: Span) -> RV {
        let (Some(l), Some(r)) = (n.field(self.cx.fields.left), n.field(self.cx.fields.right)) else {
            return self.undef(Type::I32, span);
        };
        let op = n.field(self.cx.fields.operator).map(|o| self.cx.text(o)).unwrap_or("=");
        let rhs = self.expr(r);
        let Some(place) = self.place(l) else {
            let what = format!("the assignment to `{}`", self.cx.excerpt(l));
            self.unmodelled(l, what, rhs.vals.clone(), span);
            return rhs;
        };
        let value = if op == "=" {
            rhs
        } else {
            let cur = self.read_place(&place, span);
            let bop = &op[..op.len() - 1];
            self.arith(bop, cur, rhs, span)
        };
        let name = self.var_name(l);
        self.assign(&place, &value, span, name.as_deref());
        value
    }

    fn var_name(&self, l: Node<'t>) -> Option<String> {
        (self.cx.kind(l) == "identifier").then(|| self.cx.text(l).to_string())
    }

    fn update(&mut self, n: Node<'t>, span: Span) -> RV {
        let Some(arg) = n.field(self.cx.fields.argument) else { return self.undef(Type::I32, span) };
        let text = self.cx.text(n);
        let inc = text.contains("++");
        let prefix = text.trim_start().starts_with("++") || text.trim_start().starts_with("--");
        let Some(place) = self.place(arg) else { return self.undef(Type::I32, span) };
        let cur = self.read_place(&place, span);
        let t = cur.ty.scalar(&self.cx.structs);
        let one = if t.is_float() { self.konst(t, Const::Float(1.0), span) } else { self.int(t, 1, span) };
        let one = RV { vals: vec![one], ty: SrcType::Scalar(t) };
        let new = self.arith(if inc { "+" } else { "-" }, cur.clone(), one, span);
        let name = self.var_name(arg);
        self.assign(&place, &new, span, name.as_deref());
        if prefix {
            new
        } else {
            cur
        }
    }

    fn unary(&mut self, n: Node<'t>, span: Span) -> RV {
        let Some(arg) = n.field(self.cx.fields.argument) else { return self.undef(Type::I32, span) };
        let op = n.field(self.cx.fields.operator).map(|o| self.cx.text(o)).unwrap_or("");
        let rv = self.expr(arg);
        match op {
            "!" => {
                let vals = rv
                    .vals
                    .iter()
                    .map(|&v| {
                        let b = self.emit_bool(v, span);
                        match self.f.as_int(b) {
                            Some(k) => self.konst(Type::Bool, Const::Bool(k == 0), span),
                            None => self.emit(Op::Unary(UnOp::LNot, b), Type::Bool, span),
                        }
                    })
                    .collect();
                RV { vals, ty: rv.ty.with_scalar(Type::Bool) }
            }
            "-" => self.elementwise(UnOp::Neg, rv, span),
            "~" => self.elementwise(UnOp::Not, rv, span),
            _ => rv,
        }
    }

    /// `-x` or `~x` of each component, after integer promotion; a constant folds.
    fn elementwise(&mut self, u: UnOp, rv: RV, span: Span) -> RV {
        let vals = rv
            .vals
            .iter()
            .map(|&v| {
                let t = self.f.inst(v).ty;
                let (v, t) = if promoted(t) != t { (self.convert(v, Type::I32, span), Type::I32) } else { (v, t) };
                if let (UnOp::Neg, Some(c)) = (u, self.f.as_const(v).cloned()) {
                    let folded = match c {
                        Const::Int(_) => Const::Int(self.f.as_int(v).unwrap_or(0).wrapping_neg() as u64),
                        Const::Float(x) => Const::Float(-x),
                        Const::Bool(b) => Const::Int((-(b as i64)) as u64),
                    };
                    return self.konst(t, folded, span);
                }
                self.emit(Op::Unary(u, v), t, span)
            })
            .collect();
        RV { vals, ty: rv.ty }
    }

    /// The linear-algebra product of matrices and vectors (`m * v` in GLSL
    /// and Metal, `mul(m, v)` in HLSL); None when an operand is a scalar or
    /// the shapes do not match (the product is then component-wise).
    fn matrix_product(&mut self, a: &RV, b: &RV, by_column: bool, span: Span) -> Option<RV> {
        // (rows, columns) of an operand, and its element at (row, column).
        let shape = |ty: &SrcType, left: bool| -> Option<(usize, usize)> {
            match *ty {
                SrcType::Matrix(_, p, q) if by_column => Some((q as usize, p as usize)),
                SrcType::Matrix(_, p, q) => Some((p as usize, q as usize)),
                // A vector is a row on the left of a product, a column on its right.
                SrcType::Vector(_, n) if left => Some((1, n as usize)),
                SrcType::Vector(_, n) => Some((n as usize, 1)),
                _ => None,
            }
        };
        let at = |ty: &SrcType, rv: &RV, r: usize, c: usize| -> Option<Value> {
            let i = match *ty {
                SrcType::Matrix(_, _, q) if by_column => c * q as usize + r,
                SrcType::Matrix(_, _, q) => r * q as usize + c,
                _ => r + c,
            };
            rv.vals.get(i).copied()
        };
        let ((rows, inner), (inner_b, cols)) = (shape(&a.ty, true)?, shape(&b.ty, false)?);
        if inner != inner_b || a.vals.len() != rows * inner || b.vals.len() != inner * cols {
            return None;
        }
        let t = arith_type(a.ty.scalar(&self.cx.structs), b.ty.scalar(&self.cx.structs));
        let mut product = vec![vec![None; cols]; rows];
        for (r, row) in product.iter_mut().enumerate() {
            for (c, cell) in row.iter_mut().enumerate() {
                let mut sum = None;
                for k in 0..inner {
                    let x = at(&a.ty, a, r, k)?;
                    let y = at(&b.ty, b, k, c)?;
                    let (x, y) = (self.convert(x, t, span), self.convert(y, t, span));
                    let term = self.emit(Op::Binary(BinOp::Mul, x, y), t, span);
                    sum = Some(match sum {
                        None => term,
                        Some(s) => self.emit(Op::Binary(BinOp::Add, s, term), t, span),
                    });
                }
                *cell = sum;
            }
        }
        let ty = match (rows, cols) {
            (1, 1) => SrcType::Scalar(t),
            (1, n) | (n, 1) => SrcType::Vector(t, n as u32),
            (r, c) if by_column => SrcType::Matrix(t, c as u32, r as u32),
            (r, c) => SrcType::Matrix(t, r as u32, c as u32),
        };
        // Cells in the result's own order: columns first where `m[i]` is a column.
        let vals = if by_column && rows > 1 && cols > 1 {
            (0..cols).flat_map(|c| (0..rows).map(move |r| (r, c))).map(|(r, c)| product[r][c]).collect::<Option<Vec<_>>>()?
        } else {
            product.into_iter().flatten().collect::<Option<Vec<_>>>()?
        };
        Some(RV { vals, ty })
    }

    /// `transpose(m)`, `matrixCompMult(a, b)`, `outerProduct(c, r)`; None
    /// for operands of other shapes.
    fn matrix_function(&mut self, function: MatrixFunction, args: &[RV], span: Span) -> Option<RV> {
        match (function, args) {
            (MatrixFunction::Transpose, [m]) => {
                let SrcType::Matrix(t, a, b) = m.ty else { return None };
                let (a, b) = (a as usize, b as usize);
                let vals = (0..b).flat_map(|j| (0..a).map(move |i| i * b + j)).map(|c| m.vals.get(c).copied()).collect::<Option<Vec<_>>>()?;
                Some(RV { vals, ty: SrcType::Matrix(t, b as u32, a as u32) })
            }
            (MatrixFunction::ComponentProduct, [x, y]) if matches!(x.ty, SrcType::Matrix(..)) && x.ty == y.ty => {
                // As vectors of all the cells, so that `*` is not the matrix product.
                let flat = |rv: &RV| RV { vals: rv.vals.clone(), ty: SrcType::Vector(rv.ty.scalar(&self.cx.structs), rv.vals.len() as u32) };
                let (fx, fy) = (flat(x), flat(y));
                let product = self.arith("*", fx, fy, span);
                Some(RV { vals: product.vals, ty: x.ty.clone() })
            }
            // GLSL's matCxR with column c and row r: element (i, j) in column j.
            (MatrixFunction::Outer, [c, r]) => {
                let (SrcType::Vector(tc, rows), SrcType::Vector(tr, cols)) = (&c.ty, &r.ty) else { return None };
                let t = arith_type(*tc, *tr);
                let mut vals = Vec::with_capacity((rows * cols) as usize);
                for j in 0..*cols as usize {
                    for i in 0..*rows as usize {
                        let (x, y) = (self.convert(*c.vals.get(i)?, t, span), self.convert(*r.vals.get(j)?, t, span));
                        vals.push(self.emit(Op::Binary(BinOp::Mul, x, y), t, span));
                    }
                }
                Some(RV { vals, ty: SrcType::Matrix(t, *cols, *rows) })
            }
            _ => None,
        }
    }

    /// Component-wise arithmetic with broadcasting and type promotion (the
    /// matrix product where the language writes it `*`).
    pub fn arith(&mut self, op: &str, a: RV, b: RV, span: Span) -> RV {
        if op == "*" && self.cx.d.matrix_product == Some(MatrixProduct::Operator) && (matches!(a.ty, SrcType::Matrix(..)) || matches!(b.ty, SrcType::Matrix(..))) {
            if let Some(product) = self.matrix_product(&a, &b, true, span) {
                return product;
            }
        }
        // Pointer arithmetic: p + i.
        if let SrcType::Pointer(elem, sp) = &a.ty {
            if op == "+" || op == "-" {
                let (Some(&p), Some(&i)) = (a.vals.first(), b.vals.first()) else { return a };
                let i = self.index_value(i, span);
                let (p, cells) = match self.view_at(p, elem, span) {
                    Some(View::Cells { stride, .. }) => (p, stride as i64),
                    Some(View::Unplaced) => (self.unplaced_view(p, elem, span), elem.cells(&self.cx.structs).max(1) as i64),
                    Some(View::Bytes(bytes)) => {
                        let i = if op == "-" { self.emit(Op::Unary(UnOp::Neg, i), self.f.inst(i).ty, span) } else { i };
                        let v = match self.byte_view_add(p, i, bytes, span) {
                            Some(v) => v,
                            None => self.lost_byte_offset(p, span),
                        };
                        return RV { vals: vec![v], ty: a.ty.clone() };
                    }
                    None => (p, elem.cells(&self.cx.structs).max(1) as i64),
                };
                let t = self.f.inst(i).ty;
                let mut k = i;
                if cells != 1 {
                    let c = self.int(t, cells, span);
                    k = self.emit(Op::Binary(BinOp::Mul, i, c), t, span);
                }
                if op == "-" {
                    k = self.emit(Op::Unary(UnOp::Neg, k), t, span);
                }
                let v = self.emit(Op::PtrAdd(p, k), Type::Ptr(*sp), span);
                return RV { vals: vec![v], ty: a.ty.clone() };
            }
        }
        let n = a.vals.len().max(b.vals.len());
        let cmp = match op {
            "==" => Some(CmpOp::Eq),
            "!=" => Some(CmpOp::Ne),
            "<" => Some(CmpOp::Lt),
            "<=" => Some(CmpOp::Le),
            ">" => Some(CmpOp::Gt),
            ">=" => Some(CmpOp::Ge),
            _ => None,
        };
        let bop = match op {
            "+" => Some(BinOp::Add),
            "-" => Some(BinOp::Sub),
            "*" => Some(BinOp::Mul),
            "/" => Some(BinOp::Div),
            "%" => Some(BinOp::Rem),
            "&" => Some(BinOp::And),
            "|" => Some(BinOp::Or),
            "^" => Some(BinOp::Xor),
            "<<" => Some(BinOp::Shl),
            ">>" => Some(BinOp::Shr),
            "&&" => Some(BinOp::LAnd),
            "||" => Some(BinOp::LOr),
            _ => None,
        };
        let mut vals = Vec::with_capacity(n);
        let mut result_t = Type::I32;
        for i in 0..n {
            let x = *a.vals.get(i).or(a.vals.first()).unwrap_or(&Value(0));
            let y = *b.vals.get(i).or(b.vals.first()).unwrap_or(&Value(0));
            if a.vals.is_empty() || b.vals.is_empty() {
                return self.undef(Type::I32, span);
            }
            let (tx, ty) = (self.f.inst(x).ty, self.f.inst(y).ty);
            let v = if let Some(c) = cmp {
                let t = arith_type(tx, ty);
                let (x, y) = (self.convert(x, t, span), self.convert(y, t, span));
                result_t = Type::Bool;
                match (self.f.as_int(x), self.f.as_int(y)) {
                    // Folded, so that `if constexpr (K == 2)` lowers one branch.
                    (Some(a), Some(b)) if t.is_int() => {
                        let holds = if t.is_signed() { c.holds(a, b) } else { c.holds(a as u64, b as u64) };
                        self.konst(Type::Bool, Const::Bool(holds), span)
                    }
                    _ => self.emit(Op::Cmp(c, x, y), Type::Bool, span),
                }
            } else if let Some(bo) = bop {
                if matches!(bo, BinOp::LAnd | BinOp::LOr) {
                    let (x, y) = (self.emit_bool(x, span), self.emit_bool(y, span));
                    result_t = Type::Bool;
                    match (self.f.as_int(x), self.f.as_int(y)) {
                        (Some(a), Some(b)) => {
                            let r = if bo == BinOp::LAnd { a != 0 && b != 0 } else { a != 0 || b != 0 };
                            self.konst(Type::Bool, Const::Bool(r), span)
                        }
                        _ => self.emit(Op::Binary(bo, x, y), Type::Bool, span),
                    }
                } else if matches!(bo, BinOp::Shl | BinOp::Shr) {
                    let t = promoted(tx);
                    let x = self.convert(x, t, span);
                    let y = self.convert(y, t, span);
                    result_t = t;
                    self.fold_or_emit(bo, x, y, t, span)
                } else {
                    let t = arith_type(tx, ty);
                    let (x, y) = (self.convert(x, t, span), self.convert(y, t, span));
                    result_t = t;
                    self.fold_or_emit(bo, x, y, t, span)
                }
            } else {
                return self.undef(Type::I32, span);
            };
            vals.push(v);
        }
        let shape = if a.vals.len() >= b.vals.len() { &a.ty } else { &b.ty };
        let ty = if n == 1 { SrcType::Scalar(result_t) } else { shape.with_scalar(result_t) };
        RV { vals, ty }
    }

    /// Folds integer constants (so `N/2` stays a literal) or emits the operation.
    pub(crate) fn fold_or_emit(&mut self, op: BinOp, x: Value, y: Value, t: Type, span: Span) -> Value {
        if t.is_int() {
            if let (Some(a), Some(b)) = (self.f.as_int(x), self.f.as_int(y)) {
                let r = match op {
                    BinOp::Add => Some(a.wrapping_add(b)),
                    BinOp::Sub => Some(a.wrapping_sub(b)),
                    BinOp::Mul => Some(a.wrapping_mul(b)),
                    BinOp::Div | BinOp::ExactDiv => a.checked_div(b),
                    BinOp::Rem => a.checked_rem(b),
                    BinOp::And => Some(a & b),
                    BinOp::Or => Some(a | b),
                    BinOp::Xor => Some(a ^ b),
                    BinOp::Shl => a.checked_shl(b as u32),
                    BinOp::Shr => a.checked_shr(b as u32),
                    _ => None,
                };
                if let Some(r) = r {
                    let r = if t.bits() == 32 { if t.is_signed() { r as i32 as i64 } else { r as u32 as i64 } } else { r };
                    return self.int(t, r, span);
                }
            }
        }
        self.emit(Op::Binary(op, x, y), t, span)
    }

    fn binary(&mut self, n: Node<'t>, span: Span) -> RV {
        let (Some(l), Some(r)) = (n.field(self.cx.fields.left), n.field(self.cx.fields.right)) else {
            return self.undef(Type::I32, span);
        };
        let op = n.field(self.cx.fields.operator).map(|o| self.cx.text(o)).unwrap_or("+");
        if let Some(rv) = self.cast_read_as_arithmetic(l, op, r, span) {
            return rv;
        }
        // Short-circuit when the right side could fault or has effects.
        if (op == "&&" || op == "||") && has_effects(self.cx, r) {
            return self.short_circuit(op == "&&", l, r, span);
        }
        let a = self.expr(l);
        let b = self.expr(r);
        self.arith(op, a, b, span)
    }

    /// `(T) *p` and `(T) -x`: a cast of a dereference or a negation, which
    /// the grammar, not knowing that `T` (a template parameter, a typedef)
    /// names a type, reads as `(T)` times `p` or minus `x`. None when the
    /// parenthesized name is not a type, or is also a variable.
    fn cast_read_as_arithmetic(&mut self, l: Node<'t>, op: &str, r: Node<'t>, span: Span) -> Option<RV> {
        if !matches!(op, "*" | "-" | "+") || self.cx.src.as_bytes().get(l.start_byte()) != Some(&b'(') {
            return None;
        }
        // The left side's text alone tells (no walk of the tree).
        let name = self.cx.text(l).strip_prefix('(')?.strip_suffix(')')?.trim();
        let is_name = name.bytes().next().is_some_and(|b| !b.is_ascii_digit()) && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if !is_name || self.lookup(name).is_some() {
            return None;
        }
        let ty = self.cx.type_named(name)?;
        let rv = match op {
            "*" => match self.deref(r, span) {
                Some(p) => self.read_place(&p, span),
                None => {
                    let what = format!("the read of `*{}`", self.cx.excerpt(r));
                    let v = self.unmodelled(r, what, Vec::new(), span);
                    self.scalar(v)
                }
            },
            "-" => {
                let x = self.expr(r);
                self.elementwise(UnOp::Neg, x, span)
            }
            _ => self.expr(r),
        };
        Some(self.converted(Some(ty), rv, r, span))
    }

    fn short_circuit(&mut self, is_and: bool, l: Node<'t>, r: Node<'t>, span: Span) -> RV {
        let var = self.ssa.new_var(Type::Bool, "");
        let a = self.expr(l);
        let av = match a.vals.first() {
            Some(&v) => self.emit_bool(v, span),
            None => self.konst(Type::Bool, Const::Bool(false), span),
        };
        self.ssa.write(var, self.cur, av);
        let rhs_b = self.new_block(span);
        let join = self.new_block(span);
        let cur = self.cur;
        let ls = self.span(l);
        let (then_to, else_to) = if is_and { (rhs_b, join) } else { (join, rhs_b) };
        self.f.set_term(cur, lockstep_ir::Terminator::Branch { cond: av, then_to, else_to }, span);
        self.f.block_mut(cur).cond_span = Some(ls);
        self.ssa.add_edge(cur, rhs_b);
        self.ssa.add_edge(cur, join);
        self.ssa.seal(&mut self.f, rhs_b);
        self.cur = rhs_b;
        let b = self.expr(r);
        let bv = match b.vals.first() {
            Some(&v) => self.emit_bool(v, span),
            None => self.konst(Type::Bool, Const::Bool(false), span),
        };
        self.ssa.write(var, self.cur, bv);
        let end = self.cur;
        self.f.set_term(end, lockstep_ir::Terminator::Jump(join), span);
        self.ssa.add_edge(end, join);
        self.ssa.seal(&mut self.f, join);
        self.cur = join;
        let v = self.ssa.read(&mut self.f, var, join, span);
        self.scalar(v)
    }

    fn conditional(&mut self, n: Node<'t>, span: Span) -> RV {
        let (Some(c), Some(a), Some(b)) =
            (n.field(self.cx.fields.condition), n.field(self.cx.fields.consequence), n.field(self.cx.fields.alternative))
        else {
            return self.undef(Type::I32, span);
        };
        let cond = self.expr(c);
        // A constant condition: only the operand chosen is evaluated.
        if let Some(k) = cond.vals.first().and_then(|&v| self.f.as_int(v)) {
            return self.expr(if k != 0 { a } else { b });
        }
        if self.touches_memory(a) || self.touches_memory(b) {
            if let Some(&cv) = cond.vals.first() {
                return self.conditional_branches(cv, a, b, span);
            }
        }
        let x = self.expr(a);
        let y = self.expr(b);
        let (Some(&cv), false, false) = (cond.vals.first(), x.vals.is_empty(), y.vals.is_empty()) else { return x };
        let cb = self.emit_bool(cv, span);
        if let (SrcType::Pointer(..), Some(&px), Some(&py)) = (&x.ty, x.vals.first(), y.vals.first()) {
            let sp = pointer_space(&x.ty);
            let v = self.emit(Op::Select(cb, px, py), Type::Ptr(sp), span);
            return RV { vals: vec![v], ty: x.ty };
        }
        let t = arith_type(x.ty.scalar(&self.cx.structs), y.ty.scalar(&self.cx.structs));
        let shape = if x.vals.len() >= y.vals.len() { x.ty.clone() } else { y.ty.clone() };
        let n = x.vals.len().max(y.vals.len());
        let mut vals = Vec::with_capacity(n);
        for i in 0..n {
            let xi = *x.vals.get(i).or(x.vals.first()).expect("non-empty");
            let yi = *y.vals.get(i).or(y.vals.first()).expect("non-empty");
            let (xi, yi) = (self.convert(xi, t, span), self.convert(yi, t, span));
            vals.push(self.emit(Op::Select(cb, xi, yi), t, span));
        }
        RV { vals, ty: if n == 1 { SrcType::Scalar(t) } else { shape.with_scalar(t) } }
    }

    /// Whether evaluating an expression may access memory or have effects
    /// (a subscript, a dereference, a call, an assignment): such a `?:` arm
    /// must run only when it is chosen.
    fn touches_memory(&self, n: Node<'t>) -> bool {
        let mut stack = vec![n];
        while let Some(x) = stack.pop() {
            match self.cx.kind(x) {
                "subscript_expression" | "call_expression" | "assignment_expression" | "update_expression" => return true,
                "pointer_expression" if x.field(self.cx.fields.operator).is_some_and(|o| self.cx.text(o) == "*") => return true,
                "field_expression" if self.cx.text(x).contains("->") => return true,
                _ => {}
            }
            let mut c = x.walk();
            stack.extend(x.named_children(&mut c));
        }
        false
    }

    /// `c ? a : b` whose arms touch memory: each arm in its own block, as C
    /// evaluates only the chosen one (`tid < n ? s[tid] : 0` reads nothing
    /// for the other threads).
    fn conditional_branches(&mut self, cond: Value, a: Node<'t>, b: Node<'t>, span: Span) -> RV {
        let cb = self.emit_bool(cond, span);
        let (then_b, else_b, join) = (self.new_block(span), self.new_block(span), self.new_block(span));
        self.branch(cb, then_b, else_b, span, span);
        self.seal(then_b);
        self.enter(then_b);
        let x = self.expr(a);
        let ty = match x.ty {
            SrcType::Void => SrcType::Scalar(Type::I32),
            ref t => t.clone(),
        };
        let vars = self.new_vars(&ty, "?:");
        let place = Place::Vars { vars, ty };
        self.assign(&place, &x, span, None);
        self.jump(join, span);
        self.seal(else_b);
        self.enter(else_b);
        let y = self.expr(b);
        self.assign(&place, &y, span, None);
        self.jump(join, span);
        self.seal(join);
        self.enter(join);
        self.read_place(&place, span)
    }

    // ----- calls -----

    fn call(&mut self, n: Node<'t>, span: Span) -> RV {
        let Some(func) = n.field(self.cx.fields.function) else { return self.undef(Type::I32, span) };
        let args: Vec<Node<'t>> = match n.field(self.cx.fields.arguments) {
            Some(a) => {
                let mut c = a.walk();
                a.named_children(&mut c).filter(|x| self.cx.kind(*x) != "comment").collect()
            }
            None => Vec::new(),
        };
        // `static_cast<T>(v)`, `reinterpret_cast<T*>(v)`, `const_cast<T*>(v)`: casts.
        if self.cx.kind(func) == "template_function" && matches!(callee_name(self.cx.text(func)).as_str(), "static_cast" | "reinterpret_cast" | "const_cast") {
            if let (Some(target), [value]) = (func.field(self.cx.fields.arguments).and_then(|a| a.named_child(0)), args.as_slice()) {
                let ty = self.cx.resolve_type(target);
                return self.cast(ty, *value, span);
            }
        }
        // `as_type<T>(v)`, `bit_cast<T>(v)`: the same bits read as a `T`.
        if self.cx.kind(func) == "template_function" && self.cx.d.bit_casts.contains(&callee_name(self.cx.text(func)).as_str()) {
            let target = func.field(self.cx.fields.arguments).and_then(|a| a.named_child(0)).and_then(|t| self.cx.resolve_type(t));
            if let (Some(ty), [value]) = (target, args.as_slice()) {
                let rv = self.expr(*value);
                if let Some(done) = self.reinterpret(&rv, &ty, span) {
                    return done;
                }
                return self.unmodelled_intrinsic(&callee_name(self.cx.text(func)), "its argument's size is not the result's", n, span);
            }
        }
        if let Some(elem) = self.array_constructor_element(func) {
            return self.array_constructor(elem, &args, span);
        }
        if self.is_view(func) {
            return match self.place(n) {
                Some(p) => self.read_place(&p, span),
                None => self.undef(Type::I32, span),
            };
        }
        if let Some(callee) = self.called_function_value(func) {
            return self.call_function_value(callee, &args, n, span);
        }
        // Method calls: obj.method(args).
        if self.cx.kind(func) == "field_expression" {
            if let (Some(obj), Some(m)) = (func.field(self.cx.fields.argument), func.field(self.cx.fields.field)) {
                let method = self.cx.text(m).to_string();
                return self.method_call(obj, &method, &args, n, span);
            }
        }
        let name = callee_name(self.cx.text(func));
        // `policy<M, T>::reduce(x)`: a static member function of the class
        // definition the arguments choose.
        if self.cx.kind(func) == "qualified_identifier" {
            if let Some(rv) = self.static_member_call(func, &args, n) {
                return rv;
            }
        }
        if self.cx.kind(func) == "qualified_identifier" && self.cx.text(func).contains(">::") && !self.cx.funcs.contains_key(&name) {
            let what = self.cx.text(func).to_string();
            self.diag(
                "unsupported",
                n,
                "a call of a class template's member function (`traits<T>::f(…)`) is not resolved (which definition of the class its arguments choose is unknown, or it defines no such function in its body): its result is unknown to the analyses, which do not see what it accesses, and `lockstep run` stops at it".to_string(),
            );
            let rvs = args.iter().map(|&a| self.expr(a)).collect();
            return self.opaque_call(&what, rvs, span);
        }
        if let (true, Some(&Binding::Lambda(i))) = (self.cx.kind(func) == "identifier", self.lookup(&name)) {
            let lambda = self.lambda(i);
            let lowered = self.arguments(&args, span);
            return self.inline_lambda(lambda, &name, &lowered, n);
        }
        self.named_call(&name, &args, n, span)
    }

    /// A static member function of the class definition a scope's
    /// arguments choose (`policy<SUM, T>::reduce(x)`), inlined with the
    /// class's parameters bound; None where the class or the function is
    /// not one lockstep can tell.
    fn static_member_call(&mut self, func: Node<'t>, args: &[Node<'t>], call: Node<'t>) -> Option<RV> {
        let scope = func.field(self.cx.fields.scope)?;
        let method = self.cx.class_name(func.field(self.cx.fields.name)?).to_string();
        let (class, choice) = self.cx.class_definition(scope, 0, None)?;
        let methods = self.cx.class_methods(class, &method);
        if methods.is_empty() {
            return None;
        }
        let bindings = match crate::template::template_parameters(self.cx, class) {
            Some(params) => self.cx.class_bindings(params, choice),
            None => Default::default(),
        };
        Some(self.inline_class_member(class, bindings, &methods, &method, args, call))
    }

    /// Inlines the overload of a class's member function (`methods`, all
    /// named `name`) the arguments fit, with the class's parameters bound.
    fn inline_class_member(&mut self, class: Node<'t>, bindings: crate::template::Bindings, methods: &[Node<'t>], name: &str, args: &[Node<'t>], call: Node<'t>) -> RV {
        let lowered = self.arguments(args, self.span(call));
        let def = self.choose_overload(methods, &lowered);
        self.class_scope = Some((class, bindings));
        self.inline_call(def, name, &lowered, call)
    }

    /// The explicit specialization of the function template `def` that a
    /// call's template arguments (written or deduced) choose (`template <>
    /// float f<float>(float)`), else `def`. The arguments are read once:
    /// the chosen definition is inlined with them.
    fn explicit_specialization(&mut self, name: &str, def: Node<'t>, args: &[(Option<Place>, RV)], call: Node<'t>) -> Node<'t> {
        let Some(specializations) = self.cx.function_specializations.get(name).cloned() else { return def };
        let Some(params) = crate::template::template_parameters(self.cx, def) else { return def };
        let read = self.explicit_template_args.take();
        let bindings = self.template_bindings(def, params, args, call, read);
        let kinds = crate::template::parameter_names(self.cx, params);
        let ordered: Vec<TemplateArg> = kinds.iter().map(|(p, _)| bindings.get(p).cloned().unwrap_or(TemplateArg::Unknown)).collect();
        let known = |a: &TemplateArg| matches!(a, TemplateArg::Type(_) | TemplateArg::Int(_) | TemplateArg::Function(_));
        let chosen = specializations.into_iter().find(|&s| {
            let Some(list) = self.specialization_arguments(s) else { return false };
            let pattern = crate::template::argument_nodes(self.cx, list);
            pattern.len() == ordered.len()
                && pattern.iter().zip(&kinds).zip(&ordered).all(|((&a, (_, is_type)), bound)| known(bound) && crate::template::argument(self.cx, *is_type, a) == *bound)
        });
        if chosen.is_none() && !ordered.iter().all(known) {
            self.diag(
                "unsupported",
                call,
                format!("which definition of `{name}` this call uses (the template or one of its explicit specializations) depends on a template argument lockstep cannot tell; it analyses the template's own"),
            );
        }
        self.explicit_template_args = Some(ordered);
        chosen.unwrap_or(def)
    }

    /// The argument list an explicit specialization is declared with (`<float>` in `f<float>(…)`).
    fn specialization_arguments(&self, def: Node<'t>) -> Option<Node<'t>> {
        let mut d = def.field(self.cx.fields.declarator)?;
        while self.cx.kind(d) != "function_declarator" {
            d = d.field(self.cx.fields.declarator)?;
        }
        let name = d.field(self.cx.fields.declarator)?;
        let name = if self.cx.kind(name) == "qualified_identifier" { name.field(self.cx.fields.name)? } else { name };
        (self.cx.kind(name) == "template_function").then(|| name.field(self.cx.fields.arguments)).flatten()
    }

    /// The element type of an array constructor's callee (`float[4]`, or
    /// `vec4[2]`, which parses as a subscript of the type's name).
    fn array_constructor_element(&mut self, func: Node<'t>) -> Option<SrcType> {
        let element = match self.cx.kind(func) {
            "array_type" => func.field(self.cx.fields.element)?,
            "subscript_expression" => {
                let arg = func.field(self.cx.fields.argument)?;
                let name = self.cx.text(arg);
                if self.cx.kind(arg) != "identifier" || self.lookup(name).is_some() || global_binding(self.cx, name).is_some() {
                    return None;
                }
                arg
            }
            _ => return None,
        };
        self.cx.resolve_type(element)
    }

    /// `T[n](a, b, …)`: an array value, one argument per element.
    fn array_constructor(&mut self, elem: SrcType, args: &[Node<'t>], span: Span) -> RV {
        let mut vals = Vec::new();
        for &a in args {
            let rv = self.expr(a);
            vals.extend(self.convert_to(&rv, &elem, span));
        }
        RV { vals, ty: SrcType::Array(Box::new(elem), args.len() as u64) }
    }

    /// Call arguments: each one's place, if it has one, and its value (an
    /// array decays to a pointer to its first element).
    pub(crate) fn arguments(&mut self, args: &[Node<'t>], span: Span) -> Vec<(Option<Place>, RV)> {
        args.iter()
            .map(|&a| {
                if let Some(variable) = self.register_pointee(a) {
                    let rv = crate::stmt::register_address(variable.ty());
                    return (Some(variable), rv);
                }
                let place = self.place(a);
                let rv = match &place {
                    Some(p) => self.decayed(p, span).unwrap_or_else(|| {
                        let rv = self.read_place(p, span);
                        if matches!(p, Place::Mem { .. }) {
                            self.argument_reads.extend(rv.vals.iter().copied());
                        }
                        rv
                    }),
                    None => self.expr(a),
                };
                (place, rv)
            })
            .collect()
    }

    fn named_call(&mut self, name: &str, args: &[Node<'t>], call: Node<'t>, span: Span) -> RV {
        // A template parameter bound to a function: a call of that function.
        if let Some(TemplateArg::Function(target)) = self.cx.template_args.get(name) {
            if target != name {
                let target = target.clone();
                return self.named_call(&target, args, call, span);
            }
        }
        let d = self.cx.d;
        if let Some(b) = d.barrier(name) {
            let pred = match (b.reduce, args.first()) {
                (Some(_), Some(&a)) => {
                    let rv = self.expr(a);
                    rv.vals.first().map(|&v| self.emit_bool(v, span))
                }
                _ => {
                    for &a in args {
                        self.expr(a);
                    }
                    None
                }
            };
            let ty = if b.reduce.is_some() { Type::I32 } else { Type::Void };
            let b = self.with_preceding_fences(b);
            let v = self.emit(Op::Barrier(b, pred), ty, span);
            return if ty == Type::Void { RV { vals: Vec::new(), ty: SrcType::Void } } else { self.scalar(v) };
        }
        if d.flag_barrier == Some(name) {
            let consts: Vec<Option<i64>> = args.iter().map(|&a| self.cx.const_int(a)).collect();
            let b = match consts.as_slice() {
                [Some(m), Some(s)] => flag_barrier(*m as u64, *s as u64),
                [_, Some(s)] => flag_barrier(0xF, *s as u64),
                _ => lockstep_ir::Barrier { exec: Scope::Group, mem: Scope::Device, spaces: lockstep_ir::Spaces::ALL, reduce: None },
            };
            self.emit(Op::Barrier(b, None), Type::Void, span);
            return RV { vals: Vec::new(), ty: SrcType::Void };
        }
        if let Some(decode) = d.flag_decoded_barrier(name) {
            let consts: Vec<Option<i64>> = args.iter().map(|&a| self.cx.const_int(a)).collect();
            self.emit(Op::Barrier(decode(&consts), None), Type::Void, span);
            return RV { vals: Vec::new(), ty: SrcType::Void };
        }
        if let Some(scope) = d.sync_object(name) {
            for &a in args {
                self.expr(a);
            }
            // `tiled_partition<16>(block)` or `tiled_partition(block, 16)`.
            let explicit = call.field(self.cx.fields.function).filter(|f| self.cx.kind(*f) == "template_function").and_then(|f| f.field(self.cx.fields.arguments)).and_then(|a| a.named_child(0));
            let width = explicit.or_else(|| args.get(1).copied()).and_then(|w| self.cx.const_int(w)).map(|w| w.clamp(1, 1024) as u32);
            return RV { vals: Vec::new(), ty: SrcType::SyncObject(scope, width) };
        }
        // `memcpy(&f, &bits, sizeof(float))` between variables in registers: a
        // bit cast; between registers and memory: value by value.
        if let (true, [dst, src, bytes]) = (d.byte_copy == Some(name) && !self.cx.funcs.contains_key(name), args) {
            if let Some(rv) = self.register_copy(*dst, *src, *bytes, span).or_else(|| self.byte_copy(*dst, *src, *bytes, span)) {
                return rv;
            }
        }
        // A matrix's constructor (`coopmat<…>(0.0)`): the matrix is its one value.
        if let (true, Some(ty)) = (d.cooperative_matrices.types.contains(&name), self.cx.type_named(name)) {
            let rvs: Vec<RV> = args.iter().map(|&a| self.expr(a)).collect();
            return match rvs.first() {
                Some(rv) if !rv.vals.is_empty() => RV { vals: self.convert_to(rv, &ty, span), ty },
                _ => self.undef(ty.scalar(&self.cx.structs), span),
            };
        }
        if d.cooperative_matrix_function(name) {
            let operands = args.iter().flat_map(|&a| self.expr(a).vals).collect();
            let what = "an operation on cooperative matrices (loaded, multiplied and stored by a whole wave or group together; lockstep holds each matrix as one unknown value)".to_string();
            let v = self.unmodelled(call, what, operands, span);
            return self.scalar(v);
        }
        if let Some(first) = args.first() {
            // Free functions taking a group first: `cg::sync(g)`, `cg::reduce(tile, v, op)`.
            if let Some(SrcType::SyncObject(scope, width)) = self.group_argument(*first) {
                if let Some(rv) = self.group_call(scope, width, name, &args[1..], span) {
                    return rv;
                }
            }
        }
        if d.discard_if_negative == Some(name) && args.len() == 1 {
            let rv = self.expr(args[0]);
            self.discard_if_negative(rv, span);
            return RV { vals: Vec::new(), ty: SrcType::Void };
        }
        if let (true, [a, b, hi, lo]) = (d.extended_multiplies.contains(&name), args) {
            let (a, b) = (self.expr(*a), self.expr(*b));
            if let (Some(&x), Some(&y), Some(hi), Some(lo)) = (a.vals.first(), b.vals.first(), self.place(*hi), self.place(*lo)) {
                let t = hi.ty().scalar(&self.cx.structs);
                let (x, y) = (self.convert(x, t, span), self.convert(y, t, span));
                let high = self.emit(Op::Math(MathFn::MulHi, vec![x, y]), t, span);
                let low = self.emit(Op::Binary(BinOp::Mul, x, y), t, span);
                self.assign(&hi, &RV { vals: vec![high], ty: SrcType::Scalar(t) }, span, None);
                self.assign(&lo, &RV { vals: vec![low], ty: SrcType::Scalar(t) }, span, None);
                return RV { vals: Vec::new(), ty: SrcType::Void };
            }
        }
        if let Some(&(_, dot)) = d.packed_dot_products.iter().find(|(n, _)| *n == name) {
            let operands: Vec<Value> = args.iter().filter_map(|&a| self.expr(a).vals.first().copied()).collect();
            let expected = if dot.accumulate == crate::dialect::Accumulate::No { 2 } else { 3 };
            if let Some(v) = (operands.len() == expected && args.len() == expected).then(|| self.packed_dot(dot, &operands, span)).flatten() {
                return self.scalar(v);
            }
            return self.unmodelled_intrinsic(name, "its operands are not 32-bit integers", call, span);
        }
        if let Some(w) = d.lane_words.and_then(|read| read(name)) {
            if let Some(&[a, b]) = self.integer_operands(args).as_deref() {
                let v = crate::packed_lanes::lane_word(self, w, a, b, span);
                return self.scalar(v);
            }
            return self.unmodelled_intrinsic(name, "its operands are not two 32-bit integers", call, span);
        }
        if d.byte_permute == Some(name) {
            if let Some(&[x, y, s]) = self.integer_operands(args).as_deref() {
                let v = crate::packed_lanes::byte_permute(self, x, y, s, span);
                return self.scalar(v);
            }
            return self.unmodelled_intrinsic(name, "its operands are not three 32-bit integers", call, span);
        }
        if let (true, [value, offset, bits]) = (d.bitfield_extract == Some(name), args) {
            let (value, offset, bits) = (self.expr(*value), self.expr(*offset), self.expr(*bits));
            if let (Some(&offset), Some(&bits)) = (offset.vals.first(), bits.vals.first()) {
                let vals = value.vals.iter().map(|&v| self.bitfield_extract(v, offset, bits, span)).collect::<Option<Vec<_>>>();
                if let Some(vals) = vals {
                    return RV { vals, ty: value.ty };
                }
            }
            return self.unmodelled_intrinsic(name, "its value is not an integer", call, span);
        }
        if let (Some((convert, reinterpret)), [arg]) = (d.typed_conversions, args) {
            let conversion = name.strip_prefix(convert).map(|t| (t, false)).or_else(|| name.strip_prefix(reinterpret).map(|t| (t, true)));
            // The rounding a plain conversion does anyway: toward zero to an
            // integer, to the nearest even to a float. Saturation and the
            // other roundings are not modelled.
            let conversion = conversion.map(|(t, bits)| {
                let plain = ["_rtz", "_rte"].iter().find_map(|&suffix| {
                    let base = t.strip_suffix(suffix)?;
                    let to_float = parse_numeric(base)?.scalar(&self.cx.structs).is_float();
                    (to_float == (suffix == "_rte")).then_some(base)
                });
                (plain.unwrap_or(t), bits)
            });
            if let Some((t, false)) = conversion.filter(|(t, _)| ["_sat", "_rte", "_rtp", "_rtn", "_rtz"].iter().any(|s| t.contains(s))) {
                if parse_numeric(t.split('_').next().unwrap_or(t)).is_some() {
                    self.expr(*arg);
                    return self.unmodelled_intrinsic(name, "saturation and rounding modes other than the plain conversion's are not", call, span);
                }
            }
            if let Some(target) = conversion.and_then(|(t, bits)| parse_numeric(t).map(|ty| (ty, bits))) {
                let rv = self.expr(*arg);
                let done = match target {
                    (ty, false) => Some(RV { vals: self.convert_to(&rv, &ty, span), ty }),
                    (ty, true) => self.reinterpret(&rv, &ty, span),
                };
                if let Some(done) = done {
                    return done;
                }
                return self.unmodelled_intrinsic(name, "its argument's size is not the result's", call, span);
            }
        }
        if let Some(function) = d.matrix_function(name) {
            let values: Vec<RV> = args.iter().map(|&a| self.expr(a)).collect();
            if let Some(rv) = self.matrix_function(function, &values, span) {
                return rv;
            }
            return self.unmodelled_intrinsic(name, "its operands do not have the shapes it takes", call, span);
        }
        if let (Some(MatrixProduct::Function(f)), [x, y]) = (d.matrix_product, args) {
            if f == name {
                let (x, y) = (self.expr(*x), self.expr(*y));
                return match self.matrix_product(&x, &y, false, span) {
                    Some(product) => product,
                    // With a scalar, `mul` is the component-wise product.
                    None => self.arith("*", x, y, span),
                };
            }
        }
        if let Some(b) = d.builtin_call(name) {
            let v = self.builtin(b, span);
            return self.scalar(v);
        }
        if let Some(semantic) = d.computed_call(name) {
            let ty = SrcType::Scalar(Type::U32);
            let vals = self.semantic_values(semantic, &ty, span);
            return RV { vals, ty };
        }
        if let Some(b) = d.axis_builtin(name) {
            if let Some(axis) = args.first().and_then(|&a| self.cx.const_int(a)) {
                let v = self.axis_builtin(b, axis, span);
                return self.scalar(v);
            }
        }
        if let Some(access) = d.vector_memory(name) {
            if let Some(rv) = self.vector_memory(access, args, span) {
                return rv;
            }
        }
        if let Some(op) = d.atomic(name) {
            return self.atomic_call(op, args, call, span);
        }
        if let Some(access) = d.image_function(name) {
            if let Some(rv) = self.image_call(access, args, span) {
                return rv;
            }
        }
        let inclusive = d.inclusive_scan(name);
        if let Some(w) = inclusive.or_else(|| d.wave_op(name)) {
            let skip = if d.wave_mask_first { 1 } else { 0 };
            let mut vals = Vec::new();
            let mut ty = SrcType::Scalar(Type::U32);
            for (i, &a) in args.iter().enumerate() {
                let rv = self.expr(a);
                if i == skip {
                    ty = rv.ty.clone();
                }
                if i >= skip {
                    vals.extend(rv.vals);
                }
            }
            let own = RV { vals: vals.clone(), ty: ty.clone() };
            let exclusive = self.wave(w, vals, ty, span);
            return match inclusive {
                Some(scan) => self.inclusive_scan(scan, exclusive, &own, span),
                None => exclusive,
            };
        }
        if let Some(q) = d.ballot_query(name) {
            return self.ballot_query(q, name, args, call, span);
        }
        if let Some(i) = d.intrinsic(name) {
            return self.intrinsic(i, args, call, span);
        }
        if let Some(v) = d.vector_intrinsic(name) {
            return self.vector_intrinsic(v, name, args, call, span);
        }
        let template_type = match self.cx.template_args.get(name) {
            Some(TemplateArg::Type(t)) => Some(t.clone()),
            Some(TemplateArg::OpaqueType) => Some(crate::template::GENERIC_TYPE),
            _ => None,
        };
        if let Some(t) = template_type.or_else(|| parse_numeric(name)).or_else(|| name.strip_prefix("make_").and_then(parse_numeric)) {
            // Constructors: float4(a, b), uint3(x), make_float2(a, b).
            let mut vals = Vec::new();
            for &a in args {
                vals.extend(self.expr(a).vals);
            }
            let rv = RV { vals, ty: t.clone() };
            let vals = self.convert_to(&rv, &t, span);
            return RV { vals, ty: t };
        }
        if let Some(rv) = self.hlsl_vector_builtin(name, args, span) {
            return rv;
        }
        if d.index_types.contains(&name) {
            // `index<2>(i, j)`: an integer vector of the template's rank.
            let rank = call.field(self.cx.fields.function).and_then(|f| f.field(self.cx.fields.arguments)).and_then(|a| a.named_child(0)).and_then(|r| self.cx.const_int(r));
            let mut vals = Vec::new();
            for &a in args {
                vals.extend(self.expr(a).vals);
            }
            let ty = SrcType::Vector(Type::I32, rank.unwrap_or(vals.len() as i64).clamp(1, 4) as u32);
            let vals = self.convert_to(&RV { vals, ty: ty.clone() }, &ty, span);
            return RV { vals, ty };
        }
        // Inside a static member function, a bare name calls its class's members first.
        if let Some(class) = self.enclosing_class() {
            let methods = self.cx.class_methods(class, name);
            if !methods.is_empty() {
                let bindings = self.cx.template_args.clone();
                return self.inline_class_member(class, bindings, &methods, name, args, call);
            }
        }
        if let Some(defs) = self.cx.funcs.get(name).cloned() {
            if !defs.is_empty() {
                let lowered = self.arguments(args, span);
                let def = self.choose_overload(&defs, &lowered);
                let def = self.explicit_specialization(name, def, &lowered, call);
                return self.inline_call(def, name, &lowered, call);
            }
        }
        // A struct's name that is no function's (C lets `struct stat` and `stat()` share one).
        if let Some(&si) = self.cx.struct_names.get(name) {
            if let Some(rv) = self.construct(si, args, call, span) {
                return rv;
            }
            // No constructor: the arguments are the members, in order.
            let ty = SrcType::Struct(si);
            let vals = args.iter().flat_map(|&a| self.expr(a).vals).collect();
            let vals = self.convert_to(&RV { vals, ty: ty.clone() }, &ty, span);
            return RV { vals, ty };
        }
        // An optimizer hint: C never evaluates its operand, but a valid
        // program makes it hold, so it guards what follows like a branch
        // whose other way no thread takes.
        if matches!(name, "__builtin_assume" | "__assume") {
            if let [c] = args {
                self.assume(*c, span);
            }
            return RV { vals: Vec::new(), ty: SrcType::Void };
        }
        if matches!(name, "printf" | "assert" | "__assert_fail" | "static_assert" | "printf_s") {
            for &a in args {
                self.expr(a);
            }
            return RV { vals: Vec::new(), ty: SrcType::Void };
        }
        let rvs: Vec<RV> = args.iter().map(|&a| self.expr(a)).collect();
        // A local (a functor, a variable of a type lockstep does not know) is declared.
        let declared_here = self.lookup(name).is_some();
        if !declared_here && matches!(self.cx.template_args.get(name), Some(TemplateArg::Constant(_) | TemplateArg::Unknown)) {
            // A template's function parameter with no function bound.
            let what = format!("the call through `{name}`, whose target lockstep cannot tell,");
            let operands = rvs.iter().flat_map(|r| r.vals.iter().copied()).collect();
            let v = self.unmodelled(call, what, operands, span);
            return self.scalar(v);
        }
        if d.looks_like_intrinsic(name) && !is_macro_name(name) {
            self.diag(
                "unsupported",
                call,
                format!("`{name}` is neither defined in the sources lockstep read nor a built-in it models: its result is unknown to the analyses and `lockstep run` stops at it"),
            );
        } else if !declared_here {
            self.cx.undeclared_name(name, span, crate::module::UndeclaredUse::Callee);
        }
        self.opaque_call(name, rvs, span)
    }

    /// `S(a, b)`, `S{a, b}`, `S v(a, b)`: a new object of struct `si` made by
    /// the constructor that takes these arguments (its member initializers,
    /// then its body, with the object's members in scope). None when the
    /// struct declares no constructor.
    pub(crate) fn construct(&mut self, si: usize, args: &[Node<'t>], call: Node<'t>, span: Span) -> Option<RV> {
        let name = match self.cx.instance_bindings.get(&si) {
            Some(&(class, _)) => class.field(self.cx.fields.name).map(|x| self.cx.class_name(x).to_string())?,
            None => self.cx.struct_names.iter().find(|&(_, &i)| i == si).map(|(n, _)| n.clone())?,
        };
        let defs = self.cx.methods.get(&(si, name.clone()))?.clone();
        // A copy, or arguments no constructor takes: member by member.
        if !defs.iter().any(|&d| param_count(self.cx, d) == Some(args.len())) {
            return None;
        }
        let ty = SrcType::Struct(si);
        let vars = self.new_vars(&ty, &name);
        let object = Place::Vars { vars, ty: ty.clone() };
        // Members no initializer sets hold whatever was there.
        let unset = self.undef_of(&ty, span);
        self.assign(&object, &unset, span, None);
        let lowered = self.arguments(args, span);
        let def = self.choose_overload(&defs, &lowered);
        self.receiver = Some(object.clone());
        self.class_scope = self.cx.instance_bindings.get(&si).cloned();
        self.inline_call(def, &name, &lowered, call);
        Some(self.read_place(&object, span))
    }

    /// A constructor's member initializers (`: a(x), b{y, z}`), run on
    /// `object` with the constructor's parameters in scope (a parameter
    /// named like the member it sets, `type(type)`, is the parameter).
    pub(crate) fn member_initializers(&mut self, object: &Place, list: Node<'t>) {
        let mut c = list.walk();
        let inits: Vec<Node<'t>> = list.named_children(&mut c).filter(|x| self.cx.kind(*x) == "field_initializer").collect();
        for init in inits {
            let span = self.span(init);
            let (Some(member), Some(value)) = (init.named_child(0), init.named_child(1)) else { continue };
            let Some(place) = self.sub_place(object.clone(), self.cx.text(member), span) else {
                self.diag("unsupported", init, format!("the initializer of `{}` (a base class or a member lockstep does not know) is not modelled; what it sets is unknown", self.cx.text(member)));
                continue;
            };
            let mut c = value.walk();
            let args: Vec<Node<'t>> = value.named_children(&mut c).filter(|x| self.cx.kind(*x) != "comment").collect();
            let ty = place.ty().clone();
            let constructed = match ty {
                SrcType::Struct(si) => self.construct(si, &args, init, span),
                _ => None,
            };
            let rv = match (constructed, args.as_slice()) {
                (Some(rv), _) => rv,
                (None, [one]) => self.expr(*one),
                (None, _) => self.initializer(value, &ty),
            };
            self.assign(&place, &rv, span, None);
        }
    }

    /// The type of an expression that may name a cooperative group (without
    /// lowering anything else twice).
    fn group_argument(&mut self, n: Node<'t>) -> Option<SrcType> {
        match self.cx.kind(n) {
            "identifier" => match self.lookup(self.cx.text(n)) {
                Some(&Binding::Sync(s, w)) => Some(SrcType::SyncObject(s, w)),
                _ => None,
            },
            "call_expression" => {
                let name = n.field(self.cx.fields.function).map(|f| callee_name(self.cx.text(f)))?;
                self.cx.d.sync_object(&name)?;
                Some(self.expr(n).ty)
            }
            _ => None,
        }
    }

    /// An operation on a cooperative group (`g.sync()`, `cg::sync(g)`,
    /// `tile.thread_rank()`, `tile.shfl_down(v, 1)`, `cg::reduce(tile, v,
    /// cg::plus<int>())`); None for one not modelled. A tile narrower than a
    /// wave synchronizes as the wave does.
    fn group_call(&mut self, scope: Scope, width: Option<u32>, op: &str, args: &[Node<'t>], span: Span) -> Option<RV> {
        let wave_op = match op {
            "shfl" => Some(WaveOp::Shuffle),
            "shfl_up" => Some(WaveOp::ShuffleUp),
            "shfl_down" => Some(WaveOp::ShuffleDown),
            "shfl_xor" => Some(WaveOp::ShuffleXor),
            "any" => Some(WaveOp::AnyTrue),
            "all" => Some(WaveOp::AllTrue),
            "ballot" => Some(WaveOp::Ballot),
            "match_any" => Some(WaveOp::MatchAny),
            _ => None,
        };
        if let Some(w) = wave_op.filter(|_| scope == Scope::Wave) {
            let rvs: Vec<RV> = args.iter().map(|&a| self.expr(a)).collect();
            let ty = rvs.first().map_or(SrcType::Scalar(Type::U32), |rv| rv.ty.clone());
            return Some(self.wave(w, rvs.into_iter().flat_map(|rv| rv.vals).collect(), ty, span));
        }
        // A tile's threads are consecutive flat indices: rank and tile number
        // are the flat index modulo and divided by its width.
        let flat_by_width = |l: &mut Self, op: BinOp| -> Value {
            let flat = l.builtin(Builtin::LocalIndex, span);
            let w = match width {
                Some(w) => l.int(Type::U32, w as i64, span),
                None => l.builtin(Builtin::WaveSize, span),
            };
            l.fold_or_emit(op, flat, w, Type::U32, span)
        };
        let v = match (op, scope) {
            ("sync" | "barrier_wait", _) => return Some(self.sync_object_barrier(scope, span)),
            ("thread_rank", Scope::Wave) => flat_by_width(self, BinOp::Rem),
            ("thread_rank", Scope::Group) => self.builtin(Builtin::LocalIndex, span),
            ("meta_group_rank", Scope::Wave) => flat_by_width(self, BinOp::Div),
            ("size" | "num_threads", Scope::Wave) => match width {
                Some(w) => self.int(Type::U32, w as i64, span),
                None => self.builtin(Builtin::WaveSize, span),
            },
            ("size" | "num_threads", Scope::Group) => self.group_thread_count(span),
            ("meta_group_size", Scope::Wave) => {
                let all = self.group_thread_count(span);
                let w = match width {
                    Some(w) => self.int(Type::U32, w as i64, span),
                    None => self.builtin(Builtin::WaveSize, span),
                };
                self.fold_or_emit(BinOp::Div, all, w, Type::U32, span)
            }
            // The grid: groups numbered x fastest, threads within each as the group numbers them.
            ("block_rank", Scope::Device) => self.flat_group_index(span),
            ("thread_rank", Scope::Device) => {
                let group = self.flat_group_index(span);
                let per_group = self.group_thread_count(span);
                let before = self.fold_or_emit(BinOp::Mul, group, per_group, Type::U32, span);
                let local = self.builtin(Builtin::LocalIndex, span);
                self.fold_or_emit(BinOp::Add, before, local, Type::U32, span)
            }
            ("num_blocks", Scope::Device) => self.group_count(span),
            ("size" | "num_threads", Scope::Device) => {
                let groups = self.group_count(span);
                let per_group = self.group_thread_count(span);
                self.fold_or_emit(BinOp::Mul, groups, per_group, Type::U32, span)
            }
            ("block_index", Scope::Device) => {
                let vals = (0..3).map(|a| self.builtin(Builtin::GroupId(a), span)).collect();
                return Some(RV { vals, ty: SrcType::Vector(Type::U32, 3) });
            }
            ("dim_blocks", Scope::Device) => {
                let vals = (0..3).map(|a| self.builtin(Builtin::NumGroups(a), span)).collect();
                return Some(RV { vals, ty: SrcType::Vector(Type::U32, 3) });
            }
            ("group_index", _) => {
                let vals = (0..3).map(|a| self.builtin(Builtin::GroupId(a), span)).collect();
                return Some(RV { vals, ty: SrcType::Vector(Type::U32, 3) });
            }
            ("thread_index", _) => {
                let vals = (0..3).map(|a| self.builtin(Builtin::LocalId(a), span)).collect();
                return Some(RV { vals, ty: SrcType::Vector(Type::U32, 3) });
            }
            ("group_dim" | "dim_threads", _) => {
                let vals = (0..3).map(|a| self.builtin(Builtin::GroupSize(a), span)).collect();
                return Some(RV { vals, ty: SrcType::Vector(Type::U32, 3) });
            }
            ("reduce" | "inclusive_scan" | "exclusive_scan", Scope::Wave) => {
                let value = self.expr(*args.first()?);
                let combine = args.get(1).map(|&o| self.cx.text(o)).unwrap_or("plus");
                let reduction = match (op, combine) {
                    ("reduce", c) if c.contains("plus") => WaveOp::Sum,
                    ("reduce", c) if c.contains("less") => WaveOp::Min,
                    ("reduce", c) if c.contains("greater") => WaveOp::Max,
                    ("reduce", c) if c.contains("bit_and") => WaveOp::BitAnd,
                    ("reduce", c) if c.contains("bit_or") => WaveOp::BitOr,
                    ("reduce", c) if c.contains("bit_xor") => WaveOp::BitXor,
                    (_, c) if c.contains("plus") => WaveOp::PrefixSum,
                    _ => return None,
                };
                let exclusive = self.wave(reduction, value.vals.clone(), value.ty.clone(), span);
                if op != "inclusive_scan" {
                    return Some(exclusive);
                }
                return Some(self.inclusive_scan(reduction, exclusive, &value, span));
            }
            _ => return None,
        };
        Some(self.scalar(v))
    }

    fn sync_object_barrier(&mut self, scope: Scope, span: Span) -> RV {
        let mem = if scope == Scope::Device { Scope::Device } else { scope };
        let b = lockstep_ir::Barrier { exec: scope, mem, spaces: lockstep_ir::Spaces::ALL, reduce: None };
        self.emit(Op::Barrier(b, None), Type::Void, span);
        RV { vals: Vec::new(), ty: SrcType::Void }
    }

    /// An inclusive scan: the exclusive scan `scan` gave, combined with the lane's own value.
    fn inclusive_scan(&mut self, scan: WaveOp, exclusive: RV, own: &RV, span: Span) -> RV {
        let Some(combine) = scan.inclusive_step() else { return exclusive };
        let t = exclusive.ty.scalar(&self.cx.structs);
        let vals = exclusive.vals.iter().zip(&own.vals).map(|(&e, &v)| self.fold_or_emit(combine, e, v, t, span)).collect();
        RV { vals, ty: exclusive.ty }
    }

    fn wave(&mut self, w: WaveOp, vals: Vec<Value>, ty: SrcType, span: Span) -> RV {
        let result_t = match w {
            WaveOp::AllTrue | WaveOp::AnyTrue | WaveOp::AllEqual | WaveOp::IsFirstLane => Type::Bool,
            WaveOp::Ballot | WaveOp::CountBits | WaveOp::PrefixCountBits | WaveOp::MatchAny => Type::U32,
            _ => ty.scalar(&self.cx.structs),
        };
        match w {
            WaveOp::ReadFirst | WaveOp::Sum | WaveOp::Product | WaveOp::Min | WaveOp::Max | WaveOp::BitAnd | WaveOp::BitOr
            | WaveOp::BitXor | WaveOp::PrefixSum | WaveOp::PrefixProduct => {
                // Component-wise over vectors.
                let out: Vec<Value> = vals.iter().map(|&v| self.emit(Op::Wave(w, vec![v]), result_t, span)).collect();
                let len = out.len() as u32;
                RV { vals: out, ty: if len <= 1 { SrcType::Scalar(result_t) } else { ty.with_scalar(result_t) } }
            }
            WaveOp::Ballot if self.cx.d.ballot_words > 1 => {
                let words = (0..self.cx.d.ballot_words)
                    .map(|k| {
                        let word = self.int(Type::U32, i64::from(k), span);
                        self.emit(Op::Wave(w, vals.iter().copied().chain([word]).collect()), Type::U32, span)
                    })
                    .collect();
                RV { vals: words, ty: SrcType::Vector(Type::U32, self.cx.d.ballot_words) }
            }
            _ => {
                let v = self.emit(Op::Wave(w, vals), result_t, span);
                self.scalar(v)
            }
        }
    }

    /// A question about a ballot's mask: its first two 32-bit words, the
    /// lanes of a wave of up to 64 (the widest lockstep runs).
    fn ballot_query(&mut self, q: BallotQuery, name: &str, args: &[Node<'t>], call: Node<'t>, span: Span) -> RV {
        let rvs: Vec<RV> = args.iter().map(|&a| self.expr(a)).collect();
        let operand = |k: usize| rvs.get(k).and_then(|r| r.vals.first().copied());
        let (Some(low), true) = (operand(0), q != BallotQuery::LaneBit || operand(1).is_some()) else {
            return self.unmodelled_intrinsic(name, "an argument has no value lockstep can model", call, span);
        };
        let mut mask = self.convert(low, Type::U64, span);
        if let Some(&high) = rvs[0].vals.get(1) {
            let high = self.convert(high, Type::U64, span);
            let thirty_two = self.int(Type::U64, 32, span);
            let high = self.emit(Op::Binary(BinOp::Shl, high, thirty_two), Type::U64, span);
            mask = self.emit(Op::Binary(BinOp::Or, mask, high), Type::U64, span);
        }
        let one = self.int(Type::U64, 1, span);
        // The lane asked about: the one the second argument names, or this one.
        let lane = |this: &mut Self| {
            let lane = match (q, operand(1)) {
                (BallotQuery::LaneBit, Some(named)) => named,
                _ => this.builtin(Builtin::LaneId, span),
            };
            this.convert(lane, Type::U64, span)
        };
        let v = match q {
            BallotQuery::BitCount => self.emit(Op::Math(MathFn::PopCount, vec![mask]), Type::U32, span),
            BallotQuery::LowerLanes | BallotQuery::LowerLanesAndOwn => {
                // The lanes below: (1 << lane) - 1; up to and including: (2 << lane) - 1.
                let first = if q == BallotQuery::LowerLanes { one } else { self.int(Type::U64, 2, span) };
                let lane = lane(self);
                let above = self.emit(Op::Binary(BinOp::Shl, first, lane), Type::U64, span);
                let below = self.emit(Op::Binary(BinOp::Sub, above, one), Type::U64, span);
                let kept = self.emit(Op::Binary(BinOp::And, mask, below), Type::U64, span);
                self.emit(Op::Math(MathFn::PopCount, vec![kept]), Type::U32, span)
            }
            BallotQuery::LowestLane => self.emit(Op::Math(MathFn::FirstBitLow, vec![mask]), Type::U32, span),
            BallotQuery::HighestLane => self.emit(Op::Math(MathFn::FirstBitHigh, vec![mask]), Type::U32, span),
            BallotQuery::LaneBit | BallotQuery::OwnBit => {
                let lane = lane(self);
                let shifted = self.emit(Op::Binary(BinOp::Shr, mask, lane), Type::U64, span);
                let bit = self.emit(Op::Binary(BinOp::And, shifted, one), Type::U64, span);
                let zero = self.int(Type::U64, 0, span);
                self.emit(Op::Cmp(CmpOp::Ne, bit, zero), Type::Bool, span)
            }
        };
        self.scalar(v)
    }

    /// Lowers a call to an intrinsic of the dialect's table, component-wise over vectors.
    fn intrinsic(&mut self, i: Intrinsic, args: &[Node<'t>], call: Node<'t>, span: Span) -> RV {
        match i.op {
            IntrinsicOp::LoadThroughPointer => {
                let place = args.first().and_then(|&a| self.deref(a, span));
                return match place {
                    Some(p) => self.read_place(&p, span),
                    None => self.unmodelled_intrinsic(i.name, "its argument is not a pointer", call, span),
                };
            }
            IntrinsicOp::FetchElement => {
                let place = match args {
                    [memory, index] => self.element_place(*memory, *index, span),
                    _ => None,
                };
                return match place {
                    Some(p) => self.read_place(&p, span),
                    None => self.unmodelled_intrinsic(i.name, "its first argument names no memory lockstep can follow", call, span),
                };
            }
            IntrinsicOp::ActiveLaneMask => {
                let all = self.konst(Type::Bool, Const::Bool(true), span);
                let v = self.emit(Op::Wave(WaveOp::Ballot, vec![all]), Type::U32, span);
                return self.scalar(v);
            }
            IntrinsicOp::Select(condition) => {
                let [a, b, c] = args else { return self.unmodelled_intrinsic(i.name, "it is not called with three arguments", call, span) };
                let (a, b, c) = (self.expr(*a), self.expr(*b), self.expr(*c));
                return match self.select_components(&a, &b, &c, condition, span) {
                    Some(rv) => rv,
                    None => self.unmodelled_intrinsic(i.name, "an argument has no value lockstep can model", call, span),
                };
            }
            IntrinsicOp::Math(_)
            | IntrinsicOp::Binary(_)
            | IntrinsicOp::Convert
            | IntrinsicOp::RoundThenConvert(_)
            | IntrinsicOp::IsNan
            | IntrinsicOp::IsInf
            | IntrinsicOp::IsFinite
            | IntrinsicOp::MulAdd24
            | IntrinsicOp::RoundToBf16 => {}
        }
        let rvs: Vec<RV> = args.iter().map(|&a| self.expr(a)).collect();
        if let Some(k) = rvs.iter().position(|r| r.vals.is_empty()) {
            let why = format!("argument {} has no value lockstep can model (a call whose return type it cannot resolve, such as a template's)", k + 1);
            return self.unmodelled_intrinsic(i.name, &why, call, span);
        }
        let wanted = match i.op {
            IntrinsicOp::Binary(_) => Some(2),
            IntrinsicOp::Convert | IntrinsicOp::RoundThenConvert(_) | IntrinsicOp::IsNan | IntrinsicOp::IsInf | IntrinsicOp::IsFinite | IntrinsicOp::RoundToBf16 => Some(1),
            IntrinsicOp::MulAdd24 => Some(3),
            _ => None,
        };
        if rvs.is_empty() || wanted.is_some_and(|w| w != rvs.len()) {
            let why = format!("it is called with {} arguments", rvs.len());
            return self.unmodelled_intrinsic(i.name, &why, call, span);
        }
        let n = rvs.iter().map(|r| r.vals.len()).max().unwrap_or(1);
        let shape = rvs.iter().max_by_key(|r| r.vals.len()).map(|r| r.ty.clone()).unwrap_or(SrcType::Scalar(Type::F32));
        let common = rvs.iter().filter_map(|r| r.vals.first()).map(|&v| self.f.inst(v).ty).fold(Type::Bool, arith_type);
        let operand_t = match i.operands {
            Operands::Common => Some(common),
            Operands::CommonFloat if common.is_float() => Some(common),
            Operands::CommonFloat => Some(Type::F32),
            Operands::Fixed(t) => Some(t),
            Operands::Bits => None,
        };
        let result_t = i.result.or(operand_t).unwrap_or(common);
        let mut vals = Vec::with_capacity(n);
        for c in 0..n {
            let operands: Vec<Value> = rvs
                .iter()
                .map(|r| *r.vals.get(c).unwrap_or(&r.vals[0]))
                .collect::<Vec<_>>()
                .into_iter()
                .map(|v| match operand_t {
                    Some(t) => self.convert(v, t, span),
                    None => v,
                })
                .collect();
            let v = match i.op {
                // GLSL's `atan(y, x)` is the two-argument arctangent.
                IntrinsicOp::Math(MathFn::Atan) if operands.len() == 2 => self.emit(Op::Math(MathFn::Atan2, operands), result_t, span),
                IntrinsicOp::Math(f) => self.emit(Op::Math(f, operands), result_t, span),
                IntrinsicOp::Binary(op) => self.emit(Op::Binary(op, operands[0], operands[1]), result_t, span),
                IntrinsicOp::Convert => self.convert(operands[0], result_t, span),
                IntrinsicOp::RoundThenConvert(rounding) => {
                    let t = self.f.inst(operands[0]).ty;
                    let rounded = self.emit(Op::Math(rounding, operands), t, span);
                    self.convert(rounded, result_t, span)
                }
                IntrinsicOp::IsNan => {
                    let nan = self.emit(Op::Cmp(CmpOp::Ne, operands[0], operands[0]), Type::Bool, span);
                    self.convert(nan, result_t, span)
                }
                // The magnitude against infinity; a NaN compares false to it
                // (neither infinite nor finite).
                IntrinsicOp::IsInf | IntrinsicOp::IsFinite => {
                    let t = self.f.inst(operands[0]).ty;
                    let magnitude = self.emit(Op::Math(MathFn::Abs, vec![operands[0]]), t, span);
                    let infinity = self.konst(t, Const::Float(f64::INFINITY), span);
                    let cmp = if i.op == IntrinsicOp::IsInf { CmpOp::Eq } else { CmpOp::Lt };
                    let class = self.emit(Op::Cmp(cmp, magnitude, infinity), Type::Bool, span);
                    self.convert(class, result_t, span)
                }
                IntrinsicOp::MulAdd24 => {
                    let product = self.emit(Op::Math(MathFn::Mul24, vec![operands[0], operands[1]]), result_t, span);
                    self.emit(Op::Binary(BinOp::Add, product, operands[2]), result_t, span)
                }
                IntrinsicOp::RoundToBf16 => self.rounded_to_bf16(operands[0], span),
                IntrinsicOp::LoadThroughPointer | IntrinsicOp::FetchElement | IntrinsicOp::ActiveLaneMask | IntrinsicOp::Select(_) => unreachable!("handled above"),
            };
            vals.push(v);
        }
        RV { vals, ty: if n == 1 { SrcType::Scalar(result_t) } else { shape.with_scalar(result_t) } }
    }

    /// `select(a, b, c)`: per component, `b` where the condition picks it, else `a`.
    fn select_components(&mut self, a: &RV, b: &RV, c: &RV, condition: SelectCondition, span: Span) -> Option<RV> {
        if a.vals.is_empty() || b.vals.is_empty() || c.vals.is_empty() {
            return None;
        }
        let t = arith_type(a.ty.scalar(&self.cx.structs), b.ty.scalar(&self.cx.structs));
        let shape = [a, b, c].into_iter().max_by_key(|r| r.vals.len()).map(|r| r.ty.clone())?;
        let n = a.vals.len().max(b.vals.len()).max(c.vals.len());
        let top_bit = condition == SelectCondition::TopBitOfVectors && c.vals.len() > 1;
        let mut vals = Vec::with_capacity(n);
        for k in 0..n {
            let pick = |r: &RV| *r.vals.get(k).unwrap_or(&r.vals[0]);
            let (x, y, cond) = (self.convert(pick(a), t, span), self.convert(pick(b), t, span), pick(c));
            let chosen = match int_width(self.f.inst(cond).ty).and_then(|w| int_type(w, true)) {
                Some(signed) if top_bit => {
                    let as_signed = self.convert(cond, signed, span);
                    let zero = self.int(signed, 0, span);
                    self.emit(Op::Cmp(CmpOp::Lt, as_signed, zero), Type::Bool, span)
                }
                _ => self.emit_bool(cond, span),
            };
            vals.push(self.emit(Op::Select(chosen, y, x), t, span));
        }
        Some(RV { vals, ty: if n == 1 { SrcType::Scalar(t) } else { shape.with_scalar(t) } })
    }

    /// The cell `index` of an array or the memory behind a pointer.
    fn element_place(&mut self, memory: Node<'t>, index: Node<'t>, span: Span) -> Option<Place> {
        match self.place(memory) {
            Some(p @ Place::Mem { ty: SrcType::Array(..), .. }) => {
                let i = *self.expr(index).vals.first()?;
                self.index_place(p, i, span)
            }
            _ => {
                let rv = self.expr(memory);
                let SrcType::Pointer(elem, sp) = rv.ty.clone() else { return None };
                let p = *rv.vals.first()?;
                let i = *self.expr(index).vals.first()?;
                Some(self.pointer_place(p, &elem, sp, Some(i), span))
            }
        }
    }

    /// An intrinsic call lockstep cannot lower: one warning, then an opaque call
    /// (its arguments are already lowered), whose value is unknown to the
    /// analyses and stops the emulator.
    fn vector_intrinsic(&mut self, v: VectorIntrinsic, name: &str, args: &[Node<'t>], call: Node<'t>, span: Span) -> RV {
        let rvs: Vec<RV> = args.iter().map(|&a| self.expr(a)).collect();
        if let (VectorIntrinsic::UnpackHalves | VectorIntrinsic::PackHalves, [rv]) = (v, rvs.as_slice()) {
            let done = match v {
                VectorIntrinsic::UnpackHalves => self.unpack_halves(rv, span),
                _ => self.pack_halves(rv, span),
            };
            if let Some(done) = done {
                return done;
            }
            let why = "its argument is not a 32-bit integer or a two-component float vector".to_string();
            return self.unmodelled_intrinsic(name, &why, call, span);
        }
        if let (VectorIntrinsic::Split(bits) | VectorIntrinsic::Join(bits), [rv]) = (v, rvs.as_slice()) {
            let done = match v {
                VectorIntrinsic::Split(_) => self.split_bits(rv, bits, span),
                _ => self.join_bits(rv, bits, span),
            };
            if let Some(done) = done {
                return done;
            }
            let why = "its argument is not an integer of a width it takes apart or builds".to_string();
            return self.unmodelled_intrinsic(name, &why, call, span);
        }
        let picked: Option<(Vec<Value>, Type)> = match (v, rvs.as_slice()) {
            (VectorIntrinsic::Component(n, t), [rv]) => rv.vals.get(n as usize).map(|&x| (vec![x], t)),
            (VectorIntrinsic::Pack(t), _) if !rvs.is_empty() => Some((rvs.iter().flat_map(|r| r.vals.iter().copied()).collect(), t)),
            (VectorIntrinsic::Splat(t, n), [rv]) if rv.vals.len() == 1 => Some((vec![rv.vals[0]; n as usize], t)),
            (VectorIntrinsic::Gather(n, t), _) if !rvs.is_empty() => rvs.iter().map(|r| r.vals.get(n as usize).copied()).collect::<Option<Vec<_>>>().map(|vals| (vals, t)),
            _ => None,
        };
        let Some((vals, elem)) = picked.filter(|(vals, _)| !vals.is_empty()) else {
            let why = format!("its {} arguments do not have the components it takes", rvs.len());
            return self.unmodelled_intrinsic(name, &why, call, span);
        };
        let converted: Vec<Value> = vals
            .iter()
            .map(|&x| {
                let from = RV { vals: vec![x], ty: SrcType::Scalar(self.f.inst(x).ty) };
                self.convert_to(&from, &SrcType::Scalar(elem), span)[0]
            })
            .collect();
        let ty = if converted.len() == 1 { SrcType::Scalar(elem) } else { SrcType::Vector(elem, converted.len() as u32) };
        RV { vals: converted, ty }
    }

    /// Bits `offset..offset + bits` of an integer, sign-extended when it is
    /// signed; 0 when `bits` is 0 (GLSL's `bitfieldExtract`). Narrow values
    /// are extended to 32 bits first (the field lies in their low bits, so
    /// it is the same field), and the result converted back. Shifts stay
    /// below the width: the shift by `width - bits` is taken only when
    /// `bits` is not 0.
    fn bitfield_extract(&mut self, v: Value, offset: Value, bits: Value, span: Span) -> Option<Value> {
        let ty = self.f.inst(v).ty;
        let width = int_width(ty)?.max(32);
        let t = int_type(width, ty.is_signed())?;
        let wide = self.convert(v, t, span);
        let (offset, bits) = (self.convert(offset, t, span), self.convert(bits, t, span));
        let k = self.int(t, i64::from(width), span);
        let zero = self.int(t, 0, span);
        let is_empty = self.emit(Op::Cmp(CmpOp::Eq, bits, zero), Type::Bool, span);
        let one = self.int(t, 1, span);
        // width - bits, kept below the width by using 1 where bits is 0 (that result is discarded).
        let safe_bits = self.emit(Op::Select(is_empty, one, bits), t, span);
        let drop_high = self.emit(Op::Binary(BinOp::Sub, k, safe_bits), t, span);
        // Move the field to the top, then down to bit 0: the type's shift
        // sign-extends a signed value and fills an unsigned one with zeros.
        let top = self.emit(Op::Binary(BinOp::Sub, drop_high, offset), t, span);
        let up = self.emit(Op::Binary(BinOp::Shl, wide, top), t, span);
        let field = self.emit(Op::Binary(BinOp::Shr, up, drop_high), t, span);
        let extracted = self.emit(Op::Select(is_empty, zero, field), t, span);
        Some(self.convert(extracted, ty, span))
    }

    /// The dot product of the four bytes packed in each of `operands[0]` and
    /// `operands[1]`, plus `operands[2]` where the product accumulates.
    fn packed_dot(&mut self, dot: crate::dialect::PackedDot, operands: &[Value], span: Span) -> Option<Value> {
        let (&a, &b) = (operands.first()?, operands.get(1)?);
        if [a, b].iter().any(|&v| int_width(self.f.inst(v).ty) != Some(32)) {
            return None;
        }
        let signed = dot.signed.unwrap_or(self.f.inst(a).ty.is_signed());
        let acc = match dot.accumulate {
            crate::dialect::Accumulate::No => None,
            how => Some((*operands.get(2)?, how)),
        };
        Some(crate::packed_dot::packed_dot(self, a, b, signed, acc, span))
    }

    /// The value with `rv`'s bits and type `ty` (OpenCL `as_uint(f)`,
    /// `as_ushort2(u)`); None when the sizes differ or a part is not a number.
    fn reinterpret(&mut self, rv: &RV, ty: &SrcType, span: Span) -> Option<RV> {
        let from = rv.ty.scalar(&self.cx.structs);
        let to = ty.scalar(&self.cx.structs);
        let (from_bits, to_bits) = (from.bits(), to.bits());
        // Parts are reinterpreted through unsigned integers of their width.
        let from_u = int_type(from_bits, false)?;
        int_type(to_bits, false)?;
        let count = match *ty {
            SrcType::Scalar(_) => 1,
            SrcType::Vector(_, n) => n as usize,
            _ => return None,
        };
        if rv.vals.len() * from_bits as usize != count * to_bits as usize {
            return None;
        }
        let bitcast = |this: &mut Self, v: Value, t: Type| {
            if this.f.inst(v).ty == t {
                v
            } else {
                this.emit(Op::Math(MathFn::Bitcast, vec![v]), t, span)
            }
        };
        let raw: Vec<Value> = rv.vals.iter().map(|&v| bitcast(self, v, from_u)).collect();
        let parts: Vec<Value> = if from_bits == to_bits {
            raw
        } else if from_bits > to_bits {
            let mut parts = Vec::new();
            for v in raw {
                parts.extend(self.split_bits(&RV { vals: vec![v], ty: SrcType::Scalar(from_u) }, to_bits, span)?.vals);
            }
            parts
        } else {
            let per = (to_bits / from_bits) as usize;
            let mut parts = Vec::new();
            for chunk in raw.chunks(per) {
                parts.extend(self.join_bits(&RV { vals: chunk.to_vec(), ty: SrcType::Vector(from_u, per as u32) }, to_bits, span)?.vals);
            }
            parts
        };
        let vals = parts.into_iter().map(|v| bitcast(self, v, to)).collect();
        Some(RV { vals, ty: ty.clone() })
    }

    /// `unpack8(x)`: the parts of an integer, lowest first.
    fn split_bits(&mut self, rv: &RV, bits: u32, span: Span) -> Option<RV> {
        let SrcType::Scalar(t) = rv.ty else { return None };
        let width = int_width(t)?;
        let part = int_type(bits, t.is_signed())?;
        if width <= bits || width % bits != 0 {
            return None;
        }
        let x = *rv.vals.first()?;
        let vals = (0..width / bits)
            .map(|i| {
                let shifted = if i == 0 {
                    x
                } else {
                    let k = self.int(t, (i * bits) as i64, span);
                    self.emit(Op::Binary(BinOp::Shr, x, k), t, span)
                };
                // The conversion keeps the part's low bits.
                self.convert(shifted, part, span)
            })
            .collect::<Vec<_>>();
        let n = vals.len() as u32;
        Some(RV { vals, ty: SrcType::Vector(part, n) })
    }

    /// `unpackHalf2x16(x)`: the halves in bits 0..16 and 16..32 of `x`, widened to f32.
    fn unpack_halves(&mut self, rv: &RV, span: Span) -> Option<RV> {
        let SrcType::Scalar(t) = rv.ty else { return None };
        if int_width(t) != Some(32) {
            return None;
        }
        let x = *rv.vals.first()?;
        let k16 = self.int(t, 16, span);
        let high = self.emit(Op::Binary(BinOp::Shr, x, k16), t, span);
        // F16ToF32 reads the operand's low 16 bits.
        let vals = [x, high].iter().map(|&h| self.emit(Op::Math(MathFn::F16ToF32, vec![h]), Type::F32, span)).collect();
        Some(RV { vals, ty: SrcType::Vector(Type::F32, 2) })
    }

    /// `packHalf2x16(v)`: `v.x` and `v.y` rounded to halves, in bits 0..16 and 16..32.
    fn pack_halves(&mut self, rv: &RV, span: Span) -> Option<RV> {
        let (SrcType::Vector(_, 2), [x, y]) = (&rv.ty, rv.vals.as_slice()) else { return None };
        let halves: Vec<Value> = [*x, *y]
            .iter()
            .map(|&c| {
                let c = self.convert(c, Type::F32, span);
                self.emit(Op::Math(MathFn::F32ToF16, vec![c]), Type::U32, span)
            })
            .collect();
        let k16 = self.int(Type::U32, 16, span);
        let high = self.emit(Op::Binary(BinOp::Shl, halves[1], k16), Type::U32, span);
        let packed = self.emit(Op::Binary(BinOp::Or, halves[0], high), Type::U32, span);
        Some(RV { vals: vec![packed], ty: SrcType::Scalar(Type::U32) })
    }

    /// `pack32(v)`: the integer whose parts, lowest first, are `v`'s components.
    fn join_bits(&mut self, rv: &RV, bits: u32, span: Span) -> Option<RV> {
        let SrcType::Vector(t, n) = rv.ty else { return None };
        let width = int_width(t)?;
        let whole = int_type(bits, t.is_signed())?;
        if width * n != bits {
            return None;
        }
        let unsigned = int_type(bits, false)?;
        let mask = self.int(unsigned, ((1u128 << width) - 1) as i64, span);
        let mut joined: Option<Value> = None;
        for (i, &c) in rv.vals.iter().enumerate() {
            let wide = self.convert(c, unsigned, span);
            let mut part = self.emit(Op::Binary(BinOp::And, wide, mask), unsigned, span);
            if i > 0 {
                let k = self.int(unsigned, i as i64 * width as i64, span);
                part = self.emit(Op::Binary(BinOp::Shl, part, k), unsigned, span);
            }
            joined = Some(match joined {
                None => part,
                Some(j) => self.emit(Op::Binary(BinOp::Or, j, part), unsigned, span),
            });
        }
        let joined = self.convert(joined?, whole, span);
        Some(RV { vals: vec![joined], ty: SrcType::Scalar(whole) })
    }

    fn unmodelled_intrinsic(&mut self, name: &str, why: &str, call: Node<'t>, span: Span) -> RV {
        self.diag("unsupported", call, format!("`{name}` is not modelled here: {why}; its result is treated as unknown"));
        self.opaque_call(name, Vec::new(), span)
    }

    /// HLSL vector helpers that reduce or combine components.
    fn hlsl_vector_builtin(&mut self, name: &str, args: &[Node<'t>], span: Span) -> Option<RV> {
        let reduce_bool = |l: &mut Self, rv: RV, all: bool| {
            let mut acc: Option<Value> = None;
            for v in rv.vals {
                let b = l.emit_bool(v, span);
                acc = Some(match acc {
                    None => b,
                    Some(a) => l.emit(Op::Binary(if all { BinOp::LAnd } else { BinOp::LOr }, a, b), Type::Bool, span),
                });
            }
            let v = acc.unwrap_or_else(|| l.konst(Type::Bool, Const::Bool(all), span));
            l.scalar(v)
        };
        match (name, args) {
            ("any", [a]) => {
                let rv = self.expr(*a);
                Some(reduce_bool(self, rv, false))
            }
            ("all", [a]) => {
                let rv = self.expr(*a);
                Some(reduce_bool(self, rv, true))
            }
            ("dot", [a, b]) => {
                let (x, y) = (self.expr(*a), self.expr(*b));
                let prod = self.arith("*", x, y, span);
                let mut acc = *prod.vals.first()?;
                for &v in &prod.vals[1..] {
                    let t = self.f.inst(v).ty;
                    acc = self.emit(Op::Binary(BinOp::Add, acc, v), t, span);
                }
                Some(self.scalar(acc))
            }
            ("length", [a]) => {
                let x = self.expr(*a);
                let sq = self.arith("*", x.clone(), x, span);
                let mut acc = *sq.vals.first()?;
                for &v in &sq.vals[1..] {
                    let t = self.f.inst(v).ty;
                    acc = self.emit(Op::Binary(BinOp::Add, acc, v), t, span);
                }
                let t = self.f.inst(acc).ty;
                let r = self.emit(Op::Math(MathFn::Sqrt, vec![acc]), t, span);
                Some(self.scalar(r))
            }
            _ => None,
        }
    }

    /// A launch-shape value along `axis`; past the third axis ids are 0 and sizes 1.
    fn axis_builtin(&mut self, b: AxisBuiltin, axis: i64, span: Span) -> Value {
        let Some(a) = u8::try_from(axis).ok().filter(|a| *a < 3) else {
            let past = match b {
                AxisBuiltin::GroupSize | AxisBuiltin::NumGroups | AxisBuiltin::GlobalSize => 1,
                _ => 0,
            };
            return self.int(Type::U32, past, span);
        };
        match b {
            AxisBuiltin::LocalId => self.builtin(Builtin::LocalId(a), span),
            AxisBuiltin::GroupId => self.builtin(Builtin::GroupId(a), span),
            AxisBuiltin::GroupSize => self.builtin(Builtin::GroupSize(a), span),
            AxisBuiltin::NumGroups => self.builtin(Builtin::NumGroups(a), span),
            AxisBuiltin::GlobalId => {
                let g = self.builtin(Builtin::GroupId(a), span);
                let s = self.builtin(Builtin::GroupSize(a), span);
                let l = self.builtin(Builtin::LocalId(a), span);
                let gs = self.emit(Op::Binary(BinOp::Mul, g, s), Type::U32, span);
                self.emit(Op::Binary(BinOp::Add, gs, l), Type::U32, span)
            }
            AxisBuiltin::GlobalSize => {
                let n = self.builtin(Builtin::NumGroups(a), span);
                let s = self.builtin(Builtin::GroupSize(a), span);
                self.emit(Op::Binary(BinOp::Mul, n, s), Type::U32, span)
            }
            AxisBuiltin::GlobalOffset => self.int(Type::U32, 0, span),
        }
    }

    /// `vloadN(offset, p)` reads `p[offset*N .. offset*N+N]`; `vstoreN(v, offset, p)` writes them.
    /// Halves are widened to floats as they are loaded and rounded to the
    /// nearest half as they are stored. None when the pointer is not one lockstep follows.
    fn vector_memory(&mut self, access: VectorAccess, args: &[Node<'t>], span: Span) -> Option<RV> {
        let (value, offset, pointer) = match (access.family.store, args) {
            (false, &[offset, pointer]) => (None, offset, pointer),
            (true, &[value, offset, pointer]) => (Some(self.expr(value)), offset, pointer),
            _ => return None,
        };
        let offset = *self.expr(offset).vals.first()?;
        let offset = self.convert(offset, Type::U32, span);
        let rv = self.expr(pointer);
        let (SrcType::Pointer(elem, space), Some(&p)) = (rv.ty.clone(), rv.vals.first()) else { return None };
        let stride = self.int(Type::U32, access.stride as i64, span);
        let first = self.emit(Op::Binary(BinOp::Mul, offset, stride), Type::U32, span);
        let mut loaded = Vec::new();
        for i in 0..access.width {
            let k = self.int(Type::U32, i as i64, span);
            let idx = self.emit(Op::Binary(BinOp::Add, first, k), Type::U32, span);
            let place = self.pointer_place(p, &elem, space, Some(idx), span);
            match &value {
                Some(v) => {
                    let lane = v.vals.get(i as usize).or(v.vals.first()).copied()?;
                    let lane = if access.family.halves { self.convert(lane, Type::F16, span) } else { lane };
                    let lane = self.scalar(lane);
                    self.assign(&place, &lane, span, None);
                }
                None => loaded.extend(self.read_place(&place, span).vals),
            }
        }
        if value.is_some() {
            return Some(RV { vals: Vec::new(), ty: SrcType::Void });
        }
        let scalar = if access.family.halves {
            loaded = loaded.into_iter().map(|v| self.convert(v, Type::F32, span)).collect();
            Type::F32
        } else {
            elem.scalar(&self.cx.structs)
        };
        Some(RV { vals: loaded, ty: if access.width == 1 { SrcType::Scalar(scalar) } else { SrcType::Vector(scalar, access.width) } })
    }

    fn atomic_call(&mut self, op: AtomicOp, args: &[Node<'t>], call: Node<'t>, span: Span) -> RV {
        let Some(&dest) = args.first() else { return self.undef(Type::I32, span) };
        let place = if self.cx.d.atomic_dest_is_pointer {
            let rv = self.expr(dest);
            match (rv.ty.clone(), rv.vals.first()) {
                (SrcType::Pointer(elem, sp), Some(&p)) => Some(self.pointer_place(p, &elem, sp, None, span)),
                _ => None,
            }
        } else {
            self.place(dest)
        };
        let Some(place @ Place::Mem { .. }) = place else {
            let what = format!("the atomic on `{}`", self.cx.text(dest));
            let v = self.unmodelled(call, what, Vec::new(), span);
            return RV { vals: vec![v], ty: SrcType::Scalar(Type::I32) };
        };
        let operand_count = match op {
            AtomicOp::CompareExchange => 2,
            // `atomic_load_explicit(p, order)`: the order is not an operand.
            AtomicOp::Load => 0,
            AtomicOp::Inc | AtomicOp::Dec if !self.cx.d.atomic_dest_is_pointer => 0,
            _ => 1,
        };
        let operands: Vec<Node<'t>> = args.iter().skip(1).take(operand_count).copied().collect();
        let old = self.atomic_at(op, place, &operands, span);
        // HLSL returns the original value through a trailing out argument.
        if !self.cx.d.atomic_dest_is_pointer {
            if let Some(&out) = args.get(1 + operand_count) {
                if let Some(p) = self.place(out) {
                    let rv = self.scalar(old);
                    self.assign(&p, &rv, span, None);
                }
            }
        }
        self.scalar(old)
    }

    /// An atomic read-modify-write of the first cell of `place`; returns the old value.
    fn atomic_at(&mut self, op: AtomicOp, place: Place, operand_nodes: &[Node<'t>], span: Span) -> Value {
        let Place::Mem { space, root, base, offsets, ty } = place else { unreachable!("atomics address memory") };
        let t = ty.scalar(&self.cx.structs);
        let mut operands = Vec::new();
        for &a in operand_nodes {
            let rv = self.expr(a);
            if let Some(&v) = rv.vals.first() {
                operands.push(self.convert(v, t, span));
            }
        }
        let idx = self.offset(base, offsets.first().unwrap_or(0), span);
        self.emit(Op::Atomic(op, mem_ref(space, root, idx), operands), t, span)
    }

    /// `imageLoad(image, coordinate)`, `imageStore(image, coordinate, value)`,
    /// `imageAtomicAdd(image, coordinate, value)`: the texel's place as a
    /// resource subscript gives it. None when the image is not a known resource.
    fn image_call(&mut self, access: ImageAccess, args: &[Node<'t>], span: Span) -> Option<RV> {
        let (&image, &coordinate) = match access {
            ImageAccess::SampledLoad(_) => (args.first()?, args.get(1..)?.last()?),
            _ => (args.first()?, args.get(1)?),
        };
        let Some(GlobalBinding::Resource { global, kind, elem, writable }) = global_binding(self.cx, self.cx.text(image)) else { return None };
        let coordinate = self.expr(coordinate);
        let texel = self.resource_element(global, kind, &elem, writable, &coordinate, span);
        Some(match access {
            ImageAccess::Load => self.read_place(&texel, span),
            // One value per texel, in each channel of the function's type
            // (`read_imageh` gives a `half4`).
            ImageAccess::SampledLoad(t) => {
                let texel = self.read_place(&texel, span);
                let ty = SrcType::Vector(t, 4);
                RV { vals: self.convert_to(&texel, &ty, span), ty }
            }
            ImageAccess::Store => {
                let value = self.expr(*args.get(2)?);
                self.assign(&texel, &value, span, None);
                RV { vals: Vec::new(), ty: SrcType::Void }
            }
            ImageAccess::Atomic(op) => {
                let old = self.atomic_at(op, texel, &args[2..], span);
                self.scalar(old)
            }
        })
    }

    fn method_call(&mut self, obj: Node<'t>, method: &str, args: &[Node<'t>], call: Node<'t>, span: Span) -> RV {
        if method == "get_extent" && self.is_view(obj) {
            if let Some(rv) = self.view_shape(obj, call, span) {
                return rv;
            }
        }
        // A tiled index's barrier: `t.barrier.wait()`.
        if let Some((member, methods)) = self.cx.d.member_barriers {
            let on_member = self.cx.kind(obj) == "field_expression" && obj.field(self.cx.fields.field).is_some_and(|f| self.cx.text(f) == member);
            if let Some(&(_, b)) = methods.iter().find(|(m, _)| *m == method).filter(|_| on_member) {
                let b = self.with_preceding_fences(b);
                self.emit(Op::Barrier(b, None), Type::Void, span);
                return RV { vals: Vec::new(), ty: SrcType::Void };
            }
        }
        // Cooperative groups: block.sync(), tile.thread_rank().
        if let Some(SrcType::SyncObject(scope, width)) = self.group_argument(obj) {
            if let Some(rv) = self.group_call(scope, width, method, args, span) {
                return rv;
            }
            let what = format!("the cooperative-groups operation `{method}`");
            let operands = args.iter().flat_map(|&a| self.expr(a).vals).collect();
            let v = self.unmodelled(call, what, operands, span);
            return self.scalar(v);
        }
        // HLSL resources.
        if self.cx.kind(obj) == "identifier" && self.lookup(self.cx.text(obj)).is_none() {
            if let Some(GlobalBinding::Resource { global, kind, elem, writable }) = global_binding(self.cx, self.cx.text(obj)) {
                return self.resource_method(global, kind, &elem, writable, method, args, call, span);
            }
        }
        // A member function with a body: inlined with the object's fields in scope.
        if let Some(receiver @ Place::Mem { ty: SrcType::Struct(si), .. } | receiver @ Place::Vars { ty: SrcType::Struct(si), .. }) = self.place(obj) {
            if let Some(defs) = self.cx.methods.get(&(si, method.to_string())).cloned() {
                let lowered = self.arguments(args, span);
                let def = self.choose_overload(&defs, &lowered);
                self.receiver = Some(receiver);
                self.class_scope = self.cx.instance_bindings.get(&si).cloned();
                return self.inline_call(def, method, &lowered, call);
            }
        }
        // `m.length()`: how many of a cooperative matrix's elements each thread holds, the same in all.
        if let ("length", Some(Binding::Place(Place::Vars { vars, .. }))) = (method, self.lookup(self.cx.text(obj))) {
            if self.holds_matrix(vars) {
                let v = self.emit(Op::Call(Callee::UnknownValue("the number of elements of a cooperative matrix each thread holds".into()), Vec::new()), Type::I32, span);
                return self.scalar(v);
            }
        }
        let rvs = args.iter().map(|&a| self.expr(a)).collect();
        self.opaque_call(method, rvs, span)
    }

    /// Groups in the dispatch.
    fn group_count(&mut self, span: Span) -> Value {
        self.product_of_axes(Builtin::NumGroups, span)
    }

    /// A built-in's x, y and z multiplied.
    fn product_of_axes(&mut self, axis: fn(u8) -> Builtin, span: Span) -> Value {
        let [x, y, z] = [0, 1, 2].map(|a| self.builtin(axis(a), span));
        let xy = self.fold_or_emit(BinOp::Mul, x, y, Type::U32, span);
        self.fold_or_emit(BinOp::Mul, xy, z, Type::U32, span)
    }

    /// The group's number in the dispatch, x fastest.
    fn flat_group_index(&mut self, span: Span) -> Value {
        let [x, y, z] = [0, 1, 2].map(|a| self.builtin(Builtin::GroupId(a), span));
        let [nx, ny] = [0, 1].map(|a| self.builtin(Builtin::NumGroups(a), span));
        let zy = self.fold_or_emit(BinOp::Mul, z, ny, Type::U32, span);
        let zy = self.fold_or_emit(BinOp::Add, zy, y, Type::U32, span);
        let zyx = self.fold_or_emit(BinOp::Mul, zy, nx, Type::U32, span);
        self.fold_or_emit(BinOp::Add, zyx, x, Type::U32, span)
    }

    pub(crate) fn group_thread_count(&mut self, span: Span) -> Value {
        self.product_of_axes(Builtin::GroupSize, span)
    }

    /// The place of element `idx` of a resource.
    fn resource_element(&mut self, g: lockstep_ir::GlobalId, kind: ResourceKind, elem: &SrcType, writable: bool, idx: &RV, span: Span) -> Place {
        let space = if writable { MemSpace::Device } else { MemSpace::Constant };
        let cells = elem.cells(&self.cx.structs).max(1);
        let linear = match kind {
            ResourceKind::Texture { .. } => self.texel_index(idx, span),
            _ => match idx.vals.first() {
                Some(&v) => self.index_value(v, span),
                None => self.int(Type::U32, 0, span),
            },
        };
        let t = self.f.inst(linear).ty;
        let base = if cells == 1 {
            linear
        } else {
            let k = self.int(t, cells as i64, span);
            self.fold_or_emit(BinOp::Mul, linear, k, t, span)
        };
        Place::Mem { space, root: Root::Global(g), base, offsets: Offsets::Dense(cells.min(1 << 16) as u32), ty: elem.clone() }
    }

    /// Texel coordinates to one cell index: x + (y << 16) + (z << 28).
    /// Injective for the sizes kernels use, which is all the analyses and the emulator need.
    fn texel_index(&mut self, idx: &RV, span: Span) -> Value {
        let mut acc: Option<Value> = None;
        for (i, &c) in idx.vals.iter().take(3).enumerate() {
            let c = self.convert(c, Type::U32, span);
            let term = if i == 0 {
                c
            } else {
                let sh = self.int(Type::U32, lockstep_ir::TEXEL_SHIFTS[i] as i64, span);
                self.fold_or_emit(BinOp::Shl, c, sh, Type::U32, span)
            };
            acc = Some(match acc {
                None => term,
                Some(a) => self.fold_or_emit(BinOp::Add, a, term, Type::U32, span),
            });
        }
        acc.unwrap_or_else(|| self.int(Type::U32, 0, span))
    }

    #[allow(clippy::too_many_arguments)]
    fn resource_method(
        &mut self,
        g: lockstep_ir::GlobalId,
        kind: ResourceKind,
        elem: &SrcType,
        writable: bool,
        method: &str,
        args: &[Node<'t>],
        call: Node<'t>,
        span: Span,
    ) -> RV {
        let space = if writable { MemSpace::Device } else { MemSpace::Constant };
        match (kind, method) {
            (ResourceKind::ByteAddress, m) if m.starts_with("Load") || m.starts_with("Store") || m.starts_with("Interlocked") => {
                let width = m.trim_start_matches("Load").trim_start_matches("Store").parse::<u32>().unwrap_or(1);
                let Some(&addr_node) = args.first() else { return self.undef(Type::U32, span) };
                let addr = self.expr(addr_node);
                let a = match addr.vals.first() {
                    Some(&v) => self.convert(v, Type::U32, span),
                    None => self.int(Type::U32, 0, span),
                };
                let two = self.int(Type::U32, 2, span);
                let cell = self.fold_or_emit(BinOp::Shr, a, two, Type::U32, span);
                let ty = if width == 1 { SrcType::Scalar(Type::U32) } else { SrcType::Vector(Type::U32, width) };
                let place = Place::Mem { space, root: Root::Global(g), base: cell, offsets: Offsets::Dense(width), ty };
                if m.starts_with("Load") {
                    self.read_place(&place, span)
                } else if m.starts_with("Store") {
                    if let Some(&v) = args.get(1) {
                        let rv = self.expr(v);
                        self.assign(&place, &rv, span, None);
                    }
                    RV { vals: Vec::new(), ty: SrcType::Void }
                } else {
                    let op = self.cx.d.atomic(m).unwrap_or(AtomicOp::Add);
                    self.resource_atomic(op, place, &args[1..], span)
                }
            }
            (_, "Load") | (_, "mips") | (_, "Load2") | (_, "Load3") | (_, "Load4") => {
                let idx = match args.first() {
                    Some(&a) => self.expr(a),
                    None => self.undef(Type::U32, span),
                };
                let place = self.resource_element(g, kind, elem, writable, &idx, span);
                self.read_place(&place, span)
            }
            (_, m) if m.starts_with("Sample") || m.starts_with("Gather") => {
                let rvs: Vec<RV> = args.iter().map(|&a| self.expr(a)).collect();
                let cells = elem.cells(&self.cx.structs).max(1);
                let t = elem.scalar(&self.cx.structs);
                let flat: Vec<Value> = rvs.iter().skip(1).flat_map(|r| r.vals.iter().copied()).collect();
                let vals = (0..cells)
                    .map(|_| self.emit(Op::Call(lockstep_ir::Callee::Opaque(m.to_string()), flat.clone()), t, span))
                    .collect();
                RV { vals, ty: elem.clone() }
            }
            (_, "IncrementCounter") | (_, "DecrementCounter") | (_, "Append") | (_, "Consume") => {
                // The hidden counter of an append/consume buffer is its own allocation.
                let name = format!("{}.counter", self.cx.module.global(g).name);
                let counter = match self.cx.module.globals.iter().position(|x| x.name == name) {
                    Some(i) => lockstep_ir::GlobalId(i as u32),
                    None => {
                        let sp = self.cx.module.global(g).span;
                        self.cx.add_global(&name, lockstep_ir::GlobalKind::Uav, MemSpace::Device, &SrcType::Scalar(Type::U32), false, sp)
                    }
                };
                let zero = self.int(Type::U32, 0, span);
                let op = if method == "DecrementCounter" || method == "Consume" { AtomicOp::Dec } else { AtomicOp::Inc };
                let old = self.emit(Op::Atomic(op, mem_ref(MemSpace::Device, Root::Global(counter), zero), Vec::new()), Type::U32, span);
                let old_rv = self.scalar(old);
                match method {
                    "Append" => {
                        let place = self.resource_element(g, kind, elem, writable, &old_rv, span);
                        if let Some(&v) = args.first() {
                            let rv = self.expr(v);
                            self.assign(&place, &rv, span, None);
                        }
                        RV { vals: Vec::new(), ty: SrcType::Void }
                    }
                    "Consume" => {
                        let place = self.resource_element(g, kind, elem, writable, &old_rv, span);
                        self.read_place(&place, span)
                    }
                    _ => old_rv,
                }
            }
            (_, "GetDimensions") => {
                // Dimensions are the same for every thread.
                for &a in args {
                    if let Some(p) = self.place(a) {
                        let u = self.undef(Type::U32, span);
                        self.assign(&p, &u, span, None);
                    }
                }
                RV { vals: Vec::new(), ty: SrcType::Void }
            }
            _ => {
                let operands = args.iter().flat_map(|&a| self.expr(a).vals).collect();
                let v = self.unmodelled(call, format!("resource method `{method}`"), operands, span);
                RV { vals: vec![v], ty: SrcType::Scalar(Type::I32) }
            }
        }
    }

    fn resource_atomic(&mut self, op: AtomicOp, place: Place, rest: &[Node<'t>], span: Span) -> RV {
        let Place::Mem { space, root, base, .. } = place else { return self.undef(Type::U32, span) };
        let operand_count = if op == AtomicOp::CompareExchange { 2 } else { 1 };
        let mut operands = Vec::new();
        for &a in rest.iter().take(operand_count) {
            let rv = self.expr(a);
            if let Some(&v) = rv.vals.first() {
                operands.push(self.convert(v, Type::U32, span));
            }
        }
        let old = self.emit(Op::Atomic(op, mem_ref(space, root, base), operands), Type::U32, span);
        if let Some(&out) = rest.get(operand_count) {
            if let Some(p) = self.place(out) {
                let rv = self.scalar(old);
                self.assign(&p, &rv, span, None);
            }
        }
        self.scalar(old)
    }
}

fn pointer_space(ty: &SrcType) -> MemSpace {
    match ty {
        SrcType::Pointer(_, s) => *s,
        _ => MemSpace::Unknown,
    }
}

/// `cg::this_thread_block` → `this_thread_block`; `tiled_partition<32>` → `tiled_partition`.
pub(crate) fn callee_name(text: &str) -> String {
    // `(float4)(a, b, c, d)`, OpenCL's vector literal, parses as a call of `(float4)`.
    let text = text.trim();
    let text = text.strip_prefix('(').and_then(|t| t.strip_suffix(')')).unwrap_or(text);
    let t = text.split('<').next().unwrap_or(text);
    t.rsplit("::").next().unwrap_or(t).trim().to_string()
}

impl<'t> FnLowerer<'_, 't> {
    /// The overload a call means: the definitions with as many parameters as
    /// the call has arguments, ranked by how well each parameter's declared
    /// type fits its argument (the same scalar type, then the same kind of
    /// number); the first of the best. A parameter whose type does not
    /// resolve (a template's `T`) fits anything.
    pub(crate) fn choose_overload(&mut self, defs: &[Node<'t>], args: &[(Option<Place>, RV)]) -> Node<'t> {
        let mut best: Option<(u32, Node<'t>)> = None;
        let arity: Vec<Node<'t>> = defs.iter().copied().filter(|&d| takes_arguments(self.cx, d, args.len()) && !host_only(self.cx, d)).collect();
        for def in arity {
            let score = self.overload_fit(def, args);
            if best.is_none_or(|(s, _)| score > s) {
                best = Some((score, def));
            }
        }
        best.map_or(defs[0], |(_, d)| d)
    }

    fn overload_fit(&mut self, def: Node<'t>, args: &[(Option<Place>, RV)]) -> u32 {
        let Some(list) = def.field(self.cx.fields.declarator).and_then(|d| crate::stmt::find_parameter_list(self.cx, d)) else { return 0 };
        let mut c = list.walk();
        let params: Vec<Node<'t>> = list.named_children(&mut c).filter(|p| self.cx.kind(*p).contains("parameter_declaration")).collect();
        let mut score = 0;
        for (p, (_, rv)) in params.into_iter().zip(args) {
            let declared = p.field(self.cx.fields.ty).and_then(|t| self.cx.resolve_type(t));
            let pointer = p.field(self.cx.fields.declarator).is_some_and(|d| self.cx.kind(d) == "pointer_declarator");
            let (Some(declared), arg) = (declared, &rv.ty) else {
                score += 2;
                continue;
            };
            let arg = match (arg, pointer) {
                (SrcType::Pointer(elem, _), true) => (**elem).clone(),
                (_, true) => continue,
                (t, false) => t.clone(),
            };
            let (want, have) = (declared.scalar(&self.cx.structs), arg.scalar(&self.cx.structs));
            let shape = std::mem::discriminant(&declared) == std::mem::discriminant(&arg);
            score += match (want == have, want.is_float() == have.is_float()) {
                (true, _) => 2,
                (false, true) => 1,
                _ => 0,
            } + shape as u32;
        }
        score
    }
}

/// A function's parameters, and how many of the last have defaults.
fn parameters<'t>(cx: &Ctx<'t>, def: Node<'t>) -> Option<(usize, usize)> {
    let mut d = def.field(cx.fields.declarator)?;
    for _ in 0..32 {
        if cx.kind(d) == "function_declarator" {
            let p = d.field(cx.fields.parameters)?;
            let mut c = p.walk();
            let params: Vec<Node<'t>> = p.named_children(&mut c).filter(|x| cx.kind(*x).contains("parameter_declaration")).collect();
            let defaulted = params.iter().rev().take_while(|x| x.field(cx.fields.default_value).is_some()).count();
            return Some((params.len(), defaulted));
        }
        d = d.field(cx.fields.declarator).or_else(|| d.named_child(0))?;
    }
    None
}

fn param_count(cx: &Ctx, def: Node) -> Option<usize> {
    parameters(cx, def).map(|(n, _)| n)
}

/// Whether a call with `n` arguments can call `def`: one per parameter,
/// or fewer where the rest have defaults.
fn takes_arguments(cx: &Ctx, def: Node, n: usize) -> bool {
    parameters(cx, def).is_some_and(|(count, defaulted)| n <= count && n + defaulted >= count)
}

/// Whether a definition is host code only (`__host__` without `__device__`),
/// which device code cannot call.
fn host_only(cx: &Ctx, def: Node) -> bool {
    let mut c = def.walk();
    let words: Vec<&str> = def.children(&mut c).map(|ch| cx.text(ch)).collect();
    words.contains(&"__host__") && !words.contains(&"__device__")
}

/// Whether evaluating an expression may fault or change state (loads, calls, assignments).
/// Looks at `n` and its named descendants (through named nodes only); more
/// than 10 000 of them count as effects.
fn has_effects(cx: &Ctx, n: Node) -> bool {
    let mut c = n.walk();
    let mut seen = 0;
    loop {
        let x = c.node();
        let named = x.is_named() || x == n;
        if named {
            seen += 1;
            if seen > 10_000 {
                return true;
            }
            match cx.kind(x) {
                "call_expression" | "subscript_expression" | "pointer_expression" | "assignment_expression" | "update_expression" => {
                    return true
                }
                "field_expression" if x.field(cx.fields.operator).is_some_and(|o| cx.kind(o) == "->") => return true,
                _ => {}
            }
        }
        if named && c.goto_first_child() {
            continue;
        }
        while !c.goto_next_sibling() {
            if !c.goto_parent() {
                return false;
            }
        }
    }
}

/// The integer limits of `<climits>` that kernels name.
fn int_constant(name: &str) -> Option<(Type, i64)> {
    Some(match name {
        "INT_MAX" => (Type::I32, i32::MAX as i64),
        "INT_MIN" => (Type::I32, i32::MIN as i64),
        "UINT_MAX" => (Type::U32, u32::MAX as i64),
        _ => return None,
    })
}

/// The float constants of `<cfloat>` and `<cmath>` that kernels name.
fn float_constant(name: &str) -> Option<f64> {
    Some(match name {
        "FLT_MAX" => f32::MAX as f64,
        "FLT_MIN" => f32::MIN_POSITIVE as f64,
        "FLT_EPSILON" => f32::EPSILON as f64,
        "INFINITY" | "HUGE_VALF" => f64::INFINITY,
        "NAN" => f64::NAN,
        _ => return None,
    })
}

/// What `x[i]` selects in a vector or matrix value: its cell count and type.
/// Cells lie in constructor order, so a matrix's `m[i]` is the i-th run of
/// `b` cells for every dialect's `AxB` (a GLSL or Metal column, an HLSL row).
fn element_of(ty: &SrcType) -> Option<(usize, SrcType)> {
    match *ty {
        SrcType::Vector(t, _) => Some((1, SrcType::Scalar(t))),
        SrcType::Matrix(t, _, 1) => Some((1, SrcType::Scalar(t))),
        SrcType::Matrix(t, _, b) => Some((b as usize, SrcType::Vector(t, b))),
        _ => None,
    }
}

/// The bits of an integer type.
/// Whether a name is spelled as macros are (`FLOAT_TYPE`, `GGML_PAD`): upper
/// case, digits and underscores, with a letter.
fn is_macro_name(name: &str) -> bool {
    name.bytes().any(|b| b.is_ascii_uppercase()) && name.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

fn int_width(t: Type) -> Option<u32> {
    match t {
        Type::I8 | Type::U8 => Some(8),
        Type::I16 | Type::U16 => Some(16),
        Type::I32 | Type::U32 => Some(32),
        Type::I64 | Type::U64 => Some(64),
        _ => None,
    }
}

/// The unsigned integer type as wide as a scalar type.
fn unsigned_of(t: Type) -> Type {
    int_type(t.bits(), false).unwrap_or(Type::U64)
}

/// The integer type of a width and signedness.
pub(crate) fn int_type(bits: u32, signed: bool) -> Option<Type> {
    Some(match (bits, signed) {
        (8, true) => Type::I8,
        (8, false) => Type::U8,
        (16, true) => Type::I16,
        (16, false) => Type::U16,
        (32, true) => Type::I32,
        (32, false) => Type::U32,
        (64, true) => Type::I64,
        (64, false) => Type::U64,
        _ => return None,
    })
}
