// host_reduce.h — the element arithmetic of reductions between ranks, on host bytes: one
// definition of "add", "max", "min" and "mean" per dtype, so that every collective that
// reduces (in-process today) computes each element the same way.
#pragma once

#include <cstddef>
#include <cstdint>

#include "catalyst_comm.h"

namespace catalyst::comm {

// right[i] = left[i] (op) right[i] for i < count. The left operand is the partial result
// that arrived from the previous rank of the ring, the right one this rank's own; the order
// matters for floating point and is the same on every rank. f16 and bf16 compute in f32
// and round once; integers wrap; MAX and MIN propagate NaN. MEAN combines as SUM.
void combine(ctl_dtype dtype, ctl_comm_reduce_op op, const void* left, void* right, uint64_t count);

// data[i] /= ranks, for MEAN (integers truncate toward zero).
void divide(ctl_dtype dtype, void* data, uint64_t count, uint32_t ranks);

// Whether collectives reduce this dtype (every dtype but bool, i8 and u8).
bool reducible(ctl_dtype dtype);

// Chunk c of `count` elements split into `parts` nearly equal chunks: [begin, end).
inline uint64_t chunk_begin(uint64_t count, uint32_t parts, uint32_t c) {
  return count / parts * c + (c < count % parts ? c : count % parts);
}

}  // namespace catalyst::comm
