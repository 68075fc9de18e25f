//! The layers, as a test the compiler's module system cannot write: which of the crate's
//! rooms may use which. Each room names the rooms below it that it uses; a `crate::…` path
//! in a room's code (comments and test modules aside) to any other room fails the test, so
//! the direction in `lib.rs` stays true as the code grows.
//!
//! An edge that has to go the wrong way for a while is listed in [`KNOWN`] with where it is,
//! so that it can only go: a new one fails, and one that is gone fails too until it is taken
//! off the list. None is listed.

/// Each room and the rooms it may use, bottom first. `cli`, the entry, may use every room
/// and is not listed.
const ALLOWED: &[(&str, &[&str])] = &[
    ("cells", &[]),
    ("sanitize", &["cells"]),
    ("markdown", &["sanitize", "cells"]),
    ("protocol", &["sanitize", "cells"]),
    ("contacts", &["protocol", "sanitize", "cells"]),
    (
        "primer",
        &["ids", "contacts", "protocol", "sanitize", "cells"],
    ),
    ("ids", &["protocol"]),
    ("store", &["ids", "protocol", "sanitize", "cells"]),
    ("json", &["store", "protocol", "sanitize", "cells"]),
    (
        "transport",
        &[
            "store", "json", "ids", "primer", "contacts", "protocol", "sanitize", "cells",
        ],
    ),
    (
        "export",
        &[
            "transport",
            "json",
            "store",
            "protocol",
            "sanitize",
            "cells",
        ],
    ),
    ("clipboard", &["protocol", "sanitize", "cells"]),
    (
        "config",
        &[
            "clipboard",
            "transport",
            "contacts",
            "protocol",
            "sanitize",
            "cells",
        ],
    ),
    (
        "app",
        &[
            "config",
            "clipboard",
            "export",
            "transport",
            "json",
            "store",
            "ids",
            "primer",
            "contacts",
            "protocol",
            "markdown",
            "sanitize",
            "cells",
        ],
    ),
    (
        "ui",
        &["app", "store", "protocol", "markdown", "sanitize", "cells"],
    ),
    (
        "tui",
        &[
            "ui",
            "app",
            "config",
            "clipboard",
            "transport",
            "export",
            "store",
            "protocol",
            "sanitize",
            "cells",
        ],
    ),
    ("synth", &["ids", "protocol", "sanitize", "cells"]),
];

/// Edges against the layers still in the code: (from room, to room, file). Each is a
/// decision made in the wrong room, to be moved to the room that owns it.
const KNOWN: &[(&str, &str, &str)] = &[];

/// Code of a source file as the layers see it: its comments and its test module left out.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(at) => &l[..at],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The rooms `code` names by `crate::room`.
fn rooms_named(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                sources(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    /// A file only tests compile (`#[cfg(test)] mod …_tests;`, property tests, support).
    fn test_only(rel: &str) -> bool {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        name.ends_with("_tests.rs")
            || name.ends_with("_props.rs")
            || name == "tests.rs"
            || name == "test_support.rs"
    }

    #[test]
    fn no_room_uses_a_room_above_it() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&src, &mut files);
        let rooms: Vec<&str> = (ALLOWED.iter().map(|(r, _)| *r)).chain(["cli"]).collect();
        let mut wrong = Vec::new();
        let mut known_seen = Vec::new();
        for f in files {
            let rel = f
                .strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let room = rel.split('/').next().unwrap().trim_end_matches(".rs");
            if matches!(room, "lib" | "main" | "layers" | "cli") || test_only(&rel) {
                continue;
            }
            let allowed = ALLOWED
                .iter()
                .find(|(r, _)| *r == room)
                .unwrap_or_else(|| panic!("{rel}: room `{room}` is not in the layers' table"))
                .1;
            let code = code_of(&std::fs::read_to_string(&f).unwrap());
            for to in rooms_named(&code) {
                if to == room || !rooms.contains(&to.as_str()) || allowed.contains(&to.as_str()) {
                    continue;
                }
                let edge = (room, to.as_str(), rel.as_str());
                match KNOWN.iter().find(|k| **k == edge) {
                    Some(k) => known_seen.push(*k),
                    None => wrong.push(format!("{rel}: `{room}` uses `{to}`")),
                }
            }
        }
        assert!(
            wrong.is_empty(),
            "edges against the layers (see src/layers.rs):\n{}",
            wrong.join("\n")
        );
        for k in KNOWN {
            assert!(
                known_seen.contains(k),
                "{k:?} is gone from the code: take it off `KNOWN`"
            );
        }
    }

    /// The protocol reads no clock and no random source: new ids come from the caller
    /// (`protocol::NewIds`), times are given.
    #[test]
    fn the_protocol_reads_no_clock() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/protocol");
        let mut files = Vec::new();
        sources(&dir, &mut files);
        for f in files {
            let rel = f.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
            if test_only(&rel) {
                continue;
            }
            let code = code_of(&std::fs::read_to_string(&f).unwrap());
            for clock in [
                "::now()",
                "SystemTime",
                "Instant",
                "Ulid::new()",
                "Generator::new()",
            ] {
                assert!(
                    !code.contains(clock),
                    "protocol/{rel} reads the clock: `{clock}`"
                );
            }
        }
    }

    #[test]
    fn every_room_of_the_crate_is_in_the_table() {
        let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
            .unwrap();
        for l in lib.lines() {
            let Some(name) = l
                .strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))
            else {
                continue;
            };
            let name = name.trim_end_matches(';');
            assert!(
                matches!(name, "layers" | "cli") || ALLOWED.iter().any(|(r, _)| *r == name),
                "`{name}` has no place in the layers' table"
            );
        }
    }

    #[test]
    fn comments_and_tests_are_not_edges() {
        let text = "use crate::store::X; // crate::tui\nfn f() { crate::app::g() }\n#[cfg(test)]\nmod tests { use crate::ui; }\n";
        assert_eq!(rooms_named(&code_of(text)), ["store", "app"]);
    }
}
