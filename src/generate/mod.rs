//! Seeded synthetic data with known structure, for demos, tests and benchmarks.

mod blobs;

pub use blobs::{Blobs, gaussian_blobs, standard_normal};
