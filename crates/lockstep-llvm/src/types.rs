//! LLVM types, as far as the reader needs them: pointer address spaces,
//! element sizes for GEP offsets, and the scalar IR type of a value.

use crate::lexer::Tok;
use lockstep_ir::{MemSpace, Type};
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq)]
pub enum LType {
    Void,
    Int(u32),
    Half,
    Float,
    Double,
    Ptr(u32),
    Array(u64, Box<LType>),
    Vector(u64, Box<LType>),
    Struct(Vec<LType>),
    Named(String),
    Label,
    Metadata,
    /// `token`, `opaque`, target extension types and the like.
    Other,
}

/// Which GPU target the module is for; it decides what an address space means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Nvptx,
    Amdgpu,
    Spir,
    /// No or an unknown triple: read with NVPTX's numbering.
    Other,
}

impl Target {
    pub fn from_triple(triple: &str) -> Target {
        if triple.starts_with("nvptx") {
            Target::Nvptx
        } else if triple.starts_with("amdgcn") || triple.starts_with("r600") {
            Target::Amdgpu
        } else if triple.starts_with("spir") {
            Target::Spir
        } else {
            Target::Other
        }
    }

    pub fn space(self, addrspace: u32) -> MemSpace {
        match (self, addrspace) {
            (Target::Spir, 0) => MemSpace::Private,
            (Target::Spir, 1) => MemSpace::Device,
            (Target::Spir, 2) => MemSpace::Constant,
            (Target::Spir, 3) => MemSpace::Shared,
            (Target::Spir, _) => MemSpace::Unknown,
            (Target::Amdgpu, 7 | 8) => MemSpace::Device,
            (Target::Amdgpu, 6) => MemSpace::Constant,
            (_, 1) => MemSpace::Device,
            (_, 3) => MemSpace::Shared,
            (_, 4) => MemSpace::Constant,
            (_, 5) => MemSpace::Private,
            _ => MemSpace::Unknown,
        }
    }
}

/// Named struct types (`%struct.S = type { ... }`), for sizes.
pub type TypeTable = HashMap<String, LType>;

/// Nesting limit for named types that refer to each other.
const DEPTH: u32 = 32;

impl LType {
    /// Scalar cells an object of this type occupies.
    pub fn cells(&self, named: &TypeTable) -> u64 {
        self.measure(named, DEPTH, &|_| 1)
    }

    /// Bytes, without padding (enough to turn byte offsets into cells).
    pub fn bytes(&self, named: &TypeTable) -> u64 {
        self.measure(named, DEPTH, &|t| match t {
            LType::Int(b) => (*b as u64).div_ceil(8).max(1),
            LType::Half => 2,
            LType::Float => 4,
            LType::Double | LType::Ptr(_) => 8,
            _ => 1,
        })
    }

    fn measure(&self, named: &TypeTable, depth: u32, scalar: &dyn Fn(&LType) -> u64) -> u64 {
        if depth == 0 {
            return 1;
        }
        match self {
            LType::Array(n, e) | LType::Vector(n, e) => n.saturating_mul(e.measure(named, depth - 1, scalar)),
            LType::Struct(fields) => fields.iter().map(|f| f.measure(named, depth - 1, scalar)).sum::<u64>().max(1),
            LType::Named(n) => named.get(n).map(|t| t.measure(named, depth - 1, scalar)).unwrap_or(1),
            t => scalar(t),
        }
    }

    /// The innermost element of arrays and vectors.
    pub fn scalar(&self) -> &LType {
        match self {
            LType::Array(_, e) | LType::Vector(_, e) => e.scalar(),
            t => t,
        }
    }

    /// Array dimensions, outermost first.
    pub fn dims(&self) -> Vec<u64> {
        match self {
            LType::Array(n, e) => std::iter::once(*n).chain(e.dims()).collect(),
            _ => Vec::new(),
        }
    }

    /// The scalar IR type values of this type are given.
    pub fn ir(&self, target: Target) -> Type {
        match self.scalar() {
            LType::Int(1) => Type::Bool,
            LType::Int(b) if *b <= 32 => Type::I32,
            LType::Int(_) | LType::Struct(_) | LType::Named(_) => Type::I64,
            LType::Half => Type::F16,
            LType::Float => Type::F32,
            LType::Double => Type::F64,
            LType::Ptr(a) => Type::Ptr(target.space(*a)),
            _ => Type::Void,
        }
    }

    /// The field a constant index selects, and the cells before it.
    pub fn step(&self, index: Option<i128>, named: &TypeTable) -> Option<(LType, u64)> {
        match self {
            LType::Array(_, e) | LType::Vector(_, e) => Some(((**e).clone(), e.cells(named))),
            LType::Struct(fields) => {
                let i = usize::try_from(index?).ok()?;
                let before = fields.iter().take(i).map(|f| f.cells(named)).sum();
                Some((fields.get(i)?.clone(), before))
            }
            LType::Named(n) => named.get(n)?.step(index, named),
            _ => None,
        }
    }
}

/// A cursor over tokens with the parsing helpers shared by all instructions.
pub struct Cursor<'t> {
    pub toks: &'t [Tok],
    pub pos: usize,
}

pub type PResult<T> = Result<T, String>;

impl<'t> Cursor<'t> {
    pub fn new(toks: &'t [Tok]) -> Cursor<'t> {
        Cursor { toks, pos: 0 }
    }
    pub fn peek(&self) -> Option<&'t Tok> {
        self.toks.get(self.pos)
    }
    pub fn peek_at(&self, k: usize) -> Option<&'t Tok> {
        self.toks.get(self.pos + k)
    }
    pub fn next(&mut self) -> Option<&'t Tok> {
        let t = self.toks.get(self.pos);
        self.pos += 1;
        t
    }
    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }
    pub fn is_punct(&self, c: char) -> bool {
        self.peek() == Some(&Tok::Punct(c))
    }
    pub fn is_ident(&self, s: &str) -> bool {
        matches!(self.peek(), Some(Tok::Ident(x)) if x == s)
    }
    pub fn eat_punct(&mut self, c: char) -> bool {
        let yes = self.is_punct(c);
        if yes {
            self.pos += 1;
        }
        yes
    }
    pub fn eat_ident(&mut self, s: &str) -> bool {
        let yes = self.is_ident(s);
        if yes {
            self.pos += 1;
        }
        yes
    }
    pub fn expect_punct(&mut self, c: char) -> PResult<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            Err(format!("expected `{c}`, found {:?}", self.peek()))
        }
    }
    pub fn int(&mut self) -> PResult<i128> {
        match self.next() {
            Some(Tok::Int(n)) => Ok(*n),
            t => Err(format!("expected an integer, found {t:?}")),
        }
    }
    pub fn ident(&mut self) -> PResult<&'t str> {
        match self.next() {
            Some(Tok::Ident(s)) => Ok(s),
            t => Err(format!("expected a keyword, found {t:?}")),
        }
    }

    /// Skips a balanced `(...)`, `[...]`, `{...}` or `<...>` group starting at the cursor.
    pub fn skip_group(&mut self) -> PResult<()> {
        let mut depth = 0i32;
        loop {
            match self.next() {
                Some(Tok::Punct('(' | '[' | '{' | '<')) => depth += 1,
                Some(Tok::Punct(')' | ']' | '}' | '>')) => depth -= 1,
                Some(_) => {}
                None => return Err("unbalanced brackets".into()),
            }
            if depth <= 0 {
                return Ok(());
            }
        }
    }

    /// `addrspace(N)`, when present.
    pub fn addrspace(&mut self) -> PResult<Option<u32>> {
        if !self.eat_ident("addrspace") {
            return Ok(None);
        }
        self.expect_punct('(')?;
        let n = self.int()?;
        self.expect_punct(')')?;
        u32::try_from(n).map(Some).map_err(|_| "bad address space".to_string())
    }

    pub fn is_type_start(&self) -> bool {
        match self.peek() {
            Some(Tok::Ident(s)) => {
                matches!(
                    s.as_str(),
                    "void"
                        | "half"
                        | "bfloat"
                        | "float"
                        | "double"
                        | "x86_fp80"
                        | "fp128"
                        | "ppc_fp128"
                        | "ptr"
                        | "label"
                        | "metadata"
                        | "token"
                        | "target"
                ) || (s.len() > 1 && s.starts_with('i') && s[1..].bytes().all(|b| b.is_ascii_digit()))
            }
            Some(Tok::Punct('[' | '<' | '{')) | Some(Tok::Local(_)) => true,
            _ => false,
        }
    }

    pub fn ty(&mut self) -> PResult<LType> {
        let mut t = match self.next() {
            Some(Tok::Ident(s)) => match s.as_str() {
                "void" => LType::Void,
                "half" | "bfloat" => LType::Half,
                "float" => LType::Float,
                "double" | "x86_fp80" | "fp128" | "ppc_fp128" => LType::Double,
                "ptr" => LType::Ptr(self.addrspace()?.unwrap_or(0)),
                "label" => LType::Label,
                "metadata" => LType::Metadata,
                "token" | "opaque" | "x86_amx" | "x86_mmx" => LType::Other,
                "target" => {
                    self.skip_group()?;
                    LType::Other
                }
                s if s.len() > 1 && s.starts_with('i') => LType::Int(s[1..].parse().map_err(|_| format!("bad type `{s}`"))?),
                s => return Err(format!("unknown type `{s}`")),
            },
            Some(Tok::Punct('[')) => {
                let n = self.int()?;
                if !self.eat_ident("x") {
                    return Err("expected `x` in array type".into());
                }
                let e = self.ty()?;
                self.expect_punct(']')?;
                LType::Array(n.max(0) as u64, Box::new(e))
            }
            Some(Tok::Punct('<')) if self.is_punct('{') => {
                self.pos += 1;
                let fields = self.fields('}')?;
                self.expect_punct('>')?;
                LType::Struct(fields)
            }
            Some(Tok::Punct('<')) => {
                self.eat_ident("vscale");
                self.eat_ident("x");
                let n = self.int()?;
                if !self.eat_ident("x") {
                    return Err("expected `x` in vector type".into());
                }
                let e = self.ty()?;
                self.expect_punct('>')?;
                LType::Vector(n.max(0) as u64, Box::new(e))
            }
            Some(Tok::Punct('{')) => LType::Struct(self.fields('}')?),
            Some(Tok::Local(name)) => LType::Named(name.clone()),
            t => return Err(format!("expected a type, found {t:?}")),
        };
        // Typed pointers of older IR: `float addrspace(3)*`, `i32**`.
        loop {
            if self.is_ident("addrspace") && self.peek_at(4) == Some(&Tok::Punct('*')) {
                let a = self.addrspace()?.unwrap_or(0);
                self.pos += 1;
                t = LType::Ptr(a);
            } else if self.eat_punct('*') {
                t = LType::Ptr(0);
            } else {
                return Ok(t);
            }
        }
    }

    fn fields(&mut self, close: char) -> PResult<Vec<LType>> {
        let mut out = Vec::new();
        if self.eat_punct(close) {
            return Ok(out);
        }
        loop {
            out.push(self.ty()?);
            if self.eat_punct(close) {
                return Ok(out);
            }
            self.expect_punct(',')?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::tokenize;

    fn ty(s: &str) -> LType {
        let toks = tokenize(s).unwrap();
        Cursor::new(&toks).ty().unwrap()
    }

    #[test]
    fn types_and_their_sizes() {
        let named = TypeTable::from([("struct.P".to_string(), ty("{ float, [3 x i32] }"))]);
        assert_eq!(ty("ptr addrspace(3)"), LType::Ptr(3));
        assert_eq!(ty("float addrspace(3)*"), LType::Ptr(3));
        assert_eq!(ty("[16 x [16 x float]]").cells(&named), 256);
        assert_eq!(ty("[4 x %struct.P]").cells(&named), 16);
        assert_eq!(ty("<4 x half>").bytes(&named), 8);
        assert_eq!(ty("<{ i8, i32 }>").bytes(&named), 5);
        assert_eq!(ty("%struct.P").step(Some(1), &named).unwrap().1, 1);
        assert_eq!(Target::Spir.space(0), MemSpace::Private);
        assert_eq!(Target::Nvptx.space(0), MemSpace::Unknown);
        assert_eq!(Target::Amdgpu.space(3), MemSpace::Shared);
    }
}
