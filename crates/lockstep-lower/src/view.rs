//! Pointer views: memory seen through a pointer whose elements differ in
//! size from the memory's own (`(global half *)((global char *)p + offset)`).
//!
//! The IR addresses memory in cells of the memory's scalar type. A view whose
//! scalars are each at least a cell wide and start on a cell boundary maps
//! every scalar to the cell it starts in (a `float` of byte memory is the
//! cell of its first byte). A pointer to smaller elements than the cells (a
//! byte pointer into `half` memory) keeps its exact byte offset beside the
//! cell it lies in, so that arithmetic in bytes and the cast back are exact;
//! accessing memory through such a pointer touches part of a cell, which
//! lockstep does not model.

use crate::srctype::{SrcType, StructDef};
use crate::stmt::{FnLowerer, Offsets};
use lockstep_ir::{BinOp, Op, Root, Type, Value};
use lockstep_source::Span;
use rustc_hash::{FxHashMap, FxHashSet};

/// What the pointer view through which accesses lockstep cannot place go
/// stands for: they may touch any element of the memory its operand points into.
pub(crate) const POINTER_VIEW: &str = "a reinterpreting pointer cast";

/// Scalars a view's layout lists at most (a view of a larger array is not placed).
const MAX_LAID_OUT_SCALARS: u64 = 1 << 16;

/// Steps a pointer's provenance is followed back at most.
const MAX_PROVENANCE_STEPS: usize = 1024;

#[derive(Default)]
pub struct PointerViews {
    /// Pointers to memory made of cells of one scalar type: an array's first
    /// element, a kernel's pointer argument (`void` memory is bytes).
    cells: FxHashMap<Value, Type>,
    /// Pointers to smaller elements than their memory's cells: the address
    /// is `base` plus a number of bytes, `base` being on a cell boundary.
    byte_offsets: FxHashMap<Value, (Value, Value)>,
    /// Per memory whose cells are known, the views it is accessed through:
    /// the view type, whether its scalars span several cells, and where.
    accesses: Vec<(Root, Vec<ViewUse>)>,
    /// Loops' phis whose memory was taken from what the loop's entry brings
    /// (the loop not yet lowered), with that memory's cell type and where.
    assumed: Vec<(Value, Type, Span)>,
}

/// A view a memory is accessed through: its type, whether its scalars span
/// several cells, and where it is first used.
type ViewUse = (SrcType, bool, Span);

/// The byte layout of a type in memory (C's natural alignment): each
/// scalar's byte offset and size, the whole size and its alignment. None
/// where the languages differ or lockstep does not know it (3-component
/// vectors, matrices, unions whose members lie differently, booleans,
/// pointers).
pub(crate) struct ByteLayout {
    pub scalars: Vec<(u32, u32)>,
    pub size: u32,
    pub align: u32,
}

fn scalar_bytes(t: Type) -> Option<u32> {
    (t.is_int() || t.is_float()).then_some(t.bits() / 8)
}

pub(crate) fn byte_layout(ty: &SrcType, structs: &[StructDef]) -> Option<ByteLayout> {
    match ty {
        SrcType::Scalar(t) => {
            let s = scalar_bytes(*t)?;
            Some(ByteLayout { scalars: vec![(0, s)], size: s, align: s })
        }
        SrcType::Vector(t, n) if *n != 3 => {
            let s = scalar_bytes(*t)?;
            Some(ByteLayout { scalars: (0..*n).map(|i| (i * s, s)).collect(), size: n * s, align: n * s })
        }
        // Columns of one vector type (Metal's `half2x4` is two `half4`), packed when none has 3 rows.
        SrcType::Matrix(t, columns, rows) if *columns != 3 && *rows != 3 => {
            let s = scalar_bytes(*t)?;
            let n = columns * rows;
            Some(ByteLayout { scalars: (0..n).map(|i| (i * s, s)).collect(), size: n * s, align: rows * s })
        }
        SrcType::Array(e, n) => {
            let one = byte_layout(e, structs)?;
            let n = u32::try_from(*n).ok().filter(|&n| u64::from(n) * one.scalars.len() as u64 <= MAX_LAID_OUT_SCALARS)?;
            let scalars = (0..n).flat_map(|i| one.scalars.iter().map(move |&(o, s)| (i * one.size + o, s))).collect();
            Some(ByteLayout { scalars, size: n * one.size, align: one.align })
        }
        SrcType::Struct(i) if structs.get(*i)?.union => {
            // The IR numbers every member's cells from the union's first, so
            // the union has a layout when each member's scalars lie where
            // the widest member's first ones do (`half2 dm` over `{ half d; half m; }`).
            let members = structs[*i].fields.iter().map(|(_, f)| byte_layout(f, structs)).collect::<Option<Vec<_>>>()?;
            let widest = members.iter().max_by_key(|l| l.scalars.len())?;
            if !members.iter().all(|l| widest.scalars.starts_with(&l.scalars)) {
                return None;
            }
            let align = members.iter().map(|l| l.align).max()?;
            let size = members.iter().map(|l| l.size).max()?.next_multiple_of(align);
            Some(ByteLayout { scalars: widest.scalars.clone(), size, align })
        }
        SrcType::Struct(i) => {
            let def = structs.get(*i)?;
            let (mut at, mut align, mut scalars) = (0u32, 1u32, Vec::new());
            for (_, field) in &def.fields {
                let l = byte_layout(field, structs)?;
                at = at.next_multiple_of(l.align);
                scalars.extend(l.scalars.iter().map(|&(o, s)| (at + o, s)));
                at += l.size;
                align = align.max(l.align);
            }
            Some(ByteLayout { scalars, size: at.next_multiple_of(align), align })
        }
        _ => None,
    }
}

/// A type's size and alignment in bytes (C's natural layout), where the
/// languages agree on it: a union is as large as its largest member even
/// where its members lie differently.
pub(crate) fn size_and_align(ty: &SrcType, structs: &[StructDef]) -> Option<(u32, u32)> {
    match ty {
        SrcType::Array(e, n) => {
            let (size, align) = size_and_align(e, structs)?;
            Some((size.checked_mul(u32::try_from(*n).ok()?)?, align))
        }
        SrcType::Struct(i) => {
            let def = structs.get(*i)?;
            let (mut at, mut align) = (0u32, 1u32);
            for (_, field) in &def.fields {
                let (size, a) = size_and_align(field, structs)?;
                align = align.max(a);
                at = if def.union { at.max(size) } else { at.next_multiple_of(a).checked_add(size)? };
            }
            Some((at.next_multiple_of(align), align))
        }
        _ => byte_layout(ty, structs).map(|l| (l.size, l.align)),
    }
}

/// How a view lies over memory of `cell`-byte cells.
pub(crate) enum View {
    /// Every scalar starts on a cell: one element spans `stride` cells and
    /// its scalars start at `offsets`; `wide` when some scalar spans more
    /// than one cell (it is placed at its first).
    Cells { stride: u64, offsets: Offsets, wide: bool },
    /// Elements of `bytes` bytes, smaller than a cell or not on cell boundaries.
    Bytes(u32),
    /// Elements whose layout lockstep does not know (a 3-vector, a union)
    /// over cells of another type: where they lie is not known.
    Unplaced,
}

fn view(elem: &SrcType, cell: Type, structs: &[StructDef]) -> Option<View> {
    let c = scalar_bytes(cell).filter(|&c| c > 0)?;
    let Some(l) = byte_layout(elem, structs) else {
        // Values of the memory's own type lie one per cell, whatever their grouping.
        let n = elem.cells(structs);
        let mut types = Vec::new();
        if n <= MAX_LAID_OUT_SCALARS {
            elem.scalar_types(structs, &mut types);
        }
        return Some(if !types.is_empty() && types.iter().all(|&t| t == cell) {
            View::Cells { stride: n, offsets: Offsets::Dense(n as u32), wide: false }
        } else {
            View::Unplaced
        });
    };
    let on_cells = l.size % c == 0 && l.scalars.iter().all(|&(o, s)| o % c == 0 && s >= c);
    if !on_cells {
        return Some(View::Bytes(l.size));
    }
    let starts: Vec<u32> = l.scalars.iter().map(|&(o, _)| o / c).collect();
    let dense = starts.iter().enumerate().all(|(i, &o)| o as usize == i);
    let offsets = if dense { Offsets::Dense(starts.len() as u32) } else { Offsets::Listed(starts) };
    Some(View::Cells { stride: u64::from(l.size / c), offsets, wide: l.scalars.iter().any(|&(_, s)| s > c) })
}

fn view_name_of_scalar(t: &Type) -> &'static str {
    match t {
        Type::I8 => "char",
        Type::U8 => "uchar",
        Type::I16 => "short",
        Type::U16 => "ushort",
        Type::I32 => "int",
        Type::U32 => "uint",
        Type::I64 => "long",
        Type::U64 => "ulong",
        Type::F16 => "half",
        Type::F32 => "float",
        Type::F64 => "double",
        _ => "?",
    }
}

/// A view's element type as a C programmer names it.
fn view_name(t: &SrcType) -> String {
    match t {
        SrcType::Scalar(x) => view_name_of_scalar(x).to_string(),
        SrcType::Vector(x, n) => format!("{}{n}", view_name_of_scalar(x)),
        SrcType::Matrix(x, c, r) => format!("{}{c}x{r}", view_name_of_scalar(x)),
        SrcType::Array(e, n) => format!("{}[{n}]", view_name(e)),
        _ => "struct".to_string(),
    }
}

/// The scalar type every cell of `ty` has, if it is one type wide enough to
/// address (cells of one size leave no padding between them).
pub(crate) fn uniform_cell(ty: &SrcType, structs: &[StructDef]) -> Option<Type> {
    match ty {
        SrcType::Void => Some(Type::U8),
        SrcType::Scalar(t) => scalar_bytes(*t).map(|_| *t),
        SrcType::Vector(t, n) if *n != 3 => scalar_bytes(*t).map(|_| *t),
        SrcType::Array(e, _) => uniform_cell(e, structs),
        SrcType::Struct(i) => {
            let def = structs.get(*i).filter(|d| !d.union)?;
            let mut cells = def.fields.iter().map(|(_, f)| uniform_cell(f, structs));
            let first = cells.next()??;
            cells.all(|c| c == Some(first)).then_some(first)
        }
        _ => None,
    }
}

/// The values a pointer is computed from where it points into the same
/// memory they do (offsets, conversions, joins); None for anything else.
fn pointer_sources(op: &Op) -> Option<Vec<Value>> {
    match op {
        Op::PtrAdd(q, _) | Op::Convert(q) | Op::AddrOf(Root::Ptr(q), _) => Some(vec![*q]),
        Op::Select(_, a, b) => Some(vec![*a, *b]),
        Op::Phi(incoming) => Some(incoming.iter().map(|&(_, x)| x).collect()),
        _ => None,
    }
}

impl FnLowerer<'_, '_> {
    /// Records that `ptr` points at memory whose cells are all of the scalar type of `memory`.
    pub(crate) fn points_into(&mut self, ptr: Value, memory: &SrcType) {
        if let Some(t) = uniform_cell(memory, &self.cx.structs) {
            self.pointer_views.cells.insert(ptr, t);
        }
    }

    /// The cell type of the memory `p` points into, where every way the
    /// pointer can be formed agrees on it.
    pub(crate) fn memory_cell(&mut self, p: Value, span: Span) -> Option<Type> {
        let (found, opened) = self.provenance(p);
        if let Some(t) = found {
            self.pointer_views.assumed.extend(opened.into_iter().map(|phi| (phi, t, span)));
        }
        found
    }

    /// The cell type [`Self::memory_cell`] finds, and the loops' phis it
    /// looked into before their loops were lowered.
    fn provenance(&self, p: Value) -> (Option<Type>, Vec<Value>) {
        let (mut seen, mut work, mut found, mut opened) = (FxHashSet::default(), vec![p], None, Vec::new());
        while let Some(v) = work.pop() {
            if !seen.insert(v) {
                continue;
            }
            if seen.len() > MAX_PROVENANCE_STEPS {
                return (None, opened);
            }
            if let Some(&t) = self.pointer_views.cells.get(&v) {
                if found.is_some_and(|f| f != t) {
                    return (None, opened);
                }
                found = Some(t);
                continue;
            }
            if self.ssa.is_open_phi(v) {
                // A loop still being lowered: what its entry brings, checked again at the end.
                let entry = self.ssa.known_incoming(v);
                if entry.is_empty() {
                    return (None, opened);
                }
                work.extend(entry);
                opened.push(v);
                continue;
            }
            match pointer_sources(&self.f.inst(v).op) {
                Some(sources) => work.extend(sources),
                // A null pointer (`p = NULL` on another path) points into no memory.
                None if matches!(self.f.inst(v).op, Op::Const(lockstep_ir::Const::Int(0))) => {}
                None => return (None, opened),
            }
        }
        (found, opened)
    }

    /// Once every loop is lowered: a pointer that a loop points into memory
    /// of another type than before the loop was scaled as if it did not.
    pub(crate) fn check_assumed_cells(&mut self) {
        let assumed = std::mem::take(&mut self.pointer_views.assumed);
        let mut noted = FxHashSet::default();
        for (phi, t, span) in assumed {
            if self.provenance(phi).0 == Some(t) || !noted.insert(phi) {
                continue;
            }
            let message = format!(
                "a pointer changed in this loop may point into memory of other values than the `{}` values it pointed into before the loop; lockstep counted its offsets in those, so accesses through it may be misplaced",
                view_name_of_scalar(&t)
            );
            self.cx.diags.push(lockstep_diag::Diagnostic::new("unsupported", lockstep_diag::Severity::Warning, span, message));
        }
    }

    /// How `elem` lies over the memory `p` points into, when that memory's cells are known.
    pub(crate) fn view_at(&mut self, p: Value, elem: &SrcType, span: Span) -> Option<View> {
        let cell = self.memory_cell(p, span)?;
        view(elem, cell, &self.cx.structs)
    }

    /// A cast of `p` to a view of smaller elements than its memory's cells:
    /// from a view on cell boundaries, the byte offset starts at 0.
    pub(crate) fn start_byte_view(&mut self, p: Value, from: &SrcType, span: Span) {
        if self.pointer_views.byte_offsets.contains_key(&p) || !matches!(self.view_at(p, from, span), Some(View::Cells { .. })) {
            return;
        }
        let zero = self.int(Type::I32, 0, span);
        self.pointer_views.byte_offsets.insert(p, (p, zero));
    }

    /// `p + n` on a pointer to `bytes`-byte elements smaller than the cells
    /// of its memory: the cell the new address lies in, its byte offset
    /// kept exactly. None when `p`'s own byte offset is not known.
    pub(crate) fn byte_view_add(&mut self, p: Value, n: Value, bytes: u32, span: Span) -> Option<Value> {
        let &(base, before) = self.pointer_views.byte_offsets.get(&p)?;
        let cell_bytes = scalar_bytes(self.memory_cell(p, span)?)?;
        let t = self.f.inst(n).ty;
        let size = self.int(t, i64::from(bytes), span);
        let added = self.fold_or_emit(BinOp::Mul, n, size, t, span);
        let offset = self.add_index(before, added, span);
        let t = self.f.inst(offset).ty;
        let cell_size = self.int(t, i64::from(cell_bytes), span);
        let cells = self.fold_or_emit(BinOp::ExactDiv, offset, cell_size, t, span);
        let space = self.f.inst(p).ty;
        let q = self.emit(Op::PtrAdd(base, cells), space, span);
        self.pointer_views.byte_offsets.insert(q, (base, offset));
        Some(q)
    }

    /// A pointer through which `elem` is accessed as part of a cell of `p`'s
    /// memory: noted, and pointing anywhere in that memory.
    pub(crate) fn part_of_cell_view(&mut self, p: Value, elem: &SrcType, span: Span) -> Value {
        let cell = self.memory_cell(p, span).map_or("?", |t| view_name_of_scalar(&t));
        let message = format!(
            "an access through `{}` elements of memory made of `{cell}` values touches part of a value, which lockstep does not model; it may touch any element of that memory",
            view_name(elem)
        );
        self.opaque_view(p, message, span)
    }

    /// A pointer through which `elem`, whose layout lockstep does not know,
    /// is accessed in memory of other values: noted, and pointing anywhere
    /// in that memory.
    pub(crate) fn unplaced_view(&mut self, p: Value, elem: &SrcType, span: Span) -> Value {
        let cell = self.memory_cell(p, span).map_or("?", |t| view_name_of_scalar(&t));
        let message = format!(
            "an access through `{}` elements of memory made of `{cell}` values is not modelled: lockstep does not know how those elements lie over the memory; it may touch any element of that memory",
            view_name(elem)
        );
        self.opaque_view(p, message, span)
    }

    /// `p + n` in elements smaller than the cells of `p`'s memory, where
    /// how far into its cell `p` points is not known: noted, and pointing
    /// anywhere in that memory.
    pub(crate) fn lost_byte_offset(&mut self, p: Value, span: Span) -> Value {
        let message = "pointer arithmetic in elements smaller than its memory's, on a pointer whose offset within a value lockstep lost (it went through a variable changed in a loop), is not modelled; accesses through it may touch any element of the memory it points into".to_string();
        self.opaque_view(p, message, span)
    }

    /// Whether `p` may come from a view [`Self::opaque_view`] made, whose
    /// cause is already noted.
    pub(crate) fn reaches_opaque_view(&self, p: Value) -> bool {
        let (mut seen, mut work) = (FxHashSet::default(), vec![p]);
        while let Some(v) = work.pop() {
            if !seen.insert(v) || seen.len() > MAX_PROVENANCE_STEPS {
                continue;
            }
            let op = &self.f.inst(v).op;
            if matches!(op, Op::Call(lockstep_ir::Callee::PointerView(_), _)) {
                return true;
            }
            work.extend(pointer_sources(op).unwrap_or_default());
        }
        false
    }

    fn opaque_view(&mut self, p: Value, message: String, span: Span) -> Value {
        self.cx.diags.push(lockstep_diag::Diagnostic::new("unsupported", lockstep_diag::Severity::Warning, span, message));
        let ty = self.f.inst(p).ty;
        self.emit(Op::Call(lockstep_ir::Callee::PointerView(POINTER_VIEW.into()), vec![p]), ty, span)
    }

    /// Records that memory `root` is accessed through the view `elem`.
    pub(crate) fn record_view(&mut self, root: Root, elem: &SrcType, wide: bool, span: Span) {
        let accesses = &mut self.pointer_views.accesses;
        let i = match accesses.iter().position(|(r, _)| *r == root) {
            Some(i) => i,
            None => {
                accesses.push((root, Vec::new()));
                accesses.len() - 1
            }
        };
        let views = &mut accesses[i].1;
        if !views.iter().any(|(t, _, _)| t == elem) {
            views.push((elem.clone(), wide, span));
        }
    }

    /// One note per memory that is written and accessed through views of
    /// values of different sizes, one of them wider than its cells: each
    /// access is placed at the cell it starts in, so an overlap between two
    /// such values that do not start alike is not seen.
    pub(crate) fn note_mixed_views(&mut self) {
        let accesses = std::mem::take(&mut self.pointer_views.accesses);
        for (root, views) in accesses {
            let Some(&(_, _, span)) = views.iter().find(|(_, wide, _)| *wide) else { continue };
            let mut sizes: Vec<u32> = views.iter().filter_map(|(t, _, _)| byte_layout(t, &self.cx.structs)).flat_map(|l| l.scalars.into_iter().map(|(_, s)| s * 8)).collect();
            sizes.sort_unstable();
            sizes.dedup();
            let mut written = false;
            let mut others = Vec::new();
            for inst in &self.f.insts {
                let (m, value_ty) = match &inst.op {
                    Op::Load(m) => (m, inst.ty),
                    Op::Store(m, v) => (m, self.f.inst(*v).ty),
                    Op::Atomic(_, m, _) => (m, inst.ty),
                    _ => continue,
                };
                if m.root != root {
                    continue;
                }
                written |= !matches!(inst.op, Op::Load(_));
                if sizes.binary_search(&value_ty.bits()).is_err() && !others.contains(&value_ty) {
                    others.push(value_ty);
                }
            }
            // Values of one size at offsets aligned to it overlap only where they start alike,
            // and one view's own values never overlap.
            if !written || sizes.len() + others.len() < 2 || (views.len() < 2 && others.is_empty()) {
                continue;
            }
            let mut names: Vec<String> = views.iter().map(|(t, _, _)| format!("`{}`", view_name(t))).collect();
            names.extend(others.iter().map(|t| format!("`{}`", view_name_of_scalar(t))));
            let memory = match root {
                Root::Global(g) => format!("`{}`", self.cx.module.global(g).name),
                Root::Param(i) => self.f.params.get(i as usize).map_or("this memory".to_string(), |p| format!("what `{}` points to", p.name)),
                Root::Local(l) => self.f.locals.get(l.index()).map_or("this memory".to_string(), |l| format!("`{}`", l.name)),
                Root::Ptr(_) => "this memory".to_string(),
            };
            let message = format!(
                "{memory} is written and accessed through elements of different sizes ({}), which lockstep does not model; it assumes each of these accesses may touch any of its elements",
                names.join(", ")
            );
            self.cx.diags.push(lockstep_diag::Diagnostic::new("unsupported", lockstep_diag::Severity::Warning, span, message));
            self.place_nowhere(root);
        }
    }

    /// Readdresses every access to `root` through a pointer lockstep cannot
    /// follow, so that each may touch any element of that memory.
    fn place_nowhere(&mut self, root: Root) {
        for b in 0..self.f.blocks.len() {
            let insts = std::mem::take(&mut self.f.blocks[b].insts);
            let mut out = Vec::with_capacity(insts.len());
            for v in insts {
                let inst = self.f.inst(v);
                let span = inst.span;
                if inst.op.mem_ref().is_some_and(|m| m.root == root) {
                    let zero = self.f.add_inst(Op::Const(lockstep_ir::Const::Int(0)), Type::I32, span);
                    let space = self.f.inst(v).op.mem_ref().map_or(lockstep_ir::MemSpace::Unknown, |m| m.space);
                    let base = self.f.add_inst(Op::AddrOf(root, zero), Type::Ptr(space), span);
                    let view = self.f.add_inst(Op::Call(lockstep_ir::Callee::PointerView(POINTER_VIEW.into()), vec![base]), Type::Ptr(space), span);
                    out.extend([zero, base, view]);
                    if let Op::Load(m) | Op::Store(m, _) | Op::Atomic(_, m, _) = &mut self.f.inst_mut(v).op {
                        m.root = Root::Ptr(view);
                    }
                }
                out.push(v);
            }
            self.f.blocks[b].insts = out;
        }
    }
}
