// Starts `lockstep server` for the kernel files lockstep reads; diagnostics, quick fixes
// (remove a dead barrier, suppress a rule on a line) and barrier hovers come from the server.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

// The extensions `lockstep check` reads (see `lockstep check --help`, `--lang`).
const KERNEL_FILES = "**/*.{hlsl,hlsli,fx,fxh,csh,cu,cuh,cl,comp,glsl,wgsl}";

let client;

function activate() {
  const command = vscode.workspace.getConfiguration("lockstep").get("path") || "lockstep";
  const server = { command, args: ["server"] };
  client = new LanguageClient("lockstep", "lockstep", { run: server, debug: server }, {
    documentSelector: [{ scheme: "file", pattern: KERNEL_FILES }],
  });
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
