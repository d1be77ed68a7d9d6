// convert.glsl — the cast rules of docs/ops.md from C_(TA) to C_(TB): float to integer
// truncates toward zero and saturates, NaN becomes 0; anything to bool is x != 0; integers
// wrap. Used by cast and by arange (TA = f64 there).

#define LO_i8 -128.0
#define HI_i8 127.0
#define LO_u8 0.0
#define HI_u8 255.0
#define LO_i32 -2147483648.0
#define HI_i32 2147483647.0

#if TA_WIDE && (defined(TB_IS_f16) || defined(TB_IS_bf16))
// double -> float rounded to odd: the float nearest below or above, whichever has an odd
// last bit when the value is not exact, so the second rounding (to 16 bits) is the correct
// one and double rounding cannot occur.
float ctl_float_odd(double d) {
  float f = float(d);
  if (isinf(f) || isnan(f) || double(f) == d) return f;
  uint b = floatBitsToUint(f);
  if ((b & 1u) == 0u) b = abs(double(f)) > abs(d) ? b - 1u : b + 1u;
  return uintBitsToFloat(b);
}
#define TO_COMPUTE_B(v) ctl_float_odd(v)
#elif !TA_FLOAT && (defined(TB_IS_f16) || defined(TB_IS_bf16))
// An integer -> float rounded to odd, from its exact magnitude: at most 24 significant bits
// are kept and any dropped bit sets the last kept one, so the value is exact in a float and
// the rounding to 16 bits is the only one. float(v) would round first (i64 2^40 + 2^32 + 1
// to 2^40 + 2^32, a bf16 halfway case that then rounds down instead of up); so would i32
// past 2^24.
// The magnitude's top 24 bits, the last one set when any bit below them is.
float ctl_float_odd_of(uint hi, uint lo) {
  int top = hi != 0u ? 32 + findMSB(hi) : findMSB(lo);  // -1 for 0
  if (top <= 23) return float(lo);                     // exact below 2^24
  uint shift = uint(top - 23);
  uint kept, dropped;
  if (shift >= 32u) {
    kept = hi >> (shift - 32u);
    dropped = lo | (hi & ((1u << (shift - 32u)) - 1u));
  } else {
    kept = (lo >> shift) | (hi << (32u - shift));
    dropped = lo & ((1u << shift) - 1u);
  }
  if (dropped != 0u) kept |= 1u;
  return ldexp(float(kept), int(shift));  // kept < 2^24: exact, and so is the scaling
}
// Narrow integers compute as int; i64 as int64_t. The magnitude of the most negative value
// is right as an unsigned number (2^31, 2^63).
float ctl_int_float_odd(int v) { return v < 0 ? -ctl_float_odd_of(0u, uint(-v)) : ctl_float_odd_of(0u, uint(v)); }
float ctl_int_float_odd(int64_t v) {
  uint64_t a = v < 0l ? uint64_t(-v) : uint64_t(v);
  float f = ctl_float_odd_of(uint(a >> 32), uint(a));
  return v < 0l ? -f : f;
}
#define TO_COMPUTE_B(v) ctl_int_float_odd(v)
#else
#define TO_COMPUTE_B(v) C_(TB)(v)
#endif

C_(TB) ctl_convert(C_(TA) v) {
#if defined(TB_IS_bool)
  return v != C_(TA)(0) ? 1 : 0;
#elif TB_FLOAT
  return TO_COMPUTE_B(v);
#elif TA_FLOAT
  if (isnan(v)) return C_(TB)(0);
#if defined(TB_IS_i64)
  if (v >= C_(TA)(9223372036854775808.0)) return C_(TB)(0x7fffffffffffffffl);
  if (v < C_(TA)(-9223372036854775808.0)) return C_(TB)(0x8000000000000000ul);
  return C_(TB)(v);
#else
  if (v >= C_(TA)(CAT(HI_, TB))) return C_(TB)(CAT(HI_, TB));
  if (v <= C_(TA)(CAT(LO_, TB))) return C_(TB)(CAT(LO_, TB));
  return C_(TB)(v);
#endif
#else
  return C_(TB)(v);
#endif
}
