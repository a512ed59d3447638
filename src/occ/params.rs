//! The parameters both OCC runners share: the penalty, how the rows are cut into blocks (the
//! simulated workers, or the chunks of a distributed array), the epoch size b, a cap on K and
//! the iteration cap. `OccDpMeans::params(P)` and `OccBpMeans::params(P)` start the builder.

use super::{OccBpMeans, OccDpMeans, OccFit, OccOfl, check_blocks, even_blocks};
use crate::MatrixView;
use crate::clustering::Clustering;
use crate::error::{FitError, ParamError, check_penalty};
use crate::features::FeatureModel;
use crate::model::{Fit, Model};
use crate::restarts::Observer;
use std::marker::PhantomData;
use std::ops::Range;

/// How the rows are cut into blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Blocks {
    /// This many contiguous blocks of (nearly) equal size.
    Even(usize),
    /// These contiguous row ranges, in order.
    Ranges(Vec<Range<usize>>),
}

/// What the parameters need to know of the algorithm they serve.
pub trait OccAlgo: Sized {
    /// The name, as errors spell it.
    const NAME: &'static str;
    /// Whether it iterates (OFL is one pass: `max_iter` does not apply).
    const ITERATES: bool;
    /// The fitted model.
    type Model: Model;
    /// The run ([`OccValidParams::fit_traced`] of each algorithm).
    fn run(p: &OccValidParams<Self>, x: MatrixView<'_>) -> Result<OccFit<Self::Model>, FitError>;
}

/// Every OCC runner fits through the common contract: one unit of progress, the model.
impl<A: OccAlgo> Fit for OccValidParams<A> {
    type Model = A::Model;

    fn fit_observed(
        &self,
        x: MatrixView<'_>,
        observer: &dyn Observer,
    ) -> Result<A::Model, FitError> {
        observer.start(1);
        let fit = A::run(self, x)?;
        observer.run_finished();
        Ok(fit.model)
    }
}

impl OccAlgo for OccDpMeans {
    const NAME: &'static str = "occ-dp-means";
    const ITERATES: bool = true;
    type Model = Clustering;
    fn run(p: &OccValidParams<Self>, x: MatrixView<'_>) -> Result<OccFit<Clustering>, FitError> {
        p.fit_traced(x)
    }
}

impl OccAlgo for OccBpMeans {
    const NAME: &'static str = "occ-bp-means";
    const ITERATES: bool = true;
    type Model = FeatureModel;
    fn run(p: &OccValidParams<Self>, x: MatrixView<'_>) -> Result<OccFit<FeatureModel>, FitError> {
        p.fit_traced(x)
    }
}

impl OccAlgo for OccOfl {
    const NAME: &'static str = "occ-ofl";
    const ITERATES: bool = false;
    type Model = Clustering;
    fn run(p: &OccValidParams<Self>, x: MatrixView<'_>) -> Result<OccFit<Clustering>, FitError> {
        p.fit_traced(x)
    }
}

/// Unchecked OCC parameters (a builder) for the algorithm `A` ([`OccDpMeans`],
/// [`OccBpMeans`] or [`OccOfl`]).
#[derive(Clone, Debug)]
pub struct OccParams<A>(OccValidParams<A>);

/// OCC parameters that passed [`OccParams::check`].
#[derive(Clone, Debug)]
pub struct OccValidParams<A> {
    pub(super) penalty: f64,
    blocks: Blocks,
    epoch_size: usize,
    k_max: Option<usize>,
    max_iter: Option<usize>,
    pub(super) seed: u64,
    algo: PhantomData<A>,
}

/// OCC DP-means parameters (a builder).
pub type OccDpMeansParams = OccParams<OccDpMeans>;
/// OCC DP-means parameters that passed the checks.
pub type OccDpMeansValidParams = OccValidParams<OccDpMeans>;
/// OCC BP-means parameters (a builder).
pub type OccBpMeansParams = OccParams<OccBpMeans>;
/// OCC BP-means parameters that passed the checks.
pub type OccBpMeansValidParams = OccValidParams<OccBpMeans>;
/// OCC online facility location parameters (a builder).
pub type OccOflParams = OccParams<OccOfl>;
/// OCC online facility location parameters that passed the checks.
pub type OccOflValidParams = OccValidParams<OccOfl>;

/// The iteration cap when none is given.
const DEFAULT_MAX_ITER: usize = 100;

impl<A: OccAlgo> OccParams<A> {
    /// Defaults: 8 blocks of contiguous rows, epochs of 256 rows per block, no cap on K, at
    /// most 100 iterations, seed 0 (OFL's only randomness).
    pub(super) fn new(penalty: f64) -> Self {
        Self(OccValidParams {
            penalty,
            blocks: Blocks::Even(8),
            epoch_size: 256,
            k_max: None,
            max_iter: None,
            seed: 0,
            algo: PhantomData,
        })
    }
    /// Cut the rows into `p` contiguous blocks of nearly equal size (the simulated workers).
    pub fn blocks(mut self, p: usize) -> Self {
        self.0.blocks = Blocks::Even(p);
        self
    }
    /// Cut the rows into these contiguous ranges, in order (as a row-chunked array is).
    pub fn block_ranges(mut self, ranges: Vec<Range<usize>>) -> Self {
        self.0.blocks = Blocks::Ranges(ranges);
        self
    }
    /// Rows each block processes per epoch (b).
    pub fn epoch_size(mut self, b: usize) -> Self {
        self.0.epoch_size = b;
        self
    }
    /// Caps the number of clusters or features.
    pub fn k_max(mut self, k: Option<usize>) -> Self {
        self.0.k_max = k;
        self
    }
    /// Iteration cap (DP-means and BP-means; OFL is one pass and refuses it).
    pub fn max_iter(mut self, m: usize) -> Self {
        self.0.max_iter = Some(m);
        self
    }
    /// Checks the rules that hold for any data.
    pub fn check(self) -> Result<OccValidParams<A>, ParamError> {
        let p = self.0;
        check_penalty(p.penalty)?;
        if p.k_max == Some(0) {
            return Err(ParamError::KZero(0));
        }
        match p.max_iter {
            Some(0) => return Err(ParamError::NoIterations),
            Some(_) if !A::ITERATES => {
                return Err(ParamError::NotApplicable {
                    option: "max-iter",
                    algo: A::NAME,
                });
            }
            _ => {}
        }
        for (name, zero) in [
            ("epoch-size", p.epoch_size == 0),
            ("blocks", p.blocks == Blocks::Even(0)),
        ] {
            if zero {
                return Err(ParamError::NotPositive { name, value: 0.0 });
            }
        }
        Ok(p)
    }
}

impl OccParams<OccOfl> {
    /// The seed of OFL's draws: row n of the data draws u_n from it and n alone, whatever
    /// the blocks, the epochs or the threads.
    pub fn seed(mut self, seed: u64) -> Self {
        self.0.seed = seed;
        self
    }
}

impl<A> OccValidParams<A> {
    /// The iteration cap.
    pub(super) fn max_iter(&self) -> usize {
        self.max_iter.unwrap_or(DEFAULT_MAX_ITER)
    }

    /// The block ranges for `n` rows, checked.
    pub(super) fn block_ranges(&self, n: usize) -> Result<Vec<Range<usize>>, FitError> {
        let r = match &self.blocks {
            Blocks::Even(p) => even_blocks(n, *p),
            Blocks::Ranges(r) => r.clone(),
        };
        check_blocks(&r, n)?;
        Ok(r)
    }

    /// The cap on K (no cap: `usize::MAX`).
    pub(super) fn k_cap(&self) -> usize {
        self.k_max.unwrap_or(usize::MAX)
    }

    /// Epochs per iteration: enough for the longest block.
    pub(super) fn epochs(&self, blocks: &[Range<usize>]) -> usize {
        blocks
            .iter()
            .map(|b| b.len().div_ceil(self.epoch_size))
            .max()
            .unwrap_or(0)
    }

    /// The rows each block processes in epoch `e` (empty once a block is done).
    pub(super) fn windows(&self, blocks: &[Range<usize>], e: usize) -> Vec<Range<usize>> {
        blocks
            .iter()
            .map(|b| {
                let s = (b.start + e * self.epoch_size).min(b.end);
                s..(s + self.epoch_size).min(b.end)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn impossible_parameters_are_refused() {
        let refused = |p: OccDpMeansParams| p.check().map(|_| ()).unwrap_err();
        assert!(matches!(
            refused(OccDpMeans::params(0.0)),
            ParamError::Penalty(_)
        ));
        assert!(matches!(
            refused(OccDpMeans::params(1.0).epoch_size(0)),
            ParamError::NotPositive {
                name: "epoch-size",
                ..
            }
        ));
        assert!(matches!(
            refused(OccDpMeans::params(1.0).blocks(0)),
            ParamError::NotPositive { name: "blocks", .. }
        ));
        assert_eq!(
            refused(OccDpMeans::params(1.0).k_max(Some(0))),
            ParamError::KZero(0)
        );
        assert_eq!(
            refused(OccDpMeans::params(1.0).max_iter(0)),
            ParamError::NoIterations
        );
        assert_eq!(
            OccOfl::params(1.0).max_iter(5).check().map(|_| ()),
            Err(ParamError::NotApplicable {
                option: "max-iter",
                algo: "occ-ofl"
            })
        );
        let p = OccBpMeans::params(1.0)
            .blocks(3)
            .epoch_size(2)
            .check()
            .unwrap();
        let blocks = p.block_ranges(10).unwrap();
        assert_eq!(blocks, vec![0..4, 4..7, 7..10]);
        assert_eq!(p.epochs(&blocks), 2);
        assert_eq!(p.windows(&blocks, 1), vec![2..4, 6..7, 9..10]);
        assert!(
            OccBpMeans::params(1.0)
                .block_ranges(vec![0..4, 5..10])
                .check()
                .unwrap()
                .block_ranges(10)
                .is_err()
        );
    }
}
