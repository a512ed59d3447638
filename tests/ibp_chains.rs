//! Several chains of an IBP sampler: reproducible on any number of threads, chain 0 is the
//! single chain, and the posterior summaries recover the block images' truth when the chains
//! start there (features aligned across draws, row probabilities, the distribution of K).

use madbayes::Fit;
use madbayes::generate::block_images;
use madbayes::ibp::{IbpKind, IbpPosterior, IbpSampler, IbpValidParams};
use madbayes::{Model, RowMatrix};

fn params(kind: IbpKind, start: Option<RowMatrix>, sweeps: usize) -> IbpValidParams {
    let mut p = IbpSampler::params(kind)
        .alpha(1.0)
        .sigma_x(0.3)
        .sigma_a(1.0)
        .iterations(sweeps)
        .seed(5);
    if let Some(z) = start {
        p = p.start_from(z);
    }
    p.check().unwrap()
}

fn on_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

fn fingerprint(p: &IbpPosterior) -> Vec<u64> {
    let mut v: Vec<u64> = p
        .draws()
        .iter()
        .flat_map(|d| [d.chain as u64, d.sweep as u64, d.record.log_joint.to_bits()])
        .collect();
    for (_, d) in p.diagnostics().named() {
        v.extend([d.rhat.to_bits(), d.ess_bulk.to_bits(), d.ess_tail.to_bits()]);
    }
    v.extend(
        p.features()
            .row_probability
            .as_slice()
            .iter()
            .map(|x| x.to_bits()),
    );
    v
}

#[test]
fn chains_are_reproducible_and_chain_zero_is_the_single_chain() {
    let x = block_images(40, 0.5, 0.3, 2).unwrap().x;
    for kind in [
        IbpKind::Collapsed,
        IbpKind::SemiCollapsed,
        IbpKind::Accelerated,
    ] {
        let p = params(kind, None, 30);
        let one = on_pool(1, || p.fit_chains(&x, 3, 10).unwrap());
        let two = on_pool(2, || p.fit_chains(&x, 3, 10).unwrap());
        assert_eq!(fingerprint(&one), fingerprint(&two), "{kind:?}");
        let single = p.fit(&x).unwrap();
        let states = |f: &madbayes::ibp::IbpFit| -> Vec<(usize, u64)> {
            f.records()
                .iter()
                .map(|r| (r.k, r.log_joint.to_bits()))
                .collect()
        };
        assert_eq!(states(&one.chains()[0]), states(&single), "{kind:?}");
        assert_eq!(one.chains()[0].z(), single.z(), "{kind:?}");
        // Chains differ from one another (their own streams).
        assert_ne!(states(&one.chains()[0]), states(&one.chains()[1]));
        // 15 retained sweeps per chain thinned to at most 10: every 2nd, ending at the last.
        let sweeps: Vec<usize> = one
            .draws()
            .iter()
            .filter(|d| d.chain == 1)
            .map(|d| d.sweep)
            .collect();
        assert_eq!(sweeps, vec![16, 18, 20, 22, 24, 26, 28, 30]);
        let total: f64 = one.k_distribution().iter().map(|(_, p)| p).sum();
        assert!((total - 1.0).abs() < 1e-12);
        // The model answers for the best chain.
        let best = &one.chains()[one.best_chain()];
        assert!(
            one.chains()
                .iter()
                .all(|c| c.log_joint() <= best.log_joint())
        );
        assert_eq!(one.z(), best.z());
    }
}

#[test]
fn chains_started_at_the_truth_recover_its_features_and_rows() {
    let data = block_images(100, 0.5, 0.3, 3).unwrap();
    let p = params(IbpKind::Accelerated, Some(data.z.clone()), 60);
    let post = p.fit_chains(&data.x, 4, 20).unwrap();
    let f = post.features();
    let (n, k_true) = (data.z.n_rows(), data.z.n_cols());
    // Every true shape is matched by an aligned feature (mean within 0.2 per pixel) held in
    // nearly every draw, and its row probabilities reproduce the true column of Z.
    for t in 0..k_true {
        let j = (0..f.means.n_rows())
            .min_by(|&a, &b| {
                let da = dist(f.means.row(a), data.a.row(t));
                let db = dist(f.means.row(b), data.a.row(t));
                da.total_cmp(&db)
            })
            .expect("features");
        let worst = f
            .means
            .row(j)
            .iter()
            .zip(data.a.row(t))
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f64, f64::max);
        assert!(worst < 0.2, "shape {t}: worst pixel off by {worst}");
        assert!(
            f.match_rate[j] > 0.9,
            "shape {t}: matched in {}",
            f.match_rate[j]
        );
        let agree = (0..n)
            .filter(|&i| (f.row_probability.row(i)[j] > 0.5) == (data.z.row(i)[t] != 0.0))
            .count();
        assert!(agree >= n * 95 / 100, "shape {t}: {agree} of {n} rows");
    }
    // Chains that start and stay at the truth agree on K.
    assert!(post.diagnostics().k.rhat < 1.1, "{:?}", post.diagnostics());
    assert!(
        post.k_distribution()
            .iter()
            .any(|&(k, p)| k == k_true && p > 0.5)
    );
}

fn dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}
