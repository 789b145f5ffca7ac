//! Finds the launches of kernels in CUDA host code (`k<<<grid, block>>>(…)`,
//! `cudaLaunchKernel((void*)k, grid, block, …)`) and the shape each fixes.
//!
//! It reads the preprocessed text before host bodies are cut from it, since
//! launches live in host code. A token scanner like [`crate::host`]: macros are
//! already expanded, literals and constant arithmetic are evaluated, `dim3`
//! variables are followed to their one declaration, and whatever it cannot
//! evaluate is unknown, never guessed.

mod instances;

use crate::host::{Kind, Lexer, Token};
use rustc_hash::{FxHashMap, FxHashSet};
use std::ops::Range;

/// A launch of a kernel, named by its unqualified name. A mention of a
/// launched kernel that is neither a launch nor a declaration (its address
/// handed on, `auto f = k;`) is a launch with nothing known: the kernel may
/// run with any shape through it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelLaunch {
    pub kernel: String,
    /// Groups per axis; `None` where the text does not fix it.
    pub grid: [Option<u32>; 3],
    /// Threads per group per axis; `None` where the text does not fix it.
    pub group: [Option<u32>; 3],
    /// The launch's bytes in the text.
    pub range: Range<usize>,
    /// The kernel template's arguments as written (`float, 16` in
    /// `k<float, 16><<<…>>>`), for launches of a template.
    pub template_args: Option<String>,
    /// The argument lists those stand for once the host templates around
    /// the launch are instantiated (`k<T, 16>` in `run<T>`, which the file
    /// instantiates as `run<float>`, is `float, 16`); the written list
    /// where nothing around it is a template.
    pub instances: Vec<String>,
    /// Per axis, the kernel argument (by position) that is the very value
    /// the group's extent is made of there (`dim3 block(32, k)` with `k`
    /// also passed to the kernel): inside, `threadIdx.y < that parameter`.
    pub group_args: [Option<u32>; 3],
    /// Per axis, the kernel argument the grid's group count is computed from.
    pub grid_args: [Option<GroupCount>; 3],
    /// What the `if` conditions around the launch say about its arguments
    /// (`if (C / H == 64) k<<<…>>>(C, H)`).
    pub arg_relations: Vec<ArgRelation>,
}

/// A comparison the host makes before a launch, between kernel arguments
/// (by position) and constants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArgRelation {
    pub lhs: Operand,
    pub cmp: Comparison,
    pub rhs: Operand,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// The argument at this position.
    Argument(u32),
    Constant(i64),
    /// One argument divided by another, rounded toward zero.
    Quotient(u32, u32),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    Equal,
    AtMost,
    Below,
}

/// A group count computed from a kernel argument: `(argument + add) / div`,
/// rounded down (`n / 16`, `(n + 15) / 16`, `n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupCount {
    /// The argument's place in the kernel's argument list.
    pub arg: u32,
    pub add: i64,
    pub div: u32,
}

/// Every kernel launch in preprocessed CUDA text, in text order.
pub fn kernel_launches(text: &str) -> Vec<KernelLaunch> {
    let scanner = Scanner::new(text);
    let sites = scanner.sites();
    let names = Names::new(&scanner, &sites);
    let mut instances = instances::Instances::new(&scanner);
    let written = |r: Range<usize>| text[scanner.toks[r.start].start..scanner.toks[r.end - 1].end].to_string();
    let mut launches: Vec<KernelLaunch> = sites
        .iter()
        .map(|s| {
            let eval = Eval { s: &scanner, at: s.name, names: &names };
            let template_args = s.template.clone().filter(|r| !r.is_empty()).map(written);
            KernelLaunch {
                kernel: scanner.str(s.name).to_string(),
                grid: eval.dims(s.grid.clone(), 0),
                group: eval.dims(s.block.clone(), 0),
                range: scanner.toks[s.start].start..scanner.toks[s.end - 1].end,
                instances: if template_args.is_some() { instances.of_mention(s.name) } else { Vec::new() },
                template_args,
                group_args: eval.group_args(s),
                grid_args: eval.grid_args(s),
                arg_relations: eval.arg_relations(s),
            }
        })
        .collect();
    let site_names: FxHashSet<usize> = sites.iter().map(|s| s.name).collect();
    let kernels: FxHashSet<&str> = sites.iter().map(|s| scanner.str(s.name)).collect();
    let defined = scanner.kernel_names();
    for (i, t) in scanner.toks.iter().enumerate() {
        if t.kind != Kind::Ident || site_names.contains(&i) || names.shadowed(&scanner, i) {
            continue;
        }
        let word = scanner.str(i);
        // A kernel template named with arguments and handed on (`fn = k<float>;`)
        // is instantiated there, and may run with any shape.
        let template = scanner.is(i + 1, "<") && scanner.body_of[i].is_some() && defined.contains(word);
        if !(template || kernels.contains(word)) || !scanner.escapes(i) {
            continue;
        }
        let (template_args, instances) = match scanner.after_template_arguments(i + 1).filter(|_| template) {
            Some(end) if end > i + 3 => (Some(written(i + 2..end - 1)), instances.of_mention(i)),
            _ => (None, Vec::new()),
        };
        launches.push(KernelLaunch { kernel: word.to_string(), grid: [None; 3], group: [None; 3], range: t.start..t.end, template_args, instances, group_args: [None; 3], grid_args: [None; 3], arg_relations: Vec::new() });
    }
    launches.sort_by_key(|l| l.range.start);
    launches
}

/// Where a launch is, by token index.
struct Site {
    /// The kernel's name.
    name: usize,
    grid: Range<usize>,
    block: Range<usize>,
    /// Every configuration argument: names read there are not modified there.
    config: Range<usize>,
    /// The kernel's arguments (inside the parentheses), for a `<<<…>>>` launch.
    args: Option<Range<usize>>,
    /// The whole launch expression.
    start: usize,
    end: usize,
    /// The tokens between the template's `<` and `>`, for a launch of a template.
    template: Option<Range<usize>>,
}

struct Scanner<'t> {
    text: &'t str,
    toks: Vec<Token>,
    /// For each opening bracket, the index of its closing one.
    close: Vec<Option<usize>>,
    /// For each token, the outermost brace (not a namespace's) around it: the function body it is in.
    body_of: Vec<Option<usize>>,
    /// For each token, the innermost brace around it.
    brace_of: Vec<Option<usize>>,
}

/// Spellings of the type and qualifier words of the declarations followed.
const DECLARATION_WORDS: &[&str] = &[
    "dim3", "int", "unsigned", "signed", "long", "short", "size_t", "uint", "uint32_t", "int32_t", "uint64_t", "int64_t", "auto",
    "const", "constexpr", "static", "std", "::",
];

impl<'t> Scanner<'t> {
    fn new(text: &'t str) -> Scanner<'t> {
        let toks: Vec<Token> = Lexer::new(text, 0..text.len()).collect();
        let mut close = vec![None; toks.len()];
        let mut body_of = vec![None; toks.len()];
        let mut brace_of = vec![None; toks.len()];
        // Open brackets, each with the innermost brace at or below it.
        let mut open: Vec<usize> = Vec::new();
        let mut inner_brace: Vec<Option<usize>> = Vec::new();
        let mut body = None;
        for i in 0..toks.len() {
            body_of[i] = body;
            brace_of[i] = inner_brace.last().copied().flatten();
            let s = &text[toks[i].start..toks[i].end];
            match s {
                "(" | "[" | "{" => {
                    open.push(i);
                    inner_brace.push(if s == "{" { Some(i) } else { brace_of[i] });
                    if s == "{" && body.is_none() && !Scanner::opens_namespace(text, &toks, i) {
                        body = Some(i);
                    }
                }
                ")" | "]" | "}" => {
                    let opener = match s {
                        ")" => "(",
                        "]" => "[",
                        _ => "{",
                    };
                    if let Some(pos) = open.iter().rposition(|&o| &text[toks[o].start..toks[o].end] == opener) {
                        close[open[pos]] = Some(i);
                        if body == Some(open[pos]) {
                            body = None;
                        }
                        open.truncate(pos);
                        inner_brace.truncate(pos);
                    }
                }
                _ => {}
            }
        }
        Scanner { text, toks, close, body_of, brace_of }
    }

    /// Whether the `{` at `i` opens a `namespace` or `extern "C"` block.
    fn opens_namespace(text: &str, toks: &[Token], i: usize) -> bool {
        let word = |j: usize| &text[toks[j].start..toks[j].end];
        let mut j = i;
        while j > 0 {
            j -= 1;
            match (toks[j].kind, word(j)) {
                (Kind::Ident, "namespace" | "extern") => return true,
                (Kind::Ident | Kind::Str, _) | (_, "::") => {}
                _ => return false,
            }
        }
        false
    }

    fn str(&self, i: usize) -> &'t str {
        self.toks.get(i).map_or("", |t| &self.text[t.start..t.end])
    }

    fn is(&self, i: usize, s: &str) -> bool {
        self.str(i) == s
    }

    /// The name a token range is, when it is one identifier.
    fn single_name(&self, r: &Range<usize>) -> Option<&'t str> {
        (r.len() == 1 && self.toks[r.start].kind == Kind::Ident).then(|| self.str(r.start))
    }

    /// Three tokens `c` in a row with nothing between them (`<<<`, `>>>`).
    fn triple(&self, i: usize, c: &str) -> bool {
        (0..3).all(|k| self.is(i + k, c)) && self.toks[i].end == self.toks[i + 1].start && self.toks[i + 1].end == self.toks[i + 2].start
    }

    /// The next token after the bracket opened at `i`, or after the token at `i`.
    fn skip(&self, i: usize) -> Option<usize> {
        match self.str(i) {
            "(" | "[" | "{" => self.close[i].map(|c| c + 1),
            _ => Some(i + 1),
        }
    }

    /// The opening bracket the bracket at `close` closes.
    fn opener(&self, close: usize) -> Option<usize> {
        (0..close).rev().find(|&j| self.close[j] == Some(close))
    }

    /// Splits a token range at its commas outside brackets; empty gives none.
    fn split(&self, r: Range<usize>) -> Option<Vec<Range<usize>>> {
        if r.is_empty() {
            return Some(Vec::new());
        }
        let mut parts = Vec::new();
        let (mut from, mut i) = (r.start, r.start);
        while i < r.end {
            if self.is(i, ",") {
                parts.push(from..i);
                from = i + 1;
            }
            i = self.skip(i)?;
        }
        parts.push(from..r.end);
        Some(parts)
    }

    /// The index after template arguments `<…>` opening at `i`, if they close.
    fn after_template_arguments(&self, i: usize) -> Option<usize> {
        let mut depth = 0;
        let mut j = i;
        while j < self.toks.len() {
            match self.str(j) {
                "<" => depth += 1,
                ">" => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(j + 1);
                    }
                }
                ";" | "{" | "}" => return None,
                _ => {}
            }
            j = self.skip(j)?;
        }
        None
    }

    /// The kernel name before the `<<<` at `i`, past template arguments.
    fn name_before(&self, i: usize) -> Option<usize> {
        let mut j = i.checked_sub(1)?;
        if self.is(j, ">") {
            let mut depth = 0;
            loop {
                match self.str(j) {
                    ">" => depth += 1,
                    "<" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ";" | "{" | "}" => return None,
                    _ => {}
                }
                j = j.checked_sub(1)?;
            }
            j = j.checked_sub(1)?;
        }
        (self.toks[j].kind == Kind::Ident).then_some(j)
    }

    fn sites(&self) -> Vec<Site> {
        let mut sites = Vec::new();
        for i in 0..self.toks.len() {
            let site = if self.triple(i, "<") && !(i > 0 && self.is(i - 1, "<")) {
                self.chevron_launch(i)
            } else if matches!(self.str(i), "cudaLaunchKernel" | "cudaLaunchCooperativeKernel") {
                self.api_launch(i)
            } else {
                None
            };
            sites.extend(site);
        }
        sites
    }

    /// `k<<<grid, block[, smem[, stream]]>>>(args)` with `<<<` at `i`.
    fn chevron_launch(&self, i: usize) -> Option<Site> {
        let name = self.name_before(i)?;
        let mut end = i + 3;
        while !self.triple(end, ">") {
            if matches!(self.str(end), ";" | "{" | "}" | "") {
                return None;
            }
            end = self.skip(end)?;
        }
        let config = i + 3..end;
        let parts = self.split(config.clone())?;
        let [grid, block, ..] = parts.as_slice() else { return None };
        let args = end + 3;
        let last = if self.is(args, "(") { self.close[args]? } else { end + 2 };
        let template = self.is(name + 1, "<").then(|| name + 2..i - 1);
        let arguments = self.is(args, "(").then(|| args + 1..last);
        Some(Site { name, grid: grid.clone(), block: block.clone(), config, args: arguments, start: name, end: last + 1, template })
    }

    /// `cudaLaunchKernel[<T>]((void*)k, grid, block, …)` with the API's name at `i`.
    fn api_launch(&self, i: usize) -> Option<Site> {
        let open = if self.is(i + 1, "<") { self.after_template_arguments(i + 1)? } else { i + 1 };
        if !self.is(open, "(") {
            return None;
        }
        let close = self.close[open]?;
        let parts = self.split(open + 1..close)?;
        let [kernel, grid, block, ..] = parts.as_slice() else { return None };
        let name = self.function_named(kernel.clone())?;
        Some(Site { name, grid: grid.clone(), block: block.clone(), config: open + 1..close, args: None, start: i, end: close + 1, template: None })
    }

    /// The function an argument names through casts: `(void*)&k<float>` names `k`.
    fn function_named(&self, r: Range<usize>) -> Option<usize> {
        const NOT_NAMES: &[&str] = &["void", "const", "reinterpret_cast", "static_cast", "const_cast"];
        let mut angle = 0;
        for j in r {
            match self.str(j) {
                "<" => angle += 1,
                ">" => angle -= 1,
                w if angle == 0 && self.toks[j].kind == Kind::Ident && !NOT_NAMES.contains(&w) => return Some(j),
                _ => {}
            }
        }
        None
    }

    /// The names of the kernels the text defines or declares (`__global__`).
    fn kernel_names(&self) -> FxHashSet<&'t str> {
        const NOT_NAMES: &[&str] = &["__launch_bounds__", "__attribute__", "__declspec", "alignas", "__maxnreg__"];
        let mut out = FxHashSet::default();
        for i in (0..self.toks.len()).filter(|&i| self.is(i, "__global__")) {
            let mut j = i + 1;
            while j < self.toks.len() && !matches!(self.str(j), ";" | "{" | "}") {
                if self.is(j, "(") && self.toks[j - 1].kind == Kind::Ident && !NOT_NAMES.contains(&self.str(j - 1)) {
                    out.insert(self.str(j - 1));
                    break;
                }
                match self.skip(j) {
                    Some(n) => j = n,
                    None => break,
                }
            }
        }
        out
    }

    /// The `{` of the innermost brace block around token `j`.
    fn enclosing_brace(&self, j: usize) -> Option<usize> {
        self.brace_of.get(j).copied().flatten()
    }

    /// The type and qualifier words before a declared name at `j`
    /// (`const dim3 block(…)`, `int threads = …`), if it is declared there.
    fn declaration_words(&self, j: usize) -> Option<Vec<&'t str>> {
        if !matches!(self.str(j + 1), "=" | "(" | "{") || self.is(j + 2, "=") {
            return None;
        }
        let mut words = Vec::new();
        let mut k = j;
        while k > 0 && DECLARATION_WORDS.contains(&self.str(k - 1)) {
            k -= 1;
            words.push(self.str(k));
        }
        let boundary = k == 0 || matches!(self.str(k - 1), ";" | "{" | "}" | ")");
        (boundary && words.iter().any(|w| *w != "const" && *w != "static" && *w != "::")).then_some(words)
    }

    /// Whether the mention at `j` of a variable may change it: an
    /// assignment to it, `++`/`--`, or its address taken.
    fn written(&self, j: usize) -> bool {
        let glued = |a: usize| self.toks.get(a + 1).is_some_and(|t| self.toks[a].end == t.start);
        let assignment = |a: usize| self.is(a, "=") && !(self.is(a + 1, "=") && glued(a));
        let next = j + 1;
        let compound = matches!(self.str(next), "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^") && glued(next) && assignment(next + 1);
        let shift = matches!(self.str(next), "<" | ">") && self.is(next + 1, self.str(next)) && glued(next) && glued(next + 1) && assignment(next + 2);
        let step = |a: usize| matches!(self.str(a), "+" | "-") && self.is(a + 1, self.str(a)) && glued(a);
        let stepped_before = j.checked_sub(2).is_some_and(step);
        assignment(next) || compound || shift || step(next) || stepped_before || self.address_taken(j)
    }

    /// Whether the mention at `j` takes the variable's address (`&k`; `a && k`
    /// and `a & k` do not): it may change through the pointer anywhere later.
    fn address_taken(&self, j: usize) -> bool {
        let glued = |a: usize| self.toks.get(a + 1).is_some_and(|t| self.toks[a].end == t.start);
        let before = |k: usize| j.checked_sub(k);
        let logical_and = before(2).is_some_and(|b| self.is(b, "&") && glued(b));
        before(1).is_some_and(|a| self.is(a, "&")) && !logical_and && before(2).is_none_or(|b| !matches!(self.toks[b].kind, Kind::Ident | Kind::Number) && !matches!(self.str(b), ")" | "]"))
    }

    /// Whether the mention at `i` of a launched kernel may hand it to code
    /// that launches it unseen: not a declaration or definition (`k(`), not
    /// an argument of the runtime's attribute and occupancy queries.
    fn escapes(&self, i: usize) -> bool {
        let next = if self.is(i + 1, "<") { self.after_template_arguments(i + 1) } else { Some(i + 1) };
        if next.is_some_and(|n| self.is(n, "(")) || (i > 0 && matches!(self.str(i - 1), "." | "->")) {
            return false;
        }
        // The call the mention is an argument of.
        let mut depth = 0;
        let mut j = i;
        while j > 0 {
            j -= 1;
            match self.str(j) {
                ")" => depth += 1,
                "(" if depth == 0 => {
                    let callee = self.str(j.wrapping_sub(1));
                    // `f((k<true>))`: parentheses around the name, not a call.
                    if callee == "(" {
                        continue;
                    }
                    return !(callee.starts_with("cudaFunc") || callee.starts_with("cudaOccupancy"));
                }
                "(" => depth -= 1,
                ";" | "{" | "}" => break,
                _ => {}
            }
        }
        true
    }
}

/// Where names are, for lookups from every launch without rescanning.
struct Names<'t> {
    /// The declarations of each name, in text order.
    declarations: FxHashMap<&'t str, Vec<usize>>,
    /// Every mention of each name, in text order.
    mentions: FxHashMap<&'t str, Vec<usize>>,
    /// Per token, whether it is in a launch's configuration (`<<<…>>>`).
    in_config: Vec<bool>,
    /// The mentions of each name that declare a variable (`int k = …`,
    /// a parameter `int k)`), in text order.
    variables: FxHashMap<&'t str, Vec<usize>>,
    /// Per function body (by its `{`) and name, where the body last changes
    /// the name (`usize::MAX` where it declares it twice or takes its
    /// address); none where never.
    last_change: std::cell::RefCell<FxHashMap<(usize, &'t str), Option<usize>>>,
    /// [`Names::checks_in`] by block.
    checks: std::cell::RefCell<FxHashMap<usize, std::rc::Rc<Vec<Check>>>>,
}

impl<'t> Names<'t> {
    fn new(s: &Scanner<'t>, sites: &[Site]) -> Names<'t> {
        let mut declarations: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        let mut mentions: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        let mut variables: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        for j in (0..s.toks.len()).filter(|&j| s.toks[j].kind == Kind::Ident) {
            mentions.entry(s.str(j)).or_default().push(j);
            if s.declaration_words(j).is_some() {
                declarations.entry(s.str(j)).or_default().push(j);
            }
            let typed = j > 0 && (DECLARATION_WORDS.contains(&s.str(j - 1)) || matches!(s.str(j - 1), "float" | "double" | "bool" | "char" | "half"));
            if typed && matches!(s.str(j + 1), "=" | ";" | "," | "[" | ")") {
                variables.entry(s.str(j)).or_default().push(j);
            }
        }
        let mut in_config = vec![false; s.toks.len()];
        for site in sites {
            in_config[site.config.clone()].iter_mut().for_each(|c| *c = true);
        }
        Names { declarations, mentions, in_config, variables, last_change: Default::default(), checks: Default::default() }
    }

    /// Whether the name at `i` is a variable declared in a scope around it
    /// (`int k = …` in a kernel named `k`), not the kernel.
    fn shadowed(&self, s: &Scanner, i: usize) -> bool {
        let around = |j: usize| s.brace_of[j].is_none_or(|b| b < i && s.close[b].is_none_or(|c| i < c));
        self.variables.get(s.str(i)).is_some_and(|v| v.iter().take_while(|&&j| j <= i).any(|&j| around(j)))
    }

    /// The mentions of `word` within the token range `r`.
    fn mentions_in(&self, word: &str, r: Range<usize>) -> &[usize] {
        let Some(all) = self.mentions.get(word) else { return &[] };
        &all[all.partition_point(|&j| j < r.start)..all.partition_point(|&j| j < r.end)]
    }
}

/// A statement that makes sure of a condition for what follows it in its
/// block: `assert(c)` (and the checks spelled like it), or `if (c) return;`
/// (`negated`: what follows holds not `c`).
struct Check {
    /// The statement's first token.
    at: usize,
    /// The token after the statement.
    end: usize,
    condition: Range<usize>,
    negated: bool,
}

/// Checks read per block before a launch, nearest first.
const MAX_CHECKS: usize = 16;

impl<'t> Names<'t> {
    /// The checks at the top level of the block opened at `open`, in text
    /// order; none in a `switch` body, whose `case` labels jump past them.
    fn checks_in(&self, s: &Scanner<'t>, open: usize) -> std::rc::Rc<Vec<Check>> {
        self.checks.borrow_mut().entry(open).or_insert_with(|| std::rc::Rc::new(Names::find_checks(s, open))).clone()
    }

    fn find_checks(s: &Scanner<'t>, open: usize) -> Vec<Check> {
        const CHECKS: &[&str] = &["assert", "TORCH_CHECK", "TORCH_INTERNAL_ASSERT", "AT_ASSERTM", "AT_ASSERT", "CHECK", "DCHECK"];
        let boundary = |i: usize| i == 0 || matches!(s.str(i - 1), ";" | "{" | "}");
        let leaves = |i: usize| matches!(s.str(i), "return" | "throw");
        let header = open.checked_sub(1).filter(|&c| s.is(c, ")")).and_then(|c| s.opener(c));
        if header.is_some_and(|j| j > 0 && s.is(j - 1, "switch")) {
            return Vec::new();
        }
        let Some(block_end) = s.close[open] else { return Vec::new() };
        let mut out = Vec::new();
        let mut i = open + 1;
        while i < block_end {
            if boundary(i) && s.is(i + 1, "(") {
                let Some(close) = s.close[i + 1] else { break };
                let condition = i + 2..close;
                if CHECKS.contains(&s.str(i)) {
                    let first = s.split(condition.clone()).and_then(|parts| parts.into_iter().next()).unwrap_or(condition);
                    out.push(Check { at: i, end: close + 1, condition: first, negated: false });
                } else if s.is(i, "if") {
                    // The branch taken when the condition holds: it leaves, and no `else` follows.
                    let then = close + 1;
                    let (exits, after) = if s.is(then, "{") {
                        let end = s.close[then].unwrap_or(block_end);
                        let last = (then + 1..end).rev().skip(1).find(|&j| matches!(s.str(j), ";" | "{" | "}")).map_or(then + 1, |j| j + 1);
                        (s.brace_of[last] == Some(then) && leaves(last), end + 1)
                    } else {
                        let end = (then..block_end).find(|&j| s.is(j, ";") && s.brace_of[j] == Some(open));
                        (leaves(then) && end.is_some(), end.map_or(block_end, |e| e + 1))
                    };
                    if exits && !s.is(after, "else") {
                        out.push(Check { at: i, end: after, condition, negated: true });
                    }
                }
            }
            let Some(next) = s.skip(i) else { break };
            i = next;
        }
        out
    }
}

/// Evaluates launch components as seen at one launch.
struct Eval<'s, 't> {
    s: &'s Scanner<'t>,
    /// The launch's kernel-name token: declarations are looked for before it.
    at: usize,
    names: &'s Names<'t>,
}

/// Declarations followed through other declarations at most this deep.
const MAX_DEPTH: u32 = 8;

impl<'t> Eval<'_, 't> {
    /// A `dim3` argument: `dim3(a, b, c)`, `{a, b}`, an integer expression, or a variable holding one.
    fn dims(&self, r: Range<usize>, depth: u32) -> [Option<u32>; 3] {
        const UNKNOWN: [Option<u32>; 3] = [None; 3];
        let s = self.s;
        if r.is_empty() || depth > MAX_DEPTH {
            return UNKNOWN;
        }
        // `dim3(…)`, `dim3{…}` or a braced `{…}`; a parenthesized expression is not a constructor.
        let opener = if s.is(r.start, "dim3") { r.start + 1 } else { r.start };
        let constructor = s.is(opener, "{") || (opener > r.start && s.is(opener, "("));
        if constructor && s.close[opener] == Some(r.end - 1) {
            return self.components(opener + 1..r.end - 1, depth);
        }
        if s.single_name(&r).is_some() {
            return self.variable(r.start, depth).unwrap_or(UNKNOWN);
        }
        match self.int(r.clone(), depth) {
            Some(x) => [Some(x), Some(1), Some(1)],
            // Arithmetic makes an integer, which converts to `dim3(x, 1, 1)`.
            None if self.has_top_level_arithmetic(r) => [None, Some(1), Some(1)],
            None => UNKNOWN,
        }
    }

    /// Whether an operator outside brackets makes the expression an integer
    /// (a call in it, `shape_for(n - 1)`, may return a `dim3`).
    fn has_top_level_arithmetic(&self, r: Range<usize>) -> bool {
        let mut i = r.start;
        while i < r.end {
            if matches!(self.s.str(i), "+" | "-" | "*" | "/" | "%") {
                return true;
            }
            let Some(next) = self.s.skip(i) else { return false };
            i = next;
        }
        false
    }

    /// The arguments of `dim3(…)`: missing ones are 1.
    fn components(&self, r: Range<usize>, depth: u32) -> [Option<u32>; 3] {
        match self.s.split(r) {
            Some(parts) if parts.len() <= 3 => std::array::from_fn(|ax| parts.get(ax).map_or(Some(1), |p| self.int(p.clone(), depth))),
            _ => [None; 3],
        }
    }

    /// A positive component that fits the hardware's counters.
    fn int(&self, r: Range<usize>, depth: u32) -> Option<u32> {
        let mut parser = Parser { e: self, pos: r.start, end: r.end, depth, bound: None };
        let v = parser.expr(0)?;
        (parser.pos == r.end).then_some(())?;
        u32::try_from(v).ok().filter(|&v| v > 0)
    }

    /// The shape a variable holds at the launch: its one declaration's
    /// initializer, when nothing but launches reads the variable afterwards
    /// (so nothing can change it).
    fn variable(&self, name: usize, depth: u32) -> Option<[Option<u32>; 3]> {
        let s = self.s;
        let word = s.str(name);
        if let Some(value) = self.case_value(word, depth) {
            return Some([Some(value), Some(1), Some(1)]);
        }
        let (decl, words) = self.declaration(name)?;
        let open = decl + 1;
        if s.is(open, "=") {
            return Some(self.dims(self.initializer(decl)?, depth + 1));
        }
        let inner = open + 1..s.close[open]?;
        Some(if words.contains(&"dim3") { self.components(inner, depth + 1) } else { self.dims(inner, depth + 1) })
    }

    /// The one declaration of the variable named at `name` that the launch
    /// sees, when nothing but launches mentions it after (so nothing can
    /// change it), with its type words.
    fn declaration(&self, name: usize) -> Option<(usize, Vec<&'t str>)> {
        let s = self.s;
        let word = s.str(name);
        let body = s.body_of[self.at];
        let before = self.names.declarations.get(word).map_or(&[][..], |d| &d[..d.partition_point(|&j| j < self.at)]);
        // The declarations in scope at the launch: in its function, in a
        // brace block that encloses the launch (`if (…) { dim3 b(32); k<<<1, b>>>(); }
        // else { dim3 b(1024); … }` declares `b` twice); the innermost shadows.
        let visible: Vec<(usize, usize, usize)> = before
            .iter()
            .copied()
            .filter(|&j| s.body_of[j] == body)
            .filter_map(|j| {
                let open = s.enclosing_brace(j)?;
                let close = s.close[open]?;
                (open < self.at && self.at < close).then_some((j, open, close))
            })
            .collect();
        let (decl, words) = match (visible.last(), body) {
            (Some(&(decl, open, close)), Some(_)) => {
                let untouched = self.names.mentions_in(word, open..close).iter().all(|&j| j == decl || self.names.in_config[j]);
                untouched.then_some(())?;
                (decl, s.declaration_words(decl)?)
            }
            // At file scope only constants are followed, and only when no local shadows them.
            (None, Some(_)) => {
                let global: Vec<usize> = before.iter().copied().filter(|&j| s.body_of[j].is_none()).collect();
                let [decl] = global.as_slice() else { return None };
                let words = s.declaration_words(*decl)?;
                words.iter().any(|w| matches!(*w, "const" | "constexpr")).then_some(())?;
                (*decl, words)
            }
            _ => return None,
        };
        Some((decl, words))
    }

    /// The tokens after `=` in the declaration at `decl`.
    fn initializer(&self, decl: usize) -> Option<Range<usize>> {
        let s = self.s;
        s.is(decl + 1, "=").then_some(())?;
        let mut end = decl + 2;
        while !matches!(s.str(end), ";" | "," | "") {
            end = s.skip(end)?;
        }
        Some(decl + 2..end)
    }
}

impl<'t> Eval<'_, 't> {
    /// Whether the function around the launch never changes `word`: then
    /// every mention of it there is one value.
    fn unchanged(&self, word: &'t str) -> bool {
        self.settled(word, 0)
    }

    /// Whether the function around the launch changes `word` only before
    /// the token `from`: every mention of it from there on is one value
    /// (`n >>= 3; dim3 block(n / 4); k<<<1, block>>>(n / 4)`). A change
    /// after `from` in the text is after it in time too, even in a loop
    /// around both: `from` is then reached again after it.
    fn settled(&self, word: &'t str, from: usize) -> bool {
        let s = self.s;
        let Some(body) = s.body_of[self.at] else { return false };
        let Some(close) = s.close[body] else { return false };
        let last = *self.names.last_change.borrow_mut().entry((body, word)).or_insert_with(|| {
            let member = |j: usize| j > 0 && matches!(s.str(j - 1), "." | ">");
            // One declaration at the body's own level gives the one value for
            // the rest of it; one in a nested block may be another variable.
            let mentions = self.names.mentions_in(word, body..close);
            let declared = |j: usize| s.brace_of[j] == Some(body) && s.declaration_words(j).is_some();
            if mentions.iter().filter(|&&j| declared(j)).count() > 1 || mentions.iter().any(|&j| !member(j) && s.address_taken(j)) {
                return Some(usize::MAX);
            }
            mentions.iter().rev().copied().find(|&j| !member(j) && !declared(j) && s.written(j))
        });
        last.is_none_or(|j| j < from)
    }

    /// The `case` label's value tokens the launch runs under when it sits
    /// in a `switch (word)` and only that label leads there (the first
    /// label, or one after `break;`/`return …;`).
    fn case_value_label(&self, word: &str) -> Option<Range<usize>> {
        let s = self.s;
        let mut open = s.enclosing_brace(self.at)?;
        while !(open >= 4 && s.is(open - 1, ")") && s.is(open - 2, word) && s.is(open - 3, "(") && s.is(open - 4, "switch")) {
            open = s.enclosing_brace(open)?;
        }
        // The last label before the launch at the switch body's own level.
        let last = |w: &str| self.names.mentions_in(w, open + 1..self.at).iter().rev().find(|&&j| s.brace_of[j] == Some(open)).copied();
        let label = match (last("case"), last("default")) {
            (Some(c), d) if d.is_none_or(|d| d < c) => c,
            _ => return None,
        };
        let colon = (label + 1..self.at).find(|&j| s.is(j, ":") && !s.is(j + 1, ":") && !s.is(j - 1, ":"))?;
        let only_way_in = label == open + 1 || (s.is(label - 1, ";") && {
            let start = (open + 1..label - 1).rev().find(|&j| matches!(s.str(j), ";" | "{" | "}" | ":")).map_or(open + 1, |j| j + 1);
            matches!(s.str(start), "break" | "return")
        });
        only_way_in.then_some(label + 1..colon)
    }

    /// The value an unchanged variable has at the launch because the
    /// launch sits under its `case` in a `switch` on it.
    fn case_value(&self, word: &'t str, depth: u32) -> Option<u32> {
        let label = self.case_value_label(word)?;
        self.unchanged(word).then_some(())?;
        let v = Parser { e: self, pos: label.start, end: label.end, depth: depth + 1, bound: None }.whole()?;
        u32::try_from(v).ok()
    }

    /// Per kernel argument of the launch, the variable it is when that is
    /// one name the function around does not change from the token `from`
    /// on (where the launch's shape or condition reads it) and no `case`
    /// label fixes.
    fn passed_variables(&self, site: &Site, from: usize) -> Vec<Option<&'t str>> {
        let args = site.args.clone().and_then(|r| self.s.split(r)).unwrap_or_default();
        args.iter().map(|a| self.s.single_name(a).filter(|&w| self.settled(w, from) && self.case_value(w, 0).is_none())).collect()
    }

    /// Per axis of the launch's group, the kernel argument that is the same
    /// variable the extent is made of, or the same arithmetic on variables
    /// (`dim3 block(n / 8, 16)` and `k<<<…>>>(n / 8)`), none of them
    /// changed after the extent is written.
    fn group_args(&self, site: &Site) -> [Option<u32>; 3] {
        let args = site.args.clone().and_then(|r| self.s.split(r)).unwrap_or_default();
        let parts = self.component_parts(site.block.clone(), 0);
        std::array::from_fn(|ax| {
            let part = parts.get(ax)?;
            let position = match self.s.single_name(part) {
                Some(word) => self.passed_variables(site, part.start.min(site.start)).iter().position(|&p| p == Some(word))?,
                None => args.iter().position(|a| self.same_arithmetic(part, a))?,
            };
            u32::try_from(position).ok()
        })
    }

    /// Whether two token ranges spell the same arithmetic on numbers and
    /// variables the function around does not change from the first on:
    /// then they are one value.
    fn same_arithmetic(&self, a: &Range<usize>, b: &Range<usize>) -> bool {
        let s = self.s;
        let from = a.start.min(b.start);
        let arithmetic = |i: usize| match s.toks[i].kind {
            Kind::Number => true,
            // A member (`p->n`, `p.n`) may change unseen: its writes name the member, not `p`.
            Kind::Ident => {
                let member = i > 0 && matches!(s.str(i - 1), "." | ">");
                !s.is(i + 1, "(") && !member && self.settled(s.str(i), from)
            }
            _ => matches!(s.str(i), "+" | "-" | "*" | "/" | "%" | "<" | ">" | "&" | "|" | "^" | "(" | ")"),
        };
        !a.is_empty() && a.len() == b.len() && a.clone().zip(b.clone()).all(|(i, j)| s.str(i) == s.str(j)) && a.clone().all(arithmetic)
    }

    /// Per axis of the launch's grid, how its group count follows from a
    /// kernel argument: `n`, `n / 16` or `(n + 15) / 16` with `n` a
    /// variable also passed to the kernel (directly or through one `int
    /// blocks = …;`), not changed after the count is written.
    fn grid_args(&self, site: &Site) -> [Option<GroupCount>; 3] {
        let parts = self.component_parts(site.grid.clone(), 0);
        std::array::from_fn(|ax| {
            let mut part = parts.get(ax)?.clone();
            if self.s.single_name(&part).is_some_and(|w| !self.passed_variables(site, part.start.min(site.start)).contains(&Some(w))) {
                part = self.declaration(part.start).and_then(|(decl, _)| self.initializer(decl))?;
            }
            let part = self.without_parentheses(part);
            let passed = self.passed_variables(site, part.start.min(site.start));
            passed.iter().enumerate().find_map(|(position, &word)| {
                let (add, div) = self.quotient_of(part.clone(), word?)?;
                Some(GroupCount { arg: u32::try_from(position).ok()?, add, div })
            })
        })
    }

    /// The comparisons of arguments the launch runs under: each `&&` part
    /// of the condition of every `if` whose then-branch holds the launch,
    /// where both sides are passed variables (or one divided by another)
    /// or constants. Other parts say nothing.
    fn arg_relations(&self, site: &Site) -> Vec<ArgRelation> {
        let s = self.s;
        let mut out = Vec::new();
        // The token that ends each enclosing branch's condition: before the
        // launch itself (`if (c) k<<<…>>>()`) and before each `{` around it.
        let mut ends = vec![site.start.checked_sub(1)];
        let mut brace = s.enclosing_brace(site.start);
        while let Some(open) = brace.filter(|&b| Some(b) != s.body_of[site.start]) {
            ends.push(open.checked_sub(1));
            brace = s.enclosing_brace(open);
        }
        for close in ends.into_iter().flatten().filter(|&c| s.is(c, ")")) {
            let Some(open) = s.opener(close) else { continue };
            if open == 0 || !s.is(open - 1, "if") {
                continue;
            }
            let passed = self.passed_variables(site, open);
            out.extend(self.logical_parts(open + 1..close, "&").into_iter().filter_map(|part| self.relation(part, &passed, false)));
        }
        out.extend(self.checks_before(site));
        out
    }

    /// What the statements before the launch in the blocks around it make
    /// sure of (see [`Names::checks_in`]), nearest first, at most
    /// [`MAX_CHECKS`] per block.
    fn checks_before(&self, site: &Site) -> Vec<ArgRelation> {
        let s = self.s;
        let mut out = Vec::new();
        let mut until = site.start;
        let mut brace = s.enclosing_brace(site.start);
        while let Some(open) = brace.filter(|_| s.body_of[site.start].is_some()) {
            let checks = self.names.checks_in(s, open);
            let before = &checks[..checks.partition_point(|c| c.end <= until)];
            for check in before.iter().rev().take(MAX_CHECKS) {
                let passed = self.passed_variables(site, check.at);
                let op = if check.negated { "|" } else { "&" };
                out.extend(self.logical_parts(check.condition.clone(), op).into_iter().filter_map(|part| self.relation(part, &passed, check.negated)));
            }
            if Some(open) == s.body_of[site.start] {
                break;
            }
            until = open;
            brace = s.enclosing_brace(open);
        }
        out
    }

    /// The parts of a condition joined by `&&` (`op` "&") or `||` (`op` "|")
    /// at its top level.
    fn logical_parts(&self, r: Range<usize>, op: &str) -> Vec<Range<usize>> {
        let s = self.s;
        let mut parts = Vec::new();
        let (mut part, mut i) = (r.start, r.start);
        while i <= r.end {
            let joined = s.is(i, op) && s.is(i + 1, op) && s.toks[i].end == s.toks[i + 1].start;
            if i == r.end || joined {
                parts.push(part..i);
                part = i + 2;
                i += 2;
            } else {
                let Some(next) = s.skip(i) else { break };
                i = next;
            }
        }
        parts
    }

    /// `a OP b` over the tokens `r`, with OP one of `==`, `!=`, `<`, `<=`,
    /// `>`, `>=`; or, `negated`, what its being false says.
    fn relation(&self, r: Range<usize>, passed: &[Option<&'t str>], negated: bool) -> Option<ArgRelation> {
        let s = self.s;
        let r = self.without_parentheses(r);
        let glued = |i: usize| s.toks.get(i + 1).is_some_and(|t| s.toks[i].end == t.start);
        // Comparisons bind tighter than bitwise and logical operators: a part
        // with one of those at its top level is not one comparison.
        let mut i = r.start;
        while i < r.end {
            if matches!(s.str(i), "|" | "&" | "^" | "?" | "!" | ",") && !(s.is(i, "!") && s.is(i + 1, "=")) {
                return None;
            }
            i = s.skip(i)?;
        }
        let mut i = r.start;
        // The comparison, `None` for `!=`.
        let (at, len, cmp, swapped) = loop {
            if i >= r.end {
                return None;
            }
            let next_is = |c: &str| s.is(i + 1, c) && glued(i);
            // Half of `<<` or `>>`.
            let shift = |c: &str| next_is(c) || (i > r.start && s.is(i - 1, c));
            match s.str(i) {
                "=" if next_is("=") => break (i, 2, Some(Comparison::Equal), false),
                "!" if next_is("=") => break (i, 2, None, false),
                "<" if next_is("=") => break (i, 2, Some(Comparison::AtMost), false),
                ">" if next_is("=") => break (i, 2, Some(Comparison::AtMost), true),
                "<" if !shift("<") => break (i, 1, Some(Comparison::Below), false),
                ">" if !shift(">") => break (i, 1, Some(Comparison::Below), true),
                _ => i = s.skip(i)?,
            }
        };
        // Not `a <= b` is `b < a`; not `a < b` is `b <= a`.
        let (cmp, swapped) = match (negated, cmp) {
            (false, cmp) => (cmp?, swapped),
            (true, None) => (Comparison::Equal, swapped),
            (true, Some(Comparison::Equal)) => return None,
            (true, Some(Comparison::AtMost)) => (Comparison::Below, !swapped),
            (true, Some(Comparison::Below)) => (Comparison::AtMost, !swapped),
        };
        let lhs = self.operand(r.start..at, passed)?;
        let rhs = self.operand(at + len..r.end, passed)?;
        let (lhs, rhs) = if swapped { (rhs, lhs) } else { (lhs, rhs) };
        match (lhs, cmp, rhs) {
            (Side::Known(lhs), cmp, Side::Known(rhs)) => Some(ArgRelation { lhs, cmp, rhs }),
            // `a / b == k` or `k <= a / b` with `b` not passed (taken
            // positive, a size): still `k <= a` where `k >= 1`.
            (Side::DividedByUnknown(a), Comparison::Equal, Side::Known(Operand::Constant(k)))
            | (Side::Known(Operand::Constant(k)), Comparison::Equal | Comparison::AtMost, Side::DividedByUnknown(a)) => {
                (k >= 1).then_some(ArgRelation { lhs: Operand::Constant(k), cmp: Comparison::AtMost, rhs: Operand::Argument(a) })
            }
            (Side::Known(Operand::Constant(k)), Comparison::Below, Side::DividedByUnknown(a)) => {
                (k >= 0).then_some(ArgRelation { lhs: Operand::Constant(k + 1), cmp: Comparison::AtMost, rhs: Operand::Argument(a) })
            }
            _ => None,
        }
    }

    /// A passed variable, one divided by another, or a constant.
    fn operand(&self, r: Range<usize>, passed: &[Option<&'t str>]) -> Option<Side> {
        let s = self.s;
        let r = self.without_parentheses(r);
        let argument = |j: usize| passed.iter().position(|&p| p == Some(s.str(j))).and_then(|p| u32::try_from(p).ok());
        match r.len() {
            1 if s.toks[r.start].kind == Kind::Ident => return argument(r.start).map(|a| Side::Known(Operand::Argument(a))),
            3 if s.is(r.start + 1, "/") && s.toks[r.start + 2].kind == Kind::Ident => {
                return match (argument(r.start), argument(r.start + 2)) {
                    (Some(a), Some(b)) => Some(Side::Known(Operand::Quotient(a, b))),
                    (Some(a), None) => Some(Side::DividedByUnknown(a)),
                    _ => None,
                };
            }
            _ => {}
        }
        let v = Parser { e: self, pos: r.start, end: r.end, depth: 0, bound: None }.whole()?;
        i64::try_from(v).ok().map(|c| Side::Known(Operand::Constant(c)))
    }

    fn without_parentheses(&self, mut r: Range<usize>) -> Range<usize> {
        while r.len() > 2 && self.s.is(r.start, "(") && self.s.close[r.start] == Some(r.end - 1) {
            r = r.start + 1..r.end - 1;
        }
        r
    }

    /// `(add, div)` where the tokens `r` compute `(word + add) / div` (or
    /// `word + add` with div 1; the sum only with add 0) for every value of
    /// `word`, which they name once.
    fn quotient_of(&self, r: Range<usize>, word: &str) -> Option<(i64, u32)> {
        let s = self.s;
        let at = |value: i128, r: &Range<usize>| Parser { e: self, pos: r.start, end: r.end, depth: 0, bound: Some((word, value)) }.whole();
        // The top level of `r`: a dividend, `/`, and one divisor token or bracket.
        let mut top = Vec::new();
        let mut i = r.start;
        while i < r.end {
            top.push(i);
            i = s.skip(i)?;
        }
        let (dividend, div) = match top.as_slice() {
            [.., slash, last] if s.is(*slash, "/") && s.skip(*last) == Some(r.end) => {
                (self.without_parentheses(r.start..*slash), self.int(*last..r.end, 0)?)
            }
            _ => (r.clone(), 1),
        };
        (self.names.mentions_in(word, dividend.clone()).len() == 1).then_some(())?;
        // The dividend is `word + add`: it moves one for one with `word`.
        let add = at(0, &dividend)?;
        let moves = [1, 4_099, 1_000_003].iter().all(|&w| at(w, &dividend) == Some(add + w));
        (moves && (div > 1 || add == 0)).then_some(())?;
        Some((i64::try_from(add).ok()?, div))
    }

    /// The component expressions of a `dim3` argument, through one
    /// variable's declaration; an integer expression is the x component.
    fn component_parts(&self, r: Range<usize>, depth: u32) -> Vec<Range<usize>> {
        let s = self.s;
        if r.is_empty() || depth > 1 {
            return Vec::new();
        }
        let opener = if s.is(r.start, "dim3") { r.start + 1 } else { r.start };
        let constructor = s.is(opener, "{") || (opener > r.start && s.is(opener, "("));
        if constructor && s.close[opener] == Some(r.end - 1) {
            return s.split(opener + 1..r.end - 1).unwrap_or_default();
        }
        if let Some(word) = s.single_name(&r) {
            let body = s.body_of[self.at];
            let decl = self.names.declarations.get(word).and_then(|d| d.iter().rev().find(|&&j| j < self.at && s.body_of[j] == body && body.is_some()));
            if let Some(&decl) = decl {
                let words = s.declaration_words(decl).unwrap_or_default();
                if words.contains(&"dim3") && s.is(decl + 1, "(") && self.unchanged(word) {
                    return s.close[decl + 1].and_then(|c| s.split(decl + 2..c)).unwrap_or_default();
                }
                // An integer variable is the x component.
                if words.contains(&"dim3") {
                    return Vec::new();
                }
            }
        }
        vec![r]
    }
}

/// One side of a comparison before a launch.
enum Side {
    Known(Operand),
    /// An argument divided by a value the kernel is not passed.
    DividedByUnknown(u32),
}

/// Precedence climbing over integer expressions; anything else fails.
struct Parser<'e, 's, 't> {
    e: &'e Eval<'s, 't>,
    pos: usize,
    end: usize,
    depth: u32,
    /// A name read as the given value instead of being followed.
    bound: Option<(&'e str, i128)>,
}

impl Parser<'_, '_, '_> {
    fn str(&self, i: usize) -> &str {
        if i < self.end {
            self.e.s.str(i)
        } else {
            ""
        }
    }

    /// The binary operator at the cursor: (spelling, precedence, tokens).
    fn operator(&self) -> Option<(&'static str, u8, usize)> {
        let s = self.e.s;
        let doubled = |c: &str| self.str(self.pos + 1) == c && s.toks[self.pos].end == s.toks[self.pos + 1].start;
        let op = match self.str(self.pos) {
            "*" => ("*", 6, 1),
            "/" => ("/", 6, 1),
            "%" => ("%", 6, 1),
            "+" => ("+", 5, 1),
            "-" => ("-", 5, 1),
            "<" if doubled("<") => ("<<", 4, 2),
            ">" if doubled(">") => (">>", 4, 2),
            "&" if !doubled("&") => ("&", 3, 1),
            "^" => ("^", 2, 1),
            "|" if !doubled("|") => ("|", 1, 1),
            _ => return None,
        };
        Some(op)
    }

    fn expr(&mut self, min: u8) -> Option<i128> {
        let mut lhs = self.unary()?;
        while let Some((op, prec, len)) = self.operator().filter(|o| o.1 >= min) {
            self.pos += len;
            let rhs = self.expr(prec + 1)?;
            lhs = match op {
                "*" => lhs.checked_mul(rhs)?,
                "/" => lhs.checked_div(rhs)?,
                "%" => lhs.checked_rem(rhs)?,
                "+" => lhs.checked_add(rhs)?,
                "-" => lhs.checked_sub(rhs)?,
                "<<" if (0..64).contains(&rhs) => lhs.checked_mul(1 << rhs)?,
                ">>" if (0..64).contains(&rhs) => lhs >> rhs,
                "&" => lhs & rhs,
                "^" => lhs ^ rhs,
                "|" => lhs | rhs,
                _ => return None,
            };
            if lhs.unsigned_abs() > u64::MAX as u128 {
                return None;
            }
        }
        Some(lhs)
    }

    fn unary(&mut self) -> Option<i128> {
        let at = self.pos;
        self.pos += 1;
        match self.str(at) {
            "-" => self.unary().map(|v| -v),
            "+" => self.unary(),
            "~" => self.unary().map(|v| !v),
            "(" => {
                let close = self.e.s.close[at].filter(|&c| c < self.end)?;
                let v = Parser { e: self.e, pos: at + 1, end: close, depth: self.depth, bound: self.bound }.whole()?;
                self.pos = close + 1;
                Some(v)
            }
            word => match self.e.s.toks.get(at)?.kind {
                Kind::Number => parse_int(word),
                Kind::Ident if self.bound.is_some_and(|(name, _)| name == word) => self.bound.map(|(_, v)| v),
                Kind::Ident => match self.e.variable(at, self.depth + 1)? {
                    [Some(x), Some(1), Some(1)] => Some(x as i128),
                    _ => None,
                },
                _ => None,
            },
        }
    }

    fn whole(mut self) -> Option<i128> {
        let v = self.expr(0)?;
        (self.pos == self.end).then_some(v)
    }
}

/// The value of constant integer arithmetic written alone (`1 * 2`,
/// `(64 >> 1) + 4`); None where it names anything.
fn fold_constant(text: &str) -> Option<i128> {
    let s = Scanner::new(text);
    if s.toks.iter().any(|t| t.kind == Kind::Ident) {
        return None;
    }
    let names = Names::new(&s, &[]);
    let e = Eval { s: &s, at: s.toks.len(), names: &names };
    Parser { e: &e, pos: 0, end: s.toks.len(), depth: 0, bound: None }.whole()
}

/// An integer literal with C's prefixes, separators and suffixes.
fn parse_int(literal: &str) -> Option<i128> {
    let digits: String = literal.trim_end_matches(['u', 'U', 'l', 'L', 'z', 'Z']).chars().filter(|&c| c != '\'').collect();
    let lower = digits.to_ascii_lowercase();
    let (radix, body) = if let Some(hex) = lower.strip_prefix("0x") {
        (16, hex)
    } else if let Some(bin) = lower.strip_prefix("0b") {
        (2, bin)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    i128::from_str_radix(body, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    type Dims = [Option<u32>; 3];

    /// The (grid, group) of each launch, with the kernel's name.
    fn shapes(text: &str) -> Vec<(String, Dims, Dims)> {
        kernel_launches(text).into_iter().map(|l| (l.kernel, l.grid, l.group)).collect()
    }

    const ONE: Option<u32> = Some(1);

    #[test]
    fn literal_launches_and_the_launch_range() {
        let text = "void host(float* p) {\n  fill<<<1, 1>>>(p);\n  fill<<<8, 256, 0, stream>>>(p);\n}\n";
        let launches = kernel_launches(text);
        assert_eq!(shapes(text), [("fill".into(), [ONE; 3], [ONE; 3]), ("fill".into(), [Some(8), ONE, ONE], [Some(256), ONE, ONE])]);
        assert_eq!(&text[launches[0].range.clone()], "fill<<<1, 1>>>(p)");
    }

    #[test]
    fn dim3_variables_are_followed_to_their_declaration() {
        let text = "void host(int n) {\n  const dim3 block(32, 8);\n  dim3 grid = dim3(4, 2);\n  k<<<grid, block>>>(n);\n}\n";
        assert_eq!(shapes(text), [("k".into(), [Some(4), Some(2), ONE], [Some(32), Some(8), ONE])]);
    }

    #[test]
    fn each_branch_launches_with_its_own_declaration() {
        let text = "void host(int n) {\n  if (n < 1024) {\n    const dim3 block(32, 1, 1);\n    k<32><<<n, block>>>(n);\n  } else {\n    const dim3 block(1024, 1, 1);\n    k<1024><<<n, block>>>(n);\n  }\n}\n";
        let shapes = shapes(text);
        assert_eq!(shapes.iter().map(|s| s.2).collect::<Vec<_>>(), vec![[Some(32), Some(1), Some(1)], [Some(1024), Some(1), Some(1)]]);
    }

    #[test]
    fn a_variable_changed_after_its_declaration_is_unknown() {
        let text = "void host(int n) {\n  dim3 block(32);\n  if (n) block.y = 2;\n  k<<<1, block>>>(n);\n}\n";
        assert_eq!(shapes(text), [("k".into(), [ONE; 3], [None; 3])]);
    }

    #[test]
    fn expanded_macros_and_constant_arithmetic_evaluate() {
        // What `#define N 4096` and `#define THREADS (1 << 8)` leave after preprocessing.
        let text = "constexpr int kRows = 2;\nvoid host(int n) {\n  k<<<4096 / (1 << 8), dim3((1 << 8), kRows)>>>(n);\n}\n";
        assert_eq!(shapes(text), [("k".into(), [Some(16), ONE, ONE], [Some(256), Some(2), ONE])]);
    }

    #[test]
    fn unknown_expressions_stay_unknown() {
        let text = "void host(int n, dim3 shape) {\n  k<<<(n + 255) / 256, shape>>>(n);\n  k<<<dim3(n, 2), 64>>>(n);\n}\n";
        assert_eq!(shapes(text), [("k".into(), [None, ONE, ONE], [None; 3]), ("k".into(), [None, Some(2), ONE], [Some(64), ONE, ONE])]);
    }

    #[test]
    fn templated_kernels_are_named_without_their_arguments() {
        let text = "void host(float* p) {\n  ns::tile<float, 16><<<dim3(2, 2), dim3(16, 16)>>>(p);\n}\n";
        assert_eq!(shapes(text), [("tile".into(), [Some(2), Some(2), ONE], [Some(16), Some(16), ONE])]);
    }

    #[test]
    fn launch_apis_name_the_kernel_through_casts() {
        let text = "void host(void** args) {\n  cudaLaunchKernel((void*)&reduce<int>, dim3(1), dim3(128), args, 0, 0);\n  cudaLaunchCooperativeKernel(reinterpret_cast<void*>(scan), 4, 64, args);\n}\n";
        assert_eq!(shapes(text), [("reduce".into(), [ONE; 3], [Some(128), ONE, ONE]), ("scan".into(), [Some(4), ONE, ONE], [Some(64), ONE, ONE])]);
    }

    #[test]
    fn chevrons_in_comments_and_strings_are_not_launches() {
        let text = "void host() {\n  // k<<<1, 1>>>();\n  /* k<<<2, 2>>>(); */\n  puts(\"k<<<3, 3>>>()\");\n}\n";
        assert_eq!(shapes(text), []);
    }

    #[test]
    fn a_launched_template_keeps_its_arguments() {
        let launches = kernel_launches("void host() {\n  k<float, 16><<<1, 32>>>(p);\n  k<<<2, 64>>>(p);\n}\n");
        let args: Vec<Option<&str>> = launches.iter().map(|l| l.template_args.as_deref()).collect();
        assert_eq!(args, [Some("float, 16"), None]);
    }

    /// The argument lists each mention of a kernel template stands for.
    fn instances(text: &str) -> Vec<Vec<String>> {
        kernel_launches(text).into_iter().filter(|l| l.template_args.is_some()).map(|l| l.instances).collect()
    }

    #[test]
    fn a_launch_in_a_host_template_runs_with_its_instantiations() {
        let text = "template <typename T, int N> __global__ void k(T* p);\ntemplate <typename T> void run(T* p) { k<T, 16><<<1, 32>>>(p); }\ntemplate void run<float>(float*);\nextern template void run<double>(double*);\n";
        assert_eq!(instances(text), [["float, 16"]]);
    }

    #[test]
    fn constexpr_locals_and_handed_on_kernels_follow_the_chain() {
        let text = "template <int D, bool S> __global__ void k(float* p);\n\
            template <int D, int C, bool S> void impl(float* p) { auto f = k<D, S>; launch(f, p); }\n\
            template <int D> void pick(float* p, bool s) {\n\
              if (s) { constexpr bool soft = true; impl<D, 1, soft>(p); } else { constexpr bool soft = false; impl<D, 1, soft>(p); }\n\
            }\n\
            void host(float* p) { pick<64>(p, true); pick<128>(p, false); }\n";
        assert_eq!(instances(text), [["64, true", "128, true", "64, false", "128, false"]]);
    }

    #[test]
    fn a_host_template_nobody_instantiates_leaves_its_parameters() {
        let text = "template <typename T, int N> __global__ void k(T* p);\ntemplate <typename T> void run(T* p) { k<T, 2 * 8><<<1, 32>>>(p); }\n";
        assert_eq!(instances(text), [["T, 16"]]);
    }

    #[test]
    fn a_host_template_named_at_many_places_stays_fast_and_keeps_its_parameters() {
        // Each launch looks up its names' declarations, each call site its
        // arguments: with a scan back over the body per lookup this takes seconds.
        let launches = "  k<real, M><<<n, 32>>>(p, n);\n".repeat(20_000);
        let calls: String = (0..20_000).map(|i| format!("  host<{}>(p, 1);\n", i % 3)).collect();
        let text = format!("template <typename T, int N> __global__ void k(T* p, int n);\ntemplate <int M> void host(float* p, int n) {{\n{launches}}}\nvoid top(float* p) {{\n{calls}}}\n");
        let found = instances(&text);
        assert_eq!(found.len(), 20_000);
        assert_eq!(found[0], ["real, M"]);
    }

    #[test]
    fn a_local_named_like_the_kernel_is_not_the_kernel() {
        let text = "__global__ void k(float* x) { int k = threadIdx.x; x[k] = 0; }\nvoid run(float* x) { k<<<1, 32>>>(x); }";
        let launches = kernel_launches(text);
        assert_eq!(launches.len(), 1, "{launches:?}");
        assert_eq!(launches[0].grid, [Some(1), Some(1), Some(1)]);
    }

    #[test]
    fn a_switch_case_fixes_the_variable_it_tests() {
        let text = "void host(int n, int k) {\n  dim3 threads(32, k);\n  switch (k) {\n    case 16:\n      t<16><<<n, threads>>>(n, k);\n      break;\n    case 8:\n    case 4:\n      t<8><<<n, threads>>>(n, k);\n      break;\n    default:\n      t<0><<<n, threads>>>(n, k);\n  }\n}\n";
        let launches = kernel_launches(text);
        let groups: Vec<Dims> = launches.iter().map(|l| l.group).collect();
        assert_eq!(groups, [[Some(32), Some(16), ONE], [Some(32), None, ONE], [Some(32), None, ONE]]);
        // Where the value is not fixed, the extent is the argument it is passed as.
        let args: Vec<[Option<u32>; 3]> = launches.iter().map(|l| l.group_args).collect();
        assert_eq!(args, [[None; 3], [None, Some(1), None], [None, Some(1), None]]);
    }

    #[test]
    fn a_switched_variable_changed_in_the_function_is_unknown() {
        let text = "void host(int n, int k) {\n  dim3 threads(32, k);\n  k += 1;\n  switch (k) {\n    case 16:\n      t<<<n, threads>>>(n, k);\n      break;\n  }\n  t<<<n, dim3(32, n)>>>(n, k);\n  n++;\n}\n";
        let launches = kernel_launches(text);
        assert_eq!(launches.iter().map(|l| l.group).collect::<Vec<_>>(), [[Some(32), None, ONE]; 2]);
        assert_eq!(launches.iter().map(|l| l.group_args).collect::<Vec<_>>(), [[None; 3]; 2]);
    }

    #[test]
    fn many_launches_in_deep_blocks_stay_fast() {
        // Each launch looks up its enclosing blocks and `case` labels: with a
        // scan back over the text per lookup this takes minutes.
        let launches = "k<<<n, threads>>>(n, k);\n".repeat(20_000);
        let text = format!("void host(int n, int k) {{ dim3 threads(32, k); switch (k) {{ case 8: {}{}{} }} }}\n", "{".repeat(2_000), launches, "}".repeat(2_000));
        let found = kernel_launches(&text);
        assert_eq!(found.len(), 20_000);
        assert_eq!(found[0].group, [Some(32), Some(8), Some(1)]);
    }

    #[test]
    fn a_kernel_handed_on_may_run_with_any_shape() {
        let text = "__global__ void k(int* p);\nvoid host(int* p) {\n  k<<<1, 32>>>(p);\n  cudaFuncSetAttribute(k, attr, 0);\n  cudaFuncSetAttribute((k), attr, 0);\n  run_later(k);\n}\n";
        assert_eq!(shapes(text), [("k".into(), [ONE; 3], [Some(32), ONE, ONE]), ("k".into(), [None; 3], [None; 3])]);
    }
}

#[cfg(test)]
mod grid_count_tests {
    use super::*;

    #[test]
    fn group_counts_follow_kernel_arguments() {
        let text = "void run(float* p, int n, int m) {\n  dim3 grid(n / 16, (m + 15) / 16);\n  k<<<grid, dim3(16, 16)>>>(p, n, m);\n  int blocks = n / 256;\n  k<<<blocks, 256>>>(p, n, m);\n  k<<<(n + 255) / 256, 256>>>(p, m, n);\n  k<<<n, 1>>>(p, n, m);\n  k<<<n / 16 + 1, 1>>>(p, n, m);\n  k<<<2 * n / 16, 1>>>(p, n, m);\n}\n";
        let counts: Vec<_> = kernel_launches(text).iter().map(|l| l.grid_args).collect();
        let c = |arg, add, div| Some(GroupCount { arg, add, div });
        assert_eq!(counts, [[c(1, 0, 16), c(2, 15, 16), None], [c(1, 0, 256), None, None], [c(2, 255, 256), None, None], [c(1, 0, 1), None, None], [None; 3], [None; 3]]);
    }

    #[test]
    fn a_group_extent_written_as_an_argument_is_that_argument() {
        let text = "void run(float* p, int n, int m) {
  dim3 block(n / 8, 16);
  k<<<1, block>>>(p, n / 8, m);
  k<<<1, dim3(m * 2 + 1, n >> 1)>>>(p, n >> 1, m * 2 + 1);
  k<<<1, dim3(n / 4)>>>(p, n / 8, f(n) / 4);
  k<<<1, dim3(f(n))>>>(p, f(n));
  k<<<1, dim3(q->n / 4)>>>(p, q->n / 4);
}
void changed(float* p, int m) {
  dim3 block(m / 4);
  m += 1;
  k<<<1, block>>>(p, m / 4);
}
void aliased(float* p, int m) {
  int* q = &m;
  dim3 block(m / 4);
  *q = 1;
  k<<<1, block>>>(p, m / 4);
}
";
        let args: Vec<_> = kernel_launches(text).iter().map(|l| l.group_args).collect();
        assert_eq!(args, [[Some(1), None, None], [Some(2), Some(1), None], [None; 3], [None; 3], [None; 3], [None; 3], [None; 3]]);
    }

    #[test]
    fn a_variable_changed_before_the_shape_is_written_still_ties_it() {
        let text = "void run(float* p, int n, int m) {
  n >>= 3;
  dim3 block(n / 4, 16);
  k<<<n / 16, block>>>(p, n / 4, n);
  if (m == 64) { m >>= 1; k<<<1, 1>>>(p, m); }
  dim3 g(m / 16);
  m += 2;
  k<<<g, 1>>>(p, m);
}
void other(float* p, int m) {
  m /= 2;
  if (m == 64) k<<<1, 1>>>(p, m);
}
void looped(float* p, int m) {
  for (int i = 0; i < 4; i++) { k<<<m, 1>>>(p, m); m -= 1; }
}
";
        let launches = kernel_launches(text);
        let facts: Vec<_> = launches.iter().map(|l| (l.group_args[0], l.grid_args[0], l.arg_relations.clone())).collect();
        let equal_64 = ArgRelation { lhs: Operand::Argument(1), cmp: Comparison::Equal, rhs: Operand::Constant(64) };
        assert_eq!(
            facts,
            [
                (Some(1), Some(GroupCount { arg: 2, add: 0, div: 16 }), vec![]),
                (None, None, vec![]),
                (None, None, vec![]),
                (None, None, vec![equal_64]),
                (None, None, vec![]),
            ]
        );
    }

    #[test]
    fn checks_and_early_returns_before_a_launch_relate_its_arguments() {
        let text = "void run(float* p, int c, int h, int n) {
  assert(n <= 1024 && c > 0);
  TORCH_CHECK(c / h == 64, \"heads\");
  if (n != 256 || h < 2) return;
  if (c > n) { log(c); throw bad(c); }
  if (h == 3) return;
  {
    if (c >= 4096) return;
    k<<<1, 1>>>(p, c, h, n);
  }
}
void others(float* p, int c, int h, int n) {
  if (n > 32) return; else c = 1;
  if (h < 4) { return; } else { h = 4; }
  if (n > 64) { if (c) return; }
  if (n > 16) foo();
  switch (h) { case 1: if (n > 2) return; case 2: k<<<1, 1>>>(p, c, h, n); }
  k<<<1, 1>>>(p, c, h, n);
}
void later(float* p, int n) {
  if (n > 8) return;
  n += 1;
  k<<<1, 1>>>(p, n);
}
";
        let relations: Vec<_> = kernel_launches(text).into_iter().map(|l| l.arg_relations).collect();
        let rel = |lhs, cmp, rhs| ArgRelation { lhs, cmp, rhs };
        use {Comparison::*, Operand::*};
        assert_eq!(
            relations,
            [
                vec![
                    rel(Argument(1), Below, Constant(4096)),
                    rel(Argument(1), AtMost, Argument(3)),
                    rel(Argument(3), Equal, Constant(256)),
                    rel(Constant(2), AtMost, Argument(2)),
                    rel(Quotient(1, 2), Equal, Constant(64)),
                    rel(Argument(3), AtMost, Constant(1024)),
                    rel(Constant(0), Below, Argument(1)),
                ],
                vec![],
                vec![],
                vec![],
            ]
        );
    }

    #[test]
    fn malformed_checks_before_a_launch_say_nothing() {
        for text in [
            "void f(int n) { if (n > 2) { return; k<<<1, 1>>>(p, n); }",
            "void f(int n) { if (n > 2 return; k<<<1, 1>>>(p, n); }",
            "void f(int n) { if (n > 2) return k<<<1, 1>>>(p, n); }",
            "void f(int n) { assert(; k<<<1, 1>>>(p, n); }",
            "void f(int n) { assert(n <); if () return; if (n != ) { throw; } k<<<1, 1>>>(p, n); }",
            "void f(int n) { if (n > 2) {} k<<<1, 1>>>(p, n); }",
            "void f(int n) { TORCH_CHECK(, n > 2); if (n) return; k<<<1, 1>>>(p, n); }",
        ] {
            let relations: Vec<_> = kernel_launches(text).into_iter().flat_map(|l| l.arg_relations).collect();
            assert_eq!(relations, [], "{text}");
        }
    }

    #[test]
    fn malformed_or_huge_group_counts_are_unknown() {
        let deep = format!("{}n{}", "(".repeat(500), ")".repeat(500));
        let text = format!("void run(float* p, int n) {{
  k<<<(n + ) / 16, 1>>>(p, n);
  k<<<(n + 99999999999999999999999) / 16, 1>>>(p, n);
  k<<<n / 0, 1>>>(p, n);
  k<<<{deep} / 4, 1>>>(p, n);
  k<<<(n + n) / 2, 1>>>(p, n);
}}
");
        let counts: Vec<_> = kernel_launches(&text).iter().map(|l| l.grid_args[0]).collect();
        assert_eq!(counts, [None, None, None, Some(GroupCount { arg: 1, add: 0, div: 4 }), None]);
    }

    #[test]
    fn conditions_around_a_launch_relate_its_arguments() {
        let text = "void run(float* p, int b, int c, int h, int n) {
  if (b > 1 && c / h == 64 && n / b == 2) {
    if (n <= 4 * 256) k<<<b * h, 64>>>(p, c, h, n);
  } else if (n == c) {
    k<<<1, 1>>>(p, c, h, n);
  } else {
    k<<<2, 1>>>(p, c, h, n);
  }
  if (n < 8 || c == h) k<<<3, 1>>>(p, c, h, n);
  if (4 < c / h && (c & 1) == 0) k<<<4, 1>>>(p, c, h, n);
  if (n == ) k<<<5, 1>>>(p, c, h, n);
  if (((((n)))) <= c / 0) k<<<6, 1>>>(p, c, h, n);
  if (n <= 99999999999999999999999) k<<<7, 1>>>(p, c, h, n);
}
";
        let relations: Vec<_> = kernel_launches(text).into_iter().map(|l| l.arg_relations).collect();
        let rel = |lhs, cmp, rhs| ArgRelation { lhs, cmp, rhs };
        use {Comparison::*, Operand::*};
        assert_eq!(
            relations,
            [
                vec![rel(Argument(3), AtMost, Constant(1024)), rel(Quotient(1, 2), Equal, Constant(64)), rel(Constant(2), AtMost, Argument(3))],
                vec![rel(Argument(3), Equal, Argument(1))],
                vec![],
                vec![],
                vec![rel(Constant(4), Below, Quotient(1, 2))],
                vec![],
                vec![],
                vec![],
            ]
        );
    }
}
