//! `Error`: a failed C call's status code and message, as a Rust error value.

use std::ffi::CStr;
use std::fmt;

use crate::sys;

/// The code of a failed call (`ctl_status_code` without `CTL_STATUS_OK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StatusCode {
    /// A bad handle, dtype, shape, axis or attribute.
    InvalidArgument,
    /// A host or device allocation failed.
    OutOfMemory,
    /// Valid, but this device or plugin cannot do it.
    Unsupported,
    /// No such plugin, device or index.
    NotFound,
    /// The device stopped answering.
    DeviceLost,
    /// A bug in Catalyst or a plugin.
    Internal,
    /// An index, axis or size past its bound.
    OutOfRange,
    /// The object is in the wrong state for this call.
    FailedPrecondition,
    /// A code this binding does not know (a newer library).
    Other(u32),
}

impl StatusCode {
    /// The code for a raw `ctl_status_code` (never called with `CTL_STATUS_OK`).
    pub fn from_raw(code: sys::ctl_status_code) -> StatusCode {
        match code {
            sys::CTL_STATUS_INVALID_ARGUMENT => StatusCode::InvalidArgument,
            sys::CTL_STATUS_OUT_OF_MEMORY => StatusCode::OutOfMemory,
            sys::CTL_STATUS_UNSUPPORTED => StatusCode::Unsupported,
            sys::CTL_STATUS_NOT_FOUND => StatusCode::NotFound,
            sys::CTL_STATUS_DEVICE_LOST => StatusCode::DeviceLost,
            sys::CTL_STATUS_INTERNAL => StatusCode::Internal,
            sys::CTL_STATUS_OUT_OF_RANGE => StatusCode::OutOfRange,
            sys::CTL_STATUS_FAILED_PRECONDITION => StatusCode::FailedPrecondition,
            other => StatusCode::Other(other),
        }
    }

    /// The raw `ctl_status_code`.
    pub fn to_raw(self) -> sys::ctl_status_code {
        match self {
            StatusCode::InvalidArgument => sys::CTL_STATUS_INVALID_ARGUMENT,
            StatusCode::OutOfMemory => sys::CTL_STATUS_OUT_OF_MEMORY,
            StatusCode::Unsupported => sys::CTL_STATUS_UNSUPPORTED,
            StatusCode::NotFound => sys::CTL_STATUS_NOT_FOUND,
            StatusCode::DeviceLost => sys::CTL_STATUS_DEVICE_LOST,
            StatusCode::Internal => sys::CTL_STATUS_INTERNAL,
            StatusCode::OutOfRange => sys::CTL_STATUS_OUT_OF_RANGE,
            StatusCode::FailedPrecondition => sys::CTL_STATUS_FAILED_PRECONDITION,
            StatusCode::Other(code) => code,
        }
    }

    /// The library's fixed name of the code, e.g. "INVALID_ARGUMENT".
    pub fn name(self) -> String {
        // SAFETY: ctl_status_code_name returns a static string for any code.
        unsafe { string_from(sys::ctl_status_code_name(self.to_raw())) }
    }
}

/// A failed call: the status code and the message the C ABI gave (it names the offending
/// argument and value). Errors the binding itself finds before calling C (a Rust element
/// type that does not match a tensor's dtype, say) use the same type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    code: StatusCode,
    message: String,
}

/// The result of every fallible call.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error the binding reports itself, before or instead of a C call.
    pub fn new(code: StatusCode, message: impl Into<String>) -> Error {
        Error { code, message: message.into() }
    }

    /// The status code.
    pub fn code(&self) -> StatusCode {
        self.code
    }

    /// The message, without the code's name.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.name(), self.message)
    }
}

impl std::error::Error for Error {}

/// Copies a borrowed C string; "" for NULL.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string valid for the call.
pub(crate) unsafe fn string_from(text: *const std::os::raw::c_char) -> String {
    if text.is_null() {
        return String::new();
    }
    CStr::from_ptr(text).to_string_lossy().into_owned()
}

/// Turns a returned status into a Result, freeing the status. Inlined: on the success path
/// it is one comparison, which matters for the per-op cost of tiny ops.
#[inline]
pub(crate) fn check(status: *mut sys::ctl_status) -> Result<()> {
    if status.is_null() {
        Ok(())
    } else {
        Err(take_status(status))
    }
}

/// The error a non-NULL status holds; frees the status.
#[cold]
#[inline(never)]
fn take_status(status: *mut sys::ctl_status) -> Error {
    // SAFETY: a non-NULL status from the library is owned by us until ctl_status_free; the
    // message is borrowed from it, so it is copied before the free.
    unsafe {
        let code = StatusCode::from_raw(sys::ctl_status_get_code(status));
        let message = string_from(sys::ctl_status_get_message(status));
        sys::ctl_status_free(status);
        Error { code, message }
    }
}
