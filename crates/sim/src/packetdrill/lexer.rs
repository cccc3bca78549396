//! Tokens of packetdrill's script syntax. Every token carries its 1-based line and column so
//! that a malformed script is reported where it goes wrong. Code blocks (`%{ ... }%`) and
//! shell commands (`` `...` ``) are kept as raw text for their own parsers.

use super::ScriptError;

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    /// A number as written (`0.100`, `1000`, `0x10`); the parser decides integer or time.
    Num(String),
    Ident(String),
    Str(String),
    /// The text between `%{` and `}%`, with the position of its first character.
    Code(String),
    /// The text between backticks.
    Shell(String),
    Ellipsis,
    Punct(char),
    Newline,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub line: u32,
    pub col: u32,
    /// Byte offset just past the token (adjacency checks: `S.` is one flag word).
    pub end: usize,
    pub start: usize,
}

const PUNCT: &str = "+-*~()[]{}<>,:=|.;/!&";

/// Splits `src` into tokens; the only errors are unterminated strings, code blocks, comments
/// and commands, and characters that belong to no token.
pub fn lex(src: &str) -> Result<Vec<Token>, ScriptError> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1u32, 1u32);
    // Advances over b[i..j], keeping line/column in step.
    let step = |i: &mut usize, j: usize, line: &mut u32, col: &mut u32| {
        for &c in &b[*i..j] {
            if c == b'\n' {
                *line += 1;
                *col = 1;
            } else if c & 0xC0 != 0x80 {
                *col += 1; // count characters, not UTF-8 continuation bytes
            }
        }
        *i = j;
    };
    while i < b.len() {
        let c = b[i];
        let (l0, c0, s0) = (line, col, i);
        let push = |out: &mut Vec<Token>, tok: Tok, end: usize| {
            out.push(Token { tok, line: l0, col: c0, end, start: s0 })
        };
        match c {
            b'\n' => {
                push(&mut out, Tok::Newline, i + 1);
                {
                    let j = i + 1;
                    step(&mut i, j, &mut line, &mut col)
                };
            }
            b' ' | b'\t' | b'\r' => {
                let j = i + 1;
                step(&mut i, j, &mut line, &mut col)
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                let j = src[i..].find('\n').map_or(b.len(), |k| i + k);
                step(&mut i, j, &mut line, &mut col);
            }
            b'#' => {
                let j = src[i..].find('\n').map_or(b.len(), |k| i + k);
                step(&mut i, j, &mut line, &mut col);
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let Some(k) = src[i + 2..].find("*/") else {
                    return Err(ScriptError::new(l0, c0, "unterminated /* comment"));
                };
                {
                    let j = i + 2 + k + 2;
                    step(&mut i, j, &mut line, &mut col)
                };
            }
            b'%' if b.get(i + 1) == Some(&b'{') => {
                let Some(k) = src[i + 2..].find("}%") else {
                    return Err(ScriptError::new(
                        l0,
                        c0,
                        "unterminated %{ code block (no closing }%)",
                    ));
                };
                let text = src[i + 2..i + 2 + k].to_string();
                push(&mut out, Tok::Code(text), i + 2 + k + 2);
                {
                    let j = i + 2 + k + 2;
                    step(&mut i, j, &mut line, &mut col)
                };
            }
            b'`' => {
                let Some(k) = src[i + 1..].find('`') else {
                    return Err(ScriptError::new(l0, c0, "unterminated ` command"));
                };
                push(&mut out, Tok::Shell(src[i + 1..i + 1 + k].to_string()), i + 1 + k + 1);
                {
                    let j = i + 1 + k + 1;
                    step(&mut i, j, &mut line, &mut col)
                };
            }
            b'"' => {
                let Some(k) = src[i + 1..].find(['"', '\n']) else {
                    return Err(ScriptError::new(l0, c0, "unterminated string"));
                };
                if b[i + 1 + k] != b'"' {
                    return Err(ScriptError::new(l0, c0, "unterminated string"));
                }
                push(&mut out, Tok::Str(src[i + 1..i + 1 + k].to_string()), i + k + 2);
                {
                    let j = i + k + 2;
                    step(&mut i, j, &mut line, &mut col)
                };
            }
            b'.' if src[i..].starts_with("...") => {
                push(&mut out, Tok::Ellipsis, i + 3);
                {
                    let j = i + 3;
                    step(&mut i, j, &mut line, &mut col)
                };
            }
            b'0'..=b'9' => {
                let j = number_end(b, i);
                push(&mut out, Tok::Num(src[i..j].to_string()), j);
                step(&mut i, j, &mut line, &mut col);
            }
            b'.' if b.get(i + 1).is_some_and(u8::is_ascii_digit) => {
                let j = number_end(b, i);
                push(&mut out, Tok::Num(format!("0{}", &src[i..j])), j);
                step(&mut i, j, &mut line, &mut col);
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let mut j = i;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                push(&mut out, Tok::Ident(src[i..j].to_string()), j);
                step(&mut i, j, &mut line, &mut col);
            }
            c if c.is_ascii() && PUNCT.contains(c as char) => {
                push(&mut out, Tok::Punct(c as char), i + 1);
                {
                    let j = i + 1;
                    step(&mut i, j, &mut line, &mut col)
                };
            }
            _ => {
                let ch = src[i..].chars().next().unwrap_or('?');
                return Err(ScriptError::new(l0, c0, format!("unexpected character {ch:?}")));
            }
        }
    }
    Ok(out)
}

/// End of a number starting at `i`: digits, hex (`0x..`), one decimal part (`...` excluded).
fn number_end(b: &[u8], i: usize) -> usize {
    let mut j = i;
    if b[i] == b'0' && matches!(b.get(i + 1), Some(b'x' | b'X')) {
        j += 2;
        while j < b.len() && b[j].is_ascii_hexdigit() {
            j += 1;
        }
        return j;
    }
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
    }
    if j < b.len() && b[j] == b'.' && b.get(j + 1).is_some_and(u8::is_ascii_digit) {
        j += 1;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
    }
    j
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn packet_line_tokens() {
        let t = toks("+.1 < S. 0:0(0) win 32792 <mss 1000>");
        assert_eq!(t[0], Tok::Punct('+'));
        assert_eq!(t[1], Tok::Num("0.1".into()));
        assert_eq!(t[2], Tok::Punct('<'));
        assert_eq!(t[3], Tok::Ident("S".into()));
        assert_eq!(t[4], Tok::Punct('.'));
        assert_eq!(t[5], Tok::Num("0".into()));
    }

    #[test]
    fn ranges_ellipsis_and_blocks() {
        let t = toks("0.100...0.200 read(4, ..., 10) %{ assert x }% `sysctl a=1` // c\n");
        assert_eq!(t[0], Tok::Num("0.100".into()));
        assert_eq!(t[1], Tok::Ellipsis);
        assert_eq!(t[2], Tok::Num("0.200".into()));
        assert!(t.contains(&Tok::Code(" assert x ".into())));
        assert!(t.contains(&Tok::Shell("sysctl a=1".into())));
        assert_eq!(*t.last().unwrap(), Tok::Newline);
    }

    #[test]
    fn errors_carry_positions() {
        let e = lex("0 socket()\n  %{ assert 1").unwrap_err();
        assert_eq!((e.line, e.col), (2, 3));
        let e = lex("0 a\n\n   $").unwrap_err();
        assert_eq!((e.line, e.col), (3, 4));
    }

    proptest! {
        /// Arbitrary input never panics; an error points inside the text.
        #[test]
        fn never_panics(s in "\\PC{0,200}") {
            match lex(&s) {
                Ok(ts) => for t in ts { prop_assert!(t.line >= 1 && t.col >= 1); }
                Err(e) => {
                    let lines = s.split('\n').count() as u32;
                    prop_assert!(e.line >= 1 && e.line <= lines && e.col >= 1);
                }
            }
        }

        #[test]
        fn never_panics_on_script_alphabet(s in "[0-9+.~*<>SFPREW:() a-z,\\[\\]{}%`\"\n]{0,200}") {
            let _ = lex(&s);
        }
    }
}
