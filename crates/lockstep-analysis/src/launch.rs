//! Launch-shape facts a kernel implies about itself.

use crate::{Cfg, Level, Uniformity};
use lockstep_ir::{BinOp, Builtin, Function, Module, Op, Root, Value};

/// With an unknown group size: per axis, the widest group for which every
/// access that indexes an array dimension directly with a thread id stays
/// in bounds — the innermost dimension by the x id (`tile[row][threadIdx.x]`,
/// `s[threadIdx.x + c]`), any other dimension by any id (`tile[threadIdx.y][…]`,
/// `tile[threadIdx.x][threadIdx.y]` in a transpose). A wider launch would make
/// those accesses out of bounds, so the analyses may assume at most this
/// many threads along that axis. Only accesses that every thread of a group
/// can reach count: under `if (tid < 32)`, `s[tid + 32]` says nothing about
/// threads 32 and up, while under `if (x < width)` every thread runs it when
/// the launch passes a large `width`. A flat id `threadIdx.y * 32 + threadIdx.x`
/// likewise says the x axis is at most 32 threads wide.
pub fn in_bounds_group_extent(module: &Module, f: &Function, cfg: &Cfg, uniformity: &Uniformity) -> [Option<u32>; 3] {
    let mut bound: [Option<u64>; 3] = [None; 3];
    let mut limit = |axis: usize, width: u64| bound[axis] = Some(bound[axis].map_or(width, |b| b.min(width)));
    for (id, b) in f.block_ids().zip(&f.blocks) {
        let reached_by_all = uniformity.block_level(id) >= Level::Group
            || cfg.control_deps_transitive(id).into_iter().all(|c| {
                let cond = f.block(c).term.condition();
                uniformity.branch_level(c) >= Level::Group || cond.is_some_and(|v| bounded_by_launch(f, uniformity, v, 0))
            });
        if !reached_by_all {
            continue;
        }
        for &v in &b.insts {
            let Some(m) = f.inst(v).op.mem_ref() else { continue };
            let Root::Global(g) = m.root else { continue };
            let global = module.global(g);
            let Some(&inner) = global.dims.last() else { continue };
            if global.dims.contains(&0) {
                continue;
            }
            let per = global.cells_per_elem.max(1) as u64;
            if per == 1 {
                if let Some(offset) = thread_x_summand(f, m.index, 0) {
                    if (0..inner as i64).contains(&offset) {
                        limit(0, inner - offset as u64);
                    }
                }
            }
            // Outer dimensions (and the innermost one of vector elements): a
            // summand `id * stride` where no constant shifts the row.
            let mut parts = Vec::new();
            summands(f, m.index, &mut parts, 0);
            if parts.iter().any(|&p| f.as_int(p).is_some()) {
                continue;
            }
            let subscripted = if per == 1 { global.dims.len() - 1 } else { global.dims.len() };
            for (dim, &extent) in global.dims.iter().enumerate().take(subscripted) {
                let stride: u64 = global.dims[dim + 1..].iter().product::<u64>() * per;
                for &p in &parts {
                    if let Some(axis) = scaled_thread_id(f, p, stride) {
                        limit(axis, extent);
                    }
                    // `tile[lid % 64][lid / 64]`: the flat id stays below `C * extent`.
                    if let Some((flat, c)) = scaled_quotient(f, p, stride) {
                        for (axis, coef) in flat_id_terms(f, flat) {
                            limit(axis, (c * extent).saturating_sub(1) / coef + 1);
                        }
                    }
                }
            }
        }
    }
    // A flat thread id `threadIdx.y * C + threadIdx.x` is one-to-one only
    // when the x axis is at most C threads wide: the kernel is written for
    // such launches.
    for (axis, width) in flat_ids(f) {
        limit(axis, width);
    }
    bound.map(|b| b.map(|b| b.min(u32::MAX as u64) as u32))
}

/// Each flat thread id `threadIdx.y * C + threadIdx.x`: the axis counted
/// within rows, and the rows' width C.
fn flat_ids(f: &Function) -> Vec<(usize, u64)> {
    let mut out = Vec::new();
    for inst in &f.insts {
        if let Op::Binary(BinOp::Add, a, b) = inst.op {
            for (id, scaled) in [(a, b), (b, a)] {
                let Some(axis) = thread_id_axis(f, id) else { continue };
                if let Some((other, stride)) = scaled_thread_id_any(f, scaled) {
                    if other != axis && stride > 0 {
                        out.push((axis, stride));
                    }
                }
            }
        }
    }
    out
}

/// The extent per axis a flat thread id is written for: `threadIdx.y * C +
/// threadIdx.x` numbers the threads one to one and without gaps only when
/// the x axis is exactly C threads wide (rows of C; with C the wave's
/// width, rows are waves). None where no such id is written, or two
/// disagree.
pub fn flat_id_widths(f: &Function) -> [Option<u32>; 3] {
    let mut width: [Option<Option<u64>>; 3] = [None; 3];
    for (axis, stride) in flat_ids(f) {
        width[axis] = Some(match width[axis] {
            Some(Some(w)) if w != stride => None,
            Some(w) => w,
            None => Some(stride),
        });
    }
    width.map(|w| w.flatten().map(|w| w.min(u32::MAX as u64) as u32))
}

/// Groups per axis that flat ids over the grid are written for: global ids
/// (`gid.z * 262144 + gid.y * 512 + gid.x`, each `gid` a group id times the
/// group's extent plus the local id) or group ids (`wg.y * 512 + wg.x`).
/// Such an id is one-to-one only when the grid is exactly as wide along an
/// axis as the next axis's coefficient over its own. None where no such id
/// is written, or two disagree; global ids need the group's extents.
pub fn flat_grid_id_groups(f: &Function, group_size: Option<[u32; 3]>) -> [Option<u32>; 3] {
    let mut groups: [Option<Option<u64>>; 3] = [None; 3];
    for inst in &f.insts {
        let Op::Binary(BinOp::Add, a, b) = inst.op else { continue };
        // Coefficients of the local ids (0..3) and group ids (3..6).
        let mut coef = [0i128; 6];
        if !global_id_terms(f, a, 1, &mut coef, 0) || !global_id_terms(f, b, 1, &mut coef, 0) {
            continue;
        }
        let by_groups = (0..3).all(|ax| coef[ax] == 0);
        // Each axis's coefficient, in threads for global ids (its local id's,
        // which its group id's is times the group's extent; a one-thread-wide
        // axis's local id is folded away) or in groups for group ids.
        let per_axis: [Option<i128>; 3] = std::array::from_fn(|ax| {
            let (local, group) = (coef[ax], coef[3 + ax]);
            if by_groups {
                return (group != 0).then_some(group);
            }
            let size = group_size.map_or(0, |g| g[ax] as i128);
            match (local, group) {
                (0, 0) => None,
                (0, g) if size == 1 => Some(g),
                (l, g) if size > 0 && g == l * size => Some(l),
                _ => Some(-1),
            }
        });
        let axes: Vec<usize> = (0..3).filter(|&ax| per_axis[ax].is_some()).collect();
        let coef_of = |ax: usize| per_axis[ax].unwrap_or(-1);
        if axes.len() < 2 || axes.iter().any(|&ax| coef_of(ax) <= 0) {
            continue;
        }
        let mut by_coef = axes.clone();
        by_coef.sort_by_key(|&ax| coef_of(ax));
        if coef_of(by_coef[0]) != 1 {
            continue;
        }
        for pair in by_coef.windows(2) {
            let (ax, next) = (pair[0], pair[1]);
            let (c, c_next) = (coef_of(ax), coef_of(next));
            let unit = if by_groups { 1 } else { group_size.map_or(0, |g| g[ax] as i128) };
            let span = c_next / c;
            let width = (unit > 0 && c_next % c == 0 && span % unit == 0).then(|| (span / unit) as u64);
            groups[ax] = Some(match groups[ax] {
                Some(seen) if seen != width => None,
                _ => width,
            });
        }
    }
    groups.map(|g| g.flatten().filter(|&n| n >= 1).map(|n| n.min(u32::MAX as u64) as u32))
}

/// Adds `scale` times the thread and group ids in `v` to `coef` (local ids
/// at 0..3, group ids at 3..6), through sums, products by constants and
/// conversions; other values are taken as offsets. False for a product of
/// an id by anything but a constant.
fn global_id_terms(f: &Function, v: Value, scale: i128, coef: &mut [i128; 6], depth: u32) -> bool {
    if depth > 16 {
        return false;
    }
    match &f.inst(v).op {
        Op::Builtin(Builtin::LocalId(ax)) => coef[*ax as usize % 3] += scale,
        Op::Builtin(Builtin::GroupId(ax)) => coef[3 + *ax as usize % 3] += scale,
        Op::Convert(x) => return global_id_terms(f, *x, scale, coef, depth + 1),
        Op::Binary(BinOp::Add, a, b) => return global_id_terms(f, *a, scale, coef, depth + 1) && global_id_terms(f, *b, scale, coef, depth + 1),
        Op::Binary(BinOp::Mul, a, b) => {
            return match (f.as_int(*a), f.as_int(*b)) {
                (_, Some(c)) => global_id_terms(f, *a, scale * c as i128, coef, depth + 1),
                (Some(c), _) => global_id_terms(f, *b, scale * c as i128, coef, depth + 1),
                _ => !mentions_ids(f, *a, 0) && !mentions_ids(f, *b, 0),
            };
        }
        _ => {}
    }
    true
}

/// Whether a value is computed from a thread or group id.
fn mentions_ids(f: &Function, v: Value, depth: u32) -> bool {
    if depth > 16 {
        return true;
    }
    match &f.inst(v).op {
        Op::Builtin(Builtin::LocalId(_) | Builtin::GroupId(_) | Builtin::LocalIndex) => true,
        Op::Binary(_, a, b) => mentions_ids(f, *a, depth + 1) || mentions_ids(f, *b, depth + 1),
        Op::Convert(x) | Op::Unary(_, x) => mentions_ids(f, *x, depth + 1),
        _ => false,
    }
}

/// Per axis: whether the kernel reads the local id there, and whether it
/// reads it (or the group's size there) on its own, outside a global id
/// (`get_global_id(1)`, `blockIdx.y * blockDim.y + threadIdx.y`); and
/// whether it reads the flat local index.
struct LocalIdUse {
    seen: [bool; 3],
    alone: [bool; 3],
    flat_index: bool,
}

fn local_id_use(f: &Function) -> LocalIdUse {
    let builtin = |v: Value| match f.inst(v).op {
        Op::Builtin(b) => Some(b),
        _ => None,
    };
    // `GroupId(a) * GroupSize(a)` (or `NumGroups(a) * GroupSize(a)`, the global size) in either order.
    let group_base_op = |op: &Op, ax: u8| match *op {
        Op::Binary(BinOp::Mul, p, q) => [(p, q), (q, p)].into_iter().any(|(g, s)| {
            builtin(s) == Some(Builtin::GroupSize(ax)) && matches!(builtin(g), Some(Builtin::GroupId(a) | Builtin::NumGroups(a)) if a == ax)
        }),
        _ => false,
    };
    let group_base = |v: Value, ax: u8| group_base_op(&f.inst(v).op, ax);
    let mut u = LocalIdUse { seen: [false; 3], alone: [false; 3], flat_index: false };
    for inst in &f.insts {
        match inst.op {
            Op::Builtin(Builtin::LocalId(ax)) => u.seen[ax as usize % 3] = true,
            Op::Builtin(Builtin::LocalIndex) => u.flat_index = true,
            _ => {}
        }
        inst.op.for_each_operand(|x| match builtin(x) {
            Some(Builtin::LocalId(ax)) => {
                let in_global_id = matches!(inst.op, Op::Binary(BinOp::Add, p, q) if (p == x && group_base(q, ax)) || (q == x && group_base(p, ax)));
                u.alone[ax as usize % 3] |= !in_global_id;
            }
            Some(Builtin::GroupSize(ax)) => {
                u.alone[ax as usize % 3] |= !group_base_op(&inst.op, ax);
            }
            _ => {}
        });
    }
    for b in &f.blocks {
        if let Some(Builtin::LocalId(ax) | Builtin::GroupSize(ax)) = b.term.condition().and_then(builtin) {
            u.alone[ax as usize % 3] = true;
        }
    }
    u
}

/// Axes y and z along which the kernel tells the threads of a group apart
/// only inside global ids: it never reads the local id or the group's size
/// along the axis on their own, nor the flat local index. Such a kernel
/// picks rows by the global id and indexes shared memory along x only,
/// which is one-to-one only when the group is one thread wide along that
/// axis: the host launches it so. The x axis is never inferred: kernels
/// that use groups spread their threads along it.
pub fn axes_seen_only_in_global_ids(f: &Function) -> [bool; 3] {
    let u = local_id_use(f);
    std::array::from_fn(|ax| ax > 0 && !u.flat_index && u.seen[ax] && !u.alone[ax])
}

/// Whether the kernel's rows are its waves: it numbers its threads within a
/// row by the lane (`get_sub_group_local_id()`) and the rows by the y id
/// (`get_local_id(1)` as the wave's index), and reads the x id only inside
/// global ids, never the flat index. The lane stands for the x id only
/// when a row is exactly one wave wide: the host launches it so.
pub fn rows_are_waves(f: &Function) -> bool {
    let u = local_id_use(f);
    let lanes = f.insts.iter().any(|i| matches!(i.op, Op::Builtin(Builtin::LaneId)));
    lanes && !u.flat_index && !u.alone[0] && u.alone[1]
}

/// The axis of a thread id (through integer conversions).
pub(crate) fn thread_id_axis(f: &Function, v: Value) -> Option<usize> {
    let mut x = v;
    while let Op::Convert(y) = &f.inst(x).op {
        x = *y;
    }
    match f.inst(x).op {
        Op::Builtin(Builtin::LocalId(a)) => Some(a as usize % 3),
        _ => None,
    }
}

/// `id * C` or `id << c` for a thread id: its axis and the constant stride.
fn scaled_thread_id_any(f: &Function, v: Value) -> Option<(usize, u64)> {
    let mut x = v;
    while let Op::Convert(y) = &f.inst(x).op {
        x = *y;
    }
    match &f.inst(x).op {
        Op::Binary(BinOp::Mul, a, b) => match (f.as_int(*a), f.as_int(*b)) {
            (_, Some(c)) if c > 0 => Some((thread_id_axis(f, *a)?, c as u64)),
            (Some(c), _) if c > 0 => Some((thread_id_axis(f, *b)?, c as u64)),
            _ => None,
        },
        Op::Binary(BinOp::Shl, a, b) => {
            let c = f.as_int(*b).filter(|&c| (0..32).contains(&c))?;
            Some((thread_id_axis(f, *a)?, 1u64 << c))
        }
        _ => None,
    }
}

/// `(x / C) * stride` (or `(x >> c) << log2(stride)`, the scale one when
/// `stride` is 1): `x` and the divisor `C`.
fn scaled_quotient(f: &Function, v: Value, stride: u64) -> Option<(Value, u64)> {
    let unconverted = |mut x: Value| {
        while let Op::Convert(y) = &f.inst(x).op {
            x = *y;
        }
        x
    };
    let quotient = match &f.inst(unconverted(v)).op {
        _ if stride == 1 => unconverted(v),
        Op::Binary(BinOp::Mul, a, b) => match (f.as_int(*a), f.as_int(*b)) {
            (_, Some(c)) if c as u64 == stride => unconverted(*a),
            (Some(c), _) if c as u64 == stride => unconverted(*b),
            _ => return None,
        },
        Op::Binary(BinOp::Shl, a, b) if f.as_int(*b).is_some_and(|c| (0..63).contains(&c) && 1u64 << c == stride) => unconverted(*a),
        _ => return None,
    };
    match &f.inst(quotient).op {
        Op::Binary(BinOp::Div | BinOp::ExactDiv, x, c) => Some((*x, f.as_int(*c).filter(|&c| c > 0)? as u64)),
        Op::Binary(BinOp::Shr, x, c) => Some((*x, 1u64 << f.as_int(*c).filter(|&c| (0..32).contains(&c))?)),
        _ => None,
    }
}

/// A flat id written as a sum of thread ids with positive constant
/// coefficients (`get_local_id(1) * 16 + get_local_id(0)`): each axis and its
/// coefficient; empty for anything else.
fn flat_id_terms(f: &Function, flat: Value) -> Vec<(usize, u64)> {
    let mut parts = Vec::new();
    summands(f, flat, &mut parts, 0);
    let terms: Option<Vec<(usize, u64)>> = parts.iter().map(|&p| thread_id_axis(f, p).map(|ax| (ax, 1)).or_else(|| scaled_thread_id_any(f, p))).collect();
    terms.unwrap_or_default()
}

/// The summands of an index (through additions and integer conversions).
fn summands(f: &Function, v: Value, out: &mut Vec<Value>, depth: u32) {
    match &f.inst(v).op {
        Op::Binary(BinOp::Add, a, b) if depth < 16 => {
            summands(f, *a, out, depth + 1);
            summands(f, *b, out, depth + 1);
        }
        Op::Convert(x) if depth < 16 && f.inst(*x).ty.is_int() => summands(f, *x, out, depth + 1),
        _ => out.push(v),
    }
}

/// The axis of `id * stride` (or `id << log2(stride)`) for a thread id.
fn scaled_thread_id(f: &Function, v: Value, stride: u64) -> Option<usize> {
    let id_axis = |x: Value| thread_id_axis(f, x);
    match &f.inst(v).op {
        Op::Binary(BinOp::Mul, a, b) => match (f.as_int(*a), f.as_int(*b)) {
            (_, Some(c)) if c as u64 == stride => id_axis(*a),
            (Some(c), _) if c as u64 == stride => id_axis(*b),
            _ => None,
        },
        Op::Binary(BinOp::Shl, a, b) => f.as_int(*b).filter(|&c| (0..63).contains(&c) && 1u64 << c == stride).and_then(|_| id_axis(*a)),
        _ => None,
    }
}

/// Whether a thread-dependent condition compares against a group-uniform
/// value that is not a constant (`x < width`): some launch makes it hold for
/// every thread. Conjunctions qualify when every part does.
fn bounded_by_launch(f: &Function, uniformity: &Uniformity, c: Value, depth: u32) -> bool {
    let launch_value = |v: Value| uniformity.level(v) >= Level::Group && f.as_int(v).is_none();
    match &f.inst(c).op {
        Op::Cmp(_, a, b) => launch_value(*a) || launch_value(*b),
        Op::Binary(BinOp::LAnd | BinOp::And, a, b) if depth < 8 => bounded_by_launch(f, uniformity, *a, depth + 1) && bounded_by_launch(f, uniformity, *b, depth + 1),
        _ => false,
    }
}

/// Constants at least this large are taken to select a row, not to shift within one.
const ROW_OFFSET_MIN: i64 = 64;

/// When `v` is a sum with the thread's x id as one summand of coefficient
/// one, the sum of the constant summands (the rest must be non-negative
/// multiples of the row stride for the bound to hold, which indexing by a
/// row always gives). None when the x id is not a plain summand.
fn thread_x_summand(f: &Function, v: Value, depth: u32) -> Option<i64> {
    if depth > 16 {
        return None;
    }
    match &f.inst(v).op {
        Op::Builtin(Builtin::LocalId(0)) => Some(0),
        Op::Convert(x) => thread_x_summand(f, *x, depth + 1),
        Op::Binary(BinOp::Add, a, b) => {
            // A constant summand within the row shifts the last in-bounds thread;
            // a non-constant one (the row offset) does not.
            let (x, other) = match thread_x_summand(f, *a, depth + 1) {
                Some(c) => (c, *b),
                None => (thread_x_summand(f, *b, depth + 1)?, *a),
            };
            Some(x + f.as_int(other).filter(|&k| k < ROW_OFFSET_MIN).unwrap_or(0).max(0))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lockstep_ir::{Const, Global, GlobalKind, MemRef, MemSpace, Terminator, Type};
    use lockstep_source::{FileId, Span};

    fn sp() -> Span {
        Span::new(FileId(0), 0, 0)
    }

    fn uniformity(f: &Function) -> Uniformity {
        Uniformity::analyze(f, &crate::Cfg::new(f))
    }

    fn shared(m: &mut Module, dims: Vec<u64>) -> lockstep_ir::GlobalId {
        let len = dims.iter().product();
        m.add_global(Global {
            name: "buf".into(),
            kind: GlobalKind::GroupShared,
            space: MemSpace::Shared,
            elem: Type::F32,
            dims,
            cells_per_elem: 1,
            cell_names: Vec::new(),
            len: Some(len),
            coherent: false,
            texel_width: 0,
            open_value: None,
            init: Vec::new(),
            span: sp(),
        })
    }

    #[test]
    fn a_row_indexed_by_the_thread_id_bounds_the_group_width() {
        let mut m = Module::default();
        let g = shared(&mut m, vec![2, 256]);
        let mut f = Function::new("k", sp());
        let b = f.add_block(sp());
        let tid = f.push(b, Op::Builtin(Builtin::LocalId(0)), Type::U32, sp());
        let row = f.push(b, Op::Const(Const::Int(256)), Type::U32, sp());
        let one = f.push(b, Op::Const(Const::Int(1)), Type::U32, sp());
        let idx = f.push(b, Op::Binary(BinOp::Add, row, tid), Type::U32, sp());
        let idx1 = f.push(b, Op::Binary(BinOp::Add, tid, one), Type::U32, sp());
        let zero = f.push(b, Op::Const(Const::Float(0.0)), Type::F32, sp());
        let m1 = MemRef { space: MemSpace::Shared, root: Root::Global(g), index: idx };
        f.push(b, Op::Store(m1, zero), Type::Void, sp());
        assert_eq!(in_bounds_group_extent(&m, &f, &crate::Cfg::new(&f), &uniformity(&f))[0], Some(256));
        // `buf[0][tid + 1]` stays in bounds only for 255 threads.
        let m2 = MemRef { space: MemSpace::Shared, root: Root::Global(g), index: idx1 };
        f.push(b, Op::Load(m2), Type::F32, sp());
        f.set_term(b, Terminator::Return(None), sp());
        assert_eq!(in_bounds_group_extent(&m, &f, &crate::Cfg::new(&f), &uniformity(&f))[0], Some(255));
    }

    #[test]
    fn scaled_thread_ids_give_no_bound() {
        let mut m = Module::default();
        let g = shared(&mut m, vec![512]);
        let mut f = Function::new("k", sp());
        let b = f.add_block(sp());
        let tid = f.push(b, Op::Builtin(Builtin::LocalId(0)), Type::U32, sp());
        let two = f.push(b, Op::Const(Const::Int(2)), Type::U32, sp());
        let idx = f.push(b, Op::Binary(BinOp::Mul, tid, two), Type::U32, sp());
        f.push(b, Op::Load(MemRef { space: MemSpace::Shared, root: Root::Global(g), index: idx }), Type::F32, sp());
        assert_eq!(in_bounds_group_extent(&m, &f, &crate::Cfg::new(&f), &uniformity(&f))[0], None);
    }
}
