//! Errors shared by every algorithm family: bad parameters (caught by `check()`, before any
//! data is seen) and data that does not fit them (caught when fitting starts).

use crate::RowMatrix;
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
}

/// Checks that `x` has at least one row and column and only finite values.
pub fn check_data(x: &RowMatrix) -> Result<(), FitError> {
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
    Ok(())
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
    fn penalty_rules() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(check_penalty(bad).is_err());
        }
        assert_eq!(check_penalty(2.5), Ok(2.5));
    }
}
