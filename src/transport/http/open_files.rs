//! How many files `serve` may have open: every connection is one, and a connection turned
//! away is one until it is closed. Many systems start a process with a soft limit of 1 024,
//! below what a few hundred connections need; past the limit `accept` fails and new clients
//! wait in the listen backlog, which is the stall the connection limits are there to prevent.
//! So `serve` raises its soft limit up to the hard one (as Go's runtime and nginx's
//! `worker_rlimit_nofile` do), and says so when even the hard limit is too low.

/// Files `serve` needs for `max_connections`: two for each slot (hyper's handle on the socket
/// and the one kept to answer on should it be evicted), as many connections being turned
/// away (see [`super::turn_away`]), and a margin for the database, its journal, the log, the
/// listener and the runtime.
pub fn needed(max_connections: usize) -> u64 {
    (max_connections as u64)
        .saturating_mul(3)
        .saturating_add(64)
}

/// What raising the limit came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OpenFiles {
    /// The soft limit before.
    pub was: Option<u64>,
    /// The soft limit now (`None`: unlimited).
    pub now: Option<u64>,
    /// The files wanted.
    pub wanted: u64,
}

impl OpenFiles {
    /// Whether the limit now allows what was wanted.
    pub(crate) fn enough(&self) -> bool {
        self.now.is_none_or(|n| n >= self.wanted)
    }

    /// A warning for the operator when the limit is too low, saying what to do.
    pub(crate) fn warning(&self, max_connections: usize) -> Option<String> {
        let now = self.now.filter(|_| !self.enough())?;
        Some(format!(
            "only {now} files may be open at once (the hard limit), and max_connections = {max_connections} needs about {}: connections past the limit wait unanswered; raise it (`ulimit -Hn {}` as root, or LimitNOFILE= in a systemd unit) or lower [serve] max_connections",
            self.wanted, self.wanted
        ))
    }
}

/// Raises the soft limit on open files to `wanted` (or as near as the hard limit allows);
/// never lowers it.
#[cfg(unix)]
pub(crate) fn raise_to(wanted: u64) -> OpenFiles {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let was = limit.current;
    let target = match (limit.current, limit.maximum) {
        (None, _) => None,
        (Some(soft), _) if soft >= wanted => Some(soft),
        (Some(_), None) => Some(wanted),
        (Some(_), Some(hard)) => Some(wanted.min(hard)),
    };
    let now = if target != was
        && setrlimit(
            Resource::Nofile,
            Rlimit {
                current: target,
                maximum: limit.maximum,
            },
        )
        .is_ok()
    {
        target
    } else {
        was
    };
    OpenFiles { was, now, wanted }
}

/// Elsewhere the limit is the system's to set.
#[cfg(not(unix))]
pub(crate) fn raise_to(wanted: u64) -> OpenFiles {
    OpenFiles {
        was: None,
        now: None,
        wanted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_says_what_is_needed_and_what_to_do() {
        let low = OpenFiles {
            was: Some(256),
            now: Some(256),
            wanted: needed(1000),
        };
        assert!(!low.enough());
        let w = low.warning(1000).unwrap();
        assert!(w.contains("only 256 files"), "{w}");
        assert!(w.contains("needs about 3064"), "{w}");
        assert!(w.contains("max_connections"), "{w}");
        let fine = OpenFiles {
            now: Some(4096),
            ..low
        };
        assert_eq!(fine.warning(1000), None);
        let unlimited = OpenFiles { now: None, ..low };
        assert_eq!(unlimited.warning(1000), None);
    }

    #[cfg(unix)]
    #[test]
    fn raising_never_lowers() {
        let before = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
        let r = raise_to(16);
        assert_eq!(
            r.now, before,
            "a soft limit above what is wanted is left alone"
        );
    }
}
