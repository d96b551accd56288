//! Prints what the converter makes of a file: `cargo run -p minirag-convert --example convert_file -- FILE`.

use minirag_convert::Converters;
use minirag_core::ports::{ConvertRequest, Converter};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: convert_file FILE");
        std::process::exit(2);
    };
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: cannot read {path}: {e}");
            std::process::exit(1);
        }
    };
    let format = path.rsplit('.').next().unwrap_or("").to_ascii_lowercase();
    match Converters.convert(ConvertRequest {
        name: &path,
        format: &format,
        bytes: &bytes,
    }) {
        Ok(c) => {
            if let Some(t) = c.metadata_title {
                println!("<!-- title: {t} -->");
            }
            println!("{}", c.markdown);
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
