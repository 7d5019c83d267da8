package io.flinfer.memcache.tier;

import java.io.Serializable;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Objects;

/**
 * How the tiers below the device pool are laid out (SGLang's {@code --hicache-*} options): the host
 * tier's size and write policy, and the optional storage tier's directory, size limit and page
 * size. Immutable; built with {@link #builder()}.
 */
public final class HiCacheConfig implements Serializable {
  private static final long serialVersionUID = 1L;

  private final int hostTokens;
  private final WritePolicy writePolicy;
  private final int writeThroughThreshold;
  private final String storageDir;
  private final long storageBytes;
  private final int storagePageTokens;

  private HiCacheConfig(Builder b) {
    this.hostTokens = b.hostTokens;
    this.writePolicy = b.writePolicy;
    this.writeThroughThreshold = b.writeThroughThreshold;
    this.storageDir = b.storageDir;
    this.storageBytes = b.storageBytes;
    this.storagePageTokens = b.storagePageTokens;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Slots of the host tier. */
  public int hostTokens() {
    return hostTokens;
  }

  public WritePolicy writePolicy() {
    return writePolicy;
  }

  /** Hits a node needs before {@link WritePolicy#WRITE_THROUGH_SELECTIVE} copies it to the host. */
  public int writeThroughThreshold() {
    return writeThroughThreshold;
  }

  /** The storage tier's directory; null without a storage tier. */
  public Path storageDir() {
    return storageDir == null ? null : Paths.get(storageDir);
  }

  public long storageBytes() {
    return storageBytes;
  }

  /** Tokens per storage page: the unit the storage tier names, stores and finds. */
  public int storagePageTokens() {
    return storagePageTokens;
  }

  @Override
  public String toString() {
    return "HiCacheConfig{host="
        + hostTokens
        + ", "
        + writePolicy
        + (writePolicy == WritePolicy.WRITE_THROUGH_SELECTIVE ? "/" + writeThroughThreshold : "")
        + (storageDir == null
            ? ""
            : ", storage=" + storageDir + " " + storageBytes + "B/" + storagePageTokens)
        + "}";
  }

  /** Builds a {@link HiCacheConfig}; {@link #hostTokens} is required. */
  public static final class Builder {
    private int hostTokens;
    private WritePolicy writePolicy = WritePolicy.WRITE_THROUGH;
    private int writeThroughThreshold = 2;
    private String storageDir;
    private long storageBytes = 16L << 30;
    private int storagePageTokens = 64;

    public Builder hostTokens(int v) {
      this.hostTokens = v;
      return this;
    }

    public Builder writePolicy(WritePolicy v) {
      this.writePolicy = Objects.requireNonNull(v, "writePolicy");
      return this;
    }

    public Builder writeThroughThreshold(int v) {
      this.writeThroughThreshold = v;
      return this;
    }

    public Builder storageDir(Path v) {
      this.storageDir = v == null ? null : v.toString();
      return this;
    }

    public Builder storageBytes(long v) {
      this.storageBytes = v;
      return this;
    }

    public Builder storagePageTokens(int v) {
      this.storagePageTokens = v;
      return this;
    }

    public HiCacheConfig build() {
      if (hostTokens <= 0) {
        throw new IllegalArgumentException("the host tier needs a positive size: " + hostTokens);
      }
      if (writeThroughThreshold < 1) {
        throw new IllegalArgumentException(
            "the write-through threshold must be at least 1: " + writeThroughThreshold);
      }
      if (storageBytes <= 0 || storagePageTokens <= 0) {
        throw new IllegalArgumentException(
            "storage size and page tokens must be positive: "
                + storageBytes
                + ", "
                + storagePageTokens);
      }
      return new HiCacheConfig(this);
    }
  }
}
