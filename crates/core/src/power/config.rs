//! What a power manager is told (its kind and parameters) and what it records per call.

use crate::power::screen::ScreenConfig;

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
