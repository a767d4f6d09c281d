//! Small helpers with no home in the accounting itself.

/// Sorts a short list (layer indices, batch sizes, sweep points) in place. Insertion sort:
/// linear on the already-sorted lists these usually are, and a few dozen bytes of wasm per
/// element type where the standard library's sorts are kilobytes each.
pub fn sort_small<T: PartialOrd + Copy>(v: &mut [T]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1] > x {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

/// The longest text a message quotes whole; past it, a prefix and the text's size.
pub const QUOTE_MAX: usize = 80;

/// `text` as a message quotes it: in double quotes, escaped (an empty text reads `""`), and
/// past [`QUOTE_MAX`] bytes only a prefix and the size, so a pasted megabyte never comes
/// back whole in one line.
pub fn quoted(text: &str) -> String {
    if text.len() <= QUOTE_MAX {
        return format!("{text:?}");
    }
    format!("{:?}... ({} bytes)", prefix(text, 48), text.len())
}

/// `text` as a name in a heading: whole up to [`QUOTE_MAX`] bytes, else a prefix and "...".
pub fn clipped(text: &str) -> String {
    if text.len() <= QUOTE_MAX {
        return text.to_string();
    }
    format!("{}... ({} bytes)", prefix(text, 48), text.len())
}

/// At most `n` bytes of `text`, cut at a character boundary.
fn prefix(text: &str, n: usize) -> &str {
    let mut end = n.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_are_short() {
        assert_eq!(super::quoted(""), "\"\"");
        assert_eq!(super::quoted("h100"), "\"h100\"");
        let long = "é".repeat(100_000);
        let q = super::quoted(&long);
        assert!(q.len() < 120, "{q}");
        assert!(q.ends_with("... (200000 bytes)"), "{q}");
        assert_eq!(super::clipped("llama"), "llama");
        assert!(super::clipped(&long).len() < 120);
    }

    #[test]
    fn sort_small_sorts() {
        let mut v = [5u32, 1, 4, 1, 3, 9, 0];
        super::sort_small(&mut v);
        assert_eq!(v, [0, 1, 1, 3, 4, 5, 9]);
        let mut e: [f64; 0] = [];
        super::sort_small(&mut e);
        let mut f = [0.9, 0.5, 0.98];
        super::sort_small(&mut f);
        assert_eq!(f, [0.5, 0.9, 0.98]);
    }
}
