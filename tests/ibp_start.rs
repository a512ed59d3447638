//! A chain started at the true Z of data drawn from the model stays in the posterior's bulk:
//! on X from the IBP linear-Gaussian prior (N = 100, D = 10, α = 2, σ_A = 2, σ_X = 0.2, the
//! setting of Doshi-Velez & Ghahramani's Table 2), every sampler started at the truth keeps a
//! log joint within 30 nats of the truth's over 150 sweeps (measured: within 10).
//!
//! Started from Z drawn from the prior instead, at σ_X = 0.2 from the first sweep
//! (`anneal(0)`), the same chains sit near −2 300 after 300 sweeps with 39–47 features
//! (truth: −330, K = 8; seed 1, 2026-11-26); see docs/results.md, "IBP samplers and MEIBP".
//! That gap is the samplers' slow mixing, not a wrong target: this test and the
//! exact-posterior tests (`ibp_exact.rs`) check the target. With σ_X tempered, as the
//! defaults do when σ_X is given, the chains from the defaults' empty start end near the
//! truth (the second test).
//!
//! At a σ_X fixed *above* the level at which one row pays for a feature, an empty start never
//! opens one; the defaults' mixed start puts a prior draw on every other chain of a fit, and
//! that chain is the one that escapes (the third test).

use madbayes::RowMatrix;
use madbayes::generate::{block_images, ibp_linear_gaussian};
use madbayes::ibp::{IbpKind, IbpSampler, collapsed_log_lik, log_ibp_prior};
use madbayes::{Fit, Model};

#[test]
fn chains_started_at_the_truth_stay_near_it() {
    let g = ibp_linear_gaussian(100, 10, 2.0, 2.0, 0.2, 1).unwrap();
    let truth = collapsed_log_lik(g.x.view(), &g.z, 0.2, 2.0) + log_ibp_prior(&g.z, 2.0);
    for kind in [
        IbpKind::Collapsed,
        IbpKind::SemiCollapsed,
        IbpKind::Accelerated,
    ] {
        let fit = IbpSampler::params(kind)
            .alpha(2.0)
            .sigma_x(0.2)
            .sigma_a(2.0)
            .iterations(150)
            .seed(5)
            .start_from(g.z.clone())
            .check()
            .unwrap()
            .fit(&g.x)
            .unwrap();
        let worst = fit
            .records()
            .iter()
            .map(|r| r.log_joint)
            .fold(f64::INFINITY, f64::min);
        println!("{kind:?}: truth {truth:.1}, lowest log joint of the chain {worst:.1}");
        assert!(worst > truth - 30.0, "{kind:?}: {worst} vs truth {truth}");
    }
}

/// From the defaults' empty start with α, σ_X, σ_A given as above (σ_X is then tempered, and
/// σ_A resampled beside it over the tempered sweeps, `IbpParams::anneal`), the collapsed and
/// accelerated chains reach the true Z's log joint: within 30 nats after 300 sweeps on three
/// data sets of this setting (measured: 21.7 nats below, the accelerated chain of seed 2, to
/// 0.9 above; with σ_A held at 2 throughout, 23 below to 1.3 above). Untempered
/// (`anneal(0)`), the same chains end 1 100–2 950 nats below it with 27–59 features, and this
/// test fails. The semi-collapsed chains, left out here, end up to 48 nats below
/// (docs/ibp.md, "A fixed σ_X tempered").
#[test]
fn chains_from_the_defaults_reach_the_truth_when_the_hyperparameters_are_given() {
    for seed in 1..=3 {
        let g = ibp_linear_gaussian(100, 10, 2.0, 2.0, 0.2, seed).unwrap();
        let truth = collapsed_log_lik(g.x.view(), &g.z, 0.2, 2.0) + log_ibp_prior(&g.z, 2.0);
        for kind in [IbpKind::Collapsed, IbpKind::Accelerated] {
            let fit = IbpSampler::params(kind)
                .alpha(2.0)
                .sigma_x(0.2)
                .sigma_a(2.0)
                .iterations(300)
                .seed(seed + 1000)
                .check()
                .unwrap()
                .fit(&g.x)
                .unwrap();
            let end = fit.log_joint();
            println!("seed {seed} {kind:?}: truth {truth:.1}, end {end:.1}");
            assert!(
                end > truth - 30.0,
                "seed {seed} {kind:?}: {end} vs truth {truth}"
            );
        }
    }
}

/// Block images (N = 500, noise 0.5, centred; the data's sd is 0.64) at α = 1, σ_X = 0.8,
/// σ_A = 1 fixed: σ_X is above the defaults' start, so nothing is tempered, and from an empty Z
/// no single row pays for a feature, so chain 0 stays at K = 0. Chain 1 of the defaults' mixed
/// start begins at a prior draw and ends with the coarse features (measured here: K = 3, 237
/// nats higher; on data seeds 1–3 with four chains of 1 000 sweeps, the best chain ends at
/// K = 3–5, 236–351 nats above the empty ones; docs/ibp.md, "Mixed starts"); the fit answers
/// with that chain, and R̂ says the chains disagree. With every chain empty (the former default) both stay at K = 0 and the
/// test fails.
#[test]
fn a_mixed_start_lets_a_chain_escape_where_the_empty_start_is_stuck() {
    let g = block_images(500, 0.5, 0.5, 1).unwrap();
    let mut x = g.x.clone();
    let mean = madbayes::linalg::mean_row(x.view());
    for i in 0..x.n_rows() {
        x.row_mut(i)
            .iter_mut()
            .zip(&mean)
            .for_each(|(v, m)| *v -= m);
    }
    let post = IbpSampler::params(IbpKind::Collapsed)
        .alpha(1.0)
        .sigma_x(0.8)
        .sigma_a(1.0)
        .iterations(300)
        .seed(1001)
        .check()
        .unwrap()
        .fit_chains(&x, 2, 50)
        .unwrap();
    let ends: Vec<(usize, f64)> = post
        .chains()
        .iter()
        .map(|c| (c.k(), c.log_joint()))
        .collect();
    println!("chains' final (K, log joint): {ends:?}");
    assert_eq!(ends[0].0, 0, "chain 0 starts empty and stays there");
    assert!(ends[1].0 > 0, "{ends:?}");
    assert!(ends[1].1 > ends[0].1 + 100.0, "{ends:?}");
    assert_eq!(post.best_chain(), 1);
    assert!(!post.agree(), "R̂ must flag chains in different modes");
}

#[test]
fn a_starting_z_of_the_wrong_height_is_refused() {
    let g = ibp_linear_gaussian(20, 3, 2.0, 1.0, 0.5, 2).unwrap();
    let err = IbpSampler::params(IbpKind::Collapsed)
        .iterations(2)
        .start_from(RowMatrix::zeros(19, 2))
        .check()
        .unwrap()
        .fit(&g.x)
        .unwrap_err();
    assert!(err.to_string().contains("19 rows"), "{err}");
}
