package io.flinfer.runtime.llama2c;

import io.flinfer.runtime.model.ModelConfig;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Writes a llama2.c checkpoint with random weights in a given shape, as serving benchmarks do for
 * models whose trained weights are not at hand. Norm weights are 1 and matrices uniform in
 * +-1/sqrt(cols), so activations stay in a realistic range.
 */
public final class RandomCheckpointWriter {
  private RandomCheckpointWriter() {}

  /** Writes {@code file} unless a file of the right size is already there. */
  public static Path write(ModelConfig c, long seed, Path file) throws IOException {
    long floats =
        (long) c.vocabSize() * c.dim()
            + (long) c.layers()
                * (2L * c.dim()
                    + 2L * c.dim() * c.dim()
                    + 2L * c.kvDim() * c.dim()
                    + 3L * c.dim() * c.hiddenDim())
            + c.dim()
            + (long) c.contextLength() * c.headDim();
    long size = 28 + 4 * floats;
    if (Files.exists(file) && Files.size(file) == size) {
      return file;
    }
    Files.createDirectories(file.toAbsolutePath().getParent());
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try (FileChannel ch =
        FileChannel.open(
            tmp,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
      ByteBuffer h = ByteBuffer.allocate(28).order(ByteOrder.LITTLE_ENDIAN);
      h.putInt(c.dim())
          .putInt(c.hiddenDim())
          .putInt(c.layers())
          .putInt(c.heads())
          .putInt(c.kvHeads())
          .putInt(c.vocabSize())
          .putInt(c.contextLength());
      h.flip();
      ch.write(h);
      Filler f = new Filler(ch, seed);
      f.random((long) c.vocabSize() * c.dim(), c.dim());
      f.ones((long) c.layers() * c.dim());
      f.random((long) c.layers() * c.dim() * c.dim(), c.dim());
      f.random((long) c.layers() * c.kvDim() * c.dim(), c.dim());
      f.random((long) c.layers() * c.kvDim() * c.dim(), c.dim());
      f.random((long) c.layers() * c.dim() * c.dim(), c.dim());
      f.ones((long) c.layers() * c.dim());
      f.random((long) c.layers() * c.hiddenDim() * c.dim(), c.dim());
      f.random((long) c.layers() * c.dim() * c.hiddenDim(), c.hiddenDim());
      f.random((long) c.layers() * c.hiddenDim() * c.dim(), c.dim());
      f.ones(c.dim());
      f.ones((long) c.contextLength() * c.headDim());
      f.flush();
    }
    Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    return file;
  }

  private static final class Filler {
    private final FileChannel ch;
    private final ByteBuffer buf =
        ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
    private long state;

    Filler(FileChannel ch, long seed) {
      this.ch = ch;
      this.state = seed | 1;
    }

    void random(long n, int fanIn) throws IOException {
      float scale = (float) (1 / Math.sqrt(fanIn)) * 0x1.0p-23f;
      for (long i = 0; i < n; i++) {
        state ^= state << 13;
        state ^= state >>> 7;
        state ^= state << 17;
        put(((int) (state >>> 40) - (1 << 23)) * scale);
      }
    }

    void ones(long n) throws IOException {
      for (long i = 0; i < n; i++) {
        put(1f);
      }
    }

    private void put(float v) throws IOException {
      if (!buf.hasRemaining()) {
        flush();
      }
      buf.putFloat(v);
    }

    void flush() throws IOException {
      buf.flip();
      while (buf.hasRemaining()) {
        ch.write(buf);
      }
      buf.clear();
    }
  }
}
