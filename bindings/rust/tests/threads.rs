// threads.rs — what is Send + Sync is usable from several threads at once: one runtime and
// one device shared by threads that each create tensors and run ops, with exact results.
use catalyst::{ops, Runtime, Tensor};

#[test]
fn threads_share_a_runtime_and_a_device() {
    let rt = Runtime::new().unwrap();
    let device = rt.find_device("cpu").unwrap();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|thread| {
                let rt = &rt;
                scope.spawn(move || {
                    for i in 0..200 {
                        let a: Vec<i32> = (0..64).map(|k| thread * 1000 + k + i).collect();
                        let b: Vec<i32> = (0..64).map(|k| (k + i) % 17 - 8 + thread).collect();
                        let ta = Tensor::from_slice(device, &[64], &a).unwrap();
                        let tb = Tensor::from_slice(device, &[64], &b).unwrap();
                        let e = ops::sub(&ops::mul(&ops::add(&ta, &tb).unwrap(), &tb).unwrap(), &ta).unwrap();
                        let expected: Vec<i32> = a.iter().zip(&b).map(|(x, y)| (x + y) * y - x).collect();
                        assert_eq!(e.to_vec::<i32>().unwrap(), expected, "thread {} iteration {}", thread, i);
                        // The runtime, shared by reference, answers from every thread.
                        assert!(rt.device_count() >= 1);
                    }
                })
            })
            .collect();
        for handle in handles {
            handle.join().unwrap();
        }
    });
    // And a clone of the runtime can move to a thread that outlives this scope's borrows.
    let moved = rt.clone();
    let name =
        std::thread::spawn(move || moved.find_device("cpu").unwrap().info().unwrap().plugin_name).join().unwrap();
    assert_eq!(name, "cpu");
}
