//! The docs' input tables against the one input schema (`input::schema::ROWS`) and the CLI's
//! flags built from it: a key, flag, short form, placeholder or range that drifts from the
//! schema fails here, and so does a row for an input or flag the schema does not know.

use headroom::calc::input::Input;
use headroom::cli::args::flags;
use headroom::input::schema::{row_of, ROWS};

fn doc(name: &str) -> String {
    std::fs::read_to_string(format!("{}/docs/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The cells of a Markdown table row, split at unescaped `|`, with `\|` read as `|`.
fn cells(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.trim().trim_start_matches('|').chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '|' => out.push(std::mem::take(&mut cur).trim().to_string()),
            c => cur.push(c),
        }
    }
    out
}

/// The rows of the table whose header starts with `header`.
fn table(text: &str, header: &str) -> Vec<Vec<String>> {
    text.lines()
        .skip_while(|l| !l.starts_with(header))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(cells)
        .collect()
}

#[test]
fn docs_url_md_lists_the_schema_in_query_order() {
    let rows = table(&doc("url.md"), "| key |");
    let keys: Vec<String> = rows.iter().map(|r| r[0].clone()).collect();
    let want: Vec<String> = Input::ALL
        .iter()
        .map(|i| format!("`{}`", i.key()))
        .collect();
    assert_eq!(
        keys, want,
        "docs/url.md's key table, in the order encode writes keys"
    );
    for (row, input) in rows.iter().zip(Input::ALL) {
        assert!(
            row[1].starts_with(&format!("`{}`", input.flag())),
            "{}: {:?}",
            input.key(),
            row[1]
        );
        if let Some(summary) = row_of(input).rule.summary() {
            assert!(
                row[2].starts_with(&summary),
                "{}: the value column {:?} does not start with the schema's {summary:?}",
                input.key(),
                row[2]
            );
        }
    }
}

#[test]
fn docs_cli_md_lists_every_flag_with_its_placeholder() {
    let text = doc("cli.md");
    let flag_rows: Vec<Vec<String>> = text
        .lines()
        .filter(|l| l.starts_with("| `-"))
        .map(cells)
        .collect();
    let name = |f: &headroom::cli::Flag| match f.short {
        Some(s) => format!("`{s}`, `--{}`", f.long),
        None => format!("`--{}`", f.long),
    };
    for f in flags() {
        let rows: Vec<&Vec<String>> = flag_rows.iter().filter(|r| r[0] == name(f)).collect();
        assert_eq!(rows.len(), 1, "docs/cli.md rows for {}", name(f));
        assert_eq!(
            rows[0][1],
            f.value.unwrap_or("switch"),
            "docs/cli.md's value for {}",
            name(f)
        );
    }
    for r in &flag_rows {
        assert!(
            flags().iter().any(|f| name(f) == r[0]),
            "docs/cli.md lists {}, which is no flag",
            r[0]
        );
    }
}

#[test]
fn help_is_written_from_the_schema() {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    for (cmd, topic) in [("plan", "plan"), ("solve", "solve"), ("link", "link")] {
        let raw = headroom::cli::help(Some(topic));
        let help = squash(&raw);
        for f in flags() {
            let named = |c: Option<headroom::cli::args::Cmd>| {
                c.is_some_and(|c| format!("{c:?}").to_lowercase() == cmd)
            };
            let listed = (f.only.is_none() || named(f.only)) && !named(f.except);
            let shown = format!("--{}", f.long);
            // A flag's own line starts with it (after its short form, if any).
            let has_line = raw.lines().any(|l| {
                let l = l.trim_start();
                l.starts_with(&format!("{shown} "))
                    || l == shown
                    || l.contains(&format!(", {shown}"))
            });
            assert_eq!(has_line, listed, "{cmd} --help and {shown}");
            if listed {
                let text = match f.default {
                    "" => f.help.to_string(),
                    d => format!("{} Default: {d}.", f.help),
                };
                assert!(help.contains(&squash(&text)), "{cmd} --help: {shown}");
            }
        }
    }
    // Every schema row the command line gives as a flag is one; the rest are read otherwise.
    for r in &ROWS {
        let flag = flags().iter().any(|f| f.input == Some(r.input));
        let by_flag = matches!(
            r.cli,
            headroom::input::schema::Cli::Value(_) | headroom::input::schema::Cli::Switch
        );
        assert_eq!(flag, by_flag, "{:?}", r.input);
    }
}

/// One text, one verdict and one message, whichever door it comes through: a value the page's
/// link refuses is refused by `headroom plan` with the same sentence (the CLI names the flag in
/// front of it; the link's notice names the key), and one the page takes plans the same.
#[test]
fn a_value_gets_one_verdict_and_one_message_through_the_link_and_the_cli() {
    use headroom::cli::{run, EXIT_BAD_INPUT};
    use headroom::input::query::decode;
    let cli = |args: &[&str]| run(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    for (input, value) in [
        (Input::Tp, "0"),
        (Input::Tp, "2.5"),
        (Input::Dp, "5000"),
        (Input::Util, "1.5"),
        (Input::Util, "NaN"),
        (Input::MaxModelLen, "5000000000"),
        (Input::MaxNumSeqs, "8GiB"),
        (Input::MaxNumBatchedTokens, "1e10"),
        (Input::BlockSize, "0"),
        (Input::NumGpuBlocksOverride, "1e12"),
        (Input::KvDtype, "int3"),
        (Input::Vllm, "0.9"),
        (Input::Unit, "parsecs"),
        (Input::Weights, "lots"),
        (Input::Weights, "1,,2"),
        (Input::PpPartition, "10,x"),
        (Input::Gpu, "h100"),
        (Input::Example, "s9"),
        (Input::AttnBackend, "FAST"),
    ] {
        let d = decode(&format!(
            "model=llama-3.1-8b-instruct&{}={value}",
            input.key()
        ));
        assert_eq!(d.ignored.len(), 1, "{input:?} {value}: {:?}", d.ignored);
        let page = &d.ignored[0].reason;
        let out = cli(&[
            "plan",
            "llama-3.1-8b-instruct",
            &format!("--{}", input.flag()),
            value,
        ]);
        assert_eq!(out.code, EXIT_BAD_INPUT, "{input:?} {value}: {out:?}");
        let head = format!("error: --{}: ", input.flag());
        let said = out
            .stderr
            .trim_end()
            .strip_prefix(&head)
            .unwrap_or_else(|| panic!("{input:?} {value}: {}", out.stderr));
        assert!(
            page.ends_with(said),
            "{input:?} {value}: the page says {page:?}, the CLI {said:?}"
        );
    }
    // The drift the issue names: these counts were refused on the page and planned by the CLI.
    let flags = cli(&[
        "plan",
        "llama-3.1-8b-instruct",
        "--max-num-seqs",
        "2000000",
        "--max-num-batched-tokens",
        "2000000",
        "--json",
    ]);
    let link = cli(&[
        "plan",
        "--url",
        "?model=llama-3.1-8b-instruct&max-num-seqs=2000000&max-num-batched-tokens=2000000",
        "--json",
    ]);
    assert_ne!(flags.code, EXIT_BAD_INPUT, "{flags:?}");
    assert_eq!(flags, link);
}
