// dlpack.rs — DLPack 1.x both ways: zero-copy (shared memory, kept strides) and the
// deleter called exactly once, by the right side, on success and on failure.
use std::os::raw::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use catalyst::{dl_dtype, ops, sys, DType, DlpackTensor, Runtime, Tensor};

/// A capsule over `values` whose deleter counts its calls in `deletes` (and frees nothing:
/// the test owns the memory).
struct Counted {
    managed: sys::DLManagedTensorVersioned,
    shape: [i64; 1],
    deletes: AtomicUsize,
}

unsafe extern "C" fn count_delete(managed: *mut sys::DLManagedTensorVersioned) {
    let counted = (*managed).manager_ctx as *const Counted;
    (*counted).deletes.fetch_add(1, Ordering::SeqCst);
}

fn counted(values: &mut [f32]) -> Box<Counted> {
    let mut c = Box::new(Counted {
        managed: sys::DLManagedTensorVersioned::zeroed(),
        shape: [values.len() as i64],
        deletes: AtomicUsize::new(0),
    });
    let ctx = &*c as *const Counted as *mut c_void;
    let shape = c.shape.as_mut_ptr();
    let m = &mut c.managed;
    m.version = sys::DLPackVersion { major: 1, minor: 0 };
    m.manager_ctx = ctx;
    m.deleter = Some(count_delete);
    m.dl_tensor.data = values.as_mut_ptr() as *mut c_void;
    m.dl_tensor.device = sys::DLDevice { device_type: sys::kDLCPU, device_id: 0 };
    m.dl_tensor.ndim = 1;
    m.dl_tensor.dtype = dl_dtype(DType::F32);
    m.dl_tensor.shape = shape;
    c
}

#[test]
fn import_is_zero_copy_and_deletes_once_after_the_last_tensor() {
    let rt = Runtime::new().unwrap();
    let d = rt.find_device("cpu").unwrap();
    let mut values = vec![1.0f32, 2.0, 3.0];
    let mut c = counted(&mut values);
    // SAFETY: the capsule lives in `c`, which outlives every use below.
    let capsule = unsafe { DlpackTensor::from_raw(&mut c.managed) }.unwrap();
    let t = Tensor::from_dlpack(d, capsule).unwrap();
    let view = t.slice(0, 1, 3, 1).unwrap();
    assert_eq!(c.deletes.load(Ordering::SeqCst), 0, "Catalyst owns it now and still uses it");
    ops::fill_(&view, 9.0).unwrap();
    d.synchronize().unwrap();
    drop(t);
    assert_eq!(c.deletes.load(Ordering::SeqCst), 0, "the view still uses the memory");
    drop(view);
    assert_eq!(c.deletes.load(Ordering::SeqCst), 1, "deleted once, when the last tensor went");
    assert_eq!(values, vec![1.0, 9.0, 9.0], "the import wrote into our memory: no copy");
}

#[test]
fn refused_import_leaves_the_capsule_to_the_caller() {
    let rt = Runtime::new().unwrap();
    let d = rt.find_device("cpu").unwrap();
    let mut values = vec![1.0f32, 2.0];
    let mut c = counted(&mut values);
    c.managed.version.major = 7;
    // SAFETY: as above.
    let capsule = unsafe { DlpackTensor::from_raw(&mut c.managed) }.unwrap();
    let error = Tensor::from_dlpack(d, capsule).unwrap_err();
    assert!(error.message().contains("version 7"), "{}", error);
    assert_eq!(c.deletes.load(Ordering::SeqCst), 1, "the binding deleted it once; Catalyst did not");
}

#[test]
fn export_shares_memory_keeps_strides_and_outlives_the_tensor() {
    let rt = Runtime::new().unwrap();
    let d = rt.find_device("cpu").unwrap();
    let a = Tensor::from_slice(d, &[2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
    let capsule = a.transpose(0, 1).unwrap().to_dlpack().unwrap();
    assert_eq!(capsule.version(), (1, 0));
    assert_eq!(capsule.shape(), &[3, 2]);
    assert_eq!(capsule.strides(), Some(&[1i64, 3][..]));
    let dl = capsule.dl_tensor();
    assert_eq!((dl.device.device_type, dl.dtype.code, dl.dtype.bits), (sys::kDLCPU, sys::kDLFloat, 32));
    drop(a);
    // Element (row 2, column 1) of the transposed view is a[1][2] = 6, at offset 2*1 + 1*3.
    // SAFETY: the capsule keeps the storage alive and describes 6 f32 from data.
    let six = unsafe { *((dl.data as *const u8).add(dl.byte_offset as usize) as *const f32).add(2 + 3) };
    assert_eq!(six, 6.0);
    // And back: Catalyst imports its own export without a copy.
    let back = Tensor::from_dlpack(d, capsule).unwrap();
    assert_eq!(back.to_vec::<f32>().unwrap(), vec![1., 4., 2., 5., 3., 6.]);
}

#[test]
fn rust_memory_goes_in_without_a_copy() {
    let rt = Runtime::new().unwrap();
    let d = rt.find_device("cpu").unwrap();
    let values: Vec<i64> = (0..6).collect();
    let data = values.as_ptr();
    let capsule = DlpackTensor::from_vec(values, &[2, 3]).unwrap();
    let t = Tensor::from_dlpack(d, capsule).unwrap();
    assert_eq!(t.shape().unwrap(), vec![2, 3]);
    assert_eq!(t.to_vec::<i64>().unwrap(), (0..6).collect::<Vec<i64>>());
    let again = t.to_dlpack().unwrap();
    assert_eq!(again.dl_tensor().data as *const i64, data, "the same memory all the way through");
}

#[test]
fn many_exchanges_release_everything() {
    // Each round trip's capsule is deleted once; a leak or a double delete of the Rust
    // holder would show under a leak checker or crash here.
    let rt = Runtime::new().unwrap();
    let d = rt.find_device("cpu").unwrap();
    let a = Tensor::from_slice(d, &[4], &[1f32, 2., 3., 4.]).unwrap();
    for _ in 0..10_000 {
        let t = Tensor::from_dlpack(d, a.to_dlpack().unwrap()).unwrap();
        drop(t);
        drop(DlpackTensor::from_vec(vec![0u8; 16], &[16]).unwrap());
    }
    assert_eq!(a.to_vec::<f32>().unwrap(), vec![1., 2., 3., 4.]);
}
