//! The search page in a real browser (headless chromium over WebDriver):
//! search as you type, a document opened at its passage, a sync followed
//! to its end and one cancelled, the token asked once, a cross-origin POST
//! refused, and a document's `<script>` shown as text. Screenshots of each
//! view, light and dark, go to `target/screenshots/`.

use std::time::Duration;

use fantoccini::actions::{InputSource, KeyAction, KeyActions};
use fantoccini::{Client, ClientBuilder, Locator};
use hyper_util::client::legacy::connect::HttpConnector;
use minirag_blackbox::browser::{screenshot_dir, Driver};
use minirag_blackbox::http_server::HttpServer;
use minirag_blackbox::{serve_page, Corpus};

const TOKEN: &str = "page-token-0123456789abcdef";
/// How long a wait for the page may take before the test fails.
const WAIT: Duration = Duration::from_secs(60);

async fn browser(driver: &Driver, dark: bool) -> Client {
    ClientBuilder::new(HttpConnector::new())
        .capabilities(driver.capabilities(dark))
        .connect(&driver.url)
        .await
        .expect("a chromium session")
}

async fn wait_for(client: &Client, css: &str) -> fantoccini::elements::Element {
    client
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css} never appeared: {e}"))
}

/// Types `value` into the search form's input `name`, as a person would
/// (a change event, which the page's script answers with fresh results).
async fn set_input(client: &Client, name: &str, value: &str) {
    let script = format!(
        "const i = document.querySelector('input[name={name}]'); i.value = '{value}'; \
         i.dispatchEvent(new Event('change', {{bubbles: true}}));"
    );
    client.execute(&script, vec![]).await.unwrap();
}

async fn shot(client: &Client, name: &str) {
    let png = client.screenshot().await.expect("a screenshot");
    assert!(png.starts_with(b"\x89PNG"), "{name} is a PNG");
    std::fs::write(screenshot_dir().join(format!("{name}.png")), png).unwrap();
}

fn corpus() -> Corpus {
    Corpus::new(&[
        (
            "finance/invoices.md",
            "---\ntags: [money, archive]\n---\n# Invoices\n\nHow we keep money records.\n\n## Archive\n\nPaid invoices are archived every quarter in the finance vault, sorted by supplier.\n\n## Reminders\n\nOverdue reminders go out on the first Monday.",
        ),
        (
            "ops/deploy.md",
            "# Deploying\n\nThe service is deployed with a blue-green switch.\n\n## Rollback\n\nA rollback flips the switch back within a minute.",
        ),
        (
            "notes/unsafe.md",
            "# Pasted snippet\n\nA pasted fragment: <script>window.pwned = 1</script> and <img src=x onerror=\"window.pwned = 2\"> kept as text.",
        ),
    ])
}

fn synced(c: &Corpus) {
    let out = c.cli(&["sync"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The corpus, synced, and `serve --http` over it.
fn served() -> (Corpus, HttpServer) {
    let c = corpus();
    synced(&c);
    let server = HttpServer::start(&c.env, &c.root, &[]);
    (c, server)
}

#[tokio::test(flavor = "multi_thread")]
async fn typing_a_query_finds_the_document_first_and_opens_it_at_its_passage() {
    let (_corpus, server) = served();
    let driver = Driver::start();
    for dark in [false, true] {
        let b = browser(&driver, dark).await;
        b.goto(&format!("{}/", server.base())).await.unwrap();
        let scheme = b
            .execute(
                "return matchMedia('(prefers-color-scheme: dark)').matches",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(
            scheme,
            serde_json::json!(dark),
            "the browser's colour scheme"
        );
        let q = wait_for(&b, "#q").await;
        q.send_keys("archived invoices supplier").await.unwrap();
        // Search as you type: no submit. Results of the whole query, not of
        // a prefix typed on the way.
        wait_for(&b, "#results p.meta[data-q='archived invoices supplier']").await;
        let first = wait_for(&b, "#results li.document h2 a").await;
        assert_eq!(first.text().await.unwrap(), "Invoices");
        let marks = b
            .find_all(Locator::Css("#results .snippet mark"))
            .await
            .unwrap();
        let marked: Vec<String> = futures_text(&marks).await;
        assert!(marked.iter().any(|m| m == "archived"), "{marked:?}");
        let url = b.current_url().await.unwrap();
        assert_eq!(url.query(), Some("q=archived+invoices+supplier"), "{url}");
        let theme = if dark { "dark" } else { "light" };
        shot(&b, &format!("search-{theme}")).await;

        // Keyboard: down from the box reaches the first passage; Enter opens it.
        q.send_keys("\u{E015}").await.unwrap();
        let focused = b
            .execute("return document.activeElement.className", vec![])
            .await
            .unwrap();
        assert_eq!(focused, "passage");
        // "/" from anywhere but a field brings the focus back to the box.
        let slash = KeyActions::new("keyboard".into())
            .then(KeyAction::Down { value: '/' })
            .then(KeyAction::Up { value: '/' });
        b.perform_actions(slash).await.unwrap();
        let focused = b
            .execute("return document.activeElement.id", vec![])
            .await
            .unwrap();
        assert_eq!(focused, "q");
        q.send_keys("\u{E015}").await.unwrap();
        let enter = KeyActions::new("keyboard".into())
            .then(KeyAction::Down { value: '\u{E007}' })
            .then(KeyAction::Up { value: '\u{E007}' });
        b.perform_actions(enter).await.unwrap();
        let passage = wait_for(&b, "#passage").await;
        assert!(passage
            .text()
            .await
            .unwrap()
            .contains("Paid invoices are archived"));
        let terms = b
            .find_all(Locator::Css("mark.passage strong.term"))
            .await
            .unwrap();
        let terms = futures_text(&terms).await;
        assert!(terms.iter().any(|t| t == "archived"), "{terms:?}");
        let in_view = b
            .execute(
                "const r = document.getElementById('passage').getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight;",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(in_view, serde_json::json!(true), "scrolled to the passage");
        let place = b.find(Locator::Css("p.place")).await.unwrap();
        assert!(place.text().await.unwrap().contains("invoices.md, line"));
        shot(&b, &format!("document-{theme}")).await;
        b.close().await.unwrap();
    }
}

async fn futures_text(elements: &[fantoccini::elements::Element]) -> Vec<String> {
    let mut out = Vec::new();
    for e in elements {
        out.push(e.text().await.unwrap_or_default());
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sync_started_on_the_page_reaches_done_and_another_is_cancelled() {
    let (c, server) = served();
    let driver = Driver::start();
    let b = browser(&driver, false).await;
    // A changed folder: one new file, and one that cannot be read.
    std::fs::write(
        c.root.join("ops/new.md"),
        "# Pager\n\nThe pager rota changes weekly.",
    )
    .unwrap();
    std::fs::write(c.root.join("ops/broken.pdf"), "not a PDF at all").unwrap();
    b.goto(&format!("{}/status", server.base())).await.unwrap();
    wait_for(&b, "#sync-now").await.click().await.unwrap();
    wait_for(&b, "#job [data-state=succeeded]").await;
    let counts = b.find(Locator::Css("#job .counts")).await.unwrap();
    assert!(
        counts.text().await.unwrap().starts_with("1 indexed"),
        "the new file only"
    );
    let errors = b.find(Locator::Css("#job details.errors")).await.unwrap();
    let errors = errors.text().await.unwrap();
    assert!(
        errors.contains("1 files could not be indexed") && errors.contains("broken.pdf"),
        "{errors}"
    );
    let progress = b.find(Locator::Css("#job-progress")).await.unwrap();
    assert_eq!(
        progress.attr("value").await.unwrap(),
        progress.attr("max").await.unwrap()
    );
    assert!(b
        .current_url()
        .await
        .unwrap()
        .query()
        .unwrap()
        .starts_with("job="));
    shot(&b, "status-light").await;
    b.close().await.unwrap();

    // Enough new files that the sync is still running when Cancel is clicked.
    for i in 0..1500 {
        std::fs::write(
            c.root.join(format!("ops/bulk-{i}.md")),
            format!("# Bulk {i}\n\nGenerated note number {i} about shipping crates."),
        )
        .unwrap();
    }
    let b = browser(&driver, true).await;
    b.goto(&format!("{}/status", server.base())).await.unwrap();
    wait_for(&b, "#sync-now").await.click().await.unwrap();
    wait_for(&b, "#job [data-state=running]").await;
    shot(&b, "status-dark").await;
    wait_for(&b, "#cancel").await.click().await.unwrap();
    wait_for(&b, "#job [data-state=failed]").await;
    let error = b.find(Locator::Css("#job .error")).await.unwrap();
    assert!(error.text().await.unwrap().contains("cancelled"));
    let disabled = b
        .find(Locator::Css("#sync-now"))
        .await
        .unwrap()
        .prop("disabled")
        .await
        .unwrap();
    assert_eq!(
        disabled.as_deref(),
        Some("false"),
        "Sync now is offered again"
    );
    b.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn with_allow_remote_the_page_asks_for_the_token_once_and_refuses_a_wrong_one() {
    let c = corpus();
    synced(&c);
    let mut env = c.env.clone();
    env.push(("MINIRAG_TOKEN".into(), TOKEN.into()));
    let server = HttpServer::start(&env, &c.root, &["--allow-remote"]);
    let driver = Driver::start();
    let b = browser(&driver, false).await;
    b.goto(&format!("{}/?q=rollback", server.base()))
        .await
        .unwrap();
    let field = wait_for(&b, "#token").await;
    assert!(
        b.find(Locator::Css("#results")).await.is_err(),
        "nothing shown without the token"
    );
    field.send_keys("not-the-token-at-all").await.unwrap();
    b.find(Locator::Css("form.login button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let refused = wait_for(&b, "#login-error").await;
    assert!(refused.text().await.unwrap().contains("wrong"));
    b.find(Locator::Css("#token"))
        .await
        .unwrap()
        .send_keys(TOKEN)
        .await
        .unwrap();
    b.find(Locator::Css("form.login button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    wait_for(&b, "#q").await;
    // Asked once: the next page needs no token, and script cannot read it.
    b.goto(&format!("{}/?q=rollback", server.base()))
        .await
        .unwrap();
    let first = wait_for(&b, "#results li.document h2 a").await;
    assert_eq!(first.text().await.unwrap(), "Deploying");
    let visible = b.execute("return document.cookie", vec![]).await.unwrap();
    assert_eq!(visible, serde_json::json!(""), "the cookie is HttpOnly");
    b.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cross_origin_post_is_refused() {
    let (_corpus, server) = served();
    // Another local site (another loopback port) that posts to the page.
    let evil: &'static str = Box::leak(
        format!(
            "<!doctype html><form method=post action=\"{}/sync\"><button id=go>go</button></form>",
            server.base()
        )
        .into_boxed_str(),
    );
    let (evil_url, _) = serve_page(evil);
    let driver = Driver::start();
    let b = browser(&driver, false).await;
    b.goto(&evil_url).await.unwrap();
    wait_for(&b, "#go").await.click().await.unwrap();
    // Wait for the navigation to the answer; the evil page's own body
    // would go stale under us otherwise.
    let answer = url::Url::parse(&format!("{}/sync", server.base())).unwrap();
    b.wait().at_most(WAIT).for_url(&answer).await.unwrap();
    let body = wait_for(&b, "body").await;
    let text = body.text().await.unwrap();
    assert!(text.contains("Refused"), "{text}");
    // No job was started.
    b.goto(&format!("{}/status", server.base())).await.unwrap();
    let job = wait_for(&b, "#job").await;
    assert_eq!(job.text().await.unwrap(), "");
    b.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_documents_script_is_shown_as_text() {
    let (_corpus, server) = served();
    let driver = Driver::start();
    let b = browser(&driver, false).await;
    b.goto(&format!("{}/?q=pasted+fragment", server.base()))
        .await
        .unwrap();
    let snippet = wait_for(&b, "#results .snippet").await;
    assert!(snippet
        .text()
        .await
        .unwrap()
        .contains("<script>window.pwned = 1</script>"));
    wait_for(&b, "#results a.passage")
        .await
        .click()
        .await
        .unwrap();
    let doc = wait_for(&b, ".markdown").await;
    let text = doc.text().await.unwrap();
    assert!(text.contains("<script>window.pwned = 1</script>"), "{text}");
    assert!(
        text.contains("<img src=x onerror=\"window.pwned = 2\">"),
        "{text}"
    );
    let pwned = b
        .execute("return window.pwned === undefined", vec![])
        .await
        .unwrap();
    assert_eq!(pwned, serde_json::json!(true), "no document script ran");
    assert!(b
        .find(Locator::Css(".markdown script, .markdown img"))
        .await
        .is_err());
    b.close().await.unwrap();
}

/// The page's date range narrows the results as a person sets it: a range
/// that ends before every document leaves none and says why; the range's
/// last day counts, and the URL keeps the range to share.
#[tokio::test(flavor = "multi_thread")]
async fn the_date_range_narrows_the_results() {
    let (_corpus, server) = served();
    let driver = Driver::start();
    let b = browser(&driver, false).await;
    b.goto(&format!("{}/", server.base())).await.unwrap();
    wait_for(&b, "#q")
        .await
        .send_keys("archived invoices supplier")
        .await
        .unwrap();
    wait_for(&b, "#results p.meta[data-q='archived invoices supplier']").await;
    assert!(!b
        .find_all(Locator::Css("#results li.document"))
        .await
        .unwrap()
        .is_empty());
    set_input(&b, "until", "2001-01-31").await;
    let notice = wait_for(&b, "#results p.notice").await;
    let text = notice.text().await.unwrap();
    assert!(text.contains("matches the filter"), "{text}");
    assert!(b
        .find_all(Locator::Css("#results li.document"))
        .await
        .unwrap()
        .is_empty());
    let url = b.current_url().await.unwrap();
    assert!(
        url.query().unwrap_or("").contains("until=2001-01-31"),
        "{url}"
    );
    // Today as the last day: the files written today are in.
    let today = b
        .execute("return new Date().toISOString().slice(0, 10)", vec![])
        .await
        .unwrap();
    let today = today.as_str().unwrap().to_string();
    set_input(&b, "until", &today).await;
    set_input(&b, "since", &today).await;
    wait_for(&b, "#results li.document").await;
    shot(&b, "search-date-range").await;
    b.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_language_and_a_declared_field_narrow_the_results() {
    let (_corpus, server) = served();
    let driver = Driver::start();
    let b = browser(&driver, false).await;
    b.goto(&format!("{}/", server.base())).await.unwrap();
    wait_for(&b, "#q")
        .await
        .send_keys("archived invoices supplier")
        .await
        .unwrap();
    wait_for(&b, "#results p.meta[data-q='archived invoices supplier']").await;
    let documents = || async {
        b.find_all(Locator::Css("#results li.document"))
            .await
            .unwrap()
            .len()
    };
    set_input(&b, "lang", "ru").await;
    let notice = wait_for(&b, "#results p.notice").await;
    assert!(notice.text().await.unwrap().contains("language ru"));
    assert_eq!(documents().await, 0);
    set_input(&b, "lang", "en").await;
    set_input(&b, "meta", "tags=archive").await;
    wait_for(&b, "#results li.document").await;
    let url = b.current_url().await.unwrap();
    let query = url.query().unwrap_or("").to_string();
    assert!(
        query.contains("lang=en") && query.contains("meta=tags%3Darchive"),
        "{url}"
    );
    let text = b
        .find(Locator::Css("#results"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        text.contains("Invoices") && !text.contains("Deploying"),
        "{text}"
    );
    set_input(&b, "meta", "team=finance").await;
    let error = wait_for(&b, "#results p.error").await;
    let message = error.text().await.unwrap();
    assert!(
        message.contains("\"team\"") && message.contains("tags"),
        "{message}"
    );
    shot(&b, "search-language-field").await;
    b.close().await.unwrap();
}
