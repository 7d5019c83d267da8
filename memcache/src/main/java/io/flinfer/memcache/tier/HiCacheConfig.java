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
  private final double hostRatio;
  private final WritePolicy writePolicy;
  private final int writeThroughThreshold;
  private final String storageDir;
  private final long storageBytes;
  private final int storagePageTokens;

  private HiCacheConfig(Builder b) {
    this.hostTokens = b.hostTokens;
    this.hostRatio = b.hostRatio;
    this.writePolicy = b.writePolicy;
    this.writeThroughThreshold = b.writeThroughThreshold;
    this.storageDir = b.storageDir;
    this.storageBytes = b.storageBytes;
    this.storagePageTokens = b.storagePageTokens;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Slots of the host tier, given directly or as a ratio to the device pool's. */
  public int hostTokens(int poolTokens) {
    return hostTokens > 0
        ? hostTokens
        : (int) Math.min(Integer.MAX_VALUE - 1, hostRatio * poolTokens);
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

  /**
   * Tokens per storage page: the unit the storage tier names, stores and finds. A returning prefix
   * recomputes what lies past its last whole page, so pages are small by default (16 tokens: a file
   * of a few hundred KB to a few MB on the models served here).
   */
  public int storagePageTokens() {
    return storagePageTokens;
  }

  @Override
  public String toString() {
    return "HiCacheConfig{host="
        + (hostTokens > 0 ? String.valueOf(hostTokens) : hostRatio + "x")
        + ", "
        + writePolicy
        + (writePolicy == WritePolicy.WRITE_THROUGH_SELECTIVE ? "/" + writeThroughThreshold : "")
        + (storageDir == null
            ? ""
            : ", storage=" + storageDir + " " + storageBytes + "B/" + storagePageTokens)
        + "}";
  }

  /** Builds a {@link HiCacheConfig}; {@link #hostTokens} or {@link #hostRatio} is required. */
  public static final class Builder {
    private int hostTokens;
    private double hostRatio;
    private WritePolicy writePolicy = WritePolicy.WRITE_THROUGH;
    private int writeThroughThreshold = 2;
    private String storageDir;
    private long storageBytes = 16L << 30;
    private int storagePageTokens = 16;

    public Builder hostTokens(int v) {
      this.hostTokens = v;
      return this;
    }

    /** The host tier's slots as a multiple of the device pool's (SGLang's hicache_ratio). */
    public Builder hostRatio(double v) {
      this.hostRatio = v;
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
      if ((hostTokens > 0) == (hostRatio > 0) || hostTokens < 0 || hostRatio < 0) {
        throw new IllegalArgumentException(
            "the host tier needs one positive size, in tokens or as a ratio to the pool: "
                + hostTokens
                + " tokens, ratio "
                + hostRatio);
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
