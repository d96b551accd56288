//! Generations freed off the threads that read and write them. Beside a
//! sync, a generation's last reference frees what that generation alone
//! held: the copies a write made of lists and pages, a reference count to
//! drop for every list a copied page names. With a large vocabulary that
//! is a large part of a write's cost; on the query thread that dropped the
//! last view it was that query's latency, and on the writer its speed. One
//! background thread frees it instead.

use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, OnceLock};

use crate::Inner;

/// A generation held by a view: freed by [`release`] when it drops.
pub(crate) struct Pinned(ManuallyDrop<Arc<Inner>>);

impl Pinned {
    pub(crate) fn new(inner: Arc<Inner>) -> Self {
        Self(ManuallyDrop::new(inner))
    }
}

impl Deref for Pinned {
    type Target = Inner;

    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: the `Arc` is taken out once, here, as the value drops;
        // nothing reads the field afterwards.
        let inner = unsafe { ManuallyDrop::take(&mut self.0) };
        release(inner);
    }
}

/// Drops a reference to a generation; the last one sends the generation to
/// the freeing thread (or frees it here when there is none to be had).
pub(crate) fn release<T: Send + 'static>(shared: Arc<T>) {
    let Some(last) = Arc::into_inner(shared) else {
        return;
    };
    if let Some(freer) = freer() {
        // A freer that ended hands the value back, freed here.
        let _ = freer.send(Box::new(last));
    }
}

/// The channel to the freeing thread, started on first use; `None` when no
/// thread could be started.
fn freer() -> Option<&'static Sender<Box<dyn Send>>> {
    static FREER: OnceLock<Option<Sender<Box<dyn Send>>>> = OnceLock::new();
    FREER
        .get_or_init(|| {
            let (send, receive) = channel::<Box<dyn Send>>();
            std::thread::Builder::new()
                .name("minirag-free".into())
                .spawn(move || receive.into_iter().for_each(drop))
                .ok()
                .map(|_| send)
        })
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Says, as it drops, on which thread.
    struct Noted(Sender<Option<String>>);

    impl Drop for Noted {
        fn drop(&mut self) {
            let name = std::thread::current().name().map(str::to_string);
            let _ = self.0.send(name);
        }
    }

    #[test]
    fn only_the_last_reference_frees_and_the_freeing_thread_does() {
        let (said, heard) = channel();
        let first = Arc::new(Noted(said));
        let second = Arc::clone(&first);
        release(first);
        assert!(heard.try_recv().is_err(), "a reference remains");
        release(second);
        assert_eq!(heard.recv().unwrap().as_deref(), Some("minirag-free"));
    }
}
