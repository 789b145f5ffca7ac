//! Macro definitions: parsing a `#define` line, and the `#` and `##`
//! operators that work on spellings.

use std::rc::Rc;

use lockstep_source::Span;

use crate::lexer::lex_str;
use crate::token::{Kind, Token};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Builtin {
    File,
    Line,
    Counter,
}

#[derive(Debug)]
pub(crate) struct Macro {
    pub name: Rc<str>,
    /// Parameter names for a function-like macro; a variadic macro's last
    /// parameter is `__VA_ARGS__` or the name before its `...`.
    pub params: Option<Vec<Rc<str>>>,
    pub variadic: bool,
    pub body: Vec<Token>,
    /// The name in the `#define` line; None for `-D` and built-in macros.
    pub definition: Option<Span>,
    pub builtin: Option<Builtin>,
}

impl Macro {
    pub(crate) fn builtin(name: &str, builtin: Builtin) -> Macro {
        Macro {
            name: name.into(),
            params: None,
            variadic: false,
            body: Vec::new(),
            definition: None,
            builtin: Some(builtin),
        }
    }

    pub(crate) fn param_index(&self, tok: &Token) -> Option<usize> {
        if tok.kind != Kind::Ident {
            return None;
        }
        self.params.as_ref()?.iter().position(|p| **p == *tok.text)
    }
}

/// Parses the tokens after `#define`. `definition` is where the name is.
pub(crate) fn parse_define(tokens: &[Token], definition: Option<Span>) -> Result<Macro, (String, Option<Span>)> {
    let Some(name) = tokens.first().filter(|t| t.kind == Kind::Ident) else {
        return Err(("macro name must be an identifier".into(), tokens.first().map(|t| t.span)));
    };
    if &*name.text == "defined" {
        return Err(("`defined` cannot be used as a macro name".into(), Some(name.span)));
    }
    let mut rest = &tokens[1..];
    let mut params = None;
    let mut variadic = false;
    // Function-like only when `(` touches the name.
    if rest.first().is_some_and(|t| t.is_punct("(") && !t.space_before) {
        let (list, after, is_variadic) = parse_params(rest)?;
        params = Some(list);
        variadic = is_variadic;
        rest = after;
    }
    let mut body = rest.to_vec();
    if let Some(first) = body.first_mut() {
        first.space_before = false;
    }
    if body.first().is_some_and(|t| t.is_punct("##"))
        || (body.len() > 1 && body.last().is_some_and(|t| t.is_punct("##")))
    {
        return Err(("`##` cannot appear at either end of a macro body".into(), Some(name.span)));
    }
    let m = Macro { name: name.text.clone(), params, variadic, body, definition, builtin: None };
    if m.params.is_some() {
        for (i, t) in m.body.iter().enumerate() {
            if t.is_punct("#") && m.body.get(i + 1).and_then(|n| m.param_index(n)).is_none() {
                return Err(("`#` is not followed by a macro parameter".into(), Some(name.span)));
            }
        }
    }
    Ok(m)
}

type Params<'t> = (Vec<Rc<str>>, &'t [Token], bool);

/// Parses `(a, b, ...)` and returns the parameters, the tokens after `)`,
/// and whether the macro is variadic.
fn parse_params(tokens: &[Token]) -> Result<Params<'_>, (String, Option<Span>)> {
    let err = |msg: &str, t: Option<&Token>| Err((msg.to_string(), t.map(|t| t.span)));
    let mut params: Vec<Rc<str>> = Vec::new();
    let mut i = 1;
    if tokens.get(i).is_some_and(|t| t.is_punct(")")) {
        return Ok((params, &tokens[i + 1..], false));
    }
    loop {
        let Some(t) = tokens.get(i) else { return err("missing `)` in macro parameter list", tokens.last()) };
        let variadic = if t.is_punct("...") {
            params.push("__VA_ARGS__".into());
            true
        } else if t.kind == Kind::Ident && !params.contains(&t.text) && &*t.text != "__VA_ARGS__" {
            params.push(t.text.clone());
            if tokens.get(i + 1).is_some_and(|n| n.is_punct("...")) {
                i += 1;
                true
            } else {
                false
            }
        } else {
            return err("expected a parameter name in macro parameter list", Some(t));
        };
        i += 1;
        match tokens.get(i) {
            Some(t) if t.is_punct(")") => return Ok((params, &tokens[i + 1..], variadic)),
            Some(t) if t.is_punct(",") && !variadic => i += 1,
            other => return err("expected `,` or `)` in macro parameter list", other.or(tokens.last())),
        }
    }
}

/// The `#` operator: spells the argument as a string literal, one space
/// where the argument had whitespace, escaping quotes and backslashes
/// inside literals.
pub(crate) fn stringize(arg: &[Token]) -> String {
    let mut s = String::from("\"");
    for (i, t) in arg.iter().enumerate() {
        if i > 0 && t.space_before {
            s.push(' ');
        }
        if matches!(t.kind, Kind::Str | Kind::Char) {
            for c in t.text.chars() {
                if c == '"' || c == '\\' {
                    s.push('\\');
                }
                s.push(c);
            }
        } else {
            s.push_str(&t.text);
        }
    }
    s.push('"');
    s
}

/// The `##` operator: joins two spellings and re-lexes them; None when
/// the result is not a single token (the caller then keeps both).
pub(crate) fn paste(lhs: &Token, rhs: &Token) -> Option<(Kind, String)> {
    let joined = format!("{}{}", lhs.text, rhs.text);
    match lex_str(&joined).as_slice() {
        [(kind, text, _)] if text.len() == joined.len() => Some((Kind::from_raw(*kind), text.clone())),
        _ => None,
    }
}
