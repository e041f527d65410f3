//! Reading stdin a line at a time with a size limit: a longer line is measured and dropped as
//! it arrives (its head kept, to find its id), a line that is not UTF-8 is answered, and the
//! errors the transport answers itself are built here.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use super::{Answers, details, recover};

/// One line of input.
#[derive(Debug, PartialEq)]
pub(super) enum Frame {
    /// A line within the limit, without its `\n` (or `\r\n`).
    Line(Vec<u8>),
    /// A line over the limit, of `size` bytes: its first [`recover::HEAD_BYTES`] (to find
    /// its id); the rest was discarded as it arrived.
    TooLong {
        size: u64,
        head: Vec<u8>,
    },
    End,
}

/// Reads the next line, holding at most `max` bytes of it.
pub(super) async fn next_frame<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> std::io::Result<Frame> {
    let mut line = Vec::new();
    let mut seen: u64 = 0;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            // End of input: a last line without a newline still counts.
            return Ok(match seen {
                0 => Frame::End,
                n if n > max as u64 => Frame::TooLong {
                    size: n,
                    head: line,
                },
                _ => Frame::Line(line),
            });
        }
        let newline = available.iter().position(|b| *b == b'\n');
        let chunk = &available[..newline.unwrap_or(available.len())];
        seen += chunk.len() as u64;
        if seen <= max as u64 {
            line.extend_from_slice(chunk);
        } else if line.len() > recover::HEAD_BYTES {
            // Over the limit: keep only the head, where the id is.
            line.truncate(recover::HEAD_BYTES);
            line.shrink_to_fit();
        } else if line.len() < recover::HEAD_BYTES {
            let room = recover::HEAD_BYTES - line.len();
            line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        let used = chunk.len() + usize::from(newline.is_some());
        reader.consume(used);
        if newline.is_some() {
            if seen > max as u64 {
                return Ok(Frame::TooLong {
                    size: seen,
                    head: line,
                });
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Frame::Line(line));
        }
    }
}

/// A JSON-RPC error for a line that never reached the protocol layer, answering the id its
/// leading bytes name (null when none can be told for sure).
pub(super) fn framing_error(head: &[u8], code: i32, message: &str, data: String) -> String {
    details::with_details(
        serde_json::json!({
            "jsonrpc": "2.0",
            "id": recover::id(head),
            "error": {"code": code, "message": message, "data": data},
        })
        .to_string(),
    )
}

/// The next line that is text, answering the ones that are too long or not UTF-8.
pub(super) async fn next_text<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
    answers: &Answers,
) -> std::io::Result<Option<String>> {
    loop {
        let frame = next_frame(reader, max).await?;
        match &frame {
            Frame::Line(bytes) => answers.saw(bytes),
            Frame::TooLong { size, head } => {
                answers.saw(
                    &[
                        head.as_slice(),
                        format!(" … [{size} bytes, over the limit]").as_bytes(),
                    ]
                    .concat(),
                );
            }
            Frame::End => {}
        }
        let reply = match frame {
            Frame::End => return Ok(None),
            Frame::Line(bytes) => match String::from_utf8(bytes) {
                Ok(text) => return Ok(Some(text)),
                Err(e) => {
                    let at = e.utf8_error().valid_up_to();
                    tracing::warn!(
                        byte = at,
                        "a line on stdin is not valid UTF-8; answered with a parse error"
                    );
                    framing_error(
                        e.as_bytes(),
                        -32700,
                        "Parse error",
                        format!("the message is not valid UTF-8 (at byte {at})"),
                    )
                }
            },
            Frame::TooLong { size, head } => {
                if let Some(id) = recover::answer_id(&head) {
                    // The editor's answer to one of tandem's requests: the call waiting for
                    // it fails now with what happened, instead of waiting out its timeout.
                    tracing::warn!(
                        size,
                        max,
                        "an answer from the editor is over the size limit; the request it answers fails"
                    );
                    let failed = serde_json::json!({
                        "jsonrpc": "2.0",
                        "id": id,
                        "error": {"code": -32600, "message": format!(
                            "the editor's answer was {size} bytes, over tandem's limit of {max} \
                             (max_message_bytes, TANDEM_MAX_MESSAGE_BYTES)"
                        )},
                    });
                    return Ok(Some(failed.to_string()));
                }
                tracing::warn!(
                    size,
                    max,
                    "a line on stdin is over the size limit; discarded"
                );
                framing_error(
                    &head,
                    -32600,
                    "Invalid request",
                    format!(
                        "the message is {size} bytes, over the limit of {max} \
                         (max_message_bytes, TANDEM_MAX_MESSAGE_BYTES); it was discarded"
                    ),
                )
            }
        };
        answers.send(&reply).await?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    async fn frames(input: &[u8], max: usize) -> Vec<Frame> {
        // A small buffer so lines span many reads.
        let mut reader = BufReader::with_capacity(4, input);
        let mut frames = Vec::new();
        loop {
            let frame = next_frame(&mut reader, max).await.unwrap();
            let end = frame == Frame::End;
            frames.push(frame);
            if end {
                return frames;
            }
        }
    }

    #[tokio::test]
    async fn lines_over_the_limit_are_measured_and_skipped() {
        let long = "x".repeat(1000);
        let input = format!("{{\"a\":1}}\r\n{long}\n\nok\n0123456789\ntail");
        assert_eq!(
            frames(input.as_bytes(), 10).await,
            vec![
                Frame::Line(b"{\"a\":1}".to_vec()),
                Frame::TooLong {
                    size: 1000,
                    head: long.clone().into_bytes()
                },
                Frame::Line(Vec::new()),
                Frame::Line(b"ok".to_vec()),
                Frame::Line(b"0123456789".to_vec()),
                Frame::Line(b"tail".to_vec()),
                Frame::End,
            ]
        );
        assert_eq!(
            frames(b"0123456789a", 10).await,
            vec![
                Frame::TooLong {
                    size: 11,
                    head: b"0123456789a".to_vec()
                },
                Frame::End
            ]
        );
    }
}
