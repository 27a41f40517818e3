//! stdio framing: a reader thread that cuts stdin into lines without ever buffering more
//! than the configured limit, and a writer thread that coalesces responses (write all that
//! is queued, flush once the queue is empty).

use std::io::{BufRead, Write};
use std::sync::mpsc::Receiver;

/// Sent to the writer to make it flush and stop (a real message is never empty: every line
/// ends with a newline).
pub const END: &[u8] = b"";

/// What the reader hands the dispatcher.
#[derive(Debug)]
pub enum Input {
    /// One line, without its newline.
    Line(Vec<u8>),
    /// A line longer than the limit; it was skipped up to its newline.
    TooLong { limit: usize },
}

/// Reads `input` until EOF, handing `on_input` one `Input` per line.
pub fn read_lines(input: impl BufRead, limit: usize, mut on_input: impl FnMut(Input)) {
    let mut input = input;
    let mut line: Vec<u8> = Vec::new();
    let mut skipping = false;
    loop {
        let buffer = match input.fill_buf() {
            Ok(buffer) => buffer,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => {
                tracing::warn!("stdin: {err}");
                break;
            }
        };
        if buffer.is_empty() {
            break;
        }
        let (chunk, newline) = match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => (&buffer[..at], true),
            None => (buffer, false),
        };
        if !skipping {
            if line.len() + chunk.len() > limit {
                skipping = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = chunk.len() + usize::from(newline);
        input.consume(used);
        if newline {
            let message = if skipping {
                Input::TooLong { limit }
            } else {
                Input::Line(std::mem::take(&mut line))
            };
            skipping = false;
            on_input(message);
        }
    }
    // A last line without its newline is still a message.
    let last = if skipping {
        Some(Input::TooLong { limit })
    } else if line.iter().any(|b| !b.is_ascii_whitespace()) {
        Some(Input::Line(line))
    } else {
        None
    };
    if let Some(last) = last {
        on_input(last);
    }
}

/// Writes every queued message; flushes when nothing more is waiting. Ends at `END`, when
/// every sender is gone, or when the output is closed.
pub fn write_lines(queue: Receiver<Vec<u8>>, output: impl Write) {
    let mut output = std::io::BufWriter::with_capacity(64 * 1024, output);
    while let Ok(first) = queue.recv() {
        let mut message = first;
        loop {
            if message.is_empty() {
                let _ = output.flush();
                return;
            }
            if let Err(err) = output.write_all(&message) {
                report_write_error(&err);
                return;
            }
            match queue.try_recv() {
                Ok(next) => message = next,
                Err(_) => break,
            }
        }
        if let Err(err) = output.flush() {
            report_write_error(&err);
            return;
        }
    }
}

fn report_write_error(err: &std::io::Error) {
    // The host closing our stdout is how a session normally ends.
    if err.kind() != std::io::ErrorKind::BrokenPipe {
        tracing::warn!("stdout: {err}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], limit: usize) -> Vec<String> {
        let mut out = Vec::new();
        read_lines(input, limit, |message| {
            out.push(match message {
                Input::Line(line) => String::from_utf8_lossy(&line).into_owned(),
                Input::TooLong { .. } => "<too long>".to_string(),
            })
        });
        out
    }

    #[test]
    fn long_lines_are_skipped_not_buffered() {
        assert_eq!(
            lines(b"ab\n0123456789\ncd\nlast", 5),
            ["ab", "<too long>", "cd", "last"]
        );
    }
}
