package io.flinfer.runtime.chat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import jinjava.javax.el.CompositeELResolver;

/**
 * A model's chat template ({@code tokenizer.chat_template}, Jinja) rendered as Hugging Face's
 * {@code apply_chat_template} renders it: trim_blocks and lstrip_blocks on, {@code messages},
 * {@code add_generation_prompt}, {@code tools}, {@code bos_token}, {@code eos_token}, {@code
 * raise_exception} and {@code strftime_now} defined, the request's {@code chat_template_kwargs} as
 * variables, and {@code tojson} writing as Python's json does. The engine is Jinjava; where its
 * Jinja differs from Python's for what the families' templates use, the template is adapted before
 * parsing (whitespace control on every tag, keyword arguments of {@code namespace(...)}
 * parenthesized, {@code [::-1]} as {@code |reverse}) and Python's string methods are supplied.
 * Thread-safe.
 */
public final class ChatTemplate {
  private static final Pattern NAMESPACE_CALL = Pattern.compile("namespace\\(([^()]*)\\)");

  /** {@code not a|length == 1}: a negated comparison, whose operands are a path and filters. */
  private static final Pattern NEGATED_COMPARISON =
      Pattern.compile("\\bnot\\s+([\\w.\\[\\]'\"|]+\\s*(?:==|!=|<=|>=|<|>)\\s*[\\w.'\"]+)");

  private static final Pattern TOOLS = Pattern.compile("\\btools\\b");

  /** What the renderer itself hands the template, which the template's switches may not set. */
  private static final List<String> RESERVED =
      List.of(
          "messages",
          "tools",
          "add_generation_prompt",
          "bos_token",
          "eos_token",
          "strftime_now",
          "raise_exception");

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern KEYWORD_ARGUMENT = Pattern.compile("(\\w+)\\s*=\\s*([^,]+)");

  /** The message of the template's own raise_exception in this thread's render, if any. */
  private static final ThreadLocal<String> RAISED = new ThreadLocal<>();

  private final String source;
  private final String template;
  private final String bosToken;
  private final String eosToken;
  private final Jinjava jinjava;

  /**
   * @param source the Jinja text
   * @param bosToken the text of the beginning-of-sequence token ("" if none)
   * @param eosToken the text of the end-of-sequence token ("" if none)
   */
  public ChatTemplate(String source, String bosToken, String eosToken) {
    this.source = source;
    this.template = adapt(source);
    this.bosToken = bosToken;
    this.eosToken = eosToken;
    CompositeELResolver resolver = new CompositeELResolver();
    resolver.add(new PythonStringMethods());
    resolver.add(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_ONLY);
    this.jinjava =
        new Jinjava(
            JinjavaConfig.newBuilder()
                .withTrimBlocks(true)
                .withLstripBlocks(true)
                // A mapping or list printed as Python prints it ({'a': 2}), not as Java does.
                .withLegacyOverrides(
                    LegacyOverrides.newBuilder().withUsePyishObjectMapper(true).build())
                .withElResolver(resolver)
                .build());
    jinjava.getGlobalContext().registerFilter(new PythonJson());
    jinjava.getGlobalContext().registerExpTest(new PythonIterable());
    jinjava
        .getGlobalContext()
        .registerFunction(
            new ELFunctionDefinition(
                "", "raise_exception", ChatTemplate.class, "raiseException", String.class));
    jinjava
        .getGlobalContext()
        .registerFunction(
            new ELFunctionDefinition(
                "", "strftime_now", ChatTemplate.class, "strftimeNow", String.class));
  }

  /** The template as the model gave it. */
  public String source() {
    return source;
  }

  /**
   * The conversation as the model expects to read it, ending with the assistant's turn opened when
   * {@code addGenerationPrompt}.
   *
   * @throws ChatTemplateException when the template fails (a {@code raise_exception} of its own,
   *     such as roles not alternating, or a construct the engine cannot evaluate)
   */
  public String render(List<ChatMessage> messages, boolean addGenerationPrompt) {
    return render(messages, null, addGenerationPrompt);
  }

  /**
   * The conversation with the functions the model may call, given to the template as {@code tools}
   * (OpenAI's form: {@code [{"type": "function", "function": {"name", "description",
   * "parameters"}}]}).
   *
   * @param toolsJson the tools as a JSON array, or null for none
   * @throws ChatTemplateException when the tools are not a JSON array or the template fails
   */
  public String render(List<ChatMessage> messages, String toolsJson, boolean addGenerationPrompt) {
    return render(messages, toolsJson, null, addGenerationPrompt);
  }

  /**
   * The conversation with the tools and the template's own switches ({@code chat_template_kwargs}
   * as vLLM and SGLang take them, such as Qwen3's {@code enable_thinking}), each a variable the
   * template sees.
   *
   * @param kwargsJson a JSON object, or null for none; it may not set what the renderer itself sets
   *     (messages, tools, add_generation_prompt, bos_token, eos_token)
   * @throws ChatTemplateException when the tools are not a JSON array, the switches not a JSON
   *     object or one of them is reserved, or the template fails
   */
  public String render(
      List<ChatMessage> messages,
      String toolsJson,
      String kwargsJson,
      boolean addGenerationPrompt) {
    Map<String, Object> context = new HashMap<>(kwargs(kwargsJson));
    List<Map<String, Object>> list = new ArrayList<>(messages.size());
    for (ChatMessage m : messages) {
      list.add(m.asMap());
    }
    context.put("messages", list);
    context.put("add_generation_prompt", addGenerationPrompt);
    if (toolsJson != null) {
      context.put("tools", tools(toolsJson));
    }
    context.put("bos_token", bosToken);
    context.put("eos_token", eosToken);
    // Hugging Face hands these functions to the template as variables, and templates test them
    // ({% if strftime_now is defined %} in Llama 3.2's): defined here too, called as functions.
    context.put("strftime_now", "strftime_now");
    context.put("raise_exception", "raise_exception");
    RenderResult r;
    // Jinjava reports a function's exception only as "Error invoking function": the template's
    // own message is kept aside.
    RAISED.remove();
    try {
      r = jinjava.renderForResult(template, context);
    } catch (RuntimeException e) {
      throw new ChatTemplateException(raisedOr(rootMessage(e)), e);
    }
    for (TemplateError e : r.getErrors()) {
      if (e.getSeverity() == TemplateError.ErrorType.FATAL) {
        throw new ChatTemplateException(raisedOr(e.getMessage()), null);
      }
    }
    return r.getOutput();
  }

  /** Whether the template reads {@code tools}, that is, can offer the model functions to call. */
  public boolean takesTools() {
    return TOOLS.matcher(source).find();
  }

  /**
   * The template's switches in {@code json} (a JSON object; null: none), checked.
   *
   * @throws ChatTemplateException when they are not a JSON object or set a reserved variable
   */
  public static Map<String, Object> kwargs(String json) {
    if (json == null) {
      return Map.of();
    }
    JsonNode n;
    try {
      n = JSON.readTree(json);
    } catch (JsonProcessingException e) {
      n = null;
    }
    if (n == null || !n.isObject()) {
      throw new ChatTemplateException("chat_template_kwargs must be a JSON object", null);
    }
    for (String reserved : RESERVED) {
      if (n.has(reserved)) {
        throw new ChatTemplateException(
            "chat_template_kwargs may not set " + reserved + ", which the renderer sets", null);
      }
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> map = JSON.convertValue(n, Map.class);
    return map;
  }

  private static List<?> tools(String json) {
    try {
      JsonNode n = JSON.readTree(json);
      if (n != null && n.isArray()) {
        return JSON.convertValue(n, List.class);
      }
    } catch (JsonProcessingException e) {
      // reported below
    }
    throw new ChatTemplateException("tools must be a JSON array", null);
  }

  /** {@code raise_exception(message)}: the template refuses the conversation. */
  public static String raiseException(String message) {
    RAISED.set(message);
    throw new IllegalArgumentException(message);
  }

  private static String raisedOr(String message) {
    String raised = RAISED.get();
    RAISED.remove();
    return raised != null ? raised : message;
  }

  /** {@code strftime_now(format)}: the current local time in a C strftime format. */
  public static String strftimeNow(String format) {
    return Strftime.format(format, ZonedDateTime.now());
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage() != null ? t.getMessage() : t.toString();
  }

  /** Rewrites what Jinjava parses differently from Python's Jinja into what it parses alike. */
  static String adapt(String source) {
    String t =
        source
            // Jinjava does not strip whitespace before {{- or after -}}: strip it here, for
            // every tag kind, as Jinja does.
            .replaceAll("\\s*\\{\\{-", "{{")
            .replaceAll("-}}\\s*", "}}")
            .replaceAll("\\s*\\{%-", "{%")
            .replaceAll("-%}\\s*", "%}")
            .replaceAll("\\s*\\{#-", "{#")
            .replaceAll("-#}\\s*", "#}")
            // Jinjava has no extended slices; a reversed list is its reverse filter.
            .replace("[::-1]", "|reverse");
    // Jinja's not binds more loosely than a comparison, Jinjava's more tightly: not a == b is
    // not (a == b) in Jinja.
    t = NEGATED_COMPARISON.matcher(t).replaceAll("not ($1)");
    // Jinjava binds a keyword argument's value before a following operator
    // (namespace(i=n|length - 1)): parenthesize each value.
    Matcher m = NAMESPACE_CALL.matcher(t);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String args = KEYWORD_ARGUMENT.matcher(m.group(1)).replaceAll("$1=($2)");
      m.appendReplacement(out, Matcher.quoteReplacement("namespace(" + args + ")"));
    }
    m.appendTail(out);
    return out.toString();
  }

  /** C's strftime for the conversions templates use. */
  static final class Strftime {
    private Strftime() {}

    static String format(String format, ZonedDateTime t) {
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < format.length(); i++) {
        char c = format.charAt(i);
        if (c != '%' || i + 1 == format.length()) {
          b.append(c);
          continue;
        }
        char f = format.charAt(++i);
        b.append(
            switch (f) {
              case 'd' -> String.format("%02d", t.getDayOfMonth());
              case 'm' -> String.format("%02d", t.getMonthValue());
              case 'Y' -> String.valueOf(t.getYear());
              case 'y' -> String.format("%02d", t.getYear() % 100);
              case 'H' -> String.format("%02d", t.getHour());
              case 'M' -> String.format("%02d", t.getMinute());
              case 'S' -> String.format("%02d", t.getSecond());
              case 'b' -> DateTimeFormatter.ofPattern("MMM", java.util.Locale.ENGLISH).format(t);
              case 'B' -> DateTimeFormatter.ofPattern("MMMM", java.util.Locale.ENGLISH).format(t);
              case 'a' -> DateTimeFormatter.ofPattern("EEE", java.util.Locale.ENGLISH).format(t);
              case 'A' -> DateTimeFormatter.ofPattern("EEEE", java.util.Locale.ENGLISH).format(t);
              case '%' -> "%";
              default -> "%" + f;
            });
      }
      return b.toString();
    }
  }
}
