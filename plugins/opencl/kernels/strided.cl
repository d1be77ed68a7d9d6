// strided.cl — copying a strided view into another of the same shape and dtype (TA):
// behind the copy op and behind every family that wants contiguous operands.
__kernel void copy_strided(__global const R_(TA)* src, long src_offset, long8 src_strides,
                           __global R_(TA)* dst, long dst_offset, long8 dst_strides,
                           int rank, long8 shape, long n) {
  FOR_EACH_ITEM(i, n) {
    long8 index = ctl_unravel(i, rank, shape);
    // Bits to bits: no conversion, so NaN payloads and subnormals survive.
    dst[dst_offset + ctl_dot(index, dst_strides)] = src[src_offset + ctl_dot(index, src_strides)];
  }
}
