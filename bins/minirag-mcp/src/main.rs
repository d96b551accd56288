//! `minirag-mcp`: with no arguments an MCP server on stdio, with a
//! subcommand a CLI over the same index.

mod app;
mod cli;
mod doctor;
mod http;
mod instructions;
mod payload;
mod reqlog;
mod resources;
mod server;
mod setup;
mod watch;

use clap::Parser;

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
