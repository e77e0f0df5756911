//! The sizeup command: parse, run, exit code. Errors become one or two lines on stderr.

fn main() {
    let cli = match sizeup::cli::Cli::parse_args(std::env::args_os().collect()) {
        Ok(cli) => cli,
        Err(e) => {
            eprint!("{}", if e.starts_with("error:") { e } else { format!("error: {e}\n") });
            std::process::exit(2);
        }
    };
    let code = match sizeup::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    };
    std::process::exit(code);
}
