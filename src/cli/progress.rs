//! A progress bar over restarts on stderr, shown only when stderr is a terminal and the fit
//! lasts longer than a moment.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use madbayes::restarts::Observer;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

/// How long a fit runs before the bar appears.
const SHOW_AFTER: Duration = Duration::from_millis(500);

/// Counts finished restarts on a bar that appears after [`SHOW_AFTER`].
pub struct RestartBar {
    bar: Option<ProgressBar>,
    started: Instant,
}

impl RestartBar {
    /// A bar labelled `what`, or nothing when stderr is not a terminal or `quiet` is set.
    pub fn new(what: &str, quiet: bool) -> Self {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
            let style = ProgressStyle::with_template(
                "{prefix} [{elapsed_precise}] {bar:30} {pos}/{len} runs (eta {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            bar.set_style(style);
            bar.set_prefix(what.to_string());
            bar
        });
        Self {
            bar,
            started: Instant::now(),
        }
    }

    /// Removes the bar from the screen.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }

    /// Starts a background ticker that reveals the bar once the fit has run for a while,
    /// even if no run has finished yet; the thread ends when the bar is finished.
    pub fn reveal_later(&self) -> Option<std::thread::JoinHandle<()>> {
        let bar = self.bar.clone()?;
        let started = self.started;
        Some(std::thread::spawn(move || {
            while !bar.is_finished() {
                if started.elapsed() >= SHOW_AFTER && bar.is_hidden() {
                    bar.set_draw_target(ProgressDrawTarget::stderr());
                    bar.enable_steady_tick(Duration::from_millis(200));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }))
    }
}

impl Observer for RestartBar {
    fn start(&self, runs: usize) {
        if let Some(bar) = &self.bar {
            bar.set_length(runs as u64);
        }
    }

    fn run_finished(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }
}
