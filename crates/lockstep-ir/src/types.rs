//! Scalar types, memory spaces, scopes and the barrier descriptor.

use std::fmt;

/// The IR is scalar: vectors, matrices and structs are split into scalars by
/// the front ends; aggregates in memory are arrays of scalar cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Void,
    Bool,
    /// 8- and 16-bit integers are storage types (`char`, `short`, `uint8_t`):
    /// front ends promote them to 32 bits for arithmetic, as C does.
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F16,
    F32,
    F64,
    /// A pointer into some memory space (cell-granular).
    Ptr(MemSpace),
}

impl Type {
    pub fn is_int(self) -> bool {
        matches!(self, Type::I8 | Type::U8 | Type::I16 | Type::U16 | Type::I32 | Type::U32 | Type::I64 | Type::U64)
    }
    pub fn is_signed(self) -> bool {
        matches!(self, Type::I8 | Type::I16 | Type::I32 | Type::I64)
    }
    /// An integer narrower than 32 bits, which C promotes before arithmetic.
    pub fn is_narrow_int(self) -> bool {
        matches!(self, Type::I8 | Type::U8 | Type::I16 | Type::U16)
    }
    pub fn is_float(self) -> bool {
        matches!(self, Type::F16 | Type::F32 | Type::F64)
    }
    pub fn bits(self) -> u32 {
        match self {
            Type::Void => 0,
            Type::Bool => 1,
            Type::I8 | Type::U8 => 8,
            Type::I16 | Type::U16 | Type::F16 => 16,
            Type::I32 | Type::U32 | Type::F32 => 32,
            Type::I64 | Type::U64 | Type::F64 | Type::Ptr(_) => 64,
        }
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Void => f.write_str("void"),
            Type::Bool => f.write_str("bool"),
            Type::I8 => f.write_str("i8"),
            Type::U8 => f.write_str("u8"),
            Type::I16 => f.write_str("i16"),
            Type::U16 => f.write_str("u16"),
            Type::I32 => f.write_str("i32"),
            Type::U32 => f.write_str("u32"),
            Type::I64 => f.write_str("i64"),
            Type::U64 => f.write_str("u64"),
            Type::F16 => f.write_str("f16"),
            Type::F32 => f.write_str("f32"),
            Type::F64 => f.write_str("f64"),
            Type::Ptr(s) => write!(f, "ptr<{s}>"),
        }
    }
}

/// Where memory lives, which decides who can see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemSpace {
    /// One copy per thread.
    Private,
    /// One copy per thread group (`groupshared`, `__shared__`, `__local`).
    Shared,
    /// Visible to the whole dispatch (UAVs, global buffers, `__device__`).
    Device,
    /// Read-only for the dispatch (cbuffers, `__constant__`, SRVs).
    Constant,
    /// Not known statically (a generic pointer): may be shared or device.
    Unknown,
}

impl fmt::Display for MemSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemSpace::Private => "private",
            MemSpace::Shared => "shared",
            MemSpace::Device => "device",
            MemSpace::Constant => "constant",
            MemSpace::Unknown => "unknown",
        })
    }
}

/// A set of memory spaces that a barrier orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Spaces(u8);

impl Spaces {
    pub const NONE: Spaces = Spaces(0);
    pub const SHARED: Spaces = Spaces(1);
    pub const DEVICE: Spaces = Spaces(2);
    pub const ALL: Spaces = Spaces(3);

    pub fn contains(self, space: MemSpace) -> bool {
        match space {
            MemSpace::Shared => self.0 & 1 != 0,
            MemSpace::Device => self.0 & 2 != 0,
            MemSpace::Unknown => self.0 != 0,
            MemSpace::Private | MemSpace::Constant => true,
        }
    }
    pub fn union(self, other: Spaces) -> Spaces {
        Spaces(self.0 | other.0)
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for Spaces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => f.write_str("none"),
            1 => f.write_str("shared"),
            2 => f.write_str("device"),
            _ => f.write_str("shared+device"),
        }
    }
}

/// Which threads an operation involves; ordered from narrowest to widest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// Only the calling thread (used as the execution scope of a fence).
    None,
    Wave,
    Group,
    Device,
    System,
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Scope::None => "none",
            Scope::Wave => "wave",
            Scope::Group => "group",
            Scope::Device => "device",
            Scope::System => "system",
        })
    }
}

/// `__syncthreads_count/and/or`: the barrier also reduces a predicate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierReduce {
    Count,
    And,
    Or,
}

/// A barrier or fence, described exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Barrier {
    /// Which threads must all arrive before any continues (`None` = a fence only).
    pub exec: Scope,
    /// How far the memory ordering reaches.
    pub mem: Scope,
    /// Which memory the ordering applies to.
    pub spaces: Spaces,
    /// Set for barriers whose result is a reduction of a predicate.
    pub reduce: Option<BarrierReduce>,
}

impl Barrier {
    /// True when every thread of the group must arrive (a synchronizing barrier).
    pub fn syncs_group(&self) -> bool {
        self.exec >= Scope::Group
    }
    pub fn is_fence_only(&self) -> bool {
        self.exec == Scope::None
    }
}

/// Thread-identity and launch-shape values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Builtin {
    /// Thread id inside the group, per axis (`SV_GroupThreadID`, `threadIdx`).
    LocalId(u8),
    /// Group id inside the dispatch (`SV_GroupID`, `blockIdx`).
    GroupId(u8),
    /// Threads per group (`blockDim`; `[numthreads]` when known is folded to constants).
    GroupSize(u8),
    /// Groups in the dispatch (`gridDim`).
    NumGroups(u8),
    /// Flattened thread index in the group (`SV_GroupIndex`).
    LocalIndex,
    /// Lane in the wave (`WaveGetLaneIndex`, `%laneid`).
    LaneId,
    /// Lanes per wave (`WaveGetLaneCount`, `warpSize`).
    WaveSize,
}

impl fmt::Display for Builtin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const AXES: [&str; 3] = ["x", "y", "z"];
        match self {
            Builtin::LocalId(a) => write!(f, "local_id.{}", AXES[*a as usize % 3]),
            Builtin::GroupId(a) => write!(f, "group_id.{}", AXES[*a as usize % 3]),
            Builtin::GroupSize(a) => write!(f, "group_size.{}", AXES[*a as usize % 3]),
            Builtin::NumGroups(a) => write!(f, "num_groups.{}", AXES[*a as usize % 3]),
            Builtin::LocalIndex => f.write_str("local_index"),
            Builtin::LaneId => f.write_str("lane_id"),
            Builtin::WaveSize => f.write_str("wave_size"),
        }
    }
}
