//! Every intrinsic of every dialect table, compiled from source and run by the
//! emulator, against a Rust reference over edge-case inputs. An entry without
//! a reference fails the test.

use lockstep_emu::{run, BufferInit, Launch, RunConfig, Source};
use lockstep_ir::Type;
use lockstep_lower::dialect::{Dialect, CUDA, GLSL, HLSL, METAL, OPENCL};
use lockstep_lower::{compile, Lang, Options};
use lockstep_source::SourceDb;

/// What the emulator must produce for one input.
#[derive(Debug)]
enum Want {
    /// These exact bits (NaN results match any NaN: payloads are the hardware's choice).
    Bits(u64),
    /// A float within a few units in the last place (library functions differ there).
    Near(f32),
}

/// A reference: argument and result types, a call template and the expected value.
struct Ref {
    args: &'static [Type],
    result: Type,
    /// Statement computing `result[i]`; `CALL` stands for `name(a0[i], a1[i], …)`.
    stmt: &'static str,
    /// Float inputs without overflow-prone extremes, for approximate functions.
    tame: bool,
    eval: fn(usize, &[u64]) -> Want,
}

const PLAIN: &str = "result[i] = CALL;";

fn r(args: &'static [Type], result: Type, eval: fn(usize, &[u64]) -> Want) -> Ref {
    Ref { args, result, stmt: PLAIN, tame: false, eval }
}
fn near(args: &'static [Type], eval: fn(usize, &[u64]) -> Want) -> Ref {
    Ref { args, result: Type::F32, stmt: PLAIN, tame: true, eval }
}

fn f(x: u64) -> f32 {
    f32::from_bits(x as u32)
}
fn fb(x: f32) -> Want {
    Want::Bits(x.to_bits() as u64)
}
fn ub(x: u32) -> Want {
    Want::Bits(x as u64)
}
fn ib(x: i32) -> Want {
    Want::Bits(x as u32 as u64)
}

/// f32 → the nearest bfloat16 (ties to the even one), as an f32: of the
/// two bfloat16 values around `x`, the closer one (IEEE rounding: overflow
/// goes to infinity).
fn f32_to_bf16(x: f32) -> f32 {
    if x.is_nan() || x.is_infinite() {
        return x;
    }
    let down = f32::from_bits(x.to_bits() & 0xffff_0000);
    let up = f32::from_bits((x.to_bits() & 0xffff_0000) + 0x1_0000);
    // Past the largest finite value, `up` is infinity: it counts as 2^128.
    let up_value = if up.is_infinite() { 2f64.powi(128).copysign(x as f64) } else { up as f64 };
    let (d, u) = ((x as f64 - down as f64).abs(), (up_value - x as f64).abs());
    if d < u || (d == u && (down.to_bits() >> 16) & 1 == 0) {
        down
    } else {
        up
    }
}

/// f32 → f16 bits, round to nearest even, written from the IEEE formats.
fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    // The value is man' * 2^(e - 23) with the implicit bit; half steps are 2^-24 at the smallest.
    let (full, e) = if exp == 0 { (man, -126) } else { (man | 0x80_0000, exp - 127) };
    if full == 0 {
        return sign;
    }
    // Shift so that the unit is the half's last place: normal halves have 10 fraction bits,
    // subnormals a fixed unit of 2^-24.
    let unit_exp = if e < -14 { -24 } else { e - 10 };
    let shift = (e - 23 - unit_exp) as i64; // negative: drop bits
    let rounded: u64 = if shift >= 0 {
        (full as u64) << shift
    } else {
        let drop = (-shift) as u32;
        if drop > 40 {
            0
        } else {
            let q = (full as u64) >> drop;
            let rem = (full as u64) & ((1u64 << drop) - 1);
            let halfway = 1u64 << (drop - 1);
            if rem > halfway || (rem == halfway && q & 1 == 1) {
                q + 1
            } else {
                q
            }
        }
    };
    if unit_exp == -24 {
        // Subnormal (may round up into the smallest normal, which the encoding handles).
        return sign | rounded as u16;
    }
    let mut he = e + 15;
    let mut m = rounded;
    if m >= 0x800 {
        m >>= 1;
        he += 1;
    }
    if he >= 31 {
        return sign | 0x7c00;
    }
    sign | ((he as u16) << 10) | (m as u16 & 0x3ff)
}

/// f16 bits → f32, exact.
fn f16_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0f32 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let man = (h & 0x3ff) as f32;
    match exp {
        0 => sign * man * 2f32.powi(-24),
        31 if man == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        _ => sign * (1.0 + man / 1024.0) * 2f32.powi(exp - 15),
    }
}

/// The reference for a dialect's intrinsic: OpenCL spells several of them
/// differently, and its `sign` and `mad` are float functions.
fn reference_in(d: &Dialect, name: &str) -> Option<Ref> {
    use Type::*;
    if std::ptr::eq(d, &GLSL) {
        return glsl_reference(name);
    }
    if std::ptr::eq(d, &METAL) {
        return metal_reference(name);
    }
    if std::ptr::eq(d, &CUDA) && name == "round" {
        return reference("roundf");
    }
    if !std::ptr::eq(d, &OPENCL) {
        return reference(name);
    }
    Some(match name {
        "sign" => r(&[F32], F32, |_, a| {
            let x = f(a[0]);
            fb(if x > 0.0 { 1.0 } else if x < 0.0 { -1.0 } else { 0.0 })
        }),
        "mad" => near(&[F32, F32, F32], |_, a| Want::Near(f(a[0]) * f(a[1]) + f(a[2]))),
        "popcount" => reference("countbits")?,
        "clz" => reference("__clz")?,
        "mul_hi" => reference("__umulhi")?,
        "mul24" => reference("__mul24")?,
        "mad24" => r(&[I32, I32, I32], I32, |_, a| ib(((a[0] as i32) << 8 >> 8).wrapping_mul((a[1] as i32) << 8 >> 8).wrapping_add(a[2] as i32))),
        // A scalar condition picks the second operand when it is not zero.
        "select" => r(&[F32, F32, I32], F32, |_, a| Want::Bits(if a[2] as u32 != 0 { a[1] } else { a[0] } & 0xffff_ffff)),
        "round" => reference("roundf")?,
        "rint" => reference("round")?,
        "mix" => reference("lerp")?,
        "powr" => reference("pow")?,
        "as_float" => reference("asfloat")?,
        "as_int" => reference("asint")?,
        "as_uint" => reference("asuint")?,
        native if native.starts_with("native_") => reference(&native["native_".len()..])?,
        other => reference(other)?,
    })
}

/// Metal's spellings: its `round` rounds halfway cases away from zero and
/// `rint` to the even neighbour, as in C.
fn metal_reference(name: &str) -> Option<Ref> {
    use Type::*;
    Some(match name {
        "sign" => glsl_reference("sign")?,
        "round" => reference("roundf")?,
        "rint" => reference("round")?,
        "fract" => reference("frac")?,
        "mix" => reference("lerp")?,
        "powr" => reference("pow")?,
        "popcount" => reference("__popc")?,
        "clz" => reference("__clz")?,
        "mulhi" => reference("__mulhi")?,
        "reverse_bits" => reference("reversebits")?,
        "select" => r(&[F32, F32, I32], F32, |_, a| Want::Bits(if a[2] as u32 != 0 { a[1] } else { a[0] } & 0xffff_ffff)),
        "simd_active_threads_mask" => Ref { stmt: "if (i % 2 == 0) result[i] = simd_active_threads_mask();", ..reference("__activemask")? },
        other => reference(other)?,
    })
}

/// GLSL's spellings; its `sign` keeps the operand's type and its bit
/// queries return `int`, -1 where no bit is found.
fn glsl_reference(name: &str) -> Option<Ref> {
    use Type::*;
    Some(match name {
        "sign" => r(&[F32], F32, |_, a| {
            let x = f(a[0]);
            fb(if x > 0.0 { 1.0 } else if x < 0.0 { -1.0 } else { 0.0 })
        }),
        "inversesqrt" => reference("rsqrt")?,
        "roundEven" => reference("round")?,
        "fract" => reference("frac")?,
        "mix" => reference("lerp")?,
        "bitCount" => r(&[U32], I32, |_, a| ib((a[0] as u32).count_ones() as i32)),
        "findLSB" => r(&[U32], I32, |_, a| ib(if a[0] as u32 == 0 { -1 } else { (a[0] as u32).trailing_zeros() as i32 })),
        "findMSB" => r(&[I32], I32, |_, a| {
            let x = a[0] as i32;
            let v = if x < 0 { !x as u32 } else { x as u32 };
            ib(if v == 0 { -1 } else { 31 - v.leading_zeros() as i32 })
        }),
        "bitfieldReverse" => reference("reversebits")?,
        "floatBitsToUint" => reference("asuint")?,
        "floatBitsToInt" => reference("asint")?,
        "uintBitsToFloat" => reference("asfloat")?,
        "intBitsToFloat" => reference("__int_as_float")?,
        other => reference(other)?,
    })
}

fn reference(name: &str) -> Option<Ref> {
    use Type::*;
    Some(match name {
        "min" => r(&[I32, I32], I32, |_, a| ib((a[0] as i32).min(a[1] as i32))),
        "max" => r(&[I32, I32], I32, |_, a| ib((a[0] as i32).max(a[1] as i32))),
        "umin" => r(&[U32, U32], U32, |_, a| ub((a[0] as u32).min(a[1] as u32))),
        "umax" => r(&[U32, U32], U32, |_, a| ub((a[0] as u32).max(a[1] as u32))),
        "llmin" => r(&[I64, I64], I64, |_, a| Want::Bits((a[0] as i64).min(a[1] as i64) as u64)),
        "llmax" => r(&[I64, I64], I64, |_, a| Want::Bits((a[0] as i64).max(a[1] as i64) as u64)),
        "ullmin" => r(&[U64, U64], U64, |_, a| Want::Bits(a[0].min(a[1]))),
        "ullmax" => r(&[U64, U64], U64, |_, a| Want::Bits(a[0].max(a[1]))),
        "abs" => r(&[I32], I32, |_, a| ib((a[0] as i32).wrapping_abs())),
        "clamp" => r(&[I32, I32, I32], I32, |_, a| ib((a[0] as i32).max(a[1] as i32).min(a[2] as i32))),
        "sign" => r(&[F32], I32, |_, a| ib(if f(a[0]) > 0.0 { 1 } else if f(a[0]) < 0.0 { -1 } else { 0 })),
        "mad" => r(&[I32, I32, I32], I32, |_, a| ib((a[0] as i32).wrapping_mul(a[1] as i32).wrapping_add(a[2] as i32))),
        "fma" | "fmaf" | "__fmaf_rn" => r(&[F32, F32, F32], F32, |_, a| fb(f(a[0]).mul_add(f(a[1]), f(a[2])))),
        "saturate" | "__saturatef" => r(&[F32], F32, |_, a| fb(if f(a[0]).is_nan() { 0.0 } else { f(a[0]).clamp(0.0, 1.0) })),
        "rcp" | "__frcp_rn" => r(&[F32], F32, |_, a| fb(1.0 / f(a[0]))),
        "sqrt" | "sqrtf" | "__fsqrt_rn" => r(&[F32], F32, |_, a| fb(f(a[0]).sqrt())),
        "rsqrt" | "rsqrtf" => near(&[F32], |_, a| Want::Near(1.0 / f(a[0]).sqrt())),
        "exp" | "expf" | "__expf" => near(&[F32], |_, a| Want::Near(f(a[0]).exp())),
        "exp2" | "exp2f" => near(&[F32], |_, a| Want::Near(f(a[0]).exp2())),
        "log" | "logf" | "__logf" => near(&[F32], |_, a| Want::Near(f(a[0]).ln())),
        "log2" | "log2f" => near(&[F32], |_, a| Want::Near(f(a[0]).log2())),
        "pow" | "powf" => near(&[F32, F32], |_, a| Want::Near(f(a[0]).powf(f(a[1])))),
        "sin" | "sinf" | "__sinf" => near(&[F32], |_, a| Want::Near(f(a[0]).sin())),
        "cos" | "cosf" | "__cosf" => near(&[F32], |_, a| Want::Near(f(a[0]).cos())),
        "tan" | "tanf" => near(&[F32], |_, a| Want::Near(f(a[0]).tan())),
        "tanh" | "tanhf" => near(&[F32], |_, a| Want::Near(f(a[0]).tanh())),
        "sinh" | "sinhf" => near(&[F32], |_, a| Want::Near(f(a[0]).sinh())),
        "cosh" | "coshf" => near(&[F32], |_, a| Want::Near(f(a[0]).cosh())),
        "asin" | "asinf" => near(&[F32], |_, a| Want::Near(f(a[0]).asin())),
        "acos" | "acosf" => near(&[F32], |_, a| Want::Near(f(a[0]).acos())),
        "atan" | "atanf" => near(&[F32], |_, a| Want::Near(f(a[0]).atan())),
        "atan2" | "atan2f" => near(&[F32, F32], |_, a| Want::Near(f(a[0]).atan2(f(a[1])))),
        "frac" => near(&[F32], |_, a| Want::Near(f(a[0]) - f(a[0]).floor())),
        // The exact interpolation rounded once: stepwise f32 arithmetic would cancel.
        "lerp" => near(&[F32, F32, F32], |_, a| {
            let (x, y, s) = (f(a[0]) as f64, f(a[1]) as f64, f(a[2]) as f64);
            Want::Near((x + s * (y - x)) as f32)
        }),
        "floor" | "floorf" => r(&[F32], F32, |_, a| fb(f(a[0]).floor())),
        "ceil" | "ceilf" => r(&[F32], F32, |_, a| fb(f(a[0]).ceil())),
        "round" | "rintf" => r(&[F32], F32, |_, a| fb(f(a[0]).round_ties_even())),
        "trunc" | "truncf" => r(&[F32], F32, |_, a| fb(f(a[0]).trunc())),
        "roundf" => r(&[F32], F32, |_, a| fb(f(a[0]).round())),
        "expm1" | "expm1f" => near(&[F32], |_, a| Want::Near(f(a[0]).exp_m1())),
        "log1p" | "log1pf" => near(&[F32], |_, a| Want::Near(f(a[0]).ln_1p())),
        "erf" | "erff" => near(&[F32], |_, a| Want::Near(libm::erff(f(a[0])))),
        "step" => r(&[F32, F32], F32, |_, a| fb(if f(a[1]) >= f(a[0]) { 1.0 } else { 0.0 })),
        "fminf" | "fmin" => r(&[F32, F32], F32, |_, a| fb(f(a[0]).min(f(a[1])))),
        "fmaxf" | "fmax" => r(&[F32, F32], F32, |_, a| fb(f(a[0]).max(f(a[1])))),
        "fabsf" | "fabs" => r(&[F32], F32, |_, a| fb(f(a[0]).abs())),
        "__fadd_rn" => r(&[F32, F32], F32, |_, a| fb(f(a[0]) + f(a[1]))),
        "__fsub_rn" => r(&[F32, F32], F32, |_, a| fb(f(a[0]) - f(a[1]))),
        "__fmul_rn" => r(&[F32, F32], F32, |_, a| fb(f(a[0]) * f(a[1]))),
        "__fdiv_rn" | "__fdividef" => r(&[F32, F32], F32, |_, a| fb(f(a[0]) / f(a[1]))),
        "__dadd_rn" => r(&[F64, F64], F64, |_, a| Want::Bits((f64::from_bits(a[0]) + f64::from_bits(a[1])).to_bits())),
        "__dmul_rn" => r(&[F64, F64], F64, |_, a| Want::Bits((f64::from_bits(a[0]) * f64::from_bits(a[1])).to_bits())),
        "countbits" => r(&[U32], U32, |_, a| ub((a[0] as u32).count_ones())),
        "__popc" => r(&[U32], I32, |_, a| ib((a[0] as u32).count_ones() as i32)),
        "__popcll" => r(&[U64], I32, |_, a| ib(a[0].count_ones() as i32)),
        "firstbithigh" => r(&[I32], U32, |_, a| {
            let x = a[0] as i32;
            let v = if x < 0 { !x as u32 } else { x as u32 };
            ub(if v == 0 { u32::MAX } else { 31 - v.leading_zeros() })
        }),
        "firstbitlow" => r(&[U32], U32, |_, a| ub(if a[0] as u32 == 0 { u32::MAX } else { (a[0] as u32).trailing_zeros() })),
        "__clz" => r(&[I32], I32, |_, a| ib((a[0] as u32).leading_zeros() as i32)),
        "__clzll" => r(&[I64], I32, |_, a| ib(a[0].leading_zeros() as i32)),
        "__ffs" => r(&[I32], I32, |_, a| ib(if a[0] as u32 == 0 { 0 } else { (a[0] as u32).trailing_zeros() as i32 + 1 })),
        "__ffsll" => r(&[I64], I32, |_, a| ib(if a[0] == 0 { 0 } else { a[0].trailing_zeros() as i32 + 1 })),
        "reversebits" | "__brev" => r(&[U32], U32, |_, a| ub((a[0] as u32).reverse_bits())),
        "__brevll" => r(&[U64], U64, |_, a| Want::Bits(a[0].reverse_bits())),
        "__umulhi" => r(&[U32, U32], U32, |_, a| ub(((a[0] as u32 as u64 * a[1] as u32 as u64) >> 32) as u32)),
        "__mulhi" => r(&[I32, I32], I32, |_, a| ib(((a[0] as i32 as i64 * a[1] as i32 as i64) >> 32) as i32)),
        "__umul64hi" => r(&[U64, U64], U64, |_, a| Want::Bits(((a[0] as u128 * a[1] as u128) >> 64) as u64)),
        "__mul64hi" => r(&[I64, I64], I64, |_, a| Want::Bits(((a[0] as i64 as i128 * a[1] as i64 as i128) >> 64) as u64)),
        "__umul24" => r(&[U32, U32], U32, |_, a| ub((a[0] as u32 & 0xff_ffff).wrapping_mul(a[1] as u32 & 0xff_ffff))),
        "__mul24" => r(&[I32, I32], I32, |_, a| ib(((a[0] as i32) << 8 >> 8).wrapping_mul((a[1] as i32) << 8 >> 8))),
        "__usad" => r(&[U32, U32, U32], U32, |_, a| ub((a[0] as u32).abs_diff(a[1] as u32).wrapping_add(a[2] as u32))),
        "__sad" => r(&[I32, I32, U32], U32, |_, a| ub((a[0] as i32).abs_diff(a[1] as i32).wrapping_add(a[2] as u32))),
        "__float2int_rn" => r(&[F32], I32, |_, a| ib(f(a[0]).round_ties_even() as i32)),
        "__float2int_rz" => r(&[F32], I32, |_, a| ib(f(a[0]).trunc() as i32)),
        "__float2int_rd" => r(&[F32], I32, |_, a| ib(f(a[0]).floor() as i32)),
        "__float2int_ru" => r(&[F32], I32, |_, a| ib(f(a[0]).ceil() as i32)),
        "__float2uint_rn" => r(&[F32], U32, |_, a| ub(f(a[0]).round_ties_even() as u32)),
        "__float2uint_rz" => r(&[F32], U32, |_, a| ub(f(a[0]).trunc() as u32)),
        "__int2float_rn" => r(&[I32], F32, |_, a| fb(a[0] as i32 as f32)),
        "__uint2float_rn" => r(&[U32], F32, |_, a| fb(a[0] as u32 as f32)),
        "asuint" | "__float_as_uint" => r(&[F32], U32, |_, a| Want::Bits(a[0] & 0xffff_ffff)),
        "asint" | "__float_as_int" => r(&[F32], I32, |_, a| Want::Bits(a[0] & 0xffff_ffff)),
        "asfloat" | "__uint_as_float" => r(&[U32], F32, |_, a| Want::Bits(a[0] & 0xffff_ffff)),
        "__int_as_float" => r(&[I32], F32, |_, a| Want::Bits(a[0] & 0xffff_ffff)),
        "__double_as_longlong" => r(&[F64], I64, |_, a| Want::Bits(a[0])),
        "__longlong_as_double" => r(&[I64], F64, |_, a| Want::Bits(a[0])),
        "f32tof16" => r(&[F32], U32, |_, a| Want::Bits(f32_to_f16(f(a[0])) as u64)),
        "__float2half" | "__float2half_rn" => r(&[F32], F16, |_, a| Want::Bits(f32_to_f16(f(a[0])) as u64)),
        "f16tof32" => r(&[U32], F32, |_, a| fb(f16_to_f32(a[0] as u16))),
        "__half2float" => r(&[F16], F32, |_, a| fb(f16_to_f32(a[0] as u16))),
        "__float2bfloat16" | "__float2bfloat16_rn" => r(&[F32], F32, |_, a| fb(f32_to_bf16(f(a[0])))),
        "__bfloat162float" => r(&[F32], F32, |_, a| Want::Bits(a[0] & 0xffff_ffff)),
        "__isnanf" => r(&[F32], I32, |_, a| ib(f(a[0]).is_nan() as i32)),
        "__isnan" => r(&[F64], I32, |_, a| ib(f64::from_bits(a[0]).is_nan() as i32)),
        "isnan" => Ref { stmt: "result[i] = CALL ? 1 : 0;", ..r(&[F32], I32, |_, a| ib(f(a[0]).is_nan() as i32)) },
        "__isinff" => r(&[F32], I32, |_, a| ib(f(a[0]).is_infinite() as i32)),
        "__isinf" => r(&[F64], I32, |_, a| ib(f64::from_bits(a[0]).is_infinite() as i32)),
        "isinf" => Ref { stmt: "result[i] = CALL ? 1 : 0;", ..r(&[F32], I32, |_, a| ib(f(a[0]).is_infinite() as i32)) },
        "isfinite" => Ref { stmt: "result[i] = CALL ? 1 : 0;", ..r(&[F32], I32, |_, a| ib(f(a[0]).is_finite() as i32)) },
        "__ldg" => Ref { stmt: "result[i] = __ldg(a0 + i);", ..r(&[F32], F32, |_, a| Want::Bits(a[0])) },
        "tex1Dfetch" => Ref { stmt: "result[i] = tex1Dfetch(a0, i);", ..r(&[I32], I32, |_, a| Want::Bits(a[0])) },
        // Odd lanes are inactive where the mask is taken.
        "__activemask" => Ref { stmt: "if (i % 2 == 0) result[i] = __activemask();", ..r(&[], U32, |i, _| ub(if i % 2 == 0 { 0x5555_5555 } else { 0 })) },
        _ => return None,
    })
}

const SUBNORMAL: u64 = 0x0000_0001;
fn pool(t: Type, tame: bool) -> Vec<u64> {
    let fs = |v: &[f32]| v.iter().map(|x| x.to_bits() as u64).collect::<Vec<_>>();
    match t {
        Type::I32 => [0, 1, -1, 2, -7, i32::MIN, i32::MAX, i32::MIN + 1, 0x00ff_ffff, 0x0080_0000, -0x0080_0000, 1 << 30, 12_345_678, -65_536]
            .iter()
            .map(|&x: &i32| x as u32 as u64)
            .collect(),
        // f16 patterns as well, for `f16tof32`: zero, the subnormal ends, 65504, inf, NaN.
        Type::U32 => vec![0, 1, 2, 0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0x00ff_ffff, 0x0100_0000, 0xff00_ff00, 0x1234_5678, 0x3c00, 0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x8000],
        Type::I64 => [0, 1, -1, i64::MIN, i64::MAX, 1 << 32, -(1 << 40), 0x1234_5678_9abc_def0, 0xffff_ffff].iter().map(|&x: &i64| x as u64).collect(),
        Type::U64 => vec![0, 1, u64::MAX, 1 << 63, 1 << 32, 0xffff_ffff, 0x1234_5678_9abc_def0, 3],
        Type::F16 => vec![0, 0x8000, 0x3c00, 0xbc00, 0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x3555],
        Type::F64 => [0.0, -0.0, 1.0, 0.1, -2.5, f64::MAX, f64::MIN_POSITIVE, f64::INFINITY, f64::NAN, 1e-310].iter().map(|x| x.to_bits()).collect(),
        Type::F32 if tame => fs(&[0.0, 1.0, -1.0, 0.5, 2.5, -3.75, 0.1, 10.0, 1e-3, 7.25]),
        _ => {
            let mut v = fs(&[
                0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, 3.5, 0.1, 1e10, -1e10, 2_147_483_648.0, -2_147_483_904.0, 4_294_967_296.0,
                f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MIN_POSITIVE, f32::MAX, 65504.0, 65520.0, 65519.996,
                // Half rounding: the smallest half subnormal, ties to even at 2^-25 and at 1 + 2^-11, and just above.
                5.960_464_5e-8, 2.980_232_2e-8, 4.470_348_4e-8, 1.000_488_3, 1.001_464_8, 1e-40,
            ]);
            v.push(SUBNORMAL);
            v
        }
    }
}

/// Argument tuples: every pair for two arguments, a rotation for three.
fn inputs(r: &Ref) -> Vec<Vec<u64>> {
    let pools: Vec<Vec<u64>> = r.args.iter().map(|&t| pool(t, r.tame)).collect();
    match pools.len() {
        0 => (0..64).map(|_| Vec::new()).collect(),
        1 => pools[0].iter().map(|&a| vec![a]).collect(),
        _ => {
            let mut out = Vec::new();
            for (i, &a) in pools[0].iter().enumerate() {
                for (j, &b) in pools[1].iter().enumerate() {
                    let mut t = vec![a, b];
                    if let Some(p) = pools.get(2) {
                        t.push(p[(i + 2 * j) % p.len()]);
                    }
                    out.push(t);
                }
            }
            out
        }
    }
}

fn spelling(d: &Dialect, t: Type) -> &'static str {
    let cuda = std::ptr::eq(d, &CUDA);
    match t {
        Type::I32 => "int",
        Type::U32 if cuda => "unsigned int",
        Type::U32 => "uint",
        Type::I64 if cuda => "long long",
        Type::I64 => "int64_t",
        Type::U64 if cuda => "unsigned long long",
        Type::U64 => "uint64_t",
        Type::F16 if cuda => "__half",
        Type::F16 => "half",
        Type::F32 => "float",
        Type::F64 => "double",
        other => panic!("no spelling for {other}"),
    }
}

const WIDTH: usize = 64;

fn kernel(d: &Dialect, name: &str, r: &Ref) -> (String, Lang) {
    let call = format!("{name}({})", (0..r.args.len()).map(|k| format!("a{k}[i]")).collect::<Vec<_>>().join(", "));
    let stmt = r.stmt.replace("CALL", &call);
    if std::ptr::eq(d, &GLSL) {
        let mut blocks: Vec<String> =
            r.args.iter().enumerate().map(|(k, &t)| format!("layout(std430, binding = {k}) buffer A{k} {{ {} a{k}[]; }};", spelling(d, t))).collect();
        blocks.push(format!("layout(std430) buffer Result {{ {} result[]; }};", spelling(d, r.result)));
        let text = format!("#version 450\nlayout(local_size_x = {WIDTH}) in;\n{}\nvoid main() {{\n    uint i = gl_GlobalInvocationID.x;\n    {stmt}\n}}\n", blocks.join("\n"));
        return (text, Lang::Glsl);
    }
    if std::ptr::eq(d, &OPENCL) {
        let mut params: Vec<String> = r.args.iter().enumerate().map(|(k, &t)| format!("__global const {}* a{k}", spelling(d, t))).collect();
        params.push(format!("__global {}* result", spelling(d, r.result)));
        (format!("__kernel void k({}) {{\n    uint i = get_global_id(0);\n    {stmt}\n}}\n", params.join(", ")), Lang::OpenCl)
    } else if std::ptr::eq(d, &METAL) {
        let mut params: Vec<String> = r.args.iter().enumerate().map(|(k, &t)| format!("device const {}* a{k} [[buffer({k})]]", spelling(d, t))).collect();
        params.push(format!("device {}* result [[buffer({})]]", spelling(d, r.result), r.args.len()));
        params.push("uint i [[thread_position_in_grid]]".into());
        (format!("#include <metal_stdlib>\nusing namespace metal;\nkernel void k({}) {{\n    {stmt}\n}}\n", params.join(", ")), Lang::Metal)
    } else if std::ptr::eq(d, &CUDA) {
        let mut params: Vec<String> = r.args.iter().enumerate().map(|(k, &t)| format!("const {}* a{k}", spelling(d, t))).collect();
        params.push(format!("{}* result", spelling(d, r.result)));
        (format!("__global__ void k({}) {{\n    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;\n    {stmt}\n}}\n", params.join(", ")), Lang::Cuda)
    } else {
        let mut decls: Vec<String> = r.args.iter().enumerate().map(|(k, &t)| format!("RWStructuredBuffer<{}> a{k};", spelling(d, t))).collect();
        decls.push(format!("RWStructuredBuffer<{}> result;", spelling(d, r.result)));
        (format!("{}\n[numthreads({WIDTH}, 1, 1)]\nvoid k(uint3 id : SV_DispatchThreadID) {{\n    uint i = id.x;\n    {stmt}\n}}\n", decls.join("\n")), Lang::Hlsl)
    }
}

fn bytes(cells: impl Iterator<Item = u64>, t: Type) -> Vec<u8> {
    let n = (t.bits() / 8) as usize;
    cells.flat_map(|c| c.to_le_bytes()[..n].to_vec()).collect()
}

fn ulps(a: f32, b: f32) -> u32 {
    if a == b {
        return 0;
    }
    if a.is_sign_negative() != b.is_sign_negative() {
        return u32::MAX;
    }
    (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
}

fn is_nan(bits: u64, t: Type) -> bool {
    match t {
        Type::F16 => bits & 0x7c00 == 0x7c00 && bits & 0x3ff != 0,
        Type::F32 => f32::from_bits(bits as u32).is_nan(),
        Type::F64 => f64::from_bits(bits).is_nan(),
        _ => false,
    }
}

/// Runs one entry over its inputs; returns the mismatches.
fn check(d: &Dialect, name: &str, r: &Ref) -> Vec<String> {
    let cases = inputs(r);
    let padded = cases.len().div_ceil(WIDTH) * WIDTH;
    let (src, lang) = kernel(d, name, r);
    let mut db = SourceDb::new();
    let file = db.add("intrinsic", src.as_str());
    let c = compile(&mut db, file, lang, &Options::default());
    if c.has_errors || !c.diagnostics.is_empty() {
        return vec![format!("{src}\n{:?}", c.diagnostics)];
    }
    let entry = c.module.find_function(if lang == Lang::Glsl { "main" } else { "k" }).expect("kernel");
    let mut buffers: Vec<BufferInit> = r
        .args
        .iter()
        .enumerate()
        .map(|(k, &t)| BufferInit {
            name: format!("a{k}"),
            source: Source::Bytes { path: "inline".into(), bytes: bytes((0..padded).map(|i| cases[i % cases.len()][k]), t) },
            len: Some(padded as u64),
            ty: Some(t),
            output: None,
        })
        .collect();
    buffers.push(BufferInit { name: "result".into(), source: Source::Zero, len: Some(padded as u64), ty: Some(r.result), output: None });
    let launch = Launch { constants: Vec::new(), buffers };
    let config = RunConfig { groups: [(padded / WIDTH) as u32, 1, 1], group_size: Some([WIDTH as u32, 1, 1]), threads: 1, ..RunConfig::default() };
    let out = run(&db, &c.module, entry, &launch, &config).expect("runs");
    if !out.findings.is_empty() {
        return vec![format!("{:?}", out.findings.iter().map(|f| &f.message).collect::<Vec<_>>())];
    }
    let got = &out.buffer("result").expect("result buffer").cells;
    let mut bad = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let g = got[i];
        let ok = match (r.eval)(i, case) {
            Want::Bits(w) => g == w || (is_nan(w, r.result) && is_nan(g, r.result)),
            Want::Near(w) => {
                let gf = f32::from_bits(g as u32);
                (w.is_nan() && gf.is_nan()) || ulps(w, gf) <= 4
            }
        };
        if !ok {
            bad.push(format!("{name}({case:x?}) = {g:#x}, want {:?}", (r.eval)(i, case)));
        }
    }
    bad
}

#[test]
fn every_intrinsic_matches_its_reference() {
    let mut failures = Vec::new();
    for d in [&HLSL, &CUDA, &OPENCL, &GLSL, &METAL] {
        for i in d.intrinsics {
            match reference_in(d, i.name) {
                None => failures.push(format!("{}: `{}` has no reference in tests/intrinsics.rs", d.name, i.name)),
                Some(r) => failures.extend(check(d, i.name, &r).into_iter().map(|m| format!("{}: {m}", d.name))),
            }
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn the_half_reference_rounds_to_nearest_even() {
    assert_eq!(f32_to_f16(65504.0), 0x7bff);
    assert_eq!(f32_to_f16(65520.0), 0x7c00);
    assert_eq!(f32_to_f16(1.000_488_3), 0x3c00);
    assert_eq!(f32_to_f16(1.001_464_8), 0x3c02);
    assert_eq!(f32_to_f16(2.980_232_2e-8), 0);
    assert_eq!(f32_to_f16(4.470_348_4e-8), 1);
    assert_eq!(f16_to_f32(0x0001), 5.960_464_5e-8);
    assert_eq!(f16_to_f32(0x7bff), 65504.0);
}

fn run_source(lang: Lang, src: &str, launch: &str, groups: [u32; 3]) -> lockstep_emu::RunOutcome {
    let mut db = SourceDb::new();
    let file = db.add("kernel", src);
    let c = compile(&mut db, file, lang, &Options::default());
    assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
    let entry = c.module.find_function("k").expect("kernel");
    let l = Launch::parse(launch, std::path::Path::new(".")).unwrap();
    let out = run(&db, &c.module, entry, &l, &RunConfig { groups, group_size: Some([64, 1, 1]), ..RunConfig::default() }).unwrap();
    assert!(out.findings.is_empty(), "{:?}", out.findings.iter().map(|f| &f.message).collect::<Vec<_>>());
    out
}

/// One compare-exchange step of a bitonic sort per pass, indices computed with `__umul24`.
const BITONIC_CU: &str = r#"
__global__ void k(unsigned int* keys, unsigned int* bits) {
    __shared__ unsigned int s[64];
    unsigned int t = threadIdx.x;
    unsigned int g = __umul24(blockIdx.x, blockDim.x) + t;
    s[t] = keys[g];
    __syncthreads();
    for (unsigned int size = 2; size <= 64; size <<= 1) {
        for (unsigned int stride = size >> 1; stride > 0; stride >>= 1) {
            unsigned int partner = t ^ stride;
            if (partner > t) {
                unsigned int a = s[t], b = s[partner];
                bool up = (t & size) == 0;
                if ((a > b) == up) { s[t] = b; s[partner] = a; }
            }
            __syncthreads();
        }
    }
    keys[g] = s[t];
    unsigned int v = s[t];
    bits[g * 4 + 0] = __brev(v);
    bits[g * 4 + 1] = __popc(v) + __clz(v) * 100;
    bits[g * 4 + 2] = __umulhi(v, 0x9e3779b9u);
    bits[g * 4 + 3] = __half2float(__float2half((float)v / 7.0f)) == (float)v / 7.0f;
}
"#;

#[test]
fn cuda_bitonic_sort_with_umul24_indices_and_bit_intrinsics() {
    let keys: Vec<u32> = (0..128u32).map(|i| i.wrapping_mul(0x9e37_79b9) >> 7).collect();
    let launch = format!("[buffers.keys]\ndata = {keys:?}\n[buffers.bits]\nlen = 512\n");
    let out = run_source(Lang::Cuda, BITONIC_CU, &launch, [2, 1, 1]);
    let mut want: Vec<u32> = keys.clone();
    want[..64].sort();
    want[64..].sort();
    assert_eq!(out.buffer("keys").unwrap().u32s(), want);
    let bits: Vec<u32> = want
        .iter()
        .flat_map(|&v| {
            let third = v as f32 / 7.0;
            let exact = f16_to_f32(f32_to_f16(third)) == third;
            [v.reverse_bits(), v.count_ones() + v.leading_zeros() * 100, ((v as u64 * 0x9e37_79b9) >> 32) as u32, exact as u32]
        })
        .collect();
    assert_eq!(out.buffer("bits").unwrap().u32s(), bits);
}

const BITS_HLSL: &str = r#"
RWStructuredBuffer<uint> data;
RWStructuredBuffer<uint> outp;
[numthreads(64, 1, 1)]
void k(uint3 id : SV_DispatchThreadID) {
    uint v = data[id.x];
    int s = asint(v);
    outp[id.x * 6 + 0] = reversebits(v);
    outp[id.x * 6 + 1] = countbits(v) | (firstbitlow(v) << 8);
    outp[id.x * 6 + 2] = firstbithigh(s);
    outp[id.x * 6 + 3] = f32tof16(asfloat(v));
    outp[id.x * 6 + 4] = asuint(f16tof32(v & 0xffff) * 2.0);
    outp[id.x * 6 + 5] = asuint(saturate(rcp(asfloat(v))));
}
"#;

#[test]
fn hlsl_bit_and_half_intrinsics_are_exact() {
    let data: Vec<u32> = vec![0, 1, 0xffff_ffff, 0x8000_0000, 0x7f80_0000, 0x7fc0_0000, 0x3f80_0000, 0x477f_e000, 0x3380_0000, 0x0000_03ff, 0x1234_5678, 0x4b80_0001]
        .into_iter()
        .cycle()
        .take(64)
        .collect();
    let launch = format!("[buffers.data]\ndata = {data:?}\n[buffers.outp]\nlen = 384\n");
    let out = run_source(Lang::Hlsl, BITS_HLSL, &launch, [1, 1, 1]);
    let want: Vec<u32> = data
        .iter()
        .flat_map(|&v| {
            let s = v as i32;
            let high = { let m = if s < 0 { !v } else { v }; if m == 0 { u32::MAX } else { 31 - m.leading_zeros() } };
            let low = if v == 0 { u32::MAX } else { v.trailing_zeros() };
            let r = 1.0 / f32::from_bits(v);
            let sat = if r.is_nan() { 0.0 } else { r.clamp(0.0, 1.0) };
            [
                v.reverse_bits(),
                v.count_ones() | (low << 8),
                high,
                f32_to_f16(f32::from_bits(v)) as u32,
                (f16_to_f32(v as u16) * 2.0).to_bits(),
                sat.to_bits(),
            ]
        })
        .collect();
    let got = out.buffer("outp").unwrap().u32s();
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        // NaN outputs may carry any payload.
        let both_nan = (i % 6 == 4 && is_nan(*g as u64, Type::F32) && is_nan(*w as u64, Type::F32)) || (i % 6 == 3 && is_nan(*g as u64, Type::F16) && is_nan(*w as u64, Type::F16));
        assert!(g == w || both_nan, "cell {i} (input {:#x}): got {g:#x}, want {w:#x}", data[i / 6]);
    }
}

/// Every `half2` helper of the CUDA vector table, through the emulator.
const HALF2_CU: &str = r#"
__global__ void k(const float* in, float* out) {
    unsigned int i = threadIdx.x;
    float a = in[2 * i], b = in[2 * i + 1];
    half2 h = __floats2half2_rn(a, b);
    float2 back = __half22float2(h);
    half2 swapped = __halves2half2(__high2half(h), __low2half(h));
    half2 lows = __lows2half2(h, swapped);
    half2 highs = __highs2half2(h, swapped);
    half2 fromf = __float22half2_rn(make_float2(b, a));
    half2 both = __half2half2(__low2half(h));
    half2 spread = __float2half2_rn(a);
    out[12 * i + 0] = back.x;
    out[12 * i + 1] = back.y;
    out[12 * i + 2] = __low2float(swapped);
    out[12 * i + 3] = __high2float(swapped);
    out[12 * i + 4] = __high2float(lows);
    out[12 * i + 5] = __low2float(highs);
    out[12 * i + 6] = __low2float(fromf);
    out[12 * i + 7] = __high2float(fromf);
    out[12 * i + 8] = __high2float(both);
    out[12 * i + 9] = __low2float(spread);
    out[12 * i + 10] = __high2float(spread);
    out[12 * i + 11] = __half2float(__low2half(h));
}
"#;

#[test]
fn cuda_half2_helpers_take_apart_and_build_vectors_exactly() {
    let inputs: Vec<f32> = [0.0f32, -0.0, 1.0, -2.5, 65504.0, 70000.0, 1e-8, 0.333_333, -65520.0, -1e-5, 0.4375, 1024.5]
        .into_iter()
        .cycle()
        .take(128)
        .collect();
    let launch = format!("[buffers.in]\ndata = {inputs:?}\n[buffers.out]\nlen = 768\n");
    let out = run_source(Lang::Cuda, HALF2_CU, &launch, [1, 1, 1]);
    let half = |x: f32| f16_to_f32(f32_to_f16(x));
    let want: Vec<u32> = inputs
        .chunks(2)
        .flat_map(|p| {
            let (a, b) = (half(p[0]), half(p[1]));
            [a, b, b, a, b, b, half(p[1]), half(p[0]), a, a, a, a].map(f32::to_bits)
        })
        .collect();
    assert_eq!(out.buffer("out").unwrap().u32s(), want);
}

/// OpenCL's `select` on vectors tests each condition component's top bit
/// (a comparison's `true` is -1); on a scalar, whether it is not zero.
const SELECT_CL: &str = r#"
__kernel void k(__global const int* c, __global float* out) {
    uint i = get_global_id(0);
    int4 m = (int4)(c[i], c[i] >> 1, c[i] + 1, -c[i]);
    float4 v = select((float4)(1.0f, 2.0f, 3.0f, 4.0f), (float4)(10.0f, 20.0f, 30.0f, 40.0f), m);
    out[i * 5 + 0] = v.x;
    out[i * 5 + 1] = v.y;
    out[i * 5 + 2] = v.z;
    out[i * 5 + 3] = v.w;
    out[i * 5 + 4] = select(5.0f, 50.0f, c[i]);
}
"#;

#[test]
fn opencl_vector_select_tests_the_top_bit_and_scalar_select_tests_non_zero() {
    let c: Vec<i32> = (0..64).map(|i| [0, 1, -1, 2, -2, i32::MIN, i32::MAX, 7][i % 8]).collect();
    let launch = format!("[buffers.c]\ndata = {c:?}\n[buffers.out]\nlen = 320\n");
    let out = run_source(Lang::OpenCl, SELECT_CL, &launch, [1, 1, 1]);
    let want: Vec<f32> = c
        .iter()
        .flat_map(|&x| {
            let top = |m: i32, a: f32, b: f32| if m < 0 { b } else { a };
            [top(x, 1.0, 10.0), top(x >> 1, 2.0, 20.0), top(x.wrapping_add(1), 3.0, 30.0), top(x.wrapping_neg(), 4.0, 40.0), if x != 0 { 50.0 } else { 5.0 }]
        })
        .collect();
    assert_eq!(out.buffer("out").unwrap().f32s(), want);
}

/// Lane operations on packed bytes and halves, and byte permutes.
const LANES_CU: &str = r#"
__global__ void k(const unsigned int* a, const unsigned int* b, unsigned int* out) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int x = a[i], y = b[i];
    out[i * 8 + 0] = __vsub4(x, y);
    out[i * 8 + 1] = __vcmpne4(x, y);
    out[i * 8 + 2] = __vaddss4(x, y);
    out[i * 8 + 3] = __vmaxu2(x, y);
    out[i * 8 + 4] = __vcmplts2(x, y);
    out[i * 8 + 5] = __vabsdiffu4(x, y);
    out[i * 8 + 6] = __byte_perm(x, y, 0x7531);
    out[i * 8 + 7] = __byte_perm(x, y, y);
}
"#;

/// `f` applied to each of the `n` lanes of `x` and `y` (values unsigned), repacked.
fn lanes(x: u32, y: u32, n: u32, f: impl Fn(u32, u32) -> u32) -> u32 {
    let bits = 32 / n;
    let mask = (1u64 << bits) as u32 - 1;
    (0..n).map(|k| (f((x >> (k * bits)) & mask, (y >> (k * bits)) & mask) & mask) << (k * bits)).fold(0, |w, l| w | l)
}

fn byte_perm(x: u32, y: u32, s: u32) -> u32 {
    let bytes = (u64::from(y) << 32) | u64::from(x);
    (0..4).map(|k| (((bytes >> (8 * ((s >> (4 * k)) & 7))) & 0xff) as u32) << (8 * k)).fold(0, |w, b| w | b)
}

#[test]
fn cuda_lane_words_and_byte_permutes_are_exact() {
    let a: Vec<u32> = (0..64u32).map(|i| i.wrapping_mul(0x9e37_79b9) ^ 0x8070_ff01).collect();
    let b: Vec<u32> = (0..64u32).map(|i| if i % 5 == 0 { a[i as usize] } else { i.wrapping_mul(0x85eb_ca6b).rotate_left(7) }).collect();
    let launch = format!("[buffers.a]\ndata = {a:?}\n[buffers.b]\ndata = {b:?}\n[buffers.out]\nlen = 512\n");
    let out = run_source(Lang::Cuda, LANES_CU, &launch, [1, 1, 1]);
    let sext = |v: u32, bits: u32| ((v << (32 - bits)) as i32) >> (32 - bits);
    let want: Vec<u32> = a
        .iter()
        .zip(&b)
        .flat_map(|(&x, &y)| {
            [
                lanes(x, y, 4, |p, q| p.wrapping_sub(q)),
                lanes(x, y, 4, |p, q| if p != q { 0xff } else { 0 }),
                lanes(x, y, 4, |p, q| (sext(p, 8) + sext(q, 8)).clamp(-128, 127) as u32),
                lanes(x, y, 2, |p, q| p.max(q)),
                lanes(x, y, 2, |p, q| if sext(p, 16) < sext(q, 16) { 0xffff } else { 0 }),
                lanes(x, y, 4, |p, q| p.abs_diff(q)),
                byte_perm(x, y, 0x7531),
                byte_perm(x, y, y),
            ]
        })
        .collect();
    assert_eq!(out.buffer("out").unwrap().u32s(), want);
}
