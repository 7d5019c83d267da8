package io.flinfer.runtime.gguf;

import io.flinfer.memcache.HalfFloats;
import java.nio.ByteBuffer;

/**
 * Quantizes float rows to the K-quant layouts llama.cpp reads (Q4_K, Q6_K), for benchmark models
 * written by the project itself. Plain round-to-nearest with the scales taken from each sub-block's
 * range: simpler than llama.cpp's search for the best scales, so its error is somewhat larger, but
 * every byte is where llama.cpp's decoder (and Flinfer's) looks for it.
 */
final class KQuantizer {
  private static final int SUPER = 256;

  private KQuantizer() {}

  /**
   * Q4_K: per 256 values an fp16 scale d and min dmin, eight 6-bit sub-block scales and mins (12
   * bytes), then 128 bytes of 4-bit values; value = d * sc * q - dmin * m.
   */
  static void q4k(float[] v, ByteBuffer out) {
    for (int base = 0; base < v.length; base += SUPER) {
      float[] scale = new float[8];
      float[] min = new float[8];
      for (int j = 0; j < 8; j++) {
        float lo = 0;
        float hi = 0;
        for (int i = 0; i < 32; i++) {
          lo = Math.min(lo, v[base + 32 * j + i]);
          hi = Math.max(hi, v[base + 32 * j + i]);
        }
        scale[j] = (hi - lo) / 15f;
        min[j] = -lo;
      }
      float d = max(scale) / 63f;
      float dmin = max(min) / 63f;
      short dh = HalfFloats.toHalf(d);
      short mh = HalfFloats.toHalf(dmin);
      float dq = HalfFloats.fromHalf(dh);
      float mq = HalfFloats.fromHalf(mh);
      int[] sc = new int[8];
      int[] m = new int[8];
      for (int j = 0; j < 8; j++) {
        sc[j] = dq > 0 ? Math.min(63, Math.round(scale[j] / dq)) : 0;
        m[j] = mq > 0 ? Math.min(63, Math.round(min[j] / mq)) : 0;
      }
      out.putShort(dh).putShort(mh);
      byte[] packed = new byte[12];
      for (int j = 0; j < 8; j++) {
        if (j < 4) {
          packed[j] |= (byte) sc[j];
          packed[j + 4] |= (byte) m[j];
        } else {
          packed[j + 4] = (byte) ((sc[j] & 0x0f) | ((m[j] & 0x0f) << 4));
          packed[j - 4] |= (byte) ((sc[j] >>> 4) << 6);
          packed[j] |= (byte) ((m[j] >>> 4) << 6);
        }
      }
      out.put(packed);
      int[] q = new int[SUPER];
      for (int j = 0; j < 8; j++) {
        float step = dq * sc[j];
        float offset = mq * m[j];
        for (int i = 0; i < 32; i++) {
          int k = 32 * j + i;
          q[k] = step > 0 ? clamp(Math.round((v[base + k] + offset) / step), 0, 15) : 0;
        }
      }
      for (int g = 0; g < 4; g++) {
        for (int l = 0; l < 32; l++) {
          out.put((byte) (q[64 * g + l] | (q[64 * g + 32 + l] << 4)));
        }
      }
    }
  }

  /**
   * Q6_K: per 256 values 128 bytes of low nibbles, 64 bytes of high bit pairs, sixteen signed 8-bit
   * scales of 16 values each, then the fp16 scale d; value = d * sc * (q - 32).
   */
  static void q6k(float[] v, ByteBuffer out) {
    for (int base = 0; base < v.length; base += SUPER) {
      float[] scale = new float[16];
      for (int s = 0; s < 16; s++) {
        float amax = 0;
        for (int i = 0; i < 16; i++) {
          amax = Math.max(amax, Math.abs(v[base + 16 * s + i]));
        }
        scale[s] = amax / 31f;
      }
      float d = max(scale) / 127f;
      short dh = HalfFloats.toHalf(d);
      float dq = HalfFloats.fromHalf(dh);
      int[] sc = new int[16];
      int[] q = new int[SUPER];
      for (int s = 0; s < 16; s++) {
        sc[s] = dq > 0 ? Math.min(127, Math.round(scale[s] / dq)) : 0;
        float step = dq * sc[s];
        for (int i = 0; i < 16; i++) {
          int k = 16 * s + i;
          q[k] = (step > 0 ? clamp(Math.round(v[base + k] / step), -32, 31) : 0) + 32;
        }
      }
      byte[] block = new byte[210];
      for (int half = 0; half < 2; half++) {
        int ql = 64 * half;
        int qh = 128 + 32 * half;
        int y = 128 * half;
        for (int l = 0; l < 32; l++) {
          int q1 = q[y + l];
          int q2 = q[y + l + 32];
          int q3 = q[y + l + 64];
          int q4 = q[y + l + 96];
          block[ql + l] = (byte) ((q1 & 0x0f) | ((q3 & 0x0f) << 4));
          block[ql + l + 32] = (byte) ((q2 & 0x0f) | ((q4 & 0x0f) << 4));
          block[qh + l] =
              (byte) ((q1 >>> 4) | ((q2 >>> 4) << 2) | ((q3 >>> 4) << 4) | ((q4 >>> 4) << 6));
        }
        for (int k = 0; k < 8; k++) {
          block[192 + 8 * half + k] = (byte) sc[8 * half + k];
        }
      }
      block[208] = (byte) dh;
      block[209] = (byte) (dh >>> 8);
      out.put(block);
    }
  }

  private static float max(float[] a) {
    float m = 0;
    for (float f : a) {
      m = Math.max(m, f);
    }
    return m;
  }

  private static int clamp(int v, int lo, int hi) {
    return Math.max(lo, Math.min(hi, v));
  }
}
