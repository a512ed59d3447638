//! The `madbayes` command line: `fit`, `demo`.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
