//! How a model response and a whole turn end, each named once: the model layer reads the
//! server's `finish_reason` into [`FinishReason`], the turn decides a [`StopReason`], and the
//! ACP layer and `tandem exec` print it with [`StopReason::as_str`].

/// Why the model server says a response ended (`finish_reason`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FinishReason {
    /// `stop`: the model finished.
    Stop,
    /// `length`: the output token limit was hit.
    Length,
    /// `content_filter`: the server's filter stopped the answer.
    ContentFilter,
    /// `tool_calls`: the model called tools.
    ToolCalls,
    /// Anything else a server sends (`eos`, `end_turn`, ...), kept as sent.
    Other(String),
}

impl FinishReason {
    /// Reads a server's `finish_reason`.
    pub fn parse(reason: &str) -> Self {
        match reason {
            "stop" => Self::Stop,
            "length" => Self::Length,
            "content_filter" => Self::ContentFilter,
            "tool_calls" => Self::ToolCalls,
            other => Self::Other(other.to_string()),
        }
    }

    /// The wire spelling.
    #[cfg(test)]
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Self::Stop => "stop",
            Self::Length => "length",
            Self::ContentFilter => "content_filter",
            Self::ToolCalls => "tool_calls",
            Self::Other(other) => other,
        }
    }
}

/// Why a turn ended without an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// The model finished its answer.
    EndTurn,
    /// The model hit its output token limit.
    MaxTokens,
    /// The turn made as many model requests as one prompt may.
    MaxTurnRequests,
    /// The model (or its content filter) refused.
    Refusal,
    /// The user cancelled.
    Cancelled,
}

impl StopReason {
    /// How the turn ended when the model's last response ended for `finish`.
    pub fn after(finish: Option<&FinishReason>) -> Self {
        match finish {
            Some(FinishReason::Length) => Self::MaxTokens,
            Some(FinishReason::ContentFilter) => Self::Refusal,
            _ => Self::EndTurn,
        }
    }

    /// ACP's spelling (`end_turn`, `max_tokens`, ...), also what `tandem exec` prints.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::EndTurn => "end_turn",
            Self::MaxTokens => "max_tokens",
            Self::MaxTurnRequests => "max_turn_requests",
            Self::Refusal => "refusal",
            Self::Cancelled => "cancelled",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_reasons_round_trip() {
        for wire in ["stop", "length", "content_filter", "tool_calls", "eos"] {
            assert_eq!(FinishReason::parse(wire).as_str(), wire);
        }
        assert_eq!(
            StopReason::after(Some(&FinishReason::parse("length"))),
            StopReason::MaxTokens
        );
        assert_eq!(StopReason::after(None), StopReason::EndTurn);
    }
}
