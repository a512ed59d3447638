//! The `madbayes` command line: `fit`, `demo`, `gen`.

mod cli;

/// mimalloc (its v2 series) instead of the system's allocator: a fit makes hundreds of
/// short-lived buffers per restart, and with glibc's allocator the measured fits ran 1.02–1.21×
/// slower, for 2–7 % less peak memory (docs/speed.md §2, "The allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(cli::main());
}
