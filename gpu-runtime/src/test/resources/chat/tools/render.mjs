// Renders conversations.json with the chat templates that take tools, as Hugging Face's
// apply_chat_template does, with @huggingface/jinja 0.5.11:
//   npm install @huggingface/jinja@0.5.11
//   node render.mjs ../../../../../../shared/golden/chat
// Writes NAME.convK.txt (the exact text) or NAME.convK.error (the template's refusal).
import fs from "node:fs";
import path from "node:path";
import { Template } from "@huggingface/jinja";

const [chatDir] = process.argv.slice(2);
const templates = [
  { name: "qwen3", file: "qwen3.jinja", special: { eos_token: "<|im_end|>" } },
  {
    name: "llama3_1-official",
    file: "llama3_1-official.jinja",
    special: { bos_token: "<|begin_of_text|>", eos_token: "<|eot_id|>" },
  },
];
const here = path.dirname(new URL(import.meta.url).pathname);
const conversations = JSON.parse(fs.readFileSync(path.join(here, "conversations.json"), "utf8"));
for (const t of templates) {
  const template = new Template(fs.readFileSync(path.join(chatDir, t.file), "utf8"));
  for (const c of conversations) {
    const out = path.join(here, `${t.name}.conv${c.id}`);
    try {
      const text = template.render({
        messages: c.messages,
        tools: c.tools,
        add_generation_prompt: c.add_generation_prompt,
        ...t.special,
      });
      fs.writeFileSync(out + ".txt", text);
    } catch (e) {
      fs.writeFileSync(out + ".error", String(e.message) + "\n");
    }
  }
}
