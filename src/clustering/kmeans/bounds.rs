//! Lloyd's assignment step with Hamerly's bounds ([`crate::clustering::mean_shifts`]): a row
//! whose own mean is provably nearer than every other mean keeps its label without its
//! distances to the other means being computed; only the other rows are searched, by the GEMM
//! screen of [`screened_nearest`], which also renews their lower bounds. The labels,
//! distances and so the means are those of the unbounded pass bit for bit
//! (`bounded_passes_give_the_unbounded_iterations` in lloyd.rs).

use crate::clustering::mean_shifts::{SLACK, Shifts, half_gaps, keeps_own};
use crate::linalg::{ROWS_AHEAD, SCREEN_ROWS, axpy, prefetch, screened_nearest, sq_dist};
use crate::{MatrixView, RowMatrix};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// What one block of rows contributes to an assignment pass.
pub(super) struct BlockPass {
    /// Rows whose label changed.
    pub changed: usize,
    /// Σ over the block, in row order, of the squared distance to the nearest mean.
    pub dist_sum: f64,
    /// Per-cluster sums of member rows (`K × D`, each in row order) and member counts.
    pub sums: RowMatrix,
    pub counts: Vec<usize>,
}

/// Labels and lower bounds of the rows of one block.
struct BlockRows {
    labels: Vec<usize>,
    lower: Vec<f64>,
}

/// The per-row state kept across Lloyd's iterations, in blocks of `block` rows: each block is
/// mapped by one thread at a time, so its lock is never contended.
pub(super) struct RowBounds {
    block: usize,
    blocks: Vec<Mutex<BlockRows>>,
    /// When false every row is searched (the reference the tests compare with).
    bounded: bool,
    /// Rows searched so far, over all passes.
    searched: AtomicUsize,
}

/// How far the means moved in the last update, and how far apart they are now.
pub(super) struct MeanMoves {
    shifts: Shifts,
    /// Half the distance from each mean to its nearest other mean (a lower bound; 0 when not
    /// computed, +∞ when there is no other mean).
    half_gap: Vec<f64>,
}

impl MeanMoves {
    /// Before the first update: nothing moved.
    pub fn none(means: &RowMatrix, n: usize) -> Self {
        MeanMoves {
            shifts: Shifts::none(),
            half_gap: half_gaps(means, n),
        }
    }

    /// The update from `old` to `new` means (same K and D).
    pub fn between(old: &RowMatrix, new: &RowMatrix, n: usize) -> Self {
        MeanMoves {
            shifts: Shifts::between(old, new, |_| true),
            half_gap: half_gaps(new, n),
        }
    }
}

impl RowBounds {
    /// `n` rows without labels, in blocks of `block` rows.
    pub fn new(n: usize, block: usize, bounded: bool) -> Self {
        let blocks = (0..n.div_ceil(block.max(1)))
            .map(|b| {
                let len = block.min(n - b * block);
                Mutex::new(BlockRows {
                    labels: vec![usize::MAX; len],
                    lower: vec![0.0; len],
                })
            })
            .collect();
        RowBounds {
            block,
            blocks,
            bounded,
            searched: AtomicUsize::new(0),
        }
    }

    /// Rows searched so far, over all passes.
    pub fn searched(&self) -> usize {
        self.searched.load(Ordering::Relaxed)
    }

    /// Every row's label, in row order.
    pub fn labels(&self) -> Vec<usize> {
        self.blocks
            .iter()
            .flat_map(|b| b.lock().expect("block lock").labels.clone())
            .collect()
    }

    /// One assignment pass over block `b` (rows `start..end` of `x`) against `means` (K ≥ 1,
    /// squared norms `m_norms`) after the update `moves`: each row's nearest mean, and the
    /// block's sums, counts and distances.
    pub fn pass_block(
        &self,
        b: usize,
        x: MatrixView<'_>,
        (start, end): (usize, usize),
        means: &RowMatrix,
        m_norms: &[f64],
        moves: &MeanMoves,
    ) -> BlockPass {
        debug_assert_eq!(start, b * self.block);
        let (k, d) = (means.n_rows(), means.n_cols());
        debug_assert!(k >= 1);
        let mut rows = self.blocks[b].lock().expect("block lock");
        let rows = &mut *rows;
        let mut out = BlockPass {
            changed: 0,
            dist_sum: 0.0,
            sums: RowMatrix::zeros(k, d),
            counts: vec![0; k],
        };
        let mut dist = vec![0.0; SCREEN_ROWS.min(end - start)];
        let mut searched: Vec<usize> = Vec::with_capacity(dist.len());
        let mut gathered: Vec<f64> = Vec::with_capacity(dist.len() * d);
        let mut c = start;
        while c < end {
            let ce = (c + SCREEN_ROWS).min(end);
            searched.clear();
            gathered.clear();
            for i in c..ce {
                // The rows are read in order: each is asked for ROWS_AHEAD rows before.
                if i + ROWS_AHEAD < end {
                    prefetch(x.row(i + ROWS_AHEAD));
                }
                let li = i - start;
                let own = rows.labels[li];
                if self.bounded && own != usize::MAX {
                    let lower = moves.shifts.lowered(rows.lower[li], own);
                    rows.lower[li] = lower;
                    let bound = lower.max(moves.half_gap[own]);
                    let dist_own = sq_dist(x.row(i), means.row(own));
                    if keeps_own(dist_own, bound, d) {
                        dist[i - c] = dist_own;
                        continue;
                    }
                }
                searched.push(i);
                gathered.extend_from_slice(x.row(i));
            }
            self.searched.fetch_add(searched.len(), Ordering::Relaxed);
            let batch = MatrixView::new(&gathered, searched.len(), d).expect("gathered whole rows");
            screened_nearest(batch, means.view(), m_norms, |j, _, best| {
                let i = searched[j];
                let best = best.expect("at least one mean");
                let li = i - start;
                if rows.labels[li] != best.label {
                    out.changed += 1;
                    rows.labels[li] = best.label;
                }
                rows.lower[li] = best.others_above.sqrt() * (1.0 - SLACK);
                dist[i - c] = best.dist;
            });
            for i in c..ce {
                let own = rows.labels[i - start];
                axpy(1.0, x.row(i), out.sums.row_mut(own));
                out.counts[own] += 1;
                out.dist_sum += dist[i - c];
            }
            c = ce;
        }
        out
    }
}
