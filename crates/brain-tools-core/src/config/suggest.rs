//! "Did you mean" suggestions for unknown config fields.

/// The known name `unknown` most likely stands for, if any is close enough.
///
/// A name matches when it differs only in case, `_` or `-` (`inputSchema` → `input_schema`),
/// or when its edit distance (insertions, deletions, substitutions and swaps of neighbours)
/// is at most a third of its length, and at least 1.
pub(crate) fn suggest<'a>(unknown: &str, known: &[&'a str]) -> Option<&'a str> {
    let normal = normalize(unknown);
    if let Some(exact) = known.iter().find(|name| normalize(name) == normal) {
        return Some(exact);
    }
    known
        .iter()
        .map(|name| (edit_distance(&normal, &normalize(name)), *name))
        .filter(|(distance, name)| *distance <= (name.chars().count() / 3).max(1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

fn normalize(name: &str) -> Vec<char> {
    name.chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Optimal string alignment distance.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    // Field names are short; an unknown key can be long, so cap the work.
    if a.len().abs_diff(b.len()) > 8 {
        return usize::MAX;
    }
    let width = b.len() + 1;
    let mut rows = vec![0usize; (a.len() + 1) * width];
    for (j, cell) in rows.iter_mut().enumerate().take(width) {
        *cell = j;
    }
    for i in 1..=a.len() {
        rows[i * width] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (rows[(i - 1) * width + j] + 1)
                .min(rows[i * width + j - 1] + 1)
                .min(rows[(i - 1) * width + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(rows[(i - 2) * width + j - 2] + 1);
            }
            rows[i * width + j] = best;
        }
    }
    rows[a.len() * width + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIELDS: &[&str] = &[
        "name",
        "timeout_seconds",
        "tenants",
        "token_env",
        "input_schema",
    ];

    #[test]
    fn close_typos_are_suggested() {
        assert_eq!(suggest("timout_seconds", FIELDS), Some("timeout_seconds"));
        assert_eq!(suggest("tenant", FIELDS), Some("tenants"));
        assert_eq!(suggest("tokne_env", FIELDS), Some("token_env"));
        assert_eq!(suggest("inputSchema", FIELDS), Some("input_schema"));
        assert_eq!(suggest("NAME", FIELDS), Some("name"));
        assert_eq!(suggest("token", FIELDS), Some("token_env"));
    }

    #[test]
    fn unrelated_names_get_no_suggestion() {
        assert_eq!(suggest("colour", FIELDS), None);
        assert_eq!(suggest("color", FIELDS), None);
        assert_eq!(suggest(&"x".repeat(10_000), FIELDS), None);
    }
}
