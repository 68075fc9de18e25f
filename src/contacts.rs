//! The address book: `[[contacts]]` in `config.toml` — the spec's "local config files" that
//! map a banner name to an address. A contact's name can be typed wherever an address is
//! asked for (the composer's from and to, `crosstalk primer --to`), the screens show its name
//! for its address, and its settings decide how copies for it are made (fence, preamble,
//! primer on the first copy, delivery).
//!
//! How it relates to the older `[recipients."name"]` table: both are read. A contact that
//! matches a recipient decides by its own `fence`; a recipient no contact matches keeps
//! its table's setting. So a config can move from `[recipients]` to `[[contacts]]` one entry
//! at a time.

use serde::Deserialize;

/// One `[[contacts]]` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contact {
    /// The name used in banners and typed in the composer (`Claude`).
    pub name: String,
    /// The address envelopes to it carry (`claude://session/7c2e91`); the name itself
    /// when absent.
    #[serde(default)]
    pub address: Option<String>,
    /// Wrap copies for it in a markdown fence (chat windows that collapse newlines).
    #[serde(default)]
    pub fence: bool,
    /// Text put before the primer when starting a conversation with it (`crosstalk primer`,
    /// `N` in the app): what this model needs told first.
    #[serde(default)]
    pub preamble: Option<String>,
    /// Put the primer (the format rules) before the first envelope carried to its window, after
    /// its preamble: a window opened without `N` learns the format from its first copy.
    #[serde(default)]
    pub primer: bool,
    /// How `y` and C-y deliver envelopes to it: the clipboard (default) or `http`.
    #[serde(default)]
    pub delivery: DeliveryMethod,
    /// With `delivery = "http"`: where to post (`http://host:port`; `/crosstalk/receive`
    /// is added when the URL has no path).
    #[serde(default)]
    pub url: Option<String>,
    /// With `delivery = "http"`: the bearer token the peer expects.
    #[serde(default)]
    pub token: Option<String>,
}

/// How envelopes reach a contact.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeliveryMethod {
    /// Copied to the clipboard for the operator to paste.
    #[default]
    Clipboard,
    /// Posted to the contact's `url` (the spec's HTTP binding).
    Http,
}

impl Contact {
    /// Where to post envelopes for it, when it takes them over HTTP.
    pub(crate) fn http_url(&self) -> Option<&str> {
        (self.delivery == DeliveryMethod::Http)
            .then_some(self.url.as_deref())
            .flatten()
            .filter(|u| !u.trim().is_empty())
    }

    /// The address envelopes to this contact carry.
    pub fn address(&self) -> &str {
        self.address
            .as_deref()
            .filter(|a| !a.trim().is_empty())
            .unwrap_or(&self.name)
    }

    /// Whether `who` (a banner's from or to) names this contact: its name or its address,
    /// case-insensitive.
    pub fn is(&self, who: &str) -> bool {
        let who = who.trim();
        who.eq_ignore_ascii_case(self.name.trim()) || who.eq_ignore_ascii_case(self.address())
    }
}

/// The contacts, and the older per-recipient fence settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AddressBook {
    /// `[[contacts]]`, in the config's order.
    pub contacts: Vec<Contact>,
    /// Names from `[recipients."name"]` with `fence = true`.
    pub fenced_recipients: Vec<String>,
}

impl AddressBook {
    /// The contact `who` names (by name or address).
    pub fn find(&self, who: &str) -> Option<&Contact> {
        self.contacts.iter().find(|c| c.is(who))
    }

    /// How the desk names `who` (a banner's from or to) on screen: the name of the contact it
    /// is, when the book knows it (`Claude` for `claude://session/7c2e91`), else `who`
    /// itself. A name the book does not know is the envelope's own, untrusted text: the
    /// caller makes it safe to show, as it does a contact's.
    pub fn display_name<'a>(&'a self, who: &'a str) -> &'a str {
        match self.find(who) {
            Some(c) if !c.name.trim().is_empty() => c.name.trim(),
            _ => who,
        }
    }

    /// The address for `who`: a contact's address when it is a contact's name, else `who`
    /// as typed.
    pub(crate) fn resolve(&self, who: &str) -> String {
        match self
            .contacts
            .iter()
            .find(|c| c.name.trim().eq_ignore_ascii_case(who.trim()))
        {
            Some(c) => c.address().to_string(),
            None => who.to_string(),
        }
    }

    /// Whether copies for `to` are fenced: a matching contact decides; else the
    /// `[recipients]` table, whose names also match an address of that scheme or user
    /// (`chatgpt` matches `chatgpt://thread/1` and `chatgpt@host`).
    pub fn fenced(&self, to: &str) -> bool {
        if let Some(c) = self.find(to) {
            return c.fence;
        }
        let to = to.trim().to_lowercase();
        self.fenced_recipients.iter().any(|f| {
            let f = f.to_lowercase();
            to == f || to.starts_with(&format!("{f}://")) || to.starts_with(&format!("{f}@"))
        })
    }
}

/// `text` in a markdown fence, as copies for a fenced recipient are made.
pub fn fence(text: &str) -> String {
    format!("```\n{}\n```\n", text.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn book() -> AddressBook {
        AddressBook {
            contacts: vec![
                Contact {
                    name: "Claude".into(),
                    address: Some("claude://session/7c2e91".into()),
                    fence: false,
                    preamble: None,
                    ..Default::default()
                },
                Contact {
                    name: "gpt".into(),
                    address: None,
                    fence: true,
                    preamble: Some("Answer briefly.".into()),
                    ..Default::default()
                },
            ],
            fenced_recipients: vec!["claude".into(), "gemini".into()],
        }
    }

    #[test]
    fn names_resolve_to_addresses_and_others_stay() {
        let b = book();
        assert_eq!(b.resolve("claude"), "claude://session/7c2e91");
        assert_eq!(b.resolve(" Claude "), "claude://session/7c2e91");
        assert_eq!(b.resolve("gpt"), "gpt");
        assert_eq!(b.resolve("human://kalle"), "human://kalle");
    }

    #[test]
    fn known_addresses_show_as_their_contact_names() {
        let b = book();
        assert_eq!(b.display_name("claude://session/7c2e91"), "Claude");
        assert_eq!(b.display_name("CLAUDE"), "Claude");
        assert_eq!(b.display_name("gpt"), "gpt");
        assert_eq!(b.display_name("gemini://chat/1"), "gemini://chat/1");
    }

    #[test]
    fn contacts_decide_the_fence_before_recipients() {
        let b = book();
        // The contact says no fence, although [recipients."claude"] says fence.
        assert!(!b.fenced("claude://session/7c2e91"));
        assert!(!b.fenced("Claude"));
        assert!(b.fenced("GPT"));
        // No contact: the recipients table still counts.
        assert!(b.fenced("gemini://chat/1"));
        assert!(!b.fenced("mistral"));
    }

    #[test]
    fn an_http_contact_has_a_url_to_post_to() {
        let c: Contact = toml::from_str(
            "name = \"CHATGPT\"\ndelivery = \"http\"\nurl = \"http://127.0.0.1:8787\"\ntoken = \"t\"",
        )
        .unwrap();
        assert_eq!(c.http_url(), Some("http://127.0.0.1:8787"));
        assert_eq!(c.token.as_deref(), Some("t"));
        // A URL alone does not switch delivery from the clipboard.
        let c: Contact = toml::from_str("name = \"x\"\nurl = \"http://h\"").unwrap();
        assert_eq!(c.http_url(), None);
        assert!(toml::from_str::<Contact>("name = \"x\"\ndelivery = \"pigeon\"").is_err());
    }
}
