//! Mahalanobis clustering against an exhaustive oracle on tiny data, and the properties of
//! every returned solution: fixed point, exact a and Σ, consistent objective, monotone trace.

mod mahalanobis_support;

use madbayes::Fit;
use madbayes::Model;
use madbayes::RowMatrix;
use madbayes::clustering::Mahalanobis;
use madbayes::clustering::mahalanobis::{
    mahalanobis_objective, mahalanobis_phi, mahalanobis_profile_objective, optimal_covariances,
};
use madbayes::clustering::objective::cluster_means;
use mahalanobis_support::{close, gaussian_groups, random_valid_labels, sizes};

/// The lowest profile objective over all 2-cluster labellings with both clusters > D rows.
fn exhaustive_minimum(x: &RowMatrix, penalty: f64, phi: f64) -> f64 {
    let (n, d) = (x.n_rows(), x.n_cols());
    let mut best = f64::INFINITY;
    // Row 0 is in cluster 0 (the objective does not depend on cluster names).
    for mask in 0u32..(1 << (n - 1)) {
        let labels: Vec<usize> = (0..n)
            .map(|i| {
                if i == 0 {
                    0
                } else {
                    ((mask >> (i - 1)) & 1) as usize
                }
            })
            .collect();
        let s = sizes(&labels, 2);
        if s[0] > d && s[1] > d {
            best = best.min(mahalanobis_profile_objective(x, &labels, penalty, phi));
        }
    }
    best
}

#[test]
fn no_run_beats_the_exhaustive_optimum_and_restarts_usually_reach_it() {
    let penalty = 1.0;
    let (mut cases, mut hit_r1, mut hit_r10, mut runs_at_opt, mut runs) = (0, 0, 0, 0, 0);
    // Misses of the best of 10, by (D, N).
    let mut misses = std::collections::BTreeMap::new();
    for trial in 0..240u64 {
        let d = 1 + (trial % 2) as usize;
        let n = 2 * (d + 1) + (trial as usize / 2) % (9 - 2 * (d + 1));
        let x = gaussian_groups(trial, n, d, 2, 2.0);
        let phi = mahalanobis_phi(x.view(), 1e-3);
        let opt = exhaustive_minimum(&x, penalty, phi);
        assert!(opt.is_finite());
        cases += 1;
        for (restarts, hits) in [(1, &mut hit_r1), (10, &mut hit_r10)] {
            let fit = Mahalanobis::params(2, penalty)
                .restarts(restarts)
                .seed(trial)
                .check()
                .unwrap()
                .fit(&x)
                .unwrap();
            for &o in fit.run_objectives() {
                assert!(
                    o >= opt - 1e-9 * (1.0 + opt.abs()),
                    "trial {trial}: a run reports {o} below the optimum {opt}"
                );
                if restarts == 10 {
                    runs += 1;
                    runs_at_opt += usize::from(close(o, opt, 1e-9));
                }
            }
            // The reported value is the profile objective of the reported labels.
            let prof = mahalanobis_profile_objective(&x, fit.labels(), penalty, phi);
            assert!(close(fit.objective(), prof, 1e-10), "trial {trial}");
            let hit = close(fit.objective(), opt, 1e-9);
            *hits += usize::from(hit);
            if restarts == 10 && !hit {
                *misses.entry((d, n)).or_insert(0) += 1;
            }
        }
    }
    let rate = |h: usize| h as f64 / cases as f64;
    println!(
        "exhaustive oracle (N ≤ 8, D ∈ {{1, 2}}, K = 2, reg = 1e-3, {cases} data sets): \
         best of 1 restart reaches the optimum in {hit_r1}/{cases} = {:.3}, best of 10 in \
         {hit_r10}/{cases} = {:.3}; single runs {runs_at_opt}/{runs} = {:.3}",
        rate(hit_r1),
        rate(hit_r10),
        runs_at_opt as f64 / runs as f64
    );
    println!("misses of the best of 10 by (D, N): {misses:?}");
    // Ten restarts must not do worse than one, and must find the optimum in most cases.
    assert!(hit_r10 >= hit_r1);
    assert!(
        rate(hit_r10) >= 0.8,
        "best of 10 reached the optimum too rarely"
    );
}

#[test]
fn returned_solutions_are_fixed_points_with_optimal_means_and_covariances() {
    for seed in 0..6u64 {
        let (d, k) = (2 + (seed % 2) as usize, 3);
        let x = gaussian_groups(seed, 90, d, k, 3.0);
        let penalty = 0.5 + seed as f64;
        let fit = Mahalanobis::params(k, penalty)
            .restarts(3)
            .seed(seed)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        assert!(fit.converged(), "seed {seed}");
        let (labels, means, covs, phi) = (fit.labels(), fit.means(), fit.covariances(), fit.phi());
        let j = fit.objective();
        // The reported objective is both objective functions recomputed from the state.
        let full = mahalanobis_objective(x.view(), labels, means, covs, penalty, phi);
        assert_eq!(full.to_bits(), j.to_bits());
        let prof = mahalanobis_profile_objective(&x, labels, penalty, phi);
        assert!(close(prof, j, 1e-11), "seed {seed}: profile {prof} vs {j}");
        // a and Σ are the optimum for the labels.
        let m = cluster_means(x.view(), labels, k);
        assert!(
            m.as_slice()
                .iter()
                .zip(means.as_slice())
                .all(|(a, b)| close(*a, *b, 1e-12))
        );
        let opt = optimal_covariances(x.view(), labels, &m, penalty, phi);
        for (s, t) in covs.iter().zip(&opt) {
            assert!(
                s.as_slice()
                    .iter()
                    .zip(t.as_slice())
                    .all(|(a, b)| close(*a, *b, 1e-12))
            );
        }
        // Perturbing a mean or a covariance raises J.
        for c in 0..k {
            let mut m2 = means.clone();
            m2.row_mut(c)[0] += 1e-3;
            assert!(mahalanobis_objective(x.view(), labels, &m2, covs, penalty, phi) > j);
            let mut c2 = covs.to_vec();
            c2[c].row_mut(0)[0] *= 1.01;
            assert!(mahalanobis_objective(x.view(), labels, means, &c2, penalty, phi) > j);
            let mut c3 = covs.to_vec();
            c3[c].row_mut(0)[1] += 0.01 * covs[c].row(0)[0];
            c3[c].row_mut(1)[0] += 0.01 * covs[c].row(0)[0];
            assert!(mahalanobis_objective(x.view(), labels, means, &c3, penalty, phi) > j);
        }
        // No single allowed move (its cluster keeps more than D rows) lowers J at fixed a, Σ.
        let counts = sizes(labels, k);
        let mut allowed = 0;
        for n in 0..x.n_rows() {
            if counts[labels[n]] <= d + 1 {
                continue;
            }
            for c in (0..k).filter(|&c| c != labels[n]) {
                let mut moved = labels.to_vec();
                moved[n] = c;
                let jm = mahalanobis_objective(x.view(), &moved, means, covs, penalty, phi);
                assert!(
                    jm >= j - 1e-10 * j.abs(),
                    "seed {seed}: moving row {n} to {c}: {jm} < {j}"
                );
                allowed += 1;
            }
        }
        assert!(allowed > 0);
        // Rows free to move sit in their nearest cluster (Mahalanobis), as `predict` says.
        let pred = fit.predict(x.view()).unwrap();
        for n in (0..x.n_rows()).filter(|&n| counts[labels[n]] > d + 1) {
            assert_eq!(pred[n], labels[n], "seed {seed}, row {n}");
        }
    }
}

#[test]
fn the_trace_never_increases() {
    for seed in 0..8u64 {
        let (d, k) = (1 + (seed % 3) as usize, 2 + (seed % 3) as usize);
        let x = gaussian_groups(100 + seed, 120, d, k, 2.5);
        let params = Mahalanobis::params(k, 1.5).max_iter(500).check().unwrap();
        // From random labels: the first iteration can only improve on them.
        let init = random_valid_labels(seed, 120, k, d + 1);
        let phi = mahalanobis_phi(x.view(), 1e-3);
        let start = mahalanobis_profile_objective(&x, &init, 1.5, phi);
        let fit = params.fit_from_labels(&x, &init).unwrap();
        let t = fit.trace();
        assert_eq!(t.len(), fit.n_iter());
        assert!(t[0] <= start, "seed {seed}: {} > {start}", t[0]);
        assert!(t.windows(2).all(|w| w[1] <= w[0]), "seed {seed}: {t:?}");
        println!("seed {seed}: {} iterations, trace {t:?}", fit.n_iter());
        assert!(
            t.len() >= 2 && t[0] < start,
            "seed {seed}: random labels must move"
        );
        assert!(close(*t.last().unwrap(), fit.objective(), 1e-11));
        assert!(sizes(fit.labels(), k).iter().all(|&s| s > d));
        // And for every restart of a seeded fit.
        let fit = Mahalanobis::params(k, 1.5)
            .seed(seed)
            .check()
            .unwrap()
            .fit(&x)
            .unwrap();
        assert!(fit.trace().windows(2).all(|w| w[1] <= w[0]));
    }
}
