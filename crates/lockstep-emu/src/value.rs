//! Scalar values as raw `u64` bits, with the IR type deciding the arithmetic.
//!
//! Canonical form: integers are stored zero-extended to 64 bits and masked to
//! their width, bools are 0 or 1, floats are their IEEE bits (f16 in the low
//! 16 bits), pointers are `allocation << 40 | cell offset`.
//!
//! Float operations are computed in f64 and rounded to the target type: for
//! +, -, *, / and sqrt this gives the correctly rounded f32 / f16 result
//! (f64 has more than twice the precision plus two bits).

use half::f16;
use lockstep_ir::{BinOp, CmpOp, MathFn, Type, UnOp};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F16,
    F32,
    F64,
    Ptr,
}

impl Ty {
    pub fn of(t: Type) -> Ty {
        match t {
            Type::Bool => Ty::Bool,
            Type::I8 => Ty::I8,
            Type::U8 => Ty::U8,
            Type::I16 => Ty::I16,
            Type::U16 => Ty::U16,
            Type::I32 => Ty::I32,
            Type::U32 | Type::Void => Ty::U32,
            Type::I64 => Ty::I64,
            Type::U64 => Ty::U64,
            Type::F16 => Ty::F16,
            Type::F32 => Ty::F32,
            Type::F64 => Ty::F64,
            Type::Ptr(_) => Ty::Ptr,
        }
    }
    pub fn is_float(self) -> bool {
        matches!(self, Ty::F16 | Ty::F32 | Ty::F64)
    }
    pub fn is_signed(self) -> bool {
        matches!(self, Ty::I8 | Ty::I16 | Ty::I32 | Ty::I64)
    }
    pub fn width(self) -> u32 {
        match self {
            Ty::Bool => 1,
            Ty::I8 | Ty::U8 => 8,
            Ty::I16 | Ty::U16 | Ty::F16 => 16,
            Ty::I32 | Ty::U32 | Ty::F32 => 32,
            Ty::I64 | Ty::U64 | Ty::F64 | Ty::Ptr => 64,
        }
    }
    pub fn mask(self) -> u64 {
        match self.width() {
            64 => u64::MAX,
            w => (1u64 << w) - 1,
        }
    }
}

pub(crate) const PTR_SHIFT: u32 = 40;
pub(crate) const PTR_OFFSET_MASK: u64 = (1 << PTR_SHIFT) - 1;

/// Allocation ids are stored plus one, so that a zero pointer is null.
pub(crate) fn make_ptr(alloc: u32, offset: i64) -> u64 {
    ((alloc as u64 + 1) << PTR_SHIFT) | (offset as u64 & PTR_OFFSET_MASK)
}

/// Splits a pointer into allocation and (sign-extended, 40-bit) cell offset;
/// the allocation of a null pointer is `u32::MAX`, which names none.
pub(crate) fn split_ptr(p: u64) -> (u32, i64) {
    let off = ((p & PTR_OFFSET_MASK) << (64 - PTR_SHIFT)) as i64 >> (64 - PTR_SHIFT);
    (((p >> PTR_SHIFT) as u32).wrapping_sub(1), off)
}

/// An integer operand as a signed 64-bit number (sign-extended for signed types).
#[inline]
pub(crate) fn as_i64(ty: Ty, bits: u64) -> i64 {
    match ty {
        Ty::I8 | Ty::I16 | Ty::I32 => sext(ty, bits),
        Ty::F16 | Ty::F32 | Ty::F64 => to_f64(ty, bits) as i64,
        _ => bits as i64,
    }
}

#[inline]
pub(crate) fn to_f64(ty: Ty, bits: u64) -> f64 {
    match ty {
        Ty::F16 => f16::from_bits(bits as u16).to_f64(),
        Ty::F32 => f32::from_bits(bits as u32) as f64,
        Ty::F64 => f64::from_bits(bits),
        Ty::I8 | Ty::I16 | Ty::I32 | Ty::I64 => as_i64(ty, bits) as f64,
        _ => bits as f64,
    }
}

/// Rounds or converts an f64 to any type (saturating for integers, NaN → 0).
#[inline]
pub(crate) fn from_f64(ty: Ty, x: f64) -> u64 {
    match ty {
        Ty::F16 => f16::from_f64(x).to_bits() as u64,
        Ty::F32 => (x as f32).to_bits() as u64,
        Ty::F64 => x.to_bits(),
        Ty::Bool => (x != 0.0) as u64,
        Ty::I8 => x as i8 as u8 as u64,
        Ty::U8 => x as u8 as u64,
        Ty::I16 => x as i16 as u16 as u64,
        Ty::U16 => x as u16 as u64,
        Ty::I32 => x as i32 as u32 as u64,
        Ty::U32 => x as u32 as u64,
        Ty::I64 => x as i64 as u64,
        Ty::U64 | Ty::Ptr => x as u64,
    }
}

#[inline]
fn sext(ty: Ty, bits: u64) -> i64 {
    match ty.width() {
        8 => bits as u8 as i8 as i64,
        16 => bits as u16 as i16 as i64,
        32 => bits as u32 as i32 as i64,
        _ => bits as i64,
    }
}

#[inline]
pub(crate) fn unary(op: UnOp, ty: Ty, a: u64) -> u64 {
    match op {
        UnOp::LNot => (a == 0) as u64,
        UnOp::Not => !a & ty.mask(),
        UnOp::Neg if ty.is_float() => from_f64(ty, -to_f64(ty, a)),
        UnOp::Neg => a.wrapping_neg() & ty.mask(),
    }
}

#[inline]
pub(crate) fn binary(op: BinOp, ty: Ty, a: u64, b: u64) -> u64 {
    if ty == Ty::F32 && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div) {
        // Single precision directly: rounding the exact f64 result of these gives the same bits.
        let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
        let r = match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            _ => x / y,
        };
        return r.to_bits() as u64;
    }
    if ty.is_float() && !matches!(op, BinOp::And | BinOp::Or | BinOp::Xor | BinOp::LAnd | BinOp::LOr) {
        let (x, y) = (to_f64(ty, a), to_f64(ty, b));
        let r = match op {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div | BinOp::ExactDiv => x / y,
            BinOp::Rem => x % y,
            // Shifts of floats do not exist in the source languages; keep the left operand.
            _ => x,
        };
        return from_f64(ty, r);
    }
    let mask = ty.mask();
    let w = ty.width().max(1) as u64;
    let r = match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        // Division by zero is undefined on GPUs; D3D returns all ones, so do we.
        // Exactness is a promise to the analyses; the quotient is the same.
        BinOp::Div | BinOp::ExactDiv if b & mask == 0 => u64::MAX,
        BinOp::Rem if b & mask == 0 => u64::MAX,
        BinOp::Div | BinOp::ExactDiv if ty.is_signed() => sext(ty, a).wrapping_div(sext(ty, b)) as u64,
        BinOp::Rem if ty.is_signed() => sext(ty, a).wrapping_rem(sext(ty, b)) as u64,
        BinOp::Div | BinOp::ExactDiv => (a & mask) / (b & mask),
        BinOp::Rem => (a & mask) % (b & mask),
        BinOp::And | BinOp::LAnd => a & b,
        BinOp::Or | BinOp::LOr => a | b,
        BinOp::Xor => a ^ b,
        // Shift amounts are taken modulo the width, as GPUs do.
        BinOp::Shl => a << (b % w),
        BinOp::Shr if ty.is_signed() => (sext(ty, a) >> (b % w)) as u64,
        BinOp::Shr => (a & mask) >> (b % w),
    };
    r & mask
}

#[inline]
pub(crate) fn compare(op: CmpOp, ty: Ty, a: u64, b: u64) -> u64 {
    use std::cmp::Ordering;
    let ord = if ty.is_float() {
        to_f64(ty, a).partial_cmp(&to_f64(ty, b))
    } else if ty.is_signed() {
        Some(sext(ty, a).cmp(&sext(ty, b)))
    } else {
        Some((a & ty.mask()).cmp(&(b & ty.mask())))
    };
    let r = match (op, ord) {
        (CmpOp::Ne, None) => true,
        (_, None) => false,
        (CmpOp::Eq, Some(o)) => o == Ordering::Equal,
        (CmpOp::Ne, Some(o)) => o != Ordering::Equal,
        (CmpOp::Lt, Some(o)) => o == Ordering::Less,
        (CmpOp::Le, Some(o)) => o != Ordering::Greater,
        (CmpOp::Gt, Some(o)) => o == Ordering::Greater,
        (CmpOp::Ge, Some(o)) => o != Ordering::Less,
    };
    r as u64
}

#[inline]
pub(crate) fn convert(from: Ty, to: Ty, a: u64) -> u64 {
    if from == to {
        return a;
    }
    match (from.is_float(), to.is_float()) {
        (true, _) => {
            let x = to_f64(from, a);
            if to == Ty::Bool {
                (x != 0.0) as u64
            } else {
                from_f64(to, x)
            }
        }
        // 64-bit integers round straight to f32: through f64 they would round twice.
        (false, true) if to == Ty::F32 => (if from.is_signed() { as_i64(from, a) as f32 } else { a as f32 }).to_bits() as u64,
        (false, true) => {
            let x = if from.is_signed() { as_i64(from, a) as f64 } else { a as f64 };
            from_f64(to, x)
        }
        (false, false) if to == Ty::Bool => (a != 0) as u64,
        (false, false) => {
            let wide = if from.is_signed() { as_i64(from, a) as u64 } else { a };
            wide & to.mask()
        }
    }
}

/// `arg_ty` is the type of the first argument, `ty` the result type.
/// Integer functions work on the integer bits at `arg_ty`'s width, never through a float.
pub(crate) fn math(f: MathFn, arg_ty: Ty, ty: Ty, args: &[u64; 3]) -> u64 {
    let [a, b, c] = *args;
    match f {
        MathFn::Bitcast => return a & ty.mask(),
        // Whatever the operand's type, its low 16 bits are the half.
        MathFn::F16ToF32 => {
            let h = f16::from_bits(a as u16);
            return if ty == Ty::F32 { h.to_f32().to_bits() as u64 } else { from_f64(ty, h.to_f64()) };
        }
        _ => {}
    }
    if arg_ty.is_float() {
        let (x, y, z) = (to_f64(arg_ty, a), to_f64(arg_ty, b), to_f64(arg_ty, c));
        let r = match f {
            MathFn::Min => x.min(y),
            MathFn::Max => x.max(y),
            MathFn::Abs => x.abs(),
            MathFn::Clamp => x.max(y).min(z),
            // NaN saturates to 0 on both vendors' hardware.
            MathFn::Saturate if x.is_nan() => 0.0,
            MathFn::Saturate => x.clamp(0.0, 1.0),
            MathFn::Reciprocal => 1.0 / x,
            MathFn::Sqrt => x.sqrt(),
            MathFn::Rsqrt => 1.0 / x.sqrt(),
            MathFn::Exp => x.exp(),
            MathFn::Exp2 => x.exp2(),
            MathFn::Log => x.ln(),
            MathFn::Log2 => x.log2(),
            MathFn::Pow => x.powf(y),
            MathFn::Sin => x.sin(),
            MathFn::Cos => x.cos(),
            MathFn::Tan => x.tan(),
            MathFn::Tanh => x.tanh(),
            MathFn::Sinh => x.sinh(),
            MathFn::Cosh => x.cosh(),
            MathFn::Asin => x.asin(),
            MathFn::Acos => x.acos(),
            MathFn::Atan => x.atan(),
            MathFn::Atan2 => x.atan2(y),
            MathFn::Floor => x.floor(),
            MathFn::Ceil => x.ceil(),
            MathFn::Round => x.round_ties_even(),
            MathFn::RoundHalfAway => x.round(),
            MathFn::Trunc => x.trunc(),
            MathFn::Frac => x - x.floor(),
            MathFn::Expm1 => x.exp_m1(),
            MathFn::Log1p => x.ln_1p(),
            MathFn::Erf => libm::erf(x),
            // A fused f32 multiply-add rounds once; going through f64 would round twice.
            MathFn::Fma if arg_ty == Ty::F32 && ty == Ty::F32 => {
                return (x as f32).mul_add(y as f32, z as f32).to_bits() as u64;
            }
            MathFn::Fma => x.mul_add(y, z),
            MathFn::Lerp => x + z * (y - x),
            MathFn::Sign => {
                if x > 0.0 {
                    1.0
                } else if x < 0.0 {
                    -1.0
                } else {
                    0.0
                }
            }
            MathFn::Step => (y >= x) as u8 as f64,
            // f64 → f16 rounds once, to nearest even, with subnormals, inf and NaN kept.
            MathFn::F32ToF16 => return f16::from_f64(x).to_bits() as u64 & ty.mask(),
            MathFn::PopCount
            | MathFn::FirstBitHigh
            | MathFn::FirstBitLow
            | MathFn::FindLowestSet
            | MathFn::CountLeadingZeros
            | MathFn::ReverseBits
            | MathFn::MulHi
            | MathFn::Mul24
            | MathFn::SumAbsDiff
            | MathFn::Bitcast
            | MathFn::F16ToF32 => {
                return math(f, Ty::U32, ty, args);
            }
        };
        return from_f64(ty, r);
    }
    let signed = arg_ty.is_signed();
    let m = arg_ty.mask();
    let w = arg_ty.width();
    let lt = |p: u64, q: u64| if signed { sext(arg_ty, p) < sext(arg_ty, q) } else { (p & m) < (q & m) };
    let r = match f {
        MathFn::Min => {
            if lt(b, a) {
                b
            } else {
                a
            }
        }
        MathFn::Max => {
            if lt(a, b) {
                b
            } else {
                a
            }
        }
        MathFn::Clamp => {
            let lo = if lt(a, b) { b } else { a };
            if lt(c, lo) {
                c
            } else {
                lo
            }
        }
        MathFn::Abs if signed => sext(arg_ty, a).unsigned_abs(),
        MathFn::Abs => a,
        MathFn::Sign => {
            let s = if signed { sext(arg_ty, a).signum() } else { (a & m != 0) as i64 };
            return if ty.is_float() { from_f64(ty, s as f64) } else { s as u64 & ty.mask() };
        }
        MathFn::Fma => a.wrapping_mul(b).wrapping_add(c),
        MathFn::PopCount => (a & m).count_ones() as u64,
        // Both return all ones when no bit is found, as HLSL does.
        MathFn::FirstBitLow if a & m == 0 => u64::MAX,
        MathFn::FirstBitLow => (a & m).trailing_zeros() as u64,
        MathFn::FirstBitHigh => {
            // For negative signed values HLSL looks for the first 0 bit instead.
            let v = if signed && sext(arg_ty, a) < 0 { !a & m } else { a & m };
            if v == 0 {
                u64::MAX
            } else {
                (63 - v.leading_zeros()) as u64
            }
        }
        MathFn::FindLowestSet if a & m == 0 => 0,
        MathFn::FindLowestSet => (a & m).trailing_zeros() as u64 + 1,
        MathFn::CountLeadingZeros => ((a & m).leading_zeros() - (64 - w)) as u64,
        MathFn::ReverseBits => (a & m).reverse_bits() >> (64 - w),
        MathFn::MulHi if signed => ((sext(arg_ty, a) as i128 * sext(arg_ty, b) as i128) >> w) as u64,
        MathFn::MulHi => (((a & m) as u128 * (b & m) as u128) >> w) as u64,
        MathFn::Mul24 => {
            let low24 = |v: u64| if signed { ((v as i64) << 40 >> 40) as u64 } else { v & 0xff_ffff };
            low24(a).wrapping_mul(low24(b))
        }
        MathFn::SumAbsDiff if signed => sext(arg_ty, a).abs_diff(sext(arg_ty, b)).wrapping_add(c),
        MathFn::SumAbsDiff => (a & m).abs_diff(b & m).wrapping_add(c),
        MathFn::Saturate => {
            return math(f, Ty::F32, ty, &[from_f64(Ty::F32, to_f64(arg_ty, a)), 0, 0]);
        }
        MathFn::Step => (!lt(b, a)) as u64,
        // Transcendental functions of integers: compute on the float value.
        _ => {
            let x = [convert(arg_ty, Ty::F64, a), convert(arg_ty, Ty::F64, b), convert(arg_ty, Ty::F64, c)];
            return math(f, Ty::F64, ty, &x);
        }
    };
    if ty.is_float() {
        convert(arg_ty, ty, r & m)
    } else {
        r & ty.mask()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(x: f32) -> u64 {
        x.to_bits() as u64
    }

    #[test]
    fn thirty_two_bit_integers_wrap_and_divide_by_sign() {
        assert_eq!(binary(BinOp::Add, Ty::U32, 0xffff_ffff, 2), 1);
        assert_eq!(binary(BinOp::Mul, Ty::I32, 0x8000_0000, 2), 0);
        assert_eq!(binary(BinOp::Div, Ty::I32, (-7i32) as u32 as u64, 2), (-3i32) as u32 as u64);
        assert_eq!(binary(BinOp::Div, Ty::U32, (-7i32) as u32 as u64, 2), 0x7fff_fffc);
        assert_eq!(binary(BinOp::Shr, Ty::I32, 0x8000_0000, 31), 0xffff_ffff);
        assert_eq!(binary(BinOp::Shl, Ty::U32, 1, 33), 2);
        assert_eq!(binary(BinOp::Div, Ty::U32, 5, 0), 0xffff_ffff);
        assert_eq!(compare(CmpOp::Lt, Ty::I32, 0xffff_ffff, 0), 1);
        assert_eq!(compare(CmpOp::Lt, Ty::U32, 0xffff_ffff, 0), 0);
    }

    #[test]
    fn narrow_integers_truncate_and_extend_by_sign() {
        assert_eq!(convert(Ty::I32, Ty::U8, 256 + 7), 7);
        assert_eq!(convert(Ty::I8, Ty::I32, 0xff), 0xffff_ffff);
        assert_eq!(convert(Ty::U8, Ty::I32, 0xff), 0xff);
        assert_eq!(convert(Ty::I16, Ty::F32, 0x8000), f(-32768.0));
        assert_eq!(convert(Ty::F32, Ty::I8, f(-2.0)), 0xfe);
        assert_eq!(compare(CmpOp::Lt, Ty::I8, 0x80, 0), 1);
        assert_eq!(binary(BinOp::Add, Ty::U8, 0xff, 1), 0);
    }

    #[test]
    fn floats_round_to_their_type() {
        assert_eq!(binary(BinOp::Add, Ty::F32, f(0.1), f(0.2)), f(0.1f32 + 0.2f32));
        let h = |x: f32| f16::from_f32(x).to_bits() as u64;
        assert_eq!(binary(BinOp::Add, Ty::F16, h(1.0), h(0.0004)), h(1.0));
        assert_eq!(compare(CmpOp::Ne, Ty::F32, f(f32::NAN), f(f32::NAN)), 1);
        assert_eq!(convert(Ty::F32, Ty::I32, f(-2.7)), (-2i32) as u32 as u64);
        assert_eq!(convert(Ty::I32, Ty::F32, (-3i32) as u32 as u64), f(-3.0));
        assert_eq!(convert(Ty::I32, Ty::I64, (-1i32) as u32 as u64), u64::MAX);
        assert_eq!(convert(Ty::F32, Ty::U32, f(-1.0)), 0);
    }

    #[test]
    fn math_functions_follow_signedness() {
        assert_eq!(math(MathFn::Min, Ty::I32, Ty::I32, &[(-1i32) as u32 as u64, 3, 0]), 0xffff_ffff);
        assert_eq!(math(MathFn::Min, Ty::U32, Ty::U32, &[(-1i32) as u32 as u64, 3, 0]), 3);
        assert_eq!(math(MathFn::FirstBitHigh, Ty::U32, Ty::U32, &[0x10, 0, 0]), 4);
        assert_eq!(math(MathFn::ReverseBits, Ty::U32, Ty::U32, &[1, 0, 0]), 0x8000_0000);
        assert_eq!(math(MathFn::Clamp, Ty::F32, Ty::F32, &[f(5.0), f(0.0), f(1.0)]), f(1.0));
        assert_eq!(split_ptr(make_ptr(7, -3)), (7, -3));
        assert_eq!(split_ptr(0), (u32::MAX, 0));
    }
}
