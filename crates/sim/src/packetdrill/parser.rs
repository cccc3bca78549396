//! The grammar of the supported subset, one event per line:
//!
//! ```text
//! line    := [time] (packet | syscall | `%{` code `}%` | "`" command "`") | '--' NAME ['=' text]
//! time    := '*' | tval ['~' tval] | tval '...' tval (blocking call: `connect` only)
//! tval    := ['+'] NUM                      seconds, absolute or after the previous event
//! packet  := ('<' | '>') ['[' ecn ']'] FLAGS NUM ':' NUM '(' NUM ')' ['ack' NUM] ['win' NUM]
//!            ['<' opt {',' opt} '>']
//! opt     := 'nop' | 'eol' | 'mss' NUM | 'wscale' NUM | 'sackOK' | 'sack' {NUM ':' NUM}
//!            | 'TS' 'val' NUM 'ecr' NUM
//! syscall := NAME '(' [arg {',' arg}] ')' '=' ['-'] NUM [ERRNO ['(' text ')']]
//! arg     := '...' | ['-'] NUM | SYM {'|' SYM} | STRING | '[' args ']' | '{' NAME '=' arg, ... '}'
//! ```

use super::ast::*;
use super::expr::{self, Block};
use super::lexer::{lex, Tok, Token};
use super::ScriptError;

/// System calls the runner models.
pub const SYSCALLS: &[&str] = &[
    "socket",
    "bind",
    "listen",
    "accept",
    "connect",
    "write",
    "send",
    "sendmsg",
    "read",
    "close",
    "shutdown",
    "setsockopt",
    "getsockopt",
    "fcntl",
];
/// packetdrill system calls the runner does not model (reported as unsupported).
const UNMODELED_SYSCALLS: &[&str] = &[
    "poll",
    "sendto",
    "recv",
    "recvfrom",
    "recvmsg",
    "writev",
    "readv",
    "ioctl",
    "sendfile",
    "splice",
    "epoll_create",
    "epoll_ctl",
    "epoll_wait",
    "open",
    "pipe",
    "getsockname",
    "accept4",
    "socketpair",
    "sendmmsg",
    "recvmmsg",
    "setitimer",
];

pub fn parse(src: &str) -> Result<Script, ScriptError> {
    let toks = lex(src)?;
    let mut script = Script::default();
    let mut last: u64 = 0;
    let mut consts = Vec::new();
    for line in statements(&toks) {
        if line.is_empty() {
            continue;
        }
        let mut p = LineParser { t: &line, i: 0 };
        let ev = p.event(&mut last, &mut consts)?;
        script.events.push(ev);
    }
    Ok(script)
}

/// The token runs of one statement each: a newline inside `()`, `[]` or `{}` continues the
/// statement (the upstream suite writes long system calls over several lines).
fn statements(toks: &[Token]) -> Vec<Vec<Token>> {
    let mut out = Vec::new();
    let (mut start, mut depth) = (0usize, 0i32);
    for (i, t) in toks.iter().enumerate() {
        match t.tok {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => depth = (depth - 1).max(0),
            Tok::Newline if depth == 0 => {
                out.push(&toks[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&toks[start..]);
    out.into_iter().map(|l| l.iter().filter(|t| t.tok != Tok::Newline).cloned().collect()).collect()
}

struct LineParser<'a> {
    t: &'a [Token],
    i: usize,
}

fn err_at(t: &Token, msg: impl Into<String>) -> ScriptError {
    ScriptError::new(t.line, t.col, msg)
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Num(s) | Tok::Ident(s) => format!("`{s}`"),
        Tok::Str(s) => format!("\"{s}\""),
        Tok::Code(_) => "a %{ }% block".into(),
        Tok::Shell(_) => "a `command`".into(),
        Tok::Ellipsis => "`...`".into(),
        Tok::Punct(c) => format!("`{c}`"),
        Tok::Newline => "end of line".into(),
    }
}

/// Seconds as written (`0.100`, `2`) to nanoseconds, without floating point.
fn seconds_ns(s: &str) -> Option<u64> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty()
        || !int.bytes().all(|c| c.is_ascii_digit())
        || !frac.bytes().all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let mut f = frac.to_string();
    f.truncate(9);
    while f.len() < 9 {
        f.push('0');
    }
    int.parse::<u64>().ok()?.checked_mul(1_000_000_000)?.checked_add(f.parse::<u64>().ok()?)
}

fn integer(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn fmt_secs(ns: u64) -> String {
    format!("{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000)
}

impl<'a> LineParser<'a> {
    fn peek(&self) -> Option<&'a Token> {
        self.t.get(self.i)
    }
    fn here(&self) -> &'a Token {
        self.t.get(self.i).unwrap_or_else(|| self.t.last().expect("non-empty line"))
    }
    /// An error at the current token (or just past the line's last one).
    fn err(&self, msg: impl Into<String>) -> ScriptError {
        match self.peek() {
            Some(t) => err_at(t, msg),
            None => {
                let l = self.t.last().expect("non-empty line");
                ScriptError::new(l.line, l.col + (l.end - l.start) as u32, msg)
            }
        }
    }
    fn is_punct(&self, c: char) -> bool {
        matches!(self.peek(), Some(Token { tok: Tok::Punct(p), .. }) if *p == c)
    }
    fn eat_punct(&mut self, c: char) -> bool {
        if self.is_punct(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn expect_punct(&mut self, c: char, what: &str) -> Result<(), ScriptError> {
        if self.eat_punct(c) {
            return Ok(());
        }
        let found = self.peek().map_or("end of line".to_string(), |t| describe(&t.tok));
        Err(self.err(format!("expected `{c}` {what}, found {found}")))
    }
    fn is_ident(&self, s: &str) -> bool {
        matches!(self.peek(), Some(Token { tok: Tok::Ident(x), .. }) if x == s)
    }
    fn num(&mut self, what: &str) -> Result<u64, ScriptError> {
        if let Some(Token { tok: Tok::Num(s), .. }) = self.peek() {
            if let Some(v) = integer(s) {
                self.i += 1;
                return Ok(v);
            }
        }
        let found = self.peek().map_or("end of line".to_string(), |t| describe(&t.tok));
        Err(self.err(format!("expected {what} (an integer), found {found}")))
    }
    fn num_max(&mut self, what: &str, max: u64) -> Result<u64, ScriptError> {
        let at = self.i;
        let v = self.num(what)?;
        if v > max {
            return Err(err_at(&self.t[at], format!("{what} {v} is out of range (0..={max})")));
        }
        Ok(v)
    }
    fn end(&self) -> Result<(), ScriptError> {
        match self.peek() {
            None => Ok(()),
            Some(t) => Err(err_at(t, format!("unexpected {} at end of line", describe(&t.tok)))),
        }
    }

    fn tval(&mut self) -> Result<TimeVal, ScriptError> {
        let rel = self.eat_punct('+');
        match self.peek() {
            Some(t @ Token { tok: Tok::Num(s), .. }) => {
                let ns = seconds_ns(s).ok_or_else(|| err_at(t, format!("bad time `{s}`")))?;
                self.i += 1;
                Ok(if rel { TimeVal::Rel(ns) } else { TimeVal::Abs(ns) })
            }
            _ => Err(self.err("expected a time (seconds, `+` for relative)")),
        }
    }

    /// `--name[=value]`: a packetdrill command-line flag written in the script.
    fn flag(&mut self) -> Result<Event, ScriptError> {
        let first = &self.t[0];
        self.i = 2;
        let mut name = String::new();
        while let Some(t) = self.peek() {
            match &t.tok {
                Tok::Ident(x) | Tok::Num(x) => name += x,
                Tok::Punct('-') => name.push('-'),
                _ => break,
            }
            self.i += 1;
        }
        if name.is_empty() {
            return Err(self.err("expected a flag name after `--`"));
        }
        let mut value = String::new();
        if self.eat_punct('=') {
            // The value as written: the rest of the line's source text.
            while let Some(t) = self.peek() {
                value += &match &t.tok {
                    Tok::Num(x) | Tok::Ident(x) | Tok::Str(x) => x.clone(),
                    Tok::Punct(c) => c.to_string(),
                    Tok::Ellipsis => "...".into(),
                    _ => String::new(),
                };
                self.i += 1;
            }
        }
        self.end()?;
        let time = Time::At(TimeVal::Rel(0));
        Ok(Event { line: first.line, col: first.col, time, kind: Kind::Flag(name, value) })
    }

    /// `consts`: the names the script's `%{ }%` blocks have bound so far (packetdrill runs
    /// them as one Python program, so a name bound in one block is seen by the later ones).
    fn event(
        &mut self,
        last: &mut u64,
        consts: &mut Vec<(String, f64)>,
    ) -> Result<Event, ScriptError> {
        let first = &self.t[0];
        if first.tok == Tok::Punct('-') && self.t.get(1).is_some_and(|t| t.tok == Tok::Punct('-')) {
            return self.flag();
        }
        let starts_event = matches!(first.tok, Tok::Code(_) | Tok::Shell(_));
        let time_tok = self.here();
        let mut blocking = None;
        let time = if starts_event {
            Time::At(TimeVal::Rel(0))
        } else if self.eat_punct('*') {
            Time::Any
        } else {
            let lo = self.tval()?;
            if self.eat_punct('~') {
                Time::Range(lo, self.tval()?)
            } else if matches!(self.peek(), Some(Token { tok: Tok::Ellipsis, .. })) {
                self.i += 1;
                blocking = Some(self.tval()?);
                Time::At(lo)
            } else {
                Time::At(lo)
            }
        };
        // Script time of this event, to reject time going backwards.
        let resolve = |v: TimeVal, base: u64| match v {
            TimeVal::Abs(t) => (t, true),
            TimeVal::Rel(d) => (base.saturating_add(d), false),
        };
        match time {
            Time::Any => {}
            Time::At(v) | Time::Range(v, _) => {
                let (t, abs) = resolve(v, *last);
                if abs && t < *last {
                    return Err(err_at(
                        time_tok,
                        format!(
                            "time going backwards: {} is before the previous event at {}",
                            fmt_secs(t),
                            fmt_secs(*last)
                        ),
                    ));
                }
                if let Time::Range(_, hi) = time {
                    let (h, _) = resolve(hi, *last); // both ends count from the previous event
                    if h < t {
                        return Err(err_at(time_tok, "time range ends before it starts"));
                    }
                }
                *last = t;
            }
        }
        let Some(tok) = self.peek() else {
            return Err(self.err("expected an event after the time"));
        };
        let (line, col) = (tok.line, tok.col);
        let kind = match &tok.tok {
            Tok::Punct('<') | Tok::Punct('>') => self.packet()?,
            Tok::Ident(name) if matches!(self.t.get(self.i + 1), Some(Token { tok: Tok::Punct('('), .. })) => {
                if !SYSCALLS.contains(&name.as_str()) && !UNMODELED_SYSCALLS.contains(&name.as_str()) {
                    return Err(err_at(tok, format!("unknown system call `{name}` (modeled: {})", SYSCALLS.join(", "))));
                }
                let mut call = self.syscall()?;
                call.until = blocking;
                if blocking.is_some() && call.name == "connect" {
                    Kind::Syscall(call)
                } else if blocking.is_some() {
                    Kind::Unsupported(format!("blocking `{}` spanning a time range (`...`)", call.name))
                } else if UNMODELED_SYSCALLS.contains(&call.name.as_str()) {
                    Kind::Unsupported(format!("system call `{}`", call.name))
                } else {
                    Kind::Syscall(call)
                }
            }
            Tok::Code(text) => {
                self.i += 1;
                self.end()?;
                match expr::parse_block(text, tok.line, tok.col + 2, consts)? {
                    Block::Asserts(v) => Kind::Assert(v),
                    Block::Unsupported(l, c, what) => {
                        return Ok(Event { line: l, col: c, time, kind: Kind::Unsupported(what) });
                    }
                }
            }
            Tok::Shell(cmd) => {
                self.i += 1;
                self.end()?;
                Kind::Shell(cmd.clone())
            }
            t => {
                return Err(err_at(
                    tok,
                    format!("expected a packet (`<`/`>`), a system call, a %{{ }}% block or a `command`, found {}", describe(t)),
                ))
            }
        };
        if blocking.is_some() && !matches!(kind, Kind::Unsupported(_) | Kind::Syscall(_)) {
            return Ok(Event {
                line,
                col,
                time,
                kind: Kind::Unsupported("a time range with `...` (blocking call)".into()),
            });
        }
        Ok(Event { line, col, time, kind })
    }

    fn packet(&mut self) -> Result<Kind, ScriptError> {
        let dir = if self.eat_punct('<') {
            Dir::In
        } else {
            self.i += 1;
            Dir::Out
        };
        let mut ecn = None;
        if self.eat_punct('[') {
            let t = self.here();
            let e = match &t.tok {
                Tok::Ident(s) => match s.as_str() {
                    "noecn" => EcnSpec::NoEcn,
                    "ect0" => EcnSpec::Ect0,
                    "ect1" => EcnSpec::Ect1,
                    "ect01" => EcnSpec::Ect01,
                    "ce" => EcnSpec::Ce,
                    "tos" | "class" | "flowlabel" | "ttl" => {
                        return Ok(Kind::Unsupported(format!("IP field `[{s} ...]`")))
                    }
                    _ => {
                        return Err(err_at(
                            t,
                            format!("unknown ECN codepoint `{s}` (noecn, ect0, ect1, ect01, ce)"),
                        ))
                    }
                },
                other => {
                    return Err(err_at(
                        t,
                        format!("expected an ECN codepoint, found {}", describe(other)),
                    ))
                }
            };
            if dir == Dir::In && e == EcnSpec::Ect01 {
                return Err(err_at(t, "[ect01] is for outbound segments only"));
            }
            self.i += 1;
            self.expect_punct(']', "after the ECN codepoint")?;
            ecn = Some(e);
        }
        if let Some(Token { tok: Tok::Ident(s), .. }) = self.peek() {
            if matches!(s.as_str(), "udp" | "icmp" | "udplite" | "gre" | "mpls") {
                return Ok(Kind::Unsupported(format!("{s} packets (only TCP is modeled)")));
            }
        }
        // The flag word: adjacent letters and dots, `S.`, `.`, `P.`, `SEW`.
        let start = self.here();
        let mut word = String::new();
        let mut prev_end = None;
        while let Some(t) = self.peek() {
            let piece = match &t.tok {
                Tok::Ident(s) => s.clone(),
                Tok::Punct('.') => ".".into(),
                _ => break,
            };
            if prev_end.is_some_and(|e| e != t.start) {
                break;
            }
            word.push_str(&piece);
            prev_end = Some(t.end);
            self.i += 1;
        }
        if word.is_empty() && self.eat_punct('-') {
            word.push('-'); // no flag at all
        }
        if word.is_empty() {
            return Err(err_at(start, "expected TCP flags (e.g. `S`, `S.`, `.`, `P.`, `F.`)"));
        }
        let mut flags = 0u16;
        for (k, ch) in word.chars().enumerate() {
            let f = match ch {
                'F' => flag::FIN,
                'S' => flag::SYN,
                'R' => flag::RST,
                'P' => flag::PSH,
                '.' => flag::ACK,
                'U' => flag::URG,
                'E' => flag::ECE,
                'W' => flag::CWR,
                'A' => flag::AE,
                '-' => 0,
                _ => {
                    return Err(ScriptError::new(
                        start.line,
                        start.col + k as u32,
                        format!("bad TCP flag `{ch}` in `{word}` (F S R P . U E W A)"),
                    ))
                }
            };
            flags |= f;
        }
        let seq = self.num("a start sequence number")?;
        self.expect_punct(':', "in the sequence range start:end(length)")?;
        let end_at = self.i;
        let end = self.num("an end sequence number")?;
        self.expect_punct('(', "before the payload length")?;
        let len = self.num_max("a payload length", u32::MAX as u64)?;
        self.expect_punct(')', "after the payload length")?;
        if end.checked_sub(seq) != Some(len) {
            return Err(err_at(
                &self.t[end_at],
                format!("sequence range {seq}:{end} does not hold {len} bytes"),
            ));
        }
        let mut spec = PacketSpec {
            dir,
            ecn,
            flags,
            seq,
            len: len as u32,
            ack: None,
            win: None,
            opts: None,
            opts_any: false,
        };
        loop {
            if self.is_ident("ack") {
                self.i += 1;
                spec.ack = Some(self.num("an ack number")?);
            } else if self.is_ident("win") {
                self.i += 1;
                spec.win = Some(self.num_max("a window", 65_535)? as u32);
            } else if self.is_ident("urg") {
                return Ok(Kind::Unsupported("urgent pointer (`urg`)".into()));
            } else {
                break;
            }
        }
        let any_opts = matches!(self.t.get(self.i + 1), Some(Token { tok: Tok::Ellipsis, .. }))
            && matches!(self.t.get(self.i + 2), Some(Token { tok: Tok::Punct('>'), .. }));
        if self.is_punct('<') && any_opts {
            self.i += 3;
            spec.opts_any = true;
        } else if self.is_punct('<') {
            self.i += 1;
            let mut opts = Vec::new();
            loop {
                match self.option()? {
                    Ok(o) => opts.push(o),
                    Err(unsupported) => return Ok(Kind::Unsupported(unsupported)),
                }
                if self.eat_punct(',') {
                    continue;
                }
                self.expect_punct('>', "to close the option list")?;
                break;
            }
            spec.opts = Some(opts);
        }
        self.end()?;
        // Inbound, packetdrill fills in an ACK number left out (the runner does not).
        if flags & flag::ACK != 0 && spec.ack.is_none() && dir == Dir::Out {
            return Err(err_at(start, "a segment with the ACK flag (`.`) needs `ack N`"));
        }
        if flags & flag::ACK == 0 && spec.ack.is_some() {
            return Err(err_at(start, "`ack N` without the ACK flag (`.`)"));
        }
        if dir == Dir::In && spec.win.is_none() {
            return Err(err_at(start, "an inbound segment needs `win N`"));
        }
        Ok(Kind::Packet(spec))
    }

    /// One TCP option; the inner Err is an option packetdrill knows but the runner does not model.
    fn option(&mut self) -> Result<Result<TcpOpt, String>, ScriptError> {
        let t = self.here();
        let Tok::Ident(name) = &t.tok else {
            return Err(err_at(t, format!("expected a TCP option, found {}", describe(&t.tok))));
        };
        self.i += 1;
        Ok(Ok(match name.as_str() {
            "nop" => TcpOpt::Nop,
            "eol" => TcpOpt::Eol,
            "mss" => TcpOpt::Mss(self.num_max("an MSS", 65_535)? as u16),
            "wscale" => TcpOpt::Wscale(self.num_max("a window scale", 255)? as u8),
            "sackOK" => TcpOpt::SackOk,
            "sack" => {
                let mut blocks = Vec::new();
                while matches!(self.peek(), Some(Token { tok: Tok::Num(_), .. })) {
                    let s = self.num("a SACK block start")?;
                    self.expect_punct(':', "in the SACK block start:end")?;
                    let e = self.num("a SACK block end")?;
                    if e <= s {
                        return Err(self.err(format!("empty SACK block {s}:{e}")));
                    }
                    blocks.push((s, e));
                }
                if blocks.is_empty() {
                    return Err(self.err("`sack` needs at least one block start:end"));
                }
                TcpOpt::Sack(blocks)
            }
            "TS" => {
                if !self.is_ident("val") {
                    return Err(self.err("expected `val` after `TS`"));
                }
                self.i += 1;
                let val = self.num_max("a TS value", u32::MAX as u64)?;
                if !self.is_ident("ecr") {
                    return Err(self.err("expected `ecr` after the TS value"));
                }
                self.i += 1;
                let ecr = self.num_max("a TS echo reply", u32::MAX as u64)?;
                TcpOpt::Ts { val, ecr }
            }
            "FO" | "FOEXP" | "md5" | "exp" | "mptcp" | "tcpao" => {
                return Ok(Err(format!("TCP option `{name}`")));
            }
            _ => {
                return Err(err_at(
                    t,
                    format!(
                        "unknown TCP option `{name}` (nop, eol, mss, wscale, sackOK, sack, TS)"
                    ),
                ));
            }
        }))
    }

    fn syscall(&mut self) -> Result<Syscall, ScriptError> {
        let Some(Token { tok: Tok::Ident(name), .. }) = self.peek() else {
            unreachable!("checked by the caller")
        };
        let name = name.clone();
        self.i += 1;
        self.expect_punct('(', "after the system call name")?;
        let mut args = Vec::new();
        if !self.eat_punct(')') {
            loop {
                args.push(self.arg()?);
                if self.eat_punct(',') {
                    continue;
                }
                self.expect_punct(')', "to close the argument list")?;
                break;
            }
        }
        self.expect_punct('=', "before the expected return value")?;
        let neg = self.eat_punct('-');
        let v = self.num("a return value")? as i64;
        let ret = if neg { -v } else { v };
        let mut errno = None;
        if let Some(Token { tok: Tok::Ident(e), .. }) = self.peek() {
            errno = Some(e.clone());
            self.i += 1;
        }
        // `= 0x2 (flags O_RDWR)`, `= -1 EAGAIN (Resource temporarily unavailable)`: free text.
        if self.eat_punct('(') {
            let mut depth = 1;
            while let Some(t) = self.peek() {
                self.i += 1;
                match t.tok {
                    Tok::Punct('(') => depth += 1,
                    Tok::Punct(')') => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
            if depth != 0 {
                return Err(self.err("unclosed `(` after the return value"));
            }
        }
        self.end()?;
        Ok(Syscall { name, args, ret, errno, until: None })
    }

    fn arg(&mut self) -> Result<Arg, ScriptError> {
        let t = self.here();
        match &t.tok {
            Tok::Ellipsis => {
                self.i += 1;
                Ok(Arg::Any)
            }
            Tok::Punct('-') => {
                self.i += 1;
                Ok(Arg::Int(-(self.num("a number")? as i64)))
            }
            Tok::Num(_) => Ok(Arg::Int(self.num("a number")? as i64)),
            Tok::Str(s) => {
                self.i += 1;
                Ok(Arg::Str(s.clone()))
            }
            Tok::Ident(s) => {
                self.i += 1;
                let mut v = vec![s.clone()];
                while self.eat_punct('|') {
                    match self.peek() {
                        Some(Token { tok: Tok::Ident(x), .. }) => {
                            v.push(x.clone());
                            self.i += 1;
                        }
                        _ => return Err(self.err("expected a symbol after `|`")),
                    }
                }
                Ok(Arg::Sym(v))
            }
            Tok::Punct('[') => {
                self.i += 1;
                let mut v = Vec::new();
                if !self.eat_punct(']') {
                    loop {
                        v.push(self.arg()?);
                        if self.eat_punct(',') {
                            continue;
                        }
                        self.expect_punct(']', "to close the array")?;
                        break;
                    }
                }
                Ok(Arg::Array(v))
            }
            Tok::Punct('{') => {
                self.i += 1;
                let mut v = Vec::new();
                if !self.eat_punct('}') {
                    loop {
                        let named = matches!(self.peek(), Some(Token { tok: Tok::Ident(_), .. }))
                            && matches!(
                                self.t.get(self.i + 1),
                                Some(Token { tok: Tok::Punct('=' | '('), .. })
                            );
                        if !named {
                            // A positional member (`{..., 1000}`, an iovec).
                            v.push((String::new(), self.arg()?));
                            if self.eat_punct(',') {
                                continue;
                            }
                            self.expect_punct('}', "to close the structure")?;
                            break;
                        }
                        let Some(Token { tok: Tok::Ident(k), .. }) = self.peek() else {
                            return Err(self.err("expected a field name in `{...}`"));
                        };
                        let k = k.clone();
                        self.i += 1;
                        // `msg_iov(1)=[...]`, `msg_name(...)=...`: a count or `...` after it.
                        if self.eat_punct('(') {
                            while !self.eat_punct(')') {
                                if self.peek().is_none() {
                                    return Err(self.err("unclosed `(` after the field name"));
                                }
                                self.i += 1;
                            }
                        }
                        self.expect_punct('=', "after the field name")?;
                        v.push((k, self.arg()?));
                        if self.eat_punct(',') {
                            continue;
                        }
                        self.expect_punct('}', "to close the structure")?;
                        break;
                    }
                }
                Ok(Arg::Struct(v))
            }
            other => Err(err_at(
                t,
                format!("expected a system call argument, found {}", describe(other)),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(s: &str) -> Event {
        parse(s).unwrap().events.remove(0)
    }

    #[test]
    fn packet_lines() {
        let e = one("+0 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>");
        assert_eq!(e.time, Time::At(TimeVal::Rel(0)));
        let Kind::Packet(p) = e.kind else { panic!() };
        assert_eq!((p.dir, p.flags, p.seq, p.len, p.win), (Dir::In, flag::SYN, 0, 0, Some(32792)));
        assert_eq!(
            p.opts.unwrap(),
            vec![
                TcpOpt::Mss(1000),
                TcpOpt::SackOk,
                TcpOpt::Nop,
                TcpOpt::Nop,
                TcpOpt::Nop,
                TcpOpt::Wscale(7)
            ]
        );
        let e = one("0.100~0.200 > [ect0] P. 1:1001(1000) ack 1 <nop,nop,TS val 5 ecr 6,nop,nop,sack 1:2 3:4>");
        assert_eq!(e.time, Time::Range(TimeVal::Abs(100_000_000), TimeVal::Abs(200_000_000)));
        let Kind::Packet(p) = e.kind else { panic!() };
        assert_eq!((p.ecn, p.flags, p.ack), (Some(EcnSpec::Ect0), flag::PSH | flag::ACK, Some(1)));
        let e = one("* > SEW 0:0(0) <mss 1460>");
        assert_eq!(e.time, Time::Any);
        let Kind::Packet(p) = e.kind else { panic!() };
        assert_eq!(p.flags, flag::SYN | flag::ECE | flag::CWR);
    }

    #[test]
    fn syscalls() {
        let e = one("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3");
        let Kind::Syscall(c) = e.kind else { panic!() };
        assert_eq!((c.name.as_str(), c.ret, c.args.len()), ("socket", 3, 3));
        let e = one("+0 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)");
        let Kind::Syscall(c) = e.kind else { panic!() };
        assert_eq!((c.ret, c.errno.as_deref()), (-1, Some("EINPROGRESS")));
        let e = one("+0 setsockopt(4, SOL_TCP, TCP_CONGESTION, \"reno\", 4) = 0");
        let Kind::Syscall(c) = e.kind else { panic!() };
        assert_eq!(c.args[3], Arg::Str("reno".into()));
        let e = one("+0 fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0");
        let Kind::Syscall(c) = e.kind else { panic!() };
        assert_eq!(c.args[2], Arg::Sym(vec!["O_RDWR".into(), "O_NONBLOCK".into()]));
        assert!(matches!(one("+0 poll([], 0, 0) = 0").kind, Kind::Unsupported(_)));
        assert!(matches!(one("0...0.1 read(4, ..., 10) = 10").kind, Kind::Unsupported(_)));
    }

    #[test]
    fn malformed_lines_say_where() {
        let e =
            parse("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 frobnicate(3) = 0").unwrap_err();
        assert_eq!((e.line, e.col), (2, 4));
        assert!(e.message.contains("unknown system call"));
        let e = parse("+0 < S 0:0(0) win 100 <mss 1000, bogus 3>").unwrap_err();
        assert_eq!((e.line, e.col), (1, 34));
        let e = parse("0.2 < S 0:0(0) win 100\n0.1 > S. 0:0(0) ack 1").unwrap_err();
        assert_eq!((e.line, e.col), (2, 1));
        assert!(e.message.contains("backwards"));
        let e = parse("1 bind(3, ..., ...) = 0\n+.2~+.1 > . 1:1(0) ack 1").unwrap_err();
        assert_eq!((e.line, e.message.as_str()), (2, "time range ends before it starts"));
        assert!(parse(
            "1 bind(3, ..., ...) = 0\n+.1~+.2 > . 1:1(0) ack 1\n1.15~1.3 > . 1:1(0) ack 1"
        )
        .is_ok());
        let e = parse("+0 < X 0:0(0) win 100").unwrap_err();
        assert_eq!((e.line, e.col), (1, 6));
        let e = parse("+0 < . 1:1001(100) ack 1 win 100").unwrap_err();
        assert!(e.message.contains("does not hold"));
        let e = parse("+0 > . 1:1(0)").unwrap_err();
        assert!(e.message.contains("ack N"));
        let e = parse("+0 < . 1:1(0) ack 1 win 70000").unwrap_err();
        assert!(e.message.contains("out of range"));
    }

    proptest::proptest! {
        /// Arbitrary text and scripts with random edits never panic the parser; errors point
        /// at a line of the text.
        #[test]
        fn never_panics(s in "\\PC{0,160}") {
            if let Err(e) = parse(&s) {
                proptest::prop_assert!(e.line >= 1 && e.line as usize <= s.split('\n').count() && e.col >= 1);
            }
        }

        #[test]
        fn edited_scripts_never_panic(cut in 0usize..400, insert in "[ -~\n]{0,12}") {
            let base = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 < S 0:0(0) win 65535 <mss 1000,sackOK,nop,wscale 7>\n+0~+.1 > S. 0:0(0) ack 1 <mss 1460,sackOK,TS val 1 ecr 0>\n+.1 %{ assert tcpi_rto >= 200000 and tcpi_snd_cwnd == 10 }%\n+0 setsockopt(4, SOL_TCP, TCP_CONGESTION, \"reno\", 4) = 0\n";
            let at = cut.min(base.len());
            let s = format!("{}{}{}", &base[..at], insert, &base[at..]);
            if let Err(e) = parse(&s) {
                proptest::prop_assert!(e.line >= 1 && e.col >= 1);
            }
        }
    }

    /// Forms of the upstream suite (google/packetdrill gtests/net/tcp) that parse, whether
    /// the runner models them or not.
    #[test]
    fn upstream_forms_parse() {
        let s =
            parse("--tolerance_usecs=10000\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3").unwrap();
        assert_eq!(s.events[0].kind, Kind::Flag("tolerance_usecs".into(), "10000".into()));
        let Kind::Packet(p) = one("+0 > S 0:0(0) <...>").kind else { panic!() };
        assert!(p.opts_any && p.opts.is_none());
        let Kind::Packet(p) = one("+0 < - 1:1001(1000) win 20000").kind else { panic!() };
        assert_eq!(p.flags, 0);
        assert!(matches!(one("+0 < R. 11:11(0) win 32792").kind, Kind::Packet(_)));
        let Kind::Syscall(c) = one("+0 fcntl(3, F_GETFL) = 0x2 (flags O_RDWR)").kind else {
            panic!()
        };
        assert_eq!(c.ret, 2);
        let s = parse("+0 sendmsg(4, {msg_name(...)=...,\n  msg_iov(1)=[{..., 1000}],\n  msg_flags=0}, 0) = 1000\n+0 close(4) = 0").unwrap();
        assert_eq!(s.events.len(), 2);
        let Kind::Syscall(c) = &s.events[0].kind else { panic!() };
        let Arg::Struct(f) = &c.args[1] else { panic!() };
        assert_eq!(f[1].0, "msg_iov");
        let Kind::Syscall(c) = one("+.1...0.2 connect(3, ..., ...) = 0").kind else { panic!() };
        assert_eq!(c.until, Some(TimeVal::Abs(200_000_000)));
    }

    #[test]
    fn blocks_and_commands() {
        let s = parse("`sysctl -q net.ipv4.tcp_ecn=1`\n+0 %{ assert tcpi_snd_cwnd == 10 }%\n+0 %{ x.append(1) }%").unwrap();
        assert!(matches!(s.events[0].kind, Kind::Shell(_)));
        assert!(matches!(s.events[1].kind, Kind::Assert(_)));
        assert!(matches!(s.events[2].kind, Kind::Unsupported(_)));
    }
}
