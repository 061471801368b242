//! The Markovianity screen (SNF-ICON Eqs. 5-11): is a recent series close enough to i.i.d.
//! exponential for the one-step model?

/// Thresholds of the screen (Table I defaults).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScreenConfig {
    pub min_samples: usize,
    pub max_samples: usize,
    /// |CV - 1| <= this.
    pub cv_tolerance: f64,
    /// |lag-one autocorrelation| <= this.
    pub max_autocorrelation: f64,
    /// KS distance <= ks_multiplier * ks_scale / sqrt(n).
    pub ks_multiplier: f64,
    pub ks_scale: f64,
}

impl Default for ScreenConfig {
    fn default() -> Self {
        ScreenConfig {
            min_samples: 3,
            max_samples: 1000,
            cv_tolerance: 0.45,
            max_autocorrelation: 0.65,
            ks_multiplier: 1.25,
            ks_scale: 3.0,
        }
    }
}

/// What the screen measured on one series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeriesStats {
    pub n: usize,
    pub mean: f64,
    pub cv: f64,
    pub autocorrelation: f64,
    pub ks_distance: f64,
    pub ks_threshold: f64,
    pub accepted: bool,
}

/// Coefficient of variation with the population variance (Eq. 5).
pub fn coefficient_of_variation(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let variance = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    if mean == 0.0 {
        f64::INFINITY
    } else {
        variance.sqrt() / mean
    }
}

/// Sample Pearson correlation of (x1..x_{n-1}) with (x2..x_n) (Eqs. 7-8); 1 when a variance
/// vanishes (a constant series is as far from independent draws as can be).
pub fn lag_one_autocorrelation(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 1.0;
    }
    let (a, b) = (&xs[..xs.len() - 1], &xs[1..]);
    let m = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / m, b.iter().sum::<f64>() / m);
    let (mut cov, mut va, mut vb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        cov += (x - ma) * (y - mb);
        va += (x - ma).powi(2);
        vb += (y - mb).powi(2);
    }
    let denominator = (va * vb).sqrt();
    if denominator == 0.0 {
        1.0
    } else {
        cov / denominator
    }
}

/// Two-sided Kolmogorov-Smirnov distance between the empirical CDF of `xs` and the exponential
/// CDF with the sample mean, `1 - exp(-x / mean)`. `sorted` is scratch space.
pub fn ks_distance_exponential(xs: &[f64], sorted: &mut Vec<f64>) -> f64 {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return 1.0;
    }
    sorted.clear();
    sorted.extend_from_slice(xs);
    sorted.sort_unstable_by(f64::total_cmp);
    let mut distance: f64 = 0.0;
    for (i, &x) in sorted.iter().enumerate() {
        let cdf = 1.0 - (-x / mean).exp();
        let below = i as f64 / n;
        let above = (i + 1) as f64 / n;
        distance = distance.max(above - cdf).max(cdf - below);
    }
    distance
}

/// Screens one series (Definition 4): enough samples and every condition of Eqs. 6-10.
pub fn screen(xs: &[f64], config: &ScreenConfig, scratch: &mut Vec<f64>) -> SeriesStats {
    let n = xs.len();
    if n < config.min_samples || n == 0 {
        return SeriesStats {
            n,
            mean: f64::NAN,
            cv: f64::NAN,
            autocorrelation: f64::NAN,
            ks_distance: f64::NAN,
            ks_threshold: f64::NAN,
            accepted: false,
        };
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    let cv = coefficient_of_variation(xs);
    let autocorrelation = lag_one_autocorrelation(xs);
    let ks_distance = ks_distance_exponential(xs, scratch);
    let ks_threshold = config.ks_multiplier * config.ks_scale / (n as f64).sqrt();
    let accepted = (cv - 1.0).abs() <= config.cv_tolerance
        && autocorrelation.abs() <= config.max_autocorrelation
        && ks_distance <= ks_threshold;
    SeriesStats {
        n,
        mean,
        cv,
        autocorrelation,
        ks_distance,
        ks_threshold,
        accepted,
    }
}
