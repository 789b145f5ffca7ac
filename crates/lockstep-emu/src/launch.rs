//! The launch description: constants and buffer contents for one dispatch,
//! read from TOML.
//!
//! ```toml
//! [constants]
//! N = 1024            # a cbuffer field or a kernel scalar argument, by name
//! scale = 0.5
//! weights = [1, 2, 3] # an array field
//!
//! [buffers.input]
//! data = [1, 2, 3]                  # inline cells; the rest of the buffer is zero
//! [buffers.ramp]
//! fill = { start = 0, step = 1 }    # or `fill = 7`
//! len = 4096                        # cells (for unsized buffers and pointer arguments)
//! [buffers.blob]
//! file = "blob.bin"                 # little-endian cells, relative to the launch file
//! [buffers.result]
//! output = "result.bin"             # or "-" to print the contents after the run
//! type = "f32"                      # element type of a pointer argument, when the kernel does not say
//! ```
//!
//! Values are scalar cells: a `float4` buffer of 2 elements takes 8 values.
//! The element type comes from the kernel; the launch file only checks that
//! the values fit it. Anything not given is zero.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// A number as written in the launch file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Num::Int(i) => write!(f, "{i}"),
            Num::Float(x) => write!(f, "{x}"),
            Num::Bool(b) => write!(f, "{b}"),
        }
    }
}

/// Where a buffer's initial contents come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Source {
    Zero,
    Values(Vec<Num>),
    /// Cell `i` holds `start + i * step`.
    Fill { start: Num, step: Num },
    /// Raw little-endian cells (read from a file).
    Bytes { path: PathBuf, bytes: Vec<u8> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    Stdout,
    File(PathBuf),
}

#[derive(Clone, Debug, PartialEq)]
pub struct BufferInit {
    pub name: String,
    pub source: Source,
    /// Length in cells, overriding the kernel's declaration.
    pub len: Option<u64>,
    /// Element type, for pointer arguments whose uses do not tell.
    pub ty: Option<lockstep_ir::Type>,
    pub output: Option<Output>,
}

/// Everything the dispatch reads that is not in the kernel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Launch {
    pub constants: Vec<(String, Vec<Num>)>,
    pub buffers: Vec<BufferInit>,
}

/// A launch file that cannot be used, with a message for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchError(pub String);

impl fmt::Display for LaunchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LaunchError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDoc {
    #[serde(default)]
    constants: BTreeMap<String, toml::Value>,
    #[serde(default)]
    buffers: BTreeMap<String, BufferDoc>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BufferDoc {
    data: Option<toml::Value>,
    fill: Option<toml::Value>,
    file: Option<String>,
    len: Option<i64>,
    #[serde(rename = "type")]
    ty: Option<String>,
    output: Option<String>,
}

fn num(v: &toml::Value, what: &str) -> Result<Num, LaunchError> {
    match v {
        toml::Value::Integer(i) => Ok(Num::Int(*i)),
        toml::Value::Float(x) => Ok(Num::Float(*x)),
        toml::Value::Boolean(b) => Ok(Num::Bool(*b)),
        other => Err(LaunchError(format!("{what}: expected a number or a boolean, found {}", other.type_str()))),
    }
}

fn nums(v: &toml::Value, what: &str) -> Result<Vec<Num>, LaunchError> {
    match v {
        toml::Value::Array(items) => {
            items.iter().enumerate().map(|(i, x)| num(x, &format!("{what}[{i}]"))).collect()
        }
        other => Ok(vec![num(other, what)?]),
    }
}

/// Parses a scalar type name as used in `type = "..."`.
pub fn parse_type(name: &str) -> Option<lockstep_ir::Type> {
    use lockstep_ir::Type;
    Some(match name {
        "bool" => Type::Bool,
        "i32" | "int" => Type::I32,
        "u32" | "uint" => Type::U32,
        "i64" => Type::I64,
        "u64" => Type::U64,
        "f16" | "half" => Type::F16,
        "f32" | "float" => Type::F32,
        "f64" | "double" => Type::F64,
        _ => return None,
    })
}

impl Launch {
    /// Reads a launch file; relative `file` paths are taken from its folder.
    pub fn from_file(path: &Path) -> Result<Launch, LaunchError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| LaunchError(format!("cannot read launch file {}: {e}", path.display())))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Launch::parse(&text, dir).map_err(|e| LaunchError(format!("{}: {}", path.display(), e.0)))
    }

    /// Parses launch TOML; `base_dir` resolves relative file paths.
    pub fn parse(text: &str, base_dir: &Path) -> Result<Launch, LaunchError> {
        let doc: FileDoc = toml::from_str(text).map_err(|e| LaunchError(format!("malformed launch file: {}", e.to_string().trim_end())))?;
        let mut launch = Launch::default();
        for (name, v) in &doc.constants {
            launch.constants.push((name.clone(), nums(v, &format!("constant `{name}`"))?));
        }
        for (name, b) in doc.buffers {
            let what = format!("buffer `{name}`");
            let given = [b.data.is_some(), b.fill.is_some(), b.file.is_some()].iter().filter(|x| **x).count();
            if given > 1 {
                return Err(LaunchError(format!("{what}: give only one of `data`, `fill` and `file`")));
            }
            let source = if let Some(d) = &b.data {
                Source::Values(nums(d, &format!("{what} data"))?)
            } else if let Some(fill) = &b.fill {
                match fill {
                    toml::Value::Table(t) => {
                        for k in t.keys() {
                            if k != "start" && k != "step" {
                                return Err(LaunchError(format!("{what}: unknown fill key `{k}` (expected `start` and `step`)")));
                            }
                        }
                        let start = t.get("start").map(|v| num(v, &format!("{what} fill start"))).transpose()?.unwrap_or(Num::Int(0));
                        let step = t.get("step").map(|v| num(v, &format!("{what} fill step"))).transpose()?.unwrap_or(Num::Int(0));
                        Source::Fill { start, step }
                    }
                    other => Source::Fill { start: num(other, &format!("{what} fill"))?, step: Num::Int(0) },
                }
            } else if let Some(file) = &b.file {
                let path = base_dir.join(file);
                let bytes = std::fs::read(&path).map_err(|e| LaunchError(format!("{what}: cannot read {}: {e}", path.display())))?;
                Source::Bytes { path, bytes }
            } else {
                Source::Zero
            };
            let len = match b.len {
                Some(l) if l < 0 => return Err(LaunchError(format!("{what}: `len` must not be negative, found {l}"))),
                Some(l) => Some(l as u64),
                None => None,
            };
            let ty = match &b.ty {
                Some(t) => Some(parse_type(t).ok_or_else(|| {
                    LaunchError(format!("{what}: unknown type `{t}` (expected bool, i32, u32, i64, u64, f16, f32 or f64)"))
                })?),
                None => None,
            };
            let output = b.output.as_deref().map(|o| match o {
                "-" | "stdout" => Output::Stdout,
                path => Output::File(base_dir.join(path)),
            });
            launch.buffers.push(BufferInit { name, source, len, ty, output });
        }
        Ok(launch)
    }

    pub fn buffer(&self, name: &str) -> Option<&BufferInit> {
        self.buffers.iter().find(|b| b.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_source_kind() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = scratch.path();
        std::fs::write(dir.join("b.bin"), [1u8, 0, 0, 0]).unwrap();
        let l = Launch::parse(
            "[constants]\nN = 4\nw = [1.5, 2]\n[buffers.a]\ndata = [1, 2]\n[buffers.b]\nfile = \"b.bin\"\n\
             [buffers.c]\nfill = { start = 1, step = 2 }\nlen = 8\noutput = \"-\"\n[buffers.d]\nfill = 3\ntype = \"f32\"\noutput = \"out.bin\"\n",
            dir,
        )
        .unwrap();
        assert_eq!(l.constants, vec![("N".into(), vec![Num::Int(4)]), ("w".into(), vec![Num::Float(1.5), Num::Int(2)])]);
        assert_eq!(l.buffer("a").unwrap().source, Source::Values(vec![Num::Int(1), Num::Int(2)]));
        assert!(matches!(&l.buffer("b").unwrap().source, Source::Bytes { bytes, .. } if bytes == &[1, 0, 0, 0]));
        let c = l.buffer("c").unwrap();
        assert_eq!((c.len, &c.output), (Some(8), &Some(Output::Stdout)));
        let d = l.buffer("d").unwrap();
        assert_eq!(d.source, Source::Fill { start: Num::Int(3), step: Num::Int(0) });
        assert_eq!(d.output, Some(Output::File(dir.join("out.bin"))));
        assert_eq!(d.ty, Some(lockstep_ir::Type::F32));
    }

    #[test]
    fn bad_files_get_clear_errors() {
        let err = |text: &str| Launch::parse(text, Path::new("/nonexistent")).unwrap_err().0;
        assert!(err("[constants\nN = 1").starts_with("malformed launch file: "), "{}", err("[constants\nN = 1"));
        assert!(err("[buffers.a]\ndat = [1]").contains("unknown field `dat`"), "{}", err("[buffers.a]\ndat = [1]"));
        assert_eq!(err("[constants]\nN = \"four\""), "constant `N`: expected a number or a boolean, found string");
        assert_eq!(err("[buffers.a]\ndata = [1, \"x\"]"), "buffer `a` data[1]: expected a number or a boolean, found string");
        assert!(err("[buffers.a]\nfile = \"missing.bin\"").starts_with("buffer `a`: cannot read /nonexistent/missing.bin"));
        assert_eq!(err("[buffers.a]\ndata = [1]\nfill = 2"), "buffer `a`: give only one of `data`, `fill` and `file`");
        assert_eq!(err("[buffers.a]\ntype = \"float3\""), "buffer `a`: unknown type `float3` (expected bool, i32, u32, i64, u64, f16, f32 or f64)");
        assert_eq!(err("[buffers.a]\nfill = { begin = 1 }"), "buffer `a`: unknown fill key `begin` (expected `start` and `step`)");
        assert_eq!(err("[buffers.a]\nlen = -1"), "buffer `a`: `len` must not be negative, found -1");
    }
}
