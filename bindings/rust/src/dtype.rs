//! `DType`, the element types of the ABI, and `Element`, the Rust types that match one.

use crate::error::{Error, Result, StatusCode};
use crate::sys;

/// An element type (`ctl_dtype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    F32,
    F64,
    F16,
    BF16,
    I8,
    U8,
    I32,
    I64,
    /// One byte, 0 or 1.
    Bool,
}

impl DType {
    /// Every dtype, in the ABI's order.
    pub const ALL: [DType; 9] =
        [DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8, DType::U8, DType::I32, DType::I64, DType::Bool];

    /// The raw `ctl_dtype`.
    pub fn to_raw(self) -> sys::ctl_dtype {
        match self {
            DType::F32 => sys::CTL_DTYPE_F32,
            DType::F64 => sys::CTL_DTYPE_F64,
            DType::F16 => sys::CTL_DTYPE_F16,
            DType::BF16 => sys::CTL_DTYPE_BF16,
            DType::I8 => sys::CTL_DTYPE_I8,
            DType::U8 => sys::CTL_DTYPE_U8,
            DType::I32 => sys::CTL_DTYPE_I32,
            DType::I64 => sys::CTL_DTYPE_I64,
            DType::Bool => sys::CTL_DTYPE_BOOL,
        }
    }

    /// The dtype of a raw `ctl_dtype`; None for a value this binding does not know.
    pub fn from_raw(dtype: sys::ctl_dtype) -> Option<DType> {
        DType::ALL.iter().copied().find(|d| d.to_raw() == dtype)
    }

    /// Bytes per element (`ctl_dtype_size`).
    pub fn size(self) -> usize {
        // SAFETY: a plain function of its argument.
        unsafe { sys::ctl_dtype_size(self.to_raw()) }
    }

    /// The library's name: "f32", "bf16", ...
    pub fn name(self) -> String {
        // SAFETY: ctl_dtype_name returns a static string.
        unsafe { crate::error::string_from(sys::ctl_dtype_name(self.to_raw())) }
    }

    /// True for f32, f64, f16 and bf16.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64 | DType::F16 | DType::BF16)
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type whose values are the elements of a Catalyst dtype, bit for bit: `f32`,
/// `f64`, `i8`, `u8`, `i32`, `i64` and `bool` (sealed: the binding copies raw bytes, so only
/// types whose every byte pattern the ABI can produce are allowed; `bool` is read as bytes
/// and compared with zero).
pub trait Element: Copy + sealed::Sealed + 'static {
    /// The dtype these values are.
    const DTYPE: DType;

    #[doc(hidden)]
    /// Reads `count` elements of a tensor of this dtype through `read`, which fills a byte
    /// buffer of the given length.
    fn read_host(count: usize, read: &mut dyn FnMut(*mut u8, usize) -> Result<()>) -> Result<Vec<Self>>;
}

macro_rules! plain_element {
    ($($type:ty => $dtype:ident),*) => {$(
        impl sealed::Sealed for $type {}
        impl Element for $type {
            const DTYPE: DType = DType::$dtype;
            fn read_host(count: usize, read: &mut dyn FnMut(*mut u8, usize) -> Result<()>) -> Result<Vec<Self>> {
                let mut values: Vec<$type> = vec![<$type>::default(); count];
                read(values.as_mut_ptr() as *mut u8, count * std::mem::size_of::<$type>())?;
                Ok(values)
            }
        }
    )*};
}
plain_element!(f32 => F32, f64 => F64, i8 => I8, u8 => U8, i32 => I32, i64 => I64);

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn read_host(count: usize, read: &mut dyn FnMut(*mut u8, usize) -> Result<()>) -> Result<Vec<Self>> {
        // Read as bytes: a tensor imported through DLPack may hold bytes other than 0 and 1,
        // which are not valid Rust bools.
        let mut bytes = vec![0u8; count];
        read(bytes.as_mut_ptr(), count)?;
        Ok(bytes.into_iter().map(|b| b != 0).collect())
    }
}

/// The error for a Rust element type that is not the tensor's dtype.
pub(crate) fn dtype_mismatch(what: &str, actual: DType, wanted: DType) -> Error {
    Error::new(
        StatusCode::InvalidArgument,
        format!("{}: the tensor is {}, not {} (the Rust element type asked for)", what, actual.name(), wanted.name()),
    )
}
