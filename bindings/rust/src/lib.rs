//! Catalyst from Rust: a safe binding over the C ABI of `abi/catalyst.h`, adding nothing the
//! ABI does not guarantee.
//!
//! ```no_run
//! use catalyst::{ops, DType, Runtime, Tensor};
//!
//! fn main() -> catalyst::Result<()> {
//!     let runtime = Runtime::new()?; // discovers the installed plugins
//!     let device = runtime.default_device()?;
//!     let w = Tensor::from_slice(device, &[3], &[0.5f32, -1.0, 2.0])?;
//!     w.set_requires_grad(true)?;
//!     let loss = ops::sum(&ops::mul(&ops::exp(&w)?, &w)?, &[], false)?;
//!     loss.backward()?; // d/dw = exp(w) (1 + w)
//!     let grad: Vec<f32> = w.grad()?.expect("backward reached w").to_vec()?;
//!     println!("{:?} {:?}", grad, DType::F32);
//!     Ok(())
//! }
//! ```
//!
//! - Every fallible call returns [`Result`]; its [`Error`] carries the status code and the
//!   message the C call returned.
//! - [`Runtime`] and [`Tensor`] own a reference and release it when dropped; clones are new
//!   references. [`Device`] is borrowed from the runtime (or tensor) it came from.
//! - Slices go in ([`Tensor::from_slice`]) and `Vec`s come out ([`Tensor::to_vec`]), with the
//!   Rust element type checked against the tensor's dtype.
//! - [`ops`] has one function per op and the generic [`ops::op_run`] / [`ops::op_run_into`].
//! - [`Graph`] captures a closure's ops once and launches them many times.
//! - [`DlpackTensor`] is DLPack 1.x's managed tensor, with its deleter called exactly once.
//!
//! # Threads
//!
//! The marker traits follow what catalyst.h promises (its "Threads" section): [`Runtime`]
//! and [`Device`] are `Send` and `Sync`; so is [`Error`]. [`Tensor`] is neither, because
//! one autograd graph must be recorded and backpropagated by one thread at a time and the
//! library takes no locks for it; [`DlpackTensor`] and the [`NoGrad`] guard are not `Send`
//! either. The checks below fail to compile, and that is the test:
//!
//! ```compile_fail
//! fn send<T: Send>() {}
//! send::<catalyst::Tensor>();
//! ```
//! ```compile_fail
//! fn sync<T: Sync>() {}
//! sync::<catalyst::Tensor>();
//! ```
//! ```compile_fail
//! fn send<T: Send>() {}
//! send::<catalyst::DlpackTensor>();
//! ```
//! ```compile_fail
//! fn send<T: Send>() {}
//! send::<catalyst::NoGrad<'static>>();
//! ```
//! ```compile_fail
//! // A tensor cannot be moved into another thread.
//! fn use_elsewhere(t: catalyst::Tensor) {
//!     std::thread::spawn(move || drop(t));
//! }
//! ```
//!
//! The same checks with the types that are thread-safe compile:
//!
//! ```no_run
//! fn send_sync<T: Send + Sync>() {}
//! send_sync::<catalyst::Runtime>();
//! send_sync::<catalyst::Device<'static>>();
//! send_sync::<catalyst::Error>();
//! fn use_elsewhere(runtime: catalyst::Runtime) {
//!     std::thread::spawn(move || drop(runtime));
//! }
//! ```

pub mod sys;

mod device;
mod dlpack;
mod dtype;
mod error;
mod graph;
pub mod ops;
mod placement;
mod runtime;
mod tensor;
mod topology;

pub use device::{Device, DeviceInfo, DeviceKind};
pub use dlpack::{dl_dtype, DlpackTensor};
pub use dtype::{DType, Element};
pub use error::{Error, Result, StatusCode};
pub use graph::{Graph, GraphStage, GraphStats, PassRecord};
pub use ops::{OpAttrs, OpId};
pub use placement::DeviceUsage;
pub use runtime::{NoGrad, PluginInfo, Runtime, RuntimeOptions};
pub use tensor::Tensor;
pub use topology::{Locality, LocalityJoin};

/// The ABI version the loaded library implements (major, minor).
pub fn abi_version() -> (u32, u32) {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: two valid out-pointers.
    unsafe { sys::ctl_abi_version(&mut major, &mut minor) };
    (major, minor)
}
