//! `Tensor`: an owning handle to a tensor, with creation, data, views and autograd.

use std::marker::PhantomData;
use std::os::raw::c_void;
use std::ptr;

use crate::device::Device;
use crate::dtype::{dtype_mismatch, DType, Element};
use crate::error::{check, Error, Result, StatusCode};
use crate::sys;

/// A tensor: a view (dtype, shape, strides, offset) of reference-counted storage on one
/// device. Clones share the tensor (a new reference, like `ctl_tensor_retain`); views share
/// storage. Dropping releases the reference. A tensor keeps its runtime alive.
///
/// Neither `Send` nor `Sync`: catalyst.h lets only one thread at a time build and
/// backpropagate one autograd graph, recording takes no locks, and every tensor (its clones
/// and views too) may belong to a graph. Move data between threads as host data or through
/// DLPack, or take the raw handle with [`Tensor::into_raw`] where you can uphold that rule.
pub struct Tensor {
    raw: *mut sys::ctl_tensor,
    _not_send_sync: PhantomData<*mut sys::ctl_tensor>,
}

/// Runs a C call with an `out_tensor` parameter and wraps the new reference it returns.
pub(crate) fn new_tensor(call: impl FnOnce(*mut *mut sys::ctl_tensor) -> *mut sys::ctl_status) -> Result<Tensor> {
    let mut raw = ptr::null_mut();
    check(call(&mut raw))?;
    if raw.is_null() {
        return Err(Error::new(StatusCode::Internal, "the call succeeded without returning a tensor"));
    }
    Ok(Tensor { raw, _not_send_sync: PhantomData })
}

fn rank_of(shape: &[i64]) -> usize {
    shape.len()
}

impl Tensor {
    /// Takes ownership of a tensor reference.
    ///
    /// # Safety
    /// `raw` is a tensor reference the caller owns (the returned value releases it). The
    /// library checks every handle it is given, so a NULL or released handle makes each call
    /// return its error instead of crashing; that is what the bad-input tests rely on.
    pub unsafe fn from_raw(raw: *mut sys::ctl_tensor) -> Tensor {
        Tensor { raw, _not_send_sync: PhantomData }
    }

    /// The handle, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::ctl_tensor {
        self.raw
    }

    /// Gives up ownership: the caller releases the returned reference.
    pub fn into_raw(self) -> *mut sys::ctl_tensor {
        let raw = self.raw;
        std::mem::forget(self);
        raw
    }

    // ---- creation

    /// Uninitialised contents.
    pub fn empty(device: Device<'_>, dtype: DType, shape: &[i64]) -> Result<Tensor> {
        // SAFETY: shape is valid for rank elements; the device is checked by the library.
        new_tensor(|out| unsafe {
            sys::ctl_tensor_create(device.as_raw(), dtype.to_raw(), rank_of(shape), shape.as_ptr(), out)
        })
    }

    /// All zeros.
    pub fn zeros(device: Device<'_>, dtype: DType, shape: &[i64]) -> Result<Tensor> {
        // SAFETY: as in empty().
        new_tensor(|out| unsafe {
            sys::ctl_tensor_create_zeros(device.as_raw(), dtype.to_raw(), rank_of(shape), shape.as_ptr(), out)
        })
    }

    /// Every element `value`, converted to `dtype`.
    pub fn full(device: Device<'_>, dtype: DType, shape: &[i64], value: f64) -> Result<Tensor> {
        // SAFETY: as in empty().
        new_tensor(|out| unsafe {
            sys::ctl_tensor_create_full(device.as_raw(), dtype.to_raw(), rank_of(shape), shape.as_ptr(), value, out)
        })
    }

    /// A copy of `values` (row-major) shaped `shape`; the library checks that the slice's
    /// length is the shape's element count.
    pub fn from_slice<T: Element>(device: Device<'_>, shape: &[i64], values: &[T]) -> Result<Tensor> {
        let bytes = std::mem::size_of_val(values);
        // SAFETY: values is valid for `bytes` bytes; the library reads exactly data_bytes.
        new_tensor(|out| unsafe {
            sys::ctl_tensor_from_host(
                device.as_raw(),
                T::DTYPE.to_raw(),
                rank_of(shape),
                shape.as_ptr(),
                values.as_ptr() as *const c_void,
                bytes,
                out,
            )
        })
    }

    /// A copy of raw row-major element bytes of `dtype` (f16 and bf16 data, for instance).
    pub fn from_bytes(device: Device<'_>, dtype: DType, shape: &[i64], bytes: &[u8]) -> Result<Tensor> {
        // SAFETY: as in from_slice().
        new_tensor(|out| unsafe {
            sys::ctl_tensor_from_host(
                device.as_raw(),
                dtype.to_raw(),
                rank_of(shape),
                shape.as_ptr(),
                bytes.as_ptr() as *const c_void,
                bytes.len(),
                out,
            )
        })
    }

    /// A rank-0 tensor holding `value`.
    pub fn scalar<T: Element>(device: Device<'_>, value: T) -> Result<Tensor> {
        Tensor::from_slice(device, &[], &[value])
    }

    // ---- facts

    /// The full description (`ctl_tensor_get_info`).
    pub fn info(&self) -> Result<sys::ctl_tensor_info> {
        let mut info = sys::ctl_tensor_info::zeroed();
        info.struct_size = sys::ctl_tensor_info::abi_size();
        // SAFETY: the library checks the handle.
        check(unsafe { sys::ctl_tensor_get_info(self.raw, &mut info) })?;
        Ok(info)
    }

    /// The element type.
    pub fn dtype(&self) -> Result<DType> {
        // SAFETY: the getter checks the handle and answers CTL_DTYPE_COUNT_ for a bad one.
        let raw = unsafe { sys::ctl_tensor_dtype(self.raw) };
        match DType::from_raw(raw) {
            Some(dtype) => Ok(dtype),
            // The getter has no message; get_info says what is wrong with the handle.
            None => {
                let info = self.info()?;
                Err(Error::new(StatusCode::Unsupported, format!("dtype {} is unknown to this binding", info.dtype)))
            }
        }
    }

    /// The shape.
    pub fn shape(&self) -> Result<Vec<i64>> {
        let info = self.info()?;
        Ok(info.shape[..info.rank].to_vec())
    }

    /// The strides, in elements.
    pub fn strides(&self) -> Result<Vec<i64>> {
        let info = self.info()?;
        Ok(info.strides[..info.rank].to_vec())
    }

    /// The number of axes (0 for a bad handle).
    pub fn rank(&self) -> usize {
        // SAFETY: the getter checks the handle.
        unsafe { sys::ctl_tensor_rank(self.raw) }
    }

    /// The number of elements (0 for a bad handle).
    pub fn numel(&self) -> i64 {
        // SAFETY: the getter checks the handle.
        unsafe { sys::ctl_tensor_numel(self.raw) }
    }

    /// The device holding the tensor, borrowed for as long as the tensor is.
    pub fn device(&self) -> Result<Device<'_>> {
        let info = self.info()?;
        // SAFETY: the device lives at least as long as a tensor on it.
        Ok(unsafe { Device::from_raw(info.device) })
    }

    // ---- data

    /// The elements, row-major, copied to the host (waiting for pending work). `T` must be
    /// the tensor's dtype.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        let dtype = self.dtype()?;
        if dtype != T::DTYPE {
            return Err(dtype_mismatch("to_vec", dtype, T::DTYPE));
        }
        let count =
            usize::try_from(self.numel()).map_err(|_| Error::new(StatusCode::Internal, "negative element count"))?;
        let raw = self.raw;
        // SAFETY: the buffer `read_host` passes is valid for `bytes` bytes.
        T::read_host(count, &mut |data, bytes| {
            check(unsafe { sys::ctl_tensor_to_host(raw, data as *mut c_void, bytes) })
        })
    }

    /// Copies the elements' bytes, row-major, into `destination`, which must hold at least
    /// numel * dtype size bytes (the library checks).
    pub fn copy_to_bytes(&self, destination: &mut [u8]) -> Result<()> {
        // SAFETY: destination is valid for its length; the library writes at most that.
        check(unsafe { sys::ctl_tensor_to_host(self.raw, destination.as_mut_ptr() as *mut c_void, destination.len()) })
    }

    /// The value of a one-element tensor, as f64.
    pub fn item(&self) -> Result<f64> {
        let numel = self.numel();
        if numel != 1 {
            // A bad handle reports itself first.
            self.info()?;
            return Err(Error::new(
                StatusCode::InvalidArgument,
                format!("item: the tensor has {} elements, not 1", numel),
            ));
        }
        Ok(match self.dtype()? {
            DType::F32 => f64::from(self.to_vec::<f32>()?[0]),
            DType::F64 => self.to_vec::<f64>()?[0],
            DType::I8 => f64::from(self.to_vec::<i8>()?[0]),
            DType::U8 => f64::from(self.to_vec::<u8>()?[0]),
            DType::I32 => f64::from(self.to_vec::<i32>()?[0]),
            DType::I64 => self.to_vec::<i64>()?[0] as f64,
            DType::Bool => f64::from(u8::from(self.to_vec::<bool>()?[0])),
            DType::F16 | DType::BF16 => crate::ops::cast(&self.detach()?, DType::F64)?.to_vec::<f64>()?[0],
        })
    }

    /// A contiguous copy on `device` (any plugin).
    pub fn to_device(&self, device: Device<'_>) -> Result<Tensor> {
        // SAFETY: the library checks both handles.
        new_tensor(|out| unsafe { sys::ctl_tensor_to_device(self.raw, device.as_raw(), out) })
    }

    // ---- views: metadata only, never a copy

    /// The same elements in a new shape; one entry may be -1 (inferred).
    pub fn reshape(&self, shape: &[i64]) -> Result<Tensor> {
        // SAFETY: shape is valid for its length.
        new_tensor(|out| unsafe { sys::ctl_tensor_reshape(self.raw, shape.len(), shape.as_ptr(), out) })
    }

    /// Axis i of the result is axis `perm[i]` (negative counts from the end).
    pub fn permute(&self, perm: &[i64]) -> Result<Tensor> {
        // SAFETY: perm is valid for its length.
        new_tensor(|out| unsafe { sys::ctl_tensor_permute(self.raw, perm.len(), perm.as_ptr(), out) })
    }

    /// Swaps two axes.
    pub fn transpose(&self, axis0: i64, axis1: i64) -> Result<Tensor> {
        // SAFETY: the library checks the handle and axes.
        new_tensor(|out| unsafe { sys::ctl_tensor_transpose(self.raw, axis0, axis1, out) })
    }

    /// Elements start, start + step, ... < stop along `axis` (Python rules for negative
    /// start and stop; step >= 1).
    pub fn slice(&self, axis: i64, start: i64, stop: i64, step: i64) -> Result<Tensor> {
        // SAFETY: the library checks the handle and arguments.
        new_tensor(|out| unsafe { sys::ctl_tensor_slice(self.raw, axis, start, stop, step, out) })
    }

    /// Broadcast to `shape` by NumPy rules.
    pub fn expand(&self, shape: &[i64]) -> Result<Tensor> {
        // SAFETY: shape is valid for its length.
        new_tensor(|out| unsafe { sys::ctl_tensor_expand(self.raw, shape.len(), shape.as_ptr(), out) })
    }

    /// The tensor itself (a new reference) when contiguous, else a contiguous copy.
    pub fn contiguous(&self) -> Result<Tensor> {
        // SAFETY: the library checks the handle.
        new_tensor(|out| unsafe { sys::ctl_tensor_contiguous(self.raw, out) })
    }

    // ---- autograd

    /// Marks a leaf as needing a gradient (float dtypes only).
    pub fn set_requires_grad(&self, requires_grad: bool) -> Result<()> {
        // SAFETY: the library checks the handle.
        check(unsafe { sys::ctl_tensor_set_requires_grad(self.raw, requires_grad) })
    }

    /// True for a marked leaf and for anything a recorded op made from one.
    pub fn requires_grad(&self) -> bool {
        // SAFETY: the getter checks the handle.
        unsafe { sys::ctl_tensor_requires_grad(self.raw) }
    }

    /// The gradient accumulated on a leaf; None before any backward pass reached it.
    pub fn grad(&self) -> Result<Option<Tensor>> {
        let mut raw = ptr::null_mut();
        // SAFETY: the library checks the handle; a non-NULL result is a new reference.
        check(unsafe { sys::ctl_tensor_grad(self.raw, &mut raw) })?;
        Ok(if raw.is_null() { None } else { Some(Tensor { raw, _not_send_sync: PhantomData }) })
    }

    /// Drops a leaf's accumulated gradient.
    pub fn zero_grad(&self) -> Result<()> {
        // SAFETY: the library checks the handle.
        check(unsafe { sys::ctl_tensor_zero_grad(self.raw) })
    }

    /// Backpropagates from a one-element tensor (d self / d self = 1).
    pub fn backward(&self) -> Result<()> {
        // SAFETY: the library checks the handle.
        check(unsafe { sys::ctl_tensor_backward(self.raw, ptr::null_mut()) })
    }

    /// Backpropagates with d(loss)/d(self) = `grad_output`, shaped like self.
    pub fn backward_with(&self, grad_output: &Tensor) -> Result<()> {
        // SAFETY: the library checks both handles.
        check(unsafe { sys::ctl_tensor_backward(self.raw, grad_output.raw) })
    }

    /// The same data outside the record: no gradient flows through it.
    pub fn detach(&self) -> Result<Tensor> {
        // SAFETY: the library checks the handle.
        new_tensor(|out| unsafe { sys::ctl_tensor_detach(self.raw, out) })
    }
}

impl Clone for Tensor {
    /// A new reference to the same tensor (not a copy of the data).
    fn clone(&self) -> Tensor {
        // SAFETY: retain is thread-safe and ignores a bad handle.
        unsafe { sys::ctl_tensor_retain(self.raw) };
        Tensor { raw: self.raw, _not_send_sync: PhantomData }
    }
}

impl Drop for Tensor {
    fn drop(&mut self) {
        // SAFETY: this value owns one reference; release ignores NULL and released handles.
        unsafe { sys::ctl_tensor_release(self.raw) };
    }
}

impl std::fmt::Debug for Tensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.dtype(), self.shape()) {
            (Ok(dtype), Ok(shape)) => write!(f, "Tensor({}, {:?})", dtype.name(), shape),
            (Err(e), _) | (_, Err(e)) => write!(f, "Tensor(<{}>)", e),
        }
    }
}
