package io.flinfer.memcache;

/** IEEE half-precision and bfloat16 conversion (JDK 17 has neither). Owns a lookup table. */
public final class HalfFloats {
  private static final float[] HALF_TO_FLOAT = new float[1 << 16];

  static {
    for (int i = 0; i < HALF_TO_FLOAT.length; i++) {
      HALF_TO_FLOAT[i] = convert((short) i);
    }
  }

  private HalfFloats() {}

  public static float fromHalf(short half) {
    return HALF_TO_FLOAT[half & 0xffff];
  }

  public static float fromBf16(short bf16) {
    return Float.intBitsToFloat((bf16 & 0xffff) << 16);
  }

  /** Rounds to nearest even, as hardware conversion does. */
  public static short toHalf(float f) {
    int bits = Float.floatToRawIntBits(f);
    int sign = (bits >>> 16) & 0x8000;
    int exp = (bits >>> 23) & 0xff;
    int mant = bits & 0x7fffff;
    if (exp == 0xff) {
      return (short) (sign | 0x7c00 | (mant != 0 ? 0x200 : 0));
    }
    int e = exp - 127 + 15;
    if (e >= 0x1f) {
      return (short) (sign | 0x7c00);
    }
    if (e <= 0) {
      if (e < -10) {
        return (short) sign;
      }
      mant |= 0x800000;
      int shift = 14 - e;
      int half = mant >> shift;
      int rem = mant & ((1 << shift) - 1);
      int mid = 1 << (shift - 1);
      if (rem > mid || (rem == mid && (half & 1) != 0)) {
        half++;
      }
      return (short) (sign | half);
    }
    int half = (e << 10) | (mant >> 13);
    int rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (half & 1) != 0)) {
      half++;
    }
    return (short) (sign | half);
  }

  /** Rounds to nearest even. */
  public static short toBf16(float f) {
    int bits = Float.floatToRawIntBits(f);
    if ((bits & 0x7fffffff) > 0x7f800000) {
      return (short) ((bits >>> 16) | 0x40);
    }
    int rounding = 0x7fff + ((bits >>> 16) & 1);
    return (short) ((bits + rounding) >>> 16);
  }

  private static float convert(short half) {
    int h = half & 0xffff;
    int sign = (h & 0x8000) << 16;
    int exp = (h >>> 10) & 0x1f;
    int mant = h & 0x3ff;
    if (exp == 0) {
      if (mant == 0) {
        return Float.intBitsToFloat(sign);
      }
      float v = mant / 1024f * (1f / 16384f);
      return sign != 0 ? -v : v;
    }
    if (exp == 0x1f) {
      return Float.intBitsToFloat(sign | 0x7f800000 | (mant << 13));
    }
    return Float.intBitsToFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
  }
}
