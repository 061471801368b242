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
        RuntimePredictor { moments: None, smoothing, sigma_floor }
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

    pub fn is_ready(&self) -> bool {
        self.moments.is_some()
    }

    /// `(m_Y, sigma_Y)` (Eq. 45).
    pub fn log_moments(&self) -> Option<(f64, f64)> {
        self.moments.map(|(m, q)| (m, self.sigma_floor.max((q - m * m).max(0.0).sqrt())))
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
        let series = 1.0 - 1.0 / x2 + 3.0 / (x2 * x2) - 15.0 / (x2 * x2 * x2) + 105.0 / (x2 * x2 * x2 * x2);
        -0.5 * x2 - (2.0 * std::f64::consts::PI).sqrt().ln() - x.ln() + series.ln()
    }
}
