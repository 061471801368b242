//! The power manager's decision log: one row per call (mode, screen, spare target, actions)
//! and, with `--decision-log full`, every spare candidate weighed; handed out as the engine's
//! generic columns.

use crate::engine::{Column, LogTable};
use crate::power::config::Mode;
use crate::power::screen::SeriesStats;
use crate::power::stats::Rejection;

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

/// The log a manager keeps as the run goes. A copy (a look-ahead's) starts empty.
#[derive(Debug, Default)]
pub struct PowerLog {
    pub records: Vec<PowerRecord>,
    /// Spare candidates (target, W, E, J) the records' ranges point into.
    pub candidates: Vec<CandidateRow>,
    /// Keep `candidates`? Off by default: on a year-long trace they are most of the log.
    pub detail: bool,
}

impl Clone for PowerLog {
    fn clone(&self) -> Self {
        PowerLog {
            detail: self.detail,
            ..PowerLog::default()
        }
    }
}

impl PowerLog {
    /// Adds a call's row and its candidates (kept only with `detail`).
    pub fn push(&mut self, mut record: PowerRecord, candidates: &[CandidateRow]) {
        let first = self.candidates.len() as u32;
        if self.detail {
            self.candidates.extend_from_slice(candidates);
        }
        record.candidates = first..self.candidates.len() as u32;
        self.records.push(record);
    }

    pub fn rows(&self) -> usize {
        self.records.len() + self.candidates.len()
    }

    /// Takes the log out as columns (docs/formats.md, `power_decisions.parquet`).
    pub fn take(&mut self) -> LogTable {
        let r = std::mem::take(&mut self.records);
        let candidates = std::mem::take(&mut self.candidates);
        let mut t = LogTable::default();
        t.add("time", &r, |r| r.time, Column::F64);
        t.add("mode", &r, |r| r.mode as u8, Column::U8);
        t.add("rejection", &r, |r| r.rejection.0, Column::U8);
        type Series = fn(&PowerRecord) -> ScreenRow;
        let series: [([&'static str; 5], Series); 2] = [
            (
                [
                    "arrival_samples",
                    "arrival_cv",
                    "arrival_lag1",
                    "arrival_ks",
                    "arrival_ks_threshold",
                ],
                |r| r.arrivals,
            ),
            (
                [
                    "service_samples",
                    "service_cv",
                    "service_lag1",
                    "service_ks",
                    "service_ks_threshold",
                ],
                |r| r.service,
            ),
        ];
        for (names, pick) in series {
            t.add(names[0], &r, |r| pick(r).n, Column::U32);
            t.add(names[1], &r, |r| pick(r).cv, Column::F32);
            t.add(names[2], &r, |r| pick(r).lag1, Column::F32);
            t.add(names[3], &r, |r| pick(r).ks, Column::F32);
            t.add(names[4], &r, |r| pick(r).ks_threshold, Column::F32);
        }
        t.add("arrival_rate", &r, |r| r.arrival_rate, Column::F32);
        t.add("service_rate", &r, |r| r.service_rate, Column::F32);
        t.add("runtime_ratio", &r, |r| r.runtime_ratio, Column::F32);
        t.add("spare_planning", &r, |r| r.spare_planning, Column::Bool);
        t.add("gate_open", &r, |r| r.gate_open, Column::Bool);
        let target = |r: &PowerRecord| {
            if r.target == u32::MAX {
                f64::NAN
            } else {
                f64::from(r.target)
            }
        };
        t.add("target", &r, target, Column::F64);
        t.add("waiting_cost", &r, |r| r.chosen[0], Column::F32);
        t.add("energy_cost", &r, |r| r.chosen[1], Column::F32);
        t.add("total_cost", &r, |r| r.chosen[2], Column::F32);
        // `--decision-log full`: every spare candidate considered (target, W, E, J), flat, with
        // each call's offsets; the compact log has neither them nor their count
        if self.detail {
            t.add("candidates", &r, |r| r.candidates.len() as u32, Column::U32);
            let mut offsets = Vec::with_capacity(r.len() + 1);
            offsets.push(0u64);
            let mut all: Vec<CandidateRow> = Vec::with_capacity(candidates.len());
            for rec in &r {
                let range = rec.candidates.start as usize..rec.candidates.end as usize;
                all.extend_from_slice(&candidates[range]);
                offsets.push(all.len() as u64);
            }
            t.push("candidate_offsets", Column::U64(offsets));
            t.add("candidate_targets", &all, |c| c.0, Column::U32);
            t.add("candidate_waiting", &all, |c| c.1, Column::F64);
            t.add("candidate_energy", &all, |c| c.2, Column::F64);
            t.add("candidate_cost", &all, |c| c.3, Column::F64);
        }
        t.add("started", &r, |r| r.started, Column::U32);
        t.add("wakes", &r, |r| r.wakes, Column::U32);
        t.add("shutdowns", &r, |r| r.shutdowns, Column::U32);
        t.add("queue_length", &r, |r| r.queue_length, Column::U32);
        t.add("seconds", &r, |r| r.seconds, Column::F32);
        t
    }
}
