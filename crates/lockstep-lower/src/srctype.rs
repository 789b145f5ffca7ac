//! Source-level types: what a C-family declaration means before the IR
//! splits it into scalars.

use crate::dialect::ResourceKind;
use lockstep_ir::{MemSpace, Type};

#[derive(Clone, Debug, PartialEq)]
pub enum SrcType {
    Void,
    Scalar(Type),
    Vector(Type, u32),
    Matrix(Type, u32, u32),
    Array(Box<SrcType>, u64),
    Struct(usize),
    Pointer(Box<SrcType>, MemSpace),
    Resource { kind: ResourceKind, elem: Box<SrcType>, writable: bool },
    /// A cooperative-groups object whose `.sync()` is a barrier of this scope,
    /// with its width in threads when the type or constructor fixes it
    /// (`thread_block_tile<16>`).
    SyncObject(lockstep_ir::Scope, Option<u32>),
    /// A pointer to a function: one cell whose value names the function (one
    /// more than an index into the module's function values; 0 is null), so
    /// that a call through it inlines the function it names.
    Function,
}

/// Structs of more cells than this keep numbered cells in messages.
pub const MAX_NAMED_CELLS: u64 = 1024;

/// A struct or a union. A member with an empty name is an anonymous
/// struct or union whose members are named as if they were the outer one's.
#[derive(Clone, Debug)]
pub struct StructDef {
    pub fields: Vec<(String, SrcType)>,
    /// Every member starts at the first cell and the whole is as large as
    /// its largest member.
    pub union: bool,
}

impl StructDef {
    /// The member laid out as the whole: a union's largest, a struct's none.
    fn widest_member<'s>(&'s self, structs: &[StructDef]) -> Option<&'s SrcType> {
        self.fields.iter().map(|(_, t)| t).max_by_key(|t| t.cells(structs))
    }

    /// First cell and type of a member, looked up through anonymous members.
    pub fn member(&self, structs: &[StructDef], name: &str) -> Option<(u64, SrcType)> {
        let mut at = 0u64;
        for (field, ty) in &self.fields {
            if field == name {
                return Some((at, ty.clone()));
            }
            if let (true, SrcType::Struct(inner)) = (field.is_empty(), ty) {
                if let Some((offset, found)) = structs.get(*inner).and_then(|d| d.member(structs, name)) {
                    return Some((at + offset, found));
                }
            }
            if !self.union {
                at += ty.cells(structs);
            }
        }
        None
    }

    /// The names members are reached by, anonymous members' included.
    pub fn member_names(&self, structs: &[StructDef]) -> Vec<String> {
        let mut out = Vec::new();
        for (field, ty) in &self.fields {
            match (field.is_empty(), ty) {
                (true, SrcType::Struct(inner)) => out.extend(structs.get(*inner).map(|d| d.member_names(structs)).unwrap_or_default()),
                _ => out.push(field.clone()),
            }
        }
        out
    }
}

impl SrcType {
    /// Number of scalar cells.
    pub fn cells(&self, structs: &[StructDef]) -> u64 {
        match self {
            SrcType::Void | SrcType::Resource { .. } | SrcType::SyncObject(..) => 0,
            SrcType::Scalar(_) | SrcType::Pointer(..) | SrcType::Function => 1,
            SrcType::Vector(_, n) => *n as u64,
            SrcType::Matrix(_, r, c) => (*r * *c) as u64,
            SrcType::Array(e, n) => e.cells(structs).saturating_mul(*n),
            SrcType::Struct(i) => match structs.get(*i) {
                Some(s) if s.union => s.widest_member(structs).map_or(0, |t| t.cells(structs)),
                Some(s) => s.fields.iter().map(|(_, t)| t.cells(structs)).sum(),
                None => 0,
            },
        }
    }

    /// Scalar IR types of every cell, in layout order.
    pub fn scalar_types(&self, structs: &[StructDef], out: &mut Vec<Type>) {
        match self {
            SrcType::Scalar(t) => out.push(*t),
            SrcType::Function => out.push(Type::I32),
            SrcType::Pointer(_, s) => out.push(Type::Ptr(*s)),
            SrcType::Vector(t, n) => out.extend(std::iter::repeat_n(*t, *n as usize)),
            SrcType::Matrix(t, r, c) => out.extend(std::iter::repeat_n(*t, (*r * *c) as usize)),
            SrcType::Array(e, n) => {
                let mut one = Vec::new();
                e.scalar_types(structs, &mut one);
                for _ in 0..(*n).min(1 << 20) {
                    out.extend_from_slice(&one);
                }
            }
            SrcType::Struct(i) => match structs.get(*i) {
                Some(s) if s.union => {
                    if let Some(t) = s.widest_member(structs) {
                        t.scalar_types(structs, out);
                    }
                }
                Some(s) => {
                    for (_, t) in &s.fields {
                        t.scalar_types(structs, out);
                    }
                }
                None => {}
            },
            SrcType::Void | SrcType::Resource { .. } | SrcType::SyncObject(..) => {}
        }
    }

    /// How the source names each cell of a struct, in layout order, as
    /// suffixes (`.pos.x`, `.mass`, `.hist[3]`); empty for anything but a
    /// struct, or one of more than [`MAX_NAMED_CELLS`] cells.
    pub fn struct_cell_names(&self, structs: &[StructDef]) -> Vec<String> {
        let mut out = Vec::new();
        if matches!(self, SrcType::Struct(_)) && self.cells(structs) <= MAX_NAMED_CELLS {
            self.cell_names(structs, &mut String::new(), &mut out);
        }
        out
    }

    fn cell_names(&self, structs: &[StructDef], path: &mut String, out: &mut Vec<String>) {
        let at = path.len();
        match self {
            SrcType::Scalar(_) | SrcType::Pointer(..) | SrcType::Function => out.push(path.clone()),
            SrcType::Vector(_, n) => {
                for i in 0..*n as usize {
                    out.push(format!("{path}.{}", ["x", "y", "z", "w"].get(i).copied().unwrap_or("?")));
                }
            }
            SrcType::Matrix(_, r, c) => {
                for i in 0..*r {
                    for j in 0..*c {
                        out.push(format!("{path}._m{i}{j}"));
                    }
                }
            }
            SrcType::Array(e, n) => {
                for i in 0..*n {
                    path.push_str(&format!("[{i}]"));
                    e.cell_names(structs, path, out);
                    path.truncate(at);
                }
            }
            SrcType::Struct(i) => {
                let Some(s) = structs.get(*i) else { return };
                let widest = if s.union { s.widest_member(structs) } else { None };
                for (name, t) in &s.fields {
                    if widest.is_some_and(|w| !std::ptr::eq(w, t)) {
                        continue;
                    }
                    if !name.is_empty() {
                        path.push('.');
                        path.push_str(name);
                    }
                    t.cell_names(structs, path, out);
                    path.truncate(at);
                }
            }
            SrcType::Void | SrcType::Resource { .. } | SrcType::SyncObject(..) => {}
        }
    }

    /// The scalar type of the first cell (the cell type of memory holding it).
    pub fn scalar(&self, structs: &[StructDef]) -> Type {
        match self {
            SrcType::Scalar(t) | SrcType::Vector(t, _) | SrcType::Matrix(t, _, _) => *t,
            SrcType::Pointer(_, s) => Type::Ptr(*s),
            SrcType::Function => Type::I32,
            SrcType::Array(e, _) => e.scalar(structs),
            SrcType::Struct(i) => structs
                .get(*i)
                .and_then(|s| s.fields.first())
                .map(|(_, t)| t.scalar(structs))
                .unwrap_or(Type::U32),
            _ => Type::U32,
        }
    }

    pub fn with_scalar(&self, t: Type) -> SrcType {
        match self {
            SrcType::Vector(_, n) => SrcType::Vector(t, *n),
            SrcType::Matrix(_, r, c) => SrcType::Matrix(t, *r, *c),
            _ => SrcType::Scalar(t),
        }
    }

    /// Whether this value lives in SSA registers (as opposed to memory).
    pub fn is_register(&self) -> bool {
        matches!(self, SrcType::Scalar(_) | SrcType::Vector(..) | SrcType::Matrix(..) | SrcType::Pointer(..) | SrcType::Struct(_) | SrcType::Function)
    }

    /// Whether an array is part of the value (a struct member, at any depth).
    pub fn contains_array(&self, structs: &[StructDef]) -> bool {
        match self {
            SrcType::Array(..) => true,
            SrcType::Struct(i) => structs.get(*i).is_some_and(|s| s.fields.iter().any(|(_, t)| t.contains_array(structs))),
            _ => false,
        }
    }

    /// Array dimensions and the element below them (`float a[4][8]` → [4, 8], float).
    pub fn array_dims(&self) -> (Vec<u64>, &SrcType) {
        let mut dims = Vec::new();
        let mut t = self;
        while let SrcType::Array(e, n) = t {
            dims.push(*n);
            t = e;
        }
        (dims, t)
    }
}

/// Parses a scalar / vector / matrix type name (`float`, `uint3`, `half4`,
/// `float4x4`, `min16float2`, `int`, `unsigned int`, `float4` in CUDA too).
pub fn parse_numeric(name: &str) -> Option<SrcType> {
    let name = name.trim();
    let scalar_of = |base: &str| -> Option<Type> {
        Some(match base {
            "bool" => Type::Bool,
            "char" | "signed char" | "int8_t" => Type::I8,
            "unsigned char" | "uchar" | "uint8_t" => Type::U8,
            "short" | "signed short" | "int16_t" => Type::I16,
            "ushort" | "uint16_t" | "unsigned short" => Type::U16,
            "int" | "int32_t" | "min16int" | "min12int" | "signed" | "dword_signed" | "long" => Type::I32,
            "uint" | "unsigned" | "unsigned int" | "uint32_t" | "min16uint" | "dword" | "size_t" | "unsigned long" => Type::U32,
            "int64_t" | "long long" | "longlong" | "long long int" | "ptrdiff_t" => Type::I64,
            "uint64_t" | "unsigned long long" | "ulonglong" | "unsigned long long int" | "ulong" => Type::U64,
            "half" | "float16_t" | "min16float" | "min10float" | "__half" => Type::F16,
            // bfloat16 values are held in f32 cells (the conversions round them).
            "float" | "float32_t" | "__nv_bfloat16" | "nv_bfloat16" | "__bf16" => Type::F32,
            "double" | "float64_t" => Type::F64,
            _ => return None,
        })
    };
    if name == "void" {
        return Some(SrcType::Void);
    }
    if let Some(t) = scalar_of(name) {
        return Some(SrcType::Scalar(t));
    }
    // Vector and matrix suffixes: float4, float4x4, uint2, half3 ...
    let split = name
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_digit() || *c == 'x')
        .last()
        .map(|(i, _)| i);
    let i = split?;
    let (base, dims) = name.split_at(i);
    let base_t = scalar_of(base).or(match base {
        "dim" => Some(Type::U32),
        "longlong" => Some(Type::I64),
        "ulonglong" => Some(Type::U64),
        _ => None,
    })?;
    let mut parts = dims.split('x');
    let a: u32 = parts.next()?.parse().ok()?;
    match parts.next() {
        None if (1..=4).contains(&a) => Some(if a == 1 { SrcType::Scalar(base_t) } else { SrcType::Vector(base_t, a) }),
        // OpenCL's wide vectors (`float8`, `half16`), and the 32-wide ones
        // of vendor compilers (Adreno's `float32`).
        None if a == 8 || a == 16 || a == 32 => Some(SrcType::Vector(base_t, a)),
        Some(b) => {
            let b: u32 = b.parse().ok()?;
            ((1..=4).contains(&a) && (1..=4).contains(&b)).then_some(SrcType::Matrix(base_t, a, b))
        }
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_type_names() {
        assert_eq!(parse_numeric("uint3"), Some(SrcType::Vector(Type::U32, 3)));
        assert_eq!(parse_numeric("float4x4"), Some(SrcType::Matrix(Type::F32, 4, 4)));
        assert_eq!(parse_numeric("float16"), Some(SrcType::Vector(Type::F32, 16)));
        assert_eq!(parse_numeric("half8"), Some(SrcType::Vector(Type::F16, 8)));
        assert_eq!(parse_numeric("float16_t"), Some(SrcType::Scalar(Type::F16)));
        assert_eq!(parse_numeric("half2"), Some(SrcType::Vector(Type::F16, 2)));
        assert_eq!(parse_numeric("min16float2"), Some(SrcType::Vector(Type::F16, 2)));
        assert_eq!(parse_numeric("dim3"), Some(SrcType::Vector(Type::U32, 3)));
        assert_eq!(parse_numeric("unsigned int"), Some(SrcType::Scalar(Type::U32)));
        assert_eq!(parse_numeric("float1"), Some(SrcType::Scalar(Type::F32)));
        assert_eq!(parse_numeric("Texture2D"), None);
        assert_eq!(parse_numeric("float5"), None);
        assert_eq!(parse_numeric("float32"), Some(SrcType::Vector(Type::F32, 32)));
        assert_eq!(parse_numeric("uchar4"), Some(SrcType::Vector(Type::U8, 4)));
        assert_eq!(parse_numeric("char"), Some(SrcType::Scalar(Type::I8)));
        assert_eq!(parse_numeric("short2"), Some(SrcType::Vector(Type::I16, 2)));
        assert_eq!(parse_numeric("uint16_t"), Some(SrcType::Scalar(Type::U16)));
    }
}
