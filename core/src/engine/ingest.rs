//! Ingest: convert → title → chunk → embed → replace, for files, text
//! passed in and fetched URLs, and the re-embedding of stored chunks.

use std::borrow::Cow;

pub(super) use crate::progress::{SyncControl, EMBED_BATCH};

use super::Engine;
use crate::chunk::{pack_sections, section_markdown, Chunk, ChunkOptions};
use crate::datauri::strip_data_uri_images;
use crate::error::EngineError;
use crate::formats::{self, FormatKind};
use crate::location::Place;
use crate::meta::Declared;
use crate::plural::counted;
use crate::ports::{
    ConvertRequest, Converted, EmbedError, Embeddings, FileError, Readiness, SourceAttributes,
    SourceRecord, SourceType,
};
use crate::scan_rules::admits_file;
use crate::search::scope::Scope;
use crate::time::iso_utc;
use crate::title::{content_title, file_title, image_title};
use crate::unreadable::Glyphs;
use crate::CHUNK_SCHEME;

/// What an ingest stored.
#[derive(Debug, Clone, PartialEq)]
pub struct IngestOutcome {
    /// The source as indexed: a path, URL or data id.
    pub source: String,
    /// Chunks it was cut into.
    pub chunk_count: usize,
    /// Its title.
    pub title: String,
    /// Set when the chunks were stored without vectors (model unavailable),
    /// or when part of the text read as badly encoded.
    pub notice: Option<String>,
    /// The parts about the file itself (badly encoded text, declared fields
    /// dropped for their size), which a sync reports per file (the model's
    /// notices it reports once).
    pub unreadable: Option<String>,
    /// Chunks the encoder embedded; the others' vectors came from the
    /// chunk-text cache (or none were made).
    pub embedded: usize,
}

/// A converted and chunked document waiting to be embedded and written.
#[derive(Debug, Clone)]
pub struct PreparedIngest {
    source: String,
    source_type: SourceType,
    title: String,
    title_seeded: bool,
    chunks: Vec<Chunk>,
    file_hash: String,
    mtime: f64,
    ocr_engine: String,
    attributes: SourceAttributes,
    /// Says how many lines read as badly encoded, when any do, and why the
    /// declared fields were dropped, when they were.
    unreadable: Option<String>,
}

impl PreparedIngest {
    /// The source this ingest will write.
    pub fn source(&self) -> &str {
        &self.source
    }
}

/// Title decision for one ingest.
struct Titled {
    title: String,
    seed: bool,
}

impl Engine {
    /// Ingests a file already read by the caller. `path` is the resolved
    /// absolute path (the source id); `file_hash` the sha256 hex of `bytes`.
    pub fn ingest_file(
        &self,
        path: &str,
        bytes: &[u8],
        file_hash: &str,
        mtime: f64,
    ) -> Result<IngestOutcome, EngineError> {
        self.commit(self.prepare_file(path, bytes, file_hash, mtime)?)
    }

    /// Reads a file through the [`Files`] port and ingests it.
    pub fn ingest_path(&self, path: &str) -> Result<IngestOutcome, EngineError> {
        self.commit(self.prepare_path(path)?)
    }

    /// [`Engine::prepare_path`], reporting OCR pages to a sync's progress
    /// and stopping between pages once its `cancel` is set.
    pub(crate) fn prepare_path_controlled(
        &self,
        path: &str,
        control: Option<SyncControl<'_>>,
    ) -> Result<PreparedIngest, EngineError> {
        let max = self.settings.max_file_size;
        let read = self.ports.files.read(path, max).map_err(|e| match e {
            FileError::TooLarge { path, size } => EngineError::TooLarge { path, size, max },
            e => EngineError::File(e),
        })?;
        let converted = self.convert_file(path, &read.bytes, control)?;
        // The file's bytes go before chunking: a big file's bytes, Markdown
        // and chunks are never all in memory at once.
        drop(read.bytes);
        self.prepare_converted(path, converted, &read.sha256, read.mtime)
    }

    /// Reads (refusing files over `MAX_FILE_SIZE` before reading them),
    /// converts and chunks a file: what a sync runs ahead of the embedder.
    pub(crate) fn prepare_path(&self, path: &str) -> Result<PreparedIngest, EngineError> {
        self.prepare_path_controlled(path, None)
    }

    /// The CPU-light first half of a file ingest (checks, convert, title,
    /// chunk), so a sync can prepare the next files while this one embeds.
    pub(crate) fn prepare_file(
        &self,
        path: &str,
        bytes: &[u8],
        file_hash: &str,
        mtime: f64,
    ) -> Result<PreparedIngest, EngineError> {
        self.prepare_file_controlled(path, bytes, file_hash, mtime, None)
    }

    /// Checks a file's format and size, converts it (OCR where needed) and
    /// finds its title: (converted, title, OCR engine).
    fn convert_file(
        &self,
        path: &str,
        bytes: &[u8],
        control: Option<SyncControl<'_>>,
    ) -> Result<(Converted, String, String), EngineError> {
        let extension = file_extension(path);
        let format = match formats::by_extension(&extension) {
            Some(f) => f,
            None => {
                return Err(EngineError::UnsupportedExtension {
                    path: path.into(),
                    extension,
                })
            }
        };
        let size = bytes.len() as u64;
        if size > self.settings.max_file_size {
            return Err(EngineError::TooLarge {
                path: path.into(),
                size,
                max: self.settings.max_file_size,
            });
        }
        Ok(match format.kind {
            FormatKind::Image => {
                let (converted, engine) = self.recognise_image(path, bytes)?;
                (converted, image_title(path), engine)
            }
            FormatKind::Document => {
                let (converted, engine) =
                    self.convert_with_ocr(path, format.key, bytes, control)?;
                let title = file_title(
                    path,
                    converted.metadata_title.as_deref(),
                    &converted.markdown,
                );
                (converted, title, engine)
            }
        })
    }

    fn prepare_file_controlled(
        &self,
        path: &str,
        bytes: &[u8],
        file_hash: &str,
        mtime: f64,
        control: Option<SyncControl<'_>>,
    ) -> Result<PreparedIngest, EngineError> {
        let converted = self.convert_file(path, bytes, control)?;
        self.prepare_converted(path, converted, file_hash, mtime)
    }

    /// A converted file (Markdown, title, OCR engine) → its chunks.
    fn prepare_converted(
        &self,
        path: &str,
        (converted, title, ocr_engine): (Converted, String, String),
        file_hash: &str,
        mtime: f64,
    ) -> Result<PreparedIngest, EngineError> {
        let titled = Titled { title, seed: true };
        let prepared = self.prepare(
            path,
            SourceType::File,
            (converted.markdown, converted.places, converted.meta),
            titled,
            file_hash,
            mtime,
        )?;
        Ok(PreparedIngest {
            ocr_engine,
            ..prepared
        })
    }

    /// Ingests caller-supplied content under an arbitrary id.
    pub fn ingest_data(
        &self,
        source: &str,
        data: &str,
        format: &str,
        title: Option<&str>,
    ) -> Result<IngestOutcome, EngineError> {
        apart_from_files(source)?;
        let (markdown, metadata_title, meta) = match format {
            "text" => (data.to_string(), None, Declared::default()),
            // Markdown and HTML through the converter: front matter and
            // `<meta>` fields are declared fields here as in files.
            "markdown" | "html" => {
                let c = self.ports.converter.convert(ConvertRequest {
                    name: source,
                    format: if format == "html" { "html" } else { "md" },
                    bytes: data.as_bytes(),
                })?;
                (c.markdown, c.metadata_title, c.meta)
            }
            other => {
                return Err(EngineError::BadFormat {
                    format: other.into(),
                })
            }
        };
        let titled = titled_or_id(
            content_title(title, metadata_title.as_deref(), &markdown),
            source,
        );
        let places = stored_lines();
        self.commit(self.prepare(
            source,
            SourceType::Data,
            (markdown, places, meta),
            titled,
            "",
            0.0,
        )?)
    }

    /// Fetches a URL through the [`Fetcher`] (which enforces the URL rules)
    /// and ingests it under `source` (default: the URL).
    pub fn ingest_url(
        &self,
        url: &str,
        source: Option<&str>,
        title: Option<&str>,
    ) -> Result<IngestOutcome, EngineError> {
        let source = source.map(str::trim).filter(|s| !s.is_empty());
        if let Some(named) = source {
            apart_from_files(named)?;
        }
        let fetched = self.ports.fetcher.fetch(url)?;
        let format = format_for_content_type(fetched.content_type.as_deref(), &fetched.final_url);
        let converted = self.ports.converter.convert(ConvertRequest {
            name: url,
            format,
            bytes: &fetched.bytes,
        })?;
        let source = source.unwrap_or(url);
        let titled = titled_or_id(
            content_title(
                title,
                converted.metadata_title.as_deref(),
                &converted.markdown,
            ),
            source,
        );
        let places = stored_lines();
        let markdown = (converted.markdown, places, converted.meta);
        self.commit(self.prepare(source, SourceType::Url, markdown, titled, "", 0.0)?)
    }

    /// Whether the page may hand out the file behind `source`: one that sync
    /// indexed from the file system, that the scan rules admit now, at the
    /// path the caller resolved (`resolved`, symlinks followed) as well.
    pub fn serves_original(&self, source: &str, resolved: &str) -> Result<bool, EngineError> {
        let roots = &self.settings.roots;
        if !admits_file(source, roots) || !admits_file(resolved, roots) {
            return Ok(false);
        }
        let records = self.ports.index.read()?.sources(&Scope::new([source]))?;
        Ok(records
            .iter()
            .any(|r| r.source == source && r.source_type == SourceType::File))
    }

    fn prepare(
        &self,
        source: &str,
        source_type: SourceType,
        (markdown, places, meta): (String, Vec<Place>, Declared),
        titled: Titled,
        file_hash: &str,
        mtime: f64,
    ) -> Result<PreparedIngest, EngineError> {
        let stripped = match strip_data_uri_images(&markdown) {
            Cow::Owned(s) => Some(s),
            Cow::Borrowed(_) => None,
        };
        let markdown = stripped.unwrap_or(markdown);
        if markdown.trim().is_empty() {
            return Err(EngineError::Empty {
                source: source.into(),
            });
        }
        let unreadable = joined(
            unreadable_notice(source, &markdown),
            dropped_fields_notice(source, &meta),
        );
        let attributes = SourceAttributes {
            language: self.ports.languages.detect(&markdown).map(String::from),
            meta: crate::meta::normalized(meta.into_pairs()),
        };
        let options = ChunkOptions {
            budget: self.settings.budget,
            title: titled.seed.then_some(titled.title.as_str()),
            counter: self.ports.tokens.as_ref(),
        };
        let sectioned = section_markdown(&markdown, options).with_places(places);
        // The sections own their text: the Markdown goes before packing.
        drop(markdown);
        let chunked = pack_sections(sectioned, options);
        if chunked.chunks.is_empty() {
            return Err(EngineError::Empty {
                source: source.into(),
            });
        }
        Ok(PreparedIngest {
            source: source.into(),
            source_type,
            title: titled.title,
            title_seeded: chunked.title_seeded,
            chunks: chunked.chunks,
            file_hash: file_hash.into(),
            mtime,
            ocr_engine: String::new(),
            attributes,
            unreadable,
        })
    }

    /// The second half of an ingest without embedding: the chunks are
    /// stored keyword-searchable and vector-less, for a later
    /// [`Engine::reembed`] (a sync's second phase).
    pub(crate) fn commit_keyword_only(
        &self,
        prepared: PreparedIngest,
    ) -> Result<IngestOutcome, EngineError> {
        self.store(prepared, None, None)
    }

    /// The second half of an ingest: embed (reusing unchanged chunks'
    /// vectors) and replace the source's chunks in one index write.
    pub fn commit(&self, prepared: PreparedIngest) -> Result<IngestOutcome, EngineError> {
        if self.ports.embedder.start() == Readiness::Pending {
            // A model still downloading is not waited for.
            let notice = "stored without vectors while the embedding model downloads; keyword \
                          search finds it now, and the next sync adds the vectors";
            return self.store(prepared, None, Some(notice.into()));
        }
        let texts: Vec<&str> = prepared.chunks.iter().map(|c| c.text.as_str()).collect();
        let embedded = self.embed_chunks(&texts);
        // Freed before the write: a Vec is dropped at the end of its scope,
        // and a big file's list of texts would outlive the index write
        // (and a compaction inside it) otherwise.
        drop(texts);
        let (vectors, notice, fresh) = match embedded {
            Ok((v, fresh)) => (Some(v), None, fresh),
            Err(EmbedError::Unavailable { reason, .. }) => (
                None,
                Some(format!(
                    "stored without vectors because the embedding model could not be loaded ({reason}); \
                     keyword search finds it now, and the next sync with a working model adds the vectors"
                )),
                0,
            ),
            // A bad answer costs the vectors, never the new text: the old
            // text would otherwise stay searchable as if it were current.
            Err(EmbedError::Failed { reason, .. }) => (
                None,
                Some(format!(
                    "stored without vectors because embedding failed ({reason}); keyword search \
                     finds it now, and the next sync tries the vectors again"
                )),
                0,
            ),
        };
        let mut out = self.store(prepared, vectors, notice)?;
        out.embedded = fresh;
        Ok(out)
    }

    /// Replaces the source's chunks (and vectors, when given) in one write.
    fn store(
        &self,
        prepared: PreparedIngest,
        vectors: Option<Embeddings>,
        notice: Option<String>,
    ) -> Result<IngestOutcome, EngineError> {
        let PreparedIngest {
            source,
            source_type,
            title,
            title_seeded,
            chunks,
            file_hash,
            mtime,
            ocr_engine,
            attributes,
            unreadable,
        } = prepared;
        let chunk_count = chunks.len();
        let record = SourceRecord {
            source: source.clone(),
            source_type,
            title: title.clone(),
            title_seeded,
            file_hash,
            mtime,
            ingested_at: iso_utc(self.ports.clock.now_unix_seconds()),
            chunk_count: chunk_count as u32,
            scheme_version: CHUNK_SCHEME,
            embedded_with: vectors
                .as_ref()
                .map(|_| self.ports.embedder.model_id().to_string()),
            ocr_engine,
            attributes,
        };
        self.ports.index.replace_source(record, chunks, vectors)?;
        let notice = joined(notice, unreadable.clone());
        Ok(IngestOutcome {
            source,
            chunk_count,
            title,
            notice,
            unreadable,
            embedded: 0,
        })
    }

    /// Embeds a source's stored chunks again with the current model (its
    /// bytes and scheme are current; its vectors are missing or of another
    /// model). Nothing is converted or chunked. It runs in batches of
    /// [`EMBED_BATCH`] chunks, each stored (durable) on its own: memory stays
    /// bounded by the batch whatever the source's size, and a killed run
    /// keeps what it finished, which the next run reuses through the
    /// embedding cache. After each batch `after_batch(embedded, total)` is
    /// told the source's progress; it returns `false` to stop there (a cancel).
    pub(crate) fn reembed(
        &self,
        source: &str,
        after_batch: &mut dyn FnMut(u32, u32) -> bool,
    ) -> Result<IngestOutcome, EngineError> {
        let record =
            self.ports
                .index
                .read()?
                .source(source)?
                .ok_or_else(|| EngineError::NotFound {
                    source: source.into(),
                })?;
        let total = record.chunk_count;
        let model = self.ports.embedder.model_id().to_string();
        let mut first = 0u32;
        let mut fresh = 0;
        while first < total {
            let last = first.saturating_add(EMBED_BATCH).min(total) - 1;
            let chunks = self.ports.index.read()?.chunks(source, first..=last)?;
            if chunks.len() as u32 != last - first + 1 {
                // Replaced or deleted meanwhile: the next sync plans it anew.
                return Err(EngineError::NotFound {
                    source: source.into(),
                });
            }
            let texts: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
            let (vectors, embedded) = self.embed_chunks(&texts)?;
            fresh += embedded;
            let complete = last + 1 == total;
            self.ports
                .index
                .set_vectors(source, &model, first, &texts, vectors, complete)?;
            first = last + 1;
            if !after_batch(first, total) && first < total {
                return Err(EngineError::Cancelled {
                    done: first as u64,
                    total: total as u64,
                    unit: "chunks to embed",
                });
            }
        }
        Ok(IngestOutcome {
            source: source.into(),
            chunk_count: total as usize,
            title: record.title,
            notice: None,
            unreadable: None,
            embedded: fresh,
        })
    }

    /// Embeds chunk texts in one batch, reusing stored vectors of unchanged
    /// texts; also how many the encoder embedded.
    fn embed_chunks(&self, texts: &[&str]) -> Result<(Embeddings, usize), EmbedError> {
        let embedder = &self.ports.embedder;
        let dim = embedder.dimension();
        // A cached vector of another width is no vector of this model.
        let cached: Vec<Option<Vec<f32>>> = self
            .ports
            .index
            .cached_vectors(embedder.model_id(), texts)
            .into_iter()
            .map(|c| c.filter(|v| v.len() == dim))
            .collect();
        let missing: Vec<&str> = texts
            .iter()
            .zip(&cached)
            .filter(|(_, c)| c.is_none())
            .map(|(t, _)| *t)
            .collect();
        let fresh = if missing.is_empty() {
            Embeddings::new(embedder.dimension())
        } else {
            embedder.embed_documents(&missing)?
        };
        let mut out = Embeddings::new(embedder.dimension());
        let mut next = 0;
        for c in &cached {
            match c {
                Some(v) => out.push(v),
                None => {
                    out.push(fresh.row(next));
                    next += 1;
                }
            }
        }
        Ok((out, missing.len()))
    }
}

/// Text passed in and fetched pages are located by the lines of the
/// Markdown they are stored as.
fn stored_lines() -> Vec<Place> {
    crate::location::file_lines()
}

/// Explicit or derived title; without one the id is stored and nothing seeded.
fn titled_or_id(title: Option<String>, source: &str) -> Titled {
    match title {
        Some(title) => Titled { title, seed: true },
        None => Titled {
            title: source.into(),
            seed: false,
        },
    }
}

/// Lower-case extension of the last path segment, without the dot.
pub(crate) fn file_extension(path: &str) -> String {
    let name = path.rsplit('/').next().unwrap_or(path);
    match name.rsplit_once('.') {
        Some((base, ext)) if !base.is_empty() => ext.to_lowercase(),
        _ => String::new(),
    }
}

/// Converter format for a fetched body: by media type, else by the URL's
/// extension, else HTML.
pub(super) fn format_for_content_type(content_type: Option<&str>, url: &str) -> &'static str {
    if let Some(f) = content_type.and_then(formats::by_content_type) {
        return f.key;
    }
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.rsplit('/')
        .next()
        .and_then(|n| n.rsplit_once('.'))
        .and_then(|(_, e)| formats::by_extension(&e.to_ascii_lowercase()))
        .filter(|f| f.kind == FormatKind::Document)
        .map_or("html", |f| f.key)
}

/// A caller-named source never looks like a file path (absolute, from the
/// home folder, or a drive), so it can never equal a file's key.
fn apart_from_files(source: &str) -> Result<(), EngineError> {
    let s = source.trim();
    let bytes = s.as_bytes();
    let drive = bytes.len() >= 3
        && bytes[0].is_ascii_alphabetic()
        && bytes[1] == b':'
        && matches!(bytes[2], b'/' | b'\\');
    if s.starts_with(['/', '~', '\\']) || drive {
        return Err(EngineError::SourceIsAPath {
            source: source.to_string(),
        });
    }
    Ok(())
}

/// Two notices as one.
fn joined(a: Option<String>, b: Option<String>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(format!("{a} {b}")),
        (a, b) => a.or(b),
    }
}

/// A notice when the fields a document declares were dropped for their
/// size: the text is indexed, the `meta` filter does not see them.
fn dropped_fields_notice(source: &str, meta: &Declared) -> Option<String> {
    let why = meta.over_budget()?;
    Some(format!(
        "The fields {source} declares about itself (front matter, document properties, PDF Info, \
         <meta>) were not read because {why}. Its text is indexed; the `meta` filter does not \
         see it until those fields are fixed."
    ))
}

/// A notice when lines of a document read as badly encoded: their words
/// cannot be searched. A PDF's fonts lack a Unicode map (OCR reads it);
/// another file was saved or converted with the wrong encoding.
fn unreadable_notice(source: &str, markdown: &str) -> Option<String> {
    let pdf = crate::formats::of_source(source).is_some_and(|f| f.key == "pdf");
    let glyphs = match pdf {
        true => Glyphs::FromFonts,
        false => Glyphs::Typed,
    };
    let mut lines = markdown
        .lines()
        .filter(|l| crate::unreadable::is_unreadable(l, glyphs));
    let first = lines.next()?;
    let count = 1 + lines.count();
    let sample: String = first.trim().chars().take(40).collect();
    let why = match pdf {
        true => {
            "The file's fonts give those glyphs no Unicode meaning, so search cannot find \
                 their words. A copy saved again from its source program, or run through OCR, \
                 would read."
        }
        false => {
            "They hold replacement or control characters where letters were: the file was \
                  saved or converted with the wrong encoding. Saved again as UTF-8, it would read."
        }
    };
    Some(format!(
        "{count} {} of {source} read as badly encoded text (first: {sample:?}). {why}",
        counted(count as u64, "line", "lines")
    ))
}
