//! GLSL grammar for [tree-sitter], used by lockstep.
//!
//! This is a fork of the `tree-sitter-glsl` 0.2.0 crate (MIT) that accepts
//! qualifier-only declarations (`layout(local_size_x = 64) in;`). The C
//! symbol is `tree_sitter_lockstep_glsl`, so it can be linked next to any
//! other GLSL/C grammar.
//!
//! ```
//! let mut parser = tree_sitter::Parser::new();
//! parser
//!     .set_language(&tree_sitter_lockstep_glsl::LANGUAGE.into())
//!     .expect("Error loading GLSL grammar");
//! let tree = parser.parse("layout(local_size_x = 64) in;\nshared float tile[64];", None).unwrap();
//! assert!(!tree.root_node().has_error());
//! ```
//!
//! [tree-sitter]: https://tree-sitter.github.io/

use tree_sitter_language::LanguageFn;

extern "C" {
    fn tree_sitter_lockstep_glsl() -> *const ();
}

/// The tree-sitter [`LanguageFn`] for this grammar.
pub const LANGUAGE: LanguageFn = unsafe { LanguageFn::from_raw(tree_sitter_lockstep_glsl) };

/// The content of the [`node-types.json`] file for this grammar.
///
/// [`node-types.json`]: https://tree-sitter.github.io/tree-sitter/using-parsers/6-static-node-types
pub const NODE_TYPES: &str = include_str!("../../src/node-types.json");
