//! Macro expansion after Prosser: an expansion's tokens go back in front of
//! the input to be rescanned, each carrying the set of macros it came
//! through so that a macro never expands inside itself.

use std::ops::Range;

use lockstep_diag::Diagnostic;
use lockstep_source::{ExpnId, MacroExpansion, Span};

use crate::macros::{paste, stringize, Macro};
use crate::pp::{error, Preprocessor};
use crate::token::{HideSet, Kind, Token};

/// Tokens one top-level macro use may create, counting substituted
/// bodies and arguments read at every nesting level; this bounds both time
/// and memory.
const MAX_TOKENS: usize = 1_000_000;
/// Text those tokens may add up to (long pastes and stringized arguments).
const MAX_BYTES: usize = 10 << 20;
/// Expansions one top-level macro use may trigger.
const MAX_EXPANSIONS: usize = 100_000;
/// Macro calls nested inside macro arguments; each level recurses.
const MAX_ARG_NESTING: u32 = 100;

/// What one top-level macro use (or one directive line) may still spend.
pub(crate) struct Budget {
    origin: Span,
    tokens: usize,
    bytes: usize,
    expansions: usize,
    reported: bool,
}

impl Budget {
    pub(crate) fn new(origin: Span) -> Budget {
        Budget { origin, tokens: 0, bytes: 0, expansions: 0, reported: false }
    }
}

/// The expansion was abandoned; the diagnostic is already recorded.
#[derive(Debug)]
pub(crate) struct LimitHit;

/// Where a macro's arguments are read from.
enum Input<'s> {
    /// Pending expanded tokens, then the current file.
    Top,
    /// A token list being expanded on its own (an argument, an `#if` line), reversed.
    List(&'s mut Vec<Token>),
}

enum Args {
    Complete {
        args: Vec<Vec<Token>>,
        rparen: Token,
    },
    /// Not a valid call: the tokens read after the name, and why.
    Failed {
        consumed: Vec<Token>,
        diagnostic: Diagnostic,
    },
}

/// One substitution of a macro body.
struct Subst<'m> {
    m: &'m Macro,
    args: &'m [Vec<Token>],
    /// Arguments macro-expanded on first use.
    expanded: Vec<Option<Vec<Token>>>,
    hide: HideSet,
    call: Span,
    id: ExpnId,
    depth: u32,
}

impl Subst<'_> {
    fn at_call(&self) -> Span {
        Span { expansion: Some(self.id), ..self.call }
    }

    fn body_token(&self, t: &Token) -> Token {
        Token { span: self.at_call(), exact: false, hide: self.hide.clone(), ..t.clone() }
    }

    /// An argument token keeps its own position; it is tagged with this
    /// expansion unless it came from one nested inside it (ids grow, so a
    /// later id was created while expanding this macro's arguments).
    fn arg_token(&self, t: &Token) -> Token {
        let expansion = match t.span.expansion {
            Some(e) if e > self.id => Some(e),
            _ => Some(self.id),
        };
        Token { span: Span { expansion, ..t.span }, hide: t.hide.union(&self.hide), ..t.clone() }
    }

    fn synthesized(&self, kind: Kind, text: String, space_before: bool) -> Token {
        Token { kind, text: text.into(), span: self.at_call(), space_before, exact: false, hide: self.hide.clone() }
    }
}

/// The expansion a macro use happens inside of. While expanding the
/// arguments of expansion `ctx`, uses that predate it belong to it.
fn parent_for(expansion: Option<ExpnId>, ctx: Option<ExpnId>) -> Option<ExpnId> {
    match (expansion, ctx) {
        (Some(e), Some(c)) if e > c => Some(e),
        (_, Some(c)) => Some(c),
        (e, None) => e,
    }
}

fn matching_paren(body: &[Token], open: usize, end: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in body.iter().enumerate().take(end).skip(open) {
        if t.is_punct("(") {
            depth += 1;
        } else if t.is_punct(")") {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

impl Preprocessor<'_> {
    /// Expands a macro use at the top level, reading arguments from pending
    /// tokens and then the file. None when `tok` is not an expandable use.
    pub(crate) fn expand_top(&mut self, tok: &Token) -> Result<Option<Vec<Token>>, LimitHit> {
        self.expand_ident(tok, &mut Input::Top, None, 0)
    }

    /// Fully expands a token list on its own. `ctx` is the expansion whose
    /// argument this is.
    pub(crate) fn expand_list(
        &mut self,
        tokens: Vec<Token>,
        ctx: Option<ExpnId>,
        depth: u32,
    ) -> Result<Vec<Token>, LimitHit> {
        if depth > MAX_ARG_NESTING {
            return Err(
                self.limit_hit(&format!("macro calls are nested more than {MAX_ARG_NESTING} levels deep in arguments"))
            );
        }
        let mut stack = tokens;
        stack.reverse();
        let mut out = Vec::with_capacity(stack.len());
        while let Some(t) = stack.pop() {
            if t.kind == Kind::Ident {
                if let Some(mut tokens) = self.expand_ident(&t, &mut Input::List(&mut stack), ctx, depth)? {
                    if let Some(first) = tokens.first_mut() {
                        first.space_before = t.space_before;
                    }
                    stack.extend(tokens.into_iter().rev());
                    continue;
                }
            }
            out.push(t);
        }
        Ok(out)
    }

    /// Fails when `extra` more tokens would not fit in the budget.
    fn check_room(&mut self, extra: usize) -> Result<(), LimitHit> {
        if self.budget.tokens + extra > MAX_TOKENS {
            return Err(self.limit_hit(&format!("it creates more than {MAX_TOKENS} tokens")));
        }
        Ok(())
    }

    fn charge<'t>(&mut self, tokens: impl IntoIterator<Item = &'t Token>) -> Result<(), LimitHit> {
        for t in tokens {
            self.budget.tokens += 1;
            self.budget.bytes += t.text.len();
        }
        self.check_room(0)?;
        if self.budget.bytes > MAX_BYTES {
            return Err(self.limit_hit(&format!("its output exceeds {MAX_BYTES} bytes")));
        }
        Ok(())
    }

    fn limit_hit(&mut self, what: &str) -> LimitHit {
        if !self.budget.reported {
            self.budget.reported = true;
            self.diagnostics.push(error(
                "macro-expansion-limit",
                self.budget.origin,
                format!("macro expansion abandoned: {what}"),
            ));
        }
        LimitHit
    }

    fn input_next(&mut self, input: &mut Input) -> Option<Token> {
        match input {
            Input::List(stack) => stack.pop(),
            Input::Top => self.pending.pop().or_else(|| self.file_next_token()),
        }
    }

    fn input_peek_lparen(&mut self, input: &mut Input) -> bool {
        match input {
            Input::List(stack) => stack.last().is_some_and(|t| t.is_punct("(")),
            Input::Top => match self.pending.last() {
                Some(t) => t.is_punct("("),
                None => self.file_peek_lparen(),
            },
        }
    }

    fn expand_ident(
        &mut self,
        tok: &Token,
        input: &mut Input,
        ctx: Option<ExpnId>,
        depth: u32,
    ) -> Result<Option<Vec<Token>>, LimitHit> {
        if tok.hide.contains(&tok.text) {
            return Ok(None);
        }
        // The pragma operator (`_Pragma("unroll")`, MSVC's `__pragma(…)`)
        // is a directive for the compiler inside a line: gone, like `#pragma`.
        if matches!(&*tok.text, "_Pragma" | "__pragma") && self.input_peek_lparen(input) {
            return self.drop_pragma_operator(input, tok).map(Some);
        }
        let Some(m) = self.macros.get(&*tok.text).cloned() else { return Ok(None) };
        if let Some(b) = m.builtin {
            return Ok(Some(vec![self.builtin_token(b, tok)]));
        }
        let parent = parent_for(tok.span.expansion, ctx);
        if m.params.is_none() {
            let id = self.new_expansion(&m, tok.span, parent)?;
            return self.subst(&m, &[], tok.hide.with(&m.name), tok.span, id, depth).map(Some);
        }
        if !self.input_peek_lparen(input) {
            return Ok(None);
        }
        let was_collecting = std::mem::replace(&mut self.collecting_args, true);
        let args = self.collect_args(input, &m, tok);
        self.collecting_args = was_collecting;
        let args = args?;
        if let Input::Top = input {
            // Lines the call spans are written after its line, not inside it.
            self.deferred_newlines += std::mem::take(&mut self.pending_newlines);
        }
        match args {
            Args::Complete { args, rparen } => {
                let call = tok.span.to(rparen.span);
                let id = self.new_expansion(&m, call, parent)?;
                let hide = tok.hide.intersect(&rparen.hide).with(&m.name);
                self.subst(&m, &args, hide, call, id, depth).map(Some)
            }
            Args::Failed { consumed, diagnostic } => {
                self.diagnostics.push(diagnostic);
                // The name stays as it is; what was read after it is scanned again.
                let name = Token { hide: tok.hide.with(&m.name), ..tok.clone() };
                Ok(Some(std::iter::once(name).chain(consumed).collect()))
            }
        }
    }

    fn new_expansion(&mut self, m: &Macro, call: Span, parent: Option<ExpnId>) -> Result<ExpnId, LimitHit> {
        self.budget.expansions += 1;
        if self.budget.expansions > MAX_EXPANSIONS {
            return Err(self.limit_hit(&format!("it needs more than {MAX_EXPANSIONS} nested expansions")));
        }
        Ok(self.db.add_expansion(MacroExpansion {
            name: m.name.to_string(),
            definition: m.definition,
            call_site: Span { expansion: None, ..call },
            parent,
        }))
    }

    /// Reads `( args )` after a function-like macro's name.
    /// Reads the parenthesized operand of a pragma operator: nothing is left
    /// of it, or, unterminated, the name and what was read, with an error.
    fn drop_pragma_operator(&mut self, input: &mut Input, name: &Token) -> Result<Vec<Token>, LimitHit> {
        let (consumed, rparen) = self.read_parenthesized(input)?;
        if rparen.is_some() {
            return Ok(Vec::new());
        }
        let msg = format!("unterminated operand of `{}`", name.text);
        self.diagnostics.push(error("preprocessor-error", name.span, msg));
        let name = Token { hide: name.hide.with(&name.text), ..name.clone() };
        Ok(std::iter::once(name).chain(consumed).collect())
    }

    /// Reads `(` and what follows up to its matching `)`: the tokens read
    /// (the `(` first, the `)` apart), or all that was left when it never
    /// closes.
    fn read_parenthesized(&mut self, input: &mut Input) -> Result<(Vec<Token>, Option<Token>), LimitHit> {
        let mut consumed: Vec<Token> = self.input_next(input).into_iter().collect();
        let mut depth = 0usize;
        while let Some(t) = self.input_next(input) {
            self.charge([&t])?;
            if t.is_punct("(") {
                depth += 1;
            } else if t.is_punct(")") {
                if depth == 0 {
                    return Ok((consumed, Some(t)));
                }
                depth -= 1;
            }
            consumed.push(t);
        }
        Ok((consumed, None))
    }

    fn collect_args(&mut self, input: &mut Input, m: &Macro, name: &Token) -> Result<Args, LimitHit> {
        let params = m.params.as_deref().unwrap_or_default();
        let (mut consumed, rparen) = self.read_parenthesized(input)?;
        let Some(rparen) = rparen else {
            let msg = format!("unterminated argument list invoking macro `{}`", m.name);
            return Ok(Args::Failed { consumed, diagnostic: error("preprocessor-error", name.span, msg) });
        };
        let mut args: Vec<Vec<Token>> = vec![Vec::new()];
        let mut depth = 0usize;
        for t in consumed.iter().skip(1) {
            if t.is_punct("(") {
                depth += 1;
            } else if t.is_punct(")") {
                depth -= 1;
            }
            // Commas inside parentheses, or in the variadic tail, do not split.
            if depth == 0 && t.is_punct(",") && !(m.variadic && args.len() == params.len()) {
                args.push(Vec::new());
            } else {
                args.last_mut().expect("starts with one").push(t.clone());
            }
        }
        if params.is_empty() && args.len() == 1 && args[0].is_empty() {
            args.clear();
        }
        if m.variadic && args.len() + 1 == params.len() {
            args.push(Vec::new());
        }
        if args.len() != params.len() {
            let msg = format!("macro `{}` takes {} argument(s), but {} were given", m.name, params.len(), args.len());
            consumed.push(rparen);
            return Ok(Args::Failed { consumed, diagnostic: error("preprocessor-error", name.span, msg) });
        }
        Ok(Args::Complete { args, rparen })
    }

    fn subst(
        &mut self,
        m: &Macro,
        args: &[Vec<Token>],
        hide: HideSet,
        call: Span,
        id: ExpnId,
        depth: u32,
    ) -> Result<Vec<Token>, LimitHit> {
        let mut s = Subst { m, args, expanded: vec![None; args.len()], hide, call, id, depth };
        let mut out = Vec::with_capacity(m.body.len());
        self.subst_range(&mut s, 0..m.body.len(), false, &mut out)?;
        out.retain(|t| t.kind != Kind::Placemarker);
        self.charge(&out)?;
        Ok(out)
    }

    /// Substitutes `m.body[range]` into `out`; `in_va_opt` stops `__VA_OPT__` nesting.
    fn subst_range(
        &mut self,
        s: &mut Subst,
        range: Range<usize>,
        in_va_opt: bool,
        out: &mut Vec<Token>,
    ) -> Result<(), LimitHit> {
        let body = &s.m.body;
        let mut i = range.start;
        while i < range.end {
            let t = &body[i];
            let next = body.get(i + 1).filter(|_| i + 1 < range.end);
            if s.m.params.is_some() && t.is_punct("#") {
                if let Some(p) = next.and_then(|n| s.m.param_index(n)) {
                    out.push(s.synthesized(Kind::Str, stringize(&s.args[p]), t.space_before));
                    i += 2;
                    continue;
                }
            }
            if let (true, Some(n)) = (t.is_punct("##"), next) {
                let rhs: Vec<Token> = match s.m.param_index(n) {
                    Some(p) => s.args[p].iter().map(|a| s.arg_token(a)).collect(),
                    None => vec![s.body_token(n)],
                };
                paste_onto(out, rhs, s);
                i += 2;
                continue;
            }
            if s.m.variadic && !in_va_opt && t.is_ident("__VA_OPT__") && next.is_some_and(|n| n.is_punct("(")) {
                if let Some(close) = matching_paren(body, i + 1, range.end) {
                    let start = out.len();
                    if s.args.last().is_some_and(|va| !va.is_empty()) {
                        self.subst_range(s, i + 2..close, true, out)?;
                    }
                    match out.get_mut(start) {
                        Some(first) => first.space_before = t.space_before,
                        None => out.push(s.synthesized(Kind::Placemarker, String::new(), false)),
                    }
                    i = close + 1;
                    continue;
                }
            }
            if let Some(p) = s.m.param_index(t) {
                // Operands of `##` are not expanded first.
                let pasting = next.is_some_and(|n| n.is_punct("##"));
                let tokens = if pasting { s.args[p].clone() } else { self.expanded_arg(s, p)? };
                // Charged with the whole body later; checked now so one body cannot balloon.
                self.check_room(out.len() + tokens.len())?;
                let start = out.len();
                out.extend(tokens.iter().map(|a| s.arg_token(a)));
                match out.get_mut(start) {
                    Some(first) => first.space_before = t.space_before,
                    None if pasting => out.push(s.synthesized(Kind::Placemarker, String::new(), false)),
                    None => {}
                }
                i += 1;
                continue;
            }
            out.push(s.body_token(t));
            i += 1;
        }
        Ok(())
    }

    fn expanded_arg(&mut self, s: &mut Subst, p: usize) -> Result<Vec<Token>, LimitHit> {
        if let Some(done) = &s.expanded[p] {
            return Ok(done.clone());
        }
        let tokens = self.expand_list(s.args[p].clone(), Some(s.id), s.depth + 1)?;
        s.expanded[p] = Some(tokens.clone());
        Ok(tokens)
    }
}

/// Applies `##` between the last token of `out` and `rhs`. Placemarkers
/// (empty arguments) on either side leave the other side as it is.
fn paste_onto(out: &mut Vec<Token>, rhs: Vec<Token>, s: &Subst) {
    let mut rhs = rhs.into_iter();
    let Some(first) = rhs.next() else { return };
    match out.pop() {
        Some(lhs) if lhs.kind != Kind::Placemarker => match paste(&lhs, &first) {
            Some((kind, text)) => out.push(s.synthesized(kind, text, lhs.space_before)),
            None => out.extend([lhs, first]),
        },
        _ => out.push(first),
    }
    out.extend(rhs);
}
