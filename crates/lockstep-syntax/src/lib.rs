//! Parsing of preprocessed kernel source with tree-sitter.

pub use tree_sitter::{Node, Tree};

/// The source languages with a grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Grammar {
    Hlsl,
    Cuda,
}

/// Parses text with the grammar; `None` only if tree-sitter gives up (cancellation).
pub fn parse(grammar: Grammar, text: &str) -> Option<Tree> {
    let mut parser = tree_sitter::Parser::new();
    let language: tree_sitter::Language = match grammar {
        Grammar::Cuda => tree_sitter_cuda::LANGUAGE.into(),
        Grammar::Hlsl => tree_sitter_lockstep_hlsl::LANGUAGE.into(),
    };
    parser.set_language(&language).ok()?;
    parser.parse(text, None)
}
