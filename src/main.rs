//! The `madbayes` command line: `fit`, `demo`, `gen`.

mod cli;

fn main() {
    std::process::exit(cli::main());
}
