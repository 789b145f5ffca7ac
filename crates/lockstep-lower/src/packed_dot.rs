//! Dot products of the four bytes packed in two 32-bit integers, lowered
//! the same way by every front end (CUDA `__dp4a`, GLSL `dotPacked4x8EXT`,
//! WGSL `dot4I8Packed`).

use crate::dialect::Accumulate;
use lockstep_ir::{BinOp, Const, MathFn, Op, Type, Value};
use lockstep_source::Span;

/// What a front end's lowering offers to emit instructions.
pub(crate) trait Emit {
    fn emit_op(&mut self, op: Op, ty: Type, span: Span) -> Value;
}

fn int(e: &mut impl Emit, ty: Type, v: i64, span: Span) -> Value {
    e.emit_op(Op::Const(Const::Int(v as u64)), ty, span)
}

/// `a · b` over their bytes (signed or not), plus `acc` as it accumulates.
/// Computed in 64 bits, so that a saturating sum can be clamped; the
/// operands are 32-bit integers, the result an `i32` or a `u32`.
pub(crate) fn packed_dot(e: &mut impl Emit, a: Value, b: Value, signed: bool, acc: Option<(Value, Accumulate)>, span: Span) -> Value {
    let (byte, wide, result) = if signed { (Type::I8, Type::I64, Type::I32) } else { (Type::U8, Type::U64, Type::U32) };
    let mut sum = int(e, wide, 0, span);
    for k in 0..4 {
        let parts = [a, b].map(|x| {
            let x = e.emit_op(Op::Convert(x), Type::U32, span);
            let shift = int(e, Type::U32, 8 * k, span);
            let shifted = e.emit_op(Op::Binary(BinOp::Shr, x, shift), Type::U32, span);
            // The conversion keeps the low byte; widening it extends its sign when signed.
            let low = e.emit_op(Op::Convert(shifted), byte, span);
            e.emit_op(Op::Convert(low), wide, span)
        });
        let product = e.emit_op(Op::Binary(BinOp::Mul, parts[0], parts[1]), wide, span);
        sum = e.emit_op(Op::Binary(BinOp::Add, sum, product), wide, span);
    }
    match acc {
        None | Some((_, Accumulate::No)) => e.emit_op(Op::Convert(sum), result, span),
        Some((c, Accumulate::Wrapping)) => {
            let c = e.emit_op(Op::Convert(c), result, span);
            let sum = e.emit_op(Op::Convert(sum), result, span);
            e.emit_op(Op::Binary(BinOp::Add, sum, c), result, span)
        }
        Some((c, Accumulate::Saturating)) => {
            let c = e.emit_op(Op::Convert(c), wide, span);
            let total = e.emit_op(Op::Binary(BinOp::Add, sum, c), wide, span);
            let (lo, hi) = if signed { (i64::from(i32::MIN), i64::from(i32::MAX)) } else { (0, i64::from(u32::MAX)) };
            let (lo, hi) = (int(e, wide, lo, span), int(e, wide, hi, span));
            let clamped = e.emit_op(Op::Math(MathFn::Clamp, vec![total, lo, hi]), wide, span);
            e.emit_op(Op::Convert(clamped), result, span)
        }
    }
}
