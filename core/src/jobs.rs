//! Sync jobs, the use case every front end drives: admission (one sync per
//! index: in this process by the registry, across processes by the index's
//! sync lock), a typed state, progress, cancel, and a drain that stops and
//! joins the running job. The stdio and HTTP servers run jobs in the
//! background and answer with the id; the CLI and a request that asked for
//! progress run one to the end on their own thread.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::progress::Step;
pub use crate::progress::{Job, JobProgress, JobState};
use crate::sync::run::SyncSession;
use crate::sync::SyncReport;

/// Job records an index keeps: starting a job removes the oldest beyond
/// this many, so `sync_status` can still report the last few syncs.
pub const JOBS_KEPT: usize = 8;

/// Why a job was not started.
#[derive(Debug)]
pub enum JobError {
    /// This process runs a sync already.
    AlreadyRunning {
        /// The running job's id.
        id: String,
    },
    /// The process is shutting down.
    Draining,
    /// The index refused the sync lock (another process syncs), or the
    /// engine could not start.
    Engine(EngineError),
}

impl std::fmt::Display for JobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::AlreadyRunning { id } => write!(
                f,
                "A sync job is already running ({id}); follow it with sync_status, or wait for it to end"
            ),
            Self::Draining => write!(f, "The server is shutting down; start the sync after it restarts"),
            Self::Engine(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for JobError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Engine(e) => Some(e),
            _ => None,
        }
    }
}

impl From<EngineError> for JobError {
    fn from(e: EngineError) -> Self {
        Self::Engine(e)
    }
}

/// The retained job of this process (the latest one), shared by every
/// session and front end.
#[derive(Default)]
pub struct Jobs {
    current: Mutex<Option<Job>>,
    /// The running job's stop flag.
    cancel: Mutex<Option<Arc<AtomicBool>>>,
    /// The background job's thread, joined by [`Jobs::drain`].
    thread: Mutex<Option<JoinHandle<()>>>,
    draining: AtomicBool,
}

/// A job that holds the index's sync lock and is published as running, but
/// has not run yet.
pub struct Admitted {
    jobs: Arc<Jobs>,
    engine: Arc<Engine>,
    session: SyncSession,
    id: String,
    cancel: Arc<AtomicBool>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// 128 random bits as hex, from the standard library's hash seeds.
fn new_id(now: i64) -> String {
    let half = |salt: u64| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_i64(now);
        h.write_u64(salt);
        h.finish()
    };
    format!("{:016x}{:016x}", half(1), half(2))
}

/// Best effort: a record that cannot be published leaves this process's
/// own answer intact, and the next step publishes again.
fn publish(engine: &Engine, job: &Job) {
    let _ = engine.ports().index.put_job(job);
}

impl Jobs {
    /// Admission as one critical section: no other job of this process
    /// runs, the index's sync lock is taken (so no other process syncs),
    /// and the job is published as running; or nothing happens. `cancel`
    /// stops the job between files.
    pub fn admit(
        self: &Arc<Self>,
        engine: Arc<Engine>,
        scope: Option<&str>,
        cancel: Arc<AtomicBool>,
    ) -> Result<Admitted, JobError> {
        if self.draining.load(Ordering::SeqCst) {
            return Err(JobError::Draining);
        }
        let now = engine.now();
        let mut current = lock(&self.current);
        if let Some(j) = current.as_ref().filter(|j| j.state == JobState::Running) {
            return Err(JobError::AlreadyRunning { id: j.id.clone() });
        }
        let session = engine.begin_sync(scope)?;
        let id = new_id(now);
        *current = Some(Job::started(&id, now));
        *lock(&self.cancel) = Some(cancel.clone());
        if let Some(job) = current.as_ref() {
            publish(&engine, job);
        }
        drop(current);
        Ok(Admitted {
            jobs: self.clone(),
            engine,
            session,
            id,
            cancel,
        })
    }

    /// The job `id`, when it is the retained one.
    pub fn job(&self, id: &str) -> Option<Job> {
        lock(&self.current).clone().filter(|j| j.id == id)
    }

    /// The job `id`: this process's, else one another process of the same
    /// index published. A published job still `Running` while nobody holds
    /// the sync lock lost its process: it is reported (and republished) as
    /// failed.
    pub fn find(&self, engine: &Engine, id: &str) -> Result<Option<Job>, EngineError> {
        if let Some(job) = self.job(id) {
            return Ok(Some(job));
        }
        let index = &engine.ports().index;
        let Some(job) = index.job(id)? else {
            return Ok(None);
        };
        if job.state != JobState::Running {
            return Ok(Some(job));
        }
        let Ok(session) = engine.begin_sync(None) else {
            return Ok(Some(job));
        };
        // The end is published while the lock is held, so a record still
        // running now will never end.
        let Some(mut job) = index.job(id)? else {
            return Ok(None);
        };
        if job.state == JobState::Running && session.holds_lock() {
            job.state = JobState::Failed;
            job.finished_at = Some(engine.now());
            job.error = Some(
                "the process that ran this sync ended before it finished; what it wrote is kept, \
                 and the next sync completes the rest"
                    .into(),
            );
            publish(engine, &job);
        }
        drop(session);
        Ok(Some(job))
    }

    /// Asks the running job `id` of this process to stop between files;
    /// false when no such job runs here.
    pub fn cancel(&self, id: &str) -> bool {
        let running = lock(&self.current)
            .as_ref()
            .is_some_and(|j| j.id == id && j.state == JobState::Running);
        if running {
            if let Some(cancel) = lock(&self.cancel).as_ref() {
                cancel.store(true, Ordering::SeqCst);
            }
        }
        running
    }

    /// The retained job.
    pub fn latest(&self) -> Option<Job> {
        lock(&self.current).clone()
    }

    /// Refuses new jobs, stops a running one between files (each written
    /// file is already durable) and waits until its thread has ended.
    pub fn drain(&self) {
        self.draining.store(true, Ordering::SeqCst);
        if let Some(cancel) = lock(&self.cancel).as_ref() {
            cancel.store(true, Ordering::SeqCst);
        }
        let thread = lock(&self.thread).take();
        if let Some(t) = thread {
            let _ = t.join();
        }
    }

    fn record_step(&self, engine: &Engine, s: &Step<'_>) {
        if s.total == 0 {
            return;
        }
        let job = lock(&self.current).as_mut().map(|j| {
            j.progress = JobProgress {
                phase: s.phase,
                done: s.done,
                total: s.total,
            };
            j.clone()
        });
        if let Some(job) = job {
            publish(engine, &job);
        }
    }

    /// The job `id` as it ended (not yet stored).
    fn ended(&self, id: &str, now: i64, result: Result<SyncReport, EngineError>) -> Job {
        let mut job = lock(&self.current)
            .clone()
            .filter(|j| j.id == id)
            .unwrap_or_else(|| Job::started(id, now));
        job.finished_at = Some(now);
        match result {
            Ok(r) => {
                job.state = JobState::Succeeded;
                job.report = Some(r);
            }
            Err(e) => {
                job.state = JobState::Failed;
                job.error = Some(e.to_string());
            }
        }
        job
    }

    /// Keeps `job` as this process's latest.
    fn store(&self, job: &Job) {
        *lock(&self.current) = Some(job.clone());
    }

    fn finish(&self, id: &str, now: i64, result: Result<SyncReport, EngineError>) -> Job {
        let job = self.ended(id, now, result);
        self.store(&job);
        job
    }
}

impl Admitted {
    /// The job's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Runs the job to its end on this thread; each step goes to the job's
    /// progress and to `observer`. The sync lock is released before the end
    /// is published.
    pub fn run(self, observer: &(dyn Fn(Step<'_>) + Sync)) -> Job {
        let Self {
            jobs,
            engine,
            session,
            id,
            cancel,
        } = self;
        let progress = |s: Step<'_>| {
            jobs.record_step(&engine, &s);
            observer(s);
        };
        let (result, lease) = engine.run_sync_leased(session, &progress, &cancel);
        let job = jobs.ended(&id, engine.now(), result);
        // Other processes see the end while the lock is still held (see
        // [`Jobs::find`]); this process admits a new job only once it is
        // let go, so a caller that sees the end can start the next sync.
        publish(&engine, &job);
        drop(lease);
        jobs.store(&job);
        job
    }

    /// Runs the job on a thread of its own and returns its id at once;
    /// `on_end` sees the finished job.
    pub fn spawn(self, on_end: impl FnOnce(&Job) + Send + 'static) -> String {
        let id = self.id.clone();
        let jobs = self.jobs.clone();
        let engine = self.engine.clone();
        let (ended, at) = (jobs.clone(), engine.clone());
        let job_id = id.clone();
        let thread = std::thread::Builder::new()
            .name("minirag-sync".into())
            .spawn(move || {
                // A panic ends the job as failed (its lease is let go on
                // the way out), never leaves it "running" for ever.
                let run =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run(&|_| {})));
                let job = run.unwrap_or_else(|panic| {
                    let message = crate::error::panic_message(&*panic);
                    ended.finish(&job_id, at.now(), Err(EngineError::Crashed { message }))
                });
                on_end(&job)
            });
        match thread {
            // A finished earlier thread is simply dropped (detached).
            Ok(t) => *lock(&jobs.thread) = Some(t),
            Err(e) => {
                jobs.finish(
                    &id,
                    engine.now(),
                    Err(EngineError::Index(crate::ports::IndexError::Storage {
                        cause: None,
                        reason: format!("could not start the sync thread: {e}"),
                    })),
                );
            }
        }
        id
    }
}

#[cfg(test)]
mod tests;
