//! `minirag-mcp`: with no arguments an MCP server on stdio, with a
//! subcommand a CLI over the same index.

mod app;
mod changes;
mod cli;
mod config_env;
mod doctor;
mod download_progress;
mod http;
mod instructions;
mod manpage;
mod page;
mod payload;
mod remote;
mod reqlog;
mod resources;
mod revision;
mod schema;
mod server;
mod setup;
mod setup_check;
mod stdio;
mod watch;

use clap::Parser;

/// mimalloc: a writer builds each generation of the index beside the views
/// that still read the last one, so small blocks are taken on one thread and
/// freed on another all the time, which glibc's allocator serves slowly
/// (docs/benchmarks.md). Built without transparent huge pages, which made
/// opening a large index slower and its heap larger.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    if std::env::args_os().len() <= 1 {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        let app = app::App::load(&Default::default());
        if let Err(e) = runtime.block_on(server::serve(app)) {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
        return;
    }
    let cli = cli::Cli::parse();
    match cli::run(cli) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}
