//! The META namespaces the desk gives meaning to, each named once. Every rule that reads,
//! writes or compares a block asks for it by these names; a test fails when a rule spells one
//! out instead, so a namespace is renamed, or a new one added, here.

/// Where an envelope goes: `Targets` (a POLL's voters), `X-Route`, `X-Reply-To`, `X-Priority`.
pub(crate) const ROUTING: &str = "routing";
/// Personal data and consent: `PII`, `Consent`, `Expires`, `Scope`.
pub(crate) const PRIVACY: &str = "privacy";
/// A POLL's `Type`, `Options`, `Quorum`, `Deadline`; a reply's `Vote`.
pub const POLL: &str = "poll";
/// An ERROR's `Code`, `Reason`, `Target`.
pub const ERROR: &str = "error";
/// An audit hop: who carried the envelope, when, how.
pub(crate) const AUDIT: &str = "audit";
/// What a mail gateway adds with the mail's headers (Message-ID, In-Reply-To, Subject, From,
/// Date): the transport's record, not the sender's words.
pub const EMAIL: &str = "email";
/// Files that travel with the envelope, by name, size and digest.
pub(crate) const ATTACHMENTS: &str = "attachments";
/// Keys announced for signing.
pub(crate) const KEYS: &str = "keys";
/// A key or grant withdrawn.
pub(crate) const REVOCATION: &str = "revocation";
/// Content warnings and allowed use, shown ahead of the body (see `safety`).
pub const SAFETY: &str = "safety";

/// Every namespace with meaning.
pub const ALL: &[&str] = &[
    ROUTING,
    PRIVACY,
    POLL,
    ERROR,
    AUDIT,
    EMAIL,
    ATTACHMENTS,
    KEYS,
    REVOCATION,
    SAFETY,
];

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Where code names a namespace: comparing, looking up or writing a block's.
    const SITES: &[&str] = &[
        "meta_value(",
        "meta_block(\"",
        "meta_pos(",
        "namespace == \"",
        "namespace != \"",
        "eq_ignore_ascii_case(\"",
        "namespace: \"",
    ];

    fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                sources(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    /// No rule outside this file spells a namespace with meaning where it names a block.
    #[test]
    fn namespaces_are_named_from_this_table_only() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&src, &mut files);
        let mut spelled = Vec::new();
        for f in files {
            let name = f.file_name().unwrap().to_string_lossy();
            if name == "tests.rs" || name.ends_with("_tests.rs") || name.ends_with("_props.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap();
            let code = match text.find("#[cfg(test)]") {
                Some(at) => &text[..at],
                None => &text,
            };
            for (n, line) in code.lines().enumerate() {
                let line = line.split("//").next().unwrap_or("");
                // A site, or a match on (namespace, key): META keys are capitalized.
                let pattern = super::ALL.iter().any(|ns| {
                    let at = format!("(\"{ns}\", \"");
                    line.match_indices(&at).any(|(i, _)| {
                        line[i + at.len()..].starts_with(|c: char| c.is_ascii_uppercase())
                    })
                });
                if !pattern && !SITES.iter().any(|s| line.contains(s)) {
                    continue;
                }
                for ns in super::ALL {
                    if line.contains(&format!("\"{ns}\"")) {
                        spelled.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                    }
                }
            }
        }
        assert!(spelled.is_empty(), "spelled out:\n{}", spelled.join("\n"));
    }
}
