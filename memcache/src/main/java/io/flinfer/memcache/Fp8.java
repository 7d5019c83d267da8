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
    return nearest(E4M3, 0x7E, x);
  }

  /** {@code x} as E5M2: nearest value (ties to even), saturated to +-57344; NaN stays NaN. */
  public static byte toE5m2(float x) {
    return nearest(E5M2, 0x7B, x);
  }

  /**
   * The code of the value nearest {@code x} among the magnitudes {@code table[0..maxCode]} (in
   * increasing order, as both formats' codes are), ties to the even code, beyond the largest
   * saturated to it. One rounding from the float itself: going through a half first could round
   * twice.
   */
  private static byte nearest(float[] table, int maxCode, float x) {
    if (Float.isNaN(x)) {
      return 0x7F;
    }
    int sign = Float.floatToRawIntBits(x) < 0 ? 0x80 : 0;
    float a = Math.min(Math.abs(x), table[maxCode]);
    int lo = 0;
    int hi = maxCode;
    while (lo < hi) {
      int mid = (lo + hi + 1) >>> 1;
      if (table[mid] <= a) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    int code = lo;
    if (code < maxCode) {
      float below = a - table[code];
      float above = table[code + 1] - a;
      if (above < below || above == below && (code & 1) == 1) {
        code++;
      }
    }
    return (byte) (sign | code);
  }
}
