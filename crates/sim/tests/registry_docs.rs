//! Every registered plug-in name is documented in docs/scenario.md (in backticks), and every
//! registry has the one shape (`params::plugin::Entry`: unique names, a doc line, keys listed
//! once and apart from the extension point's own). One function per registry kind; a new kind
//! is one more function calling `check` and `check_list`.

use bloatlab_sim::cc::{known_names, CcTransport, CONTROLLERS};
use bloatlab_sim::gateway::REWRITERS;
use bloatlab_sim::params::plugin::check_list;
use bloatlab_sim::queue::DISCIPLINES;
use bloatlab_sim::tcp::rwnd::POLICIES;

fn scenario_doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/scenario.md");
    std::fs::read_to_string(path).expect("docs/scenario.md")
}

/// Fails with the list of `names` of a `kind` that docs/scenario.md never writes as `name`.
fn check(kind: &str, names: impl IntoIterator<Item = &'static str>) {
    let doc = scenario_doc();
    let missing: Vec<&str> =
        names.into_iter().filter(|n| !doc.contains(&format!("`{n}`"))).collect();
    assert!(missing.is_empty(), "{kind} not documented in docs/scenario.md: {missing:?}");
}

#[test]
fn congestion_controls_are_documented() {
    check("TCP congestion controls", known_names(CcTransport::Tcp));
    check("DCCP congestion controls", known_names(CcTransport::Dccp));
    // A name may be TCP's and DCCP's (`bbr`): unique per transport.
    for tr in [CcTransport::Tcp, CcTransport::Dccp] {
        let names = known_names(tr);
        assert!(names.iter().enumerate().all(|(i, n)| !names[i + 1..].contains(n)), "{names:?}");
    }
    for e in CONTROLLERS {
        assert!(!e.doc.is_empty(), "{}: no doc line", e.name);
    }
}

#[test]
fn ack_rewriters_are_documented() {
    check("ACK rewriters", REWRITERS.iter().map(|e| e.name));
    check_list(REWRITERS, &["kind"]);
}

#[test]
fn receive_window_policies_are_documented() {
    check("receive-window policies", POLICIES.iter().map(|e| e.name));
    check_list(POLICIES, &[]);
}

#[test]
fn queue_disciplines_are_documented() {
    check("queue disciplines", DISCIPLINES.iter().map(|d| d.name));
    check_list(DISCIPLINES, &["kind", "limit"]);
}
