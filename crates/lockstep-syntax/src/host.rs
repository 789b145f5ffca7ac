//! Finds the bodies of CUDA host-only functions, which no analysis reads, so
//! that they can be cut from the text before parsing.
//!
//! A token scanner, not a parser: it tracks braces at namespace scope (file
//! level, `namespace` and `extern "C"` blocks) and reads the tokens before each
//! `{` to tell function bodies from other blocks. Whenever it is unsure it
//! keeps the body: eliding too little costs time, eliding too much would hide
//! code from the analyses.

use rustc_hash::{FxHashMap, FxHashSet};
use std::ops::Range;

/// Byte ranges of the interiors of host-only function bodies in preprocessed
/// CUDA text: between the `{` and its `}`, both excluded, in order, disjoint
/// and never empty.
///
/// A body is kept (not returned) when its function is marked `__global__`,
/// `__device__` or `__launch_bounds__`; when the body itself names
/// `__device__`, `__global__` or `__shared__` (extended lambdas); when the
/// function's name cannot be told (operators, constructors with initializer
/// lists); and when its name appears in code that is kept, so that a kernel
/// calling an unmarked helper (a `constexpr` function, or one marked by a
/// macro from a header that was not found) still sees its body.
pub fn host_function_bodies(text: &str) -> Vec<Range<usize>> {
    let mut scanner = Scanner::new(text);
    for token in Lexer::new(text, 0..text.len()) {
        scanner.token(token);
    }
    scanner.finish()
}

/// The kinds of token the scanner tells apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Ident,
    /// A string literal, raw or not, with any prefix.
    Str,
    /// A character literal.
    Char,
    Number,
    OpenParen,
    CloseParen,
    OpenBrace,
    CloseBrace,
    Semicolon,
    /// A single `:` (not `::`): bit fields, base classes, initializer lists.
    Colon,
    Amp,
    Arrow,
    Other,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Token {
    pub(crate) kind: Kind,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Splits text into tokens, skipping whitespace, comments and preprocessor
/// lines. Unterminated comments and raw strings run to the end; other
/// unterminated literals to the end of the line.
pub(crate) struct Lexer<'t> {
    bytes: &'t [u8],
    pos: usize,
    end: usize,
    /// Only blanks were seen since the last line break: a `#` here starts a
    /// directive (`#pragma`, `#line`).
    at_line_start: bool,
}

impl<'t> Lexer<'t> {
    pub(crate) fn new(text: &'t str, range: Range<usize>) -> Lexer<'t> {
        let end = range.end.min(text.len());
        Lexer { bytes: text.as_bytes(), pos: range.start.min(end), end, at_line_start: range.start == 0 }
    }

    fn byte(&self, at: usize) -> u8 {
        if at < self.end {
            self.bytes[at]
        } else {
            0
        }
    }

    /// The length of the escape or line continuation starting with the `\` at `at`.
    fn escape_len(&self, at: usize) -> usize {
        if self.byte(at + 1) == b'\r' && self.byte(at + 2) == b'\n' {
            3
        } else {
            2
        }
    }

    /// Moves past the end of the current line, following `\` continuations.
    fn skip_line(&mut self) {
        while self.pos < self.end {
            match self.bytes[self.pos] {
                b'\n' => return,
                b'\\' => self.pos += self.escape_len(self.pos),
                _ => self.pos += 1,
            }
        }
        self.pos = self.pos.min(self.end);
    }

    /// Moves past a quoted literal whose opening `quote` was consumed.
    fn skip_quoted(&mut self, quote: u8) {
        while self.pos < self.end {
            match self.bytes[self.pos] {
                b'\\' => self.pos += self.escape_len(self.pos),
                b'\n' => return,
                b if b == quote => {
                    self.pos += 1;
                    return;
                }
                _ => self.pos += 1,
            }
        }
        self.pos = self.pos.min(self.end);
    }

    /// Moves past a raw string whose `R"` was consumed: `delimiter( … )delimiter"`.
    fn skip_raw_string(&mut self) {
        let open = self.pos;
        let delimiter_end = (open..self.end.min(open + 17)).find(|&i| !is_raw_delimiter_byte(self.bytes[i]));
        let Some(paren) = delimiter_end.filter(|&i| self.bytes[i] == b'(') else {
            // Not a well-formed raw string: read it as an ordinary one.
            return self.skip_quoted(b'"');
        };
        let delimiter = &self.bytes[open..paren];
        let mut at = paren + 1;
        while at < self.end {
            if self.bytes[at] == b')' && self.bytes[at + 1..self.end].starts_with(delimiter) && self.byte(at + 1 + delimiter.len()) == b'"' {
                self.pos = at + delimiter.len() + 2;
                return;
            }
            at += 1;
        }
        self.pos = self.end;
    }

    /// Moves past a number, which may hold `'` digit separators and signed exponents.
    fn skip_number(&mut self) {
        while self.pos < self.end {
            let b = self.bytes[self.pos];
            let continues = b.is_ascii_alphanumeric()
                || b == b'_'
                || b == b'.'
                || (b == b'\'' && self.byte(self.pos + 1).is_ascii_alphanumeric())
                || ((b == b'+' || b == b'-') && matches!(self.bytes[self.pos - 1], b'e' | b'E' | b'p' | b'P'));
            if !continues {
                return;
            }
            self.pos += 1;
        }
    }
}

/// Bytes of identifiers: ASCII letters, digits, `_`, `$`, and every byte of a
/// non-ASCII character (so identifiers begin and end on character boundaries).
fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80
}

fn is_raw_delimiter_byte(b: u8) -> bool {
    b.is_ascii_graphic() && !matches!(b, b'(' | b')' | b'\\' | b'"')
}

impl Iterator for Lexer<'_> {
    type Item = Token;

    fn next(&mut self) -> Option<Token> {
        loop {
            if self.pos >= self.end {
                return None;
            }
            let start = self.pos;
            let b = self.bytes[start];
            match b {
                b'\n' => {
                    self.at_line_start = true;
                    self.pos += 1;
                    continue;
                }
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => {
                    self.pos += 1;
                    continue;
                }
                b'/' if self.byte(start + 1) == b'/' => {
                    self.skip_line();
                    continue;
                }
                b'/' if self.byte(start + 1) == b'*' => {
                    self.pos = (start + 2..self.end.saturating_sub(1)).find(|&i| self.bytes[i] == b'*' && self.bytes[i + 1] == b'/').map_or(self.end, |i| i + 2);
                    continue;
                }
                b'#' if self.at_line_start => {
                    self.skip_line();
                    continue;
                }
                _ => {}
            }
            self.at_line_start = false;
            self.pos += 1;
            let kind = match b {
                b'"' => {
                    self.skip_quoted(b'"');
                    Kind::Str
                }
                b'\'' => {
                    self.skip_quoted(b'\'');
                    Kind::Char
                }
                b'0'..=b'9' => {
                    self.skip_number();
                    Kind::Number
                }
                b'.' if self.byte(self.pos).is_ascii_digit() => {
                    self.skip_number();
                    Kind::Number
                }
                b if is_ident_byte(b) => {
                    while self.pos < self.end && is_ident_byte(self.bytes[self.pos]) {
                        self.pos += 1;
                    }
                    // String and character prefixes: `L"…"`, `u8'…'`, `R"(…)"`, `u8R"x(…)x"`.
                    match (&self.bytes[start..self.pos], self.byte(self.pos)) {
                        (b"R" | b"LR" | b"uR" | b"UR" | b"u8R", b'"') => {
                            self.pos += 1;
                            self.skip_raw_string();
                            Kind::Str
                        }
                        (b"L" | b"u" | b"U" | b"u8", quote @ (b'"' | b'\'')) => {
                            self.pos += 1;
                            self.skip_quoted(quote);
                            if quote == b'"' {
                                Kind::Str
                            } else {
                                Kind::Char
                            }
                        }
                        _ => Kind::Ident,
                    }
                }
                b'(' => Kind::OpenParen,
                b')' => Kind::CloseParen,
                b'{' => Kind::OpenBrace,
                b'}' => Kind::CloseBrace,
                b';' => Kind::Semicolon,
                b'&' => Kind::Amp,
                b':' if self.byte(self.pos) == b':' => {
                    self.pos += 1;
                    Kind::Other
                }
                b':' => Kind::Colon,
                b'-' if self.byte(self.pos) == b'>' => {
                    self.pos += 1;
                    Kind::Arrow
                }
                _ => Kind::Other,
            };
            return Some(Token { kind, start, end: self.pos });
        }
    }
}

/// What a `{` at namespace scope opens, judged by the tokens before it.
#[derive(Debug, PartialEq, Eq)]
enum Opened<'t> {
    /// A `namespace` or `extern "C"` block: namespace scope goes on inside.
    Namespace,
    /// A function body; the name is `None` when it cannot be told.
    Function(Option<&'t str>),
    /// Anything else: a class body, an initializer, a lambda.
    Other,
}

/// The brace block the scanner is inside, below namespace scope.
#[derive(Debug)]
enum Block<'t> {
    /// The body of an unmarked function: a candidate for eliding, unless it
    /// names a device keyword.
    Candidate { name: &'t str, body_start: usize, names_device: bool },
    /// The body of a function that is kept.
    KeptFunction,
    /// Any other block: a class body, an initializer, a lambda.
    Other,
}

/// An unmarked function body found at namespace scope.
struct Candidate<'t> {
    name: &'t str,
    body: Range<usize>,
    kept: bool,
}

/// The state of the one pass over the tokens.
struct Scanner<'t> {
    text: &'t str,
    /// Namespace-scope tokens of the current item (since its last `;`, function
    /// body or namespace brace), without those before the last brace block it
    /// holds (class bodies, initializers): a `}` stands for them.
    head: Vec<Token>,
    /// The item so far names `__global__`, `__device__` or `__launch_bounds__`.
    head_marked: bool,
    /// The item so far has a single `:` (initializer lists, base classes).
    head_colon: bool,
    /// `(` minus `)` in `head`, to find the trailing return type's `->`.
    head_paren_depth: usize,
    /// Index in `head` of the first `->` outside parentheses.
    head_arrow: Option<usize>,
    /// Open braces.
    depth: usize,
    /// Open braces that are namespace blocks; the scanner is at namespace
    /// scope while `depth == namespace_depth`.
    namespace_depth: usize,
    /// The outermost open block below namespace scope.
    block: Block<'t>,
    candidates: Vec<Candidate<'t>>,
    /// Identifiers in kept code: a candidate by one of these names is kept.
    used: FxHashSet<&'t str>,
}

/// Identifiers that mark a function as device code.
const DEVICE_MARKERS: [&str; 3] = ["__global__", "__device__", "__launch_bounds__"];

/// Identifiers that, inside a host body, mean device code is defined there.
const DEVICE_CONTENT: [&str; 3] = ["__device__", "__global__", "__shared__"];

/// Qualifiers that may follow a function's parameter list.
const TRAILING_QUALIFIERS: [&str; 6] = ["const", "volatile", "noexcept", "override", "final", "mutable"];

/// Specifiers with parenthesized arguments that may follow a parameter list.
const TRAILING_CALLS: [&str; 4] = ["noexcept", "throw", "__attribute__", "__declspec"];

/// Identifiers before a `(` that are not a function's name.
const NOT_NAMES: [&str; 7] = ["operator", "decltype", "sizeof", "alignof", "alignas", "__align__", "__launch_bounds__"];

impl<'t> Scanner<'t> {
    fn new(text: &'t str) -> Scanner<'t> {
        Scanner {
            text,
            head: Vec::new(),
            head_marked: false,
            head_colon: false,
            head_paren_depth: 0,
            head_arrow: None,
            depth: 0,
            namespace_depth: 0,
            block: Block::Other,
            candidates: Vec::new(),
            used: FxHashSet::default(),
        }
    }

    fn text_of(&self, token: Token) -> &'t str {
        self.text.get(token.start..token.end).unwrap_or("")
    }

    fn token(&mut self, token: Token) {
        if self.depth > self.namespace_depth {
            self.token_in_block(token);
        } else {
            self.token_at_namespace_scope(token);
        }
    }

    fn token_in_block(&mut self, token: Token) {
        match token.kind {
            Kind::OpenBrace => self.depth += 1,
            Kind::CloseBrace => {
                self.depth -= 1;
                if self.depth == self.namespace_depth {
                    self.close_block(token);
                }
            }
            Kind::Ident => {
                let ident = self.text_of(token);
                match &mut self.block {
                    Block::Candidate { names_device, .. } => *names_device |= DEVICE_CONTENT.contains(&ident),
                    // Kept code: the functions it names are kept too.
                    Block::KeptFunction | Block::Other => {
                        self.used.insert(ident);
                    }
                }
            }
            _ => {}
        }
    }

    /// The `}` closing the outermost block below namespace scope.
    fn close_block(&mut self, close: Token) {
        match std::mem::replace(&mut self.block, Block::Other) {
            Block::Candidate { name, body_start, names_device } => {
                self.candidates.push(Candidate { name, body: body_start..close.start, kept: names_device });
                self.end_item();
            }
            Block::KeptFunction => self.end_item(),
            // A class body or initializer: the item goes on (`struct S { … } s;`,
            // `A::A() : a{1}, b(2) { … }`), the `}` standing for the block.
            Block::Other => self.head.push(close),
        }
    }

    fn token_at_namespace_scope(&mut self, token: Token) {
        match token.kind {
            Kind::OpenBrace => {
                self.depth += 1;
                match self.opened() {
                    Opened::Namespace => {
                        self.namespace_depth += 1;
                        self.end_item();
                    }
                    Opened::Function(name) => {
                        self.block = match name {
                            Some(name) if !self.head_marked => Block::Candidate { name, body_start: token.end, names_device: false },
                            _ => Block::KeptFunction,
                        };
                        // The body's `}` ends the item.
                        self.head.clear();
                    }
                    Opened::Other => {
                        self.block = Block::Other;
                        self.head.clear();
                        self.head_paren_depth = 0;
                        self.head_arrow = None;
                    }
                }
            }
            Kind::CloseBrace => {
                // Closes a namespace block, or is a stray `}` at file level.
                if self.namespace_depth > 0 {
                    self.namespace_depth -= 1;
                    self.depth -= 1;
                }
                self.end_item();
            }
            Kind::Semicolon => self.end_item(),
            _ => {
                match token.kind {
                    Kind::Ident => self.head_marked |= DEVICE_MARKERS.contains(&self.text_of(token)),
                    Kind::Colon => self.head_colon = true,
                    Kind::OpenParen => self.head_paren_depth += 1,
                    Kind::CloseParen => self.head_paren_depth = self.head_paren_depth.saturating_sub(1),
                    Kind::Arrow if self.head_paren_depth == 0 && self.head_arrow.is_none() => self.head_arrow = Some(self.head.len()),
                    _ => {}
                }
                self.head.push(token);
            }
        }
    }

    fn end_item(&mut self) {
        self.head.clear();
        self.head_marked = false;
        self.head_colon = false;
        self.head_paren_depth = 0;
        self.head_arrow = None;
    }

    fn is_ident(&self, token: Token, ident: &str) -> bool {
        token.kind == Kind::Ident && self.text_of(token) == ident
    }

    /// Judges the `{` after `head`, walking back from its end over trailing
    /// qualifiers to the parameter list and the name before it.
    fn opened(&self) -> Opened<'t> {
        let head = &self.head[..];
        match head {
            [first, ..] if self.is_ident(*first, "namespace") => return Opened::Namespace,
            [first, second, ..] if self.is_ident(*first, "inline") && self.is_ident(*second, "namespace") => return Opened::Namespace,
            [first, second] if self.is_ident(*first, "extern") && second.kind == Kind::Str => return Opened::Namespace,
            _ => {}
        }
        // A trailing return type (`auto f() -> T {`) follows the parameter list.
        let mut end = self.head_arrow.unwrap_or(head.len());
        while let Some(last) = end.checked_sub(1) {
            let token = head[last];
            match token.kind {
                Kind::Amp => end = last,
                Kind::Ident if TRAILING_QUALIFIERS.contains(&self.text_of(token)) => end = last,
                Kind::CloseParen => {
                    let Some(open) = matching_open_paren(head, last) else { return Opened::Other };
                    let Some(before) = open.checked_sub(1).map(|i| head[i]) else { return Opened::Other };
                    let before_text = self.text_of(before);
                    if before.kind == Kind::Ident && TRAILING_CALLS.contains(&before_text) {
                        end = open - 1;
                        continue;
                    }
                    let operator = open >= 2 && self.is_ident(head[open - 2], "operator");
                    let unnamed = before.kind != Kind::Ident || NOT_NAMES.contains(&before_text) || operator || self.head_colon;
                    return Opened::Function((!unnamed).then_some(before_text));
                }
                _ => return Opened::Other,
            }
        }
        Opened::Other
    }

    /// Settles which candidates are kept, then returns the others' bodies.
    fn finish(mut self) -> Vec<Range<usize>> {
        let mut by_name: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        for (i, candidate) in self.candidates.iter().enumerate() {
            by_name.entry(candidate.name).or_default().push(i);
        }
        let mut to_scan = Vec::new();
        for (i, candidate) in self.candidates.iter_mut().enumerate() {
            candidate.kept |= self.used.contains(candidate.name);
            if candidate.kept {
                to_scan.push(i);
            }
        }
        // A kept body's identifiers are used too: keep what it calls, and so on.
        while let Some(i) = to_scan.pop() {
            for token in Lexer::new(self.text, self.candidates[i].body.clone()) {
                if token.kind != Kind::Ident {
                    continue;
                }
                let ident = self.text.get(token.start..token.end).unwrap_or("");
                if !self.used.insert(ident) {
                    continue;
                }
                for &j in by_name.get(ident).map_or(&[][..], Vec::as_slice) {
                    if !self.candidates[j].kept {
                        self.candidates[j].kept = true;
                        to_scan.push(j);
                    }
                }
            }
        }
        self.candidates.into_iter().filter(|c| !c.kept && !c.body.is_empty()).map(|c| c.body).collect()
    }
}

/// The index of the `(` matching the `)` at `close`.
fn matching_open_paren(head: &[Token], close: usize) -> Option<usize> {
    let mut depth = 0usize;
    for i in (0..=close).rev() {
        match head[i].kind {
            Kind::CloseParen => depth += 1,
            Kind::OpenParen => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The elided bodies' text.
    fn elided(text: &str) -> Vec<&str> {
        host_function_bodies(text).into_iter().map(|r| &text[r]).collect()
    }

    #[test]
    fn host_function_body_is_elided() {
        let text = "void launch(int n) {\n  kernel<<<n / 256, 256>>>(n);\n}\n";
        assert_eq!(elided(text), ["\n  kernel<<<n / 256, 256>>>(n);\n"]);
        assert_eq!(elided("__host__ int main() { return 0; }"), [" return 0; "]);
        assert_eq!(elided("static inline void f() noexcept { g(); }"), [" g(); "]);
        assert!(elided("void empty() {}").is_empty(), "nothing to elide");
    }

    #[test]
    fn device_code_is_kept() {
        for text in [
            "__global__ void k(int* a) { a[0] = 1; }",
            "__device__ int d(int x) { return x; }",
            "__host__ __device__ int hd(int x) { return x; }",
            "__device__ __forceinline__ int fi(int x) { return x; }",
            "template <typename T, int N = 4>\n__global__ void t(T* a) { a[N] = 0; }",
            "void __launch_bounds__(256) lb(int* a) { a[0] = 1; }",
            "extern \"C\" __global__ void c(int* a) { a[0] = 1; }",
            "static __device__ auto trailing(int x) -> int { return x; }",
        ] {
            assert!(elided(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn braces_in_literals_comments_and_directives_are_not_counted() {
        let text = concat!(
            "#pragma message(\"{\")\n",
            "void f() {\n",
            "  puts(\"}\\\"}\"); char c = '}'; char q = '\\''; // }\n",
            "  /* } */ auto r = R\"x(})\" }\n)x\"; auto w = u8R\"(})\"; auto l = L'}';\n",
            "  int big = 1'000'000; // '\n",
            "}\n",
            "#line 7 \"a.cu\"\n",
            "__global__ void k() { s = \"{\"; }\n",
            "void g() { h(); }\n",
        );
        let bodies = elided(text);
        assert_eq!(bodies.len(), 2, "{bodies:?}");
        assert!(bodies[0].starts_with("\n  puts(") && bodies[0].ends_with("// '\n"), "{bodies:?}");
        assert_eq!(bodies[1], " h(); ");
    }

    #[test]
    fn only_function_bodies_at_namespace_scope_are_elided() {
        let text = concat!(
            "struct S { int a; void member() { a = 1; } };\n",
            "class C final : public S { public: int get() const { return a; } };\n",
            "int table[] = { 1, 2, 3 };\n",
            "enum class E : int { A, B };\n",
            "auto lambda = [](int x) { return x; };\n",
            "namespace outer { inline namespace v1 { void in_namespace() { a(); } } }\n",
            "namespace { void anonymous() { b(); } }\n",
            "extern \"C\" {\nvoid in_extern_c() { c(); }\n}\n",
            "struct S2 { int x; } s2 = { 1 }; void after_struct() { d(); }\n",
            "S::S(int v) : a{v}, b(v) { e(); }\n",
            "auto trailing(int x) -> decltype(x) { f(); }\n",
            "void S::qualified() const & { g(); }\n",
            "bool operator==(S, S) { h(); }\n",
        );
        assert_eq!(elided(text), [" a(); ", " b(); ", " c(); ", " d(); ", " f(); ", " g(); "]);
    }

    #[test]
    fn bodies_that_define_device_code_are_kept() {
        let text = concat!(
            "void with_lambda(float* a, int n) {\n",
            "  auto body = [=] __device__ (int i) { a[i] = 0; };\n",
            "  for_each(n, body);\n",
            "}\n",
            "void with_shared() { extern __shared__ float s[]; }\n",
            "void plain() { x(); }\n",
        );
        assert_eq!(elided(text), [" x(); "]);
    }

    #[test]
    fn functions_named_by_kept_code_are_kept() {
        let text = concat!(
            "constexpr int div_up(int a, int b) { return (a + b - 1) / b; }\n",
            "int inner(int x) { return x; }\n",
            "int outer(int x) { return inner(x); }\n",
            "__global__ void k(int* a) { a[0] = outer(div_up(5, 2)); }\n",
            "struct Table { int f() { return looked_up(); } };\n",
            "int looked_up() { return 1; }\n",
            "void launch(int* a) { k<<<1, 32>>>(a); outer(1); }\n",
        );
        assert_eq!(elided(text), [" k<<<1, 32>>>(a); outer(1); "]);
    }

    #[test]
    fn garbage_never_panics_and_unclosed_bodies_are_kept() {
        assert!(elided("void f() { { g(); }").is_empty());
        assert!(elided("void f() { \"unterminated }").is_empty());
        assert!(elided("void f() { /* unterminated }").is_empty());
        assert!(elided("void f() { R\"x( unterminated }").is_empty());
        assert_eq!(elided("}}} ) ( void f() { g(); }"), [" g(); "]);
        assert_eq!(elided("void f() { g(); }}} void h() { i(); }"), [" g(); ", " i(); "]);
        for text in ["\\", "#", "R\"", "u8", "'", "/", "/*", "1'", ".5e+", "->", "::", "\"\\", "R\"abcdefghijklmnopq(", "f(){\\"] {
            elided(text);
        }
        let mut state = 0x2545f491u32;
        let bytes: Vec<u8> = (0..200_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                b"(){};:&->\"'/\\*#R\nx_ "[state as usize % 20]
            })
            .collect();
        elided(std::str::from_utf8(&bytes).unwrap());
        let nested = format!("void f() {{{}{}", "{".repeat(100_000), "}".repeat(100_000));
        assert!(elided(&nested).is_empty(), "one brace is never closed");
        let nested = format!("void f() {{{}{}}}", "{".repeat(100_000), "}".repeat(100_000));
        assert_eq!(elided(&nested).len(), 1);
    }

    #[test]
    fn pathological_heads_take_linear_time() {
        // Each `{` reads back only to the last block: quadratic work would take minutes here.
        for unit in [") const {}", "() {}", "x) {}", "(a) -> const {} ", "f() : x{} "] {
            let text = unit.repeat(200_000);
            elided(&text);
        }
        let text = format!("{}{}", "a(".repeat(200_000), ") {} ".repeat(200_000));
        elided(&text);
    }
}
