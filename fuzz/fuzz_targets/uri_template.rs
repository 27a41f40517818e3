//! URI-template matching: a template (any text) through `UriTemplate::parse`, then a URI
//! (any text) through `matches`, whose variables must be the template's; and, for a
//! template that parses, the expansion of values from the input, which must match back
//! when every variable has a value without `%` (what `resources/read` through a template
//! relies on).
//!
//! Input: the template, NUL, the URI, then the values in the template's order, each after
//! a NUL.

#![no_main]

use std::collections::HashMap;

use libfuzzer_sys::fuzz_target;
use promptshelf::uri_template::UriTemplate;
use promptshelf_fuzz::Fields;

fuzz_target!(|data: &[u8]| {
    let mut fields = Fields::new(data);
    let Ok(template) = UriTemplate::parse(&fields.text()) else {
        return;
    };
    let _ = template.literal_prefix();
    if let Some(found) = template.matches(&fields.text()) {
        for name in found.keys() {
            assert!(
                template.variables().contains(name),
                "matched a variable the template does not have: {name}"
            );
        }
    }
    let given = fields.remaining();
    let values: HashMap<String, String> = template.variables().iter().cloned().zip(given).collect();
    let Ok(uri) = template.expand(&values) else {
        return;
    };
    // A value's own percent triplets stay as they are in a reserved expansion (`{+var}`,
    // `{#var}`), and may decode to something that is not UTF-8, which no stored URI holds.
    let every_one = template
        .variables()
        .iter()
        .all(|name| values.get(name).is_some_and(|value| !value.contains('%')));
    if every_one {
        assert!(
            template.matches(&uri).is_some(),
            "{uri} is an expansion of {} that does not match it",
            template.as_str()
        );
    }
});
