//! The row objective of MEIBP (Reed & Ghahramani 2013, "R&G", Eq. 19) and its maximization by
//! the local search of R&G §3.6, with the O(1)-per-candidate incremental updates of §3.6's last
//! paragraph ("by precomputing ΦΦᵀ and maintaining an auxiliary vector of K₊ weights, we can
//! evaluate Eq. 19 in constant time when adding/removing elements").

/// Eq. 19 for one row n as a set function of the features s ⊆ {0, …, K−1} the row holds:
///
/// F(s) = Σ_{a∈s} ω_a − ½ Σ_{a,b∈s} G_ab − log(K_{+∖n} + #{a ∈ s : a opens})!
///
/// with G = ΦΦᵀ/σ_X² (Φ = E_q\[A\]); ω_n the linear weights of Eq. 19: the data term
/// (Φ_k·x_n + ½ Σ_d (E\[a_kd\]² − E\[a²_kd\]))/σ_X², the IBP prior's ν_k(1) − ν_k(0), and
/// η_k − log N! for a feature the row would open; K_{+∖n} the features held by other rows;
/// and "a opens" when no other row holds a (m_{a∖n} = 0). F is submodular when Φ ≥ 0 (R&G §3.5, Propositions 1–2 and Eq. 21).
#[derive(Clone, Debug)]
pub struct RowObjective<'a> {
    g: &'a [f64],
    omega: Vec<f64>,
    opens: Vec<bool>,
    k_plus: usize,
    ln_fact: &'a [f64],
}

/// The exact maximum and minimum of a [`RowObjective`] over all 2^K sets.
#[derive(Clone, Debug, PartialEq)]
pub struct Extremes {
    /// F(Z*ₙ), the maximum.
    pub max: f64,
    /// A set attaining it.
    pub argmax: Vec<bool>,
    /// F_n0, the minimum (R&G Eq. 22's baseline of the normalized cost function).
    pub min: f64,
}

impl<'a> RowObjective<'a> {
    /// The objective with quadratic weights `g` (`K × K`, row-major, G = ΦΦᵀ/σ_X²), linear
    /// weights `omega`, `opens[a]` when feature a is held by no other row, `k_plus` = K_{+∖n},
    /// and `ln_fact[j] = log j!` for j up to at least `k_plus` + the number of opening features.
    ///
    /// # Panics
    /// If the lengths disagree.
    pub fn new(
        g: &'a [f64],
        omega: Vec<f64>,
        opens: Vec<bool>,
        k_plus: usize,
        ln_fact: &'a [f64],
    ) -> Self {
        let k = omega.len();
        assert_eq!(g.len(), k * k, "G must be K × K");
        assert_eq!(opens.len(), k, "one `opens` flag per feature");
        assert!(
            ln_fact.len() > k_plus + opens.iter().filter(|&&o| o).count(),
            "log-factorial table too short"
        );
        Self {
            g,
            omega,
            opens,
            k_plus,
            ln_fact,
        }
    }

    /// K, the size of the ground set.
    pub fn k(&self) -> usize {
        self.omega.len()
    }

    /// F(s), evaluated from scratch in O(K + |s|²).
    pub fn value(&self, on: &[bool]) -> f64 {
        let k = self.k();
        let idx: Vec<usize> = (0..k).filter(|&a| on[a]).collect();
        let mut f = 0.0;
        let mut new = 0;
        for &a in &idx {
            f += self.omega[a];
            let row = &self.g[a * k..(a + 1) * k];
            for &b in &idx {
                f -= 0.5 * row[b];
            }
            new += usize::from(self.opens[a]);
        }
        f - self.ln_fact[self.k_plus + new]
    }

    /// The local search of R&G §3.6, each step taking the best element:
    /// 1. *initialize* with the best singleton;
    /// 2. *grow*: add the element that raises F most, while one raises it;
    /// 3. *prune*: remove the element whose removal raises F most, if one does, and go to 2;
    /// 4. *return* the better of the set and its complement, with its value.
    ///
    /// Strict improvement stands for the paper's (1 + ε/|V|²) factor, i.e. ε → 0 (the factor
    /// applies to the nonnegative normalized F − F_n0, whose F_n0 the search does not know).
    /// Each candidate's gain is O(1) from the auxiliary vector h = G·s, and each move updates
    /// h in O(K), so a row costs O(K) per move instead of O(K²) per evaluated set.
    pub fn local_search(&self) -> (Vec<bool>, f64) {
        let k = self.k();
        let mut set = vec![false; k];
        if k == 0 {
            let v = self.value(&set);
            return (set, v);
        }
        let mut s = Search {
            obj: self,
            h: vec![0.0; k],
            new: 0,
        };
        let first = (0..k)
            .map(|c| (s.add_gain(c), c))
            .fold((f64::NEG_INFINITY, 0), |b, v| if v.0 > b.0 { v } else { b });
        s.toggle(&mut set, first.1);
        // Each move raises F strictly; the cap only guards against rounding cycles.
        let mut moves_left = 16 * k * k + 64;
        loop {
            let mut moved = false;
            while moves_left > 0 {
                let best = (0..k)
                    .filter(|&c| !set[c])
                    .map(|c| (s.add_gain(c), c))
                    .fold(None, |b: Option<(f64, usize)>, v| match b {
                        Some(b) if b.0 >= v.0 => Some(b),
                        _ => Some(v),
                    });
                match best {
                    Some((gain, c)) if gain > 0.0 => {
                        s.toggle(&mut set, c);
                        moves_left -= 1;
                        moved = true;
                    }
                    _ => break,
                }
            }
            let best = (0..k)
                .filter(|&c| set[c])
                .map(|c| (s.remove_gain(c), c))
                .fold(None, |b: Option<(f64, usize)>, v| match b {
                    Some(b) if b.0 >= v.0 => Some(b),
                    _ => Some(v),
                });
            if let Some((gain, c)) = best
                && gain > 0.0
                && moves_left > 0
            {
                s.toggle(&mut set, c);
                moves_left -= 1;
                moved = true;
            }
            if !moved {
                break;
            }
        }
        let v = self.value(&set);
        let comp: Vec<bool> = set.iter().map(|&b| !b).collect();
        let vc = self.value(&comp);
        if vc > v { (comp, vc) } else { (set, v) }
    }

    /// The maximum, a maximizer and the minimum of F over all 2^K sets, visited in Gray-code
    /// order so that each set costs O(K).
    ///
    /// # Panics
    /// If K > 24.
    pub fn extremes(&self) -> Extremes {
        let k = self.k();
        assert!(k <= 24, "brute force over 2^{k} sets");
        let mut set = vec![false; k];
        let mut s = Search {
            obj: self,
            h: vec![0.0; k],
            new: 0,
        };
        let mut quad = 0.0;
        let v0 = -self.ln_fact[self.k_plus];
        let (mut max, mut min, mut arg) = (v0, v0, 0u32);
        let mut code = 0u32;
        for i in 1u32..(1u32 << k) {
            let c = i.trailing_zeros() as usize;
            quad += if set[c] {
                s.remove_quad(c)
            } else {
                s.add_quad(c)
            };
            s.toggle(&mut set, c);
            code ^= 1 << c;
            let v = quad - self.ln_fact[self.k_plus + s.new];
            if v > max {
                max = v;
                arg = code;
            }
            min = min.min(v);
        }
        let argmax: Vec<bool> = (0..k).map(|c| (arg >> c) & 1 == 1).collect();
        Extremes {
            max: self.value(&argmax),
            argmax,
            min,
        }
    }
}

/// The auxiliary state of the local search: h = G·s and the number of opened features.
struct Search<'o, 'a> {
    obj: &'o RowObjective<'a>,
    h: Vec<f64>,
    new: usize,
}

impl Search<'_, '_> {
    /// The change of the quadratic-plus-linear part when c joins s.
    fn add_quad(&self, c: usize) -> f64 {
        let k = self.obj.k();
        self.obj.omega[c] - self.h[c] - 0.5 * self.obj.g[c * k + c]
    }
    /// The change of the quadratic-plus-linear part when c leaves s.
    fn remove_quad(&self, c: usize) -> f64 {
        let k = self.obj.k();
        -(self.obj.omega[c] - self.h[c] + 0.5 * self.obj.g[c * k + c])
    }
    fn ln_fact_step(&self, c: usize, up: bool) -> f64 {
        if !self.obj.opens[c] {
            return 0.0;
        }
        let j = self.obj.k_plus + self.new;
        let lf = self.obj.ln_fact;
        if up {
            lf[j + 1] - lf[j]
        } else {
            lf[j - 1] - lf[j]
        }
    }
    fn add_gain(&self, c: usize) -> f64 {
        self.add_quad(c) - self.ln_fact_step(c, true)
    }
    fn remove_gain(&self, c: usize) -> f64 {
        self.remove_quad(c) - self.ln_fact_step(c, false)
    }
    /// Flips c in `set` and updates h and the count of opened features.
    fn toggle(&mut self, set: &mut [bool], c: usize) {
        let k = self.obj.k();
        let row = &self.obj.g[c * k..(c + 1) * k];
        let sign = if set[c] { -1.0 } else { 1.0 };
        for (h, &g) in self.h.iter_mut().zip(row) {
            *h += sign * g;
        }
        if self.obj.opens[c] {
            if set[c] {
                self.new -= 1;
            } else {
                self.new += 1;
            }
        }
        set[c] = !set[c];
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ibp::model::ln_factorial_table;
    use crate::restarts::run_rng;
    use rand::RngExt;

    /// A random objective's parts: Φ ≥ 0 (`k × 3`), G = ΦΦᵀ, ω uniform in [−1, 4], about
    /// 30% of the features open.
    fn problem(k: usize, seed: u64) -> (Vec<f64>, Vec<f64>, Vec<bool>, usize) {
        let mut rng = run_rng(seed, 0);
        let phi: Vec<f64> = (0..3 * k).map(|_| rng.random::<f64>()).collect();
        let mut g = vec![0.0; k * k];
        for a in 0..k {
            for b in 0..k {
                g[a * k + b] = (0..3).map(|t| phi[a * 3 + t] * phi[b * 3 + t]).sum();
            }
        }
        let omega: Vec<f64> = (0..k).map(|_| rng.random::<f64>() * 5.0 - 1.0).collect();
        let opens: Vec<bool> = (0..k).map(|_| rng.random::<f64>() < 0.3).collect();
        let k_plus = opens.iter().filter(|&&o| !o).count();
        (g, omega, opens, k_plus)
    }

    fn all_sets(k: usize) -> impl Iterator<Item = Vec<bool>> {
        (0..(1u32 << k)).map(move |m| (0..k).map(|c| (m >> c) & 1 == 1).collect())
    }

    #[test]
    fn gray_code_extremes_equal_plain_enumeration() {
        let lf = ln_factorial_table(40);
        for seed in 0..20 {
            let (g, omega, opens, kp) = problem(7, seed);
            let obj = RowObjective::new(&g, omega, opens, kp, &lf);
            let ex = obj.extremes();
            let vals: Vec<f64> = all_sets(7).map(|s| obj.value(&s)).collect();
            let max = vals.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let min = vals.iter().copied().fold(f64::INFINITY, f64::min);
            assert!((ex.max - max).abs() < 1e-10 && (ex.min - min).abs() < 1e-10);
            assert!((obj.value(&ex.argmax) - max).abs() < 1e-10);
        }
    }

    #[test]
    fn local_search_value_is_its_sets_and_meets_eq_22() {
        let lf = ln_factorial_table(40);
        for seed in 0..200 {
            let (g, omega, opens, kp) = problem(9, 100 + seed);
            let obj = RowObjective::new(&g, omega, opens, kp, &lf);
            let (set, v) = obj.local_search();
            assert!((obj.value(&set) - v).abs() < 1e-10);
            let ex = obj.extremes();
            assert!(v >= ex.min + (ex.max - ex.min) / 3.0 - 1e-9, "seed {seed}");
            // A local optimum: no single flip raises F (or the complement won).
            let comp: Vec<bool> = set.iter().map(|&b| !b).collect();
            for c in 0..9 {
                let mut s = set.clone();
                s[c] = !s[c];
                let mut sc = comp.clone();
                sc[c] = !sc[c];
                assert!(
                    obj.value(&s) <= v + 1e-9 || obj.value(&sc) <= v + 1e-9,
                    "seed {seed}: flipping {c} helps"
                );
            }
        }
    }
}
