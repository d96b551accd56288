//! Every hit says where it is: the real binary's answers carry places, an
//! MCP hit's resource link opens the passage, and an index written before
//! places were kept opens, answers, and gets them on its next sync with no
//! chunk embedded again.

use minirag_blackbox::mcp_client::{call_json, connect};
use minirag_blackbox::Corpus;
use minirag_core::ports::{Embeddings, Index};
use minirag_core::search::Scope;
use minirag_index_mem::MemIndex;
use rmcp::model::{ContentBlock, ReadResourceRequestParams, ResourceContents};
use serde_json::json;

const GUIDE: &str = "# Harbour guide\n\nThe harbour opens at dawn.\n\n## Cranes\n\nCrane 7 lifts at most 40 tonnes.\nIts operator logs every lift.\n\n## Gates\n\nGate B closes at 22:00 on weekdays.\n";
const STOCK: &str = "sku,qty,bin\nBOLT-M8,120,A1\nNUT-M8,300,A2\nWASHER-M8,560,B7\n";

fn corpus() -> Corpus {
    Corpus::new(&[("guide.md", GUIDE), ("stock.csv", STOCK)])
}

fn line_of(text: &str, needle: &str) -> u64 {
    text.lines().position(|l| l.contains(needle)).unwrap() as u64 + 1
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hits_resource_link_opens_its_passage() {
    let c = corpus();
    let client = connect(&c, &[]).await;
    let job = call_json(&client, "sync_start", json!({})).await;
    minirag_blackbox::mcp_client::finished_job(&client, &job).await;

    let result = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("query_documents").with_arguments(
                json!({"query": "how many tonnes does crane 7 lift", "topK": 3})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .unwrap();
    let v = result.structured_content.clone().unwrap();
    let top = &v["results"][0];
    assert!(top["text"].as_str().unwrap().contains("40 tonnes"), "{v}");
    let crane = line_of(GUIDE, "40 tonnes");
    let lines = &top["location"]["lines"];
    assert!(
        lines[0].as_u64().unwrap() <= crane && crane <= lines[1].as_u64().unwrap(),
        "{top}"
    );
    let links: Vec<String> = result
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::ResourceLink(r) => Some(r.uri.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(links.len(), v["results"].as_array().unwrap().len());
    assert_eq!(links[0], top["link"].as_str().unwrap());
    assert!(links[0].contains("#lines="), "{}", links[0]);

    let read = client
        .read_resource(ReadResourceRequestParams::new(links[0].clone()))
        .await
        .unwrap();
    let text = match &read.contents[0] {
        ResourceContents::TextResourceContents { text, .. } => text.clone(),
        other => panic!("{other:?}"),
    };
    assert!(text.contains("40 tonnes"), "{text}");
    assert!(!text.contains("Gate B"), "only the passage's part: {text}");

    // The CSV's rows, read back through read_file's part.
    let q = call_json(
        &client,
        "query_documents",
        json!({"query": "WASHER-M8", "topK": 1}),
    )
    .await;
    let hit = &q["results"][0];
    assert_eq!(hit["location"]["rows"], json!([2, 4]), "{hit}");
    assert_eq!(hit["citation"], "stock.csv, rows 2–4");
    let part = call_json(
        &client,
        "read_file",
        json!({"source": hit["source"], "part": "rows=4-4"}),
    )
    .await;
    assert!(
        part["text"].as_str().unwrap().contains("WASHER-M8"),
        "{part}"
    );
    assert_eq!(part["location"]["rows"], json!([2, 4]));
}

/// Writes the index back as the release before places wrote it: the same
/// log records (`Op::Replace` encodes a chunk the same way when it has no
/// place), scheme 3, no places, the same vectors.
fn as_the_release_before(db: &std::path::Path) {
    let index = MemIndex::open(db).unwrap();
    // Read first: the loop writes, and a write waits for no view of this thread.
    let records = index.read().unwrap().sources(&Scope::all()).unwrap();
    for mut record in records {
        let mut chunks = index
            .read()
            .unwrap()
            .chunks(&record.source, 0..=u32::MAX)
            .unwrap();
        let model = record.embedded_with.clone().expect("embedded");
        let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
        let cached = index.cached_vectors(&model, &texts);
        let mut vectors = Embeddings::new(cached[0].as_ref().unwrap().len());
        for v in &cached {
            vectors.push(v.as_ref().unwrap());
        }
        for c in &mut chunks {
            c.layout.location = Default::default();
        }
        record.scheme_version = 3;
        index.replace_source(record, chunks, Some(vectors)).unwrap();
    }
}

#[test]
fn an_index_from_before_places_answers_and_its_next_sync_embeds_nothing() {
    let c = corpus();
    if c.on_postgres() {
        // The schema migration is the conformance suite's; this is the
        // embedded index's older files.
        return;
    }
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    as_the_release_before(&c.dir.path().join("index"));

    let (code, s, err) = c.json(&["status"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(s["staleChunkCount"], s["chunkCount"], "{s}");
    let (code, q, err) = c.json(&["query", "crane 7 tonnes", "--top-k", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(q["results"][0]["text"]
        .as_str()
        .unwrap()
        .contains("40 tonnes"));
    // Only the heading's anchor, derived from the stored headings: no lines.
    assert!(q["results"][0]["location"].get("lines").is_none(), "{q}");

    let (code, r, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(r["counts"]["ingested"], 2, "{r}");
    assert_eq!(r["counts"]["embeddedChunks"], 0, "every vector reused: {r}");
    let (_, q, _) = c.json(&["query", "crane 7 tonnes", "--top-k", "1"]);
    let lines = &q["results"][0]["location"]["lines"];
    assert!(lines.is_array(), "{q}");
    let (_, s, _) = c.json(&["status"]);
    assert_eq!(s["staleChunkCount"], 0);
    assert_eq!(s["vectorlessChunkCount"], 0);
}
