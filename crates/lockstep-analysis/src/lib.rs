//! Analyses over the kernel IR. Nothing here knows about syntax or about
//! any source language: a new front end gets all of it for free.

pub mod cfg;
pub mod decided;
pub mod launch;
pub mod uniformity;

pub use cfg::Cfg;
pub use uniformity::{Level, Reason, Uniformity};
