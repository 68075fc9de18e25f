//! What `show --json` adds to a message from the integrity ledgers: its conflicting versions
//! (texts pasted later under the same id) and the id it was pasted with when it got a fresh one.

use serde_json::{Value, json};

use crate::store::{Store, StoreError};

/// What the tree line of `show` adds to message `id`: its conflicting versions, its original id.
pub(crate) fn note(store: &Store, id: &str) -> Result<String, StoreError> {
    let mut note = String::new();
    match store.version_count(id)? {
        0 => {}
        1 => note.push_str("  ✗ 1 conflicting version (show --json lists it)"),
        n => note.push_str(&format!(
            "  ✗ {n} conflicting versions (show --json lists them)"
        )),
    }
    if let Some(alias) = store.alias_of(id)? {
        note.push_str(&format!(
            "  (originally {})",
            crate::sanitize::sanitize_line(&alias)
        ));
    }
    Ok(note)
}

/// Adds `versions` (when there are any) and `original_id` (when it had one) to each message
/// of a thread's JSON.
pub(crate) fn annotate(store: &Store, thread: &mut Value) -> Result<(), StoreError> {
    let Some(messages) = thread.get_mut("messages").and_then(Value::as_array_mut) else {
        return Ok(());
    };
    for m in messages {
        let Some(id) = m.get("message").and_then(Value::as_str).map(str::to_string) else {
            continue;
        };
        let versions = store.message_versions(&id)?;
        let alias = store.alias_of(&id)?;
        let Some(obj) = m.as_object_mut() else {
            continue;
        };
        if !versions.is_empty() {
            obj.insert("versions".into(), json!(versions));
        }
        if let Some(a) = alias {
            obj.insert("original_id".into(), json!(a));
        }
    }
    Ok(())
}
