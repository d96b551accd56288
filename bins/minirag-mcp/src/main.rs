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

fn main() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    one_malloc_arena();
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

/// glibc gives each thread that allocates its own arena, and memory freed
/// in one arena is not reused by another. A sync converts and chunks a file
/// on its reader thread and indexes it on another, so a big file left the
/// reader's freed buffers as holes beside the index (measured in
/// docs/benchmarks.md).
/// Small allocations still go through each thread's lock-free cache.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn one_malloc_arena() {
    // SAFETY: mallopt only sets an allocator parameter, and this runs first
    // in main, before any other thread of this process exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}
