package io.flinfer.runtime.gguf;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.tensor.GgmlType;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;

/**
 * Writes GGUF v3 files, encoding float rows to the requested tensor type (F32, F16, BF16, Q8_0,
 * Q4_0, Q4_K, Q6_K). Tensors come from arrays or from a {@link RowSource} that computes each row,
 * so a file of many gigabytes (a benchmark model) streams to disk without being held in memory;
 * rows are encoded on the host's cores.
 */
public final class GgufWriter {
  /** Computes one row of a tensor; called from several threads, for any row in any order. */
  @FunctionalInterface
  public interface RowSource {
    void row(int row, float[] out);
  }

  private record Tensor(
      String name, long[] dims, GgmlType type, int rows, int cols, RowSource src) {
    long bytes() {
      return type.bytes((long) rows * cols);
    }
  }

  private static final int CHUNK_BYTES = 16 << 20;

  private final Map<String, Object> metadata = new LinkedHashMap<>();
  private final List<Tensor> tensors = new ArrayList<>();

  public GgufWriter put(String key, Object value) {
    metadata.put(key, value);
    return this;
  }

  /**
   * A uint32 value: llama.cpp reads hyper-parameters (lengths, counts) only in that type, so files
   * written for it to load must use it.
   */
  public GgufWriter putUnsigned(String key, int value) {
    if (value < 0) {
      throw new IllegalArgumentException(key + " must not be negative: " + value);
    }
    metadata.put(key, new Unsigned(value));
    return this;
  }

  private record Unsigned(int value) {}

  /** Adds a tensor of {@code rows} x {@code cols} floats (GGUF dims {cols, rows}). */
  public GgufWriter tensor(String name, GgmlType type, float[] values, int rows, int cols) {
    return tensor(
        name, type, rows, cols, (r, out) -> System.arraycopy(values, r * cols, out, 0, cols));
  }

  /** Adds a tensor of {@code rows} x {@code cols} whose rows {@code src} computes when written. */
  public GgufWriter tensor(String name, GgmlType type, int rows, int cols, RowSource src) {
    long[] dims = rows == 1 ? new long[] {cols} : new long[] {cols, rows};
    type.bytes(cols); // rows must fill whole blocks
    tensors.add(new Tensor(name, dims, type, rows, cols, src));
    return this;
  }

  public static byte[] encode(GgmlType type, float[] v) {
    ByteBuffer b = ByteBuffer.allocate((int) type.bytes(v.length)).order(ByteOrder.LITTLE_ENDIAN);
    switch (type) {
      case F32:
        for (float f : v) {
          b.putFloat(f);
        }
        break;
      case F16:
        for (float f : v) {
          b.putShort(HalfFloats.toHalf(f));
        }
        break;
      case BF16:
        for (float f : v) {
          b.putShort(HalfFloats.toBf16(f));
        }
        break;
      case Q8_0:
        for (int blk = 0; blk < v.length; blk += 32) {
          float amax = 0;
          for (int j = 0; j < 32; j++) {
            amax = Math.max(amax, Math.abs(v[blk + j]));
          }
          float d = amax / 127f;
          float id = d != 0 ? 1f / d : 0f;
          b.putShort(HalfFloats.toHalf(d));
          for (int j = 0; j < 32; j++) {
            b.put((byte) Math.round(v[blk + j] * id));
          }
        }
        break;
      case Q4_0:
        for (int blk = 0; blk < v.length; blk += 32) {
          float amax = 0;
          float max = 0;
          for (int j = 0; j < 32; j++) {
            if (Math.abs(v[blk + j]) > amax) {
              amax = Math.abs(v[blk + j]);
              max = v[blk + j];
            }
          }
          float d = max / -8f;
          float id = d != 0 ? 1f / d : 0f;
          b.putShort(HalfFloats.toHalf(d));
          for (int j = 0; j < 16; j++) {
            int q0 = Math.min(15, (int) (v[blk + j] * id + 8.5f));
            int q1 = Math.min(15, (int) (v[blk + 16 + j] * id + 8.5f));
            b.put((byte) (q0 | (q1 << 4)));
          }
        }
        break;
      case Q4_K:
        KQuantizer.q4k(v, b);
        break;
      case Q6_K:
        KQuantizer.q6k(v, b);
        break;
      default:
        throw new IllegalArgumentException(type.toString());
    }
    return b.array();
  }

  public void write(Path file) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Le le = new Le(out);
    le.i32(0x46554747);
    le.i32(3);
    le.i64(tensors.size());
    le.i64(metadata.size());
    for (Map.Entry<String, Object> e : metadata.entrySet()) {
      le.str(e.getKey());
      le.value(e.getValue());
    }
    long offset = 0;
    for (Tensor t : tensors) {
      le.str(t.name());
      le.i32(t.dims().length);
      for (long d : t.dims()) {
        le.i64(d);
      }
      le.i32(t.type().id());
      le.i64(offset);
      offset += align(t.bytes());
    }
    while (out.size() % 32 != 0) {
      out.write(0);
    }
    try (FileChannel ch =
        FileChannel.open(
            file,
            StandardOpenOption.CREATE,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING)) {
      ch.write(ByteBuffer.wrap(out.toByteArray()));
      for (Tensor t : tensors) {
        writeTensor(ch, t);
        long pad = align(t.bytes()) - t.bytes();
        if (pad > 0) {
          ch.write(ByteBuffer.allocate((int) pad));
        }
      }
    }
  }

  /** Encodes rows a chunk at a time, the chunk's rows in parallel, and appends them. */
  private static void writeTensor(FileChannel ch, Tensor t) throws IOException {
    int rowBytes = (int) t.type().bytes(t.cols());
    int chunkRows = Math.max(1, CHUNK_BYTES / rowBytes);
    ByteBuffer chunk =
        ByteBuffer.allocateDirect(chunkRows * rowBytes).order(ByteOrder.LITTLE_ENDIAN);
    ThreadLocal<float[]> rowBuf = ThreadLocal.withInitial(() -> new float[t.cols()]);
    for (int r0 = 0; r0 < t.rows(); r0 += chunkRows) {
      int n = Math.min(chunkRows, t.rows() - r0);
      int first = r0;
      IntStream.range(0, n)
          .parallel()
          .forEach(
              i -> {
                float[] row = rowBuf.get();
                t.src().row(first + i, row);
                byte[] enc = encode(t.type(), row);
                ByteBuffer dst = chunk.duplicate();
                dst.position(i * rowBytes);
                dst.put(enc);
              });
      chunk.position(0).limit(n * rowBytes);
      while (chunk.hasRemaining()) {
        ch.write(chunk);
      }
      chunk.clear();
    }
  }

  private static long align(long n) {
    return (n + 31) / 32 * 32;
  }

  private static final class Le {
    private final ByteArrayOutputStream out;

    Le(ByteArrayOutputStream out) {
      this.out = out;
    }

    void i32(int v) {
      for (int i = 0; i < 4; i++) {
        out.write(v >>> (8 * i));
      }
    }

    void i64(long v) {
      for (int i = 0; i < 8; i++) {
        out.write((int) (v >>> (8 * i)));
      }
    }

    void str(String s) {
      byte[] b = s.getBytes(StandardCharsets.UTF_8);
      i64(b.length);
      out.write(b, 0, b.length);
    }

    void value(Object v) {
      if (v instanceof Unsigned) {
        i32(4);
        i32(((Unsigned) v).value());
      } else if (v instanceof Integer) {
        i32(5);
        i32((Integer) v);
      } else if (v instanceof Float) {
        i32(6);
        i32(Float.floatToRawIntBits((Float) v));
      } else if (v instanceof Boolean) {
        i32(7);
        out.write((Boolean) v ? 1 : 0);
      } else if (v instanceof String) {
        i32(8);
        str((String) v);
      } else if (v instanceof String[]) {
        i32(9);
        i32(8);
        String[] a = (String[]) v;
        i64(a.length);
        for (String s : a) {
          str(s);
        }
      } else if (v instanceof float[]) {
        i32(9);
        i32(6);
        float[] a = (float[]) v;
        i64(a.length);
        for (float f : a) {
          i32(Float.floatToRawIntBits(f));
        }
      } else if (v instanceof int[]) {
        i32(9);
        i32(5);
        int[] a = (int[]) v;
        i64(a.length);
        for (int x : a) {
          i32(x);
        }
      } else {
        throw new IllegalArgumentException("unsupported metadata value " + v);
      }
    }
  }
}
