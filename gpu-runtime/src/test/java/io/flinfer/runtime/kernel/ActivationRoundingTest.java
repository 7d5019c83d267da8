package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinfer.memcache.HalfFloats;
import java.util.Arrays;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class ActivationRoundingTest {
  /** Values with ties, repeated magnitudes of both signs, zeros and wide ranges. */
  private static float[] values(long seed, int n) {
    Random r = new Random(seed);
    float[] x = new float[n];
    float scale = (float) Math.pow(10, r.nextInt(9) - 4);
    for (int i = 0; i < n; i++) {
      switch (r.nextInt(6)) {
        case 0 -> x[i] = 0;
        case 1 -> x[i] = (r.nextInt(9) - 4) * 0.5f * scale;
        case 2 -> x[i] = i > 0 ? -x[i - 1] : scale;
        default -> x[i] = (float) r.nextGaussian() * scale;
      }
    }
    return x;
  }

  @Property(tries = 300)
  void vectorCodeGivesTheReferenceBits(
      @ForAll long seed, @ForAll @IntRange(min = 1, max = 4) int blocks) {
    float[] x = values(seed, 256 * blocks);
    assertSameBlocks(x, 32, ActivationRounding::q8_0, ActivationRounding::q8_0Reference);
    assertSameBlocks(x, 256, ActivationRounding::q8K, ActivationRounding::q8KReference);
  }

  /** One block's rounding of {@code x[off..]} into {@code dst}. */
  private interface BlockRounding {
    void round(float[] x, int off, float[] dst);
  }

  private static void assertSameBlocks(
      float[] x, int block, BlockRounding fast, BlockRounding plain) {
    for (int off = 0; off < x.length; off += block) {
      float[] a = new float[x.length];
      float[] b = new float[x.length];
      fast.round(x, off, a);
      plain.round(x, off, b);
      assertThat(Arrays.copyOfRange(a, off, off + block))
          .as("block of %d at %d", block, off)
          .containsExactly(Arrays.copyOfRange(b, off, off + block));
    }
  }

  /** q8_K's values are the 8-bit activations the integer kernels use, times their scale. */
  /**
   * fp16 and bf16 in vectors give the scalar conversions' values (bit for bit; NaN stays NaN, a
   * bf16 NaN quiet with ggml's bits): any float bits, and values around the halves' limits (2^-24,
   * 2^-14, 65504, 65520), their ties among them.
   */
  @Property(tries = 300)
  void sixteenBitRoundingInVectorsIsTheScalarConversions(
      @ForAll long seed, @ForAll @IntRange(min = 1, max = 40) int n) {
    Random rnd = new Random(seed);
    float[] edges = {
      0x1p-25f,
      0x1.8p-24f,
      0x1p-24f,
      0x1.ffcp-15f,
      0x1.ffep-15f,
      0x1p-14f,
      65504f,
      65519.99f,
      65520f,
      65536f,
      1.00146484375f,
      -2.0029296875f,
      1.01171875f,
      -1.00390625f,
      1.00048828125f,
      3.0009765625f,
      Float.MIN_VALUE,
      Float.MAX_VALUE,
      0f
    };
    float[] x = new float[n];
    for (int i = 0; i < n; i++) {
      x[i] =
          switch (rnd.nextInt(4)) {
            case 0 -> Float.intBitsToFloat(rnd.nextInt());
            case 1 -> (float) (rnd.nextGaussian() * Math.pow(2, rnd.nextInt(40) - 28));
            case 2 -> edges[rnd.nextInt(edges.length)] * (rnd.nextBoolean() ? 1 : -1);
            default -> Float.intBitsToFloat(0x7f800001 + rnd.nextInt(0x7fffff));
          };
    }
    for (boolean half : new boolean[] {true, false}) {
      float[] dst = new float[n];
      ActivationRounding.sixteenBit(half, x, 0, n, dst);
      for (int i = 0; i < n; i++) {
        float expected =
            half ? ActivationRounding.halfReference(x[i]) : ActivationRounding.bf16Reference(x[i]);
        if (half && Float.isNaN(expected)) {
          assertThat(dst[i]).as("half of NaN").isNaN();
        } else {
          assertThat(Float.floatToRawIntBits(dst[i]))
              .as("%s of %s (%08x)", half ? "fp16" : "bf16", x[i], Float.floatToRawIntBits(x[i]))
              .isEqualTo(Float.floatToRawIntBits(expected));
        }
      }
    }
  }

  /** Half-precision and bfloat16 weights take their own type's activations, as ggml's do. */
  @Test
  void sixteenBitWeightsRoundTheActivationsToTheirType() {
    float[] x = {1.0001f, 65519f, 70000f, 1e-7f, -3.14159f, 0x1.0101p0f, 0, 0, 0};
    float[] half = ActivationRounding.F16.apply(x, x.length).clone();
    float[] bf16 = ActivationRounding.BF16.apply(x, x.length).clone();
    assertThat(half[0]).isEqualTo(1f);
    assertThat(half[1]).isEqualTo(65504f);
    assertThat(half[2]).isEqualTo(Float.POSITIVE_INFINITY);
    assertThat(half[3]).isEqualTo(0x2p-24f);
    assertThat(half[4]).isEqualTo(-3.140625f);
    assertThat(bf16[5]).isEqualTo(1.0078125f);
    assertThat(bf16[4]).isEqualTo(-3.140625f);
    assertThat(io.flinfer.runtime.tensor.GgmlType.F16.ggmlActivations())
        .isEqualTo(ActivationRounding.F16);
    assertThat(io.flinfer.runtime.tensor.GgmlType.BF16.ggmlActivations())
        .isEqualTo(ActivationRounding.BF16);
    assertThat(io.flinfer.runtime.tensor.GgmlType.F32.ggmlActivations())
        .isEqualTo(ActivationRounding.NONE);
  }

  @Property(tries = 100)
  void q8KIsTheIntegerKernelsQuantization(@ForAll long seed) {
    float[] x = values(seed, 512);
    float[] rounded = ActivationRounding.Q8_K.apply(x, x.length);
    Q8KActivations a = new Q8KActivations();
    a.quantize(x, 1, 512);
    for (int i = 0; i < 512; i++) {
      assertThat(rounded[i]).as("value %d", i).isEqualTo(a.scales()[i / 256] * a.values()[i]);
    }
  }

  /**
   * q8_0 as ggml's x86 code writes it: the scale max|x| / 127 rounded to fp16, the values x * (127
   * / max|x|) rounded to the nearest integer, ties to even.
   */
  @Test
  void q8_0IsGgmlsRule() {
    float[] x = new float[32];
    x[3] = -127f; // the largest magnitude: the scale is 1 and x * (127 / max|x|) is x exactly
    x[4] = 2.5f; // a tie: to 2
    x[5] = 3.5f; // to 4
    x[6] = -2.5f; // to -2
    x[7] = 1.4f;
    float[] r = ActivationRounding.Q8_0.apply(x, 32);
    assertThat(r[3]).isEqualTo(-127f);
    assertThat(r[4]).isEqualTo(2f);
    assertThat(r[5]).isEqualTo(4f);
    assertThat(r[6]).isEqualTo(-2f);
    assertThat(r[7]).isEqualTo(1f);
    assertThat(r[0]).isZero();
    // The scale is max|x| / 127 rounded to fp16: 2.54 / 127 is not an fp16, so the values differ
    // from 2.54 / 127 * q.
    float[] y = new float[32];
    y[3] = -2.54f;
    y[7] = 1.4f;
    float d = HalfFloats.fromHalf(HalfFloats.toHalf(2.54f / 127f));
    assertThat(d).isNotEqualTo(2.54f / 127f);
    r = ActivationRounding.Q8_0.apply(y, 32);
    assertThat(r[3]).isEqualTo(d * -127);
    assertThat(r[7]).isEqualTo(d * (float) Math.rint(1.4f * (127f / 2.54f)));
    assertThat(Arrays.copyOf(ActivationRounding.Q8_0.apply(new float[32], 32), 32))
        .containsOnly(0f);
  }

  /**
   * q8_1 rounds the values as q8_0 does and carries, after them, each block's correction: ggml's
   * {@code s = fp16(d * sum q)} (d before its fp16 rounding) less the rounded values' sum.
   */
  @Property(tries = 100)
  void q8_1CarriesEachBlocksCorrectionAfterQ8_0sValues(@ForAll long seed) {
    float[] x = values(seed, 128);
    float[] q1 = ActivationRounding.Q8_1.apply(x, 128);
    assertThat(ActivationRounding.Q8_1.bufferSize(128)).isEqualTo(132);
    float[] q0 = Arrays.copyOf(ActivationRounding.Q8_0.apply(x, 128), 128);
    assertThat(Arrays.copyOf(q1, 128)).containsExactly(q0);
    for (int b = 0; b < 4; b++) {
      float amax = 0;
      for (int i = 32 * b; i < 32 * b + 32; i++) {
        amax = Math.max(amax, Math.abs(x[i]));
      }
      float d = amax / 127f;
      float dh = HalfFloats.fromHalf(HalfFloats.toHalf(d));
      int sum = 0;
      for (int i = 32 * b; i < 32 * b + 32; i++) {
        sum += amax == 0 ? 0 : (int) Math.rint(x[i] * (127f / amax));
      }
      float expected = HalfFloats.fromHalf(HalfFloats.toHalf(d * sum)) - dh * sum;
      assertThat(q1[ActivationRounding.corrections(128) + b])
          .as("block %d", b)
          .isEqualTo(amax == 0 ? 0f : expected);
    }
  }

  @Test
  void aTokensRoundingDependsOnItsOwnValuesOnly() {
    float[] two = values(7, 2 * 768);
    float[] both = ActivationRounding.Q8_K.apply(two, two.length).clone();
    float[] second = ActivationRounding.Q8_K.apply(Arrays.copyOfRange(two, 768, 1536), 768);
    // The buffer may be longer than the values asked for.
    assertThat(Arrays.copyOfRange(both, 768, 1536))
        .containsExactly(Arrays.copyOfRange(second, 0, 768));
  }

  /** A slice rounds its blocks as the whole does and leaves the rest of the buffer alone. */
  @Test
  void slicesRoundTheirBlocksOnly() {
    float[] x = values(9, 1024);
    float[] whole = Arrays.copyOf(ActivationRounding.Q8_K.apply(x, 1024), 1024);
    float[] dst = new float[1024];
    Arrays.fill(dst, 7f);
    ActivationRounding.Q8_K.round(x, 256, 768, dst, 1024);
    assertThat(Arrays.copyOfRange(dst, 256, 768))
        .containsExactly(Arrays.copyOfRange(whole, 256, 768));
    assertThat(Arrays.copyOfRange(dst, 0, 256)).containsOnly(7f);
    assertThat(Arrays.copyOfRange(dst, 768, 1024)).containsOnly(7f);
    assertThatThrownBy(() -> ActivationRounding.Q8_0.round(x, 16, 64, dst, 1024))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void newValuesInTheSameArrayAreRoundedAnew() {
    float[] x = values(3, 256);
    float[] first = ActivationRounding.Q8_K.apply(x, 256).clone();
    assertThat(ActivationRounding.Q8_K.apply(x, 256)).containsExactly(first);
    x[17] *= 3;
    float[] again = ActivationRounding.Q8_K.apply(x, 256);
    float[] expected = new float[256];
    ActivationRounding.q8KReference(x, 0, expected);
    assertThat(again).startsWith(expected);
  }

  @Test
  void noneLeavesTheActivationsAndWholeBlocksAreRequired() {
    float[] x = values(5, 48);
    assertThat(ActivationRounding.NONE.apply(x, 48)).isSameAs(x);
    assertThatThrownBy(() -> ActivationRounding.Q8_0.apply(x, 48))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("32");
  }

  @Test
  void thePropertyTurnsTheRoundingOffAndRefusesOtherValues() {
    try {
      System.setProperty(ActivationRounding.PROPERTY, "f32");
      assertThat(ActivationRounding.Q8_K.asConfigured()).isEqualTo(ActivationRounding.NONE);
      System.setProperty(ActivationRounding.PROPERTY, "q4");
      assertThatThrownBy(ActivationRounding.Q8_0::asConfigured)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("ggml or f32");
      System.clearProperty(ActivationRounding.PROPERTY);
      assertThat(ActivationRounding.Q8_0.asConfigured()).isEqualTo(ActivationRounding.Q8_0);
    } finally {
      System.clearProperty(ActivationRounding.PROPERTY);
    }
  }
}
