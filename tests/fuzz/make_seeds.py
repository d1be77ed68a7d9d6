#!/usr/bin/env python3
"""make_seeds.py - writes the seed corpora of the libFuzzer harnesses in tests/fuzz/.

Each harness decodes its input as a small program of API calls (see fuzz_support.h's
Input and each harness's decoder); the seeds below spell out a few valid programs byte by
byte so that fuzzing starts from the paths that succeed, not only from refusals. The
safetensors seeds are real files. Run it from anywhere; it rewrites corpus/<harness>/,
keeping the found_* inputs that fuzzers turned up:

    python3 tests/fuzz/make_seeds.py
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OPS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44,
       45, 64, 65, 66, 67, 68, 69, 70, 96, 128, 129, 130, 131, 160, 161, 162, 163, 164, 165, 166, 167, 168,
       192, 193, 194, 195, 224, 225, 226, 227, 228, 229, 256, 257, 258, 259, 260, 261, 262]  # ops_fuzzer.cpp's kOps
F32, I64, BOOL = 0, 7, 8


def write(harness, name, data):
    directory = os.path.join(HERE, "corpus", harness)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data)


# ---- views: a base f32 tensor, then steps (tensor pick, kind, arguments) ----------------
def small(v):  # Input::integer() for -9..9
    return bytes([v + 9])


def views_seeds():
    base = bytes([2, 3, 4])  # rank 2, shape (3, 4)
    # transpose, then reshape the (non-contiguous) result to (-1,), which needs a copy: refused
    write("views", "transpose_then_reshape", base + bytes([0, 2]) + small(0) + small(1) +
          bytes([1, 0, 1, 200]) + small(-1))
    # slice axis 1 from 1 to 4 step 2, then contiguous
    write("views", "slice_contiguous", base + bytes([0, 3]) + small(1) + small(1) + small(4) + small(2) +
          bytes([1, 5]))
    # expand (3, 4) -> (2, 3, 4), then permute (2, 0, 1)
    write("views", "expand_permute", base + bytes([0, 4, 3, 0, 2, 0, 3, 0, 4]) + bytes([1, 1, 0, 2, 0, 0, 0, 1]))
    # reshape with -1 into (2, 6)
    write("views", "reshape_inferred", base + bytes([0, 0, 2, 0, 2, 200]) + small(-1))
    write("views", "scalar", bytes([0, 0, 2, 0, 0]))


# ---- ops: tensors (dtype, rank, dims, bytes, view), then calls ----------------------------
def tensor(dtype, shape, payload, view=0):
    return bytes([dtype, len(shape)] + list(shape)) + payload + b"\0" + bytes([view])


def f32(*values):
    return struct.pack("<%df" % len(values), *values)


def call(op, inputs, attrs=None, outputs=1, form=0):
    out = bytes([OPS.index(op), len(inputs)])
    for i in inputs:
        out += bytes([0, i])  # present, pool index i
    if attrs is None:
        out += bytes([0])
    else:
        known, body = attrs
        # mode 100: the size of the struct at index `known` of kAttrSizes; body, then the
        # struct_size override byte (0: keep the true size)
        out += bytes([100, known]) + body + bytes([0])
    return out + bytes([outputs, form])


def ops_seeds():
    a = tensor(F32, [2, 3], f32(1, -2, 3, 0.5, 0, -0.25))
    b = tensor(F32, [3], f32(2, 4, 8))
    write("ops", "add_broadcast", bytes([1]) + a + b + call(32, [0, 1]))
    write("ops", "unary_chain", bytes([0]) + a + call(7, [0]) + call(3, [1]) + call(65, [2]))
    m = tensor(F32, [2, 2], f32(1, 2, 3, 4))
    mt = tensor(F32, [2, 2], f32(0, 1, 1, 0), view=1)
    write("ops", "matmul_transposed", bytes([1]) + m + mt + call(96, [0, 1]))
    reduce_attrs = struct.pack("<QI8i?", 45, 1, -1, 0, 0, 0, 0, 0, 0, 0, True)  # 45 bytes
    write("ops", "sum_keepdims", bytes([0]) + a + call(64, [0], attrs=(0, reduce_attrs)))
    axis_attrs = struct.pack("<Qi", 12, 0)
    write("ops", "softmax_axis0", bytes([0]) + a + call(128, [0], attrs=(2, axis_attrs)))
    write("ops", "compare_where", bytes([1]) + a + tensor(F32, [2, 3], f32(0, 0, 0, 0, 0, 0)) +
          call(41, [0, 1]) + call(45, [2, 0, 1]))
    idx = tensor(I64, [2], struct.pack("<2q", 2, 0))
    write("ops", "gather", bytes([1]) + a + idx + call(163, [0, 1], attrs=(2, struct.pack("<Qi", 12, 1))))


# ---- dlpack: one struct's fields (see decode() in dlpack_fuzzer.cpp) ----------------------
def dlpack(versioned=0, rank=2, dtype=0, shape=(3, 4), strides=None, offset=0, device=0):
    form = bytes([versioned])
    dims = bytes(list(shape) + [0] * (12 - len(shape)))
    if strides is None:
        strided = bytes([0]) + bytes(12)  # 0 % 3 == 0: no strides
    else:
        strided = bytes([1]) + bytes(list(strides) + [0] * (12 - len(strides)))
    return form + bytes([device, rank, dtype]) + dims + strided + bytes([0, offset, 0])


def dlpack_seeds():
    write("dlpack", "contiguous_f32", dlpack())
    write("dlpack", "strided_versioned", dlpack(versioned=1, strides=(1, 3)))
    write("dlpack", "offset_i64", dlpack(dtype=7, shape=(2, 2), offset=16))
    write("dlpack", "pinned_u8_rank3", dlpack(rank=3, dtype=5, shape=(2, 3, 4), device=210))
    write("dlpack", "wrapping_offset", dlpack(offset=163))  # UINT64_MAX - 3: refused


# ---- safetensors: real files -------------------------------------------------------------
def safetensors(tensors, metadata=None):
    header, data = {}, b""
    for name, (dtype, shape, payload) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(payload)]}
        data += payload
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def safetensors_seeds():
    write("safetensors", "one_f32", safetensors({"w": ("F32", [2, 2], f32(1, 2, 3, 4))}))
    write("safetensors", "mixed_with_metadata", safetensors({
        "a": ("I64", [2], struct.pack("<2q", -1, 7)),
        "b": ("BOOL", [3], bytes([0, 1, 1])),
        "c": ("BF16", [1, 2], b"\x80\x3f\x00\x40"),
        "empty": ("F16", [0, 5], b""),
    }, metadata={"step": "100", "format": "pt"}))
    write("safetensors", "empty_header", safetensors({}))
    write("safetensors", "unicode_names", safetensors({"\u00e9t\u00e9\\n": ("U8", [1], b"\x05")}))


def clear_generated(harness):
    """Removes the seeds this script wrote before; inputs a fuzzer found (found_*) stay,
    as regression inputs the seed tests replay."""
    directory = os.path.join(HERE, "corpus", harness)
    if not os.path.isdir(directory):
        return
    for name in os.listdir(directory):
        if not name.startswith("found_"):
            os.remove(os.path.join(directory, name))


if __name__ == "__main__":
    for harness in ("views", "ops", "dlpack", "safetensors"):
        clear_generated(harness)
    views_seeds()
    ops_seeds()
    dlpack_seeds()
    safetensors_seeds()
