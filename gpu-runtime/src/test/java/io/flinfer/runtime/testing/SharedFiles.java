package io.flinfer.runtime.testing;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelLoader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The files in {@code ../shared} beside the repository that tests read: models and goldens. */
public final class SharedFiles {
  private SharedFiles() {}

  public static Path root() {
    String prop = System.getProperty("flinfer.shared");
    Path p = prop != null ? Path.of(prop) : Path.of("..", "shared");
    if (!Files.isDirectory(p)) {
      p = Path.of("..", "..", "shared");
    }
    return p.toAbsolutePath().normalize();
  }

  public static Path stories260kDir() {
    Path dir = root().resolve("models/stories260K");
    assumeTrue(Files.isDirectory(dir), "stories260K not found under " + dir);
    return dir;
  }

  public static LlamaModel stories260k() {
    Path dir = stories260kDir();
    return ModelLoader.load(dir.resolve("stories260K.bin"), dir.resolve("tok512.bin"));
  }

  public static LlamaModel stories260kGguf() {
    return ModelLoader.load(stories260kDir().resolve("stories260K.gguf"), null);
  }

  public static String golden() {
    try {
      return Files.readString(root().resolve("golden/stories260K-greedy.txt"));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The 64 greedy token ids after "Once upon a time". */
  public static int[] goldenIds() {
    Matcher m = Pattern.compile("## GENERATED_IDS_64[^\\n]*\\n([0-9 ]+)").matcher(golden());
    if (!m.find()) {
      throw new IllegalStateException("golden ids not found");
    }
    return Arrays.stream(m.group(1).trim().split(" +")).mapToInt(Integer::parseInt).toArray();
  }

  /** The exact text of a TEXT_STEPS_n section, without run.c's final newline. */
  public static String goldenText(int steps) {
    Matcher m =
        Pattern.compile("## TEXT_STEPS_" + steps + "[^\\n]*\\n<<<\\n(.*?)\\n>>>", Pattern.DOTALL)
            .matcher(golden());
    if (!m.find()) {
      throw new IllegalStateException("golden text " + steps + " not found");
    }
    String s = m.group(1);
    return s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
  }
}
