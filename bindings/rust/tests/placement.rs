// placement.rs — ctl_tensor_transfer through the safe API carries gradients back across
// devices, and device usage counts what moved.
use catalyst::{ops, Device, Runtime, RuntimeOptions, StatusCode, Tensor};

#[test]
fn transfer_is_recorded_and_counted() {
    let rt = Runtime::with_options(&RuntimeOptions { enable_reference_device: true, ..Default::default() }).unwrap();
    let cpu = rt.find_device("cpu").unwrap();
    let reference = rt.find_device("reference").unwrap();
    let before = reference.usage().unwrap();
    let w = Tensor::from_slice(cpu, &[3], &[1f32, 2., 3.]).unwrap();
    w.set_requires_grad(true).unwrap();
    let moved = w.transfer(reference).unwrap();
    assert_eq!(moved.device().unwrap(), reference);
    assert!(moved.requires_grad(), "the move is recorded");
    let loss = ops::sum(&ops::mul(&moved, &moved).unwrap(), &[], false).unwrap();
    loss.backward().unwrap();
    let grad = w.grad().unwrap().expect("the gradient came back");
    assert_eq!(grad.device().unwrap(), cpu);
    assert_eq!(grad.to_vec::<f32>().unwrap(), vec![2., 4., 6.]);
    // to_device is the unrecorded copy.
    assert!(!w.to_device(reference).unwrap().requires_grad());
    let after = reference.usage().unwrap();
    assert!(after.bytes_in >= before.bytes_in + 12, "{:?} then {:?}", before, after);
    assert!(after.ops > before.ops, "{:?} then {:?}", before, after);
    // SAFETY: NULL is checked by the library.
    let null = unsafe { Device::from_raw(std::ptr::null_mut()) };
    assert_eq!(null.usage().unwrap_err().code(), StatusCode::InvalidArgument);
    assert_eq!(w.transfer(null).unwrap_err().code(), StatusCode::InvalidArgument);
}
