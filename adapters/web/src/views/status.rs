//! The status view: the `status` tool's answer, the sync job with its
//! progress and a cancel, and the files with their index state.

use maud::{html, Markup};
use minirag_core::plural::counted;
use minirag_core::progress::{Job, JobState};
use minirag_core::sync::run::ListedFile;
use minirag_core::sync::ListedState;
use serde_json::Value;

use super::{doc_link, enc, page, Nav};

/// `/status?state=…&job=…`
#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct Wanted {
    #[serde(default)]
    pub state: String,
    #[serde(default)]
    pub job: String,
}

pub(crate) fn view(
    wanted: &Wanted,
    status: &Value,
    job: Option<&Job>,
    files: Result<&[ListedFile], &str>,
) -> Markup {
    let running = job.is_some_and(|j| j.state == JobState::Running);
    page(
        "Status",
        Nav::Status,
        running.then_some(1),
        html! {
            h1 { "Index status" }
            section aria-labelledby="sync-h" {
                h2 #sync-h { "Sync" }
                form #sync-form method="post" action="/sync" {
                    button #sync-now type="submit" disabled[running] { "Sync now" }
                }
                div #job aria-live="polite" data-job=[job.map(|j| j.id.as_str())] {
                    @if let Some(j) = job { (job_panel(j)) }
                }
                // Outside the panel the script re-renders, so a click on it
                // never lands on a replaced button.
                form #cancel-form method="post" action="/sync/cancel" hidden[!running] {
                    input #cancel-id type="hidden" name="id" value=[job.map(|j| j.id.as_str())];
                    button #cancel type="submit" { "Cancel" }
                }
            }
            section aria-labelledby="status-h" {
                h2 #status-h { "Index" }
                (fields(status))
            }
            section aria-labelledby="files-h" {
                h2 #files-h { "Files" }
                form.filters method="get" action="/status" {
                    label { "State "
                        select name="state" {
                            option value="" { "any" }
                            @for s in ListedState::ALL.map(ListedState::as_str) { option value=(s) selected[s == wanted.state] { (s) } }
                        }
                    }
                    button type="submit" { "Filter" }
                }
                (files_table(wanted, files))
            }
        },
    )
}

/// The job's state, counts and progress; a cancel while it runs.
pub(crate) fn job_panel(job: &Job) -> Markup {
    let p = &job.progress;
    html! {
        p.job-state data-state=(job.state.as_str()) {
            "Sync " strong #job-state { (job.state.as_str()) }
            @if p.total > 0 { " · " (p.phase.as_str()) " " (p.done) " / " (p.total) }
        }
        progress #job-progress max=(p.total.max(1)) value=(p.done) aria-label="Sync progress" {}
        @if let Some(r) = &job.report {
            p.counts {
                (r.counts.ingested) " indexed, " (r.counts.skipped) " unchanged, "
                (r.counts.deleted) " removed, " (r.counts.failed) " failed"
            }
        }
        @if let Some(end) = job.finished_at {
            p.meta { "Took " ((end - job.started_at).max(0)) " s" }
        }
        @if let Some(r) = &job.report {
            @if !r.errors.is_empty() {
                details.errors open {
                    summary { (r.errors.len()) " files could not be indexed" }
                    ul { @for (source, message) in &r.errors { li { code { (source) } ": " (message) } } }
                }
            }
            @for n in &r.notices { p.notice { (n) } }
        }
        @if let Some(e) = &job.error { p.error role="alert" { (e) } }
    }
}

/// A JSON object as a definition list, nested objects as nested lists.
fn fields(value: &Value) -> Markup {
    match value {
        Value::Object(map) => html! {
            dl.fields {
                @for (k, v) in map {
                    dt { (k) }
                    dd { (fields(v)) }
                }
            }
        },
        Value::Array(items) => html! {
            ul.plain { @for v in items { li { (fields(v)) } } }
        },
        Value::String(s) => html! { (s) },
        Value::Null => html! { "—" },
        other => html! { (other.to_string()) },
    }
}

fn files_table(wanted: &Wanted, files: Result<&[ListedFile], &str>) -> Markup {
    let files = match files {
        Ok(f) => f,
        Err(e) => return html! { p.error role="alert" { (e) } },
    };
    let shown: Vec<&ListedFile> = files
        .iter()
        .filter(|f| wanted.state.is_empty() || f.state.as_str() == wanted.state)
        .collect();
    html! {
        p.meta { (shown.len()) " of " (counted(files.len() as u64, "file", "files")) }
        div.table-wrap {
            table #files {
                thead { tr { th scope="col" { "File" } th scope="col" { "State" } th scope="col" { "Chunks" } } }
                tbody {
                    @for f in shown {
                        tr data-state=(f.state.as_str()) {
                            td {
                                @if f.chunk_count > 0 { a href=(doc_link(&f.source, None, "")) { (f.source) } }
                                @else { (f.source) }
                            }
                            td {
                                (f.state.as_str())
                                @if let Some(why) = &f.error { div.why { (why) } }
                            }
                            td.num { (f.chunk_count) }
                        }
                    }
                }
            }
        }
    }
}

/// `/status?job=ID`
pub(crate) fn job_url(id: &str) -> String {
    format!("/status?job={}", enc(id))
}
