//! With a model that reads Russian (multilingual-e5-small, real weights:
//! see `multilingual_model_dir`), a Russian question finds the passage that
//! answers it in other words: the vector side reads Russian, the blind rule
//! leaves the weight alone, and the e5 family's prefixes are in use.

use minirag_blackbox::{multilingual_model_dir, Corpus};

const FILES: &[(&str, &str)] = &[
    (
        "hold.md",
        "# Фиксация\n\nКоманда apt-mark hold фиксирует версию: менеджер не станет её менять при апгрейде системы.",
    ),
    (
        "tmpfs.md",
        "# tmpfs\n\ntmpfs размещает всё содержимое в виртуальной памяти ядра, поэтому после выключения оно исчезает.",
    ),
    (
        "blur.md",
        "# Размытие\n\nФильтр «Размытие по Гауссу» смягчает изображение, усредняя соседние точки.",
    ),
    ("soup.md", "# Soup\n\nBoil water, add vegetables and salt."),
];

#[test]
fn a_russian_question_finds_its_answer_by_meaning() {
    let c = Corpus::new(FILES).with_model(&multilingual_model_dir());
    let (code, _, err) = c.json(&["sync"]);
    assert_eq!(code, 0, "{err}");
    // No word of the question is in hold.md, in any form.
    let (code, q, err) = c.json(&["query", "как запретить обновлять пакет", "--explain"]);
    assert_eq!(code, 0, "{err}");
    let top = &q["results"][0];
    assert_eq!(top["source"], c.path("hold.md"), "{q}");
    let e = &top["explain"];
    assert!(e.get("keyword").is_none(), "found by meaning alone: {e}");
    assert_eq!(e["vector"]["rank"], 1, "{e}");
    assert_eq!(
        e["keywordWeight"], 0.6,
        "a model that reads Russian is not silenced: {e}"
    );

    // Across languages: an English question, the Russian answer.
    let (_, q, _) = c.json(&["query", "keep a package from being upgraded"]);
    assert_eq!(q["results"][0]["source"], c.path("hold.md"), "{q}");

    let (_, q, _) = c.json(&[
        "query",
        "где хранятся файлы, которые пропадают после перезагрузки",
    ]);
    assert_eq!(q["results"][0]["source"], c.path("tmpfs.md"), "{q}");

    // The e5 family's prefixes, from the known-model table.
    let out = c.cli(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("\"query: \"") && text.contains("\"passage: \""),
        "{text}"
    );
}
