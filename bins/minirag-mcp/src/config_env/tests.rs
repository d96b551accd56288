//! The configuration table: every variable, its default and its bad values.

use super::*;
use minirag_core::config::{Config, DEFAULT_MODEL};

fn ctx() -> ConfigContext {
    ConfigContext {
        cwd: "/work/t".into(),
        home: Some("/home/u".into()),
        default_cache_dir: "/home/u/.cache/minirag-mcp".into(),
    }
}

fn load(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
    load_with(pairs, &CliOverrides::default())
}

fn load_with(pairs: &[(&str, &str)], flags: &CliOverrides) -> Result<Config, ConfigError> {
    let env: BTreeMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    super::load(&env, flags, &ctx())
}

#[test]
fn defaults() {
    let c = load(&[]).unwrap();
    assert_eq!(c.roots, ["/work/t"]);
    assert_eq!(c.db_path, "/work/t/.minirag/index");
    assert_eq!(c.model_name, DEFAULT_MODEL);
    assert_eq!(c.max_file_size, 104_857_600);
    assert_eq!(c.url_max_bytes, 20 * 1024 * 1024);
    assert_eq!(c.chunk_token_budget, 110);
    assert_eq!(c.hybrid_weight, 0.6);
    assert_eq!(
        (c.grouping, c.max_distance, c.max_files),
        (None, None, None)
    );
    assert!(!c.allow_private_urls);
    assert!(c.cache_dir.contains("minirag-mcp"));
    assert_eq!(c.model_path, None);
}

#[test]
fn base_dir_and_base_dirs() {
    let c = load(&[("BASE_DIR", "/data/docs")]).unwrap();
    assert_eq!(
        (c.roots.as_slice(), c.db_path.as_str()),
        (&["/data/docs".to_string()][..], "/data/docs/.minirag/index")
    );
    let c = load(&[
        ("BASE_DIRS", r#"["/a", "~/b", "rel/../c"]"#),
        ("BASE_DIR", "/ignored"),
    ])
    .unwrap();
    assert_eq!(c.roots, ["/a", "/home/u/b", "/work/t/c"]);
    assert_eq!(c.db_path, "/a/.minirag/index");
    assert_eq!(load(&[("BASE_DIR", "   ")]).unwrap().roots, ["/work/t"]);
}

#[test]
fn invalid_base_dirs_name_the_variable() {
    for bad in ["/a:/b", "[]", r#"["ok",""]"#, "not json", r#""str""#] {
        let e = load(&[("BASE_DIRS", bad)]).unwrap_err();
        assert_eq!(e.variable, "BASE_DIRS");
        assert_eq!(e.value, bad);
        assert!(e.to_string().contains("JSON array"), "{e}");
    }
}

#[test]
fn flags_beat_env() {
    let flags = CliOverrides {
        base_dirs: vec!["/flag".into()],
        db_path: Some("/flagdb".into()),
        cache_dir: Some("/flagcache".into()),
        model_name: Some("flag/model".into()),
    };
    let c = load_with(
        &[
            ("BASE_DIRS", r#"["/env"]"#),
            ("DB_PATH", "/envdb"),
            ("MODEL_NAME", "env/model"),
        ],
        &flags,
    )
    .unwrap();
    assert_eq!(
        (
            c.roots[0].as_str(),
            c.db_path.as_str(),
            c.model_name.as_str(),
            c.cache_dir.as_str()
        ),
        ("/flag", "/flagdb", "flag/model", "/flagcache")
    );
}

#[test]
fn invalid_values_are_refused_with_the_variable_value_and_range() {
    for (var, bad) in [
        ("MAX_FILE_SIZE", "abc"),
        ("MAX_FILE_SIZE", "0"),
        ("URL_MAX_BYTES", "0"),
        ("URL_MAX_BYTES", "20MB"),
        ("CHUNK_TOKEN_BUDGET", "0"),
        ("CHUNK_TOKEN_BUDGET", "15"),
        ("CHUNK_TOKEN_BUDGET", "129"),
        ("RAG_HYBRID_WEIGHT", "1.5"),
        ("RAG_HYBRID_WEIGHT", "-0.1"),
        ("RAG_HYBRID_WEIGHT", "NaN"),
        ("RAG_GROUPING", "bogus"),
        ("RAG_GROUPING", ""),
        ("RAG_MAX_DISTANCE", "-1"),
        ("RAG_MAX_FILES", "0"),
        ("ALLOW_PRIVATE_URLS", "maybe"),
        ("ALLOW_PRIVATE_URLS", "2"),
        ("DB_PATH", " "),
        ("HF_HUB_DOWNLOAD_TIMEOUT", "0"),
        ("HF_HUB_DOWNLOAD_TIMEOUT", "10s"),
        ("HF_HUB_OFFLINE", "perhaps"),
    ] {
        let e = load(&[(var, bad)]).unwrap_err();
        assert_eq!((e.variable.as_str(), e.value.as_str()), (var, bad));
        let msg = e.to_string();
        assert!(
            msg.starts_with(&format!("{var}='{bad}' is invalid: expected ")),
            "{msg}"
        );
    }
}

#[test]
fn booleans() {
    for v in ["1", "true", "TRUE", "yes", " on "] {
        assert!(
            load(&[("ALLOW_PRIVATE_URLS", v)])
                .unwrap()
                .allow_private_urls,
            "{v}"
        );
    }
    for v in ["0", "false", "no", "off", ""] {
        assert!(
            !load(&[("ALLOW_PRIVATE_URLS", v)])
                .unwrap()
                .allow_private_urls,
            "{v}"
        );
    }
    assert!(load(&[("RAG_WATCH", "1")]).unwrap().watch);
    assert!(load(&[("HF_HUB_OFFLINE", "1")]).unwrap().hub_offline);
    assert!(!load(&[]).unwrap().hub_offline);
    assert_eq!(load(&[]).unwrap().download_timeout_secs, 10);
    assert_eq!(
        load(&[("HF_HUB_DOWNLOAD_TIMEOUT", "3")])
            .unwrap()
            .download_timeout_secs,
        3
    );
    assert!(!load(&[]).unwrap().watch);
    let e = load(&[("RAG_WATCH", "sometimes")]).unwrap_err();
    assert_eq!(e.variable, "RAG_WATCH");
    assert!(e.to_string().contains("one of 1, true"), "{e}");
}

#[test]
fn valid_values_parse() {
    let c = load(&[
        ("RAG_HYBRID_WEIGHT", "0.8"),
        ("RAG_GROUPING", "related"),
        ("RAG_MAX_DISTANCE", "0.5"),
        ("RAG_MAX_FILES", "2"),
        ("CHUNK_TOKEN_BUDGET", "16"),
        ("URL_MAX_BYTES", "1000"),
        ("MODEL_PATH", "~/models/minilm"),
        ("RAG_INSTRUCTIONS_APPEND", "  extra rule  "),
    ])
    .unwrap();
    assert_eq!(c.hybrid_weight, 0.8);
    assert_eq!(c.grouping, Some(Grouping::Related));
    assert_eq!(c.max_distance, Some(0.5));
    assert_eq!(c.max_files, Some(2));
    assert_eq!(c.chunk_token_budget, 16);
    assert_eq!(c.url_max_bytes, 1000);
    assert_eq!(c.model_path.as_deref(), Some("/home/u/models/minilm"));
    assert_eq!(c.instructions_append.as_deref(), Some("extra rule"));
    assert_eq!(
        load(&[("RAG_INSTRUCTIONS_APPEND", "  ")])
            .unwrap()
            .instructions_append,
        None
    );
    assert_eq!(
        load(&[("RAG_GROUPING", "similar")]).unwrap().grouping,
        Some(Grouping::Similar)
    );
}

#[test]
fn model_prefixes_are_taken_as_written() {
    let c = load(&[]).unwrap();
    assert_eq!(c.prompts, minirag_core::models::PromptOverride::default());
    let c = load(&[
        ("MODEL_QUERY_PREFIX", "query: "),
        ("MODEL_PASSAGE_PREFIX", ""),
    ])
    .unwrap();
    assert_eq!(
        c.prompts.query.as_deref(),
        Some("query: "),
        "the space stays"
    );
    assert_eq!(
        c.prompts.passage.as_deref(),
        Some(""),
        "set but empty: no prefix"
    );
}

#[test]
fn model_precision_is_fp32_unless_set_and_a_bad_value_names_the_choices() {
    use minirag_core::models::Precision;
    assert_eq!(load(&[]).unwrap().precision, Precision::Fp32);
    assert_eq!(
        load(&[("MODEL_PRECISION", " INT8 ")]).unwrap().precision,
        Precision::Int8
    );
    assert_eq!(
        load(&[("MODEL_PRECISION", "fp32")]).unwrap().precision,
        Precision::Fp32
    );
    let e = load(&[("MODEL_PRECISION", "fp16")])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("MODEL_PRECISION") && e.contains("fp16") && e.contains("int8"),
        "{e}"
    );
    assert_eq!(Precision::Int8.identity_suffix(), "+int8a8");
    assert_eq!(Precision::Fp32.identity_suffix(), "");
}

/// The loader's defaults and core's `Config::defaults` are written in two
/// places; they must agree.
#[test]
fn no_variables_give_cores_defaults() {
    assert_eq!(
        load(&[]).unwrap(),
        Config::defaults(
            vec!["/work/t".into()],
            "/work/t/.minirag/index".into(),
            "/home/u/.cache/minirag-mcp".into(),
        )
    );
}
