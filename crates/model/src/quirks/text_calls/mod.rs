//! Tool calls a model wrote into its answer text instead of the structured `tool_calls`
//! field. Local servers do this when their parser does not know the model's template
//! (llama.cpp without `--jinja`, older Ollama and vLLM tool parsers), and tandem's own
//! prompted-tools fallback asks for the first form below.
//!
//! Recognised forms:
//! - Hermes / Qwen: `<tool_call>{"name": …, "arguments": {…}}</tool_call>`, one or more;
//! - Mistral: `[TOOL_CALLS][{"name": …, "arguments": {…}}, …]` and `[TOOL_CALLS]name[ARGS]{…}`;
//! - Llama 3.x: `<|python_tag|>{"name": …, "parameters": {…}}` (several joined by `;`);
//! - a JSON object (or array of them) naming an offered tool, bare or in one fenced block.
//!
//! The rule that keeps quoted examples from running: a marked form counts only when its
//! blocks run to the end of the answer (whitespace aside) and its marker is not inside a
//! code fence or backticks; the text before the first marker stays the visible answer. An
//! unmarked JSON form counts only when it is the whole answer, every object names a tool
//! that was offered and has no key a call (or its `{"type", "id", "function"}` wrapper) does
//! not have. Anything else that does not parse leaves the answer as it was.
//!
//! While an answer streams, [`Watch`] holds back only what can still become a call: a marker
//! and what follows it, the end of the text where a marker may be starting, and an answer's
//! start while it can still grow into the unmarked form (`prefix.rs`) — so `[1, 2]`,
//! `[link](url)` or a JSON answer the user asked for stream from their first bytes. What was
//! shown is never taken for a call. A server that returns calls in their own field reads the
//! model's calls itself: its answers are not watched at all (see `turn::stream`).

mod forms;
mod prefix;
mod watch;

pub use watch::Watch;
