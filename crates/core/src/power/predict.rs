//! The log-normal runtime predictor (SNF-ICON Appendix A, Eqs. 41-51), in log space.

/// EMA of the log ratio `Y = ln(actual / requested)` and of its square.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RuntimePredictor {
    /// `(m_Y, q_Y)` once a valid completion has been seen.
    moments: Option<(f64, f64)>,
    smoothing: f64,
    sigma_floor: f64,
}

impl RuntimePredictor {
    pub fn new(smoothing: f64, sigma_floor: f64) -> Self {
        RuntimePredictor {
            moments: None,
            smoothing,
            sigma_floor,
        }
    }

    /// Records a completed job (run time and requested time, both > 0 to count).
    pub fn observe(&mut self, run_time: f64, requested: f64) {
        if !(run_time > 0.0 && requested > 0.0) {
            return;
        }
        let y = (run_time / requested).ln();
        self.moments = Some(match self.moments {
            None => (y, y * y),
            Some((m, q)) => {
                let r = self.smoothing;
                (r * y + (1.0 - r) * m, r * y * y + (1.0 - r) * q)
            }
        });
    }

    /// `(m_Y, sigma_Y)` (Eq. 45).
    pub fn log_moments(&self) -> Option<(f64, f64)> {
        self.moments
            .map(|(m, q)| (m, self.sigma_floor.max((q - m * m).max(0.0).sqrt())))
    }

    /// Predicted total run time of a queued job (Eq. 46): the median, `requested * exp(m_Y)`;
    /// the requested time before any completion.
    pub fn queued(&self, requested: f64) -> f64 {
        match self.moments {
            Some((m, _)) => requested * m.exp(),
            None => requested,
        }
    }

    /// Predicted remaining run time of a job that has run `elapsed` seconds (Eqs. 50-51);
    /// `requested - elapsed` before any completion.
    pub fn remaining(&self, requested: f64, elapsed: f64) -> f64 {
        let Some((m, sigma)) = self.log_moments() else {
            return (requested - elapsed).max(0.0);
        };
        if requested <= 0.0 {
            return 0.0;
        }
        let theta = requested.ln() + m;
        if elapsed <= 0.0 {
            return (theta + sigma * sigma / 2.0).exp();
        }
        let zeta = (elapsed.ln() - theta) / sigma;
        // exp(theta + s^2/2) * Sbar(zeta - s) / Sbar(zeta), with the ratio in log space.
        let log_mean = theta + sigma * sigma / 2.0 + log_normal_survival(zeta - sigma)
            - log_normal_survival(zeta);
        (log_mean.exp() - elapsed).max(0.0)
    }
}

/// `ln(1 - Phi(x))`, accurate far into both tails.
pub fn log_normal_survival(x: f64) -> f64 {
    if x < 30.0 {
        (0.5 * libm::erfc(x / std::f64::consts::SQRT_2)).ln()
    } else {
        // Mills-ratio asymptotic series: Sbar(x) = phi(x)/x * (1 - 1/x^2 + 3/x^4 - 15/x^6 ...)
        let x2 = x * x;
        let series =
            1.0 - 1.0 / x2 + 3.0 / (x2 * x2) - 15.0 / (x2 * x2 * x2) + 105.0 / (x2 * x2 * x2 * x2);
        -0.5 * x2 - (2.0 * std::f64::consts::PI).sqrt().ln() - x.ln() + series.ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// E[D - e | D > e] for log D ~ N(theta, sigma^2), by integrating over v = (ln D - theta) /
    /// sigma from zeta = (ln e - theta) / sigma, with the normal density scaled by its value at
    /// zeta so nothing underflows far in the tail (trapezoid rule, fine grid).
    fn integrated(theta: f64, sigma: f64, elapsed: f64) -> f64 {
        let zeta = (elapsed.ln() - theta) / sigma;
        let (mut num, mut den) = (0.0, 0.0);
        let steps = 400_000;
        let width = 40.0 / steps as f64;
        for k in 0..=steps {
            let v = zeta + k as f64 * width;
            let weight = if k == 0 || k == steps { 0.5 } else { 1.0 };
            let density = (-(v * v - zeta * zeta) / 2.0).exp();
            num += weight * density * ((theta + sigma * v).exp() - elapsed);
            den += weight * density;
        }
        num / den
    }

    fn predictor(m: f64, q: f64) -> RuntimePredictor {
        RuntimePredictor {
            moments: Some((m, q)),
            smoothing: 0.1,
            sigma_floor: 0.25,
        }
    }

    #[test]
    fn conditional_mean_matches_numerical_integration() {
        // m_Y = -0.3, sigma = 0.8 (q = m^2 + sigma^2); requested 3600 s.
        let p = predictor(-0.3, 0.09 + 0.64);
        let theta = 3600f64.ln() - 0.3;
        for elapsed in [1.0, 600.0, 3600.0, 20000.0, 200_000.0, 2_000_000.0] {
            let expected = integrated(theta, 0.8, elapsed);
            let got = p.remaining(3600.0, elapsed);
            assert!(
                (got - expected).abs() <= 1e-6 * expected.max(1.0),
                "elapsed {elapsed}: {got} vs {expected}"
            );
        }
    }

    #[test]
    fn far_tail_is_finite_and_close_to_the_integral() {
        // zeta around 12 and 40: the survival function is ~1e-33 and ~1e-350 (underflows).
        let p = predictor(0.0, 0.0625); // sigma at the floor 0.25
        let theta = 100f64.ln();
        for zeta in [12.0, 40.0] {
            let elapsed = (theta + 0.25 * zeta).exp();
            let expected = integrated(theta, 0.25, elapsed);
            let got = p.remaining(100.0, elapsed);
            assert!(got.is_finite() && got > 0.0);
            assert!(
                (got - expected).abs() <= 1e-4 * expected,
                "zeta {zeta}: {got} vs {expected}"
            );
        }
    }

    #[test]
    fn moments_follow_eqs_42_to_45() {
        let mut p = RuntimePredictor::new(0.5, 0.25);
        assert_eq!(p.remaining(100.0, 30.0), 70.0); // before any completion: requested - elapsed
        p.observe(50.0, 100.0); // Y1 = ln 0.5: m = Y1, q = Y1^2
        p.observe(200.0, 100.0); // Y2 = ln 2
        let (y1, y2) = (0.5f64.ln(), 2f64.ln());
        let m = 0.5 * y2 + 0.5 * y1;
        let q = 0.5 * y2 * y2 + 0.5 * y1 * y1;
        let (got_m, got_sigma) = p.log_moments().unwrap();
        assert!((got_m - m).abs() < 1e-12);
        assert!((got_sigma - (q - m * m).sqrt().max(0.25)).abs() < 1e-12);
        assert!((p.queued(100.0) - 100.0 * m.exp()).abs() < 1e-9);
        p.observe(0.0, 100.0); // zero-length jobs are left out
        assert!((p.log_moments().unwrap().0 - m).abs() < 1e-12);
    }
}
