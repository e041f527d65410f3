//! Reading input a line at a time with a size limit: a longer line is measured and dropped as
//! it arrives (its head kept, to find its id); and the errors the transport answers itself
//! (for lines that never became messages) are built here.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use super::recover;

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
/// leading bytes name (null when none can be told for sure). Its details are built here, the
/// one place that knows what was wrong with the line; they never echo the line itself.
pub(super) fn framing_error(head: &[u8], code: i32, message: &str, why: &str) -> String {
    serde_json::json!({
        "jsonrpc": "2.0",
        "id": recover::id(head),
        "error": {
            "code": code,
            "message": message,
            "data": {"details": format!("{message}: {}.", why.trim_end_matches('.'))},
        },
    })
    .to_string()
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
