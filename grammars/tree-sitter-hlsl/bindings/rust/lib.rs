//! HLSL grammar for [tree-sitter], used by lockstep.
//!
//! This is a fork of the `tree-sitter-hlsl` 0.2.0 crate (MIT) with HLSL
//! fixes (cbuffer/tbuffer, multiple attributes, `unorm`/`snorm` template
//! arguments, contextual keywords, register/packoffset semantics). The C
//! symbol is `tree_sitter_lockstep_hlsl`, so it can be linked next to any
//! other HLSL/C/C++/CUDA grammar.
//!
//! ```
//! let mut parser = tree_sitter::Parser::new();
//! parser
//!     .set_language(&tree_sitter_lockstep_hlsl::LANGUAGE.into())
//!     .expect("Error loading HLSL grammar");
//! let tree = parser.parse("groupshared float tile[16][16];", None).unwrap();
//! assert!(!tree.root_node().has_error());
//! ```
//!
//! [tree-sitter]: https://tree-sitter.github.io/

use tree_sitter_language::LanguageFn;

extern "C" {
    fn tree_sitter_lockstep_hlsl() -> *const ();
}

/// The tree-sitter [`LanguageFn`] for this grammar.
pub const LANGUAGE: LanguageFn = unsafe { LanguageFn::from_raw(tree_sitter_lockstep_hlsl) };

/// The content of the [`node-types.json`] file for this grammar.
///
/// [`node-types.json`]: https://tree-sitter.github.io/tree-sitter/using-parsers/6-static-node-types
pub const NODE_TYPES: &str = include_str!("../../src/node-types.json");

#[cfg(test)]
mod tests {
    #[test]
    fn can_load_grammar() {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&super::LANGUAGE.into())
            .expect("Error loading HLSL grammar");
    }
}
