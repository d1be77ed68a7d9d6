//! DLPack interchange in DLPack 1.x's versioned form (`DLManagedTensorVersioned`):
//! `Tensor::to_dlpack` / `Tensor::from_dlpack`, zero-copy for host-visible devices, and
//! `DlpackTensor`, an owned managed tensor whose deleter runs exactly once.

use std::marker::PhantomData;
use std::os::raw::c_void;
use std::ptr::{self, NonNull};

use crate::device::Device;
use crate::dtype::{DType, Element};
use crate::error::{check, Error, Result, StatusCode};
use crate::sys;
use crate::tensor::{new_tensor, Tensor};

/// A `DLManagedTensorVersioned` this value owns: dropping it calls the producer's deleter
/// once (a NULL deleter is not called). Give it to [`Tensor::from_dlpack`] to import it, or
/// take the pointer with [`DlpackTensor::into_raw`] to hand it to another library.
///
/// Neither `Send` nor `Sync`: one exported from Catalyst holds a tensor reference, and the
/// deleter of one from elsewhere promises nothing about threads.
pub struct DlpackTensor {
    raw: NonNull<sys::DLManagedTensorVersioned>,
    _not_send_sync: PhantomData<*mut sys::DLManagedTensorVersioned>,
}

impl DlpackTensor {
    /// Takes ownership of a managed tensor; None for NULL.
    ///
    /// # Safety
    /// `raw` points to a `DLManagedTensorVersioned` whose fields stay readable until its
    /// deleter runs, and whose deleter the caller passes to this value to call.
    pub unsafe fn from_raw(raw: *mut sys::DLManagedTensorVersioned) -> Option<DlpackTensor> {
        NonNull::new(raw).map(|raw| DlpackTensor { raw, _not_send_sync: PhantomData })
    }

    /// Gives up ownership: the caller must see that the deleter is called once.
    pub fn into_raw(self) -> *mut sys::DLManagedTensorVersioned {
        let raw = self.raw.as_ptr();
        std::mem::forget(self);
        raw
    }

    /// The managed tensor, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::DLManagedTensorVersioned {
        self.raw.as_ptr()
    }

    fn managed(&self) -> &sys::DLManagedTensorVersioned {
        // SAFETY: from_raw's contract: readable until the deleter runs, which only Drop does.
        unsafe { self.raw.as_ref() }
    }

    /// The DLPack version the producer wrote.
    pub fn version(&self) -> (u32, u32) {
        (self.managed().version.major, self.managed().version.minor)
    }

    /// The DLPack flags (read-only, is-copied, ...).
    pub fn flags(&self) -> u64 {
        self.managed().flags
    }

    /// The described tensor: data pointer, device, dtype, shape, strides, byte offset.
    pub fn dl_tensor(&self) -> &sys::DLTensor {
        &self.managed().dl_tensor
    }

    /// The shape (empty for ndim 0 or a NULL shape).
    pub fn shape(&self) -> &[i64] {
        let t = self.dl_tensor();
        if t.ndim <= 0 || t.shape.is_null() {
            return &[];
        }
        // SAFETY: the producer's shape array holds ndim entries.
        unsafe { std::slice::from_raw_parts(t.shape, t.ndim as usize) }
    }

    /// The strides in elements; None when the producer gave NULL (compact row-major).
    pub fn strides(&self) -> Option<&[i64]> {
        let t = self.dl_tensor();
        if t.strides.is_null() {
            return None;
        }
        let ndim = if t.ndim > 0 { t.ndim as usize } else { 0 };
        // SAFETY: the producer's strides array holds ndim entries.
        Some(unsafe { std::slice::from_raw_parts(t.strides, ndim) })
    }

    /// A managed tensor over Rust memory: `values` (row-major, shaped `shape`) move into it
    /// and are freed by its deleter. For handing host data to Catalyst or another library
    /// without a copy.
    pub fn from_vec<T: Element>(values: Vec<T>, shape: &[i64]) -> Result<DlpackTensor> {
        let mut count: i64 = 1;
        for &extent in shape {
            count = count.checked_mul(extent).filter(|c| *c >= 0).ok_or_else(|| {
                Error::new(StatusCode::InvalidArgument, format!("from_vec: shape {:?} is not a valid shape", shape))
            })?;
        }
        if count as usize != values.len() {
            return Err(Error::new(
                StatusCode::InvalidArgument,
                format!("from_vec: shape {:?} holds {} elements but {} values were given", shape, count, values.len()),
            ));
        }
        let mut holder = Box::new(VecHolder::<T> {
            managed: sys::DLManagedTensorVersioned::zeroed(),
            values,
            shape: shape.to_vec(),
        });
        let data = holder.values.as_mut_ptr() as *mut c_void;
        let shape_ptr = holder.shape.as_mut_ptr();
        let managed = &mut holder.managed;
        managed.version = sys::DLPackVersion { major: 1, minor: 0 };
        managed.deleter = Some(delete_vec_holder::<T>);
        managed.flags = 0;
        managed.dl_tensor.data = data;
        managed.dl_tensor.device = sys::DLDevice { device_type: sys::kDLCPU, device_id: 0 };
        managed.dl_tensor.ndim = shape.len() as i32;
        managed.dl_tensor.dtype = dl_dtype(T::DTYPE);
        managed.dl_tensor.shape = shape_ptr;
        managed.dl_tensor.strides = ptr::null_mut();
        managed.dl_tensor.byte_offset = 0;
        let raw = Box::into_raw(holder);
        // SAFETY: raw was just made by Box::into_raw and nobody else has it yet.
        unsafe { (*raw).managed.manager_ctx = raw as *mut c_void };
        // The holder is repr(C) with the managed tensor first, so the two pointers agree.
        // SAFETY: a valid managed tensor whose deleter frees the holder once.
        Ok(unsafe { DlpackTensor::from_raw(raw as *mut sys::DLManagedTensorVersioned) }.expect("Box is never NULL"))
    }
}

impl Drop for DlpackTensor {
    fn drop(&mut self) {
        let managed = self.raw.as_ptr();
        // SAFETY: we own the managed tensor; its deleter is called once, here.
        unsafe {
            if let Some(deleter) = (*managed).deleter {
                deleter(managed);
            }
        }
    }
}

impl std::fmt::Debug for DlpackTensor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DlpackTensor")
            .field("version", &self.version())
            .field("shape", &self.shape())
            .field("strides", &self.strides())
            .field("flags", &self.flags())
            .finish()
    }
}

/// What a managed tensor made by `from_vec` owns.
#[repr(C)]
struct VecHolder<T> {
    managed: sys::DLManagedTensorVersioned,
    values: Vec<T>,
    shape: Vec<i64>,
}

unsafe extern "C" fn delete_vec_holder<T>(managed: *mut sys::DLManagedTensorVersioned) {
    if !managed.is_null() {
        // SAFETY: made by from_vec's Box::into_raw; the deleter runs once.
        drop(Box::from_raw(managed as *mut VecHolder<T>));
    }
}

/// DLPack's description of a dtype.
pub fn dl_dtype(dtype: DType) -> sys::DLDataType {
    let (code, bits) = match dtype {
        DType::F32 => (sys::kDLFloat, 32),
        DType::F64 => (sys::kDLFloat, 64),
        DType::F16 => (sys::kDLFloat, 16),
        DType::BF16 => (sys::kDLBfloat, 16),
        DType::I8 => (sys::kDLInt, 8),
        DType::U8 => (sys::kDLUInt, 8),
        DType::I32 => (sys::kDLInt, 32),
        DType::I64 => (sys::kDLInt, 64),
        DType::Bool => (sys::kDLBool, 8),
    };
    sys::DLDataType { code, bits, lanes: 1 }
}

impl Tensor {
    /// Exports the tensor without copying (`ctl_tensor_to_dlpack_versioned`): its device must
    /// be host-visible, else UNSUPPORTED. The managed tensor keeps the storage alive.
    pub fn to_dlpack(&self) -> Result<DlpackTensor> {
        let mut raw = ptr::null_mut();
        // SAFETY: the library checks the handle; on success we own the managed tensor.
        check(unsafe { sys::ctl_tensor_to_dlpack_versioned(self.as_raw(), &mut raw) })?;
        // SAFETY: a managed tensor from the library, ours to delete.
        unsafe { DlpackTensor::from_raw(raw) }
            .ok_or_else(|| Error::new(StatusCode::Internal, "ctl_tensor_to_dlpack_versioned returned NULL"))
    }

    /// Imports host memory onto `device` (host-visible), zero-copy
    /// (`ctl_tensor_from_dlpack_versioned`). On success Catalyst owns `managed` and calls its
    /// deleter when the last tensor using it goes; on failure ownership stayed here, so
    /// `managed` is dropped (its deleter called) before the error is returned.
    pub fn from_dlpack(device: Device<'_>, managed: DlpackTensor) -> Result<Tensor> {
        let raw = managed.as_raw();
        // SAFETY: a live managed tensor; the library checks every field before taking it.
        let tensor = new_tensor(|out| unsafe { sys::ctl_tensor_from_dlpack_versioned(device.as_raw(), raw, out) })?;
        // Catalyst owns it now: its deleter is Catalyst's to call.
        std::mem::forget(managed);
        Ok(tensor)
    }
}
