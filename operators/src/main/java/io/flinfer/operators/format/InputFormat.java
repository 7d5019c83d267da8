package io.flinfer.operators.format;

import java.util.Locale;

/** The record formats a prompt may arrive in, told apart by their first bytes. */
public enum InputFormat {
  /** Avro single-object encoding: {@code C3 01}, the schema's fingerprint, Avro binary. */
  AVRO,
  /** Confluent's wire format: {@code 00}, the schema's registry id (4 bytes), Avro binary. */
  CONFLUENT,
  /** One JSON object with the schema's field names. */
  JSON;

  /** The name in metrics and messages. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** The format {@code bytes} announce, or null when they announce none. */
  public static InputFormat of(byte[] bytes) {
    if (bytes.length >= 2 && bytes[0] == (byte) 0xC3 && bytes[1] == 0x01) {
      return AVRO;
    }
    if (bytes.length >= 5 && bytes[0] == 0) {
      return CONFLUENT;
    }
    for (byte b : bytes) {
      if (b == '{') {
        return JSON;
      }
      if (b != ' '
          && b != '\t'
          && b != '\n'
          && b != '\r'
          && b != (byte) 0xEF
          && b != (byte) 0xBB
          && b != (byte) 0xBF) {
        return null;
      }
    }
    return null;
  }
}
