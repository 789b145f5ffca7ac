//! Binding a launch description to a kernel: one allocation per global,
//! private array and pointer parameter, with storage class, length, element
//! type and initial contents.

use crate::launch::{Launch, Num, Output, Source};
use crate::program::AllocIds;
use crate::value::{from_f64, Ty};
use lockstep_ir::*;
use std::borrow::Cow;
use std::sync::atomic::AtomicU64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// One copy per group.
    Shared,
    /// One copy for the dispatch, writable.
    Device,
    /// One copy for the dispatch, read-only.
    Constant,
    /// One copy per thread.
    Private,
}

pub(crate) struct Alloc {
    pub name: String,
    pub class: Class,
    /// Offset of cell 0 in the storage of its class.
    pub base: usize,
    pub len: u64,
    /// Cell types of one element, cycling (one entry unless a struct mixes types).
    pub types: Vec<Type>,
    pub global: Option<GlobalId>,
    pub output: Option<Output>,
}

pub(crate) struct Layout<'l> {
    pub allocs: Vec<Alloc>,
    pub ids: AllocIds,
    /// Cells of device memory, all buffers together.
    pub device_len: usize,
    device_fills: Vec<DeviceFill<'l>>,
    pub constant: Vec<u64>,
    pub shared_init: Vec<u64>,
    /// Shared cells that have initial values (count as written before the group starts).
    pub shared_preset: Vec<bool>,
    /// Private cells of one thread, initialised.
    pub private_init: Vec<u64>,
    pub param_bits: Vec<u64>,
}

fn type_name(t: Type) -> String {
    t.to_string()
}

/// Encodes one launch value as a cell of type `ty`, refusing values that do not fit.
fn encode(n: Num, ty: Type, what: &str) -> Result<u64, String> {
    let t = Ty::of(ty);
    let bad = |why: &str| Err(format!("{what}: {n} {why}, and it holds {}", type_name(ty)));
    match n {
        Num::Bool(b) if t == Ty::Bool => Ok(b as u64),
        Num::Bool(_) => bad("is a boolean"),
        Num::Float(x) if t.is_float() => Ok(from_f64(t, x)),
        Num::Float(_) => bad("is not an integer"),
        Num::Int(i) if t.is_float() => Ok(from_f64(t, i as f64)),
        Num::Int(i) => {
            let fits = match t {
                Ty::Bool => i == 0 || i == 1,
                Ty::I8 => i8::try_from(i).is_ok(),
                Ty::U8 => u8::try_from(i).is_ok(),
                Ty::I16 => i16::try_from(i).is_ok(),
                Ty::U16 => u16::try_from(i).is_ok(),
                Ty::I32 => i32::try_from(i).is_ok(),
                Ty::U32 => u32::try_from(i).is_ok(),
                Ty::U64 => i >= 0,
                _ => true,
            };
            if !fits {
                return bad("does not fit");
            }
            Ok(i as u64 & t.mask())
        }
    }
}

fn cell_bytes(ty: Type) -> usize {
    match Ty::of(ty).width() {
        8 => 1,
        16 => 2,
        64 => 8,
        _ => 4,
    }
}

/// The cells packed little-endian in `bytes`, their types cycling through `types`;
/// `Err((cell size, byte count))` when the bytes end inside a cell.
fn byte_cells<'a>(bytes: &'a [u8], types: &'a [Type]) -> impl Iterator<Item = Result<u64, (usize, usize)>> + 'a {
    let (mut at, mut i) = (0, 0);
    std::iter::from_fn(move || {
        if at >= bytes.len() {
            return None;
        }
        let size = cell_bytes(types[i % types.len()]);
        if at + size > bytes.len() {
            at = bytes.len();
            return Some(Err((size, bytes.len())));
        }
        let mut b = [0u8; 8];
        b[..size].copy_from_slice(&bytes[at..at + size]);
        (at, i) = (at + size, i + 1);
        Some(Ok(u64::from_le_bytes(b)))
    })
}

/// How many cells `bytes` hold (see [`byte_cells`]).
fn byte_cell_count(bytes: &[u8], types: &[Type]) -> Result<usize, (usize, usize)> {
    byte_cells(bytes, types).try_fold(0, |n, c| c.map(|_| n + 1))
}

/// Fills `cells` (already sized) from a launch source; cell `i` has type
/// `types[i % types.len()]` (struct buffers mix types).
fn fill_cells(cells: &mut [u64], source: &Source, types: &[Type], what: &str) -> Result<(), String> {
    let len = cells.len();
    let ty_at = |i: usize| types[i % types.len()];
    match source {
        Source::Zero => {}
        Source::Values(vs) => {
            if vs.len() > len {
                return Err(format!("{what} has {len} cells, but {} values were given", vs.len()));
            }
            for (i, v) in vs.iter().enumerate() {
                cells[i] = encode(*v, ty_at(i), &format!("{what} value {i}"))?;
            }
        }
        Source::Fill { start, step } => {
            let as_f = |n: &Num| match *n {
                Num::Int(i) => i as f64,
                Num::Float(x) => x,
                Num::Bool(b) => b as u8 as f64,
            };
            // The pattern must suit each cell type; later cells wrap like GPU arithmetic.
            for (i, &ty) in types.iter().enumerate().take(len) {
                encode(*start, ty, &format!("{what} fill start"))?;
                if matches!(step, Num::Float(_)) && !Ty::of(ty).is_float() {
                    return Err(format!("{what} fill step: {step} is not an integer, and cell {i} holds {}", type_name(ty)));
                }
            }
            for (i, c) in cells.iter_mut().enumerate() {
                let t = Ty::of(ty_at(i));
                *c = if t.is_float() || matches!(start, Num::Float(_)) || matches!(step, Num::Float(_)) {
                    from_f64(t, as_f(start) + as_f(step) * i as f64)
                } else {
                    let (s, d) = (as_f(start) as i64, as_f(step) as i64);
                    (s.wrapping_add(d.wrapping_mul(i as i64)) as u64) & t.mask()
                };
            }
        }
        Source::Bytes { path, bytes } => {
            let got = byte_cell_count(bytes, types).map_err(|(size, n)| {
                format!("{what}: {} has {n} bytes, which do not end on a whole {size}-byte cell", path.display())
            })?;
            if got > len {
                return Err(format!("{what} has {len} cells, but {} holds {got}", path.display()));
            }
            // Decoded straight into the buffer: a large file is not held twice.
            for (c, v) in cells.iter_mut().zip(byte_cells(bytes, types).flatten()) {
                *c = v;
            }
        }
    }
    Ok(())
}

/// Number of cells a source provides on its own (for unsized buffers).
fn source_len(source: &Source, types: &[Type]) -> Option<u64> {
    match source {
        Source::Values(v) => Some(v.len() as u64),
        Source::Bytes { bytes, .. } => byte_cell_count(bytes, types).ok().map(|c| c as u64),
        Source::Zero | Source::Fill { .. } => None,
    }
}

/// The component (cell within an element) an index addresses, when the
/// index is visibly `element * per + c` or a constant.
fn component_of(f: &Function, index: Value, per: u64) -> Option<u64> {
    let int = |v: Value| f.as_int(v).map(|i| i as u64);
    let multiple = |v: Value| match &f.inst(v).op {
        Op::Binary(BinOp::Mul, a, b) => int(*a).or(int(*b)).is_some_and(|k| k.is_multiple_of(per)),
        Op::Binary(BinOp::Shl, _, b) => int(*b).is_some_and(|k| k < 64 && (1u64 << k).is_multiple_of(per)),
        _ => false,
    };
    if let Some(c) = int(index) {
        return Some(c % per);
    }
    match &f.inst(index).op {
        Op::Binary(BinOp::Add, a, b) => match (int(*a), int(*b)) {
            (Some(c), None) if multiple(*b) => Some(c % per),
            (None, Some(c)) if multiple(*a) => Some(c % per),
            _ => None,
        },
        _ if multiple(index) => Some(0),
        _ => None,
    }
}

/// Cell types of one element of a global: its declared type, refined by
/// the types its loads and stores use per component (structs mix types).
fn component_types(f: &Function, gid: GlobalId, g: &Global) -> Vec<Type> {
    let per = g.cells_per_elem.max(1) as u64;
    let mut types = vec![g.elem; per as usize];
    if per == 1 {
        return types;
    }
    for inst in &f.insts {
        let Some(m) = inst.op.mem_ref() else { continue };
        if m.root != Root::Global(gid) {
            continue;
        }
        let ty = match &inst.op {
            Op::Store(_, v) => f.inst(*v).ty,
            _ => inst.ty,
        };
        if let Some(c) = component_of(f, m.index, per) {
            types[c as usize] = ty;
        }
    }
    types
}

/// Follows a pointer value back to the kernel parameter it derives from.
fn param_of_ptr(f: &Function, mut v: Value) -> Option<u32> {
    for _ in 0..64 {
        match &f.inst(v).op {
            Op::Param(i) => return Some(*i),
            Op::PtrAdd(p, _) => v = *p,
            Op::AddrOf(Root::Param(i), _) => return Some(*i),
            Op::AddrOf(Root::Ptr(p), _) => v = *p,
            _ => return None,
        }
    }
    None
}

/// The element type a pointer parameter is used with, from its loads and stores.
fn param_elem(f: &Function, param: u32) -> Option<Type> {
    f.insts.iter().find_map(|inst| {
        let m = inst.op.mem_ref()?;
        let p = match m.root {
            Root::Param(p) => p,
            Root::Ptr(v) => param_of_ptr(f, v)?,
            _ => return None,
        };
        if p != param {
            return None;
        }
        match &inst.op {
            Op::Store(_, v) => Some(f.inst(*v).ty),
            _ => Some(inst.ty),
        }
    })
}

/// The most cells one allocation may have (2 GiB of cells).
const MAX_CELLS: u64 = 1 << 28;

fn check_len(what: &str, len: u64) -> Result<u64, String> {
    if len > MAX_CELLS {
        return Err(format!("{what} would have {len} cells; the emulator allows at most {MAX_CELLS} (give a smaller `len`)"));
    }
    Ok(len)
}

/// A device buffer's initial contents, written once all lengths are known.
struct DeviceFill<'l> {
    base: usize,
    len: usize,
    /// The global's initialiser (before the launch file's contents).
    init: Vec<u64>,
    source: Option<Cow<'l, Source>>,
    types: Vec<Type>,
    label: String,
}

/// A global's initial value as a cell of type `ty`.
fn global_cell(init: &Const, ty: Type, what: &str) -> u64 {
    let t = Ty::of(ty);
    match *init {
        Const::Int(i) => encode(Num::Int(i as i64), ty, what).unwrap_or(i & t.mask()),
        Const::Float(x) => from_f64(t, x),
        Const::Bool(b) => b as u64,
    }
}

/// `threads`: threads in the whole dispatch, the length of unsized buffers.
pub(crate) fn bind<'l>(module: &Module, f: &Function, launch: &'l Launch, threads: u64) -> Result<Layout<'l>, String> {
    let mut allocs = Vec::new();
    let (mut constant, mut shared_init, mut private_init) = (Vec::new(), Vec::new(), Vec::new());
    // Device memory is allocated once, zeroed by the allocator (untouched pages
    // cost nothing), and filled in place after every buffer's length is known.
    let mut device_fills: Vec<DeviceFill> = Vec::new();
    let mut device_len = 0usize;
    let mut shared_preset = Vec::new();
    let mut used_buffers = vec![false; launch.buffers.len()];
    let mut used_constants = vec![false; launch.constants.len()];
    let find_buffer = |name: &str, used: &mut Vec<bool>| {
        let i = launch.buffers.iter().position(|b| b.name == name)?;
        used[i] = true;
        Some(&launch.buffers[i])
    };
    let find_constant = |name: &str, used: &mut Vec<bool>| {
        let i = launch.constants.iter().position(|c| c.0 == name)?;
        used[i] = true;
        Some(&launch.constants[i].1)
    };

    for (gi, g) in module.globals.iter().enumerate() {
        let what = format!("`{}`", g.name);
        let class = if g.kind == GlobalKind::Constant {
            Class::Constant
        } else {
            match g.space {
                MemSpace::Shared => Class::Shared,
                MemSpace::Constant => Class::Constant,
                MemSpace::Private => Class::Private,
                MemSpace::Device | MemSpace::Unknown => Class::Device,
            }
        };
        let mut len = g.len;
        let mut output = None;
        let mut cells_from: Option<Cow<Source>> = None;
        let types = component_types(f, GlobalId(gi as u32), g);
        if g.kind == GlobalKind::Constant {
            if let Some(vs) = find_constant(&g.name, &mut used_constants) {
                cells_from = Some(Cow::Owned(Source::Values(vs.clone())));
            }
        } else if let Some(b) = find_buffer(&g.name, &mut used_buffers) {
            if class == Class::Shared && !matches!(b.source, Source::Zero) {
                return Err(format!("buffer {what} is group-shared memory: the launch file can give its `len` but not its contents"));
            }
            if let (Some(declared), Some(given)) = (g.len, b.len) {
                if declared != given {
                    return Err(format!("buffer {what} is declared with {declared} cells, but the launch file says `len = {given}`"));
                }
            }
            if let Some(t) = b.ty {
                if types.iter().any(|&c| c != t) {
                    return Err(format!("buffer {what} holds {}, but the launch file says `type = \"{}\"`", g.elem, t));
                }
            }
            len = len.or(b.len).or_else(|| source_len(&b.source, &types));
            output = b.output.clone();
            cells_from = Some(Cow::Borrowed(&b.source));
        }
        let len = len.unwrap_or(match class {
            Class::Device => threads.saturating_mul(g.cells_per_elem.max(1) as u64),
            Class::Constant | Class::Private => g.init.len().max(1) as u64,
            Class::Shared => 0,
        });
        let len = check_len(&format!("buffer {what}"), len)?;
        let label = if class == Class::Constant { format!("constant {what}") } else { format!("buffer {what}") };
        if class == Class::Device {
            let init = g.init.iter().take(len as usize).enumerate().map(|(i, c)| global_cell(c, types[i % types.len()], &what)).collect();
            device_fills.push(DeviceFill { base: device_len, len: len as usize, init, source: cells_from, types: types.clone(), label });
            allocs.push(Alloc { name: g.name.clone(), class, base: device_len, len, types, global: Some(GlobalId(gi as u32)), output });
            device_len += len as usize;
            continue;
        }
        let mut cells = vec![0u64; len as usize];
        for (i, (c, init)) in cells.iter_mut().zip(&g.init).enumerate() {
            *c = global_cell(init, types[i % types.len()], &what);
        }
        if let Some(source) = &cells_from {
            fill_cells(&mut cells, source, &types, &label)?;
        }
        let storage = match class {
            Class::Device => unreachable!("device buffers are filled in place"),
            Class::Constant => &mut constant,
            Class::Shared => &mut shared_init,
            Class::Private => &mut private_init,
        };
        let base = storage.len();
        storage.extend_from_slice(&cells);
        if class == Class::Shared {
            shared_preset.extend((0..len).map(|i| module.group_memory_zeroed || (i as usize) < g.init.len()));
        }
        allocs.push(Alloc { name: g.name.clone(), class, base, len, types, global: Some(GlobalId(gi as u32)), output });
    }
    for l in &f.locals {
        check_len(&format!("private array `{}`", l.name), l.len)?;
        let base = private_init.len();
        private_init.resize(base + l.len as usize, 0);
        allocs.push(Alloc { name: l.name.clone(), class: Class::Private, base, len: l.len, types: vec![l.elem], global: None, output: None });
    }
    let mut param_bits = Vec::new();
    for (pi, p) in f.params.iter().enumerate() {
        let what = format!("`{}`", p.name);
        match p.ty {
            Type::Ptr(space) => {
                let b = find_buffer(&p.name, &mut used_buffers);
                let elem = b.and_then(|b| b.ty).or_else(|| param_elem(f, pi as u32)).unwrap_or(Type::U32);
                let len = b
                    .and_then(|b| b.len.or_else(|| source_len(&b.source, &[elem])))
                    .unwrap_or(threads);
                let len = check_len(&format!("buffer {what}"), len)?;
                let class = if space == MemSpace::Constant { Class::Constant } else { Class::Device };
                let base = if class == Class::Device {
                    let source = b.map(|b| Cow::Borrowed(&b.source));
                    device_fills.push(DeviceFill { base: device_len, len: len as usize, init: Vec::new(), source, types: vec![elem], label: format!("buffer {what}") });
                    device_len += len as usize;
                    device_len - len as usize
                } else {
                    let mut cells = vec![0u64; len as usize];
                    if let Some(b) = b {
                        fill_cells(&mut cells, &b.source, &[elem], &format!("buffer {what}"))?;
                    }
                    constant.extend_from_slice(&cells);
                    constant.len() - cells.len()
                };
                allocs.push(Alloc { name: p.name.clone(), class, base, len, types: vec![elem], global: None, output: b.and_then(|b| b.output.clone()) });
                param_bits.push(0);
            }
            ty => {
                let bits = match find_constant(&p.name, &mut used_constants) {
                    Some(vs) if vs.len() == 1 => encode(vs[0], ty, &format!("constant {what}"))?,
                    Some(vs) => return Err(format!("constant {what} is a scalar {ty}, but {} values were given", vs.len())),
                    None => 0,
                };
                allocs.push(Alloc { name: p.name.clone(), class: Class::Constant, base: 0, len: 0, types: vec![ty], global: None, output: None });
                param_bits.push(bits);
            }
        }
    }
    let list = |names: Vec<&str>| if names.is_empty() { "none".to_string() } else { names.join(", ") };
    if let Some(i) = used_buffers.iter().position(|u| !u) {
        let mut known: Vec<&str> = module.globals.iter().filter(|g| g.kind != GlobalKind::Constant).map(|g| g.name.as_str()).collect();
        known.extend(f.params.iter().filter(|p| matches!(p.ty, Type::Ptr(_))).map(|p| p.name.as_str()));
        return Err(format!(
            "the launch file gives buffer `{}`, but the kernel has no buffer of that name (buffers: {})",
            launch.buffers[i].name,
            list(known)
        ));
    }
    if let Some(i) = used_constants.iter().position(|u| !u) {
        let mut known: Vec<&str> = module.globals.iter().filter(|g| g.kind == GlobalKind::Constant).map(|g| g.name.as_str()).collect();
        known.extend(f.params.iter().filter(|p| !matches!(p.ty, Type::Ptr(_))).map(|p| p.name.as_str()));
        return Err(format!(
            "the launch file gives constant `{}`, but the kernel has no constant or scalar argument of that name (constants: {})",
            launch.constants[i].0,
            list(known)
        ));
    }
    let ids = AllocIds { n_globals: module.globals.len() as u32, n_locals: f.locals.len() as u32 };
    Ok(Layout { allocs, ids, device_len, device_fills, constant, shared_init, shared_preset, private_init, param_bits })
}

impl Layout<'_> {
    /// Device memory with its initial contents: allocated zeroed, each buffer
    /// filled in place, then reused as atomics without a copy.
    pub fn device_memory(&self) -> Result<Vec<AtomicU64>, String> {
        let mut cells = vec![0u64; self.device_len];
        for d in &self.device_fills {
            let mine = &mut cells[d.base..d.base + d.len];
            mine[..d.init.len()].copy_from_slice(&d.init);
            if let Some(source) = &d.source {
                fill_cells(mine, source, &d.types, &d.label)?;
            }
        }
        Ok(cells.into_iter().map(AtomicU64::new).collect())
    }
}

/// Writes cells as little-endian bytes of their types (the inverse of `file = ...`).
pub(crate) fn cells_to_bytes(cells: &[u64], types: &[Type]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, c) in cells.iter().enumerate() {
        out.extend_from_slice(&c.to_le_bytes()[..cell_bytes(types[i % types.len()])]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_must_fit_the_element_type() {
        assert_eq!(encode(Num::Int(-1), Type::I32, "x"), Ok(0xffff_ffff));
        assert_eq!(encode(Num::Int(-1), Type::U32, "x"), Err("x: -1 does not fit, and it holds u32".into()));
        assert_eq!(encode(Num::Float(1.5), Type::U32, "x"), Err("x: 1.5 is not an integer, and it holds u32".into()));
        assert_eq!(encode(Num::Int(2), Type::F32, "x"), Ok(2.0f32.to_bits() as u64));
        assert_eq!(encode(Num::Bool(true), Type::F32, "x"), Err("x: true is a boolean, and it holds f32".into()));
    }

    #[test]
    fn fill_patterns_count_up_in_the_element_type() {
        let mut c = [0u64; 4];
        fill_cells(&mut c, &Source::Fill { start: Num::Int(10), step: Num::Int(-3) }, &[Type::I32], "b").unwrap();
        assert_eq!(c.map(|x| x as u32 as i32), [10, 7, 4, 1]);
        fill_cells(&mut c, &Source::Fill { start: Num::Float(0.5), step: Num::Int(1) }, &[Type::F32], "b").unwrap();
        assert_eq!(c.map(|x| f32::from_bits(x as u32)), [0.5, 1.5, 2.5, 3.5]);
        let e = fill_cells(&mut c, &Source::Values(vec![Num::Int(1); 5]), &[Type::I32], "buffer `b`").unwrap_err();
        assert_eq!(e, "buffer `b` has 4 cells, but 5 values were given");
        assert_eq!(cells_to_bytes(&[1, 0xffff], &[Type::F16]), vec![1, 0, 0xff, 0xff]);
        // A struct of f16 and u32 cells packs as 2 + 4 bytes.
        assert_eq!(cells_to_bytes(&[1, 2], &[Type::F16, Type::U32]), vec![1, 0, 2, 0, 0, 0]);
        assert_eq!(byte_cell_count(&[1, 0, 2, 0, 0, 0, 3], &[Type::F16, Type::U32]), Err((2, 7)));
        assert_eq!(byte_cells(&[1, 0, 2, 0, 0, 0], &[Type::F16, Type::U32]).collect::<Vec<_>>(), vec![Ok(1), Ok(2)]);
        let mut c = [0u64; 4];
        fill_cells(&mut c, &Source::Fill { start: Num::Int(1), step: Num::Int(1) }, &[Type::F32, Type::U32], "s").unwrap();
        assert_eq!(c, [1.0f32.to_bits() as u64, 2, 3.0f32.to_bits() as u64, 4]);
    }
}
