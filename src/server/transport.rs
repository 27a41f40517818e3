//! stdio framing: a reader thread that cuts stdin into lines without ever buffering more
//! than the configured limit, and a writer thread that coalesces responses (write all that
//! is queued, flush once the queue is empty).

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::sync::{Condvar, Mutex, PoisonError};

/// Sent to the writer to make it flush and stop (a real message is never empty: every line
/// ends with a newline).
pub const END: &[u8] = b"";

/// What the reader hands the dispatcher.
#[derive(Debug)]
pub enum Input<'a> {
    /// One line, without its newline.
    Line(&'a [u8]),
    /// A line longer than the limit; it was skipped up to its newline.
    TooLong { limit: usize },
}

/// Reads `input` until EOF, handing `on_input` one `Input` per line. A line that lies whole
/// in the read buffer is handed over where it lies; only one that spans reads is copied.
pub fn read_lines(input: impl BufRead, limit: usize, mut on_input: impl FnMut(Input)) {
    let mut input = input;
    // The start of a line that spans reads.
    let mut partial: Vec<u8> = Vec::new();
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
        let mut used = 0;
        while let Some(at) = memchr::memchr(b'\n', &buffer[used..]) {
            let chunk = &buffer[used..used + at];
            used += at + 1;
            if skipping || partial.len() + chunk.len() > limit {
                partial.clear();
                skipping = false;
                on_input(Input::TooLong { limit });
            } else if partial.is_empty() {
                on_input(Input::Line(chunk));
            } else {
                partial.extend_from_slice(chunk);
                on_input(Input::Line(&partial));
                partial.clear();
            }
        }
        let rest = &buffer[used..];
        if !skipping {
            if partial.len() + rest.len() > limit {
                skipping = true;
                partial = Vec::new();
            } else {
                partial.extend_from_slice(rest);
            }
        }
        let consumed = buffer.len();
        input.consume(consumed);
    }
    // A last line without its newline is still a message.
    if skipping {
        on_input(Input::TooLong { limit });
    } else if partial.iter().any(|b| !b.is_ascii_whitespace()) {
        on_input(Input::Line(&partial));
    }
}

/// Standard output for the writer, which buffers and flushes by itself: on Unix a handle of
/// its own, so the standard library's line buffering does not scan every write for
/// newlines again.
#[cfg(unix)]
pub fn stdout() -> Box<dyn Write + Send> {
    use std::os::fd::AsFd;
    match std::io::stdout().as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(std::fs::File::from(fd)),
        Err(_) => Box::new(std::io::stdout()),
    }
}

#[cfg(not(unix))]
pub fn stdout() -> Box<dyn Write + Send> {
    Box::new(std::io::stdout())
}

/// Where answers wait for the writer: at most `max_messages` of them and, unless a single
/// one is larger, `max_bytes` in all, counting those being written. A sender waits for
/// room, so a client that stops reading stops the server, which then holds a bounded amount
/// of memory.
///
/// One lock guards the queue and its accounts, and the writer takes everything queued in
/// one go; each side wakes the other only when it is waiting (a wake is a system call).
pub struct Output {
    queue: Mutex<Queue>,
    /// The writer waits here for answers.
    ready: Condvar,
    /// Senders wait here for room.
    room: Condvar,
    max_messages: usize,
    max_bytes: usize,
}

#[derive(Default)]
struct Queue {
    messages: VecDeque<Vec<u8>>,
    /// The bytes of the queued messages and of the batch being written.
    bytes: usize,
    writer_waiting: bool,
    senders_waiting: usize,
    /// The writer has stopped (stdout closed, or `END`): what is sent now is dropped.
    closed: bool,
}

impl Output {
    pub fn new(max_messages: usize, max_bytes: usize) -> Output {
        Output {
            queue: Mutex::default(),
            ready: Condvar::new(),
            room: Condvar::new(),
            max_messages,
            max_bytes,
        }
    }

    /// Queues `message`, waiting for room; does nothing once the writer has stopped.
    pub fn send(&self, message: Vec<u8>) {
        let size = message.len();
        let mut queue = self.lock();
        while !queue.closed
            && queue.bytes > 0
            && (queue.messages.len() >= self.max_messages || queue.bytes + size > self.max_bytes)
        {
            queue.senders_waiting += 1;
            queue = self
                .room
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
            queue.senders_waiting -= 1;
        }
        if queue.closed {
            return;
        }
        queue.bytes += size;
        queue.messages.push_back(message);
        if queue.writer_waiting {
            self.ready.notify_one();
        }
    }

    /// Everything queued, waiting for some first; None once closed and empty. Its bytes
    /// stay counted until `written`.
    fn take_all(&self) -> Option<VecDeque<Vec<u8>>> {
        let mut queue = self.lock();
        while queue.messages.is_empty() {
            if queue.closed {
                return None;
            }
            queue.writer_waiting = true;
            queue = self
                .ready
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
            queue.writer_waiting = false;
        }
        Some(std::mem::take(&mut queue.messages))
    }

    /// The writer has written `bytes` of what it took.
    fn written(&self, bytes: usize) {
        let mut queue = self.lock();
        queue.bytes = queue.bytes.saturating_sub(bytes);
        if queue.senders_waiting > 0 {
            self.room.notify_all();
        }
    }

    fn close(&self) {
        let mut queue = self.lock();
        queue.closed = true;
        queue.messages.clear();
        self.room.notify_all();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Writes every queued message; flushes when nothing more is waiting. Ends at `END` or
/// when the output is closed.
pub fn write_lines(queue: &Output, output: impl Write) {
    /// Closes the queue however the writer stops, so no sender waits for it forever.
    struct Closing<'a>(&'a Output);
    impl Drop for Closing<'_> {
        fn drop(&mut self) {
            self.0.close();
        }
    }
    let _closing = Closing(queue);
    let mut output = std::io::BufWriter::with_capacity(64 * 1024, output);
    while let Some(batch) = queue.take_all() {
        for message in batch {
            if message.is_empty() {
                let _ = output.flush();
                return;
            }
            let written = output.write_all(&message);
            // Room as soon as each is written: a batch of large answers frees its memory
            // one answer at a time.
            queue.written(message.len());
            if let Err(err) = written {
                report_write_error(&err);
                return;
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
                Input::Line(line) => String::from_utf8_lossy(line).into_owned(),
                Input::TooLong { .. } => "<too long>".to_string(),
            })
        });
        out
    }

    /// An output that refuses every write, as a closed stdout does.
    struct Closed;
    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Err(std::io::ErrorKind::BrokenPipe.into())
        }
    }

    #[test]
    fn senders_wait_for_room_in_bytes_and_never_for_a_stopped_writer() {
        use std::sync::Arc;
        use std::time::Duration;

        let output = Arc::new(Output::new(16, 10));
        output.send(b"123456\n".to_vec());
        let second = {
            let output = Arc::clone(&output);
            std::thread::spawn(move || output.send(b"abcdef\n".to_vec()))
        };
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            !second.is_finished(),
            "14 bytes were queued past a 10-byte budget"
        );
        let writer = {
            let output = Arc::clone(&output);
            std::thread::spawn(move || {
                let mut written = Vec::new();
                write_lines(&output, &mut written);
                written
            })
        };
        second.join().expect("the second sender finishes");
        output.send(END.to_vec());
        assert_eq!(
            writer.join().expect("the writer finishes"),
            b"123456\nabcdef\n"
        );

        // A writer that cannot write stops, and whoever waits for room is let go.
        let closed = Arc::new(Output::new(16, 10));
        closed.send(b"123456\n".to_vec());
        let blocked = {
            let closed = Arc::clone(&closed);
            std::thread::spawn(move || closed.send(b"abcdef\n".to_vec()))
        };
        write_lines(&closed, Closed);
        blocked.join().expect("the blocked sender is let go");
    }

    #[test]
    fn long_lines_are_skipped_not_buffered() {
        assert_eq!(
            lines(b"ab\n0123456789\ncd\nlast", 5),
            ["ab", "<too long>", "cd", "last"]
        );
    }

    #[test]
    fn lines_that_span_reads_come_out_whole() {
        let input: &[u8] = b"abcdefgh\nij\n\n0123456789ABC\nxyz";
        for capacity in 1..=16 {
            let mut out = Vec::new();
            let reader = std::io::BufReader::with_capacity(capacity, input);
            read_lines(reader, 12, |message| {
                out.push(match message {
                    Input::Line(line) => String::from_utf8_lossy(line).into_owned(),
                    Input::TooLong { .. } => "<too long>".to_string(),
                })
            });
            assert_eq!(
                out,
                ["abcdefgh", "ij", "", "<too long>", "xyz"],
                "read {capacity} bytes at a time"
            );
        }
    }
}
