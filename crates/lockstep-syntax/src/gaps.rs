//! C++ the grammar does not parse, found in the text so it can be cut
//! before parsing: braced default arguments, the execution spaces of
//! extended lambdas, and `typename` before a type constructed in an
//! expression; and C++ it parses wrongly, found in the tree: a value in
//! parentheses before `&&` read as a cast.

use std::ops::Range;
use tree_sitter::Tree;

/// Byte ranges of default arguments written as braced initializers
/// (`std::initializer_list<int> outputs = {}`, `dim3 block = {32, 1, 1}`):
/// from the `=` to the closing brace, when a `,` or `)` follows it. The
/// grammar takes only expressions as default values, and one such parameter
/// made every file that includes the header start with a syntax error.
/// Without the default the declaration parses and means the same to a
/// kernel: calls that leave the argument out see an unknown value.
pub fn brace_default_arguments(text: &str) -> Vec<Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let assignment = b[i] == b'='
            && b.get(i + 1) != Some(&b'=')
            && !(i > 0 && matches!(b[i - 1], b'=' | b'!' | b'<' | b'>' | b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|' | b'^'));
        if !assignment {
            i += 1;
            continue;
        }
        let open = skip_blanks(b, i + 1);
        if b.get(open) != Some(&b'{') || !in_parentheses(b, i) {
            i += 1;
            continue;
        }
        let Some(close) = matching_brace(b, open) else { return out };
        let next = skip_blanks(b, close + 1);
        if matches!(b.get(next), Some(b',' | b')')) {
            out.push(i..close + 1);
        }
        i = close + 1;
    }
    out
}

/// Whether an unclosed `(` comes before `at` in the same statement: a
/// parameter list, not a declaration (`int v[2] = {1, 2}, w;`).
fn in_parentheses(b: &[u8], at: usize) -> bool {
    let (mut parens, mut braces) = (0usize, 0usize);
    for &c in b[..at].iter().rev() {
        match c {
            b')' => parens += 1,
            b'(' if parens == 0 => return true,
            b'(' => parens -= 1,
            b'}' => braces += 1,
            b'{' if braces == 0 => return false,
            b'{' => braces -= 1,
            b';' => return false,
            _ => {}
        }
    }
    false
}

/// Byte ranges of the execution-space words of extended lambdas
/// (`[&] __device__ (int n) {…}`, `[=] __host__ __device__ (…)`): CUDA
/// allows them between the capture list and the parameters, the grammar
/// does not. Without them the lambda parses and means the same to lockstep,
/// which inlines it where the device code calls it.
pub fn lambda_execution_spaces(text: &str) -> Vec<Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for (i, _) in text.match_indices(']') {
        let mut at = skip_blanks(b, i + 1);
        let start = at;
        let mut end = None;
        while let Some(word) = ["__device__", "__host__"].into_iter().find(|w| text[at..].starts_with(w)) {
            at += word.len();
            if b.get(at).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_') {
                break;
            }
            end = Some(at);
            at = skip_blanks(b, at);
        }
        if let Some(end) = end.filter(|_| matches!(b.get(at), Some(b'(' | b'{'))) {
            out.push(start..end);
        }
    }
    out
}

/// Byte ranges of the keyword `typename` where it names a dependent type
/// that an expression constructs: `typename K::BlockScan(storage).Sum(v)`
/// or `typename A::template B<N>{…}`, CUB's way of calling a block-wide
/// collective. The grammar takes `typename` in declarations only. Without
/// the keyword the construction parses as a call of the qualified name,
/// which is what it is to lockstep. A declaration (`typename K::T x(…);`)
/// has a name after the type, and `template <typename T>` no `::`.
pub fn typename_in_expressions(text: &str) -> Vec<Range<usize>> {
    const KEYWORD: &str = "typename";
    let b = text.as_bytes();
    let mut out = Vec::new();
    for (i, _) in text.match_indices(KEYWORD) {
        let end = i + KEYWORD.len();
        if (i > 0 && word_char(b[i - 1])) || b.get(end).is_some_and(|&c| word_char(c)) {
            continue;
        }
        if qualified_name_end(b, skip_blanks(b, end)).is_some_and(|after| matches!(b.get(skip_blanks(b, after)), Some(b'(' | b'{'))) {
            out.push(i..end);
        }
    }
    out
}

/// The end of a qualified name at `at` (`A::B`, `::A<int, 4>::template C`,
/// with at least one `::`); None where none starts there.
fn qualified_name_end(b: &[u8], mut at: usize) -> Option<usize> {
    let mut scopes = 0;
    loop {
        if b[at..].starts_with(b"::") {
            scopes += 1;
            at = skip_blanks(b, at + 2);
            if b[at..].starts_with(b"template") && !b.get(at + 8).is_some_and(|&c| word_char(c)) {
                at = skip_blanks(b, at + 8);
            }
        }
        let start = at;
        while b.get(at).is_some_and(|&c| word_char(c)) {
            at += 1;
        }
        if at == start || b[start].is_ascii_digit() {
            return None;
        }
        let mut next = skip_blanks(b, at);
        if b.get(next) == Some(&b'<') {
            next = skip_blanks(b, matching_angle(b, next)? + 1);
            at = next;
        }
        if !b[next..].starts_with(b"::") {
            return (scopes > 0).then_some(at);
        }
        at = next;
    }
}

/// Whether a byte can be part of an identifier.
fn word_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The `>` closing the `<` at `open`; a `>` inside brackets is a
/// comparison. None past a `;` or `{` (a comparison, not template
/// arguments).
fn matching_angle(b: &[u8], open: usize) -> Option<usize> {
    let mut closers = Vec::new();
    for (i, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'<' if closers.last().is_none_or(|&top| top == b'>') => closers.push(b'>'),
            b'(' => closers.push(b')'),
            b'[' => closers.push(b']'),
            b'>' if closers.last() != Some(&b'>') => {}
            b'>' | b')' | b']' => {
                (closers.pop()? == c).then_some(())?;
                if closers.is_empty() {
                    return Some(i);
                }
            }
            b';' | b'{' => return None,
            _ => {}
        }
    }
    None
}

fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// The `}` closing the `{` at `open`; None past a `;` (not an initializer).
fn matching_brace(b: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &c) in b.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            b';' => return None,
            _ => {}
        }
    }
    None
}

/// `x == (a) && y == (b)` — macro arguments in parentheses — can parse as
/// `x == ((a) &&y) == (b)`: a cast of `&&y`, the address of a label, which
/// only a GNU extension has and GPU code never takes. The byte offsets of
/// the parentheses around each such "type": blanked, the text parses as
/// written, with every offset kept.
pub fn parenthesized_values_read_as_casts(tree: &Tree, text: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let root = tree.root_node();
    for i in memchr::memmem::find_iter(text.as_bytes(), b"&&") {
        // Only `(name) &&` can be one: a name alone in parentheses.
        let Some(inside) = text[..i].trim_end().strip_suffix(')') else { continue };
        let name = inside.trim_end();
        let before_name = name.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == ':');
        if before_name.len() == name.len() || !before_name.trim_end().ends_with('(') {
            continue;
        }
        let Some(outer) = root.descendant_for_byte_range(i, i + 1).and_then(|amp| amp.parent()) else { continue };
        let inner = outer.child_by_field_name("argument");
        let (Some(cast), Some(inner)) = (outer.parent(), inner) else { continue };
        let label_address = outer.kind() == "pointer_expression" && outer.start_byte() == i && inner.kind() == "pointer_expression" && inner.start_byte() == i + 1;
        if !label_address || cast.kind() != "cast_expression" || cast.child_by_field_name("value") != Some(outer) {
            continue;
        }
        // Only a lone name in the parentheses: `(T*) &&x` is no value.
        let Some(ty) = cast.child_by_field_name("type") else { continue };
        if ty.named_child_count() != 1 || ty.named_child(0).is_none_or(|t| t.kind() != "type_identifier") {
            continue;
        }
        // `inside` ends just before the `)`.
        out.extend([cast.start_byte(), inside.len()]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text without the ranges.
    fn without(text: &str, ranges: Vec<Range<usize>>) -> String {
        let mut out = String::new();
        let mut from = 0;
        for r in ranges {
            out.push_str(&text[from..r.start]);
            from = r.end;
        }
        out + &text[from..]
    }

    fn cut(text: &str) -> String {
        without(text, brace_default_arguments(text))
    }

    fn cut_lambdas(text: &str) -> String {
        without(text, lambda_execution_spaces(text))
    }

    fn cut_typenames(text: &str) -> String {
        without(text, typename_in_expressions(text))
    }

    #[test]
    fn typename_goes_where_an_expression_constructs_the_type() {
        assert_eq!(cut_typenames("typename K::BlockScanT(smem).InclusiveScan(v, r);"), " K::BlockScanT(smem).InclusiveScan(v, r);");
        assert_eq!(cut_typenames("x = typename A<T, 4>::template B<N> {s};"), "x =  A<T, 4>::template B<N> {s};");
        assert_eq!(cut_typenames("auto y = typename ::cub::Warp<float>(t).Sum(x);"), "auto y =  ::cub::Warp<float>(t).Sum(x);");
        assert_eq!(cut_typenames("typename A<(N > 2)>::R(s).Sum(x);"), " A<(N > 2)>::R(s).Sum(x);");
        for kept in [
            "template <typename T, typename U> __global__ void k(T* t);",
            "typename K::T x(1);",
            "using V = typename K::Vec;",
            "typename std::enable_if<(N > 2), int>::type* = nullptr",
            "typename K::T* p;",
            "typenames::X(1);",
        ] {
            assert_eq!(cut_typenames(kept), kept);
        }
    }

    #[test]
    fn lambda_execution_spaces_go_and_subscripts_stay() {
        assert_eq!(cut_lambdas("auto load = [&] __device__ (auto n) {"), "auto load = [&]  (auto n) {");
        assert_eq!(cut_lambdas("f([=] __host__ __device__ (int i) { return i; });"), "f([=]  (int i) { return i; });");
        assert_eq!(cut_lambdas("x = a[i] __device__v;"), "x = a[i] __device__v;");
        assert_eq!(cut_lambdas("__device__ int a[4] __device__;"), "__device__ int a[4] __device__;");
    }

    #[test]
    fn unbalanced_and_multibyte_text_never_panics() {
        for text in ["f(int a = {", "f(int a = {{}", "] __device__", "typename", "typename A::", "typename A<", "typename ::é(", "typename A::B<)(", "]__host__ __device__", "é] __device__ (", "g(x = {é}, y)", "= {", "(", "]"] {
            let _ = brace_default_arguments(text);
            let _ = lambda_execution_spaces(text);
            let _ = typename_in_expressions(text);
        }
        assert_eq!(cut("g(x = {é}, y)"), "g(x , y)");
    }

    #[test]
    fn braced_defaults_go_and_assignments_stay() {
        assert_eq!(cut("bool f(int a, std::initializer_list<int> o = {}) {"), "bool f(int a, std::initializer_list<int> o ) {");
        assert_eq!(cut("void g(dim3 b = { 32, 1, 1 }, int c = 0);"), "void g(dim3 b , int c = 0);");
        assert_eq!(cut("x = {1, 2};\nif (a == {b}) y <= {c};"), "x = {1, 2};\nif (a == {b}) y <= {c};");
        assert_eq!(cut("{ int v[2] = {1, 2}, w = 3; }"), "{ int v[2] = {1, 2}, w = 3; }");
        assert_eq!(cut("void h(int3 a = {1, 1, 1}, int2 b = {}) {"), "void h(int3 a , int2 b ) {");
    }

    #[test]
    fn values_in_parentheses_read_as_casts_are_found() {
        let text = "int f(int a, int J, int c) { return c == (a) && J == (8); }\nint g(int* p) { return (int) *p && (T*) &&p; }\n";
        let tree = crate::parse(crate::Grammar::Cuda, text).unwrap();
        let open = text.find("(a)").unwrap();
        // Only the lone name before `&&`: a cast of a dereference or to a pointer type is one.
        assert_eq!(parenthesized_values_read_as_casts(&tree, text), vec![open, open + 2]);
    }
}
