//! The page's URL state: the input layer's query codec and builder under the page's old path,
//! and the page-only pieces (the example menu, the checkboxes' texts).
//!
//! The codec itself is [`crate::input::query`], the one builder [`crate::input::scenario()`];
//! both are re-exported here so `io::url::...` keeps naming them.

use crate::calc::scenario::Scenario;
use crate::catalog;

pub use crate::input::query::{
    base64url_decode, base64url_encode, decode, decode_texts, encode, encode_texts, link, Decoded,
    Ignored, UrlState, FORMAT_VERSION, MAX_QUERY_LEN,
};
pub use crate::input::scenario::{scenario, InputError};
pub use crate::input::values::{
    in_range, parse_bool, parse_bytes_list, parse_config, parse_count, parse_fraction,
    parse_max_len, parse_method, parse_partition, parse_unit, split_bytes_list, unit_text,
    DEFAULT_GPU, DEFAULT_MODEL, SPEC_METHODS,
};
/// The inputs, by their old name here: `calc::Input` is the one closed set.
pub use crate::input::Field;

/// The seed examples' menu entries (static: listing them builds no scenario).
pub fn examples() -> &'static [catalog::examples::ExampleInfo] {
    &catalog::examples::INFO
}

/// A boolean flag's value in a scenario (`None` for a field that is not a flag).
pub fn flag_value(field: Field, s: &Scenario) -> Option<bool> {
    match field {
        Field::Ep => Some(s.parallel.expert_parallel),
        Field::Eager => Some(s.engine.enforce_eager),
        Field::NoHybrid => Some(s.engine.disable_hybrid_kv_cache_manager),
        Field::NoAsync => Some(s.engine.no_async_scheduling),
        _ => None,
    }
}

/// The text a flag's checkbox writes into the state: `true` when on; when off, nothing (the
/// key leaves the URL) unless the base scenario, an example's, has the flag on, which `false`
/// then overrides.
pub fn flag_text(state: &UrlState, field: Field, on: bool) -> &'static str {
    if on {
        return "true";
    }
    let base_on = state
        .get(Field::Example)
        .and_then(crate::input::scenario::example_scenario)
        .and_then(|s| flag_value(field, s))
        .unwrap_or(false);
    if base_on {
        "false"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An unchecked box drops its key unless the example it overrides has the flag on, and
    /// the state it writes plans with the flag as the box shows it.
    #[test]
    fn flag_text_drops_a_default_and_overrides_an_example() {
        let flags = [Field::Ep, Field::Eager, Field::NoHybrid, Field::NoAsync];
        let mut states = vec![UrlState::default()];
        for e in examples() {
            let mut st = UrlState::default();
            st.set(Field::Example, e.id).unwrap();
            states.push(st);
        }
        for st in &states {
            for f in flags {
                assert_eq!(flag_text(st, f, true), "true");
                for on in [true, false] {
                    let mut set = st.clone();
                    set.set(f, flag_text(st, f, on)).unwrap();
                    let s = scenario(&set).unwrap();
                    assert_eq!(flag_value(f, &s), Some(on), "{f:?} {on}");
                    if !on && st.get(Field::Example).is_none() {
                        assert_eq!(set.get(f), None, "{f:?} off stays out of the URL");
                    }
                }
            }
        }
        assert_eq!(flag_value(Field::Tp, &scenario(&states[0]).unwrap()), None);
    }
}
