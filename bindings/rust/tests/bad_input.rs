// bad_input.rs — every kind of bad input the binding lets through to the C ABI (and the few
// it checks itself) gives Err(catalyst::Error) with the ABI's code and message, never a
// crash, and leaves the inputs as they were.
use catalyst::{ops, sys, DType, Device, DlpackTensor, Error, OpId, Runtime, RuntimeOptions, StatusCode, Tensor};

fn runtime() -> Runtime {
    Runtime::new().expect("runtime")
}

/// Asserts an error with `code` whose message contains every one of `phrases`.
fn assert_error<T: std::fmt::Debug>(result: catalyst::Result<T>, code: StatusCode, phrases: &[&str]) -> Error {
    let error = result.expect_err("bad input must fail");
    assert_eq!(error.code(), code, "wrong code for: {}", error);
    for phrase in phrases {
        assert!(error.message().contains(phrase), "message {:?} lacks {:?}", error.message(), phrase);
    }
    // Display is "<CODE NAME>: <message>".
    assert!(error.to_string().starts_with(&error.code().name()), "{}", error);
    error
}

fn vector(device: Device<'_>, values: &[f32]) -> Tensor {
    Tensor::from_slice(device, &[values.len() as i64], values).unwrap()
}

fn matrix(device: Device<'_>, rows: i64, cols: i64) -> Tensor {
    let values: Vec<f32> = (0..rows * cols).map(|v| v as f32).collect();
    Tensor::from_slice(device, &[rows, cols], &values).unwrap()
}

#[test]
fn released_tensor_handle() {
    let rt = runtime();
    let device = rt.find_device("cpu").unwrap();
    let raw = vector(device, &[1.0, 2.0]).into_raw();
    // SAFETY: releases our only reference; the library keeps released handles recognisable
    // (its quarantine), which is what lets it report this instead of crashing.
    unsafe { sys::ctl_tensor_release(raw) };
    let stale = unsafe { Tensor::from_raw(raw) };
    assert_error(stale.to_vec::<f32>(), StatusCode::InvalidArgument, &["released tensor"]);
    assert_error(ops::exp(&stale), StatusCode::InvalidArgument, &["released tensor"]);
    assert_error(stale.reshape(&[2]), StatusCode::InvalidArgument, &["released tensor"]);
    assert_eq!(stale.numel(), 0);
    assert!(!stale.requires_grad());
    // Dropping it releases again: the library ignores a released handle.
}

#[test]
fn null_tensor_handle() {
    let rt = runtime();
    let device = rt.find_device("cpu").unwrap();
    // SAFETY: NULL is a handle the library checks for; Drop's release ignores it.
    let null = unsafe { Tensor::from_raw(std::ptr::null_mut()) };
    assert_error(null.shape(), StatusCode::InvalidArgument, &["argument 'tensor' is NULL"]);
    assert_error(null.backward(), StatusCode::InvalidArgument, &["is NULL"]);
    let x = vector(device, &[1.0]);
    assert_error(ops::add(&x, &null), StatusCode::InvalidArgument, &["is NULL"]);
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0]);
}

#[test]
fn null_and_foreign_device_handles() {
    // SAFETY: NULL is checked by the library.
    let null = unsafe { Device::from_raw(std::ptr::null_mut()) };
    assert_error(Tensor::zeros(null, DType::F32, &[2]), StatusCode::InvalidArgument, &["argument 'device' is NULL"]);
    assert_error(null.info(), StatusCode::InvalidArgument, &["is NULL"]);
    // Memory that is not a device: the library reads its tag and refuses it.
    let mut not_a_device = vec![0u64; 512];
    // SAFETY: readable memory for as long as the handle is used; the library only reads it.
    let fake = unsafe { Device::from_raw(not_a_device.as_mut_ptr() as *mut sys::ctl_device) };
    assert_error(Tensor::zeros(fake, DType::F32, &[2]), StatusCode::InvalidArgument, &["not a live ctl_device"]);
}

#[test]
fn mismatched_dtypes() {
    let rt = runtime();
    let device = rt.find_device("cpu").unwrap();
    let a = vector(device, &[1.0, 2.0]);
    let b = Tensor::from_slice(device, &[2], &[1i32, 2]).unwrap();
    assert_error(ops::add(&a, &b), StatusCode::InvalidArgument, &["f32", "i32"]);
    assert_eq!(a.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
}

#[test]
fn mismatched_shapes() {
    let rt = runtime();
    let device = rt.find_device("cpu").unwrap();
    let a = matrix(device, 2, 3);
    let b = vector(device, &[1.0, 2.0, 3.0, 4.0]);
    assert_error(ops::add(&a, &b), StatusCode::InvalidArgument, &["broadcast"]);
    let c = matrix(device, 4, 2);
    assert_error(ops::matmul(&a, &c), StatusCode::InvalidArgument, &["matmul"]);
}

#[test]
fn bad_axes() {
    let rt = runtime();
    let device = rt.find_device("cpu").unwrap();
    let a = matrix(device, 2, 3);
    assert_error(ops::sum(&a, &[5], false), StatusCode::InvalidArgument, &["axes entry is 5", "rank 2"]);
    assert_error(ops::softmax(&a, -3), StatusCode::InvalidArgument, &["axis is -3"]);
    assert_error(a.transpose(0, 2), StatusCode::InvalidArgument, &["'axis1' is 2"]);
    assert_error(a.slice(2, 0, 1, 1), StatusCode::InvalidArgument, &["'axis' is 2"]);
    assert_error(a.permute(&[0, 0]), StatusCode::InvalidArgument, &["perm names axis 0 twice"]);
}

#[test]
fn bad_shapes_at_creation() {
    let rt = runtime();
    let device = rt.find_device("cpu").unwrap();
    assert_error(Tensor::zeros(device, DType::F32, &[2, -3]), StatusCode::InvalidArgument, &["-3"]);
    assert_error(Tensor::zeros(device, DType::F32, &[1; 9]), StatusCode::InvalidArgument, &["rank"]);
    assert_error(
        Tensor::zeros(device, DType::F32, &[i64::MAX, i64::MAX]),
        StatusCode::InvalidArgument,
        &["2^63 bytes"],
    );
}

#[test]
fn slice_length_mismatch() {
    let rt = runtime();
    let device = rt.find_device("cpu").unwrap();
    assert_error(
        Tensor::from_slice(device, &[2, 2], &[1.0f32, 2.0, 3.0]),
        StatusCode::InvalidArgument,
        &["data_bytes"],
    );
    let t = vector(device, &[1.0, 2.0, 3.0]);
    let mut small = [0u8; 4];
    assert_error(t.copy_to_bytes(&mut small), StatusCode::InvalidArgument, &["dst_bytes"]);
}

#[test]
fn wrong_rust_element_type() {
    let rt = runtime();
    let device = rt.find_device("cpu").unwrap();
    let t = vector(device, &[1.0, 2.0]);
    assert_error(t.to_vec::<i32>(), StatusCode::InvalidArgument, &["f32", "i32"]);
    assert_error(t.item(), StatusCode::InvalidArgument, &["2 elements"]);
}

#[test]
fn bad_views() {
    let rt = runtime();
    let device = rt.find_device("cpu").unwrap();
    let a = matrix(device, 2, 3);
    assert_error(a.reshape(&[4, 2]), StatusCode::InvalidArgument, &["8 elements", "has 6"]);
    assert_error(a.reshape(&[-1, -1]), StatusCode::InvalidArgument, &["more than one -1"]);
    assert_error(a.expand(&[2, 4]), StatusCode::InvalidArgument, &["only size 1 expands"]);
    assert_error(a.slice(0, 0, 2, 0), StatusCode::InvalidArgument, &["'step' is 0"]);
    assert_eq!(a.shape().unwrap(), vec![2, 3]);
}

#[test]
fn bad_autograd_use() {
    let rt = runtime();
    let device = rt.find_device("cpu").unwrap();
    let ints = Tensor::from_slice(device, &[2], &[1i32, 2]).unwrap();
    assert_error(ints.set_requires_grad(true), StatusCode::InvalidArgument, &["i32"]);
    let w = vector(device, &[1.0, 2.0]);
    w.set_requires_grad(true).unwrap();
    let y = ops::exp(&w).unwrap();
    // Not a leaf: its gradient is derived.
    assert!(y.set_requires_grad(true).is_err());
    // backward without grad_output needs one element.
    assert_error(y.backward(), StatusCode::InvalidArgument, &["element"]);
    let wrong = vector(device, &[1.0, 2.0, 3.0]);
    assert!(y.backward_with(&wrong).is_err());
    assert!(w.grad().unwrap().is_none(), "a failed backward changes no gradient");
}

#[test]
fn unknown_op_and_wrong_arity() {
    let rt = runtime();
    let device = rt.find_device("cpu").unwrap();
    let a = vector(device, &[1.0]);
    assert_error(ops::op_run(OpId(9999), &[Some(&a)], None, 1), StatusCode::InvalidArgument, &["9999"]);
    assert_error(ops::op_run(OpId::ADD, &[Some(&a)], None, 1), StatusCode::InvalidArgument, &["input"]);
    assert_error(ops::op_run(OpId::EXP, &[Some(&a)], None, 2), StatusCode::InvalidArgument, &["output"]);
    assert!(OpId(9999).name().is_none());
}

#[test]
fn bad_attributes() {
    let rt = runtime();
    let device = rt.find_device("cpu").unwrap();
    let g = vector(device, &[1.0]);
    let p = vector(device, &[1.0]);
    let m = vector(device, &[0.0]);
    let v = vector(device, &[0.0]);
    let mut adamw = sys::ctl_adamw_attrs::new();
    adamw.lr = 0.1;
    adamw.beta1 = 0.9;
    adamw.beta2 = 0.999;
    adamw.eps = 1e-8;
    adamw.step = 0; // invalid: the first step is 1
    assert_error(ops::adamw_step(&g, &p, &m, &v, &adamw), StatusCode::InvalidArgument, &["step"]);
    assert_eq!(p.to_vec::<f32>().unwrap(), vec![1.0], "a refused update leaves the parameter");
    let mut cast = sys::ctl_cast_attrs::new();
    cast.dtype = 77;
    assert_error(ops::op_run(OpId::CAST, &[Some(&g)], Some(&cast), 1), StatusCode::InvalidArgument, &["77"]);
}

#[test]
fn unknown_device_name() {
    let rt = runtime();
    assert_error(rt.find_device("no-such-plugin:3"), StatusCode::NotFound, &["no-such-plugin:3"]);
    assert_error(rt.device(1_000_000), StatusCode::OutOfRange, &["'index' is 1000000"]);
    assert_error(rt.find_device("cpu\0"), StatusCode::InvalidArgument, &["NUL"]);
}

#[test]
fn inputs_on_two_devices() {
    let rt = Runtime::with_options(&RuntimeOptions { enable_reference_device: true, ..Default::default() }).unwrap();
    let cpu = rt.find_device("cpu").unwrap();
    let reference = rt.find_device("reference").unwrap();
    let a = vector(cpu, &[1.0]);
    let b = vector(reference, &[1.0]);
    assert_error(ops::add(&a, &b), StatusCode::InvalidArgument, &["device"]);
}

/// An edit that makes a capsule malformed.
type Edit = Box<dyn FnOnce(&mut sys::DLManagedTensorVersioned)>;

fn malformed(edit: impl FnOnce(&mut sys::DLManagedTensorVersioned)) -> DlpackTensor {
    let capsule = DlpackTensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]).unwrap();
    // SAFETY: we own the capsule and only change fields the importer validates.
    edit(unsafe { &mut *capsule.as_raw() });
    capsule
}

#[test]
fn malformed_dlpack_capsules() {
    let rt = runtime();
    let device = rt.find_device("cpu").unwrap();
    let cases: Vec<(&str, Edit, StatusCode, &str)> = vec![
        ("major version 2", Box::new(|m| m.version.major = 2), StatusCode::Unsupported, "version 2"),
        ("unknown flag bits", Box::new(|m| m.flags = 1 << 40), StatusCode::Unsupported, "flags"),
        ("read-only", Box::new(|m| m.flags = sys::DLPACK_FLAG_BITMASK_READ_ONLY), StatusCode::Unsupported, "read-only"),
        (
            "device memory",
            Box::new(|m| m.dl_tensor.device.device_type = sys::kDLCUDA),
            StatusCode::Unsupported,
            "device type 2",
        ),
        ("host device id 1", Box::new(|m| m.dl_tensor.device.device_id = 1), StatusCode::InvalidArgument, "device_id"),
        ("rank 9", Box::new(|m| m.dl_tensor.ndim = 9), StatusCode::InvalidArgument, "ndim"),
        ("two lanes", Box::new(|m| m.dl_tensor.dtype.lanes = 2), StatusCode::Unsupported, "lanes"),
        ("complex dtype", Box::new(|m| m.dl_tensor.dtype.code = 5), StatusCode::Unsupported, "code 5"),
        (
            "NULL shape",
            Box::new(|m| m.dl_tensor.shape = std::ptr::null_mut()),
            StatusCode::InvalidArgument,
            "shape is NULL",
        ),
        ("misaligned offset", Box::new(|m| m.dl_tensor.byte_offset = 2), StatusCode::InvalidArgument, "aligned"),
        (
            "NULL data",
            Box::new(|m| m.dl_tensor.data = std::ptr::null_mut()),
            StatusCode::InvalidArgument,
            "data is NULL",
        ),
    ];
    for (what, edit, code, phrase) in cases {
        let capsule = malformed(edit);
        let error = Tensor::from_dlpack(device, capsule).expect_err(what);
        assert_eq!(error.code(), code, "{}: {}", what, error);
        assert!(error.message().contains(phrase), "{}: {:?} lacks {:?}", what, error.message(), phrase);
    }
}

#[test]
fn dlpack_onto_a_device_that_is_not_host_visible_or_null() {
    let rt = runtime();
    // SAFETY: NULL is checked by the library.
    let null = unsafe { Device::from_raw(std::ptr::null_mut()) };
    let capsule = DlpackTensor::from_vec(vec![1i64, 2], &[2]).unwrap();
    assert_error(Tensor::from_dlpack(null, capsule), StatusCode::InvalidArgument, &["device"]);
    // from_vec checks the shape against the values before anything reaches C.
    assert_error(DlpackTensor::from_vec(vec![1i64, 2, 3], &[2]), StatusCode::InvalidArgument, &["3 values"]);
    drop(rt);
}
