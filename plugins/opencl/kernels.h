// kernels.h — the op families. Each run_* reads and checks its call through the
// OpContext, builds (or finds) its program in the kernel cache and enqueues kernels on
// the context's stream without waiting for them.
#pragma once

#include "op_context.h"

namespace catalyst::opencl {

// elementwise.cpp — one template (kernels/elementwise.cl) instantiated per op and dtype
ctl_status* run_unary(const OpContext& ctx);
ctl_status* run_binary(const OpContext& ctx);
ctl_status* run_compare(const OpContext& ctx);
ctl_status* run_where(const OpContext& ctx);
ctl_status* run_gelu_backward(const OpContext& ctx);

// reduce.cpp — work-group tree reductions
ctl_status* run_reduce(const OpContext& ctx);

// matmul.cpp — tiled GEMM in local memory
ctl_status* run_matmul(const OpContext& ctx);

// normalization.cpp — one work-group per row
ctl_status* run_softmax(const OpContext& ctx);
ctl_status* run_layer_norm(const OpContext& ctx);
ctl_status* run_rms_norm(const OpContext& ctx);
ctl_status* run_softmax_backward(const OpContext& ctx);
ctl_status* run_layer_norm_backward(const OpContext& ctx);
ctl_status* run_rms_norm_backward(const OpContext& ctx);

// movement.cpp — copies, casts, indexing and creation
ctl_status* run_copy(const OpContext& ctx);
ctl_status* run_cast(const OpContext& ctx);
ctl_status* run_concat(const OpContext& ctx);
ctl_status* run_gather(const OpContext& ctx);
ctl_status* run_scatter_add(const OpContext& ctx);
ctl_status* run_fill(const OpContext& ctx);
ctl_status* run_arange(const OpContext& ctx);
ctl_status* run_random(const OpContext& ctx);

// training.cpp — fused loss and optimizer steps
ctl_status* run_cross_entropy(const OpContext& ctx);
ctl_status* run_cross_entropy_backward(const OpContext& ctx);
ctl_status* run_adamw_step(const OpContext& ctx);
ctl_status* run_sgd_step(const OpContext& ctx);

// conv_pool.cpp — direct convolution and pooling over NCHW
ctl_status* run_conv2d(const OpContext& ctx);
ctl_status* run_conv2d_backward_input(const OpContext& ctx);
ctl_status* run_conv2d_backward_weight(const OpContext& ctx);
ctl_status* run_max_pool2d(const OpContext& ctx);
ctl_status* run_max_pool2d_backward(const OpContext& ctx);
ctl_status* run_avg_pool2d(const OpContext& ctx);
ctl_status* run_avg_pool2d_backward(const OpContext& ctx);
// ABI 1.5
ctl_status* run_fused_elementwise(const OpContext& ctx);  // fused_elementwise.cpp

}  // namespace catalyst::opencl
