//! The Indian-buffet-process samplers that MAD-Bayes' feature algorithms are compared
//! against, for the linear-Gaussian model X = Z A + E (E_nd ~ N(0, σ_X²), A_kd ~ N(0, σ_A²),
//! Z ~ IBP(α)):
//!
//! * [`model`]: the log prior of \[Z\], the collapsed likelihood p(X | Z) and the posterior of A;
//! * collapsed Gibbs (Griffiths & Ghahramani 2006; Doshi-Velez & Ghahramani 2009, "D-V&G",
//!   §3) with Sherman–Morrison updates of (ZᵀZ + σ_X²/σ_A² I)⁻¹;
//! * semi-collapsed Gibbs (D-V&G §3): A instantiated, new features integrated out;
//! * accelerated Gibbs (D-V&G §4, Algorithm 1): the posterior of A in information form,
//!   updated window by window;
//! * optionally, conjugate resampling of α, σ_X and σ_A once per sweep;
//! * MEIBP (Reed & Ghahramani 2013) for the nonnegative model: `Meibp::params(k_max)`.
//!
//! `IbpSampler::params(kind)` → `.check()` → `.fit(&x)` → [`IbpFit`]. Each chain draws from
//! `run_rng(seed, 0)` only, so a seed fixes the result whatever the thread count.

mod accelerated;
mod chains;
mod collapsed;
mod common;
mod dense;
pub mod erfcx;
mod hyper;
mod meibp;
mod missing;
pub mod model;
mod params;
pub mod recode;
mod semi;
pub mod split_merge;
mod state;

pub use chains::{
    AlignedFeatures, ChainDiagnostics, DEFAULT_CHAINS, DEFAULT_DRAWS, Draw, IbpPosterior,
};
#[doc(hidden)]
pub use common::BlockFault;
pub use meibp::{
    Extremes, Meibp, MeibpFit, MeibpParams, MeibpTraceRecord, MeibpValidParams, RowObjective,
};
pub use missing::{ColumnPosteriors, HiddenScore};
pub use model::{APosterior, a_posterior, collapsed_log_lik, log_ibp_prior};
pub(crate) use params::frequency_shift;
pub use params::{
    IbpDefaults, IbpFit, IbpKind, IbpParams, IbpSampler, IbpStart, IbpTraceRecord, IbpValidParams,
    data_std,
};
pub use recode::recode_steps;
pub use split_merge::split_merge_steps;
