//! The page's HTML: one shell, and a module per view. Every value goes
//! through maud's escaping; the only pre-escaped HTML is the Markdown
//! renderer's output and the highlighter's marks.

pub(crate) mod document;
pub(crate) mod search;
pub(crate) mod status;

use maud::{html, Markup, DOCTYPE};
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// Which view the navigation marks as current.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Nav {
    Search,
    Status,
    None,
}

/// The shell: head with the one stylesheet and script, skip link,
/// navigation landmark, and `main`. `refresh`: reload every that many
/// seconds when script is off (a sync under way).
pub(crate) fn page(title: &str, nav: Nav, refresh: Option<u32>, body: Markup) -> Markup {
    let current = |n: Nav| if n == nav { Some("page") } else { None };
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="color-scheme" content="light dark";
                title { (title) " · minirag" }
                link rel="stylesheet" href="/assets/page.css";
                script src="/assets/page.js" defer {}
                @if let Some(s) = refresh {
                    noscript { meta http-equiv="refresh" content=(s); }
                }
            }
            body {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    a.brand href="/" { "minirag" }
                    nav aria-label="Main" {
                        a href="/" aria-current=[current(Nav::Search)] { "Search" }
                        a href="/status" aria-current=[current(Nav::Status)] { "Status" }
                    }
                }
                main #main tabindex="-1" { (body) }
            }
        }
    }
}

/// A short page that says what went wrong and what to do.
pub(crate) fn problem(title: &str, message: &str) -> Markup {
    page(
        title,
        Nav::None,
        None,
        html! {
            h1 { (title) }
            p.error role="alert" { (message) }
            p { a href="/" { "Back to search" } }
        },
    )
}

/// The token form shown when the server needs one.
pub(crate) fn login(wrong: bool) -> Markup {
    page(
        "Sign in",
        Nav::None,
        None,
        html! {
            h1 { "This index needs its token" }
            @if wrong {
                p.error role="alert" #login-error { "That token is wrong. Paste the server's token (MINIRAG_TOKEN or --token-file) and try again." }
            }
            form.login method="post" action="/login" {
                label for="token" { "Token" }
                input #token type="password" name="token" autocomplete="current-password" required autofocus;
                button type="submit" { "Sign in" }
            }
            p.hint { "Signing in keeps a random session id (never the token) for 12 hours in a cookie that script cannot read, sent only to this server; POST /logout ends it." }
        },
    )
}

/// A query-string value, percent-encoded.
pub(crate) fn enc(value: &str) -> String {
    utf8_percent_encode(value, ENCODED).to_string()
}

/// Everything but RFC 3986's unreserved characters, so a shared URL keeps
/// dates and file names readable (`since=2026-11-01`, `notes_v2.md`).
const ENCODED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `/doc?source=…&chunk=N&q=…#passage`
pub(crate) fn doc_link(source: &str, chunk: Option<u32>, query: &str) -> String {
    let mut url = format!("/doc?source={}", enc(source));
    if let Some(c) = chunk {
        url.push_str(&format!("&chunk={c}"));
    }
    if !query.is_empty() {
        url.push_str(&format!("&q={}", enc(query)));
    }
    if chunk.is_some() {
        url.push_str("#passage");
    }
    url
}
