// Renders conversations.json with Qwen3's chat template, passing chat_template_kwargs as template
// variables as Hugging Face's apply_chat_template does, with @huggingface/jinja 0.5.11:
//   npm install @huggingface/jinja@0.5.11
//   node render.mjs ../../../../../../shared/golden/chat
// Writes qwen3.convK.txt (the exact text).
import fs from "node:fs";
import path from "node:path";
import { Template } from "@huggingface/jinja";

const [chatDir] = process.argv.slice(2);
const here = path.dirname(new URL(import.meta.url).pathname);
const conversations = JSON.parse(fs.readFileSync(path.join(here, "conversations.json"), "utf8"));
const template = new Template(fs.readFileSync(path.join(chatDir, "qwen3.jinja"), "utf8"));
for (const c of conversations) {
  const text = template.render({
    ...(c.chat_template_kwargs ?? {}),
    messages: c.messages,
    tools: c.tools,
    add_generation_prompt: c.add_generation_prompt,
    eos_token: "<|im_end|>",
  });
  fs.writeFileSync(path.join(here, `qwen3.conv${c.id}.txt`), text);
}
