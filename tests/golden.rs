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

/// The lines of `before` and `after` that differ, each change with a few unchanged lines
/// around it and the line number it starts at in each.
fn line_diff(before: &str, after: &str) -> String {
    let before: Vec<&str> = before.lines().collect();
    let after: Vec<&str> = after.lines().collect();
    let edits = edits(&before, &after);
    let changed: Vec<usize> = edits
        .iter()
        .enumerate()
        .filter(|(_, edit)| !matches!(edit, Edit::Same(..)))
        .map(|(at, _)| at)
        .collect();
    // Changes whose context would touch are shown as one hunk.
    let mut hunks: Vec<(usize, usize)> = Vec::new();
    for at in changed {
        let start = at.saturating_sub(CONTEXT);
        let end = (at + CONTEXT + 1).min(edits.len());
        match hunks.last_mut() {
            Some(last) if start <= last.1 => last.1 = end,
            _ => hunks.push((start, end)),
        }
    }
    let mut text = String::new();
    for (start, end) in hunks {
        let (old_line, new_line) = edits[start].lines();
        text.push_str(&format!(
            "@@ golden line {old_line}, new line {new_line} @@\n"
        ));
        for edit in &edits[start..end] {
            let (mark, line) = match edit {
                Edit::Same(_, _, line) => (' ', line),
                Edit::Gone(_, _, line) => ('-', line),
                Edit::Added(_, _, line) => ('+', line),
            };
            text.push_str(&format!("{mark} {line}\n"));
        }
    }
    text
}

/// One line of a diff, with the line (counted from 1) each side has reached there.
enum Edit<'a> {
    Same(usize, usize, &'a str),
    Gone(usize, usize, &'a str),
    Added(usize, usize, &'a str),
}

impl Edit<'_> {
    fn lines(&self) -> (usize, usize) {
        match self {
            Edit::Same(old, new, _) | Edit::Gone(old, new, _) | Edit::Added(old, new, _) => {
                (*old, *new)
            }
        }
    }
}

/// The fewest lines gone and added that turn `before` into `after`: the lines they share at
/// either end are kept aside, and the rest is a longest common subsequence.
fn edits<'a>(before: &[&'a str], after: &[&'a str]) -> Vec<Edit<'a>> {
    let head = before
        .iter()
        .zip(after)
        .take_while(|(old, new)| old == new)
        .count();
    let tail = before[head..]
        .iter()
        .rev()
        .zip(after[head..].iter().rev())
        .take_while(|(old, new)| old == new)
        .count();
    let old = &before[head..before.len() - tail];
    let new = &after[head..after.len() - tail];
    // common[i][j]: the longest common subsequence of old[i..] and new[j..].
    let mut common = vec![vec![0_usize; new.len() + 1]; old.len() + 1];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            common[i][j] = if old[i] == new[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let mut edits: Vec<Edit> = (0..head)
        .map(|at| Edit::Same(at + 1, at + 1, before[at]))
        .collect();
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        let (old_line, new_line) = (head + i + 1, head + j + 1);
        if i < old.len() && j < new.len() && old[i] == new[j] {
            edits.push(Edit::Same(old_line, new_line, old[i]));
            i += 1;
            j += 1;
        } else if i < old.len() && (j == new.len() || common[i + 1][j] >= common[i][j + 1]) {
            edits.push(Edit::Gone(old_line, new_line, old[i]));
            i += 1;
        } else {
            edits.push(Edit::Added(old_line, new_line, new[j]));
            j += 1;
        }
    }
    let (old_end, new_end) = (before.len() - tail, after.len() - tail);
    edits.extend(
        (0..tail).map(|at| Edit::Same(old_end + at + 1, new_end + at + 1, before[old_end + at])),
    );
    edits
}

#[test]
fn a_changed_line_is_shown_gone_and_added_among_its_neighbours() {
    let before = "a\nb\nc\nd\ne\nf\ng\nh\n";
    let after = "a\nb\nc\nd\nE\nf\ng\nh\ni\n";
    assert_eq!(
        line_diff(before, after),
        "@@ golden line 2, new line 2 @@\n  b\n  c\n  d\n- e\n+ E\n  f\n  g\n  h\n+ i\n"
    );
}
