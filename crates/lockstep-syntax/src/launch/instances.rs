//! The template arguments a kernel's host-side mention stands for, once the
//! host templates around it are instantiated: `k<T, N><<<…>>>` inside
//! `template <typename T, int N> void run(…)` runs as `k<float, 16>` where
//! the file instantiates `run<float, 16>` (explicitly, by a call, or by
//! naming it as a value), through any chain of such templates and the
//! `constexpr` locals each passes on. What cannot be followed stays as
//! written: the lowering reads a name it cannot evaluate as unknown.

use super::Scanner;
use crate::host::Kind;
use rustc_hash::FxHashMap;
use std::ops::Range;

/// Host templates followed at most this deep from a kernel's mention.
const MAX_CHAIN: u32 = 4;

/// Argument lists one mention may stand for, at most; past it the
/// parameters of the template around it stay as written.
const MAX_ALTERNATIVES: usize = 64;

/// Places a host template is instantiated at that are read, at most; a
/// template named more often keeps its parameters as written.
const MAX_SITES: usize = 256;

/// One argument being resolved: text, or a parameter of the host template
/// around the mention (by its place in that template's list).
#[derive(Clone)]
enum Piece {
    Text(String),
    Param(usize),
}

/// A function template around a mention.
struct Template {
    /// The token of the function's name in its definition.
    name: usize,
    /// Its parameters' names, in order (empty for an unnamed one).
    params: Vec<String>,
}

/// Resolves mentions in one text; keeps what it has found per template.
pub(super) struct Instances<'s, 't> {
    s: &'s Scanner<'t>,
    /// Every mention `name<` of each name, by token, in text order.
    with_arguments: FxHashMap<&'t str, Vec<usize>>,
    /// Every assignment `name =` of each name, by token, in text order.
    assigned: FxHashMap<&'t str, Vec<usize>>,
    /// For each closing bracket, the index of its opening one.
    open: Vec<Option<usize>>,
    /// Argument lists of each function template (by its name token) as
    /// the file instantiates it.
    instantiated: FxHashMap<usize, Vec<Vec<String>>>,
}

impl<'s, 't> Instances<'s, 't> {
    pub(super) fn new(s: &'s Scanner<'t>) -> Instances<'s, 't> {
        let mut with_arguments: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        let mut assigned: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        let mut open = vec![None; s.toks.len()];
        for (i, t) in s.toks.iter().enumerate() {
            if t.kind == Kind::Ident && s.is(i + 1, "<") {
                with_arguments.entry(s.str(i)).or_default().push(i);
            }
            if t.kind == Kind::Ident && s.is(i + 1, "=") && !s.is(i + 2, "=") {
                assigned.entry(s.str(i)).or_default().push(i);
            }
            if let Some(c) = s.close[i] {
                open[c] = Some(i);
            }
        }
        Instances { s, with_arguments, assigned, open, instantiated: FxHashMap::default() }
    }

    /// The argument lists the mention `name<args>` at token `at` stands
    /// for, each joined by commas; empty when it has no arguments.
    pub(super) fn of_mention(&mut self, at: usize) -> Vec<String> {
        let Some(args) = self.arguments_at(at) else { return Vec::new() };
        self.resolve(&args, at, 0).into_iter().map(|list| list.join(", ")).collect()
    }

    /// The arguments of the template named at `at` (`<` follows it), as token ranges.
    fn arguments_at(&self, at: usize) -> Option<Vec<Range<usize>>> {
        let end = self.s.after_template_arguments(at + 1)?;
        let inner = at + 2..end - 1;
        let mut parts = Vec::new();
        let (mut from, mut depth) = (inner.start, 0i32);
        let mut i = inner.start;
        while i < inner.end {
            match self.s.str(i) {
                "<" => depth += 1,
                ">" => depth -= 1,
                "," if depth == 0 => {
                    parts.push(from..i);
                    from = i + 1;
                }
                _ => {}
            }
            i = self.s.skip(i)?;
        }
        if from < inner.end {
            parts.push(from..inner.end);
        }
        Some(parts)
    }

    /// The argument lists `args`, written at token `at`, stand for.
    fn resolve(&mut self, args: &[Range<usize>], at: usize, depth: u32) -> Vec<Vec<String>> {
        let around = self.template_around(at);
        let params: Vec<String> = around.as_ref().map(|t| t.params.clone()).unwrap_or_default();
        let pieces: Vec<Vec<Piece>> = args.iter().map(|r| self.pieces(r.clone(), at, &params, 0)).collect();
        let mentions_params = pieces.iter().flatten().any(|p| matches!(p, Piece::Param(_)));
        let (Some(around), true) = (around, mentions_params) else { return vec![pieces.iter().map(|p| spelled(p, &params, None)).collect()] };
        let bindings = if depth < MAX_CHAIN { self.instantiations(around.name, depth + 1) } else { Vec::new() };
        if bindings.is_empty() || bindings.len() > MAX_ALTERNATIVES {
            return vec![pieces.iter().map(|p| spelled(p, &around.params, None)).collect()];
        }
        let mut out: Vec<Vec<String>> = Vec::new();
        for binding in &bindings {
            let list: Vec<String> = pieces.iter().map(|p| spelled(p, &around.params, Some(binding))).collect();
            if !out.contains(&list) {
                out.push(list);
            }
        }
        out
    }

    /// The argument lists the file instantiates the function template
    /// named at `name` with: explicit instantiations (not `extern` ones,
    /// which say another file has them), calls and mentions as values.
    fn instantiations(&mut self, name: usize, depth: u32) -> Vec<Vec<String>> {
        if let Some(known) = self.instantiated.get(&name) {
            return known.clone();
        }
        // A template that reaches itself is followed no further.
        self.instantiated.insert(name, Vec::new());
        let sites: Vec<usize> = self.with_arguments.get(self.s.str(name)).cloned().unwrap_or_default();
        let mut out: Vec<Vec<String>> = Vec::new();
        let sites: Vec<usize> = sites.into_iter().filter(|&j| j != name && !self.declared_extern(j)).collect();
        if sites.len() > MAX_SITES {
            return Vec::new();
        }
        for site in sites {
            let Some(args) = self.arguments_at(site) else { continue };
            for list in self.resolve(&args, site, depth) {
                if !out.contains(&list) {
                    out.push(list);
                }
            }
            if out.len() > MAX_ALTERNATIVES {
                break;
            }
        }
        self.instantiated.insert(name, out.clone());
        out
    }

    /// Whether the mention at `j` is in an `extern template` declaration.
    fn declared_extern(&self, j: usize) -> bool {
        let mut k = j;
        while k > 0 && !matches!(self.s.str(k - 1), ";" | "{" | "}") {
            k -= 1;
            if self.s.is(k, "extern") && self.s.is(k + 1, "template") {
                return true;
            }
        }
        false
    }

    /// The tokens of `r` as pieces: the template's parameters marked, and
    /// `constexpr` locals declared before `at` replaced by their values.
    fn pieces(&self, r: Range<usize>, at: usize, params: &[String], depth: u32) -> Vec<Piece> {
        let s = self.s;
        let mut out = Vec::new();
        for k in r.clone() {
            if k > r.start && s.toks[k - 1].end < s.toks[k].start {
                out.push(Piece::Text(" ".to_string()));
            }
            let word = s.str(k);
            let qualified = k > 0 && matches!(s.str(k - 1), "." | "->" | "::");
            if s.toks[k].kind != Kind::Ident || qualified {
                out.push(Piece::Text(word.to_string()));
            } else if let Some(p) = params.iter().position(|p| p == word) {
                out.push(Piece::Param(p));
            } else if let Some(value) = (depth < MAX_CHAIN).then(|| self.local_constant(k, at)).flatten() {
                out.extend(self.pieces(value, at, params, depth + 1));
            } else {
                out.push(Piece::Text(word.to_string()));
            }
        }
        out
    }

    /// The value of a `constexpr` (or `const`) local named at `k`, declared
    /// before `at` in a block around it: the tokens after its `=`.
    fn local_constant(&self, k: usize, at: usize) -> Option<Range<usize>> {
        let s = self.s;
        let body = s.body_of[at]?;
        let word = s.str(k);
        let encloses = |brace: Option<usize>| {
            let mut b = s.brace_of[at];
            while let Some(x) = b {
                if Some(x) == brace {
                    return true;
                }
                b = s.brace_of[x];
            }
            false
        };
        let assignments = self.assigned.get(word)?;
        let before = &assignments[assignments.partition_point(|&j| j <= body)..assignments.partition_point(|&j| j < at)];
        for &j in before.iter().rev() {
            if !encloses(s.brace_of[j]) {
                continue;
            }
            let mut start = j;
            let mut constant = false;
            while start > 0 && !matches!(s.str(start - 1), ";" | "{" | "}" | "(" | ",") {
                start -= 1;
                constant |= matches!(s.str(start), "constexpr" | "const");
            }
            if !constant {
                return None;
            }
            let mut end = j + 2;
            while end < s.toks.len() && !matches!(s.str(end), ";" | ",") {
                end = s.skip(end)?;
            }
            return Some(j + 2..end);
        }
        None
    }

    /// The function template whose body holds token `at`.
    fn template_around(&self, at: usize) -> Option<Template> {
        let s = self.s;
        let body = s.body_of[at]?;
        // Back over qualifiers after the parameter list (`const`, `noexcept`).
        let mut j = body.checked_sub(1)?;
        while s.toks[j].kind == Kind::Ident {
            j = j.checked_sub(1)?;
        }
        if !s.is(j, ")") {
            return None;
        }
        let mut name = self.open[j]?.checked_sub(1)?;
        if s.is(name, ">") {
            name = self.name_before_arguments(name)?;
        }
        if s.toks[name].kind != Kind::Ident {
            return None;
        }
        // Back to `template <…>` within the declaration.
        let mut k = name;
        let params = loop {
            k = k.checked_sub(1)?;
            match s.str(k) {
                ";" | "{" | "}" => return None,
                "template" if s.is(k + 1, "<") => {
                    let end = s.after_template_arguments(k + 1)?;
                    break self.parameter_names(k + 2..end - 1);
                }
                _ => {}
            }
        };
        (!params.is_empty()).then_some(Template { name, params })
    }

    /// The name before template arguments that close at `gt`.
    fn name_before_arguments(&self, gt: usize) -> Option<usize> {
        let (mut depth, mut j) = (0i32, gt);
        loop {
            match self.s.str(j) {
                ">" => depth += 1,
                "<" => {
                    depth -= 1;
                    if depth == 0 {
                        return j.checked_sub(1);
                    }
                }
                ";" | "{" | "}" => return None,
                _ => {}
            }
            j = j.checked_sub(1)?;
        }
    }

    /// The names of a template's parameters (`typename T, int N = 4`).
    fn parameter_names(&self, r: Range<usize>) -> Vec<String> {
        let s = self.s;
        let mut names = Vec::new();
        let (mut depth, mut name, mut defaulted) = (0i32, String::new(), false);
        let mut k = r.start;
        while k < r.end {
            match s.str(k) {
                "<" => depth += 1,
                ">" => depth -= 1,
                "=" if depth == 0 => defaulted = true,
                "," if depth == 0 => {
                    names.push(std::mem::take(&mut name));
                    defaulted = false;
                }
                w if depth == 0 && !defaulted && s.toks[k].kind == Kind::Ident && !matches!(w, "typename" | "class" | "const" | "unsigned") => name = w.to_string(),
                _ => {}
            }
            k = match s.skip(k) {
                Some(n) => n,
                None => break,
            };
        }
        if k > r.start {
            names.push(name);
        }
        names
    }
}

/// An argument's text, with the template's parameters bound by `binding`
/// where it gives them, else spelled by name.
fn spelled(pieces: &[Piece], params: &[String], binding: Option<&Vec<String>>) -> String {
    let mut out = String::new();
    for p in pieces {
        match p {
            Piece::Text(t) => out.push_str(t),
            Piece::Param(i) => match binding.and_then(|b| b.get(*i)) {
                Some(bound) => out.push_str(bound),
                None => out.push_str(params.get(*i).map_or("", String::as_str)),
            },
        }
    }
    let out = out.trim();
    // Arithmetic on substituted constants (`S * 2` with `S` = 1) is its value.
    let arithmetic = out.contains(|c: char| "+-*/%<>()".contains(c));
    match super::fold_constant(out).filter(|_| arithmetic) {
        Some(v) => v.to_string(),
        None => out.to_string(),
    }
}
