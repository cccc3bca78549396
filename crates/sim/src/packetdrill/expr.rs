//! `%{ ... }%` blocks: packetdrill runs them as Python with the socket's TCP_INFO fields bound
//! to `tcpi_*` names. The subset here is `assert EXPR[, message]` statements over numbers and
//! those names, with + - * / // % & |, comparisons (chained too), `and`, `or`, `not`, parentheses,
//! and `NAME = EXPR` statements binding a name to a constant (an expression over numbers and
//! names bound before, no TCP_INFO field), which later blocks see too, as in the one Python
//! program packetdrill makes of them. Other statements are reported as unsupported, not skipped.

use super::ScriptError;

/// The TCP_INFO fields the runner models (see docs/packetdrill.md for units).
pub const FIELDS: &[&str] = &[
    "tcpi_state",
    "tcpi_ca_state",
    "tcpi_retransmits",
    "tcpi_backoff",
    "tcpi_rto",
    "tcpi_snd_mss",
    "tcpi_rcv_mss",
    "tcpi_advmss",
    "tcpi_unacked",
    "tcpi_sacked",
    "tcpi_lost",
    "tcpi_retrans",
    "tcpi_total_retrans",
    "tcpi_rtt",
    "tcpi_rttvar",
    "tcpi_min_rtt",
    "tcpi_snd_ssthresh",
    "tcpi_snd_cwnd",
    "tcpi_snd_wnd",
    "tcpi_rcv_wscale",
    "tcpi_snd_wscale",
    "tcpi_options",
    "tcpi_pacing_rate",
    "tcpi_delivery_rate",
    "tcpi_delivered_ce",
    "tcpi_received_ce",
    "tcpi_reordering",
    "tcpi_reord_seen",
    "tcpi_last_data_recv",
    "tcpi_busy_time",
    "tcpi_rwnd_limited",
    "tcpi_bytes_acked",
    "tcpi_bytes_received",
    "tcpi_segs_out",
    "tcpi_data_segs_out",
];

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Num(f64),
    Var(String),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Bin(&'static str, Box<Expr>, Box<Expr>),
    /// `a < b <= c`: Python's chained comparison.
    Chain(Box<Expr>, Vec<(&'static str, Expr)>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Assert {
    pub line: u32,
    pub col: u32,
    pub text: String,
    pub expr: Expr,
}

/// What a block holds: its asserts, or the first statement the runner cannot model.
pub enum Block {
    Asserts(Vec<Assert>),
    Unsupported(u32, u32, String),
}

/// Parses the text of a `%{ ... }%` block that starts at (`line`, `col`) of the script
/// (`col` of the character after `%{`). `consts`: the names earlier blocks bound, and those
/// this one binds are added.
pub fn parse_block(
    text: &str,
    line: u32,
    col: u32,
    consts: &mut Vec<(String, f64)>,
) -> Result<Block, ScriptError> {
    let mut out = Vec::new();
    for (k, raw) in text.split('\n').enumerate() {
        let l = line + k as u32;
        let base = if k == 0 { col } else { 1 };
        // Python's explicit line joining: a `\` at the end of a line continues it. After a
        // `;` (the upstream form) nothing is continued; inside a statement it is not modeled.
        let (raw, joined) = match raw.trim_end().strip_suffix('\\') {
            Some(r) => (r, true),
            None => (raw, false),
        };
        let pieces = split_statements(raw);
        if joined && pieces.last().is_some_and(|(_, s)| !s.trim().is_empty()) {
            return Ok(Block::Unsupported(
                l,
                base,
                "a `\\` line continuation inside a statement".to_string(),
            ));
        }
        for stmt in pieces {
            let (off, s) = stmt;
            let lead = s.len() - s.trim_start().len();
            let s_trim = s.trim();
            let c = base + (off + lead) as u32;
            if s_trim.is_empty() || s_trim.starts_with('#') {
                continue;
            }
            // `NAME += EXPR` (or -=, *=) on a bound constant: NAME = NAME op (EXPR).
            let augmented = augmented(s_trim, consts);
            let s_trim = augmented.as_deref().unwrap_or(s_trim);
            if let Some((name, rhs)) = assignment(s_trim) {
                let rhs_col = c + (s_trim.len() - rhs.len()) as u32;
                let mut p =
                    ExprParser { toks: tokenize(rhs, l, rhs_col)?, i: 0, line: l, col: rhs_col };
                let e = substitute(p.or()?, consts);
                if let Some(t) = p.toks.get(p.i) {
                    return Err(ScriptError::new(l, t.1, format!("unexpected `{}`", t.0)));
                }
                let reads_field = std::cell::Cell::new(false);
                match eval(&e, &|_| {
                    reads_field.set(true);
                    0.0
                }) {
                    Ok(v) if v.is_finite() && !reads_field.get() => {
                        consts.retain(|(n, _)| n != name);
                        consts.push((name.to_string(), v));
                        continue;
                    }
                    _ => {
                        return Ok(Block::Unsupported(
                            l,
                            c,
                            format!("python assignment `{s_trim}` (only constants are modeled)"),
                        ))
                    }
                }
            }
            // `print(...)` writes to packetdrill's output and decides nothing: skipped.
            if s_trim.strip_prefix("print").is_some_and(|r| {
                let r = r.trim_start();
                r.starts_with('(') && r.ends_with(')')
            }) {
                continue;
            }
            let Some(rest) =
                s_trim.strip_prefix("assert").filter(|r| r.starts_with([' ', '\t', '(']))
            else {
                return Ok(Block::Unsupported(
                    l,
                    c,
                    format!("python statement `{s_trim}` (only `assert` is modeled)"),
                ));
            };
            // `assert cond, message`: the message is not evaluated.
            let cond = top_level_comma(rest).map_or(rest, |i| &rest[..i]);
            let cond_col = c + 6 + (rest.len() - rest.trim_start().len()) as u32;
            let mut p = ExprParser {
                toks: tokenize(cond.trim(), l, cond_col)?,
                i: 0,
                line: l,
                col: cond_col,
            };
            let expr = substitute(p.or()?, consts);
            if let Some(t) = p.toks.get(p.i) {
                return Err(ScriptError::new(l, t.1, format!("unexpected `{}` in assert", t.0)));
            }
            if let Some(v) = unknown_var(&expr) {
                return Ok(Block::Unsupported(
                    l,
                    c,
                    format!(
                        "`{v}` is not a modeled TCP_INFO field (modeled: {})",
                        FIELDS.join(", ")
                    ),
                ));
            }
            out.push(Assert { line: l, col: c, text: cond.trim().to_string(), expr });
        }
    }
    Ok(Block::Asserts(out))
}

/// `NAME op= EXPR` for a constant an earlier statement bound, rewritten as the plain
/// assignment `NAME = NAME op (EXPR)`; `None` for anything else (an unbound name stays
/// unsupported, as a plain assignment of a field would be).
fn augmented(s: &str, consts: &[(String, f64)]) -> Option<String> {
    let i = s.find("=")?;
    let (lhs, rhs) = (s[..i].trim_end(), s[i + 1..].trim());
    let op = lhs.chars().last().filter(|c| matches!(c, '+' | '-' | '*'))?;
    let name = lhs[..lhs.len() - 1].trim();
    consts.iter().any(|(n, _)| n == name).then(|| format!("{name} = {name} {op} ({rhs})"))
}

/// `NAME = EXPR` (a plain assignment, not `==` or an augmented one): the name and EXPR.
fn assignment(s: &str) -> Option<(&str, &str)> {
    let i = s.find('=')?;
    let (name, rhs) = (s[..i].trim(), &s[i + 1..]);
    let ident = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (ident && name != "assert" && !rhs.starts_with('=')).then_some((name, rhs.trim()))
}

/// `e` with the names bound by earlier assignments replaced by their values.
fn substitute(e: Expr, consts: &[(String, f64)]) -> Expr {
    let s = |e: Box<Expr>| Box::new(substitute(*e, consts));
    match e {
        Expr::Var(v) => match consts.iter().rev().find(|(n, _)| *n == v) {
            Some(&(_, x)) => Expr::Num(x),
            None => Expr::Var(v),
        },
        Expr::Num(_) => e,
        Expr::Not(a) => Expr::Not(s(a)),
        Expr::Neg(a) => Expr::Neg(s(a)),
        Expr::Bin(op, a, b) => Expr::Bin(op, s(a), s(b)),
        Expr::Chain(a, rest) => {
            Expr::Chain(s(a), rest.into_iter().map(|(op, e)| (op, substitute(e, consts))).collect())
        }
    }
}

fn split_statements(raw: &str) -> Vec<(usize, &str)> {
    let mut v = Vec::new();
    let mut start = 0;
    for (i, ch) in raw.char_indices() {
        if ch == ';' {
            v.push((start, &raw[start..i]));
            start = i + 1;
        }
    }
    v.push((start, &raw[start..]));
    v
}

fn top_level_comma(s: &str) -> Option<usize> {
    let mut depth = 0i32;
    for (i, ch) in s.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}

fn unknown_var(e: &Expr) -> Option<String> {
    match e {
        Expr::Num(_) => None,
        Expr::Var(v) => (!FIELDS.contains(&v.as_str())).then(|| v.clone()),
        Expr::Not(a) | Expr::Neg(a) => unknown_var(a),
        Expr::Bin(_, a, b) => unknown_var(a).or_else(|| unknown_var(b)),
        Expr::Chain(a, rest) => {
            unknown_var(a).or_else(|| rest.iter().find_map(|(_, e)| unknown_var(e)))
        }
    }
}

/// (token text, column)
type ETok = (String, u32);

fn tokenize(s: &str, line: u32, col: u32) -> Result<Vec<ETok>, ScriptError> {
    let b = s.as_bytes();
    let mut v = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let at = col + s[..i].chars().count() as u32;
        if c == b' ' || c == b'\t' || c == b'\r' {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'.' || b[j] == b'_') {
                j += 1;
            }
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
        } else if s[i..].starts_with("==")
            || s[i..].starts_with("!=")
            || s[i..].starts_with("<=")
            || s[i..].starts_with(">=")
            || s[i..].starts_with("//")
        {
            j = i + 2;
        } else if !b"+-*/%()<>&|".contains(&c) {
            let ch = s[i..].chars().next().unwrap_or('?');
            return Err(ScriptError::new(
                line,
                at,
                format!("unexpected character {ch:?} in assert"),
            ));
        }
        v.push((s[i..j].to_string(), at));
        i = j;
    }
    Ok(v)
}

struct ExprParser {
    toks: Vec<ETok>,
    i: usize,
    line: u32,
    col: u32,
}

const CMP: &[&str] = &["==", "!=", "<=", ">=", "<", ">"];

impl ExprParser {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.i).map(|t| t.0.as_str())
    }
    fn err(&self, msg: &str) -> ScriptError {
        let c = self.toks.get(self.i).map_or(self.col + 1, |t| t.1);
        ScriptError::new(self.line, c, msg)
    }
    fn take(&mut self, ops: &[&'static str]) -> Option<&'static str> {
        let p = self.peek()?;
        let op = ops.iter().find(|o| **o == p)?;
        self.i += 1;
        Some(op)
    }
    fn or(&mut self) -> Result<Expr, ScriptError> {
        let mut a = self.and()?;
        while self.take(&["or"]).is_some() {
            a = Expr::Bin("or", Box::new(a), Box::new(self.and()?));
        }
        Ok(a)
    }
    fn and(&mut self) -> Result<Expr, ScriptError> {
        let mut a = self.not()?;
        while self.take(&["and"]).is_some() {
            a = Expr::Bin("and", Box::new(a), Box::new(self.not()?));
        }
        Ok(a)
    }
    fn not(&mut self) -> Result<Expr, ScriptError> {
        if self.take(&["not"]).is_some() {
            return Ok(Expr::Not(Box::new(self.not()?)));
        }
        self.cmp()
    }
    fn cmp(&mut self) -> Result<Expr, ScriptError> {
        let a = self.bits()?;
        let mut rest = Vec::new();
        while let Some(op) = self.take(CMP) {
            rest.push((op, self.bits()?));
        }
        Ok(if rest.is_empty() { a } else { Expr::Chain(Box::new(a), rest) })
    }
    /// `|` and `&` bind tighter than comparisons, as in Python (flag tests: `x & 4 == 4`).
    fn bits(&mut self) -> Result<Expr, ScriptError> {
        let mut a = self.bitand()?;
        while self.take(&["|"]).is_some() {
            a = Expr::Bin("|", Box::new(a), Box::new(self.bitand()?));
        }
        Ok(a)
    }
    fn bitand(&mut self) -> Result<Expr, ScriptError> {
        let mut a = self.sum()?;
        while self.take(&["&"]).is_some() {
            a = Expr::Bin("&", Box::new(a), Box::new(self.sum()?));
        }
        Ok(a)
    }
    fn sum(&mut self) -> Result<Expr, ScriptError> {
        let mut a = self.product()?;
        while let Some(op) = self.take(&["+", "-"]) {
            a = Expr::Bin(op, Box::new(a), Box::new(self.product()?));
        }
        Ok(a)
    }
    fn product(&mut self) -> Result<Expr, ScriptError> {
        let mut a = self.unary()?;
        while let Some(op) = self.take(&["*", "//", "/", "%"]) {
            a = Expr::Bin(op, Box::new(a), Box::new(self.unary()?));
        }
        Ok(a)
    }
    fn unary(&mut self) -> Result<Expr, ScriptError> {
        if self.take(&["-"]).is_some() {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        if self.take(&["+"]).is_some() {
            return self.unary();
        }
        self.atom()
    }
    fn atom(&mut self) -> Result<Expr, ScriptError> {
        let Some((t, _)) = self.toks.get(self.i).cloned() else {
            return Err(self.err("assert expression ends too early"));
        };
        if t == "(" {
            self.i += 1;
            let e = self.or()?;
            if self.take(&[")"]).is_none() {
                return Err(self.err("expected `)`"));
            }
            return Ok(e);
        }
        let first = t.as_bytes()[0];
        if first.is_ascii_digit() || first == b'.' {
            let v = parse_number(&t).ok_or_else(|| self.err(&format!("bad number `{t}`")))?;
            self.i += 1;
            return Ok(Expr::Num(v));
        }
        if first.is_ascii_alphabetic() || first == b'_' {
            if ["and", "or", "not"].contains(&t.as_str()) {
                return Err(self.err(&format!("unexpected `{t}`")));
            }
            self.i += 1;
            return Ok(match t.as_str() {
                "True" => Expr::Num(1.0),
                "False" => Expr::Num(0.0),
                // The constants packetdrill's Python defines for asserts (Linux's
                // enum tcp_ca_state and the TCPI_OPT_* bits of tcpi_options).
                "TCP_CA_Open" => Expr::Num(0.0),
                "TCP_CA_Disorder" => Expr::Num(1.0),
                "TCP_CA_CWR" => Expr::Num(2.0),
                "TCP_CA_Recovery" => Expr::Num(3.0),
                "TCP_CA_Loss" => Expr::Num(4.0),
                "TCPI_OPT_TIMESTAMPS" => Expr::Num(1.0),
                "TCPI_OPT_SACK" => Expr::Num(2.0),
                "TCPI_OPT_WSCALE" => Expr::Num(4.0),
                "TCPI_OPT_ECN" => Expr::Num(8.0),
                "TCPI_OPT_ECN_SEEN" => Expr::Num(16.0),
                "TCPI_OPT_SYN_DATA" => Expr::Num(32.0),
                _ => Expr::Var(t),
            });
        }
        Err(self.err(&format!("unexpected `{t}`")))
    }
}

fn parse_number(t: &str) -> Option<f64> {
    let t = t.replace('_', "");
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok().map(|v| v as f64);
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Evaluates `e` with `var` giving each field's value. Python semantics for truth (non-zero)
/// and comparisons; division by zero is an error message.
pub fn eval(e: &Expr, var: &dyn Fn(&str) -> f64) -> Result<f64, String> {
    let b = |x: bool| if x { 1.0 } else { 0.0 };
    Ok(match e {
        Expr::Num(v) => *v,
        Expr::Var(n) => var(n),
        Expr::Not(a) => b(eval(a, var)? == 0.0),
        Expr::Neg(a) => -eval(a, var)?,
        Expr::Bin("and", x, y) => {
            let l = eval(x, var)?;
            if l == 0.0 {
                l
            } else {
                eval(y, var)?
            }
        }
        Expr::Bin("or", x, y) => {
            let l = eval(x, var)?;
            if l != 0.0 {
                l
            } else {
                eval(y, var)?
            }
        }
        Expr::Bin(op, x, y) => {
            let (l, r) = (eval(x, var)?, eval(y, var)?);
            match *op {
                "+" => l + r,
                "-" => l - r,
                "*" => l * r,
                "/" | "//" | "%" if r == 0.0 => return Err("division by zero".into()),
                "/" => l / r,
                "//" => (l / r).floor(),
                "%" => l - r * (l / r).floor(),
                "&" => ((l as i64) & (r as i64)) as f64,
                "|" => ((l as i64) | (r as i64)) as f64,
                _ => unreachable!("operator {op}"),
            }
        }
        Expr::Chain(first, rest) => {
            let mut l = eval(first, var)?;
            for (op, e) in rest {
                let r = eval(e, var)?;
                let ok = match *op {
                    "==" => l == r,
                    "!=" => l != r,
                    "<" => l < r,
                    "<=" => l <= r,
                    ">" => l > r,
                    ">=" => l >= r,
                    _ => unreachable!("comparison {op}"),
                };
                if !ok {
                    return Ok(0.0);
                }
                l = r;
            }
            1.0
        }
    })
}

/// The variables `e` reads, in first-use order (for failure messages).
pub fn vars(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Num(_) => {}
        Expr::Var(v) => {
            if !out.contains(v) {
                out.push(v.clone());
            }
        }
        Expr::Not(a) | Expr::Neg(a) => vars(a, out),
        Expr::Bin(_, a, b) => {
            vars(a, out);
            vars(b, out);
        }
        Expr::Chain(a, rest) => {
            vars(a, out);
            for (_, e) in rest {
                vars(e, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Assert {
        match parse_block(text, 1, 3, &mut Vec::new()).unwrap() {
            Block::Asserts(mut v) => v.remove(0),
            Block::Unsupported(_, _, w) => panic!("{w}"),
        }
    }

    #[test]
    fn comparisons_and_logic() {
        let a = one(" assert tcpi_snd_cwnd == 10 and tcpi_snd_ssthresh > 5, 'msg' ");
        let v = |n: &str| if n == "tcpi_snd_cwnd" { 10.0 } else { 7.0 };
        assert_eq!(eval(&a.expr, &v).unwrap(), 1.0);
        let a = one("assert 100000 <= tcpi_rto <= 300000");
        assert_eq!(eval(&a.expr, &|_| 300000.0).unwrap(), 1.0);
        assert_eq!(eval(&a.expr, &|_| 300001.0).unwrap(), 0.0);
        let a = one("assert not (tcpi_ca_state == 4) or tcpi_lost // 2 == 1");
        assert_eq!(eval(&a.expr, &|n| if n == "tcpi_ca_state" { 4.0 } else { 3.0 }).unwrap(), 1.0);
    }

    #[test]
    fn print_is_skipped_and_augmented_assignments_update_a_constant() {
        let mut consts = Vec::new();
        let text = "print(tcpi_snd_cwnd); cwnd = 58; cwnd += 2; cwnd -= 1; cwnd *= 2\nassert tcpi_snd_cwnd == cwnd";
        let Block::Asserts(a) = parse_block(text, 1, 3, &mut consts).unwrap() else {
            panic!("unsupported")
        };
        assert_eq!(consts, vec![("cwnd".to_string(), 118.0)]);
        assert_eq!(a.len(), 1);
        assert_eq!(eval(&a[0].expr, &|_| 118.0).unwrap(), 1.0);
        assert_eq!(eval(&a[0].expr, &|_| 117.0).unwrap(), 0.0);
    }

    #[test]
    fn other_statements_are_unsupported_and_bad_syntax_is_an_error() {
        assert!(matches!(
            parse_block("tcpi_rto.bit_length()", 1, 3, &mut Vec::new()).unwrap(),
            Block::Unsupported(1, 3, _)
        ));
        // An augmented assignment of a name no statement bound stays unsupported.
        assert!(matches!(
            parse_block("cwnd += 1", 1, 3, &mut Vec::new()).unwrap(),
            Block::Unsupported(1, 3, _)
        ));
        assert!(matches!(
            parse_block("assert tcpi_bogus == 1", 1, 3, &mut Vec::new()).unwrap(),
            Block::Unsupported(..)
        ));
        // A `\` after `;` ends the line (upstream's form); inside a statement: unsupported.
        match parse_block(
            "assert tcpi_rto > 0;\\\n assert tcpi_rtt > 0;\\\n",
            1,
            3,
            &mut Vec::new(),
        )
        .unwrap()
        {
            Block::Asserts(v) => assert_eq!(v.len(), 2),
            _ => panic!("expected two asserts"),
        }
        assert!(matches!(
            parse_block("assert tcpi_rto > \\\n 0", 1, 3, &mut Vec::new()).unwrap(),
            Block::Unsupported(1, 3, _)
        ));
        let e = parse_block("\n  assert tcpi_rto == ", 4, 3, &mut Vec::new()).err().unwrap();
        assert_eq!(e.line, 5);
        let e = parse_block("assert tcpi_rto $ 3", 2, 3, &mut Vec::new()).err().unwrap();
        assert_eq!((e.line, e.col), (2, 19));
    }

    #[test]
    fn assignments_bind_constants_for_later_blocks() {
        let mut consts = Vec::new();
        match parse_block(" BIG = 0x7fffffff; HALF = BIG // 2 ", 1, 3, &mut consts).unwrap() {
            Block::Asserts(v) => assert!(v.is_empty()),
            Block::Unsupported(_, _, w) => panic!("{w}"),
        }
        assert_eq!(consts, vec![("BIG".into(), 2147483647.0), ("HALF".into(), 1073741823.0)]);
        let a = match parse_block("assert tcpi_snd_ssthresh == BIG", 2, 3, &mut consts).unwrap() {
            Block::Asserts(mut v) => v.remove(0),
            Block::Unsupported(_, _, w) => panic!("{w}"),
        };
        assert_eq!(eval(&a.expr, &|_| 2147483647.0).unwrap(), 1.0);
        assert_eq!(eval(&a.expr, &|_| 10.0).unwrap(), 0.0);
        // A name bound to a TCP_INFO reading is state the runner does not keep.
        assert!(matches!(
            parse_block("x = tcpi_rto > 0", 3, 3, &mut consts).unwrap(),
            Block::Unsupported(3, 3, _)
        ));
        // Not assignments: comparisons and augmented assignments.
        assert_eq!(assignment("a == 1"), None);
        assert_eq!(assignment("a += 1"), None);
        assert_eq!(assignment("a = 1"), Some(("a", "1")));
    }
}
