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

#[cfg(test)]
mod tests {
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
