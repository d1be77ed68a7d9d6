//! Ops: the generic `op_run` / `op_run_into` over any op id and attribute struct, and one
//! function per common op. Each makes exactly one C op call (`ctl_op_*`), so a program
//! reads as the sequence of calls it makes.

use std::os::raw::c_void;
use std::ptr;

use crate::dtype::DType;
use crate::error::{check, string_from, Error, Result, StatusCode};
use crate::sys;
use crate::tensor::{new_tensor, Tensor};

/// An op id (`ctl_op_id`). Any value may be passed; the library rejects unknown ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OpId(pub sys::ctl_op_id);

macro_rules! op_ids {
    ($($name:ident = $raw:ident,)*) => {
        impl OpId {
            $(pub const $name: OpId = OpId(sys::$raw);)*
        }
    };
}

op_ids! {
    NEG = CTL_OP_NEG, ABS = CTL_OP_ABS, EXP = CTL_OP_EXP, LOG = CTL_OP_LOG, SQRT = CTL_OP_SQRT,
    RSQRT = CTL_OP_RSQRT, TANH = CTL_OP_TANH, SIGMOID = CTL_OP_SIGMOID, RELU = CTL_OP_RELU,
    GELU = CTL_OP_GELU, GELU_TANH = CTL_OP_GELU_TANH, SILU = CTL_OP_SILU, SIN = CTL_OP_SIN,
    COS = CTL_OP_COS, RECIPROCAL = CTL_OP_RECIPROCAL,
    ADD = CTL_OP_ADD, SUB = CTL_OP_SUB, MUL = CTL_OP_MUL, DIV = CTL_OP_DIV, POW = CTL_OP_POW,
    MAXIMUM = CTL_OP_MAXIMUM, MINIMUM = CTL_OP_MINIMUM, EQ = CTL_OP_EQ, NE = CTL_OP_NE,
    LT = CTL_OP_LT, LE = CTL_OP_LE, GT = CTL_OP_GT, GE = CTL_OP_GE, WHERE = CTL_OP_WHERE,
    SUM = CTL_OP_SUM, MEAN = CTL_OP_MEAN, MAX = CTL_OP_MAX, MIN = CTL_OP_MIN,
    ARGMAX = CTL_OP_ARGMAX, ARGMIN = CTL_OP_ARGMIN, LOGSUMEXP = CTL_OP_LOGSUMEXP,
    MATMUL = CTL_OP_MATMUL,
    SOFTMAX = CTL_OP_SOFTMAX, LOG_SOFTMAX = CTL_OP_LOG_SOFTMAX, LAYER_NORM = CTL_OP_LAYER_NORM,
    RMS_NORM = CTL_OP_RMS_NORM,
    COPY = CTL_OP_COPY, CAST = CTL_OP_CAST, CONCAT = CTL_OP_CONCAT, GATHER = CTL_OP_GATHER,
    SCATTER_ADD = CTL_OP_SCATTER_ADD, FILL = CTL_OP_FILL, ARANGE = CTL_OP_ARANGE,
    RANDOM_UNIFORM = CTL_OP_RANDOM_UNIFORM, RANDOM_NORMAL = CTL_OP_RANDOM_NORMAL,
    CROSS_ENTROPY = CTL_OP_CROSS_ENTROPY, CROSS_ENTROPY_BACKWARD = CTL_OP_CROSS_ENTROPY_BACKWARD,
    ADAMW_STEP = CTL_OP_ADAMW_STEP, SGD_STEP = CTL_OP_SGD_STEP,
    SOFTMAX_BACKWARD = CTL_OP_SOFTMAX_BACKWARD, LOG_SOFTMAX_BACKWARD = CTL_OP_LOG_SOFTMAX_BACKWARD,
    LAYER_NORM_BACKWARD = CTL_OP_LAYER_NORM_BACKWARD, RMS_NORM_BACKWARD = CTL_OP_RMS_NORM_BACKWARD,
    GELU_BACKWARD = CTL_OP_GELU_BACKWARD, GELU_TANH_BACKWARD = CTL_OP_GELU_TANH_BACKWARD,
    CONV2D = CTL_OP_CONV2D, CONV2D_BACKWARD_INPUT = CTL_OP_CONV2D_BACKWARD_INPUT,
    CONV2D_BACKWARD_WEIGHT = CTL_OP_CONV2D_BACKWARD_WEIGHT, MAX_POOL2D = CTL_OP_MAX_POOL2D,
    MAX_POOL2D_BACKWARD = CTL_OP_MAX_POOL2D_BACKWARD, AVG_POOL2D = CTL_OP_AVG_POOL2D,
    AVG_POOL2D_BACKWARD = CTL_OP_AVG_POOL2D_BACKWARD,
    FUSED_ELEMENTWISE = CTL_OP_FUSED_ELEMENTWISE,
}

impl OpId {
    /// The library's name ("add", "matmul", ...); None for an unknown id.
    pub fn name(self) -> Option<String> {
        // SAFETY: ctl_op_name returns a static string or NULL.
        let name = unsafe { sys::ctl_op_name(self.0) };
        if name.is_null() {
            None
        } else {
            // SAFETY: non-NULL, static.
            Some(unsafe { string_from(name) })
        }
    }
}

/// An op attribute struct of the ABI (`ctl_*_attrs`); `new()` gives one with `struct_size`
/// set and the zero defaults catalyst.h documents.
///
/// # Safety
/// Implemented only for the `#[repr(C)]` attribute structs of `sys`, whose first field is
/// `struct_size`: the library reads at most `struct_size` bytes of them.
pub unsafe trait OpAttrs {
    /// The struct, for the C call.
    fn as_ptr(&self) -> *const c_void {
        self as *const Self as *const c_void
    }
}

macro_rules! op_attrs {
    ($($type:ident),*) => {$(
        // SAFETY: a repr(C) attribute struct from sys (see OpAttrs).
        unsafe impl OpAttrs for sys::$type {}
        impl sys::$type {
            /// Zeroed, with struct_size set: the op's defaults.
            pub fn new() -> sys::$type {
                let mut attrs = sys::$type::zeroed();
                attrs.struct_size = sys::$type::abi_size();
                attrs
            }
        }
        impl Default for sys::$type {
            fn default() -> sys::$type {
                sys::$type::new()
            }
        }
    )*};
}
op_attrs!(
    ctl_reduce_attrs,
    ctl_matmul_attrs,
    ctl_axis_attrs,
    ctl_norm_attrs,
    ctl_cast_attrs,
    ctl_fill_attrs,
    ctl_arange_attrs,
    ctl_random_attrs,
    ctl_cross_entropy_attrs,
    ctl_adamw_attrs,
    ctl_sgd_attrs,
    ctl_conv2d_attrs,
    ctl_pool2d_attrs,
    ctl_fused_elementwise_attrs
);

/// The handles of `tensors` (NULL for None), on the stack for the usual handful: a heap
/// allocation per op call would be most of the binding's cost on a tiny op.
enum RawList {
    Inline([*mut sys::ctl_tensor; 8], usize),
    Heap(Vec<*mut sys::ctl_tensor>),
}

impl RawList {
    #[inline]
    fn new(tensors: &[Option<&Tensor>]) -> RawList {
        let raw = |t: &Option<&Tensor>| t.map_or(ptr::null_mut(), |t| t.as_raw());
        if tensors.len() <= 8 {
            let mut inline = [ptr::null_mut(); 8];
            for (slot, t) in inline.iter_mut().zip(tensors) {
                *slot = raw(t);
            }
            RawList::Inline(inline, tensors.len())
        } else {
            RawList::Heap(tensors.iter().map(raw).collect())
        }
    }

    #[inline]
    fn as_slice(&self) -> &[*mut sys::ctl_tensor] {
        match self {
            RawList::Inline(inline, len) => &inline[..*len],
            RawList::Heap(heap) => heap,
        }
    }
}

fn attrs_ptr(attrs: Option<&dyn OpAttrs>) -> *const c_void {
    attrs.map_or(ptr::null(), |a| a.as_ptr())
}

/// Runs `op` on the device of its inputs (`ctl_op_run`) and returns `output_count` new
/// tensors. `None` inputs are the op's absent optional inputs.
pub fn op_run(
    op: OpId,
    inputs: &[Option<&Tensor>],
    attrs: Option<&dyn OpAttrs>,
    output_count: usize,
) -> Result<Vec<Tensor>> {
    let inputs = RawList::new(inputs);
    let inputs = inputs.as_slice();
    let mut outputs: Vec<*mut sys::ctl_tensor> = vec![ptr::null_mut(); output_count];
    // SAFETY: both arrays are valid for their counts; on success each output is a new
    // reference (or NULL for an optional output the op did not make).
    check(unsafe {
        sys::ctl_op_run(op.0, inputs.len(), inputs.as_ptr(), attrs_ptr(attrs), output_count, outputs.as_mut_ptr())
    })?;
    outputs
        .into_iter()
        .map(|raw| {
            if raw.is_null() {
                Err(Error::new(StatusCode::Internal, "ctl_op_run succeeded without an output"))
            } else {
                // SAFETY: a new reference we now own.
                Ok(unsafe { Tensor::from_raw(raw) })
            }
        })
        .collect()
}

/// Runs `op` writing into existing `outputs` (`ctl_op_run_into`; not recorded by autograd).
#[inline]
pub fn op_run_into(
    op: OpId,
    inputs: &[Option<&Tensor>],
    attrs: Option<&dyn OpAttrs>,
    outputs: &[Option<&Tensor>],
) -> Result<()> {
    let (inputs, outputs) = (RawList::new(inputs), RawList::new(outputs));
    let (inputs, outputs) = (inputs.as_slice(), outputs.as_slice());
    // SAFETY: both arrays are valid for their counts.
    check(unsafe {
        sys::ctl_op_run_into(op.0, inputs.len(), inputs.as_ptr(), attrs_ptr(attrs), outputs.len(), outputs.as_ptr())
    })
}

fn run1(op: OpId, inputs: &[Option<&Tensor>], attrs: Option<&dyn OpAttrs>) -> Result<Tensor> {
    let mut outputs = op_run(op, inputs, attrs, 1)?;
    Ok(outputs.remove(0))
}

/// An elementwise unary op (`ctl_op_unary`).
pub fn unary(op: OpId, x: &Tensor) -> Result<Tensor> {
    // SAFETY: the library checks the handle and op.
    new_tensor(|out| unsafe { sys::ctl_op_unary(op.0, x.as_raw(), out) })
}

/// An elementwise binary op with NumPy broadcasting (`ctl_op_binary`).
pub fn binary(op: OpId, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    // SAFETY: the library checks the handles and op.
    new_tensor(|out| unsafe { sys::ctl_op_binary(op.0, a.as_raw(), b.as_raw(), out) })
}

macro_rules! unary_ops {
    ($($name:ident = $id:ident),*) => {$(
        #[doc = concat!("`", stringify!($name), "(x)`, elementwise.")]
        pub fn $name(x: &Tensor) -> Result<Tensor> {
            unary(OpId::$id, x)
        }
    )*};
}
unary_ops!(
    neg = NEG,
    abs = ABS,
    exp = EXP,
    log = LOG,
    sqrt = SQRT,
    rsqrt = RSQRT,
    tanh = TANH,
    sigmoid = SIGMOID,
    relu = RELU,
    gelu = GELU,
    gelu_tanh = GELU_TANH,
    silu = SILU,
    sin = SIN,
    cos = COS,
    reciprocal = RECIPROCAL
);

macro_rules! binary_ops {
    ($($name:ident = $id:ident),*) => {$(
        #[doc = concat!("`", stringify!($name), "(a, b)`, elementwise with broadcasting.")]
        pub fn $name(a: &Tensor, b: &Tensor) -> Result<Tensor> {
            binary(OpId::$id, a, b)
        }
    )*};
}
binary_ops!(
    add = ADD,
    sub = SUB,
    mul = MUL,
    div = DIV,
    pow = POW,
    maximum = MAXIMUM,
    minimum = MINIMUM,
    eq = EQ,
    ne = NE,
    lt = LT,
    le = LE,
    gt = GT,
    ge = GE
);

/// `condition ? a : b`, elementwise with broadcasting (condition is bool).
pub fn where_(condition: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    run1(OpId::WHERE, &[Some(condition), Some(a), Some(b)], None)
}

/// A reduction over `axes` (empty: every axis) (`ctl_op_reduce`).
pub fn reduce(op: OpId, x: &Tensor, axes: &[i64], keepdims: bool) -> Result<Tensor> {
    let axes_ptr = if axes.is_empty() { ptr::null() } else { axes.as_ptr() };
    // SAFETY: axes is valid for its length.
    new_tensor(|out| unsafe { sys::ctl_op_reduce(op.0, x.as_raw(), axes.len(), axes_ptr, keepdims, out) })
}

macro_rules! reductions {
    ($($name:ident = $id:ident),*) => {$(
        #[doc = concat!("`", stringify!($name), "` over `axes` (empty: every axis).")]
        pub fn $name(x: &Tensor, axes: &[i64], keepdims: bool) -> Result<Tensor> {
            reduce(OpId::$id, x, axes, keepdims)
        }
    )*};
}
reductions!(sum = SUM, mean = MEAN, max = MAX, min = MIN, logsumexp = LOGSUMEXP);

/// The index (i64) of the largest element along `axis`.
pub fn argmax(x: &Tensor, axis: i64, keepdims: bool) -> Result<Tensor> {
    reduce(OpId::ARGMAX, x, &[axis], keepdims)
}

/// The index (i64) of the smallest element along `axis`.
pub fn argmin(x: &Tensor, axis: i64, keepdims: bool) -> Result<Tensor> {
    reduce(OpId::ARGMIN, x, &[axis], keepdims)
}

/// `a @ b`, batched (`ctl_op_matmul`).
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    // SAFETY: the library checks the handles.
    new_tensor(|out| unsafe { sys::ctl_op_matmul(a.as_raw(), b.as_raw(), out) })
}

/// `activation(alpha * op(a) @ op(b) + bias)` with the full attribute struct.
pub fn matmul_with(a: &Tensor, b: &Tensor, bias: Option<&Tensor>, attrs: &sys::ctl_matmul_attrs) -> Result<Tensor> {
    match bias {
        Some(bias) => run1(OpId::MATMUL, &[Some(a), Some(b), Some(bias)], Some(attrs)),
        None => run1(OpId::MATMUL, &[Some(a), Some(b)], Some(attrs)),
    }
}

/// Softmax along `axis` (`ctl_op_softmax`).
pub fn softmax(x: &Tensor, axis: i64) -> Result<Tensor> {
    // SAFETY: the library checks the handle and axis.
    new_tensor(|out| unsafe { sys::ctl_op_softmax(x.as_raw(), axis, out) })
}

/// Log-softmax along `axis`.
pub fn log_softmax(x: &Tensor, axis: i32) -> Result<Tensor> {
    let mut attrs = sys::ctl_axis_attrs::new();
    attrs.axis = axis;
    run1(OpId::LOG_SOFTMAX, &[Some(x)], Some(&attrs))
}

/// Layer normalisation over the last axis; weight and bias may be absent.
pub fn layer_norm(x: &Tensor, weight: Option<&Tensor>, bias: Option<&Tensor>, epsilon: f64) -> Result<Tensor> {
    let mut attrs = sys::ctl_norm_attrs::new();
    attrs.epsilon = epsilon;
    run1(OpId::LAYER_NORM, &[Some(x), weight, bias], Some(&attrs))
}

/// RMS normalisation over the last axis; weight may be absent.
pub fn rms_norm(x: &Tensor, weight: Option<&Tensor>, epsilon: f64) -> Result<Tensor> {
    let mut attrs = sys::ctl_norm_attrs::new();
    attrs.epsilon = epsilon;
    run1(OpId::RMS_NORM, &[Some(x), weight], Some(&attrs))
}

/// Converts to `dtype` (`ctl_op_cast`).
pub fn cast(x: &Tensor, dtype: DType) -> Result<Tensor> {
    // SAFETY: the library checks the handle and dtype.
    new_tensor(|out| unsafe { sys::ctl_op_cast(x.as_raw(), dtype.to_raw(), out) })
}

/// Joins tensors along `axis`.
pub fn concat(parts: &[&Tensor], axis: i32) -> Result<Tensor> {
    let inputs: Vec<Option<&Tensor>> = parts.iter().map(|t| Some(*t)).collect();
    let mut attrs = sys::ctl_axis_attrs::new();
    attrs.axis = axis;
    run1(OpId::CONCAT, &inputs, Some(&attrs))
}

/// Rows of `x` chosen by `index` (i32 or i64) along `axis`.
pub fn gather(x: &Tensor, index: &Tensor, axis: i32) -> Result<Tensor> {
    let mut attrs = sys::ctl_axis_attrs::new();
    attrs.axis = axis;
    run1(OpId::GATHER, &[Some(x), Some(index)], Some(&attrs))
}

/// `target` with `source` added at `index` along `axis`.
pub fn scatter_add(target: &Tensor, index: &Tensor, source: &Tensor, axis: i32) -> Result<Tensor> {
    let mut attrs = sys::ctl_axis_attrs::new();
    attrs.axis = axis;
    run1(OpId::SCATTER_ADD, &[Some(target), Some(index), Some(source)], Some(&attrs))
}

/// Cross-entropy of softmax(logits) over the last axis against class ids.
pub fn cross_entropy(logits: &Tensor, target: &Tensor, attrs: &sys::ctl_cross_entropy_attrs) -> Result<Tensor> {
    run1(OpId::CROSS_ENTROPY, &[Some(logits), Some(target)], Some(attrs))
}

/// Sets every element of `out` to `value` (not recorded).
pub fn fill_(out: &Tensor, value: f64) -> Result<()> {
    let mut attrs = sys::ctl_fill_attrs::new();
    attrs.value = value;
    op_run_into(OpId::FILL, &[], Some(&attrs), &[Some(out)])
}

/// Copies `source` into `destination` (same dtype; any strides; not recorded).
pub fn copy_(destination: &Tensor, source: &Tensor) -> Result<()> {
    op_run_into(OpId::COPY, &[Some(source)], None, &[Some(destination)])
}

/// One fused AdamW update of `param` and its moments, in place (`CTL_OP_ADAMW_STEP`).
pub fn adamw_step(
    grad: &Tensor,
    param: &Tensor,
    exp_avg: &Tensor,
    exp_avg_sq: &Tensor,
    attrs: &sys::ctl_adamw_attrs,
) -> Result<()> {
    op_run_into(OpId::ADAMW_STEP, &[Some(grad)], Some(attrs), &[Some(param), Some(exp_avg), Some(exp_avg_sq)])
}

/// One fused SGD update of `param` (and its momentum buffer when momentum is not 0).
pub fn sgd_step(
    grad: &Tensor,
    param: &Tensor,
    momentum_buf: Option<&Tensor>,
    attrs: &sys::ctl_sgd_attrs,
) -> Result<()> {
    op_run_into(OpId::SGD_STEP, &[Some(grad)], Some(attrs), &[Some(param), momentum_buf])
}

/// `count` elements start, start + step, ... on `device`.
pub fn arange(device: crate::Device<'_>, dtype: DType, count: i64, start: f64, step: f64) -> Result<Tensor> {
    let out = Tensor::empty(device, dtype, &[count])?;
    let mut attrs = sys::ctl_arange_attrs::new();
    attrs.start = start;
    attrs.step = step;
    op_run_into(OpId::ARANGE, &[], Some(&attrs), &[Some(&out)])?;
    Ok(out)
}

/// The distribution [`random`] draws from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Distribution {
    /// Uniform in [low, high).
    Uniform { low: f64, high: f64 },
    /// Normal with this mean and standard deviation.
    Normal { mean: f64, std: f64 },
}

/// Counter-based random numbers (Philox): the same seed and offset give the same numbers
/// on every device.
pub fn random(
    device: crate::Device<'_>,
    dtype: DType,
    shape: &[i64],
    distribution: Distribution,
    seed: u64,
    offset: u64,
) -> Result<Tensor> {
    let out = Tensor::empty(device, dtype, shape)?;
    let mut attrs = sys::ctl_random_attrs::new();
    attrs.seed = seed;
    attrs.offset = offset;
    let op = match distribution {
        Distribution::Uniform { low, high } => {
            attrs.a = low;
            attrs.b = high;
            OpId::RANDOM_UNIFORM
        }
        Distribution::Normal { mean, std } => {
            attrs.a = mean;
            attrs.b = std;
            OpId::RANDOM_NORMAL
        }
    };
    op_run_into(op, &[], Some(&attrs), &[Some(&out)])?;
    Ok(out)
}
