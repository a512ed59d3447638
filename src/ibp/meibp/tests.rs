use super::state::State;
use super::*;
use crate::generate::nonnegative_linear_gaussian;
use crate::restarts::run_rng;

fn state(n: usize, d: usize, k: usize, seed: u64) -> (RowMatrix, State) {
    let mut rng = run_rng(seed, 3);
    let x = RowMatrix::new(
        n,
        d,
        (0..n * d).map(|_| rng.random::<f64>() * 2.0).collect(),
    );
    let z = (0..n)
        .map(|_| (0..k).map(|_| rng.random::<f64>() < 0.4).collect())
        .collect();
    let mut st = State::new(x.view(), z, 2.0, 0.5, 1.0);
    st.update_q();
    (x, st)
}

#[test]
fn row_objective_differences_equal_evidence_differences() {
    // Changing row i by any set changes Eq. 10 by the change of the row objective (q fixed),
    // so the row objective is the right function to maximize.
    let (x, st) = state(6, 3, 4, 1);
    let i = 2;
    let base = st.evidence();
    let ctx = st.row_context(x.view());
    let obj = st.row_objective(&ctx, i);
    let f0 = obj.value(&st.z[i]);
    for mask in 0..(1u32 << 4) {
        let on: Vec<bool> = (0..4).map(|c| (mask >> c) & 1 == 1).collect();
        let mut z = st.z.clone();
        z[i] = on.clone();
        // A fresh state (fresh ZᵀZ, ZᵀX and m) with the same q.
        let mut other = State::new(x.view(), z, st.alpha, st.sx, st.sa);
        other.set_q(st.q.clone());
        let de = other.evidence() - base;
        let df = obj.value(&on) - f0;
        assert!((de - df).abs() < 1e-9, "mask {mask}: {de} vs {df}");
    }
}

#[test]
fn evidence_never_decreases_and_kept_products_stay_exact() {
    let (x, mut st) = state(20, 4, 6, 2);
    let mut prev = st.evidence();
    for _ in 0..5 {
        let ctx = st.row_context(x.view());
        for i in 0..20 {
            st.update_row(&ctx, x.view(), i, &mut |_, _| {});
            let e = st.evidence();
            assert!(
                e >= prev - 1e-9,
                "row step lowered the evidence: {prev} → {e}"
            );
            prev = e;
        }
        drop(ctx);
        let (ztz, ztx) = st.fresh_cross(&x);
        let (kept_ztz, kept_ztx) = st.cross();
        assert_eq!(kept_ztz, &ztz[..]);
        for (a, b) in kept_ztx.as_slice().iter().zip(ztx.as_slice()) {
            assert!((a - b).abs() < 1e-12, "ZᵀX drifted: {a} vs {b}");
        }
        st.update_q();
        let e = st.evidence();
        assert!(
            e >= prev - 1e-9,
            "q update lowered the evidence: {prev} → {e}"
        );
        prev = e;
    }
}

#[test]
fn q_update_matches_eq_14_computed_from_x() {
    // Eq. 14 straight from X (O(NK²D)) against the ZᵀZ/ZᵀX form of `update_q`.
    let (x, st) = state(15, 3, 5, 4);
    let (n, d, k) = (15, 3, 5);
    let mut fresh = State::new(x.view(), st.z.clone(), st.alpha, st.sx, st.sa);
    let mut means = vec![fresh.q[0].mean; k * d];
    let r = (st.sx / st.sa).powi(2);
    for c in 0..k {
        let m = (0..n).filter(|&i| st.z[i][c]).count() as f64;
        let rho = 1.0 / (m + r);
        for t in 0..d {
            let mut acc = 0.0;
            for i in (0..n).filter(|&i| st.z[i][c]) {
                let mut v = x.row(i)[t];
                for c2 in (0..k).filter(|&c2| c2 != c && st.z[i][c2]) {
                    v -= means[c2 * d + t];
                }
                acc += v;
            }
            let q = crate::ibp::erfcx::trunc_normal(rho * acc, (rho * st.sx * st.sx).sqrt());
            means[c * d + t] = q.mean;
        }
    }
    fresh.update_q();
    for (a, b) in fresh.q.iter().zip(&means) {
        assert!((a.mean - b).abs() < 1e-12, "{} vs {b}", a.mean);
    }
}

#[test]
fn local_search_on_the_papers_figure_1_setting() {
    // R&G §3.6 / Figure 1: data from the nonnegative linear-Gaussian model (N = 500, D = 50,
    // σ_X = 1; here K = 8, A ~ TN(0, 1), p = 0.5), every row optimization of MEIBP runs
    // (k_max = K, σ_X = σ_A = 1, α = 3) until 1000K of them, against brute force over all
    // 2^K sets. "Within 95%": F(found) − F_n0 ≥ 0.95 (F* − F_n0), F_n0 the minimum (Eq. 22).
    let k = 8;
    let g = nonnegative_linear_gaussian(500, 50, k, 0.5, 1.0, 1.0, 1).unwrap();
    let (mut total, mut exact, mut near) = (0usize, 0usize, 0usize);
    let mut seed = 1;
    while total < 1000 * k {
        let p = Meibp::params(k)
            .sigma_x(1.0)
            .sigma_a(1.0)
            .alpha(3.0)
            .seed(seed)
            .check()
            .unwrap();
        p.fit_observing_rows(g.x.view(), &mut |_, _, _| {}, &mut |obj, _| {
            if total >= 1000 * k {
                return;
            }
            let ex = obj.extremes();
            let (_, v) = obj.local_search();
            let tol = 1e-9 * (1.0 + ex.max.abs());
            assert!(v >= ex.min + (ex.max - ex.min) / 3.0 - tol, "Eq. 22");
            total += 1;
            exact += usize::from(v >= ex.max - tol);
            near += usize::from(v - ex.min >= 0.95 * (ex.max - ex.min) - tol);
        })
        .unwrap();
        seed += 1;
    }
    println!("K = {k}: optimum in {exact} of {total}, within 95% in {near} of {total}");
    // Measured: optimum in 7118 of 8000 (89.0%), within 95% in 8000 of 8000 (R&G Figure 1:
    // about 70% optimal at K = 12 and over 99.9% within 95% for every K; `bench_ibp
    // meibp-local-search` gives 82% ± 4% and 99.995% at K = 8 over ten data sets). The
    // bounds sit 158 and 16 rows below the measured counts on this fixed data set.
    assert!(
        exact * 100 >= total * 87,
        "optimum in only {exact} of {total}"
    );
    assert!(
        near * 1000 >= total * 998,
        "within 95% in only {near} of {total}"
    );
}

#[test]
fn evidence_equals_eq_10_summed_entry_by_entry() {
    // Eq. 10 with its constant straight from X, Z and q(A), term by term:
    // E_q[log p(X | Z, A)] + log P([Z]) + E_q[log p(A_+)] + H[q(A_+)] (R&G Eqs. 1, 5–7, 10).
    let (x, st) = state(12, 3, 5, 5);
    let (n, d, k) = (12, 3, 5);
    let (sx, sa, alpha) = (st.sx, st.sa, st.alpha);
    let q = |c: usize, t: usize| st.q[c * d + t];
    let mut lik = 0.0;
    for i in 0..n {
        for t in 0..d {
            let on: Vec<usize> = (0..k).filter(|&c| st.z[i][c]).collect();
            let mean: f64 = on.iter().map(|&c| q(c, t).mean).sum();
            let var: f64 = on
                .iter()
                .map(|&c| q(c, t).second - q(c, t).mean * q(c, t).mean)
                .sum();
            let xv = x.row(i)[t];
            // E[(x − Σ_k z_k a_k)²] = (x − Σ z E[a])² + Σ z Var[a].
            lik += -0.5 * (2.0 * std::f64::consts::PI * sx * sx).ln()
                - ((xv - mean).powi(2) + var) / (2.0 * sx * sx);
        }
    }
    let lf = |j: usize| (1..=j).map(|v| (v as f64).ln()).sum::<f64>();
    let m: Vec<usize> = (0..k)
        .map(|c| (0..n).filter(|&i| st.z[i][c]).count())
        .collect();
    let active: Vec<usize> = (0..k).filter(|&c| m[c] > 0).collect();
    let h_n: f64 = (1..=n).map(|i| 1.0 / i as f64).sum();
    let mut ibp = active.len() as f64 * alpha.ln() - alpha * h_n - lf(active.len());
    let mut a_terms = 0.0;
    for &c in &active {
        ibp += lf(n - m[c]) + lf(m[c] - 1) - lf(n);
        for t in 0..d {
            a_terms += -0.5 * (std::f64::consts::PI * sa * sa / 2.0).ln()
                - q(c, t).second / (2.0 * sa * sa)
                + q(c, t).entropy;
        }
    }
    let direct = lik + ibp + a_terms;
    assert!(
        (st.evidence() - direct).abs() < 1e-9 * direct.abs(),
        "{} vs {direct}",
        st.evidence()
    );
}

#[test]
fn removal_gain_equals_the_change_of_the_evidence() {
    let (x, st) = state(10, 3, 5, 6);
    let base = st.evidence();
    for c in st.active() {
        let mut z = st.z.clone();
        for row in &mut z {
            row[c] = false;
        }
        let mut q = st.q.clone();
        let prior = crate::ibp::erfcx::trunc_normal(0.0, st.sa);
        q[c * 3..(c + 1) * 3].fill(prior);
        let mut other = State::new(x.view(), z, st.alpha, st.sx, st.sa);
        other.set_q(q);
        let de = other.evidence() - base;
        let gain = st.removal_gain_of(c);
        assert!((de - gain).abs() < 1e-9, "feature {c}: {de} vs {gain}");
    }
}

#[test]
fn a_feature_on_in_every_row_with_zero_weight_is_removed_and_the_bound_rises() {
    // Two features fit the data; a third is on in every row. No single row can leave it (that
    // row would lose log(N − 1) of the IBP prior), but its η costs ≈ (D/2)(log(Nσ_A²/σ_X²) − 1).
    let (n, d) = (40, 6);
    let mut rng = run_rng(7, 0);
    let a = [
        [1.0, 1.0, 1.0, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.0, 1.0, 1.0, 1.0],
    ];
    let mut z = Vec::new();
    let mut xs = Vec::new();
    for _ in 0..n {
        let on = [rng.random::<f64>() < 0.5, rng.random::<f64>() < 0.5];
        for t in 0..d {
            let mean: f64 = (0..2).filter(|&c| on[c]).map(|c| a[c][t]).sum();
            xs.push(mean + 0.3 * (rng.random::<f64>() - 0.5));
        }
        z.push(vec![on[0], on[1], true]);
    }
    let x = RowMatrix::new(n, d, xs);
    let mut st = State::new(x.view(), z, 3.0, 0.3, 1.0);
    st.start_q();
    let before = st.evidence();
    // The idle feature's weights are near zero, and no row step removes it.
    let (_, am) = st.active_z_and_means();
    assert!(am.row(2).iter().all(|&v| v < 0.1), "{:?}", am.row(2));
    let ctx = st.row_context(x.view());
    for i in 0..n {
        assert!(
            !st.update_row(&ctx, x.view(), i, &mut |_, _| {}),
            "row {i} moved"
        );
    }
    drop(ctx);
    assert_eq!(st.remove_features(), 1);
    assert_eq!(st.active(), vec![0, 1]);
    let after = st.evidence();
    assert!(after > before + 10.0, "{before} → {after}");
    // Nothing else is worth removing.
    assert_eq!(st.remove_features(), 0);
}

#[test]
fn the_start_of_q_is_the_fixed_point_that_sweeps_from_the_prior_reach() {
    // The ridge start only shortens the way: 3000 sweeps of Eq. 14 from the prior reach the
    // same q(A) (means to 1e-4: the stopping rule is on the bound, which is flat to second order
    // there), and a further sweep changes the bound by no more than the rule allows.
    let (x, st) = state(30, 4, 8, 8);
    let mut slow = State::new(x.view(), st.z.clone(), st.alpha, st.sx, st.sa);
    for _ in 0..3000 {
        slow.update_q();
    }
    let mut fast = State::new(x.view(), st.z.clone(), st.alpha, st.sx, st.sa);
    let sweeps = fast.start_q();
    assert!(sweeps < 3000, "{sweeps} sweeps");
    for (a, b) in fast.q.iter().zip(&slow.q) {
        assert!((a.mean - b.mean).abs() < 1e-4, "{} vs {}", a.mean, b.mean);
    }
    let e = fast.evidence();
    assert!((e - slow.evidence()).abs() < 1e-8 * e.abs());
    fast.update_q();
    assert!((fast.evidence() - e).abs() <= 1e-9 * e.abs());
}
