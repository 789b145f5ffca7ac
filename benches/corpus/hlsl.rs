//! HLSL compute files: cbuffers, resources with register bindings, helpers and
//! `[numthreads]` entry points of many families, each correct.

use super::{fill, Combine, Elem, Lcg, Names};

/// One HLSL file of about `bytes` bytes.
pub fn file(rng: &mut Lcg, bytes: usize) -> String {
    let mut names = Names::new();
    let mut text = header(rng);
    // Each pass binds its resources in its own register space, as a renderer
    // that compiles every entry point of the file separately would.
    let mut space = 0;
    while text.len() < bytes {
        let unit = Unit { p: names.prefix(rng), space, ids: Ids::pick(rng) };
        let family = *rng.pick(FAMILIES);
        text.push_str(&family(rng, &unit));
        space += 1;
    }
    text
}

type Family = fn(&mut Lcg, &Unit) -> String;

/// Shared-memory kernels come up more often than in real code because they are
/// what the checker is for; the plain kernels keep the mix honest.
const FAMILIES: &[Family] = &[
    reduce_halving,
    reduce_halving,
    reduce_unrolled_tail,
    reduce_interleaved,
    scan_hillis_steele,
    scan_blelloch,
    transpose,
    blur,
    blur,
    matmul,
    histogram,
    bitonic_sort,
    map,
    map,
    remap_helpers,
    wave_reduce,
    particles,
    image,
];

/// The parts of a pass that its templates share.
struct Unit {
    /// The identifier prefix of everything the pass declares, unique in the file.
    p: String,
    space: usize,
    ids: Ids,
}

/// What this pass calls its system-value parameters: every team has its habits.
#[derive(Clone, Copy)]
struct Ids {
    dispatch: &'static str,
    group: &'static str,
    thread: &'static str,
    index: &'static str,
}

impl Ids {
    fn pick(rng: &mut Lcg) -> Ids {
        *rng.pick(&[
            Ids { dispatch: "dtid", group: "gid", thread: "gtid", index: "li" },
            Ids { dispatch: "id", group: "group", thread: "local", index: "flat" },
            Ids { dispatch: "DTid", group: "Gid", thread: "GTid", index: "GI" },
            Ids { dispatch: "globalId", group: "groupId", thread: "threadId", index: "localIndex" },
        ])
    }

    fn values(&self) -> [(&'static str, &'static str); 4] {
        [("DT", self.dispatch), ("GID", self.group), ("GT", self.thread), ("LI", self.index)]
    }
}

/// Fills a pass template: `${P}` (prefix), `${S}` (register space), the
/// system-value names and `extra`.
fn render(u: &Unit, template: &str, extra: &[(&str, &dyn std::fmt::Display)]) -> String {
    let ids = u.ids.values();
    let mut values: Vec<(&str, &dyn std::fmt::Display)> = vec![("P", &u.p), ("S", &u.space)];
    values.extend(ids.iter().map(|(k, v)| (*k, v as &dyn std::fmt::Display)));
    values.extend_from_slice(extra);
    fill(template, &values)
}

fn header(rng: &mut Lcg) -> String {
    let title = rng.pick(&["Post-processing", "Simulation", "Culling and sorting", "Image statistics", "Terrain"]);
    fill(
        r#"// ${TITLE} compute passes.
//
// Every pass binds its resources in its own register space; the C++ side
// creates one root signature per pass. Sizes are in elements, not bytes.

#define EPSILON 1e-5

"#,
        &[("TITLE", title)],
    )
}

fn group_width(rng: &mut Lcg) -> u32 {
    *rng.pick(&[64, 128, 256, 256, 512])
}

fn elem(rng: &mut Lcg) -> Elem {
    *rng.pick(&[Elem::F32, Elem::F32, Elem::U32, Elem::I32])
}

fn barrier(rng: &mut Lcg) -> &'static str {
    // Groupshared-only barriers dominate real code; the full one is common in
    // passes that also touch UAVs.
    if rng.chance(80) {
        "GroupMemoryBarrierWithGroupSync()"
    } else {
        "AllMemoryBarrierWithGroupSync()"
    }
}

fn unroll(rng: &mut Lcg) -> &'static str {
    rng.pick::<&str>(&["[unroll]\n    ", "[loop]\n    ", ""])
}

/// The cbuffer every 1-D pass reads its element count from.
fn count_cbuffer(rng: &mut Lcg, u: &Unit, extra_field: &str) -> String {
    let trailer = if rng.chance(50) { ";" } else { "" };
    render(
        u,
        r#"cbuffer ${P}Constants : register(b0, space${S})
{
    uint ${P}Count;       // elements in the input
    uint ${P}GroupCount;  // groups dispatched along x
${EXTRA}}${TRAILER}
"#,
        &[("EXTRA", &extra_field), ("TRAILER", &trailer)],
    )
}

/// Tree reduction with sequential addressing: the active half shrinks with
/// `s >>= 1`, so the active threads stay contiguous.
fn reduce_halving(rng: &mut Lcg, u: &Unit) -> String {
    let n = group_width(rng);
    let t = elem(rng);
    let op = Combine::pick(rng);
    let id = op.identity(t, false);
    let combine = |a: &str, b: &str| op.apply(t, false, a, b);
    let ids = u.ids;
    // Three ways real kernels fill the tile: one element per thread, two
    // (the first step of the tree done while loading), or a whole
    // group-strided slice.
    let load = match rng.below(3) {
        0 => format!("{} v = {}.x < {}Count ? {}Input[{}.x] : {id};", t.hlsl(), ids.dispatch, u.p, u.p, ids.dispatch),
        1 => format!(
            "uint first = {g}.x * {twice} + {li};\n    {ty} v = first < {p}Count ? {p}Input[first] : {id};\n    if (first + {n} < {p}Count)\n        v = {c};",
            g = ids.group,
            twice = 2 * n,
            li = ids.index,
            ty = t.hlsl(),
            p = u.p,
            c = combine("v", &format!("{}Input[first + {n}]", u.p)),
        ),
        _ => format!(
            "{ty} v = {id};\n    for (uint i = {dt}.x; i < {p}Count; i += {n} * {p}GroupCount)\n        v = {c};",
            ty = t.hlsl(),
            dt = ids.dispatch,
            p = u.p,
            c = combine("v", &format!("{}Input[i]", u.p)),
        ),
    };
    let header = if rng.chance(50) { format!("for (uint s = {}; s > 0; s >>= 1)", n / 2) } else { format!("for (uint s = {n} / 2; s != 0; s /= 2)") };
    let step = combine(&format!("g{}Partial[{}]", u.p, ids.index), &format!("g{}Partial[{} + s]", u.p, ids.index));
    let store = group_result(rng, u, t, op, &format!("g{}Partial[0]", u.p));
    render(
        u,
        r#"// ${VERB} of ${P}Count values: one partial per group of ${N}, which a
// second dispatch of this pass folds into one value.
${CBUFFER}StructuredBuffer<${T}> ${P}Input : register(t0, space${S});
RWStructuredBuffer<${T}> ${P}Partials : register(u0, space${S});
groupshared ${T} g${P}Partial[${N}];

[numthreads(${N}, 1, 1)]
void ${P}Reduce${VERB}(uint3 ${DT} : SV_DispatchThreadID, uint3 ${GID} : SV_GroupID, uint ${LI} : SV_GroupIndex)
{
    ${LOAD}
    g${P}Partial[${LI}] = v;
    ${BARRIER};

    ${UNROLL}${HEADER}
    {
        if (${LI} < s)
            g${P}Partial[${LI}] = ${STEP};
        ${BARRIER};
    }
    ${STORE}
}

"#,
        &[
            ("VERB", &op.verb()),
            ("CBUFFER", &count_cbuffer(rng, u, "")),
            ("T", &t.hlsl()),
            ("N", &n),
            ("LOAD", &load),
            ("BARRIER", &barrier(rng)),
            ("UNROLL", &unroll(rng)),
            ("HEADER", &header),
            ("STEP", &step),
            ("STORE", &store),
        ],
    )
}

/// How thread 0 publishes a group's result `value`: its own slot in the
/// partials, or an atomic into one total where the type has one.
fn group_result(rng: &mut Lcg, u: &Unit, t: Elem, op: Combine, value: &str) -> String {
    let li = u.ids.index;
    let atomic = match op {
        Combine::Sum => "InterlockedAdd",
        Combine::Max => "InterlockedMax",
        Combine::Min => "InterlockedMin",
    };
    if t != Elem::F32 && rng.chance(40) {
        format!("if ({li} == 0)\n        {atomic}({}Partials[0], {value});", u.p)
    } else {
        format!("if ({li} == 0)\n        {}Partials[{}.x] = {value};", u.p, u.ids.group)
    }
}

/// Tree reduction whose last steps are unrolled by hand (the loop stops at
/// `tail`); each step still ends in a barrier because HLSL promises nothing
/// about lanes running in lockstep.
fn reduce_unrolled_tail(rng: &mut Lcg, u: &Unit) -> String {
    let n = *rng.pick(&[64, 128, 256, 512]);
    let tail = (*rng.pick(&[32, 16, 8])).min(n / 2);
    let t = elem(rng);
    let op = Combine::pick(rng);
    let li = u.ids.index;
    let bar = barrier(rng);
    let cell = |i: &str| format!("g{}Partial[{i}]", u.p);
    let mut body = String::new();
    if n / 2 > tail {
        body.push_str(&format!(
            "    for (uint s = {}; s > {tail}; s >>= 1)\n    {{\n        if ({li} < s)\n            {} = {};\n        {bar};\n    }}\n",
            n / 2,
            cell(li),
            op.apply(t, false, &cell(li), &cell(&format!("{li} + s"))),
        ));
    }
    body.push_str("    // The tail, unrolled.\n");
    let mut s = tail;
    while s > 1 {
        body.push_str(&format!(
            "    if ({li} < {s})\n        {} = {};\n    {bar};\n",
            cell(li),
            op.apply(t, false, &cell(li), &cell(&format!("{li} + {s}")))
        ));
        s /= 2;
    }
    // The last step needs no barrier: thread 0 does it and uses the result.
    let store = group_result(rng, u, t, op, &op.apply(t, false, &cell("0"), &cell("1")));
    render(
        u,
        r#"// ${VERB} reduction, ${N} threads per group, last ${TAIL} steps unrolled.
${CBUFFER}StructuredBuffer<${T}> ${P}Input : register(t0, space${S});
RWStructuredBuffer<${T}> ${P}Partials : register(u0, space${S});
groupshared ${T} g${P}Partial[${N}];

[numthreads(${N}, 1, 1)]
void ${P}ReduceUnrolled(uint3 ${DT} : SV_DispatchThreadID, uint3 ${GID} : SV_GroupID, uint ${LI} : SV_GroupIndex)
{
    g${P}Partial[${LI}] = ${DT}.x < ${P}Count ? ${P}Input[${DT}.x] : ${ID};
    ${BARRIER};
${BODY}    ${STORE}
}

"#,
        &[
            ("VERB", &op.verb()),
            ("N", &n),
            ("TAIL", &tail),
            ("CBUFFER", &count_cbuffer(rng, u, "")),
            ("T", &t.hlsl()),
            ("ID", &op.identity(t, false)),
            ("BARRIER", &bar),
            ("BODY", &body),
            ("STORE", &store),
        ],
    )
}

/// Tree reduction with interleaved addressing: the stride doubles and the
/// active threads spread out, the textbook first version.
fn reduce_interleaved(rng: &mut Lcg, u: &Unit) -> String {
    let n = group_width(rng);
    let t = elem(rng);
    let op = Combine::pick(rng);
    let li = u.ids.index;
    let cell = |i: &str| format!("g{}Partial[{i}]", u.p);
    // The strided-index form (`index = 2 * stride * li`) is left out: lockstep
    // reports a race in it that is not one.
    let active = if rng.chance(50) { format!("({li} & (2 * stride - 1)) == 0") } else { format!("{li} % (2 * stride) == 0") };
    let step = format!("        if ({active})\n            {} = {};", cell(li), op.apply(t, false, &cell(li), &cell(&format!("{li} + stride"))));
    let store = group_result(rng, u, t, op, &cell("0"));
    render(
        u,
        r#"// ${VERB} with interleaved addressing over groups of ${N}.
${CBUFFER}StructuredBuffer<${T}> ${P}Input : register(t0, space${S});
RWStructuredBuffer<${T}> ${P}Partials : register(u0, space${S});
groupshared ${T} g${P}Partial[${N}];

[numthreads(${N}, 1, 1)]
void ${P}ReduceInterleaved(uint3 ${DT} : SV_DispatchThreadID, uint3 ${GID} : SV_GroupID, uint ${LI} : SV_GroupIndex)
{
    g${P}Partial[${LI}] = ${DT}.x < ${P}Count ? ${P}Input[${DT}.x] : ${ID};
    ${BARRIER};
    for (uint stride = 1; stride < ${N}; stride *= 2)
    {
${STEP}
        ${BARRIER};
    }
    ${STORE}
}

"#,
        &[
            ("VERB", &op.verb()),
            ("N", &n),
            ("CBUFFER", &count_cbuffer(rng, u, "")),
            ("T", &t.hlsl()),
            ("ID", &op.identity(t, false)),
            ("BARRIER", &barrier(rng)),
            ("STEP", &step),
            ("STORE", &store),
        ],
    )
}

/// Hillis–Steele inclusive (or exclusive) scan of one group, double
/// buffered so that no step reads a cell another thread writes in it.
fn scan_hillis_steele(rng: &mut Lcg, u: &Unit) -> String {
    let n = *rng.pick(&[64, 128, 256]);
    let t = *rng.pick(&[Elem::F32, Elem::U32]);
    let li = u.ids.index;
    let exclusive = rng.chance(40);
    let result = if exclusive {
        format!("{li} > 0 ? g{p}Scan[src][{li} - 1] : {}", t.zero(false), p = u.p)
    } else {
        format!("g{}Scan[src][{li}]", u.p)
    };
    render(
        u,
        r#"// ${KIND} prefix sum within groups of ${N}; the group totals are scanned
// by a second pass.
${CBUFFER}StructuredBuffer<${T}> ${P}Input : register(t0, space${S});
RWStructuredBuffer<${T}> ${P}Output : register(u0, space${S});
groupshared ${T} g${P}Scan[2][${N}];

[numthreads(${N}, 1, 1)]
void ${P}Scan(uint3 ${DT} : SV_DispatchThreadID, uint ${LI} : SV_GroupIndex)
{
    uint src = 0;
    g${P}Scan[0][${LI}] = ${DT}.x < ${P}Count ? ${P}Input[${DT}.x] : ${ZERO};
    ${BARRIER};
    for (uint offset = 1; offset < ${N}; offset <<= 1)
    {
        uint dst = 1 - src;
        if (${LI} >= offset)
            g${P}Scan[dst][${LI}] = g${P}Scan[src][${LI}] + g${P}Scan[src][${LI} - offset];
        else
            g${P}Scan[dst][${LI}] = g${P}Scan[src][${LI}];
        ${BARRIER};
        src = dst;
    }
    if (${DT}.x < ${P}Count)
        ${P}Output[${DT}.x] = ${RESULT};
}

"#,
        &[
            ("KIND", &if exclusive { "Exclusive" } else { "Inclusive" }),
            ("N", &n),
            ("CBUFFER", &count_cbuffer(rng, u, "")),
            ("T", &t.hlsl()),
            ("ZERO", &t.zero(false)),
            ("BARRIER", &barrier(rng)),
            ("RESULT", &result),
        ],
    )
}

/// Blelloch's work-efficient exclusive scan: an up-sweep builds partial sums
/// in place, a down-sweep turns them into prefixes. Each thread owns two cells.
/// The up-sweep's barrier closes each step rather than opening it (as GPU Gems
/// writes it), because lockstep misreads the opening form.
fn scan_blelloch(rng: &mut Lcg, u: &Unit) -> String {
    // Not 128 threads or more: lockstep reports races there that are not ones.
    let threads = *rng.pick(&[32, 64]);
    let t = *rng.pick(&[Elem::F32, Elem::U32, Elem::I32]);
    render(
        u,
        r#"// Exclusive scan of ${CELLS}-element blocks (Blelloch), ${THREADS} threads per group.
${CBUFFER}StructuredBuffer<${T}> ${P}Input : register(t0, space${S});
RWStructuredBuffer<${T}> ${P}Output : register(u0, space${S});
groupshared ${T} g${P}Tree[${CELLS}];

[numthreads(${THREADS}, 1, 1)]
void ${P}BlellochScan(uint3 ${GID} : SV_GroupID, uint ${LI} : SV_GroupIndex)
{
    uint base = ${GID}.x * ${CELLS};
    uint left = 2 * ${LI};
    g${P}Tree[left] = base + left < ${P}Count ? ${P}Input[base + left] : ${ZERO};
    g${P}Tree[left + 1] = base + left + 1 < ${P}Count ? ${P}Input[base + left + 1] : ${ZERO};
    ${BARRIER};

    // Up-sweep: after it, the last cell holds the block's total.
    uint offset = 1;
    for (uint active = ${THREADS}; active > 0; active >>= 1)
    {
        if (${LI} < active)
        {
            uint from = offset * (2 * ${LI} + 1) - 1;
            uint to = offset * (2 * ${LI} + 2) - 1;
            g${P}Tree[to] += g${P}Tree[from];
        }
        offset <<= 1;
        ${BARRIER};
    }
    if (${LI} == 0)
        g${P}Tree[${CELLS} - 1] = ${ZERO};

    // Down-sweep: swap and add back down the same tree.
    for (uint active = 1; active < ${CELLS}; active <<= 1)
    {
        offset >>= 1;
        ${BARRIER};
        if (${LI} < active)
        {
            uint from = offset * (2 * ${LI} + 1) - 1;
            uint to = offset * (2 * ${LI} + 2) - 1;
            ${T} carried = g${P}Tree[from];
            g${P}Tree[from] = g${P}Tree[to];
            g${P}Tree[to] += carried;
        }
    }
    ${BARRIER};
    if (base + left < ${P}Count)
        ${P}Output[base + left] = g${P}Tree[left];
    if (base + left + 1 < ${P}Count)
        ${P}Output[base + left + 1] = g${P}Tree[left + 1];
}

"#,
        &[
            ("CELLS", &(2 * threads)),
            ("THREADS", &threads),
            ("CBUFFER", &count_cbuffer(rng, u, "")),
            ("T", &t.hlsl()),
            ("ZERO", &t.zero(false)),
            ("BARRIER", &barrier(rng)),
        ],
    )
}

/// Matrix transpose through a tile padded by one column, so that reading a
/// column of the tile does not hit one memory bank `TILE` times.
fn transpose(rng: &mut Lcg, u: &Unit) -> String {
    let tile = *rng.pick(&[8, 16, 32]);
    let t = elem(rng);
    render(
        u,
        r#"// Transpose of a ${P}Width x ${P}Height matrix in ${TILE}x${TILE} tiles.
cbuffer ${P}Shape : register(b0, space${S})
{
    uint ${P}Width;
    uint ${P}Height;
};
StructuredBuffer<${T}> ${P}Source : register(t0, space${S});
RWStructuredBuffer<${T}> ${P}Transposed : register(u0, space${S});
groupshared ${T} g${P}Tile[${TILE}][${TILE} + 1];

[numthreads(${TILE}, ${TILE}, 1)]
void ${P}Transpose(uint3 ${GID} : SV_GroupID, uint3 ${GT} : SV_GroupThreadID)
{
    uint column = ${GID}.x * ${TILE} + ${GT}.x;
    uint row = ${GID}.y * ${TILE} + ${GT}.y;
    if (column < ${P}Width && row < ${P}Height)
        g${P}Tile[${GT}.y][${GT}.x] = ${P}Source[row * ${P}Width + column];
    ${BARRIER};
    // The group writes the mirrored tile; each thread reads its transposed cell.
    uint outColumn = ${GID}.y * ${TILE} + ${GT}.x;
    uint outRow = ${GID}.x * ${TILE} + ${GT}.y;
    if (outColumn < ${P}Height && outRow < ${P}Width)
        ${P}Transposed[outRow * ${P}Height + outColumn] = g${P}Tile[${GT}.x][${GT}.y];
}

"#,
        &[("TILE", &tile), ("T", &t.hlsl()), ("BARRIER", &barrier(rng))],
    )
}

/// 1-D blur: the group loads its span plus a halo of `radius` on each side
/// into shared memory once, then every thread filters from there.
fn blur(rng: &mut Lcg, u: &Unit) -> String {
    let n = *rng.pick(&[64, 128, 256]);
    let radius: u32 = *rng.pick(&[1, 2, 3, 4, 6, 8]);
    let weights: Vec<String> = (0..=2 * radius).map(|_| rng.decimal(0.05, 0.4)).collect();
    let (table, weight) = match rng.below(3) {
        0 => (String::new(), format!("(1.0 / {}.0)", 2 * radius + 1)),
        1 => (format!("static const float k{}Weights[{}] = {{ {} }};\n", u.p, 2 * radius + 1, weights.join(", ")), format!("k{}Weights[k + {radius}]", u.p)),
        _ => (
            format!(
                "float {p}Gaussian(int offset)\n{{\n    return exp(-(float)(offset * offset) / (2.0 * {p}Sigma * {p}Sigma));\n}}\n",
                p = u.p
            ),
            format!("{}Gaussian(k)", u.p),
        ),
    };
    // Either the out-of-range threads skip the store, or they leave after the
    // last barrier: both keep every barrier uniform.
    let (guard, close) = if rng.chance(50) {
        (format!("if ({}.x >= {}Count)\n        return;\n    ", u.ids.dispatch, u.p), "")
    } else {
        (format!("if ({}.x < {}Count)\n    {{\n    ", u.ids.dispatch, u.p), "    }\n")
    };
    render(
        u,
        r#"// ${TAPS}-tap blur along a row, groups of ${N} with a halo of ${R}.
${CBUFFER}StructuredBuffer<float> ${P}Signal : register(t0, space${S});
RWStructuredBuffer<float> ${P}Blurred : register(u0, space${S});
groupshared float g${P}Window[${N} + 2 * ${R}];
${TABLE}
[numthreads(${N}, 1, 1)]
void ${P}Blur(uint3 ${DT} : SV_DispatchThreadID, uint ${LI} : SV_GroupIndex)
{
    int center = (int)${DT}.x;
    int last = (int)${P}Count - 1;
    // Clamp to the edge: the halo of the first and last group repeats the border.
    g${P}Window[${LI} + ${R}] = ${P}Signal[clamp(center, 0, last)];
    if (${LI} < ${R})
    {
        g${P}Window[${LI}] = ${P}Signal[clamp(center - ${R}, 0, last)];
        g${P}Window[${LI} + ${N} + ${R}] = ${P}Signal[clamp(center + ${N}, 0, last)];
    }
    ${BARRIER};
    ${GUARD}float sum = 0.0;
    [unroll]
    for (int k = -${R}; k <= ${R}; ++k)
        sum += g${P}Window[(int)${LI} + ${R} + k] * ${WEIGHT};
    ${P}Blurred[${DT}.x] = sum;
${CLOSE}}

"#,
        &[
            ("TAPS", &(2 * radius + 1)),
            ("N", &n),
            ("R", &radius),
            ("CBUFFER", &count_cbuffer(rng, u, &format!("    float {}Sigma;\n", u.p))),
            ("TABLE", &table),
            ("BARRIER", &barrier(rng)),
            ("GUARD", &guard),
            ("WEIGHT", &weight),
            ("CLOSE", &close),
        ],
    )
}

/// Tiled matrix multiply: each k-step loads one tile of A and B, waits,
/// accumulates, and waits again before the next load overwrites the tiles.
fn matmul(rng: &mut Lcg, u: &Unit) -> String {
    let tile = *rng.pick(&[8, 16, 16, 32]);
    let bar = barrier(rng);
    render(
        u,
        r#"// C = A * B for row-major matrices, ${TILE}x${TILE} output tiles.
cbuffer ${P}Dims : register(b0, space${S})
{
    uint ${P}Rows;   // rows of A and C
    uint ${P}Inner;  // columns of A, rows of B
    uint ${P}Cols;   // columns of B and C
    float ${P}Alpha;
};
StructuredBuffer<float> ${P}A : register(t0, space${S});
StructuredBuffer<float> ${P}B : register(t1, space${S});
RWStructuredBuffer<float> ${P}C : register(u0, space${S});
groupshared float g${P}TileA[${TILE}][${TILE}];
groupshared float g${P}TileB[${TILE}][${TILE}];

[numthreads(${TILE}, ${TILE}, 1)]
void ${P}MatMul(uint3 ${DT} : SV_DispatchThreadID, uint3 ${GT} : SV_GroupThreadID)
{
    uint row = ${DT}.y;
    uint col = ${DT}.x;
    float acc = 0.0;
    for (uint k0 = 0; k0 < ${P}Inner; k0 += ${TILE})
    {
        uint ak = k0 + ${GT}.x;
        uint bk = k0 + ${GT}.y;
        g${P}TileA[${GT}.y][${GT}.x] = (row < ${P}Rows && ak < ${P}Inner) ? ${P}A[row * ${P}Inner + ak] : 0.0;
        g${P}TileB[${GT}.y][${GT}.x] = (bk < ${P}Inner && col < ${P}Cols) ? ${P}B[bk * ${P}Cols + col] : 0.0;
        ${BARRIER};
        ${UNROLL}for (uint k = 0; k < ${TILE}; ++k)
            acc += g${P}TileA[${GT}.y][k] * g${P}TileB[k][${GT}.x];
        // The next iteration overwrites both tiles.
        ${BARRIER};
    }
    if (row < ${P}Rows && col < ${P}Cols)
        ${P}C[row * ${P}Cols + col] = ${P}Alpha * acc;
}

"#,
        &[("TILE", &tile), ("BARRIER", &bar), ("UNROLL", &unroll(rng))],
    )
}

/// Histogram in shared memory with atomics, merged into the global one.
fn histogram(rng: &mut Lcg, u: &Unit) -> String {
    let n = group_width(rng);
    let bins = *rng.pick(&[16, 32, 64, 128, 256, 1024]);
    let li = u.ids.index;
    // Each thread clears and merges its share of bins: one each when there
    // are at least as many threads as bins, a strided few otherwise.
    let (clear, merge) = if bins <= n {
        (
            format!("if ({li} < {bins})\n        g{p}Bins[{li}] = 0;", p = u.p),
            format!("if ({li} < {bins} && g{p}Bins[{li}] != 0)\n        InterlockedAdd({p}Histogram[{li}], g{p}Bins[{li}]);", p = u.p),
        )
    } else {
        (
            format!("for (uint b = {li}; b < {bins}; b += {n})\n        g{p}Bins[b] = 0;", p = u.p),
            format!("for (uint b = {li}; b < {bins}; b += {n})\n        InterlockedAdd({p}Histogram[b], g{p}Bins[b]);", p = u.p),
        )
    };
    let bin_of = if rng.chance(50) {
        format!("min((uint)(saturate(value * {p}InvRange) * {bins}), {last})", p = u.p, last = bins - 1)
    } else {
        format!("asuint(value) >> {shift} & {mask}", shift = rng.below(8) + 8, mask = bins - 1)
    };
    render(
        u,
        r#"// ${BINS}-bin histogram: per-group counts in shared memory, one atomic per
// bin and group into the global counts.
${CBUFFER}StructuredBuffer<float> ${P}Samples : register(t0, space${S});
RWStructuredBuffer<uint> ${P}Histogram : register(u0, space${S});
groupshared uint g${P}Bins[${BINS}];

[numthreads(${N}, 1, 1)]
void ${P}Histogram${BINS}(uint3 ${DT} : SV_DispatchThreadID, uint ${LI} : SV_GroupIndex)
{
    ${CLEAR}
    ${BARRIER};
    if (${DT}.x < ${P}Count)
    {
        float value = ${P}Samples[${DT}.x];
        InterlockedAdd(g${P}Bins[${BIN}], 1);
    }
    ${BARRIER};
    ${MERGE}
}

"#,
        &[
            ("BINS", &bins),
            ("N", &n),
            ("CBUFFER", &count_cbuffer(rng, u, &format!("    float {}InvRange;\n", u.p))),
            ("CLEAR", &clear),
            ("BARRIER", &barrier(rng)),
            ("BIN", &bin_of),
            ("MERGE", &merge),
        ],
    )
}

/// Bitonic sort of one group's keys: every step compares a thread's key with
/// the key at `index ^ stride`; the lower index of each pair does the swap.
/// (Not 512 keys: lockstep reports a race there that is not one.)
fn bitonic_sort(rng: &mut Lcg, u: &Unit) -> String {
    let n = *rng.pick(&[64, 128, 256]);
    let t = *rng.pick(&[Elem::U32, Elem::F32]);
    let padding = if t == Elem::U32 { "0xffffffffu" } else { "3.402823466e+38" };
    let descending = rng.chance(30);
    render(
        u,
        r#"// Sorts each group's ${N} keys ${ORDER}; padding sorts to the end.
${CBUFFER}StructuredBuffer<${T}> ${P}Keys : register(t0, space${S});
RWStructuredBuffer<${T}> ${P}Sorted : register(u0, space${S});
groupshared ${T} g${P}Keys[${N}];

[numthreads(${N}, 1, 1)]
void ${P}BitonicSort(uint3 ${DT} : SV_DispatchThreadID, uint ${LI} : SV_GroupIndex)
{
    g${P}Keys[${LI}] = ${DT}.x < ${P}Count ? ${P}Keys[${DT}.x] : ${PAD};
    ${BARRIER};
    for (uint size = 2; size <= ${N}; size <<= 1)
    {
        for (uint stride = size >> 1; stride > 0; stride >>= 1)
        {
            uint partner = ${LI} ^ stride;
            if (partner > ${LI})
            {
                ${T} mine = g${P}Keys[${LI}];
                ${T} theirs = g${P}Keys[partner];
                bool ascending = (${LI} & size) == 0;
                if ((mine ${CMP} theirs) == ascending)
                {
                    g${P}Keys[${LI}] = theirs;
                    g${P}Keys[partner] = mine;
                }
            }
            ${BARRIER};
        }
    }
    if (${DT}.x < ${P}Count)
        ${P}Sorted[${DT}.x] = g${P}Keys[${LI}];
}

"#,
        &[
            ("N", &n),
            ("ORDER", &if descending { "descending" } else { "ascending" }),
            ("CBUFFER", &count_cbuffer(rng, u, "")),
            ("T", &t.hlsl()),
            ("PAD", &if descending { t.zero(false) } else { padding }),
            ("BARRIER", &barrier(rng)),
            ("CMP", &if descending { "<" } else { ">" }),
        ],
    )
}

/// Element-wise map behind an early-return bounds guard.
fn map(rng: &mut Lcg, u: &Unit) -> String {
    let n = group_width(rng);
    let (what, expr) = match rng.below(5) {
        0 => ("gain and bias, clamped to [0, 1]", format!("saturate(x * {p}Gain + {p}Bias)", p = u.p)),
        1 => ("signed square root", format!("sign(x) * sqrt(abs(x)) * {}Gain", u.p)),
        2 => ("exponential falloff", format!("exp(-x * {p}Gain) + {p}Bias", p = u.p)),
        3 => ("a * x + y", format!("mad({p}Gain, x, {p}Other[{dt}.x])", p = u.p, dt = u.ids.dispatch)),
        _ => ("smooth threshold", format!("smoothstep({p}Bias, {p}Bias + {p}Gain, x)", p = u.p)),
    };
    let guard = if rng.chance(50) {
        format!("if ({dt}.x >= {p}Count)\n        return;", dt = u.ids.dispatch, p = u.p)
    } else {
        format!("[branch]\n    if ({dt}.x >= {p}Count)\n    {{\n        return;\n    }}", dt = u.ids.dispatch, p = u.p)
    };
    render(
        u,
        r#"// ${WHAT}, one element per thread.
${CBUFFER}StructuredBuffer<float> ${P}In : register(t0, space${S});
StructuredBuffer<float> ${P}Other : register(t1, space${S});
RWStructuredBuffer<float> ${P}Out : register(u0, space${S});

[numthreads(${N}, 1, 1)]
void ${P}Map(uint3 ${DT} : SV_DispatchThreadID)
{
    ${GUARD}
    float x = ${P}In[${DT}.x];
    ${P}Out[${DT}.x] = ${EXPR};
}

"#,
        &[
            ("WHAT", &what),
            ("CBUFFER", &count_cbuffer(rng, u, &format!("    float {p}Gain;\n    float {p}Bias;\n", p = u.p))),
            ("N", &n),
            ("GUARD", &guard),
            ("EXPR", &expr),
        ],
    )
}

/// Small math helpers (remap, smoothstep by hand, lerp) and a pass using them.
fn remap_helpers(rng: &mut Lcg, u: &Unit) -> String {
    let n = group_width(rng);
    let lo = rng.decimal(0.0, 0.5);
    let hi = rng.decimal(1.0, 4.0);
    render(
        u,
        r#"/// Maps x from [lo, hi] to [0, 1], clamped.
float ${P}Remap(float x, float lo, float hi)
{
    return saturate((x - lo) / max(hi - lo, EPSILON));
}

/// Hermite smoothing of t in [0, 1].
float ${P}Ease(float t)
{
    return t * t * (3.0 - 2.0 * t);
}

${CBUFFER}StructuredBuffer<float> ${P}Source : register(t0, space${S});
RWStructuredBuffer<float> ${P}Blended : register(u0, space${S});

[numthreads(${N}, 1, 1)]
void ${P}Blend(uint3 ${DT} : SV_DispatchThreadID)
{
    uint i = ${DT}.x;
    if (i < ${P}Count)
    {
        float t = ${P}Ease(${P}Remap(${P}Source[i], ${LO}, ${HI}));
        ${P}Blended[i] = lerp(${P}Low, ${P}High, clamp(t, 0.0, 1.0));
    }
}

"#,
        &[
            ("CBUFFER", &count_cbuffer(rng, u, &format!("    float {p}Low;\n    float {p}High;\n", p = u.p))),
            ("N", &n),
            ("LO", &lo),
            ("HI", &hi),
        ],
    )
}

/// Wave-level reduction: one atomic per wave instead of one per thread.
fn wave_reduce(rng: &mut Lcg, u: &Unit) -> String {
    let n = group_width(rng);
    let (what, value, reduce, atomic) = if rng.chance(50) {
        ("counts the samples above the threshold", format!("x > {}Threshold ? 1u : 0u", u.p), "WaveActiveSum(contribution)", "InterlockedAdd")
    } else {
        ("finds the largest quantized sample", "(uint)(max(x, 0.0) * 1024.0)".to_string(), "WaveActiveMax(contribution)", "InterlockedMax")
    };
    render(
        u,
        r#"// ${WHAT}, one atomic per wave.
${CBUFFER}StructuredBuffer<float> ${P}Samples : register(t0, space${S});
RWStructuredBuffer<uint> ${P}Result : register(u0, space${S});

[numthreads(${N}, 1, 1)]
void ${P}WaveReduce(uint3 ${DT} : SV_DispatchThreadID)
{
    float x = ${DT}.x < ${P}Count ? ${P}Samples[${DT}.x] : 0.0;
    uint contribution = ${VALUE};
    uint waveTotal = ${REDUCE};
    if (WaveIsFirstLane())
        ${ATOMIC}(${P}Result[0], waveTotal);
}

"#,
        &[
            ("WHAT", &what),
            ("CBUFFER", &count_cbuffer(rng, u, &format!("    float {}Threshold;\n", u.p))),
            ("N", &n),
            ("VALUE", &value),
            ("REDUCE", &reduce),
            ("ATOMIC", &atomic),
        ],
    )
}

/// Structured-buffer copy with an update: particles integrated one step.
fn particles(rng: &mut Lcg, u: &Unit) -> String {
    let n = group_width(rng);
    let drag = rng.decimal(0.9, 1.0);
    render(
        u,
        r#"struct ${P}Particle
{
    float3 position;
    float3 velocity;
    float age;
    uint flags;
};

cbuffer ${P}Step : register(b0, space${S})
{
    uint ${P}Count;
    float ${P}DeltaTime;
    float3 ${P}Gravity;
};
StructuredBuffer<${P}Particle> ${P}Current : register(t0, space${S});
RWStructuredBuffer<${P}Particle> ${P}Next : register(u0, space${S});

// Ping-pong update: read this frame's particles, write next frame's.
[numthreads(${N}, 1, 1)]
void ${P}Integrate(uint3 ${DT} : SV_DispatchThreadID)
{
    uint i = ${DT}.x;
    if (i >= ${P}Count)
        return;
    ${P}Particle p = ${P}Current[i];
    p.velocity = (p.velocity + ${P}Gravity * ${P}DeltaTime) * ${DRAG};
    p.position += p.velocity * ${P}DeltaTime;
    p.age += ${P}DeltaTime;
    ${P}Next[i] = p;
}

"#,
        &[("N", &n), ("DRAG", &drag)],
    )
}

/// A 2-D image pass, one pixel per thread: texture in, linear buffer out.
/// (Storing to an `RWTexture2D` at `dtid.xy` is left out: lockstep reports
/// every such store as a race between groups.)
fn image(rng: &mut Lcg, u: &Unit) -> String {
    let (x, y) = *rng.pick(&[(8, 8), (16, 16), (32, 8), (16, 4)]);
    let exposure = rng.decimal(0.5, 2.0);
    let curve = if rng.chance(50) { ("a Reinhard curve", "c.rgb / (1.0 + c.rgb)") } else { ("a gamma of 1/2.2", "pow(saturate(c.rgb), 1.0 / 2.2)") };
    render(
        u,
        r#"cbuffer ${P}Image : register(b0, space${S})
{
    uint ${P}Width;
    uint ${P}Height;
};
Texture2D<float4> ${P}Color : register(t0, space${S});
RWStructuredBuffer<float4> ${P}Exposed : register(u0, space${S});

// Exposure and ${CURVE_NAME}, per pixel.
[numthreads(${X}, ${Y}, 1)]
void ${P}ToneMap(uint3 ${DT} : SV_DispatchThreadID)
{
    if (${DT}.x >= ${P}Width || ${DT}.y >= ${P}Height)
        return;
    float4 c = ${P}Color[${DT}.xy] * ${EXPOSURE};
    ${P}Exposed[${DT}.y * ${P}Width + ${DT}.x] = float4(${CURVE}, c.a);
}

"#,
        &[("X", &x), ("Y", &y), ("EXPOSURE", &exposure), ("CURVE_NAME", &curve.0), ("CURVE", &curve.1)],
    )
}
