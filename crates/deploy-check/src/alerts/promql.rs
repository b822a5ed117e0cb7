//! What a PromQL expression names, and what a scrape in the text format holds: enough of both
//! languages to hold the names of the rules and the dashboard to what is exported. promtool
//! checks the queries' syntax; this reads their names.

use std::collections::{BTreeMap, BTreeSet};

/// What a PromQL expression names: each metric with the labels its selectors match on (and
/// the values of its `=` matchers), and the labels it groups or matches by.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Names {
    pub(super) metrics: BTreeMap<String, BTreeMap<String, Option<String>>>,
    pub(super) grouping: BTreeSet<String>,
}

pub(super) const AGGREGATIONS: &[&str] = &[
    "sum",
    "min",
    "max",
    "avg",
    "group",
    "stddev",
    "stdvar",
    "count",
    "count_values",
    "bottomk",
    "topk",
    "quantile",
    "limitk",
    "limit_ratio",
];
pub(super) const GROUPING: &[&str] = &[
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
];
pub(super) const KEYWORDS: &[&str] = &[
    "and", "or", "unless", "bool", "offset", "atan2", "inf", "nan", "Inf", "NaN",
];

/// Reads the names out of `expr` with a lexer of PromQL's tokens (strings, numbers and
/// durations, identifiers, brackets); promtool checks the syntax itself.
pub(super) fn promql_names(expr: &str) -> Result<Names, String> {
    let chars: Vec<char> = expr.chars().collect();
    let mut names = Names::default();
    let mut i = 0;
    // The metric whose selector's braces are open, and whether braces are open at all.
    let mut selector: Option<Option<String>> = None;
    let mut last_metric: Option<String> = None;
    let mut grouping_next = false;
    let skip_space = |mut j: usize| {
        while j < chars.len() && chars[j].is_whitespace() {
            j += 1;
        }
        j
    };
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '"' || c == '\'' || c == '`' {
            let (_, end) = string_at(&chars, i)?;
            i = end;
        } else if c == '[' {
            // A range or a subquery's range and step: durations only.
            i = chars[i..]
                .iter()
                .position(|&x| x == ']')
                .map(|p| i + p + 1)
                .ok_or_else(|| format!("unclosed [ in {expr}"))?;
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
        } else if c.is_ascii_alphabetic() || c == '_' || c == ':' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric() || chars[i] == '_' || chars[i] == ':')
            {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            let next = skip_space(i);
            if let Some(metric) = &selector {
                // A label matcher: `label op "value"`.
                let op: String = chars[next..]
                    .iter()
                    .take_while(|c| matches!(c, '=' | '!' | '~'))
                    .collect();
                let value_at = skip_space(next + op.len());
                let (value, end) = string_at(&chars, value_at)
                    .map_err(|e| format!("matcher {word} in {expr}: {e}"))?;
                let metric = metric.clone().unwrap_or_default();
                names
                    .metrics
                    .entry(metric)
                    .or_default()
                    .insert(word, (op == "=").then_some(value));
                i = end;
            } else if GROUPING.contains(&word.as_str()) {
                grouping_next = chars.get(next) == Some(&'(');
            } else if AGGREGATIONS.contains(&word.as_str())
                || KEYWORDS.contains(&word.as_str())
                || chars.get(next) == Some(&'(')
            {
                // An aggregation, a keyword or a function.
            } else {
                names.metrics.entry(word.clone()).or_default();
                last_metric = Some(word);
                continue;
            }
        } else if c == '(' && grouping_next {
            grouping_next = false;
            let end = chars[i..]
                .iter()
                .position(|&x| x == ')')
                .map(|p| i + p)
                .ok_or_else(|| format!("unclosed ( in {expr}"))?;
            let list: String = chars[i + 1..end].iter().collect();
            names.grouping.extend(
                list.split(',')
                    .map(str::trim)
                    .filter(|l| !l.is_empty())
                    .map(str::to_owned),
            );
            i = end + 1;
        } else if c == '{' {
            selector = Some(last_metric.take());
            i += 1;
        } else if c == '}' {
            selector = None;
            i += 1;
        } else {
            // An operator, a parenthesis, a comma between matchers or arguments.
            i += 1;
        }
        // Any token but a metric's name ends what a `{` could attach to.
        if !matches!(c, '{' | ' ' | '\n' | '\t') {
            last_metric = None;
        }
    }
    Ok(names)
}

/// The string literal starting at `chars[at]` and the index after it.
pub(super) fn string_at(chars: &[char], at: usize) -> Result<(String, usize), String> {
    let quote = *chars.get(at).ok_or("a string expected, found the end")?;
    if !matches!(quote, '"' | '\'' | '`') {
        return Err(format!("a string expected at {quote:?}"));
    }
    let mut out = String::new();
    let mut i = at + 1;
    while i < chars.len() {
        match chars[i] {
            '\\' if quote != '`' => {
                out.extend(chars.get(i + 1));
                i += 2;
            }
            c if c == quote => return Ok((out, i + 1)),
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Err("an unclosed string".to_owned())
}

/// What is exported: metric name -> label name -> the values seen.
pub(super) type Exported = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

/// A scrape in the text format, by metric and label.
pub(super) fn parse_scrape(text: &str) -> Result<Exported, String> {
    let mut out = Exported::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let name_end = line
            .find(['{', ' '])
            .ok_or_else(|| format!("no value: {line}"))?;
        let labels = out.entry(line[..name_end].to_owned()).or_default();
        if line[name_end..].starts_with('{') {
            let chars: Vec<char> = line[name_end + 1..].chars().collect();
            let mut i = 0;
            while i < chars.len() && chars[i] != '}' {
                let eq = chars[i..]
                    .iter()
                    .position(|&c| c == '=')
                    .ok_or_else(|| format!("a label without a value: {line}"))?;
                let key: String = chars[i..i + eq].iter().collect();
                let (value, end) =
                    string_at(&chars, i + eq + 1).map_err(|e| format!("{e}: {line}"))?;
                labels
                    .entry(key.trim().to_owned())
                    .or_default()
                    .insert(value);
                i = end;
                if chars.get(i) == Some(&',') {
                    i += 1;
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lexer_reads_metrics_matchers_and_groupings() {
        let names = promql_names(
            r#"sum by (namespace, shogi_role) (max by (x) (lag{namespace="n", role=~"a|b"} offset 10m)) > 3
               and changes(max by (pod) (start{ns="a,b}"})[15m:1m]) > 0
               / ignoring (error_type) group_left rate(c_total[5m])"#,
        )
        .expect("parses");
        assert_eq!(
            names.metrics.keys().collect::<Vec<_>>(),
            ["c_total", "lag", "start"]
        );
        assert_eq!(names.metrics["lag"]["namespace"], Some("n".to_owned()));
        assert_eq!(names.metrics["lag"]["role"], None);
        assert_eq!(names.metrics["start"]["ns"], Some("a,b}".to_owned()));
        assert_eq!(
            names.grouping.iter().collect::<Vec<_>>(),
            ["error_type", "namespace", "pod", "shogi_role", "x"]
        );
        let scrape = parse_scrape("# TYPE a counter\na_total{x=\"1\",y=\"q\\\"}\"} 3\nb 1\n")
            .expect("parses");
        assert_eq!(scrape["a_total"]["y"], BTreeSet::from(["q\"}".to_owned()]));
        assert!(scrape["b"].is_empty());
    }
}
