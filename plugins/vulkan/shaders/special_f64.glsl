// special_f64.glsl — sin, cos and erfc (so gelu and gelu_backward) to f64 accuracy, for the
// f64 variants only (the f32/f16/bf16 ones round through math_f64.glsl's cheaper forms).
// GLSL has no double transcendentals. Included after math_f64.glsl (its exact two-sum and
// two-product).

// |x| (2/pi) = 4n + q + f, |f| <= 1/2, for finite |x| >= pi/4 (a normal double), as
// q and r = f pi/2 = hi + lo. Payne-Hanek: with |x| = m 2^e (m a 53-bit integer), bits of
// 2/pi above weight 2^(1-e) only add multiples of 4, so the window of 192 bits from there,
// W, gives |x| (2/pi) mod 4 = m W 2^-190 to within 2^-137: far below the smallest |f| a
// double can produce (about 2^-61), so hi + lo keeps at least 60 bits of r.
void ctl_reduce_pio2_d(double ax, out int q, out double hi, out double lo) {
  uvec2 b = unpackDouble2x32(ax);
  int e = int((b.y >> 20) & 0x7ffu) - 1075;
  uint mh = (b.y & 0xfffffu) | 0x100000u, ml = b.x;
  uint w[6];
  for (int i = 0; i < 6; ++i) w[5 - i] = ctl_two_over_pi_bits(e - 1 + 32 * i);  // w[0] least significant
  // P = m W in 32-bit words, p[0] least significant (umulExtended: no shaderInt64 needed).
  uint p[8];
  uint carry = 0u;
  for (int j = 0; j < 6; ++j) {
    uint hi32, lo32, c;
    umulExtended(ml, w[j], hi32, lo32);
    p[j] = uaddCarry(lo32, carry, c);
    carry = hi32 + c;  // hi32 <= 2^32 - 2
  }
  p[6] = carry;
  carry = 0u;
  for (int j = 0; j < 6; ++j) {
    uint hi32, lo32, c1, c2;
    umulExtended(mh, w[j], hi32, lo32);  // mh < 2^21: hi32 < 2^21
    uint t = uaddCarry(lo32, p[j + 1], c1);
    p[j + 1] = uaddCarry(t, carry, c2);
    carry = hi32 + c1 + c2;
  }
  p[7] = carry;
  // P 2^-190: q is bits 190 and 191, f the 128 bits below them, g[0] the highest word.
  q = int((p[5] >> 30) & 3u);
  uint g[4];
  for (int j = 0; j < 4; ++j) g[j] = (p[5 - j] << 2) | (p[4 - j] >> 30);
  bool negative = (g[0] >> 31) != 0u;
  if (negative) {  // f >= 1/2: f - 1, whose magnitude is the complement (to 2^-128)
    q += 1;
    for (int j = 0; j < 4; ++j) g[j] = ~g[j];
  }
  // The words as exact doubles, summed from the smallest so no bits are lost.
  double s = double(g[3]) * 2.9387358770557187699e-39lf;  // 2^-128
  double err = 0.0lf;
  const double scale[3] = double[](2.3283064365386962891e-10lf, 5.4210108624275221700e-20lf,
                                   1.2621774483536188887e-29lf);  // 2^-32, 2^-64, 2^-96
  for (int j = 2; j >= 0; --j) {
    double t;
    ctl_two_sum_d(double(g[j]) * scale[j], s, s, t);
    err += t;
  }
  // r = (s + err) pi/2, pi/2 = 1.5707963267948966 + 6.123233995736766e-17.
  double rh, rl;
  ctl_two_prod_d(s, 1.5707963267948966lf, rh, rl);
  precise double tail = rl + (s * 6.123233995736766e-17lf + err * 1.5707963267948966lf);
  precise double h = rh + tail;
  precise double l = tail - (h - rh);
  hi = negative ? -h : h;
  lo = negative ? -l : l;
}

// sin and cos of r for |r| <= pi/4 (about), Taylor series to r^21 / r^22.
void ctl_sincos_series_d(double r, out double s, out double c) {
  double r2 = r * r;
  s = 1.0lf;
  for (int n = 21; n >= 3; n -= 2) s = 1.0lf - s * r2 / double(n * (n - 1));
  s *= r;
  c = 1.0lf;
  for (int n = 22; n >= 2; n -= 2) c = 1.0lf - c * r2 / double(n * (n - 1));
}

// sin x (sine) or cos x at every double x: about 1.4 ulp in a double-precision model of
// these steps over every binade and near multiples of pi/2 up to 2^1024.
double ctl_sincos_d(double x, bool sine) {
  if (isnan(x) || isinf(x)) return ctl_nan_d();
  double ax = abs(x);
  int q = 0;
  double hi = ax, lo = 0.0lf;
  if (ax >= 0.78539816339744830962lf) ctl_reduce_pio2_d(ax, q, hi, lo);
  double s, c;
  ctl_sincos_series_d(hi, s, c);
  // sin(hi + lo) = s + lo c and cos(hi + lo) = c - lo s to far below an ulp (|lo| < 2^-53 |hi|).
  double sl = s + lo * c, cl = c - lo * s;
  if (!sine) q += 1;  // cos x = sin(|x| + pi/2)
  q &= 3;
  double v = q == 0 ? sl : q == 1 ? cl : q == 2 ? -sl : -cl;
  if (sine && x < 0.0lf) v = -v;
  if (sine && ax == 0.0lf) return x;  // sin(-0) = -0
  return v;
}

// c e^(-z^2) with z^2 taken exactly as h + l: e^-h (1 - l) with |l| <= ulp(h) / 2.
// Rounding z^2 alone would move the result by z^2 ulp (about 700 near erfc's underflow).
double ctl_mul_exp_neg_square_d(double c, double z) {
  double h, l;
  ctl_two_prod_d(z, z, h, l);
  return ctl_mul_exp_d(c * (1.0lf - l), -h);
}

// erfc to f64 accuracy (about 3.4 ulp in a double-precision model with an exact exp):
//  - |x| < 0.5: 1 -+ erf(|x|), erf from its Taylor series (terms fall by 4x or more, and
//    erfc is above 0.47 there, so the subtraction costs at most a bit);
//  - 0.5 <= z < 2, z = |x|: Taylor series of erfc about the nearest of six centres c,
//    |z - c| <= 1/8, through erfc^(n)(c) = -(2/sqrt(pi)) (-1)^(n-1) H_(n-1)(c) e^(-c^2)
//    (Hermite polynomials by their recurrence); erfc(c) and (2/sqrt(pi)) e^(-c^2) are
//    constants (mpmath, 200 bits);
//  - z >= 2: Laplace's continued fraction erfc(z) = e^(-z^2) / sqrt(pi) / (z + (1/2) /
//    (z + 1 / (z + (3/2) / ...))), 60 levels (converged to an ulp from z = 2 on);
// and erfc(-z) = 2 - erfc(z).
const double CTL_ERFC_CENTRE_VALUE[6] = double[](0.376759117811582lf, 0.21592493894014034lf, 0.11161176829829224lf,
                                                 0.051829927217909674lf, 0.021556266760016336lf,
                                                 0.00800994232988003lf);
const double CTL_ERFC_CENTRE_SLOPE[6] = double[](0.7634995357606049lf, 0.5247450452901482lf, 0.3182739585007693lf,
                                                 0.1703597736875156lf, 0.08047225902251116lf,
                                                 0.03354582842421607lf);

double ctl_erfc_f64(double x) {
  if (isnan(x)) return x;
  double z = abs(x);
  double r;
  if (z < 0.5lf) {
    double z2 = z * z, term = 1.0lf, sum = 1.0lf;
    for (int n = 1; n <= 16; ++n) {
      term *= -z2 / double(n);
      sum += term / double(2 * n + 1);
    }
    double erf = 1.1283791670955126lf * z * sum;  // 2 / sqrt(pi)
    return x >= 0.0lf ? 1.0lf - erf : 1.0lf + erf;
  }
  if (z < 2.0lf) {
    int i = min(int((z - 0.5lf) * 4.0lf), 5);
    double c = 0.625lf + 0.25lf * double(i), h = z - c;
    double hm = 0.0lf, hn = 1.0lf, power = 1.0lf, sum = 0.0lf;  // H_(n-2), H_(n-1), h^n / n!
    for (int n = 1; n <= 24; ++n) {
      power *= h / double(n);
      sum += ((n & 1) == 1 ? hn : -hn) * power;
      double next = 2.0lf * c * hn - 2.0lf * double(n - 1) * hm;
      hm = hn;
      hn = next;
    }
    r = CTL_ERFC_CENTRE_VALUE[i] - CTL_ERFC_CENTRE_SLOPE[i] * sum;
  } else if (z < 27.0lf) {
    double t = z;
    for (int n = 60; n >= 1; --n) t = z + (0.5lf * double(n)) / t;
    r = ctl_mul_exp_neg_square_d(0.56418958354775628695lf / t, z);  // 1 / sqrt(pi)
  } else {
    r = 0.0lf;  // below the smallest subnormal
  }
  return x >= 0.0lf ? r : 2.0lf - r;
}

// gelu(x) = 0.5 x erfc(-x / sqrt(2)) and its derivative 0.5 erfc(-x / sqrt(2)) + x phi(x),
// docs/ops.md's forms without cancellation, to f64 accuracy.
double ctl_gelu_f64(double x) { return 0.5lf * x * ctl_erfc_f64(x * -0.70710678118654752440lf); }
double ctl_gelu_grad_f64(double x) {
  if (isinf(x)) return ctl_nan_d();  // x phi(x) is inf * 0, as in the reference
  double cdf = 0.5lf * ctl_erfc_f64(x * -0.70710678118654752440lf);
  // phi(x) is 0 from |x| = 38.6 on (e^-745), and x^2 may overflow: the derivative is cdf.
  if (abs(x) > 40.0lf) return cdf;
  // phi(x) = e^(-x^2 / 2) / sqrt(2 pi) with x^2 = h + l exactly: e^(-h / 2) (1 - l / 2).
  double h, l;
  ctl_two_prod_d(x, x, h, l);
  double pdf = ctl_mul_exp_d(0.39894228040143267794lf * (1.0lf - 0.5lf * l), -0.5lf * h);
  return cdf + x * pdf;
}
