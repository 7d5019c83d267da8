package io.flinfer.memcache;

/**
 * The two 8-bit float formats of KV caches: E4M3 ({@code float8_e4m3fn}: bias 7, no infinities,
 * 0x7F and 0xFF are NaN, largest finite 448) and E5M2 (bias 15, the upper byte of an IEEE half).
 * Encoding rounds to nearest, ties to even, and saturates at the largest finite value, as vLLM's
 * and SGLang's scaled FP8 casts do. Decoding is a table of the exact values.
 */
public final class Fp8 {
  /** The largest finite E4M3 value. */
  public static final float E4M3_MAX = 448f;

  /** The largest finite E5M2 value. */
  public static final float E5M2_MAX = 57344f;

  private static final float[] E4M3 = new float[256];
  private static final float[] E5M2 = new float[256];

  static {
    for (int b = 0; b < 256; b++) {
      E4M3[b] = e4m3Value(b);
      E5M2[b] = HalfFloats.fromHalf((short) (b << 8));
    }
  }

  private Fp8() {}

  private static float e4m3Value(int b) {
    int e = (b >>> 3) & 0xF;
    int m = b & 7;
    float sign = (b & 0x80) != 0 ? -1f : 1f;
    if (e == 15 && m == 7) {
      return Float.NaN;
    }
    float v = e == 0 ? m * 0x1.0p-9f : Math.scalb(1f + m / 8f, e - 7);
    return sign * v;
  }

  public static float fromE4m3(byte b) {
    return E4M3[b & 0xFF];
  }

  public static float fromE5m2(byte b) {
    return E5M2[b & 0xFF];
  }

  /** {@code x} as E4M3: nearest value (ties to even), saturated to +-448; NaN stays NaN. */
  public static byte toE4m3(float x) {
    return encode(x, 3, 7, 0x7E);
  }

  /** {@code x} as E5M2: nearest value (ties to even), saturated to +-57344; NaN stays NaN. */
  public static byte toE5m2(float x) {
    return encode(x, 2, 15, 0x7B);
  }

  /**
   * One rounding from the float's own bits: a normal result keeps the float's exponent (rebiased)
   * and its mantissa rounded to {@code mantissaBits}, ties to even, a carry moving into the
   * exponent; a subnormal one is {@code |x| / 2^(1 - bias - mantissaBits)} rounded to an integer,
   * ties to even. Beyond {@code maxCode} it saturates.
   */
  private static byte encode(float x, int mantissaBits, int bias, int maxCode) {
    int bits = Float.floatToRawIntBits(x);
    int sign = (bits >>> 24) & 0x80;
    int magnitude = bits & 0x7FFFFFFF;
    if (magnitude > 0x7F800000) {
      return 0x7F; // NaN
    }
    int minNormalExponent = 127 + 1 - bias; // the float exponent of the format's smallest normal
    int code;
    if ((magnitude >>> 23) >= minNormalExponent) {
      int drop = 23 - mantissaBits;
      int rounded = magnitude + (1 << (drop - 1)) - 1 + ((magnitude >>> drop) & 1);
      code = (rounded >>> drop) - ((127 - bias) << mantissaBits);
      code = Math.min(code, maxCode); // beyond the largest (or infinite): saturate
    } else {
      float units = Math.scalb(Float.intBitsToFloat(magnitude), bias - 1 + mantissaBits);
      code = (int) Math.rint(units); // up to 1 << mantissaBits: the smallest normal's code
    }
    return (byte) (sign | code);
  }
}
