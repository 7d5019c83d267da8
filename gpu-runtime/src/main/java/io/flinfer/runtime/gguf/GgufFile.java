package io.flinfer.runtime.gguf;

import io.flinfer.runtime.model.ModelFormatException;
import io.flinfer.runtime.tensor.GgmlType;
import java.io.IOException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A parsed GGUF file (versions 2 and 3): its metadata and the location of each tensor. Tensor bytes
 * are memory-mapped on request, never read into the heap.
 */
public final class GgufFile {
  private static final int MAGIC = 0x46554747; // "GGUF" little-endian

  /** Where one tensor lies: GGUF dims are innermost first. */
  public record TensorInfo(String name, long[] dims, int typeId, long offset) {
    public long elements() {
      long n = 1;
      for (long d : dims) {
        n *= d;
      }
      return n;
    }
  }

  private final Path path;
  private final int version;
  private final Map<String, Object> metadata;
  private final Map<String, TensorInfo> tensors;
  private final long dataStart;
  private final long fileSize;

  private GgufFile(
      Path path,
      int version,
      Map<String, Object> metadata,
      Map<String, TensorInfo> tensors,
      long dataStart,
      long fileSize) {
    this.path = path;
    this.version = version;
    this.metadata = metadata;
    this.tensors = tensors;
    this.dataStart = dataStart;
    this.fileSize = fileSize;
  }

  public static GgufFile open(Path path) {
    String name = path.toString();
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
      long size = ch.size();
      MappedByteBuffer map =
          ch.map(FileChannel.MapMode.READ_ONLY, 0, Math.min(size, Integer.MAX_VALUE));
      ByteBuffer b = map.order(ByteOrder.LITTLE_ENDIAN);
      if (size < 24 || b.getInt() != MAGIC) {
        throw new ModelFormatException(name, "not a GGUF file (wrong magic)");
      }
      int version = b.getInt();
      if (version != 2 && version != 3) {
        throw new ModelFormatException(
            name, "GGUF version " + version + " is not supported (2 and 3 are)");
      }
      long tensorCount = b.getLong();
      long kvCount = b.getLong();
      if (tensorCount < 0 || tensorCount > 1_000_000 || kvCount < 0 || kvCount > 1_000_000) {
        throw new ModelFormatException(
            name,
            "implausible counts: " + tensorCount + " tensors, " + kvCount + " metadata entries");
      }
      Map<String, Object> meta = new LinkedHashMap<>();
      for (long i = 0; i < kvCount; i++) {
        String key = readString(b, name);
        int type = b.getInt();
        meta.put(key, readValue(b, type, name, key));
      }
      Map<String, TensorInfo> tensors = new LinkedHashMap<>();
      for (long i = 0; i < tensorCount; i++) {
        String tname = readString(b, name);
        int nDims = b.getInt();
        if (nDims < 1 || nDims > 4) {
          throw new ModelFormatException(name, "tensor " + tname + " has " + nDims + " dimensions");
        }
        long[] dims = new long[nDims];
        for (int d = 0; d < nDims; d++) {
          dims[d] = b.getLong();
          if (dims[d] <= 0) {
            throw new ModelFormatException(name, "tensor " + tname + " has dimension " + dims[d]);
          }
        }
        int typeId = b.getInt();
        long offset = b.getLong();
        tensors.put(tname, new TensorInfo(tname, dims, typeId, offset));
      }
      long alignment = 32;
      Object a = meta.get("general.alignment");
      if (a instanceof Number) {
        alignment = ((Number) a).longValue();
      }
      long pos = b.position();
      long dataStart = (pos + alignment - 1) / alignment * alignment;
      return new GgufFile(path, version, meta, tensors, dataStart, size);
    } catch (BufferUnderflowException e) {
      throw new ModelFormatException(name, "truncated GGUF header", e);
    } catch (IOException e) {
      throw new ModelFormatException(name, "cannot read: " + e.getMessage(), e);
    }
  }

  private static String readString(ByteBuffer b, String file) {
    long len = b.getLong();
    if (len < 0 || len > b.remaining()) {
      throw new ModelFormatException(
          file, "string of length " + len + " runs past the end of the file");
    }
    byte[] bytes = new byte[(int) len];
    b.get(bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }

  private static Object readValue(ByteBuffer b, int type, String file, String key) {
    switch (type) {
      case 0:
        return (int) (b.get() & 0xff);
      case 1:
        return (int) b.get();
      case 2:
        return (int) (b.getShort() & 0xffff);
      case 3:
        return (int) b.getShort();
      case 4:
        return (long) (b.getInt() & 0xffffffffL);
      case 5:
        return b.getInt();
      case 6:
        return b.getFloat();
      case 7:
        return b.get() != 0;
      case 8:
        return readString(b, file);
      case 10:
      case 11:
        return b.getLong();
      case 12:
        return b.getDouble();
      case 9:
        return readArray(b, file, key);
      default:
        throw new ModelFormatException(file, "metadata " + key + " has unknown value type " + type);
    }
  }

  private static Object readArray(ByteBuffer b, String file, String key) {
    int type = b.getInt();
    long n = b.getLong();
    if (n < 0 || n > b.remaining()) {
      throw new ModelFormatException(
          file, "metadata array " + key + " of length " + n + " runs past the end");
    }
    int count = (int) n;
    switch (type) {
      case 8:
        {
          String[] s = new String[count];
          for (int i = 0; i < count; i++) {
            s[i] = readString(b, file);
          }
          return s;
        }
      case 6:
        {
          float[] f = new float[count];
          for (int i = 0; i < count; i++) {
            f[i] = b.getFloat();
          }
          return f;
        }
      case 4:
      case 5:
        {
          int[] v = new int[count];
          for (int i = 0; i < count; i++) {
            v[i] = b.getInt();
          }
          return v;
        }
      default:
        {
          Object[] o = new Object[count];
          for (int i = 0; i < count; i++) {
            o[i] = readValue(b, type, file, key);
          }
          return o;
        }
    }
  }

  public Path path() {
    return path;
  }

  public int version() {
    return version;
  }

  public Map<String, Object> metadata() {
    return metadata;
  }

  public Map<String, TensorInfo> tensors() {
    return tensors;
  }

  public Object get(String key) {
    return metadata.get(key);
  }

  public String getString(String key, String fallback) {
    Object v = metadata.get(key);
    return v instanceof String ? (String) v : fallback;
  }

  public int getInt(String key, int fallback) {
    Object v = metadata.get(key);
    return v instanceof Number ? ((Number) v).intValue() : fallback;
  }

  public float getFloat(String key, float fallback) {
    Object v = metadata.get(key);
    return v instanceof Number ? ((Number) v).floatValue() : fallback;
  }

  public int requireInt(String key) {
    Object v = metadata.get(key);
    if (!(v instanceof Number)) {
      throw new ModelFormatException(path.toString(), "metadata " + key + " is missing");
    }
    return ((Number) v).intValue();
  }

  /** Maps the bytes of {@code tensor}, checking its type and that the file holds them. */
  public ByteBuffer map(TensorInfo tensor) {
    GgmlType type = GgmlType.byId(tensor.typeId());
    if (type == null) {
      throw new ModelFormatException(
          path.toString(),
          "tensor "
              + tensor.name()
              + " has unsupported type "
              + tensor.typeId()
              + " ("
              + GgmlType.nameOf(tensor.typeId())
              + "; "
              + java.util.Arrays.toString(GgmlType.values())
              + " are supported)");
    }
    long bytes;
    try {
      bytes = type.bytes(tensor.elements());
    } catch (IllegalArgumentException e) {
      throw new ModelFormatException(
          path.toString(), "tensor " + tensor.name() + ": " + e.getMessage());
    }
    long start = dataStart + tensor.offset();
    if (start + bytes > fileSize) {
      throw new ModelFormatException(
          path.toString(),
          "truncated: tensor "
              + tensor.name()
              + " ends at byte "
              + (start + bytes)
              + " but the file has "
              + fileSize);
    }
    if (bytes > Integer.MAX_VALUE) {
      throw new ModelFormatException(
          path.toString(), "tensor " + tensor.name() + " is larger than 2 GiB");
    }
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ)) {
      return ch.map(FileChannel.MapMode.READ_ONLY, start, bytes).order(ByteOrder.LITTLE_ENDIAN);
    } catch (IOException e) {
      throw new ModelFormatException(
          path.toString(), "cannot map tensor " + tensor.name() + ": " + e.getMessage(), e);
    }
  }
}
