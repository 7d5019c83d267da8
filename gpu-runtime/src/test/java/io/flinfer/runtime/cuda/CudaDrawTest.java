package io.flinfer.runtime.cuda;

import static jcuda.driver.JCudaDriver.cuLaunchKernel;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoH;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;
import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.forward.ModelRunnerFactory;
import io.flinfer.runtime.generate.BatchGenerator;
import io.flinfer.runtime.generate.GenerationRequest;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.CounterRng;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.testing.ForwardRuns;
import io.flinfer.runtime.testing.SharedFiles;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;
import org.junit.jupiter.api.Test;

/**
 * Tokens drawn on the device ({@code sample_rows}): the kernel draws exactly what {@link
 * DrawReference} draws from the same row and uniform draw, over a Llama 3 sized vocabulary and
 * every truncation; a generation's drawn tokens are the reference's over its rows, and the same
 * alone or batched. Device only.
 */
class CudaDrawTest {
  private static final ModelRunnerFactory CUDA = CudaModelRunner::new;

  private static final float[][] PARAMS = DrawReference.PARAMS;

  @Test
  void theKernelDrawsWhatTheReferenceDraws() {
    CudaDevice.assume();
    int vocab = 128_256;
    int rows = 2 * PARAMS.length;
    Random rnd = new Random(21);
    float[] logits = new float[rows * vocab];
    for (int r = 0; r < rows; r++) {
      float scale = 1 + 3 * rnd.nextFloat();
      boolean ties = r % 2 == 1; // values on a grid of halves: many equal probabilities
      for (int i = 0; i < vocab; i++) {
        float v = (float) rnd.nextGaussian() * scale;
        logits[r * vocab + i] = ties ? Math.round(v * 2) / 2f : v;
      }
    }
    float[] topLogit = new float[rows];
    float[] logZ = new float[rows];
    int[] top = new int[rows];
    for (int r = 0; r < rows; r++) {
      float max = Float.NEGATIVE_INFINITY;
      for (int i = 0; i < vocab; i++) {
        if (logits[r * vocab + i] > max) {
          max = logits[r * vocab + i];
          top[r] = i;
        }
      }
      double sum = 0;
      for (int i = 0; i < vocab; i++) {
        sum += Math.exp(logits[r * vocab + i] - max);
      }
      topLogit[r] = max;
      logZ[r] = (float) (max + Math.log(sum));
    }
    int checked = 0;
    try (CudaContext cu = new CudaContext(0)) {
      CUdeviceptr dLogits = upload(cu, logits);
      CUdeviceptr dTopLogit = upload(cu, topLogit);
      CUdeviceptr dLogZ = upload(cu, logZ);
      CUdeviceptr dTop = cu.alloc((long) rows * Sizeof.INT);
      cuMemcpyHtoD(dTop, Pointer.to(top), (long) rows * Sizeof.INT);
      CUdeviceptr probs = cu.alloc((long) rows * vocab * Sizeof.FLOAT);
      CUdeviceptr tokens = cu.alloc((long) rows * Sizeof.INT);
      CUdeviceptr logprobs = cu.alloc((long) rows * Sizeof.FLOAT);
      int[] step = new int[StepPlan.HEADER_INTS + rows * StepPlan.SAMPLE_INTS];
      CUdeviceptr dStep = cu.alloc((long) step.length * Sizeof.INT);
      Random uRnd = new Random(8);
      for (int round = 0; round < 6; round++) {
        // Every other row drawn, in a shuffled order of entries.
        List<Integer> drawn = new ArrayList<>();
        for (int r = round % 2; r < rows; r += 2) {
          drawn.add(r);
        }
        java.util.Collections.shuffle(drawn, uRnd);
        float[] u = new float[rows];
        step[StepPlan.H_B] = rows;
        step[StepPlan.H_SAMPLES] = drawn.size();
        step[StepPlan.H_SAMPLES_OFF] = StepPlan.HEADER_INTS;
        for (int e = 0; e < drawn.size(); e++) {
          int r = drawn.get(e);
          float[] q = PARAMS[(r / 2 + round) % PARAMS.length];
          u[r] = round == 5 ? Math.nextDown(1f) : uRnd.nextFloat();
          int at = StepPlan.HEADER_INTS + e * StepPlan.SAMPLE_INTS;
          step[at] = r;
          step[at + 1] = (int) q[1];
          step[at + 2] = Float.floatToRawIntBits(q[0]);
          step[at + 3] = Float.floatToRawIntBits(q[2]);
          step[at + 4] = Float.floatToRawIntBits(q[3]);
          step[at + 5] = Float.floatToRawIntBits(u[r]);
        }
        cuMemcpyHtoD(dStep, Pointer.to(step), (long) step.length * Sizeof.INT);
        cuLaunchKernel(
            cu.function("sample_rows"),
            drawn.size(),
            1,
            1,
            1024,
            1,
            1,
            0,
            cu.stream(),
            KernelArgs.of(dStep, dLogits, vocab, dTopLogit, dLogZ, dTop, probs, tokens, logprobs),
            null);
        cuStreamSynchronize(cu.stream());
        int[] gotTokens = new int[rows];
        float[] gotLogprobs = new float[rows];
        float[] gotProbs = new float[rows * vocab];
        cuMemcpyDtoH(Pointer.to(gotTokens), tokens, (long) rows * Sizeof.INT);
        cuMemcpyDtoH(Pointer.to(gotLogprobs), logprobs, (long) rows * Sizeof.FLOAT);
        cuMemcpyDtoH(Pointer.to(gotProbs), probs, (long) rows * vocab * Sizeof.FLOAT);
        for (int r : drawn) {
          float[] q = PARAMS[(r / 2 + round) % PARAMS.length];
          float[] row = Arrays.copyOfRange(logits, r * vocab, (r + 1) * vocab);
          float[] p = DrawReference.probabilities(row, q[0]);
          assertThat(Arrays.mismatch(Arrays.copyOfRange(gotProbs, r * vocab, (r + 1) * vocab), p))
              .as("row %d's first probability that differs in its bits (-1: none)", r)
              .isEqualTo(-1);
          int expected = DrawReference.draw(p, (int) q[1], q[2], q[3], u[r]);
          assertThat(gotTokens[r])
              .as("round %d row %d params %s u %s", round, r, Arrays.toString(q), u[r])
              .isEqualTo(expected);
          assertThat(gotLogprobs[r]).isEqualTo(row[expected] - logZ[r]);
          checked++;
        }
      }
    }
    System.out.printf(
        "sample_rows: %d draws over %d-token rows equal the reference's%n", checked, vocab);
  }

  @Test
  void aGenerationsDrawsAreTheReferencesOverItsRowsAloneOrBatched() {
    CudaDevice.assume();
    LlamaModel model = SharedFiles.stories260k();
    String[] prompts = {"Once upon a time", "The little cat", "Lily wanted to", "One day"};
    List<GenerationRequest> requests = new ArrayList<>();
    for (int i = 0; i < prompts.length; i++) {
      float[] q = PARAMS[(2 * i + 1) % PARAMS.length];
      SamplingParams p = DrawReference.params(q, 100 + i);
      requests.add(new GenerationRequest(model.tokenizer().encode(prompts[i], true), p, 32, false));
    }
    float[][] logprobs = new float[requests.size()][32];
    int[][] batched;
    try (BatchGenerator g = new BatchGenerator(model, requests.size(), 512, 1, CUDA)) {
      batched = g.generate(requests, (r, i, t, lp) -> logprobs[r][i] = lp);
    }
    for (int i = 0; i < requests.size(); i++) {
      GenerationRequest q = requests.get(i);
      int[] alone;
      try (BatchGenerator g = new BatchGenerator(model, 1, 512, 1, CUDA)) {
        alone = g.generate(List.of(q), (r, k, t, lp) -> {})[0];
      }
      assertThat(alone).as("request %d alone", i).containsExactly(batched[i]);
      int promptLen = q.promptIds().length;
      int[] seq = Arrays.copyOf(q.promptIds(), promptLen + batched[i].length);
      System.arraycopy(batched[i], 0, seq, promptLen, batched[i].length);
      List<float[]> rows = ForwardRuns.alone(model, seq, promptLen, CUDA, 1);
      SamplingParams p = q.params();
      for (int k = 0; k < batched[i].length; k++) {
        float[] row = rows.get(k);
        float[] probs = DrawReference.probabilities(row, p.temperature());
        int expected =
            DrawReference.draw(
                probs, p.topK(), p.topP(), p.minP(), CounterRng.uniform(p.seed(), k));
        assertThat(batched[i][k]).as("request %d token %d", i, k).isEqualTo(expected);
        assertThat((double) logprobs[i][k])
            .as("request %d token %d's log-probability", i, k)
            .isCloseTo(logSoftmax(row, expected), org.assertj.core.data.Offset.offset(1e-4));
      }
    }
  }

  private static double logSoftmax(float[] row, int token) {
    double max = Double.NEGATIVE_INFINITY;
    for (float v : row) {
      max = Math.max(max, v);
    }
    double sum = 0;
    for (float v : row) {
      sum += Math.exp(v - max);
    }
    return row[token] - max - Math.log(sum);
  }

  private static CUdeviceptr upload(CudaContext cu, float[] values) {
    CUdeviceptr p = cu.alloc((long) values.length * Sizeof.FLOAT);
    cuMemcpyHtoD(p, Pointer.to(values), (long) values.length * Sizeof.FLOAT);
    return p;
  }
}
