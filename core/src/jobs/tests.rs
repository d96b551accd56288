//! Jobs over an engine on the fakes: admission, state, cancel and drain.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use super::*;
use crate::testing::fixture::{fixture, Fixture};

fn with_files() -> (Fixture, Arc<Engine>) {
    let f = fixture();
    for i in 0..5 {
        f.files.put(
            &format!("/docs/n{i}.md"),
            &format!("# Note {i}\n\nWords {i}."),
            1.0,
        );
    }
    let engine = Arc::new(crate::engine::Engine::new(
        f.engine.settings().clone(),
        f.engine.ports().clone(),
    ));
    (f, engine)
}

fn go() -> Arc<AtomicBool> {
    Arc::new(AtomicBool::new(false))
}

#[test]
fn a_job_runs_to_a_typed_end_with_its_report_and_progress() {
    let (_f, engine) = with_files();
    let jobs = Arc::new(Jobs::default());
    let admitted = jobs.admit(engine, None, go()).unwrap();
    let id = admitted.id().to_string();
    assert_eq!(id.len(), 32);
    assert_eq!(jobs.job(&id).unwrap().state, JobState::Running);
    let seen = Mutex::new(0);
    let job = admitted.run(&|_| *seen.lock().unwrap() += 1);
    assert_eq!(job.state, JobState::Succeeded);
    assert_eq!(job.state.as_str(), "succeeded");
    assert_eq!(job.report.as_ref().unwrap().counts.ingested, 5);
    assert!(job.changed_documents());
    assert!(*seen.lock().unwrap() >= 5);
    let stored = jobs.job(&id).unwrap();
    assert_eq!(stored.progress.done, stored.progress.total);
    assert!(stored.progress.total > 0);
    assert!(stored.finished_at.is_some());
    assert!(jobs.job("someone-else").is_none());
}

#[test]
fn one_job_at_a_time_in_a_process_and_across_processes() {
    let (_f, engine) = with_files();
    let jobs = Arc::new(Jobs::default());
    let first = jobs.admit(engine.clone(), None, go()).unwrap();
    match jobs.admit(engine.clone(), None, go()) {
        Err(JobError::AlreadyRunning { id }) => assert_eq!(id, first.id()),
        other => panic!("{:?}", other.err()),
    }
    // Another process has a registry of its own: the index's lock refuses it.
    let elsewhere = Arc::new(Jobs::default());
    match elsewhere.admit(engine.clone(), None, go()) {
        Err(e @ JobError::Engine(_)) => {
            assert!(e.to_string().contains("another sync"), "{e}");
            assert!(std::error::Error::source(&e).is_some());
        }
        other => panic!("{:?}", other.err()),
    }
    assert!(elsewhere.latest().is_none());
    let id = first.id().to_string();
    first.run(&|_| {});
    // Both admit again once the job has ended.
    let again = elsewhere.admit(engine.clone(), None, go()).unwrap();
    assert_ne!(again.id(), id);
    assert_eq!(again.run(&|_| {}).state, JobState::Succeeded);
    assert!(jobs.admit(engine, None, go()).is_ok());
}

#[test]
fn a_cancelled_job_fails_and_says_so() {
    let (_f, engine) = with_files();
    let jobs = Arc::new(Jobs::default());
    let stop = Arc::new(AtomicBool::new(true));
    let job = jobs.admit(engine, None, stop).unwrap().run(&|_| {});
    assert_eq!(job.state, JobState::Failed);
    assert!(
        job.error.as_deref().unwrap().contains("cancelled"),
        "{job:?}"
    );
    assert!(!job.changed_documents());
}

#[test]
fn cancel_by_id_stops_only_the_running_job_it_names() {
    let (_f, engine) = with_files();
    let jobs = Arc::new(Jobs::default());
    let admitted = jobs.admit(engine, None, go()).unwrap();
    let id = admitted.id().to_string();
    assert!(!jobs.cancel("0123456789abcdef0123456789abcdef"));
    assert!(jobs.cancel(&id));
    let job = admitted.run(&|_| {});
    assert_eq!(job.state, JobState::Failed);
    assert!(job.error.as_deref().unwrap().contains("cancelled"));
    assert!(!jobs.cancel(&id), "an ended job is not running");
}

#[test]
fn drain_stops_and_joins_the_background_job_and_refuses_new_ones() {
    let (_f, engine) = with_files();
    let jobs = Arc::new(Jobs::default());
    let ended = Arc::new(AtomicBool::new(false));
    let seen = ended.clone();
    let id = jobs
        .admit(engine.clone(), None, go())
        .unwrap()
        .spawn(move |_| seen.store(true, Ordering::SeqCst));
    jobs.drain();
    assert!(
        ended.load(Ordering::SeqCst),
        "drain returned before the job ended"
    );
    assert_ne!(jobs.job(&id).unwrap().state, JobState::Running);
    assert!(matches!(
        jobs.admit(engine, None, go()),
        Err(JobError::Draining)
    ));
}

#[test]
fn another_process_reads_a_job_through_the_index() {
    let (f, engine) = with_files();
    let here = Arc::new(Jobs::default());
    let there = Arc::new(Jobs::default());
    let admitted = here.admit(engine.clone(), None, go()).unwrap();
    let id = admitted.id().to_string();
    // While it runs, the other process sees it running (the lock is held).
    let seen = there.find(&engine, &id).unwrap().unwrap();
    assert_eq!(seen.state, JobState::Running);
    let steps = Mutex::new(Vec::new());
    let done = admitted.run(&|_| {
        let published = f.index.jobs.lock().unwrap()[&id].progress;
        steps.lock().unwrap().push(published.done);
    });
    assert!(
        steps.lock().unwrap().iter().any(|d| *d > 0),
        "progress was not published"
    );
    let seen = there.find(&engine, &id).unwrap().unwrap();
    assert_eq!(seen.state, JobState::Succeeded);
    assert_eq!(seen.report, done.report);
    assert_eq!(seen.finished_at, done.finished_at);
    assert!(there.find(&engine, "nobody").unwrap().is_none());
}

#[test]
fn a_published_job_whose_process_died_reads_as_failed() {
    let (f, engine) = with_files();
    let here = Arc::new(Jobs::default());
    let admitted = here.admit(engine.clone(), None, go()).unwrap();
    let id = admitted.id().to_string();
    // A kill: the lock goes with the process, the record stays `running`.
    drop(admitted);
    let there = Arc::new(Jobs::default());
    let seen = there.find(&engine, &id).unwrap().unwrap();
    assert_eq!(seen.state, JobState::Failed);
    assert!(seen
        .error
        .as_deref()
        .unwrap()
        .contains("ended before it finished"));
    assert_eq!(f.index.jobs.lock().unwrap()[&id].state, JobState::Failed);
    assert!(
        !f.index.sync_lock.load(Ordering::SeqCst),
        "the check let the lock go"
    );
}

/// An embedder with a bug: it panics on every call.
struct Panicking;

impl crate::ports::Embedder for Panicking {
    fn model_id(&self) -> &str {
        "panicking"
    }
    fn dimension(&self) -> usize {
        4
    }
    fn embed_documents(
        &self,
        _: &[&str],
    ) -> Result<crate::ports::Embeddings, crate::ports::EmbedError> {
        panic!("a bug in the embedder")
    }
    fn embed_query(&self, _: &str) -> Result<Vec<f32>, crate::ports::EmbedError> {
        panic!("a bug in the embedder")
    }
}

#[test]
fn a_panic_inside_a_job_ends_it_as_failed_and_a_query_keyword_only() {
    let (f, _) = with_files();
    let mut ports = f.engine.ports().clone();
    ports.embedder = Arc::new(Panicking);
    let engine = Arc::new(crate::engine::Engine::new(
        f.engine.settings().clone(),
        ports,
    ));
    let jobs = Arc::new(Jobs::default());
    let (tx, ended) = std::sync::mpsc::channel();
    let id = jobs
        .admit(engine.clone(), None, go())
        .unwrap()
        .spawn(move |job| tx.send(job.clone()).unwrap());
    let job = ended
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the job ended");
    assert_eq!(job.state, JobState::Failed);
    assert!(
        job.error
            .as_deref()
            .unwrap()
            .contains("a bug in the embedder"),
        "{job:?}"
    );
    assert_eq!(jobs.job(&id).unwrap().state, JobState::Failed);
    let answer = engine
        .query(crate::engine::QueryRequest {
            query: "Words",
            top_k: 5,
            scope: &[],
            filter: Default::default(),
            explain: false,
        })
        .unwrap();
    let notice = answer.notice.unwrap_or_default();
    assert!(notice.contains("internal error"), "{notice}");
}
