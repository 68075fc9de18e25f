//! Settings from `config.toml`: found through `--config`, then `$CROSSTALK_CONFIG`, then the
//! platform's config directory (`$XDG_CONFIG_HOME/crosstalk/config.toml` on Linux).
//! `config.example.toml` at the repository root documents every option.
//!
//! A missing default file means defaults; a file named explicitly must exist. Unknown keys are
//! errors, so a typo is reported instead of silently ignored.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::protocol::DEFAULT_SIZE_LIMIT;

/// The whole configuration.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// How envelopes are read.
    #[serde(default)]
    pub protocol: ProtocolConfig,
    /// Key bindings: `[keys.<scope>]` tables of `"key" = "action"`, checked by the app
    /// (it knows the actions) and reported at their place in the file.
    #[serde(default)]
    pub keys: BTreeMap<Spanned<String>, BTreeMap<Spanned<String>, Spanned<String>>>,
    /// How copies reach the clipboard.
    #[serde(default)]
    pub clipboard: crate::clipboard::ClipboardConfig,
    /// Defaults for envelopes the operator writes.
    #[serde(default)]
    pub compose: ComposeConfig,
    /// How the clipboard is watched for envelopes (`crosstalk watch`, `W` in the app).
    #[serde(default)]
    pub watch: crate::clipboard::watch::WatchConfig,
    /// Per-recipient settings, by name or address (case-insensitive).
    #[serde(default)]
    pub recipients: BTreeMap<String, RecipientConfig>,
    /// Who the operator is: messages for these addresses are theirs to answer, not to relay.
    #[serde(default)]
    pub operator: OperatorConfig,
    /// How received envelopes are carried on.
    #[serde(default)]
    pub relay: RelayConfig,
    /// The address book: `[[contacts]]` (see [`crate::contacts`] for how it relates to
    /// `[recipients]`).
    #[serde(default)]
    pub contacts: Vec<crate::contacts::Contact>,
    /// Signing what the operator composes.
    #[serde(default)]
    pub signing: SigningConfig,
    /// Where the files `meta: attachments` names are kept.
    #[serde(default)]
    pub attachments: AttachmentsConfig,
    /// `crosstalk serve`: the HTTP binding's receiving end.
    #[serde(default)]
    pub serve: ServeConfig,
    /// `crosstalk send` and the app's HTTP delivery: how long to wait out a busy peer.
    #[serde(default)]
    pub send: SendConfig,
    /// How the app's screens read.
    #[serde(default)]
    pub ui: UiConfig,
    /// The file and text this came from, for locating errors found after parsing.
    #[serde(skip)]
    origin: Option<(PathBuf, String)>,
}

impl Config {
    /// `file:line:col` of a span of the config text (`config.toml` when there was no file).
    pub(crate) fn locate(&self, span: Range<usize>) -> String {
        match &self.origin {
            Some((path, text)) => {
                let (line, column) = line_col(text, span.start);
                format!("{}:{line}:{column}", path.display())
            }
            None => "config.toml".into(),
        }
    }
}

/// `[compose]`: defaults for envelopes the operator writes.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComposeConfig {
    /// The `user` header (default: `$USER`).
    pub user: Option<String>,
    /// The sender new envelopes start with (e.g. the operator's own name or address).
    pub from: Option<String>,
    /// Open `$EDITOR` on the body as soon as a new envelope's or a reply's composer opens, as
    /// aerc and neomutt do; the composer's form is there when the editor ends.
    #[serde(default)]
    pub editor_first: bool,
}

/// `[ui]`: how the app's screens read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UiConfig {
    /// Which replies the thread tree draws one level in.
    pub tree_indent: TreeIndent,
    /// How long a message may await its reply before `t` (the next thing to do) stops at it
    /// (`"30m"`, `"2h"`, `"1d"`); unset: awaited replies are left to the queue.
    #[serde(deserialize_with = "age_limit")]
    pub awaiting_after: Option<jiff::SignedDuration>,
}

/// Which replies the thread tree indents.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TreeIndent {
    /// Only where a message has several replies: a long back-and-forth stays in one column.
    #[default]
    Branches,
    /// Every reply, one level under what it answers.
    Every,
}

/// `"30m"`, `"2h"`, `"1d"`: a number and one of s, m, h, d, w.
fn age_limit<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<jiff::SignedDuration>, D::Error> {
    let text = String::deserialize(d)?;
    parse_age(&text).map(Some).ok_or_else(|| {
        serde::de::Error::custom(format!(
            "`{text}` is no age: write a number and s, m, h, d or w (\"30m\", \"2h\", \"1d\")"
        ))
    })
}

/// An age as `[ui]` writes it (`30m`), in seconds.
fn parse_age(text: &str) -> Option<jiff::SignedDuration> {
    let text = text.trim();
    let unit = text.chars().last()?;
    let n: i64 = text[..text.len() - unit.len_utf8()].trim().parse().ok()?;
    let secs = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        'w' => 7 * 86_400,
        _ => return None,
    };
    (n >= 0).then(|| jiff::SignedDuration::from_secs(n.saturating_mul(secs)))
}

/// `[recipients."<name>"]`: how copies for one recipient are made.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecipientConfig {
    /// Wrap copies in a markdown code fence (for chat windows that collapse newlines).
    #[serde(default)]
    pub fence: bool,
}

/// `[operator]`: the operator's own names and addresses.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorConfig {
    /// Names or addresses (case-insensitive) that mean the operator: an envelope addressed to
    /// one of them is "addressed to me"; one addressed to anyone else is "to relay".
    #[serde(default)]
    pub addresses: Vec<String>,
}

/// `[relay]`: carrying received envelopes on to their recipients.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelayConfig {
    /// When a paste import adds exactly one new valid envelope addressed to someone else,
    /// copy it for its recipient at once and record it as relayed.
    #[serde(default)]
    pub copy_on_import: bool,
    /// Append a `meta: audit` hop to each envelope relayed (who, when, from where, and a
    /// digest of what arrived); hops stand outside what a signature covers.
    #[serde(default)]
    pub audit: bool,
    /// The name hops record as `Received-By`; unset: the first `[operator] addresses`
    /// entry, else `[compose] user`.
    #[serde(default)]
    pub audit_by: Option<String>,
}

/// `[attachments]`: the files envelopes attach.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AttachmentsConfig {
    /// The directory the inspector checks attached files against (by name and digest);
    /// unset: attachments are listed, and checked once a file is attached in the composer.
    #[serde(default)]
    pub dir: Option<PathBuf>,
}

/// `[serve]`: where `crosstalk serve` listens and its limits (flags override each).
/// (`Serialize` and `PartialEq` for the test that keeps config.example.toml's section whole.)
#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// Address and port.
    pub listen: String,
    /// The bearer token clients must send (else `$CROSSTALK_TOKEN`); required beyond
    /// loopback.
    pub token: Option<String>,
    /// Largest request body, in bytes.
    pub max_body: usize,
    /// Largest request head, in bytes.
    pub max_header: usize,
    /// Seconds a client has for its whole request head, from when it connects (or its last
    /// answer was sent): a few, so that connections sending nothing, or a byte at a time,
    /// do not hold a slot for long.
    pub head_timeout: u64,
    /// Seconds a client has for its body, once its head is in.
    pub request_timeout: u64,
    /// Connections held open at once, sending a request or not (each a file and a few KiB;
    /// `serve` raises its open-file limit to match). When all are taken, the one waiting
    /// longest for a request head makes room; else a newcomer is answered 503 at once.
    pub max_connections: usize,
    /// Connections one client (an IPv4 address, an IPv6 /64) holds open at once: its fair
    /// share, so that one client cannot take every slot. Behind a proxy every client has the
    /// proxy's address: raise it to `max_connections` there.
    pub max_connections_per_client: usize,
    /// Requests read and served at once (each holds its body, up to `max_body`, in memory);
    /// one more is answered 503 at once.
    pub max_requests: usize,
    /// Requests a minute per client address (0: no limit).
    pub rate_per_minute: u32,
    /// Requests a client may send at once before the rate applies.
    pub burst: u32,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            listen: "127.0.0.1:8787".into(),
            token: None,
            max_body: DEFAULT_SIZE_LIMIT + 64 * 1024,
            max_header: 16 * 1024,
            head_timeout: 5,
            request_timeout: 10,
            max_connections: 1024,
            max_connections_per_client: 64,
            max_requests: 64,
            rate_per_minute: 600,
            burst: 60,
        }
    }
}

/// `[send]`: posting envelopes over HTTP (`crosstalk send`, and the app's delivery to a
/// contact with `delivery = "http"`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SendConfig {
    /// Seconds a post may wait in all for a peer that answers 429 (or 503) and asks to be
    /// sent again later (`Retry-After`); 0: its first answer stands.
    pub retry_for: u64,
}

impl Default for SendConfig {
    fn default() -> Self {
        // Long enough for a few tries of a rate limit that asks for seconds (`serve`'s
        // default asks for 1 s), short enough for a command someone waits on; a peer that
        // asks for a minute is given up on at once, and says when to send again.
        SendConfig {
            retry_for: crate::transport::http::retry::DEFAULT_RETRY_FOR.as_secs(),
        }
    }
}

/// `[signing]`: the operator's key, with which the composer signs envelopes before copying.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SigningConfig {
    /// The private key, a PKCS#8 PEM file (`crosstalk keys generate` writes one); unset: the
    /// composer copies envelopes unsigned.
    #[serde(default)]
    pub key: Option<PathBuf>,
    /// The key id signatures name [default: derived from the key].
    #[serde(default)]
    pub pkid: Option<String>,
    /// `ed25519` (the spec's `ed25519:pkid=…;sig=…`) or `jws` (detached JWS).
    #[serde(default)]
    pub format: SigningFormat,
}

/// The `sig:` form the composer writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SigningFormat {
    /// `ed25519:pkid=<id>;sig=<base64>`, which names the key id the trust store looks up.
    #[default]
    Ed25519,
    /// A detached JWS (EdDSA).
    Jws,
}

impl Config {
    /// With `[relay] audit`: the name this desk's hops record as `Received-By` (`audit_by`,
    /// else the operator's first address, else `[compose] user`, else the login name).
    pub(crate) fn audit_name(&self) -> Option<String> {
        self.relay.audit.then(|| {
            (self.relay.audit_by.clone())
                .or_else(|| self.operator.addresses.first().cloned())
                .or_else(|| self.compose.user.clone())
                .unwrap_or_else(default_user)
        })
    }

    /// Who the desk writes as when it writes in its own name (a reply with `r`, an ERROR
    /// with `E`, a poll's E-TIMEOUTs and CLOSE): the operator's first address, else
    /// `[compose] from`, else `human://` and the `[compose] user` (else the login name). Never
    /// an AI that did not send what is written.
    pub(crate) fn desk_address(&self) -> String {
        self.desk_address_as(None)
    }

    /// [`Config::desk_address`], with `user` (a `--user` on the command line) before
    /// `[compose] user` in the last resort: a desk known by no address is the human who
    /// writes.
    pub(crate) fn desk_address_as(&self, user: Option<&str>) -> String {
        (self.operator.addresses.iter().map(|a| a.trim()))
            .chain(self.compose.from.as_deref().map(str::trim))
            .find(|a| !a.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| {
                let user = (user.map(str::to_string))
                    .or_else(|| self.compose.user.clone())
                    .unwrap_or_else(default_user);
                format!("human://{}", user.trim())
            })
    }

    /// The address book: the contacts, and the recipients whose copies are fenced.
    pub(crate) fn address_book(&self) -> crate::contacts::AddressBook {
        crate::contacts::AddressBook {
            contacts: self.contacts.clone(),
            fenced_recipients: self
                .recipients
                .iter()
                .filter(|(_, r)| r.fence)
                .map(|(n, _)| n.clone())
                .collect(),
        }
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

/// `[protocol]`: how envelopes are read and judged.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtocolConfig {
    /// Largest envelope in bytes before it is `E-TOO-LARGE`.
    #[serde(
        default = "default_size_limit",
        deserialize_with = "size_limit_at_least_minimum"
    )]
    pub size_limit: usize,
}

/// The smallest `size_limit` taken: below it even a minimal envelope is too large, so every
/// paste would be refused.
pub(crate) const MIN_SIZE_LIMIT: usize = 64;

fn size_limit_at_least_minimum<'de, D: serde::Deserializer<'de>>(d: D) -> Result<usize, D::Error> {
    let n = usize::deserialize(d)?;
    if n < MIN_SIZE_LIMIT {
        return Err(serde::de::Error::custom(format!(
            "size_limit {n} is below {MIN_SIZE_LIMIT} bytes, under which every envelope would be too large; the default is {DEFAULT_SIZE_LIMIT}"
        )));
    }
    Ok(n)
}

impl Default for ProtocolConfig {
    fn default() -> Self {
        ProtocolConfig {
            size_limit: DEFAULT_SIZE_LIMIT,
        }
    }
}

fn default_size_limit() -> usize {
    DEFAULT_SIZE_LIMIT
}

/// Why the configuration could not be used; the message names the file and, for syntax or
/// type errors, the line and column.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The named file could not be read.
    #[error("cannot read config `{path}`: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has a wrong key or value.
    #[error("{path}:{line}:{column}: {message} (see config.example.toml for every option)")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the TOML reader said.
        message: String,
    },
}

/// The default config file: `config.toml` in the platform's config directory.
pub(crate) fn default_path() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "crosstalk").map(|d| d.config_dir().join("config.toml"))
}

/// The `user` header of envelopes the operator writes: `--user` (`arg`), else `[compose]
/// user` of the config (`configured`), else `$USER`, else `operator` — the app and the CLI
/// write the same.
pub fn user(arg: Option<&str>, configured: Option<&str>) -> String {
    arg.or(configured)
        .map(str::to_string)
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "operator".into())
}

/// The `user` header when nothing is given or configured: `$USER`.
pub(crate) fn default_user() -> String {
    user(None, None)
}

/// The platform data directory (`$XDG_DATA_HOME/crosstalk` on Linux): the default database,
/// the record of the app's own copies, a companion's spool. `.` when there is no home.
pub(crate) fn data_dir() -> PathBuf {
    directories::ProjectDirs::from("", "", "crosstalk")
        .map(|d| d.data_dir().to_path_buf())
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The platform state directory (`$XDG_STATE_HOME/crosstalk` on Linux, usually
/// `~/.local/state/crosstalk`): what the app remembers between runs that is neither data nor
/// configuration (where it was when it quit). The data directory where a platform has none.
pub(crate) fn state_dir() -> PathBuf {
    directories::ProjectDirs::from("", "", "crosstalk")
        .and_then(|d| d.state_dir().map(Path::to_path_buf))
        .unwrap_or_else(data_dir)
}

/// The files of the state directory ([`state_dir`]) that older versions kept in the data
/// directory: the app's log and the digests of its own copies (which a clipboard watch
/// leaves alone). Neither is data the operator made, so they belong with state.
const MOVED_TO_STATE: [&str; 2] = ["crosstalk.log", "own-copies"];

/// The app's log file.
pub(crate) fn log_file() -> PathBuf {
    state_dir().join("crosstalk.log")
}

/// The digests of the last copies the app and the watch made ([`crate::clipboard`]).
pub(crate) fn own_copies_file() -> PathBuf {
    state_dir().join("own-copies")
}

/// Moves what older versions kept in the data directory to the state directory, once:
/// before the app or the watch first writes there. A file already in the state directory
/// is kept, and the old one left where it is.
pub(crate) fn move_state_files() {
    let (data, state) = (data_dir(), state_dir());
    if data != state {
        for e in move_files(&data, &state, &MOVED_TO_STATE) {
            tracing::warn!("{e}");
        }
    }
}

/// Moves each of `names` from folder `from` to folder `to` (made, 0700, when something is
/// moved) unless `to` has it already; renamed, or copied and removed across file systems.
/// Returns what could not be moved.
fn move_files(from: &Path, to: &Path, names: &[&str]) -> Vec<String> {
    let mut failed = Vec::new();
    for name in names {
        let (old, new) = (from.join(name), to.join(name));
        if !old.is_file() || new.exists() {
            continue;
        }
        let moved = make_private_dir(to)
            .and_then(|()| std::fs::rename(&old, &new).or_else(|_| copy_then_remove(&old, &new)));
        if let Err(e) = moved {
            failed.push(format!(
                "cannot move {} to {}: {e}",
                old.display(),
                new.display()
            ));
        }
    }
    failed
}

fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

fn copy_then_remove(old: &Path, new: &Path) -> std::io::Result<()> {
    std::fs::copy(old, new)?;
    std::fs::remove_file(old)
}

/// Loads the configuration: `explicit` (the `--config` flag) or `$CROSSTALK_CONFIG` must
/// exist; the default file may be absent.
pub fn load(explicit: Option<&Path>) -> Result<Config, ConfigError> {
    let env = std::env::var_os("CROSSTALK_CONFIG").map(PathBuf::from);
    let (path, required) = match (explicit, env) {
        (Some(p), _) => (p.to_path_buf(), true),
        (None, Some(p)) => (p, true),
        (None, None) => match default_path() {
            Some(p) => (p, false),
            None => return Ok(Config::default()),
        },
    };
    match std::fs::read(&path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => parse(&text, &path),
            Err(e) => {
                // Located like any other error: the line and column of the first byte that
                // is not UTF-8.
                let at = e.utf8_error().valid_up_to();
                let text = String::from_utf8_lossy(&e.as_bytes()[..at]);
                let (line, column) = line_col(&text, at.min(text.len()));
                Err(ConfigError::Invalid {
                    path,
                    line,
                    column,
                    message: format!(
                        "byte 0x{:02x} is not UTF-8; save the file as UTF-8",
                        e.as_bytes()[at]
                    ),
                })
            }
        },
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
        Err(source) => Err(ConfigError::Read { path, source }),
    }
}

/// Parses config text; `path` is only used in error messages.
pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
    let mut config: Config = toml::from_str(text).map_err(|e| {
        let (line, column) = line_col(text, e.span().map_or(0, |s| s.start));
        let mut message = e.message().to_string();
        // The reader does not say which key repeats; the span holds it.
        if let Some(key) = (message == "duplicate key")
            .then(|| e.span().and_then(|s| text.get(s)))
            .flatten()
        {
            message = format!(
                "duplicate key {}",
                crate::sanitize::sanitize_line(key.trim())
            );
        }
        ConfigError::Invalid {
            path: path.to_path_buf(),
            line,
            column,
            message,
        }
    })?;
    config.origin = Some((path.to_path_buf(), text.to_string()));
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_files_move_from_the_data_directory_once_and_never_over_newer_ones() {
        let dir = tempfile::tempdir().unwrap();
        let (data, state) = (dir.path().join("data"), dir.path().join("state/crosstalk"));
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(data.join("crosstalk.log"), "old log\n").unwrap();
        std::fs::write(data.join("own-copies"), "digests").unwrap();
        std::fs::write(data.join("crosstalk.db"), "data stays").unwrap();
        assert!(super::move_files(&data, &state, &super::MOVED_TO_STATE).is_empty());
        assert_eq!(
            std::fs::read_to_string(state.join("crosstalk.log")).unwrap(),
            "old log\n"
        );
        assert_eq!(
            std::fs::read_to_string(state.join("own-copies")).unwrap(),
            "digests"
        );
        assert!(!data.join("crosstalk.log").exists() && !data.join("own-copies").exists());
        assert!(data.join("crosstalk.db").exists() && !state.join("crosstalk.db").exists());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&state).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        // An old file beside a newer one is left where it is.
        std::fs::write(data.join("crosstalk.log"), "older\n").unwrap();
        assert!(super::move_files(&data, &state, &super::MOVED_TO_STATE).is_empty());
        assert_eq!(
            std::fs::read_to_string(state.join("crosstalk.log")).unwrap(),
            "old log\n"
        );
        assert!(data.join("crosstalk.log").exists());
    }

    #[test]
    fn defaults_and_values() {
        let c = parse("", Path::new("c.toml")).unwrap();
        assert_eq!(c.protocol.size_limit, DEFAULT_SIZE_LIMIT);
        let c = parse("[protocol]\nsize_limit = 2048\n", Path::new("c.toml")).unwrap();
        assert_eq!(c.protocol.size_limit, 2048);
    }

    #[test]
    fn operator_and_relay_sections() {
        let c = parse(
            "[operator]\naddresses = [\"human@desk\", \"OPERATOR\"]\n[relay]\ncopy_on_import = true\n",
            Path::new("c.toml"),
        )
        .unwrap();
        assert_eq!(c.operator.addresses, ["human@desk", "OPERATOR"]);
        assert!(c.relay.copy_on_import);
        assert!(!c.relay.audit && c.relay.audit_by.is_none());
        let c = parse("", Path::new("c.toml")).unwrap();
        assert!(c.operator.addresses.is_empty() && !c.relay.copy_on_import);
        assert!(parse("[relay]\ncopy = true\n", Path::new("c.toml")).is_err());
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("[protocol]\nsize_limt = 1\n", Path::new("c.toml")).unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("c.toml:2:1: "), "{msg}");
        assert!(msg.contains("size_limt"), "{msg}");
        let e = parse("[protocol]\nsize_limit = \"big\"\n", Path::new("c.toml")).unwrap_err();
        assert!(e.to_string().starts_with("c.toml:2:14: "), "{e}");
        // A limit under which every envelope is too large.
        let e = parse("[protocol]\nsize_limit = 0\n", Path::new("c.toml")).unwrap_err();
        assert!(e.to_string().starts_with("c.toml:2:14: "), "{e}");
        assert!(e.to_string().contains("below 64 bytes"), "{e}");
        // A repeated key is named.
        let e = parse(
            "[keys.browse]\nx = \"quit\"\nx = \"help\"\n",
            Path::new("c.toml"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("duplicate key x"), "{e}");
    }

    #[test]
    fn a_file_that_is_not_utf8_names_the_line_of_its_first_bad_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, b"[compose]\nuser = \"k\xffa\"\n").unwrap();
        let e = load(Some(&path)).unwrap_err().to_string();
        assert!(e.contains("c.toml:2:10: byte 0xff is not UTF-8"), "{e}");
    }

    #[test]
    fn the_ui_section_reads_the_tree_indent_and_an_age() {
        let c = parse(
            "[ui]\ntree_indent = \"every\"\nawaiting_after = \"30m\"\n",
            Path::new("c"),
        )
        .unwrap();
        assert_eq!(c.ui.tree_indent, TreeIndent::Every);
        assert_eq!(
            c.ui.awaiting_after,
            Some(jiff::SignedDuration::from_mins(30))
        );
        let c = parse("", Path::new("c")).unwrap();
        assert_eq!(c.ui, UiConfig::default());
        assert_eq!(c.ui.tree_indent, TreeIndent::Branches);
        assert_eq!(parse_age("1d"), Some(jiff::SignedDuration::from_hours(24)));
        assert_eq!(parse_age("45 s"), Some(jiff::SignedDuration::from_secs(45)));
        for bad in ["", "m", "30", "3x", "-1h"] {
            assert_eq!(parse_age(bad), None, "{bad}");
        }
        let e = parse("[ui]\nawaiting_after = \"soon\"\n", Path::new("c")).unwrap_err();
        assert!(e.to_string().contains("`soon` is no age"), "{e}");
        assert!(parse("[ui]\ntree_indent = \"all\"\n", Path::new("c")).is_err());
    }

    #[test]
    fn example_file_is_valid() {
        let text = include_str!("../config.example.toml");
        parse(text, Path::new("config.example.toml")).unwrap();
    }

    /// The example's `[serve]` names every key (the token, commented out, aside) with its
    /// default value: a key added or a default changed shows up here.
    #[test]
    fn example_serve_section_is_whole_and_true() {
        let text = include_str!("../config.example.toml");
        let example = parse(text, Path::new("config.example.toml")).unwrap();
        assert_eq!(example.serve, ServeConfig::default());
        let table: toml::Table = toml::from_str(text).unwrap();
        let written: Vec<&String> = table["serve"].as_table().unwrap().keys().collect();
        let defaults = toml::Table::try_from(ServeConfig::default()).unwrap();
        let all: Vec<&String> = defaults.keys().collect();
        assert_eq!(written, all);
        assert!(
            text.contains("# token = "),
            "the token is shown, commented out"
        );
    }
}
