// shaders.h — the SPIR-V of every shader variant, compiled from shaders/*.comp by glslc at
// build time and embedded by embed_shaders.cmake. A variant is "<family>.<dtype tags>"
// ("elementwise.f32", "cast.f16.i64"): one GLSL template per family, specialised per dtype
// by -D defines.
#pragma once

#include <cstddef>
#include <cstdint>

namespace catalyst::vulkan {

struct ShaderCode {
  const char* name;
  const unsigned char* code;  // 4-byte aligned SPIR-V
  size_t size;                // bytes
};

// The variant called `name`, or NULL.
const ShaderCode* find_shader(const char* name);
// A hash of every embedded shader: part of the pipeline cache's key.
uint64_t shaders_hash();

}  // namespace catalyst::vulkan
