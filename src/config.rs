//! Project configuration: `lockstep.toml`, `.lockstep.toml` or `[tool.lockstep]` in
//! `pyproject.toml`, found by walking up from each checked file.

use crate::select::Level;
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file names looked for in each directory, nearest first within a directory.
pub const CONFIG_NAMES: &[&str] = &["lockstep.toml", ".lockstep.toml", "pyproject.toml"];

/// One configuration file as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ConfigFile {
    /// Walked files must match one of these (relative to the configuration's directory), when given.
    #[serde(default)]
    pub include: Vec<String>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub defines: BTreeMap<String, DefineValue>,
    #[serde(default)]
    pub include_dirs: Vec<PathBuf>,
    pub wave_size: Option<u32>,
    pub dead_barriers: Option<String>,
    pub include_unproven: Option<bool>,
    pub include_benign: Option<bool>,
    pub assume_calls_safe: Option<bool>,
    #[serde(default)]
    pub rules: BTreeMap<String, Level>,
    #[serde(default)]
    pub overrides: Vec<Override>,
    #[serde(default)]
    pub kernels: BTreeMap<String, KernelConfig>,
}

/// `FOO = "1"`, `FOO = 1` or `FOO = true` (defined without a value).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum DefineValue {
    Text(String),
    Number(i64),
    Flag(bool),
}

/// Settings for the files matching some globs.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Override {
    pub files: Vec<String>,
    pub lang: Option<String>,
    #[serde(default)]
    pub defines: BTreeMap<String, DefineValue>,
    #[serde(default)]
    pub include_dirs: Vec<PathBuf>,
    #[serde(default)]
    pub rules: BTreeMap<String, Level>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct KernelConfig {
    pub group_size: Option<Vec<u32>>,
    pub grid_size: Option<Vec<u32>>,
}

#[derive(Deserialize)]
struct Pyproject {
    tool: Option<PyprojectTool>,
}

#[derive(Deserialize)]
struct PyprojectTool {
    lockstep: Option<ConfigFile>,
}

/// A configuration file, read and checked, with the directory its paths are relative to.
#[derive(Debug)]
pub struct Config {
    pub path: PathBuf,
    pub dir: PathBuf,
    pub file: ConfigFile,
    include: Option<GlobSet>,
    exclude: GlobSet,
    overrides: Vec<GlobSet>,
}

impl Config {
    /// Reads `path`; `Ok(None)` for a `pyproject.toml` without `[tool.lockstep]`.
    pub fn load(path: &Path) -> Result<Option<Config>, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let is_pyproject = path.file_name().is_some_and(|n| n == "pyproject.toml");
        let parsed = if is_pyproject {
            // Other tools' tables are ignored; ours is checked for unknown keys like lockstep.toml.
            toml::from_str::<Pyproject>(&text).map(|doc| doc.tool.and_then(|t| t.lockstep))
        } else {
            toml::from_str::<ConfigFile>(&text).map(Some)
        };
        let Some(file) = parsed.map_err(|e| format!("{}: {e}", path.display()))? else { return Ok(None) };
        let path = &std::path::absolute(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let globs = |patterns: &[String]| -> Result<GlobSet, String> {
            let mut b = GlobSetBuilder::new();
            for p in patterns {
                b.add(Glob::new(p).map_err(|e| format!("{}: bad glob `{p}`: {e}", path.display()))?);
            }
            b.build().map_err(|e| format!("{}: {e}", path.display()))
        };
        let include = if file.include.is_empty() { None } else { Some(globs(&file.include)?) };
        let exclude = globs(&file.exclude)?;
        let overrides = file.overrides.iter().map(|o| globs(&o.files)).collect::<Result<Vec<_>, _>>()?;
        let config = Config { path: path.to_path_buf(), dir, file, include, exclude, overrides };
        config.validate()?;
        Ok(Some(config))
    }

    /// Checks what serde cannot: languages, modes, rule names, sizes.
    fn validate(&self) -> Result<(), String> {
        let at = |what: String| format!("{}: {what}", self.path.display());
        if let Some(mode) = &self.file.dead_barriers {
            crate::check::parse_dead_barriers(mode).map_err(at)?;
        }
        let rule_tables = std::iter::once(&self.file.rules).chain(self.file.overrides.iter().map(|o| &o.rules));
        for rules in rule_tables {
            for id in rules.keys() {
                crate::select::expand(id).map_err(at)?;
            }
        }
        for o in &self.file.overrides {
            if let Some(lang) = &o.lang {
                crate::check::parse_lang(lang).map_err(at)?;
            }
        }
        for (name, k) in &self.file.kernels {
            for sizes in [&k.group_size, &k.grid_size].into_iter().flatten() {
                sizes_of(sizes).map_err(|e| at(format!("kernels.{name}: {e}")))?;
            }
        }
        if let Some(w) = self.file.wave_size {
            if !w.is_power_of_two() || !(4..=128).contains(&w) {
                return Err(at(format!("wave-size {w} is not a power of two between 4 and 128")));
            }
        }
        Ok(())
    }

    fn relative(&self, file: &Path) -> PathBuf {
        let absolute = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
        absolute.strip_prefix(&self.dir).map(Path::to_path_buf).unwrap_or(absolute)
    }

    /// Whether a file found by walking a directory is left out by `include`/`exclude`.
    pub fn excludes(&self, file: &Path) -> bool {
        let rel = self.relative(file);
        self.exclude.is_match(&rel) || self.include.as_ref().is_some_and(|inc| !inc.is_match(&rel))
    }

    /// The overrides whose globs match `file`, in the order written.
    pub fn overrides_for(&self, file: &Path) -> impl Iterator<Item = &Override> {
        let rel = self.relative(file);
        self.file.overrides.iter().zip(&self.overrides).filter(move |(_, g)| g.is_match(&rel)).map(|(o, _)| o)
    }
}

/// `[x]`, `[x, y]` or `[x, y, z]`, each at least 1.
pub fn sizes_of(v: &[u32]) -> Result<[u32; 3], String> {
    if v.is_empty() || v.len() > 3 || v.contains(&0) {
        return Err(format!("{v:?} is not 1 to 3 sizes of at least 1"));
    }
    let mut out = [1; 3];
    out[..v.len()].copy_from_slice(v);
    Ok(out)
}

impl DefineValue {
    pub fn value(&self) -> Option<String> {
        match self {
            DefineValue::Text(s) => Some(s.clone()),
            DefineValue::Number(n) => Some(n.to_string()),
            DefineValue::Flag(_) => None,
        }
    }
}

/// Finds and caches the configuration that governs each directory.
#[derive(Default)]
pub struct Discovery {
    /// `--config FILE`: used for every file.
    pub fixed: Option<std::sync::Arc<Config>>,
    /// `--isolated`: no configuration at all.
    pub isolated: bool,
    by_dir: std::sync::Mutex<BTreeMap<PathBuf, Option<std::sync::Arc<Config>>>>,
}

impl Discovery {
    pub fn new(config: Option<&Path>, isolated: bool) -> Result<Discovery, String> {
        let fixed = match config {
            Some(p) => Some(std::sync::Arc::new(Config::load(p)?.ok_or_else(|| format!("{}: has no [tool.lockstep] table", p.display()))?)),
            None => None,
        };
        Ok(Discovery { fixed, isolated, by_dir: Default::default() })
    }

    /// The configuration for `file`: the nearest one in its directory or above.
    pub fn for_file(&self, file: &Path) -> Result<Option<std::sync::Arc<Config>>, String> {
        if self.isolated {
            return Ok(None);
        }
        if let Some(c) = &self.fixed {
            return Ok(Some(c.clone()));
        }
        let absolute = std::path::absolute(file).map_err(|e| format!("{}: {e}", file.display()))?;
        let start = absolute.parent().map(Path::to_path_buf).unwrap_or_default();
        self.for_dir(&start)
    }

    fn for_dir(&self, dir: &Path) -> Result<Option<std::sync::Arc<Config>>, String> {
        if let Some(known) = self.by_dir.lock().expect("no poisoned lock").get(dir) {
            return Ok(known.clone());
        }
        let mut found = None;
        for name in CONFIG_NAMES {
            let candidate = dir.join(name);
            if candidate.is_file() {
                if let Some(c) = Config::load(&candidate)? {
                    found = Some(std::sync::Arc::new(c));
                    break;
                }
            }
        }
        if found.is_none() {
            if let Some(parent) = dir.parent() {
                found = self.for_dir(parent)?;
            }
        }
        self.by_dir.lock().expect("no poisoned lock").insert(dir.to_path_buf(), found.clone());
        Ok(found)
    }
}
