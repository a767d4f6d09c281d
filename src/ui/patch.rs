//! Redrawing a chart in place. A chart is markup (plotters' SVG and our overlay, see
//! [`super::charts`]); most input changes move its shapes without adding or removing any: a
//! utilization change moves the pool's top and the budget mark, and rewrites a few labels and
//! titles. Parsing the whole chart again (`innerHTML`) costs about 8 µs an element in Chromium,
//! most of an input change's time; setting the attributes and texts that differ costs a few
//! calls. So the page compares the new markup with the markup it last wrote: where both have the
//! same elements in the same order, it sets only what changed ([`ops`]), else it writes the
//! whole chart as before.
//!
//! This reads markup the page itself wrote (plotters' SVG backend and `charts`), not markup in
//! general: anything it does not expect (a comment, an unquoted attribute, an entity other than
//! the five XML ones) makes it answer `None`, and the page then writes the whole chart.

/// One element of the markup, in document order, as byte ranges of it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct El {
    /// The attributes as written, between the tag's name and its `>` (or `/>`).
    attrs: (usize, usize),
    /// A leaf's text (an element with text and no child elements, such as `<text>` or
    /// `<title>`), as written; `None` for other elements.
    text: Option<(usize, usize)>,
}

/// Markup as the page wrote it, with its elements and skeleton (see [`parse`]) read once.
pub(crate) struct Drawn {
    markup: String,
    /// `None` for markup [`parse`] does not read.
    read: Option<(Vec<El>, String)>,
}

impl Drawn {
    pub(crate) fn new(markup: String) -> Drawn {
        let read = parse(&markup);
        Drawn { markup, read }
    }

    pub(crate) fn markup(&self) -> &str {
        &self.markup
    }

    fn at(&self, (a, b): (usize, usize)) -> &str {
        &self.markup[a..b]
    }
}

/// The first `c` in `b` from `from`.
fn find(b: &[u8], from: usize, c: u8) -> Option<usize> {
    b[from..].iter().position(|&x| x == c).map(|i| i + from)
}

/// The elements of `s` in document order, and its skeleton: the tags and every text that is not
/// a leaf's, so two markups with equal skeletons have the same nodes and differ only in
/// attributes and leaves' texts. `None` for markup this does not read. One pass over the bytes;
/// attributes and texts are checked only where they differ ([`ops`]).
fn parse(s: &str) -> Option<(Vec<El>, String)> {
    let b = s.as_bytes();
    let mut els = Vec::new();
    let mut skeleton = String::with_capacity(s.len() / 4);
    let mut i = 0;
    while i < b.len() {
        let Some(lt) = find(b, i, b'<') else {
            skeleton.push_str(&s[i..]);
            break;
        };
        skeleton.push_str(&s[i..lt]);
        i = lt + 1;
        if b.get(i) == Some(&b'/') {
            let gt = find(b, i, b'>')?;
            skeleton.push_str(&s[lt..=gt]);
            i = gt + 1;
            continue;
        }
        let name_end = b[i..]
            .iter()
            .position(|&c| !(c.is_ascii_alphanumeric() || c == b'-' || c == b':'))
            .map_or(b.len(), |n| n + i);
        if name_end == i {
            return None; // a comment, a declaration or a stray '<'
        }
        let name = &s[i..name_end];
        let gt = tag_end(b, name_end)?;
        let closed = gt > name_end && b[gt - 1] == b'/';
        let attrs = (name_end, if closed { gt - 1 } else { gt });
        i = gt + 1;
        skeleton.push('<');
        skeleton.push_str(name);
        if closed {
            skeleton.push_str("/>");
            els.push(El { attrs, text: None });
            continue;
        }
        skeleton.push('>');
        // A leaf: text up to its own end tag.
        let text_end = find(b, i, b'<').unwrap_or(b.len());
        let rest = &s[text_end..];
        let leaf = rest.len() > name.len() + 2
            && rest.starts_with("</")
            && rest[2..].starts_with(name)
            && rest.as_bytes()[name.len() + 2] == b'>';
        if leaf {
            els.push(El {
                attrs,
                text: Some((i, text_end)),
            });
            skeleton.push_str("</");
            skeleton.push_str(name);
            skeleton.push('>');
            i = text_end + name.len() + 3;
        } else {
            els.push(El { attrs, text: None });
        }
    }
    Some((els, skeleton))
}

/// Where a start tag's `>` is, from `from`, outside quoted values.
fn tag_end(b: &[u8], from: usize) -> Option<usize> {
    let mut quoted = false;
    b[from..]
        .iter()
        .position(|&c| {
            if c == b'"' {
                quoted = !quoted;
            }
            c == b'>' && !quoted
        })
        .map(|n| n + from)
}

/// The attributes `name="value"` of a start tag, values as written (escaped).
fn attrs_of(s: &str) -> Option<Vec<(&str, &str)>> {
    let mut out = Vec::new();
    let mut rest = s.trim_start();
    while !rest.is_empty() {
        // The first `="`, byte by byte (a two-byte pattern would set up a substring searcher
        // for every attribute of every element compared).
        let b = rest.as_bytes();
        let eq = (1..b.len()).find(|&i| b[i] == b'"' && b[i - 1] == b'=')? - 1;
        let name = &rest[..eq];
        if name.is_empty() || name.contains(char::is_whitespace) {
            return None;
        }
        let value_and_rest = &rest[eq + 2..];
        let close = value_and_rest.find('"')?;
        let value = &value_and_rest[..close];
        if !entities_known(value) {
            return None;
        }
        out.push((name, value));
        rest = value_and_rest[close + 1..].trim_start();
    }
    Some(out)
}

/// The entities [`unescape`] reads.
const ENTITIES: [(&str, char); 6] = [
    ("&amp;", '&'),
    ("&lt;", '<'),
    ("&gt;", '>'),
    ("&quot;", '"'),
    ("&apos;", '\''),
    ("&#39;", '\''),
];

/// Whether every entity in `s` is one [`unescape`] reads, without building the text: most
/// attributes compared are checked, few are written.
fn entities_known(s: &str) -> bool {
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        rest = &rest[amp..];
        let Some(semi) = rest.find(';') else {
            return false;
        };
        if !ENTITIES.iter().any(|(e, _)| *e == &rest[..=semi]) {
            return false;
        }
        rest = &rest[semi + 1..];
    }
    true
}

/// Text as written in markup, unescaped: the five XML entities and `&#39;`; `None` for any
/// other entity.
fn unescape(s: &str) -> Option<String> {
    if !s.contains('&') {
        return Some(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        let semi = rest.find(';')?;
        out.push(ENTITIES.iter().find(|(e, _)| *e == &rest[..=semi])?.1);
        rest = &rest[semi + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// One change to an element, by its index in document order.
#[derive(Debug, PartialEq)]
pub(crate) enum Op {
    SetAttr(usize, String, String),
    RemoveAttr(usize, String),
    SetText(usize, String),
}

/// What turns the nodes `old` describes into the ones `new` does, or `None` when they do not
/// have the same elements in the same order (or either is markup this does not read): then the
/// whole markup is written. Equal markup gives no change. Nothing is applied before the whole
/// list is known, so markup found unreadable halfway changes nothing.
pub(crate) fn ops(old: &Drawn, new: &Drawn) -> Option<Vec<Op>> {
    let (o, o_skel) = old.read.as_ref()?;
    let (n, n_skel) = new.read.as_ref()?;
    if o_skel != n_skel || o.len() != n.len() {
        return None;
    }
    let mut out = Vec::new();
    for (i, (a, b)) in o.iter().zip(n).enumerate() {
        let (a_attrs, b_attrs) = (old.at(a.attrs), new.at(b.attrs));
        if a_attrs != b_attrs {
            let (olds, news) = (attrs_of(a_attrs)?, attrs_of(b_attrs)?);
            for (k, v) in &news {
                if olds.iter().find(|(ok, _)| ok == k).map(|(_, ov)| ov) != Some(v) {
                    out.push(Op::SetAttr(i, (*k).to_string(), unescape(v)?));
                }
            }
            for (k, _) in &olds {
                if !news.iter().any(|(nk, _)| nk == k) {
                    out.push(Op::RemoveAttr(i, (*k).to_string()));
                }
            }
        }
        let (a_text, b_text) = (a.text.map(|t| old.at(t)), b.text.map(|t| new.at(t)));
        if a_text != b_text {
            out.push(Op::SetText(i, unescape(b_text?)?));
        }
    }
    Some(out)
}

/// Writes `new` into `container`, which holds `old` (`None`: nothing the page wrote): in place
/// where [`ops`] can, else whole. Answers whether it was in place.
pub(crate) fn write(container: &web_sys::Element, old: Option<&Drawn>, new: &Drawn) -> bool {
    use wasm_bindgen::JsCast;
    let in_place = (|| {
        let ops = ops(old?, new)?;
        if ops.is_empty() {
            return Some(());
        }
        // The elements in document order; a container that does not hold what `old` says (a
        // script changed it) is written whole.
        let list = container.query_selector_all("*").ok()?;
        if Some(list.length() as usize) != new.read.as_ref().map(|r| r.0.len()) {
            return None;
        }
        let el = |i: usize| {
            list.item(i as u32)
                .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
        };
        for op in &ops {
            match op {
                Op::SetAttr(i, k, v) => el(*i)?.set_attribute(k, v).ok()?,
                Op::RemoveAttr(i, k) => el(*i)?.remove_attribute(k).ok()?,
                Op::SetText(i, t) => el(*i)?.set_text_content(Some(t)),
            }
        }
        Some(())
    })()
    .is_some();
    if !in_place {
        container.set_inner_html(new.markup());
    }
    in_place
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::units::UnitSystem;
    use crate::io::url::Field;
    use crate::ui::charts::rank_chart;
    use crate::ui::plan_of;

    fn ops(old: &str, new: &str) -> Option<Vec<Op>> {
        super::ops(&Drawn::new(old.into()), &Drawn::new(new.into()))
    }

    fn element_count(s: &str) -> Option<usize> {
        parse(s).map(|(els, _)| els.len())
    }

    #[test]
    fn moves_shapes_in_place_and_rewrites_only_what_differs() {
        let old = r#"<svg width="10"><rect x="1" y="2"/>
<text x="3">
a &amp; b
</text><g class="overlay"><rect class="hit" y="5"><title>x &lt; y</title></rect></g></svg>"#;
        let new = r#"<svg width="10"><rect x="1" y="4"/>
<text x="3" fill="red">
a &amp; c
</text><g class="overlay"><rect class="hit" y="6"><title>x &gt; y</title></rect></g></svg>"#;
        assert_eq!(
            ops(old, new),
            Some(vec![
                Op::SetAttr(1, "y".into(), "4".into()),
                Op::SetAttr(2, "fill".into(), "red".into()),
                Op::SetText(2, "\na & c\n".into()),
                Op::SetAttr(4, "y".into(), "6".into()),
                Op::SetText(5, "x > y".into()),
            ])
        );
        assert_eq!(ops(new, new), Some(vec![]));
        assert_eq!(element_count(new), Some(6));
        // An attribute dropped is removed.
        assert_eq!(
            ops(r#"<g a="1" b="2"></g>"#, r#"<g a="1"></g>"#),
            Some(vec![Op::RemoveAttr(0, "b".into())])
        );
    }

    #[test]
    fn other_elements_or_other_markup_are_written_whole() {
        let one = r#"<svg><rect y="1"/></svg>"#;
        // An element more, another tag, a text between elements that differs.
        assert_eq!(ops(one, r#"<svg><rect y="1"/><rect y="2"/></svg>"#), None);
        assert_eq!(ops(one, r#"<svg><line y="1"/></svg>"#), None);
        assert_eq!(ops("<g>\n<a/></g>", "<g> <a/></g>"), None);
        // A leaf that gains a child element is not a leaf any more.
        assert_eq!(ops("<text>a</text>", "<text><tspan>a</tspan></text>"), None);
        // What this does not read: comments, unquoted values, other entities, a stray '<'.
        assert_eq!(ops(one, "<svg><!-- c --><rect y=\"1\"/></svg>"), None);
        assert_eq!(ops(one, "<svg><rect y=1/></svg>"), None);
        assert_eq!(ops("<text>a</text>", "<text>&nbsp;</text>"), None);
        assert_eq!(ops("<text>a</text>", "<text>a < b</text>"), None);
        // In an attribute too: an entity this does not read, or a '&' that starts none.
        for value in ["a&nbsp;b", "a & b", "a &amp b"] {
            let new = format!(r#"<g t="{value}"></g>"#);
            assert_eq!(ops(r#"<g t="a"></g>"#, &new), None, "{value}");
        }
        assert_eq!(
            ops(
                r#"<g t="a"></g>"#,
                r#"<g t="&lt;a &amp; &#39;b&#39;&gt;"></g>"#
            ),
            Some(vec![Op::SetAttr(0, "t".into(), "<a & 'b'>".into())])
        );
        // Attribute names end at the first `="`; a name with a space in it is not one.
        assert_eq!(ops(r#"<g t="a"></g>"#, r#"<g t x="a"></g>"#), None);
        // A quoted '>' does not end the tag.
        assert_eq!(
            ops(r#"<g t="a>b"></g>"#, r#"<g t="a>c"></g>"#),
            Some(vec![Op::SetAttr(0, "t".into(), "a>c".into())])
        );
    }

    #[test]
    fn broken_markup_never_panics() {
        // In the page a panic would stop it: any prefix of a chart, and a chart with a stray
        // delimiter anywhere, is read or refused, never a crash.
        let p = plan_of(&[(Field::Model, "qwen3-32b"), (Field::Tp, "2")]);
        let chart = rank_chart(&p, UnitSystem::Binary);
        let ends: Vec<usize> = (0..chart.len())
            .filter(|i| chart.is_char_boundary(*i))
            .collect();
        for &end in ends.iter().step_by(7) {
            let cut = &chart[..end];
            let _ = ops(&chart, cut);
            let _ = ops(cut, &chart);
        }
        for &at in ends.iter().step_by(61) {
            for c in ["<", ">", "\"", "&", "/", "</", "<!--", "=\"", "\u{2013}"] {
                let broken = format!("{}{c}{}", &chart[..at], &chart[at..]);
                let _ = ops(&chart, &broken);
                let _ = ops(&broken, &chart);
            }
        }
    }

    #[test]
    fn a_utilization_change_moves_the_rank_chart_in_place() {
        let chart = |util: &str| {
            let p = plan_of(&[
                (Field::Model, "qwen3-32b"),
                (Field::Tp, "2"),
                (Field::Gpu, "a100-sxm4-80gb"),
                (Field::Util, util),
            ]);
            rank_chart(&p, UnitSystem::Binary)
        };
        let (a, b) = (chart("0.9"), chart("0.85"));
        let n = element_count(&a).unwrap();
        assert!(n > 60, "{n}");
        let ops = ops(&a, &b).expect("the same shapes, moved");
        assert!(!ops.is_empty());
        // A handful of changes, not a redraw: the pool, the marks, their labels and titles.
        let touched: std::collections::BTreeSet<usize> = ops
            .iter()
            .map(|o| match o {
                Op::SetAttr(i, ..) | Op::RemoveAttr(i, _) | Op::SetText(i, _) => *i,
            })
            .collect();
        assert!(touched.len() * 2 < n, "{} of {n}", touched.len());
        // The titles keep exact bytes after the change.
        assert!(ops
            .iter()
            .any(|o| matches!(o, Op::SetText(_, t) if t.contains(" B) = "))));
    }
}
