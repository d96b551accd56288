//! The search page over plain HTTP, as `curl` sees it: server-rendered
//! results, the guard's refusals, the original file only under a root, and
//! `minirag-mcp ui` printing where the page is.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use minirag_blackbox::http_server::HttpServer;
use minirag_blackbox::{binary, Corpus};

const TOKEN: &str = "page-token-0123456789abcdef";

fn corpus() -> Corpus {
    let c = Corpus::new(&[
        (
            "guide.md",
            "# Guide\n\nIntro.\n\n## Ports\n\nThe alpha service listens on port 8080, set by `ALPHA_PORT` in **alpha.toml**.",
        ),
        ("other.txt", "Unrelated gardening notes about tomatoes."),
    ]);
    let out = c.cli(&["sync"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    c
}

/// One request with `headers`; (status, body).
async fn send(method: reqwest::Method, url: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let mut r = reqwest::Client::new().request(method, url);
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    let response = r.send().await.expect("the server answers");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

async fn get(url: &str, headers: &[(&str, &str)]) -> (u16, String) {
    send(reqwest::Method::GET, url, headers).await
}

async fn post(url: &str, headers: &[(&str, &str)]) -> (u16, String) {
    send(reqwest::Method::POST, url, headers).await
}

/// The login form posted with `token` from `base`'s own origin, redirects
/// not followed; `extra` headers besides.
async fn sign_in(base: &str, token: &str, extra: &[(&str, &str)]) -> reqwest::Response {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let mut request = client
        .post(format!("{base}/login"))
        .header("origin", base)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={token}"));
    for (k, v) in extra {
        request = request.header(*k, *v);
    }
    request.send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_results_are_in_the_html_of_the_query_url() {
    let c = corpus();
    let server = HttpServer::start(&c.env, &c.root, &[]);
    let base = server.base();
    let (status, html) = get(&format!("{base}/?q=alpha+port"), &[]).await;
    assert_eq!(status, 200);
    let first = html
        .find("<li class=\"document\">")
        .expect("a result in the HTML");
    assert!(html[first..].starts_with("<li class=\"document\"><h2><a href=\"/doc?source="));
    assert!(html[first..].contains(">Guide</a>"), "{html}");
    assert!(html.contains("<mark>port</mark>"), "{html}");
    // Only the query's content words are marked, never its stopwords.
    let (_, marked) = get(&format!("{base}/?q=the+alpha+service+on+port"), &[]).await;
    assert!(marked.contains("<mark>alpha</mark>"), "{marked}");
    for stopword in ["The", "the", "on"] {
        assert!(
            !marked.contains(&format!("<mark>{stopword}</mark>")),
            "{stopword}: {marked}"
        );
    }
    assert!(
        html.contains("guide.md, line 7"),
        "the passage's place: {html}"
    );
    // The snippet shows the words, not the Markdown around them.
    let snippet = html
        .split("<span class=\"snippet\">")
        .nth(1)
        .and_then(|s| s.split("</span>").next())
        .expect("a snippet");
    assert!(
        snippet.contains("alpha.toml") && !snippet.contains('`') && !snippet.contains("**"),
        "a snippet without backticks or asterisks: {snippet}"
    );
    // Filters: a format the hit is not in leaves nothing.
    let (_, html) = get(&format!("{base}/?q=alpha+port&format=pdf"), &[]).await;
    assert!(!html.contains("<li class=\"document\">"), "{html}");
    // A key may repeat: either format (issue 76, item 13).
    let (status, html) = get(&format!("{base}/?q=alpha+port&format=pdf&format=md"), &[]).await;
    assert_eq!(status, 200, "{html}");
    assert!(html.contains(">Guide</a>"), "{html}");
    // The page's script asks for the results alone.
    let (_, fragment) = get(&format!("{base}/results?q=tomatoes"), &[]).await;
    assert!(fragment.starts_with("<p class=\"meta\""), "{fragment}");
    assert!(fragment.contains("other.txt"), "{fragment}");
    // The assets are the binary's own, under the budget.
    let mut total = 0;
    for name in ["page.css", "page.js"] {
        let (status, body) = get(&format!("{base}/assets/{name}"), &[]).await;
        assert_eq!(status, 200);
        total += body.len();
    }
    assert!(total + html.len() < 100 * 1024, "{total} bytes of assets");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_guard_refuses_foreign_hosts_foreign_origins_and_wrong_tokens() {
    let c = corpus();
    let mut env = c.env.clone();
    env.push(("MINIRAG_TOKEN".into(), TOKEN.into()));
    let server = HttpServer::start(&env, &c.root, &["--allow-remote"]);
    let base = server.base();
    let bearer = format!("Bearer {TOKEN}");
    let (status, html) = get(&format!("{base}/?q=alpha"), &[]).await;
    assert_eq!(status, 401);
    assert!(html.contains("id=\"token\""), "the login form: {html}");
    assert!(!html.contains("Guide"));
    let (status, _) = get(
        &format!("{base}/?q=alpha"),
        &[("authorization", "Bearer wrong")],
    )
    .await;
    assert_eq!(status, 401);
    // Signing in gives a random session id, never the token.
    let no_redirects = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let signed = sign_in(&base, TOKEN, &[]).await;
    let set = signed.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(!set.contains(TOKEN), "{set}");
    assert!(
        set.contains("HttpOnly") && set.contains("Max-Age=43200"),
        "{set}"
    );
    assert!(
        !set.contains("Secure"),
        "plain HTTP without --trust-proxy: {set}"
    );
    let cookie = set.split(';').next().unwrap().to_string();
    let (status, html) = get(&format!("{base}/?q=alpha"), &[("cookie", &cookie)]).await;
    assert_eq!(status, 200);
    assert!(html.contains(">Guide</a>"));
    let raw = format!("minirag_session={TOKEN}");
    let (status, _) = get(&format!("{base}/?q=alpha"), &[("cookie", &raw)]).await;
    assert_eq!(status, 401, "the token as the cookie");
    // Signing out ends the session id.
    let out = no_redirects
        .post(format!("{base}/logout"))
        .header("origin", &base)
        .header("cookie", &cookie)
        .send()
        .await
        .unwrap();
    assert!(out.headers()["set-cookie"]
        .to_str()
        .unwrap()
        .contains("Max-Age=0"));
    let (status, _) = get(&format!("{base}/?q=alpha"), &[("cookie", &cookie)]).await;
    assert_eq!(status, 401, "after logout");
    let (status, _) = get(
        &format!("{base}/"),
        &[("authorization", &bearer), ("host", "evil.example")],
    )
    .await;
    assert_eq!(status, 403, "DNS rebinding: a foreign Host");
    let origin = base.clone();
    let (status, body) = post(
        &format!("{base}/sync"),
        &[("authorization", &bearer), ("origin", "http://127.0.0.1:1")],
    )
    .await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body.contains("http://127.0.0.1:1"),
        "names the origin: {body}"
    );
    let (status, _) = post(&format!("{base}/sync"), &[("authorization", &bearer)]).await;
    assert_eq!(status, 403, "a POST without Origin");
    let (status, body) = post(
        &format!("{base}/sync"),
        &[
            ("authorization", &bearer),
            ("origin", &origin),
            ("accept", "application/json"),
        ],
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("jobId"), "{body}");
    // A login with the wrong token sets no cookie.
    let response = sign_in(&origin, "wrong-token-000000000000", &[]).await;
    assert_eq!(response.status().as_u16(), 401);
    assert!(response.headers().get("set-cookie").is_none());
    // Five wrong tokens a minute from one address; the sixth try waits,
    // even with the right token.
    let mut statuses = Vec::new();
    for token in ["wrong-token-000000000001"; 4].into_iter().chain([TOKEN]) {
        let response = sign_in(&origin, token, &[]).await;
        statuses.push(response.status().as_u16());
    }
    assert_eq!(statuses, [401, 401, 401, 401, 429], "{statuses:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn only_an_indexed_file_under_a_root_is_served_and_it_runs_no_script() {
    let c = corpus();
    let server = HttpServer::start(&c.env, &c.root, &[]);
    let base = server.base();
    let response = reqwest::Client::new()
        .get(format!(
            "{base}/file?source={}",
            c.path("guide.md").replace('/', "%2F")
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert_eq!(response.headers()["content-security-policy"], "sandbox");
    assert!(response.text().await.unwrap().contains("port 8080"));
    let outside = c.dir.path().join("secret.txt");
    std::fs::write(&outside, "secret").unwrap();
    let (status, body) = get(
        &format!(
            "{base}/file?source={}",
            outside.display().to_string().replace('/', "%2F")
        ),
        &[],
    )
    .await;
    assert_eq!(status, 404);
    assert!(
        !body.contains("secret\n") && body.contains("under a configured root"),
        "{body}"
    );
    let (status, body) = get(&format!("{base}/doc?source=%2Fnot%2Findexed.md"), &[]).await;
    assert_eq!(status, 404);
    assert!(body.contains("not found"), "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_the_scan_skips_is_never_served_or_named_by_a_data_source() {
    let c = corpus();
    std::fs::write(c.path(".hidden_key"), "-----BEGIN PRIVATE KEY-----").unwrap();
    let server = HttpServer::start(&c.env, &c.root, &[]);
    let base = server.base();
    let client = minirag_blackbox::mcp_client::connect(&c, &[]).await;
    // The data tools cannot claim a file's name, so nothing lends it a record.
    for source in [
        c.path(".hidden_key"),
        c.path("guide.md"),
        "/etc/passwd".into(),
    ] {
        let (is_error, text) = minirag_blackbox::mcp_client::call(
            &client,
            "ingest_data",
            serde_json::json!({"source": source, "data": "x"}),
        )
        .await;
        assert!(
            is_error && text.contains("is a file path"),
            "{source}: {text}"
        );
    }
    client.cancel().await.unwrap();
    let (status, body) = get(
        &format!(
            "{base}/file?source={}",
            c.path(".hidden_key").replace('/', "%2F")
        ),
        &[],
    )
    .await;
    assert_eq!(status, 404, "{body}");
    assert!(!body.contains("PRIVATE KEY"), "{body}");
    // The indexed file still holds its own text.
    let (status, body) = get(
        &format!(
            "{base}/file?source={}",
            c.path("guide.md").replace('/', "%2F")
        ),
        &[],
    )
    .await;
    assert_eq!(status, 200);
    assert!(body.contains("port 8080"), "{body}");
}

#[test]
fn ui_prints_the_page_url_and_serves_it() {
    let c = corpus();
    let mut child = Command::new(binary())
        .args(["ui", "--no-open"])
        .current_dir(&c.root)
        .env_clear()
        .envs(c.env.iter().cloned())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://127.0.0.1:"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .to_string();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (status, html) = runtime.block_on(get(&format!("{url}?q=tomatoes"), &[]));
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(status, 200);
    assert!(html.contains("other.txt"), "{html}");
}

#[tokio::test(flavor = "multi_thread")]
async fn behind_a_trusted_tls_proxy_the_sign_in_cookie_is_secure() {
    let c = corpus();
    let mut env = c.env.clone();
    env.push(("MINIRAG_TOKEN".into(), TOKEN.into()));
    let server = HttpServer::start(&env, &c.root, &["--trust-proxy"]);
    let base = server.base();
    let mut seen = Vec::new();
    for proto in ["https", "http"] {
        let signed = sign_in(&base, TOKEN, &[("x-forwarded-proto", proto)]).await;
        let set = signed.headers()["set-cookie"].to_str().unwrap().to_string();
        seen.push(set.contains("; Secure"));
    }
    assert_eq!(seen, [true, false]);
}
