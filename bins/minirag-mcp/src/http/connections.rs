//! Open connections, bounded: at most `--max-connections` in all (and never
//! more than the process's file limit allows) and `--max-connections-per-ip`
//! from one address. At a cap, the oldest idle connection (no request in
//! flight) is closed to admit the new one, so idle sockets can never lock
//! out `/healthz` or a real client; with none idle, the new one is refused.
//! A connection with no request in flight is closed after
//! `--idle-timeout-secs` without a byte, or `--header-timeout-secs` after a
//! request head began to arrive; one with a request in flight (a long tool
//! call, an event stream) is never timed out here.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::extract::{ConnectInfo, Request, State};
use axum::middleware::Next;
use axum::response::Response;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

/// File descriptors kept free of connections: the index, the model, logs.
const FD_RESERVE: u64 = 64;

#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub total: usize,
    pub per_ip: usize,
    pub idle: Duration,
    pub header: Duration,
}

impl Limits {
    /// `total` lowered to what the process's open-file limit can hold.
    pub(crate) fn within_file_limit(mut self) -> Self {
        let room = open_file_limit().saturating_sub(FD_RESERVE).max(8);
        self.total = self.total.min(usize::try_from(room).unwrap_or(usize::MAX));
        self
    }
}

/// The process's soft limit on open files (unlimited: `u64::MAX`).
fn open_file_limit() -> u64 {
    rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX)
}

/// One open connection, as the registry and its I/O see it.
struct Conn {
    peer: SocketAddr,
    opened: Instant,
    in_flight: AtomicUsize,
    closing: AtomicBool,
    /// When the connection last went idle (opened, or its last request
    /// ended), and when bytes of a new request head began to arrive.
    marks: Mutex<Marks>,
    waker: Mutex<Option<Waker>>,
}

struct Marks {
    idle_since: Instant,
    head_since: Option<Instant>,
}

impl Conn {
    fn close(&self) {
        self.closing.store(true, Ordering::SeqCst);
        self.wake();
    }

    fn wake(&self) {
        if let Some(w) = self.waker.lock().unwrap_or_else(|p| p.into_inner()).take() {
            w.wake();
        }
    }

    fn marks(&self) -> std::sync::MutexGuard<'_, Marks> {
        self.marks.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Every open connection, by peer address (unique while it is open).
pub(super) struct Connections {
    limits: Limits,
    open: Mutex<HashMap<SocketAddr, Arc<Conn>>>,
}

impl Connections {
    pub(super) fn new(limits: Limits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            open: Mutex::new(HashMap::new()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SocketAddr, Arc<Conn>>> {
        self.open.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a new connection, closing the oldest idle one where a cap
    /// is reached; `None` (refuse it) when every connection at the cap is busy.
    fn admit(&self, peer: SocketAddr) -> Option<Arc<Conn>> {
        let mut open = self.lock();
        let from_ip = |ip: IpAddr, open: &HashMap<SocketAddr, Arc<Conn>>| {
            open.values()
                .filter(|c| c.peer.ip() == ip && !c.closing.load(Ordering::SeqCst))
                .count()
        };
        let live = |open: &HashMap<SocketAddr, Arc<Conn>>| {
            open.values()
                .filter(|c| !c.closing.load(Ordering::SeqCst))
                .count()
        };
        if from_ip(peer.ip(), &open) >= self.limits.per_ip
            && !evict_oldest_idle(&open, Some(peer.ip()))
        {
            return None;
        }
        if live(&open) >= self.limits.total && !evict_oldest_idle(&open, None) {
            return None;
        }
        let now = Instant::now();
        let conn = Arc::new(Conn {
            peer,
            opened: now,
            in_flight: AtomicUsize::new(0),
            closing: AtomicBool::new(false),
            marks: Mutex::new(Marks {
                idle_since: now,
                head_since: None,
            }),
            waker: Mutex::new(None),
        });
        open.insert(peer, conn.clone());
        Some(conn)
    }

    /// Frees one file descriptor when the process has none left to accept.
    fn evict_any_idle(&self) -> bool {
        evict_oldest_idle(&self.lock(), None)
    }

    fn forget(&self, conn: &Conn) {
        let mut open = self.lock();
        if open
            .get(&conn.peer)
            .is_some_and(|c| std::ptr::eq(&**c, conn))
        {
            open.remove(&conn.peer);
        }
    }

    /// The open connections (for tests and the log).
    #[cfg(test)]
    fn count(&self) -> usize {
        self.lock().len()
    }
}

/// Closes the idle connection opened first (of `ip`'s, when given).
fn evict_oldest_idle(open: &HashMap<SocketAddr, Arc<Conn>>, ip: Option<IpAddr>) -> bool {
    let oldest = open
        .values()
        .filter(|c| ip.is_none_or(|ip| c.peer.ip() == ip))
        .filter(|c| c.in_flight.load(Ordering::SeqCst) == 0 && !c.closing.load(Ordering::SeqCst))
        .min_by_key(|c| c.opened);
    match oldest {
        Some(c) => {
            c.close();
            true
        }
        None => false,
    }
}

/// A request in flight on its connection; dropped when its response ends.
pub(super) struct InFlight(Option<Arc<Conn>>);

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Some(conn) = self.0.take() {
            if conn.in_flight.fetch_sub(1, Ordering::SeqCst) == 1 {
                let mut marks = conn.marks();
                marks.idle_since = Instant::now();
                marks.head_since = None;
                drop(marks);
                // Its reader arms the idle timer on its next poll.
                conn.wake();
            }
        }
    }
}

/// Middleware over every route: counts the request on its connection
/// until its response body ends.
pub(super) async fn track(
    State(connections): State<Arc<Connections>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let conn = connections.lock().get(&peer).cloned();
    if let Some(c) = &conn {
        c.in_flight.fetch_add(1, Ordering::SeqCst);
        c.marks().head_since = None;
    }
    let held = InFlight(conn);
    let response = next.run(request).await;
    let (parts, body) = response.into_parts();
    use http_body_util::BodyExt;
    let body = body.map_frame(move |frame| {
        let _held = &held;
        frame
    });
    Response::from_parts(parts, axum::body::Body::new(body))
}

/// The listener: accepts, admits by the caps, wraps each stream.
pub(super) struct Bounded {
    pub listener: TcpListener,
    pub connections: Arc<Connections>,
}

impl axum::serve::Listener for Bounded {
    type Io = Tracked;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.listener.accept().await {
                Ok((stream, peer)) => {
                    let Some(conn) = self.connections.admit(peer) else {
                        // Every connection at the cap is busy: refused.
                        drop(stream);
                        continue;
                    };
                    let _ = stream.set_nodelay(true);
                    let io = Tracked {
                        stream,
                        conn,
                        connections: self.connections.clone(),
                        timer: Box::pin(tokio::time::sleep(Duration::ZERO)),
                    };
                    return (io, peer);
                }
                Err(e) => {
                    let out_of_files = matches!(e.raw_os_error(), Some(code) if code == libc_emfile() || code == libc_enfile());
                    if !(out_of_files && self.connections.evict_any_idle()) {
                        // Nothing to free: wait a little, as axum does.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    } else {
                        tokio::task::yield_now().await;
                    }
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.listener.local_addr()
    }
}

fn libc_emfile() -> i32 {
    rustix::io::Errno::MFILE.raw_os_error()
}

fn libc_enfile() -> i32 {
    rustix::io::Errno::NFILE.raw_os_error()
}

/// A connection's stream, ended by eviction or by an idle or header timeout.
pub(super) struct Tracked {
    stream: TcpStream,
    conn: Arc<Conn>,
    connections: Arc<Connections>,
    timer: Pin<Box<Sleep>>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.connections.forget(&self.conn);
    }
}

impl Tracked {
    /// The deadline that applies now, when no request is in flight.
    fn deadline(&self) -> Option<Instant> {
        if self.conn.in_flight.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let limits = self.connections.limits;
        let marks = self.conn.marks();
        Some(match marks.head_since {
            Some(at) => at + limits.header,
            None => marks.idle_since + limits.idle,
        })
    }

    fn closed(&self) -> bool {
        self.conn.closing.load(Ordering::SeqCst)
    }
}

fn ended(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::TimedOut, why.to_string())
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.closed() {
            return Poll::Ready(Err(ended("closed to admit a newer connection")));
        }
        *self.conn.waker.lock().unwrap_or_else(|p| p.into_inner()) = Some(cx.waker().clone());
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before && this.conn.in_flight.load(Ordering::SeqCst) == 0 {
                    let mut marks = this.conn.marks();
                    if marks.head_since.is_none() {
                        marks.head_since = Some(Instant::now());
                    }
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                let Some(deadline) = this.deadline() else {
                    return Poll::Pending;
                };
                this.timer.as_mut().reset(deadline);
                match this.timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(ended("idle or header timeout"))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.closed() {
            return Poll::Ready(Err(ended("closed to admit a newer connection")));
        }
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(total: usize, per_ip: usize) -> Limits {
        Limits {
            total,
            per_ip,
            idle: Duration::from_secs(60),
            header: Duration::from_secs(10),
        }
    }

    fn addr(ip: [u8; 4], port: u16) -> SocketAddr {
        SocketAddr::from((ip, port))
    }

    #[test]
    fn at_a_cap_the_oldest_idle_connection_makes_room() {
        let c = Connections::new(limits(3, 2));
        let first = c.admit(addr([10, 0, 0, 1], 1)).unwrap();
        let second = c.admit(addr([10, 0, 0, 1], 2)).unwrap();
        // The address's cap: the first (oldest, idle) is closed.
        let third = c.admit(addr([10, 0, 0, 1], 3)).unwrap();
        assert!(first.closing.load(Ordering::SeqCst));
        assert!(!second.closing.load(Ordering::SeqCst));
        // Busy connections are never closed: with both busy, refused.
        second.in_flight.store(1, Ordering::SeqCst);
        third.in_flight.store(1, Ordering::SeqCst);
        assert!(c.admit(addr([10, 0, 0, 1], 4)).is_none());
        // Another address counts against the total only.
        assert!(c.admit(addr([10, 0, 0, 2], 1)).is_some());
        assert_eq!(
            c.count(),
            4,
            "the closed one is forgotten when its stream drops"
        );
    }

    #[test]
    fn the_total_never_exceeds_the_file_limit() {
        let l = limits(1_000_000, 64).within_file_limit();
        let soft = open_file_limit();
        assert!(l.total as u64 <= soft.max(8 + FD_RESERVE), "{l:?}");
    }
}
