//! Pictures of results, drawn without plotting or font crates: an RGB raster canvas
//! ([`canvas`]) with a built-in 5 × 7 bitmap font ([`font`]), line charts with axes and ticks
//! ([`chart`]: objective per iteration, penalty paths), and, when the data are images, the
//! learned means as pictures ([`pictures`]) and an overview contact sheet ([`sheet`]) in the
//! style of Figure 2 of the MAD-Bayes paper.
//!
//! Every function returns PNG bytes rather than writing files, so that the command line can
//! stage them with its other outputs; the same inputs always give the same bytes.

pub mod canvas;
pub mod chart;
pub mod font;
pub mod pictures;
pub mod sheet;
