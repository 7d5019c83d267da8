package io.flinfer.job.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.runtime.gguf.GgufFile;
import io.flinfer.runtime.gguf.GgufTokenizers;
import io.flinfer.runtime.grammar.GbnfGrammar;
import io.flinfer.runtime.grammar.JsonPrefix;
import io.flinfer.runtime.grammar.JsonSchemaGrammar;
import io.flinfer.runtime.grammar.JsonVocabulary;
import io.flinfer.runtime.grammar.OutputConstraint;
import io.flinfer.runtime.grammar.OutputState;
import io.flinfer.runtime.grammar.RegexGrammar;
import io.flinfer.runtime.grammar.Thinking;
import io.flinfer.runtime.grammar.ThinkingPrefix;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Times the token masks of structured output on a real vocabulary: building the vocabulary's table
 * once, then one mask at each of a few typical places in an output (inside a string, between
 * values, inside a number, inside a literal, inside a schema's object, inside a reasoning model's
 * thought before its object, inside a regular expression's match and inside a GBNF grammar's
 * derivation, whose masks a request makes once per state and then keeps), and prints JSON.
 */
@Command(
    name = "bench-format",
    mixinStandardHelpOptions = true,
    description =
        "Benchmark the token masks of JSON and regex output on a vocabulary; prints JSON.")
public final class BenchFormatCommand implements Callable<Integer> {
  /** The schema of the json_schema case. */
  static final String SCHEMA =
      "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"},"
          + " \"tags\": {\"type\": \"array\", \"items\": {\"type\": \"integer\"}},"
          + " \"code\": {\"type\": \"string\", \"maxLength\": 8},"
          + " \"age\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 150},"
          + " \"born\": {\"type\": \"string\", \"format\": \"date\"},"
          + " \"slug\": {\"type\": \"string\", \"pattern\": \"^[a-z0-9-]+$\"},"
          + " \"user\": {\"type\": \"string\", \"pattern\": \"^[a-z0-9_]+$\", \"maxLength\": 16}}}";

  /**
   * The expression of the regex case: a sentence, after a space where the vocabulary writes one
   * before a text's first word (SentencePiece's).
   */
  static final String REGEX = " ?[A-Z][a-z]+( [a-z]+)*[.!?]";

  /** The grammar of the grammar case: nested lists of integers (after a space, as above). */
  static final String GRAMMAR =
      "root ::= \" \"? list\nlist ::= \"[\" ( item ( \", \" item )* )? \"]\"\n"
          + "item ::= [0-9]+ | list";

  /** Each case: its format, the output so far, and what place that is. */
  private static final String[][] CASES = {
    {"json_object", "{\"name\": \"Al", "inside a string"},
    {"json_object", "{\"name\": \"Al\",", "between values"},
    {"json_object", "{\"a\": [1, 2", "inside a number"},
    {"json_object", "{\"a\": tr", "inside a literal"},
    {"json_schema", "{\"name\": \"Al\", \"tags\": [1", "inside a schema's integer array"},
    {
      "json_schema",
      "{\"name\": \"Al\", \"tags\": [], \"code\": \"AB",
      "inside a string of at most 8 characters"
    },
    {
      "json_schema",
      "{\"name\": \"Al\", \"tags\": [], \"code\": \"\", \"age\": 1",
      "inside an integer from 0 to 150"
    },
    {
      "json_schema",
      "{\"name\": \"Al\", \"tags\": [], \"code\": \"\", \"age\": 1, \"born\": \"1999-1",
      "inside a string of format date"
    },
    {
      "json_schema",
      "{\"name\": \"Al\", \"tags\": [], \"code\": \"\", \"age\": 1, \"born\":"
          + " \"1999-12-31\", \"slug\": \"my-",
      "inside a string of pattern ^[a-z0-9-]+$"
    },
    {
      "json_schema",
      "{\"name\": \"Al\", \"tags\": [], \"code\": \"\", \"age\": 1, \"born\":"
          + " \"1999-12-31\", \"slug\": \"a\", \"user\": \"my_",
      "inside a string of pattern ^[a-z0-9_]+$ of at most 16 characters"
    },
    {"thinking_json_object", "The user wants", "inside a thought before a JSON object"},
    {"regex", "The cat sat", "inside a word of " + REGEX},
    {"grammar", "[12, [3", "inside a number in nested lists of a GBNF grammar"}
  };

  @Option(
      names = "--vocabulary",
      required = true,
      description = "A GGUF file with a tokenizer (a model, or a vocabulary-only file).")
  Path vocabulary;

  @Option(
      names = "--seconds",
      defaultValue = "1",
      description = "Least time per case (default: ${DEFAULT-VALUE}).")
  double seconds;

  @Override
  public Integer call() throws Exception {
    if (seconds <= 0) {
      throw new IllegalArgumentException("--seconds must be > 0");
    }
    Tokenizer tokenizer = GgufTokenizers.read(GgufFile.open(vocabulary));
    ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    ObjectNode root = json.createObjectNode();
    BenchModelCommand.machine(root);
    root.put("load_average_before", BenchModelCommand.loadAverage());
    root.put("vocabulary", vocabulary.getFileName().toString());
    root.put("vocab_size", tokenizer.vocabSize());
    long start = System.nanoTime();
    JsonVocabulary table = JsonVocabulary.of(tokenizer);
    root.put("table_ms", round((System.nanoTime() - start) / 1e6));
    root.put("schema", SCHEMA);
    long[] mask = new long[JsonVocabulary.words(table.size())];
    ArrayNode results = root.putArray("results");
    for (String[] c : CASES) {
      OutputState shape =
          switch (c[0]) {
            case "json_schema" -> JsonSchemaGrammar.compile(SCHEMA).start();
            case "regex" -> RegexGrammar.compile(REGEX).start();
            case "grammar" -> GbnfGrammar.compile(GRAMMAR).start();
            // The prompt opened the thought: <think> is a special token, not text, in most
            // vocabularies.
            case "thinking_json_object" -> new ThinkingPrefix(new JsonPrefix(), Thinking.OPENED);
            default -> new JsonPrefix();
          };
      int[] head = tokenizer.encode(c[1], false);
      OutputConstraint constraint = after(table, shape, head, c);
      ObjectNode r = results.addObject();
      // A request may make a state's mask once and then serve it from what it kept (a regex's, a
      // grammar's), and a pattern's runs are kept for every request: the process's first mask
      // here (one timing, before anything else at this place), a new request's first mask after
      // the warm-up, and a repeated one are timed.
      OutputConstraint first = after(table, shape.fresh(), head, c);
      long t0 = System.nanoTime();
      first.allowed(mask);
      r.put("micros_first_mask_of_process", round((System.nanoTime() - t0) / 1e3));
      int allowed = 0;
      for (int i = 0; i < 100; i++) {
        allowed = constraint.allowed(mask); // warm-up
      }
      long made = 0;
      int n = 100;
      for (int i = 0; i < n; i++) {
        OutputConstraint fresh = after(table, shape.fresh(), head, c);
        t0 = System.nanoTime();
        fresh.allowed(mask);
        made += System.nanoTime() - t0;
      }
      r.put("micros_first_mask", round(made / 1e3 / n));
      long masks = 0;
      t0 = System.nanoTime();
      long elapsed;
      do {
        for (int i = 0; i < 50; i++) {
          constraint.allowed(mask);
        }
        masks += 50;
        elapsed = System.nanoTime() - t0;
      } while (elapsed < seconds * 1e9);
      r.put("format", c[0]);
      r.put("output_so_far", c[1]);
      r.put("place", c[2]);
      r.put("allowed_tokens", allowed);
      r.put("masks", masks);
      r.put("micros_per_mask", round(elapsed / 1e3 / masks));
    }
    root.put("load_average_after", BenchModelCommand.loadAverage());
    System.out.println(json.writeValueAsString(root));
    return 0;
  }

  /** A constraint of {@code shape} after tokens {@code head} (case {@code c}'s output so far). */
  private static OutputConstraint after(
      JsonVocabulary table, OutputState shape, int[] head, String[] c) {
    OutputConstraint constraint = new OutputConstraint(table, shape);
    for (int t : head) {
      if (!constraint.advance(t)) {
        throw new IllegalStateException(c[1] + " does not start a " + c[0] + " output");
      }
    }
    return constraint;
  }

  private static double round(double v) {
    // Two decimals: a kept mask over a small vocabulary is a copy of a few hundredths of a µs.
    return Math.round(v * 100) / 100.0;
  }
}
