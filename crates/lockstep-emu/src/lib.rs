//! The thread-group emulator: runs a kernel entry point over a dispatch on
//! the CPU and reports races, barrier divergence, out-of-bounds accesses,
//! uninitialised group-shared reads and runaway loops as they happen.
//!
//! # Use
//!
//! ```ignore
//! let launch = Launch::from_file(Path::new("launch.toml"))?;   // or Launch::default()
//! let config = RunConfig { groups: [4, 1, 1], ..RunConfig::default() };
//! let outcome = lockstep_emu::run(&db, &module, entry, &launch, &config)?;
//! for d in &outcome.findings { /* lockstep_diag renderers */ }
//! let out = outcome.buffer("result").unwrap().f32s();
//! ```
//!
//! [`trace_values`] runs one group and returns, per thread, the last value
//! each SSA value took (for differential tests of the static analyses).
//!
//! # How it works
//!
//! * The entry point is inlined into one flat function and lowered once into
//!   dense code (`program`): registers indexed by `Value`, constants and
//!   arguments pre-materialised, phis as parallel copies on edges.
//! * Values are raw `u64` bits; the IR type decides the arithmetic (`value`).
//! * Groups run in parallel on all cores, each on a reusable `exec::Worker`.
//!   Inside a group, threads run until they park at a barrier or wave
//!   operation (`Scheduler` decides the order; random runs random quanta).
//! * Race detection (`detect`), in the manner of FastTrack: a 16-byte shadow
//!   cell holds the barrier interval it was last touched in, the last write
//!   and two readers of that interval, as ids of sites (thread, instruction,
//!   loop iterations) interned per interval and dropped when it ends. Shared
//!   memory is checked per group; device memory per group the same way (its
//!   shadow in pages the group touches), and across groups from each group's
//!   first write and first read of each cell, folded in group order as
//!   groups finish (a group's result waits until the groups before it are
//!   folded). So findings do not depend on which core ran which group, and
//!   memory holds the groups in flight plus a first write and a first read
//!   per touched device cell: 4 bytes each while one group touched its page
//!   of 256 cells, 12 bytes after.
//! * Atomics on shared memory are plain read-modify-writes (a group runs on
//!   one core); on device memory, host atomics. Neither allocates or locks;
//!   atomics do not conflict with atomics, plain accesses do with them.
//! * Group-wide barriers (`exec >= Group`) end an interval for the memory
//!   spaces they name. Wave-level barriers (`__syncwarp`) make the active
//!   lanes of a wave meet and order accesses between lanes of that wave
//!   only. Fences alone order nothing for the detector (no flag protocols).
//! * Loop iterations in messages count from 1 (back edges taken + 1), in the
//!   innermost loop around both conflicting accesses.
//!
//! # Findings
//!
//! Rule ids match the static checks: `groupshared-write-then-no-barrier-read`,
//! `groupshared-read-then-no-barrier-write`, `groupshared-write-write-race`,
//! `groupshared-first-read-without-barrier` (a read of a cell no thread
//! wrote, or first written in the same interval by another thread),
//! `device-memory-race`, `barrier-in-divergent-cf`; and, for the emulator
//! only, `out-of-bounds`, `write-to-read-only`, `runaway-loop` and
//! `emulation-error` (opaque calls, unreachable code). Each (rule, pair of
//! instructions) is reported once, with its first witness and a count.
//!
//! # Limits
//!
//! * Between groups, each group contributes its first plain write (or first
//!   atomic, when it wrote none) and first plain read per device cell;
//!   conflicts are found and named from those (every racing cell is found,
//!   not every racing pair). Their witnesses keep the innermost loop's
//!   iteration only.
//! * Within an interval a cell keeps its last write and two readers: the
//!   first conflict on a cell is always found among plain accesses (a
//!   property test in `detect` checks this against a detector that keeps
//!   every access), later ones may
//!   be named with another witness or not at all. Atomic loads are not kept
//!   as readers (a later plain write in the interval does not meet them), and
//!   among atomic writes only the last is kept.
//! * Flag protocols built from fences and atomics between groups are not
//!   understood: their plain accesses are reported as device races.

mod detect;
mod exec;
mod launch;
mod layout;
mod program;
mod report;
mod value;

pub use launch::{parse_type, BufferInit, Launch, LaunchError, Num, Output, Source};

use detect::{Event, Events, Firsts, Wit, NONE};
use exec::{Ctx, GroupResult, Worker};
use lockstep_diag::Diagnostic;
use lockstep_ir::{FuncId, Module, Type};
use lockstep_source::SourceDb;
use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The order in which the threads of a group run between barriers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Scheduler {
    /// Thread 0 first, each until it parks.
    #[default]
    RoundRobin,
    /// The last thread first.
    Reverse,
    /// Random threads for random quanta, from `RunConfig::seed`.
    Random,
}

#[derive(Clone, Debug)]
pub struct RunConfig {
    /// Number of groups per axis.
    pub groups: [u32; 3],
    /// Threads per group; defaults to the kernel's `[numthreads]`.
    pub group_size: Option<[u32; 3]>,
    /// Lanes per wave (1..=64, a power of two); defaults to the kernel's
    /// required wave size, else 32.
    pub wave_size: Option<u32>,
    pub scheduler: Scheduler,
    pub seed: u64,
    /// Instructions one thread may execute before it counts as a runaway loop.
    pub max_steps: u64,
    pub detect_races: bool,
    /// Run only these groups.
    pub group_filter: Option<Vec<[u32; 3]>>,
    /// Worker threads; 0 uses every core.
    pub threads: usize,
    /// Show a progress bar on a terminal when the run takes over a second.
    pub progress: bool,
    /// Return every device buffer in [`RunOutcome::buffers`]; when false,
    /// only those the launch file sends somewhere (`output`).
    pub all_buffers: bool,
    /// Refuse to start a run whose estimated memory use is above this many bytes.
    pub max_memory: Option<u64>,
}

impl Default for RunConfig {
    fn default() -> RunConfig {
        RunConfig {
            groups: [1, 1, 1],
            group_size: None,
            wave_size: None,
            scheduler: Scheduler::RoundRobin,
            seed: 0,
            max_steps: 1 << 24,
            detect_races: true,
            group_filter: None,
            threads: 0,
            progress: false,
            all_buffers: true,
            max_memory: None,
        }
    }
}

/// A device buffer after the run.
#[derive(Clone, Debug, PartialEq)]
pub struct Buffer {
    pub name: String,
    /// Cell types of one element, cycling (several for structs of mixed fields).
    pub types: Vec<Type>,
    /// Raw cell bits (see the launch format for the encoding).
    pub cells: Vec<u64>,
    pub output: Option<Output>,
}

impl Buffer {
    pub fn f32s(&self) -> Vec<f32> {
        self.cells.iter().map(|&c| f32::from_bits(c as u32)).collect()
    }
    pub fn u32s(&self) -> Vec<u32> {
        self.cells.iter().map(|&c| c as u32).collect()
    }
    pub fn i32s(&self) -> Vec<i32> {
        self.cells.iter().map(|&c| c as u32 as i32).collect()
    }
    /// Little-endian cells, as a launch file's `file = ...` reads them.
    pub fn to_bytes(&self) -> Vec<u8> {
        layout::cells_to_bytes(&self.cells, &self.types)
    }
    /// The contents as a TOML line (`name = [1, 2, 3]`) that a launch file can reuse.
    pub fn to_toml_line(&self) -> String {
        let vals: Vec<String> = self
            .cells
            .iter()
            .enumerate()
            .map(|(i, &c)| (value::Ty::of(self.types[i % self.types.len()]), c))
            .map(|(t, c)| {
                if t.is_float() {
                    format!("{:?}", value::to_f64(t, c))
                } else if t == value::Ty::Bool {
                    (c != 0).to_string()
                } else if t.is_signed() {
                    value::as_i64(t, c).to_string()
                } else {
                    c.to_string()
                }
            })
            .collect();
        format!("{} = [{}]", self.name, vals.join(", "))
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Instructions executed, summed over threads (constants and arguments
    /// are materialised once and not counted; terminators are).
    pub thread_instructions: u64,
    pub groups: u64,
    pub threads: u64,
    pub elapsed: Duration,
}

#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// In order of first occurrence (group order, then execution order).
    pub findings: Vec<Diagnostic>,
    pub buffers: Vec<Buffer>,
    pub stats: Stats,
    /// True when a runaway loop or an emulation error stopped the run early.
    pub aborted: bool,
}

impl RunOutcome {
    pub fn buffer(&self, name: &str) -> Option<&Buffer> {
        self.buffers.iter().find(|b| b.name == name)
    }
}

/// Why a run could not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    /// The launch file does not fit the kernel.
    Launch(String),
    /// Bad dispatch settings (group size, wave size, group filter).
    Config(String),
    /// The IR failed verification (a front-end bug).
    InvalidIr(Vec<String>),
    /// The run would need more memory than `RunConfig::max_memory`.
    Memory(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Launch(m) => write!(f, "launch file: {m}"),
            RunError::Config(m) | RunError::Memory(m) => f.write_str(m),
            RunError::InvalidIr(errs) => {
                write!(f, "the kernel's IR is malformed: {}", errs.join("; "))
            }
        }
    }
}

impl std::error::Error for RunError {}

/// Everything prepared before groups run.
struct Prepared<'l> {
    func: lockstep_ir::Function,
    layout: layout::Layout<'l>,
    /// Per allocation, whether the kernel may write it.
    written: Vec<bool>,
    prog: program::Program,
    group_size: [u32; 3],
    wave: u32,
    groups: Groups,
}

/// The groups a run covers, in run order: a list, or the whole grid (not
/// materialised, so huge dispatches cost nothing up front).
enum Groups {
    List(Vec<[u32; 3]>),
    Grid([u32; 3]),
}

impl Groups {
    fn len(&self) -> usize {
        match self {
            Groups::List(l) => l.len(),
            Groups::Grid(d) => d.iter().map(|&x| x as usize).product(),
        }
    }
    /// The i-th group (x fastest for the grid).
    fn get(&self, i: usize) -> [u32; 3] {
        match self {
            Groups::List(l) => l[i],
            Groups::Grid([x, y, _]) => {
                let (x, y) = (*x as usize, *y as usize);
                [(i % x) as u32, (i / x % y) as u32, (i / (x * y)) as u32]
            }
        }
    }
}

impl Prepared<'_> {
    /// The execution context shared by every worker of one run.
    fn context<'a>(&'a self, device: &'a [AtomicU64], abort: &'a AtomicBool, config: &RunConfig) -> Ctx<'a> {
        Ctx {
            prog: &self.prog,
            allocs: &self.layout.allocs,
            written: &self.written,
            device,
            constant: &self.layout.constant,
            shared_init: &self.layout.shared_init,
            shared_preset: &self.layout.shared_preset,
            private_init: &self.layout.private_init,
            group_size: self.group_size,
            num_groups: config.groups,
            wave: self.wave,
            scheduler: config.scheduler,
            seed: config.seed,
            max_steps: config.max_steps,
            cross_groups: config.detect_races && self.groups.len() > 1,
            abort,
        }
    }
}

fn prepare<'l>(module: &Module, entry: FuncId, launch: &'l Launch, config: &RunConfig) -> Result<Prepared<'l>, RunError> {
    let func = lockstep_ir::inline_calls(module, entry);
    let errors = lockstep_ir::verify(&func);
    if !errors.is_empty() {
        return Err(RunError::InvalidIr(errors));
    }
    let info = func.entry.clone().unwrap_or_default();
    let group_size = config
        .group_size
        .or(info.group_size)
        .ok_or_else(|| RunError::Config(format!("`{}` does not declare its group size: give one (--group-size X,Y,Z)", func.name)))?;
    let threads_per_group = group_size.iter().map(|&x| x as u64).product::<u64>();
    if threads_per_group == 0 || threads_per_group > 1 << 16 {
        return Err(RunError::Config(format!("group size {group_size:?} must have 1 to 65536 threads")));
    }
    let wave = config.wave_size.or(info.wave_size).unwrap_or(32);
    if !(1..=64).contains(&wave) || !wave.is_power_of_two() {
        return Err(RunError::Config(format!("wave size {wave} must be a power of two from 1 to 64")));
    }
    if config.groups.contains(&0) {
        return Err(RunError::Config(format!("group count {:?} must be at least 1 on every axis", config.groups)));
    }
    let grid_groups = config.groups.iter().map(|&g| g as u64).product::<u64>();
    if grid_groups > u32::MAX as u64 {
        return Err(RunError::Config(format!("{grid_groups} groups are more than the emulator can number (at most {})", u32::MAX)));
    }
    let groups = match &config.group_filter {
        Some(list) => {
            for g in list {
                if (0..3).any(|a| g[a] >= config.groups[a]) {
                    return Err(RunError::Config(format!("group {g:?} is outside the dispatch of {:?} groups", config.groups)));
                }
            }
            Groups::List(list.clone())
        }
        None => Groups::Grid(config.groups),
    };
    let total_threads = config.groups.iter().map(|&g| g as u64).product::<u64>() * threads_per_group;
    let layout = layout::bind(module, &func, launch, total_threads).map_err(RunError::Launch)?;
    let prog = program::lower(&func, &layout.ids, &layout.param_bits);
    let written = program::written_allocs(&func, &layout.ids, layout.allocs.len());
    let p = Prepared { func, layout, written, prog, group_size, wave, groups };
    if let Some(limit) = config.max_memory {
        let need = p.memory_estimate(config);
        if need.total() > limit {
            return Err(RunError::Memory(format!(
                "this run would need about {} ({}), more than the {} allowed (--max-memory); \
                 give a larger --max-memory, run fewer groups (--only-group) or pass --no-race-detection",
                gib(need.total()),
                need.parts(),
                gib(limit)
            )));
        }
    }
    Ok(p)
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// What a run will hold in memory at its peak, in bytes.
struct MemoryEstimate {
    device: u64,
    /// The cross-group shadow: a first write and a first read per device cell, at worst.
    cross_shadow: u64,
    /// Per-worker registers, private and shared memory, shadow state.
    workers: u64,
    /// Copies of the buffers returned after the run.
    outputs: u64,
}

impl MemoryEstimate {
    fn total(&self) -> u64 {
        self.device + self.cross_shadow + self.workers + self.outputs
    }
    fn parts(&self) -> String {
        let parts = [("device buffers", self.device), ("race-detection shadow", self.cross_shadow), ("workers", self.workers), ("output copies", self.outputs)];
        parts.iter().filter(|p| p.1 > 0).map(|(what, n)| format!("{what} {}", gib(*n))).collect::<Vec<_>>().join(", ")
    }
}

impl Prepared<'_> {
    fn memory_estimate(&self, config: &RunConfig) -> MemoryEstimate {
        let cells = self.layout.device_len as u64;
        let groups = self.groups.len() as u64;
        let threads = self.group_size.iter().map(|&x| x as u64).product::<u64>();
        let workers = workers(config, self.groups.len()) as u64;
        let shared = self.layout.shared_init.len() as u64;
        let private = self.layout.private_init.len() as u64;
        let mut worker = threads * (self.prog.nregs as u64 + private) * 8 + shared * 8;
        if config.detect_races {
            // 16-byte cells and a fresh copy of them for shared memory. The device shadow of
            // the group being run (40 bytes per cell it touches) is not counted: groups touch
            // little of the buffers, and how much is not known before they run.
            worker += shared * 32;
        }
        let outputs = self
            .layout
            .allocs
            .iter()
            .filter(|a| a.class == layout::Class::Device && (config.all_buffers || a.output.is_some()))
            .map(|a| a.len * 8)
            .sum();
        MemoryEstimate {
            device: cells * 8,
            cross_shadow: if config.detect_races && groups > 1 { cells * 24 } else { 0 },
            workers: workers * worker,
            outputs,
        }
    }
}

fn linear(g: [u32; 3], dims: [u32; 3]) -> u32 {
    g[0] + dims[0] * (g[1] + dims[1] * g[2])
}

/// Runs `entry` over the dispatch described by `config`, with inputs from `launch`.
/// `db` holds the sources the IR's spans point into (for line numbers in messages).
pub fn run(db: &SourceDb, module: &Module, entry: FuncId, launch: &Launch, config: &RunConfig) -> Result<RunOutcome, RunError> {
    let started = Instant::now();
    let p = prepare(module, entry, launch, config)?;
    let device = p.layout.device_memory().map_err(RunError::Launch)?;
    let abort = AtomicBool::new(false);
    let ctx = p.context(&device, &abort, config);
    let merger = Mutex::new(Merger {
        allocs: &p.layout.allocs,
        cross_check: config.detect_races && p.groups.len() > 1,
        pending: BTreeMap::new(),
        next: 0,
        events: Events::default(),
        cross: Events::default(),
        seen: CrossShadow { writes: Vec::new(), reads: Vec::new(), sites: Vec::new(), site_ids: HashMap::new(), last_site: ((NONE, 0), 0) },
        instructions: 0,
        aborted: false,
    });
    run_groups(&ctx, &p.groups, config, &merger);
    let mut m = merger.into_inner().expect("no worker panics while merging");
    m.finish();
    let namer = report::Namer {
        db,
        module,
        func: &p.func,
        prog: &p.prog,
        allocs: &p.layout.allocs,
        group_size: p.group_size,
        num_groups: config.groups,
        max_steps: config.max_steps,
        inst_block: p.func.inst_blocks(),
    };
    let mut findings: Vec<Diagnostic> = m.events.list.iter().map(|(e, n)| namer.diagnostic(e, *n, false)).collect();
    findings.extend(m.cross.list.iter().map(|(e, n)| namer.diagnostic(e, *n, true)));
    let buffers = p
        .layout
        .allocs
        .iter()
        .filter(|a| a.class == layout::Class::Device && (config.all_buffers || a.output.is_some()))
        .map(|a| Buffer {
            name: a.name.clone(),
            types: a.types.clone(),
            cells: device[a.base..a.base + a.len as usize].iter().map(|c| c.load(Ordering::Relaxed)).collect(),
            output: a.output.clone(),
        })
        .collect();
    let threads_per_group = p.group_size.iter().map(|&x| x as u64).product::<u64>();
    Ok(RunOutcome {
        findings,
        buffers,
        stats: Stats {
            thread_instructions: m.instructions,
            groups: p.groups.len() as u64,
            threads: p.groups.len() as u64 * threads_per_group,
            elapsed: started.elapsed(),
        },
        aborted: m.aborted,
    })
}

/// Folds group results in group order as they arrive: memory stays bounded
/// by the groups in flight, and findings do not depend on which core ran
/// which group when.
struct Merger<'a> {
    allocs: &'a [layout::Alloc],
    cross_check: bool,
    /// Results that arrived before an earlier group's.
    pending: BTreeMap<usize, GroupResult>,
    next: usize,
    events: Events,
    /// Conflicts between groups on device memory.
    cross: Events,
    /// Earlier groups' first accesses per device cell.
    seen: CrossShadow,
    instructions: u64,
    aborted: bool,
}

impl Merger<'_> {
    fn push(&mut self, i: usize, r: GroupResult) {
        self.pending.insert(i, r);
        while let Some(r) = self.pending.remove(&self.next) {
            self.fold(r);
            self.next += 1;
        }
    }

    /// Folds what is left (groups after a gap, when a run stopped early).
    fn finish(&mut self) {
        while let Some((_, r)) = self.pending.pop_first() {
            self.fold(r);
        }
    }

    fn fold(&mut self, r: GroupResult) {
        self.instructions += r.instructions;
        self.aborted |= r.aborted;
        self.events.merge(r.events);
        if !self.cross_check {
            return;
        }
        for (cell, mine) in r.device {
            let prev = self.seen.get(cell);
            // Most cells are new to the run: skip building their (empty) list of conflicts.
            let conflicts = prev.is_some().then(|| prev.conflicts(&mine)).into_iter().flatten();
            for (later, earlier) in conflicts {
                let c = cell as usize;
                let alloc =
                    self.allocs.iter().position(|a| a.class == layout::Class::Device && c >= a.base && c < a.base + a.len as usize).unwrap_or(0);
                let base = self.allocs[alloc].base as u64;
                self.cross.add((exec::K_CROSS, later.rec.inst, earlier.rec.inst), || Event::Hazard {
                    hazard: detect::Hazard::Raw,
                    device: true,
                    alloc: alloc as u32,
                    cell: cell as u64 - base,
                    later,
                    earlier: Some(earlier),
                });
            }
            let mut next = prev;
            next.absorb(&mine);
            if next != prev {
                self.seen.set(cell, &prev, &next);
            }
        }
    }
}

const CROSS_PAGE_BITS: u32 = 8;
const CROSS_PAGE: usize = 1 << CROSS_PAGE_BITS;

/// Witnesses of one kind for a page of device cells.
enum WitPage {
    /// Every witness so far comes from one group: per cell its thread (high
    /// half) and 1 + an interned (instruction, iteration) (low half; 0: none).
    /// A buffer each group reads or writes its own part of costs 4 bytes a cell.
    OneGroup { group: u32, cells: Box<[u32]> },
    Mixed(Box<[Wit]>),
}

/// What the groups folded so far did to each device cell: pages of first
/// writes and of first reads, each allocated when a cell of it is first
/// written or read.
struct CrossShadow {
    writes: Vec<Option<WitPage>>,
    reads: Vec<Option<WitPage>>,
    /// (instruction with its atomic flag, iteration) of compact witnesses.
    sites: Vec<(u32, u16)>,
    site_ids: HashMap<(u32, u16), u16>,
    /// The site looked up last: neighbouring cells mostly share one.
    last_site: ((u32, u16), u16),
}

impl CrossShadow {
    fn get(&self, cell: u32) -> Firsts {
        let (page, i) = ((cell >> CROSS_PAGE_BITS) as usize, cell as usize & (CROSS_PAGE - 1));
        let at = |pages: &Vec<Option<WitPage>>| match pages.get(page) {
            Some(Some(WitPage::OneGroup { group, cells })) if cells[i] != 0 => {
                let (inst, iter) = self.sites[(cells[i] & 0xffff) as usize - 1];
                Wit { group: *group, inst, thread: (cells[i] >> 16) as u16, iter }
            }
            Some(Some(WitPage::Mixed(wits))) => wits[i],
            _ => Wit::EMPTY,
        };
        Firsts { write: at(&self.writes), read: at(&self.reads) }
    }

    fn set(&mut self, cell: u32, prev: &Firsts, next: &Firsts) {
        let (page, i) = ((cell >> CROSS_PAGE_BITS) as usize, cell as usize & (CROSS_PAGE - 1));
        for (write, w) in [(true, next.write), (false, next.read)] {
            if w == if write { prev.write } else { prev.read } {
                continue;
            }
            let key = (w.inst, w.iter);
            let site = if self.last_site.0 == key {
                Some(self.last_site.1)
            } else {
                let id = match self.site_ids.get(&key) {
                    Some(&id) => Some(id),
                    None if self.sites.len() < 0xffff => {
                        self.sites.push(key);
                        self.site_ids.insert(key, self.sites.len() as u16);
                        Some(self.sites.len() as u16)
                    }
                    None => None,
                };
                if let Some(id) = id {
                    self.last_site = (key, id);
                }
                id
            };
            let compact = site.map(|id| (w.thread as u32) << 16 | id as u32);
            let pages = if write { &mut self.writes } else { &mut self.reads };
            if pages.len() <= page {
                pages.resize_with(page + 1, || None);
            }
            let slot = &mut pages[page];
            match (slot.as_mut(), compact) {
                (None, Some(c)) => {
                    let mut cells = vec![0u32; CROSS_PAGE].into_boxed_slice();
                    cells[i] = c;
                    *slot = Some(WitPage::OneGroup { group: w.group, cells });
                }
                (Some(WitPage::OneGroup { group, cells }), Some(c)) if *group == w.group => cells[i] = c,
                (Some(WitPage::Mixed(wits)), _) => wits[i] = w,
                (_, _) => {
                    // A second group, or too many distinct instructions: full witnesses.
                    let mut wits = vec![Wit::EMPTY; CROSS_PAGE].into_boxed_slice();
                    if let Some(WitPage::OneGroup { group, cells }) = slot.as_ref() {
                        for (wit, &c) in wits.iter_mut().zip(cells.iter()).filter(|(_, &c)| c != 0) {
                            let (inst, iter) = self.sites[(c & 0xffff) as usize - 1];
                            *wit = Wit { group: *group, inst, thread: (c >> 16) as u16, iter };
                        }
                    }
                    wits[i] = w;
                    *slot = Some(WitPage::Mixed(wits));
                }
            }
        }
    }
}

fn run_one(w: &mut Worker, ctx: &Ctx, detect_races: bool, g: [u32; 3]) -> GroupResult {
    let glin = linear(g, ctx.num_groups);
    if detect_races {
        w.run_group::<true, false>(ctx, g, glin)
    } else {
        w.run_group::<false, false>(ctx, g, glin)
    }
}

/// Worker threads for a run of `groups` groups.
fn workers(config: &RunConfig, groups: usize) -> usize {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    if config.threads == 0 { cores } else { config.threads }.min(groups).max(1)
}

/// Runs every group, in parallel, handing each result to the merger.
fn run_groups(ctx: &Ctx, groups: &Groups, config: &RunConfig, merger: &Mutex<Merger>) {
    let workers = workers(config, groups.len());
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let work = || {
        let mut w = Worker::new(ctx, config.detect_races);
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= groups.len() || ctx.abort.load(Ordering::Relaxed) {
                break;
            }
            let r = run_one(&mut w, ctx, config.detect_races, groups.get(i));
            merger.lock().expect("no worker panics while merging").push(i, r);
            done.fetch_add(1, Ordering::Relaxed);
        }
    };
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers).map(|_| s.spawn(work)).collect();
        if config.progress && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            show_progress(&done, groups.len(), &handles);
        }
        for h in handles {
            if let Err(panic) = h.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
}

/// Draws a progress bar once the run has taken a second.
fn show_progress(done: &AtomicUsize, total: usize, handles: &[std::thread::ScopedJoinHandle<'_, ()>]) {
    let start = Instant::now();
    let mut bar: Option<indicatif::ProgressBar> = None;
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(50));
        if bar.is_none() && start.elapsed() >= Duration::from_secs(1) {
            let b = indicatif::ProgressBar::new(total as u64);
            if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} groups, {elapsed} elapsed, about {eta} left") {
                b.set_style(style);
            }
            bar = Some(b);
        }
        if let Some(b) = &bar {
            b.set_position(done.load(Ordering::Relaxed) as u64);
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}

/// Runs one group (the first of `config.group_filter`, else group 0) on one
/// core without race detection, and returns per thread (linear id in the
/// group) the last value each SSA value of the inlined entry function took,
/// indexed by `Value` (None where the thread never executed it, and for
/// instructions without a value). Values are raw bits as described in the
/// `value` module: integers zero-extended, floats as IEEE bits.
pub fn trace_values(module: &Module, entry: FuncId, launch: &Launch, config: &RunConfig) -> Result<Vec<Vec<Option<u64>>>, RunError> {
    let p = prepare(module, entry, launch, config)?;
    let device = p.layout.device_memory().map_err(RunError::Launch)?;
    let abort = AtomicBool::new(false);
    let ctx = p.context(&device, &abort, config);
    let g = p.groups.get(0);
    let mut w = Worker::new(&ctx, false);
    let r = w.run_group::<false, true>(&ctx, g, linear(g, config.groups));
    let mut trace = r.trace.unwrap_or_default();
    for thread in &mut trace {
        for (v, slot) in thread.iter_mut().enumerate() {
            if p.func.insts[v].ty == Type::Void {
                *slot = None;
            }
        }
    }
    Ok(trace)
}

/// The findings and stdout buffers of a run as one JSON document:
/// `{"diagnostics": [...], "outputs": {"name": [values]}}`.
pub fn outcome_json(db: &SourceDb, outcome: &RunOutcome) -> String {
    let diags: Vec<serde_json::Value> = outcome.findings.iter().map(|d| lockstep_diag::to_json_value(db, d)).collect();
    let mut outputs = serde_json::Map::new();
    for b in outcome.buffers.iter().filter(|b| b.output == Some(Output::Stdout)) {
        let vals: Vec<serde_json::Value> = b
            .cells
            .iter()
            .enumerate()
            .map(|(i, &c)| {
                let t = value::Ty::of(b.types[i % b.types.len()]);
                if t.is_float() {
                    serde_json::json!(value::to_f64(t, c))
                } else if t == value::Ty::Bool {
                    serde_json::json!(c != 0)
                } else if t.is_signed() {
                    serde_json::json!(value::as_i64(t, c))
                } else {
                    serde_json::json!(c)
                }
            })
            .collect();
        outputs.insert(b.name.clone(), serde_json::Value::Array(vals));
    }
    let stats = &outcome.stats;
    serde_json::to_string_pretty(&serde_json::json!({
        "diagnostics": diags,
        "outputs": outputs,
        "stats": {
            "thread_instructions": stats.thread_instructions,
            "groups": stats.groups,
            "threads": stats.threads,
            "seconds": stats.elapsed.as_secs_f64(),
            "aborted": outcome.aborted,
        },
    }))
    .expect("json values serialize")
}

#[cfg(test)]
mod tests {
    use super::*;
    use detect::Rec;

    fn wit(group: u32, thread: u32, inst: u32, iter: u32, atomic: bool) -> Wit {
        Wit::new(group, &Rec { thread, inst, iter, outer_iter: NONE, wave: 0, wave_epoch: 0, epoch: 0 }, atomic)
    }

    fn cross() -> CrossShadow {
        CrossShadow { writes: Vec::new(), reads: Vec::new(), sites: Vec::new(), site_ids: HashMap::new(), last_site: ((NONE, 0), 0) }
    }

    #[test]
    fn cross_group_witnesses_read_back_as_stored_in_either_page_form() {
        let mut c = cross();
        let set = |c: &mut CrossShadow, cell: u32, f: Firsts| {
            let prev = c.get(cell);
            c.set(cell, &prev, &f);
        };
        let a = Firsts { write: wit(3, 7, 40, 2, false), read: wit(3, 8, 41, NONE, false) };
        set(&mut c, 5, a);
        set(&mut c, 6, Firsts { write: Wit::EMPTY, read: wit(3, 9, 41, 0, false) });
        assert!(matches!(c.writes[0], Some(WitPage::OneGroup { group: 3, .. })), "one group: compact page");
        assert_eq!(c.get(5), a);
        assert_eq!(c.get(6).write, Wit::EMPTY);
        // A second group in the page turns it into full witnesses, keeping the first group's.
        let b = Firsts { write: wit(4, 1, 50, 0, true), read: Wit::EMPTY };
        set(&mut c, 7, b);
        assert!(matches!(c.writes[0], Some(WitPage::Mixed(_))));
        assert_eq!((c.get(5), c.get(7)), (a, b));
        assert_eq!(c.get(6).read, wit(3, 9, 41, 0, false));
        assert_eq!(c.get(300), Firsts::EMPTY, "another page, never touched");
        // More distinct (instruction, iteration) sites than a compact cell can name.
        for i in 0..70_000u32 {
            let cell = 1024 + i;
            set(&mut c, cell, Firsts { write: Wit::EMPTY, read: wit(9, 0, i, 0, false) });
        }
        assert_eq!(c.get(1024 + 69_999).read, wit(9, 0, 69_999, 0, false));
        assert_eq!(c.get(1024 + 5).read, wit(9, 0, 5, 0, false));
    }
}
