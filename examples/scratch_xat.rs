use madbayes::RowMatrix;
use std::time::Instant;
fn main() {
    let mut seed = 12345u64;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    };
    let (mut bad_faer, mut bad_chain) = (0, 0);
    for &d in &[1usize, 3, 8, 50, 100, 101, 256, 300] {
        for &n in &[1usize, 7, 8, 9, 16, 17, 64, 100, 256] {
            for k in 1..=11 {
                let x: Vec<f64> = (0..n * d).map(|_| rnd()).collect();
                let xm = RowMatrix::new(n, d, x.clone());
                let xt = madbayes::linalg::columns_of(xm.view());
                let a = RowMatrix::new(k, d, (0..k * d).map(|_| rnd()).collect());
                for (s, e) in [(0, n), (n / 3, n)] {
                    let b = e - s;
                    let mut want = vec![0.0; b * k];
                    madbayes::linalg::gemm_xat(&mut want, &x[s * d..e * d], b, &a);
                    let mut got = vec![0.0; b * k];
                    madbayes::linalg::xat_columns(&mut got, &xt, n, s, e, &a);
                    let chain: Vec<f64> = (s..e)
                        .flat_map(|i| {
                            let x = &x;
                            let a = &a;
                            (0..k).map(move |f| {
                                (0..d).fold(0.0f64, |acc, j| x[i * d + j].mul_add(a.row(f)[j], acc))
                            })
                        })
                        .collect();
                    if want
                        .iter()
                        .zip(&got)
                        .any(|(w, g)| w.to_bits() != g.to_bits())
                    {
                        bad_faer += 1;
                        if b >= 64 && (2..=6).contains(&k) {
                            println!("faer differs d {d} n {n} s {s} k {k}");
                        }
                    }
                    if chain
                        .iter()
                        .zip(&got)
                        .any(|(w, g)| w.to_bits() != g.to_bits())
                    {
                        bad_chain += 1;
                        println!("chain differs d {d} n {n} s {s} k {k}");
                    }
                }
            }
        }
    }
    println!("differ from faer {bad_faer}, from chain {bad_chain}");
    for k in [1usize, 2, 3, 4, 5, 6, 7, 8, 9, 12] {
        let (b, d) = (100, 100);
        let x: Vec<f64> = (0..b * d).map(|_| rnd()).collect();
        let xt = madbayes::linalg::columns_of(RowMatrix::new(b, d, x.clone()).view());
        let a = RowMatrix::new(k, d, (0..k * d).map(|_| rnd()).collect());
        let mut out = vec![0.0; b * k];
        let reps = 100000;
        let t = Instant::now();
        for _ in 0..reps {
            madbayes::linalg::gemm_xat(&mut out, &x, b, &a);
            std::hint::black_box(&out);
        }
        let tf = t.elapsed().as_secs_f64() / reps as f64 * 1e6;
        let t = Instant::now();
        for _ in 0..reps {
            madbayes::linalg::xat_columns(&mut out, &xt, b, 0, b, &a);
            std::hint::black_box(&out);
        }
        let tl = t.elapsed().as_secs_f64() / reps as f64 * 1e6;
        println!("k {k}: faer {tf:.3} us, columns {tl:.3} us");
    }
}
