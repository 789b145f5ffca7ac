//! `lockstep server`: a language server over standard input and output.
//!
//! Each open document's text is checked as `lockstep check` checks the file (the configuration
//! found from its path, rule selection, suppressions), on open, change and save. Code actions
//! offer the machine-applicable fixes and a suppression comment; hovering a barrier says what it
//! orders. The server is single-threaded and synchronous: a document is checked again as soon as
//! it changes, before the next message is read.

use crate::check::{check_one, settings_for, CommonSettings, FileReport};
use crate::config::{Discovery, CONFIG_NAMES};
use lockstep_dbe::{BarrierReport, Keep, Space, Verdict};
use lockstep_diag::{Diagnostic, Severity};
use lockstep_source::{FileId, SourceDb, SourceFile, Span};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types as lsp;
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `lockstep server`: serves the client on standard input and output until it says `exit`.
pub fn run() -> ExitCode {
    let (connection, io_threads) = Connection::stdio();
    let served = serve(connection);
    let joined = io_threads.join().map_err(|e| e.to_string());
    match served.and(joined) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Answers `initialize`, then handles messages until `shutdown` and `exit`.
pub fn serve(connection: Connection) -> Result<(), String> {
    let (id, params) = connection.initialize_start().map_err(|e| e.to_string())?;
    let params: lsp::InitializeParams = serde_json::from_value(params).map_err(|e| format!("initialize: {e}"))?;
    let initialized = serde_json::json!({
        "capabilities": capabilities(),
        "serverInfo": { "name": "lockstep", "version": env!("CARGO_PKG_VERSION") },
    });
    connection.initialize_finish(id, initialized).map_err(|e| e.to_string())?;
    let watches_files = params.capabilities.workspace.and_then(|w| w.did_change_watched_files).and_then(|w| w.dynamic_registration).unwrap_or(false);
    if watches_files {
        send(
            &connection,
            Request::new(RequestId::from("watch-configuration".to_string()), lsp::request::RegisterCapability::METHOD.into(), config_watchers()).into(),
        );
    }
    let mut server = Server { discovery: Discovery::default(), documents: HashMap::new() };
    for message in &connection.receiver {
        match message {
            Message::Request(request) => {
                if connection.handle_shutdown(&request).map_err(|e| e.to_string())? {
                    return Ok(());
                }
                send(&connection, server.answer(request).into());
            }
            Message::Notification(notification) => {
                for published in server.notified(notification) {
                    send(&connection, published);
                }
            }
            // The only request the server sends is the watcher registration; its answer needs nothing.
            Message::Response(_) => {}
        }
    }
    Ok(())
}

fn send(connection: &Connection, message: Message) {
    // The channel closes only when the client is gone; the receiving loop then ends too.
    let _ = connection.sender.send(message);
}

fn capabilities() -> lsp::ServerCapabilities {
    lsp::ServerCapabilities {
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(lsp::TextDocumentSyncOptions {
            open_close: Some(true),
            change: Some(lsp::TextDocumentSyncKind::FULL),
            save: Some(lsp::TextDocumentSyncSaveOptions::Supported(true)),
            ..Default::default()
        })),
        code_action_provider: Some(lsp::CodeActionProviderCapability::Options(lsp::CodeActionOptions {
            code_action_kinds: Some(vec![lsp::CodeActionKind::QUICKFIX]),
            ..Default::default()
        })),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        ..Default::default()
    }
}

/// Asks the client to report changes of every configuration file name.
fn config_watchers() -> lsp::RegistrationParams {
    let watchers =
        CONFIG_NAMES.iter().map(|name| lsp::FileSystemWatcher { glob_pattern: lsp::GlobPattern::String(format!("**/{name}")), kind: None }).collect();
    let options = lsp::DidChangeWatchedFilesRegistrationOptions { watchers };
    lsp::RegistrationParams {
        registrations: vec![lsp::Registration {
            id: "lockstep-configuration".into(),
            method: lsp::notification::DidChangeWatchedFiles::METHOD.into(),
            register_options: Some(serde_json::to_value(options).expect("options serialize")),
        }],
    }
}

struct Document {
    /// Where the document is on disk: its configuration, language and includes are found from it.
    path: Option<PathBuf>,
    text: String,
    version: i32,
    /// The last check; None when the language is not one lockstep reads or the configuration is broken.
    report: Option<FileReport>,
}

struct Server {
    discovery: Discovery,
    documents: HashMap<lsp::Uri, Document>,
}

impl Server {
    fn answer(&self, request: Request) -> Response {
        let id = request.id.clone();
        let result = match request.method.as_str() {
            lsp::request::CodeActionRequest::METHOD => parse(request.params).map(|p| serde_json::to_value(self.code_actions(&p))),
            lsp::request::HoverRequest::METHOD => parse(request.params).map(|p| serde_json::to_value(self.hover(&p))),
            method => return Response::new_err(id, ErrorCode::MethodNotFound as i32, format!("lockstep does not answer `{method}`")),
        };
        match result {
            Ok(Ok(value)) => Response::new_ok(id, value),
            Ok(Err(e)) | Err(e) => Response::new_err(id, ErrorCode::InvalidParams as i32, e.to_string()),
        }
    }

    /// Handles a notification; returns the diagnostics to publish.
    fn notified(&mut self, notification: Notification) -> Vec<Message> {
        let method = notification.method.clone();
        self.handle(notification).unwrap_or_else(|e| {
            // Standard error is the client's log of the server.
            eprintln!("lockstep server: ignored a malformed `{method}` notification: {e}");
            Vec::new()
        })
    }

    fn handle(&mut self, notification: Notification) -> Result<Vec<Message>, serde_json::Error> {
        use lsp::notification::*;
        Ok(match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let p: lsp::DidOpenTextDocumentParams = parse(notification.params)?;
                let item = p.text_document;
                let document = Document { path: path_of(&item.uri), text: item.text, version: item.version, report: None };
                self.documents.insert(item.uri.clone(), document);
                self.recheck(&[item.uri])
            }
            DidChangeTextDocument::METHOD => {
                let p: lsp::DidChangeTextDocumentParams = parse(notification.params)?;
                let Some(document) = self.documents.get_mut(&p.text_document.uri) else { return Ok(Vec::new()) };
                // Full synchronization: each change holds the whole text.
                if let Some(change) = p.content_changes.into_iter().last() {
                    document.text = change.text;
                }
                document.version = p.text_document.version;
                self.recheck(&[p.text_document.uri])
            }
            // A saved file may be included by other open documents: check them all again.
            DidSaveTextDocument::METHOD => self.recheck_all(),
            DidCloseTextDocument::METHOD => {
                let p: lsp::DidCloseTextDocumentParams = parse(notification.params)?;
                self.documents.remove(&p.text_document.uri);
                vec![publish(p.text_document.uri, Vec::new(), None)]
            }
            DidChangeWatchedFiles::METHOD => {
                let p: lsp::DidChangeWatchedFilesParams = parse(notification.params)?;
                let is_config = |uri: &lsp::Uri| path_of(uri).is_some_and(|p| p.file_name().is_some_and(|n| CONFIG_NAMES.iter().any(|c| n == *c)));
                if !p.changes.iter().any(|c| is_config(&c.uri)) {
                    return Ok(Vec::new());
                }
                // Forget every configuration read so far.
                self.discovery = Discovery::default();
                self.recheck_all()
            }
            _ => Vec::new(),
        })
    }

    fn recheck_all(&mut self) -> Vec<Message> {
        let uris: Vec<lsp::Uri> = self.documents.keys().cloned().collect();
        self.recheck(&uris)
    }

    /// Checks the documents again and returns their diagnostics to publish.
    fn recheck(&mut self, uris: &[lsp::Uri]) -> Vec<Message> {
        let mut out = Vec::new();
        for uri in uris {
            let Some(document) = self.documents.get_mut(uri) else {
                continue;
            };
            let analysis = analyse(&self.discovery, document.path.as_deref(), &document.text);
            let diagnostics = match &analysis {
                Ok(Some(report)) => report.diagnostics.iter().map(|d| to_lsp(&report.db, d, uri)).collect(),
                Ok(None) => Vec::new(),
                Err(error) => vec![lsp::Diagnostic {
                    severity: Some(lsp::DiagnosticSeverity::ERROR),
                    source: Some("lockstep".into()),
                    message: format!("not checked: {error}"),
                    ..Default::default()
                }],
            };
            document.report = analysis.unwrap_or(None);
            out.push(publish(uri.clone(), diagnostics, Some(document.version)));
        }
        out
    }

    fn code_actions(&self, p: &lsp::CodeActionParams) -> Vec<lsp::CodeActionOrCommand> {
        let Some(Document { report: Some(report), .. }) = self.documents.get(&p.text_document.uri) else {
            return Vec::new();
        };
        let uri = &p.text_document.uri;
        let mut actions = Vec::new();
        for d in &report.diagnostics {
            let diagnostic = to_lsp(&report.db, d, uri);
            if !overlaps(diagnostic.range, p.range) {
                continue;
            }
            let action = |title: String, edits: Vec<(Span, String)>, preferred: bool| {
                let mut by_file: Vec<(lsp::Uri, Vec<lsp::TextEdit>)> = Vec::new();
                for (span, new_text) in edits {
                    let edit = lsp::TextEdit { range: range(&report.db, span), new_text };
                    let file = uri_in(&report.db, span.file, uri);
                    match by_file.iter_mut().find(|(u, _)| *u == file) {
                        Some((_, list)) => list.push(edit),
                        None => by_file.push((file, vec![edit])),
                    }
                }
                lsp::CodeActionOrCommand::CodeAction(lsp::CodeAction {
                    title,
                    kind: Some(lsp::CodeActionKind::QUICKFIX),
                    diagnostics: Some(vec![diagnostic.clone()]),
                    edit: Some(lsp::WorkspaceEdit { changes: Some(by_file.into_iter().collect()), ..Default::default() }),
                    is_preferred: Some(preferred),
                    ..Default::default()
                })
            };
            if let Some(fix) = &d.fix {
                // The same refusals as `check --fix`: no edits to files with syntax errors or bad bytes.
                let (planned, refused) = crate::fix::plan(&report.db, std::slice::from_ref(d), report.has_syntax_errors);
                if refused.is_empty() && !planned.is_empty() {
                    let edits = fix.edits.iter().map(|e| (e.span, e.replacement.clone())).collect();
                    actions.push(action(capitalized(&fix.message), edits, true));
                }
            }
            if d.rule != crate::suppress::UNUSED_SUPPRESSION && crate::select::expand(&d.rule).is_ok() {
                let title = format!("Suppress `{}` on this line", d.rule);
                actions.push(action(title, vec![suppression(&report.db, d)], false));
            }
        }
        actions
    }

    fn hover(&self, p: &lsp::HoverParams) -> Option<lsp::Hover> {
        let at = &p.text_document_position_params;
        let Some(Document { report: Some(report), .. }) = self.documents.get(&at.text_document.uri) else {
            return None;
        };
        let root = FileId(0);
        let offset = offset_of(report.db.file(root), at.position);
        let hovered =
            report.barriers.iter().filter(|b| b.span.file == root && b.span.lo <= offset && offset <= b.span.hi).min_by_key(|b| b.span.hi - b.span.lo)?;
        // A barrier in a helper has one report per kernel it is inlined into.
        let copies: Vec<&BarrierReport> = report.barriers.iter().filter(|b| b.span == hovered.span).collect();
        Some(lsp::Hover {
            contents: lsp::HoverContents::Markup(lsp::MarkupContent { kind: lsp::MarkupKind::Markdown, value: explain_barrier(&report.db, &copies) }),
            range: Some(range(&report.db, hovered.span)),
        })
    }
}

fn parse<P: serde::de::DeserializeOwned>(params: serde_json::Value) -> Result<P, serde_json::Error> {
    serde_json::from_value(params)
}

fn publish(uri: lsp::Uri, diagnostics: Vec<lsp::Diagnostic>, version: Option<i32>) -> Message {
    let params = lsp::PublishDiagnosticsParams { uri, diagnostics, version };
    Notification::new(lsp::notification::PublishDiagnostics::METHOD.into(), params).into()
}

/// Checks a document's text as `lockstep check` checks the file at its path.
fn analyse(discovery: &Discovery, path: Option<&Path>, text: &str) -> Result<Option<FileReport>, String> {
    let Some(path) = path else { return Ok(None) };
    let settings = settings_for(&CommonSettings::default(), discovery, path)?;
    if settings.lang.is_none() {
        return Ok(None);
    }
    Ok(Some(check_one(path, Some(text.as_bytes()), &settings)?.report))
}

fn severity(s: Severity) -> lsp::DiagnosticSeverity {
    match s {
        Severity::Error => lsp::DiagnosticSeverity::ERROR,
        Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        Severity::Note => lsp::DiagnosticSeverity::INFORMATION,
    }
}

/// One diagnostic of the document at `uri`. Its labels (the other access, the divergent
/// predicate) and the definitions of the macros it came through become related information; a
/// finding in an included file is shown where the document leads to it (or on its first line),
/// with the included file's location as related information.
fn to_lsp(db: &SourceDb, d: &Diagnostic, uri: &lsp::Uri) -> lsp::Diagnostic {
    let related = |span: Span, message: String| lsp::DiagnosticRelatedInformation {
        location: lsp::Location { uri: uri_in(db, span.file, uri), range: range(db, span) },
        message,
    };
    let mut message = d.message.clone();
    if !d.primary_label.is_empty() {
        message.push_str(&format!(": {}", d.primary_label));
    }
    for note in &d.notes {
        message.push_str(&format!("\nnote: {note}"));
    }
    let mut related_information: Vec<_> = d.labels.iter().map(|l| related(l.span, l.message.clone())).collect();
    for expansion in db.macro_chain(d.span) {
        if let Some(definition) = expansion.definition {
            related_information.push(related(definition, format!("macro `{}` is defined here", expansion.name)));
        }
    }
    let in_document = d.span.file == FileId(0);
    let range = if in_document {
        range(db, d.span)
    } else {
        // Where the document leads to it (a call of a header's function), else its first line.
        d.labels.iter().find(|l| l.span.file == FileId(0)).map_or_else(lsp::Range::default, |l| range(db, l.span))
    };
    if !in_document {
        let (at, _) = db.location(d.span);
        message = format!("in {}:{}: {message}", db.file(d.span.file).path.display(), at.line);
        related_information.insert(0, related(d.span, d.primary_label.clone()));
    }
    lsp::Diagnostic {
        range,
        severity: Some(severity(d.severity)),
        code: Some(lsp::NumberOrString::String(d.rule.clone())),
        source: Some("lockstep".into()),
        message,
        related_information: (!related_information.is_empty()).then_some(related_information),
        ..Default::default()
    }
}

/// The URI of a file of the check: the document's own for the document, else its path's.
fn uri_in(db: &SourceDb, file: FileId, document: &lsp::Uri) -> lsp::Uri {
    if file == FileId(0) {
        document.clone()
    } else {
        uri_of(&db.file(file).path)
    }
}

fn overlaps(a: lsp::Range, b: lsp::Range) -> bool {
    a.start <= b.end && b.start <= a.end
}

fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// A `lockstep: allow(RULE)` comment at the end of the finding's line (see [`crate::suppress`]).
/// Every language lockstep reads has `//` comments; before a macro's line continuation only a
/// block comment keeps the definition intact.
fn suppression(db: &SourceDb, d: &Diagnostic) -> (Span, String) {
    let file = db.file(d.span.file);
    let line = file.location(d.span.lo).line;
    let text = file.line_text(line);
    let code = text.trim_end();
    let start = file.line_start(line);
    let directive = format!("lockstep: allow({})", d.rule);
    match code.strip_suffix('\\') {
        Some(before) => {
            let at = start + before.trim_end().len() as u32;
            (Span::new(d.span.file, at, start + code.len() as u32 - 1), format!(" /* {directive} */ "))
        }
        None => (Span::new(d.span.file, start + code.len() as u32, start + text.len() as u32), format!(" // {directive}")),
    }
}

/// An access in words: its code and where it is.
fn access(db: &SourceDb, span: Span) -> String {
    let code = db.snippet(span).split_whitespace().collect::<Vec<_>>().join(" ");
    let line = db.location(span).0.line;
    let place = if span.file == FileId(0) { format!("line {line}") } else { format!("{}:{line}", db.file(span.file).path.display()) };
    format!("`{code}` ({place})")
}

/// What a barrier orders, in words, from the dead-barrier analysis of every kernel it is in.
fn explain_barrier(db: &SourceDb, copies: &[&BarrierReport]) -> String {
    let mut out = String::from("**barrier**");
    if copies.len() > 1 {
        out.push_str(&format!(" (in {} kernels)", copies.len()));
    }
    out.push_str("\n\n");
    let keep = copies.iter().find_map(|b| match b.verdict {
        Verdict::Kept(k) => Some(k),
        Verdict::Removed => None,
    });
    let spaces: Vec<Space> = lockstep_dbe::SPACES.into_iter().filter(|s| copies.iter().any(|b| b.orders.contains(s.mem_space()))).collect();
    let flags = |space: Space| {
        copies.iter().map(|b| if space == Space::Shared { b.flags.shared } else { b.flags.device }).fold(lockstep_dbe::Flags::default(), |a, f| {
            lockstep_dbe::Flags {
                read_above: a.read_above || f.read_above,
                write_above: a.write_above || f.write_above,
                read_below: a.read_below || f.read_below,
                write_below: a.write_below || f.write_below,
            }
        })
    };
    let space_name = |space: Space| {
        if space == Space::Shared {
            "shared memory"
        } else {
            "device memory"
        }
    };
    match keep {
        None => out.push_str("It orders nothing: nothing before it is read or written by another thread after it, so it can be removed (`dead-barrier`)."),
        Some(Keep::Needed) => {
            let mut orders = Vec::new();
            for space in &spaces {
                let f = flags(*space);
                let mut pairs = Vec::new();
                if f.write_above && f.read_below {
                    pairs.push("writes before it apart from reads after it");
                }
                if f.write_above && f.write_below {
                    pairs.push("writes before it apart from writes after it");
                }
                if f.read_above && f.write_below {
                    pairs.push("reads before it apart from writes after it");
                }
                if !pairs.is_empty() {
                    orders.push(format!("in {}, it keeps {}", space_name(*space), pairs.join(", and ")));
                }
            }
            if orders.is_empty() {
                out.push_str("It is kept: the analysis could not show that it orders nothing.");
            } else {
                out.push_str(&format!("It is needed: {}. Without it, another thread could see these accesses in the wrong order.", orders.join("; ")));
            }
            let witness = copies.iter().find_map(|b| b.hazard.and_then(|h| Some((h.space, h.before?, h.after?))));
            if let Some((space, before, after)) = witness {
                out.push_str(&format!(
                    "\n\nFor example, {} before it and {} after it can touch the same {} from two threads.",
                    access(db, before),
                    access(db, after),
                    if space == Space::Shared { "shared cell" } else { "device cell" }
                ));
            }
        }
        Some(Keep::Reduction) => out.push_str("It also combines a value from every thread of the group; that result is data, so it stays."),
        Some(Keep::LeftAlone) => out.push_str("Not every thread of the group may reach it (`barrier-in-divergent-cf`), so it is not considered for removal."),
        Some(Keep::TooLarge) => out.push_str("The kernel is too large for the dead-barrier analysis; the barrier is kept without being analysed."),
    }
    if keep != Some(Keep::TooLarge) && !spaces.is_empty() {
        out.push('\n');
        for space in spaces {
            out.push_str(&format!("\n- {}: {}", space_name(space), lockstep_dbe::accesses_around(flags(space))));
        }
    }
    out
}

fn range(db: &SourceDb, span: Span) -> lsp::Range {
    let file = db.file(span.file);
    lsp::Range { start: position(file, span.lo), end: position(file, span.hi) }
}

/// The LSP position (0-based line, UTF-16 code units) of a byte offset.
fn position(file: &SourceFile, offset: u32) -> lsp::Position {
    let line = file.location(offset).line;
    let start = file.line_start(line) as usize;
    let mut end = (offset as usize).clamp(start, file.text.len());
    while !file.text.is_char_boundary(end) {
        end -= 1;
    }
    lsp::Position { line: line - 1, character: file.text[start..end].encode_utf16().count() as u32 }
}

/// The byte offset of an LSP position (past the line's end: its end).
fn offset_of(file: &SourceFile, at: lsp::Position) -> u32 {
    if at.line as usize >= file.line_count() {
        return file.text.len() as u32;
    }
    let start = file.line_start(at.line + 1);
    let mut units = 0;
    let mut offset = start;
    for c in file.line_text(at.line + 1).chars() {
        if units >= at.character {
            break;
        }
        units += c.len_utf16() as u32;
        offset += c.len_utf8() as u32;
    }
    offset
}

/// The path of a `file:` URI.
fn path_of(uri: &lsp::Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let escaped = (bytes[i] == b'%').then(|| bytes.get(i + 1..i + 3)).flatten().and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
        match escaped {
            Some(b) => {
                decoded.push(b);
                i += 3;
            }
            None => {
                decoded.push(bytes[i]);
                i += 1;
            }
        }
    }
    let path = String::from_utf8(decoded).ok()?;
    // `file:///C:/x` names `C:/x` on Windows.
    let path = if cfg!(windows) { path.strip_prefix('/').unwrap_or(&path).to_string() } else { path };
    Some(PathBuf::from(path))
}

/// The `file:` URI of a path.
fn uri_of(path: &Path) -> lsp::Uri {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let text = absolute.to_string_lossy().replace('\\', "/");
    let mut uri = String::from(if text.starts_with('/') { "file://" } else { "file:///" });
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~:".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.parse().expect("an escaped file URI parses")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units_and_round_trip() {
        let file = SourceFile::new("k.cu".into(), "a\n\u{e9}\u{1F600}x;\n".into(), false);
        // é is 2 bytes and 1 unit; the emoji is 4 bytes and 2 units.
        let x = "a\n\u{e9}\u{1F600}".len() as u32;
        assert_eq!(position(&file, x), lsp::Position { line: 1, character: 3 });
        assert_eq!(offset_of(&file, lsp::Position { line: 1, character: 3 }), x);
        assert_eq!(offset_of(&file, lsp::Position { line: 1, character: 99 }), x + 2);
        assert_eq!(offset_of(&file, lsp::Position { line: 9, character: 0 }), file.text.len() as u32);
    }

    #[test]
    fn file_uris_and_paths_convert_both_ways() {
        let path = if cfg!(windows) { PathBuf::from("C:/a b/k#1.cu") } else { PathBuf::from("/a b/k#1.cu") };
        let uri = uri_of(&path);
        assert!(uri.as_str().ends_with("/a%20b/k%231.cu"), "{}", uri.as_str());
        assert_eq!(path_of(&uri), Some(path));
        assert_eq!(path_of(&"untitled:Untitled-1".parse().unwrap()), None);
    }

    #[test]
    fn suppressions_go_at_the_line_end_or_before_a_continuation() {
        let mut db = SourceDb::new();
        let text = "  x = 1;  \n#define B() \\\n  y = 2; \\\n";
        let f = db.add("k.cu", text);
        let at = |needle: &str| {
            let lo = text.find(needle).unwrap() as u32;
            Diagnostic::new("dead-barrier", Severity::Warning, Span::new(f, lo, lo + 1), "m")
        };
        let apply = |(span, new): (Span, String)| format!("{}{new}{}", &text[..span.lo as usize], &text[span.hi as usize..]);
        assert_eq!(apply(suppression(&db, &at("x = 1"))), "  x = 1; // lockstep: allow(dead-barrier)\n#define B() \\\n  y = 2; \\\n");
        assert_eq!(apply(suppression(&db, &at("y = 2"))), "  x = 1;  \n#define B() \\\n  y = 2; /* lockstep: allow(dead-barrier) */ \\\n");
    }
}
