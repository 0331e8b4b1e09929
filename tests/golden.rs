//! The catalogue's shape against its golden copy (`tests/golden/catalogue.txt`): a change to a
//! tool's name, title, hints, words or schemas fails here as a few readable lines, to be
//! accepted on purpose by running this test with `LEMONFIBER_BLESS_GOLDEN=1`.

#[allow(dead_code)]
#[path = "../src/contract.rs"]
mod contract;

use std::path::Path;

const GOLDEN: &str = "tests/golden/catalogue.txt";
/// Set, the test writes the shape it finds as the golden copy rather than comparing.
const BLESS: &str = "LEMONFIBER_BLESS_GOLDEN";
/// Unchanged lines shown around each change.
const CONTEXT: usize = 3;

#[test]
fn the_catalogue_keeps_the_shape_of_its_golden_copy() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |path: &str| {
        std::fs::read_to_string(root.join(path))
            .unwrap_or_else(|error| panic!("cannot read {path}: {error}"))
    };
    let shape = contract::catalogue_shape(&read(contract::CONTRACT), &read(contract::WORDS))
        .unwrap_or_else(|problems| panic!("the generator refuses: {problems:#?}"));
    let golden_path = root.join(GOLDEN);
    if std::env::var_os(BLESS).is_some() {
        std::fs::create_dir_all(golden_path.parent().expect("the golden copy's folder"))
            .expect("make the golden copy's folder");
        std::fs::write(&golden_path, &shape).expect("write the golden copy");
        return;
    }
    let golden = std::fs::read_to_string(&golden_path).unwrap_or_default();
    if golden != shape {
        panic!(
            "the catalogue's shape is not its golden copy, {GOLDEN} \
             (- only in the golden copy, + only in the shape the contract and words make now):\n\n{}\n\
             If the change is meant, accept it and commit the file:\n    \
             {BLESS}=1 cargo test --locked --test golden\n",
            line_diff(&golden, &shape)
        );
    }
}

/// The lines of `before` and `after` that differ, each change with a few unchanged lines around
/// it and the lines it starts at.
fn line_diff(before: &str, after: &str) -> String {
    similar::TextDiff::from_lines(before, after)
        .unified_diff()
        .context_radius(CONTEXT)
        .header("golden copy", "the shape now")
        .to_string()
}
