// math_f64.glsl — exp, log and pow in double from + - * / alone (GLSL has no double
// transcendentals), for devices with shaderFloat64: f64 ops use them directly, f32/f16/bf16
// ops in the ".d" variants compute through them and round once, which keeps those results
// within an ulp or two where the driver's float exp may be several off.

double ctl_inf_d() { return packDouble2x32(uvec2(0u, 0x7ff00000u)); }
double ctl_nan_d() { return packDouble2x32(uvec2(0u, 0x7ff80000u)); }

// 2^e for e in [-1022, 1023].
double ctl_pow2_d(int e) { return packDouble2x32(uvec2(0u, uint(e + 1023) << 20)); }

const double CTL_LN2_HI = 6.93147180369123816490e-01lf;  // ln 2 to 32 bits: k * hi is exact
const double CTL_LN2_LO = 1.90821492927058770002e-10lf;

// e^x as p 2^e with p in [0.7, 1.42] (x finite, in (-745.2, 709.8)).
void ctl_exp_parts_d(double x, out double p, out int e) {
  double k = floor(x * 1.4426950408889634lf + 0.5lf);
  // precise: the two steps must not be folded into one product with a rounded ln 2.
  precise double r = (x - k * CTL_LN2_HI) - k * CTL_LN2_LO;  // |r| <= 0.35
  // Taylor to r^13 / 13!: the next term is below 2^-60 of the sum.
  double q = 1.0lf / 6227020800.0lf;
  q = q * r + 1.0lf / 479001600.0lf;
  q = q * r + 1.0lf / 39916800.0lf;
  q = q * r + 1.0lf / 3628800.0lf;
  q = q * r + 1.0lf / 362880.0lf;
  q = q * r + 1.0lf / 40320.0lf;
  q = q * r + 1.0lf / 5040.0lf;
  q = q * r + 1.0lf / 720.0lf;
  q = q * r + 1.0lf / 120.0lf;
  q = q * r + 1.0lf / 24.0lf;
  q = q * r + 1.0lf / 6.0lf;
  q = q * r + 0.5lf;
  q = q * r + 1.0lf;
  p = q * r + 1.0lf;
  e = int(k);
}

// v 2^e with powers of two made from their bits (exact; drivers may lower ldexp through
// float math), in two steps where 2^e alone would leave the normal range.
double ctl_scale_d(double v, int e) {
  if (e < -1000) return (v * ctl_pow2_d(e + 600)) * ctl_pow2_d(-600);
  if (e > 1000) return (v * ctl_pow2_d(e - 100)) * ctl_pow2_d(100);
  return v * ctl_pow2_d(e);
}

double ctl_exp_d(double x) {
  if (isnan(x)) return x;
  if (x > 709.782712893384lf) return ctl_inf_d();
  if (x < -745.2lf) return 0.0lf;
  double p;
  int e;
  ctl_exp_parts_d(x, p, e);
  return ctl_scale_d(p, e);
}

// c e^x, scaled last, so a normal result is not lost to a subnormal e^x on the way.
double ctl_mul_exp_d(double c, double x) {
  if (isnan(x) || isinf(x) || isinf(c) || x > -700.0lf) return c * ctl_exp_d(x);
  // Below e^-1100 only a huge c keeps a product: c's signed zero, from its bits (drivers
  // may fold c * 0 to +0).
  if (x < -1100.0lf) return packDouble2x32(uvec2(0u, unpackDouble2x32(c).y & 0x80000000u));
  double p;
  int e;
  ctl_exp_parts_d(x, p, e);
  return ctl_scale_d(c * p, e);
}

// Drivers need not fuse fma, so products that must be exact are Dekker's (Veltkamp splits)
// under `precise`. a * b = p + e exactly (|a|, |b| well below 2^996, so the splits cannot overflow).
void ctl_two_prod_d(double a, double b, out double p, out double e) {
  precise double ca = 134217729.0lf * a;  // 2^27 + 1
  precise double ah = ca - (ca - a);
  precise double al = a - ah;
  precise double cb = 134217729.0lf * b;
  precise double bh = cb - (cb - b);
  precise double bl = b - bh;
  precise double pp = a * b;
  precise double ee = ((ah * bh - pp) + ah * bl + al * bh) + al * bl;
  p = pp;
  e = ee;
}

// a + b = s + e exactly, in any order of magnitude (Knuth's two-sum).
void ctl_two_sum_d(double a, double b, out double s, out double e) {
  precise double ss = a + b;
  precise double bb = ss - a;
  precise double ee = (a - (ss - bb)) + (b - bb);
  s = ss;
  e = ee;
}

// log x = hi + lo for finite x > 0.
void ctl_log_dd(double x, out double hi, out double lo) {
  // x = m 2^e, m in [0.5, 1), from x's bits alone: no arithmetic touches x, so a driver
  // that flushes f64 subnormals in arithmetic still gets a subnormal x's logarithm right.
  uvec2 b = unpackDouble2x32(x);
  int be = int(b.y >> 20);  // x > 0: no sign bit
  uint fhi = b.y & 0xfffffu, flo = b.x;
  int e = be - 1022;
  if (be == 0) {  // subnormal: shift the fraction's leading 1 up to bit 52
    int top = fhi != 0u ? 32 + findMSB(fhi) : findMSB(flo);
    int shift = 52 - top;  // 1 .. 52
    if (shift >= 32) {
      fhi = flo << uint(shift - 32);
      flo = 0u;
    } else {
      fhi = (fhi << uint(shift)) | (flo >> uint(32 - shift));
      flo <<= uint(shift);
    }
    fhi &= 0xfffffu;
    e = -1021 - shift;
  }
  double m = packDouble2x32(uvec2(flo, (1022u << 20) | fhi));  // [0.5, 1)
  if (m < 0.70710678118654752440lf) {
    m *= 2.0lf;
    e -= 1;
  }
  // log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716: 2s + 2s^3 t(s^2), t the odd
  // series' tail to s^23. s is taken as s + sl (m - 1 is exact, m + 1 as a two-sum) so that
  // pow, which multiplies the logarithm by up to 1e300, gets it to about 2^-100.
  double den, den_lo, sp, sp_lo;
  ctl_two_sum_d(m, 1.0lf, den, den_lo);
  double num = m - 1.0lf;
  double s = num / den;
  ctl_two_prod_d(s, den, sp, sp_lo);
  precise double sl = ((num - sp) - sp_lo - s * den_lo) / den;
  double s2 = s * s;
  double t = 1.0lf / 23.0lf;
  t = t * s2 + 1.0lf / 21.0lf;
  t = t * s2 + 1.0lf / 19.0lf;
  t = t * s2 + 1.0lf / 17.0lf;
  t = t * s2 + 1.0lf / 15.0lf;
  t = t * s2 + 1.0lf / 13.0lf;
  t = t * s2 + 1.0lf / 11.0lf;
  t = t * s2 + 1.0lf / 9.0lf;
  t = t * s2 + 1.0lf / 7.0lf;
  t = t * s2 + 1.0lf / 5.0lf;
  t = t * s2 + 1.0lf / 3.0lf;
  double de = double(e);
  // de ln2_hi is exact (32 + 11 bits); the rest is small beside it or beside 2s.
  double big, big_lo;
  ctl_two_sum_d(de * CTL_LN2_HI, 2.0lf * s, big, big_lo);
  precise double rest = big_lo + (de * CTL_LN2_LO + 2.0lf * sl + 2.0lf * s * s2 * t);
  precise double h = big + rest;
  hi = h;
  lo = rest - (h - big);
}

double ctl_log_d(double x) {
  if (isnan(x) || x < 0.0lf) return ctl_nan_d();
  if (x == 0.0lf) return -ctl_inf_d();
  if (isinf(x)) return x;
  double hi, lo;
  ctl_log_dd(x, hi, lo);
  return hi + lo;
}

// e^(q log p) with q log p as a double-double: q times up to 709 / q of logarithm needs the
// logarithm to far more than 53 bits (rounding log p alone was 870 ulp off at p^1.5 = 6e287).
double ctl_exp_q_log_d(double p, double q) {
  double h, l, ph, pl;
  ctl_log_dd(p, h, l);
  // Past |q log p| = 1000 the result is 0 or inf whatever the low part (and q may be too
  // large to split).
  if (!(abs(q * h) <= 1000.0lf)) return ctl_exp_d(q * h);
  ctl_two_prod_d(q, h, ph, pl);
  return ctl_mul_exp_d(1.0lf + (pl + q * l), ph);
}

// C's pow for the cases the reference meets: signs, zeros, infinities, integer exponents
// of negative bases; the rest as exp(q log p).
double ctl_pow_d(double p, double q) {
  if (q == 0.0lf || p == 1.0lf) return 1.0lf;
  if (isnan(p) || isnan(q)) return p + q;
  bool q_int = floor(q) == q;
  bool q_odd = q_int && abs(q) < 9007199254740992.0lf && fract(q * 0.5lf) != 0.0lf;
  if (isinf(q)) {
    double a = abs(p);
    if (a == 1.0lf) return 1.0lf;
    return (a > 1.0lf) == (q > 0.0lf) ? ctl_inf_d() : 0.0lf;
  }
  if (p == 0.0lf) {
    bool negative_zero = (unpackDouble2x32(p).y >> 31) != 0u;
    if (q < 0.0lf) return (q_odd && negative_zero) ? -ctl_inf_d() : ctl_inf_d();
    return q_odd ? p : 0.0lf;
  }
  if (isinf(p)) {
    if (p > 0.0lf) return q < 0.0lf ? 0.0lf : p;
    if (q < 0.0lf) return q_odd ? -0.0lf : 0.0lf;
    return q_odd ? p : -p;
  }
  if (p < 0.0lf) {
    if (!q_int) return ctl_nan_d();
    double r = ctl_exp_q_log_d(-p, q);
    return q_odd ? -r : r;
  }
  return ctl_exp_q_log_d(p, q);
}

// erfc(x) with the Chebyshev fit of activation.glsl (relative error < 1.2e-7lf) in double, so
// its exp(-x^2) does not underflow where erfc is still a normal float.
double ctl_erfc_d(double x) {
  double z = abs(x);
  double t = 1.0lf / (1.0lf + 0.5lf * z);
  double r = t * ctl_exp_d(-z * z - 1.26551223lf +
                           t * (1.00002368lf +
                                t * (0.37409196lf +
                                     t * (0.09678418lf +
                                          t * (-0.18628806lf +
                                               t * (0.27886807lf +
                                                    t * (-1.13520398lf +
                                                         t * (1.48851587lf + t * (-0.82215223lf + t * 0.17087277lf)))))))));
  return x >= 0.0lf ? r : 2.0lf - r;
}

// e^x - 1 for |x| < 1.25lf, from its Taylor series (no cancellation near 0): Horner over
// x (1 + x/2 (1 + x/3 (...))) to x^22 / 22!.
double ctl_expm1_small_d(double x) {
  double p = 1.0lf;
  for (int k = 22; k >= 2; --k) p = 1.0lf + p * x / double(k);
  return x * p;
}

double ctl_tanh_d(double x) {
  double a = abs(x);
  double t;
  if (a > 22.0lf) {
    t = 1.0lf;
  } else if (a < 0.625lf) {
    double e = ctl_expm1_small_d(2.0lf * a);
    t = e / (e + 2.0lf);
  } else {
    t = 1.0lf - 2.0lf / (ctl_exp_d(2.0lf * a) + 1.0lf);
  }
  if (a == 0.0lf) return x;  // keeps the sign of zero
  return x < 0.0lf ? -t : t;
}

// x / (1 + exp(-y)) without overflow in exp(-y) where the result is still representable.
double ctl_x_sigmoid_d(double x, double y) {
  if (y < -700.0lf) return ctl_mul_exp_d(x, y);
  return x / (1.0lf + ctl_exp_d(-y));
}
double ctl_gelu_d(double x) { return 0.5lf * x * ctl_erfc_d(x * -0.70710678118654752440lf); }
double ctl_gelu_tanh_d(double x) {
  return ctl_x_sigmoid_d(x, 2.0lf * 0.79788456080286535587989211986876lf * (x + 0.044715lf * x * x * x));
}
double ctl_gelu_grad_d(double x) {
  double cdf = 0.5lf * ctl_erfc_d(x * -0.70710678118654752440lf);
  double pdf = ctl_exp_d(-0.5lf * x * x) * 0.39894228040143267793994605993438lf;
  return cdf + x * pdf;
}
double ctl_gelu_tanh_grad_d(double x) {
  double k = 0.79788456080286535587989211986876lf;
  double z = k * (x + 0.044715lf * x * x * x);
  double a = -2.0lf * abs(z);
  double e = ctl_exp_d(a);
  double r = 1.0lf / (1.0lf + e);
  double s = z >= 0.0lf ? r : e * r;
  if (e == 0.0lf) return isinf(x) ? ctl_nan_d() : s;  // x^3 overflowed: inf - inf in the reference
  return s + 2.0lf * k * x * (1.0lf + 3.0lf * 0.044715lf * x * x) * (e * r * r);
}

// sin or cos of a float argument, correctly reduced over the whole float range: below 2^19
// by Cody-Waite in double (k * the first part of pi/2 is exact), above by Payne-Hanek with
// the bits of 2/pi below, as integers: 1280 of them, enough for the f64 reduction of
// special_f64.glsl as well (the first 384 are fdlibm's table; all were computed with
// mpmath at 1400 bits, floor(2^1280 * 2 / pi)).
const uint CTL_TWO_OVER_PI[40] = uint[](0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u, 0x3C439041u,
                                        0xFE5163ABu, 0xDEBBC561u, 0xB7246E3Au, 0x424DD2E0u, 0x06492EEAu, 0x09D1921Cu,
                                        0xFE1DEB1Cu, 0xB129A73Eu, 0xE88235F5u, 0x2EBB4484u, 0xE99C7026u, 0xB45F7E41u,
                                        0x3991D639u, 0x835339F4u, 0x9C845F8Bu, 0xBDF9283Bu, 0x1FF897FFu, 0xDE05980Fu,
                                        0xEF2F118Bu, 0x5A0A6D1Fu, 0x6D367ECFu, 0x27CB09B7u, 0x4F463F66u, 0x9E5FEA2Du,
                                        0x7527BAC7u, 0xEBE5F17Bu, 0x3D0739F7u, 0x8A5292EAu, 0x6BFB5FB1u, 0x1F8D5D08u,
                                        0x56033046u, 0xFC7B6BABu, 0xF0CFBC20u, 0x9AF4361Du);

// Bits p .. p + 31 of 2/pi, bit 1 being the first after the binary point (bits at
// positions <= 0 are zero).
uint ctl_two_over_pi_bits(int p) {
  if (p >= 1) {
    int i = p - 1;
    int w = i >> 5, o = i & 31;
    uint hi = CTL_TWO_OVER_PI[w];
    if (o == 0) return hi;
    return (hi << uint(o)) | (CTL_TWO_OVER_PI[w + 1] >> uint(32 - o));
  }
  int z = 1 - p;
  return z >= 32 ? 0u : CTL_TWO_OVER_PI[0] >> uint(z);
}

// sin(r + q pi/2) for |r| <= pi/4 (about), Taylor series in double.
double ctl_sin_quadrant_d(double r, int q) {
  double r2 = r * r;
  double s = 1.0lf;
  for (int n = 21; n >= 3; n -= 2) s = 1.0lf - s * r2 / double(n * (n - 1));
  s *= r;
  double c = 1.0lf;
  for (int n = 22; n >= 2; n -= 2) c = 1.0lf - c * r2 / double(n * (n - 1));
  q &= 3;
  if (q == 0) return s;
  if (q == 1) return c;
  if (q == 2) return -s;
  return -c;
}

float ctl_sincos_f(float x, bool sine) {
  if (isnan(x) || isinf(x)) return uintBitsToFloat(0x7fc00000u);
  uint bits = floatBitsToUint(x);
  bool negative = (bits >> 31) != 0u;
  uint a = bits & 0x7fffffffu;
  double r;
  int q;
  if (a < 0x49000000u) {  // |x| < 2^19
    double d = double(uintBitsToFloat(a));
    double k = floor(d * 0.63661977236758134308lf + 0.5lf);
    precise double reduced = ((d - k * 1.57079632673412561417lf) - k * 6.07710050650619224932e-11lf) -
                             k * 2.02226624879595063154e-21lf;
    r = reduced;
    q = int(k);
  } else {
    // |x| = m 2^E with m a 24-bit integer. x (2/pi) mod 4 needs the bits of 2/pi from
    // E - 1 on: m times those 96 bits, P, is x (2/pi) 2^94 modulo multiples of 4 2^94.
    int e = int(a >> 23) - 150;
    uint m = (a & 0x7fffffu) | 0x800000u;
    int s = e - 1;
    uint w0 = ctl_two_over_pi_bits(s), w1 = ctl_two_over_pi_bits(s + 32), w2 = ctl_two_over_pi_bits(s + 64);
    uint64_t t0 = uint64_t(m) * uint64_t(w2);
    uint64_t t1 = uint64_t(m) * uint64_t(w1) + (t0 >> 32);
    uint64_t t2 = uint64_t(m) * uint64_t(w0) + (t1 >> 32);
    q = int(uint(t2 >> 30) & 3u);
    double f = double(uint(t2 & 0x3fffffffu)) * 9.3132257461547851562e-10lf +  // 2^-30
               double(uint(t1 & 0xffffffffu)) * 2.1684043449710088680e-19lf +  // 2^-62
               double(uint(t0 & 0xffffffffu)) * 5.0487097934144755546e-29lf;   // 2^-94
    if (f > 0.5lf) {
      f -= 1.0lf;
      q += 1;
    }
    r = f * 1.5707963267948966192lf;
  }
  if (!sine) q += 1;  // cos x = sin(x + pi/2)
  double v = ctl_sin_quadrant_d(r, q);
  if (sine && negative) v = -v;
  return float(v);
}

// cos x in double for |x| below 2^20 (Cody-Waite reduction), as Box-Muller needs on [0, 2 pi).
double ctl_cos_d(double x) {
  double k = floor(x * 0.63661977236758134308lf + 0.5lf);
  precise double r = ((x - k * 1.57079632673412561417lf) - k * 6.07710050650619224932e-11lf) -
                     k * 2.02226624879595063154e-21lf;
  return ctl_sin_quadrant_d(r, int(k) + 1);
}
