//! A response body of server-sent events: each message a `message` event of one JSON
//! line, sent as soon as it is queued, with a comment every `KEEP_ALIVE` so that proxies
//! and clients do not take a quiet stream for a dead one. The body ends when every sender
//! is gone; dropped (the client went away), it drops its receiver, which its sender sees.

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use hyper::body::{Body, Bytes, Frame};
use tokio::sync::mpsc;

/// How often a quiet stream says it is alive.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

const KEEP_ALIVE_COMMENT: &[u8] = b": keep-alive\n\n";

/// A JSON line (as the shapers write it, with its newline) as one SSE event.
pub(super) fn event(line: &[u8]) -> Bytes {
    let json = line.strip_suffix(b"\n").unwrap_or(line);
    let mut event = Vec::with_capacity(json.len() + 24);
    event.extend_from_slice(b"event: message\ndata: ");
    event.extend_from_slice(json);
    event.extend_from_slice(b"\n\n");
    Bytes::from(event)
}

/// The body of one stream; `Guard` is dropped with it (the stream's place among those
/// open is given back).
pub(super) struct Events<Guard> {
    queue: mpsc::Receiver<Bytes>,
    keep_alive: tokio::time::Interval,
    _guard: Guard,
}

impl<Guard> Events<Guard> {
    pub(super) fn new(queue: mpsc::Receiver<Bytes>, guard: Guard) -> Events<Guard> {
        let first = tokio::time::Instant::now() + KEEP_ALIVE;
        Events {
            queue,
            keep_alive: tokio::time::interval_at(first, KEEP_ALIVE),
            _guard: guard,
        }
    }
}

impl<Guard: Unpin> Body for Events<Guard> {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        match this.queue.poll_recv(cx) {
            Poll::Ready(Some(event)) => {
                this.keep_alive.reset();
                return Poll::Ready(Some(Ok(Frame::data(event))));
            }
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Pending => {}
        }
        if this.keep_alive.poll_tick(cx).is_ready() {
            return Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(
                KEEP_ALIVE_COMMENT,
            )))));
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_one_event() {
        assert_eq!(
            &event(b"{\"a\":1}\n")[..],
            b"event: message\ndata: {\"a\":1}\n\n"
        );
    }
}
