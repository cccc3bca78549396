//! Every script under tests/packetdrill/*.pkt must PASS against the simulator's TCP (the
//! scripts under known-differences/ expect what Linux does where the simulator differs, and
//! are not run here; see docs/packetdrill.md).

use bloatlab_sim::packetdrill::{run_script, Options, Outcome};
use std::path::PathBuf;

fn scripts(dir: &str) -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..").join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pkt"))
        .collect();
    v.sort();
    v
}

#[test]
fn every_script_passes() {
    let files = scripts("tests/packetdrill");
    assert!(files.len() >= 16, "expected the script suite, found {}", files.len());
    let mut bad = Vec::new();
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let out = run_script(&src, &Options::default());
        if out != Outcome::Passed {
            bad.push(format!("{}: {out:?}", f.display()));
        }
    }
    assert!(bad.is_empty(), "scripts not passing:\n{}", bad.join("\n"));
}

/// The known-difference scripts parse and run to a verdict other than PASSED: each documents
/// a place where the simulator's TCP differs from Linux's.
#[test]
fn known_differences_do_not_pass() {
    for f in scripts("tests/packetdrill/known-differences") {
        let src = std::fs::read_to_string(&f).unwrap();
        let out = run_script(&src, &Options::default());
        assert!(
            matches!(out, Outcome::Failed { .. } | Outcome::Unsupported { .. }),
            "{}: {out:?}",
            f.display()
        );
    }
}

/// Development aid: `PKT=path cargo test --test integration packetdrill_scripts::one_script -- --nocapture`.
#[test]
fn one_script() {
    if let Ok(p) = std::env::var("PKT") {
        for f in p.split(',') {
            let src = std::fs::read_to_string(f).unwrap();
            println!("{f}: {:?}", run_script(&src, &Options::default()));
        }
    }
}

/// Development aid: `PDSUITE=dir cargo test --release --test integration packetdrill_scripts::suite --
/// --nocapture` runs every *.pkt below `dir` (e.g. an extracted upstream gtests/net/tcp) and
/// prints one line per script and the tally by status.
#[test]
fn suite() {
    let Ok(root) = std::env::var("PDSUITE") else { return };
    fn walk(d: &std::path::Path, out: &mut Vec<PathBuf>) {
        let mut es: Vec<PathBuf> =
            std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()).collect();
        es.sort();
        for p in es {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "pkt") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(std::path::Path::new(&root), &mut files);
    let mut tally = std::collections::BTreeMap::new();
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let out = run_script(&src, &Options::default());
        *tally.entry(out.label()).or_insert(0) += 1;
        println!("{}\t{}", f.display(), out.to_json());
    }
    println!("TALLY {tally:?}");
}
