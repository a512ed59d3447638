//! The command line's one table of algorithms: for every `--algo`, its family, what `--k`
//! means to it, whether it takes a penalty, whether it has a refinement and a `--plain`
//! form, and its library defaults. `fit`, `path`, the checks and the pictures read it, so a
//! new algorithm is a variant of [`Algo`], a row of [`ALGOS`], and the builder call in
//! `fit::check_params`.

/// The algorithms `fit` can run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// K-means (k-means++ seeding, Lloyd); needs --k.
    Kmeans,
    /// DP-means; needs --penalty, --k caps the number of clusters.
    DpMeans,
    /// Collapsed DP-means (exact coordinate descent); needs --penalty, --k caps K.
    CollapsedDpMeans,
    /// Mahalanobis clustering (cluster covariances); needs --k and --penalty.
    Mahalanobis,
    /// BP-means (latent features); needs --penalty, --k caps the number of features.
    BpMeans,
    /// Collapsed BP-means; needs --penalty, --k caps K.
    CollapsedBpMeans,
    /// K-features (K fixed); needs --k.
    KFeatures,
    /// Stepwise K-features (K = 1, 2, … until the BP-means objective rises); needs --penalty.
    StepwiseKFeatures,
    /// Collapsed Gibbs sampler for the linear-Gaussian IBP (Griffiths & Ghahramani).
    IbpGibbs,
    /// Semi-collapsed Gibbs sampler (A instantiated, new features integrated out).
    IbpSemicollapsed,
    /// Accelerated Gibbs sampler (Doshi-Velez & Ghahramani 2009); --window rows at a time.
    IbpAccelerated,
    /// MEIBP (Reed & Ghahramani 2013), nonnegative features; needs --k, the most features.
    Meibp,
}

/// The families, which decide the result's files and pictures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Hard clusters: labels, means.
    Clustering,
    /// Binary latent features: Z, A.
    Features,
    /// The IBP methods (Gibbs chains and MEIBP): Z, A and a log joint per sweep.
    Ibp,
}

/// What `--k` means to an algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KRole {
    /// The number of clusters or features; required.
    Number,
    /// The largest number allowed; optional.
    Cap,
    /// MEIBP: the largest number of features; required.
    RequiredCap,
    /// Does not apply.
    None,
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct AlgoInfo {
    pub algo: Algo,
    /// The name on the command line.
    pub name: &'static str,
    pub family: Family,
    pub k: KRole,
    /// `--penalty` is required (for the samplers it only serves `--init bp-means`).
    pub penalty: bool,
    /// Has a refinement (on by default) and a `--plain` form without it.
    pub refine: bool,
    /// Has a `--plain` form (the paper's algorithm as published).
    pub plain: bool,
    /// Restarts when `--restarts` is not given (the library's default; `None`: one chain).
    pub restarts: Option<usize>,
    /// Iteration cap when `--max-iter` is not given (the library's default).
    pub max_iter: usize,
}

use madbayes::clustering::{dp_means, kmeans, mahalanobis};
use madbayes::features;
use madbayes::ibp::Meibp;

/// Every algorithm, in the order of [`Algo`].
pub const ALGOS: [AlgoInfo; 12] = [
    row(Algo::Kmeans, "kmeans", Family::Clustering, KRole::Number)
        .defaults(kmeans::DEFAULT_RESTARTS, kmeans::DEFAULT_MAX_ITER),
    row(Algo::DpMeans, "dp-means", Family::Clustering, KRole::Cap)
        .penalty()
        .refined()
        .defaults(dp_means::DEFAULT_RESTARTS, dp_means::DEFAULT_MAX_ITER),
    row(
        Algo::CollapsedDpMeans,
        "collapsed-dp-means",
        Family::Clustering,
        KRole::Cap,
    )
    .penalty()
    .refined()
    .defaults(dp_means::DEFAULT_RESTARTS, dp_means::DEFAULT_MAX_ITER),
    row(
        Algo::Mahalanobis,
        "mahalanobis",
        Family::Clustering,
        KRole::Number,
    )
    .penalty()
    .defaults(mahalanobis::DEFAULT_RESTARTS, mahalanobis::DEFAULT_MAX_ITER),
    row(Algo::BpMeans, "bp-means", Family::Features, KRole::Cap)
        .penalty()
        .refined()
        .defaults(features::DEFAULT_RESTARTS, features::DEFAULT_MAX_ITER),
    row(
        Algo::CollapsedBpMeans,
        "collapsed-bp-means",
        Family::Features,
        KRole::Cap,
    )
    .penalty()
    .plain_only()
    .defaults(features::DEFAULT_RESTARTS, features::DEFAULT_MAX_ITER),
    row(
        Algo::KFeatures,
        "k-features",
        Family::Features,
        KRole::Number,
    )
    .refined()
    .defaults(features::DEFAULT_RESTARTS, features::DEFAULT_MAX_ITER),
    row(
        Algo::StepwiseKFeatures,
        "stepwise-k-features",
        Family::Features,
        KRole::Cap,
    )
    .penalty()
    .refined()
    .defaults(features::DEFAULT_RESTARTS, features::DEFAULT_MAX_ITER),
    // The samplers' `--plain`: the fixed hyperparameters and single-entry Gibbs of the
    // papers, without the resampling, split–merge and block moves of the defaults.
    row(Algo::IbpGibbs, "ibp-gibbs", Family::Ibp, KRole::None).plain_only(),
    row(
        Algo::IbpSemicollapsed,
        "ibp-semicollapsed",
        Family::Ibp,
        KRole::None,
    )
    .plain_only(),
    row(
        Algo::IbpAccelerated,
        "ibp-accelerated",
        Family::Ibp,
        KRole::None,
    )
    .plain_only(),
    row(Algo::Meibp, "meibp", Family::Ibp, KRole::RequiredCap)
        .iteration_cap(Meibp::DEFAULT_MAX_ITER),
];

/// A row with no penalty, no refinement, no restarts (one chain or run: the IBP methods'
/// `--restarts` serves `--init bp-means`) and the feature family's iteration cap (that of
/// the samplers' `--init bp-means`; MEIBP's row sets its own library's).
const fn row(algo: Algo, name: &'static str, family: Family, k: KRole) -> AlgoInfo {
    AlgoInfo {
        algo,
        name,
        family,
        k,
        penalty: false,
        refine: false,
        plain: false,
        restarts: None,
        max_iter: features::DEFAULT_MAX_ITER,
    }
}

impl AlgoInfo {
    const fn penalty(mut self) -> Self {
        self.penalty = true;
        self
    }
    const fn refined(mut self) -> Self {
        self.refine = true;
        self.plain = true;
        self
    }
    const fn plain_only(mut self) -> Self {
        self.plain = true;
        self
    }
    const fn iteration_cap(mut self, max_iter: usize) -> Self {
        self.max_iter = max_iter;
        self
    }
    const fn defaults(mut self, restarts: usize, max_iter: usize) -> Self {
        self.restarts = Some(restarts);
        self.max_iter = max_iter;
        self
    }
}

impl Algo {
    /// This algorithm's row of [`ALGOS`].
    pub fn info(self) -> &'static AlgoInfo {
        let info = &ALGOS[self as usize];
        debug_assert_eq!(info.algo, self, "ALGOS follows the order of Algo");
        info
    }

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The algorithms of one family.
    pub fn family(self) -> Family {
        self.info().family
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// The table has one row per variant, in order, under the name clap gives it.
    #[test]
    fn one_row_per_algorithm_in_order() {
        assert_eq!(Algo::value_variants().len(), ALGOS.len());
        for (i, algo) in Algo::value_variants().iter().enumerate() {
            assert_eq!(ALGOS[i].algo, *algo);
            let clap_name = algo.to_possible_value().unwrap().get_name().to_string();
            assert_eq!(ALGOS[i].name, clap_name);
        }
    }

    /// A refinement always comes with a `--plain` form; a number K and a penalty never both
    /// go missing (every algorithm is told its model size one way or the other).
    #[test]
    fn rows_are_consistent() {
        for a in &ALGOS {
            assert!(!a.refine || a.plain, "{}", a.name);
            if a.family != Family::Ibp {
                assert!(a.penalty || a.k == KRole::Number, "{}", a.name);
                assert!(a.restarts.is_some(), "{}", a.name);
            }
        }
    }
}
