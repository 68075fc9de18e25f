//! The `meta` column: an envelope's META blocks, in the order received.
//!
//! Blocks are separated by RS (U+001E); a block is its namespace, then each entry as US
//! (U+001F), key, US, value. That is the text and a separator per field, where the JSON form
//! older databases hold (`[{"entries":[[key, value], ...],"namespace": ...}]`) took about
//! a third more. Text that holds RS or US itself, an empty namespace (an empty block would
//! read as no block) or a first namespace starting with `[` makes the whole column the JSON
//! form, which [`parse`] also reads: the two forms never look alike.

use rusqlite::{Transaction, params};

use super::texts::{RS, US};
use crate::protocol::MetaBlock;
use crate::store::StoreError;

/// The `meta` column for `blocks`.
pub(crate) fn encode(blocks: &[MetaBlock]) -> String {
    let plain = |s: &str| !s.contains([RS, US]);
    let tight = blocks.iter().all(|b| {
        !b.namespace.is_empty()
            && plain(&b.namespace)
            && b.entries.iter().all(|(k, v)| plain(k) && plain(v))
    }) && blocks.first().is_none_or(|b| !b.namespace.starts_with('['));
    if !tight {
        return json(blocks);
    }
    let mut out = String::new();
    for (i, b) in blocks.iter().enumerate() {
        if i > 0 {
            out.push(RS);
        }
        out.push_str(&b.namespace);
        for (key, value) in &b.entries {
            out.push(US);
            out.push_str(key);
            out.push(US);
            out.push_str(value);
        }
    }
    out
}

/// The JSON form.
fn json(blocks: &[MetaBlock]) -> String {
    let blocks: Vec<serde_json::Value> = blocks
        .iter()
        .map(|m| serde_json::json!({"namespace": m.namespace, "entries": m.entries}))
        .collect();
    serde_json::to_string(&blocks).unwrap_or_default()
}

/// A stored META block in the JSON form, read straight into its fields.
#[derive(serde::Deserialize)]
struct Json {
    namespace: String,
    entries: Vec<(String, String)>,
}

/// Reads the `meta` column back, in either form.
pub(crate) fn parse(stored: &str) -> Result<Vec<MetaBlock>, String> {
    if stored.starts_with('[') {
        let blocks: Vec<Json> = serde_json::from_str(stored).map_err(|e| e.to_string())?;
        return Ok(blocks
            .into_iter()
            .map(|b| MetaBlock {
                namespace: b.namespace,
                entries: b.entries,
            })
            .collect());
    }
    if stored.is_empty() {
        return Ok(Vec::new());
    }
    stored
        .split(RS)
        .map(|block| {
            let mut fields = block.split(US);
            let namespace = fields.next().unwrap_or_default().to_string();
            let mut entries = Vec::new();
            while let Some(key) = fields.next() {
                let value = fields
                    .next()
                    .ok_or_else(|| format!("META entry `{key}` of `{namespace}` has no value"))?;
                entries.push((key.to_string(), value.to_string()));
            }
            Ok(MetaBlock { namespace, entries })
        })
        .collect()
}

/// The migration to this form: every row whose `meta` can be read is written again by
/// [`encode`]; one that cannot keeps it, to be reported as damaged when read, as before.
pub(crate) fn encode_stored(tx: &Transaction) -> Result<(), StoreError> {
    let mut update = tx.prepare("UPDATE messages SET meta = ?2 WHERE seq = ?1")?;
    let mut select = tx.prepare("SELECT seq, meta FROM messages WHERE meta LIKE '[%'")?;
    let mut rows = select.query([])?;
    while let Some(r) = rows.next()? {
        let stored: String = r.get(1)?;
        if let Ok(blocks) = parse(&stored) {
            let tight = encode(&blocks);
            if tight != stored {
                update.execute(params![r.get::<_, i64>(0)?, tight])?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn block(namespace: &str, entries: &[(&str, &str)]) -> MetaBlock {
        MetaBlock {
            namespace: namespace.into(),
            entries: entries
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn blocks_are_stored_with_separators_and_read_back() {
        let blocks = vec![
            block("privacy", &[("PII", "none"), ("Scope", "")]),
            block("poll", &[]),
        ];
        let stored = encode(&blocks);
        assert_eq!(
            stored,
            "privacy\u{1f}PII\u{1f}none\u{1f}Scope\u{1f}\u{1e}poll"
        );
        assert_eq!(parse(&stored).unwrap(), blocks);
        assert_eq!(encode(&[]), "");
        assert_eq!(parse("").unwrap(), vec![]);
        // The JSON form older databases hold reads the same.
        assert_eq!(parse(&json(&blocks)).unwrap(), blocks);
        assert_eq!(parse("[]").unwrap(), vec![]);
        // A key without its value is damage.
        assert!(parse("privacy\u{1f}PII").is_err());
        assert!(parse("[{").is_err());
    }

    #[test]
    fn text_that_would_read_otherwise_is_kept_as_json() {
        for blocks in [
            vec![block("", &[])],
            vec![block("a", &[]), block("", &[("k", "v")])],
            vec![block("[x", &[])],
            vec![block("a", &[("k\u{1e}", "v")])],
            vec![block("a", &[("k", "v\u{1f}")])],
        ] {
            let stored = encode(&blocks);
            assert!(stored.starts_with('['), "{stored:?}");
            assert_eq!(parse(&stored).unwrap(), blocks);
        }
    }

    proptest! {
        #[test]
        fn any_blocks_read_back_as_written(
            blocks in proptest::collection::vec(
                (
                    "(\\PC|\u{1e}|\u{1f}|\\[){0,5}",
                    proptest::collection::vec(
                        ("(\\PC|\u{1e}|\u{1f}){0,4}", "(\\PC|\u{1e}|\u{1f}|\\[){0,6}"),
                        0..4,
                    ),
                ),
                0..4,
            ),
        ) {
            let blocks: Vec<MetaBlock> = blocks
                .into_iter()
                .map(|(namespace, entries)| MetaBlock { namespace, entries })
                .collect();
            prop_assert_eq!(parse(&encode(&blocks)).unwrap(), blocks);
        }
    }
}
