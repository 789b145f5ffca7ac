//! `lockstep server`: the language server, driven with JSON-RPC messages in process (and once over
//! standard input and output through the binary).

use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// A divergent barrier on line 3 (the condition on line 2), a device-memory race on line 7.
const BUGGY: &str = "__global__ void diverge(int* out) {
    if (threadIdx.x < 16) {
        __syncthreads();
    }
}
__global__ void race(int* out) {
    out[0] = threadIdx.x;
}
";

/// With 256 threads a group: the barrier on line 4 orders nothing (each thread reads its own
/// element); the one on line 10 orders a write before it against another thread's read after it.
const BARRIERS: &str = "__global__ void dead(int* out) {
    __shared__ int s[256];
    s[threadIdx.x] = 1;
    __syncthreads();
    out[blockIdx.x * 256 + threadIdx.x] = s[threadIdx.x];
}
__global__ void needed(int* out) {
    __shared__ int s[256];
    s[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[blockIdx.x * 256 + threadIdx.x] = s[255 - threadIdx.x];
}
";

const GROUP_OF_256: &str = "[kernels.dead]\ngroup-size = [256]\n[kernels.needed]\ngroup-size = [256]\n";

/// The client end of an in-process server.
struct Client {
    connection: Connection,
    server: Option<std::thread::JoinHandle<Result<(), String>>>,
    next_id: i32,
    /// Notifications received while waiting for something else.
    pending: Vec<Notification>,
    /// Requests the server sent to the client.
    server_requests: Vec<Request>,
}

impl Client {
    fn start(capabilities: Value) -> Client {
        let (server_end, client_end) = Connection::memory();
        let server = std::thread::spawn(move || lockstep::server::serve(server_end));
        let mut client = Client { connection: client_end, server: Some(server), next_id: 0, pending: Vec::new(), server_requests: Vec::new() };
        let answer = client.request("initialize", json!({ "capabilities": capabilities }));
        assert_eq!(answer["capabilities"]["hoverProvider"], json!(true), "{answer}");
        assert_eq!(answer["serverInfo"]["name"], json!("lockstep"));
        client.notify("initialized", json!({}));
        client
    }

    fn receive(&mut self) -> Message {
        self.connection.receiver.recv_timeout(Duration::from_secs(60)).expect("the server answers within a minute")
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.connection.sender.send(Request::new(id.clone(), method.into(), params).into()).unwrap();
        loop {
            match self.receive() {
                Message::Response(r) if r.id == id => {
                    return r.response_result.unwrap_or_else(|e| panic!("{method}: {e:?}"));
                }
                Message::Response(r) => panic!("an answer to another request: {r:?}"),
                Message::Notification(n) => self.pending.push(n),
                Message::Request(r) => self.answer_server(r),
            }
        }
    }

    fn answer_server(&mut self, request: Request) {
        self.connection.sender.send(Response::new_ok(request.id.clone(), Value::Null).into()).unwrap();
        self.server_requests.push(request);
    }

    fn notify(&self, method: &str, params: Value) {
        self.connection.sender.send(Notification::new(method.into(), params).into()).unwrap();
    }

    /// The next diagnostics published for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        let is_for = |n: &Notification| n.method == "textDocument/publishDiagnostics" && n.params["uri"] == json!(uri);
        loop {
            if let Some(i) = self.pending.iter().position(is_for) {
                return self.pending.remove(i).params["diagnostics"].as_array().unwrap().clone();
            }
            match self.receive() {
                Message::Notification(n) => self.pending.push(n),
                Message::Request(r) => self.answer_server(r),
                Message::Response(r) => panic!("unexpected answer {r:?}"),
            }
        }
    }

    fn open(&mut self, uri: &str, text: &str) -> Vec<Value> {
        self.notify("textDocument/didOpen", json!({ "textDocument": { "uri": uri, "languageId": "cuda", "version": 1, "text": text } }));
        self.diagnostics(uri)
    }

    fn change(&mut self, uri: &str, version: i32, text: &str) -> Vec<Value> {
        self.notify("textDocument/didChange", json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{ "text": text }] }));
        self.diagnostics(uri)
    }

    fn shutdown(mut self) {
        assert_eq!(self.request("shutdown", Value::Null), Value::Null);
        self.notify("exit", Value::Null);
        self.server.take().unwrap().join().unwrap().unwrap();
    }
}

fn uri_of(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// (code, start line, start character, end line, end character) of each diagnostic.
fn codes_and_ranges(diagnostics: &[Value]) -> Vec<(String, u64, u64, u64, u64)> {
    diagnostics
        .iter()
        .map(|d| {
            let r = &d["range"];
            let n = |v: &Value| v.as_u64().unwrap();
            (d["code"].as_str().unwrap().to_string(), n(&r["start"]["line"]), n(&r["start"]["character"]), n(&r["end"]["line"]), n(&r["end"]["character"]))
        })
        .collect()
}

/// Applies LSP text edits (non-overlapping) to a text.
fn apply(text: &str, edits: &[Value]) -> String {
    let offset = |p: &Value| {
        let line = p["line"].as_u64().unwrap() as usize;
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        start + p["character"].as_u64().unwrap() as usize
    };
    let mut spans: Vec<(usize, usize, &str)> =
        edits.iter().map(|e| (offset(&e["range"]["start"]), offset(&e["range"]["end"]), e["newText"].as_str().unwrap())).collect();
    spans.sort();
    let mut out = text.to_string();
    for (lo, hi, new) in spans.into_iter().rev() {
        out.replace_range(lo..hi, new);
    }
    out
}

fn project(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

#[test]
fn diagnostics_match_check_and_follow_open_change_and_close() {
    let dir = project(&[("k.cu", BUGGY)]);
    let path = dir.path().join("k.cu");
    let uri = uri_of(&path);
    let mut client = Client::start(json!({}));
    let diagnostics = client.open(&uri, BUGGY);
    assert_eq!(codes_and_ranges(&diagnostics), vec![("barrier-in-divergent-cf".to_string(), 2, 8, 2, 23), ("device-memory-race".to_string(), 6, 4, 6, 24)]);
    // The same findings, at the same places, as `lockstep check` on the file.
    let check = std::process::Command::new(env!("CARGO_BIN_EXE_lockstep")).args(["check", "--format", "json"]).arg(&path).output().unwrap();
    let report: Value = serde_json::from_slice(&check.stdout).unwrap();
    let from_check: Vec<_> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let n = |k: &str| d[k].as_u64().unwrap() - 1;
            (d["rule"].as_str().unwrap().to_string(), n("line"), n("column"), n("end_line"), n("end_column"))
        })
        .collect();
    assert_eq!(codes_and_ranges(&diagnostics), from_check);
    let divergent = &diagnostics[0];
    assert_eq!(divergent["severity"], json!(1));
    assert_eq!(divergent["source"], json!("lockstep"));
    assert!(divergent["message"].as_str().unwrap().starts_with("barrier `__syncthreads` is not reached by every thread of the group: "));
    // The divergent predicate is related information.
    let related = divergent["relatedInformation"].as_array().unwrap();
    assert_eq!(related[0]["location"]["uri"], json!(uri));
    assert_eq!(related[0]["location"]["range"]["start"], json!({ "line": 1, "character": 8 }));
    assert_eq!(related[0]["message"], json!("this condition differs between threads"));

    // Fixing the divergence leaves the race; fixing the race leaves nothing.
    let uniform = BUGGY.replace("    if (threadIdx.x < 16) {\n        __syncthreads();\n    }\n", "");
    assert_eq!(codes_and_ranges(&client.change(&uri, 2, &uniform)), vec![("device-memory-race".to_string(), 3, 4, 3, 24)]);
    let clean = uniform.replace("    out[0] = threadIdx.x;\n", "");
    assert_eq!(client.change(&uri, 3, &clean), Vec::<Value>::new());
    client.notify("textDocument/didClose", json!({ "textDocument": { "uri": uri } }));
    assert_eq!(client.diagnostics(&uri), Vec::<Value>::new());
    client.shutdown();
}

#[test]
fn macro_definitions_and_included_files_are_related_locations() {
    let header = "__device__ void wait_some() {\n    if (threadIdx.x < 16) {\n        __syncthreads();\n    }\n}\n";
    let kernel = "#include \"sync.cuh\"\n#define SYNC __syncthreads()\n__global__ void k(int* out) {\n    wait_some();\n    if (threadIdx.x < 8) SYNC;\n}\n";
    let dir = project(&[("sync.cuh", header), ("m.cu", kernel)]);
    let uri = uri_of(&dir.path().join("m.cu"));
    let header_uri = uri_of(&dir.path().join("sync.cuh"));
    let mut client = Client::start(json!({}));
    let diagnostics = client.open(&uri, kernel);
    // The header's barrier is shown at the call that leads to it; the macro's at its use.
    assert_eq!(
        codes_and_ranges(&diagnostics),
        vec![("barrier-in-divergent-cf".to_string(), 4, 25, 4, 29), ("barrier-in-divergent-cf".to_string(), 3, 4, 3, 15)]
    );
    let in_header = &diagnostics[1];
    assert!(in_header["message"].as_str().unwrap().starts_with(&format!("in {}:3: ", dir.path().join("sync.cuh").display())), "{in_header}");
    let related = in_header["relatedInformation"].as_array().unwrap();
    assert_eq!(
        related[0]["location"],
        json!({ "uri": header_uri, "range": { "start": { "line": 2, "character": 8 }, "end": { "line": 2, "character": 23 } } })
    );
    let macro_related = diagnostics[0]["relatedInformation"].as_array().unwrap();
    let definition = macro_related.iter().find(|r| r["message"] == json!("macro `SYNC` is defined here")).expect("the macro's definition is related");
    assert_eq!(definition["location"]["range"]["start"]["line"], json!(1));
    // Suppressing the header's finding edits the header, where its suppression must be.
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri }, "range": { "start": { "line": 3, "character": 4 }, "end": { "line": 3, "character": 4 } }, "context": { "diagnostics": [] } }),
    );
    let edits = &actions[0]["edit"]["changes"][header_uri.as_str()];
    let suppressed = apply(header, edits.as_array().unwrap());
    assert_eq!(suppressed, header.replace("__syncthreads();", "__syncthreads(); // lockstep: allow(barrier-in-divergent-cf)"));
    // Saving the header checks the documents that include it again.
    std::fs::write(dir.path().join("sync.cuh"), suppressed).unwrap();
    client.notify("textDocument/didSave", json!({ "textDocument": { "uri": header_uri } }));
    assert_eq!(codes_and_ranges(&client.diagnostics(&uri)), vec![("barrier-in-divergent-cf".to_string(), 4, 25, 4, 29)]);
    client.shutdown();
}

#[test]
fn the_vscode_extension_starts_the_server_for_kernel_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/vscode");
    let package: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("package.json")).unwrap()).unwrap();
    assert!(package["dependencies"]["vscode-languageclient"].is_string());
    let client = std::fs::read_to_string(dir.join(package["main"].as_str().unwrap())).unwrap();
    assert!(client.contains("args: [\"server\"]"));
    let glob = client.split("\"**/*.{").nth(1).and_then(|rest| rest.split('}').next()).expect("a kernel file pattern");
    for extension in glob.split(',') {
        assert!(lockstep_lower::Lang::from_path(Path::new(&format!("k.{extension}"))).is_some(), "lockstep does not read .{extension}");
    }
}

#[test]
fn code_actions_remove_a_dead_barrier_and_suppress_a_rule() {
    let dir = project(&[("lockstep.toml", GROUP_OF_256), ("d.cu", BARRIERS)]);
    let uri = uri_of(&dir.path().join("d.cu"));
    let mut client = Client::start(json!({}));
    let diagnostics = client.open(&uri, BARRIERS);
    assert_eq!(codes_and_ranges(&diagnostics), vec![("dead-barrier".to_string(), 3, 4, 3, 19)]);
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri }, "range": { "start": { "line": 3, "character": 6 }, "end": { "line": 3, "character": 6 } }, "context": { "diagnostics": diagnostics } }),
    );
    let actions = actions.as_array().unwrap();
    let titles: Vec<&str> = actions.iter().map(|a| a["title"].as_str().unwrap()).collect();
    assert_eq!(titles, vec!["Remove the barrier", "Suppress `dead-barrier` on this line"]);
    assert!(actions.iter().all(|a| a["kind"] == json!("quickfix") && a["diagnostics"][0]["code"] == json!("dead-barrier")));
    let edits = |a: &Value| a["edit"]["changes"][uri.as_str()].as_array().unwrap().clone();
    // The removal deletes the barrier's line.
    assert_eq!(edits(&actions[0]), vec![json!({ "range": { "start": { "line": 3, "character": 0 }, "end": { "line": 4, "character": 0 } }, "newText": "" })]);
    let removed = apply(BARRIERS, &edits(&actions[0]));
    assert_eq!(removed, BARRIERS.replacen("    __syncthreads();\n", "", 1));
    assert_eq!(client.change(&uri, 2, &removed), Vec::<Value>::new());
    // The suppression ends the line with a comment `check` honours.
    let suppressed = apply(BARRIERS, &edits(&actions[1]));
    assert_eq!(suppressed, BARRIERS.replacen("__syncthreads();", "__syncthreads(); // lockstep: allow(dead-barrier)", 1));
    assert_eq!(client.change(&uri, 3, &suppressed), Vec::<Value>::new());
    // No actions away from any finding.
    let none = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri }, "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 0 } }, "context": { "diagnostics": [] } }),
    );
    assert_eq!(none, json!([]));
    client.shutdown();
}

#[test]
fn hover_on_a_barrier_says_what_it_orders() {
    let dir = project(&[("lockstep.toml", GROUP_OF_256), ("d.cu", BARRIERS)]);
    let uri = uri_of(&dir.path().join("d.cu"));
    let mut client = Client::start(json!({}));
    client.open(&uri, BARRIERS);
    let mut hover = |line: u32, character: u32| {
        client.request("textDocument/hover", json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } }))
    };
    let dead = hover(3, 10);
    let text = dead["contents"]["value"].as_str().unwrap();
    assert!(text.contains("It orders nothing"), "{text}");
    assert!(text.contains("shared memory: only writes before it, only reads after it"), "{text}");
    assert_eq!(dead["range"], json!({ "start": { "line": 3, "character": 4 }, "end": { "line": 3, "character": 19 } }));
    let needed = hover(9, 4);
    let text = needed["contents"]["value"].as_str().unwrap();
    assert!(text.contains("It is needed: in shared memory, it keeps writes before it apart from reads after it"), "{text}");
    assert!(text.contains("For example, `s[threadIdx.x] = threadIdx.x` (line 9) before it and `s[255 - threadIdx.x]` (line 11) after it"), "{text}");
    assert_eq!(hover(8, 6), Value::Null, "not a barrier");
    client.shutdown();
}

#[test]
fn configuration_changes_are_watched_and_applied_to_open_documents() {
    let dir = project(&[("k.cu", BUGGY)]);
    let uri = uri_of(&dir.path().join("k.cu"));
    let mut client = Client::start(json!({ "workspace": { "didChangeWatchedFiles": { "dynamicRegistration": true } } }));
    assert_eq!(client.open(&uri, BUGGY).len(), 2);
    let registration = client.server_requests.iter().find(|r| r.method == "client/registerCapability").expect("the server asks to watch its configuration");
    let watchers = &registration.params["registrations"][0]["registerOptions"]["watchers"];
    assert_eq!(watchers[0]["globPattern"], json!("**/lockstep.toml"));

    let config = dir.path().join("lockstep.toml");
    let changed = json!({ "changes": [{ "uri": uri_of(&config), "type": 1 }] });
    std::fs::write(&config, "[rules]\ndivergence = \"allow\"\n").unwrap();
    client.notify("workspace/didChangeWatchedFiles", changed.clone());
    assert_eq!(codes_and_ranges(&client.diagnostics(&uri))[0].0, "device-memory-race");
    // A broken configuration is said, not ignored.
    std::fs::write(&config, "select = []\n").unwrap();
    client.notify("workspace/didChangeWatchedFiles", changed.clone());
    let broken = client.diagnostics(&uri);
    assert_eq!(broken.len(), 1);
    assert!(broken[0]["message"].as_str().unwrap().contains("unknown field `select`"), "{}", broken[0]);
    std::fs::remove_file(&config).unwrap();
    client.notify("workspace/didChangeWatchedFiles", json!({ "changes": [{ "uri": uri_of(&config), "type": 3 }] }));
    assert_eq!(client.diagnostics(&uri).len(), 2);
    client.shutdown();
}

#[test]
fn the_binary_serves_over_standard_input_and_output() {
    use std::io::BufReader;
    use std::process::{Command, Stdio};
    let dir = project(&[("k.cu", BUGGY)]);
    let uri = uri_of(&dir.path().join("k.cu"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_lockstep")).arg("server").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut send = |m: Message| m.write(&mut input).unwrap();
    send(Request::new(RequestId::from(1), "initialize".into(), json!({ "capabilities": {} })).into());
    let Some(Message::Response(initialized)) = Message::read(&mut output).unwrap() else { panic!("no answer to initialize") };
    assert_eq!(initialized.response_result.unwrap()["capabilities"]["codeActionProvider"]["codeActionKinds"], json!(["quickfix"]));
    send(Notification::new("initialized".into(), json!({})).into());
    send(Notification::new("textDocument/didOpen".into(), json!({ "textDocument": { "uri": uri, "languageId": "cuda", "version": 1, "text": BUGGY } })).into());
    let Some(Message::Notification(published)) = Message::read(&mut output).unwrap() else { panic!("no diagnostics") };
    assert_eq!(published.method, "textDocument/publishDiagnostics");
    assert_eq!(published.params["diagnostics"].as_array().unwrap().len(), 2);
    send(Request::new(RequestId::from(2), "shutdown".into(), Value::Null).into());
    let Some(Message::Response(shut)) = Message::read(&mut output).unwrap() else { panic!("no answer to shutdown") };
    assert_eq!(shut.id, RequestId::from(2));
    send(Notification::new("exit".into(), Value::Null).into());
    drop(input);
    assert!(child.wait().unwrap().success());
}
