//! Reading command input: a file, or standard input for `-` or no file.

use std::io::Read;
use std::path::Path;

use super::Failure;
use crate::protocol::{self, Diagnostic, Extraction, Options};

/// Text read from one input, with a name to prefix diagnostics.
pub struct Input {
    /// `path` as given, or `<stdin>`.
    pub name: String,
    /// The text, invalid UTF-8 replaced.
    pub text: String,
    /// Set when bytes had to be replaced.
    pub utf8: Option<Diagnostic>,
}

impl Input {
    /// Finds the envelopes, with the UTF-8 finding (if any) among the diagnostics.
    pub fn extract(&self, opts: &Options) -> Extraction {
        let mut ex = protocol::extract(&self.text, opts);
        if let Some(d) = &self.utf8 {
            ex.diagnostics.insert(0, d.clone());
        }
        ex
    }
}

/// Reads `path`, or standard input when it is `None` or `-`.
pub fn read(path: Option<&Path>) -> Result<Input, Failure> {
    let (name, bytes) = match path {
        None => read_stdin()?,
        Some(p) if p.as_os_str() == "-" => read_stdin()?,
        Some(p) => (
            p.display().to_string(),
            std::fs::read(p)
                .map_err(|e| Failure::usage(format!("cannot read `{}`: {e}", p.display())))?,
        ),
    };
    // Valid UTF-8 (the usual case) becomes the text without a copy.
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Input {
            name,
            text,
            utf8: None,
        }),
        Err(e) => {
            let (text, utf8) = protocol::decode(e.as_bytes());
            Ok(Input {
                name,
                text: text.into_owned(),
                utf8,
            })
        }
    }
}

fn read_stdin() -> Result<(String, Vec<u8>), Failure> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::usage(format!("cannot read standard input: {e}")))?;
    Ok(("<stdin>".to_string(), bytes))
}

/// Reads a key file's text.
pub fn read_key(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path)
        .map_err(|e| Failure::usage(format!("cannot read key `{}`: {e}", path.display())))
}

/// A `--body` argument: the text itself, or `-` to read it from standard input (without the
/// final line break a shell or editor adds). Absent means an empty body.
pub fn body(arg: Option<&str>) -> Result<String, Failure> {
    match arg {
        Some("-") => {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).map_err(|e| {
                Failure::usage(format!("cannot read the body from standard input: {e}"))
            })?;
            Ok(s.trim_end_matches(['\n', '\r']).to_string())
        }
        Some(b) => Ok(b.to_string()),
        None => Ok(String::new()),
    }
}

/// The `user` header of envelopes the operator writes: `--user`, else `$USER`.
pub fn user(arg: Option<&str>) -> String {
    arg.map(str::to_string)
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "operator".into())
}
