//! Optimistic concurrency control (OCC) for DP-means and BP-means, after Pan, Gonzalez,
//! Jegelka, Broderick & Jordan, "Optimistic concurrency control for distributed unsupervised
//! learning" (NIPS 2013): the data are cut into P blocks of rows; in every **epoch** each
//! block processes its next b rows against the state at the epoch's start (the centres, or
//! the features A) and *proposes* new clusters or features; one serial **validation** takes
//! the proposals in a fixed order (block order, then row order) and accepts or resolves each
//! against what it has accepted earlier in the epoch; the accepted ones join the state. After
//! the last epoch the means (or A) come from sufficient statistics summed in block order.
//!
//! **Serializability.** An iteration equals one sweep of the serial algorithm over a
//! particular order of the rows: epoch by epoch, first the rows that proposed nothing (they
//! saw only the state at the epoch's start, as a serial sweep would if they came first), then
//! the proposals in validation order (each was beyond the penalty from the old state, so a
//! serial sweep's decision for it depends only on what was accepted before it, which is what
//! the validator checks). [`OccTrace`] records that order; the tests replay the serial
//! algorithm on it and get the same labels, Z, means and objective bit for bit. One strict
//! predicate (a squared distance or residual *greater than* P opens) is used by the workers,
//! the validator and the serial algorithm, so ties at exactly P cannot break the equality.
//!
//! **Online facility location.** [`OccOfl`] distributes Meyerson's one-pass OFL the same
//! way (Pan et al. §3.3): each row's random draw is fixed by the seed and its index, and the
//! validator re-tests a proposal against the facilities accepted before it with the same
//! draw, so the run equals serial OFL over the recorded order.
//!
//! **Engine independence.** The worker step ([`dp_propose`], [`bp_propose`]), the validators
//! ([`dp_validate`], [`bp_validate`]) and the statistics ([`ClusterStats`], [`FeatureStats`])
//! are plain functions of plain data, so any engine can run them: the in-process runners
//! here ([`OccDpMeans`], [`OccBpMeans`]) simulate the P blocks on the current rayon pool, and
//! the Python package's Dask driver runs the same functions on Dask workers. For a given
//! chunking and epoch size the answer never depends on the number of threads or workers.
//!
//! Distances and residuals are computed directly (x − a, x − z A), never by the GEMM
//! expansion, so that every party computes every decision from the same expression.

mod bp;
mod dp;
mod ofl;
mod params;

pub use bp::{BpProposals, BpValidation, FeatureStats, OccBpMeans, bp_propose, bp_validate};
pub use dp::{ClusterStats, DpProposals, DpValidation, OccDpMeans, dp_propose, dp_validate};
pub use ofl::{OccOfl, OflProposals, ofl_opens, ofl_propose, ofl_uniform, ofl_validate};
pub use params::{
    OccAlgo, OccBpMeansParams, OccBpMeansValidParams, OccDpMeansParams, OccDpMeansValidParams,
    OccOflParams, OccOflValidParams, OccParams, OccValidParams,
};

/// What an OCC run records beyond its result: for every iteration, the serial-equivalent
/// order of the rows and the number of proposals and acceptances of each epoch.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OccTrace {
    /// Per iteration, the rows (global indices) in the order a serial sweep would have to
    /// visit them to make the same decisions.
    pub orders: Vec<Vec<usize>>,
    /// Per iteration and epoch: (proposals, accepted).
    pub epochs: Vec<Vec<(usize, usize)>>,
}

impl OccTrace {
    /// Proposals over the whole run.
    pub fn proposals(&self) -> usize {
        self.epochs.iter().flatten().map(|e| e.0).sum()
    }
    /// Proposals the validator did not accept (they were resolved against earlier ones).
    pub fn rejections(&self) -> usize {
        self.epochs.iter().flatten().map(|e| e.0 - e.1).sum()
    }
}

/// A model fitted by OCC, with its [`OccTrace`].
#[derive(Clone, Debug)]
pub struct OccFit<M> {
    /// The fitted model.
    pub model: M,
    /// The serial-equivalent orders and the proposals per epoch.
    pub occ: OccTrace,
}

impl<M: crate::Model> crate::Model for OccFit<M> {
    fn z(&self) -> crate::BinaryMatrix {
        self.model.z()
    }
    fn means(&self) -> &crate::RowMatrix {
        self.model.means()
    }
    fn objective(&self) -> f64 {
        self.model.objective()
    }
    fn trace(&self) -> &[f64] {
        self.model.trace()
    }
    fn n_iter(&self) -> usize {
        self.model.n_iter()
    }
    fn stop(&self) -> crate::Stop {
        self.model.stop()
    }
    fn predict_z(&self, x: crate::MatrixView<'_>) -> Result<crate::BinaryMatrix, crate::FitError> {
        self.model.predict_z(x)
    }
}

/// The row ranges of `n` rows cut into `blocks` contiguous blocks of sizes as equal as
/// possible (the first `n mod blocks` one row longer), as a row-chunked array is.
pub fn even_blocks(n: usize, blocks: usize) -> Vec<std::ops::Range<usize>> {
    let blocks = blocks.max(1);
    let (q, r) = (n / blocks, n % blocks);
    let mut start = 0;
    (0..blocks)
        .map(|i| {
            let len = q + usize::from(i < r);
            let range = start..start + len;
            start += len;
            range
        })
        .collect()
}

/// Checks block ranges: contiguous, in order, covering `0..n` exactly.
fn check_blocks(blocks: &[std::ops::Range<usize>], n: usize) -> Result<(), crate::FitError> {
    let mut next = 0;
    for b in blocks {
        if b.start != next || b.end < b.start {
            return Err(crate::FitError::Shape(format!(
                "the blocks must be contiguous row ranges in order covering all {n} rows; block {b:?} starts at {} where {next} was expected",
                b.start
            )));
        }
        next = b.end;
    }
    if next != n || blocks.is_empty() {
        return Err(crate::FitError::Shape(format!(
            "the blocks cover {next} rows but the data have {n}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod block_tests {
    use super::*;

    #[test]
    fn even_blocks_cover_the_rows_in_order() {
        assert_eq!(even_blocks(10, 3), vec![0..4, 4..7, 7..10]);
        assert_eq!(even_blocks(2, 4), vec![0..1, 1..2, 2..2, 2..2]);
        assert!(check_blocks(&even_blocks(10, 3), 10).is_ok());
        assert!(check_blocks(&[0..4, 5..10], 10).is_err());
        assert!(check_blocks(std::slice::from_ref(&(0..4)), 10).is_err());
        assert!(check_blocks(&[], 0).is_err());
    }
}
