// tiny_op_bench.rs — the Rust binding's per-op cost, measured as bench/op_overhead_bench.c
// measures C's: `add` of two 1-element f32 tensors on the default device (the CPU plugin's
// device on a machine without accelerators), in two forms:
//   - run_into: ops::op_run_into with a preallocated output (ctl_op_run_into);
//   - binary:   ops::add, which makes a new Tensor that is then dropped (ctl_op_binary and
//               ctl_tensor_release, the C benchmark's second loop).
// Each form is also timed through the raw `sys` declarations, so the safe API's own cost is
// the difference. Prints one JSON line with the C benchmark's keys: the median over
// `--repeats` repeats of the nanoseconds per call (wall clock and this thread's CPU time).
//
//   cargo run --offline --release --example tiny_op_bench -- [--calls N] [--repeats R] [--device NAME]
use std::os::raw::{c_int, c_long};
use std::time::Instant;

use catalyst::{ops, sys, OpId, Runtime, Tensor};

#[repr(C)]
struct Timespec {
    tv_sec: c_long,
    tv_nsec: c_long,
}

extern "C" {
    // POSIX; Linux's CLOCK_THREAD_CPUTIME_ID is 3.
    fn clock_gettime(clock: c_int, ts: *mut Timespec) -> c_int;
}
const CLOCK_THREAD_CPUTIME_ID: c_int = 3;

/// This thread's CPU time in seconds: the same as wall time on an idle machine, and without
/// the time the thread waited for a CPU on a busy one.
fn cpu_seconds() -> f64 {
    let mut ts = Timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid out-pointer.
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Keeps the optimiser from dropping a value's computation (std::hint::black_box needs
/// Rust 1.66; this crate builds with 1.63).
fn black_box<T>(value: T) -> T {
    // SAFETY: a bitwise move of `value` through a volatile read; the original is forgotten.
    let moved = unsafe { std::ptr::read_volatile(&value) };
    std::mem::forget(value);
    moved
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(|a, b| a.partial_cmp(b).expect("timings are finite"));
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// Medians over `repeats` of the (wall, CPU) nanoseconds per call of `calls` calls of `op`.
fn time(repeats: usize, calls: usize, op: &mut dyn FnMut()) -> (f64, f64) {
    for _ in 0..1000 {
        op(); // warm-up: the first calls fault in pages and fill caches
    }
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..repeats {
        let (start, start_cpu) = (Instant::now(), cpu_seconds());
        for _ in 0..calls {
            op();
        }
        wall.push(start.elapsed().as_nanos() as f64 / calls as f64);
        cpu.push((cpu_seconds() - start_cpu) * 1e9 / calls as f64);
    }
    (median(wall), median(cpu))
}

fn main() -> catalyst::Result<()> {
    let (mut calls, mut repeats, mut device_name) = (200_000usize, 7usize, None);
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let value = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--calls" => calls = value.parse().expect("--calls N"),
            "--repeats" => repeats = value.parse().expect("--repeats R"),
            "--device" => device_name = Some(value),
            other => {
                eprintln!("usage: tiny_op_bench [--calls N] [--repeats R] [--device NAME] ({:?}?)", other);
                std::process::exit(2);
            }
        }
        i += 2;
    }
    assert!(calls > 0 && repeats > 0, "--calls and --repeats must be positive");

    let runtime = Runtime::new()?;
    let device = match &device_name {
        Some(name) => runtime.find_device(name)?,
        None => runtime.default_device()?,
    };
    let a = Tensor::from_slice(device, &[1], &[1.0f32])?;
    let b = Tensor::from_slice(device, &[1], &[2.0f32])?;
    let c = Tensor::empty(device, catalyst::DType::F32, &[1])?;

    let run_into = time(repeats, calls, &mut || {
        ops::op_run_into(OpId::ADD, &[Some(&a), Some(&b)], None, &[Some(&c)]).expect("run_into");
    });
    let binary = time(repeats, calls, &mut || {
        black_box(ops::add(&a, &b).expect("add"));
    });
    let (ra, rb, rc) = (a.as_raw(), b.as_raw(), c.as_raw());
    let inputs = [ra, rb];
    let raw_run_into = time(repeats, calls, &mut || {
        // SAFETY: live tensors; arrays valid for their counts.
        let status = unsafe { sys::ctl_op_run_into(sys::CTL_OP_ADD, 2, inputs.as_ptr(), std::ptr::null(), 1, &rc) };
        assert!(status.is_null());
    });
    let raw_binary = time(repeats, calls, &mut || {
        let mut out = std::ptr::null_mut();
        // SAFETY: live tensors and a valid out-pointer; the result is released at once.
        unsafe {
            assert!(sys::ctl_op_binary(sys::CTL_OP_ADD, ra, rb, &mut out).is_null());
            sys::ctl_tensor_release(black_box(out));
        }
    });
    let result = c.to_vec::<f32>()?;
    assert_eq!(result, vec![3.0], "1 + 2");
    println!(
        "{{\"framework\": \"catalyst-rust\", \"op\": \"add\", \"elements\": 1, \"device\": \"{}\", \"calls\": {}, \
         \"repeats\": {}, \"run_into_ns_per_call\": {:.1}, \"binary_ns_per_call\": {:.1}, \
         \"run_into_cpu_ns_per_call\": {:.1}, \"binary_cpu_ns_per_call\": {:.1}, \
         \"raw_run_into_ns_per_call\": {:.1}, \"raw_binary_ns_per_call\": {:.1}, \
         \"raw_run_into_cpu_ns_per_call\": {:.1}, \"raw_binary_cpu_ns_per_call\": {:.1}}}",
        device.info()?.name,
        calls,
        repeats,
        run_into.0,
        binary.0,
        run_into.1,
        binary.1,
        raw_run_into.0,
        raw_binary.0,
        raw_run_into.1,
        raw_binary.1
    );
    Ok(())
}
