package io.flinfer.runtime.chat;

import java.beans.FeatureDescriptor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;

/**
 * The Python string methods that Hugging Face chat templates call on strings ({@code
 * content.startswith('<tool_response>')}, {@code .split('</think>')}, {@code .lstrip('\n')}), which
 * Jinja inherits from Python and Jinjava, running on Java strings, lacks. Resolves only those calls
 * on strings; everything else goes on to Jinjava's own resolver.
 */
final class PythonStringMethods extends ELResolver {
  @Override
  public Object invoke(
      ELContext context, Object base, Object method, Class<?>[] types, Object[] params) {
    if (!(base instanceof String s) || method == null) {
      return null;
    }
    Object[] p = params == null ? new Object[0] : params;
    Object result =
        switch (method.toString()) {
          case "startswith" -> p.length == 1 ? s.startsWith(str(p[0])) : null;
          case "endswith" -> p.length == 1 ? s.endsWith(str(p[0])) : null;
          case "strip" -> strip(s, p, true, true);
          case "lstrip" -> strip(s, p, true, false);
          case "rstrip" -> strip(s, p, false, true);
          case "split" -> split(s, p);
          case "upper" -> p.length == 0 ? s.toUpperCase(Locale.ROOT) : null;
          case "lower" -> p.length == 0 ? s.toLowerCase(Locale.ROOT) : null;
          case "title" -> p.length == 0 ? title(s) : null;
          case "replace" -> p.length == 2 ? s.replace(str(p[0]), str(p[1])) : null;
          default -> null;
        };
    if (result != null) {
      context.setPropertyResolved(true);
    }
    return result;
  }

  private static String str(Object o) {
    return o == null ? "None" : o.toString();
  }

  /** Python's strip: whitespace, or any of the given characters, from the chosen ends. */
  private static String strip(String s, Object[] p, boolean left, boolean right) {
    String chars = p.length > 0 && p[0] != null ? str(p[0]) : null;
    int a = 0;
    int b = s.length();
    while (left && a < b && stripped(s.charAt(a), chars)) {
      a++;
    }
    while (right && b > a && stripped(s.charAt(b - 1), chars)) {
      b--;
    }
    return s.substring(a, b);
  }

  private static boolean stripped(char c, String chars) {
    return chars == null ? Character.isWhitespace(c) : chars.indexOf(c) >= 0;
  }

  /** Python's split: on runs of whitespace, or on every occurrence of a separator. */
  private static List<String> split(String s, Object[] p) {
    if (p.length == 0 || p[0] == null) {
      String t = s.strip();
      return t.isEmpty() ? new ArrayList<>() : new ArrayList<>(Arrays.asList(t.split("\\s+")));
    }
    return new ArrayList<>(Arrays.asList(s.split(Pattern.quote(str(p[0])), -1)));
  }

  private static String title(String s) {
    StringBuilder b = new StringBuilder(s.length());
    boolean start = true;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      b.append(start ? Character.toUpperCase(c) : Character.toLowerCase(c));
      start = !Character.isLetter(c);
    }
    return b.toString();
  }

  @Override
  public Class<?> getCommonPropertyType(ELContext context, Object base) {
    return null;
  }

  @Override
  public Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, Object base) {
    return null;
  }

  @Override
  public Class<?> getType(ELContext context, Object base, Object property) {
    return null;
  }

  @Override
  public Object getValue(ELContext context, Object base, Object property) {
    return null;
  }

  @Override
  public boolean isReadOnly(ELContext context, Object base, Object property) {
    return true;
  }

  @Override
  public void setValue(ELContext context, Object base, Object property, Object value) {}
}
