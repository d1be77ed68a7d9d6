// kernels.h — one entry per op family. Each validates the parts of the call it relies on
// and runs the op to completion on the calling thread plus the instance's pool.
#pragma once

#include "op_context.h"

namespace catalyst::cpu {

ctl_status* run_unary(const OpContext& ctx);        // elementwise_unary.cpp
ctl_status* run_binary(const OpContext& ctx);       // elementwise_binary.cpp (arithmetic)
ctl_status* run_compare(const OpContext& ctx);      // elementwise_binary.cpp
ctl_status* run_where(const OpContext& ctx);        // elementwise_binary.cpp
ctl_status* run_reduce(const OpContext& ctx);       // reduce.cpp
ctl_status* run_matmul(const OpContext& ctx);       // matmul.cpp
ctl_status* run_softmax(const OpContext& ctx);      // normalization.cpp (and log_softmax)
ctl_status* run_layer_norm(const OpContext& ctx);   // normalization.cpp
ctl_status* run_rms_norm(const OpContext& ctx);     // normalization.cpp
ctl_status* run_copy(const OpContext& ctx);         // movement.cpp
ctl_status* run_cast(const OpContext& ctx);         // movement.cpp
ctl_status* run_concat(const OpContext& ctx);       // movement.cpp
ctl_status* run_gather(const OpContext& ctx);       // indexing.cpp
ctl_status* run_scatter_add(const OpContext& ctx);  // indexing.cpp
ctl_status* run_fill(const OpContext& ctx);         // creation.cpp
ctl_status* run_arange(const OpContext& ctx);       // creation.cpp
ctl_status* run_random(const OpContext& ctx);       // creation.cpp
// ABI 1.1
ctl_status* run_gelu_backward(const OpContext& ctx);           // elementwise_binary.cpp (and gelu_tanh)
ctl_status* run_cross_entropy(const OpContext& ctx);           // training.cpp
ctl_status* run_cross_entropy_backward(const OpContext& ctx);  // training.cpp
ctl_status* run_adamw_step(const OpContext& ctx);              // training.cpp
ctl_status* run_sgd_step(const OpContext& ctx);                // training.cpp
ctl_status* run_softmax_backward(const OpContext& ctx);        // normalization_backward.cpp (and log_softmax)
ctl_status* run_layer_norm_backward(const OpContext& ctx);     // normalization_backward.cpp
ctl_status* run_rms_norm_backward(const OpContext& ctx);       // normalization_backward.cpp
ctl_status* run_conv2d(const OpContext& ctx);                  // conv_pool.cpp
ctl_status* run_conv2d_backward_input(const OpContext& ctx);   // conv_pool.cpp
ctl_status* run_conv2d_backward_weight(const OpContext& ctx);  // conv_pool.cpp
ctl_status* run_max_pool2d(const OpContext& ctx);              // conv_pool.cpp
ctl_status* run_max_pool2d_backward(const OpContext& ctx);     // conv_pool.cpp
ctl_status* run_avg_pool2d(const OpContext& ctx);              // conv_pool.cpp
ctl_status* run_avg_pool2d_backward(const OpContext& ctx);     // conv_pool.cpp
// ABI 1.5
ctl_status* run_fused_elementwise(const OpContext& ctx);  // fused_elementwise.cpp

// movement.cpp: copies src into dst element by element (same shape, same element size),
// in parallel; shared by copy, concat and scatter_add.
void copy_elements(const OpContext& ctx, const View& src, const View& dst);

}  // namespace catalyst::cpu
