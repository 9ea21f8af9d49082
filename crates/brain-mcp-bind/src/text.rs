//! Small text helpers shared by the commands: edit distance for "did you mean" hints.

use std::time::Instant;

/// The Levenshtein distance between two strings, counted in characters.
#[cfg(any(feature = "cli", test))]
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    bounded_distance(a, b, usize::MAX)
}

/// The Levenshtein distance, or some value above `limit` as soon as it must exceed it
/// (every entry of a row is past the limit), so far-apart strings cost little.
fn bounded_distance(a: &str, b: &str, limit: usize) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        let mut best = cur[0];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
            best = best.min(cur[j + 1]);
        }
        if best > limit {
            return best;
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The longest name, in bytes, that gets hints or is offered as one: no binding can name
/// a longer remote tool (256 characters at most).
pub(crate) const MAX_HINT_NAME: usize = 1024;

/// Names from `candidates` close to `name` (distance at most a third of its length, at
/// least 1), closest first, at most three.
///
/// The work is bounded: names longer than [`MAX_HINT_NAME`] are skipped (and `name` itself
/// then gets no hints), a candidate whose length alone puts it too far is not compared,
/// and the search stops, keeping what it found, once `until` has passed.
pub(crate) fn close_matches<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    until: Option<Instant>,
) -> Vec<&'a str> {
    if name.len() > MAX_HINT_NAME {
        return Vec::new();
    }
    let wanted = name.to_lowercase();
    let length = wanted.chars().count();
    let limit = (name.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, &str)> = Vec::new();
    for (i, c) in candidates.into_iter().enumerate() {
        if i % 64 == 0 && until.is_some_and(|t| Instant::now() >= t) {
            break;
        }
        if c.len() > MAX_HINT_NAME || c.chars().count().abs_diff(length) > limit {
            continue;
        }
        let d = bounded_distance(&wanted, &c.to_lowercase(), limit);
        if d <= limit {
            scored.push((d, c));
        }
    }
    scored.sort();
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    #[test]
    fn close_matches_are_ranked_and_bounded() {
        let names = ["echo", "get-sum", "get-tiny-image", "echoes"];
        assert_eq!(close_matches("ecko", names, None), vec!["echo"]);
        assert_eq!(close_matches("get-summ", names, None), vec!["get-sum"]);
        assert!(close_matches("zzzz", names, None).is_empty());
    }

    #[test]
    fn bounded_distance_stops_early_and_agrees_within_the_limit() {
        assert_eq!(bounded_distance("kitten", "sitting", 3), 3);
        assert!(bounded_distance("aaaaaaaa", "bbbbbbbb", 2) > 2);
        assert_eq!(bounded_distance("same", "same", 0), 0);
    }

    #[test]
    fn huge_names_are_neither_hinted_nor_compared() {
        let huge = "e".repeat(MAX_HINT_NAME + 1);
        assert!(close_matches(&huge, ["echo"], None).is_empty());
        assert!(close_matches("echo", [huge.as_str(), "ecko"], None) == vec!["ecko"]);
    }

    #[test]
    fn a_passed_deadline_stops_the_search() {
        let past = Instant::now();
        assert!(close_matches("ecko", ["echo"], Some(past)).is_empty());
    }
}
