//! Element types of tensors.

use crate::{Error, Result};

/// The element types of the op contract. The discriminants are the C ABI's `rb_dtype` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    F32 = 0,
    F16 = 1,
    BF16 = 2,
    I32 = 3,
    I64 = 4,
    Bool = 5,
    F64 = 6,
    I8 = 7,
    U8 = 8,
    I16 = 9,
}

impl DType {
    pub const ALL: [DType; 10] = [
        DType::F32,
        DType::F16,
        DType::BF16,
        DType::I32,
        DType::I64,
        DType::Bool,
        DType::F64,
        DType::I8,
        DType::U8,
        DType::I16,
    ];

    /// Converts the C ABI value, rejecting anything out of range.
    pub fn from_i32(v: i32) -> Result<Self> {
        DType::ALL
            .iter()
            .copied()
            .find(|d| *d as i32 == v)
            .ok_or_else(|| Error::invalid(format!("{v} is not an rb_dtype value (0..=9)")))
    }

    pub fn size(self) -> usize {
        match self {
            DType::F32 | DType::I32 => 4,
            DType::F16 | DType::BF16 | DType::I16 => 2,
            DType::I64 | DType::F64 => 8,
            DType::Bool | DType::I8 | DType::U8 => 1,
        }
    }

    /// f32, f16, bf16: the floating dtypes every floating op takes (f16/bf16 compute in
    /// f32). f64 is not among them: see [`DType::is_floating`].
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16 | DType::BF16)
    }

    /// i32, i64: the integer dtypes every integer op and every index takes. The small
    /// integers are not among them: see [`DType::is_integral`].
    pub fn is_int(self) -> bool {
        matches!(self, DType::I32 | DType::I64)
    }

    /// Every floating dtype, f64 included.
    pub fn is_floating(self) -> bool {
        self.is_float() || self == DType::F64
    }

    /// Every integer dtype: i8, u8, i16, i32, i64.
    pub fn is_integral(self) -> bool {
        matches!(
            self,
            DType::I8 | DType::U8 | DType::I16 | DType::I32 | DType::I64
        )
    }

    /// The dtypes added for exported models (issue 12): f64, i8, u8, i16.
    pub fn is_extended(self) -> bool {
        matches!(self, DType::F64 | DType::I8 | DType::U8 | DType::I16)
    }

    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::Bool => "bool",
            DType::F64 => "f64",
            DType::I8 => "i8",
            DType::U8 => "u8",
            DType::I16 => "i16",
        }
    }

    pub fn parse(s: &str) -> Result<Self> {
        Ok(match s {
            "f32" | "float32" | "float" => DType::F32,
            "f16" | "float16" | "half" => DType::F16,
            "bf16" | "bfloat16" => DType::BF16,
            "i32" | "int32" => DType::I32,
            "i64" | "int64" | "long" => DType::I64,
            "bool" => DType::Bool,
            "f64" | "float64" | "double" => DType::F64,
            "i8" | "int8" => DType::I8,
            "u8" | "uint8" => DType::U8,
            "i16" | "int16" | "short" => DType::I16,
            _ => return Err(Error::invalid(format!("unknown dtype '{s}'"))),
        })
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
