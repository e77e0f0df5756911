//! The sizeup command: parse, run, exit code. Errors become one or two lines on stderr.

use clap::Parser;

fn main() {
    let cli = sizeup::cli::Cli::parse();
    let code = match sizeup::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    };
    std::process::exit(code);
}
