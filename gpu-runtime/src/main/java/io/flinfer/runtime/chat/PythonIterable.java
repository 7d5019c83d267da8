package io.flinfer.runtime.chat;

import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.lib.exptest.ExpTest;
import java.util.Map;

/**
 * Jinja's {@code is iterable} as Python answers it: strings are iterable too (Llama 3.1's template
 * writes a tool result that {@code is iterable} with {@code tojson}, so a string result is quoted).
 */
final class PythonIterable implements ExpTest {
  @Override
  public String getName() {
    return "iterable";
  }

  @Override
  public boolean evaluate(Object var, JinjavaInterpreter interpreter, Object... args) {
    return var instanceof Iterable<?>
        || var instanceof Map<?, ?>
        || var instanceof CharSequence
        || (var != null && var.getClass().isArray());
  }
}
