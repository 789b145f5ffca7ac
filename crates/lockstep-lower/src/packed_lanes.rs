//! Operations on the lanes packed in one 32-bit integer — four bytes or two
//! halves — and byte permutes (CUDA's `__vsub4`, `__vcmpne4`, `__byte_perm`),
//! lowered to shifts, masks and integer arithmetic so that the analyses
//! and `lockstep run` see the exact value.

use crate::packed_dot::Emit;
use lockstep_ir::{BinOp, CmpOp, Const, MathFn, Op, Type, Value};
use lockstep_source::Span;

/// What a lane operation computes in each lane.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneOp {
    /// Wrapping within the lane.
    Add,
    Sub,
    /// Clamped to the lane's range.
    AddSaturated,
    SubSaturated,
    Max,
    Min,
    AbsDiff,
    /// All ones in the lane where the comparison holds, else zero.
    Compare(CmpOp),
}

/// One operation on packed lanes: how many lanes a word holds (2 or 4),
/// whether their values are signed, and what it computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaneWord {
    pub lanes: u32,
    pub signed: bool,
    pub op: LaneOp,
}

/// CUDA's SIMD video intrinsics by name: `__v<op><2|4>`, the sign in the
/// name where it matters (`__vmaxs4`, `__vcmpgeu2`, `__vsubss4`).
pub fn cuda_lane_word(name: &str) -> Option<LaneWord> {
    let rest = name.strip_prefix("__v")?;
    let lanes = match rest.as_bytes().last()? {
        b'2' => 2,
        b'4' => 4,
        _ => return None,
    };
    let stem = &rest[..rest.len() - 1];
    let (op, signed) = match stem {
        "add" => (LaneOp::Add, false),
        "sub" => (LaneOp::Sub, false),
        "addss" => (LaneOp::AddSaturated, true),
        "addus" => (LaneOp::AddSaturated, false),
        "subss" => (LaneOp::SubSaturated, true),
        "subus" => (LaneOp::SubSaturated, false),
        "maxs" => (LaneOp::Max, true),
        "maxu" => (LaneOp::Max, false),
        "mins" => (LaneOp::Min, true),
        "minu" => (LaneOp::Min, false),
        "absdiffs" => (LaneOp::AbsDiff, true),
        "absdiffu" => (LaneOp::AbsDiff, false),
        "cmpeq" => (LaneOp::Compare(CmpOp::Eq), false),
        "cmpne" => (LaneOp::Compare(CmpOp::Ne), false),
        _ => {
            let compare = stem.strip_prefix("cmp")?;
            let (relation, sign) = compare.split_at(compare.len().checked_sub(1)?);
            let signed = match sign {
                "s" => true,
                "u" => false,
                _ => return None,
            };
            let cmp = match relation {
                "ge" => CmpOp::Ge,
                "gt" => CmpOp::Gt,
                "le" => CmpOp::Le,
                "lt" => CmpOp::Lt,
                _ => return None,
            };
            (LaneOp::Compare(cmp), signed)
        }
    };
    Some(LaneWord { lanes, signed, op })
}

fn int(e: &mut impl Emit, ty: Type, v: i64, span: Span) -> Value {
    e.emit_op(Op::Const(Const::Int(v as u64)), ty, span)
}

/// Lane `k` of `word` (a `u32`), widened to an `i64` with its sign or not.
fn lane(e: &mut impl Emit, word: Value, k: u32, bits: u32, signed: bool, span: Span) -> Value {
    let shift = int(e, Type::U32, i64::from(k * bits), span);
    let shifted = e.emit_op(Op::Binary(BinOp::Shr, word, shift), Type::U32, span);
    let narrow = crate::expr::int_type(bits, signed).unwrap_or(Type::U32);
    let low = e.emit_op(Op::Convert(shifted), narrow, span);
    e.emit_op(Op::Convert(low), Type::I64, span)
}

/// `w.op(a, b)` lane by lane; the result is a `u32`.
pub(crate) fn lane_word(e: &mut impl Emit, w: LaneWord, a: Value, b: Value, span: Span) -> Value {
    let bits = 32 / w.lanes;
    let (a, b) = (e.emit_op(Op::Convert(a), Type::U32, span), e.emit_op(Op::Convert(b), Type::U32, span));
    let (lo, hi) = if w.signed { (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1) } else { (0, (1i64 << bits) - 1) };
    let mut word = int(e, Type::U32, 0, span);
    for k in 0..w.lanes {
        let (x, y) = (lane(e, a, k, bits, w.signed, span), lane(e, b, k, bits, w.signed, span));
        let value = match w.op {
            LaneOp::Add | LaneOp::AddSaturated => e.emit_op(Op::Binary(BinOp::Add, x, y), Type::I64, span),
            LaneOp::Sub | LaneOp::SubSaturated => e.emit_op(Op::Binary(BinOp::Sub, x, y), Type::I64, span),
            LaneOp::Max => e.emit_op(Op::Math(MathFn::Max, vec![x, y]), Type::I64, span),
            LaneOp::Min => e.emit_op(Op::Math(MathFn::Min, vec![x, y]), Type::I64, span),
            LaneOp::AbsDiff => {
                let d = e.emit_op(Op::Binary(BinOp::Sub, x, y), Type::I64, span);
                e.emit_op(Op::Math(MathFn::Abs, vec![d]), Type::I64, span)
            }
            LaneOp::Compare(cmp) => {
                let holds = e.emit_op(Op::Cmp(cmp, x, y), Type::Bool, span);
                let ones = int(e, Type::I64, (1i64 << bits) - 1, span);
                let zero = int(e, Type::I64, 0, span);
                e.emit_op(Op::Select(holds, ones, zero), Type::I64, span)
            }
        };
        let value = if matches!(w.op, LaneOp::AddSaturated | LaneOp::SubSaturated) {
            let (lo, hi) = (int(e, Type::I64, lo, span), int(e, Type::I64, hi, span));
            e.emit_op(Op::Math(MathFn::Clamp, vec![value, lo, hi]), Type::I64, span)
        } else {
            value
        };
        // The lane's low bits, in place.
        let mask = int(e, Type::I64, (1i64 << bits) - 1, span);
        let masked = e.emit_op(Op::Binary(BinOp::And, value, mask), Type::I64, span);
        let masked = e.emit_op(Op::Convert(masked), Type::U32, span);
        let shift = int(e, Type::U32, i64::from(k * bits), span);
        let placed = e.emit_op(Op::Binary(BinOp::Shl, masked, shift), Type::U32, span);
        word = e.emit_op(Op::Binary(BinOp::Or, word, placed), Type::U32, span);
    }
    word
}

/// `__byte_perm(x, y, s)`: byte `k` of the result is byte `(s >> 4k) & 7` of
/// the eight bytes `x` (bytes 0–3) and `y` (bytes 4–7) make; a `u32`.
pub(crate) fn byte_permute(e: &mut impl Emit, x: Value, y: Value, selector: Value, span: Span) -> Value {
    let [x, y] = [x, y].map(|v| {
        let v = e.emit_op(Op::Convert(v), Type::U32, span);
        e.emit_op(Op::Convert(v), Type::U64, span)
    });
    let s = e.emit_op(Op::Convert(selector), Type::U32, span);
    let thirty_two = int(e, Type::U64, 32, span);
    let high = e.emit_op(Op::Binary(BinOp::Shl, y, thirty_two), Type::U64, span);
    let bytes = e.emit_op(Op::Binary(BinOp::Or, high, x), Type::U64, span);
    let mut word = int(e, Type::U32, 0, span);
    for k in 0..4 {
        let at = int(e, Type::U32, 4 * k, span);
        let nibble = e.emit_op(Op::Binary(BinOp::Shr, s, at), Type::U32, span);
        let seven = int(e, Type::U32, 7, span);
        let which = e.emit_op(Op::Binary(BinOp::And, nibble, seven), Type::U32, span);
        let eight = int(e, Type::U32, 8, span);
        let bit = e.emit_op(Op::Binary(BinOp::Mul, which, eight), Type::U32, span);
        let bit = e.emit_op(Op::Convert(bit), Type::U64, span);
        let shifted = e.emit_op(Op::Binary(BinOp::Shr, bytes, bit), Type::U64, span);
        let byte = e.emit_op(Op::Convert(shifted), Type::U8, span);
        let byte = e.emit_op(Op::Convert(byte), Type::U32, span);
        let place = int(e, Type::U32, 8 * k, span);
        let placed = e.emit_op(Op::Binary(BinOp::Shl, byte, place), Type::U32, span);
        word = e.emit_op(Op::Binary(BinOp::Or, word, placed), Type::U32, span);
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_give_lanes_sign_and_operation() {
        assert_eq!(cuda_lane_word("__vsub4"), Some(LaneWord { lanes: 4, signed: false, op: LaneOp::Sub }));
        assert_eq!(cuda_lane_word("__vcmpne2"), Some(LaneWord { lanes: 2, signed: false, op: LaneOp::Compare(CmpOp::Ne) }));
        assert_eq!(cuda_lane_word("__vcmpges4"), Some(LaneWord { lanes: 4, signed: true, op: LaneOp::Compare(CmpOp::Ge) }));
        assert_eq!(cuda_lane_word("__vsubss4"), Some(LaneWord { lanes: 4, signed: true, op: LaneOp::SubSaturated }));
        assert_eq!(cuda_lane_word("__vabsdiffu2"), Some(LaneWord { lanes: 2, signed: false, op: LaneOp::AbsDiff }));
        assert_eq!(cuda_lane_word("__vfoo4"), None);
        assert_eq!(cuda_lane_word("__vsub3"), None);
        assert_eq!(cuda_lane_word("__vcmpge4"), None);
    }
}
