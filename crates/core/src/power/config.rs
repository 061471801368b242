//! What a power manager is told (its kind and parameters) and what it records per call.

use crate::power::screen::{ScreenConfig, SeriesStats};
use crate::power::stats::Rejection;

/// SNF-ICON parameters (SNF-ICON Table I).
#[derive(Debug, Clone, PartialEq)]
pub struct IconConfig {
    pub alpha: f64,
    pub beta: f64,
    pub initial_arrival_rate: f64,
    pub arrival_smoothing: f64,
    pub service_smoothing: f64,
    pub resource_smoothing: f64,
    pub sigma_floor: f64,
    pub min_spares: u32,
    /// `None`: the platform size.
    pub max_spares: Option<u32>,
    pub max_horizon: f64,
    pub recency_window: f64,
    /// Fall back to IPM when the screen rejects (off in the -nf variants).
    pub fallback: bool,
    /// The arrival-recency gate (off in the -ng variants).
    pub gate: bool,
    pub screen_window: f64,
    pub screen: ScreenConfig,
    pub require_service_samples: bool,
    pub stale_completion_shutdown: bool,
}

impl Default for IconConfig {
    fn default() -> Self {
        IconConfig {
            alpha: 5000.0,
            beta: 1.0,
            initial_arrival_rate: 1.0 / 3600.0,
            arrival_smoothing: 0.2,
            service_smoothing: 0.1,
            resource_smoothing: 0.1,
            sigma_floor: 0.25,
            min_spares: 1,
            max_spares: None,
            max_horizon: 24.0 * 3600.0,
            recency_window: 12.0 * 3600.0,
            fallback: true,
            gate: true,
            screen_window: 2.0 * 3600.0,
            screen: ScreenConfig::default(),
            require_service_samples: true,
            stale_completion_shutdown: true,
        }
    }
}

/// A power manager: IPM (idle timeout and wakes for planned jobs) or ICON (IPM plus runtime
/// prediction and warm spares when the recent workload looks Markovian).
#[derive(Debug, Clone, PartialEq)]
pub struct ManagerConfig {
    /// Seconds an idle node waits before it may be switched off.
    pub idle_timeout: f64,
    /// ICON's parameters; `None` for IPM.
    pub icon: Option<IconConfig>,
    /// Plan wakes node by node even where the plan on classes of alike nodes applies (the
    /// reference the class plan is tested against: both decide the same).
    pub plan_by_node: bool,
}

/// Mode of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Mode {
    /// IPM (no ICON).
    Ipm = 0,
    /// ICON with a rejected or data-sparse screen: IPM for this call.
    Fallback = 1,
    Icon = 2,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Ipm => "ipm",
            Mode::Fallback => "fallback",
            Mode::Icon => "icon",
        }
    }
}

/// What the screen measured on one series, as the log keeps it (f32: diagnostics).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScreenRow {
    pub n: u32,
    pub cv: f32,
    pub lag1: f32,
    pub ks: f32,
    pub ks_threshold: f32,
}

impl ScreenRow {
    pub const NONE: ScreenRow = ScreenRow {
        n: 0,
        cv: f32::NAN,
        lag1: f32::NAN,
        ks: f32::NAN,
        ks_threshold: f32::NAN,
    };

    pub fn of(stats: &SeriesStats) -> Self {
        ScreenRow {
            n: stats.n as u32,
            cv: stats.cv as f32,
            lag1: stats.autocorrelation as f32,
            ks: stats.ks_distance as f32,
            ks_threshold: stats.ks_threshold as f32,
        }
    }
}

/// One row of the power decision log, kept compact (a long run makes hundreds of thousands):
/// times in f64, diagnostics in f32.
#[derive(Debug, Clone, PartialEq)]
pub struct PowerRecord {
    pub time: f64,
    /// Wall-clock time of the call (s).
    pub seconds: f32,
    pub mode: Mode,
    /// Why the screen rejected (bits; empty when accepted or not evaluated).
    pub rejection: Rejection,
    pub spare_planning: bool,
    pub gate_open: bool,
    /// The screen's statistics (ICON only; `ScreenRow::NONE` otherwise).
    pub arrivals: ScreenRow,
    pub service: ScreenRow,
    pub arrival_rate: f32,
    pub service_rate: f32,
    /// Median actual/requested runtime ratio (exp(m_Y)), NaN before any completion.
    pub runtime_ratio: f32,
    /// Candidates (target, W, E, J) when spare planning ran: a range of the run log's flat
    /// candidate list.
    pub candidates: std::ops::Range<u32>,
    /// The chosen target (`u32::MAX` without spare planning) and its (W, E, J).
    pub target: u32,
    pub chosen: [f32; 3],
    pub started: u32,
    pub wakes: u32,
    pub shutdowns: u32,
    pub queue_length: u32,
}

/// A spare candidate as the log keeps it: (target, W, E, J).
pub type CandidateRow = (u32, f64, f64, f64);

/// The idle timeout when none is given (s; SNF-ICON's Table I).
pub const DEFAULT_IDLE_TIMEOUT: f64 = 7200.0;

/// Names of the power managers: `ipm`, `icon` and ICON's ablations.
pub const MANAGER_NAMES: [&str; 5] = ["ipm", "icon", "icon-ng", "icon-nf", "icon-ngnf"];

/// Builds a manager's configuration from its name; `icon` carries ICON's parameters (its gate
/// and fallback flags are set from the name's variant).
pub fn manager_config(name: &str, idle_timeout: f64, icon: IconConfig) -> Option<ManagerConfig> {
    let icon = match name {
        "ipm" => None,
        "icon" | "icon-ng" | "icon-nf" | "icon-ngnf" => {
            let variant = name.trim_start_matches("icon");
            Some(IconConfig {
                gate: !variant.contains("ng"),
                fallback: !variant.contains("nf"),
                ..icon
            })
        }
        _ => return None,
    };
    Some(ManagerConfig {
        idle_timeout,
        icon,
        plan_by_node: false,
    })
}
