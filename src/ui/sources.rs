//! What the pickers say under them: the catalog row's source for a model or GPU, linked where
//! it names a file, and what a weight format means for the bytes.

use crate::calc::Scenario;
use crate::catalog;
use crate::io::url::Field;

use super::charts::xml_escape;

fn push_esc(h: &mut String, text: &str) {
    h.push_str(&xml_escape(text));
}

/// A source as a reader can follow it: the text escaped, each `github:OWNER/REPO@COMMIT:PATH`
/// a link to that file at that commit (shown as `OWNER/REPO: PATH`), each web address a link.
pub(super) fn linked(text: &str) -> String {
    // A file the code search showed without its repository has nothing to link to: said so.
    let text = &text.replace("code-search index id ", "code-search file #");
    let text = &text
        .split("code-search file #")
        .enumerate()
        .map(|(i, part)| {
            if i == 0 {
                return part.to_string();
            }
            let digits = part.chars().take_while(char::is_ascii_digit).count();
            format!(
                "code-search file #{} (its repository was not recorded){}",
                &part[..digits],
                &part[digits..]
            )
        })
        .collect::<String>();
    let mut out = String::with_capacity(text.len() + 64);
    let mut first = true;
    for word in text.split(' ') {
        if !first {
            out.push(' ');
        }
        first = false;
        // Sentence punctuation after a citation is not part of it.
        let core = word.trim_end_matches([',', ';', ')', '.', ':', '\'', '"']);
        let tail = &word[core.len()..];
        let (href, shown) = if let Some(rest) = core.strip_prefix("github:") {
            match rest.split_once('@').and_then(|(repo, r)| {
                let (commit, path) = r.split_once(':')?;
                Some((repo, commit, path))
            }) {
                Some((repo, commit, path)) if repo.contains('/') && !path.is_empty() => (
                    format!("https://github.com/{repo}/blob/{commit}/{path}"),
                    format!("{repo}: {path}"),
                ),
                _ => (String::new(), String::new()),
            }
        } else if core.starts_with("https://") || core.starts_with("http://") {
            (core.to_string(), core.to_string())
        } else {
            (String::new(), String::new())
        };
        if href.is_empty() {
            push_esc(&mut out, word);
        } else {
            out.push_str(r#"<a href=""#);
            push_esc(&mut out, &href);
            out.push_str(r#"" rel="noopener noreferrer" target="_blank">"#);
            push_esc(&mut out, &shown);
            out.push_str("</a>");
            push_esc(&mut out, tail);
        }
    }
    out
}

/// Where the chosen model's or GPU's catalog row came from (shown under the picker).
pub(super) fn row_source(field: Field, s: &Scenario, config_pasted: bool) -> Option<String> {
    match field {
        Field::Model => catalog::models()
            .iter()
            .find(|r| r.model.name == s.model.name)
            .map(|r| {
                let unconfirmed = if r.unconfirmed.is_empty() {
                    String::new()
                } else {
                    format!(" Unconfirmed: {}.", r.unconfirmed.join(", "))
                };
                let notes = if r.notes.is_empty() {
                    String::new()
                } else {
                    format!(" Notes: {}", r.notes)
                };
                format!(
                    "{} ({}). Catalog row {} (retrieved {}): {}.{unconfirmed}{notes}",
                    r.name, r.hf_repo, r.id, r.retrieved, r.source
                )
            })
            .or_else(|| {
                Some(if config_pasted {
                    format!(
                        "The pasted config.json below is the model ({}); the model picked here is not used while it is there.",
                        s.model.name
                    )
                } else {
                    format!(
                        "The example's own model ({}) is not a catalog row: its shape is the article's. Pick a model here to plan a catalog one instead.",
                        s.model.name
                    )
                })
            }),
        Field::Gpu => catalog::gpus()
            .iter()
            .find(|g| g.gpu.id == s.gpu.id)
            .map(|g| {
                let row = format!(
                    "{} B: {} (retrieved {}; {}).",
                    crate::calc::units::thousands(u128::from(g.gpu.total.0)),
                    g.basis,
                    g.retrieved,
                    g.source
                );
                if s.gpu.total == g.gpu.total {
                    format!("Total {row}")
                } else {
                    format!(
                        "Total given: {} B, in place of the catalog row's {row}",
                        crate::calc::units::thousands(u128::from(s.gpu.total.0))
                    )
                }
            }),
        Field::Quantization => Some(crate::calc::weight_format::describe(s)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_link_to_the_file_at_its_commit() {
        let h = linked("read from github:ai-dynamo/aiconfigurator@095f58a5:aic-core/x_config.json (vendored); see https://huggingface.co/a/b. <b>");
        assert!(h.contains(r#"<a href="https://github.com/ai-dynamo/aiconfigurator/blob/095f58a5/aic-core/x_config.json" rel="noopener noreferrer" target="_blank">ai-dynamo/aiconfigurator: aic-core/x_config.json</a> (vendored)"#), "{h}");
        assert!(
            h.contains(r#"<a href="https://huggingface.co/a/b" "#) && h.contains("</a>. &lt;b&gt;"),
            "{h}"
        );
        assert_eq!(linked("github:nothing"), "github:nothing");
        assert_eq!(
            linked("public GitHub file, code-search index id 42: text"),
            "public GitHub file, code-search file #42 (its repository was not recorded): text"
        );
    }
}
