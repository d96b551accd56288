//! `query --explain` and `explain: true`: each result's place in every list.

use minirag_blackbox::Corpus;

#[test]
fn explain_shows_each_lists_rank_and_the_fused_score() {
    let c = Corpus::new(&[
        (
            "guide.md",
            "# Guide\n\nThe error ERR_CONN_RESET means the peer closed the socket.",
        ),
        ("soup.md", "# Soup\n\nBoil water, add vegetables and salt."),
    ]);
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    let (code, q, err) = c.json(&["query", "ERR_CONN_RESET", "--explain"]);
    assert_eq!(code, 0, "{err}");
    let top = &q["results"][0];
    assert_eq!(top["source"], c.path("guide.md"));
    let e = &top["explain"];
    assert_eq!(e["keyword"]["rank"], 1, "{e}");
    assert_eq!(e["vector"]["score"], top["distance"], "{e}");
    assert_eq!(e["fused"], top["score"], "{e}");
    assert_eq!(e["keywordWeight"], 0.6);
    // A hit only the vector side found says so by leaving the keyword out.
    let soup = q["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["source"] == c.path("soup.md"))
        .expect("the vector side lists every chunk of a tiny corpus");
    assert!(soup["explain"].get("keyword").is_none(), "{soup}");
    assert!(soup["explain"]["vector"]["rank"].as_u64().unwrap() >= 2);

    let out = c.cli(&["query", "ERR_CONN_RESET", "--explain"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("why: vector #1") && text.contains("keyword #1"),
        "{text}"
    );
    let (_, q, _) = c.json(&["query", "ERR_CONN_RESET"]);
    assert!(
        q["results"][0].get("explain").is_none(),
        "no explain unless asked"
    );
}
