//! Integer constant expressions of `#if`, evaluated over already expanded
//! tokens with C precedence and the usual signed/unsigned conversions.

use lockstep_source::Span;

use crate::token::{Kind, Token};

/// Nesting deeper than this (parentheses, unary operators, `?:` chains) is
/// rejected instead of recursing further.
const MAX_DEPTH: u32 = 256;

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ExprError {
    pub message: String,
    /// The offending token, or None for the end of the line.
    pub span: Option<Span>,
    /// A syntax error (the whole expression is false), not a bad operation.
    pub malformed: bool,
}

/// The expression's truth value and any errors; a malformed expression is false.
pub(crate) fn evaluate(tokens: &[Token]) -> (bool, Vec<ExprError>) {
    let mut p = Parser { tokens, pos: 0, depth: 0, errors: Vec::new() };
    let result = p.comma().and_then(|v| match p.tokens.get(p.pos) {
        None => Ok(v),
        Some(t) => Err(p.error_at(t, format!("unexpected `{}` in #if expression", t.text))),
    });
    let value = match result {
        Ok(v) => v.truthy(),
        Err(e) => {
            p.errors.push(e);
            false
        }
    };
    (value, p.errors)
}

#[derive(Clone, Copy, Debug)]
struct Value {
    bits: u64,
    unsigned: bool,
}

impl Value {
    fn signed(v: i64) -> Value {
        Value { bits: v as u64, unsigned: false }
    }

    fn truthy(self) -> bool {
        self.bits != 0
    }
}

struct Parser<'t> {
    tokens: &'t [Token],
    pos: usize,
    depth: u32,
    /// Non-fatal errors (division by zero); evaluation goes on with 0.
    errors: Vec<ExprError>,
}

fn precedence(op: &str) -> Option<u8> {
    Some(match op {
        "*" | "/" | "%" => 10,
        "+" | "-" => 9,
        "<<" | ">>" => 8,
        "<" | "<=" | ">" | ">=" => 7,
        "==" | "!=" => 6,
        "&" => 5,
        "^" => 4,
        "|" => 3,
        "&&" => 2,
        "||" => 1,
        _ => return None,
    })
}

impl Parser<'_> {
    fn error_at(&self, t: &Token, message: String) -> ExprError {
        ExprError { message, span: Some(t.span), malformed: true }
    }

    fn peek_punct(&self, p: &str) -> bool {
        self.tokens.get(self.pos).is_some_and(|t| t.is_punct(p))
    }

    fn enter(&mut self) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let span = self.tokens.get(self.pos).map(|t| t.span);
            let message = format!("#if expression nested more than {MAX_DEPTH} levels deep");
            return Err(ExprError { message, span, malformed: true });
        }
        Ok(())
    }

    fn comma(&mut self) -> Result<Value, ExprError> {
        let mut v = self.ternary(true)?;
        while self.peek_punct(",") {
            self.pos += 1;
            v = self.ternary(true)?;
        }
        Ok(v)
    }

    /// `live` is false inside an operand that short-circuiting skips, where
    /// division by zero is not an error.
    fn ternary(&mut self, live: bool) -> Result<Value, ExprError> {
        self.enter()?;
        let cond = self.binary(1, live)?;
        let result = if self.peek_punct("?") {
            self.pos += 1;
            let c = cond.truthy();
            let a = self.ternary(live && c)?;
            if !self.peek_punct(":") {
                return Err(self.expected("`:`"));
            }
            self.pos += 1;
            let b = self.ternary(live && !c)?;
            let unsigned = a.unsigned || b.unsigned;
            Value { bits: if c { a.bits } else { b.bits }, unsigned }
        } else {
            cond
        };
        self.depth -= 1;
        Ok(result)
    }

    fn expected(&self, what: &str) -> ExprError {
        match self.tokens.get(self.pos) {
            Some(t) => self.error_at(t, format!("expected {what} in #if expression, found `{}`", t.text)),
            None => ExprError {
                message: format!("expected {what} at the end of the #if expression"),
                span: None,
                malformed: true,
            },
        }
    }

    fn binary(&mut self, min_prec: u8, live: bool) -> Result<Value, ExprError> {
        let mut lhs = self.unary(live)?;
        loop {
            let Some(t) = self.tokens.get(self.pos).filter(|t| t.kind == Kind::Punct) else { return Ok(lhs) };
            let Some(prec) = precedence(&t.text).filter(|&p| p >= min_prec) else { return Ok(lhs) };
            let op = t.clone();
            self.pos += 1;
            let rhs_live = match &*op.text {
                "&&" => live && lhs.truthy(),
                "||" => live && !lhs.truthy(),
                _ => live,
            };
            let rhs = self.binary(prec + 1, rhs_live)?;
            lhs = self.apply(&op, lhs, rhs, live);
        }
    }

    fn apply(&mut self, op: &Token, a: Value, b: Value, live: bool) -> Value {
        let unsigned = a.unsigned || b.unsigned;
        let (x, y) = (a.bits, b.bits);
        let (sx, sy) = (x as i64, y as i64);
        let bool_value = |c: bool| Value::signed(c as i64);
        let less = if unsigned { x < y } else { sx < sy };
        let arith = |bits: u64| Value { bits, unsigned };
        match &*op.text {
            "*" => arith(x.wrapping_mul(y)),
            "/" | "%" => {
                if y == 0 {
                    if live {
                        let message = "division by zero in #if".to_string();
                        self.errors.push(ExprError { message, span: Some(op.span), malformed: false });
                    }
                    return arith(0);
                }
                let bits = match (&*op.text, unsigned) {
                    ("/", true) => x / y,
                    ("/", false) => sx.wrapping_div(sy) as u64,
                    (_, true) => x % y,
                    (_, false) => sx.wrapping_rem(sy) as u64,
                };
                arith(bits)
            }
            "+" => arith(x.wrapping_add(y)),
            "-" => arith(x.wrapping_sub(y)),
            // The result of a shift has the type of its left operand.
            "<<" | ">>" => {
                let out_of_range = y >= 64 || (!b.unsigned && sy < 0);
                let bits = match (&*op.text, out_of_range) {
                    ("<<", true) => 0,
                    ("<<", false) => x << y,
                    (_, true) => {
                        if !a.unsigned && sx < 0 {
                            u64::MAX
                        } else {
                            0
                        }
                    }
                    (_, false) => {
                        if a.unsigned {
                            x >> y
                        } else {
                            (sx >> y) as u64
                        }
                    }
                };
                Value { bits, unsigned: a.unsigned }
            }
            "<" => bool_value(less),
            ">" => bool_value(if unsigned { x > y } else { sx > sy }),
            "<=" => bool_value(!(if unsigned { x > y } else { sx > sy })),
            ">=" => bool_value(!less),
            "==" => bool_value(x == y),
            "!=" => bool_value(x != y),
            "&" => arith(x & y),
            "^" => arith(x ^ y),
            "|" => arith(x | y),
            "&&" => bool_value(a.truthy() && b.truthy()),
            "||" => bool_value(a.truthy() || b.truthy()),
            _ => unreachable!("operator without precedence"),
        }
    }

    fn unary(&mut self, live: bool) -> Result<Value, ExprError> {
        let Some(t) = self.tokens.get(self.pos) else { return Err(self.expected("a value")) };
        let t = t.clone();
        self.pos += 1;
        match (t.kind, &*t.text) {
            (Kind::Punct, op @ ("-" | "+" | "~" | "!")) => {
                self.enter()?;
                let v = self.unary(live)?;
                self.depth -= 1;
                Ok(match op {
                    "-" => Value { bits: v.bits.wrapping_neg(), ..v },
                    "+" => v,
                    "~" => Value { bits: !v.bits, ..v },
                    _ => Value::signed(!v.truthy() as i64),
                })
            }
            (Kind::Punct, "(") => {
                self.enter()?;
                let v = self.ternary(live)?;
                self.depth -= 1;
                if !self.peek_punct(")") {
                    return Err(self.expected("`)`"));
                }
                self.pos += 1;
                Ok(v)
            }
            (Kind::Number, text) => parse_int(text).map_err(|m| self.error_at(&t, m)),
            (Kind::Char, text) => Ok(Value::signed(parse_char(text))),
            // C++ keeps `true` and `false` through expansion; every other
            // identifier left after expansion is 0.
            (Kind::Ident, "true") => Ok(Value::signed(1)),
            (Kind::Ident, _) => Ok(Value::signed(0)),
            _ => {
                self.pos -= 1;
                Err(self.expected("a value"))
            }
        }
    }
}

fn parse_int(text: &str) -> Result<Value, String> {
    let digits: String = text.chars().filter(|&c| c != '\'').collect();
    let body = digits.trim_end_matches(['u', 'U', 'l', 'L']);
    let suffix = &digits[body.len()..];
    let unsigned_suffix = suffix.contains(['u', 'U']);
    let (radix, num) = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        (16, h)
    } else if let Some(b) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
        (2, b)
    } else if body.len() > 1 && body.starts_with('0') {
        (8, &body[1..])
    } else {
        (10, body)
    };
    let invalid = || format!("invalid integer constant `{text}` in #if");
    if num.is_empty() || suffix.len() > 3 {
        return Err(invalid());
    }
    let bits = u64::from_str_radix(num, radix).map_err(|e| match e.kind() {
        std::num::IntErrorKind::PosOverflow => format!("integer constant `{text}` is too large"),
        _ => invalid(),
    })?;
    Ok(Value { bits, unsigned: unsigned_suffix || bits > i64::MAX as u64 })
}

/// The value of a character constant; multi-character constants pack bytes
/// big-endian like GCC and clang.
fn parse_char(text: &str) -> i64 {
    let inner = text.trim_start_matches(['L', 'u', 'U', '8']).trim_start_matches('\'').strip_suffix('\'').unwrap_or("");
    let mut chars = inner.chars().peekable();
    let mut value: i64 = 0;
    while let Some(c) = chars.next() {
        let code = if c != '\\' {
            c as i64
        } else {
            match chars.next() {
                Some('n') => 10,
                Some('t') => 9,
                Some('r') => 13,
                Some('a') => 7,
                Some('b') => 8,
                Some('f') => 12,
                Some('v') => 11,
                Some('x') => {
                    let mut v: i64 = 0;
                    while let Some(d) = chars.peek().and_then(|c| c.to_digit(16)) {
                        v = v.wrapping_mul(16).wrapping_add(d as i64);
                        chars.next();
                    }
                    v
                }
                Some(d @ '0'..='7') => {
                    let mut v = d.to_digit(8).unwrap_or(0) as i64;
                    for _ in 0..2 {
                        match chars.peek().and_then(|c| c.to_digit(8)) {
                            Some(d) => {
                                v = v * 8 + d as i64;
                                chars.next();
                            }
                            None => break,
                        }
                    }
                    v
                }
                Some(other) => other as i64,
                None => 0,
            }
        };
        value = value.wrapping_shl(8) | code;
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::{lex_str, RawKind};
    use crate::token::HideSet;
    use lockstep_source::FileId;

    fn eval(src: &str) -> (bool, Vec<String>) {
        let tokens: Vec<Token> = lex_str(src)
            .into_iter()
            .map(|(k, text, space_before): (RawKind, String, bool)| Token {
                kind: Kind::from_raw(k),
                text: text.into(),
                span: Span::new(FileId(0), 0, 0),
                space_before,
                exact: false,
                hide: HideSet::default(),
            })
            .collect();
        let (v, errors) = evaluate(&tokens);
        (v, errors.into_iter().map(|e| e.message).collect())
    }

    fn truth(src: &str) -> bool {
        let (v, errors) = eval(src);
        assert!(errors.is_empty(), "{src}: {errors:?}");
        v
    }

    #[test]
    fn precedence_and_associativity() {
        assert!(truth("1 + 2 * 3 == 7"));
        assert!(truth("(1 + 2) * 3 == 9"));
        assert!(truth("10 - 4 - 3 == 3"));
        assert!(truth("1 << 2 + 1 == 8"));
        assert!(truth("1 | 2 ^ 3 & 1 == 3"));
        assert!(truth("!0 && -1 < 0 && ~0 == -1"));
        assert!(!truth("1 < 2 == 0"));
    }

    #[test]
    fn ternary_and_short_circuit() {
        assert!(truth("0 ? 5 : 1 ? 2 : 3"));
        assert!(truth("(0 ? 5 : 2) == 2"));
        assert!(truth("0 && 1 / 0 || 1"));
        assert!(truth("1 ? 1 : 1 / 0"));
    }

    #[test]
    fn literals() {
        assert!(truth("0x1F == 31 && 017 == 15 && 0b101 == 5 && 10UL == 10 && 1'000 == 1000"));
        assert!(truth("'A' == 65 && '\\n' == 10 && '\\x41' == 65 && '\\0' == 0 && 'ab' == 24930"));
        assert!(truth("true && !false"));
        assert!(truth("UNKNOWN == 0"));
    }

    #[test]
    fn unsigned_arithmetic() {
        assert!(truth("-1 < 0"));
        assert!(!truth("-1 < 0u"));
        assert!(truth("0xFFFFFFFFFFFFFFFF == -1"));
        assert!(truth("(0u - 1) / 2 == 0x7FFFFFFFFFFFFFFF"));
    }

    #[test]
    fn errors() {
        assert_eq!(eval("1 / 0 + 1"), (true, vec!["division by zero in #if".to_string()]));
        assert_eq!(eval("1 % 0").1.len(), 1);
        assert_eq!(eval("").1, vec!["expected a value at the end of the #if expression".to_string()]);
        assert_eq!(eval("(1").1, vec!["expected `)` at the end of the #if expression".to_string()]);
        assert_eq!(eval("1 2").1, vec!["unexpected `2` in #if expression".to_string()]);
        assert_eq!(eval("1.5").1, vec!["invalid integer constant `1.5` in #if".to_string()]);
        assert_eq!(
            eval("99999999999999999999").1,
            vec!["integer constant `99999999999999999999` is too large".to_string()]
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = format!("{}1{}", "(".repeat(100_000), ")".repeat(100_000));
        let (v, errors) = eval(&deep);
        assert!(!v);
        assert_eq!(errors, vec!["#if expression nested more than 256 levels deep".to_string()]);
        let chain = format!("{}1", "1 ? ".repeat(1000)) + &" : 0".repeat(1000);
        assert_eq!(eval(&chain).1.len(), 1);
        assert_eq!(eval(&format!("{}1", "- ".repeat(100_000))).1.len(), 1);
    }
}
