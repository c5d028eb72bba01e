//! What the op table says about the dtypes an op takes: the default answer of
//! `Device::supports` (ggml's supports_op), which a device narrows where it lacks a library
//! or a kernel.

use crate::base::dtype::DType;
use crate::ops::registry::OpKind;
use crate::ops::table::Dtypes;

/// Whether the table allows `op` on inputs whose first tensor has `dtypes[0]` (an empty
/// slice asks about the op in general: true).
pub fn table_allows(op: OpKind, dtypes: &[DType]) -> bool {
    let Some(&d) = dtypes.first() else {
        return true;
    };
    match op.def().dtypes {
        Dtypes::Float => d.is_float(),
        Dtypes::Numeric => d.is_float() || d.is_int(),
        Dtypes::Wide => d != DType::Bool,
        Dtypes::FloatF64 => d.is_floating(),
        Dtypes::Any => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_dtype_rules() {
        assert!(table_allows(OpKind::Add, &[DType::I64]));
        assert!(table_allows(OpKind::Add, &[DType::F64]));
        assert!(table_allows(OpKind::Add, &[DType::U8]));
        assert!(table_allows(OpKind::Topk, &[DType::I8]));
        assert!(table_allows(OpKind::Cumsum, &[DType::I8]));
        assert!(!table_allows(OpKind::CumsumBackward, &[DType::I8]));
        assert!(!table_allows(OpKind::Add, &[DType::Bool]));
        assert!(!table_allows(OpKind::Softmax, &[DType::I32]));
        assert!(table_allows(OpKind::Softmax, &[DType::BF16]));
        assert!(table_allows(OpKind::Permute, &[DType::Bool]));
        assert!(table_allows(OpKind::Conv, &[]));
    }
}
