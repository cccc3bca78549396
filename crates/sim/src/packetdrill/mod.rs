//! A packetdrill-compatible script runner: one simulated TCP endpoint ([`crate::tcp::TcpSocket`])
//! driven by a script in packetdrill's syntax. System calls act on the endpoint, inbound
//! segments are injected at their script times, outbound segments are checked field by field
//! against what the endpoint sends, and `%{ assert ... }%` blocks test its TCP_INFO fields.
//!
//! [`lexer`] → [`parser`] (the subset's grammar, into [`ast`]) → [`runner`] (a small event
//! loop of its own around the socket). A line the simulator cannot model makes the script
//! UNSUPPORTED, never silently PASSED; a malformed script is an error with line and column.
//! See docs/packetdrill.md.

pub mod ast;
pub mod expr;
pub mod lexer;
pub mod parser;
pub mod runner;

use std::fmt;

/// A malformed script: what is wrong and where (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl ScriptError {
    pub fn new(line: u32, col: u32, message: impl Into<String>) -> ScriptError {
        ScriptError { line, col, message: message.into() }
    }
}

impl fmt::Display for ScriptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

/// How a script run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// The first mismatch: where, and expected vs actual.
    Failed {
        line: u32,
        col: u32,
        message: String,
    },
    /// A line the simulator cannot model.
    Unsupported {
        line: u32,
        col: u32,
        what: String,
    },
    /// The script does not parse.
    Malformed(ScriptError),
}

impl Outcome {
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed { .. } => "failed",
            Outcome::Unsupported { .. } => "unsupported",
            Outcome::Malformed(_) => "malformed",
        }
    }

    /// One JSON object: {"status", "line", "column", "message"} (no position when passed).
    pub fn to_json(&self) -> String {
        let (line, col, msg) = match self {
            Outcome::Passed => return serde_json::json!({"status": "passed"}).to_string(),
            Outcome::Failed { line, col, message } => (*line, *col, message.clone()),
            Outcome::Unsupported { line, col, what } => (*line, *col, what.clone()),
            Outcome::Malformed(e) => (e.line, e.col, e.message.clone()),
        };
        serde_json::json!({"status": self.label(), "line": line, "column": col, "message": msg})
            .to_string()
    }
}

/// Settings of a run (packetdrill's command-line flags that matter here).
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// Timing tolerance of outbound segments (packetdrill's --tolerance_usecs).
    pub tolerance_usecs: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options { tolerance_usecs: 4_000 }
    }
}

/// The class of an unsupported line, from what the runner says of it (the summary table
/// counts scripts by class).
pub fn unsupported_class(what: &str) -> &'static str {
    let w = what.to_ascii_lowercase();
    let classes: &[(&str, &[&str])] = &[
        ("command-line flag", &["command-line flag"]),
        ("shell command", &["shell command"]),
        ("sysctl mode", &["net.ipv4", "congestion control"]),
        ("blocking call", &["blocking", "blocks"]),
        ("urgent data (URG)", &["urg"]),
        ("TCP option", &["tcp option", "<...>"]),
        ("non-TCP packet / IP field", &["only tcp", "ip field", "udp", "icmp"]),
        ("TCP_INFO field", &["tcp_info field", "tcpi_"]),
        ("send flag (MSG_*)", &["with msg_"]),
        ("socket option", &["setsockopt", "getsockopt", "so_", "tcp_"]),
        ("assert block", &["python", "%{", "statement", "assert"]),
        (
            "system call",
            &["system call", "socket", "fcntl", "read()", "write()", "connect", "accept"],
        ),
    ];
    for (class, keys) in classes {
        if keys.iter().any(|k| w.contains(k)) {
            return class;
        }
    }
    "other"
}

/// Runs one script and reports as JSON: the outcome's [`Outcome::to_json`] fields, plus
/// `class` for an unsupported one ([`unsupported_class`]) and `ignored`, the sysctls the
/// script sets that the runner does not model.
pub fn run_script_json(src: &str, opts: &Options) -> String {
    let (outcome, ignored) = match parser::parse(src) {
        Err(e) => (Outcome::Malformed(e), Vec::new()),
        Ok(script) => (runner::run(&script, opts), runner::ignored_sysctls(&script)),
    };
    let mut v: serde_json::Value = serde_json::from_str(&outcome.to_json()).expect("valid JSON");
    if let Outcome::Unsupported { what, .. } = &outcome {
        v["class"] = unsupported_class(what).into();
    }
    v["ignored"] = ignored.into();
    v.to_string()
}

/// Parses and runs one script.
pub fn run_script(src: &str, opts: &Options) -> Outcome {
    match parser::parse(src) {
        Err(e) => Outcome::Malformed(e),
        Ok(script) => runner::run(&script, opts),
    }
}
