//! stdio framing: a reader thread that cuts stdin into lines without ever buffering more
//! than the configured limit, and a writer thread that coalesces responses (write all that
//! is queued, flush once the queue is empty).
//!
//! The reader's own answers (`Output::send_from_reader`) take one of two shortcuts: when it
//! has no more input buffered, the client waits for this answer, and with nothing queued or
//! being written the reader writes it itself; while requests stream in, it wakes the writer
//! once per read of stdin rather than once per answer. One thread writes stdout at a time
//! (the `writing` flag), and the writer flushes before it lets go, so lines never
//! interleave.

use std::collections::VecDeque;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};

/// Sent to the writer to make it flush and stop (a real message is never empty: every line
/// ends with a newline).
pub(super) const END: &[u8] = b"";

/// What the reader hands the dispatcher.
#[derive(Debug)]
pub(super) enum Input<'a> {
    /// One line, without its newline.
    Line(&'a [u8]),
    /// A line longer than the limit; it was skipped up to its newline.
    TooLong { limit: usize },
}

/// Reads `input` until EOF, handing `on_input` one `Input` per line, and whether more input
/// is already buffered behind it (when not, the client is likely waiting for answers);
/// `before_read` runs before every read, which may wait for the client. A line that lies
/// whole in the read buffer is handed over where it lies; only one that spans reads is
/// copied.
pub(super) fn read_lines(
    input: impl BufRead,
    limit: usize,
    mut on_input: impl FnMut(Input, bool),
    mut before_read: impl FnMut(),
) {
    let mut input = input;
    // The start of a line that spans reads.
    let mut partial: Vec<u8> = Vec::new();
    let mut skipping = false;
    loop {
        before_read();
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
            let more_buffered = used < buffer.len();
            if skipping || partial.len() + chunk.len() > limit {
                partial.clear();
                skipping = false;
                on_input(Input::TooLong { limit }, more_buffered);
            } else if partial.is_empty() {
                on_input(Input::Line(chunk), more_buffered);
            } else {
                partial.extend_from_slice(chunk);
                on_input(Input::Line(&partial), more_buffered);
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
        on_input(Input::TooLong { limit }, false);
    } else if partial.iter().any(|b| !b.is_ascii_whitespace()) {
        on_input(Input::Line(&partial), false);
    }
}

/// Answers the reader may queue before it wakes the writer anyway: few enough that the
/// client, which keeps a bounded number of requests in flight, is not left waiting.
const DEFERRED_ANSWERS: usize = 8;

/// Standard output for the writer, which buffers and flushes by itself: on Unix a handle of
/// its own, so the standard library's line buffering does not scan every write for
/// newlines again.
#[cfg(unix)]
pub(super) fn stdout() -> Box<dyn Write + Send> {
    use std::os::fd::AsFd;
    match std::io::stdout().as_fd().try_clone_to_owned() {
        Ok(fd) => Box::new(std::fs::File::from(fd)),
        Err(_) => Box::new(std::io::stdout()),
    }
}

/// A handle of its own on stdout (Unix).
pub(super) fn stdout_file() -> Option<std::fs::File> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let fd = std::io::stdout().as_fd().try_clone_to_owned().ok()?;
        Some(std::fs::File::from(fd))
    }
    #[cfg(not(unix))]
    None
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
pub(super) struct Output {
    queue: Mutex<Queue>,
    /// The writer waits here for answers.
    ready: Condvar,
    /// Senders wait here for room.
    room: Condvar,
    max_messages: usize,
    max_bytes: usize,
    /// The reader has no more input buffered, so the client is likely waiting for answers
    /// rather than streaming requests.
    input_drained: AtomicBool,
    /// stdout, for an answer the reader writes itself (`send_from_reader`); None: every
    /// answer goes through the writer.
    direct: Option<std::fs::File>,
}

#[derive(Default)]
struct Queue {
    messages: VecDeque<Vec<u8>>,
    /// The bytes of the queued messages and of the batch being written.
    bytes: usize,
    writer_waiting: bool,
    senders_waiting: usize,
    /// Someone is writing to stdout: the writer with a batch, or a sender with its answer.
    writing: bool,
    /// The reader queued answers without waking the writer (it had more input to read).
    wake_pending: bool,
    /// The writer has stopped (stdout closed, or `END`): what is sent now is dropped.
    closed: bool,
}

impl Output {
    pub(super) fn new(
        max_messages: usize,
        max_bytes: usize,
        direct: Option<std::fs::File>,
    ) -> Output {
        Output {
            direct,
            queue: Mutex::default(),
            ready: Condvar::new(),
            room: Condvar::new(),
            max_messages,
            max_bytes,
            input_drained: AtomicBool::new(false),
        }
    }

    /// Notes whether the reader has more input buffered behind the line it handles now.
    pub(super) fn note_input(&self, more_buffered: bool) {
        self.input_drained.store(!more_buffered, Ordering::Relaxed);
    }

    /// Queues `message` for the writer, waiting for room; does nothing once the writer has
    /// stopped.
    pub(super) fn send(&self, message: Vec<u8>) {
        self.deliver([message], false)
    }

    /// `send` for the reader. When no more input is buffered, the client is waiting for
    /// this answer: if nothing is queued or being written, the reader writes it itself,
    /// saving the writer's wake, a context switch per request when host and server share a
    /// core (closed-loop `prompts/get` about twice as fast: docs/benchmarks.md). While more
    /// input is buffered, the writer is not woken for each answer but once, when the
    /// reader is about to wait for input (`reader_waits`), when `DEFERRED_ANSWERS` are
    /// queued, or when the reader must wait for room; the writer then takes several
    /// answers at a time.
    pub(super) fn send_from_reader(&self, message: Vec<u8>) {
        self.send_answer_from(message, true)
    }

    /// `send` for the answers a pool task made, in one go: a lone answer as
    /// `send_from_reader`, written on this thread when no more input is buffered and nothing
    /// is queued or being written, which saves the writer's wake (a context switch on one
    /// core, and part of every cold start); several queued together, the writer woken once.
    pub(super) fn send_answers(&self, mut messages: Vec<Vec<u8>>) {
        if let [message] = messages.as_mut_slice() {
            return self.send_answer_from(std::mem::take(message), false);
        }
        self.deliver(messages, false)
    }

    fn send_answer_from(&self, message: Vec<u8>, reader: bool) {
        let drained = self.input_drained.load(Ordering::Relaxed);
        let message = if drained {
            match self.write_if_idle(message) {
                Some(message) => message,
                None => return,
            }
        } else {
            message
        };
        self.deliver([message], reader && !drained)
    }

    /// Writes `message` on this thread when nothing is queued or being written (so the
    /// writer cannot interleave with it); otherwise gives it back.
    fn write_if_idle(&self, message: Vec<u8>) -> Option<Vec<u8>> {
        let Some(direct) = &self.direct else {
            return Some(message);
        };
        let mut queue = self.lock();
        if message.is_empty() || queue.writing || queue.closed || !queue.messages.is_empty() {
            return Some(message);
        }
        queue.writing = true;
        drop(queue);
        let written = (&*direct).write_all(&message);
        let mut queue = self.lock();
        queue.writing = false;
        match written {
            // What was queued meanwhile waits for the writer, which waited for us.
            Ok(()) if queue.writer_waiting && !queue.messages.is_empty() => self.ready.notify_one(),
            Ok(()) => {}
            Err(err) => {
                report_write_error(&err);
                self.close_locked(&mut queue);
            }
        }
        None
    }

    fn deliver(&self, messages: impl IntoIterator<Item = Vec<u8>>, defer_wake: bool) {
        let mut queue = self.lock();
        for message in messages {
            let size = message.len();
            while !queue.closed
                && queue.bytes > 0
                && (queue.messages.len() >= self.max_messages
                    || queue.bytes + size > self.max_bytes)
            {
                // Room comes from the writer, which must not be left asleep, whether for a
                // deferred wake or for what this call queued before.
                if queue.writer_waiting && !queue.messages.is_empty() {
                    queue.wake_pending = false;
                    self.ready.notify_one();
                }
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
        }
        if queue.writer_waiting {
            if defer_wake && queue.messages.len() < DEFERRED_ANSWERS {
                queue.wake_pending = true;
            } else {
                queue.wake_pending = false;
                self.ready.notify_one();
            }
        }
    }

    /// The reader is about to wait for input: the writer is woken for what it left queued.
    pub(super) fn reader_waits(&self) {
        let mut queue = self.lock();
        self.wake_if_pending(&mut queue);
    }

    fn wake_if_pending(&self, queue: &mut Queue) {
        if queue.wake_pending {
            queue.wake_pending = false;
            if queue.writer_waiting {
                self.ready.notify_one();
            }
        }
    }

    /// Everything queued, waiting for some first; None once closed and empty. Its bytes
    /// stay counted until `written`.
    fn take_all(&self) -> Option<VecDeque<Vec<u8>>> {
        let mut queue = self.lock();
        while queue.messages.is_empty() || queue.writing {
            if queue.closed && queue.messages.is_empty() {
                return None;
            }
            queue.writer_waiting = true;
            queue = self
                .ready
                .wait(queue)
                .unwrap_or_else(PoisonError::into_inner);
            queue.writer_waiting = false;
        }
        queue.writing = true;
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

    /// The writer has written and flushed all it took.
    fn batch_written(&self) {
        self.lock().writing = false;
    }

    fn close(&self) {
        let mut queue = self.lock();
        self.close_locked(&mut queue);
    }

    fn close_locked(&self, queue: &mut Queue) {
        queue.closed = true;
        queue.messages.clear();
        self.room.notify_all();
        self.ready.notify_all();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Writes every queued message; flushes when nothing more is waiting. Ends at `END` or
/// when the output is closed.
pub(super) fn write_lines(queue: &Output, output: impl Write) {
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
        queue.batch_written();
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
        read_lines(
            input,
            limit,
            |message, _| {
                out.push(match message {
                    Input::Line(line) => String::from_utf8_lossy(line).into_owned(),
                    Input::TooLong { .. } => "<too long>".to_string(),
                })
            },
            || {},
        );
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

        let output = Arc::new(Output::new(16, 10, None));
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
        let closed = Arc::new(Output::new(16, 10, None));
        closed.send(b"123456\n".to_vec());
        let blocked = {
            let closed = Arc::clone(&closed);
            std::thread::spawn(move || closed.send(b"abcdef\n".to_vec()))
        };
        write_lines(&closed, Closed);
        blocked.join().expect("the blocked sender is let go");
    }

    /// Answers the reader writes itself and the writer's batches never interleave within a
    /// line: lines of 40 KB (written in several pieces by the pipe) come out whole, every
    /// one of them, whichever path each took. Several threads act as readers at once here,
    /// which the server never does, to make a broken exclusion likely to show.
    #[cfg(unix)]
    #[test]
    fn answers_written_directly_and_by_the_writer_never_interleave() {
        for _ in 0..3 {
            four_senders_and_the_writer_share_one_pipe();
        }
    }

    #[cfg(unix)]
    fn four_senders_and_the_writer_share_one_pipe() {
        use std::io::Read;
        use std::sync::Arc;

        let (mut pipe_out, pipe_in) = std::io::pipe().expect("create a pipe");
        let pipe_in = std::fs::File::from(std::os::fd::OwnedFd::from(pipe_in));
        let writer_end = pipe_in.try_clone().expect("duplicate the pipe");
        let output = Arc::new(Output::new(64, 1024 * 1024, Some(pipe_in)));
        let writer = {
            let output = Arc::clone(&output);
            std::thread::spawn(move || write_lines(&output, writer_end))
        };
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            pipe_out.read_to_string(&mut text).expect("read the pipe");
            text
        });
        let line = |sender: usize, n: usize| {
            let fill = char::from(b'a' + (n % 26) as u8);
            let len = if n.is_multiple_of(3) { 40_000 } else { 100 };
            format!("{sender}:{n}:{}\n", fill.to_string().repeat(len))
        };
        let senders: Vec<_> = (0..4)
            .map(|sender| {
                let output = Arc::clone(&output);
                std::thread::spawn(move || {
                    // A whole number of rounds of six, so every pair sent together is whole.
                    for n in 0..996_usize {
                        // Alternate between "the client waits" and "more input buffered",
                        // and between the reader's sends, a pool task's answers (one, or
                        // two together) and other messages.
                        output.note_input(n.is_multiple_of(2));
                        let message = line(sender, n).into_bytes();
                        match n % 6 {
                            0 | 1 => output.send_from_reader(message),
                            2 => output.send_answers(vec![message]),
                            3 => {
                                output.send_answers(vec![message, line(sender, n + 1).into_bytes()])
                            }
                            // Sent with the one before.
                            4 => {}
                            _ => output.send(message),
                        }
                    }
                    output.reader_waits();
                })
            })
            .collect();
        for sender in senders {
            sender.join().expect("a sender finishes");
        }
        output.send(END.to_vec());
        writer.join().expect("the writer finishes");
        drop(output);
        let text = reader.join().expect("the reader finishes");
        let mut got: Vec<&str> = text.split_inclusive('\n').collect();
        got.sort_unstable();
        let mut expected: Vec<String> = (0..4)
            .flat_map(|sender| (0..996).map(move |n| line(sender, n)))
            .collect();
        expected.sort_unstable();
        assert_eq!(got.len(), expected.len(), "every line arrives once");
        assert!(
            got.iter()
                .zip(&expected)
                .all(|(got, expected)| got == expected),
            "a line came out mixed with another"
        );
    }

    /// The reader writes its own answer only when the client waits for it and nothing is
    /// queued or being written; otherwise the answer is queued.
    #[cfg(unix)]
    #[test]
    fn the_reader_writes_itself_only_when_the_client_waits_and_stdout_is_idle() {
        use std::io::Read;

        let (mut pipe_out, pipe_in) = std::io::pipe().expect("create a pipe");
        let pipe_in = std::fs::File::from(std::os::fd::OwnedFd::from(pipe_in));
        let output = Output::new(64, 1024 * 1024, Some(pipe_in));
        let mut read = |len: usize| {
            let mut buffer = vec![0; len];
            pipe_out.read_exact(&mut buffer).expect("read the pipe");
            String::from_utf8(buffer).expect("UTF-8")
        };
        output.note_input(false);
        output.send_from_reader(b"direct\n".to_vec());
        assert_eq!(read(7), "direct\n", "written by the reader itself");
        // More input buffered: queued for the writer.
        output.note_input(true);
        output.send_from_reader(b"queued\n".to_vec());
        // Something queued: a later answer queues behind it, even when the client waits.
        output.note_input(false);
        output.send_from_reader(b"behind\n".to_vec());
        // A pool task's answer always goes through the writer.
        output.send(b"pooled\n".to_vec());
        let batch = output.take_all().expect("the queued answers");
        assert_eq!(
            batch,
            [
                b"queued\n".to_vec(),
                b"behind\n".to_vec(),
                b"pooled\n".to_vec()
            ]
        );
        // While the writer holds a batch, nobody else writes.
        output.send_from_reader(b"during\n".to_vec());
        assert_eq!(
            output.lock().messages.len(),
            1,
            "queued while the writer writes"
        );
    }

    /// How long a test waits for what a missing wake would hold up forever: a failure then
    /// fails the test instead of hanging it.
    const WAIT: std::time::Duration = std::time::Duration::from_secs(10);

    /// Runs `work` on a thread and waits for it at most `WAIT`.
    fn finishes<T: Send + 'static>(what: &str, work: impl FnOnce() -> T + Send + 'static) -> T {
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(work());
        });
        finished
            .recv_timeout(WAIT)
            .unwrap_or_else(|_| panic!("{what} did not finish"))
    }

    /// The writer, started, once it is asleep waiting for answers.
    fn sleeping_writer(
        output: &std::sync::Arc<Output>,
    ) -> (
        std::thread::JoinHandle<()>,
        std::sync::mpsc::Receiver<Vec<u8>>,
    ) {
        let (lines, written) = std::sync::mpsc::channel();
        struct Lines(std::sync::mpsc::Sender<Vec<u8>>);
        impl Write for Lines {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                let _ = self.0.send(bytes.to_vec());
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let writer = {
            let output = std::sync::Arc::clone(output);
            std::thread::spawn(move || write_lines(&output, Lines(lines)))
        };
        while !output.lock().writer_waiting {
            std::thread::yield_now();
        }
        (writer, written)
    }

    #[test]
    fn the_reader_wakes_the_writer_once_it_has_nothing_more_to_read() {
        use std::sync::Arc;

        let output = Arc::new(Output::new(64, 1024 * 1024, None));
        let (writer, written) = sleeping_writer(&output);
        output.note_input(true);
        output.send_from_reader(b"first\n".to_vec());
        output.send_from_reader(b"second\n".to_vec());
        {
            let queue = output.lock();
            assert!(queue.wake_pending, "a wake is left for later");
            assert!(queue.writer_waiting, "the writer was not woken");
        }
        output.reader_waits();
        assert_eq!(
            written.recv_timeout(WAIT).expect("the writer writes"),
            b"first\nsecond\n",
            "both answers in one write"
        );

        // With nothing more buffered, an answer wakes the writer at once.
        output.note_input(false);
        output.send_from_reader(b"now\n".to_vec());
        assert!(!output.lock().wake_pending);
        assert_eq!(written.recv_timeout(WAIT).expect("written"), b"now\n");
        output.send(END.to_vec());
        writer.join().expect("the writer stops");
    }

    #[test]
    fn a_reader_waiting_for_room_wakes_the_writer_it_let_sleep() {
        use std::sync::Arc;

        let output = Arc::new(Output::new(64, 10, None));
        let (writer, written) = sleeping_writer(&output);
        output.note_input(true);
        output.send_from_reader(b"123456\n".to_vec());
        // 14 bytes do not fit in 10: this waits for the writer, which must be woken.
        let second = Arc::clone(&output);
        finishes("the second send", move || {
            second.send_from_reader(b"abcdef\n".to_vec())
        });
        output.reader_waits();
        let mut all = Vec::new();
        while all.len() < 14 {
            all.extend(written.recv_timeout(WAIT).expect("written"));
        }
        assert_eq!(all, b"123456\nabcdef\n");
        output.send(END.to_vec());
        writer.join().expect("the writer stops");
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
            read_lines(
                reader,
                12,
                |message, _| {
                    out.push(match message {
                        Input::Line(line) => String::from_utf8_lossy(line).into_owned(),
                        Input::TooLong { .. } => "<too long>".to_string(),
                    })
                },
                || {},
            );
            assert_eq!(
                out,
                ["abcdefgh", "ij", "", "<too long>", "xyz"],
                "read {capacity} bytes at a time"
            );
        }
    }
}
