package io.flinfer.operators.request;

/**
 * Where a request is routed: its own routing key when the producer set one, else a hash of its
 * tenant and the first pages of its prompt tokens, so requests that share a prefix land on the same
 * subtask and its radix cache.
 */
public final class RoutingKey {
  /** Tokens hashed: four pages of 16. */
  public static final int PREFIX_TOKENS = 64;

  private RoutingKey() {}

  public static String of(String explicit, String tenant, int[] promptIds) {
    if (explicit != null && !explicit.isEmpty()) {
      return explicit;
    }
    long h = 0xcbf29ce484222325L;
    for (int i = 0; i < tenant.length(); i++) {
      h = (h ^ tenant.charAt(i)) * 0x100000001b3L;
    }
    h = (h ^ 0xff) * 0x100000001b3L; // separates the tenant from the tokens
    int n = Math.min(PREFIX_TOKENS, promptIds.length);
    for (int i = 0; i < n; i++) {
      h = (h ^ promptIds[i]) * 0x100000001b3L;
      h ^= h >>> 29;
    }
    return "p" + Long.toHexString(h);
  }
}
