package io.flinfer.operators.flink;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The Kafka headers of a prompt record that travel with its request (the job's {@code
 * --carry-headers}, such as W3C trace context's {@code traceparent}): read as UTF-8 text into the
 * request's metadata, written back as headers on its completion and on any dead letter about it.
 * Immutable.
 */
public final class CarriedHeaders implements Serializable {
  /** At most this many names: each is a metadata entry, within the request limits. */
  public static final int MAX_NAMES = 16;

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");
  private static final CarriedHeaders NONE = new CarriedHeaders(List.of());

  private final List<String> names;

  private CarriedHeaders(List<String> names) {
    this.names = names;
  }

  public static CarriedHeaders none() {
    return NONE;
  }

  /**
   * @throws IllegalArgumentException for more than {@link #MAX_NAMES} names, a repeated one, or one
   *     that is not 1-64 letters, digits, dots, underscores or dashes
   */
  public static CarriedHeaders of(List<String> names) {
    if (names.size() > MAX_NAMES) {
      throw new IllegalArgumentException(
          "at most " + MAX_NAMES + " headers are carried, got " + names.size());
    }
    for (String n : names) {
      if (!NAME.matcher(n).matches()) {
        throw new IllegalArgumentException(
            "a carried header's name is 1-64 letters, digits, dots, underscores or dashes: '"
                + n
                + "'");
      }
    }
    if (names.stream().distinct().count() != names.size()) {
      throw new IllegalArgumentException("carried headers repeat a name: " + names);
    }
    return names.isEmpty() ? NONE : new CarriedHeaders(List.copyOf(names));
  }

  /** The names, in the order given. */
  public List<String> names() {
    return names;
  }

  /** The carried entries of {@code metadata} (a request's, or its completion's), in name order. */
  public Map<String, String> of(Map<String, String> metadata) {
    Map<String, String> out = new LinkedHashMap<>();
    for (String n : names) {
      String v = metadata.get(n);
      if (v != null) {
        out.put(n, v);
      }
    }
    return out;
  }
}
