package io.flinfer.job.gateway;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * Bearer tokens and the tenant each stands for, so that a key's requests share one prefix-cache
 * namespace. The file has a line per key, {@code KEY TENANT} ({@code #} starts a comment). Without
 * a file the gateway is open and every request is of the shared tenant.
 */
final class ApiKeys {
  private final Map<String, String> tenants;

  private ApiKeys(Map<String, String> tenants) {
    this.tenants = tenants;
  }

  static ApiKeys none() {
    return new ApiKeys(null);
  }

  static ApiKeys load(Path file) throws IOException {
    Map<String, String> tenants = new HashMap<>();
    int n = 0;
    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
      n++;
      String t = line.strip();
      if (t.isEmpty() || t.startsWith("#")) {
        continue;
      }
      String[] parts = t.split("\\s+");
      if (parts.length != 2) {
        throw new IllegalArgumentException(
            "--api-keys " + file + " line " + n + ": expected KEY TENANT");
      }
      tenants.put(parts[0], parts[1]);
    }
    if (tenants.isEmpty()) {
      throw new IllegalArgumentException("--api-keys " + file + " has no keys");
    }
    return new ApiKeys(Map.copyOf(tenants));
  }

  /** Whether requests need no key (then a request's {@code user} is its tenant). */
  boolean open() {
    return tenants == null;
  }

  /**
   * The tenant of a request with this {@code Authorization} header.
   *
   * @throws ApiError 401 when keys are required and the header has none of them
   */
  String tenant(String authorization) throws ApiError {
    if (tenants == null) {
      return "";
    }
    String key =
        authorization != null && authorization.startsWith("Bearer ")
            ? authorization.substring(7).strip()
            : null;
    String tenant = key == null ? null : tenants.get(key);
    if (tenant == null) {
      throw new ApiError(
          401,
          "invalid_request_error",
          null,
          "invalid_api_key",
          key == null ? "Missing bearer authentication in header." : "Incorrect API key provided.");
    }
    return tenant;
  }
}
