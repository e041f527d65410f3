//! Guards against a runaway model within one prompt: the same batch of tool calls over and
//! over (answered with "you already did this", then no tools at all), and tools called more
//! often than their budget (`[loops]` and `[tool_budgets]` in the config).

use std::collections::HashMap;

use serde_json::Value;

use super::context::TurnContext;
use crate::config::LoopGuard;
use crate::model::ToolCall;
use crate::types::{Severity, TurnEvent};

/// What to do with one response's tool calls.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Screening {
    /// Run them, except those with a refusal (what the model reads instead).
    Run(Vec<Option<String>>),
    /// The same batch again, this many times in a row: run none, answer each with this.
    Repeated { times: u32, answer: String },
}

/// One prompt's guard state.
pub(super) struct Guard {
    limits: LoopGuard,
    last: Option<String>,
    times: u32,
    used: HashMap<String, u32>,
    tools_off: bool,
}

impl Guard {
    pub(super) fn new(limits: LoopGuard) -> Self {
        Self {
            limits,
            last: None,
            times: 0,
            used: HashMap::new(),
            tools_off: false,
        }
    }

    /// Whether the next request goes without tools.
    pub(super) fn tools_off(&self) -> bool {
        self.tools_off
    }

    /// Asks the guard about a response's calls; tells the editor (as a note) and the session's
    /// counters when it steps in. Returns what the model reads instead of each refused call.
    pub(super) fn apply(&mut self, ctx: &TurnContext, calls: &[ToolCall]) -> Vec<Option<String>> {
        match self.check(calls) {
            Screening::Repeated { times, answer } => {
                let withdrawn = self.tools_off();
                ctx.meters.totals.send_modify(|t| {
                    t.repeats_blocked += 1;
                    t.tools_withdrawn += u64::from(withdrawn);
                });
                tracing::info!(session = %ctx.facts.session_id, times, withdrawn, "the model repeated its tool calls");
                let mut note = format!(
                    "tandem: the model made the same tool calls {times} times in a row; they were not run again"
                );
                if withdrawn {
                    note.push_str(", and tools are switched off for the rest of this prompt so the model has to answer");
                }
                note.push('.');
                ctx.emit(TurnEvent::Notice {
                    severity: Severity::Warning,
                    text: note,
                });
                vec![Some(answer); calls.len()]
            }
            Screening::Run(refusals) => {
                let mut over: Vec<&str> = calls
                    .iter()
                    .zip(&refusals)
                    .filter(|(_, r)| r.is_some())
                    .map(|(c, _)| c.name.as_str())
                    .collect();
                if !over.is_empty() && !self.tools_off() {
                    ctx.meters
                        .totals
                        .send_modify(|t| t.budget_refusals += over.len() as u64);
                    over.dedup();
                    ctx.emit(TurnEvent::Notice {
                        severity: Severity::Warning,
                        text: format!(
                            "tandem: refused {} call(s) past their budget for this prompt ({}).",
                            refusals.iter().flatten().count(),
                            over.join(", ")
                        ),
                    });
                }
                refusals
            }
        }
    }

    /// Decides about a response's (non-empty) tool calls.
    fn check(&mut self, calls: &[ToolCall]) -> Screening {
        if self.tools_off {
            let answer = "Not run: tools are switched off for the rest of this prompt because \
                          the same calls kept repeating. Answer the user with what you have."
                .to_string();
            return Screening::Run(vec![Some(answer); calls.len()]);
        }
        let signature = signature(calls);
        if self.last.as_deref() == Some(signature.as_str()) {
            self.times += 1;
        } else {
            self.last = Some(signature);
            self.times = 1;
        }
        if self.times >= self.limits.repeat_warn {
            let stop = self.times >= self.limits.repeat_stop;
            self.tools_off = stop;
            let what = if calls.len() == 1 {
                "this exact call"
            } else {
                "this exact batch of calls"
            };
            let then = if stop {
                "Tools are now switched off: give the user your answer with what you have."
            } else {
                "Its results have not changed. Do not repeat it: use the earlier results, try \
                 a different approach, or give your answer."
            };
            let answer = format!(
                "Not run: you already made {what} with the same arguments {} times in a row. {then}",
                self.times - 1
            );
            return Screening::Repeated {
                times: self.times,
                answer,
            };
        }
        Screening::Run(
            calls
                .iter()
                .map(|call| {
                    let budget = *self.limits.tool_budgets.get(&call.name)?;
                    let used = self.used.entry(call.name.clone()).or_default();
                    if *used >= budget {
                        return Some(format!(
                            "Not run: `{}` has been called {budget} times in this prompt, its \
                             budget (tool_budgets in tandem's config). Work with the results you \
                             have, use another tool, or give your answer.",
                            call.name
                        ));
                    }
                    *used += 1;
                    None
                })
                .collect(),
        )
    }
}

/// The calls' names and arguments, with arguments in a canonical form when they parse, so
/// the same request written with different spacing counts as the same.
fn signature(calls: &[ToolCall]) -> String {
    calls
        .iter()
        .map(|c| {
            let args = serde_json::from_str::<Value>(&c.arguments)
                .map(|v| v.to_string())
                .unwrap_or_else(|_| c.arguments.clone());
            format!("{}\u{0}{args}", c.name)
        })
        .collect::<Vec<_>>()
        .join("\u{1}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, args: &str) -> ToolCall {
        ToolCall::new("x", name, args)
    }

    #[test]
    fn repeats_are_blocked_at_three_and_tools_withdrawn_at_six() {
        let limits = LoopGuard::default();
        let mut g = Guard::new(limits.clone());
        let batch = [call("read_file", r#"{"path": "a"}"#)];
        let spaced = [call("read_file", r#"{ "path":"a" }"#)];
        assert_eq!(g.check(&batch), Screening::Run(vec![None]));
        assert_eq!(g.check(&spaced), Screening::Run(vec![None]));
        assert!(matches!(
            g.check(&batch),
            Screening::Repeated { times: 3, .. }
        ));
        assert!(!g.tools_off());
        assert!(matches!(
            g.check(&batch),
            Screening::Repeated { times: 4, .. }
        ));
        assert!(matches!(
            g.check(&batch),
            Screening::Repeated { times: 5, .. }
        ));
        let Screening::Repeated { times: 6, answer } = g.check(&batch) else {
            panic!("sixth repeat")
        };
        assert!(answer.contains("switched off"), "{answer}");
        assert!(g.tools_off());
    }

    #[test]
    fn a_different_batch_starts_the_count_again() {
        let limits = LoopGuard::default();
        let mut g = Guard::new(limits.clone());
        let a = [call("read_file", r#"{"path": "a"}"#)];
        let b = [call("read_file", r#"{"path": "b"}"#)];
        g.check(&a);
        g.check(&a);
        assert_eq!(g.check(&b), Screening::Run(vec![None]));
        assert_eq!(g.check(&a), Screening::Run(vec![None]));
    }

    #[test]
    fn budgets_refuse_calls_past_the_limit() {
        let mut limits = LoopGuard::default();
        limits.tool_budgets.insert("run_command".into(), 2);
        let mut g = Guard::new(limits.clone());
        let batch = [
            call("run_command", r#"{"command": "a"}"#),
            call("run_command", r#"{"command": "b"}"#),
            call("run_command", r#"{"command": "c"}"#),
            call("read_file", r#"{"path": "x"}"#),
        ];
        let Screening::Run(refusals) = g.check(&batch) else {
            panic!("runs")
        };
        assert_eq!(refusals[..2], [None, None]);
        assert!(refusals[2].as_deref().unwrap().contains("budget"));
        assert_eq!(refusals[3], None);
    }
}
