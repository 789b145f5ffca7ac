//! The driver: the stack of open files, the main copy loop, directives,
//! conditional groups and include resolution.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

use lockstep_diag::{Diagnostic, Severity};
use lockstep_source::{FileId, SourceDb, SourceFile, Span};

use crate::expand::Budget;
use crate::expr::evaluate;
use crate::lexer::{count_newlines, lex_str, spelling, Lexer, RawKind, RawToken};
use crate::macros::{parse_define, Builtin, Macro};
use crate::source_map::OutBuf;
use crate::token::{HideSet, Kind, Token};
use crate::{FileLoader, Options, Output};

const MAX_INCLUDE_DEPTH: usize = 200;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CondState {
    /// This group's text is being processed.
    Active,
    /// No group has been taken yet; a later `#elif`/`#else` may be.
    Seeking,
    /// A group was taken, or the whole conditional sits in skipped text.
    Done,
}

struct Cond {
    state: CondState,
    seen_else: bool,
    /// The `if`/`ifdef`/`ifndef` name, for "unterminated" errors.
    opened_at: Span,
}

/// Whether a file is wrapped in a classic `#ifndef X` include guard.
#[derive(Clone, Debug)]
enum Guard {
    /// Nothing significant seen yet.
    Start,
    /// Inside the `#ifndef X` that opened the file.
    Open(Rc<str>),
    /// The guard's `#endif` was seen and nothing significant after it.
    Closed(Rc<str>),
    No,
}

/// A `#line` in effect for the rest of a file.
struct LineMap {
    /// Physical line number that `#line` renames to `line`.
    physical: u32,
    line: u32,
    name: Option<String>,
    /// The file spans are redirected to, when the name is a known file.
    target: Option<FileId>,
}

struct FileState {
    id: FileId,
    lexer: Lexer,
    at_line_start: bool,
    conds: Vec<Cond>,
    guard: Guard,
    line_map: Option<LineMap>,
}

impl FileState {
    fn skipping(&self) -> bool {
        self.conds.last().is_some_and(|c| c.state != CondState::Active)
    }

    /// Something outside the guard's `#ifndef` means the file is not guarded.
    fn significant(&mut self) {
        if self.conds.is_empty() {
            self.guard = Guard::No;
        }
    }
}

pub(crate) struct Preprocessor<'a> {
    pub(crate) db: &'a mut SourceDb,
    main: FileId,
    options: &'a Options,
    loader: &'a dyn FileLoader,
    pub(crate) macros: HashMap<Rc<str>, Rc<Macro>>,
    files: Vec<FileState>,
    pub(crate) out: OutBuf,
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// Expanded tokens waiting to be rescanned, in reverse order.
    pub(crate) pending: Vec<Token>,
    /// Newlines consumed but not yet written (directive lines, skipped
    /// groups); written before the next file token.
    pub(crate) pending_newlines: u32,
    /// Newlines inside a logical line of text (a multi-line macro call, a
    /// spliced token); written after the next newline so the line stays whole.
    pub(crate) deferred_newlines: u32,
    /// The last thing written was a macro-generated token, so the next one
    /// may need a space to keep the two from lexing as one.
    pub(crate) last_from_macro: bool,
    /// While reading a macro's arguments the end of a file does not close it.
    pub(crate) collecting_args: bool,
    pub(crate) budget: Budget,
    pub(crate) counter: u32,
    once: HashSet<FileId>,
    guards: HashMap<FileId, Rc<str>>,
    /// Includes not found, each reported once: the file as written and its
    /// diagnostic's index.
    missing: Vec<(String, usize)>,
    /// Macros a conditional tested while undefined after an include went
    /// missing (which may have defined them): the name, where, and how many
    /// includes were missing by then.
    untested_guesses: Vec<(Rc<str>, Span, usize)>,
}

pub(crate) fn error(rule: &str, span: Span, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(rule, Severity::Error, span, message)
}

fn warning(rule: &str, span: Span, message: impl Into<String>) -> Diagnostic {
    Diagnostic::new(rule, Severity::Warning, span, message)
}

/// 1-based line containing a byte offset.
fn line_of(file: &SourceFile, offset: u32) -> u32 {
    let (mut lo, mut hi) = (1u32, file.line_count() as u32);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if file.line_start(mid) <= offset {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// Removes `.` and resolves `..` lexically so one file has one path.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.components().next_back(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn is_separator_needed(prev: u8, next: u8) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    const JOINING: &[u8] = b"+-*/%<>=&|^!:#.";
    (word(prev) && (word(next) || next == b'"' || next == b'\''))
        || (prev == b'.' && next.is_ascii_digit())
        || (prev.is_ascii_digit() && next == b'.')
        || (JOINING.contains(&prev) && JOINING.contains(&next) && next != b'!')
}

impl<'a> Preprocessor<'a> {
    pub(crate) fn new(db: &'a mut SourceDb, main: FileId, options: &'a Options, loader: &'a dyn FileLoader) -> Self {
        let mut pp = Preprocessor {
            db,
            main,
            options,
            loader,
            macros: HashMap::default(),
            files: Vec::new(),
            out: OutBuf::new(),
            diagnostics: Vec::new(),
            pending: Vec::new(),
            pending_newlines: 0,
            deferred_newlines: 0,
            last_from_macro: false,
            collecting_args: false,
            budget: Budget::new(Span::new(main, 0, 0)),
            counter: 0,
            once: HashSet::default(),
            guards: HashMap::default(),
            missing: Vec::new(),
            untested_guesses: Vec::new(),
        };
        for (name, b) in [("__FILE__", Builtin::File), ("__LINE__", Builtin::Line), ("__COUNTER__", Builtin::Counter)] {
            pp.macros.insert(name.into(), Rc::new(Macro::builtin(name, b)));
        }
        pp.define_command_line();
        pp.push_file(main);
        pp
    }

    fn define_command_line(&mut self) {
        let at = Span::new(self.main, 0, 0);
        for (name, value) in &self.options.defines {
            let text = format!("{name} {}", value.as_deref().unwrap_or("1"));
            let tokens: Vec<Token> = lex_str(&text)
                .into_iter()
                .map(|(kind, text, space_before)| Token {
                    kind: Kind::from_raw(kind),
                    text: text.into(),
                    span: at,
                    space_before,
                    exact: false,
                    hide: HideSet::default(),
                })
                .collect();
            match parse_define(&tokens, None) {
                Ok(m) => {
                    self.macros.insert(m.name.clone(), Rc::new(m));
                }
                Err((msg, _)) => {
                    self.diagnostics.push(error("malformed-directive", at, format!("invalid -D `{name}`: {msg}")))
                }
            }
        }
    }

    fn push_file(&mut self, id: FileId) {
        let text = self.db.file(id).text.clone();
        self.files.push(FileState {
            id,
            lexer: Lexer::new(text),
            at_line_start: true,
            conds: Vec::new(),
            guard: Guard::Start,
            line_map: None,
        });
    }

    pub(crate) fn run(mut self) -> Output {
        loop {
            if let Some(tok) = self.pending.pop() {
                self.top_token(tok);
                continue;
            }
            if self.copy_plain_run() {
                continue;
            }
            let Some(raw) = self.next_raw() else { break };
            self.flush_newlines();
            if raw.kind == RawKind::Ident {
                let fs = self.files.last().expect("next_raw returned a token");
                let text = fs.lexer.text();
                let is_macro = if raw.spliced {
                    expands(&self.macros, spelling(text, &raw).as_ref())
                } else {
                    expands(&self.macros, &text[raw.lo as usize..raw.hi as usize])
                };
                if is_macro {
                    let tok = self.file_token(raw, false);
                    self.budget = Budget::new(tok.span);
                    self.top_token(tok);
                    continue;
                }
            }
            self.emit_raw(raw);
        }
        self.pending_newlines += self.deferred_newlines;
        self.flush_newlines();
        self.explain_missing_includes();
        let (text, map) = self.out.finish(self.main);
        Output { text, map, diagnostics: self.diagnostics }
    }

    /// Copies plain text (no macro names, comments, literals or directives)
    /// straight through: the common case, without per-token work.
    fn copy_plain_run(&mut self) -> bool {
        if self.last_from_macro || self.deferred_newlines > 0 {
            return false;
        }
        let Some(fs) = self.files.last() else { return false };
        if fs.line_map.is_some() || fs.skipping() {
            return false;
        }
        let macros = &self.macros;
        let run = fs.lexer.scan_plain(fs.at_line_start, |name| expands(macros, name));
        let start = fs.lexer.pos();
        if run.end == start {
            return false;
        }
        self.flush_newlines();
        let fs = self.files.last_mut().expect("checked above");
        self.out.copy(fs.id, start as u32, &fs.lexer.text()[start..run.end], None);
        fs.lexer.reset(run.end);
        fs.at_line_start = run.at_line_start;
        if run.significant {
            fs.significant();
        }
        true
    }

    /// Expands a token at the top level, or writes it.
    fn top_token(&mut self, tok: Token) {
        if tok.kind == Kind::Ident {
            match self.expand_top(&tok) {
                Ok(Some(mut tokens)) => {
                    if let Some(first) = tokens.first_mut() {
                        first.space_before = tok.space_before;
                    }
                    self.pending.extend(tokens.into_iter().rev());
                    return;
                }
                Ok(None) => {}
                Err(_) => {
                    self.pending.clear();
                    return;
                }
            }
        }
        self.emit_token(&tok);
    }

    fn flush_newlines(&mut self) {
        if self.pending_newlines > 0 {
            self.out.filler(&"\n".repeat(self.pending_newlines as usize));
            self.pending_newlines = 0;
            self.last_from_macro = false;
        }
    }

    /// Writes a macro-generated (or macro-handled) token.
    fn emit_token(&mut self, tok: &Token) {
        let next = tok.text.as_bytes().first().copied().unwrap_or(b' ');
        if tok.space_before || self.out.last_byte().is_some_and(|prev| is_separator_needed(prev, next)) {
            self.out.filler(" ");
        }
        if tok.exact {
            self.out.copy(tok.span.file, tok.span.lo, &tok.text, tok.span.expansion);
        } else {
            self.out.fixed(tok.span, &tok.text);
        }
        self.last_from_macro = true;
    }

    /// Writes a token of the current file as it is (comments as spaces).
    fn emit_raw(&mut self, raw: RawToken) {
        let Preprocessor { files, out, db, .. } = self;
        let fs = files.last().expect("emitting from an open file");
        let text = fs.lexer.text();
        let src = &text[raw.lo as usize..raw.hi as usize];
        if self.last_from_macro && !raw.kind.is_trivia() && raw.kind != RawKind::Newline {
            let next = src.as_bytes().first().copied().unwrap_or(b' ');
            if out.last_byte().is_some_and(|prev| is_separator_needed(prev, next)) {
                out.filler(" ");
            }
        }
        self.last_from_macro = false;
        let span = translate(db, fs, raw.lo, raw.hi);
        match raw.kind {
            // A newline is whitespace outside directives, so a splice can
            // become one and keep the following lines where they were.
            RawKind::Splice => out.filler("\n"),
            RawKind::Comment => {
                let blank: String = src.bytes().map(|b| if b == b'\n' { '\n' } else { ' ' }).collect();
                out.copy(span.file, span.lo, &blank, None);
            }
            _ if raw.spliced => {
                out.fixed(span, &spelling(text, &raw));
                self.deferred_newlines += count_newlines(src);
            }
            RawKind::Newline => {
                out.copy(span.file, span.lo, src, None);
                out.filler(&"\n".repeat(std::mem::take(&mut self.deferred_newlines) as usize));
            }
            _ => out.copy(span.file, span.lo, src, None),
        }
    }

    /// The next raw token from the current file, reporting unterminated comments.
    fn lex(&mut self) -> RawToken {
        let fs = self.files.last_mut().expect("lexing an open file");
        let t = fs.lexer.next();
        if t.kind == RawKind::Comment && t.unterminated {
            let span = Span::new(fs.id, t.lo, t.lo + 2);
            self.diagnostics.push(error(
                "unterminated-comment",
                span,
                "unterminated block comment; the rest of the file is a comment",
            ));
        }
        t
    }

    /// The next raw token of active text, after directives and skipped
    /// groups. None when every file is done or, while collecting macro
    /// arguments, at the end of the current file.
    pub(crate) fn next_raw(&mut self) -> Option<RawToken> {
        loop {
            let fs = self.files.last_mut()?;
            if fs.skipping() {
                // Skipped text matters only for its directives and newlines.
                let run = fs.lexer.scan_plain(fs.at_line_start, |_| false);
                if run.end > fs.lexer.pos() {
                    fs.lexer.reset(run.end);
                    fs.at_line_start = run.at_line_start;
                    self.pending_newlines += run.newlines;
                    continue;
                }
            }
            let tok = self.lex();
            let fs = self.files.last_mut().expect("checked above");
            let skipping = fs.skipping();
            match tok.kind {
                RawKind::Eof if self.collecting_args => return None,
                RawKind::Eof => self.end_file(),
                RawKind::Newline => {
                    fs.at_line_start = true;
                    if !skipping {
                        return Some(tok);
                    }
                    self.pending_newlines += 1;
                }
                RawKind::Punct if fs.at_line_start && &fs.lexer.text()[tok.lo as usize..tok.hi as usize] == "#" => {
                    self.directive(tok)
                }
                kind => {
                    if !kind.is_trivia() {
                        fs.at_line_start = false;
                    }
                    if !skipping {
                        if !kind.is_trivia() {
                            fs.significant();
                        }
                        return Some(tok);
                    }
                    if kind == RawKind::Comment || kind == RawKind::Splice || tok.spliced {
                        self.pending_newlines += count_newlines(&fs.lexer.text()[tok.lo as usize..tok.hi as usize]);
                    }
                }
            }
        }
    }

    fn end_file(&mut self) {
        let Some(fs) = self.files.pop() else { return };
        for c in &fs.conds {
            self.diagnostics.push(error(
                "unterminated-conditional",
                c.opened_at,
                "conditional directive is not terminated by #endif in this file",
            ));
        }
        if let (Guard::Closed(name), true) = (&fs.guard, fs.conds.is_empty()) {
            self.guards.insert(fs.id, name.clone());
        }
    }

    /// A file token as the expander sees it.
    pub(crate) fn file_token(&self, raw: RawToken, space_before: bool) -> Token {
        let fs = self.files.last().expect("token from an open file");
        Token {
            kind: Kind::from_raw(raw.kind),
            text: spelling(fs.lexer.text(), &raw).into(),
            span: translate(self.db, fs, raw.lo, raw.hi),
            space_before,
            exact: !raw.spliced,
            hide: HideSet::default(),
        }
    }

    /// The next token from the file for a macro's arguments; newlines in
    /// between are written later.
    pub(crate) fn file_next_token(&mut self) -> Option<Token> {
        let mut space = false;
        loop {
            let raw = self.next_raw()?;
            match raw.kind {
                RawKind::Newline => self.pending_newlines += 1,
                k if k.is_trivia() => {
                    let fs = self.files.last().expect("token from an open file");
                    self.pending_newlines += count_newlines(&fs.lexer.text()[raw.lo as usize..raw.hi as usize]);
                }
                _ => return Some(self.file_token(raw, space)),
            }
            space = true;
        }
    }

    /// Whether the next significant token in the file is `(`, without
    /// consuming anything. A directive line in between means no.
    pub(crate) fn file_peek_lparen(&mut self) -> bool {
        let Some(fs) = self.files.last_mut() else { return false };
        let start = fs.lexer.pos();
        let found = loop {
            let t = fs.lexer.next();
            match t.kind {
                RawKind::Newline => {}
                k if k.is_trivia() => {}
                _ => break t.kind == RawKind::Punct && &fs.lexer.text()[t.lo as usize..t.hi as usize] == "(",
            }
        };
        fs.lexer.reset(start);
        found
    }

    /// Reads the rest of a directive line as tokens with physical spans.
    /// Returns the tokens, where the line ends, and how many newlines it spans.
    fn read_line(&mut self) -> (Vec<Token>, u32, u32) {
        let mut tokens = Vec::new();
        let mut space = false;
        let mut newlines = 0;
        loop {
            let raw = self.lex();
            let fs = self.files.last_mut().expect("reading an open file");
            match raw.kind {
                RawKind::Eof => return (tokens, raw.lo, newlines),
                RawKind::Newline => {
                    fs.at_line_start = true;
                    return (tokens, raw.lo, newlines + 1);
                }
                k if k.is_trivia() => {
                    newlines += count_newlines(&fs.lexer.text()[raw.lo as usize..raw.hi as usize]);
                    space = true;
                }
                _ => {
                    let text = fs.lexer.text();
                    tokens.push(Token {
                        kind: Kind::from_raw(raw.kind),
                        text: spelling(text, &raw).into(),
                        span: Span::new(fs.id, raw.lo, raw.hi),
                        space_before: space,
                        exact: !raw.spliced,
                        hide: HideSet::default(),
                    });
                    space = false;
                }
            }
        }
    }

    fn directive(&mut self, hash: RawToken) {
        let (line, end, newlines) = self.read_line();
        let fs = self.files.last_mut().expect("directive in an open file");
        let file = fs.id;
        let skipping = fs.skipping();
        let whole = Span::new(file, hash.lo, end);
        let Some(name) = line.first() else {
            self.pending_newlines += newlines;
            return;
        };
        let rest = &line[1..];
        let kw = if name.kind == Kind::Number { "line" } else { &*name.text };
        let args = if name.kind == Kind::Number { &line[..] } else { rest };
        let conditional = matches!(kw, "if" | "ifdef" | "ifndef" | "elif" | "elifdef" | "elifndef" | "else" | "endif");
        if !conditional && !skipping {
            fs.significant();
        }
        match kw {
            "if" | "ifdef" | "ifndef" => self.open_conditional(kw, name.span, rest, skipping),
            "elif" | "elifdef" | "elifndef" => self.elif(kw, name.span, rest),
            "else" => self.else_(name.span),
            "endif" => self.endif(name.span),
            _ if skipping => {}
            "define" => match parse_define(rest, rest.first().map(|t| t.span)) {
                Ok(m) => {
                    self.macros.insert(m.name.clone(), Rc::new(m));
                }
                Err((msg, at)) => self.diagnostics.push(error("malformed-directive", at.unwrap_or(name.span), msg)),
            },
            "undef" => match rest.first() {
                Some(t) if t.kind == Kind::Ident => {
                    self.macros.remove(&*t.text);
                }
                _ => self.diagnostics.push(error("malformed-directive", name.span, "#undef needs a macro name")),
            },
            "include" | "include_next" | "import" => {
                // The included file's first token writes this line's newlines.
                self.pending_newlines += newlines;
                self.include(name.span, rest);
                return;
            }
            "line" => self.line(name.span, args),
            "error" | "warning" => {
                let message = format!("#{kw}: {}", spell_line(rest));
                self.diagnostics.push(if kw == "error" {
                    error("preprocessor-error", whole, message)
                } else {
                    warning("preprocessor-error", whole, message)
                });
            }
            "pragma" => {
                if rest.first().is_some_and(|t| t.is_ident("once")) {
                    self.once.insert(file);
                } else if self.options.ignored_directives.contains(&"pragma") {
                    // The language's grammar takes no pragma lines (GLSL's
                    // `#pragma use_vulkan_memory_model`): dropped.
                } else {
                    self.flush_newlines();
                    let fs = self.files.last().expect("directive in an open file");
                    let text = &fs.lexer.text()[hash.lo as usize..end as usize];
                    let span = translate(self.db, fs, hash.lo, end);
                    self.out.copy(span.file, span.lo, text, None);
                    self.last_from_macro = false;
                }
            }
            _ if self.options.ignored_directives.contains(&kw) => {}
            _ => self.diagnostics.push(warning(
                "unknown-directive",
                name.span,
                format!("unknown preprocessor directive `#{}`; ignored", name.text),
            )),
        }
        self.pending_newlines += newlines;
    }

    fn current(&mut self) -> &mut FileState {
        self.files.last_mut().expect("directive in an open file")
    }

    fn open_conditional(&mut self, kw: &str, at: Span, rest: &[Token], skipping: bool) {
        let state = if skipping {
            CondState::Done
        } else {
            let taken = match kw {
                "if" => self.eval_if(at, rest),
                _ => self.ifdef_test(kw == "ifdef", at, rest),
            };
            if taken {
                CondState::Active
            } else {
                CondState::Seeking
            }
        };
        let fs = self.current();
        let guard = match (&fs.guard, kw, rest.first(), fs.conds.is_empty()) {
            (Guard::Start, "ifndef", Some(name), true) => Guard::Open(name.text.clone()),
            (g, _, _, false) => g.clone(),
            _ => Guard::No,
        };
        fs.guard = guard;
        fs.conds.push(Cond { state, seen_else: false, opened_at: at });
    }

    /// Notes that a conditional read macro `name` while it was undefined:
    /// a missing include may have been meant to define it.
    fn tested_undefined(&mut self, name: &Rc<str>, at: Span) {
        if !self.missing.is_empty() && !self.macros.contains_key(name) {
            self.untested_guesses.push((name.clone(), at, self.missing.len()));
        }
    }

    /// Each missing include's diagnostic lists the macros tested undefined
    /// after it: the branches there were chosen without it.
    fn explain_missing_includes(&mut self) {
        for (i, (_, diag)) in self.missing.iter().enumerate() {
            let mut shown: Vec<String> = Vec::new();
            for (name, at, missing_then) in &self.untested_guesses {
                if *missing_then > i && !shown.iter().any(|s| s.starts_with(&format!("`{name}`"))) {
                    let line = line_of(self.db.file(at.file), at.lo);
                    shown.push(format!("`{name}` (line {line})"));
                }
            }
            if shown.is_empty() {
                continue;
            }
            let more = shown.len().saturating_sub(5);
            shown.truncate(5);
            let list = shown.join(", ") + &if more > 0 { format!(" and {more} more") } else { String::new() };
            let d = &mut self.diagnostics[*diag];
            d.notes.push(format!(
                "macros tested later while undefined, which it may define: {list}; the branches there were chosen without it (define them with -D, or add the folder with -I)"
            ));
        }
    }

    /// `#ifdef NAME` / `#ifndef NAME`: whether the group is taken.
    fn ifdef_test(&mut self, want_defined: bool, at: Span, rest: &[Token]) -> bool {
        match rest.first() {
            Some(t) if t.kind == Kind::Ident => {
                let name = t.text.clone();
                self.tested_undefined(&name, t.span);
                self.macros.contains_key(&*name) == want_defined
            }
            _ => {
                self.diagnostics.push(error("malformed-directive", at, "expected a macro name"));
                false
            }
        }
    }

    fn elif(&mut self, kw: &str, at: Span, rest: &[Token]) {
        let Some(&Cond { state, seen_else, .. }) = self.current().conds.last() else {
            self.diagnostics.push(error("malformed-directive", at, format!("#{kw} without #if")));
            return;
        };
        if seen_else {
            self.diagnostics.push(error("malformed-directive", at, format!("#{kw} after #else")));
        }
        let state = match state {
            CondState::Active | CondState::Done => CondState::Done,
            CondState::Seeking => {
                let taken = match kw {
                    "elif" => self.eval_if(at, rest),
                    _ => self.ifdef_test(kw == "elifdef", at, rest),
                };
                if taken {
                    CondState::Active
                } else {
                    CondState::Seeking
                }
            }
        };
        let fs = self.current();
        if fs.conds.len() == 1 {
            fs.guard = Guard::No;
        }
        if let Some(c) = fs.conds.last_mut() {
            c.state = state;
        }
    }

    fn else_(&mut self, at: Span) {
        let fs = self.current();
        if fs.conds.len() == 1 {
            fs.guard = Guard::No;
        }
        let Some(c) = fs.conds.last_mut() else {
            self.diagnostics.push(error("malformed-directive", at, "#else without #if"));
            return;
        };
        let repeated = c.seen_else;
        c.seen_else = true;
        c.state = match c.state {
            CondState::Seeking => CondState::Active,
            CondState::Active | CondState::Done => CondState::Done,
        };
        if repeated {
            self.diagnostics.push(error("malformed-directive", at, "#else after #else"));
        }
    }

    fn endif(&mut self, at: Span) {
        let fs = self.current();
        if fs.conds.pop().is_none() {
            self.diagnostics.push(error("malformed-directive", at, "#endif without #if"));
            return;
        }
        if let (true, Guard::Open(name)) = (fs.conds.is_empty(), &fs.guard) {
            fs.guard = Guard::Closed(name.clone());
        }
    }

    /// Evaluates an `#if`/`#elif` expression; errors make it false.
    fn eval_if(&mut self, at: Span, rest: &[Token]) -> bool {
        for (i, t) in rest.iter().enumerate() {
            let after_defined = i > 0 && (rest[i - 1].is_ident("defined") || (rest[i - 1].is_punct("(") && i > 1 && rest[i - 2].is_ident("defined")));
            if t.kind == Kind::Ident && (after_defined || !t.is_ident("defined")) && !t.is_ident("true") && !t.is_ident("false") {
                let name = t.text.clone();
                self.tested_undefined(&name, t.span);
            }
        }
        let tokens = match self.replace_defined(rest) {
            Ok(t) => t,
            Err(span) => {
                self.diagnostics.push(error("malformed-directive", span, "`defined` needs a macro name"));
                return false;
            }
        };
        self.budget = Budget::new(at);
        let Ok(tokens) = self.expand_list(tokens, None, 0) else { return false };
        let (value, errors) = evaluate(&tokens);
        for e in errors {
            let rule = if e.malformed { "malformed-directive" } else { "preprocessor-error" };
            // Tokens from macro bodies point at the use site, which is on this line.
            self.diagnostics.push(error(rule, e.span.unwrap_or(at), e.message));
        }
        value
    }

    /// Replaces `defined X` and `defined(X)` by 1 or 0 before expansion.
    fn replace_defined(&self, tokens: &[Token]) -> Result<Vec<Token>, Span> {
        let mut out = Vec::with_capacity(tokens.len());
        let mut i = 0;
        while i < tokens.len() {
            let t = &tokens[i];
            if !t.is_ident("defined") {
                out.push(t.clone());
                i += 1;
                continue;
            }
            let parens = tokens.get(i + 1).is_some_and(|n| n.is_punct("("));
            let name_at = i + 1 + parens as usize;
            let name = tokens.get(name_at).filter(|n| n.kind == Kind::Ident).ok_or(t.span)?;
            if parens && !tokens.get(name_at + 1).is_some_and(|n| n.is_punct(")")) {
                return Err(t.span);
            }
            let value = if self.macros.contains_key(&*name.text) { "1" } else { "0" };
            out.push(Token { kind: Kind::Number, text: value.into(), exact: false, ..t.clone() });
            i = name_at + 1 + parens as usize;
        }
        Ok(out)
    }

    fn include(&mut self, at: Span, rest: &[Token]) {
        if self.collecting_args {
            self.diagnostics.push(error(
                "malformed-directive",
                at,
                "#include inside macro arguments is not supported; skipped",
            ));
            return;
        }
        let Some((name, quoted, name_span)) = self.header_name(at, rest) else {
            self.diagnostics.push(error("malformed-directive", at, "#include expects \"FILE\" or <FILE>"));
            return;
        };
        let Some(id) = self.resolve_include(&name, quoted) else {
            let shown = if quoted { format!("\"{name}\"") } else { format!("<{name}>") };
            if !self.missing.iter().any(|(m, _)| *m == shown) {
                self.missing.push((shown.clone(), self.diagnostics.len()));
                self.diagnostics.push(
                    warning("include-not-found", name_span, format!("cannot find include file {shown}"))
                        .with_primary_label("not found in the including file's folder or any -I folder"),
                );
            }
            return;
        };
        if self.once.contains(&id) || self.guards.get(&id).is_some_and(|g| self.macros.contains_key(g)) {
            return;
        }
        if let Some(open) = self.files.iter().find(|f| f.id == id) {
            // A file re-entered inside its own defined guard expands to nothing.
            if let Guard::Open(g) = &open.guard {
                if self.macros.contains_key(g) {
                    return;
                }
            }
            let path = self.db.file(id).path.display().to_string();
            self.diagnostics.push(warning(
                "include-cycle",
                name_span,
                format!("`{path}` includes itself through this #include; skipped"),
            ));
            return;
        }
        if self.files.len() >= MAX_INCLUDE_DEPTH {
            self.diagnostics.push(error(
                "preprocessor-error",
                name_span,
                format!("#include nested more than {MAX_INCLUDE_DEPTH} levels deep; skipped"),
            ));
            return;
        }
        self.push_file(id);
    }

    /// The file name of an `#include` and whether it was quoted; the line
    /// is macro-expanded when it is neither form.
    fn header_name(&mut self, at: Span, rest: &[Token]) -> Option<(String, bool, Span)> {
        let expanded;
        let tokens = if rest.first().is_some_and(|t| t.kind == Kind::Str || t.is_punct("<")) {
            rest
        } else {
            self.budget = Budget::new(at);
            expanded = self.expand_list(rest.to_vec(), None, 0).ok()?;
            &expanded
        };
        let first = tokens.first()?;
        if first.kind == Kind::Str {
            let name = first.text.strip_prefix('"')?.strip_suffix('"')?;
            return Some((name.to_string(), true, first.span));
        }
        let close = tokens.iter().position(|t| t.is_punct(">"))?;
        let name = spell_line(&tokens[1..close]);
        Some((name, false, first.span.to(tokens[close].span)))
    }

    fn resolve_include(&mut self, name: &str, quoted: bool) -> Option<FileId> {
        let current = self.files.last().map(|f| f.id).unwrap_or(self.main);
        let here = self.db.file(current).path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut dirs: Vec<&Path> = self.options.include_dirs.iter().map(PathBuf::as_path).collect();
        if quoted {
            dirs.insert(0, &here);
        } else {
            dirs.push(&here);
        }
        for dir in dirs {
            let path = normalize(&dir.join(name));
            if let Some(id) = self.db.find(&path) {
                return Some(id);
            }
            if let Ok(bytes) = self.loader.load(&path) {
                return Some(self.db.add_bytes(path, &bytes));
            }
        }
        None
    }

    /// `#line N ["file"]` and the GNU form `# N "file" flags`.
    fn line(&mut self, at: Span, args: &[Token]) {
        let expanded;
        let tokens = if args.first().is_some_and(|t| t.kind == Kind::Number) {
            args
        } else {
            self.budget = Budget::new(at);
            let Ok(t) = self.expand_list(args.to_vec(), None, 0) else { return };
            expanded = t;
            &expanded
        };
        let number = tokens.first().filter(|t| t.kind == Kind::Number).and_then(|t| t.text.parse::<u32>().ok());
        let Some(line) = number else {
            self.diagnostics.push(error("malformed-directive", at, "#line expects a line number"));
            return;
        };
        let name = tokens.get(1).filter(|t| t.kind == Kind::Str).map(|t| {
            let inner = t.text.trim_start_matches('"').trim_end_matches('"');
            inner.replace("\\\\", "\\").replace("\\\"", "\"")
        });
        let target = match &name {
            Some(n) => self.find_line_target(n),
            None => self.current().line_map.as_ref().and_then(|m| m.target),
        };
        let fs = self.files.last().expect("directive in an open file");
        let name = name.or_else(|| fs.line_map.as_ref().and_then(|m| m.name.clone()));
        // The line after the directive is the one that gets number `line`.
        let physical = line_of(self.db.file(fs.id), fs.lexer.pos() as u32);
        self.current().line_map = Some(LineMap { physical, line, name, target });
    }

    fn find_line_target(&mut self, name: &str) -> Option<FileId> {
        let path = normalize(Path::new(name));
        if let Some(id) = self.db.find(&path) {
            return Some(id);
        }
        let bytes = self.loader.load(&path).ok()?;
        Some(self.db.add_bytes(path, &bytes))
    }

    /// The value of a built-in macro used at `tok`.
    pub(crate) fn builtin_token(&mut self, builtin: Builtin, tok: &Token) -> Token {
        let (kind, text) = match builtin {
            Builtin::Line => (Kind::Number, self.presumed_line(tok.span).to_string()),
            Builtin::File => {
                let fs = self.files.last().expect("expanding in an open file");
                let name = match fs.line_map.as_ref().and_then(|m| m.name.clone()) {
                    Some(n) => n,
                    None => self.db.file(fs.id).path.display().to_string(),
                };
                (Kind::Str, format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\"")))
            }
            Builtin::Counter => {
                self.counter += 1;
                (Kind::Number, (self.counter - 1).to_string())
            }
        };
        Token { kind, text: text.into(), exact: false, ..tok.clone() }
    }

    fn presumed_line(&self, span: Span) -> u32 {
        let line = line_of(self.db.file(span.file), span.lo);
        match self.files.last() {
            // Spans redirected by `#line` already carry the presumed line.
            Some(FileState { id, line_map: Some(m), .. }) if *id == span.file && m.target.is_none() => {
                (m.line + line).saturating_sub(m.physical)
            }
            _ => line,
        }
    }
}

/// Where a physical range of the current file points, after `#line`.
fn translate(db: &SourceDb, fs: &FileState, lo: u32, hi: u32) -> Span {
    let Some(LineMap { physical, line, target: Some(target), .. }) = fs.line_map else {
        return Span::new(fs.id, lo, hi);
    };
    let file = db.file(fs.id);
    let phys_line = line_of(file, lo);
    let column = lo - file.line_start(phys_line);
    let target_line = (line + phys_line).saturating_sub(physical).max(1);
    let dest = db.file(target);
    if target_line as usize > dest.line_count() {
        let end = dest.text.len() as u32;
        return Span::new(target, end, end);
    }
    let start = dest.line_start(target_line);
    let len = dest.line_text(target_line).len() as u32;
    let new_lo = start + column.min(len);
    Span::new(target, new_lo, (new_lo + (hi - lo)).min(start + len))
}

/// Tokens spelled back as text, with single spaces where they had whitespace.
fn spell_line(tokens: &[Token]) -> String {
    let mut s = String::new();
    for (i, t) in tokens.iter().enumerate() {
        if i > 0 && t.space_before {
            s.push(' ');
        }
        s.push_str(&t.text);
    }
    s
}

/// Whether an identifier is rewritten at the top level: a macro, or a
/// pragma operator (`_Pragma(…)`, `__pragma(…)`), which is removed.
fn expands(macros: &HashMap<Rc<str>, Rc<Macro>>, name: &str) -> bool {
    macros.contains_key(name) || matches!(name, "_Pragma" | "__pragma")
}
