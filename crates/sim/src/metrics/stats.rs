//! The summary's statistics: Student's t quantile, mean with 95 % CI, Jain's index.
//!
//! The t quantile is a table of the usual three-decimal values (run summaries have always
//! used these digits). The Python front's sweep and reproduce CIs use an exact quantile
//! (bloatlab.aggregate, an incomplete beta); the two differ in the fourth digit, and each
//! feeds outputs that must not change, so both stay (see docs/sweeps.md).

/// Two-sided 95 % quantiles of Student's t for 1..=30 degrees of freedom.
const T95: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// The 97.5 % quantile of Student's t with `df` degrees of freedom (normal beyond 30).
pub fn t95(df: usize) -> f64 {
    match df {
        0 => f64::NAN,
        d if d <= 30 => T95[d - 1],
        d if d <= 60 => 2.000 + (2.042 - 2.000) * (60 - d) as f64 / 30.0,
        _ => 1.960,
    }
}

/// The mean (None when empty) and the half-width of its 95 % confidence interval (None with
/// fewer than two values).
pub fn mean_ci95(xs: &[f64]) -> (Option<f64>, Option<f64>) {
    let n = xs.len();
    let mean = (n > 0).then(|| xs.iter().sum::<f64>() / n as f64);
    let ci = match (mean, n) {
        (Some(m), n) if n >= 2 => {
            let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64;
            Some(t95(n - 1) * (var / n as f64).sqrt())
        }
        _ => None,
    };
    (mean, ci)
}

/// Jain's fairness index (Σx)² / (n·Σx²); 1 for an empty or all-zero set.
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || s2 == 0.0 {
        1.0
    } else {
        s * s / (n * s2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_bounds() {
        assert_eq!(jain(&[5.0, 5.0, 5.0]), 1.0);
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert!((jain(&[1.0, 2.0]) - 0.9).abs() < 1e-12);
    }

    #[test]
    fn t_table_and_ci() {
        assert_eq!(t95(2), 4.303);
        assert_eq!(t95(100), 1.960);
        assert_eq!(mean_ci95(&[]), (None, None));
        assert_eq!(mean_ci95(&[4.0]), (Some(4.0), None));
    }
}
