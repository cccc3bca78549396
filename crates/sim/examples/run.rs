//! Runs a scenario file and prints its summary JSON:
//! `cargo run --release --example run -- FILE [SERIES_DIR]` (series as CSV when a dir is given;
//! pcap files of the scenario's `capture` links go to $BLOATLAB_CAPTURE_DIR when set;
//! `BLOATLAB_PROGRESS=SECONDS` prints a progress line to stderr that often;
//! `BLOATLAB_THREADS=N` overrides the scenario's `threads`).

use bloatlab_sim::Column;
use std::io::Write;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: run SCENARIO.toml [SERIES_DIR]");
    let series_dir = args.next();
    let text = std::fs::read_to_string(&path).expect("readable scenario file");
    let capture_dir = std::env::var_os("BLOATLAB_CAPTURE_DIR").map(std::path::PathBuf::from);
    let progress = std::env::var("BLOATLAB_PROGRESS").ok().map(|s| {
        std::time::Duration::from_secs_f64(s.parse().expect("BLOATLAB_PROGRESS: seconds"))
    });
    let opts = bloatlab_sim::RunOptions {
        seed: None,
        series: series_dir.is_some(),
        capture_dir,
        progress,
        threads: std::env::var("BLOATLAB_THREADS")
            .ok()
            .map(|s| s.parse().expect("BLOATLAB_THREADS: a thread count")),
    };
    match bloatlab_sim::run_toml(&text, &opts) {
        Ok(out) => {
            println!("{}", out.summary_json);
            if let Some(dir) = series_dir {
                std::fs::create_dir_all(&dir).expect("series dir");
                for t in out.tables {
                    let mut f =
                        std::fs::File::create(format!("{dir}/{}.csv", t.name)).expect("csv file");
                    let names: Vec<&str> = t.columns.iter().map(|(n, _)| n.as_str()).collect();
                    writeln!(f, "{}", names.join(",")).unwrap();
                    let rows = match &t.columns[0].1 {
                        Column::F64(v) => v.len(),
                        Column::I64(v) => v.len(),
                        Column::Str(v) => v.len(),
                    };
                    for r in 0..rows {
                        let cells: Vec<String> = t
                            .columns
                            .iter()
                            .map(|(_, c)| match c {
                                Column::F64(v) => format!("{}", v[r]),
                                Column::I64(v) => v[r].to_string(),
                                Column::Str(v) => v[r].clone(),
                            })
                            .collect();
                        writeln!(f, "{}", cells.join(",")).unwrap();
                    }
                }
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
