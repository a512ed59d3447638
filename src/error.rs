//! Errors shared by every algorithm family: bad parameters (caught by `check()`, before any
//! data is seen) and data that does not fit them (caught when fitting starts).

use crate::MatrixView;
use rayon::prelude::*;
use thiserror::Error;

/// A parameter breaks a rule that holds whatever the data.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum ParamError {
    /// The penalty P = λ² must be a positive finite number.
    #[error("penalty must be a positive finite number, got {0}; pass e.g. --penalty 1.0")]
    Penalty(f64),
    /// K must be at least 1.
    #[error("k must be at least 1, got {0}")]
    KZero(usize),
    /// At least one run is needed.
    #[error("restarts must be at least 1, got 0")]
    NoRestarts,
    /// At least one iteration is needed.
    #[error("max-iter must be at least 1, got 0")]
    NoIterations,
    /// A regularisation constant must be a non-negative finite number.
    #[error("{name} must be a non-negative finite number, got {value}")]
    Regularisation {
        /// The parameter's name.
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// A model parameter (α, σ_X, σ_A of the IBP methods) must be a positive finite number.
    #[error("{name} must be a positive finite number, got {value}; pass e.g. {name} 1.0")]
    NotPositive {
        /// The parameter's name.
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// The IBP samplers' annealed share of the sweeps lies in [0, 0.5] (within the burn-in).
    #[error(
        "anneal must be a fraction of the sweeps between 0 and 0.5 (the first half is burn-in), \
         got {0}; pass e.g. 0.25, or 0 for none"
    )]
    AnnealFraction(f64),
    /// The accelerated sampler's window holds at least one row.
    #[error("window must be at least 1 row, got 0; the default is 1")]
    ZeroWindow,
    /// An option was set that the algorithm does not use; it is refused rather than ignored.
    #[error("{option} does not apply to {algo}; remove it")]
    NotApplicable {
        /// The option's name, as the command line spells it.
        option: &'static str,
        /// The algorithm's name, as the command line spells it.
        algo: &'static str,
    },
}

/// Fitting could not start or finish on this data.
#[derive(Clone, Debug, Error, PartialEq)]
pub enum FitError {
    /// Parameters were invalid.
    #[error(transparent)]
    Params(#[from] ParamError),
    /// No rows, or rows without columns.
    #[error("the data are empty ({n} rows × {d} columns); give at least one row and one column")]
    EmptyData {
        /// Rows.
        n: usize,
        /// Columns.
        d: usize,
    },
    /// A value is NaN or infinite (0-based row and column).
    #[error(
        "the data hold a non-finite value ({value}) at row {row}, column {col} (0-based); remove or impute it"
    )]
    NonFinite {
        /// Row of the value.
        row: usize,
        /// Column of the value.
        col: usize,
        /// The value itself.
        value: f64,
    },
    /// K cannot exceed the number of rows.
    #[error("k = {k} is larger than the number of rows N = {n}; choose k ≤ {n}")]
    KTooLarge {
        /// Requested K.
        k: usize,
        /// Rows.
        n: usize,
    },
    /// The algorithm needs more rows than there are.
    #[error("{0}")]
    TooFewRows(String),
    /// The data (or the fit) are degenerate for this algorithm: zero spread where a scale is
    /// derived from it, or every run met a singular state (the message says which and how to
    /// fix it).
    #[error("{0}")]
    Degenerate(String),
    /// Two inputs that must agree in shape do not (the message names both).
    #[error("{0}")]
    Shape(String),
    /// The data's largest |value| lies outside [[`SCALE_MIN`], [`SCALE_MAX`]] (0-based row and
    /// column of the first such value).
    #[error("{}", scale_message(*.value, *.row, *.col))]
    Scale {
        /// Row of the largest |value|.
        row: usize,
        /// Column of the largest |value|.
        col: usize,
        /// The value.
        value: f64,
    },
}

/// The largest |value| the data may hold (see [`check_data`]).
pub const SCALE_MAX: f64 = 1e100;
/// The least the data's largest |value| may be, unless every value is 0 (see
/// [`check_data`]).
pub const SCALE_MIN: f64 = 1e-100;

/// Checks that `x` has at least one row and column, only finite values, and a scale every
/// algorithm can work at: its largest |value| must be 0 or lie in [[`SCALE_MIN`],
/// [`SCALE_MAX`]] = [10⁻¹⁰⁰, 10¹⁰⁰].
///
/// Far beyond that band sums of squares overflow or underflow. Measured without this check
/// on the 24 × 4 data of `tests/scale_band.rs`, every algorithm gave a finite objective or
/// log joint with the largest |value| anywhere from 10⁻¹⁵⁰ to 10¹⁵⁰; at 10¹⁶⁰ all but
/// K-means and K-features panicked (those two returned an infinite objective) and at 10⁻¹⁶⁰
/// the semi-collapsed sampler panicked. The band keeps a factor 10⁵⁰ from both, which
/// leaves room for sums over 10¹² entries; `tests/scale_band.rs` fits every algorithm at
/// both ends of it. Data outside it are refused
/// with [`FitError::Scale`], whose message names the value and the power of ten to divide
/// or multiply by; rescaling the data (and the penalty by the square of the factor) changes
/// no result but the units.
pub fn check_data<'a>(x: impl Into<MatrixView<'a>>) -> Result<(), FitError> {
    let x: MatrixView<'a> = x.into();
    let (n, d) = (x.n_rows(), x.n_cols());
    if n == 0 || d == 0 {
        return Err(FitError::EmptyData { n, d });
    }
    // Blocks in parallel; the first block holding a non-finite value, then its first one.
    const CHUNK: usize = 1 << 16;
    let bad_chunk = x
        .as_slice()
        .par_chunks(CHUNK)
        .position_first(|c| c.iter().any(|v| !v.is_finite()));
    if let Some(c) = bad_chunk {
        let chunk = &x.as_slice()[c * CHUNK..];
        let i = c * CHUNK + chunk.iter().position(|v| !v.is_finite()).unwrap_or(0);
        return Err(FitError::NonFinite {
            row: i / d,
            col: i % d,
            value: x.as_slice()[i],
        });
    }
    // The largest |value|, the first one on ties: (|v|, -index) maximised per block, then
    // over blocks.
    let (max, at) = x
        .as_slice()
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            let mut best = (0.0f64, c * CHUNK);
            for (i, v) in chunk.iter().enumerate() {
                if v.abs() > best.0 {
                    best = (v.abs(), c * CHUNK + i);
                }
            }
            best
        })
        .reduce(
            || (0.0, usize::MAX),
            |a, b| {
                if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) {
                    b
                } else {
                    a
                }
            },
        );
    if max != 0.0 && !(SCALE_MIN..=SCALE_MAX).contains(&max) {
        return Err(FitError::Scale {
            row: at / d,
            col: at % d,
            value: x.as_slice()[at],
        });
    }
    Ok(())
}

/// The decimal exponent of `v` (`1e155` → 155, `3.2e-300` → −300).
fn exponent(v: f64) -> i32 {
    let text = format!("{:e}", v.abs());
    text.rsplit('e')
        .next()
        .and_then(|e| e.parse().ok())
        .unwrap_or(0)
}

/// The message of [`FitError::Scale`].
fn scale_message(value: f64, row: usize, col: usize) -> String {
    let e = exponent(value);
    let at = format!(
        "the data's largest absolute value is {value:e} (row {row}, column {col}, 0-based)"
    );
    if value.abs() > SCALE_MAX {
        format!(
            "{at}; values beyond {SCALE_MAX:e} overflow sums of squares — divide the data by 1e{e} (or another power of ten; a penalty scales with its square)"
        )
    } else {
        format!(
            "{at}; when every value is below {SCALE_MIN:e} sums of squares underflow — multiply the data by 1e{} (or another power of ten; a penalty scales with its square)",
            -e
        )
    }
}

/// Checks a penalty P = λ².
pub fn check_penalty(p: f64) -> Result<f64, ParamError> {
    if p.is_finite() && p > 0.0 {
        Ok(p)
    } else {
        Err(ParamError::Penalty(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RowMatrix;

    #[test]
    fn data_rules() {
        assert_eq!(
            check_data(&RowMatrix::zeros(0, 3)),
            Err(FitError::EmptyData { n: 0, d: 3 })
        );
        let mut x = RowMatrix::zeros(2, 3);
        x.row_mut(1)[2] = f64::NAN;
        assert!(matches!(
            check_data(&x),
            Err(FitError::NonFinite { row: 1, col: 2, .. })
        ));
        x.row_mut(1)[2] = f64::NEG_INFINITY;
        assert!(matches!(
            check_data(&x),
            Err(FitError::NonFinite { row: 1, col: 2, .. })
        ));
        x.row_mut(1)[2] = 1.0;
        assert_eq!(check_data(&x), Ok(()));
    }

    #[test]
    fn scale_rules() {
        let mut x = RowMatrix::zeros(3, 2);
        assert_eq!(
            check_data(&x),
            Ok(()),
            "all zeros is for the algorithms to judge"
        );
        x.row_mut(1)[0] = SCALE_MAX;
        x.row_mut(2)[1] = -SCALE_MIN;
        assert_eq!(check_data(&x), Ok(()));
        // The first of two equal largest values is named.
        x.row_mut(0)[1] = -3e120;
        x.row_mut(2)[0] = 3e120;
        let e = check_data(&x).unwrap_err();
        assert_eq!(
            e,
            FitError::Scale {
                row: 0,
                col: 1,
                value: -3e120
            }
        );
        let msg = e.to_string();
        assert!(msg.contains("-3e120 (row 0, column 1"), "{msg}");
        assert!(msg.contains("divide the data by 1e120"), "{msg}");
        assert!(msg.contains("a penalty scales with its square"), "{msg}");
        let mut y = RowMatrix::zeros(2, 1);
        y.row_mut(1)[0] = 2.5e-301;
        let msg = check_data(&y).unwrap_err().to_string();
        assert!(msg.contains("2.5e-301 (row 1, column 0"), "{msg}");
        assert!(msg.contains("multiply the data by 1e301"), "{msg}");
        assert_eq!(exponent(1e155), 155);
        assert_eq!(exponent(9.99e-101), -101);
    }

    #[test]
    fn penalty_rules() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(check_penalty(bad).is_err());
        }
        assert_eq!(check_penalty(2.5), Ok(2.5));
    }
}
