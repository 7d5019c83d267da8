// Writes splits.json: how the Hugging Face tokenizers split texts into words under each family's
// pre-tokenizer pattern (a Split with behavior Isolated, as the families' tokenizer.json files
// have it), for PreTokenizerSplitsTest.
//
//   npm install @huggingface/tokenizers@0.2.0
//   node splits.mjs ../../../../../../shared/tokenizers/qwen3.gguf.inp > splits.json
//
// The shared inputs are read where they lie and named by their index only.
import { SplitPreTokenizer } from "@huggingface/tokenizers";
import { readFileSync } from "node:fs";

const patterns = {
  TEKKEN:
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|" +
    "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|" +
    "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  LLAMA3:
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}|" +
    " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  QWEN2:
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|" +
    " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
};
// Qwen's tokenizer NFC-normalizes before it splits.
const nfc = { QWEN2: true };

const extra = [
  "HelloWorld iPhone McDONALD's",
  "ÉCOLE École éCOLE",
  "camelCaseWord snake_case_word SCREAMING_CASE",
  "ǅungla ǈudi Dž",
  "ΑθήναΑθήνα ΣΟΦΙΑ σοφία",
  "Ещё РАЗ разРАЗ",
  "Ճանապարհ ႠႡႢ აბგ",
  "ひらがなカタカナ漢字한국어",
  "e\u0301te\u0301 A\u030aB",
  "path/to/file.txt\nhttps://example.com/a/b",
  "x=1+2*3; y[0]-=4 // 12345",
  "it's I'M we'LL they'Re",
  "tab\there  two  spaces \n\n new\r\nline",
  "🙂👍🏽 emoji🙂text",
  "ﬁﬂ Ⅻ ½ ²³ ٣٤ ๓",
];

const inputs = readFileSync(process.argv[2], "utf8").split("\n__ggml_vocab_test__\n");
if (inputs[inputs.length - 1] === "") inputs.pop();

const splits = {};
for (const [family, regex] of Object.entries(patterns)) {
  const split = new SplitPreTokenizer({
    type: "Split",
    pattern: { Regex: regex },
    behavior: "Isolated",
    invert: false,
  });
  const words = (t) => split.pre_tokenize_text(nfc[family] ? t.normalize("NFC") : t);
  splits[family] = { shared: inputs.map(words), extra: extra.map(words) };
}
process.stdout.write(
  JSON.stringify({ by: "@huggingface/tokenizers 0.2.0", extra, splits }, null, 1) + "\n",
);
