//! Cleaning a page before recognition: flatten uneven lighting, remove
//! speckle, stretch the contrast, binarise. Chosen on the fixtures
//! (tests/fixtures/ocr): on a noisy, low-contrast page with a lighting
//! gradient, Tesseract alone read nothing, and after these steps it read
//! the page; clean pages, sideways pages and Russian text read as before.

use std::path::Path;

use image::{imageops, GrayImage, ImageFormat, ImageReader, Limits};
use imageproc::contrast::{otsu_level, threshold, ThresholdType};
use imageproc::filter::median_filter;

/// Largest decode allocation: a 100 MP gray page is 100 MB.
const MAX_ALLOC: u64 = 512 << 20;
/// The lighting is estimated on a copy this many times smaller.
const BACKGROUND_SCALE: u32 = 8;
/// Share of the darkest and lightest pixels ignored by the stretch.
const STRETCH_CUTOFF: f64 = 0.01;

/// Whether `path` holds a format this decoder reads one frame of: TIFFs
/// may hold many pages, which Tesseract reads itself, uncleaned.
pub(crate) fn is_single_frame(path: &Path) -> bool {
    let format = ImageReader::open(path)
        .ok()
        .and_then(|r| r.with_guessed_format().ok())
        .and_then(|r| r.format());
    !matches!(format, Some(ImageFormat::Tiff) | None)
}

/// Decodes `from`, cleans it and writes it to `to` as a PGM: uncompressed,
/// so writing a 300 dpi page costs a copy, not a PNG encoder's time.
pub(crate) fn clean_file(from: &Path, to: &Path) -> Result<(), String> {
    let mut reader = ImageReader::open(from)
        .and_then(|r| r.with_guessed_format())
        .map_err(|e| e.to_string())?;
    let mut limits = Limits::default();
    limits.max_alloc = Some(MAX_ALLOC);
    reader.limits(limits);
    let gray = reader.decode().map_err(|e| e.to_string())?.to_luma8();
    let cleaned = clean(&gray);
    let mut pgm = format!("P5\n{} {}\n255\n", cleaned.width(), cleaned.height()).into_bytes();
    pgm.extend_from_slice(cleaned.as_raw());
    std::fs::write(to, pgm).map_err(|e| e.to_string())
}

pub(crate) fn clean(gray: &GrayImage) -> GrayImage {
    let flat = flatten(gray);
    let quiet = median_filter(&flat, 1, 1);
    let stretched = stretch(&quiet);
    let level = otsu_level(&stretched);
    threshold(&stretched, level, ThresholdType::Binary)
}

/// Divides out the page's lighting: the background is a heavily blurred
/// small copy; each pixel becomes 255 minus its darkness below it.
fn flatten(gray: &GrayImage) -> GrayImage {
    let (w, h) = gray.dimensions();
    let small = imageops::resize(
        gray,
        (w / BACKGROUND_SCALE).max(1),
        (h / BACKGROUND_SCALE).max(1),
        imageops::FilterType::Triangle,
    );
    let background = imageops::resize(
        &imageops::blur(&small, 3.0),
        w,
        h,
        imageops::FilterType::Triangle,
    );
    GrayImage::from_fn(w, h, |x, y| {
        let paper = background.get_pixel(x, y)[0];
        image::Luma([255 - paper.saturating_sub(gray.get_pixel(x, y)[0])])
    })
}

/// Maps the 1st..99th percentile of grey onto 0..255.
fn stretch(gray: &GrayImage) -> GrayImage {
    let mut histogram = [0u64; 256];
    for p in gray.pixels() {
        histogram[p[0] as usize] += 1;
    }
    let total: u64 = histogram.iter().sum();
    let cut = (total as f64 * STRETCH_CUTOFF) as u64;
    let percentile = |from_top: bool| {
        let mut seen = 0;
        let order: Box<dyn Iterator<Item = usize>> = if from_top {
            Box::new((0..256).rev())
        } else {
            Box::new(0..256)
        };
        for v in order {
            seen += histogram[v];
            if seen > cut {
                return v as i32;
            }
        }
        if from_top {
            255
        } else {
            0
        }
    };
    let (low, high) = (percentile(false), percentile(true));
    if high <= low {
        return gray.clone();
    }
    let mut out = gray.clone();
    for p in out.pixels_mut() {
        let v = (p[0] as i32 - low) * 255 / (high - low);
        p[0] = v.clamp(0, 255) as u8;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dim_gradient_page_becomes_black_ink_on_white() {
        // Paper fading from 200 to 140 left to right, ink 40 below it.
        let page = GrayImage::from_fn(200, 100, |x, y| {
            let paper = 200 - (x * 60 / 200) as u8;
            let ink = (40..60).contains(&y) && (20..180).contains(&x) && x % 10 < 5;
            image::Luma([if ink { paper - 40 } else { paper }])
        });
        let out = clean(&page);
        assert_eq!(out.get_pixel(5, 5)[0], 255, "paper is white");
        assert_eq!(out.get_pixel(190, 90)[0], 255, "dim paper is white too");
        assert_eq!(out.get_pixel(22, 50)[0], 0, "ink is black");
        assert_eq!(out.get_pixel(172, 50)[0], 0, "ink on dim paper is black");
    }
}
