//! No import circles among the simulator's modules, and the bottom layer reads only itself.
//!
//! The rule: module A *uses* module B when a file of A names a path into B — a `use crate::…`,
//! `use super::…` tree, or an inline `crate::b::…` / `super::…` path anywhere (test modules
//! included: a circle through a test is still a circle to whoever reads the code). A module is
//! a top-level file or directory under `src/`; inside `config/` each file or directory is a
//! module of its own (the scenario reader is big enough for its parts to circle). A path is
//! resolved to the deepest module file it names (a name re-exported by a `mod.rs` resolves to
//! that directory). A directory's `mod.rs` and its own files are one module: the parent
//! declares and re-exports its children, the children read the parent's shared types.
//!
//! `cargo test -p bloatlab-sim --test integration layers:: -- --nocapture` prints the module graph;
//! `LAYERS_SRC=<other checkout>/crates/sim/src` checks another tree instead.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Directories whose second level is a module of its own.
const SPLIT: &[&str] = &["config"];

/// The bottom layer, lowest first: each may use only the ones before it.
const BOTTOM: &[&str] = &["units", "ids", "wire", "linux", "params"];

struct Source {
    /// The module path of the file (`config::topology::routes`; empty for lib.rs).
    module: Vec<String>,
    rel: String,
    text: String,
}

fn sources() -> Vec<Source> {
    // LAYERS_SRC: another checkout's src/, to measure it (e.g. before a change).
    let root = std::env::var_os("LAYERS_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    let mut files = Vec::new();
    walk(&root, &mut files);
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let rel = f.strip_prefix(&root).unwrap().with_extension("");
            let mut module: Vec<String> =
                rel.iter().map(|c| c.to_string_lossy().into_owned()).collect();
            let last = module.last().cloned().unwrap_or_default();
            let dir = last == "mod" || last == "lib";
            if dir {
                module.pop();
            }
            let text = strip_comments(&fs::read_to_string(&f).unwrap());
            Source {
                module,
                rel: format!("src/{}", f.strip_prefix(&root).unwrap().display()),
                text,
            }
        })
        .collect()
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Drops `//` comments (doc comments name paths in prose and links); a `//` inside a string
/// literal is not one.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut in_str = false;
        let mut prev = ' ';
        let mut cut = line.len();
        for (i, c) in line.char_indices() {
            if c == '"' && prev != '\\' {
                in_str = !in_str;
            }
            if !in_str && c == '/' && prev == '/' {
                cut = i - 1;
                break;
            }
            prev = c;
        }
        out.push_str(&line[..cut]);
        out.push('\n');
    }
    out
}

/// The leaf paths of a `use` tree (`a::{b, c::{d, e as f}}` → a::b, a::c::d, a::c::e).
fn expand(prefix: &str, tree: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let leaf = tree.split(" as ").next().unwrap().trim();
        out.push(format!("{prefix}{leaf}"));
        return;
    };
    let head = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap()];
    let (mut depth, mut start) = (0, 0);
    let mut parts = Vec::new();
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    for p in parts.into_iter().filter(|p| !p.trim().is_empty()) {
        expand(&format!("{prefix}{head}"), p, out);
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every `crate::`/`super::`/`self::` path a file names, with its line.
fn paths(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let line_of = |i: usize| text[..i].matches('\n').count() + 1;
    // `use` trees (possibly spanning lines).
    let mut rest = 0;
    while let Some(k) = text[rest..].find("use ") {
        let at = rest + k;
        rest = at + 4;
        if at > 0 && is_ident(text[..at].chars().last().unwrap()) {
            continue;
        }
        let tail = text[at + 4..].trim_start();
        if !(tail.starts_with("crate::")
            || tail.starts_with("super::")
            || tail.starts_with("self::"))
        {
            continue;
        }
        let Some(end) = tail.find(';') else { continue };
        let mut leaves = Vec::new();
        expand("", &tail[..end], &mut leaves);
        out.extend(leaves.into_iter().map(|l| (l, line_of(at))));
    }
    // Inline paths.
    for root in ["crate::", "super::"] {
        let mut rest = 0;
        while let Some(k) = text[rest..].find(root) {
            let at = rest + k;
            rest = at + root.len();
            let before = text[..at].chars().last().unwrap_or(' ');
            if is_ident(before) || before == ':' {
                continue;
            }
            let len =
                text[at..].find(|c: char| !(is_ident(c) || c == ':')).unwrap_or(text.len() - at);
            out.push((text[at..at + len].trim_end_matches(':').to_string(), line_of(at)));
        }
    }
    out
}

/// The absolute module path a path names (its last parts may be items, not modules).
fn absolute(src: &Source, path: &str) -> Vec<String> {
    let mut parts: Vec<&str> = path.split("::").collect();
    let mut base: Vec<String> = src.module.clone();
    if parts[0] == "crate" {
        parts.remove(0);
        base.clear();
    } else {
        // `self` of a file `a/b.rs` is `a::b`, and so is that of `a/b/mod.rs`.
        while let Some(&p) = parts.first() {
            match p {
                "super" => {
                    base.pop();
                }
                "self" => {}
                _ => break,
            }
            parts.remove(0);
        }
    }
    base.extend(parts.iter().map(|p| p.to_string()));
    base
}

/// The node of a module: its top-level module, or two levels inside a [`SPLIT`] directory.
fn node(module: &[String]) -> String {
    match module {
        [] => "lib".into(),
        [top, second, ..] if SPLIT.contains(&top.as_str()) => format!("{top}::{second}"),
        [top, ..] => top.clone(),
    }
}

struct Graph {
    /// node -> used node -> one place that uses it (file:line).
    edges: BTreeMap<String, BTreeMap<String, String>>,
    /// node -> its files.
    files: BTreeMap<String, BTreeSet<String>>,
}

fn graph() -> Graph {
    let srcs = sources();
    let modules: BTreeSet<Vec<String>> = srcs.iter().map(|s| s.module.clone()).collect();
    let mut g = Graph { edges: BTreeMap::new(), files: BTreeMap::new() };
    for s in &srcs {
        let from = node(&s.module);
        g.files.entry(from.clone()).or_default().insert(s.rel.clone());
        g.edges.entry(from.clone()).or_default();
        for (p, line) in paths(&s.text) {
            let abs = absolute(s, &p);
            // The deepest module the path names.
            let Some(target) =
                (1..=abs.len()).rev().map(|k| abs[..k].to_vec()).find(|m| modules.contains(m))
            else {
                continue;
            };
            let to = node(&target);
            // A directory's mod.rs and its files are one module (see the file's doc).
            let related = from == to
                || from.starts_with(&format!("{to}::"))
                || to.starts_with(&format!("{from}::"));
            if related || to == "lib" {
                continue;
            }
            g.edges
                .get_mut(&from)
                .unwrap()
                .entry(to)
                .or_insert_with(|| format!("{}:{line}", s.rel));
        }
    }
    g
}

/// Strongly connected components of two or more nodes (Tarjan).
fn cycles(edges: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<Vec<String>> {
    struct St<'a> {
        e: &'a BTreeMap<String, BTreeMap<String, String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(st: &mut St<'a>, v: &'a str) {
        let i = st.index.len();
        st.index.insert(v, i);
        st.low.insert(v, i);
        st.stack.push(v);
        st.on.insert(v);
        for w in st.e[v].keys() {
            let w = w.as_str();
            if !st.index.contains_key(w) {
                visit(st, w);
                let lw = st.low[w];
                let lv = st.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if st.on.contains(w) {
                let iw = st.index[w];
                let lv = st.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if st.low[v] == st.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = st.stack.pop().unwrap();
                st.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                st.out.push(comp);
            }
        }
    }
    let mut st = St {
        e: edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !st.index.contains_key(v.as_str()) {
            visit(&mut st, v);
        }
    }
    st.out.sort_by_key(|c| std::cmp::Reverse(c.len()));
    st.out
}

#[test]
fn no_module_uses_itself_through_others() {
    let g = graph();
    for (from, to) in &g.edges {
        println!("{from} -> {}", to.keys().cloned().collect::<Vec<_>>().join(", "));
    }
    let found = cycles(&g.edges);
    let report = describe(&found, &g.edges, |c| {
        let files: usize = c.iter().map(|n| g.files[n].len()).sum();
        format!("{} modules ({files} files)", c.len())
    });
    assert!(found.is_empty(), "import circles among crates/sim/src modules:{report}");
}

#[test]
fn the_bottom_layer_reads_only_what_is_below_it() {
    let g = graph();
    for (i, m) in BOTTOM.iter().enumerate() {
        let allowed = &BOTTOM[..i];
        for (to, at) in &g.edges[*m] {
            assert!(
                allowed.contains(&to.as_str()),
                "{m} uses {to} ({at}); it may use only {allowed:?}"
            );
        }
    }
}

#[test]
fn the_parser_sees_trees_inline_paths_and_super() {
    let text = strip_comments(
        "use crate::a::{b::C, d::{E, f as g}};\n// use crate::zz::Q;\nfn x() { crate::h::i(); super::j::K; }\n",
    );
    let got: Vec<String> = paths(&text).into_iter().map(|(p, _)| p).collect();
    for want in ["crate::a::b::C", "crate::a::d::E", "crate::a::d::f", "crate::h::i", "super::j::K"]
    {
        assert!(got.iter().any(|p| p == want), "{want} not in {got:?}");
    }
    assert!(!got.iter().any(|p| p.contains("zz")), "{got:?}");
}

/// The same rule one level down: no file of the crate uses itself through other files. Each
/// file is its own node here; a path into a parent or a child module (a `mod.rs` re-exporting
/// its children, a child reading its parent's shared types) is not an edge.
#[test]
fn no_file_uses_itself_through_others() {
    let srcs = sources();
    let modules: BTreeSet<Vec<String>> = srcs.iter().map(|s| s.module.clone()).collect();
    let mut edges: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for s in &srcs {
        let from = s.module.join("::");
        edges.entry(from.clone()).or_default();
        for (p, line) in paths(&s.text) {
            let abs = absolute(s, &p);
            let Some(target) =
                (1..=abs.len()).rev().map(|k| abs[..k].to_vec()).find(|m| modules.contains(m))
            else {
                continue;
            };
            let related = s.module.starts_with(&target) || target.starts_with(&s.module);
            if related {
                continue;
            }
            edges
                .entry(from.clone())
                .or_default()
                .entry(target.join("::"))
                .or_insert_with(|| format!("{}:{line}", s.rel));
        }
    }
    for v in edges.values().flat_map(|m| m.keys().cloned()).collect::<Vec<_>>() {
        edges.entry(v).or_default();
    }
    let found = cycles(&edges);
    let report = describe(&found, &edges, |c| format!("{} files", c.len()));
    assert!(found.is_empty(), "import circles among crates/sim/src files:{report}");
}

/// Each circle with its size and the edges that close it (where each use is).
fn describe(
    found: &[Vec<String>],
    edges: &BTreeMap<String, BTreeMap<String, String>>,
    size: impl Fn(&[String]) -> String,
) -> String {
    let mut report = String::new();
    for c in found {
        report += &format!("\ncircle of {}: {}\n", size(c), c.join(", "));
        for a in c {
            for (b, at) in edges[a].iter().filter(|(b, _)| c.contains(b)) {
                report += &format!("  {a} -> {b}  ({at})\n");
            }
        }
    }
    report
}
