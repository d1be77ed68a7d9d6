// api.rs — the safe API does what the C calls under it do: creation and data in every Rust
// element type, ops, views, autograd and the no-grad guard, with values checked.
use catalyst::{ops, sys, DType, DeviceKind, OpId, Runtime, StatusCode, Tensor};

fn runtime() -> Runtime {
    Runtime::new().expect("runtime")
}

fn close(actual: &[f32], expected: &[f32]) {
    assert_eq!(actual.len(), expected.len(), "{:?} vs {:?}", actual, expected);
    for (a, e) in actual.iter().zip(expected) {
        assert!((a - e).abs() <= 1e-5 * e.abs().max(1.0), "{:?} vs {:?}", actual, expected);
    }
}

#[test]
fn runtime_and_devices() {
    let rt = runtime();
    assert!(rt.device_count() >= 1);
    let cpu = rt.find_device("cpu").unwrap();
    let info = cpu.info().unwrap();
    assert_eq!(info.plugin_name, "cpu");
    assert_eq!(info.kind, DeviceKind::Cpu);
    assert!(info.host_visible);
    assert!(info.dtypes.contains(&DType::F32) && info.dtypes.contains(&DType::Bool));
    assert_eq!(rt.device(info.index as usize).unwrap(), cpu);
    assert!(rt.plugins().unwrap().iter().any(|p| p.accepted && p.name == "cpu"));
    cpu.synchronize().unwrap();
    let (major, _) = catalyst::abi_version();
    assert_eq!(major, sys::CTL_ABI_VERSION_MAJOR);
}

#[test]
fn every_element_type_round_trips() {
    let rt = runtime();
    let d = rt.find_device("cpu").unwrap();
    assert_eq!(Tensor::from_slice(d, &[2], &[1.5f32, -2.0]).unwrap().to_vec::<f32>().unwrap(), vec![1.5, -2.0]);
    assert_eq!(Tensor::from_slice(d, &[2], &[1.5f64, -2.0]).unwrap().to_vec::<f64>().unwrap(), vec![1.5, -2.0]);
    assert_eq!(Tensor::from_slice(d, &[2], &[-7i8, 9]).unwrap().to_vec::<i8>().unwrap(), vec![-7, 9]);
    assert_eq!(Tensor::from_slice(d, &[2], &[200u8, 9]).unwrap().to_vec::<u8>().unwrap(), vec![200, 9]);
    assert_eq!(Tensor::from_slice(d, &[2], &[-7i32, 9]).unwrap().to_vec::<i32>().unwrap(), vec![-7, 9]);
    assert_eq!(Tensor::from_slice(d, &[2], &[-7i64, 1 << 40]).unwrap().to_vec::<i64>().unwrap(), vec![-7, 1 << 40]);
    assert_eq!(
        Tensor::from_slice(d, &[3], &[true, false, true]).unwrap().to_vec::<bool>().unwrap(),
        vec![true, false, true]
    );
    let t = Tensor::from_slice(d, &[2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
    assert_eq!(t.shape().unwrap(), vec![2, 3]);
    assert_eq!(t.strides().unwrap(), vec![3, 1]);
    assert_eq!((t.rank(), t.numel(), t.dtype().unwrap()), (2, 6, DType::F32));
    assert_eq!(Tensor::full(d, DType::I32, &[2], 7.0).unwrap().to_vec::<i32>().unwrap(), vec![7, 7]);
    assert_eq!(Tensor::zeros(d, DType::F64, &[3]).unwrap().to_vec::<f64>().unwrap(), vec![0.0; 3]);
    assert_eq!(Tensor::scalar(d, 4.25f32).unwrap().item().unwrap(), 4.25);
    let bytes = 1.0f32.to_ne_bytes();
    assert_eq!(Tensor::from_bytes(d, DType::F32, &[1], &bytes).unwrap().item().unwrap(), 1.0);
    let mut out = [0u8; 4];
    Tensor::scalar(d, 2.5f32).unwrap().copy_to_bytes(&mut out).unwrap();
    assert_eq!(f32::from_ne_bytes(out), 2.5);
    let moved = t.to_device(d).unwrap();
    assert_eq!(moved.to_vec::<f32>().unwrap(), t.to_vec::<f32>().unwrap());
}

#[test]
fn ops_compute_what_they_name() {
    let rt = runtime();
    let d = rt.find_device("cpu").unwrap();
    let a = Tensor::from_slice(d, &[2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
    let b = Tensor::from_slice(d, &[3], &[1f32, -1., 0.5]).unwrap();
    close(&ops::add(&a, &b).unwrap().to_vec::<f32>().unwrap(), &[2., 1., 3.5, 5., 4., 6.5]);
    close(&ops::sub(&a, &b).unwrap().to_vec::<f32>().unwrap(), &[0., 3., 2.5, 3., 6., 5.5]);
    close(&ops::mul(&a, &b).unwrap().to_vec::<f32>().unwrap(), &[1., -2., 1.5, 4., -5., 3.]);
    close(&ops::relu(&ops::neg(&a).unwrap()).unwrap().to_vec::<f32>().unwrap(), &[0.; 6]);
    close(&ops::exp(&b).unwrap().to_vec::<f32>().unwrap(), &[1f32.exp(), (-1f32).exp(), 0.5f32.exp()]);
    close(&ops::sum(&a, &[1], false).unwrap().to_vec::<f32>().unwrap(), &[6., 15.]);
    close(&ops::mean(&a, &[], false).unwrap().to_vec::<f32>().unwrap(), &[3.5]);
    close(&ops::max(&a, &[0], true).unwrap().to_vec::<f32>().unwrap(), &[4., 5., 6.]);
    assert_eq!(ops::argmax(&b, 0, false).unwrap().to_vec::<i64>().unwrap(), vec![0]);
    let w = Tensor::from_slice(d, &[3, 2], &[1f32, 0., 0., 1., 1., 1.]).unwrap();
    close(&ops::matmul(&a, &w).unwrap().to_vec::<f32>().unwrap(), &[4., 5., 10., 11.]);
    let mut attrs = sys::ctl_matmul_attrs::new();
    attrs.transpose_b = true;
    attrs.alpha = 2.0;
    attrs.alpha_set = true;
    let wt = w.transpose(0, 1).unwrap().contiguous().unwrap();
    close(&ops::matmul_with(&a, &wt, None, &attrs).unwrap().to_vec::<f32>().unwrap(), &[8., 10., 20., 22.]);
    let s = ops::softmax(&a, -1).unwrap();
    close(&ops::sum(&s, &[-1], false).unwrap().to_vec::<f32>().unwrap(), &[1., 1.]);
    let ls = ops::log_softmax(&a, -1).unwrap();
    close(&ops::exp(&ls).unwrap().to_vec::<f32>().unwrap(), &s.to_vec::<f32>().unwrap());
    assert_eq!(ops::cast(&b, DType::I32).unwrap().to_vec::<i32>().unwrap(), vec![1, -1, 0]);
    let mask = ops::gt(&b, &Tensor::scalar(d, 0f32).unwrap()).unwrap();
    assert_eq!(mask.to_vec::<bool>().unwrap(), vec![true, false, true]);
    close(&ops::where_(&mask, &b, &ops::neg(&b).unwrap()).unwrap().to_vec::<f32>().unwrap(), &[1., 1., 0.5]);
    close(&ops::concat(&[&b, &b], 0).unwrap().to_vec::<f32>().unwrap(), &[1., -1., 0.5, 1., -1., 0.5]);
    let index = Tensor::from_slice(d, &[2], &[2i64, 0]).unwrap();
    close(&ops::gather(&b, &index, 0).unwrap().to_vec::<f32>().unwrap(), &[0.5, 1.]);
    // The generic calls.
    let outs = ops::op_run(OpId::SUB, &[Some(&b), Some(&b)], None, 1).unwrap();
    close(&outs[0].to_vec::<f32>().unwrap(), &[0.; 3]);
    let c = Tensor::zeros(d, DType::F32, &[3]).unwrap();
    ops::copy_(&c, &b).unwrap();
    close(&c.to_vec::<f32>().unwrap(), &[1., -1., 0.5]);
    ops::fill_(&c, 3.0).unwrap();
    close(&c.to_vec::<f32>().unwrap(), &[3.; 3]);
    close(&ops::arange(d, DType::F32, 4, 1.0, 0.5).unwrap().to_vec::<f32>().unwrap(), &[1., 1.5, 2., 2.5]);
    let r1 = ops::random(d, DType::F32, &[16], ops::Distribution::Uniform { low: 0.0, high: 1.0 }, 42, 0)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    let r2 = ops::random(d, DType::F32, &[16], ops::Distribution::Uniform { low: 0.0, high: 1.0 }, 42, 0)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    assert_eq!(r1, r2, "one seed, one sequence");
    assert!(r1.iter().all(|v| (0.0..1.0).contains(v)));
    assert_eq!(OpId::MATMUL.name().as_deref(), Some("matmul"));
}

#[test]
fn views_share_storage() {
    let rt = runtime();
    let d = rt.find_device("cpu").unwrap();
    let a = Tensor::from_slice(d, &[2, 3], &[1f32, 2., 3., 4., 5., 6.]).unwrap();
    let t = a.transpose(0, 1).unwrap();
    assert_eq!(t.shape().unwrap(), vec![3, 2]);
    assert_eq!(t.strides().unwrap(), vec![1, 3]);
    close(&t.to_vec::<f32>().unwrap(), &[1., 4., 2., 5., 3., 6.]);
    close(&a.permute(&[1, 0]).unwrap().contiguous().unwrap().to_vec::<f32>().unwrap(), &[1., 4., 2., 5., 3., 6.]);
    close(&a.slice(1, 0, 3, 2).unwrap().to_vec::<f32>().unwrap(), &[1., 3., 4., 6.]);
    close(&a.reshape(&[-1]).unwrap().to_vec::<f32>().unwrap(), &[1., 2., 3., 4., 5., 6.]);
    let row = Tensor::from_slice(d, &[3], &[7f32, 8., 9.]).unwrap();
    close(&row.expand(&[2, 3]).unwrap().to_vec::<f32>().unwrap(), &[7., 8., 9., 7., 8., 9.]);
    // A view writes through to its source: fill a column through the view.
    ops::fill_(&a.slice(1, 1, 2, 1).unwrap(), 0.0).unwrap();
    close(&a.to_vec::<f32>().unwrap(), &[1., 0., 3., 4., 0., 6.]);
    // A clone is another reference to the same tensor, alive after the original goes.
    let c = a.clone();
    drop(a);
    close(&c.to_vec::<f32>().unwrap(), &[1., 0., 3., 4., 0., 6.]);
}

#[test]
fn autograd_gradients_and_no_grad() {
    let rt = runtime();
    let d = rt.find_device("cpu").unwrap();
    let w = Tensor::from_slice(d, &[3], &[0.5f32, -1.0, 2.0]).unwrap();
    w.set_requires_grad(true).unwrap();
    assert!(w.requires_grad());
    assert!(w.grad().unwrap().is_none());
    let loss = ops::sum(&ops::mul(&ops::exp(&w).unwrap(), &w).unwrap(), &[], false).unwrap();
    assert!(loss.requires_grad());
    loss.backward().unwrap();
    let expected: Vec<f32> = [0.5f32, -1.0, 2.0].iter().map(|x| x.exp() * (1.0 + x)).collect();
    close(&w.grad().unwrap().unwrap().to_vec::<f32>().unwrap(), &expected);
    // Gradients add up until zero_grad.
    loss.backward().unwrap();
    let doubled: Vec<f32> = expected.iter().map(|g| 2.0 * g).collect();
    close(&w.grad().unwrap().unwrap().to_vec::<f32>().unwrap(), &doubled);
    w.zero_grad().unwrap();
    assert!(w.grad().unwrap().is_none());
    // backward_with: d(loss)/d(y) given.
    let y = ops::mul(&w, &w).unwrap();
    y.backward_with(&Tensor::from_slice(d, &[3], &[1f32, 0., 1.]).unwrap()).unwrap();
    close(&w.grad().unwrap().unwrap().to_vec::<f32>().unwrap(), &[1.0, 0.0, 4.0]);
    // detach and no_grad stop recording.
    assert!(!w.detach().unwrap().requires_grad());
    {
        let _guard = rt.no_grad().unwrap();
        assert!(!ops::exp(&w).unwrap().requires_grad());
        assert!(!rt.set_grad_enabled(false).unwrap(), "the guard turned recording off");
    }
    assert!(ops::exp(&w).unwrap().requires_grad(), "dropping the guard restored recording");
}

#[test]
fn errors_are_std_errors_that_cross_threads() {
    fn check<E: std::error::Error + Send + Sync + 'static>(_: &E) {}
    let rt = runtime();
    let error = rt.find_device("nothing").unwrap_err();
    check(&error);
    assert_eq!(error.code(), StatusCode::NotFound);
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(error.clone());
    let text = std::thread::spawn(move || boxed.to_string()).join().unwrap();
    assert_eq!(text, error.to_string());
    assert!(text.starts_with("NOT_FOUND: "), "{}", text);
}

#[test]
fn tensors_keep_their_runtime_alive() {
    let t = {
        let rt = runtime();
        let d = rt.find_device("cpu").unwrap();
        Tensor::from_slice(d, &[2], &[1f32, -1.0]).unwrap()
        // the last Runtime handle is dropped here
    };
    close(&ops::abs(&t).unwrap().to_vec::<f32>().unwrap(), &[1., 1.]);
    let device = t.device().unwrap();
    assert_eq!(device.info().unwrap().plugin_name, "cpu");
    let u = Tensor::zeros(device, DType::F32, &[2]).unwrap();
    drop(t);
    assert_eq!(u.to_vec::<f32>().unwrap(), vec![0.0, 0.0]);
}
