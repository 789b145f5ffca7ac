//! LLVM IR for lockstep: a tolerant reader of textual `.ll` files into the
//! kernel IR, and a writer that deletes chosen barrier calls while keeping
//! every other byte.

mod lexer;
mod meta;
mod opt;
mod parse;
mod types;
mod write;

pub use opt::{dump_line, optimize, OptConfig, OptResult, Removal};
pub use parse::{read, LlvmFunction, LlvmModule};
pub use types::Target;
pub use write::delete_lines;
