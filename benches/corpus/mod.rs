//! The benchmark's generated input: files of compute kernels as they appear in
//! real projects.
//!
//! The `mixed` corpus draws, per file, a deterministic pseudo-random sequence of
//! kernel families (reductions, scans, transposes, stencils, tiled matrix
//! multiplies, histograms, bitonic sorts, element-wise maps, wave reductions,
//! buffer copies), each with its own block size, element type, guards and
//! names, wrapped in the surroundings real files have (cbuffers, structs,
//! `#define`s, helpers, host launch code, comments). Every kernel is written to
//! be correct, so lockstep should report nothing on it.
//!
//! The `scan` corpus is the original stress case: one HLSL tree reduction and
//! one CUDA double-buffered Hillis–Steele scan, repeated under new names.

mod cuda;
mod hlsl;
mod scan;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// Which corpus the benchmark runs (`BENCH_CORPUS`).
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Mixed,
    Scan,
}

impl Kind {
    pub fn parse(name: &str) -> Option<Kind> {
        match name {
            "mixed" => Some(Kind::Mixed),
            "scan" => Some(Kind::Scan),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Mixed => "mixed",
            Kind::Scan => "scan",
        }
    }
}

/// What [`write`] put on disk.
pub struct Corpus {
    pub paths: Vec<PathBuf>,
    pub bytes: usize,
    pub lines: usize,
}

/// Writes `files` files of about `bytes_per_file` bytes each into `dir`: even
/// numbers HLSL, odd numbers CUDA.
pub fn write(dir: &Path, kind: Kind, files: usize, bytes_per_file: usize) -> Corpus {
    // Files of an earlier run with other knobs must not be checked too.
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let mut corpus = Corpus { paths: Vec::new(), bytes: 0, lines: 0 };
    for f in 0..files {
        let hlsl = f % 2 == 0;
        let text = match (kind, hlsl) {
            (Kind::Mixed, true) => hlsl::file(&mut Lcg::new(f as u64), bytes_per_file),
            (Kind::Mixed, false) => cuda::file(&mut Lcg::new(f as u64), bytes_per_file),
            (Kind::Scan, true) => scan::hlsl_file(f, bytes_per_file),
            (Kind::Scan, false) => scan::cuda_file(f, bytes_per_file),
        };
        corpus.bytes += text.len();
        corpus.lines += text.lines().count();
        let path = dir.join(format!("k{f}.{}", if hlsl { "hlsl" } else { "cu" }));
        std::fs::write(&path, text).unwrap();
        corpus.paths.push(path);
    }
    corpus
}

/// A 64-bit linear congruential generator (Knuth's MMIX constants): enough
/// randomness for picking templates, and the same corpus on every machine.
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Lcg {
        let mut rng = Lcg(seed ^ 0x9e37_79b9_7f4a_7c15);
        rng.step();
        rng
    }

    fn step(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        // The high bits of an LCG are the well-mixed ones.
        (self.0 >> 33) as u32
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.step() as usize % n
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// A float literal's digits in `lo..hi`, with two decimals.
    pub fn decimal(&mut self, lo: f32, hi: f32) -> String {
        let steps = ((hi - lo) * 100.0) as usize;
        format!("{:.2}", lo + self.below(steps.max(1)) as f32 / 100.0)
    }
}

/// Identifier stems of a file's subsystems, so that names read like real code.
const DOMAINS: &[&str] = &[
    "Luma", "Depth", "Particle", "Bloom", "Terrain", "Audio", "Velocity", "Density", "Signal", "Voxel", "Mesh",
    "Photon", "Pressure", "Spectrum", "Shadow", "Cloth", "Fluid", "Ray", "Tile", "Cluster", "Sample", "Exposure",
    "Heat", "Wave", "Grain", "Noise", "Flow", "Light",
];

/// Hands out the per-kernel prefixes of one file, never the same one twice.
pub struct Names {
    used: HashSet<String>,
}

impl Names {
    pub fn new() -> Names {
        Names { used: HashSet::new() }
    }

    /// A fresh CamelCase prefix such as `Bloom` or `Bloom3`.
    pub fn prefix(&mut self, rng: &mut Lcg) -> String {
        let domain = *rng.pick(DOMAINS);
        let mut name = domain.to_string();
        let mut n = 2;
        while !self.used.insert(name.clone()) {
            name = format!("{domain}{n}");
            n += 1;
        }
        name
    }
}

/// `BloomBlur3` → `bloom_blur3`, for CUDA's naming style.
pub fn snake(camel: &str) -> String {
    let mut out = String::new();
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Replaces each `${key}` of `template` by its value. An unknown key is a
/// template typo and panics, so no placeholder can leak into the corpus.
pub fn fill(template: &str, values: &[(&str, &dyn std::fmt::Display)]) -> String {
    let mut out = String::with_capacity(template.len() + 64);
    let mut rest = template;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find('}').expect("unterminated placeholder") + start;
        let key = &rest[start + 2..end];
        let (_, value) = values.iter().find(|(k, _)| *k == key).unwrap_or_else(|| panic!("no value for ${{{key}}}"));
        out.push_str(&value.to_string());
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The element types kernels are written for, with what each language calls
/// their pieces.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    F32,
    U32,
    I32,
}

impl Elem {
    pub fn hlsl(self) -> &'static str {
        match self {
            Elem::F32 => "float",
            Elem::U32 => "uint",
            Elem::I32 => "int",
        }
    }

    pub fn cuda(self) -> &'static str {
        match self {
            Elem::F32 => "float",
            Elem::U32 => "unsigned int",
            Elem::I32 => "int",
        }
    }

    pub fn zero(self, cuda: bool) -> &'static str {
        match (self, cuda) {
            (Elem::F32, true) => "0.0f",
            (Elem::F32, false) => "0.0",
            (Elem::U32, _) => "0u",
            (Elem::I32, _) => "0",
        }
    }
}

/// How a reduction combines two values.
#[derive(Clone, Copy)]
pub enum Combine {
    Sum,
    Max,
    Min,
}

impl Combine {
    pub fn pick(rng: &mut Lcg) -> Combine {
        *rng.pick(&[Combine::Sum, Combine::Sum, Combine::Max, Combine::Min])
    }

    pub fn verb(self) -> &'static str {
        match self {
            Combine::Sum => "Sum",
            Combine::Max => "Max",
            Combine::Min => "Min",
        }
    }

    /// `a ⊕ b` as an expression.
    pub fn apply(self, elem: Elem, cuda: bool, a: &str, b: &str) -> String {
        let f = match (self, elem, cuda) {
            (Combine::Sum, ..) => return format!("{a} + {b}"),
            (Combine::Max, Elem::F32, true) => "fmaxf",
            (Combine::Min, Elem::F32, true) => "fminf",
            (Combine::Max, ..) => "max",
            (Combine::Min, ..) => "min",
        };
        format!("{f}({a}, {b})")
    }

    /// The value that changes nothing, for lanes past the end of the input.
    pub fn identity(self, elem: Elem, cuda: bool) -> &'static str {
        match (self, elem, cuda) {
            (Combine::Sum, e, c) => e.zero(c),
            (Combine::Max, Elem::F32, true) => "-3.402823466e+38f",
            (Combine::Max, Elem::F32, false) => "-3.402823466e+38",
            (Combine::Min, Elem::F32, true) => "3.402823466e+38f",
            (Combine::Min, Elem::F32, false) => "3.402823466e+38",
            (Combine::Max, Elem::U32, _) => "0u",
            (Combine::Min, Elem::U32, _) => "0xffffffffu",
            (Combine::Max, Elem::I32, _) => "(-2147483647 - 1)",
            (Combine::Min, Elem::I32, _) => "2147483647",
        }
    }
}
