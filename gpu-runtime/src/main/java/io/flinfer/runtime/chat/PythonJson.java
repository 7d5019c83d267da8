package io.flinfer.runtime.chat;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.filter.AdvancedFilter;
import java.util.Collection;
import java.util.Iterator;
import java.util.Map;

/**
 * The {@code tojson} filter as Hugging Face's templates get it: Python's {@code json.dumps(x,
 * ensure_ascii=False, indent=indent)}, so that tool definitions and call arguments read exactly as
 * the model was trained on them ({@code ", "} and {@code ": "} between items, or one item a line at
 * {@code indent}). Jinjava's own filter writes compact JSON.
 */
final class PythonJson implements AdvancedFilter {
  @Override
  public String getName() {
    return "tojson";
  }

  @Override
  public Object filter(
      Object var, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
    Object indent = kwargs.getOrDefault("indent", args.length > 0 ? args[0] : null);
    StringBuilder out = new StringBuilder();
    write(var, indent == null ? -1 : ((Number) indent).intValue(), 0, out);
    return out.toString();
  }

  /** Writes {@code v}; {@code indent} below 0 writes it on one line. */
  static void write(Object v, int indent, int level, StringBuilder out) {
    if (v == null) {
      out.append("null");
    } else if (v instanceof String s) {
      string(s, out);
    } else if (v instanceof Boolean b) {
      out.append(b ? "true" : "false");
    } else if (v instanceof Number n) {
      out.append(n);
    } else if (v instanceof Map<?, ?> m) {
      container('{', '}', m.entrySet().iterator(), m.isEmpty(), indent, level, out);
    } else if (v instanceof Collection<?> c) {
      container('[', ']', c.iterator(), c.isEmpty(), indent, level, out);
    } else {
      string(v.toString(), out);
    }
  }

  private static void container(
      char open,
      char close,
      Iterator<?> items,
      boolean empty,
      int indent,
      int level,
      StringBuilder out) {
    out.append(open);
    if (empty) {
      out.append(close);
      return;
    }
    boolean first = true;
    while (items.hasNext()) {
      Object item = items.next();
      if (!first) {
        out.append(indent < 0 ? ", " : ",");
      }
      first = false;
      if (indent >= 0) {
        out.append('\n').append(" ".repeat(indent * (level + 1)));
      }
      if (item instanceof Map.Entry<?, ?> e) {
        string(String.valueOf(e.getKey()), out);
        out.append(": ");
        write(e.getValue(), indent, level + 1, out);
      } else {
        write(item, indent, level + 1, out);
      }
    }
    if (indent >= 0) {
      out.append('\n').append(" ".repeat(indent * level));
    }
    out.append(close);
  }

  /** A string as Python's json writes it without ensure_ascii. */
  private static void string(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    out.append('"');
  }
}
