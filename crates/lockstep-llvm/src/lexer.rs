//! Tokens of one logical line of LLVM assembly.

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// `%x`, `%0`, `%"a b"`.
    Local(String),
    /// `@f`, `@"a b"`.
    Global(String),
    /// `!dbg`, `!12` (the text after `!`); a bare `!` before `{` or `"` is `Punct('!')`.
    Meta(String),
    /// `#0`.
    Attr(String),
    Int(i128),
    Float(f64),
    /// Keywords, type names, identifiers.
    Ident(String),
    Str(String),
    Punct(char),
    /// `...` in varargs.
    Ellipsis,
}

fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '$' | '-')
}

/// Removes a `;` comment, respecting string literals.
pub fn strip_comment(line: &str) -> &str {
    let mut in_str = false;
    for (i, c) in line.char_indices() {
        match c {
            '"' => in_str = !in_str,
            ';' if !in_str => return &line[..i],
            _ => {}
        }
    }
    line
}

fn read_name(chars: &[char], i: &mut usize) -> String {
    if chars.get(*i) == Some(&'"') {
        *i += 1;
        let start = *i;
        while *i < chars.len() && chars[*i] != '"' {
            *i += 1;
        }
        let s: String = chars[start..*i].iter().collect();
        *i = (*i + 1).min(chars.len());
        return s;
    }
    let start = *i;
    while *i < chars.len() && ident_char(chars[*i]) {
        *i += 1;
    }
    chars[start..*i].iter().collect()
}

/// Splits a line (comment already removed) into tokens; None on a character
/// that has no place in LLVM assembly.
pub fn tokenize(line: &str) -> Option<Vec<Tok>> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        match c {
            '%' | '@' | '#' => {
                i += 1;
                let name = read_name(&chars, &mut i);
                if name.is_empty() {
                    return None;
                }
                out.push(match c {
                    '%' => Tok::Local(name),
                    '@' => Tok::Global(name),
                    _ => Tok::Attr(name),
                });
            }
            '!' => {
                i += 1;
                if chars.get(i).is_some_and(|&c| ident_char(c)) {
                    out.push(Tok::Meta(read_name(&chars, &mut i)));
                } else {
                    out.push(Tok::Punct('!'));
                }
            }
            '"' => {
                i += 1;
                let start = i;
                while i < chars.len() && chars[i] != '"' {
                    i += 1;
                }
                out.push(Tok::Str(chars[start..i.min(chars.len())].iter().collect()));
                i += 1;
            }
            '.' if chars.get(i + 1) == Some(&'.') && chars.get(i + 2) == Some(&'.') => {
                out.push(Tok::Ellipsis);
                i += 3;
            }
            '(' | ')' | '[' | ']' | '{' | '}' | '<' | '>' | ',' | '=' | '*' | ':' | '|' => {
                out.push(Tok::Punct(c));
                i += 1;
            }
            c if c.is_ascii_digit() || ((c == '-' || c == '+') && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit())) => {
                let start = i;
                i += 1;
                if c == '0' && chars.get(i) == Some(&'x') {
                    // Hexadecimal float constants (0x3FF0000000000000, 0xH3C00, ...).
                    i += 1;
                    while i < chars.len() && chars[i].is_ascii_alphanumeric() {
                        i += 1;
                    }
                    let text: String = chars[start..i].iter().collect();
                    out.push(Tok::Float(hex_float(&text)));
                    continue;
                }
                while i < chars.len()
                    && (chars[i].is_ascii_alphanumeric()
                        || chars[i] == '.'
                        || ((chars[i] == '-' || chars[i] == '+') && matches!(chars[i - 1], 'e' | 'E')))
                {
                    i += 1;
                }
                let text: String = chars[start..i].iter().collect();
                if let Ok(n) = text.parse::<i128>() {
                    out.push(Tok::Int(n));
                } else if let Ok(x) = text.parse::<f64>() {
                    out.push(Tok::Float(x));
                } else {
                    return None;
                }
            }
            c if ident_char(c) => {
                // `c"..."` string constants.
                if c == 'c' && chars.get(i + 1) == Some(&'"') {
                    i += 1;
                    continue;
                }
                out.push(Tok::Ident(read_name(&chars, &mut i)));
            }
            _ => return None,
        }
    }
    Some(out)
}

/// The value of an LLVM hexadecimal float constant; only the double form is
/// decoded exactly (others are rare in kernels and only need to be some float).
fn hex_float(text: &str) -> f64 {
    u64::from_str_radix(&text[2..], 16).map(f64::from_bits).unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_of_a_typical_instruction() {
        let t = tokenize(strip_comment("  %5 = getelementptr inbounds [256 x float], ptr addrspace(3) @s, i64 0, i64 %4, !dbg !14 ; c"))
            .unwrap();
        assert_eq!(t[0], Tok::Local("5".into()));
        assert!(t.contains(&Tok::Global("s".into())));
        assert!(t.contains(&Tok::Meta("dbg".into())));
        assert_eq!(*t.last().unwrap(), Tok::Meta("14".into()));
        let t = tokenize("store float 1.0e+00, ptr %p, align 4").unwrap();
        assert!(t.contains(&Tok::Float(1.0)));
        assert!(tokenize("call void @\"odd name\"(i32 -1, ...)").unwrap().contains(&Tok::Global("odd name".into())));
        assert_eq!(tokenize("\u{1}"), None);
    }
}
