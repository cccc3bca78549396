//! Helpers for the congestion-control integration tests: run a TOML scenario with its time
//! series and read columns of the per-flow table.

#![allow(dead_code)]

use bloatlab_sim::{run_toml, Column, RunOptions, Table};
use serde_json::Value;

pub struct Run {
    pub summary: Value,
    pub tables: Vec<Table>,
}

pub fn run(toml: &str, seed: Option<u64>, series: bool) -> Run {
    let out = run_toml(toml, &RunOptions { seed, series, ..RunOptions::default() })
        .unwrap_or_else(|e| panic!("run failed: {e}"));
    Run {
        summary: serde_json::from_str(&out.summary_json).expect("summary is JSON"),
        tables: out.tables,
    }
}

impl Run {
    /// A number from the summary by dotted path (`flows.0.goodput_mbps`).
    pub fn f(&self, path: &str) -> f64 {
        let mut cur = &self.summary;
        for part in path.split('.') {
            cur = match part.parse::<usize>() {
                Ok(i) => &cur[i],
                Err(_) => &cur[part],
            };
        }
        cur.as_f64().unwrap_or_else(|| panic!("{path} is not a number: {cur}"))
    }

    fn column(&self, table: &str, name: &str) -> &Column {
        let t = self
            .tables
            .iter()
            .find(|t| t.name == table)
            .unwrap_or_else(|| panic!("no table {table}"));
        &t.columns
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no column {table}.{name}"))
            .1
    }

    /// A numeric column of the `flows` table (all flows), as f64.
    pub fn num(&self, name: &str) -> Vec<f64> {
        match self.column("flows", name) {
            Column::F64(v) => v.clone(),
            Column::I64(v) => v.iter().map(|&x| x as f64).collect(),
            Column::Str(_) => panic!("flows.{name} is a string column"),
        }
    }

    pub fn text(&self, name: &str) -> Vec<String> {
        match self.column("flows", name) {
            Column::Str(v) => v.clone(),
            _ => panic!("flows.{name} is not a string column"),
        }
    }

    /// A numeric column of the `queues` table for one link (`bottleneck`), as f64.
    pub fn queue(&self, link: &str, name: &str) -> Vec<f64> {
        let links = match self.column("queues", "link") {
            Column::Str(v) => v.clone(),
            _ => panic!("queues.link"),
        };
        let vals: Vec<f64> = match self.column("queues", name) {
            Column::F64(v) => v.clone(),
            Column::I64(v) => v.iter().map(|&x| x as f64).collect(),
            Column::Str(_) => panic!("queues.{name} is a string column"),
        };
        links.iter().zip(vals).filter(|(l, _)| l.as_str() == link).map(|(_, v)| v).collect()
    }
}

/// Start times of the runs of `label` in a state column sampled at `t`.
pub fn entries(t: &[f64], states: &[String], label: &str) -> Vec<f64> {
    let mut out = Vec::new();
    let mut prev = false;
    for (ti, s) in t.iter().zip(states) {
        let now = s == label;
        if now && !prev {
            out.push(*ti);
        }
        prev = now;
    }
    out
}
