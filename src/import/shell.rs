//! Shell text as a POSIX shell splits it, as far as a pasted launch command needs: words,
//! quotes, backslash continuations, comments, `;` `&&` `||` `|` `&` and newlines between
//! commands, redirections, and `$NAME` / `${NAME}` expanded from the assignments earlier in the
//! same text. Nothing is run and nothing is guessed: a variable the text does not assign, a
//! `$(...)` or a backquote stays as written and is reported as unresolved.
//!
//! ```
//! use headroom::import::shell::{commands, MAX_TEXT};
//! let c = commands("export TP=4\nvllm serve m \\\n  -tp $TP --x 'a b' # note").unwrap();
//! let words: Vec<&str> = c[1].words.iter().map(|w| w.text.as_str()).collect();
//! assert_eq!(words, ["vllm", "serve", "m", "-tp", "4", "--x", "a b"]);
//! assert_eq!(c[1].words[3].line, 3);
//! assert!(commands("vllm serve 'm").unwrap_err().to_string().contains("line 1"));
//! assert!(commands(&"x".repeat(MAX_TEXT + 1)).is_err());
//! ```

use std::fmt;

/// The longest text read (bytes): a launch command with its environment is a few KiB.
pub const MAX_TEXT: usize = 1 << 20;

/// A word of a command, after quote removal and expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// The line (1-based) the word starts on.
    pub line: usize,
    /// The variables and substitutions in the word the text does not resolve (`$MEM`,
    /// `$(nproc)`), as written; the word keeps them as written too.
    pub unresolved: Vec<String>,
}

/// One simple command: its words, the assignments before them (`A=1 B=2 cmd`) split off.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Command {
    /// `NAME=value` words before the command word, in order.
    pub assignments: Vec<(String, Word)>,
    pub words: Vec<Word>,
    /// The line the command starts on.
    pub line: usize,
}

/// Text a shell would not split: an open quote, an unfinished `${`, too much text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShellError {
    pub message: String,
    /// The line (1-based) the problem starts on.
    pub line: usize,
}

impl fmt::Display for ShellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ShellError {}

/// Whether `text` is a shell name (`[A-Za-z_][A-Za-z0-9_]*`).
pub fn is_name(text: &str) -> bool {
    let mut c = text.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
}

/// A `NAME=value` word's name and value, if the word is an assignment.
fn assignment(w: &str) -> Option<(&str, &str)> {
    let (n, v) = w.split_once('=')?;
    is_name(n).then_some((n, v))
}

struct Lexer<'a> {
    chars: Vec<char>,
    pos: usize,
    line: usize,
    /// The variables assigned so far (the last assignment wins).
    vars: &'a mut Vec<(String, String)>,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, k: usize) -> Option<char> {
        self.chars.get(self.pos + k).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.get(self.pos).copied()?;
        self.pos += 1;
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// After a `$`: a variable, `${...}`, `$(...)`, or a lone dollar sign.
    fn dollar(&mut self, out: &mut String, unresolved: &mut Vec<String>) -> Result<(), ShellError> {
        let start_line = self.line;
        match self.peek() {
            Some('{') => {
                self.bump();
                let mut inner = String::new();
                loop {
                    match self.bump() {
                        Some('}') => break,
                        Some(c) => inner.push(c),
                        None => {
                            return Err(ShellError {
                                message: "a ${ without its closing }".into(),
                                line: start_line,
                            })
                        }
                    }
                }
                let name_end = inner
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(inner.len());
                let name = &inner[..name_end];
                let rest = &inner[name_end..];
                match (self.var(name), rest) {
                    (Some(v), "" | ":-" | "-") => out.push_str(v),
                    (Some(v), r) if r.starts_with(":-") || r.starts_with('-') => out.push_str(v),
                    _ => {
                        let written = format!("${{{inner}}}");
                        out.push_str(&written);
                        unresolved.push(written);
                    }
                }
            }
            Some('(') => {
                // A command substitution: kept as written, up to its matching parenthesis.
                let mut depth = 0usize;
                let mut written = String::from("$");
                loop {
                    match self.bump() {
                        Some(c) => {
                            written.push(c);
                            match c {
                                '(' => depth += 1,
                                ')' => {
                                    depth -= 1;
                                    if depth == 0 {
                                        break;
                                    }
                                }
                                _ => {}
                            }
                        }
                        None => {
                            return Err(ShellError {
                                message: "a $( without its closing )".into(),
                                line: start_line,
                            })
                        }
                    }
                }
                out.push_str(&written);
                unresolved.push(written);
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let mut name = String::new();
                while let Some(c) = self
                    .peek()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    name.push(c);
                    self.bump();
                }
                match self.var(&name) {
                    Some(v) => out.push_str(v),
                    None => {
                        let written = format!("${name}");
                        out.push_str(&written);
                        unresolved.push(written);
                    }
                }
            }
            Some(c) if c.is_ascii_digit() || "@*#?$!-".contains(c) => {
                // A positional or special parameter: unknown outside the script that set it.
                self.bump();
                let written = format!("${c}");
                out.push_str(&written);
                unresolved.push(written);
            }
            _ => out.push('$'),
        }
        Ok(())
    }

    /// A backquoted command substitution, kept as written.
    fn backquote(
        &mut self,
        out: &mut String,
        unresolved: &mut Vec<String>,
    ) -> Result<(), ShellError> {
        let start_line = self.line;
        let mut written = String::from("`");
        loop {
            match self.bump() {
                Some('`') => break,
                Some(c) => written.push(c),
                None => {
                    return Err(ShellError {
                        message: "a backquote ` without its closing one".into(),
                        line: start_line,
                    })
                }
            }
        }
        written.push('`');
        out.push_str(&written);
        unresolved.push(written);
        Ok(())
    }
}

/// What ends a word outside quotes.
fn is_break(c: char) -> bool {
    c.is_whitespace() || ";&|<>()".contains(c)
}

/// Splits `text` into simple commands. Assignments standing alone (`A=1`, `export A=1 B`)
/// set the variables later commands expand, and are returned as commands with no words.
pub fn commands(text: &str) -> Result<Vec<Command>, ShellError> {
    if text.len() > MAX_TEXT {
        return Err(ShellError {
            message: format!(
                "the text is {} bytes; a launch command is read up to {} bytes",
                text.len(),
                MAX_TEXT
            ),
            line: 1,
        });
    }
    let mut vars: Vec<(String, String)> = Vec::new();
    let mut lx = Lexer {
        chars: text.chars().collect(),
        pos: 0,
        line: 1,
        vars: &mut vars,
    };
    let mut out: Vec<Command> = Vec::new();
    let mut cur = Command {
        line: 1,
        ..Command::default()
    };
    // The words of the current command as read, before its assignments are split off.
    let mut raw: Vec<Word> = Vec::new();
    let mut skip_next_word = false;
    loop {
        // Blanks and continuations between words.
        while let Some(c) = lx.peek() {
            if c == '\\' && lx.peek_at(1) == Some('\n') {
                lx.bump();
                lx.bump();
            } else if c == '\\' && lx.peek_at(1) == Some('\r') && lx.peek_at(2) == Some('\n') {
                lx.bump();
                lx.bump();
                lx.bump();
            } else if c != '\n' && c.is_whitespace() {
                lx.bump();
            } else {
                break;
            }
        }
        let Some(c) = lx.peek() else { break };
        if raw.is_empty() {
            cur.line = lx.line;
        }
        match c {
            '\n' | ';' | '&' | '|' | '(' | ')' => {
                // `2>&1`'s ampersand belongs to the redirection, handled below.
                lx.bump();
                while lx.peek() == Some(c) && c != '\n' {
                    lx.bump();
                }
                finish(&mut out, &mut cur, &mut raw, lx.vars);
                continue;
            }
            '<' | '>' => {
                // A redirection: its operator, then its target (`>&1` takes none more).
                lx.bump();
                while matches!(lx.peek(), Some('>' | '<')) {
                    lx.bump();
                }
                if lx.peek() == Some('&') {
                    lx.bump();
                    while lx.peek().is_some_and(|c| c.is_ascii_digit() || c == '-') {
                        lx.bump();
                    }
                } else {
                    skip_next_word = true;
                }
                continue;
            }
            '#' => {
                while lx.peek().is_some_and(|c| c != '\n') {
                    lx.bump();
                }
                continue;
            }
            _ => {}
        }
        let w = word(&mut lx)?;
        // A file descriptor before a redirection (`2>`) is not a word.
        if matches!(lx.peek(), Some('>' | '<'))
            && !w.text.is_empty()
            && w.text.chars().all(|c| c.is_ascii_digit())
        {
            continue;
        }
        if skip_next_word {
            skip_next_word = false;
            continue;
        }
        raw.push(w);
    }
    finish(&mut out, &mut cur, &mut raw, lx.vars);
    Ok(out)
}

/// Ends the current command: its leading assignments set variables (for the command alone in
/// a shell, but a pasted recipe means them for what follows too), `export`'s words likewise.
fn finish(
    out: &mut Vec<Command>,
    cur: &mut Command,
    raw: &mut Vec<Word>,
    vars: &mut Vec<(String, String)>,
) {
    if raw.is_empty() {
        return;
    }
    let mut words = std::mem::take(raw).into_iter().peekable();
    let mut c = Command {
        line: cur.line,
        ..Command::default()
    };
    while let Some(w) = words.next_if(|w| assignment(&w.text).is_some()) {
        let Some((n, v)) = assignment(&w.text) else {
            continue;
        };
        vars.push((n.to_string(), v.to_string()));
        c.assignments.push((
            n.to_string(),
            Word {
                text: v.to_string(),
                line: w.line,
                unresolved: w.unresolved,
            },
        ));
    }
    c.words = words.collect();
    if c.words.first().is_some_and(|w| w.text == "export") {
        let rest = c.words.split_off(1);
        c.words.clear();
        for w in rest {
            if let Some((n, v)) = assignment(&w.text) {
                vars.push((n.to_string(), v.to_string()));
                c.assignments.push((
                    n.to_string(),
                    Word {
                        text: v.to_string(),
                        line: w.line,
                        unresolved: w.unresolved,
                    },
                ));
            }
        }
    }
    out.push(c);
}

/// One word: quoted and unquoted parts up to a break.
fn word(lx: &mut Lexer<'_>) -> Result<Word, ShellError> {
    let line = lx.line;
    let mut text = String::new();
    let mut unresolved = Vec::new();
    while let Some(c) = lx.peek() {
        if is_break(c) {
            break;
        }
        match c {
            '\\' => {
                lx.bump();
                match lx.bump() {
                    Some('\n') | None => {}
                    Some('\r') if lx.peek() == Some('\n') => {
                        lx.bump();
                    }
                    Some(e) => text.push(e),
                }
            }
            '\'' => {
                let open = lx.line;
                lx.bump();
                loop {
                    match lx.bump() {
                        Some('\'') => break,
                        Some(ch) => text.push(ch),
                        None => {
                            return Err(ShellError {
                                message: "a single quote (') is never closed".into(),
                                line: open,
                            })
                        }
                    }
                }
            }
            '"' => {
                let open = lx.line;
                lx.bump();
                loop {
                    match lx.bump() {
                        Some('"') => break,
                        Some('\\') => match lx.peek() {
                            Some(e @ ('"' | '\\' | '$' | '`')) => {
                                lx.bump();
                                text.push(e);
                            }
                            Some('\n') => {
                                lx.bump();
                            }
                            _ => text.push('\\'),
                        },
                        Some('$') => lx.dollar(&mut text, &mut unresolved)?,
                        Some('`') => lx.backquote(&mut text, &mut unresolved)?,
                        Some(ch) => text.push(ch),
                        None => {
                            return Err(ShellError {
                                message: "a double quote (\") is never closed".into(),
                                line: open,
                            })
                        }
                    }
                }
            }
            '$' => {
                lx.bump();
                lx.dollar(&mut text, &mut unresolved)?;
            }
            '`' => {
                lx.bump();
                lx.backquote(&mut text, &mut unresolved)?;
            }
            _ => {
                lx.bump();
                text.push(c);
            }
        }
    }
    Ok(Word {
        text,
        line,
        unresolved,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(t: &str) -> Vec<Vec<String>> {
        commands(t)
            .unwrap()
            .into_iter()
            .map(|c| c.words.into_iter().map(|w| w.text).collect())
            .collect()
    }

    #[test]
    fn quotes_escapes_and_continuations() {
        assert_eq!(
            words("vllm serve \"a b\" 'c \"d\"' e\\ f \\\r\n --g=\"{\\\"k\\\": 1}\""),
            [["vllm", "serve", "a b", "c \"d\"", "e f", "--g={\"k\": 1}"]]
        );
    }

    #[test]
    fn separators_comments_and_redirections() {
        assert_eq!(
            words("cd /x && vllm serve m 2>&1 | tee log.txt; echo done # bye\n> out.log"),
            [
                vec!["cd", "/x"],
                vec!["vllm", "serve", "m"],
                vec!["tee", "log.txt"],
                vec!["echo", "done"]
            ]
        );
        assert_eq!(
            words("nohup vllm serve m > vllm.log 2>&1 &"),
            [["nohup", "vllm", "serve", "m"]]
        );
    }

    #[test]
    fn variables_from_the_text_and_unresolved_ones() {
        let c = commands("MEM=0.9\nexport TP=2 X\nCUDA_VISIBLE_DEVICES=0,1 vllm serve m --u $MEM -tp ${TP} --l ${LEN:-4096} --z $(nproc) --w `id`").unwrap();
        let last = c.last().unwrap();
        assert_eq!(last.assignments[0].0, "CUDA_VISIBLE_DEVICES");
        assert_eq!(last.assignments[0].1.text, "0,1");
        let t: Vec<&str> = last.words.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(
            t,
            [
                "vllm",
                "serve",
                "m",
                "--u",
                "0.9",
                "-tp",
                "2",
                "--l",
                "${LEN:-4096}",
                "--z",
                "$(nproc)",
                "--w",
                "`id`"
            ]
        );
        assert_eq!(last.words[8].unresolved, ["${LEN:-4096}"]);
        assert_eq!(last.words[10].unresolved, ["$(nproc)"]);
        assert_eq!(c[1].assignments.len(), 1);
    }

    #[test]
    fn unbalanced_text_is_named() {
        for (t, what, line) in [
            ("vllm serve 'm", "single quote", 1),
            ("a\nvllm serve \"m", "double quote", 2),
            ("vllm serve ${M", "${", 1),
            ("vllm serve $(nproc", "$(", 1),
            ("vllm serve `x", "backquote", 1),
        ] {
            let e = commands(t).unwrap_err();
            assert!(e.message.contains(what), "{t}: {e}");
            assert_eq!(e.line, line, "{t}");
        }
    }

    #[test]
    fn a_huge_text_is_refused_at_once() {
        let e = commands(&"a ".repeat(MAX_TEXT)).unwrap_err();
        assert!(e.message.contains("bytes"), "{e}");
    }
}
