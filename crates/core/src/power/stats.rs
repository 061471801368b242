//! What SNF-ICON learns online (Algorithm 1, line 1): interarrival and service samples for the
//! screen, EMA estimators of the arrival and service rates (Eqs. 17-18), the request-size PMF
//! (Eq. 19) and the runtime predictor (Appendix A).

use std::collections::VecDeque;

use crate::engine::View;
use crate::power::config::IconConfig;
use crate::power::predict::RuntimePredictor;
use crate::power::screen::{screen, SeriesStats};

/// Weights at or below this are dropped from the request-size PMF (as the authors' code does).
const PRUNE: f64 = 1e-9;

/// Screen outcome: why a series was rejected, as bits (see [`Rejection`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rejection(pub u8);

impl Rejection {
    pub const ARRIVALS_FEW: u8 = 1;
    pub const ARRIVALS_CV: u8 = 2;
    pub const ARRIVALS_LAG1: u8 = 4;
    pub const ARRIVALS_KS: u8 = 8;
    /// The service bits are the arrival bits shifted by 4.
    pub const SERVICE_SHIFT: u8 = 4;

    fn add(&mut self, series: u8, stats: &SeriesStats, min_samples: usize, config: &IconConfig) {
        let shift = series * Self::SERVICE_SHIFT;
        if stats.n < min_samples {
            self.0 |= Self::ARRIVALS_FEW << shift;
        } else if !stats.accepted {
            if (stats.cv - 1.0).abs() > config.screen.cv_tolerance || stats.cv.is_nan() {
                self.0 |= Self::ARRIVALS_CV << shift;
            }
            if stats.autocorrelation.abs() > config.screen.max_autocorrelation {
                self.0 |= Self::ARRIVALS_LAG1 << shift;
            }
            if stats.ks_distance > stats.ks_threshold {
                self.0 |= Self::ARRIVALS_KS << shift;
            }
        }
    }

    pub fn accepted(self) -> bool {
        self.0 == 0
    }

    /// The failed checks, e.g. "arrivals: few samples; service: cv, ks" (the statistics are
    /// in the record's columns).
    pub fn describe(self) -> String {
        let mut reasons = Vec::new();
        for (series, name) in [(0u8, "arrivals"), (1, "service")] {
            let bits = self.0 >> (series * Self::SERVICE_SHIFT);
            let checks: Vec<&str> = [
                (Self::ARRIVALS_FEW, "few samples"),
                (Self::ARRIVALS_CV, "cv"),
                (Self::ARRIVALS_LAG1, "lag-1"),
                (Self::ARRIVALS_KS, "ks"),
            ]
            .iter()
            .filter(|(bit, _)| bits & bit != 0)
            .map(|&(_, text)| text)
            .collect();
            if !checks.is_empty() {
                reasons.push(format!("{name}: {}", checks.join(", ")));
            }
        }
        reasons.join("; ")
    }
}

/// SNF-ICON's online statistics.
#[derive(Debug, Clone)]
pub struct IconStats {
    pub last_arrival: Option<f64>,
    arrival_gaps: VecDeque<(f64, f64)>,
    service_times: VecDeque<(f64, f64)>,
    mean_gap: f64,
    mean_service: Option<f64>,
    mean_requested: Option<f64>,
    /// Request-size weights, indexed by nodes (Eq. 19, unnormalised).
    size_weights: Vec<f64>,
    pub predictor: RuntimePredictor,
    series: Vec<f64>,
    scratch: Vec<f64>,
    /// The last screen, valid while no sample entered or left the window.
    screened: Option<(Rejection, SeriesStats, SeriesStats)>,
}

impl IconStats {
    pub fn new(config: &IconConfig) -> Self {
        IconStats {
            last_arrival: None,
            arrival_gaps: VecDeque::new(),
            service_times: VecDeque::new(),
            mean_gap: 1.0 / config.initial_arrival_rate,
            mean_service: None,
            mean_requested: None,
            size_weights: Vec::new(),
            predictor: RuntimePredictor::new(config.service_smoothing, config.sigma_floor),
            series: Vec::new(),
            scratch: Vec::new(),
            screened: None,
        }
    }

    /// Consumes the arrivals and completions of this instant.
    pub fn observe(&mut self, view: &View, config: &IconConfig) {
        let n = view.machine_nodes as usize;
        if self.size_weights.len() != n + 1 {
            self.size_weights = vec![0.0; n + 1];
        }
        for &job in view.arrived {
            let j = view.jobs.get(job);
            if let Some(last) = self.last_arrival {
                let gap = (view.now - last).max(0.0);
                self.arrival_gaps.push_back((view.now, gap));
                self.mean_gap = config.arrival_smoothing * gap
                    + (1.0 - config.arrival_smoothing) * self.mean_gap;
            }
            self.last_arrival = Some(view.now);
            self.observe_size((j.nodes as usize).min(n), config.resource_smoothing);
            let req = j.requested_time;
            if req > 0.0 {
                let s = config.service_smoothing;
                self.mean_requested =
                    Some(self.mean_requested.map_or(req, |m| s * req + (1.0 - s) * m));
            }
        }
        for &(job, start, end) in view.completed {
            let run = end - start;
            let requested = view.jobs.get(job).requested_time;
            self.predictor.observe(run, requested);
            if run > 0.0 {
                self.service_times.push_back((end, run));
                let s = config.service_smoothing;
                self.mean_service =
                    Some(self.mean_service.map_or(run, |m| s * run + (1.0 - s) * m));
            }
        }
        let mut changed = !(view.arrived.is_empty() && view.completed.is_empty());
        let horizon = view.now - config.screen_window;
        for series in [&mut self.arrival_gaps, &mut self.service_times] {
            while series.front().is_some_and(|&(t, _)| t < horizon) {
                series.pop_front();
                changed = true;
            }
            while series.len() > config.screen.max_samples {
                series.pop_front();
            }
        }
        if changed {
            self.screened = None;
        }
    }

    /// Eq. 19: the newest request's weight grows by the smoothing factor, the others decay.
    fn observe_size(&mut self, size: usize, smoothing: f64) {
        if self.size_weights.iter().all(|&w| w == 0.0) {
            self.size_weights[size] = 1.0;
            return;
        }
        for w in &mut self.size_weights {
            *w *= 1.0 - smoothing;
            if *w <= PRUNE {
                *w = 0.0;
            }
        }
        self.size_weights[size] += smoothing;
    }

    /// The screen (Definition 4): both series must pass (the service one only when required).
    pub fn screen(&mut self, config: &IconConfig) -> (Rejection, SeriesStats, SeriesStats) {
        if let Some(screened) = self.screened {
            return screened;
        }
        self.series.clear();
        self.series
            .extend(self.arrival_gaps.iter().map(|&(_, g)| g));
        let arrivals = screen(&self.series, &config.screen, &mut self.scratch);
        self.series.clear();
        self.series
            .extend(self.service_times.iter().map(|&(_, d)| d));
        let service = screen(&self.series, &config.screen, &mut self.scratch);
        let mut rejection = Rejection::default();
        rejection.add(0, &arrivals, config.screen.min_samples, config);
        if config.require_service_samples {
            rejection.add(1, &service, config.screen.min_samples, config);
        }
        self.screened = Some((rejection, arrivals, service));
        (rejection, arrivals, service)
    }

    pub fn arrival_rate(&self) -> f64 {
        1.0 / self.mean_gap.max(1e-9)
    }

    /// Eq. 18: observed run times, before any completion the requested ones.
    pub fn service_rate(&self) -> f64 {
        match (self.mean_service, self.mean_requested) {
            (Some(m), _) => 1.0 / m.max(1e-9),
            (None, Some(r)) => 1.0 / r.max(1e-9),
            (None, None) => 0.0,
        }
    }

    /// `p[r - 1]`: probability that the next job requests `r` nodes, for r = 1..=n.
    pub fn size_pmf(&self, n: usize) -> Vec<f64> {
        let total: f64 = self.size_weights.iter().sum();
        let mut pmf = vec![0.0; n];
        if total > 0.0 {
            for (r, &w) in self.size_weights.iter().enumerate().skip(1).take(n) {
                pmf[r - 1] = w / total;
            }
        } else if n > 0 {
            pmf[0] = 1.0;
        }
        pmf
    }
}
