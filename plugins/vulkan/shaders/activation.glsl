// activation.glsl — the float functions elementwise ops and matmul's fused activations
// share: erfc, gelu in both forms, sigmoid-style products and their derivatives, written to
// avoid the cancellations docs/ops.md warns of. Float only (GLSL has no double exp).
// erfc(x) for float results: Chebyshev fit of erfc(z) exp(z^2) (relative error < 1.2e-7),
// evaluated in float.
float ctl_erfc(float x) {
  float z = abs(x);
  float t = 1.0 / (1.0 + 0.5 * z);
  float r = t * exp(-z * z - 1.26551223 +
                    t * (1.00002368 +
                         t * (0.37409196 +
                              t * (0.09678418 +
                                   t * (-0.18628806 +
                                        t * (0.27886807 +
                                             t * (-1.13520398 +
                                                  t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0.0 ? r : 2.0 - r;
}
float ctl_x_sigmoid(float x, float y) {
  if (y < -64.0) return x * exp(y + 32.0) * 1.2664165549094175723e-14;
  return x / (1.0 + exp(-y));
}
float ctl_gelu(float x) { return 0.5 * x * ctl_erfc(x * -0.70710678118654752440); }
float ctl_gelu_tanh(float x) {
  return ctl_x_sigmoid(x, 2.0 * 0.79788456080286535587989211986876 * (x + 0.044715 * x * x * x));
}
float ctl_tanh(float x) {
  float a = abs(x);
  if (a == 0.0) return x;  // keeps the sign of zero
  if (a > 9.0) return x > 0.0 ? 1.0 : -1.0;
  if (a < 0.625) {
    // tanh near 0 without the cancellation of (e^2x - 1) / (e^2x + 1): its odd series.
    float x2 = x * x;
    return x + x * x2 * (-0.333333333 + x2 * (0.133333333 + x2 * (-0.053968254 + x2 * (0.021869488 +
                        x2 * (-0.008863236 + x2 * (0.003592128 + x2 * -0.001455834))))));
  }
  float e = exp(2.0 * a);
  float t = 1.0 - 2.0 / (e + 1.0);
  return x > 0.0 ? t : -t;
}
float ctl_gelu_grad(float x) {
  float cdf = 0.5 * ctl_erfc(x * -0.70710678118654752440);
  float pdf = exp(-0.5 * x * x) * 0.39894228040143267793994605993438;
  return cdf + x * pdf;
}
float ctl_gelu_tanh_grad(float x) {
  float k = 0.79788456080286535587989211986876;
  float z = k * (x + 0.044715 * x * x * x);
  float a = -2.0 * abs(z);
  if (z < -32.0) {
    float g = 2.0 * k * x * (1.0 + 3.0 * 0.044715 * x * x);
    float scaled = exp(a + 64.0);
    if (scaled == 0.0) return isinf(x) ? uintBitsToFloat(0x7fc00000u) : 0.0;
    return scaled * (1.0 + g) * 1.2664165549094175723e-14 * 1.2664165549094175723e-14;
  }
  float e = exp(a);
  float r = 1.0 / (1.0 + e);
  float s = z >= 0.0 ? r : e * r;
  if (e == 0.0) return isinf(x) ? uintBitsToFloat(0x7fc00000u) : s;
  return s + 2.0 * k * x * (1.0 + 3.0 * 0.044715 * x * x) * (e * r * r);
}
