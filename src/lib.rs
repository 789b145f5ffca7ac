//! The lockstep driver: what the `lockstep` commands do, as a library so
//! the integration tests run exactly the code the binary runs.

pub mod check;
pub mod config;
pub mod output;
pub mod select;
pub mod suppress;
pub mod fix;
pub mod cmd_opt;
pub mod cmd_run;
pub mod server;
