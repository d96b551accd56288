//! The page's routes. Reads run on the blocking pool (the engine is
//! synchronous); each answer passes [`checked`] first and leaves with the
//! page's security headers.

use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::extract::{Form, Query, RawQuery, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::Markup;
use minirag_core::engine::QueryRequest;

use crate::guard::{Guard, Refusal, COOKIE};
use crate::views::{self, document, search, status};
use crate::Backend;

/// Name, media type and bytes of each embedded asset.
pub(crate) const ASSETS: &[(&str, &str, &str)] = &[
    (
        "page.css",
        "text/css; charset=utf-8",
        include_str!("../assets/page.css"),
    ),
    (
        "page.js",
        "text/javascript; charset=utf-8",
        include_str!("../assets/page.js"),
    ),
];

/// No inline script or style, nothing from elsewhere, no framing.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
                   connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// Results per search.
const TOP_K: i64 = 20;

#[derive(Clone)]
struct Site {
    backend: Arc<dyn Backend>,
    guard: Arc<Guard>,
    sign_in: Arc<crate::sign_in::SignInLimit>,
}

pub(crate) fn router(backend: Arc<dyn Backend>, guard: Arc<Guard>) -> Router {
    let site = Site {
        backend,
        guard,
        sign_in: Arc::default(),
    };
    Router::new()
        .route("/", get(search_page))
        .route("/results", get(results_fragment))
        .route("/doc", get(document_page))
        .route("/file", get(original_file))
        .route("/status", get(status_page))
        .route("/sync", post(sync_now))
        .route("/sync/cancel", post(sync_cancel))
        .route("/sync/job", get(job_fragment))
        .route("/login", get(login_page).post(login))
        .route("/logout", post(logout))
        .route("/assets/{name}", get(asset))
        .layer(axum::middleware::from_fn_with_state(site.clone(), checked))
        .with_state(site)
}

/// The guard, then the security headers on whatever answers.
async fn checked(State(site): State<Site>, request: Request, next: Next) -> Response {
    let path = request.uri().path();
    let open = path.starts_with("/assets/") || path == "/login";
    let post = request.method() == Method::POST;
    let origin = request
        .headers()
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("none")
        .to_string();
    let verdict = if open {
        match site.guard.check(request.headers(), post) {
            Err(Refusal::Token) => Ok(()),
            other => other,
        }
    } else {
        site.guard.check(request.headers(), post)
    };
    let mut response = match verdict {
        Ok(()) => next.run(request).await,
        Err(Refusal::Host) => (
            StatusCode::FORBIDDEN,
            "This Host is not one the server answers to; add it with --allowed-host.",
        )
            .into_response(),
        Err(Refusal::Origin) => (
            StatusCode::FORBIDDEN,
            format!("Refused: a POST must come from this page or from an --allowed-origin; this one came from origin '{origin}'."),
        )
            .into_response(),
        Err(Refusal::Token) if post => {
            (StatusCode::UNAUTHORIZED, "Sign in at /login first.").into_response()
        }
        Err(Refusal::Token) => {
            (StatusCode::UNAUTHORIZED, html(views::login(false))).into_response()
        }
    };
    let headers = response.headers_mut();
    if !headers.contains_key(header::CONTENT_SECURITY_POLICY) {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CSP),
        );
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // Not `no-referrer`: under it a browser sends `Origin: null` with the
    // page's own form POSTs, which the guard must refuse.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    response
}

fn html(markup: Markup) -> Html<String> {
    Html(markup.into_string())
}

/// Runs `f` on the blocking pool; a panic there becomes an error page.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Response> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            html(views::problem("Internal error", &e.to_string())),
        )
            .into_response()
    })
}

fn run_search(backend: &dyn Backend, form: &search::Form) -> search::Outcome {
    if form.q.trim().is_empty() {
        return search::Outcome::Empty;
    }
    let engine = match backend.engine() {
        Ok(e) => e,
        Err(e) => return search::Outcome::Failed(e),
    };
    let scope = form.scope(&backend.roots());
    let formats = form.formats();
    let until = form.modified_before();
    let (languages, meta) = (form.languages(), form.meta());
    let started = Instant::now();
    let answer = engine.query(QueryRequest {
        query: &form.q,
        top_k: TOP_K,
        scope: &scope,
        filter: minirag_core::search::FilterRequest {
            formats: &formats,
            modified_after: form.modified_after(),
            modified_before: until.as_deref(),
            languages: &languages,
            meta: &meta,
            ..Default::default()
        },
        explain: false,
    });
    match answer {
        Ok(response) => search::Outcome::Found {
            response,
            millis: started.elapsed().as_secs_f64() * 1000.0,
        },
        Err(e) => search::Outcome::Failed(e.to_string()),
    }
}

/// A search form from the query string, where a key may repeat
/// (`?format=pdf&format=docx`); a malformed one is a page that says so.
fn search_form(query: Option<&str>) -> Result<search::Form, Box<Response>> {
    serde_html_form::from_str(query.unwrap_or_default()).map_err(|e| {
        let why = format!(
            "This search's address cannot be read ({e}); start a new search from the page."
        );
        Box::new((StatusCode::BAD_REQUEST, why).into_response())
    })
}

async fn search_page(State(site): State<Site>, RawQuery(query): RawQuery) -> Response {
    let form = match search_form(query.as_deref()) {
        Ok(form) => form,
        Err(refused) => return *refused,
    };
    let backend = site.backend.clone();
    blocking(move || {
        let outcome = run_search(backend.as_ref(), &form);
        html(search::view(&form, &backend.roots(), &outcome)).into_response()
    })
    .await
    .unwrap_or_else(|r| r)
}

async fn results_fragment(State(site): State<Site>, RawQuery(query): RawQuery) -> Response {
    let form = match search_form(query.as_deref()) {
        Ok(form) => form,
        Err(refused) => return *refused,
    };
    let backend = site.backend.clone();
    blocking(move || {
        let outcome = run_search(backend.as_ref(), &form);
        html(search::results(&form, &outcome)).into_response()
    })
    .await
    .unwrap_or_else(|r| r)
}

async fn document_page(
    State(site): State<Site>,
    Query(wanted): Query<document::Wanted>,
) -> Response {
    let backend = site.backend.clone();
    blocking(move || {
        let engine = match backend.engine() {
            Ok(e) => e,
            Err(e) => return problem(StatusCode::SERVICE_UNAVAILABLE, "Index unavailable", &e),
        };
        let read = match wanted.chunk {
            Some(c) => engine.read_passage(&wanted.source, c),
            None => engine.read_document(&wanted.source).map(|d| (d, None)),
        };
        let (doc, passage) = match read {
            Ok(r) => r,
            Err(e) => return problem(StatusCode::NOT_FOUND, "Document not found", &e.to_string()),
        };
        let place = wanted.chunk.and_then(|c| {
            let hit = engine
                .neighbors(&wanted.source, c, 0, 0)
                .ok()?
                .into_iter()
                .next()?;
            Some((hit.location.clone()?, hit.citation()?))
        });
        let shown = document::Shown {
            doc: &doc,
            passage,
            place,
            original: backend.original(&wanted.source).is_some(),
        };
        html(document::view(&wanted, &shown)).into_response()
    })
    .await
    .unwrap_or_else(|r| r)
}

fn problem(status: StatusCode, title: &str, message: &str) -> Response {
    (status, html(views::problem(title, message))).into_response()
}

#[derive(serde::Deserialize)]
struct SourceArg {
    source: String,
}

/// The original file, inline, sandboxed: an HTML original runs no script.
async fn original_file(State(site): State<Site>, Query(arg): Query<SourceArg>) -> Response {
    let Some(path) = site.backend.original(&arg.source) else {
        return problem(
            StatusCode::NOT_FOUND,
            "No local original",
            "Only an indexed file under a configured root can be opened.",
        );
    };
    let bytes = match tokio::fs::read(&path).await {
        Ok(b) => b,
        Err(e) => {
            return problem(
                StatusCode::NOT_FOUND,
                "The original cannot be read",
                &format!("{}: {e}", path.display()),
            )
        }
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().replace(['"', '\\'], "_"))
        .unwrap_or_default();
    let mut response = Response::new(Body::from(bytes));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(media_type(&name)),
    );
    if let Ok(v) = HeaderValue::from_str(&format!("inline; filename=\"{name}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("sandbox"),
    );
    response
}

fn media_type(name: &str) -> &'static str {
    let ext = name.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    match ext.as_str() {
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "webp" => "image/webp",
        "html" | "htm" => "text/html; charset=utf-8",
        "md" | "markdown" | "txt" | "csv" | "vtt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

async fn status_page(State(site): State<Site>, Query(wanted): Query<status::Wanted>) -> Response {
    let backend = site.backend.clone();
    blocking(move || {
        let status = backend.status();
        let engine = backend.engine();
        let jobs = backend.jobs();
        let job = match (&engine, wanted.job.is_empty()) {
            (_, true) => jobs.latest(),
            (Ok(e), false) => jobs.find(e, &wanted.job).ok().flatten(),
            (Err(_), false) => None,
        };
        let files = engine.map_err(|e| e.to_string()).and_then(|e| {
            e.list_files(&[], Default::default())
                .map_err(|e| e.to_string())
        });
        let files = files
            .as_ref()
            .map(|l| l.files.as_slice())
            .map_err(String::as_str);
        html(status::view(&wanted, &status, job.as_ref(), files)).into_response()
    })
    .await
    .unwrap_or_else(|r| r)
}

fn wants_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/json"))
}

async fn sync_now(State(site): State<Site>, headers: HeaderMap) -> Response {
    let backend = site.backend.clone();
    let started = blocking(move || backend.start_sync()).await;
    let started = match started {
        Ok(s) => s,
        Err(r) => return r,
    };
    match (started, wants_json(&headers)) {
        (Ok(id), true) => axum::Json(serde_json::json!({"jobId": id})).into_response(),
        (Ok(id), false) => Redirect::to(&status::job_url(&id)).into_response(),
        (Err(e), true) => (
            StatusCode::CONFLICT,
            axum::Json(serde_json::json!({"error": e})),
        )
            .into_response(),
        (Err(e), false) => problem(StatusCode::CONFLICT, "Sync not started", &e),
    }
}

#[derive(serde::Deserialize)]
struct JobArg {
    id: String,
}

async fn sync_cancel(
    State(site): State<Site>,
    headers: HeaderMap,
    Form(arg): Form<JobArg>,
) -> Response {
    let cancelled = site.backend.jobs().cancel(&arg.id);
    match (cancelled, wants_json(&headers)) {
        (c, true) => axum::Json(serde_json::json!({"cancelling": c})).into_response(),
        (_, false) => Redirect::to(&status::job_url(&arg.id)).into_response(),
    }
}

/// The job panel alone, for the page's script to poll; its state is also in
/// the `x-job-state` header.
async fn job_fragment(State(site): State<Site>, Query(arg): Query<JobArg>) -> Response {
    let backend = site.backend.clone();
    blocking(move || {
        let jobs = backend.jobs();
        let job = match backend.engine() {
            Ok(e) => jobs.find(&e, &arg.id).ok().flatten(),
            Err(_) => jobs.job(&arg.id),
        };
        let Some(job) = job else {
            return problem(
                StatusCode::NOT_FOUND,
                "Unknown sync job",
                "This index keeps its latest 8 jobs.",
            );
        };
        let mut r = html(status::job_panel(&job)).into_response();
        r.headers_mut()
            .insert("x-job-state", HeaderValue::from_static(job.state.as_str()));
        r
    })
    .await
    .unwrap_or_else(|r| r)
}

async fn login_page() -> Html<String> {
    html(views::login(false))
}

#[derive(serde::Deserialize)]
struct TokenArg {
    token: String,
}

/// Checks the token once and keeps it in a cookie script cannot read.
/// A few wrong tries a minute per address (the peer the server saw).
async fn login(State(site): State<Site>, request: Request) -> Response {
    use axum::extract::{ConnectInfo, FromRequest};
    let peer = request
        .extensions()
        .get::<ConnectInfo<std::net::SocketAddr>>()
        .map(|c| c.0.ip());
    let ip = client_address(&site.guard, request.headers()).or(peer);
    let now = Instant::now();
    if let Some(Err(wait)) = ip.map(|ip| site.sign_in.check(ip, now)) {
        let message = wait.to_string();
        return (StatusCode::TOO_MANY_REQUESTS, message).into_response();
    }
    let headers = request.headers().clone();
    let arg = match Form::<TokenArg>::from_request(request, &site).await {
        Ok(Form(arg)) => arg,
        Err(e) => return e.into_response(),
    };
    let token = arg.token.trim();
    let right = site.guard.token.as_ref().is_none_or(|check| check(token));
    let cookie_safe = token
        .bytes()
        .all(|b| b.is_ascii_graphic() && b != b';' && b != b',');
    if !right || !cookie_safe {
        if let Some(ip) = ip {
            site.sign_in.failed(ip, now);
        }
        return (StatusCode::UNAUTHORIZED, html(views::login(true))).into_response();
    }
    let Some(id) = site.guard.signed_in.start(now) else {
        let message = "The system gave no randomness for a sign-in; use the bearer header.";
        return (StatusCode::SERVICE_UNAVAILABLE, message).into_response();
    };
    let secure = if over_https(&site.guard, &headers) {
        "; Secure"
    } else {
        ""
    };
    let cookie = format!(
        "{COOKIE}={id}; HttpOnly; SameSite=Strict; Path=/; Max-Age={}{secure}",
        crate::signed_in::LIFETIME.as_secs()
    );
    let mut r = Redirect::to("/").into_response();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

/// Ends the sign-in of this cookie and clears it.
async fn logout(State(site): State<Site>, headers: HeaderMap) -> Response {
    if let Some(id) = crate::guard::cookie(&headers, COOKIE) {
        site.guard.signed_in.end(id);
    }
    let secure = if over_https(&site.guard, &headers) {
        "; Secure"
    } else {
        ""
    };
    let cookie = format!("{COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0{secure}");
    let mut r = Redirect::to("/login").into_response();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

/// The client's address as a trusted proxy reports it: the last entry of
/// `X-Forwarded-For`, the one the proxy itself appended.
fn client_address(guard: &Guard, headers: &HeaderMap) -> Option<std::net::IpAddr> {
    if !guard.trust_proxy {
        return None;
    }
    let forwarded = headers.get("x-forwarded-for")?.to_str().ok()?;
    forwarded.rsplit(',').next()?.trim().parse().ok()
}

/// Whether the request reached the proxy in front over TLS (trusted only
/// with `--trust-proxy`; the server itself speaks plain HTTP).
fn over_https(guard: &Guard, headers: &HeaderMap) -> bool {
    guard.trust_proxy
        && headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|p| p.trim().eq_ignore_ascii_case("https"))
}

async fn asset(axum::extract::Path(name): axum::extract::Path<String>) -> Response {
    match ASSETS.iter().find(|(n, _, _)| *n == name) {
        Some((_, media, body)) => (
            [
                (header::CONTENT_TYPE, *media),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            *body,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such asset").into_response(),
    }
}
